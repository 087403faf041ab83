#!/bin/sh
# flops: the man page's examples, the paper's Table 5 through the command,
# output forms, usage and input errors.
. tests/sh/lib.sh

# Every "$ flops ..." line of EXAMPLES in flops(1) runs and succeeds.
sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/s/^\$ //p' man/man1/flops.1 >"$T/examples"
check_grep "man page has examples" '^flops ' "$T/examples"
while read -r cmd; do
	check "example: $cmd" sh -c "$cmd"
done <"$T/examples"

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
check_exit 1 "unknown encoding" flops --pe abs,foo
[ -s "$T/out" ] && nok "no partial output" || ok "no partial output"
check_exit 1 "block not dividing the head" flops --pe liere:5
check_grep "says why" "divide the head dimension" "$T/err"
check_exit 1 "heads not dividing dim" flops --dim 100 --heads 3
check_exit 1 "missing checkpoint" flops --model "$T/none.vt"

# A checkpoint's configuration: a single-record container with the VIT_*
# keys of vit_config_save (made here by vtool), counted as with flags.
/usr/bin/python3 -c 'import numpy as np; np.save("'"$T"'/w.npy", np.zeros((1, 3), "f4"))'
keys="--meta VIT_DIM=768 --meta VIT_DEPTH=12 --meta VIT_HEADS=12 --meta VIT_MLP=3072
 --meta VIT_CLASSES=100 --meta VIT_P=48 --meta VIT_AXES=2 --meta VIT_POOL=0
 --meta VIT_PE=liere:8 --meta VIT_SHARE=0 --meta VIT_DROPOUT=0 --meta VIT_EMB_DROPOUT=0
 --meta VIT_LOCALITY=1 --meta VIT_SIGMA=1 --meta VIT_GRID=8,8 --meta VIT_CLS_ROTATE=0
 --meta VIT_CLS_POS=0,0"
vtool from-npy $keys w="$T/w.npy" >"$T/ck.vt"
check "--model reads the checkpoint's configuration" flops --model "$T/ck.vt" --count paper
sed 1d "$T/out" >"$T/m"
flops --preset base --classes 100 --pe liere:8 --locality --count paper | sed 1d >"$T/f"
check "--model counts as the same flags" cmp "$T/m" "$T/f"
check "--model with other encodings" flops --model "$T/ck.vt" --pe abs,liere:64
vtool from-npy $(echo "$keys" | sed 's/--meta VIT_MLP=3072//') w="$T/w.npy" >"$T/bad.vt"
check_exit 1 "checkpoint without VIT_MLP" flops --model "$T/bad.vt"
check_grep "names the key" "VIT_MLP" "$T/err"
check_exit 1 "not a checkpoint" flops --model "$T/w.npy"
finish
