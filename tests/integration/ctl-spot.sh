#!/bin/sh
# ctl-spot.sh - `gpuburstctl reconcile` caches the spot prices of what the
# spot rungs can launch (DescribeSpotPriceHistory against gpuburst-cloudsim,
# one call per candidate region) and `gpuburstctl prices` lists them: the
# rows of spot_prices and spot_prices_fetched, a dry run and a fresh cache
# asking nothing, policy.spot_price_ttl 0 asking every pass, and a refusal
# failing the region's spot action with the cache kept.  Slurm is absent
# (SLURM_CONF names no file): reconcile exits 29 (PARTIAL) for the node
# checks it skips.
CLOUDSIM_NO_AWS_CLI=yes
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"

start_sim "$DATA/ctl-spot.yaml"
# conf TTL: a spot nodeset (g5.xlarge, g5.2xlarge) homed in Mumbai with Tokyo
# as fallback, and an on-demand one whose type is never asked for
conf() {
	{
		conf_head
		conf_creds
		cat <<EOF
regions:
  - name: ap-south-1
    ami: ami-0a1b2c3d4e5f60001
    azs: [{name: ap-south-1a, subnets: [subnet-spot-a]}, {name: ap-south-1b, subnets: [subnet-spot-b]}]
  - name: ap-northeast-1
    ami: ami-0a1b2c3d4e5f60002
    azs: [{name: ap-northeast-1a, subnets: [subnet-spot-c]}]
fallback_groups:
  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1, ap-northeast-1]}
nodesets:
  - name: sp
    nodes: "sp-[1-4]"
    instance_types: [g5.xlarge, g5.2xlarge]
    home_region: ap-south-1
    capacity: [spot: {}, on_demand: {}]
  - {name: od, nodes: "od-[1-4]", instance_type: g6e.xlarge, home_region: ap-south-1}
policy:
  spot_price_ttl: $1
EOF
	} >"$TMP/gb.yaml"
}
ctl() { SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/gb.yaml" "$@"; }
# sql QUERY: the rows of the state file, as JSON
sql() {
	"$PYTHON3" -c 'import json, sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(json.dumps([list(r) for r in c.execute(sys.argv[2])]))' "$TMP/state/state.db" "$1"
}
# spot_actions FILE: the spot actions of a reconcile --json
spot_actions() {
	jget "$1" '[(a["target"], a["done"], a["error"] is None, a["detail"]) for a in d["actions"] if a["action"] == "spot"]'
}

conf 1h
mkdir -p "$TMP/state"
ctl reconcile --dry-run >"$TMP/out" 2>"$TMP/err"
expect_eq "dry run exit (no Slurm)" "$?" 29
grep -q 'spot 0), dry run: nothing changed' "$TMP/out" || grep -q '^nothing to reconcile$' "$TMP/out" ||
	fail "dry run: $(cat "$TMP/out")"
expect_eq "no price after a dry run" "$(sql 'SELECT count(*) FROM spot_prices')" '[[0]]'
ok "reconcile --dry-run asks no spot price"

ctl --json reconcile >"$TMP/rec.json" 2>"$TMP/err"
expect_eq "reconcile exit (no Slurm)" "$?" 29
expect_eq "spot actions" "$(spot_actions "$TMP/rec.json")" \
	'[["ap-south-1", true, true, "2 spot prices of g5.xlarge,g5.2xlarge (DescribeSpotPriceHistory)"], ["ap-northeast-1", true, true, "1 spot price of g5.xlarge,g5.2xlarge (DescribeSpotPriceHistory)"]]'
expect_eq "spot_prices" \
	"$(sql 'SELECT region, az, instance_type, usd_per_hour, seen_at > 0, fetched_at > seen_at FROM spot_prices ORDER BY region, az')" \
	'[["ap-northeast-1", "ap-northeast-1a", "g5.xlarge", 0.51, 1, 1], ["ap-south-1", "ap-south-1a", "g5.xlarge", 0.45, 1, 1], ["ap-south-1", "ap-south-1b", "g5.xlarge", 0.62, 1, 1]]'
expect_eq "spot_prices_fetched (g5.2xlarge has no pool, g6e.xlarge no spot rung)" \
	"$(sql 'SELECT region, instance_type FROM spot_prices_fetched ORDER BY region, instance_type')" \
	'[["ap-northeast-1", "g5.2xlarge"], ["ap-northeast-1", "g5.xlarge"], ["ap-south-1", "g5.2xlarge"], ["ap-south-1", "g5.xlarge"]]'
ok "reconcile: one DescribeSpotPriceHistory per candidate region of the spot nodeset, its pools cached"

ctl --json reconcile >"$TMP/rec.json" 2>"$TMP/err"
expect_eq "second reconcile exit" "$?" 29
expect_eq "no spot action within the TTL" "$(spot_actions "$TMP/rec.json")" '[]'
ok "reconcile within policy.spot_price_ttl asks nothing"

# prices: the block of cached spot prices, and its JSON
ctl prices >"$TMP/out" 2>"$TMP/err" || fail "prices: $(cat "$TMP/err")"
grep -q '^spot prices cached from DescribeSpotPriceHistory (policy.spot_price_ttl 1h.*): 3, before the file.s for spot instances$' "$TMP/out" ||
	fail "prices spot header: $(cat "$TMP/out")"
grep -q '^REGION  *TYPE  *AZ  *USD/HOUR  *SINCE  *FETCHED  *USED$' "$TMP/out" || fail "prices spot columns: $(cat "$TMP/out")"
grep -q '^ap-south-1  *g5.xlarge  *ap-south-1b  *0.62  *[0-9-]*T.*  *sp$' "$TMP/out" ||
	fail "prices spot row: $(cat "$TMP/out")"
ctl --json prices >"$TMP/p.json" 2>"$TMP/err" || fail "prices --json: $(cat "$TMP/err")"
expect_eq "prices --json spot_prices" \
	"$(jget "$TMP/p.json" '[(p["region"], p["az"], p["type"], p["capacity"], p["usd_per_hour"], p["source"], p["seen_at"] > 0, p["fetched_at"] > 0, p["used"], p["nodesets"]) for p in d["spot_prices"]]')" \
	'[["ap-northeast-1", "ap-northeast-1a", "g5.xlarge", "spot", 0.51, "DescribeSpotPriceHistory", true, true, true, ["sp"]], ["ap-south-1", "ap-south-1a", "g5.xlarge", "spot", 0.45, "DescribeSpotPriceHistory", true, true, true, ["sp"]], ["ap-south-1", "ap-south-1b", "g5.xlarge", "spot", 0.62, "DescribeSpotPriceHistory", true, true, true, ["sp"]]]'
ok "prices lists the cached spot prices (table and --json)"

# TTL 0: every pass asks; a refusal fails the action and keeps the cache
conf 0
ctl --json reconcile >"$TMP/rec.json" 2>"$TMP/err"
expect_eq "spot actions with TTL 0" "$(jget "$TMP/rec.json" '[a["target"] for a in d["actions"] if a["action"] == "spot" and a["done"]]')" \
	'["ap-south-1", "ap-northeast-1"]'
control POST /_sim/fault '{"count": 10, "code": "UnauthorizedOperation", "action": "DescribeSpotPriceHistory", "region": "ap-south-1"}' >/dev/null ||
	fail "control fault"
ctl --json reconcile >"$TMP/rec.json" 2>"$TMP/err"
expect_eq "reconcile exit with a refusal" "$?" 29
expect_eq "the refused region's action" \
	"$(jget "$TMP/rec.json" '[(a["target"], a["done"], "UnauthorizedOperation" in (a["error"] or "")) for a in d["actions"] if a["action"] == "spot"]')" \
	'[["ap-south-1", false, true], ["ap-northeast-1", true, false]]'
expect_eq "failed count" "$(jget "$TMP/rec.json" 'd["failed"]')" 1
expect_eq "cache kept" "$(sql "SELECT count(*) FROM spot_prices WHERE region = 'ap-south-1'")" '[[2]]'
grep -q 'reconcile action=spot target=ap-south-1 .*error=.*UnauthorizedOperation' "$TMP/gb.log" ||
	fail "no error logged: $(grep spot "$TMP/gb.log")"
control DELETE /_sim/fault >/dev/null || fail "control fault delete"
ok "policy.spot_price_ttl 0 asks every pass; a refusal fails the region's spot action (logged), its cache kept"
