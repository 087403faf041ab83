"""vtstream.py - helpers of the patchify tests on top of vtread, the
NumPy reader printed in vitpipe(5), extracted by the test into
$T/man5_vtread.py (tests/sh/vtread.py is another, command-line reader)."""
import numpy as np
from man5_vtread import vtread


def read(path):
    """(header: {key: [values]}, {field: array [records, dims...]})."""
    head, recs = vtread(open(path, "rb"))
    out = {}
    for rec in recs:
        for name, arr in rec.items():
            out.setdefault(name, []).append(arr)
    return head, {name: np.array(arrs) for name, arrs in out.items()}


def body(path):
    """The bytes after the header: the records (HISTORY lines differ)."""
    data = open(path, "rb").read()
    end = data.index(b"\nENDHDR\n") + len(b"\nENDHDR\n")
    return data[end:].lstrip(b"\n")


def patches(img, pt, ph, pw):
    """Tokens of img [T][H][W][C] in vitpipe order: grid (t, y, x) row-major,
    values (dt, dy, dx, c) -- written here with reshape/transpose."""
    T, H, W, C = img.shape
    x = img.reshape(T // pt, pt, H // ph, ph, W // pw, pw, C)
    x = x.transpose(0, 2, 4, 1, 3, 5, 6)
    return x.reshape((T // pt) * (H // ph) * (W // pw), pt * ph * pw * C)
