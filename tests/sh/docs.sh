# docs.sh - the examples a user starts from run as written: the sh blocks of
# README.md and the EXAMPLES of vitpipe(7), on a small Fashion-MNIST made
# here from Debian's (their D=... line is pointed at it), plus the demo
# script's syntax.
. tests/sh/lib.sh
W="$T/docs"; mkdir -p "$W/data"
small_fmnist "$W/fm" 400 200
cp data/fashion-mnist.classes "$W/data/"	# the quick start runs in the source tree
# What the video example reads: a clip and a model trained on it.
(cd "$W" && ffmpeg -loglevel error -f lavfi -i testsrc=size=64x64:rate=10 -t 3.2 -pix_fmt yuv420p clip.mp4 &&
 ffmpeg -loglevel error -i clip.mp4 -f rawvideo -pix_fmt rgb24 -s 32x32 - |
   patchify --raw 32x32x3 --frames 8 --patch 2x8x8 --label 1 | posgen |
   vit-train --dim 32 --depth 1 --heads 2 --mlp 32 --classes 2 --pe rope-axial --steps 2 -b 2 \
       --out video-model.vt) 2>"$T/err" || nok "video example set-up: $(head -c 300 "$T/err")"

# run_blocks NAME FILE: run every extracted block of FILE in $W, in order.
run_blocks() {
	n=0
	for b in "$2".*; do
		[ -f "$b" ] || continue
		n=$((n + 1))
		at_small_fmnist "$b" "$W/fm"
		check "$1 example $n runs" sh -ec "cd '$W' && . '$b'"
	done
	[ "$n" -gt 0 ] || nok "$1 has no examples"
}
awk -v d="$T/readme" '/^```sh$/ { on = 1; n++; next } /^```$/ { on = 0; next }
	on { print > (d "." n) }' README.md
run_blocks README "$T/readme"
# The quick start's predictions name the classes.
(cd "$W" && vit-eval --predict model.vt test.vt | head -n 3) > "$T/pred" 2>&1
[ "$(grep -cE "^($(paste -sd'|' data/fashion-mnist.classes)) [0-9.]+" "$T/pred")" = 3 ] &&
    ok "README's quick start: --predict prints class names" || nok "README's --predict: $(head -c 300 "$T/pred")"
# The quick start's learning curves: a PNG.
[ "$(head -c 8 "$W/curves.png" 2>/dev/null | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] &&
    ok "README's vit-plot example wrote a PNG" || nok "README's vit-plot example wrote no PNG curves.png"
# Its output: comrope-ld's defect at rounding level, LieRE's clearly not.
awk '/^relative/ { v[++n] = $2 } END { exit !(n == 2 && v[1] < 1e-5 && v[2] > 1e-2) }' "$T/out" &&
    ok "README's ComRoPE example: defect ~0 for comrope-ld:8, large for liere:8" ||
    nok "README's ComRoPE example printed: $(cat "$T/out")"
man_blocks man/man7/vitpipe.7 "$T/man7."
run_blocks "vitpipe(7)" "$T/man7"
check "data/demo.sh parses" sh -n data/demo.sh
finish
