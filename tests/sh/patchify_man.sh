#!/bin/sh
# patchify(1) EXAMPLES: every literal block of the section is run as it is
# printed, in a directory holding small files of the names it uses, and
# must write valid streams.
. tests/sh/lib.sh
mkdir -p "$T/run" && cd "$T/run" || exit 1

# The data the examples name, small: CIFAR batches, class folders of images
# and of videos, a clip, volumes.
$PY - <<'PY'
import os, numpy as np
from PIL import Image
r = np.random.default_rng(1)
for name, n in (("data_batch_1.bin", 40), ("test_batch.bin", 10)):
    with open(name, "wb") as f:
        for i in range(n):
            f.write(bytes([i % 10]) + r.integers(0, 256, 3072, dtype=np.uint8).tobytes())
for top in ("val", "train"):
    for c in ("goldfish", "tench"):
        os.makedirs(top + "/" + c, exist_ok=True)
        for i in range(2):
            a = r.integers(0, 256, (260, 300, 3), dtype=np.uint8)
            Image.fromarray(a).save("%s/%s/%d.%s" % (top, c, i, "png" if i else "jpg"))
np.save("volumes.npy", r.integers(0, 256, (4, 8, 16, 16), dtype=np.uint8))
np.save("labels.npy", np.array([0, 1, 1, 0]))
PY
mkdir -p ucf101/ApplyLipstick ucf101/Archery
ffmpeg -v error -f lavfi -i testsrc=size=160x120:rate=10:duration=1.6 -c:v mjpeg ucf101/Archery/v_1.avi
ffmpeg -v error -f lavfi -i testsrc2=size=160x120:rate=10:duration=1.6 -c:v mpeg4 ucf101/ApplyLipstick/v_2.mp4
cp ucf101/ApplyLipstick/v_2.mp4 clip.mp4

man_blocks "$TOP/man/man1/patchify.1" ex
n=0
for ex in ex*.sh; do
	n=$((n + 1))
	if sh -e "$ex" >"$T/out" 2>"$T/err"; then ok "example $n runs: $(head -c 60 "$ex")"
	else nok "example $n fails: $(head -c 300 "$T/err")"; fi
	cat "$T/err" >>"$T/allerr"
done
[ "$n" -ge 6 ] && ok "$n example blocks found" || nok "only $n example blocks found"
check_grep "--stats in an example prints the rate" '^patchify: 120 records in .* records/s' "$T/allerr"
$PY - <<'PY' >"$T/py" 2>&1 && ok "every stream the examples write is valid" || nok "bad stream: $(tail -n 3 "$T/py")"
import glob
from vtread import vtread
want = {"test.vt": ("7x7", 10000), "train.vt": ("8x8", 120), "test64.vt": ("8x8", 10),
        "val.vt": ("14x14", 4), "train224.vt": ("14x14", 4), "clips.vt": ("4x7x7", 2),
        "clip.vt": ("4x7x7", 2), "volumes.vt": ("2x4x4", 4), "part.vt": ("8x8", 5)}
for name, (grid, n) in want.items():
    head, recs = vtread(open(name, "rb"))
    got = sum(1 for _ in recs)
    assert head["GRID"] == [grid] and got == n, (name, head["GRID"], got)
print("ok")
PY
finish
