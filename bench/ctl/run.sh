#!/bin/sh
# bench/ctl/run.sh BUILDDIR [RUNS [BASE_BUILDDIR]] - gpuburstctl's listings
# on a state file of 100000 instance records and 100000 requests: wall
# time and peak memory of each run (/usr/bin/time), RUNS runs each (default
# 3).  With BASE_BUILDDIR each case runs with that build right after this
# one, on a copy of the same file (made by the base build's own driver, as
# an older build refuses a newer schema), so a change is measured before
# and after in one session.
set -eu
B=$1 RUNS=${2:-3} BASE=${3:-}
PY=/usr/bin/python3
[ -x "$B/bench/resume/resume-bench" ] && [ -x "$B/src/gpuburstctl/gpuburstctl" ] ||
	{ echo "build first (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)"; exit 1; }
T=$(mktemp -d /tmp/gb-bench-ctl.XXXXXX)
trap 'rm -rf "$T"' EXIT

# BUILD DIR: DIR/state.db with 100000 instances and 100000 requests (the
# driver's 1000, copied 99 times under new ids)
prefill() {
	mkdir -p "$2/state"
	"$1/bench/resume/resume-bench" prefill "$2/state/state.db" 100000 >/dev/null
	"$PY" - "$2/state/state.db" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("PRAGMA table_info(requests)")]
sel = ",".join("printf('%016x', rowid + ?)" if c == "id" else c for c in cols)
for k in range(1, 100):
    db.execute("INSERT INTO requests (%s) SELECT %s FROM requests WHERE rowid <= 1000"
               % (",".join(cols), sel), (10**9 + 1000 * k,))
db.commit()
PYEOF
	cat >"$2/gpuburst.yaml" <<CONF
cluster_name: bench
state_dir: $2/state
log: {file: $2/gpuburst.log, level: info}
regions:
  - name: ap-south-1
    ami: ami-0123456789abcdef0
    azs: [{name: ap-south-1a, subnets: [subnet-bench-a1]}]
fallback_groups:
  asia: {consumer_regions: [ap-southeast-1], fallback_regions: [ap-south-1]}
nodesets:
  - {name: g5, nodes: 'g5-[1-10]', instance_type: g5.xlarge, home_region: ap-southeast-1}
CONF
}
prefill "$B" "$T/after"
[ -z "$BASE" ] || prefill "$BASE" "$T/before"

# one BUILD DIR ARGS...: one run, its output discarded; "SECONDS/KB" added to $t
one() {
	bd=$1 dd=$2
	shift 2
	env -u GPUBURST_CONF SLURM_CONF=/nonexistent /usr/bin/time -f '%e/%M' -o "$T/time" \
		"$bd/src/gpuburstctl/gpuburstctl" -c "$dd/gpuburst.yaml" "$@" >/dev/null 2>"$T/err" ||
		{ echo "gpuburstctl $* ($bd) failed: $(cat "$T/err")"; exit 1; }
	t="$t $(cat "$T/time")"
}
echo "machine: $(nproc) CPU; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gpuburstctl, 100000 instances and 100000 requests, $RUNS runs each (s/peak KB):"
for args in "instances" "instances --all" "--json instances" "requests" "--json requests"; do
	a="" b=""
	for i in $(seq "$RUNS"); do
		t=$a
		# shellcheck disable=SC2086
		one "$B" "$T/after" $args
		a=$t
		[ -n "$BASE" ] || continue
		t=$b
		# shellcheck disable=SC2086
		one "$BASE" "$T/before" $args
		b=$t
	done
	if [ -n "$BASE" ]; then
		printf '%-18s before:%s  after:%s\n' "$args" "$b" "$a"
	else
		printf '%-18s%s\n' "$args" "$a"
	fi
done
