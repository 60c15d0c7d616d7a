#!/bin/sh
# 14-approval-deny.sh - a job over the threshold waits; `gpuburstctl deny
# --reason` sets its nodes DOWN with "gpuburst: resume denied by root: TEXT"
# at once, after gpuburst requeued and held the job (JobHeldAdmin, the token
# gpuburst:approval=denied/ID in its AdminComment: it does not ask again),
# nothing is launched; reconcile then powers the nodes down (idle~).  An
# administrator's release makes it ask again (gated again).  Approving the
# request of a job cancelled while it waited launches nothing, says so and
# powers its nodes down.
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
wait_for 15 "job $JOB requeued" '[ "$(job_state $JOB)" = PENDING ]'
expect_eq "job $JOB priority" "$(job_field "$JOB" Priority)" 0
wait_for 10 "the token" '[ "$(job_field "$JOB" AdminComment)" = "gpuburst:approval=denied/$REQ" ]'
grep -q "job $JOB requeued and held" "$TMP/deny.out" || fail "deny said: $(cat "$TMP/deny.out")"
grep -i "error" "$TMP/deny.out" "$TMP/deny.err" && fail "deny printed an error"
expect_eq "job $JOB restarts" "$(restarts $JOB)" 1
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
expect_eq "request" "$(sql "SELECT state, reason FROM requests WHERE id='$REQ'")" "denied|denied by root: too big for a test"
expect_eq "approval" "$(sql "SELECT state, decided_by, decided_uid, comment FROM approvals WHERE request_id='$REQ'")" \
	"denied|root|0|too big for a test"
expect_eq "slurm update event" "$(sql "SELECT count(*) FROM events WHERE request_id='$REQ' AND kind='slurm_update' AND detail LIKE 'action=down nodes=gpu-[1-2] count=2 failed=0 %'")" 1
ok "denied: gpu-[1-2] DOWN with the exact reason, job $JOB requeued and held (priority 0, gpuburst:approval=denied/$REQ, Restarts=1), nothing launched"

ctl --json reconcile --cheap >"$TMP/r.json" 2>"$TMP/r.err" || fail "reconcile: $(cat "$TMP/r.err")"
expect_eq "release actions" "$(jq_py "$TMP/r.json" "sorted((a['target'], a['done']) for a in d['actions'] if a['action'] == 'release')")" \
	'[["gpu-1", true], ["gpu-2", true]]'
for n in gpu-1 gpu-2; do
	wait_for 30 "$n idle~" 'state_is '$n' "^IDLE\+CLOUD\+POWERED_DOWN$"'
done
ok "reconcile released gpu-[1-2]: idle~ again"

# once Slurm has cleaned the job up, the next pass keeps it an operator's hold
ctl reconcile --cheap >/dev/null 2>&1 || fail "reconcile"
wait_held 20 "$JOB"
ok "job $JOB: an operator's hold ($(cat "$TMP/held.$JOB"))"

sleep 3
expect_eq "requests of job $JOB while held" "$(sql "SELECT count(*) FROM requests WHERE job_id=$JOB")" 1
# a begin time an hour away first: released, the job is pending (its nodes
# are idle~ again, so without it the scheduler may start it at once)
lab scontrol update JobId="$JOB" StartTime=now+3600 >/dev/null 2>&1 || fail "begin time of $JOB"
lab scontrol release "$JOB" >/dev/null 2>&1 || fail "release $JOB"
lab scontrol -o show job "$JOB" >"$TMP/job.txt"
grep -q 'JobState=PENDING' "$TMP/job.txt" && ! grep -q 'Reason=JobHeld' "$TMP/job.txt" ||
	fail "job $JOB: $(cat "$TMP/job.txt")"
echo "note: job $JOB after its release: $(tr ' ' '\n' <"$TMP/job.txt" | grep -E '^(Reason|BeginTime)=' | tr '\n' ' ')"
lab scancel "$JOB"
ok "job $JOB was not asked for again while held; an administrator's release makes it pending again"

# --- an approval of a job cancelled while it waited launches nothing
J2=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun hostname')
wait_for 40 "a pending approval of job $J2" '[ "$(pending $J2)" = 1 ]'
R2=$(sql "SELECT id FROM requests WHERE job_id=$J2 AND state='pending_approval'")
lab scancel "$J2"
wait_for 15 "job $J2 gone from the nodes" '[ "$(job_state $J2)" = CANCELLED ] || [ -z "$(job_state $J2)" ]'
ctl approve "$R2" >"$TMP/approve2.out" 2>&1 || fail "approve: $(cat "$TMP/approve2.out")"
grep -q "approved $R2 (nodes gpu-\[1-2\]): cancelled" "$TMP/approve2.out" &&
	grep -q "job $J2 .*: nothing launched, nodes gpu-\[1-2\] powered down" "$TMP/approve2.out" ||
	fail "approve said: $(cat "$TMP/approve2.out")"
grep -q "worker started" "$TMP/approve2.out" && fail "a worker was started: $(cat "$TMP/approve2.out")"
expect_eq "request $R2" "$(sql "SELECT state FROM requests WHERE id='$R2'")" cancelled
expect_eq "approval $R2" "$(sql "SELECT state FROM approvals WHERE request_id='$R2'")" approved
sleep 2
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
for n in gpu-1 gpu-2; do
	wait_for 30 "$n idle~" 'state_is '$n' "^IDLE\+CLOUD\+POWERED_DOWN$"'
done
ok "approving $R2 of cancelled job $J2: request cancelled, nothing launched, gpu-[1-2] idle~"
