#!/bin/sh
# block_size.sh - LieRE Figure 4a: liere's block size from 2 (RoPE-Mixed's
# 2 x 2 blocks) to the whole head, in 2D and 3D, in a backbone of one
# head of 64 so that every size from 2 to 64 divides it; and ComRoPE
# Figure 6: comrope-ap's and comrope-ld's from 2 to 8 (its range), in 2D.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
SIZES="2 4 8 16 32 64" CSIZES="2 4 8" SIZES3D=$SIZES
# The quick scale proves the pipelines: the ends of each range
[ "$SCALE" = quick ] && CSIZES="2 8" SIZES3D="2 8"
for s in $SEEDS; do
	for b in $SIZES; do
		plan "fm2d/liere:$b" task=fm2d pe=liere:$b model=block seed=$s
	done
	for b in $CSIZES; do
		for v in ap ld; do
			plan "fm2d/comrope-$v:$b" task=fm2d pe=comrope-$v:$b model=block $(own_cls comrope) seed=$s
		done
	done
	for b in $SIZES3D; do
		plan "mv3d/liere:$b" task=mv3d pe=liere:$b model=block seed=$s
	done
done
run_plan
colstats fm2d > "$PLAN.fm2d.top1"
colstats mv3d > "$PLAN.mv3d.top1"
# a series per encoding and task, each in its block sizes' order
for t in 2D 3D; do
	f=$PLAN.fm2d.top1; [ $t = 3D ] && f=$PLAN.mv3d.top1
	awk -F '\t' -v t=$t '{ m = $1; sub(/:.*/, "", m); b = $1; sub(/.*:/, "", b)
	    print m " " t "\t" b "\t" $3 "\t" $4 "\t" $5 }' "$f" | sort -s -t '	' -k1,1
done > "$RES/$EXP.dat"
plot_series "$EXP" "Block size (one head of 64): Fashion-MNIST (2D), Moving Fashion-MNIST (3D)" "block size" "test top-1 (%)" logx
section "LieRE Figure 4a, ComRoPE Figure 6: block size"
{
	cat <<'EOF2'
Test top-1 (%) of liere:B on Fashion-MNIST (2D) and Moving Fashion-MNIST
(3D), and of comrope-ap:B and comrope-ld:B on Fashion-MNIST (their CLS
rotated at the centre, as their code), in Table 1's backbone with one
head of 64 (dim 64), mean and 95% interval over seeds. The two versions
of the LieRE paper disagree: the ICLR 2025 submission (Figure 4a) finds
8 x 8 blocks best in 2D (CIFAR-100) and 3D (UCF101); arXiv v1 (Section
5.3, Figure 2a) finds the steepest gain at the first sizes and accuracy
still growing with the block size. ComRoPE (Section 4.3.2, Figure 6,
ImageNet, blocks of 2 to 8) finds that larger blocks do better, for
LieRE, ComRoPE-AP and ComRoPE-LD alike.

EOF2
	md_table "block | 2D | 3D" "$PLAN.fm2d.top1" "$PLAN.mv3d.top1"
	echo
	claim "$PLAN.fm2d.top1" "liere:2 < liere:8" "2D"
	claim "$PLAN.fm2d.top1" "liere:64 < liere:8" "2D"
	claim "$PLAN.mv3d.top1" "liere:2 < liere:8" "3D"
	claim "$PLAN.mv3d.top1" "liere:64 < liere:8" "3D"
	claim "$PLAN.fm2d.top1" "comrope-ap:2 < comrope-ap:4 < comrope-ap:8" "2D"
	claim "$PLAN.fm2d.top1" "comrope-ld:2 < comrope-ld:4 < comrope-ld:8" "2D"
	echo
	seeded $CAP "$ALLSTEPS"
	echo "![](results/$SCALE/$EXP.png) Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
sequential $CAP "$ALLSTEPS"
finish
# Which version ours agrees with, in 2D and 3D: the verdict of liere:64 < liere:8.
for t in 2D 3D; do
	awk -F '\t' -v t=$t '$1 == t && $3 == "liere:64" && $4 == "liere:8" { v = $5 } END {
	if (v == "holds") s = "the ICLR version: 8 beats the whole head"
	else if (v == "reversed") s = "arXiv v1: the whole head beats 8"
	else if (v == "equivalent") s = "neither: 8 and the whole head are equivalent here"
	else s = "neither yet: 8 against the whole head is undecided at these seeds"
	print "In " t ", ours agrees with " s " (the verdict above).\n" }' "$RES/$EXP.claims" >> "$RES/$EXP.md"
done
