# mpi_hosts.sh - vit-train's ranks on emulated hosts, one rank a host
# (tests/sh/hosts.inc: network namespaces on a bridge, Open MPI over TCP
# between them): 2 and 3 hosts give one process's losses step by step,
# their gradients crossing the emulated network; --allreduce bf16 is
# deterministic and differs from fp32 by bf16's rounding alone; a host's
# link taken down mid-run ends the job within seconds, naming the rank and
# host, its last checkpoint whole, and --resume goes on on the 2 hosts
# left, warning that the sums run in another order.  The scaling model's
# measurements and the slower faults are experiments/mpi_model.sh's.
. tests/sh/lib.sh
. tests/sh/hosts.inc
hosts_needed
# vit-train(1)'s recipe to rehearse on one machine, as printed but for
# the namespaces' names (this test's, which hosts_down removes).
$PY tests/sh/posclass.py --records 200 --seed 2 > "$T/train.vt"
sed -n '/^\.Ss Rehearsing on one machine/,/^\.Ss /p' man/man1/vit-train.1 |
    awk '/^\.Bd -literal/ { on = 1; next } /^\.Ed/ { on = 0 } on' |
    sed "s/\\\\e/\\\\/g; s/vt-sw/$HP/g; s/vt-h/$HP/g" > "$T/recipe.sh"
HOSTS=2
trap 'hosts_down; rm -rf "$T"' EXIT
check "vit-train(1)'s rehearsal on 2 emulated hosts runs" sh -ec "cd '$T' && . ./recipe.sh"
[ "$(key "$T/hosts.vt" STEP)" = 20 ] && [ "$(grep -c comm_s "$T/hosts.json")" = 20 ] &&
	ok "... 20 steps of 2 ranks" || nok "the rehearsal: step $(key "$T/hosts.vt" STEP)"
[ -z "$(ip netns list | grep "^$HP")" ] && ok "... and it removes its namespaces" ||
	nok "the rehearsal left $(ip netns list | grep "^$HP" | tr '\n' ' ')"
hosts_down
hosts_up 3 || { nok "making 3 emulated hosts"; finish; }
# bytes host K has sent on its link
sent() { ip -n "$HP$1" -s link show eth0 | awk '/TX:/ { getline; print $1 }'; }
VT=$(command -v vit-train)
in_dir() { (cd "$1" && shift && "$@"); }
M="--dim 16 --depth 2 --heads 2 --mlp 32 --threads 1 --pe liere:2"

# One process, 2 and 3 hosts: the same losses; each host sent at least
# the gradient's bytes a step (9 steps of 2800 parameters).  Each run in a
# directory of its own: the command line is in the checkpoint.
$PY tests/sh/posclass.py --records 120 --seed 4 > "$T/p.vt"
E="$M --batch 7 --accum 2 --dropout 0.1 --mixup 0.5 --seed 5 --log l.json -o m.vt ../p.vt"
mkdir -p "$T/e1" "$T/e2" "$T/e3" "$T/b1" "$T/b2"
check "one process" in_dir "$T/e1" vit-train $E
s0=$(sent 3)
check "2 hosts, a rank each" in_dir "$T/e2" hmpirun 2 60 "$VT" $E
check "3 hosts" in_dir "$T/e3" hmpirun 3 60 "$VT" $E
losses "$T/e1/l.json" "$T/e2/l.json" "$T/e3/l.json" > "$T/eq"
check_grep "... their losses are one process's, step by step" "^fine" "$T/eq"
s1=$(sent 3)
[ $((s1 - s0)) -gt $((9 * 2800 * 4)) ] && ok "... the third host's gradients went over its link ($((s1 - s0)) bytes)" ||
	nok "the third host sent $((s1 - s0)) bytes"

# --allreduce bf16 on 2 hosts: the same bytes twice; its losses fp32's
# to 0.01, its parameters after 9 steps differ from fp32's, by less than
# the 2 lr a step that a sum's rounding can change in AdamW.
for i in 1 2; do
	check "--allreduce bf16 on 2 hosts, run $i" in_dir "$T/b$i" hmpirun 2 60 "$VT" $E --allreduce bf16
done
cmp -s "$T/b1/m.vt" "$T/b2/m.vt" && ok "... the same bytes twice" || nok "--allreduce bf16: two runs differ"
[ "$(key "$T/b1/m.vt" TRAIN_ALLREDUCE)" = bf16 ] && [ "$(key "$T/e2/m.vt" TRAIN_ALLREDUCE)" = fp32 ] &&
	ok "... its checkpoint says TRAIN_ALLREDUCE bf16" || nok "TRAIN_ALLREDUCE: $(key "$T/b1/m.vt" TRAIN_ALLREDUCE)"
LOSS_TOL=0.01 losses "$T/e2/l.json" "$T/b1/l.json" > "$T/beq"
check_grep "... its losses are fp32's to 0.01 ($(cut -d' ' -f2 "$T/beq") at most)" "^fine" "$T/beq"
vtpy "
a = next(vtread(open('b1/m.vt', 'rb'))[1])
b = next(vtread(open('e2/m.vt', 'rb'))[1])
d = max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in a if k.endswith(('.w', '.b')))
print('fine' if 0 < d <= 2 * 9 * 1e-3 else 'failed', d)" > "$T/bw" 2>&1
check_grep "... and its weights differ from fp32's, by $(cut -d' ' -f2 "$T/bw") at most" "^fine" "$T/bw"

# A link down: host 3's, mid-run.  Rank 0 asks the others after --timeout
# and names the one that does not answer; mpirun, told that rank 0 ended,
# gives up on host 3 when its retransmissions there fail (hosts.inc)
# and ends the job.
$PY tests/sh/posclass.py --records 2000 --seed 7 > "$T/s.vt"
FAULT_STEPS=120
FAULT="$M --batch 8 --seed 2 --steps $FAULT_STEPS --save-steps 5 --timeout 1"
fault "host 3's link down" 'ip -n "${HP}3" link set eth0 down' \
    "^vit-train: .*: nothing for 1 s; no answer from rank 2 \(host ${HP}3\): a host or its link lost\?"
finish
