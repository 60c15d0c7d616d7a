#!/bin/sh
# 31-spot-fallback.sh - issue 20: a ladder of spot (price cap 0.50 USD an
# hour) then on-demand, locality none.  tests/data/cloudsim/e2e-spot.yaml
# refuses spot g5.xlarge in every region (over the cap in Singapore and
# ap-south-1b: SpotMaxPriceTooLow; none left in ap-south-1a and Tokyo) and
# has 4 on-demand in Singapore.  A 4-node job climbs the ladder in one
# request: spot in every candidate region first, then on-demand fills all
# four.  What the spot refusals taught capacity memory is about spot only:
# the on-demand pools of the same AZs are not dry (Singapore's gave 4).
# The instances say which rung they came from (records, tags, requests
# show).
. "${srcdir:-.}/e2e-lib.sh"
SCENARIO="$GB_TOP_SRCDIR/tests/data/cloudsim/e2e-spot.yaml"
A10G_EXTRA="    locality: none
    capacity:
      - spot: {max_price: \"0.50\"}
      - on_demand: {}"
e2e_start --nodes 4

J=$(submit -N4 -p gpu -w gpu-[1-4] --wrap 'srun hostname; sleep 4')
wait_for 60 "job $J running" '[ "$(job_state $J)" = RUNNING ]'
R=$(sql "SELECT id FROM requests WHERE job_id=$J AND kind='resume'")
expect_eq "requests of job $J" "$(sql "SELECT count(*) FROM requests WHERE job_id=$J AND kind='resume'")" 1
expect_eq "request $R" "$(sql "SELECT state, result, launched FROM requests WHERE id='$R'")" "done|success|4"
expect_eq "nodes, region, capacity" \
	"$(sql "SELECT group_concat(node || ':' || region || ':' || capacity, ' ') FROM (SELECT * FROM instances WHERE request_id='$R' AND node IS NOT NULL ORDER BY node)")" \
	"gpu-1:ap-southeast-1:on-demand gpu-2:ap-southeast-1:on-demand gpu-3:ap-southeast-1:on-demand gpu-4:ap-southeast-1:on-demand"
# every region's spot before any on-demand: the ladder's order
expect_eq "attempts (capacity, AZ, outcome)" \
	"$(sql "SELECT group_concat(capacity || ':' || az || ':' || coalesce(error_code, 'ok'), ' ') FROM (SELECT * FROM attempts WHERE request_id='$R' ORDER BY id)")" \
	"spot:ap-southeast-1a:SpotMaxPriceTooLow spot:ap-south-1a:InsufficientInstanceCapacity spot:ap-south-1b:SpotMaxPriceTooLow spot:ap-northeast-1a:InsufficientInstanceCapacity on-demand:ap-southeast-1a:ok"
ok "job $J: spot refused in all four AZs of three regions, then 4 on-demand in Singapore, one request"

# --- capacity memory: spot-dry is not on-demand-dry
expect_eq "spot pools remembered dry" \
	"$(sql "SELECT count(*) FROM capacity_stats WHERE capacity='spot' AND instance_type='g5.xlarge' AND level_n > 0")" 4
expect_eq "on-demand pools remembered dry" \
	"$(sql "SELECT count(*) FROM capacity_stats WHERE capacity='on-demand' AND (ice > 0 OR level_n > 0)")" 0
expect_eq "Singapore's on-demand pool" \
	"$(sql "SELECT capacity || ':' || (floor_sum / floor_n) FROM capacity_stats WHERE capacity='on-demand' AND az='ap-southeast-1a'")" \
	"on-demand:4.0"
ok "capacity memory: 4 spot pools dry, no on-demand pool dry (Singapore's: at least 4)"

# --- the instances and the request say which rung each node came from
awsc --version >/dev/null 2>&1 || skip "the AWS CLI does not run"
awsc ec2 describe-instances --region ap-southeast-1 \
	--filters "Name=tag:gpuburst:request,Values=$R" >"$TMP/di.json" || fail "describe-instances"
expect_eq "gpuburst:capacity tags" "$("$PYTHON3" -c 'import json, sys
ins = [i for r in json.load(open(sys.argv[1]))["Reservations"] for i in r["Instances"]]
print(len(ins), sorted(set(t["Value"] for i in ins for t in i["Tags"] if t["Key"] == "gpuburst:capacity")),
      sorted(set(i.get("InstanceLifecycle", "on-demand") for i in ins)))' "$TMP/di.json")" \
	"4 ['on-demand'] ['on-demand']"
ctl requests show "$R" >"$TMP/show.out" 2>&1 || fail "requests show: $(cat "$TMP/show.out")"
grep -q "ap-south-1b .*spot .*SpotMaxPriceTooLow" "$TMP/show.out" ||
	fail "requests show: no spot attempt in ap-south-1b: $(cat "$TMP/show.out")"
[ "$(grep -c "gpu-[1-4] .*ap-southeast-1a  *on-demand" "$TMP/show.out")" = 4 ] ||
	fail "requests show: not four on-demand nodes: $(cat "$TMP/show.out")"
ok "instances tagged gpuburst:capacity=on-demand; requests show names each attempt's and node's capacity"

wait_for 60 "job $J completed" '[ "$(job_state $J)" = COMPLETED ]'
ok "job $J completed"
