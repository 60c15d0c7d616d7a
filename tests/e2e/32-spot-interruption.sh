#!/bin/sh
# 32-spot-interruption.sh - issue 21: a spot instance gets EC2's two-minute
# notice.  tests/data/cloudsim/e2e-interrupt.yaml has spot g5.xlarge only,
# 4 in Singapore (home) and 4 in Mumbai ap-south-1a.  A job runs on a spot
# instance in Singapore; the simulator schedules its interruption
# (POST /_sim/interrupt, 60 s ahead).  gpuburst-node on the instance sees
# spot/instance-action at its next poll (every 5 s): the node is drained
# with the reason and the deadline within 10 s of the notice, the job is
# requeued while the instance still runs (not at SlurmdTimeout, not when it
# dies), and the node powers down (gpuburst-suspend terminates the
# instance before EC2's deadline).  The worker's NOTICE step remembers
# Singapore's spot offering as dry before it plans the requeued job, which
# lands in Mumbai although Singapore still has room, and completes.  The
# instance's side shows in its gpuburst:agent tag, its record and
# `gpuburstctl requests show`.
. "${srcdir:-.}/e2e-lib.sh"
SCENARIO="$GB_TOP_SRCDIR/tests/data/cloudsim/e2e-interrupt.yaml"
A10G_EXTRA="    market: spot"
CRED_EXPIRE=5		# a requeued batch job may start again 6 s later
e2e_start --nodes 2

# the first run waits to be interrupted; the second completes
J=$(submit -N1 -p gpu --requeue --wrap "echo \"run \${SLURM_RESTART_COUNT:-0} on \$SLURMD_NODENAME\" >>$TMP/job-runs
[ \"\${SLURM_RESTART_COUNT:-0}\" -gt 0 ] || sleep 600")
wait_for 60 "job $J running" '[ "$(job_state $J)" = RUNNING ] && [ -s "$TMP/job-runs" ]'
N1=$(lab squeue -h -j "$J" -o %N)
I1=$(instance_of "$N1")
R1=$(request_of "$N1")
expect_eq "first instance" "$(sql "SELECT region || ':' || az || ':' || capacity FROM instances WHERE instance_id='$I1'")" \
	"ap-southeast-1:ap-southeast-1a:spot"
wait_for 10 "$I1's agent says ok" \
	'[ "$(sql "SELECT 1 FROM instances WHERE instance_id='"'$I1'"'")" = 1 ] && [ "$(sim_instances "[i[\"tags\"].get(\"gpuburst:agent\", \"\") for i in ins if i[\"id\"] == \"$I1\"][0]")" = "ok: node $N1, 1 x A10G, slurmd started" ]'
ok "job $J runs on $N1: spot instance $I1 in ap-southeast-1a, its agent ok"

# --- the notice: drained within 10 s, requeued while the instance runs
t0=$(date +%s.%N)
control POST /_sim/interrupt "{\"instance\": \"$I1\", \"kind\": \"spot\", \"in\": 60}" >"$TMP/interrupt.json" ||
	fail "POST /_sim/interrupt"
DEADLINE=$(jq_py "$TMP/interrupt.json" 'd["time"]')
# Reason and State from one read: on a loaded machine the job can be
# requeued and the node powering down (which ends DRAIN) before the next
# poll, so a second read could miss the drain that did happen.
wait_for 10 "$N1 drained" 'lab scontrol -o show node "$N1" >"$TMP/drained.show" 2>/dev/null &&
	grep -q " Reason=gpuburst: spot interruption: instance $I1 at $DEADLINE" "$TMP/drained.show"'
t_drain=$(date +%s.%N)
S1=$(tr ' ' '\n' <"$TMP/drained.show" | sed -n 's/^State=//p')
echo "$S1" | grep -Eq 'DRAIN|POWERING_DOWN|POWERED_DOWN' || fail "$N1 has the reason but is not draining: $S1"
wait_for 20 "job $J requeued" '[ "$(job_field $J Restarts)" = 1 ]'
t_requeue=$(date +%s.%N)
# The instance still runs, or Slurm has already powered the free node down
# and gpuburst-suspend has ended it (on a loaded machine that can happen
# before this poll sees the requeue): either way the job left the node
# before the instance died, and EC2's interruption never came.
S_REQ=$(sim_instances "[i['state'] + ' ' + str(i['spot_interrupted']) for i in ins if i['id'] == '$I1'][0]")
case $S_REQ in
"running False") ;;
"shutting-down False" | "terminated False")
	wait_for 10 "$I1's record ended by gpuburst-suspend" \
		'[ "$(sql "SELECT reason FROM instances WHERE instance_id='"'$I1'"' AND state IN ('"'shutting-down', 'terminated'"')")" = "suspended by Slurm (SuspendProgram)" ]'
	echo "# $I1 was already ended by gpuburst-suspend when the requeue was seen" ;;
*) fail "$I1 when the job was requeued: '$S_REQ' (state, spot_interrupted), want running or ended by gpuburst-suspend" ;;
esac
# the times, for bench/node/run.sh (not checked here beyond the 10 s above)
since() { awk -v a="$1" -v b="$t0" 'BEGIN { printf "%.3f", a - b }'; }
echo "# notice -> drain $(since "$t_drain") s, notice -> requeue $(since "$t_requeue") s (polled every 0.2 s)"
[ -n "${E2E_TIMINGS:-}" ] && echo "$(since "$t_drain") $(since "$t_requeue")" >>"$E2E_TIMINGS"
ok "notice for $I1 (terminate at $DEADLINE): $N1 drained with the reason and the deadline, job $J requeued while $I1 still runs"

# --- the requeued job lands elsewhere, Singapore's spot avoided from memory
wait_for 90 "job $J completed" '[ "$(job_state $J)" = COMPLETED ]'
# (the node may be $N1 again, powered down and resumed on a new instance)
N2=$(sed -n 's/^run 1 on //p' "$TMP/job-runs")
[ -n "$N2" ] || fail "no second run: $(cat "$TMP/job-runs")"
I2=$(instance_of "$N2")
[ "$I2" != "$I1" ] || fail "the second run was on $I1 again"
expect_eq "second instance" "$(sql "SELECT region || ':' || az || ':' || capacity FROM instances WHERE instance_id='$I2'")" \
	"ap-south-1:ap-south-1a:spot"
R2=$(request_of "$N2")
expect_eq "no attempt in Singapore for the requeued job" \
	"$(sql "SELECT count(*) FROM attempts WHERE request_id='$R2' AND region='ap-southeast-1'")" 0
ROOM=$(control GET /_sim/state | "$PYTHON3" -c 'import json, sys
for r in json.load(sys.stdin)["regions"]:
    for z in r["azs"]:
        if z["name"] == "ap-southeast-1a":
            print(sum(p["available"] for p in z["spot_pools"] if p["instance_type"] == "g5.xlarge"))')
[ "$ROOM" -ge 3 ] || fail "Singapore's spot room: $ROOM, want at least 3"
ok "job $J ran again on $N2, instance $I2 (spot in ap-south-1a), and completed; Singapore, still with room, was not tried"

# --- what the controller and the instance kept
expect_eq "Singapore's spot pool dry in memory" \
	"$(sql "SELECT count(*) FROM capacity_stats WHERE region='ap-southeast-1' AND az='ap-southeast-1a' AND instance_type='g5.xlarge' AND capacity='spot' AND last_ice_at > 0")" 1
expect_eq "noticed once" "$(sql "SELECT count(*) FROM instances WHERE instance_id='$I1' AND noticed_at > 0")" 1
expect_eq "notice events" "$(sql "SELECT count(*) FROM events WHERE kind='reconcile' AND detail LIKE '%notice%$I1%'")" 1
wait_for 60 "$I1 terminated" '[ "$(sim_state "$I1")" = terminated ]'
expect_eq "$I1 ended by" "$(sql "SELECT reason FROM instances WHERE instance_id='$I1'")" \
	"suspended by Slurm (SuspendProgram)"
TAG=$(sim_instances "[i['tags'].get('gpuburst:agent', '') for i in ins if i['id'] == '$I1'][0]")
expect_eq "$I1's agent tag" "$TAG" "interrupted: spot terminate at $DEADLINE; drained; requeued $J"
ctl reconcile >"$TMP/rec.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec.out")"
ctl requests show "$R1" >"$TMP/show.out" 2>&1 || fail "requests show: $(cat "$TMP/show.out")"
grep -q "interrupted: spot terminate at $DEADLINE" "$TMP/show.out" ||
	fail "requests show $R1 does not show the agent's side: $(cat "$TMP/show.out")"
ok "memory: ap-southeast-1a spot dry; one notice event; $I1 gone, tagged by its agent; requests show has it"
