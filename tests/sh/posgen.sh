# posgen.sh - positions under every convention, CLS, augmentations,
# filtering a patch stream, bad input and usage errors, man page examples.
. tests/sh/lib.sh
P=posgen

check "$P --help" $P --help
check_grep "$P --help names the conventions" "centre" "$T/out"
check "$P --version" $P --version
check_grep "$P --version" "^posgen \(vitpipe\)" "$T/out"

# values of each convention, independently computed here
$P --grid 2x3 > "$T/lin.vt"
$P --grid 2x3 -c integer > "$T/int.vt"
$P --grid 2x3 -c centre > "$T/cen.vt"
$P --grid 2x3 -c fixed --range=-1,1 > "$T/fix.vt"
$P --grid 14x14 --n0 7x7 > "$T/n0.vt"
$P --grid 2x2x3 -c integer > "$T/3d.vt"
check "conventions give the documented values" vtpy "
def pos(f):
    h, r = vtread(open(f, 'rb')); return h, next(r)['pos']
def grid(ys, xs): return np.array([[y, x] for y in ys for x in xs], np.float32)
h, p = pos('lin.vt')
assert h['POS'] == ['linspace n0=2x3 grid=2x3'] and h['CLSPOS'] == ['none'] and h['GRID'] == ['2x3'], h
assert np.allclose(p, grid([0, 1], [0, .5, 1])), p
assert np.array_equal(pos('int.vt')[1], grid([0, 1], [0, 1, 2]))
assert np.allclose(pos('cen.vt')[1], grid([.25, .75], [1/6, .5, 5/6]))
assert np.allclose(pos('fix.vt')[1], grid([-1, 1], [-1, 0, 1]))
p = pos('n0.vt')[1]
assert p.shape == (196, 2) and np.isclose(p.max(), 2) and np.isclose(p[1, 1], 2 / 13), p[:3]
h, p = pos('3d.vt')
assert p.shape == (12, 3) and list(p[7]) == [1, 0, 1] and list(p[5]) == [0, 1, 2], p
assert pos('n0.vt')[0]['POS'] == ['linspace n0=7x7 grid=14x14']
assert pos('fix.vt')[0]['POS'] == ['fixed range=-1,1 grid=2x3']
assert pos('cen.vt')[0]['POS'] == ['centre grid=2x3'] and h['POS'] == ['integer grid=2x2x3'], h
"

# CLS
$P --grid 3x3 -c centre --cls centre > "$T/c1.vt"
check_grep "--cls centre is 0.5,0.5 in the centre convention" "^CLSPOS 0.5,0.5$" "$T/c1.vt"
$P --grid 3x3 -c integer --cls centre > "$T/c2.vt"
check_grep "--cls centre is the grid's middle for integers" "^CLSPOS 1,1$" "$T/c2.vt"
$P --grid 3x3 --cls 0.25,-1 > "$T/c3.vt"
check_grep "--cls with coordinates" "^CLSPOS 0.25,-1$" "$T/c3.vt"
check_exit 2 "--cls with the wrong number of coordinates" $P --grid 3x3 --cls 0.5
check_exit 2 "--cls with garbage" $P --grid 3x3 --cls a,b

# augmentations: perturbation within the patch, one offset per record, seeded
$P --grid 4x4 -c centre --perturb 1 --seed 5 --records 3 > "$T/pert.vt"
$P --grid 4x4 -c centre --perturb 1 --seed 5 --records 3 > "$T/pert2.vt"
$P --grid 4x4 -c centre --perturb 1 --seed 6 --records 3 > "$T/pert3.vt"
check "same seed, same bytes" cmp "$T/pert.vt" "$T/pert2.vt"
if cmp -s "$T/pert.vt" "$T/pert3.vt"; then nok "another seed changes the perturbation"; else ok "another seed changes the perturbation"; fi
$P --grid 4x4 -c centre > "$T/base.vt"
$P --grid 4x4 -c centre --offset 0.3 --seed 2 --records 2 > "$T/off.vt"
check "perturbation stays in the patch and offsets move every token alike" vtpy "
base = next(vtread(open('base.vt', 'rb'))[1])['pos']
h, recs = vtread(open('pert.vt', 'rb')); recs = [r['pos'] for r in recs]
assert len(recs) == 3 and h['RECORDS'] == ['3'] and 'perturb=1' in h['POS'][0]
d = np.stack(recs) - base
assert np.abs(d).max() <= 0.125 + 1e-6 and np.abs(d).max() > 0.02, np.abs(d).max()
assert not np.array_equal(recs[0], recs[1])
assert 0.02 < d.std() < 0.125, d.std()
offs = [r['pos'] - base for r in vtread(open('off.vt', 'rb'))[1]]
for o in offs:
    assert np.allclose(o, o[0], atol=1e-6) and np.abs(o[0]).max() > 1e-3, o[:2]
assert not np.allclose(offs[0][0], offs[1][0])
"
# a positioned CLS moves with its record (field clspos); an unpositioned
# one, or one without offsets, has no field
$P --grid 4x4 -c centre --cls centre --offset 0.3 --seed 2 --records 2 > "$T/offc.vt"
check "--cls with --offset: clspos is CLSPOS moved by the record's offset" vtpy "
base = next(vtread(open('base.vt', 'rb'))[1])['pos']
h, recs = vtread(open('offc.vt', 'rb'))
assert h['CLSPOS'] == ['0.5,0.5'], h['CLSPOS']
recs = list(recs)
offs = [r['pos'] - base for r in vtread(open('off.vt', 'rb'))[1]]
for r, o in zip(recs, offs):
    assert np.allclose(r['pos'] - base, o, atol=1e-6)
    assert np.allclose(r['clspos'], 0.5 + o[0], atol=1e-6), (r['clspos'], o[0])
"
$P --grid 4x4 --cls centre > "$T/nooff.vt"
check "... no clspos without --offset" vtpy "assert 'clspos' not in next(vtread(open('nooff.vt', 'rb'))[1])"
check "... nor without a CLS position" vtpy "assert 'clspos' not in next(vtread(open('off.vt', 'rb'))[1])"

# filtering a patch stream: GRID from the header, records passed through
vtpy "
f = open('patches.vt', 'wb')
hdr = b'VITPIPE 1\nBYTEORDER little\nALIGN 64\nFIELD patch u8 6 4\nFIELD label i32\nGRID 2x3\nSOURCE test\nENDHDR\n'
f.write(hdr + b'\n' * (-len(hdr) % 64))
for r in range(3):
    f.write(np.arange(24, dtype=np.uint8).tobytes() + bytes(40) + np.int32(r).tobytes() + bytes(60))
f.close()
f = open('badgrid.vt', 'wb')
hdr = hdr.replace(b'GRID 2x3', b'GRID 3x3')
f.write(hdr + b'\n' * (-len(hdr) % 64) + np.arange(24, dtype=np.uint8).tobytes() + bytes(40) + bytes(64))
f.close()
f = open('nogrid.vt', 'wb')
hdr = b'VITPIPE 1\nBYTEORDER little\nALIGN 64\nFIELD label i32\nENDHDR\n'
f.write(hdr + b'\n' * (-len(hdr) % 64) + bytes(64))
"
check "$P filters a patch stream" sh -c "$P -c integer < '$T/patches.vt' > '$T/withpos.vt'"
check "records keep their fields and gain pos" vtpy "
h, recs = vtread(open('withpos.vt', 'rb')); recs = list(recs)
assert len(recs) == 3 and h['SOURCE'] == ['test'] and h['POS'] == ['integer grid=2x3'], h
assert h['HISTORY'][-1].startswith('posgen'), h['HISTORY']
for i, r in enumerate(recs):
    assert r['label'] == i and np.array_equal(r['patch'].ravel(), np.arange(24))
    assert np.array_equal(r['pos'], [[y, x] for y in range(2) for x in range(3)])
"
check "$P reads a file operand" $P "$T/patches.vt"
# patchify's per-record source field ('*' shape, its length varies) passes
# through with the other fields.
vtpy "
from PIL import Image
for name in ('a.png', 'a-longer-name.png'):
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(name)
"
check "patchify | posgen" sh -c "cd '$T' && patchify --patch 4 a.png a-longer-name.png | $P > src.vt"
check "... keeps each record's source" vtpy "
h, recs = vtread(open('src.vt', 'rb'))
assert [bytes(r['source']).decode() for r in recs] == ['a.png', 'a-longer-name.png']
"
check_exit 1 "a stream that already has pos" $P < "$T/lin.vt"
check_grep "says pos is there" "already has a pos field" "$T/err"
check_exit 1 "a stream without GRID" $P "$T/nogrid.vt"
check_grep "says GRID is missing" "no GRID" "$T/err"
check_exit 1 "patch tokens that do not match GRID" $P "$T/badgrid.vt"
check_grep "names the record" "record 1: 6 patch tokens" "$T/err"
head -c 150 "$T/patches.vt" > "$T/trunc.vt"
check_exit 1 "truncated input" $P "$T/trunc.vt"
head -c 200 "$T/patches.vt" > "$T/trunc2.vt"
check_exit 1 "a record cut short" $P "$T/trunc2.vt"
printf 'not a stream\n' > "$T/garbage"
check_exit 1 "garbage input" $P "$T/garbage"
check_exit 1 "empty input" $P < /dev/null
check_exit 1 "missing file" $P "$T/nonexistent"

# usage errors
check_exit 2 "bad grid" $P --grid 0x3
check_exit 2 "grid with 4 dims" $P --grid 2x2x2x2
check_exit 2 "unknown convention" $P --grid 2x2 -c spiral
check_exit 2 "--n0 with another convention" $P --grid 2x2 -c centre --n0 7
check_exit 2 "--n0 with the wrong number of dims" $P --grid 2x2 --n0 2x2x2
check_exit 2 "negative perturbation" $P --grid 2x2 --perturb -1
check_exit 2 "bad range" $P --grid 2x2 -c fixed --range 1,0
check_exit 2 "--records without --grid" $P --records 2
check_exit 2 "--grid with an input file" $P --grid 2x2 "$T/lin.vt"
check_exit 2 "missing option argument" $P --grid
check_exit 2 "two input files" $P a b

run_examples posgen
finish
