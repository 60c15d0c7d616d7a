#!/bin/sh
# 34-approval-at-submit.sh - approvals decided where the job waits (issue
# 22 part 1): job_submit/gpuburst holds a 2-node GPU job over the threshold
# (dev: 1) at submit: priority 0 (JobHeldUser: slurmctld makes a plugin's
# hold a user hold), the token gpuburst:approval=pending/2 in its
# AdminComment, sbatch says why, nothing is resumed.  gpuburstctl reconcile
# records it (a request without nodes, pending_approval, its approval
# expiring after policy.submit_approval_timeout, the notify command run
# once) and makes the hold an admin hold (JobHeldAdmin); a second pass adds
# nothing.  Approved after twice ResumeTimeout,
# the job is released and runs on two instances, its power-up not gated
# again.  deny --cancel cancels a held job; deny (--hold, the default) keeps
# one held with the token denied/ID; approving the request of a job
# cancelled meanwhile launches nothing and says so.  A job nobody decides
# about expires after policy.submit_approval_timeout (60 s here) and stays
# held (on_approval_expiry: hold) with the token "expired", not asked again.
APPROVAL_THRESHOLD=1
RESUME_TIMEOUT=15
POLICY_EXTRA="  submit_approval_timeout: 60s"
. "${srcdir:-.}/e2e-lib.sh"
mkdir -p "$TMP/notify"
cat >"$TMP/notify.sh" <<EOF
#!/bin/sh
# one file per notification (they may run at the same time)
cat >"$TMP/notify/\$\$.tmp" && mv "$TMP/notify/\$\$.tmp" "$TMP/notify/\$\$.json"
EOF
notified() { cat "$TMP"/notify/*.json 2>/dev/null | grep -o '"approval_needed"' | wc -l; }
chmod 755 "$TMP/notify.sh"
APPROVAL_NOTIFY="[$TMP/notify.sh]"
e2e_start --nodes 2 --job-submit

# held JOB: its SBATCH-ARGS... (stderr in $TMP/sbatch.err)
held() {
	(cd "$LAB/jobs" && lab sbatch --parsable "$@") 2>"$TMP/sbatch.err" || fail "sbatch $*"
}
reason() { lab squeue -h -j "$1" -o '%r' 2>/dev/null; }
req_of() { sql "SELECT id FROM requests WHERE job_id=$1 AND nodes IS NULL"; }

JOB=$(held --gres=gpu:a10g:1 -N 2 -t 30 -J train --wrap 'srun hostname')
expect_eq "sbatch said" "$(cat "$TMP/sbatch.err")" \
	"sbatch: gpuburst: this job needs 2 cloud nodes, more than the approval threshold of 1 (dev): it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)"
expect_eq "job $JOB" "$(job_state "$JOB") $(reason "$JOB")" "PENDING JobHeldUser"
expect_eq "AdminComment" "$(job_field "$JOB" AdminComment)" "gpuburst:approval=pending/2"
sleep 2
for n in gpu-1 gpu-2; do
	state_is "$n" 'POWERED_DOWN' || fail "$n is $(node_field $n State), want POWERED_DOWN"
done
ok "job $JOB (2 nodes > 1) held at submit: JobHeldUser, AdminComment gpuburst:approval=pending/2, no power-up"
J5=$(held --gres=gpu:a10g:1 -N 2 -J late --wrap true)	# nobody decides about it

ctl reconcile >"$TMP/rec1.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec1.out")"
REQ=$(req_of "$JOB")
[ -n "$REQ" ] || fail "no request for job $JOB: $(cat "$TMP/rec1.out")"
grep -q "^held  *$REQ .*job held at submit: approval requested" "$TMP/rec1.out" ||
	fail "reconcile said: $(cat "$TMP/rec1.out")"
expect_eq "request" "$(sql "SELECT kind, state, nodeset, node_count, json_extract(input, '$.source'), json_extract(input, '$.user'), json_extract(input, '$.partition') FROM requests WHERE id='$REQ'")" \
	"resume|pending_approval|a10g|2|submit|root|gpu"
expect_eq "approval" "$(sql "SELECT a.state, a.why, CAST(round(a.expires_at - r.created_at) AS INTEGER) FROM approvals a JOIN requests r ON r.id = a.request_id WHERE r.id='$REQ'")" \
	"pending|2 nodes for job $JOB > dev threshold 1 (held at submit)|60"
expect_eq "job $JOB recorded" "$(job_state "$JOB") $(reason "$JOB")" "PENDING JobHeldAdmin"
ctl --json approvals >"$TMP/a.json" || fail "approvals"
expect_eq "approvals --json" "$(jq_py "$TMP/a.json" "[(a['request_id'], a['rule'], a['held_at_submit'], a['job']['user'], a['job']['partition'], a['job']['name'], a['job']['gpus'], a['job']['time_limit_minutes'], a['request']['node_count']) for a in d['approvals'] if a['request']['job_id'] == $JOB]")" \
	"[[\"$REQ\", \"size\", true, \"root\", \"gpu\", \"train\", 2, 30, 2]]"
ctl approvals >"$TMP/a.txt" || fail "approvals"
grep -q "^$REQ  *$JOB  *root  .* gpu  *train  *2  *2  *0:30:00  *-  *-  *size  *2 nodes for job $JOB > dev threshold 1 (held at submit)  *in [0-9]" "$TMP/a.txt" ||
	fail "approvals table: $(cat "$TMP/a.txt")"
wait_for 15 "two notifications" '[ "$(notified)" = 2 ]'
ctl reconcile >"$TMP/rec2.out" 2>&1 || fail "reconcile again: $(cat "$TMP/rec2.out")"
grep -q "^held " "$TMP/rec2.out" && fail "the second pass: $(cat "$TMP/rec2.out")"
expect_eq "requests of job $JOB" "$(sql "SELECT count(*) FROM requests WHERE job_id=$JOB")" 1
sleep 1
expect_eq "notifications" "$(notified)" 2
ok "reconcile recorded $REQ (no nodes, pending_approval, expires after submit_approval_timeout), made it JobHeldAdmin, notified once; approvals shows root, gpu, train, 2 GPUs, 0:30:00, rule size; a second pass adds nothing"

# why: the held job in plain sentences, and what an administrator can do
ctl why "$JOB" >"$TMP/why.out" 2>&1 || fail "why $JOB: $(cat "$TMP/why.out")"
grep -Eq "^Job $JOB \(.*user root, .*\) is PENDING \(JobHeldAdmin\), submitted " "$TMP/why.out" &&
	grep -q "^Request $REQ: resume of 2 nodes (decided at submit: no nodes yet) .*: pending_approval\.$" "$TMP/why.out" &&
	grep -q "^It needs an administrator's approval: .* Who may decide: root, the SlurmUser" "$TMP/why.out" &&
	grep -q "^Now: it waits for that decision; no ResumeTimeout runs while the job is held\.$" "$TMP/why.out" &&
	grep -q "^  approve it: gpuburstctl approve $REQ$" "$TMP/why.out" ||
	fail "why $JOB said: $(cat "$TMP/why.out")"
ctl --json why "$JOB" >"$TMP/why.json" 2>&1 || fail "why --json: $(cat "$TMP/why.json")"
expect_eq "why --json" "$(jq_py "$TMP/why.json" '[d["subject"]["job"], d["slurm"]["reason"], d["requests"][0]["id"], d["requests"][0]["state"], len(d["says"]) >= 4, any(x.startswith("approve it") for x in d["can_do"])]')" \
	"[$JOB, \"JobHeldAdmin\", \"$REQ\", \"pending_approval\", true, true]"
ok "why $JOB: held by Slurm (JobHeldAdmin), request $REQ waits for a decision, who may decide, how to approve; --json"

# twice ResumeTimeout: no Slurm clock runs while the job is held
sleep $((2 * RESUME_TIMEOUT))
expect_eq "job $JOB still" "$(job_state "$JOB") $(reason "$JOB")" "PENDING JobHeldAdmin"
ctl approve "$REQ" --comment "ok at submit" >"$TMP/approve.out" 2>&1 ||
	fail "approve: $(cat "$TMP/approve.out")"
grep -q "approved $REQ (a job held at submit)" "$TMP/approve.out" &&
	grep -q "job $JOB released" "$TMP/approve.out" || fail "approve said: $(cat "$TMP/approve.out")"
expect_eq "AdminComment" "$(job_field "$JOB" AdminComment)" "gpuburst:approval=approved/$REQ"
grep -i "error" "$TMP/approve.out" && fail "approve printed an error"
wait_for 60 "job $JOB done" '[ "$(job_state $JOB)" = COMPLETED ]'
expect_eq "held request" "$(sql "SELECT state, reason FROM requests WHERE id='$REQ'")" \
	"done|approved by root: job $JOB released"
expect_eq "its power-up" "$(sql "SELECT state, result, launched FROM requests WHERE job_id=$JOB AND nodes IS NOT NULL")" "done|success|2"
expect_eq "approvals of job $JOB" "$(sql "SELECT count(*) FROM approvals a JOIN requests r ON r.id = a.request_id WHERE r.job_id=$JOB")" 1
ok "approved $((2 * RESUME_TIMEOUT)) s later: job $JOB released, its power-up not gated again, 2 instances, COMPLETED"

# --- deny --cancel, deny (--hold)
J2=$(held --gres=gpu:a10g:1 -N 2 --wrap true)
J3=$(held --gres=gpu:a10g:1 -N 2 --wrap true)
ctl reconcile >"$TMP/rec3.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec3.out")"
R2=$(req_of "$J2") R3=$(req_of "$J3")
[ -n "$R2" ] && [ -n "$R3" ] || fail "jobs $J2 $J3 not recorded: $(cat "$TMP/rec3.out")"
ctl deny "$R2" --reason "too big" --cancel >"$TMP/deny2.out" 2>&1 || fail "deny --cancel: $(cat "$TMP/deny2.out")"
grep -q "job $J2 cancelled" "$TMP/deny2.out" || fail "deny --cancel said: $(cat "$TMP/deny2.out")"
wait_for 10 "job $J2 cancelled" '[ "$(job_state $J2)" = CANCELLED ] || [ -z "$(job_state $J2)" ]'
ctl deny "$R3" --reason "not now" >"$TMP/deny3.out" 2>&1 || fail "deny: $(cat "$TMP/deny3.out")"
grep -q "job $J3 held" "$TMP/deny3.out" || fail "deny said: $(cat "$TMP/deny3.out")"
grep -i "error" "$TMP/deny2.out" "$TMP/deny3.out" && fail "deny printed an error"
expect_eq "job $J3" "$(job_state "$J3") $(reason "$J3")" "PENDING JobHeldAdmin"
expect_eq "AdminComment" "$(job_field "$J3" AdminComment)" "gpuburst:approval=denied/$R3"
expect_eq "denied requests" "$(sql "SELECT state FROM requests WHERE id IN ('$R2', '$R3') ORDER BY id = '$R3'")" "denied
denied"
ctl reconcile >"$TMP/rec4.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec4.out")"
expect_eq "requests of job $J3" "$(sql "SELECT count(*) FROM requests WHERE job_id=$J3")" 1
ok "deny --cancel cancelled job $J2; deny kept job $J3 held (gpuburst:approval=denied/$R3), not asked again"

# --- an approval of a job that is gone launches nothing
J4=$(held --gres=gpu:a10g:1 -N 2 --wrap true)
ctl reconcile >"$TMP/rec5.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec5.out")"
R4=$(req_of "$J4")
[ -n "$R4" ] || fail "job $J4 not recorded: $(cat "$TMP/rec5.out")"
lab scancel "$J4"
before=$(sim_instances "len(ins)")
ctl approve "$R4" >"$TMP/approve4.out" 2>&1 || fail "approve: $(cat "$TMP/approve4.out")"
grep -q "job $J4 is gone or no longer held (.*): nothing released, nothing launched" "$TMP/approve4.out" ||
	fail "approve said: $(cat "$TMP/approve4.out")"
grep -q "worker started" "$TMP/approve4.out" && fail "a worker was started: $(cat "$TMP/approve4.out")"
sleep 2
expect_eq "instances" "$(sim_instances "len(ins)")" "$before"
expect_eq "requests of job $J4" "$(sql "SELECT count(*) FROM requests WHERE job_id=$J4")" 1
ok "approving $R4 of cancelled job $J4 launched nothing and said so"

# --- nobody decides about job $J5: its approval expires, the job stays held
R5=$(req_of "$J5")
[ -n "$R5" ] || fail "job $J5 was not recorded"
DUE=$(sql "SELECT CAST(expires_at AS INTEGER) + 1 FROM approvals WHERE request_id='$R5'")
wait_for 90 "the deadline of $R5" '[ "$(date +%s)" -ge "$DUE" ]'
# this pass, or a worker's after the suspends, expires it
ctl reconcile --cheap >"$TMP/r5.out" 2>&1 || fail "reconcile: $(cat "$TMP/r5.out")"
grep -q "approval_expired req=$R5 nodes=- job=$J5 " "$TMP/gpuburst.log" ||
	fail "no expiry logged: $(cat "$TMP/r5.out")"
expect_eq "request $R5" "$(sql "SELECT r.state, a.state FROM requests r JOIN approvals a ON a.request_id = r.id WHERE r.id='$R5'")" "expired|expired"
held_by_admin "$J5" || fail "job $J5: $(lab squeue -h -j "$J5" -o '%T %r')"
expect_eq "AdminComment" "$(job_field "$J5" AdminComment)" "gpuburst:approval=expired"
ctl reconcile --cheap >"$TMP/r6.out" 2>&1 || fail "reconcile: $(cat "$TMP/r6.out")"
expect_eq "requests of job $J5" "$(sql "SELECT count(*) FROM requests WHERE job_id=$J5")" 1
lab scancel "$J5"
ok "job $J5's approval expired after 60 s: held (gpuburst:approval=expired), not asked again"
