#!/bin/sh
# safetensors_torch.sh - vtool from-safetensors and to-safetensors against
# PyTorch, without PyTorch: the fixtures data/timm_ref_* that
# tests/ref/make_safetensors_fixtures.py made from vit_ref.py's model, for
# abs, rope-mixed (timm's files, the model inferred) and liere:8 (vitpipe's
# metadata):
#  - PyTorch's state dict, under timm's names, imports, and vit-eval's
#    logits on the fixture's records are PyTorch's, to 1e-5 of the largest;
#  - the import exported is that state dict bit for bit, names, dtypes and
#    shapes too: PyTorch's model loads vitpipe's export as its own;
#  - the records' positions are posgen's, of the convention their POS says.
. tests/sh/lib.sh
D=$TOP/data V="$PY $TOP/tests/sh/vtstream.py"
cd "$T" || exit 1
cat > stcheck.py <<'PY'
"""stcheck.py logits STREAM JSONL | same A.safetensors B.safetensors"""
import json, struct, sys
import numpy as np
from vtread import vtread

def tensors(path):
    """{name: (dtype, shape, raw bytes)} of a safetensors file."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    head.pop("__metadata__", None)
    return {k: (e["dtype"], e["shape"], raw[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]])
            for k, e in head.items()}

if sys.argv[1] == "logits":
    want = np.array([r["logits"] for r in vtread(open(sys.argv[2], "rb"))[1]])
    got = np.array([json.loads(l)["logits"] for l in open(sys.argv[3])])
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"{err:.2e}")
    sys.exit(0 if err <= 1e-5 else f"logits differ from PyTorch's by {err:.3g} of the largest")
a, b = tensors(sys.argv[2]), tensors(sys.argv[3])
assert sorted(a) == sorted(b), sorted(set(a) ^ set(b))
bad = [k for k in a if a[k] != b[k]]
assert not bad, "differ: " + ", ".join(bad)
print(len(a))
PY

for c in abs:"--heads 2" ropemixed:"--heads 2" liere8:; do
	n=${c%%:*} opts=${c#*:} f="$D/timm_ref_$n"
	# shellcheck disable=SC2086
	check "$n: vtool from-safetensors of PyTorch's state dict" vtool from-safetensors $opts "$f.safetensors"
	cp "$T/out" "$n.vt"
	vit-eval --predict --logits --json "$n.vt" "$f.vt" > "$n.jsonl" 2>"$T/err" ||
	    nok "$n: vit-eval: $(head -c 300 "$T/err")"
	$PY stcheck.py logits "$f.vt" "$n.jsonl" > err.txt 2>&1 &&
	    ok "$n: vit-eval's logits are PyTorch's (max |error| / max |logit| $(cat err.txt))" ||
	    nok "$n: $(tail -n 1 err.txt)"
	vtool to-safetensors "$n.vt" > "$n.safetensors" 2>"$T/err" || nok "$n: to-safetensors: $(head -c 300 "$T/err")"
	$PY stcheck.py same "$f.safetensors" "$n.safetensors" > err.txt 2>&1 &&
	    ok "$n: its export is PyTorch's state dict, its $(cat err.txt) tensors bit for bit" ||
	    nok "$n: the export is not PyTorch's state dict: $(tail -n 1 err.txt)"
	pos=$($V "$f.vt" POS)
	grid=$($V "$f.vt" GRID)
	posgen --grid "$grid" -c "${pos%% *}" > pos.vt
	[ "$($V pos.vt POS)" = "$pos" ] && [ "$($V "$f.vt" --maxdiff pos.vt)" = 0.0 ] &&
	    ok "$n: the positions are posgen -c ${pos%% *}'s ($pos)" ||
	    nok "$n: the positions are not posgen's for POS $pos"
done
finish
