# lib.sh - what every experiment script shares; sourced, never run.
#
# An experiment is a plan: one line per run, "LABEL<TAB>WORDS", where the
# words (k=v, see run1.sh) say what to train and how to evaluate it.
# run_plan runs whatever of the plan has no result yet, --jobs at a time on
# one thread each, so an interrupted campaign goes on where it stopped, and
# runs that two experiments share (Table 1's models are Table 3's) are made
# once.  The script then turns the results into its table, plots and
# section of EXPERIMENTS.md with the helpers below.
#
# Results, committed: $RES/runs/KEY.json (one JSON line per run, KEY the
# hash of everything that decides it: the commands with their every option
# and the data's own), $RES/logs/TRAINKEY.jsonl (vit-train's log of the
# model's first training), and per experiment $RES/NAME.jsonl (its runs'
# lines in plan order), NAME.md, NAME-*.png and .svg.  Models and data,
# which the results do not need, stay in $CACHE.
set -eu
EXPDIR=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$EXPDIR/.." && pwd)
[ -x "$TOP/bin/vit-train" ] && PATH="$TOP/bin:$PATH"
export PATH TOP EXPDIR
LC_ALL=C
export LC_ALL
# own_cls PE: run1.sh's cls word for an encoding whose authors' code
# gives the CLS token a position: ComRoPE's (its rotations and its APE,
# ape), at 0.5 per axis, the image's centre (posgen --cls centre).  None
# for the others: LieRE's, RoPE-ViT's and timm's code leave it unrotated,
# and so does vit-train for RiemannFormer.
own_cls() { case $1 in comrope*|ape) echo cls=centre ;; esac; }

# Every experiment, in the order of EXPERIMENTS.md.
ALL="t1_encodings t2_sharing t3_shuffle block_size model_size t5_flops resolution data_efficiency compute_efficiency riemann fairness precision"

usage() {
	cat <<EOF
usage: sh $0 [--scale quick|full] [--seeds LIST] [--only PATTERN]
          [--jobs N] [--results DIR] [--cache DIR] [--dry-run]
  --scale S     quick: every pipeline on tiny data, for the tests;
                full: the scale EXPERIMENTS.md reports (default quick)
  --seeds LIST  run only these of the scale's seeds (quick 1, full 1,2,3),
                e.g. 1: a campaign in parts; the tables show every seed
                that has run
  --only PAT    run only the runs whose label (as the table's column/row,
                e.g. fm2d-paper/liere:8) matches the grep pattern PAT;
                the tables show what has run
  --jobs N      runs side by side, each on one thread (default 2)
  --results DIR results root (default experiments/results)
  --cache DIR   data and models (default experiments/cache)
  --dry-run     list the runs to do and exit
EOF
}

# parse_options "$@": the options above into SCALE SEEDS JOBS RES CACHE DRY.
parse_options() {
	SCALE=quick SEEDS= JOBS=2 DRY=0 ONLY=
	RESROOT=${EXP_RESULTS:-$EXPDIR/results} CACHE=${EXP_CACHE:-$EXPDIR/cache}
	while [ $# -gt 0 ]; do
		case $1 in
		--scale|--seeds|--only|--jobs|--results|--cache)
			[ $# -ge 2 ] || { echo "$0: $1 needs a value" >&2; exit 2; }
			case $1 in
			--scale) SCALE=$2 ;; --seeds) SEEDS=$2 ;; --only) ONLY=$2 ;; --jobs) JOBS=$2 ;;
			--results) RESROOT=$2 ;; --cache) CACHE=$2 ;;
			esac
			shift 2 ;;
		--dry-run) DRY=1; shift ;;
		-h|--help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
		esac
	done
	case $SCALE in quick|full) ;; *) echo "$0: --scale: quick or full, not '$SCALE'" >&2; exit 2 ;; esac
	case $JOBS in ''|*[!0-9]*|0) echo "$0: --jobs: a positive integer, not '$JOBS'" >&2; exit 2 ;; esac
	RUNSEEDS=$(echo "$SEEDS" | tr ',' ' ')
	[ "$SCALE" = quick ] && SEEDS=1 || SEEDS="1 2 3"
	for s in $RUNSEEDS; do
		case $s in *[!0-9]*) echo "$0: --seeds: integers, not '$s'" >&2; exit 2 ;; esac
	done
	mkdir -p "$RESROOT/$SCALE" "$CACHE"
	RES=$(cd "$RESROOT/$SCALE" && pwd)
	CACHE=$(cd "$CACHE" && pwd)
	mkdir -p "$RES/runs" "$RES/logs"
	export SCALE JOBS RES CACHE
	EXP=$(basename "$0" .sh)
	PLAN="$CACHE/plan.$EXP.$$"
	KEYS=${EXP_KEYS:-$PLAN.keys}
	: > "$PLAN"
	trap 'rm -f "$PLAN" "$PLAN".*' EXIT
}

# plan LABEL WORDS...: one run of the experiment.
plan() {
	label=$1; shift
	printf '%s\t%s\n' "$label" "$*" >> "$PLAN"
}

# run_plan: the plan's runs that have no result yet, --jobs at a time.
run_plan() {
	n=$(wc -l < "$PLAN")
	plan_runs | grep -e "^[^	]*${ONLY:-.}" | awk -F '\t' -v seeds="$RUNSEEDS" '
	    { keep = seeds == ""; n = split(seeds, s, " ")
	      for (i = 1; i <= n; i++) if (index(" " $2 " ", " seed=" s[i] " ")) keep = 1 }
	    keep && (getline l < $3) < 0 && !seen[$2]++ { print $2 }
	    { close($3) }' > "$PLAN.todo"
	todo=$(wc -l < "$PLAN.todo")
	echo "$EXP: $n runs in the plan, $todo to do ($SCALE scale, $JOBS at a time)" >&2
	if [ "$DRY" = 1 ]; then
		cat "$PLAN.todo"
		exit 0
	fi
	[ "$todo" -eq 0 ] && return 0
	run_lines "$PLAN.todo"
}

# run_lines FILE: run1.sh for each line of words in FILE, --jobs at a time.
run_lines() {
	xargs -r -P "$JOBS" -L 1 sh "$EXPDIR/run1.sh" < "$1"
}

# runjson WORDS: the path of the run's JSON line, there or not.  Its key
# is made once (run1.sh --key, a shell and hashes) and kept in $KEYS for
# the tables' many lookups: the plan's own file, or run.sh's, which every
# experiment it starts shares (their plans share runs).
runjson() {
	touch "$KEYS"
	k=$(awk -F '\t' -v w="$1" '$1 == w { print $2; exit }' "$KEYS")
	if [ -z "$k" ]; then
		k=$(eval "sh \"\$EXPDIR/run1.sh\" --key $1")
		printf '%s\t%s\n' "$1" "$k" >> "$KEYS"
	fi
	echo "$RES/runs/$k.json"
}

# plan_runs: "LABEL<TAB>WORDS<TAB>FILE" for every run of the plan, FILE
# the path of its JSON line, there or not (every key made once, in $KEYS).
plan_runs() {
	touch "$KEYS"
	cut -f2 "$PLAN" | awk 'FILENAME == ARGV[1] { split($0, a, "\t"); k[a[1]]; next }
	    !($0 in k) && !seen[$0]++' "$KEYS" - | while IFS= read -r w; do
		runjson "$w" > /dev/null
	done
	awk -F '\t' -v runs="$RES/runs" 'FILENAME == ARGV[1] { key[$1] = $2; next }
	    { print $1 "\t" $2 "\t" runs "/" key[$2] ".json" }' "$KEYS" "$PLAN"
}

# planfield FIELD: "LABEL<TAB>WORDS<TAB>VALUE" for every run of the plan
# that has one; FIELD is a key of the run's JSON line (top1, loss, cpu,
# shuffle_drop, ...), read as jfield reads it.  One pass for the plan:
# tables ask for many.
planfield() {
	plan_runs | awk -F '\t' -v field="$1" '
	{ if ((getline line < $3) <= 0) next
	  close($3)
	  if (!match(line, "\"" field "\":\"?[^\",}]*")) next
	  v = substr(line, RSTART + length(field) + 3, RLENGTH - length(field) - 3)
	  sub(/^"/, "", v)
	  if (v != "" && v != "null") print $1 "\t" $2 "\t" v }'
}

# results FIELD: "LABEL<TAB>VALUE" for every run of the plan that has one.
results() {
	planfield "$FIELD" | cut -f1,3
}

# jfield KEY FILE: the number or string of KEY in a flat JSON line.
jfield() {
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$2" | head -n 1
}

# stats: "LABEL<TAB>VALUE" lines in, "LABEL n mean lo hi" out in the order
# labels first appear, values times 100 (accuracies in percent when
# PERCENT=1, the default); lo..hi is the 95% t interval of the mean over
# the runs (seeds), empty for one run.
stats() {
	awk -F '\t' -v pc="${PERCENT:-1}" '
	BEGIN { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
	    "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", t, " ") }
	{ v = $2 * (pc ? 100 : 1); if (!($1 in n)) order[++k] = $1
	  n[$1]++; s[$1] += v; ss[$1] += v * v }
	END { for (i = 1; i <= k; i++) { l = order[i]; m = s[l] / n[l]
		if (n[l] < 2) { printf "%s\t%d\t%.2f\t\t\n", l, n[l], m; continue }
		var = (ss[l] - n[l] * m * m) / (n[l] - 1); if (var < 0) var = 0
		q = n[l] - 1 <= 20 ? t[n[l] - 1] : 1.96
		h = q * sqrt(var / n[l])
		printf "%s\t%d\t%.2f\t%.2f\t%.2f\n", l, n[l], m, m - h, m + h } }'
}

# claim STATSFILE "A < B < C" [WHERE]: whether each step of the ordering
# holds here: "holds" where the intervals separate that way, "reversed"
# where they separate the other way, "not separated" where they overlap,
# and open where a row has not run, has one run (no interval) or overlaps
# with seeds of $SEEDS still to run; then the
# verdict on the whole ordering.  WHERE (e.g. "2D") heads the line.
claim() {
	echo "$2" | tr '<' '\n' | sed 's/^ *//; s/ *$//' > "$PLAN.claim"
	awk -F '\t' -v claim="$2" -v where="${3:+$3: }" -v want="$(echo ${SEEDS:-} | wc -w)" '
	FILENAME == ARGV[1] { n[$1] = $2; m[$1] = $3; lo[$1] = $4; hi[$1] = $5; next }
	{ c[++k] = $0 }
	END { nrev = nopen = nsame = 0
	  for (i = 1; i < k; i++) { a = c[i]; b = c[i + 1]
		if (!(a in m) || !(b in m)) { v = "not measured"; nopen++ }
		else if (lo[a] == "" || lo[b] == "") { v = "one run, no interval"; nopen++ }
		else if (hi[a] < lo[b]) v = "holds"
		else if (hi[b] < lo[a]) { v = "reversed"; nrev++ }
		else if (n[a] < want || n[b] < want) { v = "not separated yet, seeds missing"; nopen++ }
		else { v = "not separated"; nsame++ }
		s = s sprintf("%s%s < %s: %s", i > 1 ? "; " : "", a, b, v) }
	  # A reversal decides; missing runs leave it open; overlapping
	  # intervals (with every run made) are a plain "does not hold".
	  all = nrev ? "does not hold: reversed" : nopen ? "not decided yet: runs missing" : \
	      nsame ? "does not hold: not separated" : "holds"
	  printf "- %s`%s`: **%s** (%s)\n", where, claim, all, s }' "$1" "$PLAN.claim"
}

# colstats PREFIX: stats of $FIELD (default top1) over the runs whose label
# starts with PREFIX/, labelled by the rest of their label.
colstats() {
	FIELD=${FIELD:-top1} results | awk -F '\t' -v p="$1/" 'index($1, p) == 1 {
	    print substr($1, length(p) + 1) "\t" $2 }' | stats
}

# md_table HEADER FILE...: a markdown table, a row per label of the first
# FILE (or of the file $ROWFILE) and a column per FILE: a stats file ("mean (lo-hi)") or a
# "LABEL<TAB>TEXT" file (the papers' numbers, shown as they are).
md_table() {
	header=$1; shift
	echo "| $header |"
	echo "$header" | awk -F '|' '{ s = "|"; for (i = 1; i <= NF; i++) s = s "---|"; print s }'
	cut -f1 "${ROWFILE:-$1}" | while IFS= read -r l; do
		row="| $l |"
		for f in "$@"; do
			c=$(awk -F '\t' -v l="$l" '$1 == l { if (NF <= 2) print $2
			    else if ($4 == "") printf "%s (%d run)", $3, $2
			    else printf "%s (%s-%s, %d runs)", $3, $4, $5, $2 }' "$f")
			row="$row ${c:--} |"
		done
		echo "$row"
	done
}

# plot_series NAME TITLE XLABEL YLABEL [OPTION...]: NAME.png and NAME.svg
# in $RES from $RES/NAME.dat, blocks "SERIES<TAB>X<TAB>MEAN<TAB>LO<TAB>HI"
# (one-run points have no interval and are drawn without a bar).  A series
# "ENCODING ARM" takes its colour from the encoding and its dashes from
# the arm, so that fifteen series stay apart.  Options: logx, a log2 x
# axis; panels, one panel per arm (an encoding keeps its colour across
# them) on a 0 .. 100 axis, where more series would crowd one plot (an
# interval of a few seeds can reach past 0 or 100; the table has it).
plot_series() {
	name=$1 title=$2 xlabel=$3 ylabel=$4 logx= panels=
	shift 4
	for o in "$@"; do
		case $o in logx) logx="set logscale x 2" ;; panels) panels=1 ;; esac
	done
	dat="$RES/$name.dat"
	awk -F '\t' '{ if ($1 != s) { if (NR > 1) printf "\n\n"; s = $1; printf "\"%s\"\n", s }
	    lo = $4 == "" ? $3 : $4; hi = $5 == "" ? $3 : $5; print $2, $3, lo, hi }' "$dat" > "$PLAN.gp.dat"
	# gnuplot's plot command, one per panel (one in all without panels)
	cut -f1 "$dat" | uniq | awk -v f="$PLAN.gp.dat" -v panels="$panels" '{
	    e = $1; a = $0; sub(/^[^ ]*/, "", a); sub(/^ /, "", a)
	    if (!(e in ce)) ce[e] = ne++
	    if (!(a in ca)) { ca[a] = na++; arm[na - 1] = a }
	    p = panels ? ca[a] : 0
	    line[p] = line[p] (line[p] == "" ? "" : ", ") \
	        sprintf("\"%s\" index %d using 1:2:3:4 with yerrorlines lt %d dt %d title \"%s\"",
	            f, NR - 1, ce[e] % 8 + 1, panels ? 1 : ca[a] + 1, panels ? e : $0) }
	    END { for (p = 0; p < (panels ? na : 1); p++) {
	        if (panels) printf "set title \"%s\"\n", arm[p]
	        printf "plot %s\n", line[p] } }' > "$PLAN.gp.plots"
	n=$(grep -c '^plot ' "$PLAN.gp.plots")
	if [ -n "$panels" ]; then
		size="size $((400 * n)),480" layout="set multiplot layout 1,$n title \"$title\""
		key='set key bottom center font ",9"' range="set yrange [0:100]"
	else
		size="size 800,500" layout="set title \"$title\"" key="set key outside right" range=
	fi
	for fmt in png svg; do
		case $fmt in
		png) term="pngcairo $size noenhanced" ;;
		svg) term="svg $size noenhanced" ;;
		esac
		gnuplot <<EOF
set terminal $term
set output "$RES/$name.$fmt.tmp"
$layout
set xlabel "$xlabel"
set ylabel "$ylabel"
$key
$range
set grid
$logx
$(cat "$PLAN.gp.plots")
EOF
		mv "$RES/$name.$fmt.tmp" "$RES/$name.$fmt"
	done
}

# curves NAME LABEL...: learning curves (vit-plot, the loss a mean over 50
# steps) of the first seed's run of each LABEL, as NAME.png and NAME.svg.
curves() {
	name=$1; shift
	set -- "$@"
	args=
	for l in "$@"; do
		w=$(awk -F '\t' -v l="$l" '$1 == l { print $2; exit }' "$PLAN")
		[ -n "$w" ] || continue
		t=$(eval "sh \"$EXPDIR/run1.sh\" --train-key $w")
		[ -f "$RES/logs/$t.jsonl" ] && args="$args -t '${l##*/}' '$RES/logs/$t.jsonl'"
	done
	[ -n "$args" ] || return 0
	for fmt in png svg; do
		eval "vit-plot --smooth 50 -o \"$RES/$name.$fmt\" $args"
	done
}

# section TITLE: starts $RES/$EXP.md (the rest is appended by the script).
section() {
	{
		echo "## $1"
		echo
		echo "Scale \`$SCALE\`, seeds $(echo $SEEDS | tr ' ' ',') (a row says how many have run); $(machine)." \
		    "Command: \`sh experiments/$EXP.sh --scale $SCALE\`."
		echo
	} > "$RES/$EXP.md"
}

# counted: names on stdin, one a line, as "A (2 runs) and B (1 run)".
counted() {
	sort | uniq -c | awk '{ n = $1; sub(/^ *[0-9]+ /, "")
		printf "%s%s (%d run%s)", (NR > 1 ? " and " : ""), $0, n, (n > 1 ? "s" : "") }'
}

# machine: the CPUs the plan's runs ran on, with their counts, in words.
machine() {
	m=$(planfield cpu | awk -F '\t' '!seen[$2]++ { print $3 }' | counted)
	if [ -z "$m" ]; then
		[ -s "$PLAN" ] && echo "no runs yet" || echo "no runs"
		return
	fi
	echo "$m, $(getconf _NPROCESSORS_ONLN) cores, runs on one thread each, $JOBS at a time"
}

# wall: total training hours of the plan's runs, for the text.
wall() {
	FIELD=train_s results | awk -F '\t' '{ s += $2 } END { printf "%.2f h of training", s / 3600 }'
}

# finish: the experiment's raw lines as $RES/$EXP.jsonl, in plan order.
finish() {
	plan_runs | awk -F '\t' '(getline l < $3) > 0 && !seen[l]++ { print l } { close($3) }' > "$RES/$EXP.jsonl.tmp"
	mv "$RES/$EXP.jsonl.tmp" "$RES/$EXP.jsonl"
	echo "$EXP: $RES/$EXP.md" >&2
}
