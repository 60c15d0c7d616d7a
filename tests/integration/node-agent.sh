#!/bin/sh
# node-agent.sh - gpuburst-node against a fake IMDS and EC2 endpoint on
# 127.0.0.1 (node-imds.py) with fake scontrol, squeue, slurmd and
# nvidia-smi that log their argv:
#  - check prints the configuration; a bad one is FILE:LINE:COL, exit 3;
#  - identity from IMDS, the node name from the gpuburst:node tag (polled
#    until it appears), IMDS reached from imds.source_address;
#  - a failed GPU check: POWER_DOWN_FORCE with the exact reason, the
#    unhealthy tag, exit 27, slurmd never started; a hung nvidia-smi is
#    killed at health.timeout;
#  - a passing one: slurmd -D -N NODE with SLURM_CONF, the ok tag sent by
#    CreateTags with the instance role's session token;
#  - a spot notice: DRAIN with the reason, a requeue of each job squeue
#    lists (a refusing one left), POWER_DOWN_ASAP, the interrupted tag,
#    all within 10 s of the notice;
#  - SIGTERM forwarded to slurmd, whose exit status is the agent's;
#  - instance tags off: the node from the user data at the launch index;
#    a rebalance recommendation: POWER_DOWN_ASAP with its reason.
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
PYTHON3="${PYTHON3:-python3}"
NODE="$GB_TOP_BUILDDIR/src/node/gpuburst-node"
"$PYTHON3" -c 'import http.server, json' 2>/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
TMP="$(mktemp -d /tmp/gb-node.XXXXXX)"
D="$TMP/imds"
SRV=
AGENT=
mkdir -p "$D" "$TMP/bin" "$TMP/log"
cleanup() {
	rc=$?
	[ -n "$AGENT" ] && kill "$AGENT" 2>/dev/null
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	[ -f "$TMP/slurmd.pid" ] && kill "$(cat "$TMP/slurmd.pid")" 2>/dev/null
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$TMP"/agent.err "$TMP"/log/*; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 30 "$f"; }
	done
	exit 1
}
ok() { echo "ok - $*"; }
has_line() { grep -qxF -- "$2" "$1" 2>/dev/null || fail "$1 has no line: $2"; }
# wait_for FILE STRING SECONDS: until FILE has a line containing STRING
wait_for() {
	i=0
	while ! grep -qF -- "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -gt $(($3 * 20)) ] && return 1
		sleep 0.05
	done
	return 0
}

# ---- fakes: each logs its argv as one line, fields joined by '|' --------
cat >"$TMP/bin/scontrol" <<EOF
#!/bin/sh
(IFS='|'; echo "\$*") >>"$TMP/log/scontrol"
echo "SLURM_CONF=\$SLURM_CONF" >"$TMP/log/scontrol.env"
if [ "\$1" = requeue ] && grep -qx "\$2" "$TMP/norequeue" 2>/dev/null; then
	echo "Requested operation is presently disabled for job \$2" >&2
	exit 1
fi
exit 0
EOF
cat >"$TMP/bin/squeue" <<EOF
#!/bin/sh
(IFS='|'; echo "\$*") >>"$TMP/log/squeue"
cat "$TMP/jobs" 2>/dev/null
EOF
cat >"$TMP/bin/slurmd" <<EOF
#!/bin/sh
(IFS='|'; echo "\$*") >>"$TMP/log/slurmd"
echo "SLURM_CONF=\$SLURM_CONF" >"$TMP/log/slurmd.env"
echo \$\$ >"$TMP/slurmd.pid"
trap 'echo TERM >>"$TMP/log/slurmd"; exit 42' TERM
while :; do sleep 0.1; done
EOF
cat >"$TMP/bin/nvidia-smi" <<EOF
#!/bin/sh
(IFS='|'; echo "\$*") >>"$TMP/log/nvidia-smi"
[ -f "$TMP/smi-hang" ] && exec sleep 600
cat "$TMP/gpus"
EOF
chmod +x "$TMP"/bin/*
export PATH="$TMP/bin:$PATH"
# The tests' environment turns instance metadata off (no test may reach
# 169.254.169.254); this one's IMDS is its own on 127.0.0.1, and the
# agent's only credentials are the instance role's from it.
unset AWS_EC2_METADATA_DISABLED

"$PYTHON3" "$GB_TOP_SRCDIR/tests/integration/node-imds.py" "$D" &
SRV=$!
i=0
while [ ! -f "$D/port" ]; do
	i=$((i + 1)); [ "$i" -gt 100 ] && fail "the fake IMDS did not start"; sleep 0.05
done
URL="http://127.0.0.1:$(cat "$D/port")"
IID=i-0123456789abcdef0
printf '%s' "$IID" >"$D/instance-id"
printf 'p5.48xlarge' >"$D/instance-type"
printf 'x' >"$TMP/slurm.conf"
printf 'a fake munge key of 32 bytes....' >"$TMP/munge.key"
chmod 0600 "$TMP/munge.key"

cat >"$TMP/node.yaml" <<EOF
imds: {endpoint: '$URL', source_address: 127.0.0.5, timeout: 2s}
ec2: {endpoint: '$URL'}
node: {tag_wait: 20s, set_hostname: false}
slurm:
  conf: $TMP/slurm.conf
  slurmd: $TMP/bin/slurmd
  scontrol: $TMP/bin/scontrol
  squeue: $TMP/bin/squeue
  slurmd_args: [-v]
munge: {key: $TMP/munge.key}
health: {timeout: 2s}
notices: {interval: 1s}
EOF

# ---- check ----------------------------------------------------------------
out=$("$NODE" -c "$TMP/node.yaml" check) || fail "check exited $?"
echo "$out" | grep -qxF "  interval: 1s" || fail "check output: $out"
echo "$out" | grep -qxF "  source_address: 127.0.0.5" || fail "check output: $out"
printf 'notices: {interval: 2x}\n' >"$TMP/bad.yaml"
"$NODE" -c "$TMP/bad.yaml" check 2>"$TMP/bad.err"; rc=$?
[ "$rc" = 3 ] || fail "a bad config exited $rc, want 3"
grep -qF "gpuburst-node: $TMP/bad.yaml:1:21: 'interval' must be a duration" "$TMP/bad.err" ||
	fail "bad config message: $(cat "$TMP/bad.err")"
"$NODE" -c "$TMP/node.yaml" bogus 2>/dev/null; rc=$?
[ "$rc" = 2 ] || fail "an unknown command exited $rc, want 2"
: >"$TMP/empty.yaml"
"$NODE" -c "$TMP/empty.yaml" check >"$TMP/defaults" || fail "check of an empty file"
"$NODE" -c "$GB_TOP_SRCDIR/etc/node.yaml.example" check >"$TMP/example" ||
	fail "check of etc/node.yaml.example"
cmp -s "$TMP/defaults" "$TMP/example" ||
	fail "etc/node.yaml.example is not the defaults: $(diff "$TMP/defaults" "$TMP/example")"
ok "check: prints the configuration; FILE:LINE:COL and exit 3 for a bad one; the example is the defaults"

# ---- a failed GPU check -------------------------------------------------
printf 'p5-1' >"$D/node-tag"
: >"$TMP/gpus"
for i in 1 2 3 4 5 6 7; do echo "NVIDIA H100 80GB HBM3" >>"$TMP/gpus"; done
"$NODE" -c "$TMP/node.yaml" run 2>"$TMP/agent.err"; rc=$?
[ "$rc" = 27 ] || fail "an unhealthy instance exited $rc, want 27"
[ -f "$TMP/log/slurmd" ] && fail "slurmd was started on an unhealthy instance"
SUM="expected 8 x H100, nvidia-smi shows 7 x NVIDIA H100 80GB HBM3"
has_line "$TMP/log/scontrol" "update|NodeName=p5-1|State=POWER_DOWN_FORCE|Reason=gpuburst: unhealthy: instance $IID: $SUM"
has_line "$TMP/log/nvidia-smi" "--query-gpu=name|--format=csv,noheader"
"$PYTHON3" - "$D/ec2.log" "$IID" "unhealthy: $SUM" <<'PY' || fail "no unhealthy CreateTags"
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
want = {"Action": "CreateTags", "ResourceId.1": sys.argv[2],
        "Tag.1.Key": "gpuburst:agent", "Tag.1.Value": sys.argv[3]}
c = calls[-1]
bad = {k: c.get(k) for k in want if c.get(k) != want[k]}
if bad or c["_security_token"] != "fake-session-token-of-the-role" or \
        "Credential=ASIAFAKEINSTANCEROLE/" not in c["_authorization"]:
    print("CreateTags:", c, "differs in", bad); sys.exit(1)
PY
grep -q "identity instance=$IID type=p5.48xlarge az=us-east-1a region=us-east-1 launch_index=0 node=p5-1 from=tag" \
	"$TMP/agent.err" || fail "no identity line"
grep -q "GET /latest/meta-data/instance-id" "$D/requests.log" || fail "IMDS not asked"
if grep -v '^127\.0\.0\.5 ' "$D/requests.log" | grep -q latest; then
	fail "an IMDS request did not come from 127.0.0.5: $(grep -v '^127\.0\.0\.5 ' "$D/requests.log" | head -3)"
fi
grep -q "GET /latest/meta-data/iam/security-credentials/gb-node-role" "$D/requests.log" ||
	fail "the role's credentials were not read from IMDS"
ok "unhealthy (7 of 8 H100): POWER_DOWN_FORCE with the reason, tag, exit 27, no slurmd; IMDS from 127.0.0.5"

# ---- a hung nvidia-smi ----------------------------------------------------
: >"$TMP/log/scontrol"
touch "$TMP/smi-hang"
start=$(date +%s)
"$NODE" -c "$TMP/node.yaml" run 2>"$TMP/agent.err"; rc=$?
took=$(($(date +%s) - start))
rm -f "$TMP/smi-hang"
[ "$rc" = 27 ] || fail "a hung nvidia-smi exited $rc, want 27"
[ "$took" -le 8 ] || fail "a hung nvidia-smi took ${took}s (health.timeout 2s)"
grep -q "^update|NodeName=p5-1|State=POWER_DOWN_FORCE|Reason=gpuburst: unhealthy: instance $IID: expected 8 x H100, .*nvidia-smi timed out after 2s (killed)\$" \
	"$TMP/log/scontrol" || fail "hang reason: $(cat "$TMP/log/scontrol")"
ok "hung nvidia-smi: killed at health.timeout (${took}s), unhealthy"

# ---- all eight GPUs, but DCGM's short diagnostic fails (health.dcgm) ----
echo "NVIDIA H100 80GB HBM3" >>"$TMP/gpus"
: >"$TMP/log/scontrol"
cat >"$TMP/bin/dcgmi" <<EOF
#!/bin/sh
(IFS='|'; echo "\$*") >>"$TMP/log/dcgmi"
[ -f "$TMP/dcgm-ok" ] && exit 0
echo "Error: Diagnostic failed: GPU 3: PCIe replay count exceeded"
exit 226
EOF
chmod +x "$TMP/bin/dcgmi"
sed 's|^health: .*|health: {timeout: 2s, dcgm: true, dcgmi: '"$TMP"'/bin/dcgmi}|' \
	"$TMP/node.yaml" >"$TMP/node-dcgm.yaml"
"$NODE" -c "$TMP/node-dcgm.yaml" run 2>"$TMP/agent.err"; rc=$?
[ "$rc" = 27 ] || fail "a failed DCGM diagnostic exited $rc, want 27"
has_line "$TMP/log/dcgmi" "diag|-r|1"
[ -f "$TMP/log/slurmd" ] && fail "slurmd was started after a failed DCGM diagnostic"
grep -q "^update|NodeName=p5-1|State=POWER_DOWN_FORCE|Reason=gpuburst: unhealthy: instance $IID: .*dcgmi failed: exit status 226: Error: Diagnostic failed: GPU 3: PCIe replay count exceeded\$" \
	"$TMP/log/scontrol" || fail "dcgm reason: $(cat "$TMP/log/scontrol")"
ok "health.dcgm: 8 of 8 GPUs but dcgmi diag -r 1 fails: unhealthy with its words, no slurmd"

# ---- healthy: slurmd, then a spot notice ----------------------------------
for f in scontrol nvidia-smi; do : >"$TMP/log/$f"; done
: >"$D/ec2.log"
rm -f "$D/node-tag"	# not tagged yet: the agent polls until it is
printf '101\n102\n103\n' >"$TMP/jobs"
echo 102 >"$TMP/norequeue"
"$NODE" -c "$TMP/node.yaml" run 2>"$TMP/agent.err" &
AGENT=$!
sleep 1
printf 'p5-1\n' >"$D/node-tag"
wait_for "$TMP/log/slurmd" "-D" 10 || fail "slurmd not started"
has_line "$TMP/log/slurmd" "-D|-N|p5-1|-v"
has_line "$TMP/log/slurmd.env" "SLURM_CONF=$TMP/slurm.conf"
grep -q "node_tag_wait tag=gpuburst:node" "$TMP/agent.err" || fail "no tag wait logged"
wait_for "$D/ec2.log" '"Tag.1.Value": "ok: node p5-1, 8 x H100, slurmd started"' 10 ||
	fail "no ok tag: $(cat "$D/ec2.log")"
ok "healthy: slurmd -D -N p5-1 -v with SLURM_CONF after the tag came, ok tag"

T=2026-12-06T12:34:56Z
printf '{"action": "terminate", "time": "%s"}' "$T" >"$D/spot"
start=$(date +%s.%N)
wait_for "$TMP/log/scontrol" "State=POWER_DOWN_ASAP" 10 || fail "no POWER_DOWN_ASAP within 10 s"
took=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
cat >"$TMP/want" <<EOF
update|NodeName=p5-1|State=DRAIN|Reason=gpuburst: spot interruption: instance $IID at $T
requeue|101
requeue|102
requeue|103
update|NodeName=p5-1|State=POWER_DOWN_ASAP
EOF
cmp -s "$TMP/want" "$TMP/log/scontrol" || fail "scontrol calls: $(diff "$TMP/want" "$TMP/log/scontrol")"
has_line "$TMP/log/squeue" "-h|-w|p5-1|-o|%A"
has_line "$TMP/log/scontrol.env" "SLURM_CONF=$TMP/slurm.conf"
grep -q "spot_requeue job=102 result=refused" "$TMP/agent.err" || fail "refusal not logged"
grep -q "spot_drain node=p5-1 result=ok .* ms=" "$TMP/agent.err" || fail "drain not logged with ms"
wait_for "$D/ec2.log" "\"Tag.1.Value\": \"interrupted: spot terminate at $T; drained; requeued 101,103; not requeued 102\"" 10 ||
	fail "no interrupted tag: $(tail -1 "$D/ec2.log")"
ok "spot notice: DRAIN, requeue 101 102 103 (102 refused), POWER_DOWN_ASAP within ${took}s, tag"

sleep 2	# a second poll must not act again
[ "$(grep -c DRAIN "$TMP/log/scontrol")" = 1 ] || fail "the notice was acted on twice"
kill -TERM "$AGENT"
wait "$AGENT"; rc=$?
AGENT=
has_line "$TMP/log/slurmd" "TERM"
[ "$rc" = 42 ] || fail "the agent exited $rc, want slurmd's 42"
rm -f "$TMP/slurmd.pid"
ok "SIGTERM forwarded to slurmd; the agent exits with slurmd's status (42)"

# ---- tags off: the user data's node list; a rebalance recommendation -------
rm -f "$D/spot" "$TMP/log/slurmd"
: >"$TMP/log/scontrol"
touch "$D/tags-off"
printf 'g5.xlarge' >"$D/instance-type"
printf '2' >"$D/launch-index"
echo "NVIDIA A10G" >"$TMP/gpus"
printf '#!/bin/sh\nexport GPUBURST_NODES="g5-7 g5-8 g5-9"\nexec gpuburst-node run\n' >"$D/user-data"
"$NODE" -c "$TMP/node.yaml" run 2>"$TMP/agent.err" &
AGENT=$!
wait_for "$TMP/log/slurmd" "-D" 10 || fail "slurmd not started (user data)"
has_line "$TMP/log/slurmd" "-D|-N|g5-9|-v"
grep -q "node=g5-9 from=user-data" "$TMP/agent.err" || fail "identity from the user data not logged"
printf '{"noticeTime": "2026-12-06T12:32:56Z"}' >"$D/rebalance"
wait_for "$TMP/log/scontrol" "POWER_DOWN_ASAP" 10 || fail "no rebalance POWER_DOWN_ASAP"
has_line "$TMP/log/scontrol" "update|NodeName=g5-9|State=POWER_DOWN_ASAP|Reason=gpuburst: rebalance recommendation: instance $IID"
wait_for "$D/ec2.log" '"Tag.1.Value": "rebalance: recommendation at 2026-12-06T12:32:56Z; power down asap"' 10 ||
	fail "no rebalance tag"
kill -INT "$AGENT"
wait "$AGENT"; rc=$?
AGENT=
# the fake slurmd traps TERM only: SIGINT kills it, 128 + 2
[ "$rc" = 130 ] || fail "the agent exited $rc after SIGINT, want 130 (slurmd killed by it)"
rm -f "$TMP/slurmd.pid"
ok "tags off: node g5-9 from GPUBURST_NODES at launch index 2; rebalance: POWER_DOWN_ASAP, tag; SIGINT forwarded (130)"

# ---- no node name at all ----------------------------------------------------
printf '5' >"$D/launch-index"
"$NODE" -c "$TMP/node.yaml" run 2>"$TMP/agent.err"; rc=$?
[ "$rc" = 8 ] || fail "no node for the launch index exited $rc, want 8"
grep -q "GPUBURST_NODES has 3 node(s), no node for ami-launch-index 5" "$TMP/agent.err" ||
	fail "no message for the missing node: $(cat "$TMP/agent.err")"
ok "no node for the launch index: exit 8 with the reason"
exit 0
