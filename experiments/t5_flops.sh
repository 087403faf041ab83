#!/bin/sh
# t5_flops.sh - LieRE Table 5: inference FLOPs of ViT-Tiny, Base and Large
# at 224 x 224 (patch 16, 196 tokens), counted by flops(1) under the
# paper's convention, against the paper's figures.
. "$(dirname "$0")/lib.sh"
parse_options "$@"
PES="abs rope-axial rope-mixed liere:8 liere:64"
cat > "$PLAN.paper" <<'EOF2'
small abs 0.963
small rope-axial 0.963
small rope-mixed 0.964
small liere:8 0.968
small liere:64 0.970
base abs 5.607
base rope-axial 5.607
base rope-mixed 5.609
base liere:8 5.617
base liere:64 5.684
large abs 19.856
large rope-axial 19.856
large rope-mixed 19.863
large liere:8 19.882
large liere:64 20.061
EOF2
: > "$PLAN.ours"
for p in tiny small base large; do
	flops --preset $p --classes 100 --count paper --pe "$(echo $PES | tr ' ' ',')" |
	    awk -v p=$p '$1 ~ /^(abs|rope|liere)/ { printf "%s %s %.3f %.1f\n", p, $1, $3 / 1e9, $2 / 1e6 }' >> "$PLAN.ours"
done
section "LieRE Table 5: FLOPs"
{
	cat <<'EOF2'
GFLOPs of one forward pass as the paper counts them (`flops --preset P
--classes 100 --count paper`: 64 patch tokens and CLS), against Table 5.
The deviation is ours / paper - 1. The paper's first column is headed
"ViT-Tiny (22M)": that many parameters is ViT-Small's (the preset small),
shown against it; ViT-Tiny (the preset tiny) is shown too.

EOF2
	echo "| model | encoding | parameters (M) | ours (G) | paper (G) | deviation |"
	echo "|---|---|---|---|---|---|"
	awk 'NR == FNR { want[$1 " " $2] = $3; next }
	    { w = want[$1 " " $2]
	      if (w == "") { printf "| %s | %s | %s | %.3f | - | - |\n", $1, $2, $4, $3; next }
	      d = ($3 / w - 1) * 100
	      printf "| %s | %s | %s | %.3f | %.3f | %+.2f%% |\n", $1, $2, $4, $3, w, d
	      if (d > 0.5 || d < -0.5) bad = bad " " $1 "/" $2; else good = good " " $1 "/" $2 }
	    END { print ""; print "Within 0.5% of the paper:" (good == "" ? " none" : good) "."
		if (bad != "") print "**More than 0.5% from the paper:" bad ".**" }' "$PLAN.paper" "$PLAN.ours"
	echo
} >> "$RES/$EXP.md"
awk 'NR == FNR { want[$1 " " $2] = $3; next }
    { printf "{\"model\":\"%s\",\"pe\":\"%s\",\"params_m\":%s,\"gflops\":%s,\"paper_gflops\":%s}\n", $1, $2, $4, $3, want[$1 " " $2] == "" ? "null" : want[$1 " " $2] }' \
    "$PLAN.paper" "$PLAN.ours" > "$RES/$EXP.jsonl"
echo "$EXP: $RES/$EXP.md" >&2
