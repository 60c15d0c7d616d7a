#!/bin/sh
# ctl-prices-blocks.sh - `gpuburstctl prices refresh --capacity-blocks`
# prices Capacity Blocks as EC2 offers them (DescribeCapacityBlockOfferings
# against gpuburst-cloudsim, tests/data/cloudsim/ctl-prices-blocks.yaml):
# for each region a nodeset with a capacity-block rung may use, one
# instance for --days days, the cheapest offering's upfrontFee per
# instance-hour.  A region EC2 offers none in keeps its capacity-block line;
# every other line stays; the source line says where the prices came from;
# --dry-run writes nothing; --json; a region that does not answer fails the
# refresh with nothing written; bad arguments are usage errors.
CLOUDSIM_NO_AWS_CLI=yes
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"

start_sim "$DATA/ctl-prices-blocks.yaml"
# conf [EXTRA-REGION]: nodeset h100 (capacity blocks, then on-demand) homed
# in Mumbai with Tokyo as fallback; nodeset g5 has no block rung
conf() {
	{
		conf_head
		conf_creds
		cat <<CONF
  connect_timeout: 2s
  request_timeout: 5s
  max_retries: 0
regions:
  - name: ap-south-1
    ami: ami-0a1b2c3d4e5f60001
    azs: [{name: ap-south-1a, subnets: [subnet-cb-a]}, {name: ap-south-1b, subnets: [subnet-cb-b]}]
  - name: ap-northeast-1
    ami: ami-0a1b2c3d4e5f60002
    azs: [{name: ap-northeast-1a, subnets: [subnet-cb-c]}]
${1:-}
fallback_groups:
  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1, ap-northeast-1${2:-}]}
policy: {allowed_families: [g5, p5]}
nodesets:
  - name: h100
    nodes: "h100-[1-4]"
    instance_type: p5.48xlarge
    home_region: ap-south-1
    capacity: [capacity_blocks: {}, on_demand: {}]
  - {name: g5, nodes: "g5-[1-4]", instance_type: g5.xlarge, home_region: ap-south-1}
CONF
	} >"$TMP/gb.yaml"
}
ctl() { SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "$TMP/gb.yaml" "$@"; }
# the price file: on-demand lines, and a hand-written block line per region
prices_file() {
	printf '%s\n' 'gpuburst-prices 1' 'refreshed 2026-12-01T00:00:00Z' \
		'source aws-pricing AmazonEC2 ap-south-1 ap-northeast-1 20261201000000' \
		'ap-south-1 p5.48xlarge on-demand 98.32' \
		'ap-south-1 p5.48xlarge capacity-block 99' \
		'ap-south-1 g5.xlarge on-demand 1.2' \
		'ap-northeast-1 p5.48xlarge capacity-block 30' \
		'ap-northeast-1 p5.48xlarge on-demand 120.5' >"$TMP/state/prices"
}
mkdir -p "$TMP/state"
conf

# ---- no price file: a dry run prices Mumbai, says Tokyo has none, writes nothing
ctl prices refresh --capacity-blocks --dry-run >"$TMP/out" 2>"$TMP/err" ||
	fail "dry run: $(cat "$TMP/out" "$TMP/err")"
grep -q '^ap-south-1 p5.48xlarge: capacity-block 37.5 USD per instance-hour (cheapest of 2 offerings: cb-[0-9a-f]*, 24 h)$' "$TMP/out" ||
	fail "Mumbai's price: $(cat "$TMP/out")"
grep -q '^ap-northeast-1 p5.48xlarge: EC2 offers no Capacity Block of 1 day now; its instances have no price$' "$TMP/out" ||
	fail "Tokyo: $(cat "$TMP/out")"
grep -q '^2 DescribeCapacityBlockOfferings calls$' "$TMP/out" || fail "calls: $(cat "$TMP/out")"
grep -q '^would write 1 prices to .*: 1 capacity-block from EC2, 0 kept from the file in use (other capacity kinds, other regions)$' "$TMP/out" ||
	fail "summary: $(cat "$TMP/out")"
grep -q '^source none + ec2 DescribeCapacityBlockOfferings$' "$TMP/out" || fail "source: $(cat "$TMP/out")"
grep -q '^ap-south-1 p5.48xlarge capacity-block 37.5$' "$TMP/out" || fail "line: $(cat "$TMP/out")"
[ ! -e "$TMP/state/prices" ] || fail "a dry run wrote $TMP/state/prices"
ok "dry run: the cheapest 1-day offering per instance-hour (37.5 of 41.67 and 37.5), Tokyo none, nothing written"

# ---- with a price file: Mumbai's block line replaced, every other line kept
prices_file
ctl prices refresh --capacity-blocks >"$TMP/out" 2>"$TMP/err" || fail "refresh: $(cat "$TMP/out" "$TMP/err")"
grep -q '^ap-northeast-1 p5.48xlarge: EC2 offers no Capacity Block of 1 day now; its capacity-block line is kept$' "$TMP/out" ||
	fail "Tokyo kept: $(cat "$TMP/out")"
grep -q '^wrote 5 prices to .*: 1 capacity-block from EC2, 4 kept from the file in use (other capacity kinds, other regions)$' "$TMP/out" ||
	fail "summary: $(cat "$TMP/out")"
expect_eq "the file" "$(sed 1,2d "$TMP/state/prices" | grep -v '^#')" \
"source aws-pricing AmazonEC2 ap-south-1 ap-northeast-1 20261201000000 + ec2 DescribeCapacityBlockOfferings
ap-northeast-1 p5.48xlarge on-demand 120.5
ap-northeast-1 p5.48xlarge capacity-block 30
ap-south-1 g5.xlarge on-demand 1.2
ap-south-1 p5.48xlarge on-demand 98.32
ap-south-1 p5.48xlarge capacity-block 37.5"
grep -q 'prices_refresh by=.* capacity_block=1 kept=4' "$TMP/gb.log" || fail "log: $(cat "$TMP/gb.log")"
ok "refresh: Mumbai's block line 99 -> 37.5, Tokyo's 30 kept, on-demand lines kept, source extended"

# ---- gpuburstctl prices shows the line, and the source
ctl prices >"$TMP/out" 2>"$TMP/err" || fail "prices: $(cat "$TMP/out" "$TMP/err")"
grep -Eq '^ap-south-1 +p5\.48xlarge +capacity-block +37\.5 +h100$' "$TMP/out" || fail "prices: $(cat "$TMP/out")"
grep -q 'from aws-pricing AmazonEC2 ap-south-1 ap-northeast-1 20261201000000 + ec2 DescribeCapacityBlockOfferings,' "$TMP/out" ||
	fail "prices source: $(cat "$TMP/out")"
ok "prices lists the Capacity Block line of nodeset h100"

# ---- a second refresh: the source is not extended twice; --days 2 takes the 48 h offering
ctl prices refresh --capacity-blocks --days 2 --json >"$TMP/out.json" 2>"$TMP/err" ||
	fail "--days 2: $(cat "$TMP/out.json" "$TMP/err")"
expect_eq "blocks JSON" "$(jget "$TMP/out.json" '[(b["region"], b["type"], round(b["usd_per_hour"], 4) if b["usd_per_hour"] is not None else None, b["duration_hours"], b["offerings"]) for b in d["capacity_blocks"]]')" \
	'[["ap-south-1", "p5.48xlarge", 43.75, 48, 1], ["ap-northeast-1", "p5.48xlarge", null, 0, 0]]'
expect_eq "JSON source" "$(jget "$TMP/out.json" 'd["source"]')" \
	"aws-pricing AmazonEC2 ap-south-1 ap-northeast-1 20261201000000 + ec2 DescribeCapacityBlockOfferings"
grep -q '^ap-south-1 p5.48xlarge capacity-block 43.75$' "$TMP/state/prices" || fail "48 h: $(cat "$TMP/state/prices")"
ok "--days 2 --json: the 48 h offering (2100 / 48 = 43.75), the source extended once"

# ---- a region that does not answer: the refresh fails naming it, nothing written
cp "$TMP/state/prices" "$TMP/prices.before"
conf "  - name: eu-west-1
    ami: ami-0a1b2c3d4e5f60003
    azs: [{name: eu-west-1a, subnets: [subnet-cb-d]}]" ", eu-west-1"
ctl prices refresh --capacity-blocks >"$TMP/out" 2>"$TMP/err"
expect_eq "unanswered region exit (AUTH)" "$?" 14
grep -q 'prices refresh: DescribeCapacityBlockOfferings of p5.48xlarge in eu-west-1: .*AuthFailure.* (nothing written)' "$TMP/err" ||
	fail "unanswered region: $(cat "$TMP/err")"
cmp -s "$TMP/prices.before" "$TMP/state/prices" || fail "the price file changed"
ok "a region that does not answer fails the refresh, named, nothing written"

# ---- --region: only that region is asked
ctl prices refresh --capacity-blocks --region ap-northeast-1 --dry-run >"$TMP/out" 2>"$TMP/err" ||
	fail "--region: $(cat "$TMP/out" "$TMP/err")"
grep -q '^1 DescribeCapacityBlockOfferings call$' "$TMP/out" || fail "--region calls: $(cat "$TMP/out")"
grep -q '^ap-south-1 p5.48xlarge: ' "$TMP/out" && fail "--region asked Mumbai: $(cat "$TMP/out")"
ok "--region ap-northeast-1 asks that region alone"
conf

# ---- usage errors and a configuration without a block rung
usage() {	# WHAT MESSAGE ARG...
	what=$1 msg=$2
	shift 2
	ctl prices refresh "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	expect_eq "$what exit" "$rc" 2
	grep -qF -- "$msg" "$TMP/err" || fail "$what: $(cat "$TMP/err")"
}
usage "--days alone" "--days is the length of the Capacity Blocks asked about: it needs --capacity-blocks" --from x --days 2
usage "--days 0" "--days" --capacity-blocks --days 0
usage "--days 183" "--days" --capacity-blocks --days 183
usage "--days x" "--days" --capacity-blocks --days x
usage "neither" "--from FILE or --capacity-blocks is required"
usage "unknown region" "--region eu-central-1 is not configured" --capacity-blocks --region eu-central-1
sed -i 's/^    capacity: \[capacity_blocks: {}, on_demand: {}\]$//' "$TMP/gb.yaml"
ctl prices refresh --capacity-blocks >"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] || fail "no block rung: succeeded"
grep -q 'prices refresh: no nodeset has a capacity-block rung: there is no Capacity Block to price (nothing written)' "$TMP/err" ||
	fail "no block rung: $(cat "$TMP/err")"
cmp -s "$TMP/prices.before" "$TMP/state/prices" || fail "the price file changed"
ok "usage errors name the option; without a capacity-block rung there is nothing to price"
