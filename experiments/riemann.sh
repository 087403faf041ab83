#!/bin/sh
# riemann.sh - RiemannFormer Table 1: no position encoding < sinusoidal <
# RoPE < RiemannFormer < RiemannFormer + locality focusing, and locality
# focusing alone, on the paper's configuration: 6 layers, 4 heads, 64
# patches of 4 x 4 (Fashion-MNIST at 32 x 32).
. "$(dirname "$0")/lib.sh"
parse_options "$@"
ROWS="none sincos rope-axial lf-only riemann riemann+lf"
words() {
	case $1 in
	lf-only) echo "pe=none vt=--locality" ;;
	riemann+lf) echo "pe=riemann vt=--locality" ;;
	*) echo "pe=$1" ;;
	esac
}
for s in $SEEDS; do
	for r in $ROWS; do
		plan "fm2d/$r" task=fm2d $(words $r) model=riemann res=32 seed=$s
	done
done
run_plan
colstats fm2d > "$PLAN.fm2d.top1"
cat > "$PLAN.paper" <<'EOF2'
none	79.61 / 53.37
sincos	86.06 / 59.81
rope-axial	87.91 / 62.37
lf-only	87.30 / 63.01
riemann	89.87 / 64.51
riemann+lf	90.82 / 66.96
EOF2
section "RiemannFormer Table 1"
{
	cat <<'EOF2'
Test top-1 (%) on Fashion-MNIST at 32 x 32 (an 8 x 8 grid of 4 x 4
patches, as the paper's 64), dim 64, 6 layers, 4 heads, mean and 95%
interval over seeds. lf: locality focusing (vit-train --locality). Paper:
CIFAR-10 / CIFAR-100.

EOF2
	md_table "encoding | ours | paper (CIFAR-10 / CIFAR-100)" "$PLAN.fm2d.top1" "$PLAN.paper"
	echo
	claim "$PLAN.fm2d.top1" "none < sincos < rope-axial < riemann < riemann+lf"
	echo
	seeded $CAP "$ALLSTEPS"
	echo "Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
sequential $CAP "$ALLSTEPS"
finish
