#!/bin/sh
# The fuzz corpora (tests/fuzz/corpus: seeds; tests/fuzz/regress: every
# input that ever crashed, hung or blew up memory) through each harness
# (built with replay.c's main), one input at a time under 2 GiB of memory
# (memlimit) and 5 s (15 under ASan): a regression fails here.  Findings
# of make fuzz go to tests/fuzz/regress/HARNESS.
. tests/sh/lib.sh
# seconds an input may take: ASan's builds run two to four times slower
LIMIT=5
[ "$SAN" = 1 ] && LIMIT=15
for h in tests/fuzz/fuzz_*.c; do
	h=$(basename "$h" .c)
	n=0 bad=0
	for f in tests/fuzz/corpus/$h/* tests/fuzz/regress/$h/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		TMPDIR=$T memlimit 2097152 timeout $LIMIT "$BUILD/fuzz/replay_$h" "$f" >"$T/out" 2>&1
		rc=$?
		[ $rc -eq 0 ] || { bad=1; nok "$h: $f (exit $rc: $(head -c 300 "$T/out"))"; }
	done
	[ $n -eq 0 ] && nok "$h: no corpus"
	[ $n -gt 0 ] && [ $bad -eq 0 ] && ok "$h: $n inputs replayed"
done
finish
