#!/bin/sh
# 01-home-region.sh - scenario 1 (issue 10): `sbatch --gres=gpu:a10g:1`
# resumes a cloud node through gpuburst-resume; the instance is launched in
# the nodeset's home region (Singapore, given capacity here), recorded and
# tagged; its slurmd registers from the instance's private IP (NodeAddr;
# slurmctld's own from 23.11: e2e-lib expect_addr); the
# job runs there with its GPU and completes; the node is IDLE; SuspendTime
# later gpuburst-suspend terminates the instance, the record is closed with
# both timestamps, NodeAddr is cleared and the node is idle~ again.
# Also: a cloud node in no nodeset goes DOWN with a reason, nothing launched.
SUSPEND_TIME=6
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2
control POST /_sim/capacity '{"az": "ap-southeast-1a", "instance_type": "g5.xlarge", "available": 2}' >/dev/null ||
	fail "capacity"

# --- resume in the home region
JOB=$(submit --gres=gpu:a10g:1 --wrap 'echo "node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"; sleep 2')
wait_for 30 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
# where and whose job, as Slurm says, in one call: --states=all also when
# the 2 s job has ended (three calls in a row took longer than that on a
# loaded machine)
set -- $(lab squeue -h --states=all -j "$JOB" -o '%N %u %P')
NODE=${1:-} JUSER=${2:-} JPART=${3:-}
[ -n "$NODE" ] && [ -n "$JUSER" ] && [ -n "$JPART" ] ||
	fail "squeue: no node, user or partition of job $JOB: $(lab squeue -h --states=all -j "$JOB" -o '%N %u %P')"
REQ=$(request_of "$NODE")
[ -n "$REQ" ] || fail "no resume request recorded for $NODE"
expect_eq "request $REQ" "$(sql "SELECT kind, state, result, launched, job_id FROM requests WHERE id='$REQ'")" "resume|done|success|1|$JOB"
# alive: pending or running (the record keeps the state RunInstances saw)
REC=$(sql "SELECT instance_id, region, az, private_ip, state IN ('pending', 'running') FROM instances WHERE node='$NODE' AND request_id='$REQ'")
IID=${REC%%|*}
ADDR=$(sim_instances "[i['private_ip'] for i in ins if i['id'] == '$IID'][0]")
expect_eq "record" "$REC" "$IID|ap-southeast-1|ap-southeast-1a|$ADDR|1"
expect_addr "NodeAddr" "$(node_field "$NODE" NodeAddr)" "$ADDR"
case "$ADDR" in 127.42.1.*) ;; *) fail "NodeAddr $ADDR is not in Singapore's subnet 127.42.1.0/24" ;; esac
expect_eq "attempts only at home" "$(regions_tried "$REQ")" ap-southeast-1
expect_eq "sim instance" "$(sim_instances "[[i['state'], i['region'], i['private_ip'], {k: v for k, v in i['tags'].items() if k not in ('gpuburst:agent', 'gpuburst:job', 'gpuburst:user', 'gpuburst:account', 'gpuburst:partition')}] for i in ins if i['id'] == '$IID'][0]")" \
	"[\"running\", \"ap-southeast-1\", \"$ADDR\", {\"Name\": \"$NODE\", \"gpuburst:capacity\": \"on-demand\", \"gpuburst:cluster\": \"e2e\", \"gpuburst:node\": \"$NODE\", \"gpuburst:request\": \"$REQ\"}]"
# the cost tags (policy.cost_tags' defaults): whose job, as Slurm said
expect_eq "cost tags" "$(sim_instances "[[i['tags'].get(k, '-') for k in ('gpuburst:job', 'gpuburst:user', 'gpuburst:partition')] for i in ins if i['id'] == '$IID'][0]")" \
	"[\"$JOB\", \"$JUSER\", \"$JPART\"]"
expect_eq "owner recorded" "$(sql "SELECT job_user, job_partition FROM requests WHERE id='$REQ'")" "$JUSER|$JPART"
expect_eq "instances in the cloud" "$(sim_instances "len(ins)")" 1
# the instance's side: gpuburst-node found its node, checked its GPU, started slurmd
wait_for 10 "$IID's gpuburst:agent tag" \
	'[ "$(sim_instances "[i[\"tags\"].get(\"gpuburst:agent\") for i in ins if i[\"id\"] == \"$IID\"][0]")" = "ok: node $NODE, 1 x A10G, slurmd started" ]'
expect_host "NodeHostname" "$(node_field "$NODE" NodeHostName)" "$NODE"
ok "job $JOB resumed $NODE: instance $IID in the home region ap-southeast-1 at $ADDR, recorded, tagged; its agent says ok"

wait_for 30 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
grep -qx "node=$NODE gpus=0" "$LAB/jobs/slurm-$JOB.out" || fail "job output: $(cat "$LAB/jobs/slurm-$JOB.out")"
END=$(date -d "$(job_field "$JOB" EndTime)" +%s) || fail "job $JOB's EndTime: $(job_field "$JOB" EndTime)"
# idle, or already on its way down after SuspendTime on a loaded machine:
# when the instance ended is checked against the job's end below
wait_for 5 "$NODE idle" 'state_is "$NODE" "^IDLE\+CLOUD(\+POWERING_DOWN|\+POWERED_DOWN)?$"'
ok "the job ran on $NODE with its GPU and completed; $NODE is IDLE"

# --- suspend: after SuspendTime Slurm calls gpuburst-suspend
wait_for 30 "instance $IID terminated" 'sim_state $IID | grep -Eq "shutting-down|terminated"'
wait_for 20 "record of $IID closed" '[ "$(record_state $IID)" = terminated ]'
expect_eq "record times" "$(sql "SELECT launched_at > 0, terminated_at >= launched_at, reason FROM instances WHERE instance_id='$IID'")" \
	"1|1|suspended by Slurm (SuspendProgram)"
# the instance ran on while the node was idle, SuspendTime (the job's
# EndTime has whole seconds)
TERM=$(sql "SELECT CAST(terminated_at AS INTEGER) FROM instances WHERE instance_id='$IID'")
[ "$TERM" -ge $((END + SUSPEND_TIME - 1)) ] ||
	fail "instance $IID ended $((TERM - END)) s after job $JOB, before SuspendTime ($SUSPEND_TIME s)"
expect_eq "suspend request" "$(sql "SELECT state, result FROM requests r JOIN request_nodes n ON n.request_id=r.id WHERE n.node='$NODE' AND r.kind='suspend'")" "done|success"
wait_for 30 "$NODE powered down" 'state_is "$NODE" "^IDLE\+CLOUD\+POWERED_DOWN$"'
expect_eq "NodeAddr cleared" "$(node_field "$NODE" NodeAddr)" "$NODE"
wait_for 10 "instance $IID terminated in the cloud" '[ "$(sim_state $IID)" = terminated ]'
expect_eq "live instances" "$(sim_instances "len([i for i in ins if i['state'] != 'terminated'])")" 0
ok "suspend terminated $IID SuspendTime after the job ($((TERM - END)) s), closed its record (launched_at, terminated_at), cleared NodeAddr; $NODE is idle~"

# --- cost: instance-seconds x the price file's price, by user and by job
printf '%s\n' "gpuburst-prices 1" "refreshed 2026-12-01T00:00:00Z" "source e2e" \
	"ap-southeast-1 g5.xlarge on-demand 36" >"$STATE/prices"
SECS=$(sql "SELECT terminated_at - launched_at FROM instances WHERE instance_id='$IID'")
ctl --json cost --by user --since 1d >"$TMP/cost.json" 2>"$TMP/cost.err" || fail "gpuburstctl cost: $(cat "$TMP/cost.err")"
expect_eq "cost by user" "$("$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1])); r = d["rows"]
print(len(r), r[0]["user"], r[0]["instances"], abs(r[0]["usd"] - float(sys.argv[2]) * 0.01) < 1e-6,
      abs(d["total"]["instance_hours"] * 3600 - float(sys.argv[2])) < 1e-3)' "$TMP/cost.json" "$SECS")" \
	"1 $JUSER 1 True True"
ctl cost --by job --since 1d | grep -Eq "^$JOB +1 " || fail "gpuburstctl cost --by job: $(ctl cost --by job --since 1d)"
ok "gpuburstctl cost: $JUSER's job $JOB cost its instance's $SECS s x 0.01 USD, by user and by job"

# --- a cloud node in no nodeset: DOWN with a reason, nothing launched
N_BEFORE=$(sim_instances "len(ins)")
lab scontrol update nodename=cpu-1 state=power_up || fail "power_up cpu-1"
wait_for 20 "cpu-1 DOWN" 'node_reason cpu-1 | grep -qF "gpuburst: node in no nodeset of $CONF"'
expect_eq "nothing launched for cpu-1" "$(sim_instances "len(ins)")" "$N_BEFORE"
sql "SELECT detail FROM events WHERE kind='slurm_update' AND request_id IS NULL" | grep -q "^action=down nodes=cpu-1 count=1 failed=0 " ||
	fail "the DOWN of cpu-1 was not recorded"
ok "cpu-1 (no nodeset) went DOWN with a reason; nothing launched"

# --- a broken gpuburst.yaml: the node goes DOWN with the error itself as its
# reason (syslog may go nowhere), nothing launched
OTHER=gpu-1
[ "$NODE" = gpu-1 ] && OTHER=gpu-2
cp "$CONF" "$TMP/good.yaml"
echo "no_such_key: 1" >>"$CONF"
LINE=$(wc -l <"$CONF")
N_BEFORE=$(sim_instances "len(ins)")
lab scontrol update nodename="$OTHER" state=power_up || fail "power_up $OTHER"
wait_for 20 "$OTHER DOWN" 'node_reason '"$OTHER"' | grep -qF "gpuburst: configuration error: $CONF:$LINE:1: unknown key '"'"'no_such_key'"'"'"'
expect_eq "nothing launched for $OTHER" "$(sim_instances "len(ins)")" "$N_BEFORE"
cp "$TMP/good.yaml" "$CONF"
ok "a broken configuration: $OTHER DOWN with the error (file:line:col) as its reason"
