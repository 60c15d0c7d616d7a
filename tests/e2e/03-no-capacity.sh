#!/bin/sh
# 03-no-capacity.sh - scenario 3 (issue 10): no g5.xlarge capacity anywhere
# in the fallback group.  A 2-node job's nodes go DOWN at once with
# "gpuburst: (Code:InsufficientInstanceCapacity) ... req=<id>" and Slurm
# requeues the job (PENDING with Restarts >= 1, never FAILED); nothing is
# launched (Osaka, outside the group, keeps its capacity untouched).
# Reconcile leaves the nodes DOWN during the capacity cool-down; capacity
# appears in Mumbai, the cool-down ends, reconcile returns the nodes to
# service (power_down_force -> idle~), the job is scheduled again, resumes
# both nodes in Mumbai and completes.
ICE_COOLDOWN=12s
RESUME_TIMEOUT=8
CRED_EXPIRE=5		# a requeued batch job may start again 6 s later
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2

restarts() { lab scontrol -o show job "$1" | tr ' ' '\n' | sed -n 's/^Restarts=//p'; }
capacity() {	# capacity AZ N
	control POST /_sim/capacity "{\"az\": \"$1\", \"instance_type\": \"g5.xlarge\", \"available\": $2}" >/dev/null ||
		fail "capacity $1"
}
for az in ap-southeast-1a ap-south-1a ap-south-1b ap-northeast-1a; do capacity "$az" 0; done

JOB=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun sh -c "echo \$SLURMD_NODENAME"')
for n in gpu-1 gpu-2; do
	wait_for 20 "$n DOWN for capacity" 'node_reason '$n' | grep -q "^gpuburst: (Code:InsufficientInstanceCapacity) .* req=[0-9a-f]\{16\}$"'
done
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB AND kind='resume'")
node_reason gpu-1 | grep -q " req=$REQ\$" || fail "reason names another request: $(node_reason gpu-1)"
expect_eq "request" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ'")" "failed|failed|0"
wait_for 15 "job $JOB requeued" '[ "$(job_state $JOB)" = PENDING ]'
[ "$(restarts "$JOB")" -ge 1 ] || fail "job $JOB was not requeued: Restarts=$(restarts "$JOB")"
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
expect_eq "Osaka untouched" "$(sql "SELECT count(*) FROM attempts WHERE region='ap-northeast-3'")" 0
ok "no capacity: gpu-[1-2] DOWN ($(node_reason gpu-1)), job $JOB requeued (PENDING, Restarts=$(restarts "$JOB")), nothing launched"

# during the cool-down reconcile keeps them DOWN (a timer would run it
# every minute; here it runs now)
ctl --json reconcile >"$TMP/r1.json" 2>"$TMP/r1.err" || fail "reconcile: $(cat "$TMP/r1.err")"
expect_eq "no cool-down action yet" "$(jq_py "$TMP/r1.json" "[a for a in d['actions'] if a['action'] == 'cooldown']")" "[]"
state_is gpu-1 '^DOWN' || fail "gpu-1 left DOWN too early: $(node_field gpu-1 State)"
expect_eq "job $JOB still pending" "$(job_state "$JOB")" PENDING
ok "reconcile during the cool-down: the nodes stay DOWN, the job waits"

# capacity comes back in Mumbai; reconcile after the cool-down
capacity ap-south-1a 1
capacity ap-south-1b 1
END=$(sql "SELECT CAST(updated_at AS INTEGER) + 13 FROM requests WHERE id='$REQ'")
wait_for 30 "cool-down over" '[ "$(date +%s)" -ge "$END" ]'
ctl reconcile >"$TMP/r2.out" 2>"$TMP/r2.err" || fail "reconcile: $(cat "$TMP/r2.out" "$TMP/r2.err")"
grep -q "^cooldown .*gpu-\[1-2\] .*done" "$TMP/r2.out" || grep -q "^cooldown .*gpu-1 .*done" "$TMP/r2.out" ||
	fail "reconcile report: $(cat "$TMP/r2.out")"
ok "after the cool-down reconcile returned the nodes to service"

wait_for 60 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
REQ2=$(sql "SELECT id FROM requests WHERE job_id=$JOB AND kind='resume' AND id != '$REQ' ORDER BY created_at DESC LIMIT 1")
[ -n "$REQ2" ] || fail "no second resume request for job $JOB"
expect_eq "second request" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ2'")" "done|success|2"
expect_eq "instances of the job" "$(sql "SELECT group_concat(node || ':' || region, ' ') FROM (SELECT node, region FROM instances WHERE request_id='$REQ2' AND node IS NOT NULL ORDER BY node)")" \
	"gpu-1:ap-south-1 gpu-2:ap-south-1"
grep -q "^gpu-1$" "$LAB/jobs/slurm-$JOB.out" && grep -q "^gpu-2$" "$LAB/jobs/slurm-$JOB.out" ||
	fail "job output: $(cat "$LAB/jobs/slurm-$JOB.out")"
ok "job $JOB ran on instances in Mumbai once capacity was back (restarts: $(restarts "$JOB"))"
