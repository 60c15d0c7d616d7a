#!/bin/sh
# worker-order.sh - the order between requests of the same nodes from the
# two families (a resume; a suspend, resume-fail or terminate), which the
# worker keeps although it claims terminations first and skips a backed-off
# row.  The five requests are queued while the worker lock is held (the
# workers the programs start find it taken and exit), then one
# gpuburst-worker runs them against gpuburst-cloudsim's default scenario,
# Slurm a closed port:
#  - S1, a suspend of g5-1 backed off for 3 s (as after a failed attempt),
#    and R1, a resume of g5-1 queued after it: R1 is claimed first (S1 is
#    not runnable yet), finds S1 older, waits behind it ("request_waits"),
#    and starts after S1 ended;
#  - R2, a resume of g5-2, and S2, a suspend of g5-2 queued after it: S2 is
#    claimed first (terminations first), waits behind R2 (queued, or
#    running when another thread claimed it just before), and starts after
#    R2 ended;
#  - R3, a resume of g5-3, waits for nothing;
#  - every request ends done, each started once more than it waited.
CLOUDSIM_NO_AWS_CLI=yes
. "$srcdir/cloudsim-lib.sh"

command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 is not installed (Debian: sqlite3)"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
RESUME="$GB_TOP_BUILDDIR/src/resume/gpuburst-resume"
SUSPEND="$GB_TOP_BUILDDIR/src/suspend/gpuburst-suspend"
WORKER="$GB_TOP_BUILDDIR/src/worker/gpuburst-worker"
export GPUBURST_WORKER="$WORKER"

start_sim "$GB_TOP_SRCDIR/etc/cloudsim/default.yaml"
ctl_conf
printf 'ClusterName=unreach\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nMessageTimeout=2\nAuthType=auth/none\n' \
	>"$TMP/slurm.conf"
export SLURM_CONF="$TMP/slurm.conf"
sql() { sqlite3 -cmd '.timeout 10000' "$TMP/state/state.db" "$1"; }
# the id of the newest request
newest() { sql "SELECT id FROM requests ORDER BY created_at DESC, rowid DESC LIMIT 1"; }

# the workers detach: wait for the last one before the directory goes
trap 'wait_worker; cleanup' EXIT

# ---- the queue, the worker lock held
mkdir -p "$TMP/state"
chmod 700 "$TMP/state"
"$PYTHON3" - "$TMP/state/worker.lock" "$TMP/ids" "$RESUME" "$SUSPEND" "$TMP/gb.yaml" <<'EOF' ||
import fcntl, os, subprocess, sys, time
lock, out, resume, suspend, conf = sys.argv[1:]
fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o640)
fcntl.flock(fd, fcntl.LOCK_EX)
for prog, node in ((suspend, "g5-1"), (resume, "g5-1"), (resume, "g5-2"),
                   (suspend, "g5-2"), (resume, "g5-3")):
    subprocess.run([prog, "-c", conf, node], check=True)
    time.sleep(0.01)	# created_at apart: the order is the test
EOF
	fail "queueing the requests"
ids=$(sql "SELECT group_concat(id, ' ') FROM (SELECT id FROM requests ORDER BY created_at, rowid)")
set -- $ids
[ $# = 5 ] || fail "5 requests queued, found $#: $ids"
S1=$1 R1=$2 R2=$3 S2=$4 R3=$5
expect_eq "kinds in queue order" \
	"$(sql "SELECT group_concat(kind || ':' || nodes || ':' || state, ' ') FROM (SELECT * FROM requests ORDER BY created_at, rowid)")" \
	"suspend:g5-1:queued resume:g5-1:queued resume:g5-2:queued suspend:g5-2:queued resume:g5-3:queued"
sql "UPDATE requests SET not_before = (julianday('now') - 2440587.5) * 86400.0 + 3 WHERE id = '$S1'" ||
	fail "backing S1 off"
ok "queued S1=$S1 (backed off 3 s) R1=$R1 R2=$R2 S2=$S2 R3=$R3"

# ---- one worker runs them: this one, or one the programs started that
# took the lock when the holder let it go (this one then exits at once)
timeout 120 "$WORKER" -c "$TMP/gb.yaml" >"$TMP/worker.out" 2>&1 ||
	fail "gpuburst-worker: $(cat "$TMP/worker.out")"
for _ in $(seq 1 600); do
	[ "$(sql "SELECT count(*) FROM requests WHERE state IN ('queued', 'running')")" = 0 ] && break
	sleep 0.1
done
wait_worker
[ "$(sql "SELECT count(*) FROM requests WHERE state = 'done'")" = 5 ] ||
	fail "not all done: $(sql "SELECT group_concat(state, ' ') FROM requests"); worker: $(cat "$TMP/worker.out"); log: $(tail -n 30 "$TMP/gb.log")"
expect_eq "all done" "$(sql "SELECT group_concat(state, ' ') FROM (SELECT state FROM requests ORDER BY created_at, rowid)")" \
	"done done done done done"

# line numbers of the first "KIND req=ID" in the log
at() { grep -n "$1 req=$2 " "$TMP/gb.log" | head -n 1 | cut -d: -f1; }
waits() { grep -c "request_waits req=$1 behind=$2 " "$TMP/gb.log"; }

[ "$(waits "$R1" "$S1")" -ge 1 ] || fail "R1 did not wait behind S1: $(grep request_waits "$TMP/gb.log")"
[ "$(at request_start "$R1")" -gt "$(at request_end "$S1")" ] ||
	fail "R1 started before S1 ended: $(grep -n "req=\($R1\|$S1\) " "$TMP/gb.log" | grep 'request_\(start\|end\|waits\)')"
ok "R1 waited behind the older, backed-off S1 and started after it ended"

[ "$(waits "$S2" "$R2")" -ge 1 ] || fail "S2 did not wait behind R2: $(grep request_waits "$TMP/gb.log")"
[ "$(at request_start "$S2")" -gt "$(at request_end "$R2")" ] ||
	fail "S2 started before R2 ended"
ok "S2, claimed first, waited behind the older R2 and started after it ended"

[ "$(grep -c "request_waits req=$R3 " "$TMP/gb.log")" = 0 ] || fail "R3 waited: $(grep "req=$R3 " "$TMP/gb.log")"
[ "$(grep -c "request_waits req=$S1 \|request_waits req=$R2 " "$TMP/gb.log")" = 0 ] ||
	fail "an older request waited: $(grep request_waits "$TMP/gb.log")"
for r in $S1 $R1 $R2 $S2 $R3; do
	starts=$(grep -c "request_start req=$r " "$TMP/gb.log")
	w=$(grep -c "request_waits req=$r " "$TMP/gb.log")
	[ "$starts" = 1 ] || fail "request $r started $starts times"
	[ "$(sql "SELECT claims FROM requests WHERE id = '$r'")" = $((w + 1)) ] ||
		fail "request $r: claims $(sql "SELECT claims FROM requests WHERE id = '$r'"), waited $w times"
done
ok "R3 waited for nothing; each request started once, claimed once more than it waited"
