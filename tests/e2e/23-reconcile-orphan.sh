#!/bin/sh
# 23-reconcile-orphan.sh - an instance tagged gpuburst:cluster=e2e that no
# record and no node explains is terminated once older than orphan_timeout
# (and only then); our own instance backing a running job and another
# cluster's instance are left alone; --dry-run only reports.
# long enough that the first dry run comes well before it, also on a
# loaded machine under the sanitizers (4 s once was not, nor 15 s with two
# AWS CLI runs between the launch and the dry run, at load 8)
ORPHAN_TIMEOUT=20s
. "${srcdir:-.}/e2e-lib.sh"
e2e_start

JOB=$(submit --gres=gpu:a10g:1 --wrap 'sleep 300')
wait_for 30 "job $JOB running" '[ "$(job_state $JOB)" = RUNNING ]'
OURS=$(instance_of "$(lab squeue -h -j "$JOB" -o %N)")

run() {	# run CLUSTER NODE: prints the new instance's id
	REGION=ap-northeast-1 awsc ec2 run-instances --image-id ami-0e2e0000000000003 \
		--instance-type g5.xlarge --count 1 --tag-specifications \
		"ResourceType=instance,Tags=[{Key=gpuburst:cluster,Value=$1},{Key=gpuburst:node,Value=$2},{Key=Name,Value=$2}]" \
		>"$TMP/run.json" 2>"$TMP/run.err" || fail "run-instances: $(cat "$TMP/run.err")"
	jq_py "$TMP/run.json" "d['Instances'][0]['InstanceId']"
}
# the other cluster's first: between the orphan's launch and the first dry
# run, nothing but that dry run
OTHER=$(run other-cluster gpu-4)
T0=$(date +%s)
ORPHAN=$(run e2e gpu-4)
# launched by then: the AWS CLI itself takes seconds on a loaded machine,
# so the orphan's age counts from here (T0 bounds it from the other side)
T1=$(date +%s)

ctl --json reconcile --dry-run >"$TMP/d1.json" 2>"$TMP/d1.err" || fail "dry run: $(cat "$TMP/d1.err")"
expect_eq "too young to be an orphan" "$(jq_py "$TMP/d1.json" "[a for a in d['actions'] if a['action'] == 'orphan']")" "[]"

[ $(($(date +%s) - T0)) -lt 20 ] || fail "the first dry run came $(($(date +%s) - T0)) s after the launch: too late to tell"
wait_for 40 "the orphan 20 s old" '[ $(date +%s) -gt $((T1 + 23)) ]'
ctl --json reconcile --dry-run >"$TMP/d2.json" 2>"$TMP/d2.err" || fail "dry run: $(cat "$TMP/d2.err")"
expect_eq "dry run" "$(jq_py "$TMP/d2.json" "[(a['action'], a['target'], a['done']) for a in d['actions']]")" \
	"[[\"orphan\", \"ap-northeast-1#$ORPHAN\", false]]"
expect_eq "dry run terminated nothing" "$(sim_state "$ORPHAN")" running
ok "the orphan $ORPHAN is reported only once older than orphan_timeout; --dry-run does nothing"

ctl reconcile >"$TMP/r.out" 2>"$TMP/r.err" || fail "reconcile: $(cat "$TMP/r.out" "$TMP/r.err")"
grep -q "^orphan .*$ORPHAN .*done" "$TMP/r.out" || fail "report: $(cat "$TMP/r.out")"
wait_for 10 "orphan terminated" 'sim_state $ORPHAN | grep -Eq "shutting-down|terminated"'
expect_eq "our job's instance" "$(sim_state "$OURS")" running
expect_eq "the other cluster's instance" "$(sim_state "$OTHER")" running
expect_eq "job" "$(job_state "$JOB")" RUNNING
expect_eq "event" "$(sql "SELECT json_extract(detail, '\$.target') FROM events WHERE kind='reconcile' AND json_extract(detail, '\$.action')='orphan'")" "ap-northeast-1#$ORPHAN"
grep -q "reconcile action=orphan target=ap-northeast-1#$ORPHAN" "$TMP/gpuburst.log" || fail "not logged"
ok "reconcile terminated the orphan (logged, recorded); $OURS and $OTHER untouched"
