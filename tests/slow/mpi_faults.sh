# mpi_faults.sh - network faults of vit-train on 3 emulated hosts
# (tests/sh/hosts.inc) beyond the link taken down that tests/sh/mpi_hosts.sh
# checks, too slow for make test (make test-slow): host 3's namespace
# losing its route, and host 3's rank killed.  Each ends the job within
# seconds, naming the lost rank or host; the last checkpoint is whole, and
# --resume goes on on the 2 hosts left, warning that the sums run in
# another order.
. tests/sh/lib.sh
. tests/sh/hosts.inc
command -v mpirun >/dev/null || { nok "mpirun is not installed (make deps)"; finish; }
if ! hosts_can; then
	echo "# skipped: no network namespaces here (root, ip and tc wanted)"
	finish
fi
# key FILE KEY: a checkpoint's header key (sed reads no further)
key() { sed -n "/^ENDHDR/q; s/^$2 //p" "$1" 2>/dev/null; }
VT=$(command -v vit-train)
$PY tests/sh/posclass.py --records 2000 --seed 7 > "$T/s.vt"
K="--dim 16 --depth 2 --heads 2 --mlp 32 --threads 1 --pe liere:2 --batch 8 --seed 2 \
    --steps 200 --save-steps 5 --timeout 2"

# fault NAME COMMAND PATTERN: on 3 fresh hosts, run until the checkpoint
# of step 10 or later, do COMMAND (evaluated here), then check that the job
# ends within 15 s, saying PATTERN (grep -E), with a whole checkpoint, and
# that --resume ends the run on hosts 1 and 2.
fault() {
	local d="$T/$1" rc t0 t1 at i
	hosts_up 3 || { nok "$1: making 3 emulated hosts"; return; }
	mkdir -p "$d"
	(cd "$d" && hmpirun 3 60 "$VT" $K --log k.json -o k.vt ../s.vt 2>err) &
	job=$!
	for i in $(seq 300); do
		[ "$(key "$d/k.vt" STEP)" -ge 10 ] 2>/dev/null && break
		sleep 0.1
	done
	eval "$2"
	t0=$(date +%s)
	wait $job
	rc=$?
	t1=$(date +%s)
	at=$(key "$d/k.vt" STEP)
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ $((t1 - t0)) -le 15 ] && [ "$at" -lt 200 ] &&
		ok "$1 at step $at: the job ends in $((t1 - t0)) s, exit $rc" ||
		nok "$1: exit $rc after $((t1 - t0)) s, at step $at"
	check_grep "... naming the rank or host" "$3" "$d/err"
	check "... the last checkpoint is whole: vit-eval reads it" vit-eval --resamples 0 --threads 1 "$d/k.vt" "$T/s.vt"
	(cd "$d" && hmpirun 2 60 "$VT" --resume --log k.json -o k.vt ../s.vt 2>err2)
	rc=$?
	[ "$rc" = 0 ] && [ "$(key "$d/k.vt" STEP)" = 200 ] && ok "... resumed on the 2 hosts left, it ends at step 200" ||
		nok "$1, resumed on 2 hosts: exit $rc, step $(key "$d/k.vt" STEP): $(head -c 300 "$d/err2")"
	check_grep "... warning that the sums run in another order" \
	    "^vit-train: --resume: 2 ranks, the run began with 3: the result will not be bitwise" "$d/err2"
	hosts_down
}

fault "host 3's route lost" 'ip -n "${HP}3" route del "$NET.0/24"' \
    "^vit-train: the gradient sums: nothing for 2 s; no answer from rank 2 \(host ${HP}3\)"
# the rank of host 3, found by its host name (hosts.inc's agent names it)
rank3() {
	local p
	for p in $(ip netns pids "${HP}3"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = vit-train ] && echo $p
	done
}
fault "host 3's rank killed" 'kill -9 $(rank3)' "rank 2 .* on node ${HP}3 .*signal 9"
finish
