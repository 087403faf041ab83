#!/bin/sh
# patchify: every source read from files made here by real tools (PIL,
# ImageMagick, the ffmpeg command line, data set writers in Python), patch
# values compared with an independent computation in numpy, augmentation
# determinism, epochs/subset/shard bookkeeping, and every kind of bad input.
. tests/sh/lib.sh
P=patchify

# same a.vt b.vt: the records (not the headers, whose HISTORY differs) are equal.
same() { $PY -c "import sys, vtstream as V; sys.exit(V.body(sys.argv[1]) != V.body(sys.argv[2]))" "$1" "$2"; }
# pycheck "what" script: the Python script must print "ok" last.
pycheck() {
	if $PY -c "$2" >"$T/py" 2>&1 && [ "$(tail -n 1 "$T/py")" = ok ]; then ok "$1"
	else nok "$1: $(tail -n 3 "$T/py" | tr '\n' ' ')"; fi
}

# --- PNG and JPEG: values, grey, resize (against PIL), centre crop --------
$PY - "$T" <<'EOF'
import sys, numpy as np
from PIL import Image
t = sys.argv[1]
r = np.random.default_rng(5)
a = r.integers(0, 256, (24, 32, 3), dtype=np.uint8)
a = (a // 2 + np.linspace(0, 120, 32)[None, :, None]).astype(np.uint8)
Image.fromarray(a).save(t + "/rgb.png")
Image.fromarray(a[:, :, 1]).save(t + "/grey.png")
Image.fromarray(np.dstack([a, r.integers(0, 256, (24, 32), dtype=np.uint8)]), "RGBA").save(t + "/rgba.png")
Image.fromarray((np.arange(24 * 32).reshape(24, 32) * 85).astype(np.uint16), "I;16").save(t + "/grey16.png")
Image.fromarray(a).resize((16, 12), Image.BILINEAR).save(t + "/ref_12x16.png")
Image.fromarray(a).resize((48, 36), Image.BILINEAR).save(t + "/ref_36x48.png")
EOF
convert "$T/rgb.png" -quality 90 "$T/rgb.jpg"
convert "$T/grey.png" -quality 90 "$T/grey.jpg"
convert "$T/rgba.png" -depth 16 PNG64:"$T/rgba16.png"

check "png 8x8 patches" $P --patch 8 "$T/rgb.png"; cp "$T/out" "$T/png.vt"
pycheck "png patches equal numpy's" '
import numpy as np, vtstream as V
from PIL import Image
m, f = V.read("'"$T"'/png.vt")
a = np.asarray(Image.open("'"$T"'/rgb.png"))[None]
assert m["GRID"] == ["3x4"] and m["PATCH"] == ["8x8"] and m["SIZE"] == ["24x32"], m
assert m["CHANNELS"] == ["3"] and f["patch"].shape == (1, 12, 192)
assert (f["patch"][0] == V.patches(a, 1, 8, 8)).all()
assert f["label"][0] == -1
print("ok")'
check "rgba png" $P --patch 8 "$T/rgba.png"
pycheck "rgba png: alpha dropped, as PIL convert(RGB)" '
import numpy as np, vtstream as V
from PIL import Image
m, f = V.read("'"$T"'/out")
a = np.asarray(Image.open("'"$T"'/rgba.png").convert("RGB"))[None]
assert m["CHANNELS"] == ["3"] and (f["patch"][0] == V.patches(a, 1, 8, 8)).all()
print("ok")'

check "16-bit grey png" $P --patch 4 "$T/grey16.png"; cp "$T/out" "$T/g16.vt"
check "16-bit rgba png" $P --patch 8 "$T/rgba16.png"; cp "$T/out" "$T/rgba16.vt"
pycheck "16-bit samples scaled by 255/65535; 16-bit alpha dropped" '
import numpy as np, vtstream as V
from PIL import Image
t = "'"$T"'"
m, f = V.read(t + "/g16.vt")
want = np.round((np.arange(24 * 32).reshape(24, 32) * 85) / 257)
assert (f["patch"][0] == V.patches(want[None, :, :, None], 1, 4, 4)).all()
m, f = V.read(t + "/rgba16.vt")
a = np.asarray(Image.open(t + "/rgba.png").convert("RGB"))[None]
assert np.abs(f["patch"][0].astype(int) - V.patches(a, 1, 8, 8)).max() <= 1
print("ok")'
$P --patch 4 "$T/grey.png" >"$T/g.vt" && $P --patch 4 --channels 1 "$T/rgb.png" >"$T/g3.vt" &&
$P --patch 4 --channels 3 "$T/grey.png" >"$T/g33.vt"
pycheck "grey png, luma and grey->rgb" '
import numpy as np, vtstream as V
from PIL import Image
t = "'"$T"'"
a = np.asarray(Image.open(t + "/rgb.png")).astype(float)
m, f = V.read(t + "/g.vt")
g = np.asarray(Image.open(t + "/grey.png"))
assert m["CHANNELS"] == ["1"] and (f["patch"][0] == V.patches(g[None, :, :, None], 1, 4, 4)).all()
m, f = V.read(t + "/g3.vt")
y = (a @ [0.299, 0.587, 0.114]).round()[None, :, :, None]
assert np.abs(f["patch"][0] - V.patches(y, 1, 4, 4)).max() <= 1
m, f = V.read(t + "/g33.vt")
assert (f["patch"][0] == V.patches(np.repeat(g[None, :, :, None], 3, 3), 1, 4, 4)).all()
print("ok")'

check "jpeg" $P --patch 8 "$T/rgb.jpg"; cp "$T/out" "$T/jpg.vt"
pycheck "jpeg patches equal PIL's decoding" '
import numpy as np, vtstream as V
from PIL import Image
m, f = V.read("'"$T"'/jpg.vt")
a = np.asarray(Image.open("'"$T"'/rgb.jpg").convert("RGB"))[None]
d = np.abs(f["patch"][0].astype(int) - V.patches(a, 1, 8, 8))
assert d.max() <= 1, d.max()
print("ok")'
check "grey jpeg" $P --patch 8 "$T/grey.jpg"
check_grep "grey jpeg has 1 channel" '^CHANNELS 1$' "$T/out"

$P --resize 12x16 --patch 4 "$T/rgb.png" >"$T/r1.vt" && $P --resize 36 --patch 4 "$T/rgb.png" >"$T/r2.vt" &&
$P --resize 36 --crop 20x28 --patch 4 "$T/rgb.png" >"$T/r3.vt" && $P --crop 28x36 --patch 4 "$T/rgb.png" >"$T/r4.vt"
pycheck "resize (antialiased, as PIL) and centre crop" '
import numpy as np, vtstream as V
from PIL import Image
t = "'"$T"'"
def img(p): return np.asarray(Image.open(t + p)).astype(int)
def got(p, h, w):
    m, f = V.read(t + p)
    assert m["SIZE"] == ["%dx%d" % (h, w)], m["SIZE"]
    return f["patch"][0].reshape(h // 4, w // 4, 4, 4, 3).transpose(0, 2, 1, 3, 4).reshape(h, w, 3).astype(int)
assert np.abs(got("/r1.vt", 12, 16) - img("/ref_12x16.png")).max() <= 1
big = got("/r2.vt", 36, 48)
assert np.abs(big - img("/ref_36x48.png")).max() <= 1
assert (got("/r3.vt", 20, 28) == big[8:28, 10:38]).all()
pad = np.zeros((28, 36, 3), int); pad[2:26, 2:34] = img("/rgb.png")
assert (got("/r4.vt", 28, 36) == pad).all()
print("ok")'

# --- normalization --------------------------------------------------------
check "f32 cifar10 preset" $P --patch 8 --f32 --norm cifar10 "$T/rgb.png"; cp "$T/out" "$T/n.vt"
check "f32 explicit mean/std" $P --patch 8 --f32 --mean 0.1,0.2,0.3 --std 0.5 "$T/rgb.png"; cp "$T/out" "$T/n2.vt"
check "u8 with a preset keeps raw values" $P --patch 8 --norm imagenet "$T/rgb.png"; cp "$T/out" "$T/n3.vt"
pycheck "normalized values" '
import numpy as np, vtstream as V
from PIL import Image
t = "'"$T"'"
a = np.asarray(Image.open(t + "/rgb.png"))[None].astype(np.float64) / 255
m, f = V.read(t + "/n.vt")
mean, std = np.array([0.4914, 0.4822, 0.4465]), np.array([0.2470, 0.2435, 0.2616])
assert [float(x) for x in m["MEAN"][0].split(",")] == list(mean) and f["patch"].dtype == np.float32
assert np.abs(f["patch"][0] - V.patches((a - mean) / std, 1, 8, 8)).max() < 1e-5
m, f = V.read(t + "/n2.vt")
assert m["STD"] == ["0.5,0.5,0.5"]
assert np.abs(f["patch"][0] - V.patches((a - [0.1, 0.2, 0.3]) / 0.5, 1, 8, 8)).max() < 1e-5
m, f = V.read(t + "/n3.vt")
assert m["MEAN"] == ["0.485,0.456,0.406"] and f["patch"].dtype == np.uint8
assert (f["patch"][0] == V.patches((a * 255).round().astype(np.uint8), 1, 8, 8)).all()
print("ok")'

# --- videos: three containers/codecs, uniform and strided sampling, raw ---
x264=libx264; ffmpeg -hide_banner -encoders 2>/dev/null | grep -q libx264 || x264=mpeg4
for v in "mp4 $x264" "webm libvpx-vp9" "avi mjpeg"; do
	set -- $v
	ffmpeg -v error -y -f lavfi -i testsrc=size=32x32:rate=16:duration=1 -c:v $2 "$T/v.$1" &&
	ffmpeg -v error -i "$T/v.$1" -f rawvideo -pix_fmt rgb24 - >"$T/v.$1.rgb" || nok "ffmpeg $1"
	$P --frames 4 --patch 2x8x8 "$T/v.$1" >"$T/v1.vt" && $P --frames 3 --stride 5 --patch 8 "$T/v.$1" >"$T/v2.vt" &&
	$P --frames 4 --patch 2x16x16 --resize 16 "$T/v.$1" >"$T/v3.vt" || nok "patchify $1"
	pycheck "video $1/$2: frames and tubelets equal ffmpeg's decoding" '
import numpy as np, vtstream as V
t = "'"$T"'"
ref = np.fromfile(t + "/v.'"$1"'.rgb", np.uint8).reshape(-1, 32, 32, 3)
n = len(ref); assert n == 16, n
m, f = V.read(t + "/v1.vt")
assert m["GRID"] == ["2x4x4"] and m["PATCH"] == ["2x8x8"] and m["SIZE"] == ["4x32x32"], m
idx = [(2 * i + 1) * n // 8 for i in range(4)]
assert np.abs(f["patch"][0].astype(int) - V.patches(ref[idx], 2, 8, 8)).max() <= 1
m, f = V.read(t + "/v2.vt")
assert m["GRID"] == ["3x4x4"] and m["PATCH"] == ["1x8x8"]
assert np.abs(f["patch"][0].astype(int) - V.patches(ref[[2, 7, 12]], 1, 8, 8)).max() <= 1
m, f = V.read(t + "/v3.vt")
assert m["SIZE"] == ["4x16x16"] and f["patch"].shape == (1, 2, 2 * 16 * 16 * 3)
print("ok")'
done
# A video of more packets than video.c keeps in memory (1 << 14) is read
# twice, the short ones above once: the same frames either way.
ffmpeg -v error -y -f lavfi -i "nullsrc=s=16x16:r=1000:d=16.5,geq=lum='mod(N*7+X*3\,256)':cb=128:cr=128" \
    -c:v mpeg4 -q:v 2 "$T/long.mp4" &&
ffmpeg -v error -i "$T/long.mp4" -vf "select=eq(n\,2062)+eq(n\,6187)+eq(n\,10312)+eq(n\,14437)" \
    -fps_mode passthrough -f rawvideo -pix_fmt rgb24 - >"$T/long.rgb" &&
$P --frames 4 --patch 1x16x16 "$T/long.mp4" >"$T/long.vt" || nok "long video"
pycheck "a video past the packets kept in memory: the frames ffmpeg decodes" '
import numpy as np, vtstream as V
t = "'"$T"'"
n = 16500
assert [(2 * i + 1) * n // 8 for i in range(4)] == [2062, 6187, 10312, 14437]
ref = np.fromfile(t + "/long.rgb", np.uint8).reshape(-1, 16, 16, 3)
assert len(ref) == 4, len(ref)
m, f = V.read(t + "/long.vt")
assert m["SIZE"] == ["4x16x16"], m
assert np.abs(f["patch"][0].astype(int) - V.patches(ref, 1, 16, 16)).max() <= 1
print("ok")'
check "raw frames on stdin" sh -c "ffmpeg -v error -i '$T/v.webm' -f rawvideo -pix_fmt rgb24 - | $P --raw 32x32x3 --frames 8 --patch 4x8x8 --label 7"
cp "$T/out" "$T/raw.vt"
pycheck "raw clips equal the frames" '
import numpy as np, vtstream as V
t = "'"$T"'"
ref = np.fromfile(t + "/v.webm.rgb", np.uint8).reshape(-1, 32, 32, 3)
m, f = V.read(t + "/raw.vt")
assert f["patch"].shape[0] == 2 and list(f["label"]) == [7, 7] and m["SOURCE"] == ["raw"]
for k in range(2):
    assert (f["patch"][k] == V.patches(ref[8 * k:8 * k + 8], 4, 8, 8)).all()
print("ok")'
check "raw single frames are 2D" sh -c "head -c 6144 '$T/v.webm.rgb' | $P --raw 32x32x3 --patch 8"
check_grep "raw frames: 2D grid" '^GRID 4x4$' "$T/out"

# --- raw frames: height first, and the tail after the last whole clip -----
# 20 frames of 24 rows by 32 columns (ffmpeg's -s 32x24) at --frames 8: two
# whole clips, then 4 whole frames; and 1000 frames of 8x16x1 then 100
# stray bytes.
$PY - "$T" <<'EOF'
import sys, numpy as np
t = sys.argv[1]
r = np.random.default_rng(11)
r.integers(0, 256, (20, 24, 32, 3), dtype=np.uint8).tofile(t + "/f20.rgb")
open(t + "/f1000.grey", "wb").write(r.integers(0, 256, 1000 * 128 + 100, dtype=np.uint8).tobytes())
EOF
RAW="$P --raw 24x32x3 --frames 8 --patch 2x8x8"
check_exit 0 "raw tail: complete clips written, the tail dropped" $RAW <"$T/f20.rgb"
cp "$T/out" "$T/t-drop.vt"; cp "$T/err" "$T/t-drop.err"
check_grep "raw tail: one line saying what was dropped" \
    "^patchify: stdin: dropped the input's last 4 whole frames \(fewer than a clip of 8\)\$" "$T/t-drop.err"
[ "$(wc -l <"$T/t-drop.err")" -eq 1 ] && ok "raw tail: the warning is one line" || nok "raw tail: $(cat "$T/t-drop.err")"
check_exit 0 "--tail pad" $RAW --tail pad <"$T/f20.rgb"; cp "$T/out" "$T/t-pad.vt"
[ -s "$T/err" ] && nok "--tail pad warns: $(cat "$T/err")" || ok "--tail pad is quiet"
check_exit 1 "--tail error" $RAW --tail error <"$T/f20.rgb"; cp "$T/out" "$T/t-err.vt"
check_grep "--tail error says what is wrong, not the geometry" \
    '^patchify: stdin: the input ends in 4 whole frames \(fewer than a clip of 8\) \(2 records written\)$' "$T/err"
check_exit 0 "raw: 1000 frames and 100 stray bytes" $P --raw 8x16x1 --patch 8 --no-source <"$T/f1000.grey"
cp "$T/out" "$T/t-1000.vt"
check_grep "raw: stray bytes named as such" \
    "^patchify: stdin: dropped the input's last 100 stray bytes \(fewer than a 8x16x1 frame of 128 bytes\)\$" "$T/err"
pycheck "raw: HxWxC frames, complete clips kept, padded clip repeats the last frame" '
import numpy as np, vtstream as V
t = "'"$T"'"
ref = np.fromfile(t + "/f20.rgb", np.uint8).reshape(20, 24, 32, 3)
for name, n in (("drop", 2), ("err", 2), ("pad", 3)):
    m, f = V.read(t + "/t-" + name + ".vt")
    assert m["SIZE"] == ["8x24x32"] and m["GRID"] == ["4x3x4"], m
    assert len(f["patch"]) == n, (name, len(f["patch"]))
    for k in range(2):
        assert (f["patch"][k] == V.patches(ref[8 * k:8 * k + 8], 2, 8, 8)).all(), name
    want = ["stdin:frames 0-7", "stdin:frames 8-15", "stdin:frames 16-19"][:n]
    assert V.sources(t + "/t-" + name + ".vt") == want, V.sources(t + "/t-" + name + ".vt")
m, f = V.read(t + "/t-pad.vt")
clip = np.concatenate([ref[16:20], np.repeat(ref[19:20], 4, 0)])
assert (f["patch"][2] == V.patches(clip, 2, 8, 8)).all()
m, f = V.read(t + "/t-1000.vt")
grey = np.fromfile(t + "/f1000.grey", np.uint8)[:128000].reshape(1000, 8, 16, 1)
assert len(f["label"]) == 1000 and "source" not in f and m["SIZE"] == ["8x16"]
assert (f["patch"][999] == V.patches(grey[999:], 1, 8, 8)).all()
print("ok")'
check_exit 2 "usage: bad --tail" $P --raw 24x32x3 --tail keep
check_exit 2 "usage: --tail without --raw" $P --tail pad "$T/rgb.png"

# --- CIFAR-10/100, IDX (plain and gzip), .npy images and volumes ----------
$PY - "$T" <<'EOF'
import sys, gzip, numpy as np
t = sys.argv[1]
r = np.random.default_rng(7)
img = r.integers(0, 256, (20, 3, 32, 32), dtype=np.uint8)        # CHW planes
lab = r.integers(0, 10, 20, dtype=np.uint8)
np.save(t + "/c10_img.npy", img.transpose(0, 2, 3, 1)); np.save(t + "/c10_lab.npy", lab)
with open(t + "/data_batch_1.bin", "wb") as f:
    for i in range(20): f.write(bytes([lab[i]]) + img[i].tobytes())
open(t + "/batches.meta.txt", "w").write("\n".join("class%d" % i for i in range(10)) + "\n\n")
fine, coarse = r.integers(0, 100, 20, dtype=np.uint8), r.integers(0, 20, 20, dtype=np.uint8)
np.save(t + "/c100_lab.npy", np.stack([fine, coarse], 1))
with open(t + "/train.bin", "wb") as f:
    for i in range(20): f.write(bytes([coarse[i], fine[i]]) + img[i].tobytes())
g = r.integers(0, 256, (30, 12, 8), dtype=np.uint8); gl = r.integers(0, 10, 30, dtype=np.uint8)
np.save(t + "/idx_img.npy", g); np.save(t + "/idx_lab.npy", gl)
hdr = lambda dims: bytes([0, 0, 8, len(dims)]) + b"".join(int(d).to_bytes(4, "big") for d in dims)
open(t + "/x-images-idx3-ubyte", "wb").write(hdr(g.shape) + g.tobytes())
open(t + "/x-labels-idx1-ubyte", "wb").write(hdr(gl.shape) + gl.tobytes())
open(t + "/short-labels-idx1-ubyte", "wb").write(hdr([29]) + gl[:29].tobytes())
gzip.open(t + "/z-images-idx3-ubyte.gz", "wb").write(hdr(g.shape) + g.tobytes())
gzip.open(t + "/z-labels-idx1-ubyte.gz", "wb").write(hdr(gl.shape) + gl.tobytes())
vol = r.random((5, 4, 8, 8)).astype(np.float32); vl = np.arange(5, dtype=np.int64) % 3
np.save(t + "/vol.npy", vol); np.save(t + "/vol_lab.npy", vl)
np.save(t + "/vol_ref.npy", (vol * 255).round().astype(np.uint8))
np.save(t + "/nhwc.npy", img.transpose(0, 2, 3, 1)[:6]); np.save(t + "/nhwc_lab.npy", lab[:6].astype(np.int32))
EOF
check "cifar10" $P --patch 4 "$T/data_batch_1.bin"; cp "$T/out" "$T/c10.vt"
check "cifar100 fine" $P --patch 4 "$T/train.bin"; cp "$T/out" "$T/c100.vt"
check "cifar100 coarse" $P --patch 4 --coarse --format cifar100 "$T/train.bin"; cp "$T/out" "$T/c100c.vt"
check "two cifar10 batches" $P --patch 4 "$T/data_batch_1.bin" "$T/data_batch_1.bin"; cp "$T/out" "$T/c10x2.vt"
pycheck "cifar values, labels and class names" '
import numpy as np, vtstream as V
t = "'"$T"'"
img, lab, l100 = np.load(t + "/c10_img.npy"), np.load(t + "/c10_lab.npy"), np.load(t + "/c100_lab.npy")
for name, want, nc in (("c10", lab, 10), ("c100", l100[:, 0], 100), ("c100c", l100[:, 1], 20)):
    m, f = V.read(t + "/" + name + ".vt")
    assert m["CLASSES"] == [str(nc)] and (f["label"] == want).all(), name
    for i in range(20):
        assert (f["patch"][i] == V.patches(img[i][None], 1, 4, 4)).all()
m, f = V.read(t + "/c10.vt")
assert m["CLASS"][3] == "3 class3" and m["SOURCE"] == ["cifar10"] and m["EPOCH_RECORDS"] == ["20"]
m, f = V.read(t + "/c10x2.vt")
assert len(f["label"]) == 40 and (f["label"][20:] == lab).all()
print("ok")'
check "idx plain, labels found beside" $P --patch 4 "$T/x-images-idx3-ubyte"; cp "$T/out" "$T/i1.vt"
check "idx gzip, --labels" $P --patch 4 --labels "$T/z-labels-idx1-ubyte.gz" "$T/z-images-idx3-ubyte.gz"; cp "$T/out" "$T/i2.vt"
pycheck "idx values and labels" '
import numpy as np, vtstream as V
t = "'"$T"'"
g, gl = np.load(t + "/idx_img.npy"), np.load(t + "/idx_lab.npy")
for n in ("i1", "i2"):
    m, f = V.read(t + "/" + n + ".vt")
    assert (f["label"] == gl).all() and m["GRID"] == ["3x2"] and m["CLASSES"] == [str(gl.max() + 1)]
    assert all((f["patch"][i] == V.patches(g[i][None, :, :, None], 1, 4, 4)).all() for i in range(30))
print("ok")'
FM=/usr/share/datasets/fashion-mnist
if [ -f $FM/t10k-images-idx3-ubyte.gz ]; then
	check "fashion-mnist test set" $P --patch 7 --norm fashion-mnist $FM/t10k-images-idx3-ubyte.gz
	pycheck "fashion-mnist: 10000 records, labels match the labels file" '
import gzip, numpy as np, vtstream as V
m, f = V.read("'"$T"'/out")
lab = np.frombuffer(gzip.open("'"$FM"'/t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8)
assert len(f["label"]) == 10000 and (f["label"] == lab).all() and m["GRID"] == ["4x4"]
print("ok")'
fi
check "npy volumes (float 0..1)" $P --patch 2x4x4 --labels "$T/vol_lab.npy" "$T/vol.npy"; cp "$T/out" "$T/vol.vt"
check "npy images NHWC" $P --patch 8 --labels "$T/nhwc_lab.npy" "$T/nhwc.npy"; cp "$T/out" "$T/nhwc.vt"
pycheck "npy values, tubelet order and labels" '
import numpy as np, vtstream as V
t = "'"$T"'"
m, f = V.read(t + "/vol.vt")
ref, vl = np.load(t + "/vol_ref.npy"), np.load(t + "/vol_lab.npy")
assert m["GRID"] == ["2x2x2"] and m["SIZE"] == ["4x8x8"] and m["CHANNELS"] == ["1"]
assert (f["label"] == vl).all()
for i in range(5):
    assert (f["patch"][i] == V.patches(ref[i][..., None], 2, 4, 4)).all()
m, f = V.read(t + "/nhwc.vt")
img = np.load(t + "/nhwc.npy")
assert (f["patch"][5] == V.patches(img[5][None], 1, 8, 8)).all() and m["GRID"] == ["4x4"]
print("ok")'

# --- directories and list files -------------------------------------------
mkdir -p "$T/d/cat" "$T/d/dog" "$T/d/ant"
cp "$T/rgb.png" "$T/d/cat/a.png"; cp "$T/rgb.jpg" "$T/d/dog/b.jpg"; cp "$T/rgb.png" "$T/d/dog/a.png"
convert "$T/rgb.png" -flop "$T/d/ant/x.png"
check "class-per-subfolder" $P --patch 8 "$T/d"; cp "$T/out" "$T/dir.vt"
printf 'd/dog/a.png dog\n# a comment\n\nd/cat/a.png  cat\n%s/d/ant/x.png ant\n' "$T" >"$T/l.txt"
printf 'd/dog/a.png 4\nd/cat/a.png 2\n' >"$T/l2.txt"
check "list with class names" $P --patch 8 "$T/l.txt"; cp "$T/out" "$T/list.vt"
check "list with integer labels" $P --patch 8 "$T/l2.txt"; cp "$T/out" "$T/list2.vt"
pycheck "directory and list labels, classes, order" '
import numpy as np, vtstream as V
from PIL import Image
t = "'"$T"'"
a = np.asarray(Image.open(t + "/rgb.png"))
m, f = V.read(t + "/dir.vt")
assert m["CLASSES"] == ["3"] and m["CLASS"] == ["0 ant", "1 cat", "2 dog"], m
assert list(f["label"]) == [0, 1, 2, 2] and m["SOURCE"] == ["dir"]
assert (f["patch"][0] == V.patches(a[None, :, ::-1], 1, 8, 8)).all()
assert (f["patch"][2] == V.patches(a[None], 1, 8, 8)).all()
m, f = V.read(t + "/list.vt")
assert m["CLASS"] == ["0 ant", "1 cat", "2 dog"] and list(f["label"]) == [2, 1, 0]
m, f = V.read(t + "/list2.vt")
assert list(f["label"]) == [4, 2] and m["CLASSES"] == ["5"]
print("ok")'

# --classes names the labels, and class folders and list names map to them
# by name (torchvision's class_to_idx): a test folder without "ant" keeps
# cat 1 and dog 2.  A name not in the list is an error, not a shift.
mkdir -p "$T/dsub/cat" "$T/dsub/dog" "$T/dnew/cat" "$T/dnew/emu" "$T/dempty/cat" "$T/dempty/dog"
cp "$T/rgb.png" "$T/dsub/cat/a.png"; cp "$T/rgb.png" "$T/dsub/dog/b.png"
cp "$T/rgb.png" "$T/dnew/cat/a.png"; cp "$T/rgb.png" "$T/dnew/emu/b.png"; cp "$T/rgb.png" "$T/dempty/cat/a.png"
printf 'ant\ncat\ndog\n' >"$T/acd.txt"
check "class folders with --classes" $P --patch 8 --classes "$T/acd.txt" "$T/dsub"; cp "$T/out" "$T/dsub.vt"
printf 'd/dog/a.png dog\nd/cat/a.png cat\n' >"$T/l3.txt"
check "a list of names with --classes" $P --patch 8 --classes "$T/acd.txt" "$T/l3.txt"; cp "$T/out" "$T/l3.vt"
pycheck "folders and list names are labelled by name in the --classes list" '
import vtstream as V
t = "'"$T"'"
m, f = V.read(t + "/dsub.vt")
assert list(f["label"]) == [1, 2], list(f["label"])
assert m["CLASSES"] == ["3"] and m["CLASS"] == ["0 ant", "1 cat", "2 dog"], m
m, f = V.read(t + "/l3.vt")
assert list(f["label"]) == [2, 1], list(f["label"])
print("ok")'
check_exit 1 "a class folder not in --classes is an error" $P --patch 8 --classes "$T/acd.txt" "$T/dnew"
check_grep "... naming it" "^patchify: class folder 'emu' is not in .*acd.txt" "$T/err"
check "an empty class folder" $P --patch 8 "$T/dempty"
check_grep "... is warned of" "^patchify: .*dempty/dog: an empty class folder; it is class 1" "$T/err"

# PyTorch's (N,C,H,W) arrays read as volumes: warned of, with the fix.
$PY -c "import numpy as np; np.save('$T/nchw.npy', np.zeros((2, 3, 8, 8), np.uint8))"
check "an (N,3,8,8) array" $P --patch 4 "$T/nchw.npy"
check_grep "... is warned of as PyTorch's layout" "^patchify: .*nchw.npy: read as volumes of 3 slices of 8x8; if it is PyTorch's \(N,C,H,W\)" "$T/err"

# --- the per-record source field (vitpipe(5)) -----------------------------
$P --frames 3 --stride 5 --patch 8 "$T/v.mp4" >"$T/vs.vt" || nok "video with --stride"
mkdir -p "$T/odd/c"
cp "$T/rgb.png" "$T/odd/c/$(printf 'new\nline.png')"; cp "$T/rgb.png" "$T/odd/c/$(printf 'x\377.png')"
check "file names that are not text" $P --patch 8 "$T/odd"; cp "$T/out" "$T/odd.vt"
check "--no-source" $P --patch 8 --no-source "$T/rgb.png"; cp "$T/out" "$T/nosrc.vt"
pycheck "source: PATH, PATH:N, PATH:frames A-B for every input kind" '
import vtstream as V
t = "'"$T"'"
want = {
    "png": [t + "/rgb.png"],
    "c10x2": ["%s/data_batch_1.bin:%d" % (t, i) for i in range(20)] * 2,
    "i1": ["%s/x-images-idx3-ubyte:%d" % (t, i) for i in range(30)],
    "i2": ["%s/z-images-idx3-ubyte.gz:%d" % (t, i) for i in range(30)],
    "vol": ["%s/vol.npy:%d" % (t, i) for i in range(5)],
    "dir": [t + p for p in ("/d/ant/x.png", "/d/cat/a.png", "/d/dog/a.png", "/d/dog/b.jpg")],
    "list": [t + p for p in ("/d/dog/a.png", "/d/cat/a.png", "/d/ant/x.png")],
    "v1": [t + "/v.avi:frames 2-14"],
    "vs": [t + "/v.mp4:frames 2-12"],
    "raw": ["stdin:frames 0-7", "stdin:frames 8-15"],
    "odd": [t + "/odd/c/new?line.png", t + "/odd/c/x?.png"],
}
for name, w in want.items():
    got = V.sources(t + "/" + name + ".vt")
    assert got == w, (name, got[:3], w[:3])
m, f = V.read(t + "/nosrc.vt")
m0, f0 = V.read(t + "/png.vt")
assert sorted(f) == ["label", "patch"] and sorted(f0) == ["label", "patch", "source"]
assert (f["patch"] == f0["patch"]).all()
print("ok")'
check_grep "source is a u8 field of per-record length" '^FIELD source u8 \*$' "$T/png.vt"
# Records with a source pass through posgen, vtool, vit-train and vit-eval.
$P --patch 8 "$T/d" | posgen >"$T/dpos.vt" || nok "patchify | posgen"
check "vtool head keeps the source" sh -c "vtool head -n 2 '$T/dpos.vt' >'$T/dhead.vt'"
pycheck "patchify | posgen | vtool head keeps the source" '
import vtstream as V
t = "'"$T"'"
assert V.sources(t + "/dpos.vt") == V.sources(t + "/dir.vt")
assert V.sources(t + "/dhead.vt") == V.sources(t + "/dir.vt")[:2]
print("ok")'
check "vit-train on a stream with source" vit-train --dim 16 --depth 1 --heads 2 --mlp 16 \
    --pe rope-axial --steps 2 -b 2 --threads 1 -o "$T/srcm.vt" "$T/dpos.vt"
check "vit-eval on a stream with source" vit-eval --resamples 0 --threads 1 "$T/srcm.vt" "$T/dpos.vt"
check "shuffle-eval from a pipe (its spilled copy)" sh -c "shuffle-eval -k 1 --threads 1 '$T/srcm.vt' <'$T/dpos.vt'"
check "shuffle-eval --emit and vtool cat keep the source" sh -c \
    "shuffle-eval --emit 0 '$T/dpos.vt' | vtool cat >'$T/demit.vt'"
pycheck "... the same sources" '
import vtstream as V
t = "'"$T"'"
assert V.sources(t + "/demit.vt") == V.sources(t + "/dir.vt")
print("ok")'

# --- augmentation: determinism, thread independence, epochs, subset, shard
AUG="--patch 4 --crop-pad 4 --flip --randaugment 2,14 --erase 0.25 --epochs 2 --shuffle"
$P $AUG --seed 3 --threads 1 "$T/data_batch_1.bin" >"$T/a1.vt" &&
$P $AUG --seed 3 --threads 2 "$T/data_batch_1.bin" >"$T/a2.vt" &&
$P $AUG --seed 3 --threads 2 "$T/data_batch_1.bin" >"$T/a3.vt" &&
$P $AUG --seed 4 --threads 2 "$T/data_batch_1.bin" >"$T/a4.vt" || nok "augmenting"
same "$T/a1.vt" "$T/a2.vt" && ok "augmented bytes: 1 thread = 2 threads" || nok "thread count changes the bytes"
cmp -s "$T/a2.vt" "$T/a3.vt" && ok "augmented bytes: same seed, same bytes" || nok "same seed, different bytes"
same "$T/a1.vt" "$T/a4.vt" && nok "another seed, same bytes" || ok "another seed, other bytes"
$P --patch 4 --rrc=0.3,1 --resize 24x24 --flip --seed 1 --threads 1 "$T/d" >"$T/b1.vt" &&
$P --patch 4 --rrc=0.3,1 --resize 24x24 --flip --seed 1 --threads 2 "$T/d" >"$T/b2.vt" &&
same "$T/b1.vt" "$T/b2.vt" && ok "RandomResizedCrop deterministic" || nok "RandomResizedCrop not deterministic"
check_grep "rrc output size" '^SIZE 24x24$' "$T/b1.vt"
pycheck "epochs: each a permutation, reshuffled, augmented afresh" '
import numpy as np, vtstream as V
t = "'"$T"'"
m, f = V.read(t + "/a1.vt")
lab = np.load(t + "/c10_lab.npy")
assert m["RECORDS"] == ["40"] and m["EPOCH_RECORDS"] == ["20"]
e0, e1 = f["label"][:20], f["label"][20:]
assert sorted(e0) == sorted(lab) and sorted(e1) == sorted(lab)
p0, p1 = f["patch"][:20], f["patch"][20:]
assert not (p0 == p1).all()
m, f = V.read(t + "/c10.vt")
assert not (p0 == f["patch"][:20]).all()
print("ok")'
$P --patch 4 --epochs 2 --shuffle --seed 9 "$T/data_batch_1.bin" >"$T/s.vt" &&
$P --patch 4 --subset 0.5 --seed 2 "$T/data_batch_1.bin" >"$T/sub.vt" &&
$P --patch 4 --shard 0/3 --epochs 2 --shuffle --seed 9 "$T/data_batch_1.bin" >"$T/sh0.vt" &&
$P --patch 4 --shard 1/3 --epochs 2 --shuffle --seed 9 "$T/data_batch_1.bin" >"$T/sh1.vt" &&
$P --patch 4 --shard 2/3 --epochs 2 --shuffle --seed 9 "$T/data_batch_1.bin" >"$T/sh2.vt" || nok "subset/shard runs"
pycheck "shuffle keeps records whole; subset per class; shards partition" '
import numpy as np, vtstream as V
t = "'"$T"'"
m, base = V.read(t + "/c10.vt")
m, s = V.read(t + "/s.vt")
key = lambda p: p.tobytes()
want = {key(base["patch"][i]): base["label"][i] for i in range(20)}
assert all(want[key(s["patch"][i])] == s["label"][i] for i in range(40))
assert [key(p) for p in s["patch"][:20]] != [key(p) for p in base["patch"]]
m, sub = V.read(t + "/sub.vt")
lab = base["label"]
for c in range(10):
    n = (lab == c).sum(); k = (sub["label"] == c).sum()
    assert k == int(0.5 * n + 0.5), (c, n, k)
assert m["EPOCH_RECORDS"] == [str(len(sub["label"]))]
sh = [V.read(t + "/sh%d.vt" % i) for i in range(3)]
assert [x[0]["EPOCH_RECORDS"] for x in sh] == [["7"], ["7"], ["6"]]
for e, n in ((0, (7, 7, 6)), (1, (7, 7, 6))):
    parts = [x[1]["patch"][e * k:(e + 1) * k] for x, k in zip(sh, n)]
    order = [None] * 20
    for i in range(3):
        order[i::3] = [key(p) for p in parts[i]]
    assert order == [key(p) for p in s["patch"][20 * e:20 * e + 20]]
print("ok")'

# --- bad input: a clean error naming the file, or --skip-bad -------------
head -c 200 "$T/rgb.png" >"$T/trunc.png"; head -c 300 "$T/rgb.jpg" >"$T/trunc.jpg"
head -c 5000 "$T/data_batch_1.bin" >"$T/trunc_batch.bin"
printf 'not an image at all' >"$T/junk.png"; head -c 2000 /dev/urandom >"$T/junk.mp4"
gzip -c "$T/x-images-idx3-ubyte" | head -c 500 >"$T/t-images-idx3-ubyte.gz"
$PY - "$T" <<'EOF'
import sys, numpy as np
t = sys.argv[1]
b = bytearray(open(t + "/data_batch_1.bin", "rb").read()); b[3073 * 4] = 12
open(t + "/badlabel.bin", "wb").write(b)
open(t + "/badmagic.npy", "wb").write(b"\x93NUMPX" + open(t + "/vol.npy", "rb").read()[6:])
d = "{'descr': '|u1', 'fortran_order': False, 'shape': (99999999, 9999, 99999), }"
d = (d + " " * (117 - len(d)) + "\n").encode()
open(t + "/huge.npy", "wb").write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d + bytes(64))
hdr = bytes([0, 0, 8, 3]) + (2**31).to_bytes(4, "big") + (70000).to_bytes(4, "big") + (9).to_bytes(4, "big")
open(t + "/absurd-images-idx3-ubyte", "wb").write(hdr)
open(t + "/badidx-images-idx3-ubyte", "wb").write(b"\x01\x02\x03\x04" + bytes(100))
np.save(t + "/lab4.npy", np.arange(4))
np.save(t + "/negl.npy", np.array([0, -5, 1, 2, 0]))
np.save(t + "/big.npy", np.full((2, 8, 8), 300, np.int32))
np.save(t + "/fort.npy", np.asfortranarray(np.zeros((2, 8, 8, 3), np.uint8)))
import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
ihdr = struct.pack(">IIBBBBB", 70000, 70000, 8, 2, 0, 0, 0)      # 70000x70000 RGB, then nothing
open(t + "/huge.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(bytes(10))) + chunk(b"IEND", b""))
open(t + "/three.txt", "w").write("a\nb\nc\n")
EOF
printf 'd/cat/a.png 1\nd/dog/b.jpg x\n' >"$T/mixed.txt"
printf 'd/cat/a.png\n' >"$T/nolabel.txt"
mkdir -p "$T/bad/a" "$T/bad/b"; cp "$T/rgb.png" "$T/bad/a/1.png"; cp "$T/trunc.png" "$T/bad/a/2.png"; cp "$T/rgb.png" "$T/bad/b/3.png"
cp "$T/rgb.png" "$T/d/cat/big.png"; convert "$T/rgb.png" -resize 200% "$T/d/cat/big.png"

bad() { # bad "what" pattern command...: exit 1, "patchify: " message matching pattern
	d=$1 pat=$2; shift 2
	check_exit 1 "$d" "$@" && { grep -Eq -- "$pat" "$T/err" && ok "$d: message names it" || nok "$d: message '$(head -c 200 "$T/err")' lacks '$pat'"; }
}
bad "truncated png" 'trunc\.png: PNG: .*truncated' $P --patch 8 "$T/trunc.png"
bad "truncated jpeg" 'trunc\.jpg: JPEG' $P --patch 8 "$T/trunc.jpg"
bad "png with wrong magic" 'junk\.png' $P --format image --patch 8 "$T/junk.png"
bad "garbage video" 'junk\.mp4' $P --patch 8 "$T/junk.mp4"
bad "missing file" 'nothere\.png' $P "$T/nothere.png"
bad "a directory as an image" "$T" $P --format image "$T/d"
bad "truncated cifar" 'trunc_batch\.bin.*truncated' $P --patch 4 --format cifar10 "$T/trunc_batch.bin"
bad "cifar label out of range" 'badlabel\.bin: record 4: label 12' $P --patch 4 "$T/badlabel.bin"
bad "truncated gzip idx" 't-images-idx3-ubyte\.gz.*truncated' $P --patch 4 "$T/t-images-idx3-ubyte.gz"
bad "idx wrong magic" 'badidx-images.*bad magic' $P --format idx --patch 4 "$T/badidx-images-idx3-ubyte"
bad "idx absurd dims" 'absurd' $P --patch 4 "$T/absurd-images-idx3-ubyte"
bad "idx label count mismatch" 'short-labels.*29 labels for 30' $P --patch 4 --labels "$T/short-labels-idx1-ubyte" "$T/z-images-idx3-ubyte.gz"
bad "npy wrong magic" 'badmagic\.npy.*magic' $P --format npy "$T/badmagic.npy"
bad "npy absurd shape" 'huge\.npy' $P "$T/huge.npy"
bad "npy fortran order" 'fort\.npy.*Fortran' $P "$T/fort.npy"
bad "npy values out of range" 'big\.npy.*range' $P --patch 4 "$T/big.npy"
bad "png of absurd size" 'huge\.png.*absurd size 70000x70000' $P --patch 8 "$T/huge.png"
bad "labels beyond the --classes names" 'three\.txt: record .*label .* out of range \(3 classes\)' $P --patch 4 --classes "$T/three.txt" "$T/data_batch_1.bin"
bad "npy label count" 'lab4\.npy' $P --patch 4 --labels "$T/lab4.npy" "$T/vol.npy"
bad "npy negative label" 'negl\.npy.*label' $P --patch 2x4x4 --labels "$T/negl.npy" "$T/vol.npy"
bad "list mixing integers and names" 'mixed\.txt' $P --patch 8 "$T/mixed.txt"
bad "list line without a label" 'nolabel\.txt: line 1' $P --patch 8 "$T/nolabel.txt"
printf 'nofile.png 1\n' >"$T/miss.txt"
bad "list naming a missing file" 'nofile\.png' $P --patch 8 "$T/miss.txt"
bad "images of different sizes" 'big\.png.*differs' $P --patch 8 "$T/d"
bad "patch does not divide: the file, 2D sizes" 'rgb\.png: patch 5x5 does not divide the 24x32 records' \
    $P --patch 5 "$T/rgb.png"
bad "tubelet on images: 2D sizes" 'rgb\.png: patch 2x8x8 is a tubelet, but the records are 24x32 images' \
    $P --patch 2x8x8 "$T/rgb.png"
bad "patch does not divide: 3D sizes for clips" 'v\.avi: patch 3x8x8 does not divide the 4x32x32 records' \
    $P --frames 4 --patch 3x8x8 "$T/v.avi"
# A stray file in a class folder, sorted first: named, and not FFmpeg's words.
mkdir -p "$T/stray/a" "$T/stray/b"
cp "$T/rgb.png" "$T/stray/a/img.png"; cp "$T/rgb.png" "$T/stray/b/img.png"
echo 'notes on the data' >"$T/stray/a/README"
bad "non-image in a class folder" 'stray/a/README: not a PNG or JPEG image$' $P --patch 8 "$T/stray"
check "--skip-bad passes over it" $P --patch 8 --skip-bad "$T/stray"
check_grep "... as an image folder" '^SIZE 24x32$' "$T/out"
check_exit 2 "usage: bad --raw" $P --raw 32x32 --patch 8
check_exit 2 "usage: --raw with --shuffle" $P --raw 32x32x3 --shuffle
check_exit 2 "usage: bad --shard" $P --shard 3/3 "$T/rgb.png"
check_exit 2 "usage: unknown preset" $P --norm nosuch "$T/rgb.png"
check_exit 2 "usage: no input" $P
check_exit 0 "--help" $P --help
check_grep "--help lists --randaugment" 'randaugment' "$T/out"
check_exit 0 "--version" $P --version

check "--skip-bad" $P --patch 8 --skip-bad --stats "$T/bad"
check_grep "--skip-bad warns naming the file" '^patchify: skipping: .*2\.png' "$T/err"
check_grep "--skip-bad counts" 'skipped 1 bad records' "$T/err"
check_grep "--stats prints records/s" 'records/s' "$T/err"
pycheck "--skip-bad keeps the good records" '
import vtstream as V
m, f = V.read("'"$T"'/out")
assert list(f["label"]) == [0, 1] and "EPOCH_RECORDS" not in m
print("ok")'
check "--skip-bad over epochs" $P --patch 8 --skip-bad --epochs 3 "$T/bad"
check_grep "a bad file is reported once" 'skipped 1 bad records' "$T/err"
finish
