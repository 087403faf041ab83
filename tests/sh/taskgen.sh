# taskgen.sh - the tasks' labels checked against their images and layouts
# by rules written here again (and shown to catch a wrong label), the same
# bytes for the same seed at any thread count, patchify reading the
# output, the errors.
. tests/sh/lib.sh
G=taskgen
small_fmnist "$T/fm" 300 10
I=$T/fm/train-images-idx3-ubyte.gz

# relation with items at full size (copied, not resampled), so that every
# pixel can be checked against its source image
check "relation, 28-pixel items on 64" $G relation --idx "$I" -n 200 --item 28 --canvas 64 --seed 3 \
    --labels "$T/rl.npy" --layout "$T/r.txt" -o "$T/r.npy"
cat > "$T/relation.py" <<'EOF'
import gzip, sys
import numpy as np
def check(img, lab, lay, src, cls, item, margin):
    """Raise unless every record is a garment and a shoe or bag on black, apart, labelled by the rule."""
    assert img.shape[0] == lab.shape[0] == lay.shape[0] and lab.dtype == np.int32
    for i in range(len(lab)):
        n, l, ya, xa, a, ca, yb, xb, b, cb = lay[i]
        assert n == i and l == lab[i], (i, lay[i], lab[i])
        assert ca == cls[a] and cb == cls[b] and ca in (0, 1, 2, 3, 4, 6) and cb in (5, 7, 8, 9), ("anchor", i, ca, cb)
        dy, dx = abs(yb - ya), abs(xb - xa)
        assert dy >= margin and dx >= margin and (dy >= item or dx >= item), ("apart", i)
        assert lab[i] == 2 * (xa < xb) + (ya < yb), ("rule", i)
        rest = img[i].copy()
        for y, x, k in ((ya, xa, a), (yb, xb, b)):
            if src is not None:
                assert (rest[y:y + item, x:x + item] == src[k]).all(), ("pixels", i)
            rest[y:y + item, x:x + item] = 0
        assert not rest.any(), ("outside the items", i)
d = sys.argv[1]
raw = gzip.open(d + "/fm/train-images-idx3-ubyte.gz").read()
src = np.frombuffer(raw[16:], np.uint8).reshape(-1, 28, 28)
cls = np.frombuffer(gzip.open(d + "/fm/train-labels-idx1-ubyte.gz").read()[8:], np.uint8)
img, lab, lay = np.load(d + "/r.npy"), np.load(d + "/rl.npy"), np.loadtxt(d + "/r.txt", dtype=np.int64, ndmin=2)
item = int(sys.argv[2])
check(img, lab, lay, src if item == 28 else None, cls, item, 4)
assert set(lab) == {0, 1, 2, 3}, set(lab)
if item == 28:
    # The check can fail: one label changed is caught.
    bad = lab.copy(); bad[7] ^= 1
    try:
        check(img, bad, np.c_[lay[:, :1], bad, lay[:, 2:]], src, cls, item, 4)
    except AssertionError as e:
        assert e.args[0][0] == "rule", e
    else:
        raise SystemExit("a wrong label passed the check")
EOF
check "relation: the items' pixels, classes, places and labels (a wrong label is caught)" \
    $PY "$T/relation.py" "$T" 28
check "relation, default 14-pixel items on 56" $G relation --idx "$I" -n 300 --seed 3 \
    --labels "$T/rl.npy" --layout "$T/r.txt" -o "$T/r.npy"
check "... the labels by the rule, nothing outside the items" $PY "$T/relation.py" "$T" 14

# the same seed, the same bytes, at any thread count; the first n records
# of a larger set are the set of n; another seed differs
$G relation --idx "$I" -n 300 --seed 3 --threads 1 --labels "$T/rl1.npy" --layout "$T/r1.txt" > "$T/r1.npy"
cmp -s "$T/r.npy" "$T/r1.npy" && cmp -s "$T/rl.npy" "$T/rl1.npy" && cmp -s "$T/r.txt" "$T/r1.txt" &&
	ok "relation: same seed, same bytes on 1 thread and on all, stdout or -o" || nok "relation: the bytes differ"
$G pathfinder -n 500 --seed 5 --labels "$T/pl.npy" -o "$T/p.npy"
$G pathfinder -n 500 --seed 5 --threads 1 --labels "$T/pl1.npy" -o "$T/p1.npy"
cmp -s "$T/p.npy" "$T/p1.npy" && cmp -s "$T/pl.npy" "$T/pl1.npy" && ok "pathfinder: same seed, same bytes" ||
	nok "pathfinder: the bytes differ"
$G pathfinder -n 200 --seed 5 --labels "$T/pl2.npy" -o "$T/p2.npy"
$G pathfinder -n 200 --seed 6 --labels "$T/pl3.npy" -o "$T/p3.npy"
check "pathfinder: the first 200 of 500 are the set of 200; another seed differs" vtpy "
a, b, c = np.load('p.npy'), np.load('p2.npy'), np.load('p3.npy')
assert (a[:200] == b).all() and (np.load('pl.npy')[:200] == np.load('pl2.npy')).all()
assert (b != c).any()
"

# pathfinder with solid paths (--gap 0): the label is whether the dots
# lie in one 8-connected component of the image
cat > "$T/comp.py" <<'EOF'
def component(im, y, x):
    """The 8-connected set of lit pixels that holds (y, x)."""
    seen, todo = {(y, x)}, [(y, x)]
    while todo:
        y, x = todo.pop()
        for v in (y - 1, y, y + 1):
            for u in (x - 1, x, x + 1):
                if 0 <= v < im.shape[0] and 0 <= u < im.shape[1] and im[v, u] and (v, u) not in seen:
                    seen.add((v, u)); todo.append((v, u))
    return seen
def components(im):
    """Every 8-connected set of lit pixels."""
    left, out = {tuple(p) for p in zip(*im.nonzero())}, []
    while left:
        c = component(im, *next(iter(left))); left -= c; out.append(c)
    return out
EOF
check "pathfinder --gap 0" $G pathfinder -n 300 --gap 0 --seed 2 --labels "$T/sl.npy" --layout "$T/s.txt" -o "$T/s.npy"
check "... label 1 exactly when the dots are connected; dots where the layout says" vtpy "
img, lab = np.load('s.npy'), np.load('sl.npy')
lay = np.loadtxt('s.txt', dtype=np.int64, ndmin=2)
from comp import component
for i in range(len(lab)):
    y0, x0, y1, x1 = lay[i, 2], lay[i, 3], lay[i, 6], lay[i, 7]
    assert (img[i, y0 - 1:y0 + 2, x0 - 1:x0 + 2] == 255).all() and (img[i, y1 - 1:y1 + 2, x1 - 1:x1 + 2] == 255).all(), i
    assert lab[i] == (lay[i, 4] == lay[i, 8]) == ((y1, x1) in component(img[i], y0, x0)), (i, lab[i])
assert 100 < lab.sum() < 200, lab.sum()
"
check "pathfinder: the dashes' gaps break the paths" vtpy "
from comp import components
img = np.load('p.npy')
assert set(np.unique(img)) == {0, 128, 255} and img.shape == (500, 32, 32)  # grey paths, white dots
# each of the 3 paths' 5 dashes is a component of its own
n = [len(components(im)) for im in img]
assert min(n) == max(n) == 3 * 5, (min(n), max(n))
"

# pathfinder --cell C: each dot is the whole C x C cell of the C-pixel
# grid that holds its path's end (the layout's point), white, so that a
# patch of C holds all of a dot or none; with solid paths the label is
# still whether the dots are connected, and a dot cell touches only its
# own path
check "pathfinder --cell 4 --gap 0" $G pathfinder -n 300 --cell 4 --gap 0 --paths 3 --dashes 3 --seed 7 \
    --labels "$T/cl.npy" --layout "$T/c.txt" -o "$T/c.npy"
check "... two whole white cells, where the layout's ends lie; label 1 exactly when connected" vtpy "
img, lab = np.load('c.npy'), np.load('cl.npy')
lay = np.loadtxt('c.txt', dtype=np.int64, ndmin=2)
from comp import component, components
for i in range(len(lab)):
    w = (img[i] == 255).reshape(8, 4, 8, 4).transpose(0, 2, 1, 3).reshape(8, 8, 16)
    full = {(a, b) for a in range(8) for b in range(8) if w[a, b].all()}
    assert not (w.any(2) & ~w.all(2)).any(), i  # no part of a cell
    (y0, x0), (y1, x1) = lay[i, 2:4], lay[i, 6:8]
    assert full == {(y0 // 4, x0 // 4), (y1 // 4, x1 // 4)}, (i, full)
    assert lab[i] == (lay[i, 4] == lay[i, 8]) == ((y1, x1) in component(img[i], y0, x0)), (i, lab[i])
    # a component per path, each dot in its path's: a dot cell never
    # joins another path
    assert len(components(img[i])) == 3, i
assert 100 < lab.sum() < 200, lab.sum()
"
check_exit 2 "pathfinder --cell 5: refused (cells past 4 could reach another path)" \
    $G pathfinder -n 5 --cell 5 --labels "$T/x.npy"

# motion, with items at full size (copied): every frame rebuilt from the
# source images, the corners and the motions, the label the garment's;
# with --hold H each position held H frames, the motion made up at once.
motion_check() {	# motion_check HOLD
	vtpy "
import gzip
h = $1
src = np.frombuffer(gzip.open('fm/train-images-idx3-ubyte.gz').read()[16:], np.uint8).reshape(-1, 28, 28)
cls = np.frombuffer(gzip.open('fm/train-labels-idx1-ubyte.gz').read()[8:], np.uint8)
img, lab = np.load('m.npy'), np.load('ml.npy')
lay = np.loadtxt('m.txt', dtype=np.int64, ndmin=2)
assert img.shape == (100, 12, 40, 40) and len(set(lab)) == 8, (img.shape, set(lab))
step = {0: (0, 1), 1: (0, -1), 2: (1, 0), 3: (-1, 0)}
for i in range(100):
    objs = lay[i, 2:].reshape(2, 4)
    assert lab[i] == objs[0, 3] and cls[objs[0, 2]] in (0, 1, 2, 3, 4, 6) and cls[objs[1, 2]] in (5, 7, 8, 9), (i, lay[i])
    for f in range(12):
        g = f // h * h
        want = np.zeros((40, 40), np.uint8)
        for y0, x0, k, m in objs:
            dy, dx = step[m % 4]; s = m // 4 + 1
            one = np.zeros((40, 40), np.uint8); one[:28, :28] = src[k]
            want = np.maximum(want, np.roll(one, (y0 + g * s * dy, x0 + g * s * dx), (0, 1)))
        assert (img[i, f] == want).all(), (i, f)
"
}
check "motion, 12 frames" $G motion --idx "$I" -n 100 --frames 12 --item 28 --canvas 40 --seed 4 \
    --labels "$T/ml.npy" --layout "$T/m.txt" -o "$T/m.npy"
check "... every frame the two items moved as the layout says, the label the garment's motion" motion_check 1
check "motion, positions held 3 frames" $G motion --idx "$I" -n 100 --frames 12 --hold 3 --item 28 --canvas 40 --seed 4 \
    --labels "$T/ml.npy" --layout "$T/m.txt" -o "$T/m.npy"
check "... the items still for 3 frames, then 3 frames' worth further" motion_check 3
check "motion, default 14-pixel items on 32" $G motion --idx "$I" -n 100 --frames 12 --labels "$T/ml.npy" -o "$T/m.npy"

# patchify reads the output as its npy source
patchify --patch 7 --labels "$T/rl.npy" "$T/r.npy" 2>"$T/err" | vtool info > "$T/info" 2>>"$T/err"
check_grep "patchify cuts relation's 56 x 56 into an 8 x 8 grid" "GRID +8x8" "$T/info"
check_grep "... of 4 classes" "CLASSES +4" "$T/info"
patchify --patch 2x8x8 --labels "$T/ml.npy" "$T/m.npy" 2>"$T/err" | vtool info > "$T/info" 2>>"$T/err"
check_grep "... and motion's clips into tubelets, a 6 x 4 x 4 grid" "GRID +6x4x4" "$T/info"

# errors
check_exit 2 "no task" $G --labels "$T/x.npy"
check_exit 2 "an unknown task" $G nosuch --labels "$T/x.npy"
check_exit 2 "two tasks" $G relation motion --idx "$I" --labels "$T/x.npy"
check_exit 2 "no --labels" $G pathfinder -n 5
check_exit 2 "relation without --idx" $G relation --labels "$T/x.npy"
check_exit 2 "pathfinder with --idx" $G pathfinder --idx "$I" --labels "$T/x.npy"
check_exit 2 "--frames for relation" $G relation --idx "$I" --frames 4 --labels "$T/x.npy"
check_exit 2 "--hold is motion's" $G relation --hold 2 --idx "$I" --labels "$T/x.npy"
check_exit 2 "a canvas too small for two items" $G relation --idx "$I" --canvas 27 --labels "$T/x.npy"
check_grep "... says which option" "canvas must be at least twice --item" "$T/err"
check_exit 2 "a count of 0" $G pathfinder -n 0 --labels "$T/x.npy"
check_exit 1 "a missing IDX file" $G relation --idx "$T/none-images-idx3-ubyte.gz" --labels "$T/x.npy" -o "$T/x.npy"
check_grep "... named" "none-images-idx3-ubyte.gz" "$T/err"
check_exit 1 "paths that cannot fit" $G pathfinder -n 3 --paths 20 --dashes 8 --labels "$T/x.npy" -o "$T/x.npy"
check_grep "... says so" "no placement found" "$T/err"
check_exit 1 "a labels file that cannot be written" $G pathfinder -n 3 --labels "$T/no/such/dir.npy" -o "$T/x.npy"
script -qec "$BIN/$G pathfinder -n 3 --labels '$T/x.npy'; echo rc=\$?" /dev/null > "$T/tty" 2>&1
check_grep "refuses to write binary to a terminal, exit 1" "^$G: .*terminal" "$T/tty"
check_grep "... exit 1" "rc=1" "$T/tty"
sh -c "$BIN/$G pathfinder -n 20000 --labels '$T/x.npy' 2>'$T/err'; echo \$? > '$T/rc'" | head -c 100 > /dev/null
[ ! -s "$T/err" ] && [ "$(cat "$T/rc")" -ne 0 ] && ok "a closed pipe ends it quietly, not a success" ||
	nok "on a closed pipe: exit $(cat "$T/rc"), said: $(head -c 200 "$T/err")"
run_examples $G
finish
