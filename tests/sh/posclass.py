#!/usr/bin/python3
"""posclass.py - write a synthetic vitpipe stream where only position tells
the class, for the vit-train and vit-eval tests (written independently of
lib/io/vt.c, so it also checks the format).

Every record is a G x G grid of tokens of P u8 values (patch 2x2, one
channel).  All tokens are dim noise except two markers: A (bright) and B
(mid-grey) next to it.  Class 0: B is right of A; class 1: B is below A.
The set of token contents is the same for both classes, so a model blind to
positions is at chance (50%).

Options (for bad-input tests too): --records N, --seed S, --grid G,
--epoch-records N (declare EPOCH_RECORDS), --no-records (omit RECORDS),
--f32 (f32 patches), --nan K (record K gets a NaN: in its patch
with --f32, else in its pos), --label L (record 0's
label), --clspos VALUE (the CLSPOS key), --axes A, --values P, --patch-name NAME, --no-label,
--tokens-from K:G2 (records from K on use a G2 x G2 grid), --convention C
(positions as posgen makes them, integer, linspace or centre, and its POS
key; default: integer positions under 'POS grid', a key that names no
convention), --pos-scale S (positions times S), --no-pos (no pos field, POS
or CLSPOS key: for posgen to add them), --sorted (class 0 for the first
half of the records, class 1 for the rest: a class-sorted data set)."""
import argparse
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--records", type=int, default=256)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--grid", type=int, default=4)
ap.add_argument("--epoch-records", type=int, default=0)
ap.add_argument("--no-records", action="store_true")
ap.add_argument("--f32", action="store_true")
ap.add_argument("--nan", type=int, default=-1)
ap.add_argument("--label", type=int, default=None)
ap.add_argument("--clspos", default="none")
ap.add_argument("--axes", type=int, default=2)
ap.add_argument("--values", type=int, default=4)
ap.add_argument("--patch-name", default="patch")
ap.add_argument("--no-label", action="store_true")
ap.add_argument("--tokens-from", default="")
ap.add_argument("--convention", default="")
ap.add_argument("--pos-scale", type=float, default=1)
ap.add_argument("--no-pos", action="store_true")
ap.add_argument("--sorted", action="store_true")
a = ap.parse_args()
rng = np.random.default_rng(a.seed)
ALIGN = 64
pdt = "f32" if a.f32 else "u8"
hdr = ["VITPIPE 1", "BYTEORDER little", "ALIGN %d" % ALIGN]
if not a.no_records:
    hdr.append("RECORDS %d" % a.records)
hdr.append("FIELD %s %s * %d" % (a.patch_name, pdt, a.values))
if not a.no_pos:
    hdr.append("FIELD pos f32 * %d" % a.axes)
if not a.no_label:
    hdr.append("FIELD label i32")
hdr += ["GRID %dx%d" % (a.grid, a.grid), "PATCH 2x2", "CHANNELS 1",
        "MEAN 0.1", "STD 0.3", "CLASSES 2", "CLASS 0 right", "CLASS 1 below",
        "SOURCE posclass.py"]
if not a.no_pos:
    hdr += ["POS " + ("%s grid=%dx%d" % (a.convention, a.grid, a.grid) if a.convention else "grid"),
            "CLSPOS " + a.clspos]
if a.epoch_records:
    hdr.append("EPOCH_RECORDS %d" % a.epoch_records)
hdr.append("ENDHDR")
text = ("\n".join(hdr) + "\n").encode()
text += b"\n" * (-len(text) % ALIGN)
out = sys.stdout.buffer
out.write(text)


def put(arr):
    b = arr.tobytes()
    out.write(b + b"\0" * (-len(b) % ALIGN))


k, g2 = (a.tokens_from.split(":") + [""])[:2] if a.tokens_from else (-1, 0)
for r in range(a.records):
    G = int(g2) if a.tokens_from and r >= int(k) else a.grid
    T = G * G
    label = int(rng.integers(2))
    if a.sorted:
        label = int(r >= a.records // 2)
    y, x = int(rng.integers(G - label)), int(rng.integers(G - 1 + label))
    tok = rng.integers(0, 40, size=(T, a.values))
    tok[y * G + x] = 250
    tok[(y + label) * G + x + 1 - label] = 140
    if a.label is not None and r == 0:
        label = a.label
    pos = np.zeros((T, a.axes), np.float32)
    yy, xx = np.divmod(np.arange(T), G)
    pos[:, -2], pos[:, -1] = yy, xx
    if a.convention == "linspace":	# posgen's formulas, in double
        pos[:, -2:] = np.stack([yy, xx], 1) * (G / G) / (G - 1)
    elif a.convention == "centre":
        pos[:, -2:] = (np.stack([yy, xx], 1) + 0.5) / G
    pos *= np.float32(a.pos_scale)
    patch = tok.astype(np.float32) / 255 if a.f32 else tok.astype(np.uint8)
    if r == a.nan and a.f32:
        patch[0, 0] = np.nan
    elif r == a.nan:
        pos[0, 0] = np.nan
    put(np.array([T] if a.no_pos else [T, T], np.int64))
    put(patch)
    if not a.no_pos:
        put(pos)
    if not a.no_label:
        put(np.array([label], np.int32))
