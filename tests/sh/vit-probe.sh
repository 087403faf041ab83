# vit-probe.sh - vit-probe: the numbers of each --show in their shapes (a line
# per layer and head, per offset, per set, axis and plane), rope-axial's
# spectrum its RoPE frequencies per grid cell, distances within the grid;
# pictures as text and SVG; -n; bad input (no model, a stream of another
# patch size or of no grid, an encoding without rotation, bad options);
# and vit-probe(1)'s examples.  (tests/unit/test_probe checks the figures'
# values, and streams of several grids.)
. tests/sh/lib.sh
W="$T/probe"; mkdir -p "$W"
cd "$W"
# Models of 2 layers and 2 heads (head_dim 8), one step on a 4x4 grid of
# Fashion-MNIST patches at linspace positions, mapped into each
# encoding's own.
patchify --idx "$FM/t10k-images-idx3-ubyte.gz" --patch 7 --subset 0.003 >raw.vt &&
    posgen <raw.vt >s.vt || nok "making a stream"
for pe in rope-axial abs; do
	vit-train --dim 16 --depth 2 --heads 2 --mlp 16 --pe $pe --steps 1 -b 8 --threads 1 \
	    -o $pe.vt s.vt 2>"$T/err" || nok "vit-train --pe $pe: $(head -c 300 "$T/err")"
done
P="vit-probe --threads 1"

check "--data (distance, the default)" $P --data rope-axial.vt s.vt
[ "$(grep -vc '^#' "$T/out")" -eq 4 ] && ok "distance: a line per layer and head" ||
    nok "distance: $(grep -vc '^#' "$T/out") lines"
awk '!/^#/ && !($3 > 0.5 && $3 < 4.25) { bad = 1 } !/^#/ { k[$1 " " $2]++ } END { exit bad || length(k) != 4 }' "$T/out" &&
    ok "... each layer and head once, its distance within the 4x4 grid's" || nok "distances: $(cat "$T/out")"
check "--show similarity --data" $P --show similarity --data rope-axial.vt s.vt
[ "$(grep -vc '^#' "$T/out")" -eq $((2 * 2 * 7 * 7)) ] && ok "similarity: layers x heads x 7 x 7 offsets" ||
    nok "similarity: $(grep -vc '^#' "$T/out") lines"
awk '!/^#/ && (NF != 5 || $3 < -3 || $3 > 3 || $4 < -3 || $4 > 3) { bad = 1 } END { exit bad }' "$T/out" &&
    ok "... layer, head, dy, dx within 3, score" || nok "similarity lines: $(head -n 3 "$T/out")"
check "--show spectrum --data" $P --show spectrum --data rope-axial.vt
[ "$(grep -vc '^#' "$T/out")" -eq $((4 * 2 * 4)) ] && ok "spectrum: sets x axes x 4 planes" ||
    nok "spectrum: $(grep -vc '^#' "$T/out") lines"
# rope-axial turns half its 4 pairs by each axis, at 100^(-k/2) radians per
# grid cell whatever the stream's convention: 0 0 0.1 1 per set and axis.
awk '!/^#/ { f[$1 " " $2] = f[$1 " " $2] " " $4 } END { for (k in f) if (f[k] != " 0 0 0.1 1") exit 1; exit length(f) != 8 }' "$T/out" &&
    ok "rope-axial: 0 0 0.1 1 radians per cell on each axis of each set" || nok "rope-axial's spectrum: $(cat "$T/out")"
check_exit 1 "abs has no spectrum" $P --show spectrum abs.vt
check_grep "... and says so" "rotates nothing" "$T/err"

# Pictures: text, on stdin too; -n counts the records; SVG.
check "a text picture to a file" $P -n 8 -o d.txt rope-axial.vt s.vt
check_grep "... of the first 8 records" "8 records" d.txt
check "similarity as text, the stream on stdin" sh -c "$P --show similarity -s 100x60 rope-axial.vt <s.vt"
check_grep "... with a panel per layer and head" "layer 1 head 1" "$T/out"
check_grep "... and its shades' range" "^shades" "$T/out"
if command -v gnuplot >/dev/null; then
	check "similarity as SVG" $P --show similarity -o sim.svg rope-axial.vt s.vt
	$PY - sim.svg >"$T/svg" 2>&1 <<'PY' && ok "... an SVG of 4 heat maps" || nok "sim.svg: $(cat "$T/svg")"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
texts = [t.text for t in root.iter(ns + "text")]
maps = [t for t in texts if t and t.startswith("layer ")]
assert maps == ["layer 0 head 0", "layer 0 head 1", "layer 1 head 0", "layer 1 head 1"], maps
assert len(list(root.iter(ns + "image"))) == 4, "images"
PY
else
	nok "gnuplot is not installed (make deps)"
fi

# Bad input.
check_exit 1 "a missing model" $P nosuch.vt s.vt
head -c 36 /dev/zero | patchify --raw 6x6x1 --patch 3 | posgen >p9.vt
check_exit 1 "a stream of another patch size" $P rope-axial.vt p9.vt
posgen --perturb 0.2 --seed 1 <raw.vt >jit.vt
check_exit 1 "perturbed positions" $P --data rope-axial.vt jit.vt
check_grep "... fill no grid" "fill no grid" "$T/err"
check_exit 2 "--show bogus" $P --show bogus rope-axial.vt s.vt
check_exit 2 "spectrum reads no stream" $P --show spectrum rope-axial.vt s.vt
check_exit 2 "--data takes no --format" $P --data -f svg rope-axial.vt s.vt
check "--help" $P --help
check_grep "... names every picture" "spectrum" "$T/out"
cd "$TOP"

# The man page's examples, on the rope-axial model and its stream.
mkdir -p "$T/ex-vit-probe"
cp "$W/rope-axial.vt" "$T/ex-vit-probe/model.vt"
cp "$W/s.vt" "$T/ex-vit-probe/test.vt"
run_examples vit-probe
check_grep "... the last, the spectrum as text, a panel per axis" "axis x" "$T/out"
finish
