#!/bin/sh
# ctl-cli.sh - gpuburstctl's read-only commands (human and --json) on a
# state file built by gb_mkstate through libstate and libpolicy, approve
# and deny with their authorization (root, a non-administrator, an admin
# user, an admin group), late approvals, usage errors and exit codes; every
# --json output is one document with "schema", a failure with --json one
# with "error" and the exit status it has without --json; times to the
# millisecond.
# No Slurm here: deny exits 21 (decision recorded, nodes not set DOWN),
# which is itself documented behaviour; the end-to-end tests do Slurm.
. "$srcdir/ctl-lib.sh"

write_conf() {	# FILE [EXTRA YAML]
	{
		cat <<EOF
cluster_name: t
environment: prod
state_dir: $tmp/state
log: {file: $tmp/log/gb.log}
EOF
		conf_mumbai 40
		cat <<EOF
  - {name: g6, nodes: "g6-[1-40]", instance_type: g6.xlarge, home_region: ap-southeast-1}
${2:-}
EOF
	} >"$1"
}
mkdir -p "$tmp/log"
chmod 777 "$tmp/log"
write_conf "$tmp/gb.yaml"
C="$tmp/gb.yaml"
ctl() { env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/no-slurm.conf" "$CTL" -c "$C" "$@"; }
py() { "$PY" - "$@"; }
aligned() {	# FILE RIGHT...: cells start under their header (end, RIGHT ones)
	py "$@" <<'PY'
import re, sys
lines = [l.rstrip("\n") for l in open(sys.argv[1])]
rows = [l for l in lines[1:] if not re.match(r"\d+ instances?,|the newest ", l)]
spans = lambda l: [(m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", l)]
head = spans(lines[0])
assert rows, lines
for r in rows:
    cells = spans(r)
    assert len(cells) == len(head), (lines[0], r)
    for name, h, c in zip(lines[0].split(), head, cells):
        assert (c[1] == h[1]) if name in sys.argv[2:] else (c[0] == h[0]), (name, lines[0], r)
PY
}
"$CTL" --list-exit-codes >"$tmp/codes"
# --json: stdout is one JSON object with "schema"; after a failure it has
# "error": the code's name, the exit status, the message (gpuburstctl(8),
# JSON OUTPUT)
json_doc() {	# ARGS...: checks $tmp/out against $rc
	py "$tmp/out" "$rc" "$tmp/codes" <<'PY' || bad "gpuburstctl $*: not the --json document: $(head -c 400 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))    # one document: anything after it fails
rc = int(sys.argv[2])
names = {int(l.split()[0]): l.split()[1] for l in open(sys.argv[3])}
assert isinstance(d, dict) and d["schema"] == "gpuburstctl/1", d
if rc == 0:
    assert "error" not in d, d
else:
    e = d["error"]
    assert set(e) == {"code", "exit", "message"} and e["code"] == names[rc], e
    assert e["exit"] == rc and isinstance(e["message"], str) and e["message"], e
PY
}
run() {	# WANT_RC ARGS...: runs, checks the exit status (and a --json document)
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || bad "gpuburstctl $*: exit $rc, want $want: $(head -3 "$tmp/err")"
	for a in "$@"; do
		[ "$a" = --json ] && { json_doc "$@"; break; }
	done
	ok
}

# ---- an absent state file: empty listings, exit 0
run 0 requests
grep -q 'no requests (no state file yet)' "$tmp/out" || bad "empty requests: $(cat "$tmp/out")"
run 0 --json approvals
py "$tmp/out" <<'PY' || bad "empty approvals json"
import json, sys
assert json.load(open(sys.argv[1])) == {"approvals": [], "schema": "gpuburstctl/1"}
PY
run 8 requests show 0123456789abcdef
run 8 --json requests show 0123456789abcdef
py "$tmp/out" <<'PY' || bad "requests show --json of a missing request: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"schema", "error"}, d
assert d["error"]["message"] == "no request 0123456789abcdef (no state file yet)", d
PY
grep -q '^gpuburstctl: no request 0123456789abcdef' "$tmp/err" || bad "--json: the message left stderr"
# a configuration error: the same exit status with and without --json
printf 'cluster_name: t\nfrob: 1\n' >"$tmp/bad.yaml"
run 3 -c "$tmp/bad.yaml" requests
cp "$tmp/err" "$tmp/err.human"
run 3 -c "$tmp/bad.yaml" --json requests
cmp -s "$tmp/err" "$tmp/err.human" || bad "--json changed stderr: $(cat "$tmp/err")"
py "$tmp/out" "$tmp/bad.yaml" <<'PY' || bad "config error --json: $(cat "$tmp/out")"
import json, sys
e = json.load(open(sys.argv[1]))["error"]
assert e["code"] == "CONFIG" and e["message"].startswith(sys.argv[2] + ":2:1: unknown key 'frob'"), e
PY

# ---- the fixture
"$MK" "$tmp/state/state.db" fixture >"$tmp/ids" || { echo "FAIL: gb_mkstate"; exit 1; }
rid() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/ids"; }
DONE=$(rid done) PEND=$(rid pending) DENIED=$(rid denied) SUSP=$(rid suspend)

run 0 requests
for x in "$DONE" "$PEND" "$DENIED" "$SUSP"; do
	grep -q "^$x " "$tmp/out" || bad "requests lacks $x"
done
head -1 "$tmp/out" | grep -q '^ID  *KIND  *STATE  *JOB  *NODESET  *N  *NODES  *CREATED  *RESULT$' ||
	bad "requests header: $(head -1 "$tmp/out")"
run 0 requests --json --state pending_approval
py "$tmp/out" "$PEND" <<'PY' || bad "requests --state json"
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["id"] for r in d["requests"]] == [sys.argv[2]], d
r = d["requests"][0]
assert r["state"] == "pending_approval" and r["job_id"] == 4712 and r["node_count"] == 12
assert r["nodes"] == "g5-[5-16]" and r["created_at"].endswith("Z") and r["result"] == "none"
PY
run 0 --json requests --kind suspend
py "$tmp/out" "$SUSP" <<'PY' || bad "requests --kind json"
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["id"] for r in d["requests"]] == [sys.argv[2]] and d["requests"][0]["job_id"] is None
PY
run 0 --json requests --node g5-7 --since 1h --limit 10
py "$tmp/out" "$PEND" <<'PY' || bad "requests --node json"
import json, sys
assert [r["id"] for r in json.load(open(sys.argv[1]))["requests"]] == [sys.argv[2]]
PY
run 0 --json requests --since 2000-01-01
py "$tmp/out" <<'PY' || bad "requests --since date"
import json, sys
assert len(json.load(open(sys.argv[1]))["requests"]) == 4
PY
cp "$tmp/out" "$tmp/all.json"
run 0 --json requests --limit 2
py "$tmp/out" "$tmp/all.json" <<'PY' || bad "requests --limit: not the newest two"
import json, sys
got = [r["id"] for r in json.load(open(sys.argv[1]))["requests"]]
assert got == [r["id"] for r in json.load(open(sys.argv[2]))["requests"]][-2:], got
PY

# the replay
run 0 requests show "$DONE"
for want in "^Request $DONE" "state  *done, result success" "^Plans" \
	    "v1  llm:openai  rejected" "step 1: ap-east-1 is not in the allowed regions" \
	    "rationale: Hong Kong is closest to Singapore" "v2  heuristic  fallback" \
	    "rationale: nearest regions of the group first" \
	    "1\. ap-south-1/ap-south-1a subnet-1 batch 4 expect 2: nearest" "^Attempts" \
	    "0  ap-south-1  *ap-south-1a  *subnet-1  *on-demand  *1-4  *2  ok" "^Instances" "^Slurm updates" \
	    "slurm_update  nodes=g5-\[1-4\] addr=set" "^Timeline" "event enqueue" "^Result" \
	    "success: 4 of 4 nodes launched"; do
	grep -q -- "$want" "$tmp/out" || bad "requests show lacks '$want'"
done
run 0 --json requests show "$PEND"
py "$tmp/out" "$PEND" <<'PY' || bad "requests show json"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"schema", "request", "approval", "plans", "attempts", "instances", "extras", "events", "timeline"}, d.keys()
assert d["extras"] == 0, d["extras"]
assert d["request"]["id"] == sys.argv[2]
a = d["approval"]
assert a["state"] == "pending" and a["decided_by"] is None and a["expires_at"].endswith("Z"), a
assert [e["what"] for e in d["timeline"]] == ["event enqueue"], d["timeline"]
PY
run 0 --json requests show "$DONE"
py "$tmp/out" <<'PY' || bad "requests show done json"
import json, sys
d = json.load(open(sys.argv[1]))
assert [(p["planner"], p["status"]) for p in d["plans"]] == [("llm:openai", "rejected"), ("heuristic", "fallback")]
assert d["plans"][0]["rationale"] == "Hong Kong is closest to Singapore"
assert d["plans"][1]["body"]["steps"][0]["region"] == "ap-south-1"
assert [(a["asked"], a["got"], a["state"]) for a in d["attempts"]] == [(4, 2, "ok"), (2, 2, "ok")]
assert [(a["capacity"], a["capacity_target"]) for a in d["attempts"]] == \
    [("on-demand", None), ("reservation", "cr-0123456789abcdef0")], d["attempts"]
assert len(d["instances"]) == 4 and d["approval"] is None
assert d["extras"] == sum(1 for i in d["instances"] if i["node"] is None), d["extras"]
assert d["request"]["input"] == {"job_id": 4711, "nodes": "g5-[1-4]"}
PY

# milliseconds: events 100 ms apart keep their order and show it
"$MK" "$tmp/state/state.db" events "$SUSP" 100 ms_first ms_second ms_third || bad "mkstate events"
run 0 --json requests show "$SUSP"
py "$tmp/out" <<'PY' || bad "events 100 ms apart (--json): $(cat "$tmp/out")"
import json, re, sys
from datetime import datetime, timezone
d = json.load(open(sys.argv[1]))
def t(s):
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", s), s
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
ev = [e for e in d["events"] if e["kind"].startswith("ms_")]
tl = [e for e in d["timeline"] if e["what"].startswith("event ms_")]
assert [e["kind"] for e in ev] == ["ms_first", "ms_second", "ms_third"], ev
assert [e["what"] for e in tl] == ["event ms_first", "event ms_second", "event ms_third"], tl
ts = [t(e["at"]) for e in tl]
assert all(0.09 <= b - a < 1.5 for a, b in zip(ts, ts[1:])), ts
assert [e["at"] for e in ev] == [e["at"] for e in tl]
t(d["request"]["created_at"])
PY
run 0 requests show "$SUSP"
grep 'event ms_' "$tmp/out" >"$tmp/ms"
py "$tmp/ms" <<'PY' || bad "events 100 ms apart (replay): $(cat "$tmp/ms")"
import re, sys
rows = [l.split() for l in open(sys.argv[1])]
assert [r[3] for r in rows] == ["ms_first", "ms_second", "ms_third"], rows
assert all(re.fullmatch(r"\S+T\d\d:\d\d:\d\d\.\d{3}Z", r[0]) for r in rows), rows
assert [r[0] for r in rows] == sorted(set(r[0] for r in rows)), rows
offs = [float(r[1].rstrip("s")) for r in rows]
assert all(0.09 <= b - a < 1.5 for a, b in zip(offs, offs[1:])), offs
PY
# the list keeps whole seconds; --since takes what --json prints
run 0 requests
aligned "$tmp/out" JOB N || bad "requests: columns not aligned: $(cat "$tmp/out")"
run 0 requests --kind suspend
grep -Eq ' [0-9-]+T[0-9:]{8}Z  *-$' "$tmp/out" || bad "requests list time: $(cat "$tmp/out")"
since=$(py "$tmp/all.json" <<'PY'
import json, sys
print(min(r["created_at"] for r in json.load(open(sys.argv[1]))["requests"]))
PY
)
run 0 --json requests --since "$since"
py "$tmp/out" <<'PY' || bad "requests --since $since"
import json, sys
assert len(json.load(open(sys.argv[1]))["requests"]) == 4
PY

# instances: durations in seconds and human form
run 0 instances
grep -q '4 instances, ' "$tmp/out" || bad "instances total line"
grep -q 'g5-4  *i-00000000000000004 .* terminated .* 18[0-9][0-9]  *30m 0[0-9]s' "$tmp/out" ||
	bad "instances: terminated g5-4 ran ~30m: $(grep g5-4 "$tmp/out")"
# a page: --limit N shows the newest N (oldest first) and says how many
# match in all; --all and a limit large enough show every one
run 0 instances --all
grep -q '^4 instances, ' "$tmp/out" || bad "instances --all: $(tail -n 1 "$tmp/out")"
cp "$tmp/out" "$tmp/inst-all"
run 0 instances
# the same rows (running times move on: the first seven columns)
[ "$(sed '$d' "$tmp/out" | cut -c1-100)" = "$(sed '$d' "$tmp/inst-all" | cut -c1-100)" ] ||
	bad "instances and --all differ on 4 records: $(diff "$tmp/out" "$tmp/inst-all")"
# streamed in two passes (widths, then rows): every column starts where
# its header does, in both listings
aligned "$tmp/inst-all" SECONDS || bad "instances --all: columns not aligned: $(cat "$tmp/inst-all")"
run 0 instances --limit 4
grep -q '^4 instances, ' "$tmp/out" || bad "instances --limit 4: $(tail -n 1 "$tmp/out")"
run 0 instances --limit 2
grep -q '^the newest 2 of 4 instances (--all lists every one), ' "$tmp/out" ||
	bad "instances --limit 2: $(tail -n 1 "$tmp/out")"
[ "$(grep -c ' i-0' "$tmp/out")" = 2 ] || bad "instances --limit 2: $(cat "$tmp/out")"
run 0 --json instances --all
all_ids=$(py "$tmp/out" <<'PY'
import json, sys
print(" ".join(i["instance_id"] for i in json.load(open(sys.argv[1]))["instances"]))
PY
)
run 0 --json instances --limit 2
got=$(py "$tmp/out" <<'PY'
import json, sys
print(" ".join(i["instance_id"] for i in json.load(open(sys.argv[1]))["instances"]))
PY
)
want=$(echo "$all_ids" | tr ' ' '\n' | tail -n 2 | tr '\n' ' ' | sed 's/ $//')
[ -n "$want" ] && [ "$got" = "$want" ] ||
	bad "instances --json --limit 2: '$got', want the newest two of '$all_ids', oldest first"
run 0 --json instances --alive --region ap-south-1
py "$tmp/out" <<'PY' || bad "instances json"
import json, sys
d = json.load(open(sys.argv[1]))
ins = d["instances"]
assert sorted(i["node"] for i in ins) == ["g5-1", "g5-2"], ins
for i in ins:
    assert i["state"] == "running" and i["terminated_at"] is None
    assert i["capacity"] == "on-demand" and i["capacity_target"] is None, i
    assert i["agent"] is None and i["noticed_at"] is None, i
    assert 3590 < i["ran_seconds"] < 3700 and i["ran"].startswith("1h 00m"), i
PY
run 0 --json instances --state terminated --node g5-4 --type g5.xlarge --request "$DONE"
py "$tmp/out" <<'PY' || bad "instances terminated json"
import json, sys
i, = json.load(open(sys.argv[1]))["instances"]
assert i["reason"] == "suspended" and 1795 < i["ran_seconds"] < 1900 and i["terminated_at"].endswith("Z")
assert i["capacity"] == "reservation" and i["capacity_target"] == "cr-0123456789abcdef0", i
PY

# capacity (the fixture's rows predate levels: the counters' estimate;
# ctl-capacity.sh has the rest)
run 0 capacity
grep -q 'ap-south-1  *ap-south-1a  *g5.xlarge  *on-demand  *?  *2  *-  *20[0-9-]*T[0-9:]*Z  *[0-9]*m [0-9]*s left  *written before levels were kept: got 2.0 over 1.0 dry-outs$' "$tmp/out" ||
	bad "capacity: $(cat "$tmp/out")"
run 0 --json capacity --region ap-northeast-1 --type g5.xlarge
py "$tmp/out" <<'PY' || bad "capacity json"
import json, sys
d = json.load(open(sys.argv[1]))
c, = d["capacity"]
assert c["region"] == "ap-northeast-1" and c["estimate"] is None and c["last_ice_at"] is None, c
assert c["capacity"] == "on-demand", c
assert c["estimate_basis"] == "counters" and c["fill_rate"] == 1.0 and c["counter_estimate"] is None, c
assert d["half_life"] == 3600 and d["quotas"] == [] and d["offerings"] == []
PY

# approvals
run 0 approvals
# no Slurm here: the job's user, account, ... are dashes
grep -q "^$PEND  *4712  *-  *-  *-  *-  *12  *-  *-  *-  *g5-\[5-16\]  *-  *12 nodes for job 4712 > prod threshold 10  *in [0-9]" "$tmp/out" ||
	bad "approvals: $(cat "$tmp/out")"
grep -q "$DENIED" "$tmp/out" && bad "approvals lists a decided one"
run 0 approvals --all
grep -q "$DENIED  *denied .*alice: not today" "$tmp/out" || bad "approvals --all: $(cat "$tmp/out")"
run 0 --json approvals --state denied
py "$tmp/out" "$DENIED" <<'PY' || bad "approvals json"
import json, sys
a, = json.load(open(sys.argv[1]))["approvals"]
assert a["request_id"] == sys.argv[2] and a["decided_by"] == "alice" and a["decided_uid"] == 1001
assert a["comment"] == "not today" and a["request"]["state"] == "denied"
PY

# config keys
run 0 config keys
grep -q '^policy.approval_timeout  *duration  *auto' "$tmp/out" || bad "config keys"
run 0 --json config keys

# ---- authorization: a non-administrator changes nothing (22)
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$tmp/no-slurm.conf" "$CTL" -c "$C" "$@"; }
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	as_nobody approve "$PEND" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 22 ] || bad "nobody approve: exit $rc"
	grep -q 'user nobody (uid [0-9]*) may not approve, deny or terminate' "$tmp/err" ||
		bad "nobody approve message: $(cat "$tmp/err")"
	as_nobody deny "$PEND" --reason x >/dev/null 2>&1
	[ $? -eq 22 ] || bad "nobody deny: not 22"
	ctl --json approvals >"$tmp/out"
	py "$tmp/out" "$PEND" <<'PY' || bad "state changed after a refusal"
import json, sys
a, = json.load(open(sys.argv[1]))["approvals"]
assert a["request_id"] == sys.argv[2] and a["state"] == "pending"
PY
	ok
else
	echo "note: not root or no setpriv: authorization as nobody not tested here"
fi

# ---- root approves: queued, recorded, logged
run 0 approve "$PEND" --comment "demo day"
grep -q "approved $PEND (nodes g5-\[5-16\]): queued" "$tmp/out" || bad "approve output: $(cat "$tmp/out")"
run 0 --json requests show "$PEND"
py "$tmp/out" <<'PY' || bad "approved request"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["request"]["state"] in ("queued", "running", "failed"), d["request"]["state"]
a = d["approval"]
assert a["state"] == "approved" and a["decided_by"] == "root" and a["decided_uid"] == 0
assert a["comment"] == "demo day" and a["decided_at"].endswith("Z")
assert any(e["kind"] == "approve" and e["detail"] == 'by=root uid=0 comment="demo day"' for e in d["events"])
PY
grep -q "approval_approved req=$PEND nodes=g5-\[5-16\] job=4712 by=root uid=0 comment=\"demo day\"" \
	"$tmp/log/gb.log" || bad "approve not logged: $(cat "$tmp/log/gb.log")"
run 7 approve "$PEND"
grep -q "is .*, not pending approval" "$tmp/err" || bad "second approve: $(cat "$tmp/err")"
run 7 --json approve "$PEND"
grep -q '"message": ".*is .*, not pending approval' "$tmp/out" || bad "second approve --json: $(cat "$tmp/out")"

# ---- deny a job split over two nodesets (decided together); no Slurm: 21
"$MK" "$tmp/state/state.db" pending "$C" 5001 600 g5 'g5-[20-25]' g6 'g6-[20-25]' >"$tmp/p" ||
	bad "mkstate pending"
J1=$(sed -n 1p "$tmp/p" | cut -d' ' -f1)
J2=$(sed -n 2p "$tmp/p" | cut -d' ' -f1)
[ "$(cut -d' ' -f2 "$tmp/p" | sort -u)" = pending_approval ] || bad "6 + 6 nodes of one job should both wait: $(cat "$tmp/p")"
run 2 deny "$J1"
grep -q 'deny needs --reason TEXT' "$tmp/err" || bad "deny without reason"
run 21 deny "$J1" --reason "not in the budget"
grep -q "denied $J1" "$tmp/out" && grep -q "denied $J2" "$tmp/out" || bad "deny both: $(cat "$tmp/out")"
grep -q 'Slurm reason: gpuburst: resume denied by root: not in the budget' "$tmp/out" ||
	bad "deny reason: $(cat "$tmp/out")"
run 0 --json requests show "$J2"
py "$tmp/out" <<'PY' || bad "denied sibling"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["request"]["state"] == "denied" and d["request"]["reason"] == "denied by root: not in the budget"
assert d["approval"]["state"] == "denied" and d["approval"]["comment"] == "not in the budget"
assert any(e["kind"] == "slurm_update" and "failed=6" in e["detail"] for e in d["events"]), d["events"]
PY

# ---- under the threshold: queued, nothing to approve
out=$("$MK" "$tmp/state/state.db" pending "$C" 5002 600 g5 'g5-[30-33]')
[ "${out#* }" = queued ] || bad "4 nodes should be queued: $out"
run 7 approve "${out% *}"

# ---- --json approve and deny: the decision document
out=$("$MK" "$tmp/state/state.db" pending "$C" 5004 600 g5 'g5-[40-51]')
JA=${out% *}
run 0 --json approve "$JA" --comment "json approve"
py "$tmp/out" "$JA" <<'PY' || bad "approve --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["decision"] == "approve" and d["by"] == "root" and d["uid"] == 0, d
assert d["comment"] == "json approve" and d["expired"] == [], d
assert d["requests"] == [{"id": sys.argv[2], "nodes": "g5-[40-51]"}], d["requests"]
assert d["slurm"]["nodes"] == 0 and d["slurm_reason"] is None, d
assert d["worker_started"] in (True, False), d
PY
out=$("$MK" "$tmp/state/state.db" pending "$C" 5005 600 g5 'g5-[52-63]')
JD=${out% *}
run 21 --json deny "$JD" --reason "json deny"
py "$tmp/out" "$JD" <<'PY' || bad "deny --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["decision"] == "deny" and d["comment"] == "json deny", d
assert d["requests"] == [{"id": sys.argv[2], "nodes": "g5-[52-63]"}], d["requests"]
assert d["slurm_reason"] == "gpuburst: resume denied by root: json deny", d
assert d["slurm"]["nodes"] == 12 and d["slurm"]["failed"] == 12 and d["slurm"]["error"], d
assert d["worker_started"] is None, d
# the decision is the document; the nodes left up are its error
assert d["error"]["code"] == "SLURM" and d["error"]["message"].startswith("12 of 12 nodes could not be set DOWN"), d
PY

# ---- a late approval expires the request (13)
out=$("$MK" "$tmp/state/state.db" pending "$C" 5003 1 g5 'g5-[26-38]')
LATE=${out% *}
out=$("$MK" "$tmp/state/state.db" pending "$C" 5006 1 g6 'g6-[26-38]')
LATE2=${out% *}
sleep 1.5
run 13 approve "$LATE"
grep -q "expired $LATE" "$tmp/out" || bad "late approve: $(cat "$tmp/out")"
grep -q 'expired at' "$tmp/err" || bad "late approve message: $(cat "$tmp/err")"
run 13 --json approve "$LATE2"
py "$tmp/out" "$LATE2" <<'PY' || bad "late approve --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["expired"] == [{"id": sys.argv[2], "nodes": "g6-[26-38]"}] and d["requests"] == [], d
assert d["error"]["code"] == "TIMEOUT" and "expired at" in d["error"]["message"], d
PY
run 0 --json approvals --state expired
py "$tmp/out" "$LATE" <<'PY' || bad "expired approval"
import json, sys
a = [a for a in json.load(open(sys.argv[1]))["approvals"] if a["request_id"] == sys.argv[2]]
assert len(a) == 1 and a[0]["decided_by"] == "gpuburst" and a[0]["request"]["state"] == "expired"
PY

# ---- configured administrators, as nobody (who then must own the state)
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chown -R nobody "$tmp/state"
	write_conf "$tmp/admin-user.yaml" "admins: {users: [alice, nobody]}"
	out=$("$MK" "$tmp/state/state.db" pending "$C" 5004 600 g5 'g5-[1-12]')
	A1=${out% *}
	chown -R nobody "$tmp/state"
	setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$tmp/no-slurm.conf" \
		"$CTL" -c "$tmp/admin-user.yaml" approve "$A1" --comment ok >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] || bad "admins.users nobody: exit $rc: $(cat "$tmp/err")"
	grp=$(id -gn nobody)
	write_conf "$tmp/admin-group.yaml" "admins: {group: $grp}"
	out=$("$MK" "$tmp/state/state.db" pending "$C" 5005 600 g6 'g6-[1-12]')
	A2=${out% *}
	chown -R nobody "$tmp/state"
	setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$tmp/no-slurm.conf" \
		"$CTL" -c "$tmp/admin-group.yaml" approve "$A2" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] || bad "admins.group $grp: exit $rc: $(cat "$tmp/err")"
	ctl --json approvals --state approved >"$tmp/out"
	py "$tmp/out" "$A1" "$A2" <<'PY' || bad "admin decisions recorded"
import json, sys
by = {a["request_id"]: (a["decided_by"], a["decided_uid"]) for a in json.load(open(sys.argv[1]))["approvals"]}
import pwd
nobody = pwd.getpwnam("nobody").pw_uid
assert by[sys.argv[2]] == ("nobody", nobody) and by[sys.argv[3]] == ("nobody", nobody), by
PY
	ok
fi

# ---- usage errors: exit 2 and a message naming the problem
usage() {	# WANT ARGS...: exit 2, WANT on stderr; the same with --json first
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || bad "gpuburstctl $*: exit $rc, want 2"
	grep -q -- "$want" "$tmp/err" || bad "gpuburstctl $*: stderr lacks '$want': $(cat "$tmp/err")"
	ctl --json "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || bad "gpuburstctl --json $*: exit $rc, want 2"
	grep -q -- "$want" "$tmp/err" || bad "gpuburstctl --json $*: stderr lacks '$want': $(cat "$tmp/err")"
	json_doc --json "$@"
	py "$tmp/out" "$want" <<'PY' || bad "gpuburstctl --json $*: message lacks '$want': $(cat "$tmp/out")"
import json, sys
assert sys.argv[2] in json.load(open(sys.argv[1]))["error"]["message"]
PY
	ok
}
usage 'invalid state "bogus"' requests --state bogus
usage 'invalid kind "x"' requests --kind x
usage 'invalid time "yesterday"' requests --since yesterday
usage 'invalid --limit "0"' requests --limit 0
usage 'invalid --limit "12abc"' requests --limit 12abc
usage 'invalid option "--frob"' requests --frob
usage 'missing argument for option "--state"' requests --state
usage 'unexpected argument "x"' requests x
usage 'invalid request id "ABCDEF0123456789"' requests show ABCDEF0123456789
usage 'which request?' requests show
usage 'invalid state "dead"' instances --state dead
usage 'invalid --limit "0": a whole number from 1 to 100000000' instances --limit 0
usage 'invalid --limit "2x": a whole number from 1 to 100000000' instances --limit 2x
usage '--all and --limit exclude each other' instances --all --limit 3
usage 'invalid request id "12"' instances --request 12
usage 'invalid state "maybe"' approvals --state maybe
usage 'which request?' approve
ctl why login-1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 8 ] && grep -q "why: 'login-1' is neither a job id nor a node of a nodeset: gpuburst does not own it" "$tmp/err" ||
	bad "why login-1: exit $rc: $(cat "$tmp/err")"
ctl --json metrics >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "the metrics are Prometheus text, not JSON: drop --json" "$tmp/err" ||
	bad "--json metrics: exit $rc: $(cat "$tmp/err")"
ok
usage 'about which job (its id) or node (its name)?' why
usage "job id '0' is not a Slurm job id" why 0
usage "job id '99999999999' is not a Slurm job id" why 99999999999
usage "unexpected argument 'x'" why 12 x
usage 'invalid request id "x"' approve x
usage 'unexpected argument "y"' approve 0123456789abcdef y
usage '--count N is required' plan --type g5.xlarge
usage 'invalid strategy "fast"' plan --type g5.xlarge --count 2 --strategy fast
usage 'invalid --count "-1"' plan --type g5.xlarge --count -1
usage 'invalid section "all"' slurm-conf --section all
usage '--sbindir must be an absolute path' slurm-conf --sbindir sbin
usage 'invalid --lab-ports "80"' slurm-conf --lab-ports 80
usage 'bad Slurm version "24.x" (want MAJOR.MINOR' slurm-conf --slurm-version 24.x
usage 'Slurm "21.08" is too old: gpuburst needs 22.05 or later' slurm-conf --slurm-version 21.08
usage 'invalid option "--bogus"' --bogus requests
usage 'unknown command "frob"' frob
# --json after the option that stops the parsing still asks for JSON
run 2 requests --frob --json
grep -q '"message": "invalid option \\"--frob\\""' "$tmp/out" || bad "requests --frob --json: $(cat "$tmp/out")"
run 2 --json
grep -q '"message": "no command' "$tmp/out" || bad "--json without a command: $(cat "$tmp/out")"
ctl requests --help >"$tmp/out" 2>&1 && grep -q '^Usage: gpuburstctl requests ' "$tmp/out" || bad "requests --help"
ok

# ---- reconcile: Slurm unreachable is a part not done (exit PARTIAL), not success
printf 'ClusterName=unreach\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nMessageTimeout=2\nAuthType=auth/none\n' >"$tmp/unreach.conf"
env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/unreach.conf" "$CTL" -c "$C" reconcile --cheap \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 29 ] || bad "reconcile with Slurm unreachable: exit $rc, want 29 (PARTIAL): $(cat "$tmp/out" "$tmp/err")"
grep -q '^slurm: nodes not read (node checks skipped): ' "$tmp/out" || bad "reconcile report: $(cat "$tmp/out")"
grep -q 'gpuburstctl: .*; slurm: ' "$tmp/err" || bad "reconcile error line: $(cat "$tmp/err")"
ok
env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/unreach.conf" "$CTL" -c "$C" --json reconcile --cheap \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 29 ] || bad "reconcile --json with Slurm unreachable: exit $rc, want 29"
json_doc reconcile --json
py "$tmp/out" <<'PY' || bad "reconcile --json report and error: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["slurm_error"] and d["cheap"] is True and isinstance(d["actions"], list), d
assert d["error"]["code"] == "PARTIAL" and "; slurm: " in d["error"]["message"], d
PY
ok

# ---- slurm-conf
run 0 slurm-conf --sbindir /opt/gb/sbin
grep -qx 'ResumeProgram=/opt/gb/sbin/gpuburst-resume' "$tmp/out" || bad "slurm-conf ResumeProgram"
grep -qx 'NodeName=g5-\[1-40\] CPUs=4 RealMemory=15564 Gres=gpu:a10g:1 Feature=a10g,g5.xlarge State=CLOUD' "$tmp/out" ||
	bad "slurm-conf NodeName: $(grep NodeName "$tmp/out")"
grep -qx 'PartitionName=gpuburst Nodes=gb_g5,gb_g6 MaxTime=INFINITE State=UP SuspendTime=600 SuspendTimeout=120 ResumeTimeout=1800' "$tmp/out" || bad "slurm-conf partition"
grep -qx 'NodeName=g6-\[1-40\] Name=gpu Type=l4 File=/dev/nvidia0' "$tmp/out" || bad "slurm-conf gres"
run 0 slurm-conf --lab-ports 21000 --section nodes
grep -qx 'NodeName=g6-\[1-40\] Port=\[21040-21079\] CPUs=1 RealMemory=500 Gres=gpu:l4:1 Feature=l4,g6.xlarge State=CLOUD' "$tmp/out" ||
	bad "slurm-conf --lab-ports: $(grep NodeName "$tmp/out")"
# lines only some releases take, for the release named (gb_slurm_release.h)
: >"$tmp/empty.conf"
release_lines() {	# VERSION: the release-dependent lines slurm-conf prints for it
	ctl slurm-conf --section power --slurm-version "$1" --merge "$tmp/empty.conf" 2>&1 |
		grep -E '^(CommunicationParameters|PrivateData|SchedulerParameters)=|^# ---- slurm.conf: power' | tr '\n' ';'
}
for case in \
	"22.05.8|# ---- slurm.conf: power saving (for Slurm 22.05) ----;CommunicationParameters=NoAddrCache;PrivateData=cloud;" \
	"23.02|# ---- slurm.conf: power saving (for Slurm 23.02) ----;CommunicationParameters=NoAddrCache;" \
	"24.11.5|# ---- slurm.conf: power saving (for Slurm 24.11) ----;" \
	"slurm 25.05.0|# ---- slurm.conf: power saving (for Slurm 25.05) ----;SchedulerParameters=requeue_on_resume_failure;" \
	"26.05|# ---- slurm.conf: power saving (for Slurm 26.05) ----;SchedulerParameters=requeue_on_resume_failure;"; do
	got=$(release_lines "${case%%|*}")
	[ "$got" = "${case#*|}" ] || bad "slurm-conf --slurm-version ${case%%|*}: '$got', want '${case#*|}'"
	ok
done
# power saving on the burst partitions only; nothing Slurm keeps one line
# of is emitted blind: without --merge only as what to add
run 0 slurm-conf --section power
grep -Eq '^(SuspendTime|SuspendTimeout|ResumeTimeout|SlurmctldParameters|TreeWidth|GresTypes|ReturnToService|SchedulerParameters|CommunicationParameters|PrivateData)=' "$tmp/out" &&
	bad "slurm-conf --section power has a global line to merge: $(grep -v '^#' "$tmp/out")"
grep -q '^# SlurmctldParameters: add idle_on_node_suspend,power_save_interval=5,power_save_min_interval=0 ' "$tmp/out" ||
	bad "slurm-conf: no SlurmctldParameters to merge"
ok
run 0 slurm-conf --section nodes --suspend-time 900 --resume-timeout 2400
grep -qx 'PartitionName=gpuburst Nodes=gb_g5,gb_g6 MaxTime=INFINITE State=UP SuspendTime=900 SuspendTimeout=120 ResumeTimeout=2400' "$tmp/out" ||
	bad "slurm-conf partition times: $(grep PartitionName "$tmp/out")"
# --merge: the site's options kept, gpuburst's added, defunct ones dropped,
# a key set twice warned of, the site's partitions excluded from a global SuspendTime
cat >"$tmp/site.conf" <<'EOF'
SlurmctldParameters=enable_configless,power_save_interval=10
SuspendTime=300
GresTypes=gpu
PartitionName=site Nodes=n1
CommunicationParameters=NoAddrCache
SlurmctldParameters=enable_configless,cloud_reg_addrs,power_save_interval=10
EOF
run 0 slurm-conf --section power --slurm-version 24.11 --merge "$tmp/site.conf"
for want in '^SlurmctldParameters=enable_configless,power_save_interval=10,idle_on_node_suspend,power_save_min_interval=0$' \
	    "^# WARNING: SlurmctldParameters: $tmp/site.conf:6 replaces $tmp/site.conf:1 " \
	    '^# GresTypes: yours (gpu) has what gpuburst needs: keep it$' \
	    '^#   (remove your CommunicationParameters line: nothing is left of it)$' \
	    '^SuspendExcParts=site$' '^TreeWidth=65533$' \
	    "^# ReturnToService: yours (Slurm's default, 0) stays"; do
	grep -q -- "$want" "$tmp/out" || bad "slurm-conf --merge lacks '$want': $(cat "$tmp/out")"
done
grep -q '^GresTypes=' "$tmp/out" && bad "slurm-conf --merge repeats GresTypes"
ok
run 8 slurm-conf --merge "$tmp/nonexistent.conf"
grep -q "^gpuburstctl: --merge: cannot open $tmp/nonexistent.conf: No such file or directory" "$tmp/err" ||
	bad "--merge of a missing file: $(cat "$tmp/err")"

run 0 --json slurm-conf --lab
py "$tmp/out" <<'PY' || bad "slurm-conf json"
import json, sys
d = json.load(open(sys.argv[1]))
assert "File=/dev/null" in d["gres_conf"] and "SuspendTime=5 SuspendTimeout=5 ResumeTimeout=60" in d["slurm_conf"]
PY

echo "ctl-cli: $n checks"
exit $fail
