#!/bin/sh
# 37-status-page.sh - the status page (issue 23 part 4) in a real headless
# Chromium: `gpuburstctl metrics serve` with metrics.status_page and a token,
# and Chromium, both in a network namespace of this test's own that has
# only a loopback (so nothing the browser might try can leave this host),
# driven through the DevTools protocol (page-driver.py).  The page loads
# (the token in its URL); then a two-node job over the approval threshold
# is submitted: its request appears on the page, waiting for approval
# (and in the approvals table); `gpuburstctl approve` lets it go and the
# same page, never reloaded (one load, one navigation, a marker set after
# the load still there), shows it done with 2/2 nodes, from the event
# stream; its timeline picture loads.  Every URL the page asked for is on
# the endpoint, none elsewhere, and the console has no error (a
# Content-Security-Policy refusal would be one).
APPROVAL_THRESHOLD=1
RESUME_TIMEOUT=60
. "${srcdir:-.}/e2e-lib.sh"
CHROMIUM=$(command -v chromium 2>/dev/null) ||
	skip "chromium is not installed (Debian: apt-get install chromium)"
"$PYTHON3" -c 'import websocket' 2>/dev/null ||
	skip "python3-websocket is not installed (Debian: apt-get install python3-websocket)"
unshare -n true 2>/dev/null || skip "unshare -n (a network namespace) is not allowed here"
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" >"$TMP/token"
chmod 600 "$TMP/token"
# in the namespace of its own, the default address is free
CONF_EXTRA="metrics:
  status_page: true
  token_file: $TMP/token"
DRV="$TMP/page"
mkdir -p "$DRV"
NS_PID=
trap 'rc_=$?; stop_pid "$NS_PID"; [ -s "$DRV/serve.pid" ] && stop_pid "$(cat "$DRV/serve.pid")"; (exit $rc_); cleanup' EXIT
e2e_start --nodes 2

# the server and the browser in one new network namespace: only its loopback
SLURM_CONF="$LAB/etc/slurm.conf" unshare -n /bin/sh -c '
	ip link set lo up || exit 1
	"$0" -c "$1" metrics serve >"$2/serve.out" 2>&1 &
	echo $! >"$2/serve.pid"
	i=0
	until grep -q "^serving the metrics at http://127.0.0.1:9812/metrics and the status page" "$2/serve.out"; do
		i=$((i + 1)); [ $i -lt 100 ] || { cat "$2/serve.out"; exit 1; }
		sleep 0.1
	done
	"$3" "$4" "http://127.0.0.1:9812/?token=$5" "$2" "$2/job" 150
	rc=$?
	kill "$(cat "$2/serve.pid")"
	wait
	exit $rc' "$CTL" "$CONF" "$DRV" "$PYTHON3" "$GB_TOP_SRCDIR/tests/e2e/page-driver.py" \
	"$TOKEN" >"$DRV/driver.out" 2>&1 &
NS_PID=$!
wait_for 60 "the page loaded in Chromium" "[ -s '$DRV/ready' ] || ! kill -0 $NS_PID 2>/dev/null"
[ -s "$DRV/ready" ] || fail "the page did not load: $(cat "$DRV/driver.out" "$DRV/serve.out" 2>/dev/null)"
ok "the page loaded in headless Chromium ($("$CHROMIUM" --version 2>/dev/null | head -1)) with the token"

# pending JOB: how many of its requests wait for approval
pending() { sql "SELECT count(*) FROM requests WHERE job_id=$1 AND state='pending_approval'"; }
JOB=$(submit -N2 --gres=gpu:a10g:1 --wrap 'srun hostname')
echo "$JOB" >"$DRV/job.tmp" && mv "$DRV/job.tmp" "$DRV/job"
wait_for 30 "a pending approval" '[ "$(pending $JOB)" = 1 ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB")
wait_for 30 "the page showing $REQ waiting" "grep -q 'request $REQ pending_approval' '$DRV/driver.out'"
ok "the page shows job $JOB's request $REQ pending_approval"

ctl approve "$REQ" --comment "the page watches" >"$TMP/approve.out" 2>&1 ||
	fail "approve: $(cat "$TMP/approve.out")"
wait_for 150 "the driver's result" "[ -s '$DRV/result.json' ] || ! kill -0 $NS_PID 2>/dev/null"
wait "$NS_PID" || fail "the driver failed: $(cat "$DRV/driver.out")"
NS_PID=
R="$DRV/result.json"
expect_eq "the request on the page" "$(jq_py "$R" "d['request']")" "$REQ"
expect_eq "not there at load" "$(jq_py "$R" "d['request'] in d['initial']")" False
expect_eq "what the page showed of it" \
	"$(jq_py "$R" "[(s, ' '.join(p.split()[:2])) for s, p in [d['seen'][0], d['seen'][-1]]]")" \
	'[["pending_approval", "0/2 nodes,"], ["done", "2/2 nodes,"]]'
expect_eq "documents drawn" "$(jq_py "$R" "d['updates'] >= 2")" True
expect_eq "the stream" "$(jq_py "$R" "d['conn']")" live
ok "then, from the event stream: $(jq_py "$R" "' -> '.join(s + ' ' + p.strip() for s, p in d['seen'])")"
expect_eq "loads, navigations" "$(jq_py "$R" "(d['loads'], d['navigations'], d['marker'])")" \
	"(1, 1, 'loaded once')"
ok "never reloaded: 1 load, 1 navigation, the marker set after the load still there"
expect_eq "the picture" "$(jq_py "$R" "d['picture']['w'] > 300 and d['picture']['h'] > 100 and ('api/requests/$REQ.svg' in d['picture']['src'])")" True
ok "its timeline picture loads ($(jq_py "$R" "'%dx%d' % (d['picture']['w'], d['picture']['h'])"))"
expect_eq "pools shown" "$(jq_py "$R" "d['pools_shown'] >= 1")" True

# every URL the page asked for is on the endpoint
expect_eq "elsewhere" "$(jq_py "$R" "[u for u in d['urls'] if not u.startswith('http://127.0.0.1:9812/')]")" "[]"
expect_eq "what it asked for" "$(jq_py "$R" "sorted(set(u.split('?')[0].replace('$REQ', 'ID') for u in d['urls']))")" \
	'["http://127.0.0.1:9812/", "http://127.0.0.1:9812/api/events", "http://127.0.0.1:9812/api/requests/ID.svg", "http://127.0.0.1:9812/favicon.svg", "http://127.0.0.1:9812/status.css", "http://127.0.0.1:9812/status.js"]'
expect_eq "console errors" "$(jq_py "$R" "d['errors']")" "[]"
ok "$(jq_py "$R" "len(d['urls'])") requests, all to the endpoint; no console error"

wait_for 60 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
ok "job $JOB completed"
