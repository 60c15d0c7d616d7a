#!/bin/sh
# 10-site-onprem.sh - gpuburst added to a site's existing cluster (issue
# 15): the site's slurm.conf has an on-premises node (site-1, a real
# slurmd, not CLOUD) in its own partition, SlurmctldParameters=
# enable_configless, ReturnToService=1 and its own SchedulerParameters.
# gpuburst's lines go in as README "Using it on a real cluster" says
# (`gpuburstctl slurm-conf --merge`: power saving only on the burst
# partitions, the site's lines merged, never a second line of a key).
# Then: the site's parameters are still in force; site-1 stays IDLE through
# several SuspendTime periods and runs a job; the burst nodes still resume
# and suspend; gpuburst-resume handed site-1 (a setting that reaches it)
# leaves it alone and says why.
SUSPEND_TIME=3
SITE_LINES='SlurmctldParameters=enable_configless
ReturnToService=1
SchedulerParameters=sched_interval=5,bf_interval=5'
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2 --site

# --- the site's parameters survived, merged with gpuburst's
lab scontrol show config >"$TMP/config" || fail "scontrol show config"
cfg() { sed -n "s/^$1 *= *//p" "$TMP/config"; }
case ",$(cfg SlurmctldParameters)," in
*,enable_configless,*idle_on_node_suspend,*) ;;
*) fail "SlurmctldParameters: '$(cfg SlurmctldParameters)' lacks the site's or gpuburst's options" ;;
esac
expect_eq "ReturnToService (the site's)" "$(cfg ReturnToService)" 1
case "$(cfg SchedulerParameters)" in
sched_interval=5,bf_interval=5*) ;;
*) fail "SchedulerParameters: '$(cfg SchedulerParameters)', want the site's first" ;;
esac
case "$(cfg SuspendTime)" in	# unset: 22.05 prints INFINITE, later releases NONE
INFINITE|NONE) ;;
*) fail "global SuspendTime: '$(cfg SuspendTime)', want it unset" ;;
esac
grep -q "specified more than once" "$LAB/log/slurmctld.log" &&
	fail "a key is set twice: $(grep 'specified more than once' "$LAB/log/slurmctld.log" | head -3)"
lab scontrol -o show partition gpu | grep -Eq 'SuspendTime=(00:00:03|3)( |$)' ||
	fail "partition gpu: $(lab scontrol -o show partition gpu)"
ok "the site's SlurmctldParameters, ReturnToService and SchedulerParameters are in force with gpuburst's merged in; power saving only on the burst partition"

# --- doctor reads the running configuration: power saving reaches no
# node of the site's; a partition of the site's with a SuspendTime does
ctl doctor >"$TMP/doctor.out" 2>&1
for want in "^ok   power saving: reaches no node outside the nodesets (1 of the site's own checked)" \
	    "^ok   slurmctld parameters: enable_configless,idle_on_node_suspend"; do
	grep -q "$want" "$TMP/doctor.out" || fail "doctor lacks '$want': $(cat "$TMP/doctor.out")"
done
# a global SuspendTime (one more line in slurm.conf, then reconfigure)
cp "$LAB/etc/slurm.conf" "$TMP/slurm.conf.good"
echo "SuspendTime=600" >>"$LAB/etc/slurm.conf"
lab scontrol reconfigure || fail "scontrol reconfigure"
ctl doctor >"$TMP/doctor.out" 2>&1 && fail "doctor passed with a global SuspendTime: $(cat "$TMP/doctor.out")"
grep -q "^FAIL power saving: Slurm can power down 1 node gpuburst does not own (site-1; the global SuspendTime) into gpuburst-suspend" "$TMP/doctor.out" ||
	fail "doctor: $(grep 'power saving' "$TMP/doctor.out")"
cp "$TMP/slurm.conf.good" "$LAB/etc/slurm.conf"
lab scontrol reconfigure || fail "scontrol reconfigure back"
ctl doctor >"$TMP/doctor.out" 2>&1
grep -q "^ok   power saving: " "$TMP/doctor.out" || fail "doctor after the fix: $(grep 'power saving' "$TMP/doctor.out")"
ok "doctor: power saving reaches only the burst nodes; a global SuspendTime is reported, naming site-1"

# --- the on-premises node is never powered down
wait_for 20 "site-1 registered" 'state_is site-1 "^IDLE$"'
sleep $((SUSPEND_TIME * 4))
state_is site-1 "^IDLE$" || fail "site-1 after 4 SuspendTime periods: $(node_field site-1 State)"
# (no state file yet is nothing handed over either)
n=$(sql "SELECT count(*) FROM request_nodes WHERE node='site-1'")
expect_eq "requests for site-1" "${n:-0}" 0
JOB=$(submit -p site -w site-1 --wrap 'echo "on $SLURMD_NODENAME"')
wait_for 20 "job $JOB on site-1 completed" '[ "$(job_state $JOB)" = COMPLETED ]'
grep -qx "on site-1" "$LAB/jobs/slurm-$JOB.out" || fail "job output: $(cat "$LAB/jobs/slurm-$JOB.out")"
ok "site-1 stayed IDLE through 4 SuspendTime periods and ran job $JOB"

# --- the burst nodes still resume and suspend
JOB=$(submit -p gpu --gres=gpu:a10g:1 --wrap 'sleep 1')
wait_for 40 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
NODE=$(lab sacct -n -X -j "$JOB" -o NodeList 2>/dev/null | tr -d ' ')
[ -n "$NODE" ] && [ "$NODE" != None ] || NODE=$(sql "SELECT node FROM instances ORDER BY launched_at DESC LIMIT 1")
IID=$(sql "SELECT instance_id FROM instances WHERE node='$NODE' ORDER BY launched_at DESC LIMIT 1")
[ -n "$IID" ] || fail "no instance recorded for job $JOB"
wait_for 30 "instance $IID terminated (suspend)" '[ "$(record_state $IID)" = terminated ]'
wait_for 30 "$NODE powered down" 'state_is "$NODE" "POWERED_DOWN"'
state_is site-1 "^IDLE$" || fail "site-1: $(node_field site-1 State)"
ok "burst job $JOB ran on $NODE, whose instance $IID was terminated at SuspendTime; site-1 untouched"

# --- gpuburst-resume handed the site's node: left alone, with the reason
lab env -u SLURM_RESUME_FILE "$RESUME" -c "$CONF" site-1 >"$TMP/r.out" 2>&1 ||
	fail "gpuburst-resume site-1: $(cat "$TMP/r.out")"
grep -q 'resume_not_ours nodes=site-1 count=1 action=none .*fix="set SuspendTime on the gpuburst partitions only' "$TMP/gpuburst.log" ||
	fail "no resume_not_ours line: $(grep site-1 "$TMP/gpuburst.log")"
state_is site-1 "^IDLE$" || fail "site-1 after gpuburst-resume: $(node_field site-1 State) $(node_reason site-1)"
expect_eq "requests for site-1" "$(sql "SELECT count(*) FROM request_nodes WHERE node='site-1'")" 0
ok "gpuburst-resume site-1 changed nothing and logged the slurm.conf fix"
