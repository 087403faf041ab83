#!/bin/sh
# report.sh - EXPERIMENTS.md from the experiments' sections in the
# results: at the repository's root for the full scale, in the results
# directory for the quick one.  Nothing in it is written by hand: this
# script's text and the scripts' tables.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
out="$RES/EXPERIMENTS.md"

# summary: every step of every claim of the papers that a section checks
# (its $RES/NAME.claims, written by settle), with its verdict, paired
# difference and interval (the section gives the numbers behind it); then
# each step across the sections: where it is decided, or what would.
summary() {
	echo "## The papers' claims at a glance"
	echo
	echo "Each step A < B of each ordering a paper claims, judged on the per-seed"
	echo "paired difference B - A (test top-1 in points unless the section says"
	echo "otherwise): **holds** or **reversed** where a paired t test, Holm-corrected"
	echo "over the section's steps, rejects equality at 0.05 that way; **equivalent**"
	echo "where the difference's 90% interval lies within +-$MARGIN points (two"
	echo "one-sided tests); **undecided** otherwise (Statistics, below). For an"
	echo "undecided step, *to decide* is about how many seeds would decide it"
	echo "(power 0.8) were its mean difference and per-seed spread the true ones:"
	echo "to separate it at Holm's strictest level over the section's steps, or to"
	echo "show it equivalent, whichever takes fewer; a guide from few seeds, not a"
	echo "promise (stats.awk's seeds())."
	echo
	echo "| section | where | ordering | step | verdict | B - A (95% interval) | p (Holm) | seeds | to decide |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for e in $ALL; do
		[ -f "$RES/$e.claims" ] || continue
		t=$(sed -n '1s/^## \([^:]*\).*/\1/p' "$RES/$e.md")
		awk -F '\t' -v t="$t" -v margin="$MARGIN" -v bystep="$PLAN.bystep" "$STATS"'
		FNR == NR { m += $6 >= 2; next }
		{ d = $6 >= 2 ? sprintf("%+.2f (%.2f to %.2f)", $7, $8, $9) : ($6 ? "one seed" : "not run")
		    p = $6 >= 2 ? sprintf("%.2g (%.2g)", $10, $11) : "-"
		    need = "-"
		    if ($5 == "undecided" && $6 >= 2) {
			need = seeds($7, ($9 - $7) / tq(0.975, $6 - 1) * sqrt($6), m, margin)
			need = need == "" ? "over 1000" : need
		    }
		    printf "| %s | %s | `%s` | %s < %s | **%s** | %s | %s | %d | %s |\n", t, ($1 == "" ? "-" : $1), $2, $3, $4, $5, d, p, $6, need
		    printf "%s < %s\t%s%s\t%s\t%s\t%s\t%d\n", $3, $4, t, ($1 == "" ? "" : ", " $1), $5, ($6 >= 2 ? sprintf("%+.2f", $7) : ""), need, $6 >> bystep }' \
		    "$RES/$e.claims" "$RES/$e.claims"
	done
	echo
	[ -s "$PLAN.bystep" ] || return 0
	echo "Each step across the sections that judge it: where it is decided, and"
	echo "for the rest, where the fewest seeds would by the estimate decide it;"
	echo "past twice the cap of sequential seeding ($((2 * CAP))), no affordable number of"
	echo "seeds decides it in these designs."
	echo
	echo "| step | decided | undecided in | fewest seeds to decide (where) |"
	echo "|---|---|---|---|"
	awk -F '\t' -v far=$((2 * CAP)) '!($1 in n) { order[++k] = $1 } { n[$1]++ }
	    $3 != "undecided" { dec[$1] = dec[$1] (dec[$1] == "" ? "" : "; ") $2 ": " $3 " (" $4 ")"; next }
	    { und[$1]++; if ($6 >= 2) est[$1] }
	    $5 ~ /^[0-9]+$/ && (!($1 in best) || $5 + 0 < best[$1]) { best[$1] = $5 + 0; bw[$1] = $2 }
	    END { for (i = 1; i <= k; i++) { s = order[i]
		printf "| %s | %s | %d of %d | %s |\n", s, (s in dec ? dec[s] : "-"), und[s], n[s],
		    (s in best ? best[s] " (" bw[s] ")" (best[s] > far ? ": past the cap" : "") : s in est ? "over 1000: past the cap" : und[s] ? "- (one seed)" : "-") } }' "$PLAN.bystep"
	echo
}
# cpus: the CPUs every run of the scale ran on (run1.sh's "cpu"), in words.
cpus() {
	for f in "$RES"/runs/*.json; do [ -f "$f" ] && jfield cpu "$f"; done | counted
}
[ "$SCALE" = full ] && [ "$RES" = "$(cd "$EXPDIR/results/full" && pwd)" ] && out="$TOP/EXPERIMENTS.md"
{
	cat <<EOF2
# Experiments

The experiments of the LieRE, ComRoPE and RiemannFormer papers
(\`../shared/papers/\`), run with vitpipe's commands only: each table or
figure is one POSIX sh script in \`experiments/\`. This file is written by
\`sh experiments/report.sh --scale $SCALE\` from the committed results in
\`experiments/results/$SCALE/\`; nothing in it is edited by hand.

EOF2
	summary
	cat <<EOF2
## How it was run

- **Data.** 2D: Debian's \`dataset-fashion-mnist\`, all 60k training and
  10k test images, 28 x 28 in 4 x 4 patches (a 7 x 7 grid). 3D: Moving
  Fashion-MNIST, made by \`experiments/movingfm.sh\` from the same images
  through FFmpeg (FFV1 clips, read back by patchify's video path): 12k
  training and 2k test clips of 8 frames of 32 x 32, an item sliding left
  or right; the label is class and direction (20 classes), so it needs the
  order of the frames. No CIFAR, ImageNet or UCF101 can be downloaded here.
- **Model and training.** Table 1's backbone: dim 64, depth 4, heads 4,
  mlp 128, CLS pooling; AdamW at lr 2e-3 with 50 warm-up steps and a
  cosine decay, batch 64, weight decay 0.05, 3 epochs (the README's
  recipe, on all the data); the clips 10 epochs. Small enough that a run
  takes minutes on one core (its time is in its JSON line), so that a
  campaign goes in parts of about 40 minutes (\`--seeds\`, \`--only\`),
  each finished and committed on its own. The papers train ViT-B for 200 epochs: our numbers are not
  theirs, and only the orderings are compared.
- **Statistics.** Every row is the mean over seeds 1, 2 and 3, or those
  of them that have run (the row says how many; a seed sets data order,
  subset and initialisation), with the 95% t interval of the mean. Two
  encodings are compared by the paired difference over the seeds both
  have run (same data order, subset and initialisation seed): its mean,
  95% t interval and paired t test, with Holm's correction over every
  step of every claim of a section. A step holds or is reversed where
  the corrected p-value is below 0.05; the two are equivalent where the
  difference's 90% interval lies within +-$MARGIN points (TOST at 0.05),
  the same margin for every table; otherwise it is undecided, which
  says that these seeds cannot tell, not that the claim is false. An
  ordering is reversed if one of its steps is, undecided if one is,
  equivalent if one is, and holds if all do. The functions are
  experiments/stats.awk, tested against known answers.
- **Sequential seeding.** The key claims (rotary against abs, LieRE
  against RoPE-Mixed, ComRoPE against LieRE in Table 1's 2D and 3D and
  on each task, and RoPE-Mixed against axial RoPE past the training
  size) get one seed more at a time, judged as the verdicts are, while
  they stay undecided, up to 10 seeds; from 3 seeds on, a claim whose
  *to decide* estimate is over 20 gets no more (futile at this design:
  the hours go where they decide). The sections of the papers' other
  tables (Tables 2 to 4, block size, resolution, RiemannFormer), whose
  steps no other section judges, seed every step of their claims under
  the same rule. Each section lists the seeds it added; a model that
  several tables share (Table 1's are Table 3's, its 2D ones Table 4's
  main size) has in each every seed any of them added.
- **Position conventions.** Each rotary encoding runs twice where it
  matters: under its own paper's convention and initialisation
  (vit-train's default) with its code's CLS token (ComRoPE's rotated at
  the image's centre, the others' unrotated), and under posgen's
  linspace positions as they come, the CLS unrotated (the common
  convention).
- **Running.** Every run is one thread, and runs go two at a time
  (\`--jobs 2\`). A run's wall time is in its JSON line. Results are
  cached by a hash of each run's commands: an interrupted campaign goes
  on where it stopped (a training cut short, from its last epoch's
  checkpoint), and one experiment or one seed can be run alone:
  \`sh experiments/run.sh --scale full --seeds 1 t1_encodings\`. run.sh
  puts the runs of all the experiments it is given in one pool, so no
  core waits at the end of one experiment for the next. The runs ran on
  $(cpus); each section names its own. Two CPUs round the same commands
  differently (their libraries pick other kernels), a difference the
  intervals over seeds take in like any other between runs. Each run's
  JSON names the commit, a hash of the programs and the plan of its
  fp32 products (which library computes each shape, timed once per
  machine: results/$SCALE/plans/).
  \`sh experiments/run.sh --scale quick\` runs every script on tiny data
  (the tests do). Besides the results, the only figures here are the
  papers' own, quoted in each script beside their table.

EOF2
	for e in $ALL; do
		if [ -f "$RES/$e.md" ]; then
			sed "s|(results/$SCALE/|(experiments/results/$SCALE/|g" "$RES/$e.md"
		else
			echo "## $e"
			echo
			echo "Not run yet at the $SCALE scale: \`sh experiments/run.sh --scale $SCALE $e\`."
			echo
		fi
	done
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "report.sh: $out" >&2
