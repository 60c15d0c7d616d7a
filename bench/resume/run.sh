#!/bin/sh
# run.sh BUILDDIR SRCDIR [RUNS] - gpuburst-resume's wall time, exec to exit,
# for 1, 100, 1000 and 10000 nodes (one job in a 22.05 SLURM_RESUME_FILE),
# with a state file already holding 100000 historical instance rows; side
# by side with the floor of the anchors' Python resume programs: starting
# python3 and creating a boto3 EC2 client (Debian python3-boto3).
#
# The program runs as slurmctld runs it (environment SLURM_CONF and
# SLURM_RESUME_FILE only) and starts its worker as always; the driver holds
# the worker lock, so that worker exits at once and launches nothing (its
# fork is in the measured time, its run is not).  The state file is copied
# fresh for each node count, so each series starts from the same 100k rows.
set -eu
B=$1 S=$2 RUNS=${3:-21}
D="$B/bench/resume/resume-bench"
RESUME="$B/src/resume/gpuburst-resume"
WORKER="$B/src/worker/gpuburst-worker"
PY=/usr/bin/python3
[ -x "$D" ] && [ -x "$RESUME" ] || { echo "build first (make)"; exit 1; }
T=$(mktemp -d /tmp/gb-bench-resume.XXXXXX)
trap 'rm -rf "$T"' EXIT

cat >"$T/gpuburst.yaml" <<CONF
cluster_name: bench
state_dir: $T/state
log: {file: $T/gpuburst.log, level: info}
regions:
  - name: ap-south-1
    ami: ami-0123456789abcdef0
    azs: [{name: ap-south-1a, subnets: [subnet-bench-a1]}]
fallback_groups:
  asia: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: 'g5-[1-10000]', instance_type: g5.xlarge, home_region: ap-southeast-1}
CONF

mkdir -p "$T/pristine"
"$D" prefill "$T/pristine/state.db" 100000
echo "machine: $(nproc) CPU $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gpuburst-resume, $RUNS runs each, state file $(du -h "$T/pristine/state.db" | cut -f1)B with 100000 instance rows:"
for n in 1 100 1000 10000; do
	rm -rf "$T/state"
	cp -r "$T/pristine" "$T/state"
	if [ "$n" = 1 ]; then nodes=g5-1; else nodes="g5-[1-$n]"; fi
	printf '{"jobs":[{"job_id":1,"nodes":"%s"}],"all_nodes":"%s"}' "$nodes" "$nodes" >"$T/resume.json"
	printf '  nodes=%-6s ' "$n"
	env -i SLURM_CONF=/nonexistent/slurm.conf SLURM_RESUME_FILE="$T/resume.json" GPUBURST_WORKER="$WORKER" \
		"$D" hold "$T/state/worker.lock" -- "$D" time "$RUNS" -- "$RESUME" -c "$T/gpuburst.yaml" "$nodes"
	q=$(grep -c 'resume_queued' "$T/gpuburst.log" || true)
	[ "$q" -ge "$RUNS" ] || { echo "only $q resume_queued lines"; exit 1; }
	: >"$T/gpuburst.log"
done
if "$PY" -c 'import boto3' 2>/dev/null; then
	printf '  python3+boto3 floor: '
	"$D" time "$RUNS" -- "$PY" -c "import boto3; boto3.client('ec2', region_name='us-east-1')"
else
	echo "  python3+boto3 floor: skipped (apt-get install python3-boto3)"
fi
