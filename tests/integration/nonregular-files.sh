#!/bin/sh
# nonregular-files.sh - no reader of a file given from outside waits on
# one that is not a regular file.  gpuburstctl with a FIFO as its
# configuration (-c, $GPUBURST_CONF), as user_data_file, as the shared
# credentials file or as SLURM_CONF returns at once naming the file and
# "not a regular file (a FIFO)".  gpuburst-resume whose SLURM_RESUME_FILE
# is a FIFO, a directory or larger than 64 MiB queues nothing, asks Slurm
# to set its nodes DOWN with "gpuburst: cannot read the resume file: ..."
# and exits 4 (10 for the size); with root and Slurm installed, a lab's
# slurmctld shows the nodes DOWN with that reason, and reconcile would
# release them after policy.error_cooldown.  Every program runs
# under timeout 10: a blocking open would fail the test, not hang it.
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
RESUME="$GB_TOP_BUILDDIR/src/resume/gpuburst-resume"
tool="$GB_TOP_SRCDIR/contrib/lab/gpuburst-lab"
command -v timeout >/dev/null 2>&1 || { echo "SKIP: timeout (coreutils) is needed"; exit 77; }
command -v mkfifo >/dev/null 2>&1 || { echo "SKIP: mkfifo (coreutils) is needed"; exit 77; }
TMP="$(mktemp -d /tmp/gb-nonreg.XXXXXX)"
chmod 755 "$TMP"	# munged wants o+x on every directory above its socket
LAB=
cleanup() {
	rc=$?
	[ -n "$LAB" ] && "$tool" stop --dir "$LAB" --purge >/dev/null 2>&1
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok - $*"; }
# No Slurm client call may read a system slurm.conf; the worker is never
# started (nothing may be queued) and no AWS variable reaches a program.
export SLURM_CONF="$TMP/no-slurm.conf" GPUBURST_WORKER=/bin/false AWS_EC2_METADATA_DISABLED=true
unset GPUBURST_CONF GPUBURST_ENV AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN \
	AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE
FIFO="$TMP/fifo"
mkfifo "$FIFO" || fail "mkfifo"
NOTREG="$FIFO is not a regular file (a FIFO)"

# run WANT_RC CMD...: CMD's exit status must be WANT_RC (124: it hung)
run() {
	want=$1
	shift
	timeout 10 "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" = 124 ] && fail "$* hung (killed after 10 s)"
	[ "$rc" = "$want" ] || fail "$*: exit $rc, want $want: $(cat "$TMP/out" "$TMP/err")"
}
has() {	# FILE TEXT: FILE has a line with TEXT
	grep -q -F -- "$2" "$1" || fail "$1 lacks '$2': $(cat "$1")"
}

conf() {	# FILE [EXTRA REGION LINE] [EXTRA TOP-LEVEL LINES]
	cat >"$1" <<EOF
cluster_name: nonreg
state_dir: $TMP/state
log: {file: $TMP/log, level: debug}
cloud:
  endpoint: http://127.0.0.1:1
  connect_timeout: 2s
  credentials: {file: $TMP/creds, imds: false}
regions:
  - name: ap-south-1
    ami: ami-1
    azs: [{name: ap-south-1a, subnets: [subnet-1]}]
${2:-}
fallback_groups:
  g: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: 'g5-[1-4]', instance_type: g5.xlarge, home_region: ap-southeast-1}
${3:-}
EOF
}
conf "$TMP/gb.yaml" "" "policy: {error_cooldown: 1s}"
printf '[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = x\n' >"$TMP/creds"

# ---- gpuburstctl: the configuration, user data, credentials, slurm.conf
run 4 "$CTL" -c "$FIFO" config check
has "$TMP/err" "$NOTREG"
run 4 env GPUBURST_CONF="$FIFO" "$CTL" requests
has "$TMP/err" "$NOTREG"
run 4 "$CTL" -c "$TMP" config check
has "$TMP/err" "$TMP is not a regular file (a directory)"
run 4 "$CTL" -c /dev/null config check
has "$TMP/err" "/dev/null is not a regular file (a character device)"
ok "gpuburstctl -c FIFO, GPUBURST_CONF=FIFO, a directory, /dev/null: exit 4 at once, naming the file"

conf "$TMP/ud.yaml" "    user_data_file: $FIFO"
run 3 "$CTL" -c "$TMP/ud.yaml" config check
has "$TMP/err" "'user_data_file': $NOTREG"
ok "a FIFO as user_data_file: a configuration error naming it"

mkdir -p "$TMP/state"
chmod 750 "$TMP/state"
conf "$TMP/cr.yaml"
sed -i "s|credentials: {file: $TMP/creds|credentials: {file: $FIFO|" "$TMP/cr.yaml"
run 8 "$CTL" -c "$TMP/cr.yaml" doctor	# 8: slurm.conf is missing, the first failure
has "$TMP/out" "FAIL credentials: $NOTREG"
has "$TMP/out" "FAIL region ap-south-1: not checked: no credentials"
ok "a FIFO as the shared credentials file: doctor fails 'credentials' naming it, at once"

run 4 env SLURM_CONF="$FIFO" "$CTL" -c "$TMP/gb.yaml" doctor
has "$TMP/out" "FAIL slurm.conf: $NOTREG"
has "$TMP/out" "FAIL slurmctld: $NOTREG"
ok "a FIFO as SLURM_CONF: doctor fails 'slurm.conf' and 'slurmctld' naming it, at once"

# ---- gpuburst-resume: an unreadable SLURM_RESUME_FILE sets the nodes DOWN
# resume_unreadable FILE RC KIND NODES: nothing printed or queued, the DOWN asked
resume_unreadable() {
	: >"$TMP/log"
	run "$2" env SLURM_RESUME_FILE="$1" "$RESUME" -c "$TMP/gb.yaml" "$4"
	[ -s "$TMP/out" ] || [ -s "$TMP/err" ] && fail "printed: $(cat "$TMP/out" "$TMP/err")"
	[ -e "$TMP/state/state.db" ] && fail "$3: a state file was written"
	grep -q 'resume_queued' "$TMP/log" && fail "$3: something was queued: $(cat "$TMP/log")"
	has "$TMP/log" "error: resume_file_unreadable path=$1 nodes=$4 error="
	# no Slurm here: the update is attempted, and logged with its reason
	has "$TMP/log" "error: nodes_down_failed nodes=$4 reason=\"gpuburst: cannot read the resume file: $5\""
}
resume_unreadable "$FIFO" 4 FIFO 'g5-[1-2]' "$NOTREG"
resume_unreadable "$TMP" 4 directory g5-3 "$TMP is not a regular file (a directory)"
truncate -s $((64 * 1024 * 1024 + 1)) "$TMP/big" || fail "truncate"
resume_unreadable "$TMP/big" 10 "64 MiB + 1" g5-4 "$TMP/big is larger than 67108864 bytes"
ok "SLURM_RESUME_FILE a FIFO, a directory, over 64 MiB: nothing queued, DOWN asked with the reason, exit 4/10"

# ---- the same against a real slurmctld, where one can run here
lab_missing() {
	[ "$(id -u)" = 0 ] || { echo "root"; return; }
	for b in slurmctld slurmd munged mungekey munge unmunge scontrol unshare ss flock; do
		command -v "$b" >/dev/null 2>&1 || { echo "$b"; return; }
	done
	unshare -m true 2>/dev/null || echo "unshare -m"
}
why=$(lab_missing)
if [ -n "$why" ]; then
	echo "note: no lab ($why is missing): the DOWN was checked as attempted only"
	exit 0
fi
LAB="$TMP/lab"
mkdir -p "$LAB/etc"
printf '#!/bin/sh\nexit 0\n' >"$TMP/noop"
chmod 755 "$TMP/noop"
p=$("$tool" free-ports 2) || fail "free-ports"
cat >"$TMP/nodes.conf" <<EOF
NodeName=g5-[1-2] Port=[$p-$((p + 1))] CPUs=1 RealMemory=500 State=CLOUD
PartitionName=gpuburst Nodes=g5-[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
"$tool" start --dir "$LAB" --fresh --nodes-conf "$TMP/nodes.conf" --resume-program "$TMP/noop" \
	--suspend-program "$TMP/noop" --resume-fail-program "$TMP/noop" >"$TMP/start.out" 2>&1 ||
	fail "lab start: $(cat "$TMP/start.out")"
: >"$TMP/log"
run 4 "$tool" sh --dir "$LAB" env SLURM_RESUME_FILE="$FIFO" "$RESUME" -c "$TMP/gb.yaml" 'g5-[1-2]'
has "$TMP/log" "warning: nodes_down nodes=g5-[1-2] reason=\"gpuburst: cannot read the resume file: $NOTREG\""
for node in g5-1 g5-2; do
	"$tool" sh --dir "$LAB" scontrol show node "$node" >"$TMP/node" 2>&1 || fail "scontrol: $(cat "$TMP/node")"
	grep -q "State=[A-Z+_]*DOWN" "$TMP/node" || fail "$node not DOWN: $(cat "$TMP/node")"
	has "$TMP/node" "Reason=gpuburst: cannot read the resume file: $NOTREG"
done
[ -e "$TMP/state/state.db" ] && fail "lab: a state file was written"
ok "in a lab: the nodes are DOWN with 'gpuburst: cannot read the resume file: $NOTREG'"

# the way back: reconcile releases them after policy.error_cooldown (1 s here)
sleep 2
run 0 "$tool" sh --dir "$LAB" "$CTL" -c "$TMP/gb.yaml" reconcile --cheap --dry-run
for node in g5-1 g5-2; do
	grep -q "^release  *$node  *$node  *would  *DOWN since .* after \"gpuburst: cannot read the resume file: " "$TMP/out" ||
		fail "reconcile would not release $node: $(cat "$TMP/out" "$TMP/err")"
done
ok "reconcile (dry run) would release both after policy.error_cooldown"
