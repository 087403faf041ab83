#!/bin/sh
# t1_encodings.sh - LieRE Table 1: every encoding in one backbone, in 2D
# (Fashion-MNIST) and 3D (Moving Fashion-MNIST), test top-1 over seeds.
# Each rotary encoding runs twice: under its own paper's position
# convention, initialisation and CLS (vit-train's default; ComRoPE's CLS
# rotated at the centre), and under posgen's linspace positions as they
# come, the CLS unrotated (the common convention).  The key claims are
# seeded sequentially up to CAP.
. "$(dirname "$0")/lib.sh"
parse_options "$@"

# The encodings of Table 1 (LieRE's rows, ComRoPE's and RiemannFormer's).
# liere:full is LieRE_64 of the paper: one block the size of the head
# (64 in ViT-B; 16 in this backbone).
PLAIN="none abs sincos"
ROTARY="rope-axial rope-mixed liere:8 liere:full comrope-ap:8 comrope-ld:8 riemann riemann+locality"
# The key claims (the issue's: rotary against abs, LieRE against
# RoPE-Mixed, ComRoPE against LieRE; steps of the claims below), seeded
# sequentially.  Not at the quick scale: tasks.sh's quick run proves the
# seeding, and each seed here is every encoding's run.
KEYC="fm2d-paper top1 abs rope-axial|fm2d-paper top1 rope-mixed liere:8|fm2d-paper top1 liere:8 comrope-ld:8|\
mv3d-paper top1 abs rope-axial|mv3d-paper top1 rope-mixed liere:8"
[ "$SCALE" = quick ] && KEYC=
words() {	# words ROW: vit-train's --pe and options for a row
	case $1 in
	liere:full) echo "pe=liere" ;;
	riemann+locality) echo "pe=riemann vt=--locality" ;;
	*) echo "pe=$1" ;;
	esac
}
for task in fm2d mv3d; do
	for s in $SEEDS; do
		for r in $PLAIN; do
			plan "$task-paper/$r" task=$task $(words $r) seed=$s evals=top1,shuffle$([ $task = mv3d ] && echo ,shufflet)
		done
		for r in $ROTARY; do
			for arm in paper common; do
				# LieRE's own convention is the common one: the same model
				case $arm/$r in common/liere*) continue ;; esac
				cls=; [ $arm = paper ] && cls=$(own_cls $r)
				plan "$task-$arm/$r" task=$task $(words $r) $cls arm=$arm seed=$s evals=top1,shuffle$([ $task = mv3d ] && echo ,shufflet)
			done
		done
	done
done
run_plan

for c in fm2d-paper fm2d-common mv3d-paper mv3d-common; do
	colstats $c > "$PLAN.$c.top1"
done
cat > "$PLAN.paper" <<'EOF'
none	-
abs	63.9 (62.9-65.8) / 66.1 (65.7-66.5) / 40.9 (40.5-41.3)
sincos	-
rope-axial	65.5 (64.6-66.5) / 65.4 (65.0-65.8) / 45.0 (44.6-45.4)
rope-mixed	68.8 (67.9-69.7) / 68.8 (68.4-69.2) / 46.3 (45.9-46.7)
liere:8	70.3 (69.4-71.2) / - / 47.0 (46.6-47.4)
liere:full	70.0 (69.1-70.9) / 69.3 (68.9-69.7) / 44.7 (44.3-45.1)
comrope-ap:8	ImageNet 224: 65.32 (σ=1), 64.76 (σ=0)
comrope-ld:8	ImageNet 224: 65.49 (σ=1), 65.27 (σ=0)
riemann	CIFAR-100: 64.51
riemann+locality	CIFAR-100: 66.96
EOF
section "LieRE Table 1: every encoding in one backbone, 2D and 3D"
{
	cat <<'EOF'
Test top-1 (%), mean and 95% interval over seeds. *paper*: each rotary
encoding under its own paper's position convention and initialisation
(vit-train's default), and its code's CLS token (ComRoPE's rotated at the
image's centre, the others' unrotated); *common*: every encoding on
posgen's linspace positions as they come, the CLS unrotated. 2D:
Fashion-MNIST, 60k/10k; 3D: Moving Fashion-MNIST
(`experiments/movingfm.sh`: class and direction of an item sliding over
8 frames, 20 classes). The papers' column: LieRE Table 1
(CIFAR-100 / ImageNet-1k / UCF101, ViT-B, 200 epochs), ComRoPE Table 1
and RiemannFormer Table 1 where LieRE has no row. `liere:full` is the
paper's LieRE_64: one block as wide as the head.

EOF
	md_table "encoding | 2D paper | 2D common | 3D paper | 3D common | papers (CIFAR-100 / ImageNet / UCF101)" \
	    "$PLAN.fm2d-paper.top1" "$PLAN.fm2d-common.top1" "$PLAN.mv3d-paper.top1" "$PLAN.mv3d-common.top1" "$PLAN.paper"
	echo
	echo "The orderings the papers report:"
	echo
	claim "$PLAN.fm2d-paper.top1" "abs < rope-axial < rope-mixed < liere:8" 2D
	claim "$PLAN.fm2d-paper.top1" "liere:8 < comrope-ld:8" 2D
	claim "$PLAN.mv3d-paper.top1" "abs < rope-axial < rope-mixed < liere:8" 3D
	claim "$PLAN.mv3d-paper.top1" "liere:full < liere:8" 3D
	echo
	seeded $CAP "$KEYC"
	echo "liere's own convention (linspace) is the common one, so its two arms are one run."
	echo
	echo "Training: $(wall). Validation curves (seed 1, paper arm), 2D: ![](results/$SCALE/t1_encodings-curves-2d.png)"
	echo "3D: ![](results/$SCALE/t1_encodings-curves-3d.png)"
	echo
} >> "$RES/$EXP.md"
curves t1_encodings-curves-2d $(for r in $PLAIN $ROTARY; do echo "fm2d-paper/$r"; done)
curves t1_encodings-curves-3d $(for r in $PLAIN $ROTARY; do echo "mv3d-paper/$r"; done)
sequential $CAP "$KEYC"
finish
