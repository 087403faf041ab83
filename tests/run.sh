#!/bin/sh
# Run every test program (tests/unit/*.c, built into $BUILD/tests) and every
# shell test (tests/sh/*.sh).  Each prints "ok - what" or "not ok - what" per
# check; a test that exits non-zero without a "not ok" line counts as one
# failure.  Ends with the line "N passed, N failed".  TESTS=pattern narrows;
# SUITES=tests/slow runs that folder's shell tests alone (make test-slow).
BIN=${BIN:-bin}
BUILD=${BUILD:-build/rel}
export BIN BUILD
export TOP="$(pwd)"
export PATH="$TOP/$BIN:$PATH"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
# What every command sets by running itself again (vitpipe(7)), set once
# here so that the suite's thousands of commands load their libraries
# once.  sh/conventions and unit/test_cli unset them to test that re-run.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-30000}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# The plan of the products (vitpipe(7)): one for the suite, not the user's.
plan=$(mktemp)
export VITPIPE_PLAN=${VITPIPE_PLAN:-$plan}
pass=0 fail=0
log=$(mktemp); trap 'rm -f "$log" "$plan"' EXIT
run() {
	name=$1; shift
	case "$name" in *${TESTS:-}*) ;; *) return ;; esac
	"$@" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	grep '^not ok ' "$log" | sed "s|^|$name: |"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited $rc; its output ends:"; tail -n 15 "$log" | sed 's/^/    /'
		f=1
	elif [ "$f" -ne 0 ]; then
		tail -n 15 "$log" | grep -v '^ok ' | sed 's/^/    /'
	fi
	printf '%-28s %4d passed, %d failed\n' "$name" "$p" "$f"
	pass=$((pass + p)); fail=$((fail + f))
}
SUITES=${SUITES:-}
[ -z "$SUITES" ] && for t in "$BUILD"/tests/*; do
	[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
for t in ${SUITES:-tests/sh}/*.sh; do
	[ "$(basename "$t")" = lib.sh ] && continue	# sourced by the others
	[ -f "$t" ] && run "sh/$(basename "$t" .sh)" sh "$t"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
