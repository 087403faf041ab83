#!/bin/sh
# flops: the man page's examples, the paper's Table 5 through the command,
# output forms, usage and input errors.
. tests/sh/lib.sh

# The EXAMPLES of flops(1).
run_examples flops

# Table 5, ViT-L column, through the command (the unit test checks both
# columns with the library; these are the table's totals, lines 528-532 of
# liere-iclr2025-submission.txt, to within 0.2%).
flops --preset large --classes 100 --count paper --pe abs,rope-axial,rope-mixed,liere:8,liere:64 >"$T/l" 2>&1
for row in abs:19.856 rope-axial:19.856 rope-mixed:19.863 liere:8:19.882 liere:64:20.061; do
	pe=${row%:*} want=${row##*:}
	got=$(awk -v pe="$pe" '$1 == pe { print $3 / 1e9 }' "$T/l")
	if awk -v g="${got:-0}" -v w="$want" 'BEGIN { d = (g - w) / w; exit !(d < 0.002 && d > -0.002) }'; then
		ok "ViT-L $pe $got G vs paper $want G"
	else
		nok "ViT-L $pe $got G vs paper $want G"
	fi
done

# The breakdown adds up, and JSON parses with the same totals.
flops --preset base --pe liere:8 --locality >"$T/b"
awk '/^total/ { t = $(NF-1) } /^(patch|CLS|layer|QKV|attention|output|MLP|classifier|PE)/ { s += $NF }
    END { exit !(s == t && t > 0) }' "$T/b" && ok "breakdown sums to the total" || nok "breakdown sums to the total"
flops --preset base --pe liere:8 --locality --json >"$T/j"
check "JSON parses and matches the table" /usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
e = j["encodings"][0]
total = [l.split() for l in open(sys.argv[2]) if l.startswith("total")][0]
assert e["pe"] == "liere:8" and j["locality"] is True
assert e["macs"] == int(total[2]) and e["params"] == int(total[1])
assert sum(c["macs"] for c in e["components"].values()) == e["macs"]
assert e["components"]["pe-exp"]["macs"] > 0
' "$T/j" "$T/b"
check_exit 0 "--pe all" flops --pe all
check_grep "--pe all lists comrope" '^comrope-ld:8 ' "$T/out"

# Help, version, usage errors (exit 2), bad models (exit 1).
check_exit 0 "--help" flops --help
check_grep "--help shows usage" '^usage: flops' "$T/out"
check_exit 0 "--version" flops --version
check_grep "--version names vitpipe" '^flops \(vitpipe\) ' "$T/out"
check_exit 2 "unknown option" flops --bogus
check_exit 2 "operand" flops extra
check_exit 2 "unknown preset" flops --preset huge
check_exit 2 "bad dim" flops --dim 0
check_exit 2 "bad grid" flops --grid 8xx8
check_exit 2 "bad patch" flops --patch 0x4
check_exit 2 "bad share" flops --share some
check_exit 2 "bad count" flops --count approx
check_exit 2 "model and sizes" flops --model m.vt --dim 64
check_exit 2 "unknown encoding: a usage error, as in vit-train" flops --pe abs,foo
[ -s "$T/out" ] && nok "no partial output" || ok "no partial output"
check_exit 2 "block not dividing the head" flops --pe liere:5
check_grep "says why" "dividing the head dimension" "$T/err"
# --pe all on heads of 16: liere:64 cannot be built, and only it is left out.
check_exit 0 "--pe all on a model of head dimension 16" flops --pe all --dim 64 --heads 4
check_grep "... leaves liere:64 out, saying why" "^flops: --pe all: liere:64 left out: .*dividing the head dimension 16$" "$T/err"
grep -q '^liere:8 ' "$T/out" && ! grep -q '^liere:64 ' "$T/out" && ok "... and counts the others" || nok "--pe all rows: $(cut -c1-16 "$T/out" | tr '\n' ' ')"
check_exit 2 "liere:64 named on that model: a usage error" flops --pe liere:64 --dim 64 --heads 4
check_exit 2 "heads not dividing dim" flops --dim 100 --heads 3
check_exit 1 "missing checkpoint" flops --model "$T/none.vt"

# A checkpoint of vit-train (one step of a small model): its configuration
# counts as the same flags, and its parameters are the tensors it holds.
/usr/bin/python3 tests/sh/posclass.py --records 8 --grid 4 >"$T/pc.vt"
M="--dim 32 --depth 2 --heads 4 --mlp 48 --pe liere:4 --share layers --locality"
vit-train $M --steps 1 --batch 8 --threads 1 -o "$T/ck.vt" "$T/pc.vt" 2>/dev/null
check "--model reads a vit-train checkpoint" flops --model "$T/ck.vt" --json
cp "$T/out" "$T/ck.json"
flops $M --classes 2 --patch 2x2 --channels 1 --grid 4x4 --json >"$T/flags.json"
check "--model counts as the same flags" cmp "$T/ck.json" "$T/flags.json"
check "--model: parameters = the checkpoint's tensors" /usr/bin/python3 -c '
import json, sys
sys.path.insert(0, "tests/ref")
from vtread import vtread
head, recs = vtread(open(sys.argv[1], "rb"))
n = sum(a.size for k, a in next(recs).items() if not k.startswith("adam."))
j = json.load(open(sys.argv[2]))
assert j["encodings"][0]["params"] == n, (j["encodings"][0]["params"], n)
' "$T/ck.vt" "$T/ck.json"
check "--model with other encodings" flops --model "$T/ck.vt" --pe abs,liere:8 --tokens 100
check_exit 1 "not a checkpoint" flops --model "$T/pc.vt"
check "comrope-ld:8,tied beside comrope-ld:8" flops --preset base --pe comrope-ld:8,tied,comrope-ld:8 --json
$PY -c 'import json, sys
e = json.load(open(sys.argv[1]))["encodings"]
assert [x["pe"] for x in e] == ["comrope-ld:8,tied", "comrope-ld:8"], e
assert e[1]["pe_params"] - e[0]["pe_params"] == 12 * 11 * 16, (e[0]["pe_params"], e[1]["pe_params"])
' "$T/out" && ok "... the tied multipliers counted once a layer (12 x 11 x 16 fewer)" || nok "tied counts: $(head -c 300 "$T/out")"
check "every option word stays with its spec" flops --preset base --pe ape,official,abs,rope-axial,theta=10 --json
$PY -c 'import json, sys
e = json.load(open(sys.argv[1]))["encodings"]
assert [x["pe"] for x in e] == ["ape,official", "abs", "rope-axial,theta=10"], e
assert e[1]["pe_params"] - e[0]["pe_params"] == 768, (e[0]["pe_params"], e[1]["pe_params"])
' "$T/out" && ok "... ape,official: a table without abs's CLS row (768 fewer)" || nok "ape counts: $(head -c 300 "$T/out")"
/usr/bin/python3 -c 'import numpy as np; np.save("'"$T"'/w.npy", np.zeros((1, 3), "f4"))'
vtool from-npy --meta VIT_DIM=64 w="$T/w.npy" >"$T/w.vt"
check_exit 1 "a container without the model keys" flops --model "$T/w.vt"
check_grep "names a key" "VIT_" "$T/err"
finish
