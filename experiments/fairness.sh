#!/bin/sh
# fairness.sh - the README's recipe (a fifth of Fashion-MNIST, 3 epochs,
# Table 1's backbone) for every encoding at its defaults, under its own
# paper's position convention and under the common one: a user who
# changes only --pe must get a fair model.  Each rotary encoding should be
# within 2 points of liere:8, or the intervals show the gap is the
# method's own.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
ROWS="none abs sincos rope-axial rope-mixed liere:8 comrope-ap:8 comrope-ld:8 comrope-ld:8,tied riemann mrope string rope-nd"
# liere's own convention is the common one (linspace): one run serves both
ROTARY="rope-axial rope-mixed comrope-ap:8 comrope-ld:8 riemann mrope string rope-nd"
for s in $SEEDS; do
	for r in $ROWS; do
		plan "paper/$r" task=fm2d pe=$r frac=0.2 seed=$s
	done
	for r in $ROTARY; do
		plan "common/$r" task=fm2d pe=$r frac=0.2 arm=common seed=$s
	done
done
run_plan
colstats paper > "$PLAN.paper"
{ colstats common; grep '^liere:8	' "$PLAN.paper"; } > "$PLAN.common"
section "Fairness: the README recipe at every encoding's defaults"
{
	cat <<'EOF2'
Test top-1 (%) on all 10k test images after the README's recipe (a fifth
of Fashion-MNIST, 3 epochs, dim 64, depth 4, heads 4, mlp 128, lr 2e-3),
mean and 95% interval over seeds. *paper*: each encoding at its defaults
(its own paper's convention and initialisation); *common*: on linspace
positions as given (liere's own). `comrope-ld:8,tied`: the official
ComRoPE-LD, its multipliers shared by a layer's heads. string and rope-nd
start as rope-mixed and rope-axial (their bases at the identity). The
common arm gives every encoding the positions all of them got before
they had conventions of their own (ComRoPE keeps its new initialisation).

EOF2
	md_table "encoding | paper (defaults) | common" "$PLAN.paper" "$PLAN.common"
	echo
	echo "Gap to liere:8 at the defaults (points; no more than 2 below is fair):"
	echo
	awk -F '\t' 'NR == FNR { if ($1 == "liere:8") { m = $3; lo = $4; hi = $5 } next }
	    $1 != "liere:8" && $1 != "none" && $1 != "abs" && $1 != "sincos" {
		d = $3 - m
		if (d > 2) v = "above liere:8"
		else if (d >= -2) v = "within 2 points"
		else if ($5 != "" && lo != "" && $5 < lo) v = "more than 2 points below; the intervals separate"
		else v = "more than 2 points below; the intervals overlap"
		printf "- %s: %+.2f (%s)\n", $1, d, v }' "$PLAN.paper" "$PLAN.paper"
	echo
	echo "Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
finish
