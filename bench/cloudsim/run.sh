#!/bin/sh
# run.sh - measure gpuburst-cloudsim: RunInstances + DescribeInstances per
# second at zero latency (etc/cloudsim/bench.yaml), the simulator pinned to
# CPU 0 and the load driver to CPU 1, over SECONDS (default 10).
#
#   bench/cloudsim/run.sh BUILDDIR SRCDIR [SECONDS [CONNECTIONS]]
# or `make bench-cloudsim` in the build tree.  Loopback only; the simulator
# is stopped by its pid, also on failure.

set -u
BUILD="${1:?builddir}"
SRC="${2:?srcdir}"
SECONDS_RUN="${3:-10}"
CONNECTIONS="${4:-1}"
SIM="$BUILD/src/cloudsim/gpuburst-cloudsim"
LOAD="$BUILD/bench/cloudsim/cloudsim-load"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloudsim-bench.XXXXXX")"
PIN_SIM=
PIN_LOAD=
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	PIN_SIM="taskset -c 0"
	PIN_LOAD="taskset -c 1"
fi

cleanup() {
	if [ -s "$TMP/pid" ]; then
		kill "$(cat "$TMP/pid")" 2>/dev/null
		sleep 0.5
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

$PIN_SIM "$SIM" --scenario "$SRC/etc/cloudsim/bench.yaml" --listen 127.0.0.1:0 \
	--pid-file "$TMP/pid" --port-file "$TMP/port" --log "$TMP/sim.log" >/dev/null &
for _ in $(seq 1 100); do
	[ -s "$TMP/pid" ] && break
	sleep 0.05
done
[ -s "$TMP/pid" ] || { echo "run.sh: the simulator did not start" >&2; exit 1; }
echo "# gpuburst-cloudsim $(${SIM} --version | sed 's/.* //'), ${PIN_SIM:-unpinned}, scenario bench.yaml, ${SECONDS_RUN} s"
echo "# $(uname -m), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
$PIN_LOAD "$LOAD" --endpoint "http://127.0.0.1:$(cat "$TMP/port")" --seconds "$SECONDS_RUN" \
	--connections "$CONNECTIONS"
rc=$?
echo "simulator_cpu_seconds $(awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$(cat "$TMP/pid")/stat")"
echo "log_lines $(wc -l <"$TMP/sim.log")"
exit $rc
