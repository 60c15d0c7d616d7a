#!/bin/sh
# 20-reconcile-cooldown.sh - no g5 capacity anywhere: the node goes DOWN with
# "gpuburst: (Code:InsufficientInstanceCapacity) ... req=<id>" at once (its
# job requeues without waiting for ResumeTimeout); when slurmctld's
# ResumeTimeout overwrites the reason, gpuburst-resume-fail puts it back;
# reconcile leaves it DOWN during the cool-down and returns it to service
# (power_down_force) after; --dry-run only says so.
ICE_COOLDOWN=14s
RESUME_TIMEOUT=5
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

for az in ap-southeast-1a ap-south-1a ap-south-1b ap-northeast-1a; do
	control POST /_sim/capacity "{\"az\": \"$az\", \"instance_type\": \"g5.xlarge\", \"available\": 0}" >/dev/null ||
		fail "capacity $az"
done
JOB=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'true')
wait_for 20 "gpu-1 DOWN for capacity" 'node_reason gpu-1 | grep -q "^gpuburst: (Code:InsufficientInstanceCapacity) .* req=[0-9a-f]\{16\}$"'
REQ=$(request_of gpu-1)
node_reason gpu-1 | grep -q " req=$REQ\$" || fail "reason names another request: $(node_reason gpu-1)"
expect_eq "request" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ'")" "failed|failed|0"
wait_for 10 "job $JOB requeued" '[ "$(job_state $JOB)" = PENDING ]'
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
ok "no capacity: gpu-1 DOWN ($(node_reason gpu-1)), job $JOB requeued at once"

# ResumeTimeout: slurmctld writes its own reason and runs resume-fail
wait_for 30 "resume-fail for gpu-1" '[ "$(req_count gpu-1 resume_fail done)" = 1 ]'
wait_for 10 "capacity reason restored" 'node_reason gpu-1 | grep -q "^gpuburst: (Code:InsufficientInstanceCapacity) .* req=$REQ$"'
state_is gpu-1 '^DOWN\+CLOUD\+POWERED_DOWN' || fail "state: $(node_field gpu-1 State)"
ok "after ResumeTimeout resume-fail put the capacity reason back; gpu-1 stays DOWN"

ctl --json reconcile >"$TMP/r1.json" 2>"$TMP/r1.err" || fail "reconcile: $(cat "$TMP/r1.err")"
expect_eq "no cool-down action yet" "$(jq_py "$TMP/r1.json" "[a for a in d['actions'] if a['action'] == 'cooldown']")" "[]"
state_is gpu-1 '^DOWN' || fail "gpu-1 left DOWN too early"

END=$(sql "SELECT CAST(updated_at AS INTEGER) + 15 FROM requests WHERE id='$REQ'")
wait_for 30 "cool-down over" '[ "$(date +%s)" -ge "$END" ]'
ctl --json reconcile --dry-run >"$TMP/r2.json" 2>"$TMP/r2.err" || fail "dry run: $(cat "$TMP/r2.err")"
expect_eq "dry run" "$(jq_py "$TMP/r2.json" "[(a['target'], a['done']) for a in d['actions'] if a['action'] == 'cooldown']")" '[["gpu-1", false]]'
state_is gpu-1 '^DOWN' || fail "the dry run changed gpu-1: $(node_field gpu-1 State)"
expect_eq "no event from the dry run" "$(sql "SELECT count(*) FROM events WHERE kind='reconcile'")" 0
ok "after the cool-down, --dry-run reports the return and changes nothing"

ctl reconcile >"$TMP/r3.out" 2>"$TMP/r3.err" || fail "reconcile: $(cat "$TMP/r3.out" "$TMP/r3.err")"
grep -q "^cooldown .*gpu-1 .*done" "$TMP/r3.out" || fail "report: $(cat "$TMP/r3.out")"
wait_for 30 "gpu-1 back in service" 'state_is gpu-1 "^IDLE\+CLOUD\+POWERED_DOWN$"'
expect_eq "event" "$(sql "SELECT json_extract(detail, '\$.action') || ' ' || json_extract(detail, '\$.done') FROM events WHERE kind='reconcile' AND request_id='$REQ'")" "cooldown 1"
grep -q "reconcile action=cooldown target=gpu-1" "$TMP/gpuburst.log" || fail "not logged"
ok "reconcile returned gpu-1 to service (power_down_force) after the cool-down; logged and recorded"
