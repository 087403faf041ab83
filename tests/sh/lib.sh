# lib.sh - helpers for the shell tests; sourced, never run.  Each check
# prints "ok - what" or "not ok - what" (read by tests/run.sh).
set -u
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FAILED=0
PY=/usr/bin/python3	# Debian's, with numpy
# The NumPy reader printed in vitpipe(5) is the tests' Python reader: module
# vtread in $T, so the page's code is what every Python check runs.
sed -n '/^# vtread.py begin/,/^# vtread.py end/p' man/man5/vitpipe.5 | sed 's/\\e/\\/g' >"$T/vtread.py"
export PYTHONPATH="$T:${TOP:-.}/tests/sh"
ok()   { echo "ok - $*"; }
nok()  { echo "not ok - $*"; FAILED=1; }
# check "what" command...: the command must succeed.
check() { d=$1; shift; if "$@" >"$T/out" 2>"$T/err"; then ok "$d"; else nok "$d (exit $?: $(head -c 300 "$T/err"))"; fi; }
# check_exit N "what" command...: the command must exit N and, when N is not 0,
# say something on stderr that starts with the program's name.
check_exit() {
	n=$1 d=$2; shift 2
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	if [ "$rc" -ne "$n" ]; then nok "$d (exit $rc, wanted $n: $(head -c 300 "$T/err"))"; return; fi
	if [ "$n" -ne 0 ] && ! grep -q "^$(basename "$1"): " "$T/err"; then nok "$d (no 'prog: ' message: $(head -c 300 "$T/err"))"; return; fi
	ok "$d"
}
# check_grep "what" pattern file: file must contain pattern (grep -E).
check_grep() { if grep -Eq -- "$2" "$3"; then ok "$1"; else nok "$1 ('$2' not in $3: $(head -c 300 "$3"))"; fi; }
finish() { exit $FAILED; }
