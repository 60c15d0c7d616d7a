#!/bin/sh
# ctl-ask.sh - `gpuburstctl ask QUESTION` against llm-stub, the scripted
# LLM endpoint of the e2e tests (tests/unit/llmsrv's wire formats and
# checks) on 127.0.0.1, whose answer this test writes.  The state file has
# real rows: gb_mkstate's fixture and capacity memory (libstate and
# libpolicy calls, as the programs make them), a 300-node running request,
# and the requests gpuburst-resume queues from a Slurm resume file.
#  - without planner.llm.provider or planner.llm.model: CONFIG naming the
#    key, the endpoint never asked;
#  - the columns ask may read (ask-schema.awk over doc/state-schema.md) are
#    exactly those of a real state file;
#  - a good SELECT: the query and the explanation printed, the table equal to
#    what sqlite3 prints for the same query, --json's rows equal to Python's
#    sqlite3; no row: the header and "0 rows"; through the openai and the
#    anthropic wire formats; the prompt carries the question and the
#    documentation, no row;
#  - hostile answers refused with the reason, the query printed, nothing run
#    (DENIED): DELETE, UPDATE, DROP, ATTACH (no file made), PRAGMA, two
#    statements, load_extension(), sqlite_master, WITH RECURSIVE counting to
#    1e7; a 27-million-row cross join cut at --limit (and --json says so);
#    a count over a 8e9-row cross join stopped by --timeout (TIMEOUT);
#    invalid SQL (INVALID); answers that are not the JSON asked for (PARSE);
#  - the state file byte for byte the same after all of it.
. "$srcdir/ctl-lib.sh"

STUB="$GB_TOP_BUILDDIR/tests/integration/llm-stub"
RESUME="$GB_TOP_BUILDDIR/src/resume/gpuburst-resume"
SQLITE3=$(command -v sqlite3 2>/dev/null) || { echo "SKIP: the sqlite3 shell is needed (Debian: sqlite3)"; exit 77; }
"$PY" -c 'import sqlite3, fcntl' 2>/dev/null || { echo "SKIP: python3's sqlite3 is needed"; exit 77; }
DB="$tmp/state/state.db"
# the shell waits for a lock like the programs do (a worker may still be
# closing the file): without it, "database is locked" at once
STUB_PIDS=
HOLD=
cleanup() {
	for p in $STUB_PIDS $HOLD; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
ok() { n=$((n + 1)); echo "ok $n - $*"; }
# only 127.0.0.1 here: no proxy from the environment
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY

# ---- the state file: real rows
mkdir -p "$tmp/state"
"$MK" "$DB" fixture >"$tmp/ids" || { echo "FAIL: gb_mkstate fixture"; exit 1; }
"$MK" "$DB" memory >/dev/null || { echo "FAIL: gb_mkstate memory"; exit 1; }
"$MK" "$DB" running 'g5-[1-300]' >/dev/null || { echo "FAIL: gb_mkstate running"; exit 1; }
write_conf() {	# FILE [PLANNER YAML]
	{
		cat <<EOF
cluster_name: t
state_dir: $tmp/state
log: {file: $tmp/gb.log}
cloud:
  endpoint: http://127.0.0.1:1
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: not-used, imds: false}
EOF
		conf_mumbai 400
		cat <<EOF
${2:-}
EOF
	} >"$1"
}
write_conf "$tmp/plain.yaml"
# gpuburst-resume as slurmctld runs it, the worker lock held: the worker it
# starts exits at once and the requests stay queued
"$PY" -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close(); time.sleep(600)' "$tmp/state/worker.lock" "$tmp/locked" &
HOLD=$!
for _ in $(seq 1 100); do [ -f "$tmp/locked" ] && break; sleep 0.05; done
printf '%s' '{"jobs":[{"job_id":71,"nodes":"g5-[301-302]"},{"job_id":72,"nodes":"g5-303"}],"all_nodes":"g5-[301-304]"}' >"$tmp/rf"
env SLURM_CONF=/nonexistent SLURM_RESUME_FILE="$tmp/rf" \
	GPUBURST_WORKER="$GB_TOP_BUILDDIR/src/worker/gpuburst-worker" \
	"$RESUME" -c "$tmp/plain.yaml" 'g5-[301-304]' >"$tmp/out" 2>&1 ||
	{ echo "FAIL: gpuburst-resume: $(cat "$tmp/out")"; exit 1; }
# the lock is let go only once the detached worker has found it taken and
# left: a worker slowed past the release would take the requests
for _ in $(seq 1 300); do grep -q 'worker_exit rounds=0' "$tmp/gb.log" 2>/dev/null && break; sleep 0.1; done
grep -q 'worker_exit rounds=0' "$tmp/gb.log" ||
	{ echo "FAIL: the worker gpuburst-resume started did not leave in 30 s: $(tail -3 "$tmp/gb.log")"; exit 1; }
kill "$HOLD" 2>/dev/null && wait "$HOLD" 2>/dev/null
HOLD=
[ "$("$SQLITE3" -readonly -cmd '.timeout 10000' "$DB" "SELECT count(*) FROM requests WHERE job_id IN (71, 72) AND state = 'queued'")" = 2 ] ||
	bad "gpuburst-resume queued no requests"

# ---- llm-stub: openai (and anthropic below), a bearer key
printf 'sk-ask-test-key\n' >"$tmp/key"
chmod 600 "$tmp/key"
start_stub() {	# NAME PROVIDER: sets URL
	"$STUB" --provider "$2" --model ask-model --key-file "$tmp/key" \
		--plan-file "$tmp/$1.answer" --log "$tmp/$1.log" \
		--url-file "$tmp/$1.url" --pid-file "$tmp/$1.pid" 2>"$tmp/$1.err" &
	STUB_PIDS="$STUB_PIDS $!"
	for _ in $(seq 1 100); do [ -s "$tmp/$1.pid" ] && break; sleep 0.05; done
	[ -s "$tmp/$1.pid" ] || { echo "FAIL: llm-stub did not start: $(cat "$tmp/$1.err")"; exit 1; }
	URL=$(cat "$tmp/$1.url")
}
start_stub openai openai
write_conf "$tmp/gb.yaml" "planner:
  kind: heuristic
  llm: {provider: openai, endpoint: $URL, model: ask-model, api_key_file: $tmp/key, timeout: 10s}"
C="$tmp/gb.yaml"
ctl() { env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/no-slurm.conf" "$CTL" -c "$C" "$@"; }
answer() {	# SQL [EXPLANATION] [STUB]: what the model answers next
	"$PY" -c 'import json, sys; print(json.dumps({"sql": sys.argv[1], "explanation": sys.argv[2]}))' \
		"$1" "${2:-The rows asked for.}" >"$tmp/${3:-openai}.answer.tmp"
	mv "$tmp/${3:-openai}.answer.tmp" "$tmp/${3:-openai}.answer"
}
raw_answer() {	# TEXT: the model's whole answer text
	printf '%s' "$1" >"$tmp/openai.answer.tmp"
	mv "$tmp/openai.answer.tmp" "$tmp/openai.answer"
}
requests() { [ -f "$tmp/openai.log" ] && wc -l <"$tmp/openai.log" || echo 0; }
run() {	# WANT_RC ARGS...
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || bad "gpuburstctl $*: exit $rc, want $want: $(head -3 "$tmp/err")"
}
# the state file as it is now: its bytes and every table's row count
snapshot() {
	{
		sha256sum "$DB" "$DB-wal" | cut -d' ' -f1
		"$SQLITE3" -readonly -cmd '.timeout 10000' "$DB" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name" |
		while read -r t; do
			echo "$t $("$SQLITE3" -readonly -cmd '.timeout 10000' "$DB" "SELECT count(*) FROM \"$t\"")"
		done
	} >"$1"
}
snapshot "$tmp/before"

# ---- no LLM configured: CONFIG (3) naming the key, nobody asked
C="$tmp/plain.yaml"
run 3 ask how many requests are there
grep -q 'ask: no LLM endpoint is configured: planner.llm.provider is not set in' "$tmp/err" ||
	bad "no provider: $(cat "$tmp/err")"
write_conf "$tmp/nomodel.yaml" "planner:
  llm: {provider: openai, endpoint: $URL}"
C="$tmp/nomodel.yaml"
run 3 ask how many requests are there
grep -q 'ask: planner.llm.model is not set in' "$tmp/err" || bad "no model: $(cat "$tmp/err")"
C="$tmp/plain.yaml"
run 3 --json ask how many
"$PY" - "$tmp/out" <<'PY' || bad "no provider --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(d) == ["error", "schema"] and d["error"]["code"] == "CONFIG", d
assert "planner.llm.provider" in d["error"]["message"], d
PY
[ "$(requests)" = 0 ] || bad "the endpoint was asked without a configuration"
C="$tmp/gb.yaml"
ok "no planner.llm.provider or model: CONFIG (3) naming the key, the endpoint not asked"

# ---- what ask may read is exactly the schema of a real state file
awk -v out=columns -f "$GB_TOP_SRCDIR/src/gpuburstctl/ask-schema.awk" \
	"$GB_TOP_SRCDIR/doc/state-schema.md" | sort >"$tmp/doc-columns"
"$SQLITE3" -readonly -cmd '.timeout 10000' "$DB" "SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
	WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY 1" | sort >"$tmp/db-columns"
cmp -s "$tmp/doc-columns" "$tmp/db-columns" ||
	bad "doc/state-schema.md and the schema differ (< documented, > in the file): $(diff "$tmp/doc-columns" "$tmp/db-columns")"
ok "doc/state-schema.md documents every column of the schema and no other ($(wc -l <"$tmp/db-columns") columns)"

# ---- a good SELECT: the table is what sqlite3 prints for it
Q1="SELECT r.state, r.kind, r.nodeset, count(*) AS n, sum(r.node_count) AS nodes,
       max(r.job_id) AS last_job, round(avg(r.created_at), 3) AS created
FROM requests r GROUP BY r.state, r.kind, r.nodeset ORDER BY r.state, r.kind"
# compare_table FILE SQL: the table of ask's output FILE equals sqlite3's
compare_table() {
	"$SQLITE3" -readonly -cmd '.timeout 10000' -header -separator '|' -nullvalue - "$DB" "$2" >"$tmp/want" ||
		{ bad "sqlite3 could not run: $2"; return; }
	"$PY" - "$1" "$tmp/want" <<'PY' || bad "the table differs from sqlite3's: $(cat "$1")"
import re, sys
out = open(sys.argv[1]).read().split("\n")
want = [l.split("|") for l in open(sys.argv[2]).read().splitlines()]
want = [[c if c != "" else "-" for c in row] for row in want]
# the table: after the first blank line, up to the next one
start = out.index("") + 1
table = out[start:out.index("", start)]
got = [re.split(r" {2,}", l.strip()) for l in table]
assert got == want, "\n got %r\nwant %r" % (got, want)
PY
}
answer "$Q1" "Requests per state, kind and nodeset, with their nodes."
run 0 ask how many requests are in each state, and how many nodes
grep -q "^Query:$" "$tmp/out" && grep -q "^  FROM requests r GROUP BY r.state, r.kind, r.nodeset ORDER BY r.state, r.kind$" "$tmp/out" ||
	bad "the query is not printed: $(cat "$tmp/out")"
grep -q '^Explanation: Requests per state, kind and nodeset, with their nodes\.$' "$tmp/out" ||
	bad "no explanation: $(cat "$tmp/out")"
compare_table "$tmp/out" "$Q1"
rows=$("$SQLITE3" -readonly -cmd '.timeout 10000' "$DB" "SELECT count(*) FROM ($Q1)")
tail -1 "$tmp/out" | grep -qx "$rows rows" || bad "row count line: $(tail -1 "$tmp/out"), want $rows rows"
[ -s "$tmp/err" ] && bad "stderr: $(cat "$tmp/err")"
ok "a good SELECT: the query, the explanation, the table as sqlite3 prints it, $rows rows"

# --json: typed rows as Python's sqlite3 reads them
run 0 --json ask how many requests are in each state
"$PY" - "$tmp/out" "$DB" "$Q1" <<'PY' || bad "ask --json: $(head -c 2000 "$tmp/out")"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True)
cur = db.execute(sys.argv[3])
want = [list(r) for r in cur.fetchall()]
assert d["schema"] == "gpuburstctl/1" and "error" not in d, d
assert d["sql"] == sys.argv[3], d["sql"]
assert d["explanation"].startswith("Requests per state"), d
assert d["columns"] == [c[0] for c in cur.description], d["columns"]
assert d["rows"] == want, "\n got %r\nwant %r" % (d["rows"], want)
assert d["row_count"] == len(want) and d["cut"] is False and d["limit"] == 1000, d
assert d["planner"] == "llm:openai" and d["model"] == "ask-model", d
assert d["question"] == "how many requests are in each state", d
PY
ok "--json: columns, typed rows equal to Python's sqlite3, row_count, cut false"

# a join with times, NULLs and the capacity memory
Q2="SELECT i.instance_id, i.region, i.az, i.state, i.capacity, r.kind,
       datetime(i.launched_at, 'unixepoch') AS launched, c.ice
FROM instances i JOIN requests r ON r.id = i.request_id
LEFT JOIN capacity_stats c ON c.region = i.region AND c.az = i.az
  AND c.instance_type = i.instance_type AND c.capacity = i.capacity
ORDER BY i.instance_id"
answer "$Q2"
run 0 ask which instances were launched, and for what
compare_table "$tmp/out" "$Q2"
ok "a join with times, NULL cells and capacity memory: as sqlite3 prints it"

# the prompt: the question and the documentation, never a row
"$PY" - "$tmp/openai.log" "$(sed -n 1p "$tmp/ids" | cut -d' ' -f2)" <<'PY' || bad "the requests to the model"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert reqs, "no request"
for r in reqs:
    assert r["problem"] is None, r["problem"]
    assert r["path"] == "/v1/chat/completions", r["path"]
    b = r["body"]
    system, user = b["messages"][0]["content"], b["messages"][1]["content"]
    assert b["response_format"]["json_schema"]["name"] == "submit_query", b["response_format"]
    assert "### `requests`: the durable queue" in system and "### `spot_prices_fetched`" in system
    assert "load_extension" not in system and "datetime" in system
    assert sys.argv[2] not in system + user, "a request id of the file went to the model"
    assert "i-0000000000000000" not in system + user, "an instance id went to the model"
assert reqs[-1]["body"]["messages"][1]["content"] == "which instances were launched, and for what"
PY
ok "every request well-formed for openai (bearer key, schema submit_query); the prompt has the documentation and the question, no row"

# no row: the column names all the same
answer "SELECT id, reason FROM requests WHERE state = 'cancelled'"
run 0 ask which requests were cancelled
sed -n '/^$/,$p' "$tmp/out" | grep -v '^$' >"$tmp/got"
printf 'id  reason\n0 rows\n' | cmp -s - "$tmp/got" || bad "no rows: $(cat "$tmp/out")"
ok "no rows: the header and '0 rows'"

# the anthropic wire format: the forced tool submit_query
start_stub anthropic anthropic
write_conf "$tmp/anthropic.yaml" "planner:
  llm: {provider: anthropic, endpoint: $URL, model: ask-model, api_key_file: $tmp/key}"
answer "$Q1" "Per state." anthropic
C="$tmp/anthropic.yaml"
run 0 ask how many requests are in each state
compare_table "$tmp/out" "$Q1"
C="$tmp/gb.yaml"
"$PY" - "$tmp/anthropic.log" <<'PY' || bad "anthropic requests: $(cat "$tmp/anthropic.log")"
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert len(reqs) == 1 and reqs[0]["problem"] is None, reqs
b = reqs[0]["body"]
assert b["tools"][0]["name"] == "submit_query" and b["tool_choice"]["name"] == "submit_query", b
PY
ok "the anthropic wire format: the tool submit_query forced, the same table"

# ---- hostile answers: refused with the reason, the query printed, nothing run
refused() {	# WANT_RC MESSAGE SQL
	answer "$3" "Trust me."
	run "$1" ask please tidy up the state file
	grep -qF -- "$2" "$tmp/err" || bad "answer $3: want '$2' on stderr, got: $(cat "$tmp/err")"
	grep -q '^Query:$' "$tmp/out" || bad "answer $3: the query was not printed"
	grep -Eq '^[0-9]+ rows?' "$tmp/out" && bad "answer $3: rows were printed: $(cat "$tmp/out")"
	snapshot "$tmp/after"
	cmp -s "$tmp/before" "$tmp/after" || bad "answer $3 changed the state file: $(diff "$tmp/before" "$tmp/after")"
	ok "refused ($1): $3"
}
refused 27 "ask: refused: the query writes (DELETE FROM requests); nothing was run" \
	"DELETE FROM requests"
refused 27 "refused: the query writes (UPDATE approvals SET state)" \
	"UPDATE approvals SET state = 'approved' WHERE state = 'pending'"
refused 27 "refused: the query changes the schema (DELETE FROM sqlite_master)" "DROP TABLE instances"
refused 27 "refused: the query attaches a database (ATTACH $tmp/other.db)" \
	"ATTACH DATABASE '$tmp/other.db' AS other"
[ -e "$tmp/other.db" ] && bad "ATTACH created $tmp/other.db"
refused 27 "refused: the query is a PRAGMA (PRAGMA journal_mode = DELETE)" "PRAGMA journal_mode = DELETE"
refused 27 "refused: the query is a PRAGMA (PRAGMA user_version)" "PRAGMA user_version"
refused 27 "refused: the query is more than one statement (then: DELETE FROM events); nothing was run" \
	"SELECT id FROM requests; DELETE FROM events"
refused 27 "refused: the query calls load_extension(), which is not one of the functions allowed" \
	"SELECT load_extension('/tmp/evil.so')"
refused 27 "refused: the query reads sqlite_master.name, which the state file's documentation does not describe" \
	"SELECT name, sql FROM sqlite_master"
refused 27 "refused: the query is a recursive common table expression (WITH RECURSIVE)" \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT count(*) FROM c"
refused 10 "ask: the query is not valid SQLite: no such table: jobs; nothing was run" \
	"SELECT * FROM jobs"

# ---- a 27-million-row cross join: cut at the row limit
JOIN="SELECT a.node, b.node AS node2, c.node AS node3 FROM request_nodes a, request_nodes b, request_nodes c"
answer "$JOIN"
run 0 ask every triple of nodes
tail -1 "$tmp/out" | grep -qx '1000 rows shown: output cut, the query returns more (--limit 1000)' ||
	bad "cross join: $(tail -2 "$tmp/out")"
[ "$(sed -n '/^node  *node2  *node3$/,/^$/p' "$tmp/out" | grep -c .)" = 1001 ] || bad "cross join: not 1000 rows"
run 0 --json ask --limit 5 every triple of nodes
"$PY" - "$tmp/out" <<'PY' || bad "cross join --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cut"] is True and d["row_count"] == 5 and len(d["rows"]) == 5 and d["limit"] == 5, d
assert "error" not in d, d
PY
snapshot "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" || bad "the cross join changed the state file"
ok "a 27-million-row cross join: 1000 rows and 'output cut' (--json cut true; --limit 5)"

# ---- counting an 8e9-row cross join: stopped by the time limit
answer "SELECT count(*) AS n FROM request_nodes a, request_nodes b, request_nodes c, request_nodes d"
t0=$(date +%s)
run 13 ask --timeout 1 how many quadruples of nodes are there
t1=$(date +%s)
grep -qxF 'gpuburstctl: ask: stopped: the query ran longer than --timeout 1 s (after 0 rows)' "$tmp/err" ||
	bad "time limit: $(cat "$tmp/err")"
grep -q '^0 rows before the time limit (--timeout 1 s) stopped the query$' "$tmp/out" ||
	bad "time limit stdout: $(cat "$tmp/out")"
[ $((t1 - t0)) -le 6 ] || bad "the time limit took $((t1 - t0)) s"
run 13 --json ask --timeout 0.5s how many quadruples
"$PY" - "$tmp/out" <<'PY' || bad "time limit --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["error"]["code"] == "TIMEOUT" and d["error"]["exit"] == 13, d
assert "stopped" in d["error"]["message"] and d["columns"] == ["n"] and d["rows"] == [], d
assert d["timeout"] == 0.5, d
PY
snapshot "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" || bad "the count changed the state file"
ok "counting an 8e9-row cross join: stopped at --timeout (TIMEOUT, 13) within $((t1 - t0)) s"

# ---- answers that are not the JSON asked for: PARSE (11), naming what
not_json() {	# MESSAGE TEXT
	raw_answer "$2"
	run 11 ask how many requests
	grep -qF -- "$1" "$tmp/err" || bad "answer '$2': want '$1', got: $(cat "$tmp/err")"
	grep -q '^Query:' "$tmp/out" && bad "answer '$2': a query was printed"
	ok "not the JSON asked for (11): $2"
}
not_json "ask: the model's answer is not the JSON asked for: malformed answer: message content: line 1 column" \
	"Sure! Here is the query: SELECT count(*) FROM requests"
not_json 'member "sql" is missing' '{"query": "SELECT 1", "explanation": "x"}'
not_json 'it has a member "rows"' '{"sql": "SELECT id FROM requests", "explanation": "x", "rows": []}'
not_json '"sql" is a number, not a string' '{"sql": 1, "explanation": "x"}'
not_json '"sql" is empty' '{"sql": " ; ", "explanation": "x"}'
not_json 'the answer is an array, not a JSON object' '["SELECT 1"]'

# ---- no state file: NOTFOUND (8) before the model is asked
before=$(requests)
write_conf "$tmp/empty.yaml" "planner:
  llm: {provider: openai, endpoint: $URL, model: ask-model, api_key_file: $tmp/key}"
sed -i "s|state_dir: $tmp/state|state_dir: $tmp/nostate|" "$tmp/empty.yaml"
C="$tmp/empty.yaml"
run 8 ask how many requests
grep -q "ask: no state file yet ($tmp/nostate/state.db)" "$tmp/err" || bad "no state file: $(cat "$tmp/err")"
[ -e "$tmp/nostate" ] && bad "ask created the state directory"
[ "$(requests)" = "$before" ] || bad "the model was asked without a state file"
C="$tmp/gb.yaml"
ok "no state file: NOTFOUND (8), nothing created, the model not asked"

# ---- usage
usage() {	# MESSAGE ARGS...
	msg=$1; shift
	run 2 "$@"
	grep -qF -- "$msg" "$tmp/err" || bad "gpuburstctl $*: want '$msg', got: $(cat "$tmp/err")"
}
usage 'no question' ask
usage 'invalid --limit "0"' ask --limit 0 how many
usage 'invalid --timeout "forever"' ask --timeout forever how many
usage 'the question is longer than 2000 bytes' ask "$(head -c 2100 /dev/zero | tr '\0' x)"
ok "usage errors (2): no question, --limit, --timeout, a question too long"

snapshot "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" || bad "the state file changed: $(diff "$tmp/before" "$tmp/after")"
grep -q 'ask rows=.* outcome=DENIED sql="DELETE FROM requests"' "$tmp/gb.log" || bad "no ask log line: $(grep ask "$tmp/gb.log" | head -3)"
ok "the state file is byte for byte as before; each query logged"
echo "ctl-ask: $n checks"
exit $fail
