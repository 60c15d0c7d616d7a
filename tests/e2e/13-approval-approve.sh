#!/bin/sh
# 13-approval-approve.sh - a two-node job over the threshold (dev: 1): its
# request waits (pending_approval, an approval row, nodes POWERING_UP,
# nothing launched in the simulator), the notify command gets the request
# as JSON on stdin; a non-administrator (nobody) cannot approve and changes
# nothing; `gpuburstctl approve` as root queues it and starts the worker:
# two instances are launched and the job runs; the decision is recorded.
APPROVAL_THRESHOLD=1
RESUME_TIMEOUT=40
. "${srcdir:-.}/e2e-lib.sh"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed"
mkdir -p "$TMP/notify"
chmod 777 "$TMP/notify"
cat >"$TMP/notify.sh" <<EOF
#!/bin/sh
# gets the request on stdin; leaves it where the test can see it
cat >"$TMP/notify/in.tmp" && mv "$TMP/notify/in.tmp" "$TMP/notify/in.json"
EOF
chmod 755 "$TMP/notify.sh"
APPROVAL_NOTIFY="[$TMP/notify.sh]"
e2e_start --nodes 2

# pending JOB: how many of its requests wait for approval
pending() { sql "SELECT count(*) FROM requests WHERE job_id=$1 AND state='pending_approval'"; }

JOB=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun hostname')
wait_for 20 "a pending approval" '[ "$(pending $JOB)" = 1 ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB")
expect_eq "approval row" "$(sql "SELECT state, why FROM approvals WHERE request_id='$REQ'")" \
	"pending|2 nodes for job $JOB > dev threshold 1"
# the deadline is half of ResumeTimeout (40 s), from the request's creation
expect_eq "deadline" "$(sql "SELECT CAST(round(a.expires_at - r.created_at) AS INTEGER) FROM approvals a JOIN requests r ON r.id = a.request_id WHERE a.request_id='$REQ'")" 20
for n in gpu-1 gpu-2; do
	state_is "$n" 'POWERING_UP' || fail "$n is $(node_field $n State), want POWERING_UP"
done
sleep 1
expect_eq "nothing launched while waiting" "$(sim_instances "len(ins)")" 0
ok "job $JOB (2 nodes > 1) waits: $REQ pending_approval, nodes POWERING_UP, nothing launched"

wait_for 15 "the notification" '[ -s "$TMP/notify/in.json" ]'
expect_eq "notification" "$(jq_py "$TMP/notify/in.json" "[d['event'], d['request_id'], d['job_id'], d['nodes'], d['node_count'], d['approve']]")" \
	"[\"approval_needed\", \"$REQ\", $JOB, \"gpu-[1-2]\", 2, \"gpuburstctl approve $REQ\"]"
ok "approval_notify got the request as JSON on stdin"

ctl --json approvals >"$TMP/a.json" || fail "approvals"
expect_eq "approvals --json" "$(jq_py "$TMP/a.json" "[(a['request_id'], a['state'], a['request']['job_id']) for a in d['approvals']]")" \
	"[[\"$REQ\", \"pending\", $JOB]]"

lab setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL" -c "$CONF" approve "$REQ" \
	>"$TMP/nobody.out" 2>"$TMP/nobody.err"
expect_eq "nobody's exit status" "$?" 22
grep -q 'user nobody (uid [0-9]*) may not approve' "$TMP/nobody.err" || fail "nobody: $(cat "$TMP/nobody.err")"
expect_eq "still pending" "$(sql "SELECT r.state, a.state FROM requests r JOIN approvals a ON a.request_id=r.id WHERE r.id='$REQ'")" \
	"pending_approval|pending"
ok "nobody cannot approve (22) and nothing changed"

ctl approve "$REQ" --comment "e2e says yes" >"$TMP/approve.out" 2>"$TMP/approve.err" ||
	fail "approve: $(cat "$TMP/approve.out" "$TMP/approve.err")"
grep -q "approved $REQ (nodes gpu-\[1-2\]): queued" "$TMP/approve.out" || fail "approve said: $(cat "$TMP/approve.out")"
grep -q "worker started" "$TMP/approve.out" || fail "no worker: $(cat "$TMP/approve.out" "$TMP/approve.err")"
wait_for 40 "job $JOB done" '[ "$(job_state $JOB)" = COMPLETED ]'
expect_eq "request" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ'")" "done|success|2"
expect_eq "instances of the nodes" "$(sql "SELECT count(*) FROM instances WHERE request_id='$REQ' AND node IS NOT NULL")" 2
expect_eq "decision" "$(sql "SELECT state, decided_by, decided_uid, comment, decided_at > 0 FROM approvals WHERE request_id='$REQ'")" \
	"approved|root|0|e2e says yes|1"
grep -q "approval_approved req=$REQ nodes=gpu-\[1-2\] job=$JOB by=root uid=0" "$TMP/gpuburst.log" || fail "decision not logged"
ok "approved by root: queued, worker started, 2 instances launched, job $JOB completed; recorded and logged"

ctl requests show "$REQ" >"$TMP/show.out" || fail "requests show"
grep -q "decided by     root (uid 0)" "$TMP/show.out" && grep -q "event approve" "$TMP/show.out" ||
	fail "replay lacks the decision: $(cat "$TMP/show.out")"
ok "requests show replays the approval"

# doctor sees the lab: slurmctld, the exact version, the nodes, the timeouts
ctl doctor >"$TMP/doctor.out" 2>&1
for want in "^ok   slurmctld: answered (Slurm " "^ok   slurm version: built against " \
	    "^ok   slurm nodes: all 2 nodes of 1 nodesets are CLOUD nodes" \
	    "^ok   approval-timeout: approvals wait at most 20 s of ResumeTimeout 40 s" \
	    "^ok   region ap-south-1: " "^ok   credentials: "; do
	grep -q "$want" "$TMP/doctor.out" || fail "doctor lacks '$want': $(cat "$TMP/doctor.out")"
done
ok "doctor: slurmctld, version, CLOUD nodes, approval timeout, regions ok"
