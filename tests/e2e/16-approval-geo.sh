#!/bin/sh
# 16-approval-geo.sh - policy.allowed_geo_regions: [ap-southeast-1] (the home
# region, which has no g5 capacity): a one-node job is under the size
# threshold and queued, but the worker's plan reaches Mumbai and Tokyo, so
# before any launch the request goes back to pending_approval (rule geo),
# its node stays POWERING_UP; once approved the worker launches in Mumbai
# and the job runs.
ALLOWED_GEO="[ap-southeast-1]"
RESUME_TIMEOUT=40
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 1

JOB=$(submit --gres=gpu:a10g:1 --wrap 'true')
wait_for 30 "the geo gate" '[ "$(sql "SELECT state FROM requests WHERE job_id=$JOB")" = pending_approval ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB")
expect_eq "why" "$(sql "SELECT why FROM approvals WHERE request_id='$REQ'")" \
	"plan uses ap-south-1, ap-northeast-1 outside allowed_geo_regions [ap-southeast-1]"
expect_eq "enqueued as queued first" "$(sql "SELECT detail LIKE 'state=queued %' FROM events WHERE request_id='$REQ' AND kind='enqueue'")" 1
expect_eq "no launch call" "$(sql "SELECT count(*) FROM attempts WHERE request_id='$REQ'")" 0
expect_eq "nothing launched" "$(sim_instances "len(ins)")" 0
state_is gpu-1 POWERING_UP || fail "gpu-1: $(node_field gpu-1 State)"
ok "the worker gated $REQ on geography before any launch; gpu-1 POWERING_UP"

ctl approve "$REQ" >"$TMP/a.out" 2>&1 || fail "approve: $(cat "$TMP/a.out")"
wait_for 40 "job $JOB done" '[ "$(job_state $JOB)" = COMPLETED ]'
expect_eq "instance region" "$(sql "SELECT region FROM instances WHERE request_id='$REQ' AND node='gpu-1'")" ap-south-1
expect_eq "request" "$(sql "SELECT state, result FROM requests WHERE id='$REQ'")" "done|success"
ok "approved: the same plan now runs, instance in ap-south-1, job $JOB completed"
