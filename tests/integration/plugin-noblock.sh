#!/bin/bash
# plugin-noblock.sh - a gpuburst.yaml that cannot be read when slurmctld is
# reconfigured costs the submit path nothing.  The file is replaced by a
# FIFO (open() waits for a writer, as a read from a hung NFS mount waits
# for the server) and then by a directory (read() fails; as root, the
# lab's SlurmUser, a mode-000 file would still be readable).  Each time,
# after `scontrol reconfigure`: sbatch, sinfo and scontrol answer, jobs are
# routed by the previous configuration (partition, features, the home
# region in AdminComment), and slurmctld's log says once that the reload
# kept it.  Then a good file is loaded again.  Each client call's seconds
# are printed, not judged: the verdict is that none fails, and each gives
# up on its own after MessageTimeout (10 s).
set -u
. "$GB_TOP_SRCDIR/tests/integration/plugin-lib.sh"
plugin_lab_require
plugin_lab_init
unset GPUBURST_CONF GPUBURST_ENV
yaml=$LAB/etc/gpuburst.yaml
cp "$GB_TOP_SRCDIR/tests/data/plugin/gpuburst.yaml" "$yaml"
# open the FIFO for writing once, saying nothing, so that whatever waits on
# it ends; bounded, since nothing may be reading it
release() { [ -p "$yaml" ] && timeout 3 sh -c ': > "$1"' sh "$yaml"; return 0; }
trap 'release; "$tool" stop --dir "$LAB" --purge >/dev/null 2>&1; rm -rf "$T"' EXIT
plugin_lab_start > "$T/start.out" 2>&1 || {
	cat "$T/start.out"; tail -20 "$LAB/log/slurmctld.log"; exit 1; }
routed=(Partition=gpuburst "Features=g5.xlarge|g5.12xlarge" AdminComment=)
home=(Partition=tokyo Features=g6e.xlarge AdminComment=gpuburst:home=ap-northeast-1)
if reconfigure_reexecs; then
	keeping="error: job_submit/gpuburst: "
else
	keeping="error: job_submit/gpuburst: reconfigure: keeping the previous configuration: "
fi

# timed DESC CMD...: CMD as a lab client (bounded by `timeout 60` too);
# sets rc, out, err and prints the seconds it took
timed() {
	local desc=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	lab timeout 60 "$@" > "$T/out" 2> "$T/err"
	rc=$?
	t1=$(date +%s.%N)
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	echo "$desc: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, rc $rc"
}

# submit DESC [KEY=WANT...]: a held job with ${args:---gres=gpu:a10g:1},
# accepted with these fields
submit() {
	local desc=$1 job
	shift
	# shellcheck disable=SC2086
	timed "sbatch, $desc" sbatch --hold ${args:---gres=gpu:a10g:1} --wrap true
	job=$(sed -n 's/^Submitted batch job //p' <<< "$out")
	if [ "$rc" != 0 ] || [ -z "$job" ]; then
		bad "sbatch, $desc: rc=$rc stdout='$out' stderr='$err'"
		return
	fi
	job_fields_are "sbatch, $desc" "$job" "$@"
}

# fifo_reconfigure DESC: gpuburst.yaml becomes a FIFO, scontrol
# reconfigure, and the next second begins.  last_update counts whole
# seconds, so a check begun in the reconfigure's own second is followed by
# another (a second reconfigure in that second would leave last_update as
# it was), which would open the FIFO again once a writer has gone: the
# reload is woken in the next second.
fifo_reconfigure() {
	local s
	rm "$yaml"
	mkfifo "$yaml"
	log_mark
	reconfigure "$1"
	s=$(date +%s)
	while [ "$(date +%s)" = "$s" ]; do sleep 0.05; done
}

# answers DESC: sinfo and scontrol show partition work
answers() {
	timed "sinfo, $1" sinfo -h -o %P
	[ "$rc" = 0 ] && grep -q gpuburst <<< "$out" || bad "sinfo, $1: rc=$rc stdout='$out' stderr='$err'"
	timed "scontrol show partition, $1" scontrol show partition gpuburst
	[ "$rc" = 0 ] || bad "scontrol show partition, $1: rc=$rc stderr='$err'"
}

# reconfigure DESC: before 23.11 it succeeds (the plugin's thread rereads
# the file); from 23.11 the new slurmctld's init() cannot read the file,
# so the reconfigure fails and the old slurmctld goes on
reconfigure() {
	timed "scontrol reconfigure, $1" scontrol reconfigure
	if reconfigure_reexecs; then
		[ "$rc" = 1 ] || bad "scontrol reconfigure, $1: rc=$rc, want 1 ($err)"
		for _ in $(seq 100); do lab scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.1; done
	else
		[ "$rc" = 0 ] || bad "scontrol reconfigure, $1: rc=$rc ($err)"
	fi
}

# once DESC TEXT...: since the mark, exactly one log line with TEXT...
once() {
	local desc=$1 got
	shift
	got=$(log_lines "$@" | wc -l)
	[ "$got" = 1 ] || { bad "$desc: $got log lines '$*', want 1:"; log_lines job_submit/gpuburst; }
}

submit "good file" "${routed[@]}"
args="--gres=gpu:l40s:1 --comment=gpuburst:home=ap-northeast-1" submit "good file, with a home" "${home[@]}"
answers "good file"

# --- a FIFO.  Before the reload thread, the first submission after the
# reconfigure opened it inside job_submit(), with slurmctld's locks held:
# every client timed out, and the submission the client saw fail was
# created once the FIFO had a writer.
fifo_reconfigure "FIFO"
submit "FIFO, wakes the reload" "${routed[@]}"
submit "FIFO" "${routed[@]}"
args="--gres=gpu:l40s:1 --comment=gpuburst:home=ap-northeast-1" submit "FIFO, with a home" "${home[@]}"
answers "FIFO"
# Whoever reads the FIFO (the reload thread, stuck in open()) gets a broken
# file; a reader that refuses FIFOs has said so already.
timeout 20 sh -c 'printf "nodesets: [\n" > "$1"' sh "$yaml" &
writer=$!
log_wait 20 "$keeping" "$yaml" || bad "FIFO: no line '$keeping...$yaml' in slurmctld.log"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
submit "FIFO, after the reload" "${routed[@]}"
once "FIFO" "$keeping" "$yaml"

# --- a directory: read() fails
rm "$yaml"
mkdir "$yaml"
log_mark
reconfigure "directory"
submit "directory, wakes the reload" "${routed[@]}"
log_wait 10 "$keeping" "$yaml" || bad "directory: no line '$keeping...$yaml' in slurmctld.log"
submit "directory" "${routed[@]}"
answers "directory"
once "directory" "$keeping" "$yaml"
rmdir "$yaml"

# --- a good file, changed (GPU jobs without a partition left alone), is
# loaded again: the reload thread is not stuck
sed 's/^  route_gpu_jobs: true$/  route_gpu_jobs: false/' \
	"$GB_TOP_SRCDIR/tests/data/plugin/gpuburst.yaml" > "$yaml"
if reconfigure_reexecs; then verb=loaded; else verb=reloaded; fi
log_mark
timed "scontrol reconfigure, good file again" scontrol reconfigure
[ "$rc" = 0 ] || bad "scontrol reconfigure, good file again: rc=$rc ($err)"
reload_wake
log_wait 10 "job_submit/gpuburst: $verb $yaml: 4 nodesets" ||
	bad "no '$verb' line for the good file"
submit "good file again" Partition=cpu "Features=(null)"

# --- before 23.11: a reconfigure that drops the plugin calls fini(), with
# slurmctld's config write lock held, while the reload thread may be stuck
# on a FIFO: fini() leaves it after 2 s and it ends once its read returns.
# (Where the reload refuses FIFOs, fini() just joins it.)  Adding the
# plugin back starts one new thread.
threads() {	# the reload threads in slurmctld
	local t n=0
	for t in /proc/"$(cat "$LAB/run/slurmctld.pid")"/task/*/comm; do
		[ "$(cat "$t" 2>/dev/null)" = gb_conf_reload ] && n=$((n + 1))
	done
	echo $n
}
if ! reconfigure_reexecs; then
	conf=$LAB/etc/slurm.conf
	[ "$(threads)" = 1 ] || bad "$(threads) reload threads in slurmctld, want 1"
	fifo_reconfigure "FIFO, before the plugin is dropped"
	reload_wake
	sleep 0.5
	sed -i 's/^JobSubmitPlugins=gpuburst$/#&/' "$conf"
	reconfigure "plugin dropped"
	grep -q '^#JobSubmitPlugins' "$conf" || bad "no JobSubmitPlugins line in $conf"
	log_wait 1 "$keeping" "$yaml" ||
		log_lines "error: job_submit/gpuburst: the configuration reload thread did not stop within 2 s" | grep -q . ||
		bad "plugin dropped: the reload neither refused the FIFO nor was left behind:"$'\n'"$(log_lines gpuburst)"
	release
	rm "$yaml"
	cp "$GB_TOP_SRCDIR/tests/data/plugin/gpuburst.yaml" "$yaml"
	sed -i 's/^#\(JobSubmitPlugins=gpuburst\)$/\1/' "$conf"
	log_mark
	reconfigure "plugin added back"
	log_wait 10 "job_submit/gpuburst: loaded $yaml: 4 nodesets" || bad "no 'loaded' line when the plugin came back"
	submit "plugin added back" "${routed[@]}"
	for _ in $(seq 50); do [ "$(threads)" = 1 ] && break; sleep 0.1; done
	[ "$(threads)" = 1 ] || bad "$(threads) reload threads in slurmctld after the plugin came back, want 1"
fi

[ "$fail" = 0 ] && echo "PASS: a FIFO or a directory for gpuburst.yaml at reconfigure left sbatch, sinfo and routing as they were"
exit $fail
