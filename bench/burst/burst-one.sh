#!/bin/sh
# burst-one.sh JOBS - one burst through Slurm, run by run.sh (the
# environment names the build: GB_TOP_BUILDDIR, GB_TOP_SRCDIR).  The
# end-to-end lab (tests/e2e/e2e-lib.sh: a real slurmctld, gpuburst's
# programs as its Resume/Suspend programs, gpuburst-cloudsim whose
# instances start their node's slurmd) with JOBS a10g nodes; Singapore
# (the home region) and ap-south-1a dry, ap-south-1b and Tokyo holding
# JOBS between them.  JOBS one-node jobs are submitted at once (one job
# array); prints one line: seconds from the submission to all running,
# requests, EC2 calls by action (bench/sim-calls.py), and the
# InsufficientInstanceCapacity answers per pool.
set -u
JOBS=$1
srcdir="$GB_TOP_SRCDIR/tests/e2e"
RESUME_TIMEOUT=${RESUME_TIMEOUT:-300}
SUSPEND_TIME=${SUSPEND_TIME:-600}
. "$srcdir/e2e-lib.sh"
e2e_start --nodes "$JOBS"

half=$((JOBS / 2))
for c in "ap-southeast-1a 0" "ap-south-1a 0" "ap-south-1b $half" "ap-northeast-1a $((JOBS - half))"; do
	set -- $c
	control POST /_sim/capacity "{\"az\": \"$1\", \"instance_type\": \"g5.xlarge\", \"available\": $2}" \
		>/dev/null || fail "capacity $1"
done
running() { lab squeue -h -t R -o %i | wc -l; }
t0=$(date +%s.%N)
submit --array="1-$JOBS" --gres=gpu:a10g:1 --wrap 'sleep 600' >/dev/null
wait_for "$((RESUME_TIMEOUT + 60))" "all $JOBS jobs running" '[ "$(running)" -ge "$JOBS" ]'
t1=$(date +%s.%N)
calls=$("$PYTHON3" "$GB_TOP_SRCDIR/bench/sim-calls.py" "$SIM_PORT") || fail "the simulator's calls"
ice=$(sql "SELECT az || ' ' || count(*) FROM attempts WHERE error_code = 'InsufficientInstanceCapacity' GROUP BY az ORDER BY az" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
printf '%s jobs running after %.1f s; %s requests; calls %s; ICE per dry pool: %s\n' "$JOBS" \
	"$(awk "BEGIN { print $t1 - $t0 }")" "$(sql "SELECT count(*) FROM requests WHERE kind = 'resume'")" \
	"$calls" "${ice:-none}"
