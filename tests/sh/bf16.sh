# bf16.sh - --precision bf16 (vit-train(1), vitpipe(7)): where the CPU has
# no bf16 it is refused with a reason, unless VITPIPE_BF16=emulate; a bf16
# run trains (its losses fp32's within bf16's drift, not the same bits),
# gives the same bytes again, records its precision in the checkpoint,
# and its checkpoint is an fp32 one: vit-eval and shuffle-eval take it in
# either precision and --resume continues it in fp32.
. tests/sh/lib.sh
$PY tests/sh/posclass.py --records 192 --seed 5 > "$T/d.vt"
M="--dim 32 --depth 2 --heads 2 --mlp 64 --batch 32 --lr 3e-3 --warmup 0 --threads 2"
if grep -qw avx512_bf16 /proc/cpuinfo; then
	ok "# this CPU has AVX512_BF16: bf16 runs natively"
	export VITPIPE_BF16=
else
	check_exit 1 "no bf16 on this CPU: --precision bf16 refused" \
	    vit-train $M --pe abs --precision bf16 --no-out "$T/d.vt"
	check_grep "... saying why and what emulates it" \
	    "no native bf16 \(AVX512_BF16 or AMX\); VITPIPE_BF16=emulate" "$T/err"
	check_exit 1 "... and by vit-eval before it reads anything" \
	    vit-eval --precision bf16 /nonexistent "$T/d.vt"
	export VITPIPE_BF16=emulate
fi
check_exit 2 "--precision fp16: a usage error" vit-train $M --precision fp16 --no-out "$T/d.vt"
(VITPIPE_BF16=fast; export VITPIPE_BF16
 check_exit 1 "VITPIPE_BF16=fast: an error" vit-train $M --pe abs --no-out "$T/d.vt"
 check_grep "... that names the variable" "VITPIPE_BF16: 'fast' is not emulate" "$T/err")

for pe in liere:8 rope-mixed; do
	n=$(echo "$pe" | tr -c 'a-z0-9\n' _)
	for p in fp32 bf16 bf16-again; do	# the same command line in 1/ and 2/
		d=1; [ $p = bf16-again ] && d=2
		mkdir -p "$T/$d"
		(cd "$T/$d" && vit-train $M --pe $pe --precision ${p%-again} \
		    --log $n-${p%-again}.json -o $n-${p%-again}.vt ../d.vt 2>../err) ||
		    nok "$pe --precision $p: $(head -c 300 "$T/err")"
	done
	cmp -s "$T/1/$n-bf16.vt" "$T/2/$n-bf16.vt" &&
	    ok "$pe bf16: the same bytes again" || nok "$pe bf16: other bytes from the same run"
	$PY - "$T/1/$n-fp32.json" "$T/1/$n-bf16.json" > "$T/cmp" 2>&1 <<'PYEOF'
import json, sys
a, b = ([json.loads(l)["loss"] for l in open(f) if '"loss"' in l] for f in sys.argv[1:])
assert len(a) == len(b) == 6, (len(a), len(b))
# bf16 keeps 8 bits of each operand: the first forward is fp32's within a
# few 2^-8, and six steps do not drift further than a few percent.
assert a != b, "bf16 changed nothing"
assert abs(a[0] - b[0]) <= 0.01 * abs(a[0]), (a[0], b[0])
assert all(abs(x - y) <= 0.03 * abs(x) for x, y in zip(a, b)), list(zip(a, b))
print("fine: at most %.1e apart" % max(abs(x - y) / abs(x) for x, y in zip(a, b)))
PYEOF
	check_grep "$pe: bf16's losses are fp32's within bf16's drift ($(head -c 200 "$T/cmp"))" "^fine" "$T/cmp"
done
vtool info "$T/1/liere_8-bf16.vt" > "$T/info" 2>&1
check_grep "the checkpoint records TRAIN_PRECISION bf16" "TRAIN_PRECISION.*bf16" "$T/info"
check "vit-eval takes a bf16 run's checkpoint in fp32" vit-eval --json "$T/1/liere_8-bf16.vt" "$T/d.vt"
mv "$T/out" "$T/e32"
check "... and in bf16" vit-eval --json --precision bf16 "$T/1/liere_8-bf16.vt" "$T/d.vt"
$PY - "$T/e32" "$T/out" > "$T/cmp" 2>&1 <<'PYEOF'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert abs(a["loss"] - b["loss"]) <= 0.01 * abs(a["loss"]), (a["loss"], b["loss"])
assert abs(a["top1"] - b["top1"]) <= 0.02, (a["top1"], b["top1"])
print("fine", a["loss"], b["loss"])
PYEOF
check_grep "... with fp32's loss and top-1 within bf16's tolerance ($(head -c 100 "$T/cmp"))" "^fine" "$T/cmp"
check "shuffle-eval --precision bf16 runs" shuffle-eval --precision bf16 -k 2 "$T/1/liere_8-bf16.vt" "$T/d.vt"
# A bf16 run cut short (its stream truncated after a checkpoint at step 2)
# and resumed: in bf16 unless told otherwise.
sz=$(wc -c < "$T/d.vt")
for p in "" fp32; do
	head -c $((sz * 2 / 3)) "$T/d.vt" | vit-train $M --pe liere:8 --precision bf16 --shuffle-buffer 4 \
	    --save-steps 2 -o "$T/r$p.vt" 2>/dev/null
	[ "$(vtool info "$T/r$p.vt" | awk '$2 == "STEP" {print $3}')" = 2 ] ||
	    nok "no step-2 checkpoint to resume"
done
check "--resume continues a bf16 run" vit-train --resume -o "$T/r.vt" "$T/d.vt"
vtool info "$T/r.vt" > "$T/info"
check_grep "... in bf16" "TRAIN_PRECISION bf16" "$T/info"
check "--resume --precision fp32 continues it in fp32" vit-train --resume --precision fp32 -o "$T/rfp32.vt" "$T/d.vt"
check_grep "... saying it will not be bitwise the bf16 run's" "precision fp32, the run began with bf16: the result will not be bitwise" "$T/err"
vtool info "$T/rfp32.vt" > "$T/info"
check_grep "... and the checkpoint says fp32" "TRAIN_PRECISION fp32" "$T/info"
finish
