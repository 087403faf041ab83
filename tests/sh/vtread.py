#!/usr/bin/python3
"""vtread.py - a vitpipe stream reader for the tests, written from
vitpipe(5) independently of lib/vt.c.

  vtread.py FILE KEY              print the header value(s) of KEY
  vtread.py FILE --field NAME     print record 0's field NAME, one value a line
  vtread.py FILE --maxdiff OTHER  largest |a - b| over the f32 fields both
                                  single-record files share
  vtread.py FILE --labels         the label of every record, one a line"""
import sys

import numpy as np

DT = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i32": np.int32,
      "i64": np.int64, "f32": np.float32, "f64": np.float64}


def read(path):
    f = open(path, "rb")
    if f.readline() != b"VITPIPE 1\n":
        raise SystemExit("not a vitpipe stream")
    meta, fields, align = [], [], 64
    used = 10
    while True:
        line = f.readline()
        used += len(line)
        line = line.decode().rstrip("\n")
        if line == "ENDHDR":
            break
        key, _, val = line.partition(" ")
        if key == "ALIGN":
            align = int(val)
        if key == "FIELD":
            p = val.split()
            fields.append((p[0], DT[p[1]], p[2:]))
        meta.append((key, val))
    f.read(-used % align)
    recs = []
    while True:
        ndyn = sum(d == "*" for _, _, dims in fields for d in dims)
        dyn = []
        if ndyn:
            b = f.read(8 * ndyn)
            if not b:
                break
            dyn = list(np.frombuffer(b, np.int64))
            f.read(-8 * ndyn % align)
        rec = {}
        for name, dt, dims in fields:
            shape = [int(dyn.pop(0)) if d == "*" else int(d) for d in dims]
            n = int(np.prod(shape)) * np.dtype(dt).itemsize
            b = f.read(n)
            if len(b) < n:
                if not rec and not ndyn and not b:
                    return meta, recs
                raise SystemExit("truncated")
            rec[name] = np.frombuffer(b, dt).reshape(shape)
            f.read(-n % align)
        recs.append(rec)
    return meta, recs


meta, recs = read(sys.argv[1])
if sys.argv[2] == "--field":
    for v in recs[0][sys.argv[3]].ravel():
        print(v)
elif sys.argv[2] == "--maxdiff":
    _, other = read(sys.argv[3])
    d = 0.0
    for k, v in recs[0].items():
        if v.dtype == np.float32 and k in other[0]:
            d = max(d, float(np.max(np.abs(v - other[0][k]))))
    print(d)
elif sys.argv[2] == "--labels":
    for r in recs:
        print(int(r["label"]))
else:
    for k, v in meta:
        if k == sys.argv[2]:
            print(v)
