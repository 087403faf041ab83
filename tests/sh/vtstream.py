"""vtstream.py - a small, independent reader of vitpipe streams for the
tests (numpy only; fixed-shape fields, as patchify writes them)."""
import numpy as np

DT = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i32": np.int32,
      "i64": np.int64, "f32": np.float32, "f64": np.float64}


def read(path):
    """(meta: {key: [values]}, {field: array [records, dims...]})."""
    data = open(path, "rb").read()
    end = data.index(b"\nENDHDR\n") + len(b"\nENDHDR\n")
    lines = data[:end].decode().splitlines()
    assert lines[0] == "VITPIPE 1", lines[0]
    meta, fields, align = {}, [], 64
    for ln in lines[1:-1]:
        key, _, val = ln.partition(" ")
        if key == "FIELD":
            parts = val.split()
            assert "*" not in parts, "variable dims not supported here"
            fields.append((parts[0], DT[parts[1]], [int(d) for d in parts[2:]]))
        else:
            meta.setdefault(key, []).append(val)
        if key == "ALIGN":
            align = int(val)
    pad = lambda n: (n + align - 1) // align * align
    pos = pad(end)
    recs = {name: [] for name, _, _ in fields}
    while pos < len(data):
        for name, dt, dims in fields:
            n = int(np.prod(dims)) * np.dtype(dt).itemsize
            assert pos + n <= len(data), "truncated record"
            recs[name].append(np.frombuffer(data[pos:pos + n], dt).reshape(dims))
            pos += pad(n)
    out = {}
    for name, dt, dims in fields:
        out[name] = np.array(recs[name]).reshape([len(recs[name])] + dims)
    return meta, out


def patches(img, pt, ph, pw):
    """Tokens of img [T][H][W][C] in vitpipe order: grid (t, y, x) row-major,
    values (dt, dy, dx, c) -- written here with reshape/transpose."""
    T, H, W, C = img.shape
    x = img.reshape(T // pt, pt, H // ph, ph, W // pw, pw, C)
    x = x.transpose(0, 2, 4, 1, 3, 5, 6)
    return x.reshape((T // pt) * (H // ph) * (W // pw), pt * ph * pw * C)


def body(path):
    """The bytes after the header: records only (HISTORY lines differ)."""
    data = open(path, "rb").read()
    end = data.index(b"\nENDHDR\n") + len(b"\nENDHDR\n")
    return data[end:].lstrip(b"\n")
