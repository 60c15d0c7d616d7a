#!/bin/sh
# 19-nodes-resume.sh - `gpuburstctl nodes resume NODES`, the explicit way back
# of a DOWN burst node: power_down_force (idle~), after which the next job
# resumes it; a node in no nodeset (site-1) is refused with nothing done,
# even in a list with burst nodes; a node that is not DOWN is left alone.
# A DOWN node an administrator tried `scontrol update state=resume` on is
# brought back the same way.
SUSPEND_TIME=600
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --site --nodes 2

lab scontrol update nodename=gpu-1 state=down reason="gpuburst: (Code:UnauthorizedOperation) not authorized req=0123456789abcdef" ||
	fail "gpu-1 down"
lab scontrol update nodename=site-1 state=down reason="site maintenance" || fail "site-1 down"

ctl nodes resume 'gpu-1,site-1' >"$TMP/mixed.out" 2>"$TMP/mixed.err"
expect_eq "mixed list exit" "$?" 10
grep -q "1 node in no nodeset of .* (site-1): not gpuburst's, nothing done" "$TMP/mixed.err" ||
	fail "mixed: $(cat "$TMP/mixed.err")"
state_is gpu-1 "^DOWN" || fail "gpu-1 changed by a refused command: $(node_field gpu-1 State)"
state_is site-1 "^DOWN" || fail "site-1 changed: $(node_field site-1 State)"
ok "a list with a node gpuburst does not own: exit 10, nothing done"

ctl --json nodes resume 'gpu-[1-2]' --reason "IAM fixed" >"$TMP/r.json" 2>"$TMP/r.err" ||
	fail "nodes resume: $(cat "$TMP/r.json" "$TMP/r.err")"
expect_eq "actions" "$(jq_py "$TMP/r.json" "[(n['node'], n['action']) for n in d['nodes']]")" \
	'[["gpu-1", "power_down_force"], ["gpu-2", "none: not DOWN"]]'
wait_for 30 "gpu-1 idle~" 'state_is gpu-1 "^IDLE\+CLOUD\+POWERED_DOWN$"'
sql "SELECT detail FROM events WHERE kind='nodes_resume'" | grep -q "by=root uid=0 nodes=gpu-\[1-2\] down=1 failed=0" ||
	fail "event: $(sql "SELECT detail FROM events WHERE kind='nodes_resume'")"
ok "gpu-1 back to idle~ (power_down_force), gpu-2 (not DOWN) left alone, recorded"

JOB=$(submit -w gpu-1 --gres=gpu:a10g:1 --wrap 'true')
wait_for 60 "job $JOB ran" '[ -n "$(sql "SELECT instance_id FROM instances WHERE node='"'gpu-1'"'")" ]'
ok "the next job resumed gpu-1 (instance $(instance_of gpu-1))"

# The intuitive scontrol resume on a DOWN cloud node
lab scontrol update nodename=gpu-2 state=down reason="test" || fail "gpu-2 down"
lab scontrol update nodename=gpu-2 state=resume || fail "scontrol resume"
sleep 2
echo "# gpu-2 after scontrol state=resume: $(node_field gpu-2 State)"
ctl nodes resume gpu-2 >"$TMP/g2.out" 2>"$TMP/g2.err" || fail "gpu-2: $(cat "$TMP/g2.out" "$TMP/g2.err")"
wait_for 30 "gpu-2 idle~" 'state_is gpu-2 "^IDLE\+CLOUD\+POWERED_DOWN$"'
ok "gpu-2 after scontrol state=resume: $(cat "$TMP/g2.out" | sed -n 2p | tr -s ' ')"

ctl nodes resume site-1 >/dev/null 2>"$TMP/s.err"
expect_eq "site-1 alone" "$?" 10
state_is site-1 "^DOWN" || fail "site-1 changed: $(node_field site-1 State)"
ok "site-1 alone: refused (10), still DOWN"
exit 0
