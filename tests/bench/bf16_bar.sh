#!/bin/sh
# bf16_bar.sh - how close config R's bf16 training can come to the bf16
# product peak with the products it has (issue 38's bar: 0.75), from
# figures of one sitting: bench_vit's best step and peak, each product
# as training calls it (bench_sgemm --precision bf16, at every core),
# attention as training runs it for abs (bench_attention's "from copies")
# and the memory bandwidth (bench_stream).
# Prints the step's products and attention in ms, the fraction of the
# peak they alone would allow, the time a step at FRACTION (default 0.75)
# leaves for everything else, what everything else takes now, and the
# time of writing and reading back the step's peak RSS once at the
# measured read bandwidth; and the same from the products and attention
# as the step itself runs them (bench_vit's mean step by kind of work).
# Stop everything else first.
B=${BUILD:-build/rel}/bench
grep -Eqw 'avx512_bf16|amx_bf16' /proc/cpuinfo || [ -n "${VITPIPE_BF16:-}" ] || {
	echo "bf16_bar.sh: this CPU has no bf16 products (VITPIPE_BF16=emulate times emulated ones)"
	exit 0
}
F=${FRACTION:-0.75}
sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1
date -u '+%Y-%m-%d %H:%M UTC'
t=$(mktemp); trap 'rm -f "$t"' EXIT
{
	$B/bench_vit --pe abs --no-torch --precision bf16 --steps 8 --rounds 2 2>&1 | grep -E '^vit |time of a mean step'
	$B/bench_sgemm --precision bf16 --rounds 3
	$B/bench_attention bf16
	$B/bench_stream
} > "$t" 2>&1
cat "$t"
# config R: 6 blocks, CLS pooling: 5 full blocks, and of the last only
# the qkv products (the rest is CLS's row); the patch embedding once.
awk -v f="$F" '
/^vit / {
	for (i = 1; i < NF; i++) {
		if ($(i + 1) == "img/s" && $(i - 1) == "best") best = $i
		if ($(i + 1) == "GFLOP/s") gf = $i
		if ($i == "peak" && $(i - 1) == "of") peak = $(i + 1)
		if ($i == "RSS") rss = $(i + 1)
	}
	if (best > bbest) { bbest = best; bgf = gf; bpeak = peak; brss = rss }
	for (i = 1; i < NF; i++)
		if ($i == "ms/step")
			mean = $(i - 1)
	next
}
# the mean step of the same run by kind of work (enum work, nn.h): the round
# whose products and attention took least
/time of a mean step/ {
	for (i = 1; i < NF; i++) {
		if ($i == "products") p = $(i + 1)
		if ($i == "attention") a = $(i + 1)
	}
	sub(/,/, "", p); sub(/,/, "", a)
	if (ipa == "" || p + a < ipa) { ipa = p + a; ip = p; ia = a; imean = mean }
	next
}
# a product: its name line (one thread), then its line at every core
/^[a-z][a-z0-9]* +[A-Za-z^]+ .*[0-9]x[0-9]+x[0-9]/ {
	name = $1
	kind = $2 == "X" ? "forward" : $2 == "dY" && $3 == "W" ? "dx" : "dw"
	for (i = 1; i <= NF; i++)
		if ($i ~ /^[0-9]+x[0-9]+x[0-9]+$/)
			split($i, s, "x")
	fl = 2 * s[1] * s[2] * s[3] / 1e9
	next
}
name != "" && /^ +[0-9]+ +[0-9.]+ +[0-9.]+ / && $1 > 1 {
	n = name == "att" ? 0 : name == "patch" ? 1 : name == "qkv" ? 6 : 5
	t = n * fl / $3 * 1e3
	ms += t
	kfl[kind] += n * fl
	kms[kind] += t
	name = ""
	next
}
/^attention bf16 from copies/ { for (i = 1; i < NF; i++) if ($(i + 1) == "ms" && $(i + 2) == "of") att = $i * 5 / 6 }
/^memory bandwidth/ { for (i = 1; i < NF; i++) if ($i == "read") bw = $(i + 1) }
END {
	if (bbest == 0 || ms == 0 || att == 0) {
		print "bf16_bar.sh: a benchmark printed no figures (above)"
		exit
	}
	step = 128 / bbest * 1e3; flop = bgf * step / 1e3
	printf "step %.1f ms (best), %.1f GFLOP, peak %d GFLOP/s: %.2f of it\n", step, flop, bpeak, flop / step * 1e3 / bpeak
	printf "products %.1f ms: forward %.1f at %.0f GFLOP/s, input gradients %.1f at %.0f, weight gradients %.1f at %.0f; attention %.1f ms\n", ms,
	    kms["forward"], kfl["forward"] / kms["forward"] * 1e3, kms["dx"], kfl["dx"] / kms["dx"] * 1e3, kms["dw"], kfl["dw"] / kms["dw"] * 1e3, att
	printf "with nothing else: %.2f of the peak\n", flop / (ms + att) * 1e3 / bpeak
	allow = flop / (f * bpeak) * 1e3 - ms - att
	printf "at %s of the peak everything else gets %.1f ms; it takes %.1f now\n", f, allow, step - ms - att
	printf "peak RSS %d MB written and read back once at %.1f GB/s: %.1f ms\n", brss, bw, 2 * brss / bw
	if (ipa != "")
		printf "in the step (a mean step of %d ms): products %.1f ms and attention %.1f: at %s of the peak everything else gets %.1f ms; it takes %.1f\n",
		    imean, ip, ia, f, flop / (f * bpeak) * 1e3 - ipa, imean - ipa
}' "$t"
