#!/bin/sh
# ctl-capacity.sh - `gpuburstctl capacity` shows what the planners use, and
# `capacity forget` clears it:
#  - per pool the default strategy's estimate (a level measured when the
#    pool ran dry; a lower bound when it gave all it was asked; capped by
#    the region's quota room), the lower bound, the last capacity refusal
#    and the cool-down left, the cached offering (a pool not offered is
#    listed as never planned), human and --json;
#  - per region the quota walls: limit, code, what our live instances hold,
#    since when and until when they count;
#  - the legacy counters only as the best_effort/all_or_nothing estimate
#    (--json keeps their members, as schema gpuburstctl/1 promises);
#  - forget: one pool, a type, a region, the quota walls; what it cleared,
#    the event and the log line; unknown names (10), nothing to forget (8),
#    usage errors (2), a non-administrator (22);
#  - the capacity kind of each row (schema 3): a spot row beside the
#    on-demand one of the same pool; forget clears cached reservations.
. "$srcdir/ctl-lib.sh"

write_conf() {	# FILE [EXTRA NODESET LINE]
	cat >"$1" <<EOF
cluster_name: t
environment: prod
state_dir: $tmp/state
log: {file: $tmp/gb.log}
regions:
  - name: us-east-1
    ami: ami-1
    azs: [{name: us-east-1a, subnets: [subnet-1]}, {name: us-east-1b, subnets: [subnet-2]}]
  - name: eu-west-1
    ami: ami-2
    azs: [{name: eu-west-1a, subnets: [subnet-3]}]
fallback_groups:
  g: {consumer_regions: [us-east-2], fallback_regions: [us-east-1, eu-west-1]}
nodesets:
  - {name: g5, nodes: "g5-[1-40]", instance_type: g5.xlarge, home_region: us-east-2}
${2:-}
EOF
}
write_conf "$tmp/gb.yaml"
C="$tmp/gb.yaml"
ctl() { env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/no-slurm.conf" "$CTL" -c "$C" "$@"; }
run() {	# WANT_RC ARGS...
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || bad "gpuburstctl $*: exit $rc, want $want: $(head -3 "$tmp/err")"
	ok
}
py() { "$PY" - "$@"; }
has() {	# PATTERN WHAT: grep -q PATTERN in the output
	grep -q -- "$1" "$tmp/out" || bad "$2: no '$1' in: $(cat "$tmp/out")"
}

run 0 capacity
has '^no capacity memory (no state file yet)$' "capacity without a state file"

# us-east-1a ran dry at 3 twice (the last a minute ago: cooling); us-east-1b
# gave 6 three times (at least 6, but the vCPU wall of 16 leaves room for 4
# g5.xlarge); eu-west-1a does not offer g5.xlarge
"$MK" "$tmp/state/state.db" memory || { echo "FAIL: gb_mkstate memory"; exit 1; }

# ---- the pools and walls, as the default strategy reads them
run 0 capacity
has '^Pools, as the default strategy plans with them:$' "capacity"
has '^REGION  *AZ  *TYPE  *CAPACITY  *OFFERED  *ESTIMATE  *AT_LEAST  *LAST_ICE  *COOL_DOWN  *EVIDENCE$' "pool header"
has '^us-east-1  *us-east-1a  *g5.xlarge  *on-demand  *yes  *3  *-  *20[-0-9]*T[:0-9]*Z  *[89]m [0-9]*s left  *level 3.0 over 1.[89] dry-outs$' \
	"a pool that ran dry: level, cool-down"
has '^us-east-1  *us-east-1b  *g5.xlarge  *on-demand  *?  *4 (quota: VcpuLimitExceeded)  *6.0  *-  *-  *at least 6.0 over 2.[789] visits$' \
	"a pool known by lower bounds, capped by the quota"
has '^eu-west-1  *eu-west-1a  *g5.xlarge  *-  *no  *-  *-  *-  *-  *not offered (cached .*Z): never planned$' \
	"a pool not offered"
has '^us-east-1  *vcpus:G  *VcpuLimitExceeded  *16 vCPUs  *0  *16  *20[-0-9]*T[:0-9]*Z  *20[-0-9]*T[:0-9]*Z (in 1h 5[0-9]m [0-9]*s)$' \
	"the quota wall"
grep -q 'ASKED\|FILL' "$tmp/out" && bad "counters shown without a strategy that uses them: $(cat "$tmp/out")"
ok

run 0 --json capacity
py "$tmp/out" <<'PY' || bad "capacity --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
p = {c["az"]: c for c in d["capacity"]}
a, b = p["us-east-1a"], p["us-east-1b"]
assert a["estimate"] == 3 and a["estimate_basis"] == "levels" and abs(a["level"] - 3) < 1e-6, a
assert a["capacity"] == "on-demand" and b["capacity"] == "on-demand", (a, b)
assert a["cooling"] and 480 < a["cool_down_left"] <= 540 and a["last_ice_at"].endswith("Z"), a
assert a["offered"] is True and a["lower_bound"] is None and a["quota_room"] == 4, a
assert a["counter_estimate"] == 3 and a["ice"] > 0.9 and a["fill_rate"] > 0.7, a
assert b["estimate"] == 4 and b["estimate_basis"] == "lower_bounds", b
assert abs(b["lower_bound"] - 6) < 1e-6 and not b["cooling"] and b["cool_down_left"] is None, b
assert b["offered"] is None and not b["walled"], b
q, = d["quotas"]
assert (q["region"], q["quota"], q["code"], q["unit"]) == ("us-east-1", "vcpus:G", "VcpuLimitExceeded", "vcpus"), q
assert q["limit"] == 16 and q["held"] == 0 and q["left"] == 16 and q["heeded"], q
assert q["since"] < q["until"], q
assert sorted((o["az"], o["offered"]) for o in d["offerings"]) == [("eu-west-1a", False), ("us-east-1a", True)]
assert d["ice_cooldown"] == 600 and d["half_life"] == 3600 and d["offerings_ttl"] == 3600
PY
ok

# filters: a region, a type (a g6 shares the G vCPU wall; a p5 would not)
run 0 --json capacity --region eu-west-1
py "$tmp/out" <<'PY' || bad "capacity --region: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["capacity"] == [] and d["quotas"] == [] and len(d["offerings"]) == 1, d
PY
run 0 capacity --type g6.xlarge
has '^us-east-1  *vcpus:G ' "the G wall bounds g6.xlarge"
grep -q '^Pools' "$tmp/out" && bad "capacity --type g6.xlarge lists g5 pools"
ok
run 0 capacity --type p4d.24xlarge
has '^no capacity memory$' "no pool and no wall of a P type"

# a nodeset planning with the counters shows them, labelled as theirs
write_conf "$tmp/be.yaml" '  - {name: be, nodes: "be-[1-4]", instance_type: g5.xlarge, home_region: us-east-2, strategy: best_effort}'
C="$tmp/be.yaml" run 0 capacity
has '^Counters (the estimate of the best_effort and all_or_nothing strategies):$' "counters table"
has '^us-east-1  *us-east-1a  *g5.xlarge  *on-demand  *3  *3.9[0-9]  *2.9[0-9]  *0.9[0-9]  *0.00$' "counters row"

# ---- forget: validation first; nothing changes
run 10 capacity forget us-east-9
grep -q 'unknown region "us-east-9": not configured and not in the memory (configured: us-east-1, eu-west-1)' "$tmp/err" ||
	bad "unknown region: $(cat "$tmp/err")"
run 10 capacity forget us-east-1a
grep -q 'an availability zone of us-east-1? (write us-east-1/us-east-1a)' "$tmp/err" || bad "AZ as region: $(cat "$tmp/err")"
run 10 capacity forget us-east-1/us-east-1z
grep -q 'unknown availability zone "us-east-1z" in us-east-1' "$tmp/err" || bad "unknown AZ: $(cat "$tmp/err")"
run 10 capacity forget us-east-1 --type g9.huge
grep -q 'unknown instance type "g9.huge"' "$tmp/err" || bad "unknown type: $(cat "$tmp/err")"
run 8 capacity forget eu-west-1 --quota
grep -q 'nothing to forget: no quota memory of eu-west-1$' "$tmp/err" || bad "nothing: $(cat "$tmp/err")"
run 8 capacity forget us-east-1/us-east-1b --type g6.xlarge
usage() {
	msg=$1; shift
	run 2 "$@"
	grep -q -- "$msg" "$tmp/err" || bad "gpuburstctl $*: stderr lacks '$msg': $(cat "$tmp/err")"
}
usage 'which region? (REGION or REGION/AZ)' capacity forget
usage 'invalid region "us-east-1/"' capacity forget us-east-1/
usage 'unexpected argument "eu-west-1"' capacity forget us-east-1 eu-west-1
usage '--quota forgets a region' capacity forget us-east-1/us-east-1a --quota
usage '--quota forgets a region' capacity forget us-east-1 --quota --type g5.xlarge
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups env SLURM_CONF="$tmp/no-slurm.conf" "$CTL" -c "$C" \
		capacity forget us-east-1 >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 22 ] || bad "nobody may not forget: $(cat "$tmp/err")"
	ok
fi
ctl --json capacity >"$tmp/before"
py "$tmp/before" <<'PY' || bad "a refused forget changed memory"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["capacity"]) == 2 and len(d["quotas"]) == 1 and len(d["offerings"]) == 2, d
PY

# ---- forget one pool: its row and its cached offering, one event
run 0 capacity forget us-east-1/us-east-1a --type g5.xlarge
has '^forgot the capacity memory of 1 pool and 1 cached offering:$' "forget a pool"
has '^  us-east-1/us-east-1a g5.xlarge on-demand$' "forget a pool: the pool"
grep -q 'capacity_forget what=capacity region=us-east-1 az=us-east-1a type=g5.xlarge capacity=1 offerings=1 reservations=0 quotas=0 by=root uid=0' \
	"$tmp/gb.log" || bad "forget not logged: $(cat "$tmp/gb.log")"
run 8 capacity forget us-east-1/us-east-1a
grep -q 'nothing to forget: no capacity memory of us-east-1/us-east-1a$' "$tmp/err" || bad "again: $(cat "$tmp/err")"

# ---- the quota walls of a region, as JSON; capacity memory stays
run 0 --json capacity forget us-east-1 --quota
py "$tmp/out" <<'PY' || bad "forget --quota --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["forgot"] == {"capacity": 0, "offerings": 0, "reservations": 0, "quotas": 1}, d
assert d["quotas"] == [{"region": "us-east-1", "quota": "vcpus:G", "code": "VcpuLimitExceeded"}], d
assert d["region"] == "us-east-1" and d["az"] is None and d["quota"] is True, d
PY
run 0 capacity
has '^us-east-1  *us-east-1b  *g5.xlarge  *on-demand  *?  *6  *6.0 ' "without the wall: its lower bound, uncapped"
grep -q '^Quota walls' "$tmp/out" && bad "the wall is still shown"
ok

# ---- a whole region; then the events say who forgot what
run 0 capacity forget eu-west-1
has '^forgot the capacity memory of 0 pools and 1 cached offering:$' "forget a region's offerings"
run 0 capacity forget us-east-1
has '^forgot the capacity memory of 1 pool and 0 cached offerings:$' "forget a region"
run 0 capacity
has '^no capacity memory$' "all forgotten"
"$PY" - "$tmp/state/state.db" <<'PY' || bad "capacity_forget events"
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
ev = [r[0] for r in db.execute("SELECT detail FROM events WHERE kind = 'capacity_forget' ORDER BY id")]
assert len(ev) == 4, ev
assert ev[1].startswith("what=quota region=us-east-1 az=- type=- capacity=0 offerings=0 reservations=0 quotas=1 by=root"), ev
assert db.execute("SELECT count(*) FROM events WHERE request_id IS NOT NULL").fetchone()[0] == 0
PY
ok

# ---- capacity kinds: each kind of a pool is a row of its own (a spot
# refusal leaves on-demand alone); forget clears cached reservations too
"$MK" "$tmp/state/state.db" ladder || { echo "FAIL: gb_mkstate ladder"; exit 1; }
run 0 capacity
has '^us-east-1  *us-east-1a  *g5.xlarge  *on-demand  *?  *4  *4.0  *-  *-  *at least 4.0 over [01].[0-9] visits$' \
	"the on-demand row of a pool"
has '^us-east-1  *us-east-1a  *g5.xlarge  *spot  *?  *0  *-  *20[-0-9]*T[:0-9]*Z  *[89]m [0-9]*s left  *level 0.0 over [01].[0-9] dry-outs$' \
	"the spot row of the same pool"
run 0 --json capacity
py "$tmp/out" <<'PY' || bad "capacity kinds --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
p = {c["capacity"]: c for c in d["capacity"]}
assert sorted(p) == ["on-demand", "spot"], d["capacity"]
assert p["on-demand"]["estimate"] == 4 and not p["on-demand"]["cooling"], p
assert p["spot"]["estimate"] == 0 and p["spot"]["cooling"], p
PY
run 0 capacity forget us-east-1/us-east-1a
has '^forgot the capacity memory of 2 pools, 0 cached offerings and 1 cached reservation:$' \
	"forget an AZ: both kinds and its reservation"
has '^  us-east-1/us-east-1a g5.xlarge spot$' "forget an AZ: the spot row"
grep -q 'capacity_forget what=capacity region=us-east-1 az=us-east-1a type=- capacity=2 offerings=0 reservations=1 quotas=0 by=root' \
	"$tmp/gb.log" || bad "forget of reservations not logged: $(cat "$tmp/gb.log")"
"$PY" - "$tmp/state/state.db" <<'PY' || bad "the other AZ's reservation stays"
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
assert db.execute("SELECT id FROM capacity_reservations").fetchall() == [("cr-0b",)]
PY
ok
run 0 --json capacity forget us-east-1
py "$tmp/out" <<'PY' || bad "forget reservations --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["forgot"] == {"capacity": 0, "offerings": 0, "reservations": 1, "quotas": 0}, d
PY

echo "ctl-capacity: $n checks"
exit $fail
