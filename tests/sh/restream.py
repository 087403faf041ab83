"""restream.py IN OUT DROP [KEY=VALUE...] - for the shell tests: the stream
IN as OUT with the header lines whose key (or "FIELD name") is in DROP
(comma-separated, or -) left out and KEY VALUE lines added; with SOURCE set
in the environment, also a field source "$SOURCE/R.png" (R the record's
index), the per-record source of vitpipe(5) that patchify writes.  Written
with NumPy and vtread (vitpipe(5)), independently of lib/io/vt.c."""
import os, sys
import numpy as np
from vtread import vtread
src, dst, drop, add = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4:]
prefix = os.environ.get("SOURCE")
raw = open(src, "rb").read()
lines = [l for l in raw[:raw.index(b"\nENDHDR\n")].decode().split("\n")
         if l.split(" ")[0] not in drop and " ".join(l.split(" ")[:2]) not in drop]
fields = [l.split()[1:] for l in lines if l.startswith("FIELD ")]
if prefix is not None:
    lines.insert(max(i for i, l in enumerate(lines) if l.startswith("FIELD ")) + 1,
                 "FIELD source u8 *")
    fields.append(["source", "u8", "*"])
lines += [kv.replace("=", " ", 1) for kv in add] + ["ENDHDR"]
align = int([l for l in lines if l.startswith("ALIGN ")][0].split()[1])
out = open(dst, "wb")
text = ("\n".join(lines) + "\n").encode()
out.write(text + b"\n" * (-len(text) % align))
def put(b):
    out.write(b + b"\0" * (-len(b) % align))
for r, rec in enumerate(vtread(open(src, "rb"))[1]):
    if prefix is not None:
        rec["source"] = np.frombuffer(f"{prefix}/{r}.png".encode(), np.uint8)
    dyn = [n for name, dt, *dims in fields for n, d in zip(rec[name].shape, dims) if d == "*"]
    if dyn:
        put(np.array(dyn, np.int64).tobytes())
    for name, *_ in fields:
        put(rec[name].tobytes())
