#!/bin/sh
# t2_sharing.sh - LieRE Table 2: liere:8's generators shared over nothing,
# heads, layers or all, in 2D.  --share layers is what the LieRE reference
# code trains whatever its flag says (every layer gets layer 0's
# generators), so this table also says whether that changes the paper's
# conclusions here.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
for s in $SEEDS; do
	plan "fm2d/none" task=fm2d pe=liere:8 seed=$s evals=top1,shuffle	# = Table 1's run
	for m in heads layers all; do
		plan "fm2d/$m" task=fm2d pe=liere:8 "vt='--share $m'" seed=$s evals=top1,shuffle
	done
done
run_plan
colstats fm2d > "$PLAN.fm2d.top1"
cat > "$PLAN.paper" <<'EOF2'
none	70.3 (per head and layer)
heads	69.8 (per layer)
layers	69.7 (per head)
all	69.5
EOF2
section "LieRE Table 2: sharing liere:8's generators"
{
	cat <<'EOF2'
Test top-1 (%) on Fashion-MNIST, mean and 95% interval over seeds, in
Table 1's backbone. `--share heads`: one set per layer, shared by its
heads; `layers`: one per head, shared by the layers (what the LieRE
reference code trains); `all`: one set. Paper: ViT-B on CIFAR-100, LieRE_8.

EOF2
	md_table "--share | ours | paper (CIFAR-100)" "$PLAN.fm2d.top1" "$PLAN.paper"
	echo
	echo "The paper's ordering, and the reference code's sharing against the paper's claim:"
	echo
	claim "$PLAN.fm2d.top1" "all < layers < heads < none"
	claim "$PLAN.fm2d.top1" "layers < none"
	echo
	seeded $CAP "$ALLSTEPS"
	echo "Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
sequential $CAP "$ALLSTEPS"
finish
