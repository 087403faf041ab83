"""pin.py - the behaviour pin of pin.sh: one line per checked output, and
the comparison with the committed reference tests/sh/pin.ref.

  pin.py summary FILE...       a line per file: NAME KIND VALUES
  pin.py compare NOW REF       0 when NOW matches REF (a line per mismatch)

Kinds: 'sha' (sha256 of what is exact on every host: seeded initial
parameters, flops' counts) and 'proj' (trained parameters and rotations,
whose last bits differ between CPU kinds: three weighted sums of the f32
values and their norm, compared to a tolerance relative to the norm)."""
import hashlib
import os
import sys

import numpy as np
from vtread import vtread

TOL = 1e-5


def floats(path):
    """Every f32 field of every record of path but the optimizer's state,
    in order, as one float64 vector."""
    _, recs = vtread(open(path, "rb"))
    parts = [v.ravel().astype(np.float64) for r in recs for k, v in r.items()
             if v.dtype == np.float32 and not k.startswith("adam.")]
    return np.concatenate(parts) if parts else np.zeros(0)


def proj(x):
    i = np.arange(x.size, dtype=np.float64)
    return [float(np.sum(x * np.cos(0.37 * i))), float(np.sum(x * np.sin(1.3 * i + 0.5))),
            float(np.sum(x * np.cos(2.9 * i + 1))), float(np.sqrt(np.sum(x * x)))]


def summary(path):
    name = os.path.basename(path)
    if name.startswith(("init-", "gen-", "flops-")):
        if name.startswith("flops-"):
            data = open(path, "rb").read()
        else:	# the parameters, not the header (HISTORY names the paths)
            data = b"".join(np.ascontiguousarray(v).tobytes() for r in vtread(open(path, "rb"))[1]
                            for k, v in r.items() if not k.startswith("adam."))
        return f"{name} sha {hashlib.sha256(data).hexdigest()}"
    return f"{name} proj " + " ".join(f"{v:.9g}" for v in proj(floats(path)))


def compare(now, ref):
    def table(path):
        return {l.split()[0]: l.split()[1:] for l in open(path) if l.strip()}
    a, b = table(now), table(ref)
    bad = 0
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            print(f"{k}: {'not in the reference' if k in a else 'not made'}")
            bad += 1
        elif a[k][0] == "sha" or b[k][0] == "sha":
            if a[k] != b[k]:
                print(f"{k}: {a[k][1][:16]} is not the reference's {b[k][1][:16]}")
                bad += 1
        else:
            x, y = np.array(a[k][1:], float), np.array(b[k][1:], float)
            if not np.all(np.abs(x - y) <= TOL * (1 + y[3])):
                print(f"{k}: {' '.join(a[k][1:])} is not the reference's {' '.join(b[k][1:])}")
                bad += 1
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "summary":
        for p in sys.argv[2:]:
            print(summary(p))
    else:
        sys.exit(1 if compare(sys.argv[2], sys.argv[3]) else 0)
