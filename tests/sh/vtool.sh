#!/bin/sh
# vtool: the man page's examples; round trips against real NumPy (every
# dtype, npy -> stream -> npy byte-identical); the vitpipe(5) reader against
# streams written by the C writer ('*' dims, ALIGN values); header.json,
# the header kept through NumPy; info, head, cat; bad input.
. tests/sh/lib.sh
REF="$T"	# where lib.sh put the vitpipe(5) reader

# The EXAMPLES of vtool(1), python3 being Debian's.
mkdir -p "$T/bin" && ln -s "$PY" "$T/bin/python3"
PATH="$T/bin:$PATH" run_examples vtool
check "example output: 2 records of (2,4,3) f32" "$PY" -c '
import numpy as np
a = np.load("'"$T"'/ex-vtool/first2/patch.npy"); assert a.shape == (2, 4, 3) and a.dtype == "<f4"'

# Every dtype, several shapes (no records, one, scalars, empty inner dims),
# every ALIGN: np.save -> from-npy -> to-npy is byte-identical, and
# vtread.py reads the stream vtool wrote.
cd "$T" || exit 1
cat >roundtrip.py <<'EOF'
import os, subprocess, sys, numpy as np
sys.path.insert(0, sys.argv[1])
from vtread import vtread
rng = np.random.default_rng(7)
dtypes = ['u1', 'i1', '<u2', '<i4', '<i8', '<f4', '<f8']
def rand(dt, shape):
    dt = np.dtype(dt)
    if dt.kind == 'f':
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
ok = 0
for align in (1, 16, 64, 4096):
    for n in (0, 1, 5, 123):
        arrays = {}
        for i, dt in enumerate(dtypes):
            shapes = [(n,), (n, 3), (n, 2, 3, 4), (n, 2, 0), (n, 0, 10**5, 10**5, 10**5, 7)]
            for j, shape in enumerate(shapes):
                arrays[f'f{i}_{j}'] = rand(dt, shape)
        d = f'rt{align}_{n}'
        os.makedirs(d)
        args = []
        for name, a in arrays.items():
            np.save(f'{d}/{name}.npy', a)
            args.append(f'{name}={d}/{name}.npy')
        with open(f'{d}.vt', 'wb') as out:
            subprocess.run(['vtool', 'from-npy', '--align', str(align)] + args, stdout=out, check=True)
        subprocess.run(['vtool', 'to-npy', f'{d}/back', f'{d}.vt'], check=True)
        for name in arrays:
            a, b = open(f'{d}/{name}.npy', 'rb').read(), open(f'{d}/back/{name}.npy', 'rb').read()
            assert a == b, (align, n, name, a[:128], b[:128])
        head, recs = vtread(open(f'{d}.vt', 'rb'))
        assert head['ALIGN'] == [str(align)] and head['RECORDS'] == [str(n)], head
        recs = list(recs)
        assert len(recs) == n, (len(recs), n)
        for r, rec in enumerate(recs):
            for name, a in arrays.items():
                assert rec[name].dtype == a.dtype and np.array_equal(rec[name], a[r]), (name, r)
        ok += 1
print(f'{ok} streams round-tripped')
EOF
check "np.save -> from-npy -> to-npy byte-identical, and vtread.py reads it (7 dtypes, ALIGN 1..4096)" "$PY" roundtrip.py "$REF"

# Streams with '*' dims, every dtype, written by a small independent writer
# here, then rewritten by the C writer (vtool cat): vtread.py must read the
# C-written stream, and to-npy --ragged give the same records.
cat >ragged.py <<'EOF'
import subprocess, sys, numpy as np
sys.path.insert(0, sys.argv[1])
from vtread import vtread
names = dict(u8='u1', i8='i1', u16='<u2', i32='<i4', i64='<i8', f32='<f4', f64='<f8')
rng = np.random.default_rng(3)
for align in (1, 8, 64, 512):
    recs = []
    for r in range(4):
        rec = {}
        for vt, dt in names.items():
            rec['v_' + vt] = (rng.random((r + 1, 3)) * 100).astype(dt)
            rec['w_' + vt] = (rng.random((2, 2 * r + 1)) * 100).astype(dt)
        rec['label'] = np.array(r, '<i4')
        recs.append(rec)
    hdr = f'VITPIPE 1\nBYTEORDER little\nALIGN {align}\n'
    for vt in names:
        hdr += f'FIELD v_{vt} {vt} * 3\nFIELD w_{vt} {vt} 2 *\n'
    hdr += 'FIELD label i32\nGRID 2x2\nENDHDR\n'
    pad = lambda n: b'\0' * (-n % align)
    out = hdr.encode() + b'\n' * (-len(hdr) % align)
    for rec in recs:
        dyn = [d for name in rec for d, fixed in zip(rec[name].shape, (None, 3) if name[0] == 'v' else (2, None)) if fixed is None]
        pre = np.array(dyn, '<i8').tobytes()
        out += pre + pad(len(pre))
        for a in rec.values():
            out += a.tobytes() + pad(a.nbytes)
    open(f'in{align}.vt', 'wb').write(out)
    c = subprocess.run(['vtool', 'cat', f'in{align}.vt'], capture_output=True, check=True).stdout
    open(f'c{align}.vt', 'wb').write(c)
    head, got = vtread(open(f'c{align}.vt', 'rb'))
    got = list(got)
    assert head['ALIGN'] == [str(align)] and head['GRID'] == ['2x2'] and len(got) == 4, head
    for r, (g, w) in enumerate(zip(got, recs)):
        for name in w:
            assert g[name].dtype == w[name].dtype and np.array_equal(g[name], w[name]), (align, r, name)
    subprocess.run(['vtool', 'to-npy', '--ragged', f'r{align}', f'c{align}.vt'], check=True)
    for name in recs[0]:
        if name == 'label':
            assert np.array_equal(np.load(f'r{align}/label.npy'), np.arange(4))
            continue
        flat, shapes = np.load(f'r{align}/{name}.npy'), np.load(f'r{align}/{name}.shapes.npy')
        assert shapes.dtype == '<i8' and shapes.shape == (4, 2), shapes
        ends = np.cumsum(shapes.prod(axis=1))
        back = [a.reshape(s) for a, s in zip(np.split(flat, ends[:-1]), shapes)]
        for r in range(4):
            assert np.array_equal(back[r], recs[r][name]), (name, r)
    # ... and from-npy --shapes makes the same stream again.
    args = ['vtool', 'from-npy', '--align', str(align), '--meta', 'GRID=2x2']
    for name in recs[0]:
        if name != 'label':
            args += ['--shapes', f'{name}=r{align}/{name}.shapes.npy']
        args.append(f'{name}=r{align}/{name}.npy')
    again = subprocess.run(args, capture_output=True, check=True).stdout
    fields = lambda b: [l for l in b.split(b'ENDHDR')[0].split(b'\n') if l.startswith(b'FIELD')]
    assert fields(again) == fields(c), (fields(again), fields(c))
    open(f'a{align}.vt', 'wb').write(again)
    head, got = vtread(open(f'a{align}.vt', 'rb'))
    for g, w in zip(got, recs):
        for name in w:
            assert np.array_equal(g[name], w[name]) and g[name].dtype == w[name].dtype, name
print('ok')
EOF
check "vtread.py reads C-written '*' streams (7 dtypes, ALIGN 1/8/64/512); to-npy --ragged and back with from-npy --shapes" "$PY" ragged.py "$REF"
# patchify's per-record source (text of varying length) goes through NumPy
# without options: flat with its shapes, taken back beside header.json.
printf 'P3\n2 2\n255\n0 0 0 255 255 255 1 2 3 4 5 6\n' >src.ppm
convert src.ppm a.png && cp a.png bb.png
patchify --patch 1 a.png bb.png >src.vt
check "to-npy writes a source field of varying length without --ragged" vtool to-npy srcd src.vt
check "from-npy takes it back with its shapes" sh -c 'vtool from-npy patch=srcd/patch.npy label=srcd/label.npy source=srcd/source.npy >src2.vt'
vtpy "
from vtread import vtread
a = [bytes(r['source']) for r in vtread(open('$PWD/src.vt', 'rb'))[1]]
b = [bytes(r['source']) for r in vtread(open('$PWD/src2.vt', 'rb'))[1]]
print('same' if a == b == [b'a.png', b'bb.png'] else f'{a} {b}')" >"$T/srccmp"
check_grep "and the records keep their sources" "^same$" "$T/srccmp"
check_exit 1 "to-npy refuses a changing shape without --ragged" vtool to-npy nr c64.vt
check_grep "and says so" "record 2: field 'v_u8' changes shape.*--ragged" "$T/err"
[ -z "$(ls nr 2>/dev/null)" ] && ok "no file left behind" || nok "files left behind: $(ls nr)"

# header.json: to-npy keeps beside the arrays what they cannot hold (ALIGN,
# the fields' '*' dims, every key in order, repeated ones too); from-npy
# makes the same stream again from it, but for its own HISTORY line.
"$PY" "$TOP/tests/sh/posclass.py" --records 20 >pc.vt
check "to-npy of a stream with keys" vtool to-npy pc pc.vt
cat >header.py <<'EOF'
import json, sys
def lines(path):
    raw = open(path, 'rb').read()
    head, body = raw.split(b'\nENDHDR\n', 1)
    return head.decode().split('\n'), body.lstrip(b'\n')
orig, body = lines('pc.vt')
j = json.load(open('pc/header.json'))
meta = [l.split(' ', 1) for l in orig[1:] if l.split(' ')[0] not in ('BYTEORDER', 'ALIGN', 'RECORDS', 'FIELD')]
assert j['meta'] == meta, (j['meta'], meta)
assert j['align'] == 64 and j['fields']['patch'] == {'dtype': 'u8', 'dims': ['*', 4]}, j
assert j['fields']['label'] == {'dtype': 'i32', 'dims': []}, j
back, body2 = lines('back.vt')
assert back[:-1] == orig and back[-1].startswith('HISTORY vtool from-npy'), (back, orig)
assert body2 == body, 'records differ'
print('ok')
EOF
vtool from-npy patch=pc/patch.npy pos=pc/pos.npy label=pc/label.npy >back.vt
check "header.json holds ALIGN, fields, keys; from-npy gives the same header (and a HISTORY line) and records" "$PY" header.py
vtool from-npy --meta 'CLASS=0 a' --meta 'CLASS=1 b' --meta GRID=2x8 patch=pc/patch.npy >m.vt
vtool info m.vt >"$T/out"
[ "$(grep -c '^meta     CLASS ' "$T/out")" = 2 ] && grep -q '^meta     CLASS 0 a$' "$T/out" &&
	grep -q '^meta     GRID 2x8$' "$T/out" && [ "$(grep -c '^meta     GRID' "$T/out")" = 1 ] &&
	grep -q '^meta     MEAN 0.1$' "$T/out" && ok "--meta replaces header.json's lines of its key, keeps the others" ||
	nok "--meta and header.json: $(grep meta "$T/out")"
vtool from-npy --no-header patch=pc/patch.npy | vtool info >"$T/out"
grep -q '^meta     MEAN' "$T/out" && nok "--no-header still reads header.json" || ok "--no-header: no keys"
check_grep "... and the array's own dims" '^field    patch u8 \[16,4\]$' "$T/out"
mkdir elsewhere && cp pc/patch.npy elsewhere/
"$PY" -c '
import json
j = json.load(open("pc/header.json"))
j["meta"].append(["CLASS", "2 caf\u00e9 \U0001F600"])
json.dump(j, open("edited.json", "w"), indent=3)'
vtool from-npy --header edited.json patch=elsewhere/patch.npy | vtool info >"$T/out"
check_grep "--header FILE: keys from FILE (json.dump's \\u escapes read back as UTF-8)" '^meta     CLASS 2 café 😀$' "$T/out"
check_grep "... the '*' dims too" '^field    patch u8 \[\*,4\] shapes \[16,4\]$' "$T/out"
vtool from-npy --shapes v_u8=r512/v_u8.shapes.npy v_u8=r512/v_u8.npy | vtool info >"$T/out"
check_grep "from-npy restores ALIGN 512 from header.json" '^align    512$' "$T/out"
vtool from-npy --align 8 --shapes v_u8=r512/v_u8.shapes.npy v_u8=r512/v_u8.npy | vtool info >"$T/out"
check_grep "... unless --align says otherwise" '^align    8$' "$T/out"
printf '{"align": 64, "meta": [["GRID" "2x2"]]}' >bad.json
check_exit 1 "a malformed header.json" vtool from-npy --header bad.json patch=pc/patch.npy
check_grep "... says where" "bad.json: byte 31: ',' expected" "$T/err"
printf '{"meta": [["RECORDS", "2"]]}' >bad.json
check_exit 1 "a header.json with a structural key" vtool from-npy --header bad.json patch=pc/patch.npy
check_exit 1 "--header of a missing file" vtool from-npy --header nosuch.json patch=pc/patch.npy
check_exit 2 "--header with --no-header" vtool from-npy --header a --no-header patch=pc/patch.npy
check_exit 2 "--no-header for to-npy" vtool to-npy --no-header d pc.vt

# info: counts, fields, shape ranges, metadata.
check "info" vtool info c64.vt
check_grep "info: 4 records" '^records  4$' "$T/out"
check_grep "info: '*' field with its shapes" '^field    v_f32 f32 \[\*,3\] shapes \[1\.\.4,3\]$' "$T/out"
check_grep "info: scalar field" '^field    label i32 \[\]$' "$T/out"
check_grep "info: metadata" '^meta     GRID 2x2$' "$T/out"
vtool info <c64.vt >"$T/out2" 2>&1 && grep -q '^stream   stdin$' "$T/out2" && ok "info reads stdin" || nok "info reads stdin"

# head and cat.
vtool head -n 2 rt64_5.vt >h.vt && vtool info h.vt >"$T/out"
check_grep "head -n 2: 2 records declared" '^records  2 \(declared 2\)$' "$T/out"
vtool head -n 0 rt64_5.vt | vtool info >"$T/out"
check_grep "head -n 0: header only" '^records  0 \(declared 0\)$' "$T/out"
vtool head rt64_5.vt | vtool info >"$T/out"
check_grep "head: all 5 when fewer than 10" '^records  5 \(declared 5\)$' "$T/out"
vtool cat rt64_5.vt - rt64_1.vt <rt64_5.vt | vtool to-npy cat
check "cat: records in order" "$PY" -c '
import numpy as np
a, b = np.load("rt64_5/f3_1.npy"), np.load("rt64_1/f3_1.npy")
assert np.array_equal(np.load("cat/f3_1.npy"), np.concatenate([a, a, b]))'
vtool from-npy --meta GRID=9x9 f0_0=rt64_5/f0_0.npy >g1.vt
vtool from-npy --meta GRID=3x3 f0_0=rt64_5/f0_0.npy >g2.vt
check_exit 0 "cat: differing metadata" vtool cat g1.vt g2.vt
check_grep "draws a warning" "g2.vt: GRID differs" "$T/err"
check_exit 1 "cat: different fields" vtool cat rt64_5.vt g1.vt
check_grep "names them" "fields differ" "$T/err"
check_exit 2 "cat: stdin twice" vtool cat - -

# from-npy: big-endian and bool arrays convert; bad arrays are refused.
"$PY" -c '
import numpy as np
np.save("be.npy", np.arange(6, dtype=">f8").reshape(3, 2))
np.save("bo.npy", np.array([True, False, True]))
np.save("n4.npy", np.arange(4, dtype="<i4"))
np.save("f2.npy", np.zeros(3, "f2"))
np.save("c8.npy", np.zeros(3, "c8"))
np.save("s0.npy", np.array(5, "<i4"))
np.save("fo.npy", np.asfortranarray(np.zeros((3, 2), "<f4")))
open("bad.npy", "wb").write(b"not an array at all")
open("tr.npy", "wb").write(open("be.npy", "rb").read()[:150])'
vtool from-npy a=be.npy b=bo.npy | vtool to-npy conv
check "big-endian f8 and bool arrive as little-endian f8 and u8" "$PY" -c '
import numpy as np
a, b = np.load("conv/a.npy"), np.load("conv/b.npy")
assert a.dtype == "<f8" and np.array_equal(a, np.arange(6).reshape(3, 2))
assert b.dtype == "u1" and list(b) == [1, 0, 1]'
check_exit 1 "from-npy: different first dims" vtool from-npy a=be.npy n=n4.npy
check_grep "says which" "n4.npy: 4 records, but be.npy has 3" "$T/err"
check_exit 1 "from-npy: float16" vtool from-npy a=f2.npy
check_exit 1 "from-npy: complex" vtool from-npy a=c8.npy
check_exit 1 "from-npy: 0-d array" vtool from-npy a=s0.npy
check_exit 1 "from-npy: Fortran order" vtool from-npy a=fo.npy
check_exit 1 "from-npy: not a .npy" vtool from-npy a=bad.npy
check_exit 1 "from-npy: truncated data" vtool from-npy a=tr.npy
check_grep "says truncated" "truncated" "$T/err"
check_exit 1 "from-npy: missing file" vtool from-npy a=nosuch.npy
check_exit 1 "from-npy: bad field name" vtool from-npy 'a b=n4.npy'
check_exit 1 "from-npy: same name twice" vtool from-npy a=n4.npy a=n4.npy
check_exit 2 "from-npy: no NAME=" vtool from-npy n4.npy
check_exit 2 "from-npy: nothing" vtool from-npy
check_exit 2 "from-npy: bad --align" vtool from-npy --align 48 a=n4.npy
check_exit 2 "from-npy: bad --meta" vtool from-npy --meta GRID a=n4.npy
check_exit 2 "from-npy: structural --meta" vtool from-npy --meta ALIGN=8 a=n4.npy
check_exit 2 "from-npy: --shapes for no field" vtool from-npy --shapes b=n4.npy a=n4.npy
check_exit 2 "--shapes for to-npy" vtool to-npy --shapes a=n4.npy d rt64_5.vt
check_exit 1 "from-npy: shapes not int64" vtool from-npy --shapes a=n4.npy a=n4.npy
"$PY" -c '
import numpy as np
np.save("sh.npy", np.array([[2, 2], [1, 3]], "<i8"))
np.save("flat7.npy", np.arange(7, dtype="<f4"))
np.save("flat8.npy", np.arange(8, dtype="<f4").reshape(2, 4))'
check "from-npy --shapes: records of 2x2 and 1x3" sh -c 'vtool from-npy --shapes a=sh.npy a=flat7.npy | vtool info >info.txt'
check_grep "... a field [*,*]" '^field    a f32 \[\*,\*\] shapes \[1\.\.2,2\.\.3\]$' info.txt
check_exit 1 "from-npy --shapes: too few elements" vtool from-npy --shapes a=sh.npy a=n4.npy
check_grep "says how many" "the shapes make 7 elements" "$T/err"
check_exit 1 "from-npy --shapes: a flat array must be 1-d" vtool from-npy --shapes a=sh.npy a=flat8.npy

# Broken streams: clean errors, no partial .npy files.
head -c $(($(wc -c <rt64_5.vt) - 100)) rt64_5.vt >trunc.vt
check_exit 1 "to-npy: truncated stream" vtool to-npy tr trunc.vt
check_grep "names the record" "record [0-9]+: field" "$T/err"
[ -z "$(ls tr 2>/dev/null)" ] && ok "no file left behind" || nok "files left behind: $(ls tr)"
check_exit 1 "info: garbage" vtool info bad.npy
check_exit 1 "info: truncated" vtool info trunc.vt
check_exit 1 "head: missing file" vtool head nosuch.vt
check_exit 1 "to-npy: directory cannot be made" vtool to-npy nosuch/dir rt64_5.vt

# Usage errors.
check_exit 2 "no subcommand" vtool
check_exit 2 "unknown subcommand" vtool frobnicate
check_exit 2 "-n for info" vtool info -n 3 rt64_5.vt
check_exit 2 "--ragged for head" vtool head --ragged rt64_5.vt
check_exit 2 "negative -n" vtool head -n -1 rt64_5.vt
check_exit 2 "info: two inputs" vtool info a.vt b.vt
check_exit 2 "to-npy: no directory" vtool to-npy
check_exit 0 "--help" vtool --help
check_grep "--help lists the subcommands" "from-npy" "$T/out"
# Each subcommand's --help: its own options, each with its entry in vtool(1).
check_exit 0 "from-npy --help" vtool from-npy --help
check_grep "... names --shapes" "^ +--shapes NAME=S.npy" "$T/out"
! grep -qE -- "^ +--ragged" "$T/out" && ok "... and not to-npy's --ragged" || nok "from-npy --help lists --ragged"
for c in info head cat to-npy from-npy to-safetensors from-safetensors; do
	vtool "$c" --help | grep -oE -- '--[a-z0-9-]+' | sort -u | while read -r o; do
		sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$TOP/man/man1/vtool.1" | grep -qE "^\.It.*Fl -${o#--}( |$)" || echo "$c $o"
	done
done > "$T/undoc"
[ ! -s "$T/undoc" ] && ok "every subcommand's --help option has an OPTIONS entry in vtool(1)" ||
	nok "no OPTIONS entry for $(tr '\n' ' ' < "$T/undoc")"
# A write that fails says why.
if [ -c /dev/full ] && [ -w /dev/full ]; then
	$PY "$TOP/tests/sh/posclass.py" --records 16 > "$T/wf-in.vt"
	vit-train --dim 16 --depth 1 --heads 2 --mlp 16 --threads 1 --epochs 1 -o "$T/wf.vt" "$T/wf-in.vt" 2>/dev/null
	vtool to-safetensors "$T/wf.vt" > /dev/full 2> "$T/err"
	check_grep "to-safetensors on a full disk names the reason" "^vtool: .*No space left on device" "$T/err"
fi
finish
