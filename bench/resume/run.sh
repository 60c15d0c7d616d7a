#!/bin/sh
# run.sh BUILDDIR SRCDIR [RUNS [BASE_BUILDDIR]] - gpuburst-resume's wall
# time, exec to exit, for 1, 100, 1000 and 10000 nodes of one job, and for
# 1000 and 10000 one-node jobs (a 22.05 SLURM_RESUME_FILE), with a state
# file already holding 100000 historical instance rows; side by side with
# the floor of the anchors' Python resume programs: starting python3 and
# creating a boto3 EC2 client (Debian python3-boto3).  With BASE_BUILDDIR,
# each case runs that build's gpuburst-resume right after this one's, on a
# copy of a state file made alike by that build's own driver (the same
# rows in its own schema version): a before/after in one run.
#
# The program runs as slurmctld runs it (environment SLURM_CONF and
# SLURM_RESUME_FILE only) and starts its worker as always; the driver holds
# the worker lock, so that worker exits at once and launches nothing (its
# fork is in the measured time, its run is not).  The state file is copied
# fresh for each node count, so each series starts from the same 100k rows.
set -eu
B=$1 S=$2 RUNS=${3:-21} BASE=${4:-}
D="$B/bench/resume/resume-bench"
RESUME="$B/src/resume/gpuburst-resume"
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
# the base build's own file: an older build refuses a newer schema
if [ -n "$BASE" ]; then
	mkdir -p "$T/pristine-base"
	"$BASE/bench/resume/resume-bench" prefill "$T/pristine-base/state.db" 100000
fi
echo "machine: $(nproc) CPU $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gpuburst-resume, $RUNS runs each, state file $(du -h "$T/pristine/state.db" | cut -f1)B with 100000 instance rows:"
# resume_file N JOBS: N nodes g5-[1-N], in one job or one job per node
resume_file() {
	if [ "$2" = one ]; then
		if [ "$1" = 1 ]; then nodes=g5-1; else nodes="g5-[1-$1]"; fi
		printf '{"jobs":[{"job_id":1,"nodes":"%s"}],"all_nodes":"%s"}' "$nodes" "$nodes"
	else
		awk -v n="$1" 'BEGIN { printf "{\"jobs\":["
			for (i = 1; i <= n; i++) printf "%s{\"job_id\":%d,\"nodes\":\"g5-%d\"}", (i > 1 ? "," : ""), i, i
			printf "],\"all_nodes\":\"g5-[1-%d]\"}", n }'
	fi
}
# one BUILD LABEL NODES TAG: the series of that build's gpuburst-resume
one() {
	rm -rf "$T/state"
	if [ "$4" = base ]; then cp -r "$T/pristine-base" "$T/state"; else cp -r "$T/pristine" "$T/state"; fi
	printf '  %-22s %-5s ' "$2" "$4"
	env -i SLURM_CONF=/nonexistent/slurm.conf SLURM_RESUME_FILE="$T/resume.json" \
		GPUBURST_WORKER="$1/src/worker/gpuburst-worker" \
		"$D" hold "$T/state/worker.lock" -- "$D" time "$RUNS" -- \
		"$1/src/resume/gpuburst-resume" -c "$T/gpuburst.yaml" "$3"
	q=$(grep -c 'resume_queued' "$T/gpuburst.log" || true)
	[ "$q" -ge "$RUNS" ] || { echo "only $q resume_queued lines"; exit 1; }
	: >"$T/gpuburst.log"
}
for c in 1:one 100:one 1000:one 10000:one 1000:jobs 10000:jobs; do
	n=${c%:*} how=${c#*:}
	resume_file "$n" "$how" >"$T/resume.json"
	if [ "$n" = 1 ]; then nodes=g5-1; else nodes="g5-[1-$n]"; fi
	if [ "$how" = one ]; then label="nodes=$n"; else label="jobs=$n (a node each)"; fi
	one "$B" "$label" "$nodes" this
	[ -z "$BASE" ] || one "$BASE" "$label" "$nodes" base
done
if "$PY" -c 'import boto3' 2>/dev/null; then
	printf '  python3+boto3 floor: '
	"$D" time "$RUNS" -- "$PY" -c "import boto3; boto3.client('ec2', region_name='us-east-1')"
else
	echo "  python3+boto3 floor: skipped (apt-get install python3-boto3)"
fi
