#!/bin/sh
# resolution.sh - LieRE Figure 2 and ComRoPE Table 1: train on 28 x 28
# Fashion-MNIST (a 7 x 7 grid), evaluate at 20, 24, 28, 36 and 44 (grids
# 5 to 11), with and without ComRoPE's position perturbation in training
# (sigma = 1 patch), and with a random offset of every test record's
# positions (ComRoPE Figure 5: no effect on a commuting encoding).
# abs is DeiT's table, read by token index; ape is ComRoPE's APE, read at
# the positions, so that it takes the perturbation and the offset, and
# ape,official reads it as ComRoPE's code does (in 2D the middle column).
# Positions keep the training grid's spacing at every size (posgen
# --n0 7), and each encoding maps them into its own convention on the test
# grid, as its code does at another resolution (vit-eval(1)).  As in
# ComRoPE's code, the CLS token of every rotary model and of ape has a
# position, the image's centre (posgen --cls centre), and moves with an
# offset: without one the offset would change what the CLS sees of the
# patches.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
PES="abs ape ape,official rope-axial rope-mixed liere:8 comrope-ap:8 comrope-ld:8"
SIZES="20 24 28 36 44"
EV=top1,res:20:24:36:44,offset:1
for s in $SEEDS; do
	for pe in $PES; do
		# positions play no part in abs: Table 1's model, trained once
		[ "$pe" = abs ] && { plan "paper-s0/$pe" task=fm2d pe=$pe seed=$s evals=$EV; continue; }
		plan "paper-s0/$pe" task=fm2d pe=$pe cls=centre seed=$s evals=$EV
		# liere's own convention is the common one: the same model; the
		# official APE is compared in its own arm only
		case $pe in liere:8|ape,official) ;;
		*) plan "common-s0/$pe" task=fm2d pe=$pe cls=centre arm=common seed=$s evals=$EV ;;
		esac
		plan "paper-s1/$pe" task=fm2d pe=$pe cls=centre "pos='--perturb 1'" seed=$s evals=$EV
	done
done
run_plan
: > "$RES/$EXP.dat"
for arm in paper-s0 common-s0 paper-s1; do
	for r in $SIZES; do
		f=res_$r; [ "$r" = 28 ] && f=top1
		FIELD=$f colstats $arm > "$PLAN.$arm.$r"
		awk -F '\t' -v a=$arm -v r=$r '{ print $1 " " a "\t" r "\t" $3 "\t" $4 "\t" $5 }' "$PLAN.$arm.$r" >> "$RES/$EXP.dat"
	done
	FIELD=offset_1 colstats $arm > "$PLAN.$arm.off"
done
sort -s -t "$(printf '\t')" -k1,1 "$RES/$EXP.dat" > "$PLAN.dat" && mv "$PLAN.dat" "$RES/$EXP.dat"
plot_series "$EXP" "Accuracy against test resolution (trained at 28)" "test image size (pixels)" "test top-1 (%)" panels
cat > "$PLAN.paper" <<'EOF2'
ape,official	APE: 58.76 / 58.62 at 224; 50.99 / 42.66 at 512
rope-axial	RoPE: 63.09 / 62.03 at 224; 51.11 / 50.58 at 512
liere:8	LieRE: 64.36 / 64.07; 53.74 / 52.51
comrope-ap:8	ComRoPE-AP: 65.32 / 64.76; 54.02 / 53.81
comrope-ld:8	ComRoPE-LD: 65.49 / 65.27; 55.29 / 53.64
EOF2
section "Resolution: LieRE Figure 2, ComRoPE Table 1"
{
	cat <<'EOF2'
Test top-1 (%) of models trained at 28 x 28, at other test sizes, mean
and 95% interval over seeds. s0: trained on patch centres; s1: with
ComRoPE's perturbation (posgen --perturb 1: its equation (11), normal
with a patch's standard deviation, truncated to the patch; its code
draws half that and clamps). abs, DeiT's table read by token index,
cannot take it. ape is ComRoPE's APE: a table read at the (perturbed,
offset) positions by interpolation, 0 and 1 its first and last cells,
each axis at its coordinate; ape,official reads it as ComRoPE's code
does, which in 2D reads the table's middle column for every token, so
that its APE sees rows only (vit-train(1)). Paper: positions in each
encoding's own convention, on the test grid as its code places them
(RoPE-ViT's integer i extrapolates, ComRoPE's (i + 0.5)/n keeps the image
within 0 .. 1, LieRE's linspace keeps the training grid's spacing);
common: all as linspace, the training grid's spacing. As in ComRoPE's
code the CLS token of the rotary models and of ape has a position, the
image's centre.
The offset column (ComRoPE Figure 5): top-1 at 28 with every test
record's tokens, CLS included, moved by one random offset per axis,
N(0, 1) in linspace units (an image's width); a commuting encoding
cannot tell. Paper: ComRoPE Table 1, ImageNet, perturbation 1 / 0, at
224 and at 512.

EOF2
	for arm in paper-s0 common-s0 paper-s1; do
		echo "### $arm"
		echo
		ROWFILE="$PLAN.$arm.28" md_table "encoding | 20 | 24 | 28 | 36 | 44 | offset 1 | paper (σ=1 / σ=0)" \
		    "$PLAN.$arm.20" "$PLAN.$arm.24" "$PLAN.$arm.28" "$PLAN.$arm.36" "$PLAN.$arm.44" "$PLAN.$arm.off" "$PLAN.paper"
		echo
	done
	echo "ComRoPE Table 1's ordering at the largest size (44), paper arm, trained"
	echo "with perturbation, its APE as its code reads it:"
	echo
	claim "$PLAN.paper-s1.44" "ape,official < rope-axial < liere:8 < comrope-ld:8" "44 px, perturbed"
	echo
	echo "ComRoPE's APE as its code reads it (rows only) against the method,"
	echo "at the training size, perturbed as ComRoPE trained it:"
	echo
	claim "$PLAN.paper-s1.28" "ape,official < ape" "28 px, perturbed"
	echo
	echo "ComRoPE Figure 5 under the offset (paper arm, no perturbation): LieRE,"
	echo "whose generators do not commute, loses accuracy; ComRoPE keeps it:"
	echo
	claim "$PLAN.paper-s0.off" "liere:8 < comrope-ap:8" "offset 1"
	claim "$PLAN.paper-s0.off" "liere:8 < comrope-ld:8" "offset 1"
	echo
	seeded $CAP "$ALLSTEPS"
	echo "![](results/$SCALE/$EXP.png) Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
sequential $CAP "$ALLSTEPS"
finish
