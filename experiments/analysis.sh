#!/bin/sh
# analysis.sh - what the encodings learned, drawn by vit-probe(1) from the
# models of tasks.sh's relation, motion and pathfinder tasks (rel-paper,
# mot-paper, path-paper: own convention, the default rate, seed 1): per
# layer and head the mean attention distance (the ViT paper's Figure 7)
# and the position-similarity map q(x)^T R(x)^T R(y) k(y) by offset, on
# the training size and on the largest test size (relation: the 112-pixel
# canvas; motion: 16 frames; pathfinder has only its own), and the
# rotation frequencies of each rotary encoding's generators.  The models are tasks.sh's (pilot.sh's): this reads them
# from the cache and trains none; one not there is left out.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
PES="abs rope-axial rope-mixed liere:8 comrope-ld:8"
N=1000		# test records a probe reads
[ "$SCALE" = quick ] && PES="abs liere:8" N=20
# task: its run1.sh words, its larger test set's field and its name
REL="task=rel val=held evals=top1,canvas:84:112"
MOT="task=mot val=held evals=top1,frames:16"
PATHT="task=path val=held evals=top1"
TASKS="rel mot path"
words() { case $1 in rel) echo "$REL" ;; mot) echo "$MOT" ;; path) echo "$PATHT" ;; esac; }
big() { case $1 in rel) echo canvas_112 ;; mot) echo frames_16 ;; esac; }
for t in $TASKS; do
	for pe in $PES; do
		plan "$t/$pe" $(words $t) pe=$pe $(own_cls $pe) seed=1
	done
done
[ "$DRY" = 1 ] && exit 0	# nothing to train: run.sh's pool has tasks.sh's runs

# uniform TEST: the mean grid distance between two tokens of a stream's
# grid (its GRID key), what uniform attention gives.
uniform() {
	vtool info "$1" | awk '$1 == "meta" && $2 == "GRID" { n = split($3, g, "x") }
	    END { if (n == 2) { g[3] = g[2]; g[2] = g[1]; g[1] = 1 }
		for (a = 0; a < g[1]; a++) for (b = 0; b < g[2]; b++) for (c = 0; c < g[3]; c++)
		for (d = 0; d < g[1]; d++) for (e = 0; e < g[2]; e++) for (f = 0; f < g[3]; f++) {
			s += sqrt((a - d) ^ 2 + (b - e) ^ 2 + (c - f) ^ 2); k++ }
		printf "%.2f cells on %s", s / k, (n == 2 ? g[2] "x" g[3] : g[1] "x" g[2] "x" g[3]) }'
}
# lay FILE: vit-probe's distances, per layer the mean over heads
lay() {
	awk '!/^#/ { s[$1] += $3; n[$1]++ } END { for (l = 0; l in s; l++) printf "%s%.2f", (l ? " / " : ""), s[l] / n[l] }' "$1"
}
# blind TASK: the sentence naming the encodings whose similarity range
# is under 1 in every layer (their scores move by less than 1 across
# offsets, so their attention weights by less than a factor e: position
# barely enters), or nothing.
blind() {
	awk -F '\t' '{ n = split($7, r, " / "); b = n > 0; for (i = 1; i <= n; i++) if (r[i] + 0 >= 1) b = 0
	    if (b) l = l (l == "" ? "" : ", ") $1 " (" $2 "%)" }
	    END { if (l != "") printf "Position barely enters: the similarity range is under 1 in every layer of %s, so its attention weights move by less than a factor e with where a key lies.\n\n", l }' "$PLAN.rows.$1"
}
# pictures TASK [SIZE BIG]: the table of TASK's pictures, a row per
# encoding, with the larger size's similarity map where BIG is given.
pictures() {
	if [ -n "${3:-}" ]; then
		echo "| encoding | attention distance, $2 | similarity, $2 | similarity, $3 | frequencies |"
		echo "|---|---|---|---|---|"
	else
		echo "| encoding | attention distance | similarity | frequencies |"
		echo "|---|---|---|---|"
	fi
	while IFS='	' read -r pe _ _ _ _ _ _ sp; do
		n=$1-$(echo "$pe" | tr -d ':')
		big=
		[ -z "${3:-}" ] || big=" ![](results/$SCALE/$EXP-similarity-big-$n.png) |"
		echo "| $pe | ![](results/$SCALE/$EXP-distance-$n.png) | ![](results/$SCALE/$EXP-similarity-$n.png) |$big $sp |"
	done < "$PLAN.rows.$1"
	echo
}
# A model's pictures and numbers, its files named without the ':'
# (liere8): "PE TOP1 BIG D D_BIG RATIO RANGE SPECTRUM" in $PLAN.rows.TASK,
# BIG, D_BIG and RATIO "-" for a task with one size.
for t in $TASKS; do
	: > "$PLAN.rows.$t"
	for pe in $PES; do
		n=$t-$(echo "$pe" | tr -d ':')
		eval "sh \"\$EXPDIR/run1.sh\" --files $(words $t) pe=$pe $(own_cls $pe) seed=1" > "$PLAN.files"
		f() { awk -v k="$1" '$1 == k { print $2 }' "$PLAN.files"; }
		m=$(f model) ts=$(f test) tb=$ts
		[ -z "$(big $t)" ] || tb=$(f "$(big $t)")
		if [ ! -s "$m" ] || [ ! -s "$ts" ] || [ ! -s "$tb" ]; then
			echo "analysis.sh: $t $pe: its model or test streams are not in the cache" >&2
			continue
		fi
		echo "$(uniform "$ts")|$(uniform "$tb")" > "$PLAN.uniform.$t"
		vit-probe --show distance --data -n $N "$m" "$ts" > "$PLAN.$n.d"
		vit-probe --show similarity --data -n $N "$m" "$ts" > "$PLAN.$n.s"
		vit-probe --show distance -s 480x360 -n $N -o "$RES/$EXP-distance-$n.png" "$m" "$ts"
		vit-probe --show similarity -n $N -o "$RES/$EXP-similarity-$n.png" "$m" "$ts"
		db=- ratio=-
		if [ -n "$(big $t)" ]; then
			vit-probe --show distance --data -n $N "$m" "$tb" > "$PLAN.$n.db"
			vit-probe --show similarity -n $N -o "$RES/$EXP-similarity-big-$n.png" "$m" "$tb"
			db=$(lay "$PLAN.$n.db")
			ratio=$(awk '!/^#/ { if (FILENAME == ARGV[1]) a += $3; else b += $3 } END { printf "%.2f", b / a }' "$PLAN.$n.d" "$PLAN.$n.db")
		fi
		sp=-
		if vit-probe --show spectrum -s 640x560 -o "$RES/$EXP-spectrum-$n.png" "$m" 2>/dev/null; then
			sp="![](results/$SCALE/$EXP-spectrum-$n.png)"
		else
			rm -f "$RES/$EXP-spectrum-$n.png"
		fi
		# the similarity map's range (max - min over offsets), per
		# layer the mean over heads
		range=$(awk '!/^#/ { k = $1 " " $2; if (!(k in hi) || $NF > hi[k]) hi[k] = $NF; if (!(k in lo) || $NF < lo[k]) lo[k] = $NF }
		    END { for (k in hi) { split(k, a, " "); s[a[1]] += hi[k] - lo[k]; c[a[1]]++ }
			for (l = 0; l in s; l++) printf "%s%.2f", (l ? " / " : ""), s[l] / c[l] }' "$PLAN.$n.s")
		acc() { [ -n "$1" ] || { echo -; return; }
			planfield "$1" | awk -F '\t' -v l="$t/$pe" '$1 == l { printf "%.2f", 100 * $3; exit }'; }
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pe" "$(acc top1)" "$(acc "$(big $t)")" "$(lay "$PLAN.$n.d")" \
		    "$db" "$ratio" "$range" "$sp" >> "$PLAN.rows.$t"
	done
done

section "What the encodings learned: attention distance, position similarity, frequencies"
{
	cat <<EOF2
vit-probe(1) on the models of the position-sensitive tasks (tasks.sh's
rel-paper, mot-paper and path-paper runs: each encoding in its own
convention, the default rate, seed 1), over the first $N test records at
the training size and at the largest test size: *rel* on the 56 x 56
canvas and on the 112 x 112 one (the items at the same size, a 16 x 16
grid where training saw 8 x 8), *mot* on clips of 8 frames and of 16
(twice the time positions), *path* on its 32 x 32 images alone. *Mean attention distance*: for each patch query, the
grid distance to each patch key weighted by its attention (the CLS left
out), averaged over queries, records and heads, in grid cells. *Similarity
range*: the position-similarity map, the mean score q(x)^T R(x)^T R(y)
k(y) / sqrt(hd) before the softmax at each offset y - x, its highest less
its lowest, averaged over heads: how much the scores depend on where a
key lies from its query. Layers from the input up.

EOF2
	for t in $TASKS; do
		[ -s "$PLAN.rows.$t" ] || { echo "*$t*: no model in the cache yet."; echo; continue; }
		u=$(cat "$PLAN.uniform.$t")
		case $t in rel) s=56 b=112 ;; mot) s="8 frames" b="16 frames" ;; path) s=32 b= ;; esac
		if [ -z "$b" ]; then
			echo "*$t* (uniform attention's mean distance: ${u%%|*}):"
			echo
			echo "| encoding | top-1 | mean distance (by layer) | similarity range (by layer) |"
			echo "|---|---|---|---|"
			awk -F '\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $4, $7 }' "$PLAN.rows.$t"
			echo
			blind $t
			pictures $t
			continue
		fi
		echo "*$t* (uniform attention's mean distance: ${u%%|*} at $s, ${u#*|} at $b):"
		echo
		echo "| encoding | top-1, $s | top-1, $b | mean distance, $s (by layer) | $b | $b / $s | similarity range, $s (by layer) |"
		echo "|---|---|---|---|---|---|---|"
		awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }' "$PLAN.rows.$t"
		echo
		echo "Ordered by top-1 at $b, with the growth of the mean attention"
		echo "distance from $s to $b (1 when attention keeps its reach in"
		echo "cells; as much as uniform attention's growth when it spreads over"
		echo "the larger grid):"
		sort -t '	' -k3,3gr "$PLAN.rows.$t" | awk -F '\t' '{ printf "%s%s %s%% (x%s)", (NR > 1 ? ", " : ""), $1, $3, $6 } END { print "." }'
		echo
		# Spearman's rank correlation of top-1 at the larger size with
		# the growth
		awk -F '\t' -v b="$b" "$STATS"'{ n++; a[n] = $3 + 0; g[n] = $6 + 0 }
		END { if (n < 3 || (rho = spearman(a, g, n)) == "") exit
			printf "Rank correlation of top-1 at %s with that growth (Spearman, %d encodings, seed 1): %.2f%s\n\n", b, n, rho,
			    (rho <= -0.9 ? ": the encodings whose attention keeps its reach extrapolate best." : ".") }' "$PLAN.rows.$t"
		blind $t
		pictures $t "$s" "$b"
	done
	echo "The pictures: the mean attention distance of each head by layer; the"
	echo "similarity maps of every layer (rows) and head (columns) by offset (dx"
	echo "across, dy up; for clips the maps of dt = 0); and the rotation"
	echo "frequencies of the generators (radians per grid cell, each axis's"
	echo "sorted, a curve per layer and head; abs has none)."
	echo
} >> "$RES/$EXP.md"
finish
