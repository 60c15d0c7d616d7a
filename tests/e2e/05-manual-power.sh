#!/bin/sh
# 05-manual-power.sh - scenario 5 (issue 10): an administrator powers
# nodes up and down by hand.  `scontrol update nodename=gpu-[1-2]
# state=power_up` makes slurmctld run gpuburst-resume without a job: one
# jobless request, two instances, both nodes register at their instances'
# addresses and stay IDLE (SuspendTime is long here); a job then runs on
# gpu-1 without any new launch.  `scontrol update ... state=power_down`
# runs gpuburst-suspend: both instances terminated, records closed, the
# nodes idle~ with their addresses cleared.
SUSPEND_TIME=120
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2

lab scontrol update nodename=gpu-[1-2] state=power_up || fail "power_up"
for n in gpu-1 gpu-2; do
	wait_for 30 "$n up" 'state_is '$n' "^IDLE\+CLOUD$"'
done
REQ=$(request_of gpu-1)
expect_eq "one jobless request for both" "$(sql "SELECT count(*), job_id, state, result, launched FROM requests WHERE kind='resume'")" "1|0|done|success|2"
expect_eq "gpu-2's request" "$(request_of gpu-2)" "$REQ"
for n in gpu-1 gpu-2; do
	IID=$(sql "SELECT instance_id FROM instances WHERE node='$n' AND state IN ('pending', 'running')")
	[ -n "$IID" ] || fail "no live record for $n"
	IP=$(sim_instances "[i['private_ip'] for i in ins if i['id'] == '$IID'][0]")
	expect_eq "$n record's address" "$(sql "SELECT private_ip FROM instances WHERE instance_id='$IID'")" "$IP"
	expect_addr "$n NodeAddr" "$(node_field "$n" NodeAddr)" "$IP"
	expect_eq "$n instance" "$(sim_state "$IID")" running
done
LIVE=$(sim_instances "len([i for i in ins if i['state'] == 'running'])")
expect_eq "live instances" "$LIVE" 2
ok "power_up: one jobless request $REQ, two instances, gpu-[1-2] IDLE at their instances' addresses"

N_RUN=$(sql "SELECT count(*) FROM attempts")
JOB=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'echo "on $SLURMD_NODENAME"')
wait_for 20 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
grep -qx "on gpu-1" "$LAB/jobs/slurm-$JOB.out" || fail "job output: $(cat "$LAB/jobs/slurm-$JOB.out")"
expect_eq "no new launch for the job" "$(sql "SELECT count(*) FROM attempts")" "$N_RUN"
expect_eq "no new request for the job" "$(sql "SELECT count(*) FROM requests WHERE kind='resume'")" 1
ok "job $JOB ran on the powered-up gpu-1 at once; nothing launched for it"

lab scontrol update nodename=gpu-[1-2] state=power_down || fail "power_down"
for n in gpu-1 gpu-2; do
	wait_for 30 "$n idle~" 'state_is '$n' "^IDLE\+CLOUD\+POWERED_DOWN$"'
	expect_eq "$n NodeAddr cleared" "$(node_field "$n" NodeAddr)" "$n"
done
expect_eq "records closed" "$(sql "SELECT count(*), sum(state = 'terminated'), sum(terminated_at >= launched_at AND launched_at > 0), min(reason) FROM instances WHERE request_id='$REQ' AND node IS NOT NULL")" \
	"2|2|2|suspended by Slurm (SuspendProgram)"
expect_eq "suspend request" "$(sql "SELECT count(*), state, result FROM requests WHERE kind='suspend'")" "1|done|success"
wait_for 10 "instances terminated in the cloud" '[ "$(sim_instances "len([i for i in ins if i[\"state\"] != \"terminated\"])")" = 0 ]'
ok "power_down: both instances terminated, records closed, gpu-[1-2] idle~ with addresses cleared"
