#!/bin/sh
# demo.sh - what 'make demo' runs: a LieRE ViT trained on a fifth of
# Fashion-MNIST (Debian's dataset-fashion-mnist) for 3 epochs, evaluated on
# the whole test set, then the patch-shuffling test (LieRE Table 3) and the
# cost of its position encoding.  Under a minute on 2 cores.  Results go to
# $DEMO_OUT (default demo-out/).
set -eu
PATH="$(cd "${BIN:-bin}" && pwd):$PATH"
D=/usr/share/datasets/fashion-mnist
OUT=${DEMO_OUT:-demo-out}
mkdir -p "$OUT"
data() {	# data SET: patches of the train or t10k images, with labels and class names
	set=$1; shift
	patchify --idx "$D/$set-images-idx3-ubyte.gz" --classes data/fashion-mnist.classes \
	    --patch 4 --norm fashion-mnist "$@"
}

echo "== training liere:8 on 12000 images x 3 epochs (log: $OUT/train.jsonl)"
data train --subset 0.2 --epochs 3 --shuffle --seed 1 |
	posgen |
	vit-train --dim 64 --depth 4 --heads 4 --mlp 128 --pe liere:8 --lr 2e-3 \
	    --warmup 50 --seed 1 --out "$OUT/model.vt" --log "$OUT/train.jsonl"
data t10k | posgen > "$OUT/test.vt"

echo "== accuracy on the 10000 test images"
vit-eval "$OUT/model.vt" "$OUT/test.vt"
echo "== the first five test images"
vtool head -n 5 "$OUT/test.vt" | vit-eval --predict "$OUT/model.vt"
echo "== shuffling patch contents (positions kept): how much the model uses position"
shuffle-eval --trials 2 "$OUT/model.vt" "$OUT/test.vt"
echo "== parameters and multiply-accumulates"
flops --model "$OUT/model.vt" --tokens 49
