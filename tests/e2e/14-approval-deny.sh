#!/bin/sh
# 14-approval-deny.sh - a job over the threshold waits; `gpuburstctl deny
# --reason` sets its nodes DOWN with "gpuburst: resume denied by root: TEXT"
# at once, so Slurm requeues the job (pending, not failed), nothing is
# launched; reconcile then powers the nodes down (idle~).  The job stays
# pending: a denial is not a ban (Slurm retries it after its requeue delay).
APPROVAL_THRESHOLD=1
RESUME_TIMEOUT=40
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2

pending() { sql "SELECT count(*) FROM requests WHERE job_id=$1 AND state='pending_approval'"; }
restarts() { lab scontrol -o show job "$1" | tr ' ' '\n' | sed -n 's/^Restarts=//p'; }

JOB=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun hostname')
wait_for 20 "a pending approval" '[ "$(pending $JOB)" = 1 ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB")
ok "job $JOB waits for approval ($REQ)"

ctl deny "$REQ" >"$TMP/d0.out" 2>"$TMP/d0.err"
expect_eq "deny without --reason" "$?" 2
ctl deny "$REQ" --reason "too big for a test" >"$TMP/deny.out" 2>"$TMP/deny.err" ||
	fail "deny: $(cat "$TMP/deny.out" "$TMP/deny.err")"
grep -q "denied $REQ (nodes gpu-\[1-2\])" "$TMP/deny.out" || fail "deny said: $(cat "$TMP/deny.out")"
for n in gpu-1 gpu-2; do
	expect_eq "$n reason" "$(node_reason $n)" "gpuburst: resume denied by root: too big for a test"
	state_is "$n" '^DOWN' || fail "$n: $(node_field $n State)"
done
lab scontrol hold "$JOB" >/dev/null 2>&1	# keep it from asking again at once
wait_for 15 "job $JOB requeued" '[ "$(job_state $JOB)" = PENDING ]'
expect_eq "job $JOB restarts" "$(restarts $JOB)" 1
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
expect_eq "request" "$(sql "SELECT state, reason FROM requests WHERE id='$REQ'")" "denied|denied by root: too big for a test"
expect_eq "approval" "$(sql "SELECT state, decided_by, decided_uid, comment FROM approvals WHERE request_id='$REQ'")" \
	"denied|root|0|too big for a test"
expect_eq "slurm update event" "$(sql "SELECT count(*) FROM events WHERE request_id='$REQ' AND kind='slurm_update' AND detail LIKE 'action=down nodes=gpu-[1-2] count=2 failed=0 %'")" 1
ok "denied: gpu-[1-2] DOWN with the exact reason, job $JOB requeued (PENDING, Restarts=1), nothing launched"

ctl --json reconcile --cheap >"$TMP/r.json" 2>"$TMP/r.err" || fail "reconcile: $(cat "$TMP/r.err")"
expect_eq "release actions" "$(jq_py "$TMP/r.json" "sorted((a['target'], a['done']) for a in d['actions'] if a['action'] == 'release')")" \
	'[["gpu-1", true], ["gpu-2", true]]'
for n in gpu-1 gpu-2; do
	wait_for 30 "$n idle~" 'state_is '$n' "^IDLE\+CLOUD\+POWERED_DOWN$"'
done
ok "reconcile released gpu-[1-2]: idle~ again"

lab scontrol release "$JOB" >/dev/null 2>&1 || fail "release $JOB"
lab scontrol -o show job "$JOB" >"$TMP/job.txt"
grep -q 'JobState=PENDING' "$TMP/job.txt" || fail "job $JOB: $(cat "$TMP/job.txt")"
echo "note: job $JOB after its release: $(tr ' ' '\n' <"$TMP/job.txt" | grep -E '^(Reason|BeginTime)=' | tr '\n' ' ')"
lab scancel "$JOB"
ok "job $JOB stays pending after the denial (Slurm retries it after its requeue delay)"
