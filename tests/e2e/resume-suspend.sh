#!/bin/sh
# resume-suspend.sh - a GPU job resumes a cloud node through gpuburst-resume
# (instance in the nearest region with capacity, NodeAddr = its private IP,
# recorded, tagged), runs on it, then SuspendTime later gpuburst-suspend
# terminates the instance, closes the record and clears NodeAddr; a job's
# home-region intent (AdminComment) moves its instance; a node in no
# nodeset goes DOWN with a reason.
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

# --- resume: Singapore (home) has no g5 capacity, Mumbai is nearest
JOB=$(submit --gres=gpu:a10g:1 --wrap 'echo "node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"; sleep 3')
wait_for 30 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
NODE=$(lab squeue -h -j "$JOB" -o %N)
ADDR=$(node_field "$NODE" NodeAddr)
REQ=$(request_of "$NODE")
[ -n "$REQ" ] || fail "no resume request recorded for $NODE"
expect_eq "request $REQ" "$(sql "SELECT kind, state, result, launched, job_id FROM requests WHERE id='$REQ'")" "resume|done|success|1|$JOB"
# alive: pending or running (the record keeps the state RunInstances saw)
REC=$(sql "SELECT instance_id, region, private_ip, state IN ('pending', 'running') FROM instances WHERE node='$NODE' AND request_id='$REQ'")
IID=${REC%%|*}
expect_eq "record" "$REC" "$IID|ap-south-1|$ADDR|1"
expect_eq "NodeAddr is the instance's private IP" "$(sim_instances "[i['private_ip'] for i in ins if i['id'] == '$IID'][0]")" "$ADDR"
expect_eq "sim instance" "$(sim_instances "[[i['state'], i['region'], i['tags']] for i in ins if i['id'] == '$IID'][0]")" \
	"[\"running\", \"ap-south-1\", {\"Name\": \"$NODE\", \"gpuburst:cluster\": \"e2e\", \"gpuburst:node\": \"$NODE\", \"gpuburst:request\": \"$REQ\"}]"
expect_eq "NodeHostname" "$(node_field "$NODE" NodeHostName)" "$NODE"
ok "job $JOB resumed $NODE: instance $IID in ap-south-1 at $ADDR, recorded, tagged"

wait_for 30 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
grep -qx "node=$NODE gpus=0" "$LAB/jobs/slurm-$JOB.out" || fail "job output: $(cat "$LAB/jobs/slurm-$JOB.out")"
ok "the job ran on $NODE with its GPU"

# --- suspend: after SuspendTime (3 s) Slurm calls gpuburst-suspend
wait_for 30 "instance $IID terminated" 'sim_state $IID | grep -Eq "shutting-down|terminated"'
wait_for 20 "record of $IID closed" '[ "$(record_state $IID)" = terminated ]'
expect_eq "record times" "$(sql "SELECT launched_at > 0, terminated_at >= launched_at, reason FROM instances WHERE instance_id='$IID'")" \
	"1|1|suspended by Slurm (SuspendProgram)"
expect_eq "suspend request" "$(sql "SELECT state, result FROM requests r JOIN request_nodes n ON n.request_id=r.id WHERE n.node='$NODE' AND r.kind='suspend'")" "done|success"
wait_for 30 "$NODE powered down" 'state_is "$NODE" "^IDLE\+CLOUD\+POWERED_DOWN$"'
expect_eq "NodeAddr cleared" "$(node_field "$NODE" NodeAddr)" "$NODE"
ok "suspend terminated $IID, closed its record (both timestamps), cleared NodeAddr; $NODE is idle~"

# --- the job's home-region intent (job_submit/gpuburst writes it)
JOB2=$(submit --hold --gres=gpu:a10g:1 --wrap 'true')
lab scontrol update jobid="$JOB2" admincomment="routed;gpuburst:home=ap-northeast-1" || fail "admincomment"
lab scontrol release "$JOB2" || fail "release"
wait_for 30 "job $JOB2 done" '[ "$(job_state $JOB2)" = COMPLETED ]'
REQ2=$(sql "SELECT id FROM requests WHERE job_id=$JOB2 AND kind='resume'")
expect_eq "intent event" "$(sql "SELECT detail FROM events WHERE request_id='$REQ2' AND kind='intent'")" \
	"{\"job\":$JOB2,\"home_region\":\"ap-northeast-1\"}"
expect_eq "instance region" "$(sql "SELECT region FROM instances WHERE request_id='$REQ2'")" ap-northeast-1
ok "job $JOB2's AdminComment gpuburst:home=ap-northeast-1 moved its instance to ap-northeast-1"

# --- a cloud node in no nodeset: DOWN with a reason, nothing launched
N_BEFORE=$(sim_instances "len(ins)")
lab scontrol update nodename=cpu-1 state=power_up || fail "power_up cpu-1"
wait_for 20 "cpu-1 DOWN" 'node_reason cpu-1 | grep -qF "gpuburst: node in no nodeset of $CONF"'
expect_eq "nothing launched for cpu-1" "$(sim_instances "len(ins)")" "$N_BEFORE"
sql "SELECT detail FROM events WHERE kind='slurm_update' AND request_id IS NULL" | grep -q "^action=down nodes=cpu-1 count=1 failed=0 " ||
	fail "the DOWN of cpu-1 was not recorded"
ok "cpu-1 (no nodeset) went DOWN with a reason; nothing launched"
