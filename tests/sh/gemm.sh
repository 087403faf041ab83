# gemm.sh - the matrix backends (VITPIPE_GEMM, vitpipe(7)): training with
# every product by oneDNN and with every one by OpenBLAS gives the same
# losses within float rounding's drift; with either, the same bytes again
# on the same thread count; a name that is no backend is an error.  The
# plan (VITPIPE_PLAN) is kept, followed, obeyed and shared; a broken one is
# refused.
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

# The plan (VITPIPE_PLAN): each shape's backend timed at its first product
# and kept in the file, which later runs follow.
P="$T/plan"; rm -f "$P"
train() {	# train OUT [env...]: the abs model of d.vt into $T/OUT
	o=$1; shift
	(cd "$T" && env "$@" vit-train $M --pe abs --threads 2 -o "$o" d.vt 2>"$T/err")
}
train p1.vt VITPIPE_PLAN="$P" || nok "a planned run: $(head -c 300 "$T/err")"
check_grep "a planned run writes its choices, a line a shape" \
    "^(one|rows|chunks|batch) [NT] [NT] [0-9]+ [0-9]+ [0-9]+ (openblas|onednn)$" "$P"
check_grep "... attention's batches among them" "^batch N T 17 17 16 (openblas|onednn)$" "$P"
check_grep "... under a line that says where they were made" "^# vitpipe plan, made on: .*OpenBLAS" "$P"
awk '!/^#/ { k = $1 FS $2 FS $3 FS $4 FS $5 FS $6; if (seen[k]++) bad = 1 } END { exit bad }' "$P" &&
    ok "... each shape once" || nok "... a shape twice: $(sort "$P" | uniq -d | head -3)"
cp "$P" "$T/plan.before"
train p2.vt VITPIPE_PLAN="$P" || nok "a second planned run: $(head -c 300 "$T/err")"
cmp -s "$P" "$T/plan.before" && ok "a second run follows the plan and measures nothing new" ||
    nok "a second run changed the plan: $(diff "$T/plan.before" "$P" | head -3)"
# the models keep their command lines: the same name gives the same bytes
mv "$T/p2.vt" "$T/p.vt"; train p2.vt VITPIPE_PLAN="$P"
cmp -s "$T/p.vt" "$T/p2.vt" && ok "... and gives the same bytes" || nok "... other bytes from the same plan"
# a plan of one backend gives that backend's model: the plan is obeyed
for b in openblas onednn; do
	sed "s/\(openblas\|onednn\)\$/$b/" "$P" > "$T/plan-$b"
	train q.vt VITPIPE_PLAN="$T/plan-$b"; mv "$T/q.vt" "$T/q-$b.vt"
	train q.vt VITPIPE_PLAN=off VITPIPE_GEMM=$b; mv "$T/q.vt" "$T/f-$b.vt"
	cmp -s "$T/q-$b.vt" "$T/f-$b.vt" && ok "a plan of $b alone gives VITPIPE_GEMM=$b's bytes" ||
	    nok "a plan of $b alone: not VITPIPE_GEMM=$b's bytes"
done
train q.vt VITPIPE_PLAN="$T/plan-openblas" VITPIPE_GEMM=onednn; mv "$T/q.vt" "$T/fo.vt"
cmp -s "$T/fo.vt" "$T/f-onednn.vt" && ok "VITPIPE_GEMM overrides the plan" || nok "VITPIPE_GEMM did not override the plan"
# two runs at once on a new plan agree on every shape, and on the bytes
rm -f "$T/plan2"; mkdir -p "$T/a" "$T/b"
for d in a b; do (cd "$T/$d" && VITPIPE_PLAN="$T/plan2" vit-train $M --pe abs --threads 2 -o m.vt ../d.vt 2>err) & done; wait
cmp -s "$T/a/m.vt" "$T/b/m.vt" && ok "two runs at once on one new plan: the same bytes" ||
    nok "two runs at once on one new plan: other bytes"
[ "$(grep -vc '^#' "$T/plan2")" -eq "$(grep -vc '^#' "$P")" ] && ok "... and each shape once in it" ||
    nok "... $(grep -vc '^#' "$T/plan2") lines, a run alone writes $(grep -vc '^#' "$P")"
# an unfinished last line (a full disk) is left unread, and cut before a
# new choice is appended: a model of other shapes
{ cat "$P"; printf 'chunks N T 5'; } > "$T/plan3"
train q.vt VITPIPE_PLAN="$T/plan3" && mv "$T/q.vt" "$T/q3.vt" || nok "a plan with an unfinished line: $(head -c 300 "$T/err")"
(cd "$T" && VITPIPE_PLAN="$T/plan3" vit-train --dim 48 --depth 1 --heads 2 --mlp 64 --batch 32 --pe abs --no-out d.vt 2>"$T/err")
[ "$(grep -vc '^#' "$T/plan3")" -gt "$(grep -vc '^#' "$P")" ] &&
    ! grep -vE '^#|^(one|rows|chunks|batch) [NT] [NT] [0-9]+ [0-9]+ [0-9]+ (openblas|onednn)$' "$T/plan3" >/dev/null &&
    ok "an unfinished last line is left unread, and cut before the next choice" ||
    nok "an unfinished last line: $(grep -vE '^#|^(one|rows|chunks|batch) [NT] [NT] [0-9]+ [0-9]+ [0-9]+ (openblas|onednn)$' "$T/plan3" | head -2)"
# a file that is not a plan is refused, by name
(export VITPIPE_PLAN="$T/bad"
 printf 'chunks N T 512 32 4 mkl\n' > "$VITPIPE_PLAN"
 check_exit 1 "a plan with a line of no backend: an error" vit-train $M --pe abs --no-out "$T/d.vt"
 check_grep "... that names the variable, the file and the line" "VITPIPE_PLAN: .*/bad: byte 0: 'chunks N T 512 32 4 mkl' is not a line of a plan" "$T/err"
 head -c 1100000 /dev/zero | tr '\0' '#' > "$VITPIPE_PLAN"
 check_exit 1 "a plan file over 1 MB: an error" vit-train $M --pe abs --no-out "$T/d.vt"
 check_grep "... that says its size" "bytes: not a plan" "$T/err"
 VITPIPE_PLAN="$T/no/plan"
 check_exit 1 "VITPIPE_PLAN in a folder that is not there: an error" vit-train $M --pe abs --no-out "$T/d.vt"
 check_grep "... that names it" "VITPIPE_PLAN: .*/no/plan: No such file" "$T/err"
 VITPIPE_PLAN=
 check_exit 1 "VITPIPE_PLAN empty: an error" vit-train $M --pe abs --no-out "$T/d.vt")
# by default: this machine's file under XDG_CACHE_HOME, else ~/.cache
mkdir -p "$T/home"
(unset VITPIPE_PLAN XDG_CACHE_HOME; HOME="$T/home" vit-train $M --pe abs --no-out "$T/d.vt" 2>"$T/err")
set -- "$T"/home/.cache/vitpipe/plan-*
[ -s "$1" ] && ok "by default the plan is ~/.cache/vitpipe/plan-HASH" || nok "no plan under ~/.cache/vitpipe: $(ls -R "$T/home" | head -5)"
(unset VITPIPE_PLAN; XDG_CACHE_HOME="$T/xdg" HOME="$T/home" vit-train $M --pe abs --no-out "$T/d.vt" 2>"$T/err")
set -- "$T"/xdg/vitpipe/plan-*
[ -s "$1" ] && ok "... or \$XDG_CACHE_HOME/vitpipe/plan-HASH" || nok "no plan under \$XDG_CACHE_HOME/vitpipe"
(unset VITPIPE_PLAN XDG_CACHE_HOME; HOME=/proc/no-such-home vit-train $M --pe abs --no-out "$T/d.vt" 2>"$T/err") &&
    ok "... and without a place for it, the run goes on unplanned" || nok "a run without a place for its plan: $(head -c 300 "$T/err")"
finish
