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
# and the data's own), $RES/logs/TRAINKEY.jsonl.gz (vit-train's log of the
# model's first training, thinned past its first epoch), and per experiment $RES/NAME.jsonl (its runs'
# lines in plan order), NAME.md, NAME-*.png and .svg.  Models and data,
# which the results do not need, stay in $CACHE.
set -eu
# (a test that sources this file names the directory in EXPDIR)
EXPDIR=${EXPDIR:-$(cd "$(dirname "$0")" && pwd)}
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
ALL="t1_encodings t2_sharing t3_shuffle block_size model_size t5_flops resolution data_efficiency compute_efficiency riemann fairness precision pilot tasks analysis"

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
                the tables show what has run; sequential seeding adds
                seeds to the claims whose two labels match it
  --jobs N      runs side by side, each on one thread (default 2)
  --results DIR results root (default experiments/results)
  --cache DIR   data and models (default experiments/cache)
  --dry-run     list the runs to do and exit
EOF
}

# parse_options "$@": the options above into SCALE SEEDS JOBS RES CACHE DRY.
parse_options() {
	ARGS="$*"
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
	# sequential's key claims for a section that seeds every step: at the
	# full scale only (tasks.sh's quick run proves the seeding)
	[ "$SCALE" = quick ] && ALLSTEPS= || ALLSTEPS=all
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
	# a part stopped from outside (campaign.sh --limit) leaves no plan
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# The runs that several sections plan under labels of their own (Table
# 1's models are Table 3's, its 2D ones Table 4's main size, its liere:8
# Table 2's row of nothing shared): a line a run, its "SECTION LABEL"
# pairs.  A section plans such a run with every seed any of them seeded.
SHARED=$(for r in abs rope-axial rope-mixed liere:8 liere:full; do
	g="t1_encodings fm2d-paper/$r t3_shuffle fm2d/$r"
	[ "$r" = liere:full ] || g="$g model_size main/$r"
	[ "$r" = liere:8 ] && g="$g t2_sharing fm2d/none"
	echo " $g "
	echo " t1_encodings mv3d-paper/$r t3_shuffle mv3d/$r "
done)

# plan LABEL WORDS...: one run of the experiment; for the first seed, also
# the seeds that sequential seeding gave the label ($RES/$EXP.seeds), or
# gave the same run under another section's label (SHARED).
plan() {
	label=$1; shift
	printf '%s\t%s\n' "$label" "$*" >> "$PLAN"
	case " $* " in *" seed=1 "*) ;; *) return 0 ;; esac
	case $SHARED in
	*" $EXP $label "*) pairs=$(printf '%s\n' "$SHARED" | grep -F " $EXP $label ") ;;
	*) [ -f "$RES/$EXP.seeds" ] || return 0; pairs="$EXP $label" ;;
	esac
	n=$(printf '%s\n' "$pairs" | awk -v res="$RES" '{
	    for (i = 1; i < NF; i += 2) { f = res "/" $i ".seeds"
		while ((getline line < f) > 0) { split(line, a, "\t"); if (a[1] == $(i + 1) && a[2] > n) n = a[2] + 0 }
		close(f) } } END { print n + 0 }')
	k=$(($(echo $SEEDS | wc -w) + 1))
	while [ "$k" -le "$n" ]; do
		printf '%s\t%s\n' "$label" "$(echo " $* " | sed "s/ seed=1 / seed=$k /; s/^ //; s/ \$//")" >> "$PLAN"
		k=$((k + 1))
	done
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
	[ -e "$KEYS" ] || : > "$KEYS"
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
	[ -e "$KEYS" ] || : > "$KEYS"
	cut -f2 "$PLAN" | awk 'FILENAME == ARGV[1] { split($0, a, "\t"); k[a[1]]; next }
	    !($0 in k) && !seen[$0]++' "$KEYS" - | while IFS= read -r w; do
		runjson "$w" > /dev/null
	done
	awk -F '\t' -v runs="$RES/runs" 'FILENAME == ARGV[1] { key[$1] = $2; next }
	    { print $1 "\t" $2 "\t" runs "/" key[$2] ".json" }' "$KEYS" "$PLAN"
}

# STATS: the functions of stats.awk, for awk programs that need them.
STATS=$(cat "$EXPDIR/stats.awk")

# JF: awk's jf(LINE, KEY), the number or string of KEY in a flat JSON line
# ("" where it has none), as jfield reads it.
JF='function jf(line, k,  v) {
	if (!match(line, "\"" k "\":\"?[^\",}]*")) return ""
	v = substr(line, RSTART + length(k) + 3, RLENGTH - length(k) - 3)
	sub(/^"/, "", v)
	return v == "null" ? "" : v }'

# planfield FIELD: "LABEL<TAB>WORDS<TAB>VALUE" for every run of the plan
# that has one; FIELD is a key of the run's JSON line (top1, loss, cpu,
# shuffle_drop, ...).  One pass for the plan: tables ask for many.
planfield() {
	plan_runs | awk -F '\t' -v field="$1" "$JF"'
	(getline line < $3) > 0 { close($3); v = jf(line, field); if (v != "") print $1 "\t" $2 "\t" v }'
}

# results FIELD: "LABEL<TAB>VALUE" for every run of the plan that has one.
results() {
	planfield "$FIELD" | cut -f1,3
}

# jfield KEY FILE: the number or string of KEY in a flat JSON line.
jfield() {
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$2" | head -n 1
}

# stats: "LABEL<TAB>VALUE[<TAB>SEED]" lines in, "LABEL n mean lo hi
# SEEDS" out in the order labels first appear, values times 100
# (accuracies in percent when PERCENT=1, the default); lo..hi is the 95% t
# interval of the mean over the runs (seeds), empty for one run; SEEDS is
# "SEED=VALUE,..." (the values as scaled), for claim's paired differences.
stats() {
	awk -F '\t' -v pc="${PERCENT:-1}" "$STATS"'
	{ v = $2 * (pc ? 100 : 1); if (!($1 in n)) order[++k] = $1
	  n[$1]++; s[$1] += v; ss[$1] += v * v
	  if ($3 != "") sv[$1] = sv[$1] (sv[$1] == "" ? "" : ",") $3 "=" v }
	END { for (i = 1; i <= k; i++) { l = order[i]; m = s[l] / n[l]
		if (n[l] < 2) { printf "%s\t%d\t%.2f\t\t\t%s\n", l, n[l], m, sv[l]; continue }
		var = (ss[l] - n[l] * m * m) / (n[l] - 1); if (var < 0) var = 0
		h = tq(0.975, n[l] - 1) * sqrt(var / n[l])
		printf "%s\t%d\t%.2f\t%.2f\t%.2f\t%s\n", l, n[l], m, m - h, m + h, sv[l] } }'
}

# The verdicts.  A claim "A < B" is judged on the per-seed paired
# difference B - A (seeds share data order, subset and initialisation):
# it holds, or is reversed, where the paired t test's p-value, Holm-
# corrected over every step of every claim of the section, is below 0.05
# in that direction; the two are equivalent where the difference's 90%
# interval lies within +-MARGIN points (two one-sided tests at 0.05);
# otherwise it is undecided.  An ordering "A < B < C" is judged step by
# step; as a whole it is reversed if a step is, undecided if a step is,
# else equivalent if a step is, else it holds.
MARGIN=0.5
# Sequential seeding's cap (seeds per label), every section's.
CAP=10

# claim STATSFILE "A < B < C" [WHERE]: the ordering's steps, measured on
# the per-seed values of STATSFILE (stats' output), into $PLAN.steps; a
# placeholder line, which settle makes the verdict once the section has
# all its claims (Holm's correction needs them all).  WHERE (e.g. "2D")
# heads the line.
claim() {
	id=$(($(cat "$PLAN.nclaim" 2>/dev/null || echo 0) + 1))
	echo "$id" > "$PLAN.nclaim"
	echo "@@claim $id@@"
	echo "$2" | tr '<' '\n' | sed 's/^ *//; s/ *$//' > "$PLAN.claim"
	awk -F '\t' -v id="$id" -v claim="$2" -v where="${3:-}" -v want="$(echo ${SEEDS:-} | wc -w)" \
	    -v OUT="$PLAN.steps" -v src="${1#"$PLAN".}" "$STATS"'
	FILENAME == ARGV[1] { m = split($6, kv, ","); for (i = 1; i <= m; i++) { split(kv[i], p, "="); v[$1, p[1]] = p[2] }
		seen[$1]; next }
	{ c[++k] = $0 }
	END { for (i = 1; i < k; i++) { a = c[i]; b = c[i + 1]
		split("", A); split("", B)
		for (key in v) { split(key, q, SUBSEP); if (q[1] == a) A[q[2]] = v[key]; if (q[1] == b) B[q[2]] = v[key] }
		paired(A, B, R)
		printf "%s\t%s\t%s\t%s\t%s\t%d\t%d", id, where, claim, a, b, R["n"], want >> OUT
		if (R["n"] >= 2) printf "\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\t%.6g", R["mean"], R["lo"], R["hi"], R["lo90"], R["hi90"], R["p"] >> OUT
		else printf "\t\t\t\t\t\t" >> OUT
		printf "\t%s\n", src >> OUT } }' "$1" "$PLAN.claim"
}

# sequential CAP "PREFIX FIELD A B|...": sequential seeding of key claims,
# after the section's claims (claim: their steps in $PLAN.steps, FILE
# the stats file $PLAN.PREFIX.FIELD, its labels the runs' PREFIX/A);
# "all" makes every step of the section's claims a key claim (a section
# whose steps no other judges).  A key claim A < B is the step of
# that column judged as settle judges it, Holm over all the section's
# steps; while one is undecided, has run every seed planned for it, has
# fewer than CAP and is not futile (stats.awk: at 3 seeds or more, twice
# CAP would by the estimate not decide it), both its labels get one seed
# more ($RES/$EXP.seeds) and the script runs again (its arguments in
# $ARGS).  Not with --seeds: a part of a campaign does not know the rest.
# With --only, the claims are judged as without it, on every run that has
# a result, but only a claim whose two labels match the pattern gets
# seeds: one part of a campaign can seed the cheap claims while another
# runs the rest.
sequential() {
	[ -z "$RUNSEEDS" ] && [ -s "$PLAN.steps" ] && [ -n "$2" ] || return 0
	printf '%s\n' "$2" | tr '|' '\n' > "$PLAN.keyc"
	cap=$1
	more=$(awk -F '\t' -v cap="$cap" -v margin="$MARGIN" -v ename="$EXP" "$STATS"'
	FILENAME == ARGV[1] { k++; n[k] = $6; want[k] = $7; mean[k] = $8; hi[k] = $10; lo90[k] = $11; hi90[k] = $12
		src[k] = $14; a[k] = $4; b[k] = $5; if ($6 >= 2) { P[++np] = $13; pk[np] = k }; next }
	FILENAME == ARGV[2] { planned[$1] = $2; next }
	$0 == "all" { every = 1; next }
	{ split($0, w, " "); key[w[1] "." w[2], w[3], w[4]] = $0 }
	END { holm(P, H, np); for (i = 1; i <= np; i++) adj[pk[i]] = H[i]
	  for (j = 1; j <= k; j++) if ((src[j], a[j], b[j]) in key) found[src[j], a[j], b[j]]
	  for (x in key) if (!(x in found)) printf "%s: key claim \"%s\" is no step of a claim\n", ename, key[x] > "/dev/stderr"
	  for (j = 1; j <= k; j++) {
		if (!every && !((src[j], a[j], b[j]) in key)) continue
		p = src[j]; sub(/[.][^.]*$/, "", p); la = p "/" a[j]; lb = p "/" b[j]
		decided = n[j] >= 2 && (adj[j] < 0.05 || (lo90[j] > -margin && hi90[j] < margin))
		have = want[j]; if (planned[la] > have) have = planned[la]; if (planned[lb] > have) have = planned[lb]
		if (decided || n[j] < have || n[j] >= cap) continue
		if (futile(n[j], mean[j], hi[j], np, margin, cap)) {
			printf "%s: %s < %s: undecided at %d seeds, and by the estimate more than %d would decide it: no more seeds\n",
			    ename, la, lb, n[j], 2 * cap > "/dev/stderr"
			continue }
		print la "\t" n[j] + 1; print lb "\t" n[j] + 1 } }' \
	    "$PLAN.steps" "$( [ -f "$RES/$EXP.seeds" ] && echo "$RES/$EXP.seeds" || echo /dev/null)" "$PLAN.keyc" |
	    while IFS= read -r la && IFS= read -r lb; do
		if [ "$(printf '%s\n%s\n' "${la%%	*}" "${lb%%	*}" | grep -c -e "${ONLY:-.}")" -eq 2 ]; then
			printf '%s\n%s\n' "$la" "$lb"
		fi
	    done | awk -F '\t' '!seen[$1]++')
	[ -n "$more" ] || return 0
	echo "$EXP: sequential seeding: $(echo "$more" | awk -F '\t' '{ printf "%s%s to %d seeds", (NR > 1 ? ", " : ""), $1, $2 }')" >&2
	echo "$more" >> "$RES/$EXP.seeds"
	rm -f "$PLAN" "$PLAN".*
	exec sh "$0" $ARGS
}

# seeded CAP KEYC: the section's paragraph on what sequential seeding of
# KEYC (sequential's) added; nothing where KEYC is empty.
seeded() {
	[ -n "$2" ] || return 0
	what="key claims"; [ "$2" = all ] && what="claims' steps"
	if [ -s "$RES/$EXP.seeds" ]; then
		echo "Sequential seeding of the $what (up to $1 seeds, while a step stays undecided and twice that would by the estimate of *to decide* decide it):"
		# planned, and where fewer have run (a part cut short), how many
		planfield top1 | cut -f1 | awk -F '\t' 'FILENAME == ARGV[1] { n[$1] = $2; next } { ran[$1]++ }
		    END { for (l in n) printf "%s %d %d\n", l, n[l], ran[l] }' "$RES/$EXP.seeds" - | sort |
		    awk '{ printf "%s%s to %d seeds%s", (NR > 1 ? ", " : ""), $1, $2, ($3 < $2 ? " (" $3 " so far)" : "") }
		    END { print "." }'
	else
		echo "Sequential seeding of the $what: no seeds added (each step decided at $(echo $SEEDS | wc -w) seeds, past the estimate's reach, or not seeded yet)."
	fi
	echo
}

# settle FILE CLAIMS: claim's placeholders in FILE become verdict lines,
# and their steps the lines of CLAIMS (report.sh's summary): "WHERE CLAIM
# A B VERDICT N MEAN LO HI P PHOLM", tab-separated.
settle() {
	[ -s "$PLAN.steps" ] || { : > "$2"; return 0; }
	awk -F '\t' -v margin="$MARGIN" -v claims="$2.tmp" "$STATS"'
	function verdict(j) {
		if (n[j] < 2) return "undecided"
		if (adj[j] < 0.05) return mean[j] > 0 ? "holds" : "reversed"
		if (lo90[j] > -margin && hi90[j] < margin) return "equivalent"
		return "undecided" }
	FILENAME == ARGV[1] { k++; id[k] = $1; where[$1] = $2; cl[$1] = $3; a[k] = $4; b[k] = $5; n[k] = $6; want[k] = $7
		if ($6 >= 2) { mean[k] = $8; lo[k] = $9; hi[k] = $10; lo90[k] = $11; hi90[k] = $12; P[++np] = $13; pk[np] = k }
		next }
	FNR == 1 { holm(P, H, np); for (i = 1; i <= np; i++) adj[pk[i]] = H[i]
		for (j = 1; j <= k; j++) { w = verdict(j); i = id[j]
			rank = w == "reversed" ? 4 : w == "undecided" ? 3 : w == "equivalent" ? 2 : 1
			if (rank > worst[i]) { worst[i] = rank; whole[i] = w }
			if (n[j] < 2) d = sprintf("%s < %s: %s", a[j], b[j], n[j] ? "one seed" : "not run")
			else d = sprintf("%s < %s: %+.2f points (%.2f to %.2f), p %.2g, Holm %.2g, %d seeds", a[j], b[j], mean[j], lo[j], hi[j], P[pos(j)], adj[j], n[j])
			if (n[j] && n[j] < want[j]) d = d sprintf(" of %d", want[j])
			detail[i] = detail[i] (detail[i] == "" ? "" : "; ") d ": " w
			printf "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", where[i], cl[i], a[j], b[j], w, n[j],
			    mean[j], lo[j], hi[j], (n[j] >= 2 ? P[pos(j)] : ""), (n[j] >= 2 ? adj[j] : "") > claims } }
	function pos(j,  i) { for (i = 1; i <= np; i++) if (pk[i] == j) return i }
	/^@@claim [0-9]+@@$/ { i = $0; gsub(/[^0-9]/, "", i)
		printf "- %s`%s`: **%s** (%s)\n", (where[i] == "" ? "" : where[i] ": "), cl[i], whole[i], detail[i]; next }
	{ print }' "$PLAN.steps" "$1" > "$1.tmp"
	touch "$2.tmp"
	mv "$1.tmp" "$1"
	mv "$2.tmp" "$2"
}

# colstats PREFIX: stats of $FIELD (default top1) over the runs whose label
# starts with PREFIX/, labelled by the rest of their label, with their seeds.
colstats() {
	planfield "${FIELD:-top1}" | awk -F '\t' -v p="$1/" 'index($1, p) == 1 {
	    s = ""; if (match(" " $2 " ", / seed=[0-9]+ /)) s = substr(" " $2 " ", RSTART + 6, RLENGTH - 7)
	    print substr($1, length(p) + 1) "\t" $3 "\t" s }' | stats
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
		[ -f "$RES/logs/$t.jsonl.gz" ] && args="$args -t '${l##*/}' '$RES/logs/$t.jsonl.gz'"
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
	echo "$m, $(getconf _NPROCESSORS_ONLN) cores, runs on one thread each, $JOBS at a time; $(versions)"
}

# versions: the code that made the plan's runs (run1.sh's "bins", a hash
# of the programs, and "commit"), in words; bold where it is more than one.
versions() {
	plan_runs | awk -F '\t' "$JF"'
	!seen[$2]++ && (getline line < $3) > 0 { close($3); b = jf(line, "bins")
	  if (b == "") { old++; next }
	  if (!(b in n)) order[++k] = b
	  n[b]++; c = jf(line, "commit"); if (index(" " cs[b] ", ", " " c ", ") == 0) cs[b] = cs[b] (cs[b] == "" ? "" : ", ") c }
	END { for (i = 1; i <= k; i++) { b = order[i]
		s = s sprintf("%sbinaries %s (commit %s, %d run%s)", (i > 1 ? "; " : ""), b, cs[b], n[b], (n[b] > 1 ? "s" : "")) }
	  if (old) s = s sprintf("%s%d run%s recording no code", (k ? "; " : ""), old, (old > 1 ? "s" : ""))
	  nv = k + (old > 0)
	  printf "%s%s\n", (nv > 1 ? "**code of " nv " versions, mixed in this table**: " : "code: "), s }'
}

# wall: total training hours of the plan's runs, for the text.
wall() {
	FIELD=train_s results | awk -F '\t' '{ s += $2 } END { printf "%.2f h of training", s / 3600 }'
}

# finish: the section's verdicts, and the experiment's raw lines as
# $RES/$EXP.jsonl, in plan order.
finish() {
	settle "$RES/$EXP.md" "$RES/$EXP.claims"
	plan_runs | awk -F '\t' '(getline l < $3) > 0 && !seen[l]++ { print l } { close($3) }' > "$RES/$EXP.jsonl.tmp"
	mv "$RES/$EXP.jsonl.tmp" "$RES/$EXP.jsonl"
	echo "$EXP: $RES/$EXP.md" >&2
}
