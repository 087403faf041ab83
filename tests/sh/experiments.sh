#!/bin/sh
# experiments: every script of experiments/ end to end at the quick scale
# (tiny data: the pipelines, not the numbers), the cache that lets a
# campaign go on where it stopped, and Moving Fashion-MNIST's clips.
. tests/sh/lib.sh
R=$T/results C=$T/cache
ALL="t1_encodings t2_sharing t3_shuffle block_size model_size t5_flops resolution data_efficiency compute_efficiency riemann fairness precision pilot tasks analysis"

# The statistics (experiments/stats.awk) against known answers: t
# quantiles of the tables, the closed forms of df 1 (Cauchy: P(|T| > 1) =
# 1/2) and df 2 (two-sided p = 1 - t / sqrt(2 + t^2)), log Gamma of 1/2
# and 10, Holm's adjustment of 0.01, 0.04, 0.03 (0.03, 0.06, 0.06),
# Spearman's rho with ties (-9.5 / sqrt(95)), of a variable with itself,
# and of one with no spread (none); the seeds that would decide a step:
# d 1, sd 1 separates at N 10 (t(.975, 9) + t(.8, 9) = 3.146 <= sqrt(10),
# and 3.195 > 3 at N 9), d 0 is shown within +-0.5 at N 36 (1.690 +
# 1.306 <= 3.0, 2.998 > 2.958 at 35), no spread at 2, a tiny difference
# in a wide spread not within 1000 (none); futility, where seeding stops:
# that d 1, sd 1 (10 seeds) is not past twice a cap of 5 but is past 4,
# never at 2 seeds, and always past 1000.
got=$(awk "$(cat experiments/stats.awk)"'BEGIN {
	printf "%.6f %.6f %.6f %.6f %.6f\n", tq(0.975, 1), tq(0.975, 2), tq(0.975, 9), tq(0.95, 4), tq(0.975, 30)
	printf "%.6f %.6f %.6f %.6f\n", tp2(1, 1), tp2(3.4641016151377544, 2), tp2(2.776445105, 4), tp2(2.228138852, 10)
	printf "%.10f %.10f\n", lgam(0.5), lgam(10)
	P[1] = 0.01; P[2] = 0.04; P[3] = 0.03; holm(P, H, 3); printf "%.4f %.4f %.4f\n", H[1], H[2], H[3]
	A[1] = 10; A[2] = 11; A[3] = 12; B[1] = 11; B[2] = 13; B[3] = 15; B[4] = 99; paired(A, B, R)
	printf "%d %.6f %.6f %.6f %.6f %.6f %.6f\n", R["n"], R["mean"], R["sd"], R["p"], R["lo"], R["hi"], R["hi90"]
	split("41.74 40.38 76.60 54.82 40.26", X, " "); split("1.40 1.42 1.37 1.39 1.42", Y, " "); split("1 1 1", Z, " ")
	printf "%.6f %.6f %s\n", spearman(X, Y, 5), spearman(Y, Y, 5), spearman(X, Z, 3)
	printf "%s %s %s %s\n", seeds(1, 1, 1, 0.5), seeds(0, 1, 1, 0.5), seeds(-2, 0, 3, 0.5), seeds(0.01, 10, 28, 0.5)
	h = 1 + tq(0.975, 3) / 2; printf "%d %d %d %d\n", futile(4, 1, h, 1, 0.5, 5), futile(4, 1, h, 1, 0.5, 4),
	    futile(2, 0, 100, 1, 0.5, 10), futile(3, 0.01, 0.01 + tq(0.975, 2) * 10 / sqrt(3), 28, 0.5, 10) }')
want="12.706205 4.302653 2.262157 2.131847 2.042272
0.500000 0.074180 0.050000 0.050000
0.5723649429 12.8018274801
0.0300 0.0600 0.0600
3 2.000000 1.000000 0.074180 -0.484138 4.484138 3.685854
-0.974679 1.000000 
10 36 2 
0 1 0 1"
[ "$got" = "$want" ] && ok "stats.awk: t quantiles and p-values, log Gamma, Holm, a paired test, as known" ||
	nok "stats.awk: got
$got
want
$want"

# The verdicts, on made-up runs (seeds 1-3; d one run; e none): b far
# above a, c within 0.5 points of a with little noise, x above a on
# average but noisily.
printf '%s\n' a 10 1 a 11 2 a 12 3 b 20 1 b 21.5 2 b 22 3 c 10.1 1 c 11.2 2 c 11.9 3 \
    x 14 1 x 10 2 x 13 3 d 30 1 | paste - - - > "$T/verdict.runs"
verdicts() { (PERCENT=0 SEEDS='1 2 3' PLAN=$T/claim EXPDIR=$PWD/experiments; . experiments/lib.sh; rm -f "$PLAN".*
	stats < "$T/verdict.runs" > "$T/verdict.st"
	for c in "$@"; do claim "$T/verdict.st" "$c"; done > "$T/verdict.md"
	settle "$T/verdict.md" "$T/verdict.claims"; sed 's/^[^*]*\*\*\([^*]*\)\*\*.*/\1/' "$T/verdict.md" | tr '\n' ' ') }
v=$(verdicts 'a < b' 'b < a' 'a < c' 'a < x' 'a < d' 'a < e' 'a < c < b' 'c < a < b' 'b < c < x')
[ "$v" = "holds reversed equivalent undecided undecided undecided equivalent equivalent reversed " ] &&
	ok "verdicts: holds, reversed, equivalent, undecided (noise, one seed, not run), orderings" || nok "verdicts: $v"
check_grep "a verdict line gives the paired difference, its interval, p and Holm's p" \
    '^- `a < b`: \*\*holds\*\* \(a < b: \+10\.17 points \(9\.45 to 10\.88\), p 0\.00027, Holm 0\.0021, 3 seeds: holds\)$' "$T/verdict.md"
check_grep "... and the seeds still missing" '^- `a < d`: \*\*undecided\*\* \(a < d: one seed of 3: undecided\)$' "$T/verdict.md"
[ "$(grep -c . "$T/verdict.claims")" -eq 12 ] && ok "every step goes to the summary's lines" || nok "verdict.claims: $(cat "$T/verdict.claims")"
verdicts 'a < x' > /dev/null
awk -F '\t' '{ exit !($10 == $11 && $10 > 0.4 && $10 < 0.5) }' "$T/verdict.claims" &&
	ok "Holm's correction of a lone claim leaves its p" || nok "a lone claim: $(cat "$T/verdict.claims")"

# Sequential seeding of every step ("all"), on the same runs and y, 1.17
# points above a on average (p 0.12; about 6 seeds would decide it), in a
# section of its own at the full scale, which sequential runs again after
# a round of seeds: a and y get a fourth seed; b (holds), c (equivalent)
# and x (undecided, but by the estimate past twice the cap) none; and the
# second round adds nothing while the fourth seeds have not run.
printf '%s\n' y 11 1 y 13 2 y 12.5 3 | paste - - - | cat "$T/verdict.runs" - > "$T/seq.runs"
cat > "$T/seqsec.sh" <<'EOF2'
. experiments/lib.sh
parse_options "$@"
PERCENT=0 stats < "$SEQRUNS" > "$PLAN.t.top1"
for c in 'a < b' 'a < c' 'a < x' 'a < y'; do claim "$PLAN.t.top1" "$c"; done > /dev/null
sequential 10 all
EOF2
EXPDIR=$PWD/experiments SEQRUNS=$T/seq.runs sh "$T/seqsec.sh" --scale full --results "$T/seqres" --cache "$T/seqc" 2> "$T/seq.err"
[ "$(cat "$T/seqres/full/seqsec.seeds" 2>&1)" = "$(printf 't/a\t4\nt/y\t4')" ] &&
	ok "sequential seeding of every step: the undecided step that seeds could decide, once per round" ||
	nok "seqsec.seeds: $(cat "$T/seqres/full/seqsec.seeds" "$T/seq.err" 2>&1)"
check_grep "... and the one they could not, named" '^seqsec: t/a < t/x: undecided at 3 seeds, and by the estimate more than 20 would decide it: no more seeds$' "$T/seq.err"

# A run that two sections plan under labels of their own (lib.sh's
# SHARED: Table 3's mv3d/abs is Table 1's mv3d-paper/abs) has in each the
# seeds that the other's sequential seeding gave it.
mkdir -p "$T/shr/full" "$T/shrsec"
printf 'mv3d-paper/abs\t4\nmv3d-paper/abs\t5\n' > "$T/shr/full/t1_encodings.seeds"
cat > "$T/shrsec/t3_shuffle.sh" <<'EOF2'
. experiments/lib.sh
parse_options "$@"
plan mv3d/abs task=mv3d pe=abs seed=1
plan mv3d/liere:8 task=mv3d pe=liere:8 seed=1
cut -f2 "$PLAN"
EOF2
got=$(EXPDIR=$PWD/experiments sh "$T/shrsec/t3_shuffle.sh" --scale full --results "$T/shr" --cache "$T/shrc" 2>&1 | tr '\n' '|')
[ "$got" = "task=mv3d pe=abs seed=1|task=mv3d pe=abs seed=4|task=mv3d pe=abs seed=5|task=mv3d pe=liere:8 seed=1|" ] &&
	ok "a run two sections share has in each the seeds the other's seeding gave it" || nok "shared seeds: $got"

# Moving Fashion-MNIST: every clip moves its item 2 pixels a frame, in the
# direction its label says (label = 2 class + direction, 1: leftwards),
# through FFmpeg and back; the same seed gives the same files.
sh experiments/movingfm.sh --train 6 --test 2 --seed 3 "$T/mv" 2>"$T/err" &&
	ok "movingfm.sh makes 6 + 2 clips" || nok "movingfm.sh: $(cat "$T/err")"
check "the clips move as their labels say" $PY - "$T/mv" <<'PYEOF'
import subprocess, sys
import numpy as np
d = sys.argv[1]
lab = [int(l.split()[1]) for l in open(d + "/train.list")]
img = np.frombuffer(subprocess.run(["sh", "-c", "gzip -dc /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz"],
    capture_output=True).stdout[8:14], np.uint8)
for i, l in enumerate(lab):
    assert l // 2 == img[i], (i, l, img[i])
    raw = subprocess.run(["ffmpeg", "-loglevel", "error", "-i", "%s/train/%05d.mkv" % (d, i),
        "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True, check=True).stdout
    f = np.frombuffer(raw, np.uint8).reshape(8, 32, 32).astype(int)
    left = [np.nonzero(x.sum(0))[0][0] for x in f]
    step = np.diff(left)
    assert (step == (-2 if l % 2 else 2)).all(), (i, l, left)
    assert all(abs(x.sum() - f[0].sum()) == 0 for x in f)
PYEOF
sh experiments/movingfm.sh --train 6 --test 2 --seed 3 "$T/mv2" 2>/dev/null
same=1
for f in train/00000.mkv train/00005.mkv test/00001.mkv; do cmp -s "$T/mv/$f" "$T/mv2/$f" || same=0; done
[ "$(cut -d' ' -f2 "$T/mv/train.list")" = "$(cut -d' ' -f2 "$T/mv2/train.list")" ] || same=0
[ $same = 1 ] && ok "movingfm.sh: the same seed, the same clips and labels" || nok "movingfm.sh: another run differs"

# Every experiment, quick.
start=$(date +%s)
sh experiments/run.sh --scale quick --results "$R" --cache "$C" > "$T/run.out" 2> "$T/run.err" &&
	ok "run.sh --scale quick: every experiment" || nok "run.sh --scale quick: $(grep -v '^run1.sh: training' "$T/run.err" | tail -5)"
echo "# quick scale: $(($(date +%s) - start)) s"
# campaign.sh: parts in turn, each in a process group of its own for at
# most --limit seconds (a part cut short leaves nothing running, nor its
# plan files), paused and resumed by --signal; a part within its time
# runs to its end.
sh experiments/campaign.sh --scale quick --results "$R" --cache "$C" riemann > /dev/null 2> "$T/camp.err" &&
	[ -s "$R/quick/riemann.md" ] && ok "campaign.sh: a part runs to its end" || nok "campaign.sh: $(tail -3 "$T/camp.err")"
sh experiments/campaign.sh --scale quick --results "$T/cr" --cache "$T/cc" --limit 3 t1_encodings > /dev/null 2> "$T/camp.err" &
cpid=$!
sleep 1
sh experiments/campaign.sh --signal STOP --cache "$T/cc"
# the part's states, once every process has taken the signal (a loaded
# machine delivers it a moment later): at most 5 s
states() {
	for f in "$T/cc/campaign"/*; do ps -e -o pgid=,stat= | awk -v g="${f##*/}" '$1 == g { print substr($2, 1, 1) }'; done | sort -u | tr -d '\n'
}
n=0
while st=$(states); case $st in *[!TZ]*) [ $n -lt 50 ] ;; *) false ;; esac; do
	sleep 0.1
	n=$((n + 1))
done
# (where Linux groups sessions for scheduling, the part's group is lowered,
# never the caller's)
ag=ok
if [ -r /proc/self/autogroup ]; then
	for f in "$T/cc/campaign"/*; do
		case $(cat "/proc/${f##*/}/autogroup" 2>/dev/null) in *" nice 19") ;; *) ag="part's $(cat "/proc/${f##*/}/autogroup" 2>&1)" ;; esac
	done
	case $(cat /proc/self/autogroup) in *" nice 19") ag="the caller's at 19" ;; esac
fi
sh experiments/campaign.sh --signal CONT --cache "$T/cc"
wait $cpid
# every process of the part stopped (Z: one that had ended, not reaped)
case $st in *T*) ;; *) st="$st: none stopped" ;; esac
case $st in *[!TZ]*) ;; *) st=T ;; esac
[ "$st" = T ] && [ "$ag" = ok ] && grep -q '^campaign.sh: t1_encodings: stopped after 3 s$' "$T/camp.err" && ! pgrep -f "$T/cc" > /dev/null &&
	[ -z "$(ls "$T/cc" | grep '^plan\.')" ] &&
	ok "campaign.sh: a part at the lowest priority; --signal STOP pauses it; --limit stops it, and nothing of it runs on" ||
	nok "campaign.sh: states '$st', autogroup $ag, $(tail -2 "$T/camp.err")"
# (tasks.sh plans its tuned rates and sequential seeds from results: those
# runs come after the pool)
grep -q '^run.sh: [1-9][0-9]* runs to do, 2 at a time' "$T/run.err" &&
    ! sed -n '/^run.sh: [0-9]* runs to do/,$p' "$T/run.err" | grep -v '^tasks:' | grep -q 'in the plan, [1-9]' &&
	ok "... all their runs in one pool, before any table" || nok "run.sh: not one pool: $(grep 'to do' "$T/run.err" | head -5)"
for e in $ALL; do
	[ -s "$R/quick/$e.md" ] && [ -s "$R/quick/$e.jsonl" ] && ok "$e: its section and JSON lines" ||
		nok "$e: no $e.md or $e.jsonl"
done
n=$(ls "$R/quick/runs" | wc -l)
[ "$(cat "$R"/quick/*.jsonl | grep -c '"top1":0\.')" -ge "$n" ] && ok "every run has a top-1 ($n runs)" || nok "runs without a top-1"
for p in t1_encodings-curves-2d t1_encodings-curves-3d block_size resolution data_efficiency; do
	for f in png svg; do
		[ -s "$R/quick/$p.$f" ] && ok "plot $p.$f" || nok "no plot $p.$f"
	done
done
head -c 8 "$R/quick/resolution.png" | od -An -c | grep -q 'P   N   G' && ok "the PNG is a PNG" || nok "resolution.png is no PNG"
check_grep "EXPERIMENTS.md has every section" "^## RiemannFormer Table 1" "$R/quick/EXPERIMENTS.md"
[ "$(grep -c '^## ' "$R/quick/EXPERIMENTS.md")" -eq 17 ] && ok "... 15 experiments, the claims and how they were run" ||
	nok "EXPERIMENTS.md has $(grep -c '^## ' "$R/quick/EXPERIMENTS.md") sections"
# the claims' table: a row per step of every claim line of the sections,
# with its verdict in one of the four words
nc=$(cat "$R"/quick/*.claims | grep -c .)
nl=$(ls "$R"/quick/*.md | grep -v '/EXPERIMENTS\.md$' | xargs cat | grep -c '^- .*`: \*\*')
nr=$(grep -Ec '^\| [^|]* \| [^|]* \| `[^`]*` \| [^|]* \| \*\*(holds|reversed|equivalent|undecided)\*\* \|' "$R/quick/EXPERIMENTS.md")
[ "$nl" -gt 10 ] && [ "$nc" -ge "$nl" ] && [ "$nr" -eq "$nc" ] && ok "the claims' table has a row for each of the $nc steps of the $nl claims" ||
	nok "the claims' table has $nr rows for $nc steps of $nl claims"
nd=$(grep -Ec '^\| [^|]* \| [^|]* \| `[^`]*` \| [^|]* \| \*\*[a-z]+\*\* \|.* \| [0-9]+ \| (-|[0-9]+|over 1000) \|$' "$R/quick/EXPERIMENTS.md")
[ "$nd" -eq "$nr" ] && ok "... each with the seeds that would decide it where it is undecided" || nok "$nd of $nr rows say what would decide them"
# ... and a row per step across the sections: where decided, what would
# decide it elsewhere
ns=$(cat "$R"/quick/*.claims | awk -F '\t' '{ print $3 " < " $4 }' | sort -u | grep -c .)
nb=$(grep -Ec '^\| [^|`]* \| [^|]* \| [0-9]+ of [0-9]+ \| [^|]* \|$' "$R/quick/EXPERIMENTS.md")
[ "$nb" -eq "$ns" ] && ok "... and a row for each of the $ns steps across the sections" || nok "the step table has $nb rows for $ns steps"
! grep -q 'does not hold\|not separated' "$R"/quick/*.md && ok "no verdict reads \"does not hold\"" || nok "old verdict words remain"
check_grep "... with its where, ordering and step" '^\| LieRE Table 1 \| 3D \| `abs < rope-axial < rope-mixed < liere:8` \| rope-mixed < liere:8 \| \*\*' "$R/quick/EXPERIMENTS.md"
check_grep "ComRoPE's paper arm rotates the CLS at the centre (posgen --cls centre)" '"pe":"comrope-ld:8","arm":"paper".*"cls":"centre"' "$R/quick/t1_encodings.jsonl"
check_grep "Table 1 lists rope-axial with a number in both arms" '^\| rope-axial \| [0-9.]+ \(1 run\) \| [0-9.]+ \(1 run\) \| [0-9.]+' "$R/quick/t1_encodings.md"
k1=$(SCALE=quick sh experiments/run1.sh --train-key task=fm2d pe=rope-axial seed=1 evals=top1,shuffle)
k2=$(SCALE=quick sh experiments/run1.sh --train-key task=fm2d pe=rope-axial seed=1 arm=common evals=top1,shuffle)
check_grep "the paper arm maps positions into rope-axial's integer grid" '^meta +POSITIONS native integer' \
    /dev/stdin <<EOF2
$(vtool info "$C/models/$k1.vt")
EOF2
check_grep "the common arm takes them as given" '^meta +POSITIONS stream' /dev/stdin <<EOF2
$(vtool info "$C/models/$k2.vt")
EOF2
check_grep "Table 5: Base and Large as the paper" "^Within 0.5% of the paper: base/abs .*large/liere:64\.$" "$R/quick/t5_flops.md"
check_grep "3D shuffles whole frames too" '"shufflet_drop":' "$R/quick/t3_shuffle.jsonl"
check_grep "resolution: top-1 at 44 pixels" '"res_44":0\.' "$R/quick/resolution.jsonl"
check_grep "precision: bf16 trained beside fp32" '^\| liere:8 \| [0-9.]+ \(1 run\) \| [0-9.]+ \(1 run\) \|$' "$R/quick/precision.md"
how=native; grep -qw avx512_bf16 /proc/cpuinfo || how=emulated
n=$(grep -c '"vt":"--precision bf16"' "$R/quick/precision.jsonl")
[ "$n" -gt 0 ] && [ "$(grep -c "\"bf16\":\"$how\"" "$R/quick/precision.jsonl")" -eq "$n" ] &&
	ok "every bf16 run says it ran $how" || nok "bf16 runs without \"bf16\":\"$how\""
[ "$how" = native ] && what="in $n of the $n bf16 runs, emulated in 0\." || what="in 0 of the $n bf16 runs, emulated in $n\."
check_grep "... and the section counts them" "kernels $what" "$R/quick/precision.md"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | tr -d '"\\')
nt=$(grep -c . "$R/quick/t2_sharing.jsonl")
grep -qF "; $cpu ($nt runs), " "$R/quick/t2_sharing.md" && ok "a section names the CPU its runs ran on, with their count" ||
	nok "t2_sharing.md does not say '$cpu ($nt runs)': $(grep '^Scale' "$R/quick/t2_sharing.md")"
na=$(ls "$R/quick/runs" | wc -l)
grep -qF "  $cpu ($na runs); each section names its own." "$R/quick/EXPERIMENTS.md" &&
	ok "EXPERIMENTS.md names the CPUs of all the runs" || nok "EXPERIMENTS.md does not say '$cpu ($na runs)'"

# The cache: run again, nothing to do; one changed option, one new run.
sh experiments/t2_sharing.sh --scale quick --results "$R" --cache "$C" 2> "$T/again" >/dev/null
check_grep "a finished experiment is not run again" "t2_sharing: 4 runs in the plan, 0 to do" "$T/again"
k1=$(SCALE=quick sh experiments/run1.sh --key task=fm2d pe=liere:8 seed=1)
k2=$(SCALE=quick sh experiments/run1.sh --key task=fm2d pe=liere:8 seed=1 "vt=--share heads")
k3=$(SCALE=full sh experiments/run1.sh --key task=fm2d pe=liere:8 seed=1)
[ "$k1" != "$k2" ] && [ "$k1" != "$k3" ] && [ "$k2" != "$k3" ] && ok "an option or the scale changes the key" || nok "keys $k1 $k2 $k3"
# A training cut short (its checkpoint left as .part, the session that ran
# it ended) goes on from the checkpoint: vit-train --resume, the same model.
w="task=fm2d pe=abs seed=1"
k=$(SCALE=quick sh experiments/run1.sh --key $w)
tk=$(SCALE=quick sh experiments/run1.sh --train-key $w)
cp "$C/models/$tk.vt" "$T/whole.vt" && mv "$C/models/$tk.vt" "$C/models/$tk.vt.part" && rm -f "$R/quick/runs/$k.json"
SCALE=quick RES="$R/quick" CACHE="$C" sh experiments/run1.sh $w 2> "$T/resume.err"
check_grep "an interrupted training resumes from its checkpoint" "^run1.sh: resuming fm2d abs" "$T/resume.err"
cmp -s "$T/whole.vt" "$C/models/$tk.vt" && [ -s "$R/quick/runs/$k.json" ] &&
	ok "... to the same model, and its result" || nok "resumed: $(head -c 300 "$T/resume.err")"
grep -q '"train_s":[0-9]' "$R/quick/runs/$k.json" && ok "... with its training time" || nok "resumed: no train_s"
# Cut short again before its next checkpoint: that part's time is lost,
# what was spent before it still counts (never less).
echo "$(($(date +%s) + 1000)) 5" > "$C/models/$tk.t0"
mv "$C/models/$tk.vt" "$C/models/$tk.vt.part" && rm -f "$R/quick/runs/$k.json"
SCALE=quick RES="$R/quick" CACHE="$C" sh experiments/run1.sh $w 2> "$T/resume.err"
s=$(sed -n 's/.*"train_s":\([-0-9.]*\).*/\1/p' "$R/quick/runs/$k.json")
awk -v s="$s" 'BEGIN { exit !(s >= 5) }' && ok "... a part without a checkpoint adds nothing to it" ||
	nok "resumed twice: train_s $s"
rm -rf "$C/models"
# A model trained again (its cache gone) keeps the log of its first training.
echo '{"first":1}' | gzip >> "$R/quick/logs/$tk.jsonl.gz" && rm -f "$R/quick/runs/$k.json"
SCALE=quick RES="$R/quick" CACHE="$C" sh experiments/run1.sh $w 2> "$T/again.err"
grep -q '^run1.sh: training fm2d abs' "$T/again.err" && [ -s "$R/quick/runs/$k.json" ] &&
    [ "$(gzip -dc "$R/quick/logs/$tk.jsonl.gz" | tail -n 1)" = '{"first":1}' ] &&
	ok "a model trained again keeps its first training's log" || nok "trained again: $(gzip -dc "$R/quick/logs/$tk.jsonl.gz" | tail -c 200)"
# The log kept is compressed, and thinned past the first epoch: every
# validation line, and every 10th step after the first epoch.
printf '%s\n' '{"step":1,"epoch":0.5,"loss":2}' '{"step":2,"epoch":1.0,"loss":2}' '{"step":3,"epoch":1.5,"loss":2}' \
    '{"step":10,"epoch":5,"loss":2}' '{"step":11,"epoch":5.5,"val_acc":0.5}' '{"note":1}' > "$T/log"
[ "$(awk -f experiments/thinlog.awk "$T/log" | tr '\n' ' ')" = '{"step":1,"epoch":0.5,"loss":2} {"step":2,"epoch":1.0,"loss":2} {"step":10,"epoch":5,"loss":2} {"step":11,"epoch":5.5,"val_acc":0.5} {"note":1} ' ] &&
	gzip -dc "$R/quick/logs/$tk.jsonl.gz" | grep -q '"val_acc"' &&
	ok "the kept log: gzip, the first epoch whole, then every 10th step and every validation" ||
	nok "thinlog: $(awk -f experiments/thinlog.awk "$T/log" | head -c 300)"
# Provenance: every run says which code made it, and data or a model made
# by other code is made again, never reused; a table that mixes code
# versions says so.
j=$R/quick/runs/$k.json
grep -q '"commit":"[0-9a-f]\{7,\}\(-dirty\)\{0,1\}","bins":"[0-9a-f]\{16\}"' "$j" && grep -q '"cpu_bf16":"[a-z0-9_+]*"' "$j" &&
	ok "a run's JSON has its commit, its programs' hash and the CPU's bf16" || nok "no provenance in $(cat "$j")"
# ... and the plan of its fp32 products, kept in results/plans: its
# choices (a line each) and the header of the machine that made them
plan=$(sed -n 's/.*"plan":"\([0-9a-f]\{16\}\)".*/\1/p' "$j")
[ -n "$plan" ] && head -n 1 "$R/quick/plans/$plan" | grep -q '^# vitpipe plan' &&
    grep -q '^[a-z]* [NT] [NT] [0-9]* [0-9]* [0-9]* [a-z]*$' "$R/quick/plans/$plan" &&
	ok "a run's JSON names the plan of its products, kept in results/plans" ||
	nok "plan: $(sed 's/.*"plan"/"plan"/' "$j") $(ls "$R/quick/plans" 2>&1 | head -3)"
bins=$(sed 's/.*"bins":"\([0-9a-f]*\)".*/\1/' "$j")
grep -qF "code: binaries $bins (commit " "$R/quick/t2_sharing.md" && ok "a section names the code of its runs" ||
	nok "t2_sharing.md: $(sed -n 3p "$R/quick/t2_sharing.md")"
for f in "$C"/data/val-*.vt "$C"/data/test-*.vt; do echo other > "$f.bins"; done
others() { grep -lx other "$C"/data/*.bins | wc -l; }
n0=$(others)
echo other > "$C/models/$tk.bins" && rm -f "$j"
SCALE=quick RES="$R/quick" CACHE="$C" sh experiments/run1.sh $w 2> "$T/stale.err"
grep -q '^run1.sh: training fm2d abs' "$T/stale.err" && [ "$(cat "$C/models/$tk.bins")" = "$bins" ] &&
	ok "a model made by other code is trained again" || nok "stale model: $(cat "$T/stale.err")"
[ "$(others)" -eq $((n0 - 2)) ] && ok "... and its data (validation and test) made by other code made again" ||
	nok "stale data: $n0 then $(others) sets made by other code"
sed -i 's/"bins":"[0-9a-f]*"/"bins":"0123456789abcdef"/' "$R/quick/runs/$(sed 's/^{"key":"\([0-9a-f]*\)".*/\1/' "$R/quick/t2_sharing.jsonl" | head -n 1).json"
sh experiments/t2_sharing.sh --scale quick --results "$R" --cache "$C" 2>/dev/null >/dev/null
check_grep "a table that mixes code versions says so" '\*\*code of 2 versions, mixed in this table\*\*: binaries 0123456789abcdef .*; binaries [0-9a-f]{16} ' "$R/quick/t2_sharing.md"
rm -rf "$C/models"
sh experiments/t3_shuffle.sh --scale quick --results "$R" --cache "$C" 2> "$T/again" >/dev/null
check_grep "results outlive the model cache (committed results need no models)" "t3_shuffle: 10 runs in the plan, 0 to do" "$T/again"
sh experiments/t1_encodings.sh --scale huge 2>/dev/null; [ $? -eq 2 ] && ok "an unknown scale is a usage error" || nok "--scale huge: not exit 2"
sh experiments/run.sh nosuch 2>/dev/null; [ $? -eq 2 ] && ok "an unknown experiment too" || nok "run.sh nosuch: not exit 2"

# The discrimination pilot on taskgen's tasks (run by run.sh above):
# every task's pipeline, the larger canvases and the longer clips, and its
# table with a verdict column.
for t in rel "rel 84" "rel 112" path mot "mot 16"; do
	check_grep "pilot: a row for $t, with its verdict" "^\| $t \| [0-9.]+ \(1 run\) \|.*\| one seed: no verdict \|\$" "$R/quick/pilot.md"
done
check_grep "pilot: relation tested on a 112-pixel canvas" '"task":"rel".*"canvas_112":0\.' "$R/quick/pilot.jsonl"
check_grep "... motion on 16 frames" '"task":"mot".*"frames_16":0\.' "$R/quick/pilot.jsonl"
# pilot.sh's verdict on made-up columns ("LABEL N MEAN LO HI"): no seed
# varied (identical chance runs) reads inf, not a huge number; a spread
# of 30 against a pooled sd of 0.40 reads 74.5.
sed -n '/^verdict() {/,/^}/p' experiments/pilot.sh > "$T/verdict.sh"
printf 'abs\t3\t50\t50\t50\nrope\t3\t80\t80\t80\n' > "$T/v0"
printf 'abs\t3\t50\t49\t51\nrope\t3\t80\t79\t81\n' > "$T/v1"
got=$(. "$T/verdict.sh"; verdict "$T/v0"; verdict "$T/v1")
[ "$got" = "30.00 | 0.00 | inf | - | **discriminates**
30.00 | 0.40 | 74.5 | 0.0 | **discriminates**" ] && ok "pilot: the ratio with no seed variation reads inf" || nok "pilot verdict: $got"
# The tasks at their scale (run by run.sh above): three conventions,
# validation held out from the training images, a learning-rate sweep
# chosen on validation beside the default, and sequential seeding.
check_grep "tasks: a row per encoding, own, integer and linspace conventions, on 56, 84 and 112" \
    '^\| liere:8 \| [0-9.]+ \([^)]*\) \| [0-9.]+ \([^)]*\) \| [0-9.]+ \([^)]*\) \| [0-9.]+ \(1 run\) \|( [0-9.]+ \(1 run\) \|){5}$' "$R/quick/tasks.md"
check_grep "... the integer convention for every encoding" '"task":"rel","pe":"liere:8","arm":"common".*"conv":"integer"' "$R/quick/tasks.jsonl"
check_grep "... motion on 8 and 16 frames and pathfinder, a column each" \
    '^\| liere:8 \| [0-9.]+ \([^)]*\) \| [0-9.]+ \([^)]*\) \| [0-9.]+ \([^)]*\) \|$' "$R/quick/tasks.md"
check_grep "... and the papers' claims on pathfinder" '^- path: `abs < ' "$R/quick/tasks.md"
[ "$(grep -c '"task":"rel"' "$R/quick/tasks.jsonl")" -eq "$(grep '"task":"rel"' "$R/quick/tasks.jsonl" | grep -c '"val":"held".*"val_top1":0\.')" ] &&
	ok "... validation held out from the training images, its top-1 recorded" || nok "tasks: runs validated on the test set"
check_grep "... a rate chosen on validation, beside the default" '^\| rel \| liere:8 \| [0-9e-]+ \| [0-9.]+ \(.*\) \| [0-9.]+ \(.*\) \|$' "$R/quick/tasks.md"
check_grep "... a frequency or scale sweep, chosen on validation, beside the default" \
    '^\| liere:8 \| generator scale, default 6\.28 \| [0-9.]+ at 6\.28, [0-9.]+ at 1\.57, [0-9.]+ at 25\.1 \| [0-9.]+( \(default\))? \| [0-9.]+ \(.*\) \| [0-9.]+ \(.*\) \|$' "$R/quick/tasks.md"
check_grep "... its runs' initial generators from skewgen, in their JSON" '"pe":"liere:8".*"init":"--init uniform --scale 1\.5708"' "$R/quick/tasks.jsonl"
k1=$(SCALE=quick CACHE=$C sh experiments/run1.sh --train-key task=rel pe=liere:8 seed=1 val=held)
k2=$(SCALE=quick CACHE=$C sh experiments/run1.sh --train-key task=rel pe=liere:8 seed=1 val=held "init=--init uniform --scale 1.5708")
[ -n "$k1" ] && [ -n "$k2" ] && [ "$k1" != "$k2" ] && ok "... and another model's key" || nok "init= keys: $k1 $k2"
n=$(awk -F '\t' '$1 == "rel-paper/abs" { n = $2 } END { print n + 0 }' "$R/quick/tasks.seeds" 2>/dev/null)
[ "$n" -ge 2 ] && [ "$n" -le 3 ] && grep -q "^| abs | [0-9.]* ([^)]*, $n runs) |" "$R/quick/tasks.md" &&
	check_grep "sequential seeding: an undecided key claim gets seeds, up to its cap, and the section says how many" \
	    "^rel-paper/abs to $n seeds, rel-paper/liere:8 to $n seeds\.$" "$R/quick/tasks.md" ||
	nok "sequential seeding: rel-paper/abs has $n seeds: $(cat "$R/quick/tasks.seeds" 2>&1)"
# A part of a campaign (--only) seeds only the claims its pattern names,
# judged on every run that has a result: these have all run, so the last
# round of seeds, taken away, comes back without training.
cp "$R/quick/tasks.seeds" "$T/tasks.seeds"
awk -F '\t' 'NR == FNR { if ($2 > m) m = $2; next } $2 < m' "$T/tasks.seeds" "$T/tasks.seeds" > "$T/seeds.cut"
cp "$T/seeds.cut" "$R/quick/tasks.seeds"
sh experiments/tasks.sh --scale quick --only xyzzy --results "$R" --cache "$C" 2> "$T/only.err" &&
	cmp -s "$R/quick/tasks.seeds" "$T/seeds.cut" && ok "sequential seeding under --only: a claim outside the pattern gets no seeds" ||
	nok "tasks.sh --only xyzzy: $(cat "$R/quick/tasks.seeds" "$T/only.err" 2>&1 | tail -3)"
sh experiments/tasks.sh --scale quick --only 'rel-paper/' --results "$R" --cache "$C" 2> "$T/only.err" &&
	cmp -s "$R/quick/tasks.seeds" "$T/tasks.seeds" && ! grep -q 'run1.sh: training' "$T/only.err" &&
	ok "... and one inside it the seeds it had, from the runs already made" ||
	nok "tasks.sh --only rel-paper/: $(cat "$R/quick/tasks.seeds" "$T/only.err" 2>&1 | tail -3)"
# What the encodings learned (analysis.sh): vit-probe's numbers of every
# model, and its pictures, spectra for the rotary encodings alone.
check_grep "analysis: a row per encoding and task, distances at both sizes, and the similarity range" \
    '^\| liere:8 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' "$R/quick/analysis.md"
check_grep "... and pathfinder's, at its one size" '^\| liere:8 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' "$R/quick/analysis.md"
for p in distance-rel-abs similarity-rel-liere8 similarity-big-rel-liere8 spectrum-rel-liere8 similarity-mot-liere8 similarity-path-liere8; do
	head -c 8 "$R/quick/analysis-$p.png" 2>/dev/null | od -An -c | grep -q 'P   N   G' && ok "analysis: picture $p" || nok "analysis: no $p.png"
done
[ ! -e "$R/quick/analysis-spectrum-rel-abs.png" ] && ok "... and no spectrum for abs, which rotates nothing" || nok "analysis: a spectrum of abs"
exit $FAILED
