# skewgen.sh - parameter counts and layouts of every method, inits, seeds,
# sharing, --expand, --from, errors, man page examples.
. tests/sh/lib.sh
S=skewgen

check "$S --help" $S --help
check_grep "$S --help lists the methods" "comrope-ld" "$T/out"
check "$S --version" $S --version

# parameter counts per set, from the layouts in skewgen(1): d = 16, 2 axes
for m in liere:4:48 liere:16:240 rope-mixed:16 comrope-ap:4:24 comrope-ld:4:32 riemann:9; do
	spec=${m%:*} n=${m##*:}
	check "$S --pe $spec" $S --pe "$spec" --head-dim 16 --heads 3 --layers 2 -o "$T/$spec.vt"
	check "$spec has 6 sets of $n" vtpy "
h, r = vtread(open('$spec.vt', 'rb')); p = next(r)['pe.params']
assert p.dtype == np.float32 and p.shape == (6 * $n,), p.shape
assert h['PE'] == ['$spec'] and h['SHARE'] == ['none'] and h['HEAD_DIM'] == ['16'], h
assert h['AXES'] == ['2'] and h['HEADS'] == ['3'] and h['LAYERS'] == ['2'], h
"
done

$S --pe liere:8 --head-dim 64 --heads 12 --layers 12 --seed 1 > "$T/l8.vt"
check "liere default init: uniform in [0, 2 pi), each set its own" vtpy "
h, r = vtread(open('l8.vt', 'rb')); p = next(r)['pe.params'].reshape(144, -1)
assert p.min() >= 0 and p.max() < 2 * np.pi and abs(p.mean() - np.pi) < 0.05, (p.min(), p.max(), p.mean())
assert not np.array_equal(p[0], p[1]) and h['INIT'] == ['default seed=1']
"
$S --pe liere:8 --head-dim 64 --heads 12 --layers 12 --seed 1 > "$T/l8b.vt"
check "same seed, same bytes" cmp "$T/l8.vt" "$T/l8b.vt"
$S --pe liere:8 --head-dim 64 --heads 12 --layers 12 --seed 2 > "$T/l8c.vt"
if cmp -s "$T/l8.vt" "$T/l8c.vt"; then nok "another seed, other values"; else ok "another seed, other values"; fi
for s in heads:12 layers:12 all:1; do
	$S --pe liere:8 --head-dim 64 --heads 12 --layers 12 --share ${s%:*} > "$T/sh-${s%:*}.vt"
	check "--share ${s%:*}: ${s#*:} sets" vtpy "
h, r = vtread(open('sh-${s%:*}.vt', 'rb'))
assert next(r)['pe.params'].size == ${s#*:} * 2 * 8 * 28 and h['SHARE'] == ['${s%:*}']
"
done
$S --pe comrope-ap:8 --init normal --std 0.5 --heads 8 > "$T/nrm.vt"
$S --pe comrope-ld:8 --init zeros > "$T/zero.vt"
$S --pe rope-mixed --heads 4 --seed 3 > "$T/rm.vt"
check "normal, zeros and RoPE-Mixed inits" vtpy "
p = next(vtread(open('nrm.vt', 'rb'))[1])['pe.params']
assert abs(p.std() - 0.5) < 0.03 and abs(p.mean()) < 0.03, (p.std(), p.mean())
p = next(vtread(open('zero.vt', 'rb'))[1])['pe.params']
assert (p[:8 * 28] == 0).all() and (p[8 * 28:] == 1).all()
p = next(vtread(open('rm.vt', 'rb'))[1])['pe.params'].reshape(4, 2, 32)
mag = np.hypot(p[:, 0], p[:, 1])
k = np.arange(16)
assert np.allclose(mag, np.tile(10.0 ** (-k / 16), 2), rtol=1e-5), mag[0]
assert np.allclose((p[:, :, :16] * p[:, :, 16:]).sum(1), 0, atol=1e-5)
assert not np.allclose(p[0], p[1])
"
# ComRoPE as the official code: P - P^T of normal(0, 1) P, normal(0, 1)
# multipliers; the former default is --init uniform; --multipliers; tied
$S --pe comrope-ap:8 --heads 12 --layers 12 > "$T/cap.vt"
$S --pe comrope-ld:8 --heads 12 --layers 12 > "$T/cld.vt"
$S --pe comrope-ld:8 --heads 12 --layers 12 --init uniform > "$T/cldu.vt"
$S --pe comrope-ld:8 --heads 12 --layers 12 --init uniform --multipliers normal > "$T/cldun.vt"
$S --pe comrope-ld:8 --heads 12 --layers 12 --multipliers ones > "$T/cld1.vt"
$S --pe comrope-ld:8,tied --heads 3 --layers 4 > "$T/cldt.vt"
$S --pe comrope-ld:8,tied --heads 3 --layers 4 --share layers > "$T/cldtl.vt"
check "comrope defaults: the official code's; --init uniform the former; --multipliers; tied" vtpy "
def params(f, sets):
    h, r = vtread(open(f, 'rb')); return h, next(r)['pe.params'].reshape(sets, -1)
h, p = params('cap.vt', 144)
assert abs(p.std() - np.sqrt(2)) < 0.02 and abs(p.mean()) < 0.02, (p.std(), p.mean())
h, p = params('cld.vt', 144)
U, s = p[:, :8 * 28], p[:, 8 * 28:]
assert abs(U.std() - np.sqrt(2)) < 0.02 and abs(s.std() - 1) < 0.05 and abs(s.mean()) < 0.05, (U.std(), s.std())
assert h['INIT'] == ['default seed=1'], h['INIT']
h, p = params('cldu.vt', 144)
assert p[:, :224].min() >= 0 and p[:, :224].max() < 2 * np.pi and (p[:, 224:] == 1).all()
h, q = params('cldun.vt', 144)
assert np.array_equal(q[:, :224], p[:, :224]) and abs(q[:, 224:].std() - 1) < 0.05
assert h['INIT'] == ['uniform seed=1 multipliers=normal'], h['INIT']
h, p = params('cld1.vt', 144)
assert np.array_equal(p[:, :224], U) and (p[:, 224:] == 1).all()
h, p = params('cldt.vt', 12)
assert h['PE'] == ['comrope-ld:8,tied'], h['PE']
s = p[:, 224:].reshape(4, 3, 16)
assert (s == s[:, :1]).all() and not np.array_equal(s[0, 0], s[1, 0])
assert not np.array_equal(p[0, :224], p[1, :224])
h, p = params('cldtl.vt', 3)
assert (p[:, 224:] == p[:1, 224:]).all()
"
check_exit 2 "--multipliers for another method" $S --pe comrope-ap:8 --multipliers normal
check_exit 2 "--multipliers other" $S --pe comrope-ld:8 --multipliers two
check_exit 2 "tied for another method" $S --pe liere:8,tied
$S --pe liere:4 --head-dim 8 --axes 3 --heads 2 --expand > "$T/exp.vt"
check "--expand writes the skew generators of the layout" vtpy "
rec = next(vtread(open('exp.vt', 'rb'))[1]); U = rec['pe.params'].reshape(2, 3, 2, 6); G = rec['pe.generators']
assert G.shape == (2, 3, 2, 4, 4) and np.array_equal(G, -np.swapaxes(G, -1, -2))
iu = np.triu_indices(4, 1)
assert np.array_equal(G[..., iu[0], iu[1]], U)
"
$S --pe rope-axial --head-dim 8 > "$T/ax.vt"
check "rope-axial: no parameters, fixed generators written" vtpy "
rec = next(vtread(open('ax.vt', 'rb'))[1]); G = rec['pe.generators']
assert 'pe.params' not in rec and G.shape == (1, 2, 4, 2, 2)
assert np.allclose(G[0, 1, :, 0, 1], [-1, -0.1, 0, 0]) and np.allclose(G[0, 0, :, 0, 1], [0, 0, -1, -0.1])
"

# --from: the fields and keys a checkpoint holds
check "--from copies the generators" $S --from "$T/l8.vt" -o "$T/from.vt"
check "--from keeps parameters and keys" vtpy "
a = vtread(open('l8.vt', 'rb')); b = vtread(open('from.vt', 'rb'))
assert np.array_equal(next(a[1])['pe.params'], next(b[1])['pe.params'])
for k in 'PE', 'SHARE', 'HEAD_DIM', 'AXES', 'HEADS', 'LAYERS':
    assert a[0][k] == b[0][k], k
"
# a real checkpoint of vit-train holds the same field and keys
if [ -x "$BIN/vit-train" ] && [ -f tests/sh/posclass.py ]; then
	/usr/bin/python3 tests/sh/posclass.py --records 8 --seed 1 |
	    vit-train --dim 16 --depth 2 --heads 2 --mlp 32 --threads 1 --pe liere:4 --share layers \
	    -o "$T/model.vt" 2>"$T/err" || nok "vit-train for a checkpoint: $(head -c 300 "$T/err")"
	check "--from a vit-train checkpoint" $S --from "$T/model.vt" -o "$T/fromck.vt"
	check "... gives its pe.params and keys" vtpy "
a = vtread(open('model.vt', 'rb')); b = vtread(open('fromck.vt', 'rb'))
assert np.array_equal(next(a[1])['pe.params'], next(b[1])['pe.params'])
assert b[0]['PE'] == ['liere:4'] and b[0]['SHARE'] == ['layers'] and b[0]['LAYERS'] == ['2']
"
	posgen --grid 4x4 > "$T/pos44.vt"
	check "rotgen reads the checkpoint" rotgen -g "$T/model.vt" --check "$T/pos44.vt"
fi
vtpy "
f = open('ckpt.vt', 'wb')
hdr = b'VITPIPE 1\nBYTEORDER little\nALIGN 64\nFIELD w f32 4\nSOURCE vit-train\nENDHDR\n'
f.write(hdr + b'\n' * (-len(hdr) % 64) + bytes(64))
f.close()
f = open('ckpt2.vt', 'wb')
hdr = hdr.replace(b'SOURCE', b'PE liere:8\nSHARE none\nHEAD_DIM 64\nAXES 2\nHEADS 1\nLAYERS 1\nSOURCE')
f.write(hdr + b'\n' * (-len(hdr) % 64) + bytes(64))
f.close()
f = open('ckpt3.vt', 'wb')
hdr = hdr.replace(b'FIELD w f32 4', b'FIELD pe.params f32 4')
f.write(hdr + b'\n' * (-len(hdr) % 64) + bytes(64))
"
check_exit 1 "--from a checkpoint without position-encoding keys" $S --from "$T/ckpt.vt"
check_grep "says what is missing" "no PE key" "$T/err"
check_exit 1 "--from a file with keys but no pe.params" $S --from "$T/ckpt2.vt"
check_grep "says the field is missing" "no field pe.params" "$T/err"
check_exit 1 "--from a pe.params of the wrong size" $S --from "$T/ckpt3.vt"
check_grep "says the size is wrong" "needs f32 \[448\]" "$T/err"
check_exit 1 "--from a missing file" $S --from "$T/nonexistent"
printf 'garbage\n' > "$T/garbage"
check_exit 1 "--from garbage" $S --from "$T/garbage"
check_exit 1 "unwritable output" $S --pe liere:8 -o "$T/no/such/dir/g.vt"
# Every writer's rule (atomicfile.h): a link's target is replaced, a FIFO
# written in place, a device's write error reported, none replaced.
mkdir -p "$T/tgt" && ln -sf tgt/g.vt "$T/glink.vt"
check "-o through a link" $S --pe liere:8 --seed 5 -o "$T/glink.vt"
[ -L "$T/glink.vt" ] && [ -s "$T/tgt/g.vt" ] && ok "... writes its target, the link stays" || nok "-o LINK: $(ls -l "$T/glink.vt" "$T/tgt")"
rm -f "$T/g.fifo" && mkfifo "$T/g.fifo"
cat "$T/g.fifo" >"$T/fromfifo.vt" & rd=$!
check "-o FIFO" $S --pe liere:8 --seed 5 -o "$T/g.fifo"
wait $rd
[ -p "$T/g.fifo" ] && vtool info "$T/fromfifo.vt" | grep -q pe.params && ok "... its reader gets the file, the FIFO stays" ||
	nok "-o FIFO: $(ls -l "$T/g.fifo" "$T/fromfifo.vt")"
if [ -c /dev/full ] && [ -w /dev/full ]; then
	check_exit 1 "-o /dev/full is an error" $S --pe liere:8 -o /dev/full
	check_grep "... that says why" "/dev/full: No space left" "$T/err"
	[ -c /dev/full ] && ok "/dev/full is still a device" || {
		nok "/dev/full was replaced by a file"; rm -f /dev/full; mknod -m 666 /dev/full c 1 7; }
fi

# usage errors
check_exit 2 "no --pe" $S
check_exit 2 "unknown method" $S --pe lire:8
check_exit 2 "block size that does not divide" $S --pe liere:7
check_exit 2 "comrope without a block size" $S --pe comrope-ap
check_exit 2 "absolute encodings have no generators" $S --pe abs
check_exit 2 "4 axes" $S --pe liere:8 --axes 4
check_exit 2 "unknown sharing" $S --pe liere:8 --share some
check_exit 2 "normal without --std" $S --pe liere:8 --init normal
check_exit 2 "--std without normal" $S --pe liere:8 --std 1
check_exit 2 "unknown init" $S --pe liere:8 --init magic
check_exit 2 "--from with --pe" $S --from "$T/l8.vt" --pe liere:8
check_exit 2 "an operand" $S --pe liere:8 extra

run_examples skewgen
finish
