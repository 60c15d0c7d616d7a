#!/bin/sh
# run.sh - how long `gpuburstctl doctor` takes for its cloud checks against
# gpuburst-cloudsim with etc/cloudsim/default.yaml (five regions, 16 AZs;
# its latencies at time scale 1: RunInstances p50 150 ms, other actions
# lognormal median 60 ms): per region one DescribeAvailabilityZones, then a
# RunInstances DryRun per subnet for the one nodeset.  Prints the wall time
# of each run, the EC2 calls it made and the sum of their latencies as the
# simulator logged them (what a doctor asking one call at a time would at
# least wait), and the median.
#
#   bench/doctor/run.sh BUILDDIR SRCDIR [RUNS]
# or `make bench-doctor` in the build tree.  Loopback only; SLURM_CONF is
# unset (the Slurm checks fail at once); the simulator is stopped by its pid.

set -u
BUILD="${1:?builddir}"
SRC="${2:?srcdir}"
RUNS="${3:-5}"
SIM="$BUILD/src/cloudsim/gpuburst-cloudsim"
CTL="$BUILD/src/gpuburstctl/gpuburstctl"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/doctor-bench.XXXXXX")"

cleanup() {
	[ -s "$TMP/pid" ] && kill "$(cat "$TMP/pid")" 2>/dev/null
	sleep 0.3
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

"$SIM" --scenario "$SRC/etc/cloudsim/default.yaml" --listen 127.0.0.1:0 \
	--pid-file "$TMP/pid" --port-file "$TMP/port" --log "$TMP/sim.log" >/dev/null &
for _ in $(seq 1 100); do
	[ -s "$TMP/port" ] && break
	sleep 0.05
done
[ -s "$TMP/port" ] || { echo "run.sh: the simulator did not start" >&2; exit 1; }
mkdir -m 750 "$TMP/state"
region() {	# NAME AZ:SUBNET...
	name=$1
	shift
	printf '  - name: %s\n    ami: ami-0a1b2c3d4e5f60001\n    azs:\n' "$name"
	for a in "$@"; do
		printf '      - {name: %s, subnets: [%s]}\n' "${a%%:*}" "${a#*:}"
	done
}
{
	cat <<EOF
cluster_name: bench
state_dir: $TMP/state
cloud:
  endpoint: http://127.0.0.1:$(cat "$TMP/port")
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, imds: false}
regions:
EOF
	region ap-southeast-1 ap-southeast-1a:subnet-apse1a-1 ap-southeast-1b:subnet-apse1b-1 \
		ap-southeast-1c:subnet-apse1c-1
	region ap-south-1 ap-south-1a:subnet-aps1a-1 ap-south-1b:subnet-aps1b-1 ap-south-1c:subnet-aps1c-1
	region ap-northeast-1 ap-northeast-1a:subnet-apne1a-1 ap-northeast-1c:subnet-apne1c-1 \
		ap-northeast-1d:subnet-apne1d-1
	region ap-northeast-3 ap-northeast-3a:subnet-apne3a-1 ap-northeast-3b:subnet-apne3b-1 \
		ap-northeast-3c:subnet-apne3c-1
	region ap-northeast-2 ap-northeast-2a:subnet-apne2a-1 ap-northeast-2b:subnet-apne2b-1 \
		ap-northeast-2c:subnet-apne2c-1 ap-northeast-2d:subnet-apne2d-1
	cat <<EOF
fallback_groups:
  asia: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-southeast-1, ap-south-1, ap-northeast-1, ap-northeast-3, ap-northeast-2]}
nodesets:
  - {name: g5, nodes: "g5-[1-16]", instance_type: g5.xlarge, home_region: ap-southeast-1}
EOF
} >"$TMP/gb.yaml"

echo "# gpuburstctl doctor, 5 regions, 16 subnets, scenario default.yaml at time scale 1"
echo "# $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "run wall_s calls sum_latency_s"
: >"$TMP/walls"
for i in $(seq 1 "$RUNS"); do
	before=$(wc -l <"$TMP/sim.log")
	t0=$(date +%s.%N)
	env -u SLURM_CONF "$CTL" -c "$TMP/gb.yaml" doctor >"$TMP/out" 2>/dev/null
	t1=$(date +%s.%N)
	grep -q '^FAIL \(region\|launch\)' "$TMP/out" && { cat "$TMP/out" >&2; exit 1; }
	tail -n +"$((before + 1))" "$TMP/sim.log" | awk -v i="$i" -v t0="$t0" -v t1="$t1" '
		/ call action=/ { n++; for (f = 1; f <= NF; f++) if ($f ~ /^latency_ms=/) { sub(/latency_ms=/, "", $f); s += $f } }
		END { printf "%d %.3f %d %.3f\n", i, t1 - t0, n, s / 1000 }'
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$TMP/walls"
done
echo "median_wall_s $(sort -n "$TMP/walls" | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }')"
