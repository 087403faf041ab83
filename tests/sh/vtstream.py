"""vtstream.py - helpers of the shell tests on top of vtread, the NumPy
reader printed in vitpipe(5) (lib.sh extracts it into $T/vtread.py).

As a command, for shell tests:
  vtstream.py FILE KEY              the header value(s) of KEY
  vtstream.py FILE --field NAME     record 0's field NAME, one value a line
  vtstream.py FILE --maxdiff OTHER  largest |a - b| over the f32 fields both
                                    single-record files share
  vtstream.py FILE --labels         the label of every record, one a line"""
import sys

import numpy as np
from vtread import vtread


def stack(arrs):
    """arrs as one array [records, dims...], or, when their shapes differ
    (fields with '*' dims), an object array of them [records]."""
    if len({a.shape for a in arrs}) <= 1:
        return np.array(arrs)
    out = np.empty(len(arrs), object)
    for i, a in enumerate(arrs):
        out[i] = a
    return out


def read(path):
    """(header: {key: [values]}, {field: array [records, dims...]})."""
    head, recs = vtread(open(path, "rb"))
    out = {}
    for rec in recs:
        for name, arr in rec.items():
            out.setdefault(name, []).append(arr)
    return head, {name: stack(arrs) for name, arrs in out.items()}


def sources(path):
    """The source field of every record, as text."""
    return [bytes(r["source"]).decode() for r in vtread(open(path, "rb"))[1]]


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


def main(path, what, arg=None):
    head, recs = vtread(open(path, "rb"))
    if what == "--field":
        for v in next(recs)[arg].ravel():
            print(v)
    elif what == "--maxdiff":
        a, b = next(recs), next(vtread(open(arg, "rb"))[1])
        print(max([float(np.max(np.abs(v - b[k]), initial=0)) for k, v in a.items()
                   if v.dtype == np.float32 and k in b], default=0.0))
    elif what == "--labels":
        for r in recs:
            print(int(r["label"]))
    else:
        for v in head.get(what, []):
            print(v)


if __name__ == "__main__":
    main(*sys.argv[1:])
