#!/bin/sh
# 27-crash-matrix.sh - the worker dies at any point of a resume, or of a
# suspend, and the re-run puts everything right (issue 16, part 1).
#
# Eight CLOUD nodes, four power-ups of two nodes each (four requests the
# worker runs at once), RunInstances held 2 s by the simulator.  For
# k = 1..5 the worker is killed (SIGKILL) as soon as the simulator has
# received its k-th RunInstances call (call k in flight), and again as
# soon as it has answered it (the answer on its way, maybe not recorded).
# Then `gpuburstctl reconcile` (what the timer runs) requeues the dead
# worker's requests and starts a worker, whose re-run re-sends the open
# launches with their ClientTokens.  After each crash, from the
# simulator's own instance list and from Slurm:
#   - every instance the records gave a node at the moment of the kill is
#     still alive (0 healthy instances terminated);
#   - every instance the cloud holds is recorded (0 orphans), live ones
#     as live, and each node has exactly one live instance (0 duplicates);
#   - every request ended done/success 2/2;
#   - each node's NodeAddr is its live instance's address (what slurmctld
#     shows for it: expect_addr), and an 8-node job completes.
# Then the nodes are powered down and the next crash starts from idle~.
#
# CRASH_MATRIX_K (default "1 2 3 4 5") chooses the k: CI runs the whole
# matrix on one release and fewer points on the others (.ci/run).
#
# Last, the same for a suspend: TerminateInstances held 2 s, the worker
# killed while it is in flight, and again just after it was answered:
# no instance may be recorded "lost, not terminated by gpuburst" (the
# reconcile dry run must not even propose it), the records are closed as
# terminated, and the cloud has no live instance left.
RESUME_TIMEOUT=300	# resume-fail stays out of it
SUSPEND_TIME=3600	# the test powers the nodes down itself
CRED_EXPIRE=5
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 8
# Singapore holds 5: the third request is filled partly there, the rest
# falls through to Mumbai and Tokyo (more calls, partial answers, ICE)
control POST /_sim/capacity '{"az": "ap-southeast-1a", "instance_type": "g5.xlarge", "total": 5}' >/dev/null ||
	fail "capacity"
NODES="gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7 gpu-8"

# sim_calls ACTION FIELD: the simulator's count of ACTION calls (received
# or answered)
sim_calls() {
	control GET /_sim/state | "$PYTHON3" -c 'import json, sys
c = json.load(sys.stdin)["calls"].get(sys.argv[1], {})
print(c.get(sys.argv[2], 0))' "$1" "$2"
}

# wait_calls ACTION FIELD N: poll every 10 ms (30 s at most) until the
# simulator's count reaches N
wait_calls() {
	"$PYTHON3" -c 'import json, sys, time, urllib.request
op = urllib.request.build_opener(urllib.request.ProxyHandler({}))
end = time.time() + 30
while time.time() < end:
    c = json.load(op.open(sys.argv[1] + "/_sim/state", timeout=10))["calls"]
    if c.get(sys.argv[2], {}).get(sys.argv[3], 0) >= int(sys.argv[4]):
        sys.exit(0)
    time.sleep(0.01)
sys.exit(1)' "$ENDPOINT" "$1" "$2" "$3" || fail "the simulator did not get to $3 $1 call $4"
}

# kill_worker: SIGKILL the worker that runs requests now (by its pid in
# the state file, checked to be a gpuburst worker); KILLED its pid(s)
kill_worker() {
	KILLED=$(sql "SELECT DISTINCT worker_pid FROM requests WHERE state = 'running' AND worker_pid > 0")
	[ -n "$KILLED" ] || fail "$what: no running request has a worker"
	for p in $KILLED; do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -Eq 'gpuburst-worker|gpuburstctl .* worker' ||
			fail "pid $p is not a gpuburst worker"
		kill -KILL "$p" || fail "kill $p"
	done
	for p in $KILLED; do
		wait_for 10 "worker $p gone" '! grep -q "^State:[[:space:]]*[^Z]" /proc/$p/status 2>/dev/null'
	done
}

# live_records: "instance node" of every live record with a node
live_records() {
	sql "SELECT instance_id, node FROM instances WHERE state IN ('pending', 'running') AND node IS NOT NULL ORDER BY node" | tr '|' ' '
}

# power_up_pairs: gpu-[1-2], then 3-4, 5-6, 7-8, each once the resume
# request of the one before is queued (slurmctld wakes the nodes of one
# power-save pass with one ResumeProgram: one request)
power_up_pairs() {
	for r in 1-2 3-4 5-6 7-8; do
		nreq=$(sql "SELECT count(*) FROM requests WHERE kind = 'resume'")
		nreq=${nreq:-0}	# no state file before the first request
		lab scontrol update nodename="gpu-[$r]" state=power_up || fail "power_up gpu-[$r]"
		wait_for 20 "the resume request of gpu-[$r]" \
			'[ "$(sql "SELECT count(*) FROM requests WHERE kind = '"'resume'"'")" -gt "$nreq" ] 2>/dev/null'
	done
}

# all_up, all_down: every gpu node idle and responding / POWERED_DOWN, from one
# scontrol call
all_up() {
	lab sinfo -h -N -p gpu -o '%N %T' >"$TMP/sinfo.txt" 2>/dev/null || return 1
	[ "$(grep -c '' "$TMP/sinfo.txt")" = 8 ] && ! grep -Ev ' idle$' "$TMP/sinfo.txt" | grep -q .
}
all_down() {
	lab scontrol -o show node >"$TMP/down.txt" 2>/dev/null || return 1
	[ "$(grep '^NodeName=gpu-' "$TMP/down.txt" | grep -c 'State=[^ ]*POWERED_DOWN')" = 8 ]
}

sim_live() {
	sim_instances "' '.join(sorted(i['id'] for i in ins if i['state'] in ('pending', 'running')))"
}

# recover: let in-flight calls finish in the cloud, lift the latency,
# reconcile until no request is left open
recover() {
	sleep 2.5
	control DELETE /_sim/fault >/dev/null || fail "fault"
	ctl reconcile >"$TMP/r.out" 2>&1 || fail "reconcile: $(cat "$TMP/r.out")"
	wait_for 60 "every request finished" \
		'[ "$(sql "SELECT count(*) FROM requests WHERE state NOT IN ('"'done'"', '"'failed'"')")" = 0 ]'
	ctl reconcile >"$TMP/r.out" 2>&1 || fail "second reconcile: $(cat "$TMP/r.out")"
}

# check_cloud WHAT: records and the simulator agree, one live instance
# per node
check_cloud() {
	sim_instances "sorted(i['id'] for i in ins)" | tr -d '[]" ' | tr ',' '\n' | sed '/^$/d' | sort >"$TMP/cloud.ids"
	sql "SELECT instance_id FROM instances" | sort >"$TMP/state.ids"
	orphans=$(comm -23 "$TMP/cloud.ids" "$TMP/state.ids" | tr '\n' ' ')
	[ -z "$orphans" ] || fail "$1: instances in the cloud without a record (orphans): $orphans"
	[ "$(sim_live)" = "$(sql "SELECT instance_id FROM instances WHERE state IN ('pending', 'running') ORDER BY instance_id" | tr '\n' ' ' | sed 's/ $//')" ] ||
		fail "$1: live sets differ: cloud '$(sim_live)', records '$(sql "SELECT instance_id FROM instances WHERE state IN ('pending', 'running')" | tr '\n' ' ')'"
}

CASE=0
KS=${CRASH_MATRIX_K:-1 2 3 4 5}
echo "# crash points: RunInstances k in $KS, each received and answered"
for k in $KS; do
	for when in received answered; do
		CASE=$((CASE + 1))
		T0=$(date +%s)
		what="kill after RunInstances $k $when"
		# every crash starts from the same knowledge of the cloud
		for r in ap-southeast-1 ap-south-1 ap-northeast-1; do
			ctl capacity forget "$r" >"$TMP/forget.out" 2>&1 || grep -q "nothing to forget" "$TMP/forget.out" ||
				fail "capacity forget $r: $(cat "$TMP/forget.out")"
		done
		base=$(sim_calls RunInstances "$when")
		control POST /_sim/fault '{"kind": "latency", "latency": 2, "action": "RunInstances", "count": 1000}' >/dev/null ||
			fail "fault"
		power_up_pairs
		wait_calls RunInstances "$when" $((base + k))
		kill_worker
		live_records >"$TMP/at-kill"
		T1=$(date +%s)
		recover
		# 0 healthy instances terminated
		while read -r id node; do
			st=$(sim_state "$id")
			[ "$st" = pending ] || [ "$st" = running ] ||
				fail "$what: $node's instance $id, recorded at the kill, is $st in the cloud"
		done <"$TMP/at-kill"
		check_cloud "$what"
		for n in $NODES; do
			expect_eq "$what: live records of $n" \
				"$(sql "SELECT count(*) FROM instances WHERE node = '$n' AND state IN ('pending', 'running')")" 1
		done
		bad=$(sql "SELECT id || ' ' || state || '/' || coalesce(result, '') || ' ' || launched FROM requests
			   WHERE kind = 'resume' AND created_at >= $T0 AND NOT (state = 'done' AND result = 'success' AND launched = 2)")
		[ -z "$bad" ] || fail "$what: requests not done/success 2/2: $bad"
		expect_eq "$what: resume requests" "$(sql "SELECT count(*) FROM requests WHERE kind = 'resume' AND created_at >= $T0")" 4
		# the billed extras, as `requests show` counts them
		for req in $(sql "SELECT id FROM requests WHERE kind = 'resume' AND created_at >= $T0"); do
			ctl --json requests show "$req" >"$TMP/show.json" 2>"$TMP/show.err" || fail "requests show: $(cat "$TMP/show.err")"
			expect_eq "$what: extras of $req" "$(jq_py "$TMP/show.json" "d['extras']")" \
				"$(sql "SELECT count(*) FROM instances WHERE request_id = '$req' AND node IS NULL")"
		done
		wait_for 60 "$what: every node up" all_up
		lab scontrol -o show node >"$TMP/nodes.txt" || fail "scontrol show node"
		for n in $NODES; do
			ip=$(sql "SELECT private_ip FROM instances WHERE node = '$n' AND state IN ('pending', 'running')")
			expect_addr "$what: NodeAddr of $n" "$(sed -n "s/^NodeName=$n .* NodeAddr=\([^ ]*\) .*/\1/p" "$TMP/nodes.txt")" "$ip"
		done
		T2=$(date +%s)
		JOB=$(submit -N8 --gres=gpu:a10g:1 --wrap 'srun hostname')
		wait_for 60 "$what: job $JOB completed" '[ "$(job_state '"$JOB"')" = COMPLETED ]'
		T3=$(date +%s)
		terminated=$(sql "SELECT count(*) FROM instances WHERE launched_at >= $T0 AND state = 'terminated'")
		ok "$what (worker $KILLED killed; $(wc -l <"$TMP/at-kill") node(s) recorded at the kill): 0 healthy terminated, $terminated extra(s) ended, 0 orphans, one instance per node, job $JOB completed (s: crash $((T1 - T0)), recovery and boot $((T2 - T1)), job $((T3 - T2)))"
		# back to idle~ for the next crash
		lab scontrol update nodename="gpu-[1-8]" state=power_down || fail "power_down"
		wait_for 60 "no live instance" '[ -z "$(sim_live)" ]'
		wait_for 60 "every node powered down" all_down
		wait_for 30 "every request finished" \
			'[ "$(sql "SELECT count(*) FROM requests WHERE state NOT IN ('"'done'"', '"'failed'"')")" = 0 ]'
	done
done

# a suspend killed while its TerminateInstances is in flight, then just
# after it was answered
for when in received answered; do
	power_up_pairs
	wait_for 60 "every node up" all_up
	# older than reconcile's 30 s grace for instances the cloud lists gone
	# (else a wrongly "lost" instance would only wait its turn)
	newest=$(sql "SELECT CAST(max(launched_at) AS INTEGER) FROM instances WHERE state IN ('pending', 'running')")
	wait_for 40 "instances older than 31 s" '[ $(( $(date +%s) - newest )) -ge 31 ]'
	base=$(sim_calls TerminateInstances "$when")
	control POST /_sim/fault '{"kind": "latency", "latency": 2, "action": "TerminateInstances", "count": 1000}' >/dev/null ||
		fail "fault"
	lab scontrol update nodename="gpu-[1-8]" state=power_down || fail "power_down"
	wait_calls TerminateInstances "$when" $((base + 1))
	what="suspend killed after TerminateInstances $when"
	kill_worker
	sleep 2.5
	control DELETE /_sim/fault >/dev/null || fail "fault"
	ctl --json reconcile --dry-run >"$TMP/rd.json" 2>"$TMP/rd.err" || fail "reconcile --dry-run: $(cat "$TMP/rd.err")"
	expect_eq "$what: reconcile would record" \
		"$(jq_py "$TMP/rd.json" "[a['target'] for a in d['actions'] if a['action'] == 'lost']")" "[]"
	recover
	wait_for 30 "no live instance" '[ -z "$(sim_live)" ]'
	expect_eq "$what: records lost" "$(sql "SELECT count(*) FROM instances WHERE state = 'lost'")" 0
	expect_eq "$what: live records" "$(sql "SELECT count(*) FROM instances WHERE state IN ('pending', 'running', 'terminating')")" 0
	check_cloud "$what"
	ok "$what (worker $KILLED killed): no instance recorded lost, every record closed, none live in the cloud"
	wait_for 60 "every node powered down" all_down
done
