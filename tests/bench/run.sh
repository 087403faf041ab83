#!/bin/sh
# Run every benchmark: each program built from tests/bench/*.c (into
# $BUILD/bench) and each tests/bench/*.sh script.  Benchmarks print figures
# (images/s, GFLOP/s, rotations/s, peak RSS); they are not tests and never
# fail a build.  BENCH=pattern narrows.
BIN=${BIN:-bin}
BUILD=${BUILD:-build/rel}
export BIN BUILD TOP="$(pwd)"
export PATH="$TOP/$BIN:$PATH"
for b in "$BUILD"/bench/* tests/bench/*.sh; do
	case "$b" in */run.sh) continue ;; *${BENCH:-}*) ;; *) continue ;; esac
	[ -f "$b" ] || continue
	echo "== $(basename "$b")"
	case "$b" in *.sh) sh "$b" ;; *) "$b" ;; esac
done
