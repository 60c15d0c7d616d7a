#!/bin/sh
# 11-terminate-jobs.sh - `gpuburstctl terminate` on a node that runs a job:
# the preview lists the job; --yes alone refuses (7, BUSY) and terminates
# nothing; --yes --force terminates the instance and sets the node DOWN at
# once, so Slurm requeues the job now (not after SlurmdTimeout), then
# powers the node down (idle~, ready for the next job): a second job asking
# for that node runs on it, on a fresh instance.
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

JOB=$(submit --gres=gpu:a10g:1 --wrap 'sleep 300')
wait_for 30 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
NODE=$(lab squeue -h -j "$JOB" -o %N)
IID=$(instance_of "$NODE")

ctl terminate "$NODE" >"$TMP/pre.out" 2>"$TMP/pre.err"
expect_eq "preview exit" "$?" 28
grep -q "^1 job on these nodes will end" "$TMP/pre.out" || fail "preview: $(cat "$TMP/pre.out")"
grep -Eq "^ +$JOB +root +wrap +RUNNING +$NODE +requeue" "$TMP/pre.out" || fail "preview job row: $(cat "$TMP/pre.out")"
ctl --json terminate "$NODE" >"$TMP/pre.json" 2>/dev/null
expect_eq "preview json jobs" "$(jq_py "$TMP/pre.json" "[(j['job_id'], j['nodes'], j['requeue']) for j in d['jobs']]")" \
	"[[$JOB, \"$NODE\", true]]"
ok "the preview lists job $JOB on $NODE"

ctl terminate "$NODE" --yes >"$TMP/yes.out" 2>"$TMP/yes.err"
expect_eq "--yes exit" "$?" 7
grep -q "1 job run on these nodes: not terminated; add --force" "$TMP/yes.err" || fail "--yes: $(cat "$TMP/yes.err")"
expect_eq "instance after --yes" "$(record_state "$IID")" pending
expect_eq "job after --yes" "$(job_state "$JOB")" RUNNING
ok "--yes alone refused (7): instance and job untouched"

T0=$(date +%s)
ctl terminate "$NODE" --yes --force --reason "disk full" >"$TMP/f.out" 2>"$TMP/f.err" ||
	fail "--force: $(cat "$TMP/f.out" "$TMP/f.err")"
grep -q "terminated 1 of 1 instances" "$TMP/f.out" || fail "--force: $(cat "$TMP/f.out")"
wait_for 10 "job $JOB requeued" 'job_state $JOB | grep -Eq "^(PENDING|REQUEUED|CONFIGURING)$"'
T1=$(date +%s)
[ $((T1 - T0)) -lt 15 ] || fail "job requeued after $((T1 - T0)) s"
expect_eq "record closed" "$(record_state "$IID")" terminated
REQ=$(sql "SELECT id FROM requests WHERE kind='terminate'")
# the worker's terminate flow, so the worker's events: one per update
expect_eq "slurm_update events" \
	"$(sql "SELECT group_concat(json_extract(detail, '\$.action') || ' ' || json_extract(detail, '\$.nodes') || ' ' || json_extract(detail, '\$.failed') || ' ' || json_extract(detail, '\$.reason'), '|') FROM events WHERE request_id='$REQ' AND kind='slurm_update' AND json_extract(detail, '\$.action') IN ('down', 'power_down_force')")" \
	"down $NODE 0 gpuburst: terminated by root: disk full req=$REQ|power_down_force $NODE 0 gpuburst: terminated by root: disk full req=$REQ"
ok "--yes --force: $IID terminated, job $JOB requeued within $((T1 - T0)) s, node set DOWN then powered down"

# Slurm holds a requeued job until its credential expires (BeginTime,
# CredExpire + 1 s); the node itself is back at once: a job asking for it
# runs on a fresh instance.
wait_for 15 "requeued job $JOB held for BeginTime" 'job_field "$JOB" Reason | grep -q BeginTime'
wait_for 30 "$NODE powered down" 'state_is "$NODE" "^IDLE\+CLOUD\+POWERED_DOWN$"'
JOB2=$(submit --gres=gpu:a10g:1 -w "$NODE" --wrap 'sleep 300')
wait_for 60 "job $JOB2 running on $NODE" '[ "$(job_state $JOB2)" = RUNNING ]'
IID2=$(instance_of "$NODE")
[ -n "$IID2" ] && [ "$IID2" != "$IID" ] || fail "job $JOB2 on $NODE: instance '$IID2' (was $IID)"
ok "$NODE came back: job $JOB2 runs on it on a fresh instance $IID2"
lab scancel "$JOB" "$JOB2"
exit 0
