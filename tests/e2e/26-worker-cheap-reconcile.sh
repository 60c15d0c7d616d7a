#!/bin/sh
# 26-worker-cheap-reconcile.sh - the worker runs the cheap reconcile pass
# itself when it has drained the queue: a request whose approval deadline
# passed is expired (nodes DOWN with the expiry reason, job requeued) by the
# next worker any resume starts, with no `gpuburstctl reconcile` and no
# timer.  Job A (2 nodes, over the threshold of 1) waits; after its
# deadline job B (1 node, under it) resumes a node, and B's worker expires A.
APPROVAL_THRESHOLD=1
APPROVAL_TIMEOUT=3s
RESUME_TIMEOUT=40
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 3

A=$(submit -N2 -w gpu-[1-2] --gres=gpu:a10g:1 --wrap 'srun hostname')
wait_for 20 "job $A waiting for approval" \
	'[ "$(sql "SELECT count(*) FROM requests WHERE job_id=$A AND state='"'pending_approval'"'")" = 1 ]'
RA=$(sql "SELECT id FROM requests WHERE job_id=$A")
DUE=$(sql "SELECT CAST(expires_at AS INTEGER) + 1 FROM approvals WHERE request_id='$RA'")
wait_for 20 "the deadline of $RA" '[ "$(date +%s)" -ge "$DUE" ]'
expect_eq "still pending: nothing ran since" "$(sql "SELECT state FROM requests WHERE id='$RA'")" pending_approval
ok "job $A waits ($RA); its deadline has passed, no reconcile has run"

B=$(submit -w gpu-3 --gres=gpu:a10g:1 --wrap 'hostname')
wait_for 40 "job $B done" '[ "$(job_state $B)" = COMPLETED ]'
RB=$(sql "SELECT id FROM requests WHERE job_id=$B")
expect_eq "job $B's request" "$(sql "SELECT state, result FROM requests WHERE id='$RB'")" "done|success"
wait_for 20 "$RA expired by the worker" '[ "$(sql "SELECT state FROM requests WHERE id='"'$RA'"'")" = expired ]'
expect_eq "approval" "$(sql "SELECT state, decided_by FROM approvals WHERE request_id='$RA'")" "expired|gpuburst"
expect_eq "DOWN with the expiry reason" \
	"$(sql "SELECT json_extract(detail, '\$.action') || ' ' || json_extract(detail, '\$.nodes') || ' ' || json_extract(detail, '\$.reason') FROM events WHERE request_id='$RA' AND kind='slurm_update' AND json_extract(detail, '\$.action') = 'down'")" \
	"down gpu-[1-2] gpuburst: resume approval expired"
grep -q 'gpuburst-worker\[[0-9]*\]: info: reconcile_cheap actions=' "$TMP/gpuburst.log" ||
	fail "the worker logged no cheap reconcile pass"
grep -q 'gpuburstctl' "$TMP/gpuburst.log" && fail "gpuburstctl ran: the test must not call it"
wait_for 15 "job $A requeued" '[ "$(job_state $A)" = PENDING ]'
lab scancel "$A"
ok "job $B's worker expired $RA in its cheap reconcile pass: gpu-[1-2] DOWN, job $A requeued"
