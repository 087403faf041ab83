#!/bin/sh
# run.sh - the experiments, named or all in the order of EXPERIMENTS.md,
# with the same options (see lib.sh's usage), then report.sh:
#
#   sh experiments/run.sh --scale quick                 every pipeline, tiny
#   sh experiments/run.sh --scale full --seeds 1 t1_encodings   one part
#
# The runs of all the named experiments still to do make one pool, run
# --jobs at a time, so that no core waits at the end of one experiment
# for the next one's first run; then each experiment writes its table.
. "$(dirname "$0")/lib.sh"
opts= names=
while [ $# -gt 0 ]; do
	case $1 in
	--scale|--seeds|--only|--jobs|--results|--cache) opts="$opts $1 $2"; shift 2 ;;
	--dry-run) opts="$opts $1"; shift ;;
	-h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) names="$names $1"; shift ;;
	esac
done
for e in ${names:-$ALL}; do
	[ -f "$EXPDIR/$e.sh" ] || { echo "run.sh: no experiment $e (one of: $ALL)" >&2; exit 2; }
done
parse_options $opts
# One key file for every experiment started here: a key is made once.
EXP_KEYS=$PLAN.keys
export EXP_KEYS
for e in ${names:-$ALL}; do
	sh "$EXPDIR/$e.sh" $opts --dry-run
done | awk '!seen[$0]++' > "$PLAN.todo"
[ "$DRY" = 1 ] && { cat "$PLAN.todo"; exit 0; }
echo "run.sh: $(wc -l < "$PLAN.todo") runs to do, $JOBS at a time" >&2
run_lines "$PLAN.todo"
for e in ${names:-$ALL}; do
	sh "$EXPDIR/$e.sh" $opts
done
sh "$EXPDIR/report.sh" $opts
