# plugin-lib.sh - sourced by the job_submit/gpuburst tests that run the
# plugin inside a real slurmctld (contrib/lab/gpuburst-lab).
#
#   plugin_lab_require        exit 77, saying why, when the lab cannot run here
#   plugin_lab_init           a private directory ($T) and lab ($LAB), removed on exit
#   plugin_lab_start ARGS...  start the lab with the plugin (ARGS go to `start`)
#   plugin_lab_own_plugins    from now on $T/plugins is the whole PluginDir:
#                             links to Slurm's own plugins but any
#                             job_submit_gpuburst.* there, and the built one
#   lab CMD...                CMD as a lab client (SLURM_CONF set, DNS guard)
#   bad MSG                   record a failure (the test exits 1 at the end)
#   SLURM_REL                 the Slurm release under test, MMmm (24.11: 2411)
#   modify_error MSG CODE     what `scontrol update` of a job prints when the
#                             plugin refuses it; gres_tres SPEC: a GRES as
#                             TresPerNode shows it; reconfigure_reexecs: is a
#                             reconfigure a new slurmctld (the release
#                             differences, stated here only)
#   log_mark, log_lines TEXT..., log_wait SECONDS TEXT...
#                             slurmctld.log lines after a mark
#   reload_wake               after `scontrol reconfigure`, make the plugin
#                             look at its file again (before 23.11)

tool="$GB_TOP_SRCDIR/contrib/lab/gpuburst-lab"
so="$GB_TOP_BUILDDIR/plugins/job_submit_gpuburst/.libs/job_submit_gpuburst.so"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
skip() { echo "SKIP: $*"; exit 77; }

plugin_lab_require() {
	[ -n "${GB_SAN_CFLAGS:-}" ] &&
		skip "sanitizer build: slurmctld cannot load an ASan-instrumented plugin (the route unit tests cover the rules)"
	[ "$(id -u)" = 0 ] || skip "needs root (slurmctld, munged and a mount namespace)"
	for b in slurmctld munged mungekey scontrol sbatch unshare ss; do
		command -v "$b" >/dev/null 2>&1 ||
			skip "$b is missing (apt-get install slurm-wlm munge util-linux iproute2)"
	done
	unshare -m true 2>/dev/null || skip "unshare -m is not permitted here (the lab's DNS guard needs it)"
	[ -f "$so" ] || { echo "ERROR: $so was not built"; exit 99; }
	# the plugin only loads into the Slurm it was built for (plugin_version)
	v=$(slurmctld -V 2>/dev/null | awk '{print $2}')
	want=$(printf '%d.%02d.%d' $((GB_SLURM_VERSION_HEX >> 16)) \
		$(((GB_SLURM_VERSION_HEX >> 8) & 255)) $((GB_SLURM_VERSION_HEX & 255)))
	[ "$v" = "$want" ] ||
		skip "slurmctld is $v but the plugin was built for Slurm $want"
	SLURM_REL=$("$tool" release) || { echo "ERROR: cannot tell the Slurm release"; exit 99; }
}

# The release differences (src/libslurmif/gb_slurm_release.h).
# GB_SLURM_MODIFY_ERR_MSG, 23.02: job_modify() gets err_msg, which
# scontrol prints before Slurm's own line.
modify_error() {
	if [ "$SLURM_REL" -ge 2302 ]; then printf 'scontrol: error: %s\n%s' "$1" "$2"; else echo "$2"; fi
}
# GB_SLURM_GRES_SLASH, 23.11: gres/gpu:a10g:1 (was gres:gpu:a10g:1).
gres_tres() {
	if [ "$SLURM_REL" -ge 2311 ]; then echo "gres/$1"; else echo "gres:$1"; fi
}
# GB_SLURM_RECONFIG_REEXEC, 23.11: scontrol reconfigure starts a new
# slurmctld, which calls the plugin's init() (a failing one fails the
# reconfigure, and the old slurmctld goes on).
reconfigure_reexecs() { [ "$SLURM_REL" -ge 2311 ]; }

plugin_lab_init() {
	T=$(mktemp -d /tmp/gb-plugin.XXXXXX)
	chmod 755 "$T"	# munged wants o+x on every directory above its socket
	LAB=$T/lab
	trap '"$tool" stop --dir "$LAB" --purge >/dev/null 2>&1; rm -rf "$T"' EXIT
	mkdir -p "$T/plugins" "$LAB/etc"
	cp "$so" "$T/plugins/"
	printf '#!/bin/sh\nexit 0\n' > "$T/noop"
	chmod 755 "$T/noop"
	# one port per node: 4 g5, 2 g5q, 2 g6, 2 tk, 1 cpu
	p=$("$tool" free-ports 11)
	cat > "$T/nodes.conf" <<NODES
NodeName=g5-[1-4] Port=[$p-$((p + 3))] CPUs=1 RealMemory=500 State=CLOUD Feature=g5.xlarge Gres=gpu:a10g:1
NodeName=g5q-[1-2] Port=[$((p + 4))-$((p + 5))] CPUs=1 RealMemory=500 State=CLOUD Feature=g5.12xlarge Gres=gpu:a10g:4
NodeName=g6-[1-2] Port=[$((p + 6))-$((p + 7))] CPUs=1 RealMemory=500 State=CLOUD Feature=g6.xlarge Gres=gpu:l4:1
NodeName=tk-[1-2] Port=[$((p + 8))-$((p + 9))] CPUs=1 RealMemory=500 State=CLOUD Feature=g6e.xlarge Gres=gpu:l40s:1
NodeName=cpu-1 Port=$((p + 10)) CPUs=1 RealMemory=500 State=CLOUD
PartitionName=cpu Nodes=cpu-1 Default=YES MaxTime=INFINITE State=UP
PartitionName=gpuburst Nodes=g5-[1-4],g5q-[1-2],g6-[1-2] MaxTime=INFINITE State=UP
PartitionName=tokyo Nodes=tk-[1-2] MaxTime=INFINITE State=UP
NODES
}

# --plugin-dir: $T/plugins, then Slurm's own directory (plugin_lab_own_plugins
# changes it to --plugin-dir-only)
plugin_dir_opt=--plugin-dir

plugin_lab_start() {
	"$tool" start --dir "$LAB" --fresh --nodes-conf "$T/nodes.conf" \
		--resume-program "$T/noop" --suspend-program "$T/noop" \
		--resume-fail-program "$T/noop" \
		--job-submit gpuburst "$plugin_dir_opt" "$T/plugins" "$@"
}

# A test that counts what the plugin logs must not depend on what else is
# installed: slurmctld tries each PluginDir entry in turn when a plugin's
# init() fails, so a job_submit_gpuburst.so left in Slurm's own directory
# (a `make install`) would be a second copy, and a second error line.
plugin_lab_own_plugins() {
	local sys f
	sys=$("$tool" plugin-dir) || { echo "ERROR: cannot tell Slurm's plugin directory"; exit 99; }
	[ -d "$sys" ] || { echo "ERROR: no Slurm plugin directory $sys"; exit 99; }
	for f in "$sys"/*; do
		case "${f##*/}" in job_submit_gpuburst.*) continue ;; esac
		[ -e "$T/plugins/${f##*/}" ] || ln -s "$f" "$T/plugins/"
	done
	plugin_dir_opt=--plugin-dir-only
}

lab() { (cd "$LAB/jobs" && "$tool" sh --dir "$LAB" "$@"); }

# job_field ID KEY: the value of KEY= in `scontrol show job ID` (a key
# that starts its line, like AdminComment, takes the rest of the line)
job_field() {
	lab scontrol show job "$1" | awk -v k="$2=" '
		{ sub(/^ +/, ""); sub(/ +$/, "") }
		index($0, k) == 1 && (k == "AdminComment=" || k == "Comment=") {
			print substr($0, length(k) + 1); exit }
		{ for (i = 1; i <= NF; i++) if (index($i, k) == 1) {
			print substr($i, length(k) + 1); exit } }'
}

# job_fields_are DESC ID KEY=WANT...: each KEY of job ID is WANT, or bad
job_fields_are() {
	local desc=$1 id=$2 kv got
	shift 2
	for kv in "$@"; do
		got=$(job_field "$id" "${kv%%=*}")
		[ "$got" = "${kv#*=}" ] || bad "$desc: ${kv%%=*}='$got', want '${kv#*=}'"
	done
}

# log_mark: remember where slurmctld.log ends.  log_lines TEXT...: the
# lines after the mark that contain each TEXT, in that order (without the
# "[time] " prefix).  log_wait SECONDS TEXT...: wait for one; RET 1 if none
# came.
log_mark() { log_at=$(wc -l < "$LAB/log/slurmctld.log"); }
log_lines() {
	tail -n +$((log_at + 1)) "$LAB/log/slurmctld.log" | sed 's/^\[[^]]*\] //' |
		awk 'BEGIN { n = ARGC - 1; for (i = 1; i <= n; i++) want[i] = ARGV[i]; ARGC = 1 }
		{ s = $0
		  for (i = 1; i <= n; i++) {
			p = index(s, want[i]); if (!p) next; s = substr(s, p + length(want[i])) }
		  print }' "$@"
}
log_wait() {
	local t=$1
	shift
	for _ in $(seq $((t * 10))); do
		[ -n "$(log_lines "$@")" ] && return 0
		sleep 0.1
	done
	return 1
}

# reload_wake: after `scontrol reconfigure`, before 23.11, submit a job
# (held, -p cpu: one the plugin leaves alone) to wake the plugin's reload
# thread.  The submission only hands the reload over: it, and any other
# until the thread has swapped the configuration, is judged by the
# previous one (wait for the thread's log line).  From 23.11 the
# reconfigure itself loaded the file (init() of the new slurmctld).
reload_wake() {
	reconfigure_reexecs && return 0
	lab sbatch --hold -p cpu --wrap true > /dev/null ||
		bad "the submission that wakes the reload failed"
}
