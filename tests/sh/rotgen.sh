# rotgen.sh - R against an independent NumPy exponential, the property
# check on both sides of ComRoPE's claim, CLS, determinism, errors, man
# page examples.
. tests/sh/lib.sh
R=rotgen

check "$R --help" $R --help
check "$R --version" $R --version

# --check: orthogonal and det +1 for every rotation method; the relative
# defect is rounding for the commuting ones and large for LieRE
posgen --grid 6x6 > "$T/pos.vt"
posgen --grid 2x3x3 -c centre > "$T/pos3.vt"
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
for m in rope-axial rope-mixed liere:2 comrope-ap:8 comrope-ld:8 comrope-ld:32 none zeros liere:8 liere:64; do
	for ax in 2 3; do
		p="$T/pos.vt"; [ $ax = 3 ] && p="$T/pos3.vt"
		skewgen --pe $m --head-dim 64 --axes $ax --heads 2 --seed 4 -o "$T/g.vt"
		if ! $R --generators "$T/g.vt" --check "$p" > "$T/chk" 2>"$T/err"; then
			nok "$m ${ax}D: rotgen --check failed: $(cat "$T/err")"; continue
		fi
		o=$(val orthogonality "$T/chk") lo=$(val det_min "$T/chk") hi=$(val det_max "$T/chk") rel=$(val relative "$T/chk")
		if awk -v o="$o" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(o < 1e-6 && lo > 1 - 1e-5 && hi < 1 + 1e-5) }'; then
			ok "$m ${ax}D: orthogonal ($o), det in [$lo, $hi]"
		else
			nok "$m ${ax}D: orthogonality $o, det [$lo, $hi]"
		fi
		case $m in liere:8|liere:64) want='rel > 0.1' what="fails, as LieRE must" ;; *) want='rel < 1e-5' what="holds" ;; esac
		if awk -v rel="$rel" "BEGIN { exit !($want) }"; then
			ok "$m ${ax}D: R(x)^T R(y) = R(y - x) $what (defect $rel)"
		else
			nok "$m ${ax}D: relative defect $rel, wanted $want"
		fi
	done
done
check_grep "--check names the method and counts" "^pairs 256$" "$T/chk"
# string and rope-nd: a learned basis (drawn here, not I) around their RoPE
for m in string rope-nd,theta=1000; do
	for ax in 2 3; do
		p="$T/pos.vt"; [ $ax = 3 ] && p="$T/pos3.vt"
		skewgen --pe $m --head-dim 32 --axes $ax --heads 2 --init normal --std 0.3 --seed 4 -o "$T/g.vt"
		$R --generators "$T/g.vt" --check "$p" > "$T/chk" 2>"$T/err"
		check "$m ${ax}D: dense P R0 P^T orthogonal, det 1, R(x)^T R(y) = R(y - x)" awk '
		    $1 == "orthogonality" || $1 == "relative" { if ($2 >= 1e-6) bad = 1; n++ }
		    $1 ~ /^det_m/ { if ($2 < 1 - 1e-5 || $2 > 1 + 1e-5) bad = 1; n++ }
		    END { exit bad || n != 4 }' "$T/chk"
	done
done
skewgen --pe riemann --head-dim 16 -o "$T/rie.vt"
$R -g "$T/rie.vt" --check "$T/pos.vt" > "$T/rchk"
check "riemann is reported as not orthogonal" awk '$1 == "orthogonality" && $2 > 0.01 { f = 1 } END { exit !f }' "$T/rchk"

# the stream: R for every set and token, against NumPy
skewgen --pe liere:4 --head-dim 8 --heads 2 --layers 2 --share heads --seed 2 -o "$T/l4.vt"
posgen --grid 3x3 -c centre --cls centre | $R -g "$T/l4.vt" > "$T/rot.vt"
# an independent exponential: Taylor series with scaling and squaring
EXPM='
def expm(X):
    s = max(0, int(np.ceil(np.log2(max(np.abs(X).sum(0).max(), 1e-300) / 0.25))))
    A = X / 2 ** s; S = T = np.eye(len(X))
    for k in range(1, 30): T = T @ A / k; S = S + T
    for _ in range(s): S = S @ S
    return S
'
check "rot matches a NumPy exponential, rot_cls the CLS position" vtpy "$EXPM
g = next(vtread(open('l4.vt', 'rb'))[1])['pe.params'].reshape(2, 2, 2, 6)
h, recs = vtread(open('rot.vt', 'rb')); r = next(recs)
assert h['PE'] == ['liere:4'] and h['SHARE'] == ['heads'] and h['CLSPOS'] == ['0.5,0.5']
R = r['rot']; pos = r['pos']
assert R.shape == (2, 9, 2, 4, 4), R.shape
iu = np.triu_indices(4, 1); err = 0
for s in range(2):
    for t in range(9):
        for j in range(2):
            X = np.zeros((4, 4))
            for a in range(2):
                U = np.zeros((4, 4)); U[iu] = g[s, a, j]; X += pos[t, a] * (U - U.T)
            err = max(err, np.abs(R[s, t, j] - expm(X)).max())
assert err < 1e-6, err
assert np.array_equal(r['rot_cls'], R[:, 4]), 'CLS at the centre token'
"
skewgen --pe string --head-dim 8 --axes 2 --heads 2 --init normal --std 0.4 --seed 3 -o "$T/st.vt"
posgen --grid 3x3 -c centre --cls centre | $R -g "$T/st.vt" > "$T/rst.vt"
check "string's rot is exp(sum_i p_i P L_i P^T), P = (I - S)(I + S)^-1, in NumPy" vtpy "$EXPM
g = next(vtread(open('st.vt', 'rb'))[1])['pe.params'].reshape(2, -1).astype(float)
r = next(vtread(open('rst.vt', 'rb'))[1]); R = r['rot']; pos = r['pos']
assert R.shape == (2, 9, 1, 8, 8), R.shape
iu = np.triu_indices(8, 1); I = np.eye(8); err = 0
for s in range(2):
    U = np.zeros((8, 8)); U[iu] = g[s, 8:]; S = U - U.T
    P = (I - S) @ np.linalg.inv(I + S)
    A = []
    for a in range(2):    # rope-mixed's layout: pair j of axis a, upper entry u
        L = np.zeros((8, 8))
        for j in range(4): L[2 * j, 2 * j + 1] = g[s, a * 4 + j]; L[2 * j + 1, 2 * j] = -g[s, a * 4 + j]
        A.append(P @ L @ P.T)
    for t in range(9):
        err = max(err, np.abs(R[s, t, 0] - expm(pos[t, 0] * A[0] + pos[t, 1] * A[1])).max())
assert err < 1e-6, err
assert np.array_equal(r['rot_cls'], R[:, 4]), 'CLS at the centre token'
"
posgen --grid 3x3 -c centre --cls centre --offset 1 --records 2 | $R -g "$T/l4.vt" > "$T/roff.vt"
check "with --offset, rot_cls is the CLS's rotation at its record's clspos" vtpy "
for r in vtread(open('roff.vt', 'rb'))[1]:
    assert np.allclose(r['clspos'], r['pos'][4], atol=1e-6)
    assert np.abs(r['rot_cls'] - r['rot'][:, 4]).max() < 1e-5
"
posgen --grid 3x3 | $R -g "$T/l4.vt" > "$T/rot2.vt"
check "no rot_cls when CLSPOS is none" vtpy "
assert 'rot_cls' not in next(vtread(open('rot2.vt', 'rb'))[1])"
posgen --grid 5x5 --perturb 0.5 --records 3 > "$T/pp.vt"
skewgen --pe liere:16 --head-dim 32 --heads 3 -o "$T/l16.vt"
OMP_NUM_THREADS=1 $R -g "$T/l16.vt" "$T/pp.vt" > "$T/d1.vt"
OMP_NUM_THREADS=2 $R -g "$T/l16.vt" "$T/pp.vt" > "$T/d2.vt"
check "the same bytes on 1 and 2 threads" cmp "$T/d1.vt" "$T/d2.vt"
check "every record gets its rotations" vtpy "
recs = list(vtread(open('d1.vt', 'rb'))[1])
assert len(recs) == 3 and recs[0]['rot'].shape == (3, 25, 2, 16, 16)
assert not np.array_equal(recs[0]['rot'], recs[1]['rot'])"

# errors
check_exit 2 "no --generators" $R "$T/pos.vt"
check_exit 2 "two positions files" $R -g "$T/l4.vt" a b
check_exit 1 "missing generators file" $R -g "$T/nonexistent" "$T/pos.vt"
check_exit 1 "generators without PE keys" $R -g "$T/pos.vt" "$T/pos.vt"
check_grep "says so" "no PE key" "$T/err"
check_exit 1 "positions with 3 axes for 2D generators" $R -g "$T/l4.vt" "$T/pos3.vt"
check_grep "names the mismatch" "need f32 \[T\]\[2\]" "$T/err"
check_exit 1 "a stream without pos" $R -g "$T/l4.vt" "$T/l16.vt"
check_grep "says pos is missing" "no pos field" "$T/err"
check_exit 1 "a stream that already has rot" $R -g "$T/l4.vt" "$T/rot2.vt"
printf 'junk\n' > "$T/junk"
check_exit 1 "garbage positions" $R -g "$T/l4.vt" "$T/junk"
check_exit 1 "garbage generators" $R -g "$T/junk" "$T/pos.vt"
head -c 200 "$T/pos.vt" > "$T/cut.vt"
check_exit 1 "truncated positions" $R -g "$T/l4.vt" "$T/cut.vt"
check_exit 2 "bad --pairs" $R -g "$T/l4.vt" --check --pairs 0 "$T/pos.vt"

run_examples rotgen
finish
