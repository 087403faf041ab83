#!/bin/sh
# analysis.sh - what the encodings learned, drawn by vit-probe(1) from the
# models of the relation task (tasks.sh's rel-paper runs: own convention,
# the default rate, seed 1): per layer and head the mean attention
# distance (the ViT paper's Figure 7) and the position-similarity map
# q(x)^T R(x)^T R(y) k(y) by offset, on the training canvas (56) and on
# the largest (112: size extrapolation), and the rotation frequencies of
# each rotary encoding's generators.  The models come from the cache: a
# model not there is trained again by the plan's run (its result kept).
. "$(dirname "$0")/lib.sh"
parse_options "$@"
PES="abs rope-axial rope-mixed liere:8 comrope-ld:8"
N=1000		# test records a probe reads
[ "$SCALE" = quick ] && PES="abs liere:8" N=20
REL="task=rel val=held evals=top1,canvas:84:112"
for pe in $PES; do
	plan "rel/$pe" $REL pe=$pe $(own_cls $pe) seed=1
done
run_plan

# A rotary model's pictures and numbers, each encoding's files named
# without its ':' (liere8).
: > "$PLAN.rows"
for pe in $PES; do
	n=$(echo "$pe" | tr -d ':')
	eval "sh \"\$EXPDIR/run1.sh\" --files $REL pe=$pe $(own_cls $pe) seed=1" > "$PLAN.files"
	f() { awk -v k="$1" '$1 == k { print $2 }' "$PLAN.files"; }
	m=$(f model) t56=$(f test) t112=$(f canvas_112)
	if [ ! -s "$m" ] || [ ! -s "$t56" ] || [ ! -s "$t112" ]; then
		echo "analysis.sh: $pe: its model or test streams are not in the cache" >&2
		continue
	fi
	vit-probe --show distance --data -n $N "$m" "$t56" > "$PLAN.$n.d56"
	vit-probe --show distance --data -n $N "$m" "$t112" > "$PLAN.$n.d112"
	vit-probe --show similarity --data -n $N "$m" "$t56" > "$PLAN.$n.s56"
	vit-probe --show distance -s 480x360 -n $N -o "$RES/$EXP-distance-$n.png" "$m" "$t56"
	vit-probe --show similarity -n $N -o "$RES/$EXP-similarity-$n.png" "$m" "$t56"
	vit-probe --show similarity -n $N -o "$RES/$EXP-similarity112-$n.png" "$m" "$t112"
	sp=-
	if vit-probe --show spectrum -s 640x560 -o "$RES/$EXP-spectrum-$n.png" "$m" 2>/dev/null; then
		sp="![](results/$SCALE/$EXP-spectrum-$n.png)"
	else
		rm -f "$RES/$EXP-spectrum-$n.png"
	fi
	# per layer, the mean over heads: distance at 56 and at 112 (cells),
	# and the similarity map's range (max - min over offsets) at 56
	lay() { awk '!/^#/ { s[$1] += $3; n[$1]++ } END { for (l = 0; l in s; l++) printf "%s%.2f", (l ? " / " : ""), s[l] / n[l] }' "$1"; }
	ratio=$(awk '!/^#/ { if (FILENAME == ARGV[1]) a += $3; else b += $3 } END { printf "%.2f", b / a }' "$PLAN.$n.d56" "$PLAN.$n.d112")
	range=$(awk '!/^#/ { k = $1 " " $2; if (!(k in hi) || $NF > hi[k]) hi[k] = $NF; if (!(k in lo) || $NF < lo[k]) lo[k] = $NF }
	    END { for (k in hi) { split(k, a, " "); s[a[1]] += hi[k] - lo[k]; n[a[1]]++ }
		for (l = 0; l in s; l++) printf "%s%.2f", (l ? " / " : ""), s[l] / n[l] }' "$PLAN.$n.s56")
	top=$(planfield top1 | awk -F '\t' -v l="rel/$pe" '$1 == l { printf "%.2f", 100 * $3; exit }')
	t12=$(planfield canvas_112 | awk -F '\t' -v l="rel/$pe" '$1 == l { printf "%.2f", 100 * $3; exit }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pe" "$top" "$t12" "$(lay "$PLAN.$n.d56")" "$(lay "$PLAN.$n.d112")" \
	    "$ratio" "$range" "$sp" >> "$PLAN.rows"
done

section "What the encodings learned: attention distance, position similarity, frequencies"
{
	cat <<EOF2
vit-probe(1) on the relation task's models (tasks.sh's rel-paper runs:
each encoding in its own convention, the default rate, seed 1), over the
first $N test records of the 56 x 56 canvas and of the 112 x 112 one
(the items at the same size, a 16 x 16 grid where training saw 8 x 8).
*Mean attention distance*: for each patch query, the grid distance to
each patch key weighted by its attention (the CLS left out), averaged
over queries, records and heads; uniform attention would give the mean
distance between two cells (4.1 on 8 x 8, 8.3 on 16 x 16). *Similarity
range*: the position-similarity map, the mean score q(x)^T R(x)^T R(y)
k(y) / sqrt(hd) before the softmax at each offset y - x, its highest less
its lowest, averaged over heads: how much the scores depend on where a
key lies from its query. Layers from the input up.

| encoding | top-1, 56 | top-1, 112 | mean distance, 56 (cells, by layer) | 112 | 112 / 56 | similarity range, 56 (by layer) |
|---|---|---|---|---|---|---|
EOF2
	awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$PLAN.rows"
	echo
	echo "Ordered by top-1 on the 112 canvas, with the growth of the mean"
	echo "attention distance from 56 to 112 (1 when attention keeps its reach"
	echo "in cells; about 2 when it spreads over the larger grid as uniform"
	echo "attention would):"
	sort -t '	' -k3,3gr "$PLAN.rows" | awk -F '\t' '{ printf "%s%s %s%% (x%s)", (NR > 1 ? ", " : ""), $1, $3, $6 } END { print "." }'
	echo
	echo "The pictures, per encoding: the mean attention distance of each"
	echo "head by layer; the similarity maps of every layer (rows) and head"
	echo "(columns) by offset (dx across, dy up), on 56 and on 112; and the"
	echo "rotation frequencies of the generators (radians per grid cell, each"
	echo "axis's sorted, a curve per layer and head; abs has none)."
	echo
	echo "| encoding | attention distance, 56 | similarity, 56 | similarity, 112 | frequencies |"
	echo "|---|---|---|---|---|"
	while IFS='	' read -r pe _ _ _ _ _ _ sp; do
		n=$(echo "$pe" | tr -d ':')
		echo "| $pe | ![](results/$SCALE/$EXP-distance-$n.png) | ![](results/$SCALE/$EXP-similarity-$n.png) | ![](results/$SCALE/$EXP-similarity112-$n.png) | $sp |"
	done < "$PLAN.rows"
	echo
} >> "$RES/$EXP.md"
finish
