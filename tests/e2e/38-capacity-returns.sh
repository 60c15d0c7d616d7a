#!/bin/sh
# 38-capacity-returns.sh - capacity that comes back (issue 24).  No
# g5.xlarge capacity anywhere in the fallback group when gpu-1 is resumed.
# With ResumeTimeout 40 s the re-probe window is 20 s (auto: half of it,
# from the power-up): the request goes back to the queue (event "reprobe",
# round 1, 5 s) with gpu-1 still POWERING_UP, not DOWN; capacity appears
# in Mumbai; the re-run launches there and the job completes without a
# requeue.  No dry pool is asked more than once per run.  Then gpu-2's job
# with no capacity at all: re-probed while its window has room for the
# next wait (5 s, 10 s; 20 s never fits), then DOWN with the capacity
# reason and the job requeued, as without re-probes.
RESUME_TIMEOUT=40
CRED_EXPIRE=5
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2

DRY_AZS="ap-southeast-1a ap-south-1a ap-south-1b ap-northeast-1a"
capacity() {	# capacity AZ N
	control POST /_sim/capacity "{\"az\": \"$1\", \"instance_type\": \"g5.xlarge\", \"available\": $2}" >/dev/null ||
		fail "capacity $1"
}
reprobes() { sql "SELECT count(*) FROM events WHERE request_id='$1' AND kind='reprobe'"; }
restarts() { lab scontrol -o show job "$1" | tr ' ' '\n' | sed -n 's/^Restarts=//p'; }
# the most InsufficientInstanceCapacity answers one pool gave one request
ice_per_pool() {
	sql "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM attempts
	     WHERE request_id='$1' AND error_code='InsufficientInstanceCapacity'
	     GROUP BY az, instance_type)"
}
for az in $DRY_AZS; do capacity "$az" 0; done

JOB=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'echo $SLURMD_NODENAME')
wait_for 20 "a resume request of gpu-1" '[ -n "$(request_of gpu-1)" ]'
REQ=$(request_of gpu-1)
wait_for 20 "request $REQ re-probing" '[ "$(reprobes $REQ)" -ge 1 ]'
state_is gpu-1 'POWERING_UP' || fail "gpu-1 while re-probing: $(node_field gpu-1 State)"
state_is gpu-1 'DOWN' && fail "gpu-1 DOWN while re-probing: $(node_field gpu-1 State) ($(node_reason gpu-1))"
expect_eq "first re-probe" "$(sql "SELECT json_extract(detail, '\$.round') || ' ' || json_extract(detail, '\$.delay_s') || ' ' || json_extract(detail, '\$.code') FROM events WHERE request_id='$REQ' AND kind='reprobe' ORDER BY id LIMIT 1")" \
	"1 5.0 InsufficientInstanceCapacity"
ROW=$(sql "SELECT state, reason FROM requests WHERE id='$REQ'")
case "$ROW" in
queued\|"re-probe 1 in 5 s: "*InsufficientInstanceCapacity*) ;;
running\|*) ;;	# the re-run has begun already
*) fail "request while re-probing: $ROW" ;;
esac
expect_eq "nothing launched yet" "$(sim_instances "len(ins)")" 0
ok "no capacity: request $REQ re-probes (round 1 in 5 s), gpu-1 stays $(node_field gpu-1 State)"

capacity ap-south-1a 1
wait_for 60 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
expect_eq "request" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ'")" "done|success|1"
expect_eq "gpu-1's instance" "$(sql "SELECT region FROM instances WHERE request_id='$REQ' AND node='gpu-1'")" ap-south-1
expect_eq "restarts of job $JOB" "$(restarts "$JOB")" 0
grep -q "^gpu-1$" "$LAB/jobs/slurm-$JOB.out" || fail "job output: $(cat "$LAB/jobs/slurm-$JOB.out")"
N1=$(reprobes "$REQ")
ICE1=$(ice_per_pool "$REQ")
[ "$ICE1" -le $((N1 + 1)) ] || fail "a dry pool answered $ICE1 times in $((N1 + 1)) runs"
grep -q "resume_reprobe req=$REQ round=1 delay_s=5" "$TMP/gpuburst.log" || fail "re-probe not logged"
ok "capacity came back in Mumbai: job $JOB ran on gpu-1 after $N1 re-probe(s), no requeue; at most $ICE1 refusal(s) per dry pool"

# no capacity at all: the window ends the re-probes (gpu-1's instance
# gives its capacity back once terminated: after that)
I1=$(instance_of gpu-1)
wait_for 60 "gpu-1's instance $I1 ended" '[ "$(sim_state $I1)" = terminated ]'
for az in $DRY_AZS; do capacity "$az" 0; done
JOB2=$(submit -w gpu-2 --gres=gpu:a10g:1 --wrap 'true')
wait_for 60 "gpu-2 DOWN for capacity" 'node_reason gpu-2 | grep -q "^gpuburst: (Code:InsufficientInstanceCapacity) .* req=[0-9a-f]\{16\}$"'
REQ2=$(request_of gpu-2)
expect_eq "request" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ2'")" "failed|failed|0"
N2=$(reprobes "$REQ2")
[ "$N2" -ge 1 ] && [ "$N2" -le 2 ] || fail "re-probes of $REQ2: $N2, want 1 or 2"
expect_eq "each wait inside the window" "$(sql "SELECT count(*) FROM events WHERE request_id='$REQ2' AND kind='reprobe' AND json_extract(detail, '\$.delay_s') > json_extract(detail, '\$.window_left_s')")" 0
SPAN=$(sql "SELECT CAST(updated_at - created_at AS INTEGER) FROM requests WHERE id='$REQ2'")
[ "$SPAN" -ge 5 ] || fail "request $REQ2 ended $SPAN s after its creation: no re-probe wait"
ICE2=$(ice_per_pool "$REQ2")
[ "$ICE2" -le $((N2 + 1)) ] || fail "a dry pool answered $ICE2 times in $((N2 + 1)) runs"
wait_for 20 "job $JOB2 requeued" '[ "$(job_state $JOB2)" = PENDING ]'
[ "$(restarts "$JOB2")" -ge 1 ] || fail "job $JOB2 was not requeued"
grep -q "reprobe_end req=$REQ2 reprobes=$N2" "$TMP/gpuburst.log" || fail "the end of the re-probes not logged"
expect_eq "nothing launched for gpu-2" "$(sql "SELECT count(*) FROM instances WHERE request_id='$REQ2'")" 0
ok "no capacity: $N2 re-probe(s) inside the 20 s window, then gpu-2 DOWN ($SPAN s after the power-up), job $JOB2 requeued"
