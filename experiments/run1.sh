#!/bin/sh
# run1.sh - one run of an experiment: train a model and evaluate it, with
# toolkit commands only, and write its JSON line to $RES/runs/KEY.json.
#
#   sh experiments/run1.sh WORD...              the run
#   sh experiments/run1.sh --key WORD...        its result's key
#   sh experiments/run1.sh --train-key WORD...  its model's key
#   sh experiments/run1.sh --files WORD...      "NAME PATH" lines: its model
#                                               (model), test stream (test),
#                                               and each canvas_C or frames_T
#                                               stream of its evals
#
# Words (k=v; the experiment scripts write them):
#   task=fm2d|mv3d   Fashion-MNIST images, or Moving Fashion-MNIST clips;
#        rel|path|mot  taskgen(1)'s relation, pathfinder and motion tasks
#   pe=SPEC          vit-train --pe
#   seed=N           data order, subset, initialisation, dropout
#   arm=paper|common positions in the encoding's own paper's convention
#                    (vit-train's default), or all as posgen's default
#                    linspace gives them (vit-train --positions stream)
#   model=NAME       main block small large riemann (sizes by scale)
#   frac=F           fraction of the training set (1)
#   res=R            2D: train on R x R images (28)
#   pos='FLAGS'      posgen options of the training stream (perturbation)
#   cls=WHAT         posgen --cls of every stream (none: the CLS token is
#                    not rotated, as in LieRE's code; centre: rotated at the
#                    image's centre and moved with an offset, as in ComRoPE's)
#   vt='FLAGS'       more vit-train options (--share, --locality)
#   conv=integer|linspace  taskgen's tasks: every stream's positions in one
#                    convention, as given to every encoding (vit-train
#                    --positions stream): posgen's integer grid (a larger
#                    canvas reaches past the training positions:
#                    extrapolation) or its linspace over each grid (a
#                    larger canvas stays within them: interpolation);
#                    default each encoding's own (vit-train's mapping)
#   lr=R             the learning rate (default: the scale's for the model)
#   init='FLAGS'     skewgen(1) options of the encoding's initial generators
#                    (--theta T, --init uniform --scale S, ...): vit-train
#                    --generators from skewgen --pe PE for the model's shape
#                    and the run's seed (default: vit-train's own init)
#   val=test|held    the validation stream: the first test records (what
#                    the papers' tables ran with), or held out from the
#                    training data (taskgen's tasks: a set of their own
#                    drawn from the training images), so that nothing is
#                    chosen on the test set
#   evals=LIST       top1 (always), shuffle, shufflet (frames), res:R1:R2:...
#                    (2D: top-1 at other resolutions), offset:RHO (top-1
#                    with every record's positions moved by one N(0, RHO)
#                    offset per axis, posgen --offset), canvas:C1:C2:...
#                    (rel: top-1 on larger canvases, the items at the same
#                    size), frames:T (mot: top-1 on clips of T frames)
# The environment gives SCALE, RES (results), CACHE (data and models).
#
# The key is a hash of the commands exactly as they run, every option and
# scale constant in them, and of the data's own build commands: any
# change makes a new run, and the same words the same run.
set -eu
# (A campaign runs this script thousands of times, and a fork costs
# milliseconds in some sandboxes: what needs no other process gets none.)
unset CDPATH
here=$PWD
case $0 in */*) cd "${0%/*}" ;; esac
EXPDIR=$PWD
cd ..
TOP=$PWD
cd "$here"
[ -x "$TOP/bin/vit-train" ] && PATH="$TOP/bin:$PATH"
FM=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
# What every command sets by running itself again (vitpipe(7)), set here
# so that a run's commands load their libraries once.
LC_ALL=C OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} GOMP_SPINCOUNT=${GOMP_SPINCOUNT:-30000}
OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export LC_ALL OMP_WAIT_POLICY GOMP_SPINCOUNT OPENBLAS_NUM_THREADS
: "${SCALE:=quick}" "${RES:=$EXPDIR/results/$SCALE}" "${CACHE:=$EXPDIR/cache}"
[ -d "$CACHE" ] || mkdir -p "$CACHE"
# The plan of the fp32 products (vitpipe(7)) decides their last bits: the
# campaign's own, in $CACHE, so that every result names the one it ran with.
VITPIPE_PLAN=${VITPIPE_PLAN:-$CACHE/plan}
export VITPIPE_PLAN

mode=run
case ${1:-} in --key) mode=key; shift ;; --train-key) mode=tkey; shift ;; --files) mode=files; shift ;; esac
task=fm2d pe=none seed=1 arm=paper model=main frac=1 res=28 pos= cls= vt= evals=top1 lr= val=test conv= init=
for w in "$@"; do
	case $w in
	task=*|pe=*|seed=*|arm=*|model=*|frac=*|res=*|pos=*|cls=*|vt=*|evals=*|lr=*|val=*|conv=*|init=*)
		eval "${w%%=*}=\${w#*=}" ;;
	*) echo "run1.sh: unknown word '$w'" >&2; exit 2 ;;
	esac
done

# The scales: tiny data and models that only prove the pipelines (quick),
# and what EXPERIMENTS.md reports (full; EXPERIMENTS.md says why these).
if [ "$SCALE" = full ]; then
	FMFRAC=1 FMTEST= FMVAL=2000 EPOCHS=3 BATCH=64 LR=2e-3 WARMUP=50 VALSTEPS=150
	# The clips train 10 epochs, the images 3 (no committed run measures
	# the clips at 3).
	MVTRAIN=12000 MVTEST=2000 MVVAL=1000 MVEPOCHS=10 MVVALSTEPS=50 TRIALS=3
	# taskgen's tasks at the discrimination pilot's scale (pilot.sh)
	TKTRAIN=20000 TKTEST=5000 TKVAL=1000 TKEPOCHS=4 TKVALSTEPS=100
	# motion with positions held (its motion only between tokens) trains
	# 24: at 4 every encoding was still climbing or stuck at chance, at
	# 12 whether a rotary encoding left chance in time depended on the
	# seed (rope-axial seed 2: 45%; at 24, 94%; pilot NOTES.md)
	MOTEPOCHS=24
	# pathfinder: at 8 epochs rope-axial left chance after 1600 of 2500
	# steps, at 12 abs and liere:8 had not (seed 1; pilot NOTES.md)
	PATHEPOCHS=12
	case $model in
	main)	M="--dim 64 --depth 4 --heads 4 --mlp 128" ;;
	block)	M="--dim 64 --depth 4 --heads 1 --mlp 128" ;;
	small)	M="--dim 32 --depth 2 --heads 2 --mlp 64" ;;
	# the wider, deeper model at half the rate, warmed up longer, a
	# choice made before any run (none measures it at 2e-3)
	large)	M="--dim 128 --depth 6 --heads 4 --mlp 256" LR=1e-3 WARMUP=200 ;;
	riemann) M="--dim 64 --depth 6 --heads 4 --mlp 128" ;;
	*) echo "run1.sh: model '$model'?" >&2; exit 2 ;;
	esac
else
	FMFRAC=0.4 FMTEST=300 FMVAL=100 EPOCHS=1 BATCH=32 LR=2e-3 WARMUP=5 VALSTEPS=10
	MVTRAIN=160 MVTEST=60 MVVAL=30 MVEPOCHS=1 MVVALSTEPS=2 TRIALS=1
	TKTRAIN=200 TKTEST=100 TKVAL=50 TKEPOCHS=1 TKVALSTEPS=2 MOTEPOCHS=1 PATHEPOCHS=1
	case $model in
	main|riemann) M="--dim 16 --depth 1 --heads 2 --mlp 32" ;;
	block)	M="--dim 64 --depth 1 --heads 1 --mlp 16" ;;
	small)	M="--dim 8 --depth 1 --heads 1 --mlp 16" ;;
	large)	M="--dim 32 --depth 1 --heads 2 --mlp 32" ;;
	*) echo "run1.sh: model '$model'?" >&2; exit 2 ;;
	esac
fi
[ -z "$lr" ] || LR=$lr
case $val in test|held) ;; *) echo "run1.sh: val=$val: test or held" >&2; exit 2 ;; esac
COMMON="--positions stream"	# vit-train: positions as the stream gives them

# Fashion-MNIST's IDX files in the commands: Debian's, or at the quick
# scale a slice of them (the first 3000 training and 1000 test images,
# uncompressed): decompressing all 70,000 was most of a tiny run's time.
if [ "$SCALE" = full ]; then
	FMD='$FM' GZ=.gz
else
	FMD='$CACHE/fm-3000-1000' GZ=
	fmslice() {	# fmslice DIR: the slice into DIR
		be32() { for b in 24 16 8 0; do printf "\\$(printf %o $(($1 >> b & 255)))"; done; }
		rm -rf "$1.tmp"
		mkdir -p "$1.tmp"
		for sn in train:3000 t10k:1000; do
			set=${sn%:*} n=${sn#*:}
			{ printf '\0\0\10\3'; be32 $n; be32 28; be32 28
			  gzip -dc "$FM/$set-images-idx3-ubyte.gz" | head -c $((16 + n * 784)) | tail -c +17
			} > "$1.tmp/$set-images-idx3-ubyte"
			{ printf '\0\0\10\1'; be32 $n
			  gzip -dc "$FM/$set-labels-idx1-ubyte.gz" | head -c $((8 + n)) | tail -c +9
			} > "$1.tmp/$set-labels-idx1-ubyte"
		done
		mv "$1.tmp" "$1"
	}
	if [ "$mode" = run ] && [ ! -d "$CACHE/fm-3000-1000" ]; then
		exec 8> "$CACHE/fm.lock"
		flock 8
		[ -d "$CACHE/fm-3000-1000" ] || fmslice "$CACHE/fm-3000-1000"
		flock -u 8
	fi
fi

# hashof STRING: H, the first 16 hex digits of the sha256 of STRING and a
# newline; hashfile FILE: H, the same of FILE
hashof() {
	H=$(sha256sum <<EOF
$1
EOF
)
	H=${H%"${H#????????????????}"}
}
hashfile() { H=$(sha256sum < "$1"); H=${H%"${H#????????????????}"}; }

# binhash PROG...: a hash of the programs' code as found on $PATH, debug
# sections and build id left out (they name the checkout's directory), so
# that the same code built in another clone hashes the same.
# The hash is kept in $CACHE/bins under the files' size, time and inode,
# so that a campaign's runs hash each build once.
binhash() {
	set -- $(for p in "$@"; do command -v "$p"; done)
	hashof "$(stat -L -c '%n %s %.9Y %i' "$@")"
	b="$CACHE/bins/$H"
	[ -s "$b" ] && { cat "$b"; return; }
	t=$(mktemp)
	for p in "$@"; do
		objcopy --strip-debug --remove-section=.note.gnu.build-id "$p" "$t" && sha256sum < "$t" ||
		    echo "run1.sh: cannot hash $p" >&2
	done > "$t.s"
	hashfile "$t.s"
	echo "$H"
	[ "$(grep -c . "$t.s")" -eq $# ] && mkdir -p "$CACHE/bins" && echo "$H" > "$b.$$" && mv "$b.$$" "$b"
	rm -f "$t" "$t.s"
}

# The programs' code: DBINS of the data's, BINS of all a run uses.  Data
# and models made by other code are made again (a result says which code
# made it; the tables say when theirs mix).
if [ "$mode" = run ]; then
	DBINS=$(binhash patchify posgen taskgen vtool skewgen)
	BINS=$(binhash patchify posgen taskgen vtool skewgen vit-train vit-eval shuffle-eval)
fi

# fresh FILE: whether FILE was made by today's data programs ($FILE.bins
# says by which); a file made by others is made again, never reused.
fresh() {
	[ -s "$1" ] && [ "$(cat "$1.bins" 2>/dev/null)" = "$DBINS" ]
}

# cached NAME CMD: a file built once by CMD (a shell command, its output
# the file, $CACHE and $TOP unexpanded in it) and named by CMD's hash;
# F, its path.  Parallel runs build it once, under a lock.
cached() {
	hashof "$2"
	f="$CACHE/data/$1-$H.vt"
	if [ "$mode" = run ] && ! fresh "$f"; then
		mkdir -p "$CACHE/data"
		flock "$f.lock" sh -c '[ -s "$1" ] && [ "$(cat "$1.bins" 2>/dev/null)" = "$6" ] && exit 0
			CACHE=$2 TOP=$3 FM=$4; export CACHE TOP FM
			eval "$5" > "$1.tmp" && echo "$6" > "$1.bins" && mv "$1.tmp" "$1"' \
		    sh "$f" "$CACHE" "$TOP" "$FM" "$2" "$DBINS" ||
		    { echo "run1.sh: cannot build $f: $2" >&2; exit 1; }
	fi
	F=$f
}

# taskset NAME CMD: a taskgen(1) set made once by CMD (its output options
# added here) into $CACHE/data/NAME-HASH.npy and NAME-HASH-labels.npy,
# the labels written last: their file says the set is whole.  S,
# patchify's source operands for it.
taskset() {
	hashof "$2"
	f="$CACHE/data/$1-$H"
	if [ "$mode" = run ] && ! fresh "$f-labels.npy"; then
		mkdir -p "$CACHE/data"
		flock "$f.lock" sh -c '[ -s "$1-labels.npy" ] && [ "$(cat "$1-labels.npy.bins" 2>/dev/null)" = "$4" ] && exit 0
			rm -f "$1-labels.npy"
			FM=$3; export FM
			eval "$2 -o \"\$1.npy\" --labels \"\$1-labels.npy.tmp\"" &&
			    echo "$4" > "$1-labels.npy.bins" && mv "$1-labels.npy.tmp" "$1-labels.npy"' \
		    sh "$f" "$2" "$FM" "$DBINS" ||
		    { echo "run1.sh: cannot build $f: $2" >&2; exit 1; }
	fi
	S="--labels \"\$CACHE/data/${f##*/}-labels.npy\" \"\$CACHE/data/${f##*/}.npy\""
}

# The data.  Positions: posgen's default (linspace) with the training grid
# as n0, so a stream at another resolution keeps the patch spacing and
# vit-train can map it exactly into an encoding's own convention.
case $task in
fm2d)
	G0=$((res / 4))
	fm() {	# fm SET [patchify options]: C, the command of a patch stream
		set=$1; shift
		rz=; [ "$res" != 28 ] && rz="--resize $res"
		C="patchify --idx \"$FMD/$set-images-idx3-ubyte$GZ\" --classes \"\$TOP/data/fashion-mnist.classes\" --patch 4 --norm fashion-mnist --threads 1 $rz $*"
	}
	case $frac in 1) sub=$FMFRAC ;; *) sub=$(awk -v a="$FMFRAC" -v b="$frac" 'BEGIN { print a * b }') ;; esac
	[ "$sub" = 1 ] && subset= || subset="--subset $sub"
	POSGEN="posgen --n0 $G0${cls:+ --cls $cls}"
	fm train $subset --epochs $EPOCHS --shuffle --seed $seed
	TRAIN="$C | $POSGEN $pos --seed $seed"
	fm t10k
	TESTCMD="$C${FMTEST:+ | vtool head -n $FMTEST} | $POSGEN"
	VALCMD="$C | vtool head -n $FMVAL | $POSGEN"
	VS=$VALSTEPS
	;;
mv3d)
	# The clips, made once by movingfm.sh (its own text in the key).
	hashfile "$EXPDIR/movingfm.sh"
	gen=$H
	D="$CACHE/mv-$MVTRAIN-$MVTEST-$gen"
	if [ "$mode" = run ] && [ ! -s "$D/test.list" ]; then
		flock "$CACHE/mv.lock" sh -c '[ -s "$1/test.list" ] ||
		    sh "$2" --train "$3" --test "$4" --seed 1 "$1"' sh "$D" "$EXPDIR/movingfm.sh" "$MVTRAIN" "$MVTEST"
	fi
	D="\$CACHE/mv-$MVTRAIN-$MVTEST-$gen"
	clips() {	# clips SET [patchify options]: C, the command of a clip stream
		set=$1; shift
		C="patchify --format list \"$D/$set.list\" --classes \"$D/classes\" --frames 8 --patch 1x8x8 --channels 1 --norm half --threads 1 $*"
	}
	[ "$frac" = 1 ] && subset= || subset="--subset $frac"
	POSGEN="posgen${cls:+ --cls $cls}"
	clips train $subset --epochs $MVEPOCHS --shuffle --seed $seed
	TRAIN="$C | $POSGEN $pos --seed $seed"
	clips test
	TESTCMD="$C | $POSGEN"
	VALCMD="$C | vtool head -n $MVVAL | $POSGEN"
	VS=$MVVALSTEPS
	;;
rel|path|mot)
	# The train set from the training images, the test sets from the test
	# images under another seed (pathfinder draws its own); every set is
	# cut into an 8 x 8 grid (motion: 4 x 4 x 4 tubelets at 8 frames), and
	# posgen keeps the training grid's spacing on larger ones.  The clips
	# hold each position for a tubelet's 2 frames: motion shows only
	# between tokens.  (Moving every frame, a tubelet alone showed it, and
	# the five encodings of the pilot stayed within 1.7 pooled sd of each
	# other over 2 seeds: results/full/pilot.md as of commit 58a6c8e.)
	case $task in
	rel) TG=relation P=7 G0=8 ;;
	# dots as whole patches (3 x 3 dots cut by the patch grid: no model
	# left chance), three paths of three dashes, gaps of 2
	path) TG="pathfinder --cell 4 --paths 3 --dashes 3 --gap 2" P=4 G0=8 TKEPOCHS=$PATHEPOCHS ;;
	mot) TG="motion --hold 2" P=2x8x8 G0=4 TKEPOCHS=$MOTEPOCHS ;;
	esac
	# tset NAME SET N SEED [taskgen options]: S, the source operands of
	# the set NAME drawn by taskgen from SET's images, N of them
	tset() {
		name=$1 i=; [ $task = path ] || i="--idx \"$FMD/$2-images-idx3-ubyte$GZ\""
		n=$3 s=$4; shift 4
		taskset "$name" "taskgen $TG $i -n $n --seed $s --threads 1 $*"
	}
	tp() {	# tp SOURCE [patchify options]: C, the command of its patch stream
		src=$1; shift
		C="patchify --patch $P --norm half --threads 1 $* $src"
	}
	[ "$frac" = 1 ] && subset= || subset="--subset $frac"
	case $conv in
	'') POSGEN="posgen --n0 $G0${cls:+ --cls $cls}" ;;
	integer) POSGEN="posgen -c integer${cls:+ --cls $cls}" arm=common ;;
	linspace) POSGEN="posgen${cls:+ --cls $cls}" arm=common ;;
	*) echo "run1.sh: conv=$conv: integer or linspace" >&2; exit 2 ;;
	esac
	tset $task-train train $TKTRAIN 1
	tp "$S" $subset --epochs $TKEPOCHS --shuffle --seed $seed
	TRAIN="$C | $POSGEN $pos --seed $seed"
	tset $task-test t10k $TKTEST 2
	tp "$S"
	TESTCMD="$C | $POSGEN"
	VALCMD="$TESTCMD | vtool head -n $TKVAL"
	# held out: a set of its own from the training images (another seed)
	if [ "$val" = held ]; then
		tset $task-val train $TKVAL 3
		tp "$S"
		VALCMD="$C | $POSGEN"
	fi
	VS=$TKVALSTEPS
	;;
*) echo "run1.sh: task '$task'?" >&2; exit 2 ;;
esac
[ "$val$conv" = test ] || case $task in rel|path|mot) ;; *)
	echo "run1.sh: val=$val conv=$conv: only for taskgen's tasks" >&2; exit 2 ;; esac
cached val "$VALCMD"
VAL=$F
cached test "$TESTCMD"
TEST=$F
# The initial generators of init=: a file named by its command, made
# again, like the data, when skewgen's code changes (DBINS).  Its name is
# in the key; skewgen's code is not, so that a rebuilt library does not
# orphan the runs already made (their JSON records the code).
GEN=
if [ -n "$init" ]; then
	set -- $M
	while [ $# -gt 1 ]; do
		case $1 in --dim) dim=$2 ;; --depth) depth=$2 ;; --heads) heads=$2 ;; esac
		shift 2
	done
	ax=2; case $task in mv3d|mot) ax=3 ;; esac
	cached gen "skewgen --pe $pe --head-dim $((dim / heads)) --axes $ax --heads $heads --layers $depth --seed $seed $init"
	GEN=$F
fi
a=; [ "$arm" = common ] && a=$COMMON
VTARGS="$M --pe $pe $vt $a --lr $LR --warmup $WARMUP --batch $BATCH --seed $seed --threads 1 --val-steps $VS"
hashof "$TRAIN | vit-train $VTARGS --val ${VAL##*/}${GEN:+ --generators ${GEN##*/}}"
TK=$H
hashof "$TK $evals ${TEST##*/}"
KEY=$H
# extra E V: F, the test stream of evaluation E (canvas, frames) at V
extra() {
	tset $task-test t10k $TKTEST 2 --$1 $2
	tp "$S"
	cached test "$C | $POSGEN"
}
case $mode in
key) echo "$KEY"; exit 0 ;;
tkey) echo "$TK"; exit 0 ;;
files)
	echo "model $CACHE/models/$TK.vt"
	echo "test $TEST"
	for e in $(echo "$evals" | tr ',' ' '); do
		case $e in canvas:*|frames:*)
			for v in $(echo "${e#*:}" | tr ':' ' '); do extra ${e%%:*} $v; echo "${e%%:*}_$v $F"; done ;;
		esac
	done
	exit 0 ;;
esac

out="$RES/runs/$KEY.json"
[ -s "$out" ] && exit 0
mkdir -p "$CACHE/models" "$RES/runs" "$RES/logs"
ckpt="$CACHE/models/$TK.vt"
now() { date +%s.%N; }
# train: the model, once however many runs want it at the same time.  A
# training that was interrupted (a campaign's session ended) goes on from
# its last checkpoint: vit-train --resume reads the same stream again past
# what it had consumed and ends with the bytes of a run that never
# stopped.  $TK.t0 holds when this part began and the seconds spent before
# it; the time up to the checkpoint counts (none if this part wrote none),
# what came after it is redone.
train() {
	m="$CACHE/models/$TK"
	[ "$(cat "$m.bins" 2>/dev/null)" = "$BINS" ] || rm -f "$ckpt" "$ckpt.part"
	[ -s "$ckpt" ] && return 0
	what="$task $pe arm=$arm seed=$seed $model $vt $pos${cls:+ cls=$cls}${init:+ init=$init} frac=$frac res=$res"
	if [ -s "$ckpt.part" ] && [ -s "$m.log" ]; then
		echo "run1.sh: resuming $what" >&2
		[ -s "$m.t0" ] || echo "$(stat -c %W "$m.log") 0" > "$m.t0"	# its start
		spent=$(awk -v c="$(stat -c %Y "$ckpt.part")" '{ d = c - $1; printf "%.1f\n", $2 + (d > 0 ? d : 0) }' "$m.t0")
		args="--resume --threads 1"
	else
		echo "run1.sh: training $what" >&2
		rm -f "$ckpt.part" "$m.log"
		echo "$BINS" > "$m.bins"
		spent=0 args="$VTARGS${GEN:+ --generators $GEN}"
	fi
	t0=$(now)
	echo "$t0 $spent" > "$m.t0"
	eval "$TRAIN" | vit-train $args --val "$VAL" -o "$ckpt.part" \
	    --log "$m.log" 2>"$m.err" ||
		{ echo "run1.sh: vit-train failed: $(tail -n 3 "$m.err")" >&2; return 1; }
	echo "$t0 $(now) $spent" | awk '{ printf "%.1f\n", $2 - $1 + $3 }' > "$m.time"
	mv "$ckpt.part" "$ckpt"
}
export FM CACHE TOP
# bf16 on a CPU without its instructions: emulated, the same numbers
# (precision.sh says so in its table).
# The CPU's name, and its bf16 instructions ("none" where it has none).
cpu= cpubf16=
while IFS= read -r l; do
	case $l in
	'model name'*) [ -n "$cpu" ] || cpu=${l#*: } ;;
	flags*)	for f in ${l#*:}; do
			case $f in avx512_bf16|amx_bf16) cpubf16=${cpubf16:+$cpubf16+}$f ;; esac
		done
		break ;;
	esac
done < /proc/cpuinfo
case $cpu in *[\"\\]*) cpu=$(printf '%s' "$cpu" | tr -d '"\\') ;; esac
bf16=
case " $vt " in *" --precision bf16 "*)
	bf16=native
	case $cpubf16 in *avx512_bf16*) ;; *) bf16=emulated VITPIPE_BF16=emulate; export VITPIPE_BF16 ;; esac ;;
esac
exec 9> "$CACHE/models/$TK.lock"
flock 9
train || exit 1
flock -u 9
# The log of the model's first training stays: a model trained again (its
# cache gone, or on another machine) rounds otherwise, and the lines and
# curves already made from the first describe that one.  It is kept
# thinned past the first epoch (thinlog.awk) and compressed (vit-plot
# reads it so), so that results/ stays small.
L="$RES/logs/$TK.jsonl.gz"
[ -s "$L" ] || { awk -f "$EXPDIR/thinlog.awk" "$CACHE/models/$TK.log" | gzip -9n > "$L.tmp.$$" &&
	mv "$L.tmp.$$" "$L"; }
train_s=$(cat "$CACHE/models/$TK.time" 2>/dev/null || echo null)
# the last validation top-1 of the training, for choices made on it
vtop1=$(gzip -dc "$L" | sed -n 's/.*"val_acc":\([0-9.]*\).*/\1/p' | tail -n 1)

# Evaluations; each adds ,"key":value to the line.
# num NAME JSON: N, the number NAME has in JSON (a line), or nothing
num() {
	case $2 in *"\"$1\":"*) N=${2##*\"$1\":}; N=${N%%[!-0-9.e]*} ;; *) N= ;; esac
}
e0=$(now)
ev=$(vit-eval --json --threads 1 "$ckpt" "$TEST")
# evaltop1 TEST [ERRFILE]: N, the model's top-1 on TEST, nothing where
# vit-eval fails (an extra evaluation gives null, the run goes on)
evaltop1() {
	exec 4>&2
	[ $# -lt 2 ] || exec 4>"$2"
	evout=$(vit-eval --json --threads 1 "$ckpt" "$1" 2>&4) || evout=
	exec 4>&-
	num top1 "$evout"
}
num top1 "$ev"; top1=$N
num loss "$ev"; loss=$N
ci=$(echo "$ev" | sed -n 's/.*"top1_ci":\[\([^]]*\)\].*/\1/p')
fields="\"top1\":$top1,\"top1_lo\":${ci%,*},\"top1_hi\":${ci#*,},\"loss\":$loss"
for e in $(echo "$evals" | tr ',' ' '); do
	case $e in
	top1) ;;
	shuffle|shufflet)
		ax=all; [ "$e" = shufflet ] && ax=t
		s=$(shuffle-eval --json --trials $TRIALS --axis $ax --threads 1 "$ckpt" "$TEST")
		after=$(echo "$s" | sed 's/.*"after":{"mean":\([-0-9.e]*\).*/\1/')
		num drop_percent "$s"
		fields="$fields,\"${e}_after\":$after,\"${e}_drop\":$N" ;;
	res:*)
		for r in $(echo "${e#res:}" | tr ':' ' '); do
			res0=$res res=$r
			fm t10k
			res=$res0
			cached test "$C${FMTEST:+ | vtool head -n $FMTEST} | $POSGEN"
			evaltop1 "$F" "$CACHE/models/$TK.res.err"
			fields="$fields,\"res_$r\":${N:-null}"
		done ;;
	canvas:*|frames:*)
		for v in $(echo "${e#*:}" | tr ':' ' '); do
			extra ${e%%:*} $v
			evaltop1 "$F"
			fields="$fields,\"${e%%:*}_$v\":${N:-null}"
		done ;;
	offset:*)
		rho=${e#offset:}
		cached test "$TESTCMD --offset $rho --seed 1"
		evaltop1 "$F"
		fields="$fields,\"offset_$rho\":${N:-null}" ;;
	*) echo "run1.sh: evaluation '$e'?" >&2; exit 2 ;;
	esac
done
[ -z "$bf16" ] || fields="$fields,\"bf16\":\"$bf16\""
[ -z "$init" ] || fields="$fields,\"init\":\"$init\""
eval_s=$(echo "$e0 $(now)" | awk '{ printf "%.1f", $2 - $1 }')
steps=$(vtool info "$ckpt" | awk '$1 == "meta" && $2 == "STEP" { print $3 }')
# The plan's choices as the run left them (its header, then the choices
# sorted: runs beside it append in any order), kept in $RES/plans under
# their hash, which the result names: VITPIPE_PLAN=that file gives the
# run's bits again.
# ("off": no plan asked for; "none": no fp32 product chose one)
plan=off
[ "$VITPIPE_PLAN" = off ] || plan=none
if [ "$plan" = none ] && [ -s "$VITPIPE_PLAN" ]; then
	{ grep -m 1 '^#' "$VITPIPE_PLAN"; grep -v '^#' "$VITPIPE_PLAN" | sort -u; } > "$out.plan.$$" || :
	hashfile "$out.plan.$$"
	plan=$H
	mkdir -p "$RES/plans"
	mv "$out.plan.$$" "$RES/plans/$plan"
fi
# The checkout's commit when the result was written, "-dirty" when the
# code differed from it; BINS says which code made the run in any case.
commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ "$commit" = unknown ] || git -C "$TOP" diff --quiet HEAD -- lib cmd Makefile 2>/dev/null || commit=$commit-dirty
printf '{"key":"%s","train":"%s","scale":"%s","task":"%s","pe":"%s","arm":"%s","seed":%s,"model":"%s","frac":%s,"res":%s,"pos":"%s","cls":"%s","vt":"%s","lr":%s,"val":"%s","conv":"%s","evals":"%s",%s,"val_top1":%s,"steps":%s,"train_s":%s,"eval_s":%s,"cpu":"%s","cpu_bf16":"%s","commit":"%s","bins":"%s","plan":"%s","date":"%s"}\n' \
    "$KEY" "$TK" "$SCALE" "$task" "$pe" "$arm" "$seed" "$model" "$frac" "$res" "$pos" "$cls" "$vt" "$LR" "$val" "$conv" "$evals" \
    "$fields" "${vtop1:-null}" "${steps:-null}" "$train_s" "$eval_s" "$cpu" "${cpubf16:-none}" "$commit" "$BINS" "$plan" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
