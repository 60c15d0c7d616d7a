#!/bin/sh
# ctl-reservations.sh - what the account holds and could buy, against
# gpuburst-cloudsim (tests/data/cloudsim/capacity.yaml: in ap-south-1 a
# targeted and an open ODCR, a Capacity Block active for an hour and one a
# day later; two block offerings of p5.48xlarge): `reservations` lists all
# four with kind, state, available/total and window; `capacity-blocks` the
# two blocks; --type filters; --json; `capacity-blocks offerings --type
# p5.48xlarge --count 2 --days 2` finds the 2-instance 48 h offering and
# says buying is not done here; a region that does not answer is named and
# fails the command while the other is still listed; bad arguments are
# usage errors naming what is wrong.
. "$srcdir/cloudsim-lib.sh"

CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
start_sim "$GB_TOP_SRCDIR/tests/data/cloudsim/capacity.yaml"
write_conf() {	# FILE [EXTRA-REGION]
	cat >"$1" <<EOF
cluster_name: t
state_dir: $TMP/state
log: {file: $TMP/gb.log}
cloud:
  endpoint: $ENDPOINT
  connect_timeout: 2s
  request_timeout: 5s
  max_retries: 0
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, imds: false}
regions:
  - name: ap-south-1
    ami: ami-0123456789abcdef0
    azs: [{name: ap-south-1a, subnets: [subnet-cr-a]}, {name: ap-south-1b, subnets: [subnet-cr-b]}]
${2:-}
fallback_groups:
  sea: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}
policy: {allowed_families: [g5, g6, p5]}
nodesets:
  - {name: h100, nodes: "h100-[1-8]", instance_type: p5.48xlarge, home_region: ap-south-1}
EOF
}
mkdir -p "$TMP/state"
write_conf "$TMP/gb.yaml"
ctl() { env SLURM_CONF="$TMP/no-slurm.conf" AWS_EC2_METADATA_DISABLED=true "$CTL" -c "${CONF:-$TMP/gb.yaml}" "$@"; }

# ---- reservations: all four, one line each
ctl reservations >"$TMP/r.out" 2>"$TMP/r.err" || fail "reservations: $(cat "$TMP/r.out" "$TMP/r.err")"
head -1 "$TMP/r.out" | grep -q '^REGION  *ID  *KIND  *TYPE  *AZ  *STATE  *AVAILABLE  *MATCH  *START  *END' ||
	fail "reservations header: $(head -1 "$TMP/r.out")"
expect_eq "reservation rows" "$(($(wc -l <"$TMP/r.out") - 1))" 4
grep -Eq '^ap-south-1 +cr-0123456789abcdef0 +odcr +g5\.xlarge +ap-south-1a +active +2/2 +targeted ' "$TMP/r.out" ||
	fail "targeted ODCR: $(cat "$TMP/r.out")"
grep -Eq '^ap-south-1 +cr-0123456789abcdef1 +odcr +g6\.xlarge +ap-south-1b +active +1/1 +open .* none$' "$TMP/r.out" ||
	fail "open ODCR: $(cat "$TMP/r.out")"
grep -Eq '^ap-south-1 +cr-0123456789abcdef2 +capacity-block +p5\.48xlarge +ap-south-1a +active +2/2 ' "$TMP/r.out" ||
	fail "active block: $(cat "$TMP/r.out")"
grep -Eq '^ap-south-1 +cr-0123456789abcdef3 +capacity-block +p5\.48xlarge +ap-south-1b +scheduled +0/4 ' "$TMP/r.out" ||
	fail "scheduled block: $(cat "$TMP/r.out")"
ok "reservations: two ODCRs (targeted, open) and two Capacity Blocks (active, scheduled) with counts"

# ---- capacity-blocks: the blocks alone, windows a day apart
ctl capacity-blocks >"$TMP/b.out" 2>"$TMP/b.err" || fail "capacity-blocks: $(cat "$TMP/b.out" "$TMP/b.err")"
expect_eq "block rows" "$(($(wc -l <"$TMP/b.out") - 1))" 2
ctl --json capacity-blocks >"$TMP/b.json" || fail "capacity-blocks --json"
expect_eq "blocks json" "$(jget "$TMP/b.json" '[(r["id"], r["kind"], r["state"], r["total"]) for r in d["reservations"]]')" \
	'[["cr-0123456789abcdef2", "capacity-block", "active", 2], ["cr-0123456789abcdef3", "capacity-block", "scheduled", 4]]'
expect_eq "block windows (hours)" "$(jget "$TMP/b.json" '[round((__import__("datetime").datetime.fromisoformat(r["end"].replace("Z", "+00:00")) - __import__("datetime").datetime.fromisoformat(r["start"].replace("Z", "+00:00"))).total_seconds() / 3600) for r in d["reservations"]]')" \
	'[1, 24]'
expect_eq "failed regions" "$(jget "$TMP/b.json" 'd["failed_regions"]')" '[]'
ok "capacity-blocks: the two blocks, their windows (1 h and 24 h), JSON"

# ---- --type
ctl reservations --type g6.xlarge >"$TMP/t.out" || fail "reservations --type"
expect_eq "g6.xlarge rows" "$(($(wc -l <"$TMP/t.out") - 1))" 1
ctl capacity-blocks --type g5.xlarge >"$TMP/t.out" || fail "capacity-blocks --type g5.xlarge"
expect_eq "no g5 block" "$(cat "$TMP/t.out")" "capacity blocks: none of g5.xlarge in the 1 region that answered"
ok "--type: one g6.xlarge reservation; no g5.xlarge block, said so"

# ---- offerings
ctl capacity-blocks offerings --type p5.48xlarge --count 2 --days 2 >"$TMP/o.out" 2>"$TMP/o.err" ||
	fail "offerings: $(cat "$TMP/o.out" "$TMP/o.err")"
grep -Eq '^ap-south-1 +[^ ]+ +p5\.48xlarge +ap-south-1b +2 ' "$TMP/o.out" || fail "offering row: $(cat "$TMP/o.out")"
grep -q 'ap-south-1a' "$TMP/o.out" && fail "the 24 h offering listed for 2 days: $(cat "$TMP/o.out")"
grep -q '^buying one is not done here: aws ec2 purchase-capacity-block ' "$TMP/o.out" || fail "purchase hint: $(cat "$TMP/o.out")"
ctl --json capacity-blocks offerings --type p5.48xlarge --count 2 --days 2 >"$TMP/o.json" || fail "offerings --json"
expect_eq "offering json" "$(jget "$TMP/o.json" '[(o["availability_zone"], o["count"], o["duration_hours"]) for o in d["offerings"]]')" \
	'[["ap-south-1b", 2, 48]]'
ctl capacity-blocks offerings --type p5.48xlarge --count 2 --days 5 >"$TMP/o.out" || fail "offerings for 5 days"
expect_eq "nothing for 5 days" "$(cat "$TMP/o.out")" "no capacity block of 2 x p5.48xlarge for 5 days is offered"
grep -c 'action=DescribeCapacityBlockOfferings' "$TMP/sim.log" >/dev/null || fail "no offering call in the simulator's log"
ok "capacity-blocks offerings: the 48 h offering of 2 for --days 2, none for 5 days; buying left to the admin"

# ---- usage errors and a type outside the GPU catalog
for args in "--count 2 --days 2" "--type p5.48xlarge --count 0 --days 2" "--type p5.48xlarge --count 2 --days 183" \
	"--type p5.48xlarge --count 65 --days 1"; do
	# shellcheck disable=SC2086
	ctl capacity-blocks offerings $args >"$TMP/out" 2>"$TMP/err"
	expect_eq "offerings $args: exit" "$?" 2
done
grep -q 'count' "$TMP/err" || fail "count 65: $(cat "$TMP/err")"
ctl capacity-blocks offerings --type m7i.xlarge --count 1 --days 1 >"$TMP/out" 2>"$TMP/err"
[ "$?" -ne 0 ] || fail "a non-GPU type was asked for"
grep -q 'm7i.xlarge' "$TMP/err" || fail "non-GPU type: $(cat "$TMP/err")"
ctl reservations --region us-east-1 >"$TMP/out" 2>"$TMP/err"
expect_eq "unconfigured region: exit" "$?" 2
grep -q 'region us-east-1 is not configured' "$TMP/err" || fail "unconfigured region: $(cat "$TMP/err")"
ok "usage: missing --type, --count 0 and 65, --days 183, an unconfigured region; a non-GPU type refused"

# ---- a region that does not answer: named, the command fails, the other listed
write_conf "$TMP/dead.yaml" '  - {name: ap-northeast-1, endpoint: "http://127.0.0.1:1", ami: ami-1, azs: [{name: ap-northeast-1a, subnets: [subnet-x]}]}'
CONF="$TMP/dead.yaml" ctl reservations >"$TMP/d.out" 2>"$TMP/d.err"
rc=$?
[ "$rc" -ne 0 ] || fail "a dead region: exit 0"
grep -q 'reservations: DescribeCapacityReservations in ap-northeast-1: ' "$TMP/d.err" || fail "dead region: $(cat "$TMP/d.err")"
expect_eq "the live region still listed" "$(($(wc -l <"$TMP/d.out") - 1))" 4
CONF="$TMP/dead.yaml" ctl --json reservations >"$TMP/d.json" 2>/dev/null
expect_eq "dead region json" "$(jget "$TMP/d.json" '[len(d["reservations"]), d["failed_regions"], d["error"]["exit"] > 0]')" \
	'[4, ["ap-northeast-1"], true]'
ok "a region that does not answer: named on stderr and in JSON, exit $rc, ap-south-1 still listed"

