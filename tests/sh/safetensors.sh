#!/bin/sh
# safetensors.sh - vtool to-safetensors and from-safetensors against
# tests/sh/timmref.py, an independent NumPy reader, writer and forward pass
# of timm's VisionTransformer under timm's names:
#  - a trained checkpoint (abs, rope-mixed, liere:8) exported: the same
#    logits as vit-eval's, to 1e-5 of the largest; imported back exactly;
#  - a state dict written in Python (layer scale, F16, BF16 and F64
#    tensors; an abs table resampled to larger and smaller grids; timm's
#    RoPE-Mixed on integer positions) imported: vit-eval's logits are the
#    forward's;
#  - fine-tuning: a 10-class model exported, imported with a new 2-class
#    head, trained with vit-train --init: far above chance;
#  - the key lists of real timm models (tests/timm/*.keys, from timm's
#    source): every key mapped, or exactly the ones that cannot be and why;
#  - hostile files: a clear error, never a crash or an allocation the file
#    does not pay for.
# Against PyTorch's reference model itself: safetensors_torch.sh.
. tests/sh/lib.sh
R="$PY $TOP/tests/sh/timmref.py"
W="$T/st"; mkdir -p "$W"; cd "$W" || exit 1

# 48 RGB images of 16x16, 10 classes, in 4x4 patches, normalized.
$R images 48 16 3 imgs.npy labels.npy 10
patchify --format npy --labels labels.npy --patch 4 --mean 0.5,0.4,0.3 --std 0.2,0.25,0.3 \
    imgs.npy 2>/dev/null | posgen > rgb.vt || nok "making the RGB stream"

for pe in abs rope-mixed liere:8; do
	vit-train --dim 32 --depth 2 --heads 2 --mlp 64 --pe $pe --steps 3 -b 16 --lr 1e-2 \
	    --out m.vt rgb.vt 2>"$T/err" || nok "$pe: training: $(head -c 300 "$T/err")"
	check "$pe: vtool to-safetensors" vtool to-safetensors m.vt
	cp "$T/out" m.safetensors
	vit-eval --predict --logits --json -b 8 m.vt rgb.vt | head -n 12 > logits.jsonl
	check "$pe: the exported weights in timm's forward (NumPy) give vit-eval's logits" \
	    $R compare m.safetensors imgs.npy rgb.vt logits.jsonl
	check "$pe: vtool from-safetensors of the export" vtool from-safetensors m.safetensors
	cp "$T/out" back.vt
	check "$pe: ... is the checkpoint again, bit for bit, its keys too" $R same m.vt back.vt
done
vit-train --dim 32 --depth 2 --heads 2 --mlp 64 --pe ape --steps 1 -b 16 --out ape.vt rgb.vt 2>/dev/null
check_exit 1 "ape: vtool to-safetensors refuses it" vtool to-safetensors ape.vt
check_grep "... naming the table that timm has no name for" "ape\.vt: tensor 'pos_table' has no timm name" "$T/err"
# rope-mixed in timm's layout: rope.freqs [2, depth, heads, head_dim / 2].
vit-train --dim 32 --depth 2 --heads 2 --mlp 64 --pe rope-mixed --steps 1 -b 16 --out rm.vt rgb.vt 2>/dev/null
vtool to-safetensors rm.vt > rm.safetensors
vtool from-safetensors --list rm.safetensors > list.txt
check_grep "rope-mixed exports timm's rope.freqs [2,2,2,8]" '^mapped  rope\.freqs F32\[2,2,2,8\] -> pe\.params' list.txt
check_grep "the patch embedding is a conv [D,C,ph,pw]" '^mapped  patch_embed\.proj\.weight F32\[32,3,4,4\]' list.txt

# Python's state dicts into vitpipe: abs with layer scale and F16, BF16,
# F64 tensors; timm's RoPE-Mixed (EVA's gamma_1, gamma_2) on posgen's
# integer positions, as timm's get_mixed_grid makes them.
$R make-timm abs w.safetensors mixed
$R make-timm rope r.safetensors
patchify --format npy --patch 4 --mean 0.5 --std 0.25 imgs.npy 2>/dev/null | posgen > ev.vt
patchify --format npy --patch 4 --mean 0.5 --std 0.25 imgs.npy 2>/dev/null | posgen -c integer > evi.vt
for k in w:ev r:evi; do
	f=${k%%:*} s=${k#*:}
	check "$f: vtool from-safetensors of a state dict written in Python" \
	    vtool from-safetensors --heads 2 --meta MEAN=0.5 --meta STD=0.25 $f.safetensors
	cp "$T/out" $f.vt
	vit-eval --predict --logits --json -b 8 $f.vt $s.vt | head -n 12 > $f.jsonl
	check "$f: vit-eval's logits are timm's forward's" \
	    $R compare $f.safetensors imgs.npy $s.vt $f.jsonl 2 0.5 0.25
done
# The 4x4 table resampled to the streams' grids (up and down), as timm's
# resample_abs_pos_embed does.
$R images 6 24 3 big.npy
$R images 6 12 3 small.npy
for g in 6:big 3:small; do
	n=${g%%:*} img=${g#*:}
	patchify --format npy --patch 4 --mean 0.5 --std 0.25 $img.npy 2>/dev/null | posgen > g$n.vt
	vtool from-safetensors --heads 2 --grid ${n}x$n --meta MEAN=0.5 --meta STD=0.25 w.safetensors > w$n.vt &&
	    vit-eval --predict --logits --json w$n.vt g$n.vt > w$n.jsonl
	check "--grid ${n}x$n: the table resampled as timm's (bicubic, antialiased): the same logits" \
	    $R compare w.safetensors $img.npy g$n.vt w$n.jsonl 2 0.5 0.25
done
vtool from-safetensors --heads 2 --list w.safetensors > list.txt
check_grep "layer scale is folded into the projection" '^mapped  blocks\.0\.ls1\.gamma F32\[32\] -> blocks\.0\.attn\.proj \(layer scale' list.txt
check_grep "an F16 tensor is read" '^mapped  blocks\.0\.mlp\.fc1\.weight F16\[64,32\]' list.txt

# Fine-tuning from imported weights: a 10-class Fashion-MNIST model,
# exported, imported with a new 2-class head, trained on T-shirts against
# trousers.
small_fmnist fm 600 400
patchify --idx fm/train-images-idx3-ubyte.gz --patch 7 2>/dev/null | posgen > fm10.vt
vit-train --dim 32 --depth 2 --heads 2 --mlp 64 --pe abs --epochs 1 -b 32 --lr 2e-3 \
    --out p10.vt fm10.vt 2>/dev/null
vtool to-safetensors p10.vt > p10.safetensors
check "a new 2-class head (--classes 2)" vtool from-safetensors --classes 2 p10.safetensors
cp "$T/out" p2.vt
$R two-class fm two
for s in train test; do
	patchify --format npy --labels two-$s-labels.npy --patch 7 two-$s.npy 2>/dev/null | posgen > two-$s.vt
done
vit-eval --json --resamples 0 p2.vt two-test.vt > before.json
check "vit-train --init fine-tunes the imported model" \
    vit-train --init p2.vt --epochs 2 -b 16 --lr 1e-3 --out ft.vt two-train.vt
vit-eval --json ft.vt two-test.vt > after.json
check_exit 2 "vit-train --init takes no model options" vit-train --init p2.vt --dim 8 --out x.vt two-train.vt
check_exit 1 "vit-train --init of a trained model refuses --positions (its map is fixed)" \
    vit-train --init ft.vt --positions stream --out x.vt two-train.vt
check_grep "... naming the map" "^vit-train: --positions: ft.vt maps its positions already \(POSITIONS " "$T/err"
check_exit 1 "vit-train --init: classes that differ from the stream's" vit-train --init p10.vt --out x.vt two-train.vt
check_grep "... says how to get a new head" "from-safetensors --classes" "$T/err"
check_exit 2 "vit-eval --logits is for --predict" vit-eval --logits ft.vt two-test.vt
cat > ft.py <<'PY'
import json, sys
b, a = (json.load(open(p)) for p in sys.argv[1:])
print("top-1 %.3f (95%% CI from %.3f), loss %.3f -> %.3f on %d records" %
      (a["top1"], a["top1_ci"][0], b["loss"], a["loss"], a["records"]))
sys.exit(not (a["top1_ci"][0] > 0.75 and a["loss"] < 0.8 * b["loss"]))
PY
$PY ft.py before.json after.json > ft.txt && ok "fine-tuned far above chance: $(cat ft.txt)" ||
    nok "fine-tuning: $(cat ft.txt)"

# The key lists of real timm models: every key mapped (the three of the
# issue), or exactly those that cannot be, and why.
expect() {	# expect FIXTURE MODEL-LINE [FATE NAME WHY-PATTERN]...
	local f=$1 model=$2 rc; shift 2
	$R sparse "$TOP/tests/timm/$f.keys" x.safetensors
	vtool from-safetensors --list x.safetensors > list.txt 2>"$T/err"; rc=$?
	check_grep "$f: $model" "^model $model" list.txt
	n=$(grep -vc '^#' "$TOP/tests/timm/$f.keys")
	[ "$(grep -vc '^model \|^missing' list.txt)" -eq "$n" ] && ok "$f: each of its $n keys listed" ||
	    nok "$f: $(grep -vc '^model ' list.txt) lines for $n keys"
	want=0
	while [ $# -gt 0 ]; do
		check_grep "$f: $1 $2: $3" "^$1 +$2 [^ ]+: .*$3" list.txt
		[ "$1" = skipped ] || want=$((want + 1))
		shift 3
	done
	bad=$(grep -vc '^mapped \|^model \|^skipped ' list.txt)
	[ "$bad" -eq "$want" ] && ok "$f: exactly $want keys cannot be mapped" ||
	    nok "$f: $bad keys cannot be mapped, not $want: $(grep -v '^mapped \|^model ' list.txt | head -c 300)"
	if [ $want -eq 0 ]; then want=0; else want=1; fi
	[ $rc -eq $want ] && ok "$f: exit $rc" || nok "$f: exit $rc: $(head -c 200 "$T/err")"
}
expect vit_tiny_patch16_224 "dim 192 depth 12 heads 3 mlp 768 classes 1000 P 768 axes 2 grid 14x14 pe abs pool cls"
expect deit_small_patch16_224 "dim 384 depth 12 heads 6 mlp 1536 classes 1000 P 768 axes 2 grid 14x14 pe abs pool cls"
expect vit_base_patch16_rope_mixed_224.naver_in1k \
    "dim 768 depth 12 heads 12 mlp 3072 classes 1000 P 768 axes 2 grid 14x14 pe rope-mixed pool cls"
check_grep "rope-mixed: timm's rope.freqs to pe.params" '^mapped  rope\.freqs F32\[2,12,12,32\] -> pe\.params' list.txt
check_grep "rope-mixed: EVA's layer scale folded" '^mapped  blocks\.11\.gamma_2 F32\[768\] -> blocks\.11\.mlp\.fc2 \(layer scale' list.txt
expect deit_small_distilled_patch16_224 "dim 384 depth 12 heads 6" \
    unknown dist_token "distillation token" unknown head_dist.weight "distillation head" \
    unknown head_dist.bias "distillation head" misfit pos_embed "wants \[1,197,384\]"
# A checkpoint saved with the rope model's position buffers: skipped, said.
sed 's/^rope\.freqs .*/&\nrope.t_x 196\nrope.t_y 196/' \
    "$TOP/tests/timm/vit_base_patch16_rope_mixed_224.naver_in1k.keys" > buffers.keys
$R sparse buffers.keys x.safetensors
vtool from-safetensors --list x.safetensors > list.txt
check_grep "rope buffers are skipped as timm's loader skips them" '^skipped rope\.t_x F32\[196\]: a buffer' list.txt

# Unknown names: an error naming them, or --ignore-unknown.
$PY -c "
import sys; sys.path.insert(0, '$TOP/tests/sh')
from timmref import st_read, st_write
sd, meta = st_read('w.safetensors')
sd['dist_token'] = sd['cls_token']
sd['blocks.1.attn.q_norm.weight'] = sd['blocks.1.norm1.weight'][:16]
st_write('unknown.safetensors', sd, meta)
sd2, _ = st_read('w.safetensors')
sd2['blocks.1.mlp.fc1.weight'] = sd2['blocks.1.mlp.fc1.weight'][:, :31]
st_write('misfit.safetensors', sd2, meta)
del sd2['blocks.1.mlp.fc1.weight']
st_write('missing.safetensors', sd2, meta)
"
check_exit 1 "unknown names: an error" vtool from-safetensors --heads 2 unknown.safetensors
check_grep "... naming each, and why" "dist_token \(unknown: DeiT's distillation token.*blocks\.1\.attn\.q_norm\.weight \(unknown: query norm" "$T/err"
check "--ignore-unknown skips them" vtool from-safetensors --heads 2 --ignore-unknown unknown.safetensors
check_grep "... and says so" "left out: dist_token, blocks.1.attn.q_norm.weight" "$T/err"
check_exit 1 "a shape that does not fit: an error" vtool from-safetensors --heads 2 misfit.safetensors
check_grep "... with both shapes" "blocks\.1\.mlp\.fc1\.weight \(misfit: shape \[64,31\], the model's blocks\.1\.mlp\.fc1\.w wants \[64,32\]" "$T/err"
check_exit 1 "a missing tensor: an error" vtool from-safetensors --heads 2 missing.safetensors
check_grep "... naming it" "blocks\.1\.mlp\.fc1\.w \(missing" "$T/err"
check_exit 1 "heads that do not divide: an error" vtool from-safetensors --heads 5 w.safetensors
# Through a pipe, as from a file; a terminal is refused.
cat w.safetensors | vtool from-safetensors --heads 2 --meta MEAN=0.5 --meta STD=0.25 > wp.vt
check "from-safetensors reads stdin as a file" sh -c \
    "vit-eval --predict --logits wp.vt ev.vt | cmp - \$(vit-eval --predict --logits w.vt ev.vt > wf.txt; echo wf.txt)"
script -qec "$TOP/$BIN/vtool to-safetensors m.vt; echo rc=\$?" /dev/null > tty.txt 2>&1
check_grep "to-safetensors refuses a terminal" "^vtool: .*terminal" tty.txt
check_exit 2 "--classes is for from-safetensors" vtool to-safetensors --classes 2 m.vt
check_exit 2 "--grid wants HxW" vtool from-safetensors --grid 0x3 w.safetensors

# Hostile headers: each a clear error (exit 1), nothing allocated that the
# file does not hold.
$PY - <<'PY'
import json, struct
def put(name, header, data=b"", n=None):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    with open(name, "wb") as f:
        f.write(struct.pack("<Q", len(text) if n is None else n) + text + data)
t = lambda dt, shape, a, b: {"dtype": dt, "shape": shape, "data_offsets": [a, b]}
put("h-short", b"", n=None)
open("h-short", "wb").write(b"\x10\0\0")
put("h-len", {"a": t("F32", [1], 0, 4)}, b"\0" * 4, n=1 << 40)
put("h-text", b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "b"', b"\0" * 4)
put("h-brace", b'[1, 2]   ', b"")
put("h-dtype", {"a": t("Q7", [1], 0, 4)}, b"\0" * 4)
put("h-span", {"a": t("F32", [1], 0, 8)}, b"\0" * 8)
put("h-hole", {"a": t("F32", [1], 0, 4), "b": t("F32", [1], 8, 12)}, b"\0" * 12)
put("h-overlap", {"a": t("F32", [2], 0, 8), "b": t("F32", [1], 4, 8)}, b"\0" * 8)
put("h-beyond", {"a": t("F32", [1], 4, 8)}, b"\0" * 4)
put("h-tail", {"a": t("F32", [1], 0, 4)}, b"\0" * 8)
put("h-huge", {"a": t("F32", [1 << 40, 1 << 40], 0, 4)}, b"\0" * 4)
put("h-twice", b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', b"\0" * 4)
put("h-meta", {"__metadata__": {"k": 1}}, b"")
put("h-neg", {"a": t("F32", [-1], 0, 4)}, b"\0" * 4)
# names that describe a large model, whose data the file does not carry
hdr = {"cls_token": t("F32", [1, 1, 4096], 0, 16384),
       "patch_embed.proj.weight": t("F32", [4096, 3, 1, 1], 16384, 65536),
       "blocks.0.mlp.fc1.weight": t("F32", [64, 4096], 65536, 1114112),
       "blocks.1023.norm1.weight": t("F32", [0], 1114112, 1114112),
       "head.weight": t("F32", [1, 4096], 1114112, 1130496)}
put("h-model", hdr, b"\0" * 1130496)
PY
for f in h-short:shorter h-len:header.length h-text:"header byte" h-brace:"does not start" h-dtype:"unknown dtype 'Q7'" \
    h-span:"make 4 bytes, its data_offsets span 8" h-hole:"leave a hole" h-overlap:overlap h-beyond:"outside the 4 bytes" \
    h-tail:"the tensors end at byte 4 of the data, the file at 8" h-huge:"more bytes than the file" h-twice:"'a' twice" \
    h-meta:"not a string" h-neg:"whole number" h-model:"tensors cannot be mapped"; do
	name=${f%%:*} why=${f#*:}
	check_exit 1 "$name: refused" vtool from-safetensors --list $name
	check_grep "$name: says why ($why)" "$why" "$T/err"
done
finish
