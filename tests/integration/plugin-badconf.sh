#!/bin/bash
# plugin-badconf.sh - a bad gpuburst.yaml at slurmctld start-up: init()
# fails with one error() line naming file:line:col, and slurmctld (22.05)
# stops with "fatal: failed to initialize job_submit plugin" rather than
# run without its guard.  $GPUBURST_CONF wins over the file next to
# slurm.conf; a missing file and a FIFO are named too.  PluginDir is the
# test's own directory only, so a job_submit_gpuburst.so installed in
# Slurm's plugin directory is not a second copy (two error lines).
set -u
. "$GB_TOP_SRCDIR/tests/integration/plugin-lib.sh"
plugin_lab_require
plugin_lab_init
plugin_lab_own_plugins
unset GPUBURST_ENV
log=$LAB/log/slurmctld.log
# a good file next to slurm.conf, which $GPUBURST_CONF must override
cp "$GB_TOP_SRCDIR/tests/data/plugin/gpuburst.yaml" "$LAB/etc/gpuburst.yaml"
cat > "$T/bad.yaml" <<'YAML'
cluster_name: labtest
nodesets:
  - name: m7
    nodes: m7-[1-2]
    instance_type: m7i.xlarge
    home_region: ap-southeast-1
policy:
  batch_max: 0
YAML

# start_fails DESC WANT_LINE: slurmctld must die at start-up, logging WANT_LINE once
start_fails() {
	local got pid st
	if plugin_lab_start > "$T/start.out" 2>&1; then
		bad "$1: slurmctld started"
		return
	fi
	grep -q "slurmctld exited during start-up" "$T/start.out" ||
		bad "$1: the lab did not see slurmctld exit: $(cat "$T/start.out")"
	got=$(grep -c 'error: job_submit/gpuburst:' "$log")
	[ "$got" = 1 ] || bad "$1: $got error lines from the plugin, want 1"
	grep -q -F -x "$2" <(sed 's/^\[[^]]*\] //' "$log") ||
		{ bad "$1: no line '$2' in slurmctld.log:"; grep 'gpuburst' "$log"; }
	grep -q 'fatal: failed to initialize job_submit plugin' "$log" ||
		bad "$1: no fatal line in slurmctld.log"
	pid=$(cat "$LAB/run/slurmctld.pid" 2>/dev/null)
	# one read of its state: it may finish exiting between two looks
	st=$( [ -n "$pid" ] && sed -n 's/^State:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
	case $st in
	'' | Z* | X*) ;;	# gone, a zombie, or dead
	*) bad "$1: slurmctld (pid $pid) still runs ($st)" ;;
	esac
	"$tool" stop --dir "$LAB" > /dev/null 2>&1
}

GPUBURST_CONF=$T/bad.yaml start_fails "bad file" \
	"error: job_submit/gpuburst: $T/bad.yaml:5:20: instance type m7i.xlarge is not allowed: only GPU families g4dn, g5, g5g, g6, g6e (and 2 more errors; see gpuburstctl -c $T/bad.yaml config check)"
GPUBURST_CONF=$T/missing.yaml start_fails "missing file" \
	"error: job_submit/gpuburst: cannot open $T/missing.yaml: No such file or directory"
# a FIFO: refused at once (a blocking open held slurmctld's start-up for ever)
mkfifo "$T/fifo.yaml"
GPUBURST_CONF=$T/fifo.yaml start_fails "a FIFO" \
	"error: job_submit/gpuburst: $T/fifo.yaml is not a regular file (a FIFO)"

# and the good file next to slurm.conf does start
if GPUBURST_CONF= plugin_lab_start > "$T/start.out" 2>&1; then
	grep -q "job_submit/gpuburst: loaded $LAB/etc/gpuburst.yaml:" "$log" ||
		bad "the file next to slurm.conf was not loaded"
else
	bad "good file: slurmctld did not start: $(cat "$T/start.out")"
fi

[ "$fail" = 0 ] && echo "PASS: bad, missing and FIFO files stop slurmctld with one line each"
exit $fail
