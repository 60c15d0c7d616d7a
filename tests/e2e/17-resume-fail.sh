#!/bin/sh
# 17-resume-fail.sh - an instance launches but its slurmd never registers:
# ResumeTimeout, slurmctld runs gpuburst-resume-fail, which terminates the
# instance, closes its record, records the failure in capacity memory and
# returns the node to service with state=power_down_force (a plain
# state=resume would leave it POWERED_DOWN+NOT_RESPONDING).
RESUME_TIMEOUT=6
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

touch "$TMP/fail-nodes/gpu-2"		# its UserData sleeps instead of slurmd
JOB=$(submit -w gpu-2 --gres=gpu:a10g:1 --wrap 'true')
wait_for 20 "instance for gpu-2" '[ -n "$(instance_of gpu-2)" ]'
IID=$(instance_of gpu-2)
REGION=$(sql "SELECT region FROM instances WHERE instance_id='$IID'")
AZ=$(sql "SELECT az FROM instances WHERE instance_id='$IID'")
wait_for 10 "instance $IID running" '[ "$(sim_state $IID)" = running ]'
state_is gpu-2 'POWERING_UP' || fail "gpu-2 should be powering up: $(node_field gpu-2 State)"
ok "gpu-2 got instance $IID ($REGION/$AZ), whose slurmd never starts"

wait_for 30 "resume-fail terminated $IID" 'sim_state $IID | grep -Eq "shutting-down|terminated"'
wait_for 10 "record closed" '[ "$(record_state $IID)" = terminated ]'
expect_eq "record" "$(sql "SELECT terminated_at > launched_at, reason FROM instances WHERE instance_id='$IID'")" \
	"1|resume failed: the node did not register within ResumeTimeout"
expect_eq "resume_fail request" "$(sql "SELECT r.state FROM requests r JOIN request_nodes n ON n.request_id=r.id WHERE n.node='gpu-2' AND r.kind='resume_fail'")" done
expect_eq "capacity memory" "$(sql "SELECT failures > 0 FROM capacity_stats WHERE region='$REGION' AND az='$AZ' AND instance_type='g5.xlarge'")" 1
ok "resume-fail terminated $IID, closed its record and recorded the failure for $REGION/$AZ"

# power_down_force: POWERING_DOWN, then idle~ and schedulable, not down~
wait_for 30 "gpu-2 back in service" 'state_is gpu-2 "^IDLE\+CLOUD\+POWERED_DOWN$"'
expect_eq "NodeAddr cleared" "$(node_field gpu-2 NodeAddr)" gpu-2
node_reason gpu-2 | grep -q "gpuburst: back in service after a failed resume" ||
	fail "reason: $(node_reason gpu-2)"
expect_eq "job requeued" "$(job_state "$JOB")" PENDING
ok "gpu-2 was recovered with power_down_force: idle~, job $JOB requeued"
