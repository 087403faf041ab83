#!/bin/sh
# Hostile input (issue 19): each reader's cost in memory, time and disk is
# bounded by what its input carries, and no input makes a reader open
# another file.  Every command here runs under a memory and time limit
# (limited), so a regression fails its check instead of eating the machine.
. tests/sh/lib.sh
cd "$T" || exit 1
MEM=1048576	# KiB of memory a command may take (memlimit: ulimit -v, or ASan's)
FSIZE=65536	# 512-byte blocks of the largest file it may write (ulimit -f)

# limited SECONDS command...: run under the limits, stdout in out, stderr in err.
limited() {
	local s=$1; shift
	(ulimit -f $FSIZE; memlimit $MEM timeout "$s" "$@") >out 2>err
}
# refused "what" pattern command...: exit 1 within 20 s and the limits, with
# a "prog: " message matching pattern; refused_as PROG ... for a command
# run through sh -c.
refused_as() {
	local p=$1 d=$2 pat=$3 rc; shift 3
	limited 20 "$@"; rc=$?
	if [ "$rc" -ne 1 ]; then nok "$d (exit $rc, wanted 1: $(head -c 300 err))"
	elif ! grep -q "^$p: " err; then nok "$d (no '$p: ' message: $(head -c 300 err))"
	elif ! grep -Eq -- "$pat" err; then nok "$d (message '$(head -c 300 err)' lacks '$pat')"
	else ok "$d"; fi
}
refused() { refused_as "$(basename "$3")" "$@"; }

# --- streams (lib/vt.c) ---
# A stream of no bytes per record declaring 10^12 of them (77 bytes).
printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 1000000000000\nFIELD e u8 0\nENDHDR\n' >empty.vt
refused "RECORDS 10^12 of no bytes is refused at once" 'RECORDS 1000000000000 of no bytes: more than 1048576' vtool cat empty.vt
printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 3\nFIELD e u8 0\nENDHDR\n' >empty3.vt
limited 20 vtool info empty3.vt && grep -q '3' out && ok "3 records of no bytes still read" || nok "3 records of no bytes (exit $?: $(head -c 200 err))"
# The 4 GiB limit of vitpipe(5) is per record, not per field.
{ printf 'VITPIPE 1\nBYTEORDER little\nALIGN 64\n'
  for i in 1 2 3 4 5 6 7 8; do printf 'FIELD f%d f64 536870912\n' $i; done
  printf 'ENDHDR\n'; } >wide.vt
refused "8 fields of 4 GiB: the record is over the limit" "field 'f2': record too large \\(limit 4294967296 bytes a record\\)" vtool info wide.vt
# A field of 3.9 GB declared, 100 bytes given: memory as the bytes come,
# so the error is the truncation, not the 3.9 GB (within the 1 GiB limit).
{ printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 1\nFIELD big u8 3900000000\nENDHDR\n'
  head -c 100 /dev/zero; } >big.vt
refused "a 3.9 GB field with 100 bytes: truncated, read in 1 GiB" "record 1: field 'big' truncated \\(100 of 3900000000 bytes\\)" vtool info big.vt
# ... and so through a filter, which passes the reader's buffers on
# (vt_copy_record lends them) instead of reserving the header's 3.9 GB.
refused "... through vtool cat too" "record 1: field 'big' truncated \\(100 of 3900000000 bytes\\)" vtool cat big.vt
{ printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 1\nFIELD patch u8 4 975000000\nGRID 2x2\nENDHDR\n'
  head -c 100 /dev/zero; } >bigp.vt
refused "... and posgen" "record 1: field 'patch' truncated \\(100 of 3900000000 bytes\\)" posgen bigp.vt
# '*' fields of 512 MiB and 3.75 GiB, each within the limit, not together
{ printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD a u8 *\nFIELD b u8 *\nENDHDR\n'
  printf '\000\000\000\040\000\000\000\000\000\000\000\360\000\000\000\000'
  head -c 64 /dev/zero; } >dyn.vt
refused "'*' fields over the limit together in one record" "record 1: field 'b': record too large" vtool cat dyn.vt

# rekey IN OUT LINE...: IN with header lines replaced (a line "KEY value"
# replaces KEY's, or is added before ENDHDR; @FILE: FILE's lines), the
# header padded again.
cat >rekey.py <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
end = data.index(b"\nENDHDR\n") + 8
lines = data[:end].decode().split("\n")[:-2]
align = int([l for l in lines if l.startswith("ALIGN ")][0].split()[1])
body = data[-(-end // align) * align:]
news = []
for a in sys.argv[3:]:
    news += open(a[1:]).read().splitlines() if a.startswith("@") else [a]
first = {}
for i, l in enumerate(lines):
    first.setdefault(l.split(" ")[0], i)
for new in news:
    key = new.split(" ")[0]
    if key in first and key != "FIELD":
        lines[first[key]] = new
    else:
        first.setdefault(key, len(lines))
        lines.append(new)
head = ("\n".join(lines) + "\nENDHDR\n").encode()
open(sys.argv[2], "wb").write(head + b"\n" * (-len(head) % align) + body)
PY
rekey() { "$PY" rekey.py "$@"; }
# scale CKPT FIELD X: every value of the f32 field FIELD of the checkpoint
# CKPT (one record of fixed shapes) times X, in place.
cat >scale.py <<'PY'
import sys
import numpy as np
path, name, x = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = bytearray(open(path, "rb").read())
end = data.index(b"\nENDHDR\n") + 8
lines = data[:end].decode().split("\n")
align = int([l for l in lines if l.startswith("ALIGN ")][0].split()[1])
at = -(-end // align) * align
for l in lines:
    if l.startswith("FIELD "):
        f = l.split()
        n = 4 * int(np.prod([int(d) for d in f[3:]]))
        if f[1] == name:
            data[at:at + n] = (np.frombuffer(data[at:at + n], "<f4") * x).astype("<f4").tobytes()
        at += -(-n // align) * align
open(path, "wb").write(data)
PY
scale() { "$PY" scale.py "$@"; }
# rss.py KIB EXIT command...: run it (stdout in out, stderr in err); print
# its exit status and peak resident memory; fail unless it exits EXIT
# within KIB.
cat >rss.py <<'PY'
import resource, subprocess, sys
limit, want = int(sys.argv[1]), int(sys.argv[2])
r = subprocess.run(sys.argv[3:], stdout=open("out", "wb"), stderr=open("err", "wb"), timeout=60)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("exit %d, peak %d KiB" % (r.returncode, rss))
sys.exit(r.returncode != want or rss > limit)
PY
# Under ASan a process starts with more resident memory (its shadow, its
# allocator's): the bounds below are above that start, measured here.
BASE=0
[ "$SAN" = 1 ] && BASE=$("$PY" rss.py 100000000 0 vtool --version | sed 's/.* peak \([0-9]*\) KiB$/\1/')

# --- checkpoints (lib/checkpoint.c) ---
"$PY" "$TOP/tests/sh/posclass.py" --records 40 --seed 1 >train.vt
check "train a small model" vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 \
	--pe abs --epochs 1 --batch 20 -o m.vt train.vt
# Its keys describe a model of 16384 wide (about 4 GB), its fields 16 wide.
rekey m.vt big.vt "VIT_DIM 16384" "VIT_HEADS 16" "VIT_MLP 16384"
[ "$(wc -c <big.vt)" -lt 65536 ] && ok "the hostile checkpoint is small ($(wc -c <big.vt) bytes)" || nok "big.vt is $(wc -c <big.vt) bytes"
refused "vit-eval: small checkpoint, large model keys: refused before building" \
    "big\\.vt: field 'patch\\.w' is f32\\[16,4\\], the model wants f32\\[16384,4\\]" \
    vit-eval --threads 1 big.vt train.vt
cp big.vt resume.vt
refused "vit-train --resume: the same" "resume\\.vt: field 'patch\\.w' is f32\\[16,4\\]" \
    vit-train --threads 1 --resume -o resume.vt train.vt
# Keys of a model 4096 wide and a field declared to carry its weights, but
# the file ends long before.
rekey m.vt short.vt "VIT_DIM 4096" "VIT_HEADS 4" "FIELD junk f32 100000000"
refused "a checkpoint whose fields are not in the file is refused before building" \
    'short\.vt: the header declares [0-9]+ bytes of fields, the file holds [0-9]+ after it' \
    vit-eval --threads 1 short.vt train.vt
limited 60 vit-eval --threads 1 m.vt train.vt && ok "the small model itself still loads" || nok "m.vt: $(head -c 300 err)"
# 300,000 keys (3.3 MB of header): to-safetensors groups a checkpoint's
# keys by sorting, not by a scan per line (which took hours).
seq 300000 | sed 's/^/K/; s/$/ v/' >keys.txt
rekey m.vt keys.vt @keys.txt
limited 20 vtool to-safetensors keys.vt && [ "$(od -An -tu8 -N8 out)" -gt 3000000 ] &&
    ok "to-safetensors: 300,000 keys within 20 s" || nok "300,000 keys: $(head -c 300 err)"
# 2^32 + 16 is no dim 16 (issue 39: (int)strtol wrapped it).
rekey m.vt wrap.vt "VIT_DIM 4294967312"
refused "VIT_DIM 4294967312 is refused, not read as 16" "bad value '4294967312' for VIT_DIM" \
    vit-eval --threads 1 wrap.vt train.vt
# --resume reads every training key by its option's rule (issue 39: TRAIN_ACCUM
# 0 trained at 0 img/s, TRAIN_BATCH 2147483649 said nothing, TRAIN_BATCH 0
# blamed --batch, the rest passed).
for kv in "TRAIN_ACCUM 0|as --accum" "TRAIN_ACCUM 1099511627776|as --accum" \
    "TRAIN_EPS -1|as --eps" "TRAIN_BETA1 5|as --beta1" "TRAIN_CLIP -1|as --clip" \
    "TRAIN_MIXUP nan|as --mixup" "TRAIN_LR 1e300|as --lr" "PASS_RECORDS -5|in \\[0," \
    "STEP -100|in \\[0," "TRAIN_BATCH 2147483649|as --batch" "TRAIN_BATCH 0|as --batch" \
    "TRAIN_PRECISION junk|not fp32 or bf16, as --precision"; do
	k=${kv%%|*}
	rekey m.vt key.vt "DONE 0" "$k"
	refused "--resume: $k is refused" "^vit-train: --resume: key\\.vt: $k: .*${kv#*|}" \
	    vit-train --threads 1 --resume -o key.vt train.vt
done

# A step that leaves a weight or moment not finite stops the run, and the
# checkpoint keeps the last good step's bytes (issue 39: TRAIN_LR nan
# with TRAIN_SAVE_STEPS 1 overwrote it with NaN weights, then named it the
# last good one).  TRAIN_LR nan is refused now; head.w times 1e22 makes a
# finite loss whose gradient squares past a float in AdamW's v at step 3.
rekey m.vt nanlr.vt "DONE 0" "TRAIN_SAVE_STEPS 1" "TRAIN_LR nan"
cp nanlr.vt nanlr0.vt
refused "--resume: TRAIN_LR nan with TRAIN_SAVE_STEPS 1 is refused" 'nanlr\.vt: TRAIN_LR nan: ' \
    vit-train --threads 1 --resume -o nanlr.vt train.vt
cmp -s nanlr.vt nanlr0.vt && ok "... the checkpoint untouched" || nok "nanlr.vt was rewritten"
rekey m.vt blow.vt "TRAIN_SAVE_STEPS 1"
scale blow.vt head.w 1e22
cp blow.vt blow0.vt
refused "--resume: an update that leaves a moment infinite stops the run" \
    "step 3: after the update \(learning rate [0-9.e-]+\), tensor '[a-z0-9.]+' \(its AdamW v\) holds inf .*: stopping; the last good checkpoint is blow\.vt \(step 2\)" \
    vit-train --threads 1 --resume --epochs 2 -o blow.vt train.vt
cmp -s blow.vt blow0.vt && ok "... blow.vt keeps step 2's bytes" || nok "blow.vt was rewritten"

# A model whose logits are NaN is no result (issue 39: vit-eval printed
# top1 0.1000, loss -nan and exited 0; --json wrote -nan): non-finite
# weights are refused as they load, logits as they are made, a position
# map no float holds as it is made.
rekey m.vt nanw.vt && scale nanw.vt head.w nan
refused "vit-eval: a checkpoint with NaN weights is refused as it loads" \
    "nanw\.vt: tensor 'head\.w' holds nan \(element 0 of 32\)" vit-eval --threads 1 nanw.vt train.vt
check "train a liere model" vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 \
	--pe liere --epochs 1 --batch 20 -o li.vt train.vt
rekey li.vt li30.vt "VIT_POS_SCALE 1e30,1e30"
refused "vit-eval: liere's positions scaled by 1e30 make NaN logits: an error" \
    "train\.vt: record 1: the model's logit of class 0 is nan" vit-eval --threads 1 li30.vt train.vt
refused "... --json too, and writes no NaN" "record 1: the model's logit" \
    vit-eval --json --threads 1 li30.vt train.vt
grep -qi nan out && nok "... yet stdout holds $(cat out)" || ok "... stdout holds no NaN"
refused "shuffle-eval: the same" "record 1: the model's logit of class 0 is nan" \
    shuffle-eval --threads 1 -k 1 li30.vt train.vt
check "export m.vt" sh -c 'vtool to-safetensors m.vt >m.safetensors'
"$PY" -c "import sys; sys.path.insert(0, '$TOP/tests/sh')
import numpy as np
from timmref import st_read, st_write
sd, meta = st_read('m.safetensors')
sd['blocks.0.attn.qkv.weight'][0, 1] = np.nan
st_write('nan.safetensors', sd, meta, {n: 'F16' for n in sd})"
refused "from-safetensors: a NaN among F16 weights is refused" \
    "^vtool: nan\.safetensors: tensor 'blocks\.0\.attn\.qkv\.weight': element 1 is nan$" \
    vtool from-safetensors nan.safetensors
rekey train.vt int.vt "POS integer grid=4x4"
rekey train.vt tiny.vt "POS fixed range=0,1e-40 grid=4x4"
check "train rope-axial on integer positions, mapped" vit-train --dim 16 --depth 1 --heads 2 \
	--mlp 32 --threads 1 --pe rope-axial --epochs 1 --batch 20 -o ra.vt int.vt
refused "vit-eval: positions whose map to the model's overflow a float are refused" \
    "tiny\.vt: POS 'fixed range=0,1e-40 grid=4x4': its positions map to the integer ones of rope-axial by a scale of 3e\+40 .* which a float does not hold" \
    vit-eval --threads 1 ra.vt tiny.vt
refused "vit-train: the same" "POS 'fixed range=0,1e-40 grid=4x4': .* which a float does not hold" \
    vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 --pe rope-axial --epochs 1 \
    --batch 20 -o ra2.vt tiny.vt

# Every field is checked against the exact shape of its tensor before
# anything is built.  All of a 192-wide model's weights and moments
# (1.9 MB), with keys that raise its grid to 256x256, whose position
# table alone is 50 MB (f32[65537,192]), and to 192x192 for --resume,
# which builds for a batch of 64 (256x256 is past the attention's limit
# there) and holds four arenas of 28 MB: a lower bound on the weights
# lets both through.  Each reader refuses the field by its shapes, at
# the memory of a small file.
check "train a model 192 wide" vit-train --dim 192 --depth 1 --heads 1 --mlp 8 \
	--threads 1 --pe abs --epochs 1 --batch 20 -o wide.vt train.vt
rekey wide.vt grid.vt "VIT_GRID 256,256"
rekey wide.vt grid-r.vt "VIT_GRID 192,192"
pos="field 'pos_embed' is f32\\[17,192\\], the model wants f32\\[(65537|36865),192\\]"
# rss_refused "what" command...: exit 1 with a message of pos, its peak
# resident memory under 24 MiB, within the address-space limit.
rss_refused() {
	local d=$1; shift
	if memlimit $MEM "$PY" rss.py $((24576 + BASE)) 1 "$@" >rss &&
	    grep -Eq -- "^$(basename "$1"): .*$pos" err; then ok "$d: $(cat rss)"
	else nok "$d: $(cat rss) $(head -c 300 err)"; fi
}
rss_refused "vit-eval: a grid its position table does not carry" \
    vit-eval --threads 1 --batch 1 grid.vt train.vt
rss_refused "shuffle-eval: the same" shuffle-eval --threads 1 --batch 1 -k 1 grid.vt train.vt
rss_refused "vit-train --init: the same" vit-train --threads 1 --init grid.vt -o init.vt train.vt
rss_refused "vtool to-safetensors: the same" vtool to-safetensors grid.vt
rss_refused "vit-train --resume: the same" vit-train --threads 1 --resume -o grid-r.vt train.vt
limited 60 vit-eval --threads 1 wide.vt train.vt && ok "the 192-wide model itself loads" ||
	nok "wide.vt: $(head -c 300 err)"

# sincos's table is carried by no file: keys of a 4096x4096 grid on a
# model 32 wide (2 GB of table, built in 20 s) in a safetensors export's
# metadata, or of a 256x256 grid in a checkpoint's, are refused before
# anything is built (issue 39), at the memory of the small file.
check "train a sincos model" vit-train --dim 32 --depth 1 --heads 2 --mlp 32 --threads 1 \
	--pe sincos --epochs 1 --batch 20 -o sc.vt train.vt
rekey sc.vt sc-big.vt "VIT_GRID 256,256"
check "... exported" sh -c 'vtool to-safetensors sc.vt >sc.safetensors'
"$PY" -c "import sys; sys.path.insert(0, '$TOP/tests/sh')
from timmref import st_read, st_write
sd, meta = st_read('sc.safetensors')
meta['VIT_GRID'] = '4096,4096'
st_write('sc-big.safetensors', sd, meta)"
pos="its sincos table of (65536|16777216) tokens would be (2097184|536870944) floats, more than its [0-9]+ parameters"
rss_refused "vit-eval: a sincos grid of 2^16 tokens on a small model" vit-eval --threads 1 --batch 1 sc-big.vt train.vt
rss_refused "vtool from-safetensors: the same in the metadata" vtool from-safetensors sc-big.safetensors
limited 60 vtool from-safetensors sc.safetensors && ok "the small sincos export itself imports" ||
	nok "sc.safetensors: $(head -c 300 err)"

# A stream of another class count than the model's (2 classes).
rekey train.vt c100.vt "CLASSES 100"
refused "vit-eval: a CLASSES 100 stream for a 2-class model" 'c100\.vt: CLASSES 100, the model has 2 classes' \
    vit-eval --threads 1 m.vt c100.vt
refused "shuffle-eval: the same" 'c100\.vt: CLASSES 100, the model has 2 classes' \
    shuffle-eval --threads 1 -k 1 m.vt c100.vt
refused "vit-train --val: the same" 'c100\.vt: CLASSES 100, the model has 2 classes' \
    vit-train --dim 16 --depth 1 --heads 2 --mlp 32 --threads 1 --epochs 1 --batch 20 \
    --val c100.vt -o v.vt train.vt

# --- imports (vtool from-npy, from-safetensors): what they write, a
# reader reads, and they refuse the rest before the work (issue 39) ---
# An .npy of shape (2^40, 0), 128 bytes: 2^40 records of no bytes, which
# every reader refuses; from-npy looped over them for 21 days.
mkdir -p npy0
"$PY" -c 'import sys
d = b"{\x27descr\x27: \x27|u1\x27, \x27fortran_order\x27: False, \x27shape\x27: (1099511627776, 0), }"
d += b" " * (-(10 + len(d) + 1) % 64) + b"\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d)' >npy0/e.npy
refused "from-npy: 2^40 records of no bytes, at once" 'RECORDS 1099511627776 of no bytes: more than 1048576' \
    vtool from-npy e=npy0/e.npy
[ -s out ] && nok "... yet wrote $(wc -c <out) bytes" || ok "... writing nothing"
# header.json of 17 MB of keys: more than a header holds (1.2 million
# short ones made a 22.8 MB header that no reader read).
"$PY" -c 'import json
m = [["HISTORY", "x" * 4000]] * 4300
json.dump({"align": 64, "fields": {"e": {"dtype": "u8", "dims": [1]}}, "meta": m}, open("npy0/header.json", "w"))
import numpy as np; np.save("npy0/one.npy", np.zeros((2, 1), "u1"))'
refused "from-npy: header.json of 17 MB of keys is refused as it is read" \
    'metadata over 16777216 bytes: longer than a header may be' vtool from-npy e=npy0/one.npy
# header.json describes fields, holds none of their data: a field of
# 2 GB declared there takes no memory (fuzz_header_json's finding).
mkdir -p npy1 && cp npy0/one.npy npy1/ &&
printf '{"align": 64, "fields": {"e": {"dtype": "u8", "dims": [2000000000]}}, "meta": []}' >npy1/header.json
limited 20 vtool from-npy e=npy1/one.npy && ok "from-npy: header.json's field of 2 GB costs nothing" ||
    nok "header.json's 2 GB field: $(head -c 300 err)"
# A vitpipe export whose HISTORY holds two million lines.
"$PY" -c "import sys; sys.path.insert(0, '$TOP/tests/sh')
from timmref import st_read, st_write
sd, meta = st_read('sc.safetensors')
meta['HISTORY'] = '\n'.join(['x' * 8] * 2000000)
st_write('history.safetensors', sd, meta)"
refused "from-safetensors: 2 million HISTORY lines (20 MB of header)" \
    'metadata over 16777216 bytes: longer than a header may be' vtool from-safetensors history.safetensors

# --- terminal escapes (issue 39): text from input is printed with its
# control characters escaped, and no writer puts them into a header ---
# raw FILE: whether FILE holds an ESC, BEL or CR byte
raw() { grep -q "$(printf '[\033\007\r]')" "$1"; }
printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 1\nFIELD x u8 1\nCLASS 0 \033]0;owned\007\r\nENDHDR\n\001' >esc.vt
limited 20 vtool info esc.vt
! raw out && grep -q 'CLASS 0 \\x1b]0;owned\\x07\\x0d' out && ok "vtool info escapes a key's ESC, BEL, CR" ||
    nok "vtool info: $(od -c out | head -5)"
cp esc.vt "$(printf 'e\033[2Jv.vt')"
limited 20 vtool info "$(printf 'e\033[2Jv.vt')"
! raw out && grep -q '^stream   e\\x1b\[2Jv\.vt$' out && ok "... and the stream's name" || nok "name: $(od -c out | head -3)"
limited 20 vtool info "$(printf 'no\033such')"
! raw err && grep -q 'no\\x1bsuch' err && ok "... and the names in its messages" || nok "messages: $(od -c err | head -3)"
limited 20 vtool from-npy --no-header --meta "$(printf 'CLASS=0 \033[31mred')" e=npy0/one.npy
[ $? -eq 2 ] && grep -q 'CLASS: value has a newline or another control character' err && ! raw err &&
    ok "vtool from-npy --meta: a control character in a value is a usage error" || nok "--meta: $(head -c 300 err)"
[ -s out ] && nok "... yet it wrote $(wc -c <out) bytes" || ok "... and writes no stream"
"$PY" -c "import sys; sys.path.insert(0, '$TOP/tests/sh')
from timmref import st_read, st_write
sd, meta = st_read('sc.safetensors')
meta['CLASS'] = '0 \x1b]0;owned\x07'
st_write('esc-meta.safetensors', sd, meta)
meta['CLASS'] = '0 plain'
sd['\x1b[2Jjunk'] = sd['norm.bias']
st_write('esc-name.safetensors', sd, meta)"
refused "from-safetensors: a CLASS with ESC is refused, not carried into the checkpoint" \
    'CLASS: value has a newline or another control character' vtool from-safetensors esc-meta.safetensors
limited 20 vtool from-safetensors --list esc-name.safetensors
! raw out && ! raw err && grep -q '^unknown \\x1b\[2Jjunk' out && ok "from-safetensors --list escapes a tensor's name" ||
    nok "--list: $(od -c out | grep -m1 033)"

# --- videos (lib/video.c): a file never makes the reader open another ---
ffmpeg -v error -y -f lavfi -i testsrc=size=32x32:rate=16:duration=1 -c:v mpeg2video secret.ts ||
	nok "ffmpeg: secret.ts"
limited 60 patchify --frames 4 --patch 2x8x8 secret.ts && ok "the .ts itself is a video" ||
	nok "secret.ts: $(head -c 300 err)"
hls() { printf '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n%s\n#EXT-X-ENDLIST\n' "$1"; }
hls "$T/secret.ts" >playlist.mp4
printf 'ffconcat version 1.0\nfile secret.ts\n' >concat.mp4
hls "file:$T/secret.ts" >indirect.mp4
hls "subfile,,start,0,end,0,,:$T/secret.ts" >subfile.mp4
for v in "playlist an HLS playlist naming a .ts by absolute path" \
    "concat an ffconcat list naming it by a relative path" \
    "indirect an HLS playlist naming it as file:PATH" \
    "subfile an HLS playlist naming it through subfile:"; do
	set -- $v; f=$1; shift
	refused "patchify: $f.mp4, $*, is refused" "$f\\.mp4: not a video container FFmpeg reads" \
	    patchify --frames 4 --patch 2x8x8 $f.mp4
done

# --- shuffle-eval's copy of a pipe ---
refused_as shuffle-eval "yes | shuffle-eval: the magic line is checked before anything is kept" \
    'stdin: not a vitpipe stream \(bad magic\)' sh -c 'yes | TMPDIR=. shuffle-eval m.vt'
"$PY" "$TOP/tests/sh/posclass.py" --records 7000 --seed 2 >many.vt
[ "$(wc -c <many.vt)" -gt 2097152 ] || nok "many.vt is only $(wc -c <many.vt) bytes"
refused_as shuffle-eval "a pipe past --spill-max is refused" \
    'stdin: record [0-9]+: more than --spill-max 1 MiB to keep for the trials' \
    sh -c 'cat many.vt | shuffle-eval --threads 1 -k 1 --spill-max 1 --spill-dir . m.vt'
refused_as shuffle-eval "--spill-dir names where the copy goes" '--spill-dir: ./nowhere: temporary file for stdin' \
    sh -c 'cat train.vt | shuffle-eval --threads 1 -k 1 --spill-dir ./nowhere m.vt'
refused_as shuffle-eval "TMPDIR is its default" '--spill-dir: ./nowhere: temporary file for stdin' \
    sh -c 'cat train.vt | TMPDIR=./nowhere shuffle-eval --threads 1 -k 1 m.vt'
limited 60 shuffle-eval --threads 1 -k 2 m.vt train.vt && mv out file.out &&
limited 60 sh -c 'cat train.vt | shuffle-eval --threads 1 -k 2 --spill-dir . m.vt' &&
    cmp -s out file.out && ok "a pipe scores as the file does" || nok "pipe vs file: $(cat out file.out err)"

# A record whose 'source' is 1 GiB, from a pipe: refused by its shape,
# before a byte of it is read, kept or not (issue 39: it was read whole,
# 1.06 GB in 12 s, and shuffle-eval skipped it and scored the record).
cat >bigsrc.py <<'PY'
import sys
head = open("train.vt", "rb").read().split(b"\nENDHDR\n")[0].decode().split("\n")
head = [l for l in head if not l.startswith("RECORDS ")] + ["RECORDS 1", "FIELD source u8 *"]
head = ("\n".join(head) + "\nENDHDR\n").encode()
head += b"\n" * (-len(head) % 64)
# the preamble's '*' dims: 16 patches, 16 positions, 2^30 bytes of source
pre = b"".join(n.to_bytes(8, "little") for n in (16, 16, 1 << 30)) + bytes(40)
sys.stdout.buffer.write(head + pre + bytes(64) + bytes(128) + bytes(64))
PY
for c in "vit-eval --threads 1" "shuffle-eval --threads 1 -k 1 --spill-dir ."; do
	refused_as "${c%% *}" "${c%% *}: a source of 1 GiB from a pipe is refused before it is read" \
	    "stdin: record 1: field 'source' is 1073741824 bytes, more than 4096" \
	    sh -c "{ '$PY' bigsrc.py; head -c 1073741824 /dev/zero; } | $c m.vt"
done

# --- IDX and CIFAR (lib/dataset_idx.c, dataset_cifar.c): records are read
# as they are needed; memory does not grow with the file ---
# 131 MB of images in a 127 KB gzip file; the first image is not blank.
"$PY" - <<'PY'
import gzip, struct
n, z = 2000, bytes(256 * 256)
with gzip.open("bomb-images-idx3-ubyte.gz", "wb") as f:
    f.write(bytes([0, 0, 8, 3]) + struct.pack(">III", n, 256, 256))
    f.write(bytes(range(256)) * 256)
    for i in range(1, n):
        f.write(z)
recs = 30000	# 92 MB of CIFAR-10, record k labelled k % 10
with open("data_batch_1.bin", "wb") as f:
    for k in range(recs):
        f.write(bytes([k % 10]) + bytes([k % 251]) * 3072)
PY
TMPDIR=. "$PY" rss.py $((81920 + BASE)) 0 patchify --threads 2 --patch 16 --shard 0/1000 bomb-images-idx3-ubyte.gz >rss &&
    ok "gzip IDX of 131 MB: $(cat rss)" || nok "gzip IDX of 131 MB: $(cat rss) $(head -c 300 err)"
vtpy '
r = list(vtread(open("out", "rb"))[1])
assert len(r) == 2 and r[1]["source"].tobytes() == b"bomb-images-idx3-ubyte.gz:1000", r[1]["source"]
p = r[0]["patch"].reshape(16, 16, 16, 16).transpose(0, 2, 1, 3).reshape(256, 256)
assert (p == np.arange(256, dtype="u1")[None, :]).all()
assert not r[1]["patch"].any()' && ok "its records and sources (PATH:N)" || nok "gzip IDX records"
ls patchify-idx.* >/dev/null 2>&1 && nok "a temporary is left in TMPDIR" || ok "no temporary left in TMPDIR"
"$PY" rss.py $((71680 + BASE)) 0 patchify --threads 2 --patch 16 --shard 0/10000 data_batch_1.bin >rss &&
    ok "CIFAR-10 of 92 MB: $(cat rss)" || nok "CIFAR-10 of 92 MB: $(cat rss) $(head -c 300 err)"
vtpy '
r = list(vtread(open("out", "rb"))[1])
assert [x["source"].tobytes() for x in r] == [b"data_batch_1.bin:%d" % k for k in (0, 10000, 20000)]
assert [int(x["label"]) for x in r] == [0, 0, 0]
for x, k in zip(r, (0, 10000, 20000)):
    assert (x["patch"] == k % 251).all()' && ok "its records, labels and sources" || nok "CIFAR records"

# --- .npy (lib/data/dataset_npy.c) ---
# fuzz_npy's finding: 146 bytes declaring a (1649589223, 7, 4, 1) u16 array
# (46 GB) got its malloc before any check that the file holds the data.
# Its shape, "(,00001649589223,7 4, 1)", is no Python tuple and is refused
# as such now; the same declaration in a well-formed header, before the
# allocation.
refused "fuzz_npy's file: its shape is no tuple" 'bad \.npy header \(shape\)$' \
    patchify --format npy --patch 1 "$TOP/tests/fuzz/regress/fuzz_npy/declares-46GB"
$PY -c 'import sys
d = b"{\x27descr\x27: \x27<u2\x27, \x27fortran_order\x27: False, \x27shape\x27: (1649589223, 7, 4, 1), }"
d += b" " * (-(10 + len(d) + 1) % 64) + b"\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d + bytes(18))' > "$T/46GB.npy"
refused "a .npy declaring more data than the file holds, before allocating" \
    'declares 46188498244 elements, the file holds 9$' \
    patchify --format npy --patch 1 "$T/46GB.npy"

finish
