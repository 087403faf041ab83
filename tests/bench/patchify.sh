#!/bin/sh
# patchify throughput on CIFAR-sized data (10000 random 32x32 RGB images in
# the CIFAR-10 binary format): records/s as printed by --stats, for plain
# patching and for the LieRE training recipe (crop with padding, flip,
# RandAugment 2,14), u8 and f32, on 1 thread and on all cores.  A training
# step on 128 CIFAR images takes about 0.3-0.5 s here: the data stage must
# deliver far more than 2500 images/s.
BIN=${BIN:-bin}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
/usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(0)
x = r.integers(0, 256, (10000, 3073), dtype=np.uint8); x[:, 0] = np.arange(10000) % 10
x.tofile('$T/data_batch_1.bin')"
run() {
	what=$1; shift
	"$BIN/patchify" --stats "$@" "$T/data_batch_1.bin" 2>"$T/err" >/dev/null
	printf '%-44s %s\n' "$what" "$(sed -n 's/^patchify: //p' "$T/err")"
}
for th in 1 0; do
	n=$th; [ "$th" = 0 ] && n=all
	run "patch 4x4, u8, threads $n" --patch 4 --threads $th
	run "crop-pad 4, flip, randaugment 2,14, threads $n" --patch 4 --crop-pad 4 --flip --randaugment 2,14 --threads $th
	run "same, f32 cifar10 norm, erase 0.25, threads $n" --patch 4 --crop-pad 4 --flip --randaugment 2,14 \
	    --erase 0.25 --f32 --norm cifar10 --threads $th
	run "rrc 0.35,1 to 32x32, randaugment 2,14, threads $n" --patch 4 --rrc=0.35,1 --crop 32 --flip --randaugment 2,14 --threads $th
done
