#!/bin/sh
# ctl-prices.sh - the price file: `gpuburstctl prices` says when there is
# none and how to make one; `prices refresh --from FILE` reads AWS Price
# List offer files for AmazonEC2 (tests/data/prices: hand-made, with the
# products that must be left out: Windows, Dedicated, SQL, an unused
# reservation's fee, a license brought along, a Local Zone, a type outside
# the catalog, storage) and writes exactly the Linux on-demand prices of
# the catalog's types, keeping the file's reservation and Capacity Block
# lines and the regions no file covers; --dry-run prints the lines and
# writes nothing; `prices` and --json mark the (region, type) pairs the
# nodesets can launch and warn for each one without an on-demand price;
# every bad input is an error naming the file and what is wrong, and
# nothing is written.
. "$srcdir/ctl-lib.sh"

DATA="$GB_TOP_SRCDIR/tests/data/prices"
US="$DATA/ec2-us-east-1.json"
EU="$DATA/ec2-eu-west-1.json"
P="$tmp/state/prices"
mkdir -p "$tmp/state"
cat >"$tmp/gb.yaml" <<EOF
cluster_name: t
state_dir: $tmp/state
log: {file: $tmp/gb.log}
cloud:
  endpoint: http://127.0.0.1:1
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: not-used, imds: false}
regions:
  - name: us-east-1
    ami: ami-1
    azs: [{name: us-east-1a, subnets: [subnet-1]}]
  - name: eu-west-1
    ami: ami-2
    azs: [{name: eu-west-1a, subnets: [subnet-2]}]
fallback_groups:
  g: {consumer_regions: [us-east-1], fallback_regions: [us-east-1, eu-west-1]}
policy: {allowed_families: [g5, p5]}
nodesets:
  - {name: g5, nodes: "g5-[1-4]", instance_types: [g5.xlarge, g5.2xlarge], home_region: us-east-1}
  - {name: h100, nodes: "h100-[1-2]", instance_type: p5.48xlarge, home_region: us-east-1, mode: single_region}
EOF
ctl() { env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/no-slurm.conf" "$CTL" -c "$tmp/gb.yaml" "$@"; }
run() {	# WANT_RC ARGS...
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || bad "gpuburstctl $*: exit $rc, want $want: $(head -3 "$tmp/err")"
	ok
}
# refused WANT_RC MESSAGE ARGS...: fails with MESSAGE (a fixed string) on
# stderr and leaves the price file as it was
refused() {
	want=$1 msg=$2; shift 2
	cp "$P" "$tmp/before"
	run "$want" prices refresh "$@"
	grep -qF -- "$msg" "$tmp/err" || bad "prices refresh $*: want '$msg', got: $(cat "$tmp/err")"
	grep -q '(nothing written)$' "$tmp/err" || grep -q '^Usage' "$tmp/err" ||
		bad "prices refresh $*: does not say nothing was written: $(cat "$tmp/err")"
	cmp -s "$P" "$tmp/before" || bad "prices refresh $*: the price file changed"
}

# ---- no price file
run 0 prices
grep -q "^prices: no price file $P, none installed at .*/prices: no price is known (make one with gpuburstctl prices refresh --from FILE" \
	"$tmp/out" || bad "no file: $(cat "$tmp/out")"
[ "$(grep -c 'warning: no on-demand price of' "$tmp/err")" = 5 ] ||
	bad "no file: want 5 warnings (g5 x 2 regions x 2 types, h100 in us-east-1): $(cat "$tmp/err")"
run 0 --json prices
"$PY" - "$tmp/out" <<'PY' || bad "no file --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["path"] is None and d["source"] is None and d["prices"] == [], d
assert sorted((m["region"], m["type"], m["nodesets"]) for m in d["missing"]) == [
    ("eu-west-1", "g5.2xlarge", ["g5"]), ("eu-west-1", "g5.xlarge", ["g5"]),
    ("us-east-1", "g5.2xlarge", ["g5"]), ("us-east-1", "g5.xlarge", ["g5"]),
    ("us-east-1", "p5.48xlarge", ["h100"])], d["missing"]
PY

# ---- a hand-made file: on-demand lines to be replaced, others kept
cat >"$P" <<EOF
gpuburst-prices 1
refreshed 2026-11-01T00:00:00Z
source hand
# region type capacity usd_per_hour
us-east-1 g5.xlarge on-demand 0.9
us-east-1 g5.xlarge reservation 0.7
us-east-1 g4dn.xlarge on-demand 0.526
us-east-1 p5.48xlarge capacity-block 31.464
ap-south-1 g5.xlarge on-demand 1.3
EOF
cp "$P" "$tmp/hand"
cat >"$tmp/want" <<EOF
ap-south-1 g5.xlarge on-demand 1.3
eu-west-1 g5.xlarge on-demand 1.123
us-east-1 g5.2xlarge on-demand 1.212
us-east-1 g5.xlarge on-demand 1.006
us-east-1 g5.xlarge reservation 0.7
us-east-1 p5.48xlarge on-demand 98.32
us-east-1 p5.48xlarge capacity-block 31.464
EOF

# ---- --dry-run prints the lines, writes nothing
run 0 prices refresh --from "$US" --from "$EU" --dry-run
cmp -s "$P" "$tmp/hand" || bad "--dry-run changed the price file"
grep -q "^would write 7 prices to $P: 4 on-demand from 2 files, 3 kept" "$tmp/out" ||
	bad "dry run summary: $(cat "$tmp/out")"
grep -q '^source aws-pricing AmazonEC2 eu-west-1 us-east-1 20261201000000$' "$tmp/out" ||
	bad "dry run source: $(cat "$tmp/out")"
grep -E '^[a-z]+-[a-z]+-[0-9] [^ ]+ [a-z-]+ [0-9.]+$' "$tmp/out" >"$tmp/dry"
cmp -s "$tmp/dry" "$tmp/want" || bad "dry run lines: $(diff "$tmp/want" "$tmp/dry")"
grep -q "^$US: 3 on-demand prices, published 2026-12-01T00:00:00Z (6 of 10 Compute Instances not Linux on-demand, 1 not in the catalog, 0 in other regions)$" \
	"$tmp/out" || bad "dry run per file: $(cat "$tmp/out")"

# ---- the refresh: exactly the lines, the header, 0644
run 0 prices refresh --from "$US" --from "$EU"
grep -q "^wrote 7 prices to $P" "$tmp/out" || bad "refresh: $(cat "$tmp/out")"
sed -n '1p;3p' "$P" >"$tmp/head"
printf 'gpuburst-prices 1\nsource aws-pricing AmazonEC2 eu-west-1 us-east-1 20261201000000\n' |
	cmp -s - "$tmp/head" || bad "header: $(head -3 "$P")"
sed -n 2p "$P" | grep -q '^refreshed [0-9-]*T[0-9:]*Z$' || bad "refreshed line: $(sed -n 2p "$P")"
grep -v '^#' "$P" | tail -n +4 >"$tmp/got"
cmp -s "$tmp/got" "$tmp/want" || bad "price lines: $(diff "$tmp/want" "$tmp/got")"
[ "$(stat -c %a "$P")" = 644 ] || bad "mode $(stat -c %a "$P")"
cp "$P" "$tmp/good"

# ---- the listing: the used pairs marked, one warning (g5.2xlarge in eu-west-1)
run 0 prices
grep -q "^prices $P: 7 prices, from aws-pricing AmazonEC2 eu-west-1 us-east-1 20261201000000, refreshed " \
	"$tmp/out" || bad "listing header: $(head -1 "$tmp/out")"
grep -Eq '^REGION +TYPE +CAPACITY +USD/HOUR +USED$' "$tmp/out" || bad "listing columns: $(cat "$tmp/out")"
grep -Eq '^ap-south-1 +g5\.xlarge +on-demand +1\.3 +-$' "$tmp/out" || bad "unused line: $(cat "$tmp/out")"
grep -Eq '^us-east-1 +p5\.48xlarge +capacity-block +31\.464 +h100$' "$tmp/out" || bad "h100 line: $(cat "$tmp/out")"
grep -Eq '^us-east-1 +g5\.xlarge +on-demand +1\.006 +g5$' "$tmp/out" || bad "g5 line: $(cat "$tmp/out")"
expect="gpuburstctl: warning: no on-demand price of g5.2xlarge in eu-west-1 (nodeset g5 can launch it there): its cost is unknown"
[ "$(cat "$tmp/err")" = "$expect" ] || bad "listing warnings: $(cat "$tmp/err")"
run 0 --json prices
"$PY" - "$tmp/out" "$P" <<'PY' || bad "prices --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["path"] == sys.argv[2] and d["schema"] == "gpuburstctl/1", d
assert d["source"] == "aws-pricing AmazonEC2 eu-west-1 us-east-1 20261201000000", d["source"]
assert isinstance(d["refreshed_at"], float), d["refreshed_at"]
got = [(p["region"], p["type"], p["capacity"], p["usd_per_hour"], p["used"], p["nodesets"])
       for p in d["prices"]]
assert got == [
    ("ap-south-1", "g5.xlarge", "on-demand", 1.3, False, []),
    ("eu-west-1", "g5.xlarge", "on-demand", 1.123, True, ["g5"]),
    ("us-east-1", "g5.2xlarge", "on-demand", 1.212, True, ["g5"]),
    ("us-east-1", "g5.xlarge", "on-demand", 1.006, True, ["g5"]),
    ("us-east-1", "g5.xlarge", "reservation", 0.7, True, ["g5"]),
    ("us-east-1", "p5.48xlarge", "on-demand", 98.32, True, ["h100"]),
    ("us-east-1", "p5.48xlarge", "capacity-block", 31.464, True, ["h100"])], got
assert d["missing"] == [{"region": "eu-west-1", "type": "g5.2xlarge", "nodesets": ["g5"]}], d["missing"]
PY

# ---- --region: only that region's lines change; --json of a refresh
run 0 --json prices refresh --from "$US" --from "$EU" --region eu-west-1 --dry-run
"$PY" - "$tmp/out" <<'PY' || bad "refresh --region --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dry_run"] is True and d["kept"] == 6, d
assert d["source"] == "aws-pricing AmazonEC2 eu-west-1 20261201000000", d["source"]
f = {x["path"].rsplit("/", 1)[1]: x for x in d["files"]}
assert f["ec2-us-east-1.json"]["products"]["other_regions"] == 10, f
assert f["ec2-eu-west-1.json"]["products"]["prices"] == 1, f
assert len(d["prices"]) == 7, d["prices"]
PY
refused 8 "--region ap-south-1: no product of that region in the files" \
	--from "$US" --from "$EU" --region ap-south-1 --region eu-west-1

# ---- bad inputs: each named, nothing written
mk() {	# NAME PYTHON-EXPR-ON-d: a copy of the us-east-1 file, changed
	"$PY" - "$US" "$tmp/$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
printf '{"formatVersion": "v1.0", "offerCode": "AmazonEC2", "products": {' >"$tmp/trunc.json"
refused 10 "$tmp/trunc.json: not JSON: " --from "$tmp/trunc.json"
printf '[1, 2]\n' >"$tmp/array.json"
refused 10 "$tmp/array.json: not an AWS Price List offer file (not a JSON object)" --from "$tmp/array.json"
mk rds.json 'd["offerCode"] = "AmazonRDS"'
refused 10 "$tmp/rds.json: the offer of AmazonRDS, not of AmazonEC2" --from "$US" --from "$tmp/rds.json"
mk nocode.json 'del d["offerCode"]'
refused 10 "$tmp/nocode.json: not an AWS Price List offer file (no \"offerCode\")" --from "$tmp/nocode.json"
mk v2.json 'd["formatVersion"] = "v2.0"'
refused 10 "$tmp/v2.json: formatVersion v2.0, this gpuburst reads v1.0" --from "$tmp/v2.json"
mk nopub.json 'del d["publicationDate"]'
refused 10 "$tmp/nopub.json: no \"publicationDate\"" --from "$tmp/nopub.json"
mk noterms.json 'del d["terms"]'
refused 10 "$tmp/noterms.json: no \"terms\": {\"OnDemand\": ...} object" --from "$tmp/noterms.json"
mk noregion.json 'del d["products"]["AAAAG5XLARGELNX"]["attributes"]["regionCode"]'
refused 10 "$tmp/noregion.json: products.AAAAG5XLARGELNX (Compute Instance): no attribute \"regionCode\"" \
	--from "$tmp/noregion.json"
mk nousd.json 'd["terms"]["OnDemand"]["AAAAP548XLARGEL"]["AAAAP548XLARGEL.JRTCKXETXF"]["priceDimensions"]["AAAAP548XLARGEL.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"] = {"EUR": "1"}'
refused 10 "$tmp/nousd.json: terms.OnDemand.AAAAP548XLARGEL.AAAAP548XLARGEL.JRTCKXETXF.priceDimensions.AAAAP548XLARGEL.JRTCKXETXF.6YS6EN2CT7: no \"pricePerUnit\": {\"USD\": ...}" \
	--from "$tmp/nousd.json"
mk nan.json 'd["terms"]["OnDemand"]["AAAAG5XLARGELNX"]["AAAAG5XLARGELNX.JRTCKXETXF"]["priceDimensions"]["AAAAG5XLARGELNX.JRTCKXETXF.6YS6EN2CT7"]["pricePerUnit"]["USD"] = "1.0e0x"'
refused 10 "$tmp/nan.json: terms.OnDemand.AAAAG5XLARGELNX.AAAAG5XLARGELNX.JRTCKXETXF.priceDimensions.AAAAG5XLARGELNX.JRTCKXETXF.6YS6EN2CT7: USD \"1.0e0x\" is not a price (a decimal number, 0 to 100000)" \
	--from "$tmp/nan.json"
mk dup.json 'import copy; p = copy.deepcopy(d["products"]["AAAAG5XLARGELNX"]); p["sku"] = "ZZZZG5XLARGELNX"; d["products"]["ZZZZG5XLARGELNX"] = p; d["terms"]["OnDemand"]["ZZZZG5XLARGELNX"] = json.loads(json.dumps(d["terms"]["OnDemand"]["AAAAG5XLARGELNX"]).replace("1.006", "2.006"))'
refused 10 "$tmp/dup.json: two Linux on-demand prices of g5.xlarge in us-east-1: 1.006 (product AAAAG5XLARGELNX) and 2.006 (product ZZZZG5XLARGELNX)" \
	--from "$tmp/dup.json"
mk windows.json 'd["products"] = {k: v for k, v in d["products"].items() if k.startswith("BBBB")}'
refused 8 "$tmp/windows.json: no usable price: of 6 products, 6 Compute Instances, 0 in other regions, 6 not Linux on-demand, 0 not in the catalog, 0 without an hourly price" \
	--from "$tmp/windows.json"
mkdir "$tmp/dir.json"
refused 4 "$tmp/dir.json is not a regular file" --from "$tmp/dir.json"
if command -v mkfifo >/dev/null; then
	mkfifo "$tmp/fifo.json"
	refused 4 "$tmp/fifo.json is not a regular file (a FIFO)" --from "$tmp/fifo.json"
fi
refused 8 "$tmp/none.json: no such file" --from "$tmp/none.json"
refused 2 "--from FILE or --capacity-blocks is required" --region us-east-1
cmp -s "$P" "$tmp/good" || bad "a refused refresh changed the price file"

echo "ctl-prices: $n checks"
exit $fail
