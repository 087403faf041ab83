# mpi_faults.sh - network faults of vit-train on 3 emulated hosts
# (tests/sh/hosts.inc) beyond the link taken down that tests/sh/mpi_hosts.sh
# checks, too slow for make test (make test-slow): host 3's namespace
# losing its route, and host 3's rank killed.  Each ends the job within
# seconds, naming the lost rank or host; the last checkpoint is whole, and
# --resume goes on on the 2 hosts left, warning that the sums run in
# another order.
. tests/sh/lib.sh
. tests/sh/hosts.inc
hosts_needed
$PY tests/sh/posclass.py --records 2000 --seed 7 > "$T/s.vt"
FAULT_STEPS=200
FAULT="--dim 16 --depth 2 --heads 2 --mlp 32 --threads 1 --pe liere:2 --batch 8 --seed 2 \
    --steps $FAULT_STEPS --save-steps 5 --timeout 2"
hosts_up 3 || { nok "making 3 emulated hosts"; finish; }
fault "host 3's route lost" 'ip -n "${HP}3" route del "$NET.0/24"' \
    "^vit-train: .*: nothing for 2 s; no answer from rank 2 \(host ${HP}3\)"
# the rank on host 3: the vit-train in its namespace
rank3() {
	local p
	for p in $(ip netns pids "${HP}3"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = vit-train ] && echo $p
	done
}
hosts_down
hosts_up 3 || { nok "making 3 emulated hosts"; finish; }
fault "host 3's rank killed" 'kill -9 $(rank3)' "rank 2 .* on node ${HP}3 .*signal 9"
finish
