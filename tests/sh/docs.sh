# docs.sh - the examples a user starts from run as written: the sh blocks of
# README.md and the EXAMPLES of vitpipe(7), on a small Fashion-MNIST made
# here from Debian's (their D=... line is pointed at it), plus the demo
# script's syntax.
. tests/sh/lib.sh
FM=/usr/share/datasets/fashion-mnist
W="$T/docs"; mkdir -p "$W/fm"
# 400 training and 200 test images in the same IDX gzip format.
$PY - "$FM" "$W/fm" <<'PY' || nok "making the small Fashion-MNIST"
import gzip, sys
src, dst = sys.argv[1], sys.argv[2]
for name, n in (("train", 400), ("t10k", 200)):
    img = gzip.open(f"{src}/{name}-images-idx3-ubyte.gz").read()
    lab = gzip.open(f"{src}/{name}-labels-idx1-ubyte.gz").read()
    gzip.open(f"{dst}/{name}-images-idx3-ubyte.gz", "wb").write(
        img[:4] + n.to_bytes(4, "big") + img[8:16] + img[16:16 + 784 * n])
    gzip.open(f"{dst}/{name}-labels-idx1-ubyte.gz", "wb").write(
        lab[:4] + n.to_bytes(4, "big") + lab[8:8 + n])
PY
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
		sed -i "s|^D=$FM\$|D=$W/fm|" "$b"
		check "$1 example $n runs" sh -ec "cd '$W' && . '$b'"
	done
	[ "$n" -gt 0 ] || nok "$1 has no examples"
}
awk -v d="$T/readme" '/^```sh$/ { on = 1; n++; next } /^```$/ { on = 0; next }
	on { print > (d "." n) }' README.md
run_blocks README "$T/readme"
# Its output: comrope-ld's defect at rounding level, LieRE's clearly not.
awk '/^relative/ { v[++n] = $2 } END { exit !(n == 2 && v[1] < 1e-5 && v[2] > 1e-2) }' "$T/out" &&
    ok "README's ComRoPE example: defect ~0 for comrope-ld:8, large for liere:8" ||
    nok "README's ComRoPE example printed: $(cat "$T/out")"
sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' man/man7/vitpipe.7 |
    awk -v d="$T/man7" '/^\.Bd -literal/ { on = 1; n++; next } /^\.Ed/ { on = 0; next }
	on { gsub(/\\e/, "\\"); print > (d "." n) }'
run_blocks "vitpipe(7)" "$T/man7"
check "data/demo.sh parses" sh -n data/demo.sh
finish
