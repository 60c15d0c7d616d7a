#!/bin/sh
# ctl-proxy.sh - cloud.proxy end to end: gpuburstctl plan and doctor reach
# gpuburst-cloudsim through a forward proxy (fwd-proxy.py, 127.0.0.1 only)
# at an endpoint whose name, ec2.gpuburst.test, only the proxy resolves
# (to 127.0.0.1): the proxy's log shows the CONNECT tunnels and doctor
# names the proxy; without the proxy, and with the name in no_proxy, the
# endpoint is unreachable (the name does not resolve) and the proxy sees
# nothing; a loopback endpoint never goes through the proxy; a proxy that
# refuses (403) or wants other credentials (407) fails each region with
# an error naming the proxy, its password shown as *** and found nowhere
# in the output or the logs; the proxy environment variables (https_proxy,
# HTTP_PROXY, ALL_PROXY, NO_PROXY) change nothing.
#
# Every connection is to 127.0.0.1.  The checks where the name must fail
# to resolve run in a network namespace of their own with no interface up
# (unshare -n, or -rn unprivileged), so that no query leaves the host: a
# resolver there is unreachable at once.  Without unshare they are not
# run, and the test says so.
CLOUDSIM_NO_AWS_CLI=yes
PY="${PYTHON3:-python3}"
"$PY" -c 'import http.server, select' 2>/dev/null || {
	echo "SKIP: python3 is needed for the forward proxy (fwd-proxy.py)"
	exit 77
}
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
FWD="$GB_TOP_SRCDIR/tests/integration/fwd-proxy.py"
PASSWORD=secret
SECRET_OK=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
T=""
command -v timeout >/dev/null 2>&1 && T="timeout 60"
PROXY_PID=

stop_proxy() {
	stop_pid "$PROXY_PID"
	PROXY_PID=
}
trap 'stop_proxy; cleanup' EXIT

start_proxy() {	# [--refuse STATUS]: sets PPORT; the log is $TMP/proxy.log
	rm -f "$TMP/proxy.pid" "$TMP/proxy.port"
	"$PY" "$FWD" --port-file "$TMP/proxy.port" --pid-file "$TMP/proxy.pid" \
		--log "$TMP/proxy.log" "$@" >"$TMP/proxy.out" 2>&1 &
	for _ in $(seq 1 200); do
		[ -s "$TMP/proxy.port" ] && break
		kill -0 $! 2>/dev/null || fail "fwd-proxy.py exited: $(cat "$TMP/proxy.out")"
		sleep 0.05
	done
	[ -s "$TMP/proxy.port" ] || fail "fwd-proxy.py: no port file after 10 s"
	PROXY_PID="$(cat "$TMP/proxy.pid")"
	[ "$PROXY_PID" = "$!" ] || fail "proxy pid file says $PROXY_PID, started $!"
	PPORT="$(cat "$TMP/proxy.port")"
}

write_conf() {	# FILE ENDPOINT [CLOUD_EXTRA]: the cloud section gets CLOUD_EXTRA lines
	cat >"$1" <<EOF
cluster_name: t
state_dir: $TMP/state
log: {file: $TMP/gb.log, level: debug}
cloud:
  endpoint: $2
  connect_timeout: 2s
  request_timeout: 5s
  max_retries: 0
${3:-}
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: $SECRET_OK, imds: false}
regions:
  - name: ap-south-1
    ami: ami-1
    azs: [{name: ap-south-1a, subnets: [subnet-aps1a-1]}, {name: ap-south-1b, subnets: [subnet-aps1b-1]}]
fallback_groups:
  sea: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: "g5-[1-16]", instance_type: g5.xlarge, home_region: ap-southeast-1}
EOF
}

# ctl CONF OUT CMD...: gpuburstctl without Slurm, the proxy variables unset
ctl() {
	conf=$1 out=$2
	shift 2
	env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u all_proxy \
		-u ALL_PROXY -u no_proxy -u NO_PROXY SLURM_CONF="$TMP/no-slurm.conf" \
		AWS_EC2_METADATA_DISABLED=true $T "$CTL" -c "$conf" "$@" >"$out" 2>"$out.err"
}
log_lines() { grep -c '' "$TMP/proxy.log"; }
no_secret() {	# WHAT FILE...: the proxy's password appears in none of them
	what=$1
	shift
	grep -l "$PASSWORD" "$@" 2>/dev/null && fail "$what: the proxy's password is shown"
	return 0
}
# ISOLATED CMD...: CMD in a network namespace without a working interface
isolate=""
if unshare -n true 2>/dev/null; then
	isolate="unshare -n"
elif unshare -rn true 2>/dev/null; then
	isolate="unshare -rn"
fi
ictl() {	# CONF OUT ARGS...: ctl in the isolated namespace
	conf=$1 out=$2
	shift 2
	env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true \
		$isolate $T "$CTL" -c "$conf" "$@" >"$out" 2>"$out.err"
}

start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml" --time-scale 20
mkdir -p "$TMP/state"
chmod 750 "$TMP/state"
start_proxy
NAMED="http://ec2.gpuburst.test:$PORT"
PROXY="http://gpuburst:$PASSWORD@127.0.0.1:$PPORT"
SHOWN="http://gpuburst:\*\*\*@127.0.0.1:$PPORT"

# ---- through the proxy: plan and doctor
write_conf "$TMP/via.yaml" "$NAMED" "  proxy: $PROXY"
ctl "$TMP/via.yaml" "$TMP/plan.out" plan --type g5.xlarge --count 2 ||
	fail "plan through the proxy: $(cat "$TMP/plan.out" "$TMP/plan.out.err")"
grep -q '^Plan for 2 x g5.xlarge, home ap-southeast-1' "$TMP/plan.out" ||
	fail "plan through the proxy: $(cat "$TMP/plan.out")"
grep -q "^CONNECT ec2.gpuburst.test:$PORT auth=yes\$" "$TMP/proxy.log" ||
	fail "no CONNECT in the proxy's log: $(cat "$TMP/proxy.log")"
grep -qv '^CONNECT ' "$TMP/proxy.log" && fail "not only CONNECT tunnels: $(cat "$TMP/proxy.log")"
ok "plan reaches ec2.gpuburst.test through the proxy (CONNECT with credentials)"

n0=$(log_lines)
ctl "$TMP/via.yaml" "$TMP/doc.out" doctor
grep -q "^ok   proxy: $SHOWN for every endpoint but loopback ones and instance metadata\$" "$TMP/doc.out" ||
	fail "doctor's proxy line: $(cat "$TMP/doc.out")"
grep -q "^ok   region ap-south-1: $NAMED answered in [0-9.]* s (3 zones) via proxy $SHOWN\$" "$TMP/doc.out" ||
	fail "doctor's region line: $(cat "$TMP/doc.out")"
grep -q '^ok   launch ap-south-1 g5: ' "$TMP/doc.out" || fail "doctor's dry run: $(cat "$TMP/doc.out")"
[ "$(log_lines)" -gt "$n0" ] || fail "doctor did not go through the proxy"
no_secret "doctor" "$TMP/doc.out" "$TMP/doc.out.err" "$TMP/plan.out" "$TMP/plan.out.err" \
	"$TMP/gb.log" "$TMP/proxy.log"
ok "doctor names the proxy (password ***) and checks the region through it"

# ---- the proxy environment variables change nothing: a bogus proxy there
# is not used, NO_PROXY=* does not bypass the configured one
n0=$(log_lines)
env https_proxy=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 http_proxy=http://127.0.0.1:1 \
	HTTP_PROXY=http://127.0.0.1:1 ALL_PROXY=http://127.0.0.1:1 NO_PROXY='*' no_proxy='*' \
	SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true \
	$T "$CTL" -c "$TMP/via.yaml" plan --type g5.xlarge --count 2 >"$TMP/env.out" 2>&1 ||
	fail "plan with proxy variables set: $(cat "$TMP/env.out")"
[ "$(log_lines)" -gt "$n0" ] || fail "NO_PROXY=* bypassed the configured proxy"
write_conf "$TMP/loop-direct.yaml" "$ENDPOINT"
env https_proxy=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 http_proxy=http://127.0.0.1:1 \
	HTTP_PROXY=http://127.0.0.1:1 ALL_PROXY=http://127.0.0.1:1 \
	SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true \
	$T "$CTL" -c "$TMP/loop-direct.yaml" doctor >"$TMP/env.out" 2>&1
grep -q '^ok   proxy: none: every endpoint is reached directly (the proxy environment variables are ignored)$' "$TMP/env.out" ||
	fail "doctor without a proxy: $(cat "$TMP/env.out")"
grep -q "^ok   region ap-south-1: $ENDPOINT answered in [0-9.]* s (3 zones)\$" "$TMP/env.out" ||
	fail "a bogus proxy in the environment was used: $(cat "$TMP/env.out")"
ok "https_proxy, HTTP_PROXY, ALL_PROXY and NO_PROXY in the environment are ignored"

# ---- a loopback endpoint never goes through the proxy
n0=$(log_lines)
write_conf "$TMP/loop.yaml" "$ENDPOINT" "  proxy: $PROXY"
ctl "$TMP/loop.yaml" "$TMP/loop.out" doctor
grep -q "^ok   region ap-south-1: $ENDPOINT answered in [0-9.]* s (3 zones)\$" "$TMP/loop.out" ||
	fail "loopback endpoint with a proxy: $(cat "$TMP/loop.out")"
ctl "$TMP/loop.yaml" "$TMP/loop.out" plan --type g5.xlarge --count 2 ||
	fail "plan at a loopback endpoint with a proxy: $(cat "$TMP/loop.out.err")"
expect_eq "proxy log after loopback runs" "$(log_lines)" "$n0"
ok "a loopback endpoint goes direct although a proxy is set"

# ---- without the proxy, or with the name in no_proxy: the name does not
# resolve, the proxy sees nothing, and it fails fast
if [ -z "$isolate" ]; then
	echo "# note: unshare -n and -rn are not permitted here: the direct cases (which resolve a name) are not run"
else
	n0=$(log_lines)
	write_conf "$TMP/direct.yaml" "$NAMED"
	ictl "$TMP/direct.yaml" "$TMP/direct.out" doctor
	grep -q "^FAIL region ap-south-1: $NAMED: DescribeAvailabilityZones ap-south-1: .*ec2.gpuburst.test" "$TMP/direct.out" ||
		fail "no proxy: $(cat "$TMP/direct.out")"
	grep -q 'via proxy' "$TMP/direct.out" && fail "no proxy, yet 'via proxy': $(cat "$TMP/direct.out")"
	# (plan plans without the offerings it could not fetch: no exit status to check)
	ictl "$TMP/direct.yaml" "$TMP/direct.out" plan --type g5.xlarge --count 2
	for list in "[ec2.gpuburst.test]" "[.gpuburst.test, 10.0.0.5]"; do
		write_conf "$TMP/np.yaml" "$NAMED" "  proxy: $PROXY
  no_proxy: $list"
		ictl "$TMP/np.yaml" "$TMP/np.out" doctor
		grep -q "^ok   proxy: $SHOWN for every endpoint but loopback ones and instance metadata; not for " "$TMP/np.out" ||
			fail "no_proxy $list: proxy line: $(cat "$TMP/np.out")"
		grep -q "^FAIL region ap-south-1: $NAMED: DescribeAvailabilityZones ap-south-1: .*ec2.gpuburst.test" "$TMP/np.out" ||
			fail "no_proxy $list: $(cat "$TMP/np.out")"
		grep -q '^FAIL region .*via proxy' "$TMP/np.out" && fail "no_proxy $list: went via the proxy"
	done
	expect_eq "proxy log after the direct runs" "$(log_lines)" "$n0"
	ok "without the proxy, or listed in no_proxy, ec2.gpuburst.test is reached directly and does not resolve"
fi

# ---- a proxy that refuses: 403 (the tunnel) and 407 (its credentials)
for status in 403 407; do
	stop_proxy
	start_proxy --refuse "$status"
	PROXY="http://gpuburst:$PASSWORD@127.0.0.1:$PPORT"
	SHOWN="http://gpuburst:\*\*\*@127.0.0.1:$PPORT"
	write_conf "$TMP/refused.yaml" "$NAMED" "  proxy: $PROXY"
	n0=$(log_lines)
	ctl "$TMP/refused.yaml" "$TMP/ref.out" doctor
	case $status in
	403) want="the proxy refused the tunnel (CONNECT answered 403) (proxy)" ;;
	407) want="the proxy wants other credentials (CONNECT answered 407): check the user and password in the proxy URL (proxy_auth)" ;;
	esac
	grep -qF "FAIL region ap-south-1: $NAMED: DescribeAvailabilityZones ap-south-1: POST $NAMED/ via proxy $(echo "$SHOWN" | tr -d '\\'): $want" "$TMP/ref.out" ||
		fail "proxy $status: $(cat "$TMP/ref.out")"
	ctl "$TMP/refused.yaml" "$TMP/ref-plan.out" plan --type g5.xlarge --count 2
	[ "$(log_lines)" -gt "$n0" ] || fail "proxy $status: no request reached it"
	no_secret "proxy $status" "$TMP/ref.out" "$TMP/ref.out.err" "$TMP/ref-plan.out" \
		"$TMP/ref-plan.out.err" "$TMP/gb.log" "$TMP/proxy.log" "$TMP/proxy.out"
	ok "a proxy answering $status fails the region naming the proxy, password as ***, nowhere in clear"
done
exit 0
