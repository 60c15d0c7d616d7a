#!/bin/sh
# worker.sh BUILDDIR SRCDIR [NODES] [BATCH_MAX] [REPEAT] [one|jobs] - the
# worker's CPU time to launch NODES (1000) instances against
# gpuburst-cloudsim at zero latency (etc/cloudsim/bench.yaml), Slurm updates
# included: a lab slurmctld (contrib/lab, root only) with NODES CLOUD nodes
# whose NodeAddr the worker sets.  One resume request of NODES nodes is
# queued (the lock held), or with "jobs" NODES one-node jobs in one call (a
# 22.05 SLURM_RESUME_FILE: NODES requests queued at once); then
# gpuburst-worker runs in the foreground under the driver, which reports
# its wall, user and system time (all threads).
# In the environment: LATENCY=1 gives the simulator etc/cloudsim/default.yaml's
# latencies (RunInstances 150 ms median, 600 ms p99; other calls 60 ms),
# THREADS=N runs the worker with --threads N.  Each run also prints the
# EC2 calls the simulator answered, by action.
set -eu
B=$1 S=$2 NODES=${3:-1000} BATCH=${4:-4} REPEAT=${5:-3} HOW=${6:-one}
LATENCY=${LATENCY:-0} THREADS=${THREADS:-}
D="$B/bench/resume/resume-bench"
RESUME="$B/src/resume/gpuburst-resume"
WORKER="$B/src/worker/gpuburst-worker"
export GPUBURST_WORKER="$WORKER"
SIM="$B/src/cloudsim/gpuburst-cloudsim"
LABCTL="$S/contrib/lab/gpuburst-lab"
[ "$(id -u)" = 0 ] || { echo "needs root (the lab)"; exit 77; }
T=$(mktemp -d /tmp/gb-bench-worker.XXXXXX)
chmod 755 "$T"
SIM_PID=
cleanup() {
	[ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null
	"$LABCTL" stop --dir "$T/lab" >/dev/null 2>&1 || true
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
lab() { "$LABCTL" sh --dir "$T/lab" "$@"; }

port=$("$LABCTL" free-ports 1)
cat >"$T/nodes.conf" <<NODES
NodeName=g5-[1-$NODES] Port=$port CPUs=1 RealMemory=500 State=CLOUD
PartitionName=gpu Nodes=g5-[1-$NODES] Default=YES MaxTime=INFINITE State=UP
NODES
"$LABCTL" start --dir "$T/lab" --nodes-conf "$T/nodes.conf" --resume-program /bin/true \
	--suspend-program /bin/true --resume-fail-program /bin/true --suspend-time 3600 --fresh >/dev/null

SCENARIO="$S/etc/cloudsim/bench.yaml" WHAT="zero-latency simulator"
if [ "$LATENCY" = 1 ]; then
	SCENARIO="$T/latency.yaml" WHAT="simulator with default.yaml's latencies"
	{
		sed '/^regions:/,$d' "$S/etc/cloudsim/bench.yaml"
		sed -n '/^faults:/,/^$/p' "$S/etc/cloudsim/default.yaml"
		sed -n '/^regions:/,$p' "$S/etc/cloudsim/bench.yaml"
	} >"$SCENARIO"
	grep -q 'RunInstances:' "$SCENARIO" || { echo "no latency in $SCENARIO"; exit 1; }
fi
echo "worker: $NODES nodes ($HOW), batch_max $BATCH, $WHAT, threads ${THREADS:-default}, $REPEAT runs"
for r in $(seq 1 "$REPEAT"); do
	rm -rf "$T/state" "$T/sim.pid" "$T/sim.port"
	lab "$SIM" --scenario "$SCENARIO" --listen 127.0.0.1:0 \
		--pid-file "$T/sim.pid" --port-file "$T/sim.port" --log "$T/sim.log" >/dev/null 2>&1 &
	for _ in $(seq 1 100); do [ -s "$T/sim.pid" ] && break; sleep 0.05; done
	SIM_PID=$(cat "$T/sim.pid")
	cat >"$T/gpuburst.yaml" <<CONF
cluster_name: bench
state_dir: $T/state
log: {file: $T/gpuburst.log, level: info}
cloud:
  endpoint: http://127.0.0.1:$(cat "$T/sim.port")
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, imds: false}
regions:
  - name: ap-south-1
    ami: ami-0123456789abcdef0
    azs:
      - {name: ap-south-1a, subnets: [subnet-bench-a1, subnet-bench-a2]}
      - {name: ap-south-1b, subnets: [subnet-bench-b1]}
  - name: ap-northeast-1
    ami: ami-0123456789abcdef1
    azs: [{name: ap-northeast-1a, subnets: [subnet-bench-c1]}]
fallback_groups:
  asia: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1, ap-northeast-1]}
nodesets:
  - {name: g5, nodes: 'g5-[1-$NODES]', instance_type: g5.xlarge, home_region: ap-south-1}
# above the size threshold: the bench measures the launch, not the approval
policy: {batch_max: $BATCH, max_request_nodes: $NODES, approval_thresholds: {dev: $NODES}}
CONF
	mkdir -p "$T/state"
	if [ "$HOW" = jobs ]; then
		awk -v n="$NODES" 'BEGIN { printf "{\"jobs\":["
			for (i = 1; i <= n; i++) printf "%s{\"job_id\":%d,\"nodes\":\"g5-%d\"}", (i > 1 ? "," : ""), i, i
			printf "],\"all_nodes\":\"g5-[1-%d]\"}", n }' >"$T/resume.json"
		lab env SLURM_RESUME_FILE="$T/resume.json" \
			"$D" hold "$T/state/worker.lock" -- "$RESUME" -c "$T/gpuburst.yaml" "g5-[1-$NODES]"
	else
		lab "$D" hold "$T/state/worker.lock" -- "$RESUME" -c "$T/gpuburst.yaml" "g5-[1-$NODES]"
	fi
	printf '  run %s: ' "$r"
	lab "$D" cpu -- "$WORKER" -c "$T/gpuburst.yaml" ${THREADS:+--threads "$THREADS"}
	lab scontrol -o show node "g5-$NODES" | grep -q 'NodeAddr=127\.' || { echo "g5-$NODES has no address"; exit 1; }
	grep 'resume_done' "$T/gpuburst.log" | tail -n 1 | sed 's/.*resume_done/    resume_done/'
	# the EC2 calls the simulator answered, by action
	/usr/bin/python3 "$S/bench/sim-calls.py" "$(cat "$T/sim.port")" "    calls: "
	kill "$SIM_PID"; SIM_PID=
	: >"$T/gpuburst.log"
done
