#!/bin/sh
# compute_efficiency.sh - LieRE Figure 4b: optimizer steps each encoding
# needs to reach abs's final accuracy, read from the validation curves of
# Table 1's runs (vit-train --val-steps on a held-out part of the test
# set).  The LieRE paper claims 3.9 times fewer for LieRE.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
PES="abs rope-axial rope-mixed liere:8 comrope-ld:8"
for s in $SEEDS; do
	for pe in $PES; do
		plan "fm2d/$pe" task=fm2d pe=$pe $(own_cls $pe) seed=$s evals=top1,shuffle	# Table 1's runs
	done
done
run_plan
# log LABEL: the validation points "step acc" of each seed's run, a blank
# line between runs.
curve_points() {
	awk -F '\t' -v l="$1" '$1 == l { print $2 }' "$PLAN" | while IFS= read -r w; do
		t=$(eval "sh \"$EXPDIR/run1.sh\" --train-key $w")
		[ -f "$RES/logs/$t.jsonl.gz" ] || continue
		gzip -dc "$RES/logs/$t.jsonl.gz" | sed -n 's/.*"step":\([0-9]*\),.*"val_acc":\([0-9.]*\).*/\1 \2/p'
		echo
	done
}
# The target: abs's final validation accuracy, the mean over its seeds.
target=$(curve_points fm2d/abs | awk 'NF == 0 { if (last != "") { s += last; n++ } last = ""; next }
    { last = $2 } END { if (n) printf "%.6f", s / n }')
: > "$PLAN.steps"
for pe in $PES; do
	curve_points "fm2d/$pe" | awk -v pe="$pe" -v t="$target" '
	    NF == 0 { printf "%s\t%s\n", pe, hit == "" ? "never" : hit; hit = ""; done = 0; next }
	    !done && $2 >= t { hit = $1; done = 1 }' >> "$PLAN.steps"
done
abs_steps=$(awk -F '\t' '$1 == "abs" && $2 != "never" { s += $2; n++ } END { if (n) print s / n }' "$PLAN.steps")
shown=?; [ -n "$target" ] && shown=$(awk -v t="$target" 'BEGIN { printf "%.2f%%", 100 * t }')
section "Compute efficiency: LieRE Figure 4b"
{
	cat <<EOF2
Optimizer steps until the validation top-1 first reaches abs's final
validation top-1 ($shown, the mean over abs's seeds), from Table 1's
2D runs (paper arm); the speed-up is abs's steps over the encoding's.
"never": not reached within the run. The LieRE paper reports 3.9 times
fewer epochs for LieRE than abs (CIFAR-100).

EOF2
	echo "| encoding | steps (each seed) | mean | speed-up over abs |"
	echo "|---|---|---|---|"
	awk -F '\t' -v a="${abs_steps:-0}" '{ if (!($1 in s)) order[++k] = $1; s[$1] = s[$1] (s[$1] == "" ? "" : ", ") $2
	    if ($2 != "never") { sum[$1] += $2; n[$1]++ } else nv[$1]++ }
	    END { for (i = 1; i <= k; i++) { p = order[i]
		m = n[p] && !nv[p] ? sum[p] / n[p] : 0
		printf "| %s | %s | %s | %s |\n", p, s[p], m ? sprintf("%.0f", m) : "-",
		    m && a ? sprintf("%.2fx", a / m) : "-" } }' "$PLAN.steps"
	echo
	echo "Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
awk -F '\t' '{ printf "{\"pe\":\"%s\",\"steps_to_abs_final\":%s,\"target\":%s}\n", $1, $2 == "never" ? "null" : $2, "'"${target:-null}"'" }' \
    "$PLAN.steps" > "$RES/$EXP.jsonl"
echo "$EXP: $RES/$EXP.md" >&2
