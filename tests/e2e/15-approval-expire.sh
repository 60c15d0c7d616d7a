#!/bin/sh
# 15-approval-expire.sh - nobody decides: after policy.approval_timeout (3 s
# here; ResumeTimeout 40 s) reconcile expires the request, sets the nodes
# DOWN with "gpuburst: resume approval expired" (before Slurm's own
# ResumeTimeout would), the job is requeued and held (JobHeldAdmin, token
# gpuburst:approval=expired: it does not ask again), nothing is launched, and the same
# pass powers the nodes down again (idle~).  A late approve says it expired.
APPROVAL_THRESHOLD=1
APPROVAL_TIMEOUT=3s
RESUME_TIMEOUT=40
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2

pending() { sql "SELECT count(*) FROM requests WHERE job_id=$1 AND state='pending_approval'"; }

JOB=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun hostname')
wait_for 20 "a pending approval" '[ "$(pending $JOB)" = 1 ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB")
expect_eq "deadline" "$(sql "SELECT CAST(round(a.expires_at - r.created_at) AS INTEGER) FROM approvals a JOIN requests r ON r.id = a.request_id WHERE a.request_id='$REQ'")" 3
ok "job $JOB waits ($REQ), deadline 3 s after the request"

# before the deadline reconcile leaves it alone
ctl --json reconcile --cheap >"$TMP/r0.json" 2>"$TMP/r0.err" || fail "reconcile: $(cat "$TMP/r0.err")"
expect_eq "nothing to expire yet" "$(jq_py "$TMP/r0.json" "[a for a in d['actions'] if a['action'] == 'expire']")" "[]"
DUE=$(sql "SELECT CAST(expires_at AS INTEGER) + 1 FROM approvals WHERE request_id='$REQ'")
wait_for 20 "the deadline" '[ "$(date +%s)" -ge "$DUE" ]'

ctl --json reconcile --cheap >"$TMP/r1.json" 2>"$TMP/r1.err" || fail "reconcile: $(cat "$TMP/r1.err")"
expect_eq "expire action" "$(jq_py "$TMP/r1.json" "[(a['target'], a['done']) for a in d['actions'] if a['action'] == 'expire']")" \
	"[[\"$REQ\", true]]"
expect_eq "request" "$(sql "SELECT state, reason FROM requests WHERE id='$REQ'")" "expired|approval expired"
expect_eq "approval" "$(sql "SELECT state, decided_by FROM approvals WHERE request_id='$REQ'")" "expired|gpuburst"
expect_eq "DOWN with the expiry reason" \
	"$(sql "SELECT json_extract(detail, '\$.action') || ' ' || json_extract(detail, '\$.nodes') || ' ' || json_extract(detail, '\$.reason') FROM events WHERE request_id='$REQ' AND kind='slurm_update'")" \
	"down gpu-[1-2] gpuburst: resume approval expired"
grep -q "update_node: node gpu-1 reason set to: gpuburst: resume approval expired" "$LAB/log/slurmctld.log" ||
	fail "slurmctld did not get the reason"
wait_for 15 "job $JOB requeued" '[ "$(job_state $JOB)" = PENDING ]'
expect_eq "job $JOB priority" "$(job_field "$JOB" Priority)" 0
wait_for 10 "the token" '[ "$(job_field "$JOB" AdminComment)" = "gpuburst:approval=expired" ]'
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
grep -q "ResumeTimeout reached" "$LAB/log/slurmctld.log" && fail "Slurm's ResumeTimeout fired first"
ok "expired by reconcile: nodes DOWN (gpuburst: resume approval expired) before ResumeTimeout, job $JOB requeued and held, nothing launched"

expect_eq "released in the same pass" "$(jq_py "$TMP/r1.json" "sorted(a['target'] for a in d['actions'] if a['action'] == 'release')")" \
	'["gpu-1", "gpu-2"]'
for n in gpu-1 gpu-2; do
	wait_for 30 "$n idle~" 'state_is '$n' "^IDLE\+CLOUD\+POWERED_DOWN$"'
done
ok "the nodes are idle~ again"
ctl reconcile --cheap >/dev/null 2>&1 || fail "reconcile"
wait_held 20 "$JOB"
ok "job $JOB: an operator's hold ($(cat "$TMP/held.$JOB"))"

ctl approve "$REQ" >"$TMP/late.out" 2>"$TMP/late.err"
expect_eq "late approve" "$?" 7
grep -q "is expired, not pending approval" "$TMP/late.err" || fail "late approve: $(cat "$TMP/late.err")"
lab scancel "$JOB"
ok "a late approve is refused: the request is expired (7)"
