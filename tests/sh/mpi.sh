# mpi.sh - vit-train on several ranks under Open MPI's mpirun on this
# host: N ranks at batch B give one process's losses at batch B, step by
# step (a file, stdin, a FIFO fast or slowly fed; per-record positions,
# dropout, mixup, accumulation, a micro-batch smaller than the ranks) and
# its Fashion-MNIST accuracy; a rank killed with SIGKILL while rank 0 waits
# on a FIFO ends the job within seconds, the last checkpoint whole, and
# --resume then gives the uninterrupted run's bytes (another number of
# ranks: its losses); rank 0 alone speaks; one process reads a FIFO once;
# bad uses; vit-train(1)'s mpirun examples.  (lib.sh lets mpirun run as
# root and oversubscribe; the one run fed on mpirun's standard input goes
# through its ompi_retry.)
. tests/sh/lib.sh
command -v mpirun >/dev/null || { nok "mpirun is not installed (make deps)"; finish; }
# Each mpirun under a time limit: a hang fails, it does not stall the suite.
mr() { timeout 60 mpirun -np "$@"; }
key() { $PY tests/sh/vtstream.py "$1" "$2"; }
gen() { $PY tests/sh/posclass.py "$@"; }
M="--dim 16 --depth 2 --heads 2 --mlp 32 --threads 1"
mkdir -p "$T/a" "$T/b"
# fed FIFO WRITER command...: the command, while the shell command WRITER
# (evaluated here) writes into FIFO, made anew, from the background; a
# writer still waiting for a reader after the command (it failed early)
# is ended.
fed() {
	local f=$1 w=$2 rc; shift 2
	rm -f "$f"; mkfifo "$f"
	(eval "$w") > "$f" &
	"$@"; rc=$?
	kill $! 2>/dev/null
	return $rc
}
# slowly FILE: FILE on stdout in chunks of 4 KiB, 0.05 s apart.
slowly() {
	local i=0 n=$((($(wc -c < "$1") + 4095) / 4096))
	while [ $i -lt $n ]; do
		dd if="$1" bs=4096 skip=$i count=1 status=none; sleep 0.05; i=$((i + 1))
	done
}

# Equivalence: 1, 2 and 3 ranks, 3 and 2 reading a FIFO (rank 0 alone),
# the 2 fed slowly, 3 fed by a pipe on mpirun's stdin, on Fashion-MNIST
# records with perturbed positions of their own (posgen --perturb), liere,
# dropout, mixup and smoothing, 2 micro-batches of 7 a step: 120 records
# end the epoch with a micro-batch of 1, so ranks have none.
small_fmnist "$T/fm" 600 300
patchify --idx "$T/fm/train-images-idx3-ubyte.gz" --patch 7 --subset 0.2 |
	posgen --perturb 0.2 --seed 4 > "$T/pp.vt"
patchify --idx "$T/fm/t10k-images-idx3-ubyte.gz" --patch 7 --subset 0.2 | posgen > "$T/ppval.vt"
E="$M --pe liere:2 --batch 7 --accum 2 --dropout 0.1 --emb-dropout 0.1 --mixup 0.5 \
    --smoothing 0.1 --clip 1 --seed 5 --val $T/ppval.vt --no-out"
check "one process" vit-train $E --log "$T/e1.json" "$T/pp.vt"
check "2 ranks, the same options" mr 2 vit-train $E --log "$T/e2.json" "$T/pp.vt"
check "3 ranks" mr 3 vit-train $E --log "$T/e3.json" "$T/pp.vt"
check "3 ranks, the stream from a FIFO" fed "$T/pp.fifo" "cat '$T/pp.vt'" \
    mr 3 vit-train $E --log "$T/e3f.json" "$T/pp.fifo"
check "2 ranks, the stream from a FIFO fed in chunks of 4 KiB, 0.05 s apart" \
    fed "$T/pp.fifo" "slowly '$T/pp.vt'" mr 2 vit-train $E --log "$T/e2f.json" "$T/pp.fifo"
check "3 ranks, the stream on stdin" ompi_retry sh -c "cat '$T/pp.vt' | timeout 60 mpirun -np 3 vit-train $E --log '$T/e3s.json'"
losses "$T/e1.json" "$T/e2.json" "$T/e3.json" "$T/e3s.json" "$T/e3f.json" "$T/e2f.json" > "$T/eq"
check_grep "... their losses are one process's, step by step" "^fine" "$T/eq"
[ "$(grep -c '"img_s":[0-9.]*,"comm_s":[0-9.]*,"allreduce_s":[0-9.]*,"exposed_s":[0-9.]*}$' "$T/e3.json")" = 9 ] &&
    ! grep -q comm_s "$T/e1.json" &&
	ok "... and each step's communication times (comm_s, allreduce_s, exposed_s) of ranks logged" ||
	nok "comm_s: $(head -2 "$T/e3.json")"
# Rank 0 alone speaks: its summary is the one line on stderr, no MPI noise.
[ "$(wc -l < "$T/err")" = 2 ] && [ "$(grep -c "^vit-train: done: step 9 epoch 1," "$T/err")" = 1 ] &&
	ok "... rank 0 alone writes messages: a validation and a summary" || nok "stderr of 3 ranks: $(head -c 400 "$T/err")"

# Fashion-MNIST: the same model, so the same test accuracy, from 2 and 3
# ranks as from one process.
patchify --idx "$T/fm/train-images-idx3-ubyte.gz" --patch 7 | posgen > "$T/ftrain.vt"
patchify --idx "$T/fm/t10k-images-idx3-ubyte.gz" --patch 7 | posgen > "$T/ftest.vt"
F="--dim 32 --depth 2 --heads 4 --mlp 64 --pe liere:4 --batch 24 --epochs 4 --lr 1e-3 \
    --warmup 10 --threads 1 --seed 1"
vit-train $F -o "$T/f1.vt" --log "$T/f1.json" "$T/ftrain.vt" 2>/dev/null
mr 2 vit-train $F -o "$T/f2.vt" --log "$T/f2.json" "$T/ftrain.vt" 2>/dev/null
mr 3 vit-train $F -o "$T/f3.vt" --log "$T/f3.json" "$T/ftrain.vt" 2>/dev/null
for n in 1 2 3; do
	vit-eval --json --resamples 0 --threads 1 "$T/f$n.vt" "$T/ftest.vt" > "$T/f$n.eval" || nok "vit-eval of the $n-rank model"
done
losses "$T/f1.json" "$T/f2.json" "$T/f3.json" > "$T/feq"
check_grep "Fashion-MNIST, 100 steps: the losses of 2 and 3 ranks are one process's" "^fine" "$T/feq"
$PY - "$T/f1.eval" "$T/f2.eval" "$T/f3.eval" > "$T/facc" 2>&1 <<'EOF'
import json, sys
acc = [json.load(open(f))["top1"] for f in sys.argv[1:]]
assert acc[0] > 0.2 and acc.count(acc[0]) == 3, acc
print("fine", acc[0])
EOF
check_grep "... and the same test top-1, above chance ($(cut -d' ' -f2 "$T/facc" 2>/dev/null))" "^fine" "$T/facc"

# A rank killed (SIGKILL) while rank 0 waits on the FIFO it reads (the
# stream stops after about half its records): mpirun ends the job within
# seconds, naming the rank; the last checkpoint is whole, and resumed on 2
# ranks it ends with the bytes of the run that never stopped.  A shuffle
# buffer of 8 records: steps follow the records as they come.
gen --records 400 --seed 7 > "$T/s.vt"
K="$M --pe liere:2 --batch 8 --save-steps 2 --seed 2 --shuffle-buffer 8"
(cd "$T/a" && fed in "cat ../s.vt" mr 2 vit-train $K --log k.json -o k.vt in 2>/dev/null)
[ "$(key "$T/a/k.vt" STEP)" = 50 ] && ok "2 ranks from a FIFO: 50 steps" || nok "uninterrupted run: step $(key "$T/a/k.vt" STEP)"
mkfifo "$T/b/in"
{ head -c $(($(wc -c < "$T/s.vt") / 2)) "$T/s.vt"; exec sleep 60; } > "$T/b/in" &
feeder=$!
(cd "$T/b" && exec timeout 60 mpirun -np 2 vit-train $K --log k.json -o k.vt in 2>err) &
job=$!
# wait for the last checkpoint the stream allows (step 24), then kill rank 1
for i in $(seq 300); do
	[ "$(key "$T/b/k.vt" STEP 2>/dev/null)" = 24 ] && break
	sleep 0.1
done
rank1=
for p in $(pgrep -x vit-train); do
	[ "$(readlink /proc/$p/cwd)" = "$T/b" ] &&
	    tr '\0' '\n' < /proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK=1 && rank1=$p
done
if [ -n "$rank1" ]; then
	t0=$(date +%s)
	kill -9 "$rank1"
	wait "$job"
	rc=$?
	t1=$(date +%s)
	kill "$feeder" 2>/dev/null
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ $((t1 - t0)) -le 10 ] &&
		ok "rank 1 killed: the job ends in $((t1 - t0)) s, exit $rc" ||
		nok "rank 1 killed: exit $rc after $((t1 - t0)) s"
	check_grep "... and mpirun names the rank and its signal" "rank 1 .*signal 9" "$T/b/err"
	check "... the checkpoint is whole: vit-eval reads it" vit-eval --resamples 0 --threads 1 "$T/b/k.vt" "$T/s.vt"
	cp "$T/b/k.vt" "$T/b/k3.vt"
	cp "$T/b/k.json" "$T/b/k3.json"
	(cd "$T/b" && fed in "cat ../s.vt" mr 2 vit-train --resume --threads 1 --log k.json -o k.vt in 2>/dev/null)
	cmp -s "$T/a/k.vt" "$T/b/k.vt" && ok "... resumed on 2 ranks: bitwise the uninterrupted run" ||
		nok "killed and resumed on 2 ranks: differs"
	# On 3 ranks, each reading the file: the same batches, sums in another
	# order: a warning, and the losses to rounding.
	(cd "$T/b" && mr 3 vit-train --resume --threads 1 --log k3.json -o k3.vt ../s.vt 2>err3)
	check_grep "... resumed on 3 ranks: warned that it is not bitwise the 2-rank run" \
	    "^vit-train: --resume: 3 ranks, the run began with 2" "$T/b/err3"
	losses "$T/a/k.json" "$T/b/k3.json" > "$T/k3eq"
	check_grep "... and its losses are the uninterrupted run's" "^fine" "$T/k3eq"
else
	kill "$feeder" 2>/dev/null
	nok "no rank 1 to kill (the run: $(head -c 300 "$T/b/err"))"
fi

# One process reads a FIFO once, as stdin: --epochs 2 over a stream of
# one epoch ends the run after it, an error that says so (it does not
# wait for a writer to open the FIFO again).
fed "$T/s.fifo" "cat '$T/s.vt'" timeout 20 vit-train $M --batch 8 --epochs 2 --no-out "$T/s.fifo" 2>"$T/err"
[ $? = 1 ] && grep -q "^vit-train: $T/s.fifo: ended after 1 of 2 epochs" "$T/err" &&
	ok "one process: a FIFO operand is read once" || nok "one process, a FIFO and --epochs 2: $(head -c 300 "$T/err")"

# While rank 0 waits for a FIFO's writer, the other ranks wait for it
# without spinning: rank 1's and 2's CPU time over 3 s (utime + stime,
# /proc/PID/stat) is under a quarter of it (a spinning rank takes all of
# a free core, and half of one on a loaded machine; a sanitizer build
# polls slower).  Then the writer comes and the run ends well.
mkdir -p "$T/w"
mkfifo "$T/w/in"
(cd "$T/w" && exec timeout 60 mpirun -np 3 vit-train $M --batch 8 --no-out in 2>err) &
job=$!
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo -1; }
waiting=
for i in $(seq 100); do
	waiting=
	for p in $(pgrep -x vit-train); do
		[ "$(readlink /proc/$p/cwd)" = "$T/w" ] &&
		    ! tr '\0' '\n' < /proc/$p/environ | grep -qx OMPI_COMM_WORLD_RANK=0 && waiting="$waiting $p"
	done
	[ "$(echo $waiting | wc -w)" = 2 ] && break
	sleep 0.1
done
sleep 1
set -- $waiting
if [ $# = 2 ]; then
	a1=$(cpu $1) a2=$(cpu $2)
	sleep 3
	b1=$(cpu $1) b2=$(cpu $2)
	hz=$(getconf CLK_TCK)
	[ "$a1" -ge 0 ] && [ "$b1" -ge 0 ] && [ $(((b1 - a1) * 4)) -lt $((3 * hz)) ] && [ $(((b2 - a2) * 4)) -lt $((3 * hz)) ] &&
		ok "ranks 1 and 2 wait for rank 0's FIFO writer without spinning ($((b1 - a1)) and $((b2 - a2)) ticks of $((3 * hz)))" ||
		nok "ranks 1 and 2 spin while rank 0 waits for a writer: $a1 -> $b1, $a2 -> $b2 ticks in 3 s ($hz a second)"
else
	nok "no ranks 1 and 2 waiting for rank 0 (found: $waiting)"
fi
cat "$T/s.vt" > "$T/w/in"
wait $job && ok "... and train once it comes" || nok "the run fed after a wait: $(head -c 300 "$T/w/err")"

# --allreduce alone: bf16 rounds the gradient as the wire would (another
# model than fp32's), is kept in the checkpoint, and --resume with fp32
# warns; a word other than fp32 or bf16 is a usage error.
mkdir -p "$T/ar"
(cd "$T/ar" && vit-train $M --batch 8 --steps 3 --seed 3 -o f.vt ../s.vt 2>/dev/null &&
    vit-train $M --batch 8 --steps 3 --seed 3 --allreduce bf16 -o b.vt ../s.vt 2>/dev/null)
d=$(vtpy "
a = next(vtread(open('ar/f.vt', 'rb'))[1])
b = next(vtread(open('ar/b.vt', 'rb'))[1])
print(max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in a if k.endswith(('.w', '.b'))))" 2>&1)
[ "$(key "$T/ar/b.vt" TRAIN_ALLREDUCE)" = bf16 ] && awk -v d="$d" 'BEGIN { exit !(d > 0 && d < 0.01) }' &&
	ok "--allreduce bf16 in one process: weights $d from fp32's, TRAIN_ALLREDUCE bf16" ||
	nok "--allreduce bf16 in one process: $(key "$T/ar/b.vt" TRAIN_ALLREDUCE), weights $d from fp32's"
(cd "$T/ar" && vit-train --resume --steps 4 --allreduce fp32 -o b.vt ../s.vt 2>err)
check_grep "... --resume with --allreduce fp32 warns" \
    "^vit-train: --resume: --allreduce fp32, the run began with bf16: the result will not be bitwise" "$T/ar/err"
check_exit 2 "--allreduce fp16: a usage error" vit-train $M --allreduce fp16 --no-out "$T/s.vt"

# Bad uses: fewer records than ranks; an operand missing: rank 0 alone
# says so, and mpirun ends the ranks that wait for it.
mr 2 vit-train $M --batch 1 --no-out "$T/s.vt" 2>"$T/err"
[ $? = 2 ] && grep -q "^vit-train: --batch 1: fewer records than the 2 ranks$" "$T/err" &&
	ok "--batch 1 on 2 ranks: a usage error, saying why" || nok "--batch 1 on 2 ranks: $(head -c 300 "$T/err")"
mr 2 vit-train $M --no-out "$T/none.vt" 2>"$T/err"
[ $? = 1 ] && [ "$(grep -c "^vit-train: $T/none.vt: No such file or directory$" "$T/err")" = 1 ] &&
	ok "a missing operand on 2 ranks: exit 1, said once" || nok "a missing operand on 2 ranks: $(head -c 300 "$T/err")"

# vit-train(1)'s mpirun examples, as printed: a file every rank reads, and
# a FIFO rank 0 reads (on a small Fashion-MNIST).
mkdir -p "$T/ex"
gen --records 96 --seed 8 > "$T/ex/train.vt"
small_fmnist "$T/ex/fm" 100 100
man_blocks man/man1/vit-train.1 "$T/ex/block"
n=0
for ex in $(grep -l "^mpirun" "$T/ex"/block*.sh); do
	n=$((n + 1))
	at_small_fmnist "$ex" "$T/ex/fm"
	check "vit-train(1)'s mpirun example $(basename "$ex" .sh) runs" sh -ec "cd '$T/ex' && . '$ex'"
done
[ "$n" = 2 ] && grep -q mkfifo $(grep -l "^mpirun" "$T/ex"/block*.sh) &&
	ok "vit-train(1) has 2 mpirun examples, one through a FIFO" ||
	nok "vit-train(1)'s mpirun examples: $n, and a FIFO in none"
finish
