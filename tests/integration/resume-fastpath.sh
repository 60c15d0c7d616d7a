#!/bin/sh
# resume-fastpath.sh - gpuburst-resume/-suspend/-resume-fail started the
# way slurmctld starts them (fds 0-2 closed, TERM/CHLD/... blocked, no
# PATH, SLURM_RESUME_FILE): requests per (nodeset, job) in the state file,
# the resume file's formats and its argv fallback, 100000 nodes in one range
# (past libslurm's 65536 per range), nothing written to
# stdout/stderr, exit statuses; no Slurm needed (no unknown nodes here,
# and the worker finds the lock taken by this test).
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
PYTHON3="${PYTHON3:-python3}"
RESUME="$GB_TOP_BUILDDIR/src/resume/gpuburst-resume"
SUSPEND="$GB_TOP_BUILDDIR/src/suspend/gpuburst-suspend"
RESUME_FAIL="$GB_TOP_BUILDDIR/src/resume-fail/gpuburst-resume-fail"
GPUBURST_WORKER="$GB_TOP_BUILDDIR/src/worker/gpuburst-worker"
export GPUBURST_WORKER
DATA="$GB_TOP_SRCDIR/tests/data/resume"
"$PYTHON3" -c 'import sqlite3, fcntl' 2>/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
TMP="$(mktemp -d /tmp/gb-fastpath.XXXXXX)"
HOLD=
# sanitizer builds: reports of the programs (stderr closed) go to files
mkdir -p "$TMP/san"
export ASAN_OPTIONS="log_path=$TMP/san/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/san/ubsan:print_stacktrace=1"
cleanup() {
	rc=$?
	[ -n "$HOLD" ] && kill "$HOLD" 2>/dev/null && wait "$HOLD" 2>/dev/null
	if [ -n "$(ls "$TMP/san")" ]; then
		echo "FAIL: sanitizer reports:"
		cat "$TMP"/san/*
		rc=1
	fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$TMP/log" ] && tail -n 20 "$TMP/log"; exit 1; }
ok() { echo "ok - $*"; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

cat >"$TMP/gpuburst.yaml" <<EOF
cluster_name: fastpath
state_dir: $TMP/state
log: {file: $TMP/log, level: debug}
regions:
  - name: ap-south-1
    ami: ami-1
    azs: [{name: ap-south-1a, subnets: [subnet-1]}]
fallback_groups:
  g: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: 'g5-[1-16]', instance_type: g5.xlarge, home_region: ap-southeast-1}
  - {name: g6, nodes: 'g6-[1-16]', instance_type: g6.xlarge, home_region: ap-southeast-1}
EOF

# The worker lock is ours: the workers the programs start exit at once.
mkdir -p "$TMP/state"
"$PYTHON3" -c 'import fcntl, sys, time
f = open(sys.argv[1], "a"); fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close(); time.sleep(600)' "$TMP/state/worker.lock" "$TMP/locked" &
HOLD=$!
for _ in $(seq 1 100); do [ -f "$TMP/locked" ] && break; sleep 0.05; done

# slurmctld-like start: fds 0-2 closed, its signal mask, env only SLURM_*;
# our stdout/stderr are captured by a pipe the child must never write to.
as_slurmctld() {	# as_slurmctld RESUME_FILE|- PROGRAM ARG...
	"$PYTHON3" - "$@" <<'PY'
import os, signal, sys
rf, prog, args = sys.argv[1], sys.argv[2], sys.argv[3:]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP, signal.SIGINT, signal.SIGQUIT,
        signal.SIGABRT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGPIPE, signal.SIGALRM,
        signal.SIGTERM, signal.SIGCHLD, signal.SIGTSTP, signal.SIGXCPU})
    env = {"SLURM_CONF": "/nonexistent/slurm.conf"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "GPUBURST_WORKER"):
        if k in os.environ:
            env[k] = os.environ[k]
    if rf != "-":
        env["SLURM_RESUME_FILE"] = rf
    os.dup2(w, 3)          # a pipe slurmctld would read: must see EOF only
    for fd in (0, 1, 2):
        os.close(fd)
    os.execve(prog, [prog] + args, env)
os.close(w)
out = os.read(r, 4096)
_, status = os.waitpid(pid, 0)
if out:
    print("WROTE:", out)
sys.exit(os.WEXITSTATUS(status))
PY
}

sql() {
	"$PYTHON3" -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
for row in db.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))' "$TMP/state/state.db" "$1"
}

# 22.05 resume file: one request per (nodeset, job), jobless nodes apart
printf '%s' '{"jobs":[{"job_id":11,"nodes":"g5-[1-2],g6-1"},{"job_id":12,"nodes":"g5-3"}],"all_nodes":"g5-[1-4],g6-1"}' >"$TMP/rf1"
as_slurmctld "$TMP/rf1" "$RESUME" -c "$TMP/gpuburst.yaml" 'g5-[1-4],g6-1' >"$TMP/out" 2>&1
expect_eq "exit status" "$?" 0
[ -s "$TMP/out" ] && fail "output: $(cat "$TMP/out")"
expect_eq "requests" "$(sql "SELECT job_id, nodeset, nodes, node_count, state, kind FROM requests ORDER BY created_at, rowid" | tr '\n' ' ')" \
	"11|g5|g5-[1-2]|2|queued|resume 11|g6|g6-1|1|queued|resume 12|g5|g5-3|1|queued|resume 0|g5|g5-4|1|queued|resume "
expect_eq "input kept" "$(sql "SELECT input FROM requests WHERE job_id=12")" '{"job_id":12,"nodes":"g5-3"}'
grep -q 'resume_queued nodes=g5-\[1-4\],g6-1 count=5 requests=4 .* source=resume_file' "$TMP/log" || fail "no resume_queued line"
ok "22.05 resume file: 4 requests (per nodeset and job, jobless apart), nothing printed, exit 0"

# 23.02+ format with unknown keys
N0=$(sql "SELECT count(*) FROM requests")
as_slurmctld "$DATA/valid-2605-unknown-keys/input.json" "$RESUME" -c "$TMP/gpuburst.yaml" 'g5-[1-2]' >"$TMP/out" 2>&1
expect_eq "exit status" "$?" 0
expect_eq "26.05 jobs" "$(sql "SELECT job_id || ':' || nodes FROM requests ORDER BY created_at, rowid LIMIT 2 OFFSET $N0" | tr '\n' ' ')" \
	"11:g5-1 12:g5-2 "
ok "23.02+/26.05 resume file with unknown keys"

# malformed and absent files: argv, with a warning
N0=$(sql "SELECT count(*) FROM requests")
printf '%s' '{"jobs":[{"job_id":"x"' >"$TMP/rf3"
as_slurmctld "$TMP/rf3" "$RESUME" -c "$TMP/gpuburst.yaml" 'g6-[5-6]' >"$TMP/out" 2>&1
expect_eq "exit status (malformed)" "$?" 0
as_slurmctld "$TMP/nonexistent" "$RESUME" -c "$TMP/gpuburst.yaml" 'g6-7' >"$TMP/out" 2>&1
expect_eq "exit status (absent)" "$?" 0
expect_eq "argv fallback" "$(sql "SELECT job_id || ':' || nodes FROM requests ORDER BY created_at, rowid LIMIT 2 OFFSET $N0" | tr '\n' ' ')" "0:g6-[5-6] 0:g6-7 "
[ "$(grep -c 'warning: resume_file_unusable .*fallback=argv' "$TMP/log")" -ge 2 ] || fail "no fallback warnings"
ok "malformed or absent SLURM_RESUME_FILE: argv fallback with a warning"

# suspend and resume-fail: one request each
as_slurmctld - "$SUSPEND" -c "$TMP/gpuburst.yaml" 'g5-[1-2],g6-1' >"$TMP/out" 2>&1
expect_eq "suspend exit" "$?" 0
as_slurmctld - "$RESUME_FAIL" -c "$TMP/gpuburst.yaml" 'g5-3' >"$TMP/out" 2>&1
expect_eq "resume-fail exit" "$?" 0
expect_eq "term requests" "$(sql "SELECT kind, nodeset IS NULL, nodes, state FROM requests WHERE kind != 'resume' ORDER BY created_at" | tr '\n' ' ')" \
	"suspend|1|g5-[1-2],g6-1|queued resume_fail|1|g5-3|queued "
ok "gpuburst-suspend and gpuburst-resume-fail queue one request each"

# 100000 nodes, the most a request's node list holds, as one range of
# Slurm's (two nodesets of one prefix): more than libslurm takes in one
# bracket range (65536), in argv and in the resume file
sed -e "s/^nodesets:/policy: {max_request_nodes: 100000}\nnodesets:/" \
    -e "s/'g5-\[1-16\]'/'gpu-[1-50000]'/" -e "s/'g6-\[1-16\]'/'gpu-[50001-100000]'/" \
	"$TMP/gpuburst.yaml" >"$TMP/big.yaml"
N0=$(sql "SELECT count(*) FROM requests")
as_slurmctld - "$RESUME" -c "$TMP/big.yaml" 'gpu-[1-100000]' >"$TMP/out" 2>&1
expect_eq "exit status (100000 nodes, argv)" "$?" 0
printf '%s' '{"all_nodes_resume":"gpu-[1-100000]","jobs":[{"job_id":21,"nodes_alloc":"gpu-[1-100000]","nodes_resume":"gpu-[1-100000]"}]}' >"$TMP/rf4"
as_slurmctld "$TMP/rf4" "$RESUME" -c "$TMP/big.yaml" 'gpu-[1-100000]' >"$TMP/out" 2>&1
expect_eq "exit status (100000 nodes, resume file)" "$?" 0
[ -s "$TMP/out" ] && fail "output: $(cat "$TMP/out")"
expect_eq "100000-node requests" "$(sql "SELECT job_id || ':' || nodeset || ':' || nodes || ':' || node_count FROM requests ORDER BY created_at, rowid LIMIT 4 OFFSET $N0" | tr '\n' ' ')" \
	"0:g5:gpu-[1-50000]:50000 0:g6:gpu-[50001-100000]:50000 21:g5:gpu-[1-50000]:50000 21:g6:gpu-[50001-100000]:50000 "
grep -q 'resume_bad_hostlist' "$TMP/log" && fail "a hostlist was refused: $(grep resume_bad_hostlist "$TMP/log")"
grep -q 'resume_queued nodes=gpu-\[1-100000\] count=100000 requests=2 .* source=resume_file' "$TMP/log" || fail "no resume_queued line for the resume file"
ok "100000 nodes in one range (argv and resume file): one request per nodeset"

# the workers they started found the lock taken and left
grep -q 'debug: worker_lock_busy' "$TMP/log" || fail "no worker saw the lock"
N_BUSY=$(grep -c 'worker_lock_busy' "$TMP/log")
"$RESUME" --worker -c "$TMP/gpuburst.yaml" >"$TMP/out" 2>&1 || fail "--worker: $(cat "$TMP/out")"
[ "$(grep -c 'gpuburst-worker.*worker_lock_busy' "$TMP/log")" -gt "$N_BUSY" ] ||
	fail "gpuburst-resume --worker did not run gpuburst-worker"
"$GPUBURST_WORKER" --help | grep -q "^Usage: gpuburst-worker \[-c FILE\]" || fail "worker --help"
grep 'gpuburst-worker' "$TMP/log" | grep -q 'request_start' && fail "a worker ran despite the lock"
ok "each program started a worker; it saw the lock held and exited"

# usage and configuration errors
as_slurmctld - "$RESUME" -c "$TMP/gpuburst.yaml" >"$TMP/out" 2>&1
expect_eq "no hostlist" "$?" 2
as_slurmctld - "$SUSPEND" -c "$TMP/missing.yaml" g5-1 >"$TMP/out" 2>&1
rc=$?
[ "$rc" = 3 ] || [ "$rc" = 8 ] || fail "missing config: exit $rc"
printf 'cluster_name: [\n' >"$TMP/bad.yaml"
as_slurmctld - "$RESUME" -c "$TMP/bad.yaml" g5-1 >"$TMP/out" 2>&1
expect_eq "bad config" "$?" 3
[ -s "$TMP/out" ] && fail "output: $(cat "$TMP/out")"
"$RESUME" --help | grep -q "^Usage: gpuburst-resume \[-c FILE\] HOSTLIST" || fail "--help"
ok "usage error exits 2, configuration errors exit 3 (nothing printed)"
