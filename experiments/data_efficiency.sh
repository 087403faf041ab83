#!/bin/sh
# data_efficiency.sh - LieRE Figure 3b: accuracy against the fraction of
# the training set (10, 30, 70 and 100%, a seeded subset of every class,
# the same epochs), in 2D.  The LieRE paper claims LieRE on 70% of the
# data beats abs on all of it.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
PES="abs rope-mixed liere:8 comrope-ld:8"
FRACS="0.1 0.3 0.7 1"
for s in $SEEDS; do
	for pe in $PES; do
		for f in $FRACS; do
			plan "fm2d/$pe@$f" task=fm2d pe=$pe $(own_cls $pe) frac=$f seed=$s evals=top1,shuffle
		done
	done
done
run_plan
colstats fm2d > "$PLAN.all"
awk -F '\t' '{ split($1, a, "@"); print a[1] "\t" a[2] * 100 "\t" $3 "\t" $4 "\t" $5 }' "$PLAN.all" |
	sort -s -t "$(printf '\t')" -k1,1 > "$RES/$EXP.dat"
plot_series "$EXP" "Accuracy against training data (Fashion-MNIST)" "training data (%)" "test top-1 (%)"
for f in $FRACS; do
	awk -F '\t' -v f="@$f" 'substr($1, length($1) - length(f) + 1) == f { sub(/@.*/, "", $1); print }' OFS='\t' "$PLAN.all" > "$PLAN.f$f"
done
section "Data efficiency: LieRE Figure 3b"
{
	cat <<'EOF2'
Test top-1 (%) on Fashion-MNIST after training on a seeded fraction of
every class for the same number of epochs, mean and 95% interval over
seeds.

EOF2
	md_table "encoding | 10% | 30% | 70% | 100%" "$PLAN.f0.1" "$PLAN.f0.3" "$PLAN.f0.7" "$PLAN.f1"
	echo
	echo "The LieRE paper's claim, liere:8 on 70% of the data beats abs on all of it:"
	echo
	claim "$PLAN.all" "abs@1 < liere:8@0.7"
	echo
	echo "![](results/$SCALE/$EXP.png) Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
finish
