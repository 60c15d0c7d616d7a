#!/bin/bash
# slurm-cb-lab.sh - the Capacity Block window in a real slurmctld (the lab,
# contrib/lab/gpuburst-lab), through libslurmif (gb_resvtool):
#  - with CLOUD nodes in the states gpuburst's are in (one running a job,
#    one powering up for a job, one powered down), gb_slurm_resv_ensure
#    creates gpuburst_cb_<id> (Flags=MAINT,IGNORE_JOBS) on them, and the
#    same call again changes nothing;
#  - a job whose time limit reaches into the window pends ("ReqNodeNotAvail,
#    Reserved for maintenance"), a short one starts on a reserved node, a
#    long one runs on a node outside;
#  - ensure with fewer nodes frees the node left out (the long job starts
#    there);
#  - the plan (gb_slurm_cb_plan) at end - margin: the window moves to now,
#    POWER_DOWN_ASAP drains the nodes with the block's reason, a job running
#    there goes on and its node powers down after it; a second plan has
#    nothing to do; with no live node, or for an unknown block, the
#    reservation is deleted; deleting an absent one is fine.
# What Slurm printed is echoed (states, reasons) for the record.
set -u
tool="$GB_TOP_SRCDIR/contrib/lab/gpuburst-lab"
rt="$GB_TOP_BUILDDIR/tests/integration/gb_resvtool"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (slurmctld, munged and a mount namespace)"
for b in slurmctld slurmd munged mungekey scontrol sbatch squeue unshare setsid ss flock; do
	command -v "$b" >/dev/null 2>&1 ||
		skip "$b is missing (apt-get install slurm-wlm munge util-linux iproute2)"
done
unshare -m true 2>/dev/null || skip "unshare -m is not permitted here (the lab's DNS guard needs it)"
[ -x "$rt" ] || { echo "ERROR: $rt was not built"; exit 99; }
# libslurm's own leaks (a sanitizer build of gb_resvtool)
export LSAN_OPTIONS="suppressions=$GB_TOP_SRCDIR/tests/e2e/lsan.supp:print_suppressions=0"

T=$(mktemp -d /tmp/gb-cb.XXXXXX)
chmod 755 "$T"	# munged wants o+x on every directory above its socket
LAB=$T/lab
trap '"$tool" stop --dir "$LAB" --purge >/dev/null 2>&1; rm -rf "$T"' EXIT
mkdir -p "$T/hold"

# The "instances": slurmd of the node, on this host (hold/NODE: it never
# boots, the node stays POWERING_UP); suspend stops it by its pid file.
cat > "$T/resume" <<'EOF'
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
T=$(cd "$(dirname "$0")" && pwd)
exec </dev/null >>"$T/resume.log" 2>&1
echo "$(date +%T.%N) resume $1"
for node in $(scontrol show hostnames "$1"); do
	[ -e "$T/hold/$node" ] && continue
	sleep 1		# slurmd -b: a boot time before the resume request is ignored
	mkdir -p "$T/lab/spool/$node"
	scontrol update nodename="$node" nodeaddr=127.0.0.1 nodehostname="$(hostname -s)"
	echo "$(date +%T.%N) $node: update $?"
	# slurmscriptd (23.02+) kills the program's process group once it
	# exits: slurmd's daemon child must be in a session of its own before
	# this script can end (seen on 24.11 under load: a node that never
	# registered, no slurmd log at all)
	setsid -w env --default-signal slurmd -b -f "$SLURM_CONF" -N "$node"
	echo "$(date +%T.%N) $node: slurmd $?"
done
EOF
cat > "$T/suspend" <<'EOF'
#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
T=$(cd "$(dirname "$0")" && pwd)
exec </dev/null >>"$T/suspend.log" 2>&1
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
for node in $(scontrol show hostnames "$1"); do
	echo "suspend $node"
	pf=$T/lab/run/slurmd-$node.pid
	[ -f "$pf" ] || continue
	pid=$(cat "$pf")
	tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "slurmd .*-N $node" || continue
	kill -TERM "$pid"
	for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
	rm -f "$pf"
done
EOF
printf '#!/bin/sh\nexit 0\n' > "$T/noop"
chmod 755 "$T/resume" "$T/suspend" "$T/noop"
p=$("$tool" free-ports 4)
cat > "$T/nodes.conf" <<NODES
NodeName=cb-[1-3] Port=[$p-$((p + 2))] CPUs=1 RealMemory=500 State=CLOUD
NodeName=ot-1 Port=$((p + 3)) CPUs=1 RealMemory=500 State=CLOUD
PartitionName=blk Nodes=cb-[1-3] Default=YES MaxTime=INFINITE State=UP
PartitionName=all Nodes=cb-[1-3],ot-1 MaxTime=INFINITE State=UP
NODES
"$tool" start --dir "$LAB" --fresh --nodes-conf "$T/nodes.conf" \
	--resume-program "$T/resume" --suspend-program "$T/suspend" \
	--resume-fail-program "$T/noop" --suspend-time 600 --suspend-timeout 3 \
	--resume-timeout 300 --prolog-ctld > "$T/start.out" 2>&1 || {
	cat "$T/start.out"; tail -20 "$LAB/log/slurmctld.log"; exit 1; }

lab() { (cd "$LAB/jobs" && "$tool" sh --dir "$LAB" "$@"); }
state() { lab scontrol show node "$1" | grep -oE 'State=[^ ]+' | cut -d= -f2; }
reason() { lab scontrol show node "$1" | sed -n 's/^ *Reason=\(.*\) \[.*\]$/\1/p'; }
job_state() { lab squeue -h -j "$1" -o '%T' 2>/dev/null; }
job_reason() { lab squeue -h -j "$1" -o '%r' 2>/dev/null; }
job_node() { lab squeue -h -j "$1" -o '%N' 2>/dev/null; }
submit() { lab sbatch --parsable "$@" | cut -d';' -f1; }
# started JOB NODE: slurmctld started JOB on NODE (main scheduler or
# backfill), from the job's record (slurmctld keeps it MinJobAge after the
# end; the log's wording differs between releases)
started() {
	lab scontrol -o show job "$1" 2>/dev/null |
		grep -qE "JobState=(CONFIGURING|RUNNING|COMPLETING|COMPLETED) .* NodeList=$2 "
}
resv_field() { lab scontrol show reservation "$1" | grep -oE "$2=[^ ]+" | cut -d= -f2-; }
# wait_for SECONDS WHAT CODE: poll CODE until it succeeds; else bad WHAT
wait_for() {
	local t=$1 what=$2
	for _ in $(seq $((t * 5))); do
		eval "$3" && return 0
		sleep 0.2
	done
	bad "timed out after ${t}s waiting for: $what"
	return 1
}
show_nodes() {
	for n in cb-1 cb-2 cb-3 ot-1; do
		echo "  $n $(state $n)${1:+ Reason=$(reason $n)}"
	done
}

ID=cr-0aaaabbbbccccdddd
R=gpuburst_cb_$ID

# --- nodes in the states gpuburst's are in
touch "$T/hold/cb-2"
run=$(submit -w cb-1 -t 10 -J run --wrap 'sleep 600')
boot=$(submit -w cb-2 -t 5 -J boot --wrap 'sleep 30')
wait_for 30 "job $run running on cb-1" '[ "$(job_state $run)" = RUNNING ]'
wait_for 30 "cb-2 powering up" 'case $(state cb-2) in *POWERING_UP*) true ;; *) false ;; esac'
echo "nodes before the reservation:"
show_nodes

# --- ensure: created, then unchanged
now=$(date +%s)
S=$((now + 240))
E=$((now + 900))
out=$(lab "$rt" ensure "$R" 'cb-[1-3]' $S $E "gpuburst: capacity block $ID ends (test)")
[ "$out" = created ] || bad "ensure: '$out', want 'created'"
out=$(lab "$rt" ensure "$R" 'cb-[1-3]' $S $E "gpuburst: capacity block $ID ends (test)")
[ "$out" = unchanged ] || bad "ensure again: '$out', want 'unchanged'"
echo "scontrol show reservation:"
lab scontrol show reservation "$R" | sed 's/^/  /'
[ "$(resv_field "$R" Nodes)" = 'cb-[1-3]' ] || bad "Nodes=$(resv_field "$R" Nodes)"
[ "$(resv_field "$R" Flags)" = MAINT,IGNORE_JOBS,SPEC_NODES ] ||
	bad "Flags=$(resv_field "$R" Flags)"
[ "$(resv_field "$R" Users)" = root ] || bad "Users=$(resv_field "$R" Users)"
[ "$(resv_field "$R" StartTime)" = "$(date -d @$S +%FT%T)" ] ||
	bad "StartTime=$(resv_field "$R" StartTime), want $(date -d @$S +%FT%T)"
[ "$(resv_field "$R" EndTime)" = "$(date -d @$E +%FT%T)" ] ||
	bad "EndTime=$(resv_field "$R" EndTime)"
# the comment is kept from 23.02 ("-": none)
case $(lab "$rt" list gpuburst_cb_) in
"$R cb-[1-3] $S $E -" | "$R cb-[1-3] $S $E gpuburst: capacity block $ID ends (test)") ;;
*) bad "list: $(lab "$rt" list gpuburst_cb_)" ;;
esac
# why IGNORE_JOBS: without it Slurm refuses nodes whose jobs reach into the window
out=$(lab scontrol create reservation reservationname=plain nodes=cb-1 starttime=now+240 \
	duration=10 users=root flags=maint 2>&1)
echo "without IGNORE_JOBS: $out"
case $out in *"Requested nodes are busy"*) ;; *) bad "MAINT alone on a busy node: '$out'" ;; esac

# --- the scheduler: long jobs stay out, short ones run
long=$(submit -p blk -t 30 -J long --wrap 'sleep 5')
short=$(submit -p blk -t 1 -J short --wrap 'sleep 5')
longall=$(submit -p all -t 30 -J longall --wrap 'sleep 5')
wait_for 40 "the short job started on cb-3" 'started $short cb-3'
wait_for 40 "the long job of partition all started on ot-1" 'started $longall ot-1'
wait_for 20 "the long job pending for the window" \
	'[ "$(job_reason $long)" = "ReqNodeNotAvail, Reserved for maintenance" ]'
echo "long job $long: $(job_state $long) ($(job_reason $long)), expected start" \
	"$(lab squeue -h -j $long -o %S)"
grep -E "(Allocate|Started) JobId=($short|$longall) " "$LAB/log/slurmctld.log" | sed 's/^/  /'

# --- fewer nodes: cb-3 leaves the window, the long job takes it
out=$(lab "$rt" ensure "$R" 'cb-[1-2]' $S $E "gpuburst: capacity block $ID ends (test)")
[ "$out" = updated ] || bad "ensure cb-[1-2]: '$out', want 'updated'"
out=$(lab "$rt" ensure "$R" 'cb-2,cb-1' $S $E "gpuburst: capacity block $ID ends (test)")
[ "$out" = unchanged ] || bad "ensure cb-2,cb-1: '$out', want 'unchanged'"
[ "$(resv_field "$R" Nodes)" = 'cb-[1-2]' ] || bad "Nodes=$(resv_field "$R" Nodes)"
wait_for 40 "the long job started on cb-3" 'started $long cb-3'

# --- the plan at end - margin: window now, nodes drained, then powered down
wait_for 30 "cb-3 free" '[ -z "$(lab squeue -h -w cb-3)" ]'
# long enough to be still running through the checks below on a loaded
# machine (15 s was not, with three suites and a benchmark beside it)
job=$(submit -p all -w cb-3 -t 2 -J last --wrap 'sleep 40')
wait_for 30 "job $job running on cb-3" '[ "$(job_state $job)" = RUNNING ]'
margin=$((E - $(date +%s) + 60))
lab "$rt" plan $margin $ID $E 'cb-[1-3]' > "$T/plan1" || bad "plan failed: $(cat "$T/plan1")"
echo "plan at end - margin:"
sed 's/^/  /' "$T/plan1"
[ "$(sed -n 1p "$T/plan1")" = "ensure $R cb-1,cb-2,cb-3 $((E - margin)) $E" ] ||
	bad "plan: first action '$(sed -n 1p "$T/plan1")'"
[ "$(sed -n 2p "$T/plan1")" = "power_down_asap cb-1,cb-2,cb-3" ] ||
	bad "plan: second action '$(sed -n 2p "$T/plan1")'"
[ "$(wc -l < "$T/plan1")" = 2 ] || bad "plan: $(wc -l < "$T/plan1") actions, want 2"
echo "reservation and nodes after it:"
lab scontrol show reservation "$R" | head -2 | sed 's/^/  /'
[ "$(resv_field "$R" State)" = ACTIVE ] || bad "reservation State=$(resv_field "$R" State)"
show_nodes reason
want_reason="gpuburst: capacity block $ID ends $(date -u -d @$E +%FT%TZ)"
for n in cb-1 cb-2 cb-3; do
	[ "$(reason $n)" = "$want_reason" ] || bad "$n Reason='$(reason $n)'"
	case $(state $n) in *DRAIN*POWER_DOWN*) ;; *) bad "$n State=$(state $n)" ;; esac
done
[ "$(job_state $run)" = RUNNING ] || bad "job $run on cb-1: $(job_state $run)"
[ "$(job_state $job)" = RUNNING ] || bad "job $job on cb-3: $(job_state $job)"
lab "$rt" plan $margin $ID $E 'cb-[1-3]' > "$T/plan2"
[ "$(cat "$T/plan2")" = "nothing to do" ] || bad "plan again: $(cat "$T/plan2")"
# the job ends, then the node powers down
t0=$(date +%s)
wait_for 70 "job $job done" '[ -z "$(job_state $job)" ] || [ "$(job_state $job)" = COMPLETED ]'
wait_for 20 "cb-3 powering down" 'case $(state cb-3) in *POWERING_DOWN*|*POWERED_DOWN*) true ;; *) false ;; esac'
echo "cb-3 after its job: $(state cb-3) Reason=$(reason cb-3) (+$(( $(date +%s) - t0 ))s)"
wait_for 20 "cb-3 powered down" 'case $(state cb-3) in *POWERED_DOWN*) true ;; *) false ;; esac'
echo "cb-3 then: $(state cb-3) Reason=$(reason cb-3) (+$(( $(date +%s) - t0 ))s)"
grep -q "suspend cb-3" "$T/suspend.log" || bad "SuspendProgram was not run for cb-3"
echo "nodes at the end:"
show_nodes reason
lab "$rt" plan $margin $ID $E 'cb-[1-3]' > "$T/plan3"
[ "$(cat "$T/plan3")" = "nothing to do" ] || bad "plan after power-down: $(cat "$T/plan3")"

# --- no live node, an unknown block: delete; absent: fine
out=$(lab "$rt" plan $margin $ID $E '')
[ "$out" = "delete $R" ] || bad "plan without nodes: '$out'"
[ -z "$(lab "$rt" list gpuburst_cb_)" ] || bad "left: $(lab "$rt" list gpuburst_cb_)"
out=$(lab "$rt" ensure gpuburst_cb_cr-0ffff ot-1 $(($(date +%s) + 600)) $(($(date +%s) + 1200)))
[ "$out" = created ] || bad "ensure of another block: '$out'"
out=$(lab "$rt" plan 2400)
[ "$out" = "delete gpuburst_cb_cr-0ffff" ] || bad "plan of no block: '$out'"
lab "$rt" delete "$R" || bad "deleting an absent reservation failed"
[ -z "$(lab "$rt" list)" ] || bad "reservations left: $(lab "$rt" list)"
out=$(lab "$rt" plan 2400)
[ "$out" = "nothing to do" ] || bad "plan of nothing: '$out'"

if [ "$fail" = 0 ]; then
	echo "ok"
else
	echo "--- slurmctld.log (last 40 lines)"
	tail -n 40 "$LAB/log/slurmctld.log"
	echo "--- slurmctld.log on powering up (first 30 lines)"
	grep -iE "power|resum|cb-1|cb-2" "$LAB/log/slurmctld.log" | head -n 30
	echo "--- resume.log"
	cat "$T/resume.log" 2>/dev/null
	for f in "$LAB"/log/slurmd-*.log; do
		[ -f "$f" ] || continue
		echo "--- $(basename "$f") (last 15 lines)"
		tail -n 15 "$f"
	done
fi
exit "$fail"
