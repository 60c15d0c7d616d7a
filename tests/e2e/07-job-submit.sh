#!/bin/sh
# 07-job-submit.sh - scenario 7 (issue 10): job_submit/gpuburst loaded into
# the lab's slurmctld (JobSubmitPlugins=gpuburst, a copy of the built
# plugin), with the cluster's gpuburst.yaml next to slurm.conf.  A job that
# asks for a non-GPU instance type is rejected with the plugin's message,
# exactly as sbatch prints it, and nothing is resumed.  GPU jobs that name
# no partition (the default partition is the CPU one) are routed to the
# burst partition with the instance type of their GPU model as feature, and
# run on that nodeset's node: an l4 job on l4-1 (g6.xlarge), an a10g job
# with --comment gpuburst:home=ap-northeast-1 on a g5.xlarge in Tokyo (the
# plugin records the home region in AdminComment; the worker follows it).
# A CPU job is left alone.  (tests/integration/plugin-lab.sh tests every
# rule of the plugin; this one the plugin in the whole loop.)
. "${srcdir:-.}/e2e-lib.sh"
e2e_start --nodes 2 --l4 1 --job-submit

grep -q "job_submit/gpuburst: loaded $CONF: 2 nodesets" "$LAB/log/slurmctld.log" ||
	fail "the plugin did not load $CONF: $(grep job_submit "$LAB/log/slurmctld.log" | tail -3)"

# --- rejected, with the plugin's message
(cd "$LAB/jobs" && lab sbatch -C m7i.xlarge --wrap true) >"$TMP/rej.out" 2>"$TMP/rej.err"
expect_eq "sbatch exit status" "$?" 1
expect_eq "sbatch said" "$(cat "$TMP/rej.err")" \
"sbatch: error: gpuburst: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e
sbatch: error: Batch job submission failed: Invalid feature specification"
[ -s "$TMP/rej.out" ] && fail "sbatch printed: $(cat "$TMP/rej.out")"
[ "$(lab squeue -h | wc -l)" = 0 ] || fail "a job was queued: $(lab squeue)"
[ ! -f "$STATE/state.db" ] || expect_eq "requests" "$(sql "SELECT count(*) FROM requests")" 0
ok "-C m7i.xlarge rejected: $(head -n 1 "$TMP/rej.err")"

# --- a CPU job: not routed
CPU=$(submit --hold --wrap true)
expect_eq "CPU job partition" "$(job_field "$CPU" Partition)" cpu
expect_eq "CPU job features" "$(job_field "$CPU" Features)" "(null)"
lab scancel "$CPU"
ok "a CPU job stays in the default partition cpu"

# --- routed: an l4 job to the l4 nodeset
L4JOB=$(submit --gres=gpu:l4:1 --wrap 'echo "node=$SLURMD_NODENAME"')
expect_eq "l4 job partition" "$(job_field "$L4JOB" Partition)" gpu
expect_eq "l4 job features" "$(job_field "$L4JOB" Features)" g6.xlarge
wait_for 30 "job $L4JOB completed" '[ "$(job_state $L4JOB)" = COMPLETED ]'
grep -qx "node=l4-1" "$LAB/jobs/slurm-$L4JOB.out" || fail "job output: $(cat "$LAB/jobs/slurm-$L4JOB.out")"
REQ=$(sql "SELECT id FROM requests WHERE job_id=$L4JOB AND kind='resume'")
expect_eq "l4 request" "$(sql "SELECT nodeset, state, result FROM requests WHERE id='$REQ'")" "l4|done|success"
IID=$(sql "SELECT instance_id FROM instances WHERE request_id='$REQ' AND node='l4-1'")
expect_eq "l4 instance" "$(sim_instances "[[i['instance_type'], i['region']] for i in ins if i['id'] == '$IID'][0]")" '["g6.xlarge", "ap-south-1"]'
ok "--gres=gpu:l4:1 routed to partition gpu, feature g6.xlarge: ran on l4-1, a g6.xlarge in ap-south-1"

# --- routed with a home region: Tokyo
HJOB=$(submit --gres=gpu:a10g:1 --comment=gpuburst:home=ap-northeast-1 --wrap 'echo "node=$SLURMD_NODENAME"')
expect_eq "job partition" "$(job_field "$HJOB" Partition)" gpu
expect_eq "job features" "$(job_field "$HJOB" Features)" g5.xlarge
expect_eq "AdminComment" "$(job_field "$HJOB" AdminComment)" "gpuburst:home=ap-northeast-1"
wait_for 30 "job $HJOB completed" '[ "$(job_state $HJOB)" = COMPLETED ]'
NODE=$(sed -n 's/^node=//p' "$LAB/jobs/slurm-$HJOB.out")
case "$NODE" in gpu-[12]) ;; *) fail "job $HJOB ran on '$NODE'" ;; esac
REQ=$(sql "SELECT id FROM requests WHERE job_id=$HJOB AND kind='resume'")
expect_eq "instance" "$(sql "SELECT instance_type, region FROM instances WHERE request_id='$REQ' AND node='$NODE'")" "g5.xlarge|ap-northeast-1"
ok "--gres=gpu:a10g:1 --comment=gpuburst:home=ap-northeast-1: AdminComment set, ran on $NODE, a g5.xlarge in ap-northeast-1"
