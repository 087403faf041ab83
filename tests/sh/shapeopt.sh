# shapeopt.sh - the model-shape options have one set of limits in every
# command that takes them (lib/cli/shapeopt.h): the limit is taken, one
# past it is a usage error that names it, the same words everywhere.
. tests/sh/lib.sh
# past CMD... OPT MAX: CMD OPT MAX+1 is refused, exit 2, naming [1, MAX].
past() {
	local max=$1; shift
	check_exit 2 "$* $((max + 1)) is a usage error" "$@" $((max + 1))
	check_grep "... naming the limit $max" "'$((max + 1))' is not a whole number in \[1, $max\]" "$T/err"
}
# taken CMD... OPT MAX: CMD OPT MAX says nothing of the option's range.
taken() {
	"$@" </dev/null >/dev/null 2>"$T/err"
	! grep -q "not a whole number" "$T/err" && ok "$* is within the limit" ||
	    nok "$* refused: $(head -c 200 "$T/err")"
}
for c in "vit-train -o $T/m.vt" "flops" "skewgen" "vtool from-safetensors"; do
	past 4096 $c --heads
	taken $c --heads 4096
done
for c in "vit-train -o $T/m.vt" "flops"; do
	past 65536 $c --dim
	past 1024 $c --depth
	past 262144 $c --mlp
	taken $c --mlp 262144
done
for c in "vit-train -o $T/m.vt" "flops" "vtool from-safetensors"; do
	past 1048576 $c --classes
done
past 1024 skewgen --layers
taken skewgen --pe liere:2 --head-dim 4 --layers 1024 -o "$T/g.vt"
# Every limit is the model's: flops makes a model at the limits (heads at
# 4096 need a width of at least 4096) and refuses one past them.
check "flops takes a model at the width, heads and blocks limits" flops --dim 65536 --heads 4096 --depth 1024 --mlp 262144 --classes 1048576 --pe none
finish
