#!/bin/sh
# 36-metrics.sh - the metrics (issue 23 part 1) seen by a real Prometheus:
# `gpuburstctl metrics serve` on loopback, Debian's prometheus scraping it
# every second, then a scripted burst (Singapore, the home region, has no
# g5.xlarge and refuses; Mumbai gives the instance), a full reconcile pass
# (which also writes metrics.textfile), and every query of the Grafana
# dashboard shipped in contrib/grafana run through Prometheus's HTTP API
# (/api/v1/query): each succeeds, and those with a counterpart in the state
# file equal it (calls by outcome, refusals, requests, instances, nodes,
# the last reconcile).  promtool checks the exposition; the endpoint refuses
# anything but GET /metrics.
# no power-down while it compares: the state file stays what Prometheus saw
SUSPEND_TIME=600
. "${srcdir:-.}/e2e-lib.sh"
PROMETHEUS=$(command -v prometheus 2>/dev/null) ||
	skip "prometheus is not installed (Debian: apt-get install prometheus)"
PROMTOOL=$(command -v promtool 2>/dev/null) ||
	skip "promtool is not installed (Debian: prometheus)"
DASH="$GB_TOP_SRCDIR/contrib/grafana/gpuburst-dashboard.json"
# two free loopback ports: the metrics endpoint and Prometheus's API
free_port() {
	"$PYTHON3" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
MPORT=$(free_port)
PPORT=$(free_port)
CONF_EXTRA="metrics:
  listen: 127.0.0.1:$MPORT
  textfile: $TMP/gpuburst.prom"
MS_PID=
PROM_PID=
stop_ours() {
	stop_pid "$PROM_PID"
	PROM_PID=
	stop_pid "$MS_PID"
	MS_PID=
}
trap 'rc_=$?; stop_ours; (exit $rc_); cleanup' EXIT
e2e_start --nodes 2

# --- the endpoint, then Prometheus scraping it every second
SLURM_CONF="$LAB/etc/slurm.conf" "$CTL" -c "$CONF" metrics serve >"$TMP/serve.out" 2>&1 &
MS_PID=$!
wait_for 10 "metrics serve listening" "grep -q '^serving the metrics at http://127.0.0.1:$MPORT/metrics' '$TMP/serve.out'"
http() {	# http METHOD URL: the status, then the body
	"$PYTHON3" - "$1" "$2" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[2], method=sys.argv[1], data=b"x" if sys.argv[1] == "POST" else None)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    r = opener.open(req, timeout=10)
    print(r.status); print(r.headers.get("Content-Type")); sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.headers.get("Content-Type")); sys.stdout.write(e.read().decode())
PY
}
http GET "http://127.0.0.1:$MPORT/metrics" >"$TMP/m0" || fail "GET /metrics"
expect_eq "GET /metrics" "$(sed -n 1,2p "$TMP/m0" | tr '\n' ' ')" "200 text/plain; version=0.0.4; charset=utf-8 "
expect_eq "POST /metrics" "$(http POST "http://127.0.0.1:$MPORT/metrics" | head -1)" 405
expect_eq "GET /" "$(http GET "http://127.0.0.1:$MPORT/" | head -1)" 404
ok "metrics serve on 127.0.0.1:$MPORT: GET /metrics 200 (text 0.0.4), POST 405, other paths 404"

cat >"$TMP/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpuburst
    static_configs: [{targets: ['127.0.0.1:$MPORT']}]
EOF
"$PROMETHEUS" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMP/prom.log" 2>&1 &
PROM_PID=$!
# query EXPR: Prometheus's answer as JSON
query() {
	"$PYTHON3" - "http://127.0.0.1:$PPORT/api/v1/query" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
print(opener.open(url, timeout=10).read().decode())
PY
}
# value EXPR: the sum of the query's sample values ("none": no sample)
value() {
	query "$1" | "$PYTHON3" -c 'import json, sys
d = json.load(sys.stdin)
assert d["status"] == "success", d
r = d["data"]["result"]
if not r: print("none")
else:
    s = sum(float(x["value"][1]) for x in r)
    print(int(s) if s == int(s) else s)'
}
wait_for 30 "Prometheus scraping gpuburst" '[ "$(value "up{job=\"gpuburst\"}" 2>/dev/null)" = 1 ]'
ok "Prometheus (127.0.0.1:$PPORT) scrapes the endpoint"

# --- a scripted burst: Singapore refuses, Mumbai gives
JOB=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'sleep 1')
wait_for 40 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
ctl reconcile >"$TMP/rec.out" 2>&1
[ -s "$TMP/gpuburst.prom" ] || fail "reconcile wrote no $TMP/gpuburst.prom: $(cat "$TMP/rec.out")"
"$PROMTOOL" check metrics <"$TMP/gpuburst.prom" >"$TMP/promtool.out" 2>&1 ||
	fail "promtool check metrics: $(cat "$TMP/promtool.out")"
http GET "http://127.0.0.1:$MPORT/metrics" | sed 1,2d | "$PROMTOOL" check metrics >"$TMP/promtool.out" 2>&1 ||
	fail "promtool check metrics (endpoint): $(cat "$TMP/promtool.out")"
ok "reconcile wrote metrics.textfile; promtool accepts it and the endpoint's exposition"

CALLS=$(sql "SELECT count(*) FROM attempts")
ICE=$(sql "SELECT count(*) FROM attempts WHERE error_code = 'InsufficientInstanceCapacity' AND region = 'ap-southeast-1'")
[ "$ICE" -ge 1 ] || fail "no refusal in Singapore: $(sql 'SELECT region, state, error_code FROM attempts')"
# Prometheus has the state after the burst once the calls agree
wait_for 30 "Prometheus sees $CALLS calls" \
	'[ "$(value "sum(gpuburst_run_instances_calls_total)")" = "$CALLS" ]'

# --- every query of the dashboard runs, and those with a counterpart agree
"$PYTHON3" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["panels"]:
    for t in p["targets"]:
        print(p["title"] + "\t" + t["expr"])' "$DASH" >"$TMP/exprs"
[ "$(wc -l <"$TMP/exprs")" -ge 10 ] || fail "dashboard queries: $(cat "$TMP/exprs")"
expr_of() {	# expr_of TITLE: the dashboard's query of that panel
	awk -F '\t' -v t="$1" '$1 == t { print $2 }' "$TMP/exprs"
}
n=0
while IFS="$(printf '\t')" read -r title expr; do
	query "$expr" >"$TMP/q.json" || fail "query of '$title' failed: $expr"
	"$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "success", d' "$TMP/q.json" || fail "panel '$title': $expr: $(cat "$TMP/q.json")"
	n=$((n + 1))
done <"$TMP/exprs"
ok "all $n dashboard queries succeed in Prometheus"

q() { value "$(expr_of "$1")"; }
# agree WHAT GOT-CMD WANT: Prometheus's value equals the state file's within
# 10 s (it scrapes every second; a reconcile or the worker may write between)
agree() {
	_i=0
	while [ "$(eval "$2")" != "$3" ]; do
		_i=$((_i + 1))
		[ "$_i" -lt 20 ] || expect_eq "$1" "$(eval "$2")" "$3"
		sleep 0.5
	done
}
expect_eq "calls by outcome" "$(q 'RunInstances calls by outcome (total)')" "$CALLS"
query "$(expr_of 'Capacity refusals by region')" >"$TMP/q.json"
expect_eq "refusals in Singapore" "$("$PYTHON3" -c 'import json, sys
r = json.load(open(sys.argv[1]))["data"]["result"]
print(sum(int(float(x["value"][1])) for x in r if x["metric"].get("region") == "ap-southeast-1"))' "$TMP/q.json")" "$ICE"
expect_eq "refusals" "$(value "sum($(expr_of 'Capacity refusals by region'))")" \
	"$(sql "SELECT count(*) FROM attempts WHERE error_code = 'InsufficientInstanceCapacity'")"
agree "requests" "q 'Requests by state'" "$(sql 'SELECT count(*) FROM requests')"
DONE_EXPR=$(expr_of 'Requests by state' | sed 's/(gpuburst_requests)/(gpuburst_requests{kind="resume",state="done"})/')
agree "done resume requests" 'value "$DONE_EXPR"' \
	"$(sql "SELECT count(*) FROM requests WHERE kind = 'resume' AND state = 'done'")"
ALIVE=$(sql "SELECT count(*) FROM instances WHERE state IN ('pending', 'running', 'terminating')")
[ "$ALIVE" -ge 1 ] || fail "no instance alive (SuspendTime is 600 s): $(sql 'SELECT instance_id, state FROM instances')"
agree "instances alive" "q 'Instances alive by region, type, capacity' | sed 's/^none\$/0/'" "$ALIVE"
agree "nodes" "q 'Nodes by state'" 2
agree "nodes running" 'value "sum(gpuburst_nodes{state=\"running\"}) + sum(gpuburst_nodes{state=\"pending\"})"' "$ALIVE"
agree "pending approvals" "q 'Pending approvals'" 0
AGE=$(q 'Since the last full reconcile')
"$PYTHON3" -c "import sys; sys.exit(not (0 <= float('$AGE') < 120))" ||
	fail "since the last full reconcile: $AGE s"
expect_eq "time to capacity observed" \
	"$(value 'sum(gpuburst_time_to_capacity_seconds_count)')" \
	"$(sql "SELECT count(*) FROM requests WHERE kind = 'resume' AND result IN ('success', 'partial')")"
ok "Prometheus agrees with the state file: $CALLS calls ($ICE refused in Singapore), $ALIVE alive, requests, nodes, approvals, the reconcile $AGE s ago"
