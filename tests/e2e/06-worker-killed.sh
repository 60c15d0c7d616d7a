#!/bin/sh
# 06-worker-killed.sh - scenario 6 (issue 10): the worker is killed with
# SIGKILL while its RunInstances call is in flight (the simulator holds
# RunInstances 5 s).  The cloud launches the instances anyway: for a
# moment they exist in the cloud and nowhere in the state file, and they
# boot.  `gpuburstctl reconcile` (what the timer runs every minute)
# requeues the dead worker's request and starts a worker, which re-sends
# the recorded attempt with the same ClientToken and gets the original
# reservation back instead of new instances.  Afterwards no instance is
# duplicated, every instance the cloud ever launched has a record whose
# state matches the cloud's, the job runs with exactly one live instance
# per node, and a later reconcile finds no orphan and nothing lost.
#
# The instances booted before the re-run could set NodeAddr, so their
# slurmds registered without an address: slurmctld cannot reach the node
# and requeues the job (22.05 without cloud_reg_addrs); the requeued job
# runs once the requeue delay (CRED_EXPIRE + 1 s) is over.  The test
# accepts that and says how often it happened.
RESUME_TIMEOUT=60
ORPHAN_TIMEOUT=3s
CRED_EXPIRE=5
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2
control POST /_sim/capacity '{"az": "ap-southeast-1a", "instance_type": "g5.xlarge", "available": 2}' >/dev/null ||
	fail "capacity"
control POST /_sim/fault '{"kind": "latency", "latency": 5, "action": "RunInstances", "count": 20}' >/dev/null ||
	fail "fault"

JOB=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun sh -c "echo \$SLURMD_NODENAME; sleep 4"')
wait_for 20 "a resume request" '[ -n "$(sql "SELECT id FROM requests WHERE job_id=$JOB")" ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB")
wait_for 20 "a RunInstances call in flight" '[ "$(sql "SELECT count(*) FROM attempts WHERE request_id='"'$REQ'"' AND state='"'started'"'")" -ge 1 ]'
PID=$(sql "SELECT worker_pid FROM requests WHERE id='$REQ'")
tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null | grep -Eq 'gpuburst-worker|gpuburstctl .* worker' ||
	fail "pid $PID is not a gpuburst worker: $(tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null)"
kill -KILL "$PID" || fail "kill $PID"
wait_for 10 "worker $PID gone" '! grep -q "^State:[[:space:]]*[^Z]" /proc/$PID/status 2>/dev/null'
STARTED=$(sql "SELECT count(*) FROM attempts WHERE request_id='$REQ' AND state='started'")
expect_eq "request left running by the dead worker" "$(sql "SELECT state, worker_pid FROM requests WHERE id='$REQ'")" "running|$PID"
expect_eq "no record yet" "$(sql "SELECT count(*) FROM instances WHERE request_id='$REQ'")" 0
ok "worker $PID killed (SIGKILL) with $STARTED RunInstances call(s) in flight for $REQ"

# the slow calls complete in the cloud: instances nobody has recorded
wait_for 15 "the cloud launched them" '[ "$(sim_instances "len([i for i in ins if i[\"tags\"].get(\"gpuburst:request\") == \"$REQ\"])")" -ge 2 ]'
N_CLOUD=$(sim_instances "len(ins)")
expect_eq "records" "$(sql "SELECT count(*) FROM instances")" 0
ok "the cloud launched $N_CLOUD instance(s) for $REQ; the state file has none"

ctl reconcile >"$TMP/r1.out" 2>"$TMP/r1.err" || fail "reconcile: $(cat "$TMP/r1.out" "$TMP/r1.err")"
grep -q "requeued_stale count=1" "$TMP/gpuburst.log" || fail "the stale request was not requeued"
grep -q "worker_started by=reconcile" "$TMP/gpuburst.log" || fail "reconcile started no worker"
wait_for 30 "request $REQ finished" '[ "$(sql "SELECT state FROM requests WHERE id='"'$REQ'"'")" = done ]'
expect_eq "request" "$(sql "SELECT result, launched FROM requests WHERE id='$REQ'")" "success|2"
sql "SELECT count(*) FROM events WHERE request_id='$REQ' AND kind='recover'" | grep -qv '^0$' || fail "no recover event"
expect_eq "the re-run launched nothing new" "$(sim_instances "len([i for i in ins if i['tags'].get('gpuburst:request') == '$REQ'])")" "$N_CLOUD"
expect_eq "records of $REQ" "$(sql "SELECT count(*) FROM instances WHERE request_id='$REQ'")" "$N_CLOUD"
ok "reconcile requeued $REQ and started a worker: same token, the original $N_CLOUD instance(s) recorded, nothing new launched"

# the job runs: one live instance per node, in the cloud and in the records
wait_for 90 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
expect_eq "live instances per node (cloud)" \
	"$(sim_instances "sorted(i['tags'].get('gpuburst:node', '?') for i in ins if i['state'] in ('pending', 'running'))")" \
	'["gpu-1", "gpu-2"]'
for n in gpu-1 gpu-2; do
	expect_eq "live records of $n" "$(sql "SELECT count(*) FROM instances WHERE node='$n' AND state IN ('pending', 'running')")" 1
done
wait_for 30 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
RESTARTS=$(lab scontrol -o show job "$JOB" | tr ' ' '\n' | sed -n 's/^Restarts=//p')
ok "job $JOB ran with exactly one live instance per node (Slurm requeued it $RESTARTS time(s))"

# every instance the cloud launched is recorded, live ones as live
sim_instances "sorted(i['id'] for i in ins)" | tr -d '[]" ' | tr ',' '\n' | sort >"$TMP/cloud.ids"
sql "SELECT instance_id FROM instances" | sort >"$TMP/state.ids"
cmp -s "$TMP/cloud.ids" "$TMP/state.ids" ||
	fail "cloud and records differ: cloud $(tr '\n' ' ' <"$TMP/cloud.ids") records $(tr '\n' ' ' <"$TMP/state.ids")"
sim_instances "sorted(i['id'] for i in ins if i['state'] in ('pending', 'running'))" | tr -d '[]" ' | tr ',' '\n' | sed '/^$/d' | sort >"$TMP/cloud.live"
sql "SELECT instance_id FROM instances WHERE state IN ('pending', 'running')" | sort >"$TMP/state.live"
cmp -s "$TMP/cloud.live" "$TMP/state.live" ||
	fail "live sets differ: cloud $(tr '\n' ' ' <"$TMP/cloud.live") records $(tr '\n' ' ' <"$TMP/state.live")"
ok "all $(wc -l <"$TMP/cloud.ids") instance(s) the cloud launched are recorded; live and terminated agree"

sleep 3		# older than orphan_timeout: reconcile would act on them now
ctl --json reconcile --dry-run >"$TMP/r2.json" 2>"$TMP/r2.err" || fail "reconcile: $(cat "$TMP/r2.err")"
expect_eq "reconcile actions" "$(jq_py "$TMP/r2.json" "[(a['action'], a['target']) for a in d['actions'] if a['action'] in ('orphan', 'lost')]")" "[]"
ok "reconcile finds no orphan and nothing lost"
