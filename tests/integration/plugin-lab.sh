#!/bin/bash
# plugin-lab.sh - job_submit/gpuburst inside a real slurmctld (the lab):
# GPU jobs routed (partition + features), the home region recorded in
# AdminComment, policy rejections exactly as sbatch prints them, a job
# over the approval threshold held at submit, job_modify() refusing updates, and `scontrol
# reconfigure` reloading the YAML (a broken file keeps the old one, said
# once) and the catalog file of `gpuburstctl catalog refresh` (when only
# it changed).  Config: tests/data/plugin/gpuburst.yaml, next to
# slurm.conf, with state_dir in the test's directory.
set -u
. "$GB_TOP_SRCDIR/tests/integration/plugin-lib.sh"
plugin_lab_require
plugin_lab_init
unset GPUBURST_CONF GPUBURST_ENV
yaml=$LAB/etc/gpuburst.yaml
cp "$GB_TOP_SRCDIR/tests/data/plugin/gpuburst.yaml" "$yaml"
mkdir "$T/state"
echo "state_dir: $T/state" >> "$yaml"
catalog=$T/state/catalog
plugin_lab_start > "$T/start.out" 2>&1 || {
	cat "$T/start.out"; tail -20 "$LAB/log/slurmctld.log"; exit 1; }
log=$LAB/log/slurmctld.log
n=0

# submit ARGS...: a held batch job; sets rc, out, err, job
submit() {
	n=$((n + 1))
	lab sbatch --hold --wrap true "$@" > "$T/out" 2> "$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	job=$(sed -n 's/^Submitted batch job //p' "$T/out")
}

# accepted DESC [KEY=WANT...]: the last job was accepted silently, with these fields
accepted() {
	local desc=$1
	shift
	if [ "$rc" != 0 ] || [ -z "$job" ] || [ -n "$err" ]; then
		bad "$desc: rc=$rc stdout='$out' stderr='$err'"
		return
	fi
	job_fields_are "$desc" "$job" "$@"
}

# rejected DESC LINE1 LINE2: sbatch failed and printed exactly these lines
rejected() {
	local want
	want=$(printf '%s\n%s' "$2" "$3")
	[ "$rc" = 1 ] || bad "$1: rc=$rc, want 1"
	[ -z "$out" ] || bad "$1: stdout '$out'"
	[ "$err" = "$want" ] || bad "$1: sbatch printed:
$err
want:
$want"
}

# --- routed and annotated
grep -q "job_submit/gpuburst: loaded $yaml: 4 nodesets, burst partitions gpuburst, tokyo, GPU jobs without a partition routed" "$log" ||
	bad "no 'loaded' line for $yaml in slurmctld.log"
submit --gres=gpu:a10g:1
accepted "--gres=gpu:a10g:1" Partition=gpuburst "Features=g5.xlarge|g5.12xlarge" "AdminComment="
routed=$job
submit --gpus-per-node=l40s:1 --comment=gpuburst:home=ap-northeast-1
accepted "--gpus-per-node=l40s:1 with a home" Partition=tokyo Features=g6e.xlarge \
	AdminComment=gpuburst:home=ap-northeast-1 Comment=gpuburst:home=ap-northeast-1
submit --gpus=a10g:8 -N 2
accepted "--gpus=a10g:8 -N 2 (4 per node)" Partition=gpuburst Features=g5.12xlarge
submit --gpus=1
accepted "--gpus=1 (any model)" Partition=gpuburst,tokyo "Features=(null)"
submit -p gpuburst -C g6.xlarge --gres=gpu:1
accepted "-p gpuburst -C g6.xlarge" Partition=gpuburst Features=g6.xlarge
submit -p cpu
accepted "a CPU job" Partition=cpu "Features=(null)" "AdminComment="
submit -p cpu --comment="nightly gpuburst:home=ap-southeast-1"
accepted "a CPU job with a home" Partition=cpu AdminComment=gpuburst:home=ap-southeast-1

# --- what policy forbids, as sbatch prints it
submit -C m7i.xlarge
rejected "-C m7i.xlarge" \
	"sbatch: error: gpuburst: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e" \
	"sbatch: error: Batch job submission failed: Invalid feature specification"
submit --gres=gpu:1 --comment=gpuburst:home=eu-west-1
rejected "home region eu-west-1" \
	"sbatch: error: gpuburst: home region eu-west-1 is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" \
	"sbatch: error: Batch job submission failed: Access/permission denied"
submit --gres=gpu:a10g:8
rejected "--gres=gpu:a10g:8" \
	"sbatch: error: gpuburst: this job asks for 8 a10g GPUs per node, more than any burst nodeset has: at most 4 (g5.12xlarge)" \
	"sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification"
submit --gpus=100
rejected "--gpus=100" \
	"sbatch: error: gpuburst: this job asks for 100 GPUs, more than any burst nodeset can give: at most 14 in partition gpuburst" \
	"sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification"
submit --gres=gpu:h100:1
rejected "--gres=gpu:h100:1" \
	"sbatch: error: gpuburst: no burst nodeset has GPU model h100: there are a10g (g5.xlarge), a10g (g5.12xlarge), l4 (g6.xlarge), l40s (g6e.xlarge)" \
	"sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification"
submit -p gpuburst -N 7 --gres=gpu:a10g:1
rejected "-N 7" \
	"sbatch: error: gpuburst: this job asks for 7 nodes, more than the burst nodesets have: at most 6 in partition gpuburst" \
	"sbatch: error: Batch job submission failed: Node count specification invalid"

# --- over the approval threshold (2 in this file): held at submit
# (priority 0, which slurmctld makes a user hold, JobHeldUser, until
# gpuburstctl reconcile records it: e2e 34), the token in AdminComment
n=$((n + 1))
lab sbatch --gres=gpu:a10g:1 -N 3 --wrap true > "$T/out" 2> "$T/err"
rc=$?
err=$(cat "$T/err")
big=$(sed -n 's/^Submitted batch job //p' "$T/out")
[ "$rc" = 0 ] && [ -n "$big" ] || bad "-N 3: rc=$rc stdout='$(cat "$T/out")'"
[ "$err" = "sbatch: gpuburst: this job needs 3 cloud nodes, more than the approval threshold of 2 (dev): it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)" ] ||
	bad "-N 3: sbatch printed '$err'"
[ "$(lab squeue -h -j "$big" -o '%T %r')" = "PENDING JobHeldUser" ] ||
	bad "-N 3: squeue says '$(lab squeue -h -j "$big" -o '%T %r')'"
job_fields_are "-N 3" "$big" Priority=0 AdminComment=gpuburst:approval=pending/3
lab scancel "$big"

# --- job_modify(): the same rules for `scontrol update` (before 23.02
# scontrol shows only the code: modify_error)
update() {	# WANT_RC WANT_STDERR ARGS...
	local want_rc=$1 want_err=$2 got
	shift 2
	n=$((n + 1))
	lab scontrol update "job=$routed" "$@" > "$T/out" 2> "$T/err"
	got=$?
	[ "$got" = "$want_rc" ] || bad "update $*: rc=$got, want $want_rc"
	[ "$(cat "$T/err")" = "$want_err" ] || bad "update $*: stderr '$(cat "$T/err")', want '$want_err'"
}
update 1 "$(modify_error "gpuburst: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e" \
	"Invalid feature specification for job $routed")" features=m7i.xlarge
update 1 "$(modify_error "gpuburst: this job asks for 64 a10g GPUs per node, more than any burst nodeset has: at most 4 (g5.12xlarge)" \
	"Invalid generic resource (gres) specification for job $routed")" gres=gpu:a10g:64
update 1 "$(modify_error "gpuburst: home region us-east-1 is not in any fallback group: allowed home regions are ap-southeast-1, ap-northeast-1, ap-northeast-3" \
	"Access/permission denied for job $routed")" comment=gpuburst:home=us-east-1
[ "$(job_field "$routed" Features)" = "g5.xlarge|g5.12xlarge" ] || bad "a refused update changed Features"
[ "$(job_field "$routed" TresPerNode)" = "$(gres_tres gpu:a10g:1)" ] || bad "a refused update changed TresPerNode"
grep -q "job_submit/gpuburst: refused update of job $routed of uid 0: gpuburst: instance type m7i.xlarge is not allowed" "$log" ||
	bad "no log line for the refused update"
update 0 "" comment=gpuburst:home=ap-northeast-3
[ "$(job_field "$routed" AdminComment)" = "gpuburst:home=ap-northeast-3" ] ||
	bad "update with a home: AdminComment='$(job_field "$routed" AdminComment)'"
update 0 "" gres=gpu:a10g:2
[ "$(job_field "$routed" TresPerNode)" = "$(gres_tres gpu:a10g:2)" ] || bad "an allowed update was not applied"

# --- scontrol reconfigure reloads the file: from 23.11 in the new
# slurmctld's init() ("loaded"), before it in the plugin's reload thread,
# woken by the next submission ("reloaded")
if reconfigure_reexecs; then verb=loaded; else verb=reloaded; fi
# reloaded DESC TEXT...: scontrol reconfigure, the reload woken, and then
# the plugin's line that it loaded $yaml, with each TEXT in order, since
# the caller's log_mark.  The caller marks the log before it changes a
# file: before 23.11 the reload thread checks once more a second after a
# reconfigure (two in one second look alike to it), and that check may
# load the change before the reconfigure below does.
reloaded() {
	local desc=$1
	shift
	lab scontrol reconfigure || bad "$desc: scontrol reconfigure failed"
	reload_wake
	log_wait 10 "job_submit/gpuburst: $verb $yaml: " "$@" ||
		{ bad "$desc: no '$verb' line with '$*':"; log_lines gpuburst; }
}
log_mark
sed -i 's/^  route_gpu_jobs: true$/  route_gpu_jobs: false/' "$yaml"
reloaded "routing off" "4 nodesets, burst partitions gpuburst, tokyo, GPU jobs without a partition left alone"
submit --gres=gpu:a10g:1
accepted "routing off after reconfigure" Partition=cpu "Features=(null)"

# a broken file: the previous configuration stays.  From 23.11 each
# reconfigure fails (the new slurmctld's init() does, the old one goes on)
# and says why once; before it the reconfigure succeeds and the plugin
# says once in all that it keeps the previous configuration (then, at
# debug level, that the file is unchanged).
log_mark
sed -i 's/^  route_gpu_jobs: false$/  route_gpu_jobs: maybe/' "$yaml"
ln=$(grep -n 'route_gpu_jobs: maybe' "$yaml" | cut -d: -f1)
why="$yaml:$ln:19: 'route_gpu_jobs' must be a boolean (true, false, yes or no), got 'maybe'"
if reconfigure_reexecs; then
	reconfigure_broken() {
		lab scontrol reconfigure > "$T/out" 2>&1 && bad "scontrol reconfigure with a broken file succeeded"
		# the old slurmctld answers again once the new one has given up
		for _ in $(seq 100); do lab scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.1; done
	}
	want="error: job_submit/gpuburst: $why"
	again=$want
	want_n=2
else
	reconfigure_broken() { lab scontrol reconfigure || bad "scontrol reconfigure failed"; reload_wake; }
	want="error: job_submit/gpuburst: reconfigure: keeping the previous configuration: $why"
	again="job_submit/gpuburst: reconfigure: $yaml unchanged"
	want_n=1
fi
reconfigure_broken
log_wait 10 "$want" || bad "no line '$want' after reconfigure"
submit -p gpuburst --gres=gpu:a10g:1
accepted "broken file: the previous one still works" Partition=gpuburst "Features=g5.xlarge|g5.12xlarge"
submit --gres=gpu:a10g:1
accepted "broken file: routing still off" Partition=cpu
log_mark
reconfigure_broken
log_wait 10 "$again" || bad "no line '$again' after reconfigure"
submit --gres=gpu:a10g:1
accepted "broken file, reconfigured again" Partition=cpu
got=$(grep -c -F "$want" "$log")
[ "$got" = "$want_n" ] || { bad "want $want_n line(s) '$want' in slurmctld.log, got $got:"; grep 'job_submit/gpuburst' "$log" | tail -5; }

log_mark
sed -i 's/^  route_gpu_jobs: maybe$/  route_gpu_jobs: true/' "$yaml"
reloaded "fixed file" "4 nodesets, burst partitions gpuburst, tokyo, GPU jobs without a partition routed"
submit --gres=gpu:a10g:1
accepted "fixed file: routing on again" Partition=gpuburst "Features=g5.xlarge|g5.12xlarge"

# --- only the catalog changes: `gpuburstctl catalog refresh` renames a new
# <state_dir>/catalog into place, and the next reconfigure loads the
# configuration with it (before 23.11 the reload thread looks at the
# catalog file as it looks at gpuburst.yaml).  In this catalog g6.xlarge's
# GPU is an A10G, a fiction that routing shows: a10g jobs may go to g6.
cat > "$T/catalog.new" <<'CATALOG'
gpuburst-catalog 1
refreshed 2026-12-03T13:41:47Z
source plugin-lab.sh: g6.xlarge with an A10G
g5.xlarge g5 4 16384 1 22888 0 x86_64 NVIDIA 0 1 4 yes A10G
g5.12xlarge g5 48 196608 4 22888 0 x86_64 NVIDIA 1 1 15 yes A10G
g6.xlarge g6 4 16384 1 22888 0 x86_64 NVIDIA 0 1 4 yes A10G
g6e.xlarge g6e 4 32768 1 45776 0 x86_64 NVIDIA 0 1 4 yes L40S
CATALOG
log_mark
mv "$T/catalog.new" "$catalog"
reloaded "refreshed catalog" "4 nodesets" "catalog $catalog"
submit --gres=gpu:a10g:1
accepted "refreshed catalog" Partition=gpuburst "Features=g5.xlarge|g5.12xlarge|g6.xlarge"

# a damaged catalog is a configuration error like a damaged gpuburst.yaml
# (the previous configuration stays), naming the file and line
echo "gpuburst-catalog 9" > "$T/catalog.new"
log_mark
mv "$T/catalog.new" "$catalog"
why="catalog $catalog:1: catalog format version 9, this gpuburst reads version 1"
if reconfigure_reexecs; then
	want="error: job_submit/gpuburst: "
else
	want="error: job_submit/gpuburst: reconfigure: keeping the previous configuration: "
fi
reconfigure_broken
log_wait 10 "$want" "$why" || { bad "no line '$want...$why' after reconfigure:"; log_lines gpuburst; }
submit --gres=gpu:a10g:1
accepted "damaged catalog: the refreshed one still in use" Partition=gpuburst \
	"Features=g5.xlarge|g5.12xlarge|g6.xlarge"

# no catalog file: the built-in catalog again
log_mark
rm "$catalog"
reloaded "no catalog file" "4 nodesets" "catalog built in"
submit --gres=gpu:a10g:1
accepted "built-in catalog again" Partition=gpuburst "Features=g5.xlarge|g5.12xlarge"

[ "$fail" = 0 ] && echo "PASS: $n submissions and updates through slurmctld behaved"
exit $fail
