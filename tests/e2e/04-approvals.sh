#!/bin/sh
# 04-approvals.sh - scenario 4 (issue 10): two 2-node jobs over the
# approval threshold (dev: 1) wait side by side: their requests are
# pending_approval, their nodes POWERING_UP, nothing is launched, and
# `gpuburstctl approvals` lists both.  `gpuburstctl approve` lets the first
# run: two instances, the job completes.  `gpuburstctl deny` refuses the
# second: its nodes go DOWN with the denial at once, Slurm requeues the job
# (PENDING, Restarts=1, not FAILED), nothing is launched for it, and
# reconcile's release (gpuburstctl reconcile, or the worker's own pass)
# returns its nodes to powered-down idle (idle~).  The approved
# job's nodes are not touched by the denial.
# (13-approval-approve.sh to 16-approval-geo.sh test the details:
# notification, who may decide, expiry, the geography gate.)
APPROVAL_THRESHOLD=1
RESUME_TIMEOUT=40
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 4

req_of_job() { sql "SELECT id FROM requests WHERE job_id=$1 AND kind='resume'"; }
restarts() { lab scontrol -o show job "$1" | tr ' ' '\n' | sed -n 's/^Restarts=//p'; }
job_nodes() { lab squeue -h -j "$1" -o %N; }

A=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun sh -c "echo \$SLURMD_NODENAME"')
B=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun sh -c "echo \$SLURMD_NODENAME"')
for j in $A $B; do
	wait_for 20 "job $j waiting for approval" '[ "$(sql "SELECT state FROM requests WHERE job_id=$j")" = pending_approval ]'
done
RA=$(req_of_job "$A") RB=$(req_of_job "$B")
NA=$(job_nodes "$A") NB=$(job_nodes "$B")
for n in $(lab scontrol show hostnames "$NA,$NB"); do
	state_is "$n" POWERING_UP || fail "$n is $(node_field "$n" State), want POWERING_UP"
done
ctl --json approvals >"$TMP/a.json" || fail "approvals"
expect_eq "approvals --json" "$(jq_py "$TMP/a.json" "sorted((a['request_id'], a['state'], a['request']['job_id']) for a in d['approvals'])")" \
	"$("$PYTHON3" -c 'import json, sys; print(json.dumps(sorted([(sys.argv[1], "pending", int(sys.argv[2])), (sys.argv[3], "pending", int(sys.argv[4]))])))' "$RA" "$A" "$RB" "$B")"
ctl approvals >"$TMP/a.txt" || fail "approvals"
grep -q "$RA" "$TMP/a.txt" && grep -q "$RB" "$TMP/a.txt" || fail "approvals table: $(cat "$TMP/a.txt")"
sleep 1
expect_eq "nothing launched while waiting" "$(sim_instances "len(ins)")" 0
ok "jobs $A ($NA) and $B ($NB) wait for approval ($RA, $RB); nodes POWERING_UP, nothing launched"

ctl approve "$RA" --comment "scenario 4" >"$TMP/approve.out" 2>&1 || fail "approve: $(cat "$TMP/approve.out")"
ctl deny "$RB" --reason "not today" >"$TMP/deny.out" 2>&1 || fail "deny: $(cat "$TMP/deny.out")"

# the denied job: DOWN with the reason at once (slurmctld's log: the
# worker started by the approval may already have released them), requeued,
# nothing launched
for n in $(lab scontrol show hostnames "$NB"); do
	wait_for 10 "$n DOWN with the denial" 'grep -q "update_node: node '$n' reason set to: gpuburst: resume denied by root: not today" "$LAB/log/slurmctld.log"'
	grep -q "update_node: node $n state set to DOWN" "$LAB/log/slurmctld.log" || fail "$n was not set DOWN"
done
wait_for 15 "job $B requeued" '[ "$(job_state $B)" = PENDING ]'
# gpuburst held it (requeue-hold), so it does not ask again
expect_eq "job $B priority" "$(job_field "$B" Priority)" 0
expect_eq "job $B restarts" "$(restarts "$B")" 1
expect_eq "request $RB" "$(sql "SELECT state, reason FROM requests WHERE id='$RB'")" "denied|denied by root: not today"
ok "denied: $NB DOWN with 'gpuburst: resume denied by root: not today', job $B requeued and held (priority 0, Restarts=1)"

# the approved job runs
wait_for 40 "job $A completed" '[ "$(job_state $A)" = COMPLETED ]'
expect_eq "request $RA" "$(sql "SELECT state, result, launched FROM requests WHERE id='$RA'")" "done|success|2"
expect_eq "approval $RA" "$(sql "SELECT state, decided_by, comment FROM approvals WHERE request_id='$RA'")" "approved|root|scenario 4"
for n in $(lab scontrol show hostnames "$NA"); do
	grep -qx "$n" "$LAB/jobs/slurm-$A.out" || fail "job $A output lacks $n: $(cat "$LAB/jobs/slurm-$A.out")"
done
ok "approved: job $A ran on $NA (2 instances) and completed"

expect_eq "instances in the cloud: only the approved job's" \
	"$(sim_instances "sorted(set(i['tags'].get('gpuburst:request', '') for i in ins))")" "[\"$RA\"]"
expect_eq "records of the denied request" "$(sql "SELECT count(*) FROM instances WHERE request_id='$RB'")" 0

# reconcile (or the worker's own cheap pass, if it ran after the denial)
# returns the denied job's nodes to powered-down idle
ctl --json reconcile --cheap >"$TMP/r.json" 2>"$TMP/r.err" || fail "reconcile: $(cat "$TMP/r.err")"
for n in $(lab scontrol show hostnames "$NB"); do
	wait_for 30 "$n idle~" 'state_is '$n' "^IDLE\+CLOUD\+POWERED_DOWN$"'
	expect_eq "$n released" "$(sql "SELECT count(*) FROM events WHERE kind='reconcile' AND json_extract(detail, '\$.action')='release' AND json_extract(detail, '\$.target')='$n'")" 1
done
expect_eq "job $B still pending (held), not failed" "$(job_state "$B")" PENDING
ctl reconcile --cheap >/dev/null 2>&1 || fail "reconcile"
wait_held 20 "$B"
ok "released: $NB idle~ again; job $B pending, not failed"
