#!/bin/sh
# 08-locality.sh - scenario 8 (issue 10): a 4-node job needs its nodes in
# one region (locality: region, the default).  Singapore (home) has room
# for one, Mumbai for four (two AZs of two), Tokyo for four: the job gets
# all four in Mumbai, the nearest region that holds it, and whatever other regions gave is rolled back
# (terminated at once, recorded with the reason), never kept as a split.
# A second 4-node job then finds room for 1 in Singapore, 1 + 1 in Mumbai
# and 2 in Tokyo, 5 in total but at most 2 in a region: it gets none -
# every instance launched for it is terminated, its nodes go DOWN with
# "(Code:Locality) ...", Slurm requeues it, and the first job's instances
# are untouched.
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 8

capacity() {	# capacity AZ N: from now on N more g5.xlarge fit in AZ
	control POST /_sim/capacity "{\"az\": \"$1\", \"instance_type\": \"g5.xlarge\", \"available\": $2}" >/dev/null ||
		fail "capacity $1"
}
live_regions() {	# live_regions REQ: the regions of REQ's live instances, one each
	sim_instances "sorted(set(i['region'] for i in ins if i['tags'].get('gpuburst:request') == '$1' and i['state'] in ('pending', 'running')))"
}
capacity ap-southeast-1a 1

# --- all four in one region
A=$(submit -N4 -w gpu-[1-4] --gres=gpu:a10g:1 --wrap 'srun sh -c "echo \$SLURMD_NODENAME"; sleep 300')
wait_for 40 "job $A running" '[ "$(job_state $A)" = RUNNING ]'
RA=$(sql "SELECT id FROM requests WHERE job_id=$A AND kind='resume'")
expect_eq "request $RA" "$(sql "SELECT state, result, launched FROM requests WHERE id='$RA'")" "done|success|4"
REGIONS=$(live_regions "$RA")
# Mumbai is the nearest region that holds the job (across its two AZs)
expect_eq "job $A's region" "$REGIONS" '["ap-south-1"]'
REGION=$(echo "$REGIONS" | tr -d '[]" ')
expect_eq "nodes and regions" "$(sql "SELECT group_concat(node || ':' || region, ' ') FROM (SELECT node, region FROM instances WHERE request_id='$RA' AND state IN ('pending', 'running') ORDER BY node)")" \
	"gpu-1:$REGION gpu-2:$REGION gpu-3:$REGION gpu-4:$REGION"
ROLLED=$(sql "SELECT count(*) FROM instances WHERE request_id='$RA' AND region != '$REGION'")
[ "$ROLLED" -ge 1 ] || fail "no other region was tried (the test expects Singapore, home, first)"
expect_eq "other regions' instances rolled back" "$(sql "SELECT count(*) FROM instances WHERE request_id='$RA' AND region != '$REGION' AND state='terminated' AND (reason LIKE 'locality: this region gave % of the job''s 4 nodes' OR reason LIKE 'extra:%')")" "$ROLLED"
expect_eq "regions tried" "$(regions_tried "$RA" | cut -d' ' -f1)" ap-southeast-1
ok "job $A: all four nodes in $REGION; $ROLLED instance(s) elsewhere rolled back (tried: $(regions_tried "$RA"))"

# --- 1 + 2 + 2, at most 2 in a region: none
wait_for 10 "rolled-back instances gone" '[ "$(sim_instances "len([i for i in ins if i[\"tags\"].get(\"gpuburst:request\") == \"$RA\" and i[\"state\"] == \"shutting-down\"])")" = 0 ]'
capacity ap-southeast-1a 1
capacity ap-south-1a 1
capacity ap-south-1b 1
capacity ap-northeast-1a 2
B=$(submit -N4 -w gpu-[5-8] --gres=gpu:a10g:1 --wrap 'srun hostname')
for n in gpu-5 gpu-6 gpu-7 gpu-8; do
	wait_for 30 "$n DOWN" 'node_reason '$n' | grep -q "^gpuburst: (Code:Locality) no region could hold the 4-node job of g5.xlarge in .* req=[0-9a-f]\{16\}$"'
done
RB=$(sql "SELECT id FROM requests WHERE job_id=$B AND kind='resume'")
expect_eq "request $RB" "$(sql "SELECT state, result, launched FROM requests WHERE id='$RB'")" "failed|failed|0"
wait_for 15 "job $B requeued" '[ "$(job_state $B)" = PENDING ]'
wait_for 10 "no live instance of $RB" '[ "$(live_regions "$RB")" = "[]" ]'
expect_eq "records of $RB all closed" "$(sql "SELECT count(*) FROM instances WHERE request_id='$RB' AND state IN ('pending', 'running')")" 0
N_B=$(sql "SELECT count(*) FROM instances WHERE request_id='$RB'")
[ "$N_B" -ge 1 ] || fail "nothing was launched for job $B (the test expects partial groups rolled back)"
expect_eq "job $A untouched" "$(live_regions "$RA")" "$REGIONS"
expect_eq "job $A" "$(job_state "$A")" RUNNING
ok "job $B: no region could hold 4; $N_B instance(s) launched and rolled back, gpu-[5-8] DOWN (Code:Locality), job requeued; job $A untouched"
