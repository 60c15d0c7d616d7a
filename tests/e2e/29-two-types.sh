#!/bin/sh
# 29-two-types.sh - issue 19: a nodeset of two instance types in preference
# order, [p5e.48xlarge, p5en.48xlarge] (both 8 H200; EFA, cluster
# placement).  tests/data/cloudsim/e2e-training.yaml offers p5e.48xlarge
# nowhere and p5en.48xlarge only in Tokyo (2).  A 2-node job fills from
# the second type, in Tokyo, in one placement group; each node's record
# and its ActiveFeatures in Slurm say p5en.48xlarge (AvailableFeatures keep
# both); once its nodes are powered down they can be either type again.
# A job whose constraint names p5e.48xlarge (-C) launches only that type:
# there is none, its nodes go DOWN saying so, and nothing is launched.
. "${srcdir:-.}/e2e-lib.sh"
SCENARIO="$GB_TOP_SRCDIR/tests/data/cloudsim/e2e-training.yaml"
TRAIN_TYPES="p5e.48xlarge, p5en.48xlarge"
e2e_start --nodes 1 --train 2

expect_eq "slurm.conf features" "$(node_field train-1 AvailableFeatures)" \
	"h200,efa,p5e.48xlarge,p5en.48xlarge"

J=$(submit -N2 -p gpu -w train-[1-2] --gres=gpu:h200:8 --wrap 'srun hostname; sleep 6')
wait_for 60 "job $J running" '[ "$(job_state $J)" = RUNNING ]'
R=$(sql "SELECT id FROM requests WHERE job_id=$J AND kind='resume'")
expect_eq "request $R" "$(sql "SELECT state, result, launched FROM requests WHERE id='$R'")" "done|success|2"
expect_eq "nodes, region, type" \
	"$(sql "SELECT group_concat(node || ':' || region || ':' || instance_type, ' ') FROM (SELECT * FROM instances WHERE request_id='$R' AND state IN ('pending', 'running') ORDER BY node)")" \
	"train-1:ap-northeast-1:p5en.48xlarge train-2:ap-northeast-1:p5en.48xlarge"
expect_eq "types asked" "$(sql "SELECT group_concat(DISTINCT instance_type) FROM attempts WHERE request_id='$R'")" \
	"p5en.48xlarge"
for n in train-1 train-2; do
	expect_eq "$n ActiveFeatures" "$(node_field $n ActiveFeatures)" "h200,efa,p5en.48xlarge"
	expect_eq "$n AvailableFeatures" "$(node_field $n AvailableFeatures)" \
		"h200,efa,p5e.48xlarge,p5en.48xlarge"
done
ok "job $J: 2 x p5en.48xlarge (the second type; the first is offered nowhere) in Tokyo; Slurm's ActiveFeatures say p5en.48xlarge"

wait_for 60 "job $J completed" '[ "$(job_state $J)" = COMPLETED ]'
for n in train-1 train-2; do
	wait_for 60 "$n powered down" 'state_is '$n' POWERED_DOWN'
	wait_for 20 "$n any type again" \
		'[ "$(node_field '$n' ActiveFeatures)" = "h200,efa,p5e.48xlarge,p5en.48xlarge" ]'
done
ok "after the job: train-[1-2] powered down with both types active again"

# --- a constraint names the first type: only that one is launched
K=$(submit -N2 -p gpu -w train-[1-2] -C p5e.48xlarge --gres=gpu:h200:8 --wrap 'hostname')
for n in train-1 train-2; do
	wait_for 40 "$n DOWN" 'node_reason '$n' | grep -q "^gpuburst: (Code:NotOffered) p5e.48xlarge is not offered in"'
done
RK=$(sql "SELECT id FROM requests WHERE job_id=$K AND kind='resume'")
expect_eq "request $RK" "$(sql "SELECT state, result, launched FROM requests WHERE id='$RK'")" "failed|failed|0"
expect_eq "launches for $RK" "$(sql "SELECT count(*) FROM attempts WHERE request_id='$RK'")" 0
ok "job $K (-C p5e.48xlarge): only p5e.48xlarge was considered, none is offered, nothing launched, nodes DOWN (Code:NotOffered)"
