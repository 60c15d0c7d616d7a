#!/bin/sh
# 18-rerun.sh - slurmctld may run ResumeProgram again for a node that is
# already up (after a restart): gpuburst-resume run again by hand, with
# SLURM_CONF, for a node with a live instance launches nothing and puts the
# node's address back.
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

JOB=$(submit --gres=gpu:a10g:1 --wrap 'sleep 60')
wait_for 30 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
NODE=$(lab squeue -h -j "$JOB" -o %N)
IID=$(sql "SELECT instance_id FROM instances WHERE node='$NODE' AND state IN ('pending', 'running')")
# what gpuburst re-applies: the instance's address (on every release; from
# 23.11 slurmctld shows the registration's until then: registered_addr)
ADDR=$(sql "SELECT private_ip FROM instances WHERE instance_id='$IID'")
expect_addr "NodeAddr after registration" "$(node_field "$NODE" NodeAddr)" "$ADDR"
# (the launch may have made and terminated an extra instance: count all)
N_SIM=$(sim_instances "len(ins)")
N_REC=$(sql "SELECT count(*) FROM instances")
expect_eq "live instances before" "$(sim_instances "sorted(i['id'] for i in ins if i['state'] in ('pending', 'running'))")" "[\"$IID\"]"

# Lose the address (as after a slurmctld restart with stale state), then
# run the program by hand as slurmctld would, minus the resume file.
lab scontrol update nodename="$NODE" nodeaddr="$NODE" || fail "scontrol update"
expect_eq "address dropped" "$(node_field "$NODE" NodeAddr)" "$NODE"
wait_for 20 "the first worker is gone" 'no_worker'
lab env -u SLURM_RESUME_FILE "$RESUME" -c "$CONF" "$NODE" >"$TMP/rerun.out" 2>"$TMP/rerun.err"
rc=$?
expect_eq "exit status" "$rc" 0
[ -s "$TMP/rerun.out" ] || [ -s "$TMP/rerun.err" ] && fail "the program printed: $(cat "$TMP/rerun.out" "$TMP/rerun.err")"
wait_for 20 "address re-applied" '[ "$(node_field "$NODE" NodeAddr)" = "$ADDR" ]'
wait_for 20 "worker done" 'no_worker'
expect_eq "no new instance in the cloud" "$(sim_instances "len(ins)")" "$N_SIM"
expect_eq "no new record" "$(sql "SELECT count(*) FROM instances")" "$N_REC"
REQ=$(request_of "$NODE")
expect_eq "second request" "$(sql "SELECT job_id, state, result, launched, reason FROM requests WHERE id='$REQ'")" \
	"0|done|success|1|all 1 nodes already had a live instance (addresses re-applied)"
expect_eq "no launch attempt for it" "$(sql "SELECT count(*) FROM attempts WHERE request_id='$REQ'")" 0
expect_eq "job still running" "$(job_state "$JOB")" RUNNING
expect_eq "instance still running" "$(sim_state "$IID")" running
ok "re-run for $NODE: nothing launched, NodeAddr $ADDR re-applied, job $JOB unaffected"
