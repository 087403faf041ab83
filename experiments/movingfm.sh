#!/bin/sh
# movingfm.sh - Moving Fashion-MNIST, the 3D task of the experiments: a
# video data set made from real images, through the toolkit's real video
# path (FFmpeg's FFV1 in Matroska, read back by patchify's libavformat).
#
# Clip i shows training (or test) image i of Debian's dataset-fashion-mnist,
# scaled to 18 x 18, sliding 2 pixels a frame across a black 32 x 32 canvas
# for 8 frames: left to right (x = 0, 2, .. 14) or right to left (x = 14,
# 12, .. 0), at a height drawn from the seed.  Its label is 2 x class +
# direction, 20 classes.  Every frame of a clip shows the same item at a
# position that the other direction also visits, so no single frame tells
# the direction: the label needs the order of the frames, which is what
# `shuffle-eval --axis t` takes away.
#
#   sh experiments/movingfm.sh [--train N] [--test N] [--seed S] DIR
#
# writes DIR/train/NNNNN.mkv, DIR/test/NNNNN.mkv and the patchify lists
# DIR/train.list and DIR/test.list ("path label" lines), and DIR/classes.
# The same arguments give the same files.  6000 clips take about 20 s.
set -eu
D=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
ntrain=12000 ntest=2000 seed=1
while [ $# -gt 1 ]; do
	case $1 in
	--train) ntrain=$2 ;;
	--test) ntest=$2 ;;
	--seed) seed=$2 ;;
	*) echo "usage: sh $0 [--train N] [--test N] [--seed S] DIR" >&2; exit 2 ;;
	esac
	shift 2
done
[ $# -eq 1 ] || { echo "usage: sh $0 [--train N] [--test N] [--seed S] DIR" >&2; exit 2; }
for v in "$ntrain" "$ntest" "$seed"; do
	case $v in ''|*[!0-9]*) echo "$0: '$v' is not a count" >&2; exit 2 ;; esac
done
[ "$ntrain" -le 60000 ] && [ "$ntest" -le 10000 ] ||
	{ echo "$0: Fashion-MNIST has 60000 training and 10000 test images" >&2; exit 2; }
out=$1
mkdir -p "$out"

# clips SET N DIR: clips of the first N images of SET into DIR.  Clip i
# (= frame group i: overlay counts output frames from 1) moves right when
# i + seed is even; its height is a hash of i and the seed.
clips() {
	rm -rf "$3" && mkdir -p "$3"
	gzip -dc "$D/$1-images-idx3-ubyte.gz" | tail -c +17 | head -c $(($2 * 784)) |
	ffmpeg -nostdin -loglevel error -f rawvideo -pix_fmt gray -s 28x28 -r 1 -i - \
	    -f lavfi -i color=black:s=32x32:r=8 -filter_complex "
		[0:v]scale=18:18:flags=area,fps=8[item];
		[1:v]format=gray[canvas];
		[canvas][item]overlay=eval=frame:shortest=1:
		    x='if(mod(floor((n-1)/8)+$seed,2),14-2*mod(n-1,8),2*mod(n-1,8))':
		    y='mod((floor((n-1)/8)+1)*7919+$seed*104729,15)',format=gray" \
	    -c:v ffv1 -g 8 -fflags +bitexact -flags:v +bitexact -f segment -segment_time 1 -reset_timestamps 1 "$3/%05d.mkv"
	got=$(ls "$3" | wc -l)
	[ "$got" -eq "$2" ] || { echo "$0: $1: $got clips made, not $2" >&2; exit 1; }
}

# list SET N DIR: "DIR/NNNNN.mkv LABEL" lines, LABEL = 2 class + direction.
list() {
	gzip -dc "$D/$1-labels-idx1-ubyte.gz" | od -An -tu1 -j8 -v -w1 | head -n "$2" |
	    awk -v d="$3" -v s="$seed" '{ i = NR - 1
		printf "%s/%05d.mkv %d\n", d, i, 2 * $1 + (i + s) % 2 }'
}

clips train "$ntrain" "$out/train"
clips t10k "$ntest" "$out/test"
list train "$ntrain" "$out/train" > "$out/train.list"
list t10k "$ntest" "$out/test" > "$out/test.list"
awk '{ print $0 " right"; print $0 " left" }' "$(dirname "$0")/../data/fashion-mnist.classes" |
	tr ' ' '-' > "$out/classes"
