#!/bin/sh
# cpu_table.sh - the rows of doc/performance.md's table for this CPU:
# config R trained (abs, liere:8, liere:64) and run forward (abs), and
# ViT-B/16 run forward, in fp32 and bf16, beside the PyTorch ViT of the
# same shape (its own threading; bf16 under autocast), ROUNDS times over
# (default 2), interleaved.  Stop everything else first: the figures are
# meant to be compared.  bf16 rows need a CPU with native bf16, or
# VITPIPE_BF16=emulate (then say so).
B=${BUILD:-build/rel}/bench/bench_vit
TP="env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT /usr/bin/python3 ${TOP:-.}/tests/bench/vit_torch.py"
one() {	# TAG COMMAND...: the command's figures line, tagged
	printf '%s\t' "$1"; shift
	"$@" 2>&1 | grep -E '^(vit|eval|torch) ' | sed 's/  */ /g'
}
sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1
grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -x 'avx2\|avx512f\|avx512_bf16\|amx_bf16' | paste -sd' '
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} $(uptime)"
r=0
while [ $r -lt "${ROUNDS:-2}" ]; do
	r=$((r + 1))
	for pe in abs liere:8 liere:64; do
		one "R train fp32 $pe" $B --pe $pe --no-torch --steps 6
	done
	for pe in abs liere:8; do
		one "R train bf16 $pe" $B --pe $pe --no-torch --steps 6 --precision bf16
		one "R torch fp32 $pe" $TP --pe $pe --steps 4
		one "R torch bf16 $pe" $TP --pe $pe --steps 4 --autocast
	done
	for p in fp32 bf16; do
		a=; [ $p = bf16 ] && a=--autocast
		one "R eval $p abs" $B --pe abs --no-torch --steps 6 --eval --precision $p
		one "R torch eval $p abs" $TP --pe abs --steps 4 --eval $a
		one "B eval $p abs" $B --model vitb --pe abs --no-torch --steps 3 --eval --precision $p
		one "B torch eval $p abs" $TP --model vitb --pe abs --steps 3 --eval $a
	done
done
