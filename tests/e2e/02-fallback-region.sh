#!/bin/sh
# 02-fallback-region.sh - scenario 2 (issue 10): the home region has no
# capacity.  Singapore (home) has no g5.xlarge: the job runs on an instance
# in the nearest allowed fallback region, Mumbai, after the home region
# refused.  With Mumbai empty too, the next job goes to Tokyo: Osaka is
# nearer to Singapore and has capacity, but is outside Singapore's fallback
# group, so it is never touched (no call of any kind there, no instance).
# Then a job whose home is Tokyo (AdminComment gpuburst:home=ap-northeast-1,
# as job_submit/gpuburst writes it) finds Tokyo empty and lands in Osaka,
# which is in Tokyo's group.
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 3

capacity() {	# capacity AZ N: from now on N more g5.xlarge fit in AZ
	control POST /_sim/capacity "{\"az\": \"$1\", \"instance_type\": \"g5.xlarge\", \"available\": $2}" >/dev/null ||
		fail "capacity $1"
}
# run_job NODE [SBATCH-ARGS]: a job on NODE, waited for; sets JOB, REQ, REGION
run_job() {
	_n=$1
	shift
	JOB=$(submit -w "$_n" --gres=gpu:a10g:1 "$@" --wrap 'sleep 1')
	wait_for 30 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
	REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB AND kind='resume'")
	expect_eq "request of job $JOB" "$(sql "SELECT state, result FROM requests WHERE id='$REQ'")" "done|success"
	REGION=$(sql "SELECT region FROM instances WHERE request_id='$REQ' AND node='$_n'")
}

# --- home empty: Mumbai, the nearest allowed fallback
run_job gpu-1
expect_eq "region of gpu-1" "$REGION" ap-south-1
expect_eq "home refused first" "$(sql "SELECT count(*) FROM attempts WHERE request_id='$REQ' AND region='ap-southeast-1' AND error_code='InsufficientInstanceCapacity'")" 1
ok "job $JOB: Singapore refused (InsufficientInstanceCapacity), the instance is in Mumbai, the nearest fallback"
# why: the same story in sentences, for the job and for its node
ctl why "$JOB" >"$TMP/why.out" 2>&1 || fail "why $JOB: $(cat "$TMP/why.out")"
IID=$(sql "SELECT instance_id FROM instances WHERE request_id='$REQ' AND node='gpu-1'")
grep -Eq "^Job $JOB \(.*\) is COMPLETED" "$TMP/why.out" &&
	grep -q "^Request $REQ: resume of 1 node gpu-1 (nodeset a10g, g5.xlarge, home ap-southeast-1), made .*: done\.$" "$TMP/why.out" &&
	grep -q "^Plan v1 (heuristic): regions ap-southeast-1, ap-south-1, .*, in that order; initial plan: " "$TMP/why.out" &&
	grep -q "^Call 1 .*: RunInstances of 1 g5.xlarge (on-demand) in ap-southeast-1/ap-southeast-1a was refused: InsufficientInstanceCapacity" "$TMP/why.out" &&
	grep -q "^Call 2 .*: RunInstances of 1 g5.xlarge (on-demand) in ap-south-1/ap-south-1[ab] gave 1\.$" "$TMP/why.out" &&
	grep -q "^Instance $IID in ap-south-1[ab] for gpu-1: " "$TMP/why.out" &&
	grep -q "^Now: every node got its instance (1)" "$TMP/why.out" ||
	fail "why $JOB said: $(cat "$TMP/why.out")"
ctl why gpu-1 >"$TMP/whyn.out" 2>&1 || fail "why gpu-1: $(cat "$TMP/whyn.out")"
grep -q "^Slurm says node gpu-1 is " "$TMP/whyn.out" &&
	grep -q "^Node gpu-1 belongs to nodeset a10g (g5.xlarge, home region ap-southeast-1, partition " "$TMP/whyn.out" &&
	grep -q "^Request $REQ: resume of 1 node gpu-1 " "$TMP/whyn.out" ||
	fail "why gpu-1 said: $(cat "$TMP/whyn.out")"
ok "why $JOB and why gpu-1: the refusal in Singapore, the instance in Mumbai, in sentences"

# --- home and Mumbai empty: Tokyo, not the nearer Osaka.  gpu-1's Mumbai
# instance goes first: its termination (SuspendTime) would give its slot
# back to Mumbai after the capacity below is set.
IID1=$(sql "SELECT instance_id FROM instances WHERE node='gpu-1' AND region='ap-south-1'")
wait_for 60 "gpu-1's Mumbai instance terminated" '[ "$(sim_state "$IID1")" = terminated ]'
capacity ap-south-1a 0
capacity ap-south-1b 0
run_job gpu-2
expect_eq "region of gpu-2" "$REGION" ap-northeast-1
# Singapore refused a moment ago: capacity memory puts it last (cooling),
# and Tokyo filled the node before it came to that
expect_eq "regions tried, in order" "$(regions_tried "$REQ")" "ap-south-1 ap-northeast-1"
expect_eq "Mumbai refused" "$(sql "SELECT count(*) > 0 FROM attempts WHERE request_id='$REQ' AND region='ap-south-1' AND error_code='InsufficientInstanceCapacity'")" 1
ok "job $JOB: Mumbai refused (Singapore, refused just before, is cooling), the instance is in Tokyo"

expect_eq "no attempt in Osaka" "$(sql "SELECT count(*) FROM attempts WHERE region='ap-northeast-3'")" 0
expect_eq "no instance in Osaka" "$(sim_instances "len([i for i in ins if i['region'] == 'ap-northeast-3'])")" 0
grep -q 'region=ap-northeast-3 ' "$TMP/sim.log" && fail "a call reached Osaka: $(grep 'region=ap-northeast-3 ' "$TMP/sim.log" | head -3)"
grep -q 'call action=.* region=ap-south-1 ' "$TMP/sim.log" || fail "the simulator's log has no calls (wrong log?)"
ok "Osaka (nearer than Tokyo, with capacity, outside the group) was never called"

# --- a Tokyo job: its own group, Osaka allowed there.  gpu-2's Tokyo
# instance must be gone first: its termination (SuspendTime) gives its slot
# back to Tokyo, which a job released before then could take.
IID2=$(sql "SELECT instance_id FROM instances WHERE node='gpu-2' AND region='ap-northeast-1'")
wait_for 60 "gpu-2's Tokyo instance terminated" '[ "$(sim_state "$IID2")" = terminated ]'
capacity ap-northeast-1a 0
JOB=$(submit --hold -w gpu-3 --gres=gpu:a10g:1 --wrap 'sleep 1')
lab scontrol update jobid="$JOB" admincomment="gpuburst:home=ap-northeast-1" || fail "admincomment"
lab scontrol release "$JOB" || fail "release"
wait_for 30 "job $JOB completed" '[ "$(job_state $JOB)" = COMPLETED ]'
REQ=$(sql "SELECT id FROM requests WHERE job_id=$JOB AND kind='resume'")
expect_eq "intent event" "$(sql "SELECT detail FROM events WHERE request_id='$REQ' AND kind='intent'")" \
	"{\"job\":$JOB,\"home_region\":\"ap-northeast-1\"}"
expect_eq "region of gpu-3" "$(sql "SELECT region FROM instances WHERE request_id='$REQ' AND node='gpu-3'")" ap-northeast-3
expect_eq "regions tried" "$(regions_tried "$REQ")" "ap-northeast-1 ap-northeast-3"
ok "job $JOB (home ap-northeast-1 in its AdminComment): Tokyo refused, the instance is in Osaka, Tokyo's fallback"
