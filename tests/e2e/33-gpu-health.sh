#!/bin/sh
# 33-gpu-health.sh - issue 21: an instance whose GPU check fails never
# registers.  tests/data/cloudsim/e2e-health.yaml has on-demand g5.xlarge
# in Singapore (home) and Mumbai ap-south-1a; the first Singapore instance
# shows no GPU (the lab's fake nvidia-smi, bad-gpus/ap-southeast-1a).
# gpuburst-node on it does not start slurmd: it tags itself
# "unhealthy: ..." and sets its node POWER_DOWN_FORCE with the reason, so
# Slurm requeues the job at once (not at ResumeTimeout) and gpuburst-suspend
# terminates the instance.  The worker's NOTICE step remembers the
# offering as dry; the requeued job gets another instance, in Mumbai, and
# runs.  reconcile keeps the agent's words on the record; requests show
# prints them.
. "${srcdir:-.}/e2e-lib.sh"
SCENARIO="$GB_TOP_SRCDIR/tests/data/cloudsim/e2e-health.yaml"
CRED_EXPIRE=5		# a requeued batch job may start again 6 s later
RESUME_TIMEOUT=120	# the replacement must not come from ResumeTimeout
e2e_start --nodes 2
touch "$TMP/bad-gpus/ap-southeast-1a"

J=$(submit -N1 -p gpu --wrap 'echo "ran on $SLURMD_NODENAME"')
wait_for 30 "a first instance" '[ -n "$(sql "SELECT instance_id FROM instances LIMIT 1")" ]'
I1=$(sql "SELECT instance_id FROM instances ORDER BY launched_at LIMIT 1")
N1=$(sql "SELECT node FROM instances WHERE instance_id='$I1'")
R1=$(sql "SELECT request_id FROM instances WHERE instance_id='$I1'")
expect_eq "first instance" "$(sql "SELECT region || ':' || az FROM instances WHERE instance_id='$I1'")" \
	"ap-southeast-1:ap-southeast-1a"

# --- the check fails: no slurmd, the node handed back at once, the job requeued
# (slurmctld's log, not the node's reason: the reason goes with the power
# down, possibly before a poll on a loaded machine sees it)
wait_for 30 "$N1 powered down by its agent" \
	'grep -q "update_node: node $N1 reason set to: gpuburst: unhealthy: instance $I1: expected 1 x A10G, nvidia-smi failed: exit status 6: No devices were found" "$LAB/log/slurmctld.log"'
wait_for 30 "job $J requeued" '[ "$(job_field $J Restarts)" = 1 ]'
[ -e "$TMP/boot/$I1/slurmd.started" ] && fail "$I1 started slurmd"
wait_for 30 "$I1 terminated" 'sim_state "$I1" | grep -Eq "shutting-down|terminated"'
TAG=$(sim_instances "[i['tags'].get('gpuburst:agent', '') for i in ins if i['id'] == '$I1'][0]")
case "$TAG" in
"unhealthy: expected 1 x A10G, "*) ;;
*) fail "$I1's agent tag: '$TAG'" ;;
esac
ok "$I1 failed its GPU check ($TAG): slurmd never started, $N1 powered down, job $J requeued, $I1 terminated"

# --- the job runs on another instance, away from the bad offering
wait_for 90 "job $J completed" '[ "$(job_state $J)" = COMPLETED ]'
N2=$(sed -n 's/^ran on //p' "$LAB/jobs/slurm-$J.out")
I2=$(instance_of "$N2")
[ -n "$I2" ] && [ "$I2" != "$I1" ] || fail "job $J ran on $N2, instance '$I2'"
expect_eq "second instance" "$(sql "SELECT region || ':' || az FROM instances WHERE instance_id='$I2'")" \
	"ap-south-1:ap-south-1a"
[ -e "$TMP/boot/$I2/slurmd.started" ] || fail "$I2 has no slurmd"
expect_eq "Singapore's on-demand pool dry in memory" \
	"$(sql "SELECT count(*) FROM capacity_stats WHERE region='ap-southeast-1' AND az='ap-southeast-1a' AND instance_type='g5.xlarge' AND capacity='on-demand' AND last_ice_at > 0")" 1
expect_eq "notice events" "$(sql "SELECT count(*) FROM events WHERE kind='reconcile' AND detail LIKE '%notice%$I1%'")" 1
ok "job $J ran on $N2, instance $I2 in ap-south-1a; Singapore's offering remembered dry once"

# --- the instance's side, kept by reconcile
ctl reconcile >"$TMP/rec.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec.out")"
expect_eq "$I1's record" "$(sql "SELECT state || '|' || agent FROM instances WHERE instance_id='$I1'")" "terminated|$TAG"
ctl requests show "$R1" >"$TMP/show.out" 2>&1 || fail "requests show: $(cat "$TMP/show.out")"
grep -qF "$TAG" "$TMP/show.out" || fail "requests show $R1 does not show the agent's side: $(cat "$TMP/show.out")"
ok "reconcile kept the agent's words on $I1's record; requests show $R1 prints them"
