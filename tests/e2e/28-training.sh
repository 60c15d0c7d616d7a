#!/bin/sh
# 28-training.sh - issue 19: a 4-node training job on an EFA + cluster
# placement nodeset (p5.48xlarge, 8 H100, EFA on 32 network cards).
# tests/data/cloudsim/e2e-training.yaml: Singapore (home) has room in its
# AZ, but a cluster group there holds 2; Mumbai ap-south-1a has room for 2;
# Mumbai ap-south-1b for 4.  The job lands in ap-south-1b, all four in one
# placement group of its own, each instance with 32 EFA interfaces, one per
# network card, as the simulator records them (read with the AWS CLI); the
# two groups it tried first were fresh ones too (one per AZ); Slurm runs
# the job on gres h100:8.  After the job, the instances go, and reconcile
# deletes every group the request made; nothing else is left.
. "${srcdir:-.}/e2e-lib.sh"
SCENARIO="$GB_TOP_SRCDIR/tests/data/cloudsim/e2e-training.yaml"
e2e_start --nodes 1 --train 4

awsc --version >/dev/null 2>&1 || skip "the AWS CLI does not run"
groups_of() {	# groups_of REQ: the names of REQ's placement groups, sorted
	awsc ec2 describe-placement-groups --region "$1" \
		--filters "Name=tag:gpuburst:request,Values=$2" >"$TMP/pg.json" ||
		fail "describe-placement-groups $1"
	"$PYTHON3" -c 'import json, sys
print(" ".join(sorted(g["GroupName"] for g in json.load(open(sys.argv[1]))["PlacementGroups"])))' "$TMP/pg.json"
}

# the job holds its nodes until the checks below are done ($TMP/go): a
# loaded machine must not see them suspended first
J=$(submit -N4 -p gpu -w train-[1-4] --gres=gpu:h100:8 --wrap "srun sh -c 'echo \$SLURMD_NODENAME'; while [ ! -e $TMP/go ]; do sleep 0.2; done")
wait_for 60 "job $J running" '[ "$(job_state $J)" = RUNNING ]'
R=$(sql "SELECT id FROM requests WHERE job_id=$J AND kind='resume'")
expect_eq "request $R" "$(sql "SELECT state, result, launched FROM requests WHERE id='$R'")" "done|success|4"
expect_eq "nodes, AZ, type" \
	"$(sql "SELECT group_concat(node || ':' || az || ':' || instance_type, ' ') FROM (SELECT * FROM instances WHERE request_id='$R' AND state IN ('pending', 'running') ORDER BY node)")" \
	"train-1:ap-south-1b:p5.48xlarge train-2:ap-south-1b:p5.48xlarge train-3:ap-south-1b:p5.48xlarge train-4:ap-south-1b:p5.48xlarge"
G="gpuburst-e2e-$R-ap-south-1b"

# --- what EC2 (the simulator) has: one group, four instances, 32 EFA each
awsc ec2 describe-instances --region ap-south-1 \
	--filters "Name=tag:gpuburst:request,Values=$R" "Name=instance-state-name,Values=pending,running" \
	>"$TMP/di.json" || fail "describe-instances"
expect_eq "instances in $G" "$("$PYTHON3" -c 'import json, sys
ins = [i for r in json.load(open(sys.argv[1]))["Reservations"] for i in r["Instances"]]
print(len(ins), sorted(set(i["Placement"].get("GroupName", "-") for i in ins)),
      sorted(set(i["Placement"]["AvailabilityZone"] for i in ins)))' "$TMP/di.json")" \
	"4 ['$G'] ['ap-south-1b']"
expect_eq "EFA interfaces per instance" "$("$PYTHON3" -c 'import json, sys
ins = [i for r in json.load(open(sys.argv[1]))["Reservations"] for i in r["Instances"]]
per = set()
for i in ins:
    nis = i["NetworkInterfaces"]
    cards = sorted(n["Attachment"]["NetworkCardIndex"] for n in nis)
    per.add((len([n for n in nis if n["InterfaceType"] == "efa"]), cards == list(range(32)),
             tuple(sorted(set(n["Attachment"]["DeviceIndex"] for n in nis))),
             tuple(sorted(set(n["SubnetId"] for n in nis)))))
print(sorted(per))' "$TMP/di.json")" "[(32, True, (0, 1), ('subnet-e2e-aps1b',))]"
ok "job $J: 4 x p5.48xlarge in ap-south-1b, one placement group ($G), 32 EFA interfaces each (cards 0-31)"

# --- every AZ tried had a fresh group; the first two could not hold the job
expect_eq "Singapore's group" "$(groups_of ap-southeast-1 "$R")" "gpuburst-e2e-$R-ap-southeast-1a"
expect_eq "Mumbai's groups" "$(groups_of ap-south-1 "$R")" \
	"gpuburst-e2e-$R-ap-south-1a gpuburst-e2e-$R-ap-south-1b"
expect_eq "attempts (AZ, MinCount-MaxCount, outcome)" \
	"$(sql "SELECT group_concat(az || ':' || min_count || '-' || asked || ':' || coalesce(error_code, 'ok'), ' ') FROM (SELECT * FROM attempts WHERE request_id='$R' ORDER BY id)")" \
	"ap-southeast-1a:4-4:InsufficientInstanceCapacity ap-south-1a:4-4:InsufficientInstanceCapacity ap-south-1b:4-4:ok"
expect_eq "nothing launched outside the group" \
	"$(sql "SELECT count(*) FROM instances WHERE request_id='$R' AND az != 'ap-south-1b'")" 0
expect_eq "the AZ is not dry for launches outside groups" \
	"$(sql "SELECT count(*) FROM capacity_stats WHERE region='ap-southeast-1' AND instance_type='p5.48xlarge' AND (level_n > 0 OR ice > 0)")" 0
ok "fallback: a group in ap-southeast-1a (holds 2), then ap-south-1a (AZ holds 2), then ap-south-1b; one group per AZ, one call of 4 each"

# --- Slurm ran it on the GPUs the catalog gives
for n in train-1 train-2 train-3 train-4; do
	expect_eq "$n gres" "$(node_field $n Gres)" "gpu:h100:8"
	node_field $n AvailableFeatures | tr ',' '\n' | grep -qx efa || fail "$n has no efa feature"
done
touch "$TMP/go"
wait_for 60 "job $J completed" '[ "$(job_state $J)" = COMPLETED ]'
ok "job $J completed on gpu:h100:8 nodes with the efa feature"

# --- afterwards: instances gone, reconcile deletes the groups
wait_for 60 "instances of $R terminated" \
	'[ "$(sim_instances "len([i for i in ins if i[\"tags\"].get(\"gpuburst:request\") == \"$R\" and i[\"state\"] != \"terminated\"])")" = 0 ]'
ctl reconcile >"$TMP/rec.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec.out")"
grep -q "group 3," "$TMP/rec.out" || fail "reconcile deleted not 3 groups: $(cat "$TMP/rec.out")"
for az in ap-southeast-1a ap-south-1a ap-south-1b; do
	grep -q "^group .*#gpuburst-e2e-$R-$az .* done " "$TMP/rec.out" ||
		fail "reconcile: no group action for $az: $(cat "$TMP/rec.out")"
done
expect_eq "groups left in Singapore" "$(groups_of ap-southeast-1 "$R")" ""
expect_eq "groups left in Mumbai" "$(groups_of ap-south-1 "$R")" ""
ctl reconcile >"$TMP/rec2.out" 2>&1 || fail "second reconcile: $(cat "$TMP/rec2.out")"
grep -q "^nothing to reconcile" "$TMP/rec2.out" || fail "second reconcile: $(cat "$TMP/rec2.out")"
ok "after the job: its instances terminated, reconcile deleted its 3 groups, a second pass has nothing to do"
