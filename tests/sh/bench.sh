# bench.sh - the benchmarks with options (make bench; built by build-all)
# answer as the commands do: --help and --version exit 0 without running
# anything, an unknown option is a usage error (exit 2).
. tests/sh/lib.sh
for b in bench_vit bench_sgemm; do
	p="$BUILD/bench/$b"
	check "$b --help exits 0" "$p" --help
	check_grep "$b --help prints usage to stdout" "^usage: $b " "$T/out"
	grep -Eq "GFLOP/s|img/s" "$T/out" && nok "$b --help ran the benchmark" ||
	    ok "$b --help runs nothing"
	check "$b --version exits 0" "$p" --version
	check_exit 2 "$b: an unknown option is a usage error" "$p" --no-such-option
	check_grep "$b: the usage error points to --help" "--help" "$T/err"
done
