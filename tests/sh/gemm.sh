# gemm.sh - the matrix backends (VITPIPE_GEMM, vitpipe(7)): training with
# every product by oneDNN and with every one by OpenBLAS gives the same
# losses within float rounding's drift; with either, the same bytes again
# on the same thread count; a name that is no backend is an error.
. tests/sh/lib.sh
$PY tests/sh/posclass.py --records 192 --seed 5 > "$T/d.vt"
M="--dim 32 --depth 2 --heads 2 --mlp 64 --batch 32 --lr 3e-3 --warmup 0"
# abs: the block and attention products; string: a basis too (rotary.c);
# riemann --locality: attention's locality path.
for pe in abs string "riemann --locality"; do
	n=$(echo "$pe" | tr -c 'a-z\n' _)
	for b in openblas onednn; do
		for r in 1 2; do	# the same command line: the model keeps it
			mkdir -p "$T/$r"
			(cd "$T/$r" && VITPIPE_GEMM=$b vit-train $M --pe $pe --threads 2 \
			    --log "$n-$b.json" -o "$n-$b.vt" ../d.vt 2>../err) ||
			    nok "VITPIPE_GEMM=$b $pe: $(head -c 300 "$T/err")"
		done
		cmp -s "$T/1/$n-$b.vt" "$T/2/$n-$b.vt" &&
		    ok "VITPIPE_GEMM=$b $pe: the same bytes again on 2 threads" ||
		    nok "VITPIPE_GEMM=$b $pe: other bytes from the same run"
	done
	$PY - "$T/1/$n-openblas.json" "$T/1/$n-onednn.json" > "$T/cmp" 2>&1 <<'PYEOF'
import json, sys
a, b = ([json.loads(l)["loss"] for l in open(f) if '"loss"' in l] for f in sys.argv[1:])
assert len(a) == len(b) == 6, (len(a), len(b))
# The first loss is a forward pass apart; six steps of AdamW keep the
# rounding differences far below any change of behaviour.
assert abs(a[0] - b[0]) <= 1e-5 * abs(a[0]), (a[0], b[0])
assert all(abs(x - y) <= 1e-3 * abs(x) for x, y in zip(a, b)), list(zip(a, b))
print("fine: at most %.1e apart" % max(abs(x - y) / abs(x) for x, y in zip(a, b)))
PYEOF
	check_grep "$pe: oneDNN's losses are OpenBLAS's within rounding ($(head -c 200 "$T/cmp"))" "^fine" "$T/cmp"
	cmp -s "$T/1/$n-openblas.vt" "$T/1/$n-onednn.vt" && nok "$pe: VITPIPE_GEMM changed no bit" ||
	    ok "$pe: the backends' last bits differ (VITPIPE_GEMM took effect)"
done
(VITPIPE_GEMM=mkl; export VITPIPE_GEMM
 check_exit 1 "VITPIPE_GEMM=mkl: an error" vit-train $M --pe abs --no-out "$T/d.vt"
 check_grep "... that names the variable and the backends" "VITPIPE_GEMM: 'mkl' is not auto, openblas or onednn" "$T/err")
check "VITPIPE_GEMM=auto: each product by the backend its shape picks" env VITPIPE_GEMM=auto vit-train $M --pe abs --no-out "$T/d.vt"
finish
