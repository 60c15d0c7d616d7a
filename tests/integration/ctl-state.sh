#!/bin/sh
# ctl-state.sh - retention: `gpuburstctl reconcile` prunes finished requests
# past policy.retention (a dry run only counts), and `gpuburstctl state
# vacuum` prunes and compacts the file: what goes (old denied requests with
# their rows), what stays (an old done request whose instances still run,
# pending and queued requests, a request that just finished), retention
# off, the sizes before and after, the worker's lock, usage errors; a state
# directory and file writable by others (warned, tightened).  The
# cloud endpoint is a closed port, so that the workers reconcile starts for
# the queued requests fail at once.  No Slurm here: the reconcile pass exits
# PARTIAL (29) for the skipped node checks, which ctl-cli.sh tests; the
# pruning does not depend on Slurm.
. "$srcdir/ctl-lib.sh"

write_conf() {	# FILE [EXTRA YAML]
	{
		cat <<EOF
cluster_name: t
environment: prod
state_dir: $tmp/state
log: {file: $tmp/gb.log}
cloud:
  endpoint: http://127.0.0.1:1
  connect_timeout: 1s
  max_retries: 0
  credentials: {access_key_id: AKIDEXAMPLE, secret_access_key: not-used, imds: false}
EOF
		conf_mumbai 40
		cat <<EOF
${2:-}
EOF
	} >"$1"
}
write_conf "$tmp/gb.yaml"
C="$tmp/gb.yaml"
printf 'ClusterName=unreach\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nMessageTimeout=2\nAuthType=auth/none\n' >"$tmp/slurm.conf"
# GPUBURST_WORKER: a worker started for the fixture's queued requests does nothing
ctl() { env -u GPUBURST_CONF -u GPUBURST_ENV SLURM_CONF="$tmp/slurm.conf" GPUBURST_WORKER=/bin/true "$CTL" -c "$C" "$@"; }
run() {	# WANT_RC ARGS...
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || bad "gpuburstctl $*: exit $rc, want $want: $(head -3 "$tmp/err")"
	ok
}
py() { "$PY" - "$@"; }
count() {	# REQUEST_ID: "requests events approvals request_nodes instances" of it
	ctl --json requests show "$1" >"$tmp/show" 2>/dev/null || { echo gone; return; }
	py "$tmp/show" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["events"]), d["approval"] is not None, len(d["instances"]))
PY
}

# ---- the fixture, then ages: the denied request and the done one 100 days back
"$MK" "$tmp/state/state.db" fixture >"$tmp/ids" || { echo "FAIL: gb_mkstate"; exit 1; }
rid() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/ids"; }
DONE=$(rid done) PEND=$(rid pending) DENIED=$(rid denied) SUSP=$(rid suspend)
"$MK" "$tmp/state/state.db" age "$DENIED" 100 && "$MK" "$tmp/state/state.db" age "$DONE" 100 &&
	"$MK" "$tmp/state/state.db" age "$PEND" 100 || { echo "FAIL: gb_mkstate age"; exit 1; }
[ "$(count "$DENIED")" = "1 True 0" ] || bad "fixture: denied request: $(count "$DENIED")"

# ---- reconcile --dry-run decides, deletes nothing
run 29 reconcile --cheap --dry-run
grep -q '^prune  *state file  *-  *would  *1 finished request older than 90 days (policy.retention) and 13 rows of theirs (1 event, 0 instance records); 0 global events$' "$tmp/out" ||
	bad "reconcile --dry-run report: $(cat "$tmp/out")"
grep -q 'release 0, prune 1, group 0, block 0, notice 0, held 0, spot 0), dry run: nothing changed' "$tmp/out" || bad "reconcile summary: $(cat "$tmp/out")"
[ "$(count "$DENIED")" = "1 True 0" ] || bad "a dry run pruned: $(count "$DENIED")"

# ---- reconcile prunes: the old denied request goes with its rows; the old
# done one stays (3 of its instances run), as do pending and queued ones
run 29 --json reconcile --cheap
py "$tmp/out" <<'PY' || bad "reconcile --json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["pruned"] == {"requests": 1, "request_nodes": 11, "plans": 0, "attempts": 0,
                       "approvals": 1, "events": 1, "instances": 0, "global_events": 0}, d["pruned"]
a, = [a for a in d["actions"] if a["action"] == "prune"]
assert a["done"] and a["target"] == "state file" and a["error"] is None, a
PY
[ "$(count "$DENIED")" = gone ] || bad "denied request not pruned: $(count "$DENIED")"
for x in "$DONE" "$PEND" "$SUSP"; do
	[ "$(count "$x")" != gone ] || bad "request $x was pruned"
done
ok
run 0 --json requests --since 2000-01-01
py "$tmp/out" "$DENIED" <<'PY' || bad "requests after prune"
import json, sys
ids = [r["id"] for r in json.load(open(sys.argv[1]))["requests"]]
assert len(ids) == 3 and sys.argv[2] not in ids, ids
PY
grep -q 'reconcile action=prune target=state file detail="1 finished request' "$tmp/gb.log" ||
	bad "prune not logged: $(grep prune "$tmp/gb.log")"
# nothing left to prune: no action
run 29 reconcile --cheap
grep -q '^prune ' "$tmp/out" && bad "second pass pruned again: $(cat "$tmp/out")"
ok

# a worker started by reconcile for the queued suspend: let it finish
# (gpuburstctl state vacuum refuses to run beside one, tested below)
wait_worker() {
	"$PY" -c 'import fcntl, os, signal, sys
signal.alarm(120)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)
fcntl.flock(fd, fcntl.LOCK_EX)' "$tmp/state/worker.lock" || bad "a worker held its lock for 2 minutes"
}

# ---- a request denied 400 days ago
"$MK" "$tmp/state/state.db" pending "$C" 6002 600 g5 'g5-[20-31]' >"$tmp/p" || bad "mkstate"
OLD=$(cut -d' ' -f1 "$tmp/p")
run 21 deny "$OLD" --reason "old news"
"$MK" "$tmp/state/state.db" age "$OLD" 400

# ---- retention off: reconcile and state vacuum keep everything
write_conf "$tmp/off.yaml" "policy: {retention: off}"
C="$tmp/off.yaml" run 29 reconcile --cheap
grep -q '^prune ' "$tmp/out" && bad "retention off pruned: $(cat "$tmp/out")"
C="$tmp/off.yaml" run 0 state vacuum --dry-run
grep -q '^prune: off' "$tmp/out" || bad "state vacuum with retention off: $(cat "$tmp/out")"
[ "$(count "$OLD")" != gone ] || bad "retention off: the old denied request was pruned"

# ---- state vacuum: the request denied 400 days ago goes
wait_worker
run 0 --json state vacuum --dry-run
py "$tmp/out" <<'PY' || bad "state vacuum --dry-run json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dry_run"] and d["vacuum"] is None and d["bytes_before"] > 0, d
assert d["older_than"] == 90 * 86400 and d["cutoff"].endswith("Z"), d
assert d["pruned"]["requests"] == 1 and d["pruned"]["request_nodes"] == 12, d["pruned"]
PY
[ "$(count "$OLD")" != gone ] || bad "a dry run pruned"
run 0 state vacuum --older-than 300d
grep -q '^pruned 1 finished request older than 300 days (before .*Z): 1 approval, [0-9]* events, 12 node index rows; 0 global events$' "$tmp/out" ||
	bad "state vacuum --older-than 300d: $(cat "$tmp/out")"
grep -q '^vacuum: state.db [0-9.]* [KM]iB -> [0-9.]* [KM]iB (WAL 0 B) in [0-9.]* s$' "$tmp/out" ||
	bad "vacuum line: $(cat "$tmp/out")"
[ "$(count "$OLD")" = gone ] || bad "the request denied 400 days ago survived"
for x in "$DONE" "$PEND" "$SUSP"; do
	[ "$(count "$x")" != gone ] || bad "state vacuum pruned $x"
done
grep -q 'state_vacuum by=root uid=0 requests=1 ' "$tmp/gb.log" || bad "state vacuum not logged"
run 0 --json state vacuum
py "$tmp/out" <<'PY' || bad "state vacuum json: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["vacuum"]
assert not d["dry_run"] and v["checkpointed"] and v["wal_bytes_after"] == 0, d
assert 0 < v["bytes_after"] <= d["bytes_before"], d
PY
ctl --json requests show "$DONE" >"$tmp/out" || bad "done request after vacuum"
py "$tmp/out" <<'PY' || bad "done request's rows after vacuum"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["attempts"]) == 2 and len(d["instances"]) == 4 and len(d["plans"]) == 2, d
PY
ok

# ---- the worker's lock held: nothing is done (7)
wait_worker
"$PY" -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)
fcntl.flock(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(30)' "$tmp/state/worker.lock" "$tmp/locked" &
LOCKER=$!
for _ in $(seq 1 100); do [ -e "$tmp/locked" ] && break; sleep 0.05; done
run 7 state vacuum
grep -q 'the worker is running (it holds .*worker.lock): nothing pruned or vacuumed' "$tmp/err" ||
	bad "state vacuum with the lock held: $(cat "$tmp/err")"
run 0 state vacuum --dry-run	# a dry run needs no lock
kill "$LOCKER" 2>/dev/null
wait "$LOCKER" 2>/dev/null

# ---- a state directory and file writable by others: a listing warns and
# changes nothing; a command that writes tightens them (the group's write
# too, unless root owns them) and says so, on stderr and in the log
if [ "$(id -u)" = 0 ]; then dmode=775 fmode=664; else dmode=755 fmode=644; fi
chmod 777 "$tmp/state" && chmod 666 "$tmp/state/state.db" || bad "chmod"
run 0 requests
grep -q -F "gpuburstctl: warning: state directory $tmp/state is world-writable (mode 0777): the next program that opens it read-write tightens it to 0$dmode; state file $tmp/state/state.db is world-writable (mode 0666): the next program that opens it read-write tightens it to 0$fmode" "$tmp/err" ||
	bad "requests on a world-writable state directory: $(cat "$tmp/err")"
[ "$(stat -c %a "$tmp/state") $(stat -c %a "$tmp/state/state.db")" = "777 666" ] ||
	bad "a read-only command changed the modes: $(stat -c %a "$tmp/state" "$tmp/state/state.db")"
run 0 state vacuum
grep -q -F "gpuburstctl: warning: state directory $tmp/state was world-writable (mode 0777): tightened to 0$dmode; state file $tmp/state/state.db was world-writable (mode 0666): tightened to 0$fmode" "$tmp/err" ||
	bad "state vacuum on a world-writable state directory: $(cat "$tmp/err")"
[ "$(stat -c %a "$tmp/state") $(stat -c %a "$tmp/state/state.db")" = "$dmode $fmode" ] ||
	bad "modes after a write: $(stat -c %a "$tmp/state" "$tmp/state/state.db")"
grep -q -F "state_mode_tightened path=$tmp/state old=0777 new=0$dmode" "$tmp/gb.log" ||
	bad "tightening not logged: $(grep state_mode "$tmp/gb.log")"
run 0 requests
[ -s "$tmp/err" ] && bad "a warning once tightened: $(cat "$tmp/err")"
ok

# ---- usage
usage() {
	want=$1; shift
	ctl "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || bad "gpuburstctl $*: exit $rc, want 2"
	grep -q -- "$want" "$tmp/err" || bad "gpuburstctl $*: stderr lacks '$want': $(cat "$tmp/err")"
	ok
}
usage 'is under a day' state vacuum --older-than 12h
usage 'invalid --older-than "soon"' state vacuum --older-than soon
usage 'unexpected argument "now"' state vacuum now
usage 'state needs a subcommand (vacuum)' state

wait_worker	# none left behind in $tmp
echo "ctl-state: $n checks"
exit $fail
