#!/usr/bin/python3
"""make_safetensors_fixtures.py - PyTorch's side of vtool's safetensors, for
tests/sh/safetensors_torch.sh.

For abs, rope-mixed and liere:8, builds the tiny ViT of vit_ref.py (seeded,
float32 weights moved away from the init, run in float64) and writes

  data/timm_ref_NAME.safetensors  its state dict under timm's names and
                                  layouts (vit_ref.timm_state_dict), F32, by
                                  the minimal writer below (no safetensors
                                  package)
  data/timm_ref_NAME.vt           a stream of 4 records (vitpipe(5)): patch
                                  f32 [T][P] and pos f32 [T][2], the model's
                                  input, and logits f64 [C], its output

abs and rope-mixed are written as timm's are (metadata "format": "pt"
only): vtool from-safetensors infers the model, told --heads 2 (timm's
heads are width / 64).  LieRE has no timm counterpart: liere:8's file
carries the metadata of vtool to-safetensors' exports that its import
reads (the "vitpipe" mark, the VIT_* config, GRID, PATCH, CHANNELS, POS,
CLSPOS).  Positions are posgen's, explicit in the stream and its POS key:
integer for rope-mixed (posgen -c integer: timm's RoPE-Mixed turns by patch
indices), linspace (posgen's default) for the others; the CLS token is
not rotated (CLSPOS none), as in timm.  The grids differ (4x4 patches of
4x4 RGB pixels; liere:8 3x4 patches of 2x4 pixels, 2 channels), so a y, x
or channel mix-up shows.

Before writing, the logits of timmref.py's NumPy forward of timm's model
on the state dict (a convolution over the images, timm's rotation) must be
vit_ref's on the patches, to 1e-9: the names and layouts are timm's.

usage: /usr/bin/python3 tests/ref/make_safetensors_fixtures.py [OUTDIR]
(default data).  The committed files come back byte for byte:
  d=$(mktemp -d) && /usr/bin/python3 tests/ref/make_safetensors_fixtures.py $d &&
      for f in $d/*; do cmp $f data/${f##*/}; done
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "sh"))
from make_fixtures import write_vt  # noqa: E402
from timmref import forward as timm_forward  # noqa: E402
from vit_ref import ViT  # noqa: E402

CASES = {
    # name: (pe, channels, patch (ph, pw), grid (gy, gx), positions)
    "abs": ("abs", 3, (4, 4), (4, 4), "linspace"),
    "ropemixed": ("rope-mixed", 3, (4, 4), (4, 4), "integer"),
    "liere8": ("liere:8", 2, (2, 4), (3, 4), "linspace"),
}
DIM, DEPTH, HEADS, MLP, CLASSES, B = 32, 2, 2, 32, 5, 4
MARK = "0.1.0"  # the "vitpipe" key: the version of the export layout


def st_write(path, tensors, meta):
    """safetensors: 8 bytes of header length (little-endian), the JSON
    header (tensor: dtype, shape, data_offsets), padded with spaces to 8
    bytes as the safetensors package pads it, then the raw F32 data."""
    header, chunks, at = {"__metadata__": meta}, [], 0
    for name, t in tensors.items():
        raw = np.ascontiguousarray(t.numpy(), "<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [at, at + len(raw)]}
        chunks.append(raw)
        at += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
    os.replace(tmp, path)


def positions(conv, grid):
    """posgen's positions of grid (y, x), row-major, x fastest, as f32:
    integer i, or linspace i (n / n0) / (n - 1), n0 the grid's n (no
    --n0), in posgen's order of operations."""
    def coord(i, n):
        n0 = n
        if conv == "integer":
            return float(i)
        return i * (n / n0) / (n - 1) if n > 1 else 0.0
    return np.array([[coord(y, grid[0]), coord(x, grid[1])]
                     for y in range(grid[0]) for x in range(grid[1])],
                    np.float32)


def case(name, pe, chans, patch, grid, conv, outdir, seed):
    torch.manual_seed(seed)
    ph, pw = patch
    P, T = chans * ph * pw, grid[0] * grid[1]
    m = ViT(DIM, DEPTH, HEADS, MLP, CLASSES, P, 2, list(grid), pe=pe)
    with torch.no_grad():
        # away from the init (float32), so every path carries signal
        for n, p in zip(m.names, m.params):
            if n == "pe.params":
                p.copy_(torch.rand_like(p) * 2 * math.pi if "liere" in pe
                        else torch.randn_like(p))
            else:
                p.add_(0.2 * torch.randn_like(p))
    sd = m.timm_state_dict(chans, patch)
    m = m.double()
    img = torch.randn(B, chans, grid[0] * ph, grid[1] * pw)
    # vitpipe's patches: grid row-major, values (dy, dx, c), channels last
    x = img.view(B, chans, grid[0], ph, grid[1], pw).permute(0, 2, 4, 3, 5, 1) \
        .reshape(B, T, P)
    pos = positions(conv, grid)
    logits, _ = m(x.double(), torch.from_numpy(pos).double(),
                  torch.zeros(B, CLASSES, dtype=torch.float64))
    logits = logits.detach().numpy()

    meta = {"format": "pt"}
    pos_key = ("integer" if conv == "integer" else
               "linspace n0=%dx%d" % grid) + " grid=%dx%d" % grid
    if pe == "liere:8":
        meta.update({
            "vitpipe": MARK, "GRID": "%dx%d" % grid, "PATCH": "%dx%d" % patch,
            "CHANNELS": str(chans), "POS": pos_key, "CLSPOS": "none",
            "VIT_DIM": str(DIM), "VIT_DEPTH": str(DEPTH),
            "VIT_HEADS": str(HEADS), "VIT_MLP": str(MLP),
            "VIT_CLASSES": str(CLASSES), "VIT_P": str(P), "VIT_AXES": "2",
            "VIT_POOL": "cls", "VIT_PE": pe, "VIT_SHARE": "none",
            "VIT_DROPOUT": "0", "VIT_EMB_DROPOUT": "0", "VIT_LOCALITY": "0",
            "VIT_SIGMA": "1", "VIT_GRID": "%d,%d" % grid,
            "VIT_CLS_ROTATE": "0", "VIT_CLS_POS": "0,0"})
    want = timm_forward({k: v.double().numpy() for k, v in sd.items()}, meta,
                        img.double().numpy(), pos.astype(np.float64), HEADS)
    err = np.abs(want - logits).max() / np.abs(logits).max()
    assert err < 1e-9, f"{name}: timm's forward differs by {err:.3g}"

    path = os.path.join(outdir, f"timm_ref_{name}")
    st_write(path + ".safetensors", sd, meta)
    records = [[("patch", x[b].numpy()), ("pos", pos), ("logits", logits[b])]
               for b in range(B)]
    write_vt(path + ".vt", records, [
        ("GRID", "%dx%d" % grid), ("PATCH", "%dx%d" % patch),
        ("CHANNELS", chans), ("POS", pos_key), ("CLSPOS", "none"),
        ("SOURCE", "tests/ref/make_safetensors_fixtures.py (PyTorch %s, "
         "logits in float64)" % torch.__version__)])
    print(path, "timm's forward within %.1e" % err)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "data"
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(1)
    for i, (name, spec) in enumerate(CASES.items()):
        case(name, *spec, outdir, seed=i + 21)


if __name__ == "__main__":
    main()
