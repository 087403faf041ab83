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
# --precision: the figures say which, the peak is measured in it; a CPU
# without bf16 refuses it unless emulation is asked for.
p="$BUILD/bench/bench_vit"
if grep -qw avx512_bf16 /proc/cpuinfo; then e=; else
	check_exit 1 "bench_vit --precision bf16 without bf16: refused" "$p" --pe abs --eval --steps 1 --precision bf16
	e=emulate
fi
check "bench_vit --pe abs --eval --precision bf16 runs" env VITPIPE_BF16=$e "$p" --pe abs --eval --steps 1 --precision bf16
check_grep "... its line says bf16 and its fraction of the bf16 peak" "of peak [0-9]+ .*bf16" "$T/out"
check_grep "... and splits its mean step by kind of work (README)" "time of a mean step: products [0-9.]+ ms, their epilogues [0-9.]+, roundings [0-9.]+, attention [0-9.]+, the rest -?[0-9.]+" "$T/out"
awk '/time of a mean step/ { exit !($8 > 0 && $16 > 0) }' "$T/out" &&
    ok "... products and attention take time in it" || nok "the step's split: $(grep 'time of a mean step' "$T/out")"
finish
