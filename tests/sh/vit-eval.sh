# vit-eval.sh - vit-eval: scores and their intervals against the records'
# own labels, per-class counts, --json, --predict, other grid sizes, bad
# input; the checkpoint's normalization (also through vtool to-npy and
# from-npy, and for vit-train --val); --confusion against counts of
# --predict; the records' source in --predict; and the EXAMPLES of
# vit-train(1) and vit-eval(1).
. tests/sh/lib.sh
gen() { $PY tests/sh/posclass.py "$@"; }
gen --records 400 --seed 1 > "$T/train.vt"
gen --records 300 --seed 2 > "$T/test.vt"
$PY tests/sh/vtstream.py "$T/test.vt" --labels > "$T/labels"
check "train a small model" vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 \
	--pe abs --epochs 4 --batch 20 --lr 3e-3 -o "$T/m.vt" "$T/train.vt"
E="vit-eval --threads 1"

check "scores a labelled stream" $E "$T/m.vt" "$T/test.vt"
cp "$T/out" "$T/text"
check_grep "records 300" "^records 300$" "$T/text"
check_grep "top1 with a 95% CI" "^top1 [0-9.]+ 95% CI [0-9.]+ [0-9.]+$" "$T/text"
grep -q "^top5" "$T/text" && nok "top5 of 2 classes printed: $(cat "$T/text")" ||
	ok "no top5 with 2 classes (it is always 1)"
check_grep "loss with a 95% CI" "^loss [0-9.]+ 95% CI" "$T/text"
awk '$3 == "95%" && !($5 <= $2 && $2 <= $6) { bad = 1 } END { exit bad }' "$T/text" &&
	ok "each interval holds its mean" || nok "interval without its mean: $(cat "$T/text")"
# The predictions agree with the score: top1 = matches with the labels.
check "--predict" $E --predict "$T/m.vt" "$T/test.vt"
cp "$T/out" "$T/pred"
[ "$(wc -l < "$T/pred")" -eq 300 ] && ok "one prediction per record" || nok "$(wc -l < "$T/pred") predictions"
awk '!($1 == "right" || $1 == "below") || $2 < 0.5 || $2 > 1 { bad = 1 } END { exit bad }' "$T/pred" &&
	ok "predictions: CLASS names and probabilities in [0.5, 1]" || nok "bad prediction line: $(head -n 2 "$T/pred")"
hits=$(paste "$T/labels" "$T/pred" | awk '($1 == 0 && $2 == "right") || ($1 == 1 && $2 == "below") { n++ } END { print n + 0 }')
top1=$(awk '/^top1/ { print $2 }' "$T/text")
$PY -c "import sys; sys.exit(abs($hits / 300 - $top1) > 1e-4)" && ok "top1 $top1 = $hits/300 labels matched" || nok "top1 $top1 but $hits/300 predictions right"
check "--predict reads stdin" sh -c "$E --predict $T/m.vt < $T/test.vt | cmp - $T/pred"
check "--per-class" $E --per-class --resamples 0 "$T/m.vt" "$T/test.vt"
n=$(awk '/^class/ { split($5, f, "/"); n += f[2]; h += f[1] } END { print n, h }' "$T/out")
[ "$n" = "300 $hits" ] && ok "per-class counts add up to 300 records, $hits right" || nok "per-class sums: $n"
check_grep "per-class lines name the classes" "^class 1 below [0-9.]+ [0-9]+/[0-9]+$" "$T/out"
# JSON: the same figures.
check "--json" $E --json --per-class "$T/m.vt" "$T/test.vt"
cp "$T/out" "$T/json"
$PY - "$T/out" "$top1" > "$T/jsoncheck" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["records"] == 300 and abs(j["top1"] - float(sys.argv[2])) < 1e-4
lo, hi = j["top1_ci"]
assert lo <= j["top1"] <= hi and 0 < hi - lo < 0.2
assert "top5" not in j and "top5_ci" not in j, "top5 of 2 classes"
assert [c["name"] for c in j["per_class"]] == ["right", "below"]
assert sum(c["records"] for c in j["per_class"]) == 300
print("fine")
EOF
check_grep "JSON: records, top1 and its interval, per_class" "^fine" "$T/jsoncheck"
# ... and they agree with each other and with the text: per-class top1
# weighted by the class's records is the overall top1; the intervals are
# the text's (same seed); the loss is the mean of -log p(label) from
# --predict's probabilities (2 classes: p(label) is p when the prediction
# is right, else 1 - p).
$PY - "$T/json" "$T/text" "$T/labels" "$T/pred" > "$T/jsoncheck2" 2>&1 <<'EOF'
import json, math, sys
j = json.load(open(sys.argv[1]))
def per_class():
    per = sum(c["top1"] * c["records"] for c in j["per_class"]) / j["records"]
    assert abs(per - j["top1"]) < 1e-5, f"per-class top1 give {per}, top1 {j['top1']}"
def ci():
    text = {l.split()[0]: [float(x) for x in l.split()[4:6]] for l in open(sys.argv[2]) if "CI" in l}
    for k in ("top1", "loss"):
        assert all(abs(a - b) < 1e-4 for a, b in zip(j[k + "_ci"], text[k])), f"{k}_ci {j[k + '_ci']}, text {text[k]}"
def loss():
    names, nll = {"right": 0, "below": 1}, []
    for lab, line in zip(open(sys.argv[3]), open(sys.argv[4])):
        name, p = line.split()[:2]
        p = float(p) if names[name] == int(lab) else 1 - float(p)
        nll.append(-math.log(max(p, 1e-7)))
    assert len(nll) == 300 and abs(sum(nll) / 300 - j["loss"]) < 1e-3, f"loss {j['loss']}, -log p(label) {sum(nll) / 300}"
out = []
for f in (per_class, ci, loss):
    try:
        f()
        out.append(f"{f.__name__} ok")
    except Exception as e:	# failures first: check_grep shows the head
        out.insert(0, f"{f.__name__} failed: {e!r}")
print("\n".join(out))
EOF
check_grep "JSON: per-class top1 x records add up to top1" "^per_class ok" "$T/jsoncheck2"
check_grep "JSON: top1_ci, loss_ci are the text's intervals; no top5 of 2 classes" "^ci ok" "$T/jsoncheck2"
check_grep "JSON: loss = mean -log p(label) of --predict" "^loss ok" "$T/jsoncheck2"
check "--predict --json" $E --predict --json "$T/m.vt" "$T/test.vt"
$PY -c "
import json, sys
l = [json.loads(x) for x in open('$T/out')]
assert len(l) == 300 and l[7]['record'] == 7 and l[0]['name'] in ('right', 'below')
print('fine')" > "$T/pj" 2>&1
check_grep "--predict --json: an object per record" "^fine" "$T/pj"
# Bootstrap: seeded, so reproducible; another seed moves the interval.
$E "$T/m.vt" "$T/test.vt" > "$T/again"
cmp -s "$T/text" "$T/again" && ok "same seed, same intervals" || nok "intervals vary between runs"
$E --seed 9 "$T/m.vt" "$T/test.vt" > "$T/seed9"
cmp -s "$T/text" "$T/seed9" && nok "--seed changes nothing" || ok "--seed 9: other intervals"
$E --resamples 0 "$T/m.vt" "$T/test.vt" > "$T/noci"
grep -q CI "$T/noci" && nok "--resamples 0 still prints intervals" || ok "--resamples 0: no intervals"
check "batch size does not change the scores" sh -c "$E -b 7 $T/m.vt $T/test.vt | cmp - $T/text"
# Other grids: a 6x6 grid (absolute table interpolated), and a stream that
# changes grid size half-way.
gen --records 50 --grid 6 > "$T/g6.vt"
check "evaluates at a 6x6 grid" $E "$T/m.vt" "$T/g6.vt"
check_grep "... all 50 records" "^records 50$" "$T/out"
gen --records 60 --tokens-from 30:3 > "$T/multi.vt"
check "evaluates a multi-resolution stream" $E "$T/m.vt" "$T/multi.vt"
check_grep "... all 60 records" "^records 60$" "$T/out"
# Unlabelled streams: only predictions.
gen --records 20 --no-label > "$T/nolabel.vt"
check_exit 1 "no labels to score" $E "$T/m.vt" "$T/nolabel.vt"
check_grep "... suggests --predict" "predict" "$T/err"
check "--predict needs no labels" $E --predict "$T/m.vt" "$T/nolabel.vt"
[ "$(wc -l < "$T/out")" -eq 20 ] && ok "... 20 predictions" || nok "$(wc -l < "$T/out") predictions"
gen --records 20 --label -1 > "$T/minus1.vt"
check "label -1: a record without a label" $E "$T/m.vt" "$T/minus1.vt"
check_grep "... left out of the scores" "^records 19$" "$T/out"

restream() { $PY tests/sh/restream.py "$@"; }

# Normalization: the checkpoint keeps its training stream's MEAN 0.1 and
# STD 0.3.  A stream that declares none is normalized with them (the scores
# of the stream that declares them), one that declares others is refused,
# naming both; the same values written otherwise are the same.  A model
# trained longer, whose scores move with the normalization.
check "train a better model" vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 \
	--pe abs --epochs 12 --batch 20 --lr 3e-3 -o "$T/m12.vt" "$T/train.vt"
$E "$T/m12.vt" "$T/test.vt" > "$T/m12.txt"
restream "$T/test.vt" "$T/nonorm.vt" MEAN,STD
check "a stream without MEAN/STD" $E "$T/m12.vt" "$T/nonorm.vt"
cmp -s "$T/out" "$T/m12.txt" && ok "... scores as with the checkpoint's MEAN/STD" ||
	nok "... scores otherwise: $(head -n 2 "$T/out"), not $(head -n 2 "$T/m12.txt")"
[ -s "$T/err" ] && nok "... and a message: $(cat "$T/err")" || ok "... and no message"
restream "$T/test.vt" "$T/other.vt" MEAN,STD MEAN=0.5 STD=0.25
check_exit 1 "a stream with other MEAN/STD is refused" $E "$T/m12.vt" "$T/other.vt"
check_grep "... naming both" "^vit-eval: $T/other.vt: MEAN 0.5 STD 0.25 differ from the model's MEAN 0.1 STD 0.3" "$T/err"
restream "$T/test.vt" "$T/other1.vt" MEAN MEAN=0.3
check_exit 1 "... also when only MEAN differs" $E "$T/m12.vt" "$T/other1.vt"
restream "$T/test.vt" "$T/same.vt" MEAN,STD MEAN=0.100000000 STD=3e-1
check "the same MEAN/STD written otherwise" $E "$T/m12.vt" "$T/same.vt"
cmp -s "$T/out" "$T/m12.txt" && ok "... the same scores" || nok "... other scores: $(head -n 2 "$T/out")"
# Through NumPy and back: keys and scores kept.
check "vtool to-npy" vtool to-npy "$T/npd" "$T/test.vt"
check "vtool from-npy" sh -c "vtool from-npy patch=$T/npd/patch.npy pos=$T/npd/pos.npy \
	label=$T/npd/label.npy > $T/back.vt"
lost=
for k in MEAN STD CLASSES CLASS GRID PATCH CHANNELS POS; do
	[ "$($PY tests/sh/vtstream.py "$T/test.vt" $k)" = "$($PY tests/sh/vtstream.py "$T/back.vt" $k)" ] ||
		lost="$lost $k"
done
[ -z "$lost" ] && ok "to-npy and from-npy keep MEAN STD CLASSES CLASS GRID PATCH CHANNELS POS" ||
	nok "to-npy and from-npy lose$lost"
check "vit-eval after to-npy and from-npy" $E "$T/m12.vt" "$T/back.vt"
cmp -s "$T/out" "$T/m12.txt" && ok "... the same scores as before" ||
	nok "... other scores: $(head -n 2 "$T/out"), not $(head -n 2 "$T/m12.txt")"
# vit-train --val keeps the same rule, with the training stream's MEAN/STD.
check "vit-train --val of a stream without MEAN/STD" vit-train --dim 16 --depth 1 --heads 2 \
	--mlp 32 --threads 1 --pe abs --epochs 1 --batch 20 --val "$T/nonorm.vt" \
	--log "$T/val.json" -o "$T/v.vt" "$T/train.vt"
$E --json "$T/v.vt" "$T/test.vt" > "$T/v.txt"
$PY -c "
import json, sys
v = [json.loads(l) for l in open('$T/val.json') if 'val_acc' in l][-1]
e = json.load(open('$T/v.txt'))
sys.exit(abs(v['val_loss'] - e['loss']) > 1e-5 or abs(v['val_acc'] - e['top1']) > 1e-5)" &&
	ok "... scores as vit-eval on the stream with MEAN/STD" ||
	nok "... other scores: $(tail -n 1 "$T/val.json"), $(cat "$T/v.txt")"
check_exit 1 "vit-train --val of a stream with other MEAN/STD" vit-train --dim 16 --depth 1 \
	--heads 2 --mlp 32 --threads 1 --epochs 1 --val "$T/other.vt" -o "$T/v2.vt" "$T/train.vt"
check_grep "... refused before training, naming both" "^vit-train: --val: $T/other.vt: MEAN 0.5 STD 0.25 differ from the model's MEAN 0.1 STD 0.3" "$T/err"
[ -e "$T/v2.vt" ] && nok "... but a checkpoint was written" || ok "... no checkpoint written"

# --confusion: rows true class, columns predicted, against the counts of
# --predict's classes and the stream's labels.
$E --predict "$T/m12.vt" "$T/test.vt" > "$T/m12.pred"
$E --confusion "$T/m12.vt" "$T/test.vt" > "$T/m12c.txt"
paste "$T/labels" "$T/m12.pred" | awk '{ n[$1 " " ($2 == "right" ? 0 : 1)]++ }
	END { printf "%d %d %d %d\n", n["0 0"], n["0 1"], n["1 0"], n["1 1"] }' > "$T/cm.want"
awk '($1 == "right" || $1 == "below") && $2 ~ /^[0-9]+$/ { printf "%s%s %s", sep, $2, $3; sep = " " } END { print "" }' \
	"$T/m12c.txt" > "$T/cm.got"
cmp -s "$T/cm.want" "$T/cm.got" && ok "--confusion: the counts of --predict and the labels ($(cat "$T/cm.got"))" ||
	nok "--confusion $(cat "$T/cm.got"), --predict and labels $(cat "$T/cm.want")"
check_grep "--confusion: a line says which is which" "^confusion \(rows: true class, columns: predicted\)$" "$T/m12c.txt"
check_grep "--confusion: a header of class names" "^ +right +below$" "$T/m12c.txt"
grep -A3 "^confusion" "$T/m12c.txt" | tail -n 3 | awk '{ print length($0) }' | sort -u | wc -l | grep -qx 1 &&
	ok "--confusion: aligned columns" || nok "--confusion not aligned: $(grep -A3 "^confusion" "$T/m12c.txt")"
check "--confusion --json" $E --confusion --json "$T/m12.vt" "$T/test.vt"
$PY -c "
import json, sys
j = json.load(open('$T/out'))
got = ' '.join(str(n) for row in j['confusion'] for n in row)
sys.exit(j['class_names'] != ['right', 'below'] or got != open('$T/cm.want').read().strip())" &&
	ok "--confusion --json: class_names and the same counts" || nok "--confusion --json: $(cat "$T/out")"
check_exit 2 "--confusion with --predict" vit-eval --confusion --predict "$T/m12.vt"

# The records' source (patchify's field, vitpipe(5)): at the end of each
# --predict line, and in --json; without the field the lines are as before.
SOURCE="set A/img" restream "$T/test.vt" "$T/src.vt" -
check "--predict with a source field" $E --predict "$T/m12.vt" "$T/src.vt"
awk '{ s = $5; for (i = 6; i <= NF; i++) s = s " " $i; if (s != "set A/img/" NR - 1 ".png") bad = 1 }
	END { exit bad }' "$T/out" && ok "... each record's source ends its line" || nok "... $(head -n 2 "$T/out")"
cut -d' ' -f1-4 "$T/out" | cmp -s - "$T/m12.pred" && ok "... after the same class, probability and true class" ||
	nok "... other predictions: $(head -n 2 "$T/out")"
check "--predict --json with a source field" $E --predict --json "$T/m12.vt" "$T/src.vt"
$PY -c "
import json, sys
l = [json.loads(x) for x in open('$T/out')]
sys.exit(len(l) != 300 or not all(r['source'] == f'set A/img/{i}.png' for i, r in enumerate(l)))" &&
	ok "... a source key in every object" || nok "... $(head -n 1 "$T/out")"
[ "$(awk '{ print NF }' "$T/m12.pred" | sort -u)" = 4 ] && ok "without the field: class, probability, true class, right or wrong" ||
	nok "without the field: $(head -n 1 "$T/m12.pred")"
# A source with a terminal escape is printed escaped, as ls -b does.
SOURCE="$(printf 'x\033[31m')" restream "$T/test.vt" "$T/esc.vt" -
check "--predict with an escape in the source" $E --predict "$T/m12.vt" "$T/esc.vt"
! grep -q "$(printf '\033')" "$T/out" && grep -q 'x\\x1b\[31m/0.png$' "$T/out" &&
	ok "... printed as \\x1b, never raw" || nok "escape in --predict: $(head -n 1 "$T/out" | od -c | head -n 2)"
restream "$T/test.vt" "$T/nopos.vt" "FIELD pos"
check_exit 1 "no field pos" $E "$T/m12.vt" "$T/nopos.vt"
check_grep "... says to make positions with posgen" "no field 'pos': make positions with posgen" "$T/err"

# Bad input.
gen --records 8 --values 8 > "$T/p8.vt"
check_exit 1 "patches of another size" $E "$T/m.vt" "$T/p8.vt"
check_grep "... said" "8 values, the model takes 4" "$T/err"
gen --records 8 --axes 3 > "$T/a3.vt"
check_exit 1 "positions of another rank" $E "$T/m.vt" "$T/a3.vt"
gen --records 8 --label 5 > "$T/badlabel.vt"
check_exit 1 "label out of range" $E "$T/m.vt" "$T/badlabel.vt"
gen --records 8 --f32 --nan 2 > "$T/nan.vt"
check_exit 1 "NaN in patches" $E "$T/m.vt" "$T/nan.vt"
gen --records 8 --nan 2 > "$T/nanpos.vt"
check_exit 1 "NaN in positions" $E "$T/m.vt" "$T/nanpos.vt"
head -c 3000 "$T/test.vt" > "$T/trunc.vt"
check_exit 1 "truncated stream" $E "$T/m.vt" "$T/trunc.vt"
check_exit 1 "missing model" $E "$T/none.vt" "$T/test.vt"
check_exit 1 "a stream is not a model" $E "$T/test.vt" "$T/test.vt"
head -c 5000 "$T/m.vt" > "$T/cut.vt"
check_exit 1 "a cut checkpoint" $E "$T/cut.vt" "$T/test.vt"
gen --records 0 > "$T/empty.vt"
check_exit 1 "no records" $E "$T/m.vt" "$T/empty.vt"
check_exit 2 "no operand" vit-eval
check_exit 2 "three operands" vit-eval a b c
check_exit 2 "--predict with --per-class" vit-eval --predict --per-class "$T/m.vt"

# ComRoPE's offset test: posgen --offset moves every token of a record,
# a positioned CLS (--cls centre) with them, so a commuting encoding
# predicts as before and LieRE does not, nor ape, which reads its table at
# the absolute positions.  probs_close A B: the same classes,
# probabilities within 1e-5 (float rounding: 1e-7; what the positions
# change in these small models: 1e-4).
probs_close() { paste "$1" "$2" | awk '{ n = NF / 2 } $1 != $(n + 1) || ($2 - $(n + 2)) ^ 2 > 1e-10 { bad = 1 } END { exit bad }'; }
gen --records 300 --seed 1 --no-pos | posgen --cls centre > "$T/ctrain.vt"
gen --records 100 --seed 2 --no-pos | posgen --cls centre > "$T/ctest.vt"
gen --records 100 --seed 2 --no-pos | posgen --cls centre --offset 1 --seed 3 > "$T/coff.vt"
for pe in rope-mixed comrope-ld:4 liere:4 ape; do
	vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 --pe $pe --epochs 8 \
	    --batch 20 --lr 1e-2 -o "$T/c.vt" "$T/ctrain.vt" 2>"$T/err" || nok "train $pe: $(cat "$T/err")"
	$E --predict "$T/c.vt" "$T/ctest.vt" > "$T/p0"
	$E --predict "$T/c.vt" "$T/coff.vt" > "$T/p1"
	if [ $pe = liere:4 ] || [ $pe = ape ]; then
		probs_close "$T/p0" "$T/p1" && nok "$pe: an offset left its predictions" ||
		    ok "$pe (generators that do not commute, or a table): an offset changes its predictions"
	else
		probs_close "$T/p0" "$T/p1" && ok "$pe: an offset of every token, CLS included, leaves its predictions" ||
		    nok "$pe: an offset changed its predictions: $(paste "$T/p0" "$T/p1" | head -n 3)"
	fi
done
check_exit 1 "vit-train refuses a stream with per-record CLS positions" vit-train --dim 16 \
	--depth 1 --heads 2 --mlp 32 --pe rope-mixed --steps 1 -o "$T/c2.vt" "$T/coff.vt"
check_grep "... they are an evaluation's" "^vit-train: .*coff.vt: per-record CLS positions \(field 'clspos'\) are for evaluation" "$T/err"
# At another resolution a model sees its encoding's own positions on that
# grid (ComRoPE's (i + 0.5)/n, RoPE-ViT's i), whatever convention the stream
# names: the same patches under posgen's linspace (n0: the training grid)
# and under the encoding's own convention give the same predictions.
gen --records 100 --seed 4 --grid 6 --no-pos > "$T/g6.vt"
for pe in comrope-ap:4:centre rope-axial:integer ape:centre; do
	conv=${pe##*:}; pe=${pe%:*}
	vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 --pe $pe --epochs 8 \
	    --batch 20 --lr 1e-2 -o "$T/c.vt" "$T/ctrain.vt" 2>"$T/err" || nok "train $pe: $(cat "$T/err")"
	posgen --n0 4 --cls centre < "$T/g6.vt" > "$T/g6lin.vt"
	posgen -c $conv --cls centre < "$T/g6.vt" > "$T/g6own.vt"
	$E --predict "$T/c.vt" "$T/g6lin.vt" > "$T/p0"
	$E --predict "$T/c.vt" "$T/g6own.vt" > "$T/p1" 2>/dev/null
	probs_close "$T/p0" "$T/p1" && ok "$pe on 6 x 6 patches, trained on 4 x 4: $conv positions on the new grid" ||
	    nok "$pe on 6 x 6: linspace and $conv positions predict differently: $(paste "$T/p0" "$T/p1" | head -n 3)"
done

# The EXAMPLES of both man pages, run in a directory with train.vt and
# test.vt; the Fashion-MNIST ones on its first 100 images of each set.
mkdir "$T/ex"; cp "$T/train.vt" "$T/test.vt" "$T/ex/"
small_fmnist "$T/ex/fm" 100 100
for page in vit-train vit-eval; do
	man_blocks "man/man1/$page.1" "$T/ex/$page"
	for f in "$T/ex/$page"[0-9]*.sh; do
		what="$page EXAMPLES block $(basename "$f" .sh)"
		at_small_fmnist "$f" "$T/ex/fm"
		(cd "$T/ex" && sh -e "$f") >"$T/exout" 2>&1 &&
			ok "$what" || nok "$what: $(tail -c 300 "$T/exout")"
	done
done
# Class names: a stream whose class c is named otherwise than the model's
# class c is refused (its labels mean other classes), one with the same
# names is scored.
mkdir -p "$T/cn/circle" "$T/cn/square" "$T/cn2/hexagon" "$T/cn2/square"
for d in cn/circle cn/square cn2/hexagon cn2/square; do
	convert -size 8x8 xc:gray40 "$T/$d/1.png" && convert -size 8x8 xc:gray80 "$T/$d/2.png"
done
patchify --patch 4 "$T/cn" | posgen >"$T/cn.vt" && patchify --patch 4 "$T/cn2" | posgen >"$T/cn2.vt" ||
	nok "class folder streams"
check "a model of {circle, square}" vit-train --dim 16 --depth 1 --heads 2 --mlp 16 --threads 1 \
	--epochs 1 --batch 2 -o "$T/cn.vt.m" "$T/cn.vt"
check "its own classes are scored" $E "$T/cn.vt.m" "$T/cn.vt"
check_exit 1 "a stream of {hexagon, square} is refused" $E "$T/cn.vt.m" "$T/cn2.vt"
check_grep "... naming both names" "^vit-eval: .*cn2.vt: class 0 is 'hexagon', but .*class 0 is 'circle'" "$T/err"
# --predict: the true class and right or wrong after the probability; in
# JSON label, label_name and correct.
paste "$T/labels" "$T/pred" | awk '{ want = $1 == 0 ? "right" : "below"
	if ($4 != want || $5 != ($2 == want ? "right" : "wrong")) bad = 1 } END { exit bad }' &&
	ok "--predict: each line's true class and right or wrong" || nok "--predict columns: $(head -n 2 "$T/pred")"
$E --predict --json "$T/m.vt" "$T/test.vt" | $PY -c "import json, sys
l = [json.loads(x) for x in sys.stdin]
sys.exit(not all(r['label_name'] == ('right', 'below')[r['label']] and r['correct'] == (r['class'] == r['label']) for r in l))" &&
	ok "--predict --json: label, label_name, correct" || nok "--predict --json lacks the true class"

# Plausible mistakes, said plainly.
check_exit 1 "operands swapped" $E "$T/test.vt" "$T/m.vt"
check_grep "... the first is a stream, not a model" "^vit-eval: .*test.vt: a data stream \(field 'patch'\), not a model checkpoint" "$T/err"
vtool to-safetensors "$T/m.vt" > "$T/m.safetensors"
check_exit 1 "a safetensors file as the model" $E "$T/m.safetensors" "$T/test.vt"
check_grep "... suggests vtool from-safetensors" "vtool from-safetensors" "$T/err"
check_exit 1 "a directory as the stream" $E "$T/m.vt" "$T"
check_grep "... says so" "is a directory" "$T/err"
script -qec "$TOP/$BIN/vit-eval $T/m.vt; echo rc=\$?" /dev/null > "$T/tty" 2>&1
check_grep "a stream from a terminal is refused, not waited for" "^vit-eval: stdin: refusing to read binary data from a terminal" "$T/tty"
check_grep "... exit 1" "rc=1" "$T/tty"
gen --records 20 --seed 3 --grid 6 > "$T/g6.vt"
check "an abs model on another grid" $E --resamples 0 "$T/m.vt" "$T/g6.vt"
check_grep "... says its table is interpolated" "^vit-eval: .*g6.vt: grid 6x6, the model's 4x4: its position table \(--pe abs\) is interpolated" "$T/err"
finish
