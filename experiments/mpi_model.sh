#!/bin/sh
# mpi_model.sh - vit-train(1)'s communication model against emulated hosts
# (tests/sh/hosts.inc: network namespaces, links shaped by tc's token
# bucket), as root on one machine (make mpi-bench):
#
#   1. the model: config R's gradient (S bytes) summed by 2 and 3 ranks,
#      one a host and one record each (the least compute), over links of
#      50, 200 and 500 Mbit/s; a step's allreduce_s (the sums, from the
#      first started to the last done) against A(N) = 2(N - 1)/N S/W, and
#      a latency term fitted to the residue; comm_s, what the sums cost
#      rank 0 once the backward hid some (this 2-core machine's CPUs,
#      shared with the ranks' TCP, bound a faster link);
#   2. overlap: at 200 Mbit/s with a batch whose backward takes about as
#      long as the sums, exposed_s (the wait after the backward) against
#      allreduce_s (the sums from the first started to the last done);
#   3. --allreduce bf16: comm_s at 200 Mbit/s, and the test top-1 of a
#      short Fashion-MNIST run on 2 hosts against fp32's.
#
# Each row is the median of a run's steps after its first (STEPS=6 steps
# a run).  PARTS="model overlap bf16 accuracy" (the default) chooses the
# parts.  The load average is printed with the tables (the machine's other
# jobs slow the compute, not the shaped links).
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
PATH="$TOP/bin:$PATH"
PY=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_hwloc_base_binding_policy=none
T=$(mktemp -d)
. tests/sh/hosts.inc
hosts_can || { echo "mpi_model.sh: network namespaces cannot be made here (root, ip, tc)" >&2; exit 1; }
hosts_up 3
VT=$TOP/bin/vit-train
STEPS=${STEPS:-6}
PARTS=${PARTS:-model overlap bf16 accuracy}
part() { case " $PARTS " in *" $1 "*) ;; *) return 1 ;; esac; }
R="--dim 192 --depth 6 --heads 3 --mlp 768 --pe liere:8 --threads 1"

# 64 tokens of 48 values: config R's 32 x 32 x 3 images in patches of 4
$PY tests/sh/posclass.py --records 2000 --grid 8 --values 48 --convention linspace --seed 3 > "$T/r.vt"
vit-train $R --batch 2 --steps 1 -o "$T/r1.vt" "$T/r.vt" 2>/dev/null
NPARAM=$(flops --model "$T/r1.vt" --json | $PY -c 'import json, sys; print(json.load(sys.stdin)["encodings"][0]["params"])')

# run N RATE BATCH ALLREDUCE: "comm_s exposed_s allreduce_s step_s", the
# medians of steps 2 on.
run() {
	hosts_rate "$2"
	hmpirun "$1" 600 "$VT" $R --batch "$3" --steps "$STEPS" --allreduce "$4" --no-out \
	    --log "$T/log.json" "$T/r.vt" 2>/dev/null
	$PY - "$T/log.json" <<'EOF'
import json, statistics, sys
L = [json.loads(l) for l in open(sys.argv[1])][1:]
m = lambda k: statistics.median(x[k] for x in L)
print("%.4f %.4f %.4f" % (m("comm_s"), m("exposed_s"), m("allreduce_s")))
EOF
}

echo "# $(uptime | sed 's/.*load/load/'); $(lscpu | sed -n 's/^Model name: *//p'); S = $NPARAM parameters, $((4 * NPARAM)) bytes"
if part model; then
echo
echo "## 1. A(N) = 2(N - 1)/N S/W against allreduce_s, a record a rank"
echo "Mbit/s  ranks  predicted_s  allreduce_s  ratio  comm_s"
for w in 50 200 500; do
	for n in 2 3; do
		set -- $(run $n ${w}mbit $n fp32)
		echo "$w $n $3 $1" | awk -v S=$((4 * NPARAM)) '{ p = 2 * ($2 - 1) / $2 * S * 8 / ($1 * 1e6);
		    printf "%6d  %5d  %11.3f  %11.3f  %5.2f  %6.3f\n", $1, $2, p, $3, $3 / p, $4 }'
	done
done | tee "$T/model"
# the least-squares fit comm_s = a + b A(N)
awk -v S=$((4 * NPARAM)) '/^ *[0-9]/ { x = 2 * ($2 - 1) / $2 * S * 8 / ($1 * 1e6); y = $4;
    n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
    END { b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n;
	printf "fit: allreduce_s = %.4f + %.3f A(N)\n", a, b }' "$T/model"
fi

if part overlap; then
echo
echo "## 2. overlap at 200 Mbit/s, 2 ranks: the sums' time and what the backward hides of it"
echo "batch  predicted_s  comm_s  allreduce_s  exposed_s  hidden"
for b in 6 32 64; do
	set -- $(run 2 200mbit $b fp32)
	echo "$b $1 $2 $3" | awk -v S=$((4 * NPARAM)) '{ p = S * 8 / 200e6;
	    printf "%5d  %11.3f  %6.3f  %11.3f  %9.3f  %5.0f%%\n", $1, p, $2, $4, $3, 100 * (1 - $3 / p) }'
done
fi

if part bf16; then
echo
echo "## 3. --allreduce bf16 at 200 Mbit/s, 2 ranks, batch 6"
echo "allreduce  predicted_s  comm_s"
for a in fp32 bf16; do
	set -- $(run 2 200mbit 6 $a)
	echo "$a $1" | awk -v S=$((4 * NPARAM)) '{ p = ($1 == "bf16" ? S / 2 : S) * 8 / 200e6;
	    printf "%9s  %11.3f  %6.3f\n", $1, p, $2 }'
done
fi
hosts_rate off
FM=/usr/share/datasets/fashion-mnist
if part accuracy && [ -d "$FM" ]; then
	echo
	echo "Fashion-MNIST, 2 hosts, dim 64 depth 4 liere:8, 3 epochs of 60000, batch 128: test top-1"
	patchify --idx "$FM/train-images-idx3-ubyte.gz" --patch 7 | posgen > "$T/ftrain.vt"
	patchify --idx "$FM/t10k-images-idx3-ubyte.gz" --patch 7 | posgen > "$T/ftest.vt"
	F="--dim 64 --depth 4 --heads 4 --mlp 128 --pe liere:8 --batch 128 --epochs 3 --lr 2e-3 --warmup 50 --threads 1 --seed 1"
	for a in fp32 bf16; do
		hmpirun 2 3000 "$VT" $F --allreduce $a -o "$T/f$a.vt" "$T/ftrain.vt" 2>/dev/null
		echo "$a $(vit-eval --json --resamples 0 "$T/f$a.vt" "$T/ftest.vt" |
		    $PY -c 'import json, sys; j = json.load(sys.stdin); print("top1 %.4f loss %.4f" % (j["top1"], j["loss"]))')"
	done
fi
