# cloudsim-lib.sh - sourced by the cloudsim integration tests
#
# Starts gpuburst-cloudsim on 127.0.0.1 with an ephemeral port and a pid
# file, runs the Debian AWS CLI against it (and only against it), and stops
# the simulator by its pid on exit, also on failure.

set -u

: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
CLOUDSIM="$GB_TOP_BUILDDIR/src/cloudsim/gpuburst-cloudsim"
DATA="$GB_TOP_SRCDIR/tests/data/cloudsim"
PYTHON3="${PYTHON3:-python3}"

skip() { echo "SKIP: $*"; exit 77; }
fail() {
	echo "FAIL: $*" >&2
	if [ -f "$TMP/sim.log" ]; then
		echo "--- simulator log (last 20 lines)" >&2
		tail -n 20 "$TMP/sim.log" >&2
	fi
	exit 1
}
ok() { echo "ok - $*"; }

# The Debian package's CLI (awscli 2.x); GB_AWS_CLI overrides.  A test that
# does not use it sets CLOUDSIM_NO_AWS_CLI=yes before sourcing this file.
AWS="${GB_AWS_CLI:-}"
if [ "${CLOUDSIM_NO_AWS_CLI:-}" != yes ]; then
	[ -n "$AWS" ] || AWS=/usr/bin/aws
	[ -x "$AWS" ] || AWS="$(command -v aws 2>/dev/null || true)"
	[ -n "$AWS" ] && [ -x "$AWS" ] || skip "the AWS CLI is not installed (Debian: apt-get install awscli)"
fi
"$PYTHON3" -c 'import json' 2>/dev/null || skip "python3 is needed to read the CLI's JSON"
[ -x "$CLOUDSIM" ] || fail "$CLOUDSIM not built"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloudsim-it.XXXXXX")" || fail "mktemp"
mkdir -p "$TMP/home"
: >"$TMP/aws-config"
: >"$TMP/aws-credentials"
SIM_PID=

# stop_pid PID: a child of this shell, by its pid: SIGTERM, up to 5 s, then
# SIGKILL, reaped; nothing for an empty PID
stop_pid() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

stop_sim() {
	stop_pid "$SIM_PID"
	SIM_PID=
}

cleanup() {
	stop_sim
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# wait_worker: until no gpuburst-worker holds the lock of $TMP/state (the
# workers the programs start detach; a test waits for the last one before
# it reads the outcome, and before its directory goes), at most 120 s
wait_worker() {
	[ -d "$TMP/state" ] || return 0
	"$PYTHON3" -c 'import fcntl, os, signal, sys
signal.alarm(120)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)
fcntl.flock(fd, fcntl.LOCK_EX)' "$TMP/state/worker.lock"
}

# start_sim SCENARIO [OPTION...]: sets PORT and ENDPOINT.
start_sim() {
	scenario="$1"
	shift
	rm -f "$TMP/pid" "$TMP/port"
	"$CLOUDSIM" --scenario "$scenario" --listen 127.0.0.1:0 \
		--pid-file "$TMP/pid" --port-file "$TMP/port" --log "$TMP/sim.log" \
		"$@" >"$TMP/sim.out" 2>&1 &
	for _ in $(seq 1 200); do
		[ -s "$TMP/pid" ] && break
		kill -0 $! 2>/dev/null || fail "gpuburst-cloudsim exited: $(cat "$TMP/sim.out")"
		sleep 0.05
	done
	[ -s "$TMP/pid" ] || fail "no pid file after 10 s"
	SIM_PID="$(cat "$TMP/pid")"
	[ "$SIM_PID" = "$!" ] || fail "pid file says $SIM_PID, started $!"
	PORT="$(cat "$TMP/port")"
	grep -q "^listening on 127.0.0.1:$PORT\$" "$TMP/sim.out" || fail "no 'listening on' line"
	ENDPOINT="http://127.0.0.1:$PORT"
}

# awsc ARG...: the AWS CLI against the simulator only, isolated from the
# user's configuration and from any proxy; one attempt, no retries.
awsc() {
	env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy \
		-u ALL_PROXY -u all_proxy -u AWS_PROFILE -u AWS_SESSION_TOKEN \
		NO_PROXY='*' no_proxy='*' HOME="$TMP/home" \
		AWS_ACCESS_KEY_ID="${AKID:-AKIDEXAMPLE}" \
		AWS_SECRET_ACCESS_KEY="${SECRET:-wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY}" \
		${TOKEN:+"AWS_SESSION_TOKEN=$TOKEN"} \
		AWS_DEFAULT_REGION="${REGION:-ap-south-1}" AWS_REGION="${REGION:-ap-south-1}" \
		AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE="$TMP/aws-config" \
		AWS_SHARED_CREDENTIALS_FILE="$TMP/aws-credentials" AWS_PAGER="" \
		AWS_RETRY_MODE=standard AWS_MAX_ATTEMPTS=1 \
		"$AWS" --endpoint-url "$ENDPOINT" --output json "$@"
}

# jget FILE EXPR: print the Python expression EXPR over the JSON d in FILE.
jget() {
	"$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (list, dict)) else v)' "$1" "$2"
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# control METHOD PATH [JSON]: the simulator's control interface (curl-free).
control() {
	"$PYTHON3" -c 'import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + sys.argv[3], method=sys.argv[2],
    data=sys.argv[4].encode() if len(sys.argv) > 4 else None,
    headers={"Content-Type": "application/json"})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(opener.open(req, timeout=10).read().decode())' "$ENDPOINT" "$@"
}

# wait_file PATH: up to 10 s
wait_file() {
	for _ in $(seq 1 200); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	fail "$1 did not appear"
}

# conf_head: on stdout, the first lines of a gpuburst configuration against
# the simulator (cluster t, environment prod, the state directory and the
# log under $TMP, the endpoint); the rest of cloud: follows
conf_head() {
	cat <<EOF
cluster_name: t
environment: prod
state_dir: $TMP/state
log: {file: $TMP/gb.log}
cloud:
  endpoint: $ENDPOINT
EOF
}

# conf_creds: on stdout, the lines of cloud.credentials with the static
# test keys the simulator accepts (after conf_head and any other cloud keys)
conf_creds() {
	cat <<EOF
  credentials:
    access_key_id: AKIDEXAMPLE
    secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
    imds: false
EOF
}

# ctl_conf: $TMP/gb.yaml for the ctl-*.sh tests on the default scenario:
# fixed keys, the region ap-south-1 (its AMI, subnet-aps1a-1), nodeset g5
# homed there; then ctl ARG... runs $CTL with it, Slurm absent (SLURM_CONF
# names no file)
ctl_conf() {
	{
		conf_head
		conf_creds
		cat <<EOF
regions:
  - name: ap-south-1
    ami: ami-0a1b2c3d4e5f60001
    azs: [{name: ap-south-1a, subnets: [subnet-aps1a-1]}]
fallback_groups:
  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: "g5-[1-8]", instance_type: g5.xlarge, home_region: ap-south-1}
EOF
	} >"$TMP/gb.yaml"
}
ctl() { SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/gb.yaml" "$@"; }

# run_instances N [ARG...]: N g5.xlarge of the default scenario's AMI in
# subnet-aps1a-1, with ARG... added; their ids on stdout, one per line
run_instances() {
	ri_count="$1"
	shift
	awsc ec2 run-instances --image-id ami-0a1b2c3d4e5f60001 --instance-type g5.xlarge \
		--count "$ri_count" --subnet-id subnet-aps1a-1 "$@" >"$TMP/run.json" || fail "run-instances"
	jget "$TMP/run.json" '"\n".join(i["InstanceId"] for i in d["Instances"])'
}

# state_of ID: the instance's state name
state_of() {
	awsc ec2 describe-instances --instance-ids "$1" >"$TMP/desc.json" || fail "describe $1"
	jget "$TMP/desc.json" 'd["Reservations"][0]["Instances"][0]["State"]["Name"]'
}
