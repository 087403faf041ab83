#!/bin/sh
# campaign.sh - a full-scale campaign in parts, on a machine that does
# other work meanwhile:
#
#   sh experiments/campaign.sh --scale full tasks:mot-paper/ riemann
#   sh experiments/campaign.sh --signal STOP     pause every part running
#   sh experiments/campaign.sh --signal CONT     and let it go on
#
# Each PART, SECTION or SECTION:PATTERN, runs in turn as `sh
# experiments/SECTION.sh --jobs 1 --only PATTERN` with the options given
# (--scale, --seeds, --results, --cache), at the lowest priority, in a
# process group of its own, for at most --limit seconds (default 2400,
# parts of at most 40 minutes; time paused does not count).  A part
# stopped there keeps its finished runs, and a training cut short goes
# on from its last epoch's checkpoint the next time.  Two campaigns side
# by side keep two cores busy.  --signal STOP pauses every part that
# campaigns with this cache run (for a benchmark or the tests), CONT
# resumes them.
set -eu
# (signals go to a part's whole group: the kill program takes a group,
# a shell's builtin not always)
EXPDIR=$(cd "$(dirname "$0")" && pwd)
usage() {
	sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
limit=2400 opts= parts= sig= cache=${EXP_CACHE:-$EXPDIR/cache}
while [ $# -gt 0 ]; do
	case $1 in
	--limit|--signal|--scale|--seeds|--results|--cache)
		[ $# -ge 2 ] || { echo "campaign.sh: $1 needs a value" >&2; exit 2; }
		case $1 in
		--limit) limit=$2 ;;
		--signal) sig=$2 ;;
		--cache) cache=$2; opts="$opts $1 $2" ;;
		*) opts="$opts $1 $2" ;;
		esac
		shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "campaign.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) parts="$parts $1"; shift ;;
	esac
done
case $limit in ''|*[!0-9]*|0) echo "campaign.sh: --limit: seconds, not '$limit'" >&2; exit 2 ;; esac
# The running parts: a file each in $cache/campaign, named by its group.
dir=$cache/campaign
if [ -n "$sig" ]; then
	case $sig in STOP|CONT) ;; *) echo "campaign.sh: --signal: STOP or CONT, not '$sig'" >&2; exit 2 ;; esac
	for f in "$dir"/*; do
		[ -e "$f" ] || continue
		env kill -s "$sig" -- "-${f##*/}" 2>/dev/null || rm -f "$f"
	done
	exit 0
fi
[ -n "$parts" ] || { usage >&2; exit 2; }
for p in $parts; do
	[ -f "$EXPDIR/${p%%:*}.sh" ] || { echo "campaign.sh: $p: no experiment ${p%%:*}" >&2; exit 2; }
done
mkdir -p "$dir"
# stopped PID: whether the process is stopped (paused), where /proc says
stopped() {
	[ -r "/proc/$1/stat" ] && [ "$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat")" = T ]
}
status=0
for p in $parts; do
	pat=.
	case $p in *:*) pat=${p#*:} ;; esac
	# a session has a scheduling group of its own (Linux's autogroup),
	# which nice alone does not lower: the part lowers its own, once it
	# is a session (from here it could still be the caller's)
	setsid sh -c 'echo 19 2>/dev/null > /proc/self/autogroup; exec nice -n 19 sh "$@"' \
	    sh "$EXPDIR/${p%%:*}.sh" $opts --jobs 1 --only "$pat" &
	g=$!
	: > "$dir/$g"
	t=0
	while kill -0 "$g" 2>/dev/null && [ "$t" -lt "$limit" ]; do
		sleep 1
		stopped "$g" || t=$((t + 1))
	done
	if kill -0 "$g" 2>/dev/null; then
		echo "campaign.sh: $p: stopped after $limit s" >&2
		env kill -s TERM -- "-$g" 2>/dev/null || :
		env kill -s CONT -- "-$g" 2>/dev/null || :
		wait "$g" || :
		# the group's other processes may outlive its leader by a
		# moment (a training writing its checkpoint): the part is over
		# when the last is gone, killed after a minute
		n=0
		while env kill -0 -- "-$g" 2>/dev/null; do
			[ "$n" -lt 600 ] || { env kill -s KILL -- "-$g" 2>/dev/null || :; break; }
			sleep 0.1
			n=$((n + 1))
		done
	elif ! wait "$g"; then
		echo "campaign.sh: $p: failed" >&2
		status=1
	fi
	rm -f "$dir/$g"
done
exit $status
