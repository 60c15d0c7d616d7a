#!/bin/sh
# 22-reconcile-lost.sh - an instance terminated behind gpuburst's back (the
# console, a spot reclaim) while its node runs a job: reconcile closes the
# record as lost, sets the node DOWN (the job requeues) and then powers it
# down; --dry-run only reports.  The instance is well inside ORPHAN_TIMEOUT
# (10 min): the cloud listing it terminated counts at any age past 30 s
# (the grace that keeps an extra the worker is terminating itself from
# counting); only a record missing from the listing waits ORPHAN_TIMEOUT.
ORPHAN_TIMEOUT=10m
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

JOB=$(submit --gres=gpu:a10g:1 --wrap 'sleep 300')
wait_for 30 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
NODE=$(lab squeue -h -j "$JOB" -o %N)
IID=$(instance_of "$NODE")
REGION=$(sql "SELECT region FROM instances WHERE instance_id='$IID'")
REQ=$(request_of "$NODE")
expect_eq "record launched pending" "$(sql "SELECT state FROM instances WHERE instance_id='$IID'")" pending
ctl reconcile >"$TMP/r0.out" 2>"$TMP/r0.err" || fail "reconcile: $(cat "$TMP/r0.out" "$TMP/r0.err")"
grep -q "^records: 1 pending instance now running" "$TMP/r0.out" || fail "report: $(cat "$TMP/r0.out")"
expect_eq "record follows the cloud" "$(sql "SELECT state FROM instances WHERE instance_id='$IID'")" running
ok "reconcile marked the record of $IID running, as the cloud lists it"
REGION=$REGION awsc ec2 terminate-instances --instance-ids "$IID" >"$TMP/term.json" 2>"$TMP/term.err" ||
	fail "terminate-instances: $(cat "$TMP/term.err")"
wait_for 10 "instance gone" 'sim_state $IID | grep -Eq "shutting-down|terminated"'
ok "instance $IID of $NODE terminated behind gpuburst's back (aws ec2 terminate-instances)"
LAUNCHED=$(sql "SELECT CAST(launched_at AS INTEGER) FROM instances WHERE instance_id='$IID'")
wait_for 40 "instance $IID 30 s old" '[ $(date +%s) -gt $((LAUNCHED + 31)) ]'

ctl --json reconcile --dry-run >"$TMP/dry.json" 2>"$TMP/dry.err" || fail "dry run: $(cat "$TMP/dry.err")"
expect_eq "dry run" "$(jq_py "$TMP/dry.json" "[(a['action'], a['target'], a['node'], a['done']) for a in d['actions']]")" \
	"[[\"lost\", \"$REGION#$IID\", \"$NODE\", false]]"
expect_eq "record untouched by the dry run" "$(sql "SELECT state IN ('pending', 'running') FROM instances WHERE instance_id='$IID'")" 1
expect_eq "job untouched by the dry run" "$(job_state "$JOB")" RUNNING

ctl reconcile >"$TMP/r.out" 2>"$TMP/r.err" || fail "reconcile: $(cat "$TMP/r.out" "$TMP/r.err")"
grep -q "^lost .*$IID .*$NODE .*done" "$TMP/r.out" || fail "report: $(cat "$TMP/r.out")"
expect_eq "record closed" "$(sql "SELECT state, terminated_at > launched_at FROM instances WHERE instance_id='$IID'")" "lost|1"
sql "SELECT reason FROM instances WHERE instance_id='$IID'" | grep -q "gone from the cloud" || fail "record reason"
expect_eq "DOWN then power_down_force" "$(sql "SELECT group_concat(json_extract(detail, '\$.action'), ',') FROM events WHERE request_id='$REQ' AND kind='slurm_update' AND json_extract(detail, '\$.action') IN ('down', 'power_down_force')")" "down,power_down_force"
wait_for 10 "job $JOB requeued" '[ "$(job_state $JOB)" = PENDING ]'
wait_for 30 "$NODE powered down" 'state_is "$NODE" "^IDLE\+CLOUD\+POWERED_DOWN$"'
expect_eq "reconcile event" "$(sql "SELECT json_extract(detail, '\$.action') FROM events WHERE kind='reconcile' AND request_id='$REQ'")" lost
ok "reconcile closed the lost record, set $NODE DOWN (job $JOB requeued) and powered it down"
