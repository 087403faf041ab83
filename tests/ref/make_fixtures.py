#!/usr/bin/python3
"""make_fixtures.py - reference fixtures for tests/unit/test_vit_ref.c.

Builds the tiny ViT of vit_ref.py in float64 PyTorch for each position
encoding below, runs one forward and backward on random inputs and writes
data/vit_ref_NAME.vt: a single-record vitpipe container (see vitpipe(5))
with the model config as VIT_* header keys (vit_config_save's), and fields
x [B][T][P], pos [T][A], target [B][C], logits [B][C], loss, then for every
parameter tensor "p:NAME" (value) and "g:NAME" (gradient).

usage: /usr/bin/python3 tests/ref/make_fixtures.py [OUTDIR]   (default data)
"""
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vit_ref import ViT  # noqa: E402

CASES = {
    # name: (pe, pool, locality, cls_rotate[, grid])
    "abs": ("abs", "cls", False, False),
    "liere8": ("liere:8", "cls", False, True),
    "ropemixed": ("rope-mixed", "mean", False, False),
    "comropeld8": ("comrope-ld:8", "cls", True, False),
    "ape": ("ape", "cls", False, True),
    "apeofficial": ("ape,official", "cls", False, True),
    "apeofficial3d": ("ape,official", "cls", False, True, [2, 3, 3]),
}
DIM, DEPTH, HEADS, MLP, CLASSES, P, GRID, B = 32, 2, 2, 32, 5, 12, [3, 3], 2


DTYPES = {"f32": "<f4", "f64": "<f8", "i32": "<i4"}


def write_vt(path, records, meta):
    """A stream of records, each [(name, array)] with the first's fields,
    dtypes (np.float32, float64, int32) and shapes; meta [(key, val)]."""
    head = ["VITPIPE 1", "BYTEORDER little", "ALIGN 64",
            "RECORDS %d" % len(records)]
    kinds = {np.dtype(v): k for k, v in DTYPES.items()}
    for name, a in records[0]:
        head.append(" ".join(["FIELD", name, kinds[a.dtype]] +
                             [str(d) for d in a.shape]))
    head += [f"{k} {v}" for k, v in meta]
    head.append("ENDHDR")
    text = ("\n".join(head) + "\n").encode()
    text += b"\n" * (-len(text) % 64)
    body = bytearray()
    for fields in records:
        for (_, a), (_, first) in zip(fields, records[0]):
            assert a.dtype == first.dtype and a.shape == first.shape
            raw = np.ascontiguousarray(a, a.dtype.newbyteorder("<")).tobytes()
            body += raw + b"\0" * (-len(raw) % 64)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(text + bytes(body))
    os.replace(tmp, path)


def case(name, pe, pool, locality, cls_rotate, grid=GRID, *, outdir, seed):
    torch.manual_seed(seed)
    A = len(grid)
    cls_pos = [0.5] * A
    m = ViT(DIM, DEPTH, HEADS, MLP, CLASSES, P, A, grid, pe=pe, pool=pool,
            locality=locality, sigma=0.7, cls_rotate=cls_rotate,
            cls_pos=cls_pos).double()
    with torch.no_grad():
        # away from the init, so every path carries signal
        for n, p in zip(m.names, m.params):
            if n == "pe.params":
                p.copy_(torch.rand_like(p) * 2 * math.pi if "liere" in pe
                        else torch.randn_like(p))
            elif n.endswith("log_sigma"):
                p.add_(0.3 * torch.randn_like(p))
            else:
                p.add_(0.2 * torch.randn_like(p))
    T = math.prod(grid)
    x = torch.randn(B, T, P, dtype=torch.float64)
    cells = torch.meshgrid(*[torch.arange(n) for n in grid], indexing="ij")
    pos = (torch.stack(cells, -1).view(T, A).double() + 0.5) / \
        torch.tensor(grid, dtype=torch.float64)
    if pe.startswith("ape"):  # ComRoPE's offset: some read past the border
        pos = pos + torch.tensor([0.15, -0.3, 0.2][-A:], dtype=torch.float64)
    target = torch.softmax(2 * torch.randn(B, CLASSES, dtype=torch.float64), -1)
    logits, loss = m(x, pos, target)
    loss.backward()
    meta = [("VIT_DIM", DIM), ("VIT_DEPTH", DEPTH), ("VIT_HEADS", HEADS),
            ("VIT_MLP", MLP), ("VIT_CLASSES", CLASSES), ("VIT_P", P),
            ("VIT_AXES", A), ("VIT_POOL", pool), ("VIT_PE", pe),
            ("VIT_SHARE", "none"), ("VIT_DROPOUT", 0), ("VIT_EMB_DROPOUT", 0),
            ("VIT_LOCALITY", int(locality)), ("VIT_SIGMA", 0.7),
            ("VIT_GRID", ",".join(map(str, grid))),
            ("VIT_CLS_ROTATE", int(cls_rotate)),
            ("VIT_CLS_POS", ",".join(map(str, cls_pos))),
            ("SOURCE", "tests/ref/make_fixtures.py (PyTorch %s, float64)"
             % torch.__version__)]
    f = lambda t: t.detach().numpy().astype(np.float32)  # noqa: E731
    fields = [("x", f(x)), ("pos", f(pos)), ("target", f(target)),
              ("logits", f(logits)), ("loss", f(loss))]
    for n, p in zip(m.names, m.params):
        fields.append(("p:" + n, f(p)))
        fields.append(("g:" + n, f(p.grad)))
    path = os.path.join(outdir, f"vit_ref_{name}.vt")
    write_vt(path, [fields], meta)
    print(path, "loss %.6f" % loss.item())


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "data"
    os.makedirs(outdir, exist_ok=True)
    for i, (name, spec) in enumerate(CASES.items()):
        case(name, *spec, outdir=outdir, seed=i + 1)


if __name__ == "__main__":
    main()
