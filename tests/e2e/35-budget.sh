#!/bin/sh
# 35-budget.sh - money (issue 22 part 2): root has a 10-dollar monthly
# budget (policy.budgets) and g5.xlarge costs 480 USD an hour in Singapore
# (the price file <state_dir>/prices), so a 1-node job with a 1-minute limit
# is estimated at 8.00 USD.  The first such job passes (nothing spent):
# job_submit/gpuburst writes gpuburst:cost=8.00/8.00 into its AdminComment,
# and it runs.  Its instance's time is spend: the worker's pass writes the
# spend summary <state_dir>/spend, which the plugin re-reads (every 10 s).
# Once more than 2 USD is spent, the second such job would go over the
# budget: it is held at submit, sbatch says which budget, what is spent and
# the estimate, its AdminComment names the budget; reconcile records it
# with rule "budget" and approvals shows its cost.  gpuburstctl cost --by
# user equals the instance's seconds x 480/3600 once it is terminated.
APPROVAL_THRESHOLD=50
SUSPEND_TIME=20
POLICY_EXTRA="  budgets:
    lab-root: {user: root, monthly: 10}"
. "${srcdir:-.}/e2e-lib.sh"
PRICE=480
mkdir -p "$STATE"
printf '%s\n' "gpuburst-prices 1" "refreshed 2026-12-01T00:00:00Z" "source e2e" \
	"ap-southeast-1 g5.xlarge on-demand $PRICE" >"$STATE/prices"
e2e_start --nodes 2 --job-submit
control POST /_sim/capacity '{"az": "ap-southeast-1a", "instance_type": "g5.xlarge", "available": 2}' >/dev/null ||
	fail "capacity"

reason() { lab squeue -h -j "$1" -o '%r' 2>/dev/null; }
submit_err() {	# submit_err SBATCH-ARGS...: the job id; sbatch's stderr in $TMP/sbatch.err
	(cd "$LAB/jobs" && lab sbatch --parsable "$@") 2>"$TMP/sbatch.err" || fail "sbatch $*"
}
spent() {	# what the spend summary says root spent (0: nothing yet)
	awk '$1 == "user" && $2 == "root" { print $3; f = 1 } END { if (!f) print 0 }' \
		"$STATE/spend" 2>/dev/null || echo 0
}

# --- nothing spent: 8.00 fits in 10.00, the job runs
J1=$(submit_err --gres=gpu:a10g:1 -N 1 -t 1 -J first --wrap 'sleep 15')
expect_eq "sbatch said" "$(cat "$TMP/sbatch.err")" ""
expect_eq "AdminComment" "$(job_field "$J1" AdminComment)" "gpuburst:cost=8.00/8.00"
wait_for 40 "job $J1 running" '[ "$(job_state $J1)" = RUNNING ]'
NODE=$(lab squeue -h -j "$J1" -o %N)
IID=$(sql "SELECT instance_id FROM instances WHERE node='$NODE' AND terminated_at = 0")
[ -n "$IID" ] || fail "no live instance of $NODE"
ok "job $J1 (1 node x 1 min x $PRICE USD/h = 8.00 USD) passed root's 10.00 USD budget and runs on $NODE ($IID)"

# --- spend: the summary (the worker's pass, or reconcile) says more than 2.00
wait_for 60 "more than 2 USD spent" \
	'ctl reconcile --cheap >/dev/null 2>&1; awk "BEGIN { exit !($(spent) > 2) }"'
expect_eq "summary month" "$(sed -n 3p "$STATE/spend")" "source $(date -u +%Y-%m)"
# the plugin looks at the summary every 10 s
sleep 11

J2=$(submit_err --gres=gpu:a10g:1 -N 1 -t 1 -J second --wrap true)
grep -Eq "^sbatch: gpuburst: budget 'lab-root' \(user root\): [0-9]+\.[0-9]{2} of 10\.00 USD spent in $(date -u +%Y-%m), this job ~8\.00 USD: it is held until an administrator approves it \(gpuburstctl approvals; gpuburstctl why JOB tells its story\)$" \
	"$TMP/sbatch.err" || fail "sbatch said: $(cat "$TMP/sbatch.err")"
expect_eq "job $J2" "$(job_state "$J2") $(reason "$J2")" "PENDING JobHeldUser"
expect_eq "AdminComment" "$(job_field "$J2" AdminComment)" \
	"gpuburst:cost=8.00/8.00 gpuburst:approval=pending/1 gpuburst:budget=lab-root"
ok "job $J2 would go over the budget: held at submit, sbatch named the budget, the spend and the estimate"

ctl reconcile --cheap >"$TMP/rec.out" 2>&1 || fail "reconcile: $(cat "$TMP/rec.out")"
REQ=$(sql "SELECT id FROM requests WHERE job_id=$J2 AND nodes IS NULL")
[ -n "$REQ" ] || fail "no request for job $J2: $(cat "$TMP/rec.out")"
expect_eq "approval" "$(sql "SELECT a.state, a.why, json_extract(r.input, '$.cost'), json_extract(r.input, '$.budget') FROM approvals a JOIN requests r ON r.id = a.request_id WHERE r.id='$REQ'")" \
	"pending|job $J2 (~8.00 USD) would go over budget 'lab-root' (held at submit)|8.0|lab-root"
ctl approvals >"$TMP/appr.out" || fail "approvals"
grep -Eq "^$REQ +$J2 +root +.* +8\.00 +- +budget +job $J2" "$TMP/appr.out" ||
	fail "approvals: $(cat "$TMP/appr.out")"
wait_held 10 "$J2"
ok "reconcile recorded job $J2 with rule budget and its estimate; approvals shows COST 8.00; the hold is an operator's"
ctl deny "$REQ" --reason "over budget" --cancel >"$TMP/deny.out" 2>&1 ||
	fail "deny --cancel: $(cat "$TMP/deny.out")"
grep -q "job $J2 cancelled" "$TMP/deny.out" || fail "deny --cancel said: $(cat "$TMP/deny.out")"

# --- cost: the instance's seconds x price, once it is terminated
wait_for 40 "job $J1 completed" '[ "$(job_state $J1)" = COMPLETED ]'
wait_for 60 "record of $IID closed" '[ "$(record_state $IID)" = terminated ]'
SECS=$(sql "SELECT terminated_at - launched_at FROM instances WHERE instance_id='$IID'")
ctl --json cost --by user >"$TMP/cost.json" 2>"$TMP/cost.err" || fail "cost: $(cat "$TMP/cost.err")"
expect_eq "cost by user" "$("$PYTHON3" -c 'import json, sys
d = json.load(open(sys.argv[1])); r = d["rows"]; want = float(sys.argv[2]) * float(sys.argv[3]) / 3600
print(len(r), r[0]["user"], r[0]["instances"], abs(r[0]["usd"] - want) < 1e-6, abs(d["total"]["usd"] - want) < 1e-6)' \
	"$TMP/cost.json" "$SECS" "$PRICE")" "1 root 1 True True"
expect_eq "instances launched in all" "$(sim_instances "len(ins)")" 1
ok "gpuburstctl cost --by user: root's one instance, $SECS s x $PRICE USD/h; the held job launched nothing"
