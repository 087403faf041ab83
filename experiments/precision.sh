#!/bin/sh
# precision.sh - bf16 training (vit-train --precision bf16) against fp32 on
# the README's recipe (the fairness experiment's runs, whose fp32 models
# this shares), for the encodings of issue 22's bar: bf16 must reach
# fp32's test top-1 within fp32's interval over seeds.  On a CPU without
# AVX512_BF16 run1.sh emulates the bf16 runs (VITPIPE_BF16=emulate: the
# same numbers, not the speed) and says which in the run's "bf16" field.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
ROWS="abs rope-mixed liere:8 comrope-ld:8"
for s in $SEEDS; do
	for r in $ROWS; do
		plan "fp32/$r" task=fm2d pe=$r frac=0.2 seed=$s	# = fairness's paper/$r
		plan "bf16/$r" task=fm2d pe=$r frac=0.2 "vt='--precision bf16'" seed=$s
	done
done
run_plan
colstats fp32 > "$PLAN.fp32"
colstats bf16 > "$PLAN.bf16"
section "bf16 training against fp32"
{
	cat <<'EOF2'
Test top-1 (%) after the README's recipe (as the fairness experiment),
mean and 95% interval over seeds, trained with the model's products in
fp32 and in bf16 (`vit-train --precision bf16`: bf16 operands, fp32 sums;
evaluated in fp32, the checkpoints being fp32).

EOF2
	# How each bf16 run multiplied: run1.sh's "bf16" field.
	FIELD=bf16 results | grep '^bf16/' | cut -f2 | sort | uniq -c > "$PLAN.how" || :
	n=$(FIELD=top1 results | grep -c '^bf16/' || :)
	awk -v n="$n" '{ c[$2] = $1; k += $1 } END {
		s = "On a CPU without AVX512_BF16 run1.sh emulates bf16 (VITPIPE_BF16=emulate): the same numbers, not the speed."
		if (k) s = s sprintf(" bf16 ran on the CPU'"'"'s bf16 kernels in %d of the %d bf16 runs, emulated in %d.", c["native"], n, c["emulated"])
		if (n > k) s = s sprintf(" %d of the %d ran before run1.sh recorded which: their JSON lines do not say how they multiplied.", n - k, n)
		print s }' "$PLAN.how"
	echo
	md_table "encoding | fp32 | bf16" "$PLAN.fp32" "$PLAN.bf16"
	echo
	echo "bf16's mean against fp32's interval:"
	echo
	awk -F '\t' 'NR == FNR { n[$1] = $2; m[$1] = $3; lo[$1] = $4; hi[$1] = $5; next }
	    { if (!($1 in m)) v = "not measured in fp32"
	      else if ($4 == "" || lo[$1] == "") v = "one run, no interval"
	      else if ($3 >= lo[$1] && $3 <= hi[$1]) v = "within"
	      else if ($3 > hi[$1]) v = "above"
	      else v = "below"
	      printf "- %s: %.2f against %s (%s)\n", $1, $3,
	          lo[$1] == "" ? m[$1] : lo[$1] "-" hi[$1], v }' "$PLAN.fp32" "$PLAN.bf16"
	echo
	echo "Training: $(wall)."
	echo
} >> "$RES/$EXP.md"
finish
