#!/bin/sh
# 12-consistency.sh - issue 17: EC2's eventual consistency on.  The
# simulator hides every fresh instance from the calls after RunInstances
# for 2 s (InvalidInstanceID.NotFound to DescribeInstances, CreateTags and
# TerminateInstances) and describes it without its private address for
# 3 s.  A 3-node job bursts with the default strategy: Singapore (home)
# has room for one, Mumbai for four, so the one Singapore instance is
# rolled back (locality: region) right after its launch, while it is still
# invisible.  The job runs on three instances in Mumbai, every node is
# named (CreateTags; the boot script waits for the gpuburst:node tag),
# no instance outside the nodes stays alive, and each node's NodeAddr is
# its instance's private address.  Reconcile, right after, finds nothing
# lost and no orphan.
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 3

capacity() {	# capacity AZ N: from now on N more g5.xlarge fit in AZ
	control POST /_sim/capacity "{\"az\": \"$1\", \"instance_type\": \"g5.xlarge\", \"available\": $2}" >/dev/null ||
		fail "capacity $1"
}
capacity ap-southeast-1a 1
capacity ap-south-1a 2
capacity ap-south-1b 2
expect_eq "consistency on" "$(control POST /_sim/consistency '{"invisible": 2, "no_private_ip": 3}')" \
	'{"invisible":2.0,"no_private_ip":3.0}'

JOB=$(submit -N3 -w gpu-[1-3] --gres=gpu:a10g:1 --wrap 'srun sh -c "echo \$SLURMD_NODENAME"; sleep 15')
wait_for 60 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB AND kind='resume'")
[ -n "$REQ" ] || fail "no resume request of job $JOB"
expect_eq "request $REQ" "$(sql "SELECT state, result, launched FROM requests WHERE id='$REQ'")" "done|success|3"
expect_eq "strategy" "$(sql "SELECT detail FROM events WHERE request_id='$REQ' AND kind='candidates'" | grep -o 'strategy=[a-z_]*')" \
	"strategy=default"
ok "job $JOB: request $REQ filled its 3 nodes with the default strategy, consistency on"

# the fresh ids were retried, not given up on
grep -Eq "(terminate|tag)_retry req=$REQ .*code=InvalidInstanceID.NotFound" "$TMP/gpuburst.log" ||
	fail "no InvalidInstanceID.NotFound retry for $REQ in the log (the test expects the roll-back or the tags to meet a fresh id)"
sql "SELECT detail FROM events WHERE request_id='$REQ' AND kind IN ('terminate', 'tag')" | grep -q 'failed' &&
	fail "a terminate or tag failed: $(sql "SELECT kind, detail FROM events WHERE request_id='$REQ' AND kind IN ('terminate', 'tag')")"
ok "CreateTags/TerminateInstances met InvalidInstanceID.NotFound and retried until the ids showed"

# no extra or rolled-back instance stays alive; every live one is a node's
wait_for 20 "only the nodes' instances alive" \
	'[ "$(sim_instances "len([i for i in ins if i[\"tags\"].get(\"gpuburst:request\") == \"$REQ\" and i[\"state\"] in (\"pending\", \"running\")])")" = 3 ]'
expect_eq "live instances per node (cloud)" \
	"$(sim_instances "sorted(i['tags'].get('gpuburst:node', '?') for i in ins if i['tags'].get('gpuburst:request') == '$REQ' and i['state'] in ('pending', 'running'))")" \
	'["gpu-1", "gpu-2", "gpu-3"]'
expect_eq "live records without a node" \
	"$(sql "SELECT count(*) FROM instances WHERE request_id='$REQ' AND node IS NULL AND state IN ('pending', 'running', 'terminating')")" 0
expect_eq "live records" \
	"$(sql "SELECT group_concat(node, ' ') FROM (SELECT node FROM instances WHERE request_id='$REQ' AND state IN ('pending', 'running') ORDER BY node)")" \
	"gpu-1 gpu-2 gpu-3"
OTHER=$(sql "SELECT count(*) FROM instances WHERE request_id='$REQ' AND state='terminated'")
ok "0 extras alive: one live instance per node, $OTHER other instance(s) terminated"

for n in gpu-1 gpu-2 gpu-3; do
	IID=$(sql "SELECT instance_id FROM instances WHERE request_id='$REQ' AND node='$n' AND state IN ('pending', 'running')")
	ADDR=$(sim_instances "[i['private_ip'] for i in ins if i['id'] == '$IID'][0]")
	[ -n "$ADDR" ] || fail "$n: instance $IID has no address in the simulator"
	expect_eq "record address of $n" "$(sql "SELECT private_ip FROM instances WHERE instance_id='$IID'")" "$ADDR"
	expect_addr "NodeAddr of $n" "$(node_field "$n" NodeAddr)" "$ADDR"
done
ok "every node's NodeAddr is its instance's private address"

ctl --json reconcile --dry-run >"$TMP/dry.json" 2>"$TMP/dry.err" || fail "reconcile dry run: $(cat "$TMP/dry.err")"
expect_eq "reconcile: nothing lost, no orphan" \
	"$(jq_py "$TMP/dry.json" "[a['action'] for a in d['actions'] if a['action'] in ('lost', 'orphan')]")" '[]'
ok "reconcile right after: no instance taken for lost or orphaned"

wait_for 60 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
ok "job $JOB completed"
