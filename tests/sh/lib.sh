# lib.sh - helpers for the shell tests; sourced, never run (by sh: dash,
# whose 'local' keeps the helpers' names out of the tests').  Each check
# prints "ok - what" or "not ok - what" (read by tests/run.sh).
set -u
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
FAILED=0
PY=/usr/bin/python3	# Debian's, with numpy
# The NumPy reader printed in vitpipe(5) is the tests' Python reader: module
# vtread in $T, so the page's code is what every Python check runs.
sed -n '/^# vtread.py begin/,/^# vtread.py end/p' man/man5/vitpipe.5 | sed 's/\\e/\\/g' >"$T/vtread.py"
export PYTHONPATH="$T:${TOP:-.}/tests/sh"
# mpirun (vit-train's ranks) as root, which Open MPI refuses by default,
# with more ranks than cores, no rank bound to one core, and shared-memory
# copies that need no ptrace (containers).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none \
    OMPI_MCA_btl_vader_single_copy_mechanism=none
# SAN=1 when the commands are built under AddressSanitizer (make test
# SAN=1): its runtime answers ASAN_OPTIONS=help=1.
SAN=0
ASAN_OPTIONS=help=1 "${TOP:-.}/${BIN:-bin}/vtool" --version 2>&1 | grep -q AddressSanitizer && SAN=1
# memlimit KIB command...: run command with KIB of memory at most: under
# ulimit -v; or, under ASan, whose shadow memory alone is more address
# space than any such limit, under ASan's own limits: an allocation over
# KIB fails (returns NULL, as under ulimit -v), and so does the process
# whose resident memory passes KIB.
memlimit() {
	local k=$1; shift
	if [ "$SAN" = 1 ]; then
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:malloc_limit_mb=$((k / 1024)):hard_rss_limit_mb=$((k / 1024))" "$@"
	else
		(ulimit -v "$k"; exec "$@")
	fi
}
ok()   { echo "ok - $*"; }
nok()  { echo "not ok - $*"; FAILED=1; }
# check "what" command...: the command must succeed.
check() { local d=$1; shift; if "$@" >"$T/out" 2>"$T/err"; then ok "$d"; else nok "$d (exit $?: $(head -c 300 "$T/err"))"; fi; }
# check_exit N "what" command...: the command must exit N and, when N is not 0,
# say something on stderr that starts with the program's name.
check_exit() {
	local n=$1 d=$2 rc; shift 2
	"$@" >"$T/out" 2>"$T/err"; rc=$?
	if [ "$rc" -ne "$n" ]; then nok "$d (exit $rc, wanted $n: $(head -c 300 "$T/err"))"; return; fi
	if [ "$n" -ne 0 ] && ! grep -q "^$(basename "$1"): " "$T/err"; then nok "$d (no 'prog: ' message: $(head -c 300 "$T/err"))"; return; fi
	ok "$d"
}
# ompi_retry command...: run the command, which must read its input anew
# each time, up to twice more while it fails because mpirun itself crashed
# at the end of the standard input it forwards to rank 0: an Open MPI 4.1
# bug, a few runs in a hundred on a loaded host, that no change of ours can
# avoid (vit-train(1) BUGS).  Any other failure is the command's at once.
# Runs given the stream as a file or a FIFO operand, which the ranks open
# themselves, do not go through that forwarding and need no retry.
# The last run's stdout and stderr come out, and its exit status.
ompi_retry() {
	local rc n=0
	while :; do
		"$@" >"$T/ompi.out" 2>"$T/ompi.err"; rc=$?
		n=$((n + 1))
		[ "$rc" -ne 0 ] && [ "$n" -lt 3 ] &&
		    grep -q 'orte_iof_hnp_read_local_handler' "$T/ompi.err" || break
	done
	cat "$T/ompi.out"; cat "$T/ompi.err" >&2
	return "$rc"
}
# check_grep "what" pattern file: file must contain pattern (grep -E).
check_grep() { if grep -Eq -- "$2" "$3"; then ok "$1"; else nok "$1 ('$2' not in $3: $(head -c 300 "$3"))"; fi; }
# man_blocks PAGE PREFIX: each literal block of the EXAMPLES section of the
# man page file PAGE into its own file PREFIX01.sh, PREFIX02.sh, ... (in
# order), with roff's \e turned back into a backslash.
man_blocks() {
	sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$1" |
	    awk -v p="$2" '/^\.Bd -literal/ { on = 1; n++; next } /^\.Ed/ { on = 0; next }
		on { gsub(/\\e/, "\\"); print > sprintf("%s%02d.sh", p, n) }'
}
# run_examples PAGE: run the EXAMPLES blocks of man/man1/PAGE.1 in order in
# one scratch directory (a block may use what an earlier one wrote); each
# block must succeed.
run_examples() {
	exdir="$T/ex-$1"; mkdir -p "$exdir"
	man_blocks "man/man1/$1.1" "$exdir/block"
	set -- "$1" "$exdir"/block*.sh
	[ -f "$2" ] || { nok "$1(1) has no EXAMPLES blocks"; return; }
	page=$1; shift
	for b; do
		check "$page(1) EXAMPLES $(basename "$b" .sh)" sh -ec "cd '$exdir' && . '$b'"
	done
}
# vtpy SCRIPT: run Python with vtread (from vitpipe(5)) and numpy as np.
vtpy() {
	(cd "$T" && $PY -c "import numpy as np; from vtread import vtread
$1")
}
# Examples name Debian's Fashion-MNIST as D=$FM; small_fmnist DIR NTRAIN
# NTEST writes the first images of each set to DIR in the same IDX gzip
# format, and at_small_fmnist FILE DIR points an example's D= line there,
# so the examples run as printed in seconds.
FM=/usr/share/datasets/fashion-mnist
small_fmnist() {
	mkdir -p "$1"
	$PY - "$FM" "$@" <<'PY' || nok "making a small Fashion-MNIST"
import gzip, sys
src, dst, ntrain, ntest = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for name, n in (("train", ntrain), ("t10k", ntest)):
    img = gzip.open(f"{src}/{name}-images-idx3-ubyte.gz").read()
    lab = gzip.open(f"{src}/{name}-labels-idx1-ubyte.gz").read()
    gzip.open(f"{dst}/{name}-images-idx3-ubyte.gz", "wb").write(
        img[:4] + n.to_bytes(4, "big") + img[8:16] + img[16:16 + 784 * n])
    gzip.open(f"{dst}/{name}-labels-idx1-ubyte.gz", "wb").write(
        lab[:4] + n.to_bytes(4, "big") + lab[8:8 + n])
PY
}
at_small_fmnist() { sed -i "s|^D=$FM\$|D=$2|" "$1"; }
# losses A B...: the lines of log A against each other log's, step by
# step: the same steps and epochs, losses within LOSS_TOL (default: float
# rounding, the log's 6 decimals), the same validations.  Prints "fine"
# and the largest difference of a loss.
losses() {
	LOSS_TOL=${LOSS_TOL:-1e-5} $PY - "$@" <<'EOF' 2>&1
import json, os, sys
sys.excepthook = lambda t, e, tb: print("failed:", repr(e))
tol = float(os.environ["LOSS_TOL"])
def lines(path):
    return [json.loads(l) for l in open(path)]
a = lines(sys.argv[1])
most = 0
for path in sys.argv[2:]:
    b = lines(path)
    assert len(a) == len(b), f"{path}: {len(b)} lines, {len(a)} wanted"
    for x, y in zip(a, b):
        assert x["step"] == y["step"] and x["epoch"] == y["epoch"], (x, y)
        if "loss" in x:
            most = max(most, abs(x["loss"] - y["loss"]))
            assert abs(x["loss"] - y["loss"]) <= tol, f"{path}: step {x['step']}: {x['loss']} {y['loss']}"
        else:
            assert x == y, (x, y)
print("fine", most)
EOF
}
finish() { exit $FAILED; }
