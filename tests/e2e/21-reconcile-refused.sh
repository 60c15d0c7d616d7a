#!/bin/sh
# 21-reconcile-refused.sh - the cloud refuses the launch itself
# (UnauthorizedOperation on RunInstances: a missing IAM permission).  The
# node goes DOWN naming the code; reconcile gives it back to Slurm after
# policy.error_cooldown, then after twice that when it fails again (the
# back-off), and once the permission is fixed the next power-up launches:
# the node heals without a human.  A node gpuburst does not own (site-1)
# DOWN with a reason that looks like gpuburst's is never touched.  A node
# left DOWN because gpuburst's state file was unusable is released after
# policy.error_cooldown.
ERROR_COOLDOWN=6s
ERROR_COOLDOWN_MAX=1h
SUSPEND_TIME=600
RESUME_TIMEOUT=300
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --site

control POST /_sim/fault '{"kind": "error", "code": "UnauthorizedOperation", "action": "RunInstances", "count": 1000, "message": "You are not authorized to perform this operation."}' >/dev/null ||
	fail "fault"

# power_up N: a jobless resume of gpu-1; wait for it to end DOWN again
power_up() {
	lab scontrol update nodename=gpu-1 state=power_up || fail "power_up ($1)"
	wait_for 60 "gpu-1 DOWN for the refusal ($1)" \
		'node_reason gpu-1 | grep -q "^gpuburst: (Code:UnauthorizedOperation) You are not authorized.* req=[0-9a-f]\{16\}$"'
	REQ=$(request_of gpu-1)
}
# reconcile_json FILE
reconcile_json() { ctl --json reconcile >"$1" 2>"$1.err" || fail "reconcile: $(cat "$1.err")"; }
cooldowns() { jq_py "$1" "[(a['target'], a['detail'].split(', ')[-1], a['done']) for a in d['actions'] if a['action'] == 'cooldown']"; }
# retries N: the cool-down actions recorded for failure N in a row, by any
# pass (ours, or the worker's own cheap one after it drains)
retries() {
	sql "SELECT json_extract(detail, '\$.node') || ' ' || json_extract(detail, '\$.done') FROM events WHERE kind='reconcile' AND json_extract(detail, '\$.action')='cooldown' AND json_extract(detail, '\$.detail') LIKE '%failed resume $1 in a row, retry after %'"
}

power_up 1
expect_eq "request 1" "$(sql "SELECT state, result FROM requests WHERE id='$REQ'")" "failed|failed"
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
ok "refused launch: gpu-1 DOWN ($(node_reason gpu-1))"

# a node of the site's, DOWN with a reason that looks like ours
lab scontrol update nodename=site-1 state=down reason="gpuburst: (Code:AUTH) (Code:UnauthorizedOperation) x req=0123456789abcdef" ||
	fail "site-1 down"

reconcile_json "$TMP/r0.json"
expect_eq "no action during the cool-down" "$(cooldowns "$TMP/r0.json")" "[]"
expect_eq "no retry yet" "$(retries 1)" ""
END=$(sql "SELECT CAST(updated_at AS INTEGER) + 7 FROM requests WHERE id='$REQ'")
wait_for 20 "error cool-down over" '[ "$(date +%s)" -ge "$END" ]'
reconcile_json "$TMP/r1.json"
expect_eq "first retry" "$(retries 1)" "gpu-1 1"
sql "SELECT detail FROM events WHERE kind='reconcile'" |
	grep -q "the cloud refused the launch (Code:UnauthorizedOperation), failed resume 1 in a row, retry after 6 s" ||
	fail "detail: $(sql "SELECT detail FROM events WHERE kind='reconcile'")"
wait_for 30 "gpu-1 back (idle~)" 'state_is gpu-1 "^IDLE\+CLOUD\+POWERED_DOWN$"'
node_reason gpu-1 | grep -q "^gpuburst: retry after Code:UnauthorizedOperation (failure 1 in a row) req=$REQ" ||
	fail "reason after the retry: $(node_reason gpu-1)"
state_is site-1 "^DOWN" || fail "site-1 touched: $(node_field site-1 State)"
ok "after policy.error_cooldown (6 s) reconcile gave gpu-1 back to Slurm; site-1 (not ours) left DOWN"

power_up 2
reconcile_json "$TMP/r2.json"
END=$(sql "SELECT CAST(updated_at AS INTEGER) + 7 FROM requests WHERE id='$REQ'")
wait_for 20 "6 s after the second failure" '[ "$(date +%s)" -ge "$END" ]'
reconcile_json "$TMP/r3.json"
expect_eq "no retry after 6 s the second time" "$(retries 2)" ""
END=$(sql "SELECT CAST(updated_at AS INTEGER) + 13 FROM requests WHERE id='$REQ'")
wait_for 20 "12 s after the second failure" '[ "$(date +%s)" -ge "$END" ]'
reconcile_json "$TMP/r4.json"
expect_eq "second retry" "$(retries 2)" "gpu-1 1"
sql "SELECT detail FROM events WHERE kind='reconcile'" | grep -q "failed resume 2 in a row, retry after 12 s" ||
	fail "detail: $(sql "SELECT detail FROM events WHERE kind='reconcile'")"
wait_for 30 "gpu-1 back again" 'state_is gpu-1 "^IDLE\+CLOUD\+POWERED_DOWN$"'
ok "the second failure in a row waited twice as long (12 s)"

# the permission is fixed: the next job launches
control DELETE /_sim/fault >/dev/null || fail "clear faults"
JOB=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'true')
wait_for 60 "job $JOB done" 'job_state $JOB | grep -Eq "^(COMPLETED|COMPLETING)$" || [ -z "$(job_state $JOB)" ]'
[ -n "$(sql "SELECT instance_id FROM instances WHERE node='gpu-1'")" ] || fail "no instance for gpu-1"
ok "permission fixed: job $JOB ran on gpu-1, no human in between"

# the state file unusable for a resume (its reason), then usable again
lab scontrol update nodename=gpu-2 state=down reason="gpuburst: cannot queue the resume (state file), see the log" ||
	fail "gpu-2 down"
reconcile_json "$TMP/r5.json"
expect_eq "not yet released" "$(jq_py "$TMP/r5.json" "[a['target'] for a in d['actions'] if a['action'] == 'release']")" "[]"
sleep 7
reconcile_json "$TMP/r6.json"
expect_eq "released" "$(jq_py "$TMP/r6.json" "[(a['target'], a['done']) for a in d['actions'] if a['action'] == 'release']")" '[["gpu-2", true]]'
wait_for 30 "gpu-2 back (idle~)" 'state_is gpu-2 "^IDLE\+CLOUD\+POWERED_DOWN$"'
state_is site-1 "^DOWN" || fail "site-1 touched: $(node_field site-1 State)"
ok "a node left DOWN for the state file came back after policy.error_cooldown; site-1 still untouched"
exit 0
