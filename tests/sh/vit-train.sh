# vit-train.sh - vit-train: epochs and steps, checkpoints, bitwise resume,
# gradient accumulation, the log, bad input, and a learning test where only
# position tells the class.
. tests/sh/lib.sh
gen() { $PY tests/sh/posclass.py "$@"; }
key() { $PY tests/sh/vtstream.py "$1" "$2"; }
# A small model, one thread (bitwise results need a fixed thread count, and
# OpenMP threads spinning on a loaded 2-core machine only slow tiny models).
M="--dim 16 --depth 1 --heads 2 --mlp 32 --threads 1"
gen --records 300 --epoch-records 100 --seed 3 > "$T/ep.vt"
gen --records 64 --seed 4 > "$T/val.vt"

# Epochs and steps from EPOCH_RECORDS: ceil(100 / 32) = 4 steps an epoch.
check "trains 3 epochs of a stream" vit-train $M --pe abs --batch 32 \
	--val "$T/val.vt" --log "$T/log.json" -o "$T/m.vt" "$T/ep.vt"
[ "$(key "$T/m.vt" STEP)" = 12 ] && ok "12 steps" || nok "steps: $(key "$T/m.vt" STEP)"
[ "$(key "$T/m.vt" EPOCH)" = 3 ] && ok "3 epochs" || nok "epochs: $(key "$T/m.vt" EPOCH)"
[ "$(key "$T/m.vt" TOTAL_STEPS)" = 12 ] && ok "the schedule spans 12 steps" || nok "schedule: $(key "$T/m.vt" TOTAL_STEPS)"
[ "$(key "$T/m.vt" DONE)" = 1 ] && ok "finished run marked DONE" || nok "DONE missing"
for k in VIT_DIM PE SHARE HEAD_DIM AXES HEADS LAYERS MEAN STD CLASSES HISTORY; do
	[ -n "$(key "$T/m.vt" $k)" ] || nok "checkpoint lacks key $k"
done && ok "checkpoint keys: config, skewgen's, the stream's"
[ "$(key "$T/m.vt" HEAD_DIM)" = 8 ] && ok "HEAD_DIM = dim / heads" || nok "HEAD_DIM $(key "$T/m.vt" HEAD_DIM)"
$PY tests/sh/vtstream.py "$T/m.vt" --field adam.v > "$T/v" && [ -s "$T/v" ] &&
	ok "checkpoint holds the AdamW moments" || nok "no adam.v field"
# Every log line is JSON; steps carry loss, lr, img_s; validations val_acc.
$PY - "$T/log.json" > "$T/logcheck" 2>&1 <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
steps = [l for l in lines if "loss" in l]
vals = [l for l in lines if "val_acc" in l]
assert [l["step"] for l in steps] == list(range(1, 13)), "steps 1..12"
assert all(set(l) >= {"step", "epoch", "loss", "lr", "img_s"} for l in steps)
assert [l["epoch"] for l in vals] == [1, 2, 3], "a validation each epoch"
assert all(0 <= l["val_acc"] <= 1 for l in vals)
lr = [l["lr"] for l in steps]
assert lr[0] > lr[5] > lr[-1] >= 0, "cosine decay"
assert abs(steps[3]["epoch"] - 1) < 1e-9 and abs(steps[1]["epoch"] - 0.64) < 1e-9
print("fine")
EOF
check_grep "log: JSON lines, steps 1..12, 3 validations, decaying lr" "^fine" "$T/logcheck"
# The optimizer's defaults, as vit-train(1) documents them, are the ones the
# checkpoint records (TRAIN_*), and the last validation line is vit-eval's
# top-1 and loss of the final model on the same stream (a model near chance,
# so top-1 < 1 = top-5 of 2 classes tells the two apart).
vit-eval --json --resamples 0 --threads 1 "$T/m.vt" "$T/val.vt" > "$T/m-eval.json"
$PY - "$T/m.vt" "$T/log.json" "$T/m-eval.json" > "$T/defcheck" 2>&1 <<'EOF'
import json, sys
from vtstream import read
head = read(sys.argv[1])[0]
def defaults():
    want = {"TRAIN_LR": 1e-3, "TRAIN_LR_MIN": 0, "TRAIN_WD": 0.05, "TRAIN_BETA1": 0.9,
            "TRAIN_BETA2": 0.999, "TRAIN_EPS": 1e-8, "TRAIN_WARMUP": 0, "TRAIN_SMOOTHING": 0,
            "TRAIN_CLIP": 0, "TRAIN_MIXUP": 0, "TRAIN_ACCUM": 1, "TRAIN_SEED": 1}
    for k, v in want.items():
        got = float(head[k][0])
        assert abs(got - v) <= 1e-12 * abs(v), f"{k} {got}, documented {v}"
def val():
    val = [json.loads(l) for l in open(sys.argv[2]) if "val_acc" in l][-1]
    ev = json.load(open(sys.argv[3]))
    assert ev["top1"] < 1, f"top1 {ev['top1']}: cannot tell top-1 from top-5"
    assert abs(val["val_acc"] - ev["top1"]) < 1e-5, f"val_acc {val['val_acc']}, vit-eval top1 {ev['top1']}"
    assert abs(val.get("val_top5", 1) - ev.get("top5", 1)) < 1e-5 and abs(val["val_loss"] - ev["loss"]) < 1e-5, (val, ev)
out = []
for f in (defaults, val):
    try:
        f()
        out.append(f"{f.__name__} ok")
    except Exception as e:	# failures first: check_grep shows the head
        out.insert(0, f"{f.__name__} failed: {e!r}")
print("\n".join(out))
EOF
check_grep "checkpoint: TRAIN_* keys hold the documented defaults (betas 0.9 0.999, eps 1e-8, wd 0.05, lr 1e-3)" "^defaults ok" "$T/defcheck"
check_grep "log: the last val_acc, val_top5, val_loss are vit-eval's top1, top5, loss" "^val ok" "$T/defcheck"
# Warmup: lr (step + 1) / warmup for the first --warmup steps, then the
# cosine from lr: 5 steps, warmup 3: lr/3, 2lr/3, lr, lr, lr/2.
vit-train $M --pe abs --batch 32 --steps 5 --warmup 3 --lr 3e-3 --log "$T/warm.json" "$T/ep.vt"
$PY - "$T/warm.json" > "$T/warmcheck" 2>&1 <<'EOF'
import json, sys
sys.excepthook = lambda t, e, tb: print("failed:", repr(e))
lr = [json.loads(l)["lr"] for l in open(sys.argv[1])]
want = [1e-3, 2e-3, 3e-3, 3e-3, 1.5e-3]
assert len(lr) == 5 and all(abs(a - b) < 1e-6 * b for a, b in zip(lr, want)), f"lr {lr}, wanted {want}"
print("fine")
EOF
check_grep "--warmup 3: lr lr/3, 2lr/3, lr, then the cosine" "^fine" "$T/warmcheck"

check "--steps 5 stops at step 5" vit-train $M --pe abs --batch 32 --steps 5 -o "$T/s.vt" "$T/ep.vt"
[ "$(key "$T/s.vt" STEP)" = 5 ] && ok "5 steps" || nok "steps: $(key "$T/s.vt" STEP)"
check "--epochs 1 of a 3-epoch stream" vit-train $M --pe abs --batch 32 --epochs 1 -o "$T/e1.vt" "$T/ep.vt"
[ "$(key "$T/e1.vt" STEP)" = 4 ] && ok "1 epoch: 4 steps" || nok "steps: $(key "$T/e1.vt" STEP)"
# A file without EPOCH_RECORDS read 2 times over.
gen --records 50 --seed 5 > "$T/small.vt"
check "--epochs 2 re-reads a file" vit-train $M --pe none --batch 20 --epochs 2 -o "$T/p.vt" "$T/small.vt"
[ "$(key "$T/p.vt" STEP)" = 6 ] && ok "2 passes of 3 steps" || nok "steps: $(key "$T/p.vt" STEP)"
gen --records 50 --seed 5 --no-records > "$T/norec.vt"
check_exit 1 "no RECORDS and no --steps: no schedule length" vit-train $M --pe none "$T/norec.vt"
check_grep "... says to give --steps" "--steps" "$T/err"
check "no RECORDS with --steps" sh -c "vit-train $M --pe none --steps 2 -o $T/n.vt < $T/norec.vt"

# Same seed and threads: same bytes; another seed: other bytes.
mkdir "$T/a" "$T/b"
A="$M --pe abs --batch 24 --accum 2 --mixup 0.4 --smoothing 0.1 --dropout 0.1 --clip 1 --warmup 3"
(cd "$T/a" && vit-train $A -o m.vt < ../ep.vt) && (cd "$T/b" && vit-train $A -o m.vt < ../ep.vt)
cmp -s "$T/a/m.vt" "$T/b/m.vt" && ok "same seed: identical checkpoints" || nok "same seed, different bytes"
(cd "$T/b" && vit-train $A --seed 2 -o m.vt < ../ep.vt)
cmp -s "$T/a/m.vt" "$T/b/m.vt" && nok "another seed, same bytes" || ok "another seed: other bytes"

# Two threads: still reproducible (rotary encodings included).
(cd "$T/a" && vit-train $A --pe liere:4 --threads 2 -o t2.vt < ../ep.vt) &&
	(cd "$T/b" && vit-train $A --pe liere:4 --threads 2 -o t2.vt < ../ep.vt)
cmp -s "$T/a/t2.vt" "$T/b/t2.vt" && ok "2 threads, same seed: identical checkpoints" || nok "2 threads: runs differ"
# Quiet unless stderr is a terminal; then a progress line with img/s and ETA.
vit-train $M --batch 32 --steps 3 "$T/ep.vt" 2>"$T/quiet"
[ ! -s "$T/quiet" ] && ok "nothing on stderr when it is not a terminal" || nok "stderr: $(head -c 200 "$T/quiet")"
if command -v script >/dev/null; then
	script -qec "vit-train $M --batch 4 --epochs 1 $T/ep.vt" /dev/null > "$T/tty" 2>&1
	check_grep "on a terminal: progress with loss, img/s, ETA" "loss [0-9.]+ [0-9]+ img/s ETA" "$T/tty"
fi
# Interrupted (the data stage dies in epoch 3) then resumed: the same bytes
# as the run that never stopped.
(cd "$T/b" && head -c 80000 ../ep.vt | vit-train $A -o m.vt 2>err)
[ $? -eq 1 ] && grep -q truncated "$T/b/err" && ok "a truncated stream stops the run" || nok "truncated stream: $(cat "$T/b/err")"
[ "$(key "$T/b/m.vt" EPOCH)" = 2 ] && ok "the epoch-2 checkpoint is left" || nok "checkpoint epoch $(key "$T/b/m.vt" EPOCH)"
(cd "$T/b" && vit-train --resume --threads 1 -o m.vt < ../ep.vt)
cmp -s "$T/a/m.vt" "$T/b/m.vt" && ok "resumed run: bitwise the uninterrupted one" || nok "resumed run differs"
check_exit 0 "resuming a finished run does nothing" vit-train --resume --threads 1 -o "$T/b/m.vt" "$T/ep.vt"
# ... and with liere on 2 threads, whose micro-batches share rotations and
# defer their gradient (vit_defer_rotation_grad)
(cd "$T/b" && head -c 80000 ../ep.vt | vit-train $A --pe liere:4 --threads 2 -o t2.vt 2>/dev/null;
	vit-train --resume --threads 2 -o t2.vt < ../ep.vt)
cmp -s "$T/a/t2.vt" "$T/b/t2.vt" && ok "liere, 2 threads, resumed: bitwise the uninterrupted run" || nok "liere resumed run differs"
# A run killed with SIGKILL at some moment (here a file re-read 1500
# times, a checkpoint every 10 passes) leaves a whole checkpoint, and
# resumed it ends with the bytes of the run that never stopped.
K="$M --pe abs --batch 20 --epochs 1500 --save-every 10"
(cd "$T/a" && vit-train $K -o k.vt ../small.vt)
(cd "$T/b" && { vit-train $K -o k.vt ../small.vt & pid=$!; sleep 0.8; kill -9 $pid; wait $pid; } 2>/dev/null)
if [ -f "$T/b/k.vt" ]; then
	ok "SIGKILL after epoch $(key "$T/b/k.vt" EPOCH): a checkpoint is left"
	check "... whole: vit-eval reads it" vit-eval --resamples 0 --threads 1 "$T/b/k.vt" "$T/val.vt"
	(cd "$T/b" && vit-train --resume --threads 1 -o k.vt ../small.vt)
	cmp -s "$T/a/k.vt" "$T/b/k.vt" && ok "... resumed: bitwise the uninterrupted run" || nok "killed and resumed run differs"
else
	ok "SIGKILL before the first checkpoint: none left (slow machine)"
fi

# Accumulation: batch 30 x 3 micro-batches = batch 90 (the 2nd step of an
# epoch of 100 is 10 records in both), the same steps up to rounding.
B="$M --pe abs --epochs 2"
vit-train $B --batch 90 -o "$T/g1.vt" "$T/ep.vt" && vit-train $B --batch 30 --accum 3 -o "$T/g2.vt" "$T/ep.vt"
d=$($PY tests/sh/vtstream.py "$T/g1.vt" --maxdiff "$T/g2.vt")
$PY -c "import sys; sys.exit(not $d < 2e-4)" && ok "--accum 3 matches a 3x batch (max diff $d)" || nok "accumulation: max diff $d"
# liere: the micro-batches' dL/dR goes through the exponential's adjoint
# once a step (vit_defer_rotation_grad), the last, short one included.
R="$M --pe liere:8 --epochs 2"
vit-train $R --batch 90 -o "$T/r1.vt" "$T/ep.vt" && vit-train $R --batch 30 --accum 3 -o "$T/r2.vt" "$T/ep.vt"
d=$($PY tests/sh/vtstream.py "$T/r1.vt" --maxdiff "$T/r2.vt")
$PY -c "import sys; sys.exit(not $d < 2e-4)" && ok "liere:8 --accum 3 matches a 3x batch (max diff $d)" || nok "liere accumulation: max diff $d"
vit-train $B --batch 90 --lr 2e-3 -o "$T/g3.vt" "$T/ep.vt"
d=$($PY tests/sh/vtstream.py "$T/g1.vt" --maxdiff "$T/g3.vt")
$PY -c "import sys; sys.exit(not $d > 1e-3)" && ok "... and the comparison can fail (lr 2x: $d)" || nok "comparison blind: $d"
# Unequal micro-batches in one step: batch 30 x 2 over epochs of 100 makes
# steps of 30+30 and 30+10 records; batch 60 takes the same records in one.
vit-train $B --batch 60 -o "$T/u1.vt" "$T/ep.vt" && vit-train $B --batch 30 --accum 2 -o "$T/u2.vt" "$T/ep.vt"
d=$($PY tests/sh/vtstream.py "$T/u1.vt" --maxdiff "$T/u2.vt")
$PY -c "import sys; sys.exit(not $d < 2e-4)" && ok "--accum 2, micro-batches of 30 and 10: a batch of 40 (max diff $d)" || nok "unequal micro-batches: max diff $d"
# Weight decay only on weight matrices: lr * wd = 1 wipes them in one step
# (to about lr), while norms' gains, tokens and position parameters stay.
vit-train $M --pe abs --batch 20 --steps 1 --lr 1e-6 --wd 1e6 -o "$T/wd-abs.vt" "$T/small.vt" &&
	vit-train $M --pe liere:4 --batch 20 --steps 1 --lr 1e-6 --wd 1e6 -o "$T/wd-liere.vt" "$T/small.vt"
$PY - "$T/wd-abs.vt" "$T/wd-liere.vt" > "$T/wdcheck" 2>&1 <<'EOF'
import sys
sys.excepthook = lambda t, e, tb: print("failed:", repr(e))
import numpy as np
from vtstream import read
a, l = read(sys.argv[1])[1], read(sys.argv[2])[1]
for f in ("patch.w", "blocks.0.attn.qkv.w", "blocks.0.mlp.fc1.w", "head.w"):
    assert np.abs(a[f]).max() < 1e-5, f"{f} not decayed: {np.abs(a[f]).max()}"
for f in ("blocks.0.ln1.w", "blocks.0.ln2.w", "norm.w"):
    assert np.abs(a[f] - 1).max() < 1e-4, f"{f} decayed: {a[f]}"
for f, x in (("cls", a), ("pos_embed", a), ("pe.params", l)):
    assert np.abs(x[f]).max() > 1e-3, f"{f} decayed: {np.abs(x[f]).max()}"
print("fine")
EOF
check_grep "lr * wd = 1 wipes weight matrices, not LayerNorm gains, cls, pos_embed, pe.params" "^fine" "$T/wdcheck"
# Label smoothing 1 of 2 classes: targets 1/2 each, so with --lr 0 at a
# fresh model (logits near equal) the loss is about ln 2.
vit-train $M --pe abs --batch 20 --steps 1 --lr 0 --smoothing 1 --log "$T/smooth.json" "$T/small.vt"
l=$(sed -n 's/.*"loss":\([^,]*\),.*/\1/p' "$T/smooth.json")
$PY -c "import math, sys; sys.exit(not abs(${l:-0} - math.log(2)) < 1e-3)" && ok "--smoothing 1: loss $l = ln 2" || nok "--smoothing 1: loss $l, not ln 2"
# Clipping: --clip 1e-12 leaves a gradient far below eps, so AdamW's step
# is ~lr * 1e-5; the moments are the same as with --lr 0 (same gradient).
C="$M --pe abs --batch 20 --steps 1 --wd 0"
vit-train $C --clip 1e-12 -o "$T/c1.vt" "$T/small.vt" && vit-train $C --clip 1e-12 --lr 0 -o "$T/c0.vt" "$T/small.vt"
d=$($PY tests/sh/vtstream.py "$T/c1.vt" --maxdiff "$T/c0.vt")
$PY -c "import sys; sys.exit(not $d < 1e-6)" && ok "--clip 1e-12: the step moves nothing (max diff $d)" || nok "--clip 1e-12: weights moved $d"
vit-train $C -o "$T/c2.vt" "$T/small.vt" && vit-train $C --lr 0 -o "$T/c3.vt" "$T/small.vt"
d=$($PY tests/sh/vtstream.py "$T/c2.vt" --maxdiff "$T/c3.vt")
$PY -c "import sys; sys.exit(not $d > 1e-4)" && ok "... without --clip it does (max diff $d)" || nok "unclipped step moved only $d"

# Multi-resolution: from record 50 on, 5x5 grids; batches end early.
gen --records 100 --seed 7 --tokens-from 50:5 > "$T/multi.vt"
check "multi-resolution stream" vit-train $M --pe abs --batch 32 -o "$T/mr.vt" "$T/multi.vt"
[ "$(key "$T/mr.vt" STEP)" = 4 ] && ok "batches end where the grid changes (32+18, 32+18)" || nok "steps $(key "$T/mr.vt" STEP)"

# --generators: pe.params and the keys PE SHARE HEAD_DIM AXES HEADS LAYERS,
# as skewgen writes them (a checkpoint has them too).  With --lr 0 the
# parameters stay what they were set to.
G="$M --pe liere:4 --batch 32"
vit-train $G --steps 2 -o "$T/gen.vt" "$T/ep.vt"
check "--generators FILE" vit-train $G --seed 2 --lr 0 --steps 1 --generators "$T/gen.vt" -o "$T/fromgen.vt" "$T/ep.vt"
$PY tests/sh/vtstream.py "$T/gen.vt" --field pe.params > "$T/pe1"
$PY tests/sh/vtstream.py "$T/fromgen.vt" --field pe.params > "$T/pe2"
[ -s "$T/pe1" ] && cmp -s "$T/pe1" "$T/pe2" && ok "... pe.params taken from it" || nok "pe.params differ from the generator file's"
vit-train $G --seed 2 --lr 0 --steps 1 -o "$T/nogen.vt" "$T/ep.vt"
$PY tests/sh/vtstream.py "$T/nogen.vt" --field pe.params | cmp -s - "$T/pe1" && nok "seed 2 alone gives the same pe.params" || ok "... (seed 2 alone: others)"
check_exit 1 "--generators of another model" vit-train $M --depth 2 --pe liere:4 --generators "$T/gen.vt" "$T/ep.vt"
check_grep "... names the key" "LAYERS is 1, the model's is 2" "$T/err"

# Bad input.
gen --records 8 --no-label > "$T/nolabel.vt"
check_exit 1 "no label field" vit-train $M "$T/nolabel.vt"
check_grep "... named" "label" "$T/err"
gen --records 8 --patch-name pixels > "$T/nopatch.vt"
check_exit 1 "no patch field" vit-train $M "$T/nopatch.vt"
gen --records 8 --label 2 > "$T/badlabel.vt"
check_exit 1 "label out of range" vit-train $M "$T/badlabel.vt"
check_grep "... said" "label 2 out of range" "$T/err"
gen --records 8 --label -1 > "$T/minus1.vt"
check_exit 1 "training needs every label" vit-train $M "$T/minus1.vt"
gen --records 8 --f32 --nan 3 > "$T/nan.vt"
check_exit 1 "NaN in f32 patches" vit-train $M "$T/nan.vt"
check_grep "... said" "record 4: 'patch' holds NaN" "$T/err"
gen --records 8 --nan 5 > "$T/nanpos.vt"
check_exit 1 "NaN in positions" vit-train $M "$T/nanpos.vt"
head -c 2000 "$T/small.vt" > "$T/trunc.vt"
check_exit 1 "truncated stream" vit-train $M "$T/trunc.vt"
printf 'VITPIPE 1\nBYTEORDER little\nALIGN 64\nFIELD x f32 3\nENDHDR\n' > "$T/junk.vt"
check_exit 1 "a stream of other fields" vit-train $M "$T/junk.vt"
check_exit 1 "not a stream" vit-train $M /etc/passwd
gen --records 8 --clspos 1.5 > "$T/cls1.vt"
check_exit 1 "CLSPOS with 1 coordinate for 2 axes" vit-train $M --pe liere:4 "$T/cls1.vt"
check_grep "... said" "CLSPOS '1.5' is not 'none' or 2 coordinates" "$T/err"
gen --records 40 --clspos 1.5,1.5 > "$T/cls2.vt"
check "CLSPOS 1.5,1.5: a rotated CLS" vit-train $M --pe liere:4 --locality -o "$T/cls.vt" "$T/cls2.vt"
[ "$(key "$T/cls.vt" VIT_CLS_POS)" = "1.5,1.5" ] && ok "... kept in the model" || nok "VIT_CLS_POS $(key "$T/cls.vt" VIT_CLS_POS)"
gen --records 8 --values 8 > "$T/p8.vt"
check_exit 1 "--val of another patch size fails at once" vit-train $M --val "$T/p8.vt" "$T/ep.vt"
check_grep "... said" "^vit-train: --val: .*8 values, the model takes 4" "$T/err"
check_exit 1 "--val missing" vit-train $M --val "$T/nonexistent.vt" "$T/ep.vt"
check_exit 1 "--resume without a checkpoint" vit-train --resume -o "$T/none.vt" "$T/ep.vt"
check_exit 2 "--resume takes no model option" vit-train --resume --lr 1 -o "$T/m.vt" "$T/ep.vt"
check_exit 2 "--resume needs --out" vit-train --resume "$T/ep.vt"
check_exit 2 "unknown preset" vit-train --preset huge "$T/ep.vt"
check_exit 2 "bad --share" vit-train --share some "$T/ep.vt"
# Every --share and --pool value reaches the model: a one-step run each.
for s in none:mean heads:cls layers:mean all:cls; do
	vit-train $M --pe liere:4 --share ${s%:*} --pool ${s#*:} --batch 8 --steps 1 \
	    -o "$T/share.vt" "$T/small.vt" 2>"$T/err" || { nok "--share ${s%:*} --pool ${s#*:}: $(head -c 200 "$T/err")"; continue; }
	sed -n '/^ENDHDR$/q; s/^\(SHARE\|VIT_SHARE\|VIT_POOL\) /\1=/p' "$T/share.vt" | tr '\n' ' ' > "$T/sharekeys"
	[ "$(cat "$T/sharekeys")" = "VIT_POOL=${s#*:} VIT_SHARE=${s%:*} SHARE=${s%:*} " ] &&
		ok "--share ${s%:*} --pool ${s#*:}: the checkpoint says so" ||
		nok "--share ${s%:*} --pool ${s#*:}: checkpoint has $(cat "$T/sharekeys")"
done
check_exit 1 "unknown position encoding" vit-train $M --pe nosuch "$T/ep.vt"
# A loss that overflows (weight decay lr * wd = 1e12 blows the weights up
# within a few steps) stops the run and keeps the last checkpoint: one
# step an epoch, so the epoch count of the checkpoint is the step before.
# The loss itself goes non-finite first (a forward pass of huge weights),
# so the message names the loss, not the gradient norm that would follow.
gen --records 100 --epoch-records 10 > "$T/e10.vt"
vit-train $M --pe abs --batch 10 --lr 1e6 --wd 1e6 -o "$T/h.vt" "$T/e10.vt" 2>"$T/err"
check_grep "non-finite loss stops the run, names step and last good checkpoint" \
    "^vit-train: step [0-9]+: the loss is (nan|-nan|inf|-inf).*last good checkpoint is .*h.vt \(epoch [0-9]+\)" "$T/err"
s=$(sed -n 's/.*step \([0-9]*\):.*/\1/p' "$T/err")
[ "$(key "$T/h.vt" EPOCH)" = $((s - 1)) ] && [ "$(key "$T/h.vt" DONE)" = 0 ] && ok "the checkpoint of step $((s - 1)) is kept" || nok "checkpoint after NaN: epoch $(key "$T/h.vt" EPOCH)"
check "... and is whole" $PY tests/sh/vtstream.py "$T/h.vt" --maxdiff "$T/h.vt"
# Resuming that model on a stream of another shape.
check_exit 1 "resume: patches of another size" vit-train --resume --threads 1 -o "$T/h.vt" "$T/p8.vt"
check_grep "... said" "8 values, the model takes 4" "$T/err"
gen --records 8 --axes 3 > "$T/a3.vt"
check_exit 1 "resume: positions of another rank" vit-train --resume --threads 1 -o "$T/h.vt" "$T/a3.vt"

# Augmented positions (ComRoPE's perturbation, posgen --perturb): each
# record has its own positions, which are no grid; rotary models keep the
# rotations per record, a position table takes the training grid.
patchify --patch 7 --idx "$FM/t10k-images-idx3-ubyte.gz" \
    --labels "$FM/t10k-labels-idx1-ubyte.gz" | vtool head -n 64 > "$T/fm.vt"
posgen "$T/fm.vt" > "$T/grid.vt"
posgen --perturb 0.5 --seed 2 "$T/fm.vt" > "$T/pert.vt"
for pe in liere:8 comrope-ld:4 abs; do
	check "augmented positions: trains --pe $pe" vit-train $M --pe $pe \
	    --batch 32 --epochs 1 -o "$T/pert-$pe.vt" "$T/pert.vt"
done
[ "$(key "$T/pert-liere:8.vt" VIT_POS_PER_RECORD)" = 1 ] &&
	ok "... the rotary model keeps rotations per record" ||
	nok "VIT_POS_PER_RECORD: $(key "$T/pert-liere:8.vt" VIT_POS_PER_RECORD)"
check "... vit-eval takes them" vit-eval --resamples 0 --threads 1 \
    "$T/pert-liere:8.vt" "$T/pert.vt"
vit-train $M --pe liere:8 --batch 32 --epochs 1 -o "$T/grid-liere.vt" "$T/grid.vt"
check "... also with a model trained on the grid" \
    vit-eval --resamples 0 --threads 1 "$T/grid-liere.vt" "$T/pert.vt"

# Learning: only the relative position of two markers tells the class.  A
# LieRE model learns it in 6 passes over 2000 records (seconds); without
# positions the model stays at chance.
gen --records 2000 --seed 11 > "$T/task.vt"
gen --records 400 --seed 12 > "$T/task-test.vt"
L="--dim 32 --depth 2 --heads 4 --mlp 64 --batch 32 --lr 3e-3 --warmup 20 --epochs 6 --threads 1"
for pe in liere:8 none; do
	check "learning task: train --pe $pe" vit-train $L --pe $pe -o "$T/l-$pe.vt" "$T/task.vt"
	vit-eval --resamples 0 --threads 1 "$T/l-$pe.vt" "$T/task-test.vt" > "$T/acc-$pe"
done
acc=$(awk '/^top1/ { print $2 }' "$T/acc-liere:8")
$PY -c "import sys; sys.exit(not ${acc:-0} >= 0.9)" && ok "liere:8 learns the task (top1 $acc)" || nok "liere:8 top1 $acc < 0.9"
acc=$(awk '/^top1/ { print $2 }' "$T/acc-none")
$PY -c "import sys; sys.exit(not 0.4 <= ${acc:-0} <= 0.6)" && ok "--pe none stays at chance (top1 $acc)" || nok "--pe none top1 $acc: not chance"
finish
