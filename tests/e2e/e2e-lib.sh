# e2e-lib.sh - sourced by the end-to-end tests: a real Slurm (the lab,
# contrib/lab/gpuburst-lab) whose CLOUD nodes are resumed, suspended and
# failed by gpuburst-resume, -suspend and -resume-fail, against
# gpuburst-cloudsim, whose boot hook runs each instance's UserData: a script
# that starts the slurmd of its node on the instance's private (loopback) IP.
#
#   e2e_start [--nodes N] [--l4 M] [--job-submit]
#                           lab + simulator + gpuburst.yaml; knobs in the
#                           environment: ORPHAN_TIMEOUT, ICE_COOLDOWN,
#                           ERROR_COOLDOWN, ERROR_COOLDOWN_MAX,
#                           REQUEST_DEADLINE, RESUME_TIMEOUT, SUSPEND_TIME,
#                           SUSPEND_TIMEOUT, CRED_EXPIRE (also the requeue
#                           delay of a batch job), MAX_REQUEST_NODES,
#                           APPROVAL_THRESHOLD (dev), APPROVAL_TIMEOUT,
#                           APPROVAL_NOTIFY, ALLOWED_GEO (YAML lists),
#                           ADMINS (YAML), PLANNER (YAML: planner section)
#   llm_stub_start [ARGS]   tests/e2e/llm-stub (a scripted LLM endpoint),
#                           before e2e_start: sets LLM_URL, LLM_KEY (key
#                           file), LLM_LOG (requests, JSON lines)
#   llm_plan TEXT           what the stub's model answers from now on
#   lab CMD...              a Slurm client in the lab's namespace
#   node_field NODE KEY     a field of `scontrol show node`
#   wait_for SECONDS WHAT CODE     poll shell CODE until it succeeds, else fail
#   sim_instances EXPR      a Python expression over the simulator's
#                           instances (list of dicts, name i)
#   sql QUERY               the state file, read-only
#   registered_addr IP, registered_hostname NODE, expect_addr WHAT GOT IP,
#   expect_host WHAT GOT NODE
#                           what Slurm shows as NodeAddr/NodeHostName of a
#                           node whose slurmd registered from its instance
#                           at IP: the release differences, stated here only
#
# Everything started here is stopped by PID on exit, also on failure: the
# lab (slurmctld, slurmds, munged, by their pid files), the simulator (its
# boot processes with it), and the workers are waited for.
# Skips (exit 77) unless root with Slurm, munge and unshare installed.

set -u

: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
unset GPUBURST_CONF GPUBURST_ENV	# the configuration is found next to slurm.conf
LABCTL="$GB_TOP_SRCDIR/contrib/lab/gpuburst-lab"
CLOUDSIM="$GB_TOP_BUILDDIR/src/cloudsim/gpuburst-cloudsim"
RESUME="$GB_TOP_BUILDDIR/src/resume/gpuburst-resume"
SUSPEND="$GB_TOP_BUILDDIR/src/suspend/gpuburst-suspend"
RESUME_FAIL="$GB_TOP_BUILDDIR/src/resume-fail/gpuburst-resume-fail"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
NODE_AGENT="$GB_TOP_BUILDDIR/src/node/gpuburst-node"
LLM_STUB="$GB_TOP_BUILDDIR/tests/e2e/llm-stub"
# the programs start the worker from its installed path unless told
GPUBURST_WORKER="$GB_TOP_BUILDDIR/src/worker/gpuburst-worker"
export GPUBURST_WORKER
SCENARIO="$GB_TOP_SRCDIR/etc/cloudsim/e2e.yaml"
PYTHON3="${PYTHON3:-python3}"
AKID=AKIDEXAMPLE
SECRET=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY

skip() { echo "SKIP: $*"; exit 77; }
# .ci/run's sanitizer and distcheck phases run only GB_E2E_SMOKE (test file
# names): the whole suite has run on the same release in its tests phase;
# the sets cover the programs under ASan, and prove that the tarball carries
# what the e2e tests need.
if [ -n "${GB_E2E_SMOKE:-}" ]; then
	case " $GB_E2E_SMOKE " in
	*" ${0##*/} "*) ;;
	*) skip "this CI phase runs a set of the e2e tests only (GB_E2E_SMOKE: $GB_E2E_SMOKE)" ;;
	esac
fi
ok() { echo "ok - $*"; }
fail() {
	echo "FAIL: $*" >&2
	if [ -n "${TMP:-}" ]; then
		for f in "$TMP/gpuburst.log" "$TMP/lab/log/slurmctld.log" "$TMP/sim.log" "$TMP/llm/out"; do
			[ -f "$f" ] || continue
			echo "--- $f (last 30 lines)" >&2
			tail -n 30 "$f" >&2
		done
	fi
	exit 1
}

[ "$(id -u)" = 0 ] || skip "needs root (munged, slurmctld, a mount namespace)"
for b in slurmctld slurmd munged mungekey scontrol sbatch squeue unshare ss flock; do
	command -v "$b" >/dev/null 2>&1 || skip "missing $b (apt-get install slurm-wlm munge util-linux iproute2)"
done
"$PYTHON3" -c 'import json, sqlite3, urllib.request' 2>/dev/null || skip "python3 is needed"
for b in "$CLOUDSIM" "$RESUME" "$SUSPEND" "$RESUME_FAIL" "$CTL" "$GPUBURST_WORKER"; do
	[ -x "$b" ] || fail "$b not built"
done
unshare -m true 2>/dev/null || skip "unshare -m not permitted (the lab needs its DNS guard)"

# The Slurm release under test as MMmm (24.11: 2411), and what the tests'
# expectations must say differently for it (src/libslurmif/gb_slurm_release.h).
SLURM_REL=$("$LABCTL" release) || fail "cannot tell the Slurm release"
# From 23.11 (GB_SLURM_CTLD_OWNS_CLOUD_ADDR) slurmctld sets a cloud node's
# NodeAddr and NodeHostName to where its slurmd registered from: in the
# lab every slurmd reaches slurmctld at 127.0.0.1 from 127.0.0.1, and runs
# on this host.  Before it they stay what gpuburst set (the instance's IP,
# the node's name).  Power-down resets both to the node name in all.
registered_addr() {
	if [ "$SLURM_REL" -ge 2311 ]; then echo 127.0.0.1; else echo "$1"; fi
}
registered_hostname() {
	if [ "$SLURM_REL" -ge 2311 ]; then hostname -s; else echo "$1"; fi
}
# expect_addr WHAT GOT IP: a node's NodeAddr GOT is its instance's at IP:
# registered_addr, or from 23.11 also IP itself when gpuburst's update
# reached slurmctld after the slurmd registered (the instance can boot
# before the worker has updated Slurm: a one-node request's instance is
# named at launch, and CreateTags comes before the update).  On a real
# cluster the two are the same address.
expect_addr() {
	[ "$2" = "$(registered_addr "$3")" ] || [ "$2" = "$3" ] ||
		fail "$1: got '$2', want '$(registered_addr "$3")' (or the instance's own $3)"
}
# expect_host WHAT GOT NODE: the same for NodeHostName (gpuburst sets the
# node's name with its address)
expect_host() {
	[ "$2" = "$(registered_hostname "$3")" ] || [ "$2" = "$3" ] ||
		fail "$1: got '$2', want '$(registered_hostname "$3")' (or the node's name $3)"
}

TMP="$(mktemp -d /tmp/gb-e2e.XXXXXX)" || fail "mktemp"
chmod 755 "$TMP"
# In a sanitizer build every report of our programs (and their workers,
# whose stderr is /dev/null) lands in $TMP/san; any report fails the test.
mkdir -p "$TMP/san"
SUPP="$GB_TOP_SRCDIR/tests/e2e/lsan.supp"
WRAP_ENV="GPUBURST_WORKER=$GPUBURST_WORKER ASAN_OPTIONS=log_path=$TMP/san/asan:detect_leaks=1 LSAN_OPTIONS=suppressions=$SUPP:print_suppressions=0 UBSAN_OPTIONS=log_path=$TMP/san/ubsan:print_stacktrace=1"
export ASAN_OPTIONS="log_path=$TMP/san/asan:detect_leaks=1"
export LSAN_OPTIONS="suppressions=$SUPP:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$TMP/san/ubsan:print_stacktrace=1"
LAB="$TMP/lab"
STATE="$TMP/state"
# next to slurm.conf: the programs find it there through SLURM_CONF, as
# the job_submit plugin does
CONF="$LAB/etc/gpuburst.yaml"
SIM_PID=
LAB_UP=
LLM_PID=

# stop_pid PID: TERM one process we started, KILL it after 5 s
stop_pid() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -9 "$1" 2>/dev/null
}

stop_all() {
	release_lock
	# the simulator first: on TERM it stops its instances' boot processes
	stop_pid "$SIM_PID"
	SIM_PID=
	stop_pid "$LLM_PID"
	LLM_PID=
	if [ -n "$LAB_UP" ]; then
		"$LABCTL" stop --dir "$LAB" >/dev/null 2>&1
		LAB_UP=
		# job scripts whose slurmd died with its instance outlive the
		# lab: ours by their environment (SLURM_CONF of this lab)
		for d in /proc/[0-9]*; do
			tr '\0' '\n' 2>/dev/null <"$d/environ" |
				grep -qx "SLURM_CONF=$LAB/etc/slurm.conf" || continue
			kill -KILL "${d#/proc/}" 2>/dev/null
		done
		# step daemons of this test's slurmds: from 24.05 their
		# environment is empty and they retry their completion RPC
		# forever once slurmctld is gone (SIGTERM ignored), but their
		# working directory is their instance's boot directory here
		for d in /proc/[0-9]*; do
			[ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] || continue
			case "$(readlink "$d/cwd" 2>/dev/null)" in
			"$TMP"/*) kill -KILL "${d#/proc/}" 2>/dev/null ;;
			esac
		done
	fi
	# a worker still running finishes its round (its cloud is gone)
	[ -d "$STATE" ] && flock -w 30 "$STATE/worker.lock" true 2>/dev/null
}

# leftovers: processes (but this shell) whose command line names $TMP
leftovers() {
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = "$$" ] && continue
		c=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline")
		case "$c" in *"$TMP/"*) echo "${d#/proc/} $c" ;; esac
	done
}

cleanup() {
	rc=$?
	stop_all
	# the suite leaves nothing running: whatever still names $TMP is a bug
	for _ in $(seq 1 25); do
		left=$(leftovers)
		[ -z "$left" ] && break
		sleep 0.2
	done
	if [ -n "$left" ]; then
		echo "FAIL: left running after the test:" >&2
		echo "$left" >&2
		echo "$left" | while read -r pid _; do kill -KILL "$pid" 2>/dev/null; done
		rc=1
	fi
	if [ -n "$(ls "$TMP/san" 2>/dev/null)" ]; then
		echo "FAIL: sanitizer reports:" >&2
		cat "$TMP"/san/* >&2
		rc=1
	fi
	if [ -n "${E2E_KEEP:-}" ]; then
		echo "kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

lab() { "$LABCTL" sh --dir "$LAB" "$@"; }

# node_field NODE KEY: e.g. node_field gpu-1 NodeAddr
node_field() {
	lab scontrol -o show node "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# node_reason NODE: the whole Reason (it has blanks), without "[user@time]"
node_reason() {
	lab scontrol -o show node "$1" 2>/dev/null | sed -n 's/.* Reason=\(.*\) \[[^]]*\].*/\1/p'
}

# job_field JOB KEY: a field of `scontrol show job` (AdminComment and
# Comment take the rest of their line)
job_field() {
	lab scontrol show job "$1" 2>/dev/null | awk -v k="$2=" '
		{ sub(/^ +/, ""); sub(/ +$/, "") }
		index($0, k) == 1 && (k == "AdminComment=" || k == "Comment=") {
			print substr($0, length(k) + 1); exit }
		{ for (i = 1; i <= NF; i++) if (index($i, k) == 1) {
			print substr($i, length(k) + 1); exit } }'
}

job_state() {
	lab scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^JobState=//p'
}

# wait_for SECONDS WHAT CODE: CODE is evaluated here (functions work)
wait_for() {
	_end=$(( $(date +%s) + $1 ))
	while [ "$(date +%s)" -le "$_end" ]; do
		eval "$3" && return 0
		sleep 0.2
	done
	fail "timed out after ${1}s waiting for: $2"
}

# held_by_admin JOB: pending in a hold only an operator may release (an
# admin hold, or a requeue in held state: slurmctld's wording differs)
held_by_admin() {
	lab squeue -h -j "$1" -o '%T %r' >"$TMP/held.$1" 2>&1
	case $(cat "$TMP/held.$1") in
	"PENDING JobHeldAdmin" | "PENDING job requeued in held state") return 0 ;;
	esac
	return 1
}

# wait_held SECONDS JOB: until held_by_admin JOB, else fail with what squeue said
wait_held() {
	_end=$(( $(date +%s) + $1 ))
	while [ "$(date +%s)" -le "$_end" ]; do
		held_by_admin "$2" && return 0
		sleep 0.2
	done
	fail "timed out after ${1}s waiting for job $2 to be held by an operator: squeue says '$(cat "$TMP/held.$2")'"
}

# state_is NODE REGEX: the node's State matches
state_is() { node_field "$1" State | grep -Eq -- "$2"; }

# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

# control METHOD PATH [JSON]: the simulator's control interface
control() {
	"$PYTHON3" -c 'import sys, urllib.request
req = urllib.request.Request(sys.argv[1] + sys.argv[3], method=sys.argv[2],
    data=sys.argv[4].encode() if len(sys.argv) > 4 else None,
    headers={"Content-Type": "application/json"})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(opener.open(req, timeout=10).read().decode())' "$ENDPOINT" "$@"
}

# sim_instances EXPR: EXPR evaluated with `ins` = the instances (dicts)
sim_instances() {
	control GET /_sim/state | "$PYTHON3" -c 'import json, sys
ins = json.load(sys.stdin)["instances"]
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (list, dict)) else v)' "$1"
}

# sim_state ID: the simulator's state of instance ID ("" if unknown)
sim_state() {
	sim_instances "([i['state'] for i in ins if i['id'] == '$1'] or [''])[0]"
}

# record_state ID: the state file's state of instance ID
record_state() { sql "SELECT state FROM instances WHERE instance_id = '$1'"; }

# req_count NODE KIND STATE: how many KIND requests of NODE are in STATE
req_count() {
	sql "SELECT count(*) FROM requests r JOIN request_nodes n ON n.request_id = r.id
	     WHERE n.node = '$1' AND r.kind = '$2' AND r.state = '$3'"
}

# instance_of NODE: the id of NODE's newest instance record
instance_of() {
	sql "SELECT instance_id FROM instances WHERE node = '$1' ORDER BY launched_at DESC, rowid DESC LIMIT 1"
}

# regions_tried REQ: the regions of REQ's launch attempts, in the order
# they were first tried
regions_tried() {
	sql "SELECT group_concat(region, ' ') FROM (SELECT region, min(id) AS f FROM attempts
	     WHERE request_id = '$1' GROUP BY region ORDER BY f)"
}

# sql QUERY: rows as "a|b|c" lines
sql() {
	[ -f "$STATE/state.db" ] || return 0
	"$PYTHON3" -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))' "$STATE/state.db" "$1"
}

# submit SBATCH-ARGS...: prints the job id
submit() {
	(cd "$LAB/jobs" && lab sbatch --parsable "$@") || fail "sbatch $*"
}

# awsc ARGS...: the AWS CLI against the simulator only (skips without it)
awsc() {
	aws_bin=$(command -v aws 2>/dev/null) || skip "the AWS CLI is not installed (apt-get install awscli)"
	mkdir -p "$TMP/aws-home"
	: >"$TMP/aws-config"
	env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy \
		-u ALL_PROXY -u all_proxy -u AWS_PROFILE -u AWS_SESSION_TOKEN \
		NO_PROXY='*' no_proxy='*' HOME="$TMP/aws-home" \
		AWS_ACCESS_KEY_ID="$AKID" AWS_SECRET_ACCESS_KEY="$SECRET" \
		AWS_DEFAULT_REGION="${REGION:-ap-south-1}" \
		AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE="$TMP/aws-config" \
		AWS_SHARED_CREDENTIALS_FILE="$TMP/aws-config" AWS_PAGER="" \
		AWS_MAX_ATTEMPTS=1 "$aws_bin" --endpoint-url "$ENDPOINT" --output json "$@"
}

# The UserData every region gets: gpuburst-node, as on a real instance
# (README, "Preparing an AMI"), set up by `gpuburst-lab node-kit` in $TMP:
# node.yaml, bin/slurmd (fail-nodes/: nodes that never register),
# bin/nvidia-smi (bad-gpus/AZ: the next instance there shows a GPU fewer).
# The agent learns its node from its gpuburst:node tag in the instance
# metadata (a hedged launch's extra never gets it, and waits until it is
# terminated), checks its GPUs, runs that node's slurmd as its child and
# watches for spot and rebalance notices.  The simulator SIGTERMs the boot
# process group when the instance terminates.
write_user_data() {
	"$LABCTL" --dir "$LAB" node-kit --kit-dir "$TMP" --agent "$NODE_AGENT" \
		--endpoint "$ENDPOINT" --interval "${NOTICE_INTERVAL:-5s}" ||
		fail "gpuburst-lab node-kit failed"
}

write_config() {
	{
		cat <<EOF
# written by tests/e2e/e2e-lib.sh
cluster_name: e2e
state_dir: $STATE
log:
  file: $TMP/gpuburst.log
  level: debug
cloud:
  endpoint: $ENDPOINT
  connect_timeout: 2s
  request_timeout: 10s
  max_retries: 1
  retry_budget: 5s
  credentials:
    access_key_id: $AKID
    secret_access_key: $SECRET
    imds: false
regions:
  - name: ap-southeast-1
    ami: ami-0e2e0000000000001
    iam_profile: gpuburst-e2e-node
    user_data: &boot |
EOF
		write_user_data | sed 's/^/      /'
		cat <<EOF
    azs:
      - {name: ap-southeast-1a, subnets: [subnet-e2e-apse1a]}
  - name: ap-south-1
    ami: ami-0e2e0000000000002
    iam_profile: gpuburst-e2e-node
    user_data: *boot
    azs:
      - {name: ap-south-1a, subnets: [subnet-e2e-aps1a]}
      - {name: ap-south-1b, subnets: [subnet-e2e-aps1b]}
  - name: ap-northeast-1
    ami: ami-0e2e0000000000003
    iam_profile: gpuburst-e2e-node
    user_data: *boot
    azs:
      - {name: ap-northeast-1a, subnets: [subnet-e2e-apne1a]}
  - name: ap-northeast-3
    ami: ami-0e2e0000000000004
    iam_profile: gpuburst-e2e-node
    user_data: *boot
    azs:
      - {name: ap-northeast-3a, subnets: [subnet-e2e-apne3a]}
# Osaka is nearer to Singapore than Tokyo, but not in Singapore's group:
# a Singapore job must never land there (02-fallback-region.sh).
fallback_groups:
  southeast_asia:
    consumer_regions: [ap-southeast-1]
    fallback_regions: [ap-southeast-1, ap-south-1, ap-northeast-1]
  japan:
    consumer_regions: [ap-northeast-1]
    fallback_regions: [ap-northeast-1, ap-northeast-3]
nodesets:
  - name: a10g
    nodes: gpu-[1-$NODES]
    instance_type: g5.xlarge
    home_region: ap-southeast-1
    partition: gpu
EOF
		[ -n "${A10G_EXTRA:-}" ] && printf '%s\n' "$A10G_EXTRA"
		[ "$L4" -gt 0 ] && cat <<EOF
  - name: l4
    nodes: l4-[1-$L4]
    instance_type: g6.xlarge
    home_region: ap-southeast-1
    partition: gpu
EOF
		[ "$TRAIN" -gt 0 ] && cat <<EOF
  - name: train
    nodes: train-[1-$TRAIN]
    instance_types: [${TRAIN_TYPES:-p5.48xlarge}]
    home_region: ap-southeast-1
    partition: gpu
    efa: true
    placement: cluster
EOF
		cat <<EOF
policy:
  max_request_nodes: ${MAX_REQUEST_NODES:-1000}
  ice_cooldown: ${ICE_COOLDOWN:-10m}
  error_cooldown: ${ERROR_COOLDOWN:-15m}
  error_cooldown_max: ${ERROR_COOLDOWN_MAX:-6h}
  orphan_timeout: ${ORPHAN_TIMEOUT:-10m}
  request_deadline: ${REQUEST_DEADLINE:-1h}
  approval_thresholds: {dev: ${APPROVAL_THRESHOLD:-50}}
  approval_timeout: ${APPROVAL_TIMEOUT:-auto}
EOF
		[ -n "${POLICY_EXTRA:-}" ] && printf '%s\n' "$POLICY_EXTRA"
		[ -n "${APPROVAL_NOTIFY:-}" ] && echo "  approval_notify: $APPROVAL_NOTIFY"
		[ -n "${ALLOWED_GEO:-}" ] && echo "  allowed_geo_regions: $ALLOWED_GEO"
		[ "$TRAIN" -gt 0 ] && echo "  allowed_families: [g5, g6, p5, p5e, p5en]"
		[ -n "${ADMINS:-}" ] && echo "admins: $ADMINS"
		[ -n "${PLANNER:-}" ] && echo "planner: $PLANNER"
		[ -n "${CONF_EXTRA:-}" ] && printf '%s\n' "$CONF_EXTRA"
		true
	} >"$CONF"
	"$CTL" -c "$CONF" config check >/dev/null 2>"$TMP/check.err" ||
		fail "generated config invalid: $(cat "$TMP/check.err")"
}

start_sim() {
	rm -f "$TMP/sim.pid" "$TMP/sim.port"
	# in the lab's namespace too: the boot hook starts slurmd from it
	lab "$CLOUDSIM" --scenario "$SCENARIO" --listen "127.0.0.1:$SIM_PORT" \
		--pid-file "$TMP/sim.pid" --port-file "$TMP/sim.port" \
		--log "$TMP/sim.log" --boot-dir "$TMP/boot" >"$TMP/sim.out" 2>&1 &
	for _ in $(seq 1 200); do
		[ -s "$TMP/sim.pid" ] && break
		sleep 0.05
	done
	[ -s "$TMP/sim.pid" ] || fail "gpuburst-cloudsim did not start: $(cat "$TMP/sim.out")"
	SIM_PID=$(cat "$TMP/sim.pid")
}

# llm_stub_start [LLM-STUB-ARGS]: the scripted LLM endpoint (openai unless
# --provider), whose answers are the file llm_plan writes (HTTP 503 until
# then); the requests must carry the key in $LLM_KEY.  Before e2e_start:
# PLANNER names $LLM_URL.  Stopped by PID with the simulator.
llm_stub_start() {
	[ -x "$LLM_STUB" ] || fail "$LLM_STUB not built"
	mkdir -p "$TMP/llm"
	LLM_KEY="$TMP/llm/api-key"
	LLM_LOG="$TMP/llm/requests.jsonl"
	LLM_PLAN="$TMP/llm/plan.json"
	(umask 077 && echo "sk-e2e-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" >"$LLM_KEY")
	: >"$LLM_LOG"
	"$LLM_STUB" --key-file "$LLM_KEY" --plan-file "$LLM_PLAN" --log "$LLM_LOG" \
		--url-file "$TMP/llm/url" --pid-file "$TMP/llm/pid" "$@" >"$TMP/llm/out" 2>&1 &
	LLM_PID=$!
	for _ in $(seq 1 200); do
		[ -s "$TMP/llm/pid" ] && break
		kill -0 "$LLM_PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$TMP/llm/pid" ] || fail "llm-stub did not start: $(cat "$TMP/llm/out")"
	expect_eq "llm-stub pid" "$(cat "$TMP/llm/pid")" "$LLM_PID"
	LLM_URL=$(cat "$TMP/llm/url")
}

# llm_plan TEXT: the stub's answer from its next request on (written whole)
llm_plan() {
	printf '%s\n' "$1" >"$LLM_PLAN.new" && mv -f "$LLM_PLAN.new" "$LLM_PLAN" || fail "llm_plan"
}

# plugin_so: the built job_submit/gpuburst in $so, or exit 77 where
# slurmctld cannot load it
plugin_so() {
	so="$GB_TOP_BUILDDIR/plugins/job_submit_gpuburst/.libs/job_submit_gpuburst.so"
	[ -z "${GB_SAN_CFLAGS:-}" ] ||
		skip "sanitizer build: slurmctld cannot load an ASan-instrumented plugin (the normal build runs this test)"
	[ -f "$so" ] || fail "$so was not built"
}

# e2e_start [--nodes N] [--l4 M] [--train K] [--job-submit]: the lab with N
# a10g nodes gpu-[1-N] (g5.xlarge), M l4 nodes l4-[1-M] (g6.xlarge), K
# training nodes train-[1-K] (nodeset train: instance_types $TRAIN_TYPES,
# default p5.48xlarge; efa, placement cluster) and cpu-1, a
# CLOUD node in no nodeset.  The node and gres lines are `gpuburstctl
# slurm-conf --lab`'s.  gpu is the default partition, unless --job-submit
# loads job_submit/gpuburst: then cpu is, and the plugin routes GPU jobs.
#
# A10G_EXTRA and POLICY_EXTRA, when set, are YAML lines added to the a10g
# nodeset and to policy: (a test's own capacity ladder, locality, margins).
#
# --site: a site's own cluster that gpuburst is added to, as README "Using
# it on a real cluster" says: slurm.conf is the lab's base, the lines in
# $SITE_LINES (the site's own settings), an on-premises node site-1 (a
# real slurmd, not CLOUD) in partition site, and the power-saving and
# merged lines of `gpuburstctl slurm-conf --merge` in place of the site's
# lines of the same keys (the lab's own power-saving lines are left out).
e2e_start() {
	NODES=4 L4=0 TRAIN=0 JOB_SUBMIT= SITE=
	while [ $# -gt 0 ]; do
		case "$1" in
		--nodes) NODES=$2; shift ;;
		--l4) L4=$2; shift ;;
		--train) TRAIN=$2; shift ;;
		--job-submit) JOB_SUBMIT=1 ;;
		--site) SITE=1 ;;
		*) fail "e2e_start: unknown option $1" ;;
		esac
		shift
	done
	[ -n "$JOB_SUBMIT" ] && plugin_so
	mkdir -p "$TMP/bin" "$TMP/fail-nodes" "$TMP/bad-gpus" "$LAB/etc"
	# one port per node (slurmd binds INADDR_ANY), then the simulator's
	ports=$("$LABCTL" free-ports $((NODES + L4 + TRAIN + 3))) || fail "no free ports"
	SIM_PORT=$((ports + NODES + L4 + TRAIN + 1))
	SITE_PORT=$((ports + NODES + L4 + TRAIN + 2))
	ENDPOINT="http://127.0.0.1:$SIM_PORT"
	# the configuration first: the plugin reads it when slurmctld starts
	write_config
	# the burst partitions carry the power-saving times (SuspendTime there only)
	set -- --suspend-time "${SUSPEND_TIME:-3}" --suspend-timeout "${SUSPEND_TIMEOUT:-3}" \
		--resume-timeout "${RESUME_TIMEOUT:-10}"
	"$CTL" -c "$CONF" slurm-conf --lab --lab-ports "$ports" --section nodes "$@" \
		>"$TMP/nodes.conf" 2>"$TMP/slurm-conf.err" || fail "slurm-conf: $(cat "$TMP/slurm-conf.err")"
	if [ -n "$JOB_SUBMIT" ]; then def=cpu; else def=gpu; fi
	sed -i "s/^PartitionName=$def .*/& Default=YES/" "$TMP/nodes.conf"
	cat >>"$TMP/nodes.conf" <<EOF
NodeName=cpu-1 Port=$((ports + NODES + L4 + TRAIN)) CPUs=1 RealMemory=500 State=CLOUD
PartitionName=cpu Nodes=cpu-1 MaxTime=INFINITE State=UP$([ "$def" = cpu ] && echo " Default=YES")
EOF
	"$CTL" -c "$CONF" slurm-conf --lab --section gres >"$TMP/gres.conf" 2>"$TMP/slurm-conf.err" ||
		fail "slurm-conf: $(cat "$TMP/slurm-conf.err")"
	# The wrappers only add, for the build tree, where the worker is
	# (and where sanitizer reports go); the programs find their
	# configuration next to slurm.conf by themselves.
	for p in resume suspend resume-fail; do
		case $p in
		resume) bin=$RESUME ;; suspend) bin=$SUSPEND ;; *) bin=$RESUME_FAIL ;;
		esac
		printf '#!/bin/sh\nexec env %s %s "$@"\n' "$WRAP_ENV" "$bin" >"$TMP/bin/$p"
		chmod 755 "$TMP/bin/$p"
		ln -s "$p" "$TMP/bin/gpuburst-$p"	# the names slurm-conf writes
	done
	if [ -n "$SITE" ]; then
		site_conf
		set -- --site
		while IFS= read -r l; do set -- "$@" --extra "$l"; done <"$TMP/site-extra.conf"
	else
		set -- --resume-program "$TMP/bin/resume" --suspend-program "$TMP/bin/suspend" \
			--resume-fail-program "$TMP/bin/resume-fail" \
			--resume-timeout "${RESUME_TIMEOUT:-10}" --suspend-time "${SUSPEND_TIME:-3}" \
			--suspend-timeout "${SUSPEND_TIMEOUT:-3}"
	fi
	set -- "$@" --prolog-ctld --cred-expire "${CRED_EXPIRE:-120}"
	if [ -n "$JOB_SUBMIT" ]; then
		mkdir -p "$TMP/plugins"
		cp "$so" "$TMP/plugins/"
		set -- "$@" --job-submit gpuburst --plugin-dir "$TMP/plugins"
	fi
	LAB_UP=1
	"$LABCTL" start --dir "$LAB" --nodes-conf "$TMP/nodes.conf" --gres-conf "$TMP/gres.conf" \
		"$@" --fresh >"$TMP/lab-start.out" 2>&1 ||
		fail "lab did not start: $(cat "$TMP/lab-start.out")"
	if [ -n "$SITE" ]; then	# the site's own node, up for good
		mkdir -p "$LAB/spool/site-1"
		lab slurmd -N site-1 || fail "slurmd of site-1 did not start"
	fi
	start_sim
}

# site_conf: the --site lines: the site's own (site.conf, what --merge
# reads), then everything for the lab (site-extra.conf): the site's lines
# but the keys gpuburst's merged lines replace, then those lines.
site_conf() {
	{
		printf '%s\n' "${SITE_LINES:-}"
		echo "NodeName=site-1 NodeAddr=127.0.0.1 Port=$SITE_PORT CPUs=1 RealMemory=500"
		echo "PartitionName=site Nodes=site-1 MaxTime=INFINITE State=UP"
	} | grep -v '^$' >"$LAB/etc/site.conf"
	"$CTL" -c "$CONF" slurm-conf --lab --section power --sbindir "$TMP/bin" \
		--merge "$LAB/etc/site.conf" >"$TMP/power.conf" 2>"$TMP/slurm-conf.err" ||
		fail "slurm-conf --merge: $(cat "$TMP/slurm-conf.err")"
	grep -v '^#' "$TMP/power.conf" | grep -v '^$' >"$TMP/power.lines"
	keys=$(sed 's/=.*//' "$TMP/power.lines" | paste -sd'|')
	{
		grep -v -i -E "^($keys)=" "$LAB/etc/site.conf"
		cat "$TMP/power.lines"
	} >"$TMP/site-extra.conf"
}

# request_of NODE: the id of the newest resume request of NODE
request_of() {
	sql "SELECT r.id FROM requests r JOIN request_nodes n ON n.request_id = r.id
	     WHERE n.node = '$1' AND r.kind = 'resume' ORDER BY r.created_at DESC LIMIT 1"
}

# ctl ARGS...: gpuburstctl with this configuration, in the lab's namespace
ctl() { lab "$CTL" -c "$CONF" "$@"; }

# hold_lock: take the worker lock (no worker can run) until release_lock
hold_lock() {
	mkdir -p "$STATE"
	"$PYTHON3" -c 'import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(300)' "$STATE/worker.lock" "$TMP/locked" &
	HOLD_PID=$!
	wait_for 10 "the worker lock" '[ -f "$TMP/locked" ]'
}
release_lock() {
	[ -n "${HOLD_PID:-}" ] && kill "$HOLD_PID" 2>/dev/null && wait "$HOLD_PID" 2>/dev/null
	HOLD_PID=
}

# jq_py JSON-FILE EXPR: a Python expression over the JSON document d
jq_py() {
	"$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (list, dict)) else v)' "$1" "$2"
}

# no_worker: no worker holds the lock (it finished its round)
no_worker() { flock -n "$STATE/worker.lock" true 2>/dev/null; }
