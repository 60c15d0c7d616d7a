#!/bin/sh
# 25-worker-queue.sh - a request enqueued while a worker runs is run by that
# worker, not lost: the worker started for it finds the lock taken and
# exits, and the running worker finds the new row before it gives the lock
# up.  Job A's RunInstances is held 8 s by the simulator (long enough for
# job B's request to arrive meanwhile also on a loaded machine: 4 s was
# not, in a sanitizer build beside 27-crash-matrix.sh; under the 10 s
# request_timeout of e2e-lib's configuration); job B is submitted
# meanwhile.  Both requests end done, run by the same worker pid,
# and no worker is left.  ResumeTimeout is 40 s: job A's node registers
# after the 8 s call and its boot, which passed the lab's 10 s default on a
# loaded machine (Slurm then ran ResumeFailProgram and requeued job A).
. "${srcdir:-.}/e2e-lib.sh"
RESUME_TIMEOUT=40
e2e_start --nodes 2

control POST /_sim/fault '{"count": 1, "kind": "latency", "latency": 8, "action": "RunInstances"}' \
	>/dev/null || fail "latency fault"
A=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'hostname')
wait_for 20 "job $A's request claimed by a worker" \
	'[ "$(sql "SELECT state FROM requests WHERE job_id=$A AND kind='"'resume'"'")" = running ]'
RA=$(sql "SELECT id FROM requests WHERE job_id=$A AND kind='resume'")
PA=$(sql "SELECT worker_pid FROM requests WHERE id='$RA'")
[ "$(sql "SELECT count(*) FROM attempts WHERE request_id='$RA'")" -ge 1 ] ||
	wait_for 10 "job $A's RunInstances sent" \
		'[ "$(sql "SELECT count(*) FROM attempts WHERE request_id='"'$RA'"'")" -ge 1 ]'

B=$(submit -w gpu-2 --gres=gpu:a10g:1 --wrap 'hostname')
wait_for 20 "job $B's request" '[ "$(sql "SELECT count(*) FROM requests WHERE job_id=$B")" = 1 ]'
RB=$(sql "SELECT id FROM requests WHERE job_id=$B")
expect_eq "job $A's call still in flight when $B arrived" \
	"$(sql "SELECT count(*) FROM attempts WHERE request_id='$RA' AND state='started'")" 1
ok "job $B ($RB) enqueued while worker $PA waits on job $A's RunInstances ($RA)"

for j in "$A" "$B"; do
	wait_for 60 "job $j done" '[ "$(job_state '$j')" = COMPLETED ]'
done
expect_eq "requests" "$(sql "SELECT group_concat(state || ':' || result, ' ') FROM (SELECT state, result FROM requests WHERE id IN ('$RA', '$RB') ORDER BY created_at)")" \
	"done:success done:success"
expect_eq "one worker ran both" "$(sql "SELECT count(DISTINCT worker_pid) || ' ' || min(worker_pid) FROM requests WHERE id IN ('$RA', '$RB')")" "1 $PA"
wait_for 20 "the worker gone" no_worker
grep 'gpuburst-worker\[[0-9]*\]: debug: worker_lock_busy' "$TMP/gpuburst.log" >"$TMP/busy" ||
	fail "no worker found the lock taken"
grep -q "gpuburst-worker\[$PA\]" "$TMP/busy" && fail "worker $PA itself reported the lock busy"
ok "worker $PA ran both requests; the one started for $B found the lock taken; none left"
