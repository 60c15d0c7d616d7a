#!/bin/sh
# run.sh BUILDDIR SRCDIR [JOBS] [REPEAT] [BASE_BUILDDIR] - the burst bench:
# JOBS (16) one-node jobs submitted at once through Slurm into a landscape
# with two dry pools (burst-one.sh), REPEAT (3) times; with BASE_BUILDDIR,
# that build runs right after this one in each round, so a change is
# measured before and after side by side.  Root only (the lab).
set -eu
B=$1 S=$2 JOBS=${3:-16} REPEAT=${4:-3} BASE=${5:-}
[ "$(id -u)" = 0 ] || { echo "needs root (the lab)"; exit 77; }
one() {	# BUILDDIR
	GB_TOP_BUILDDIR=$(cd "$1" && pwd) GB_TOP_SRCDIR=$(cd "$S" && pwd) \
		sh "$S/bench/burst/burst-one.sh" "$JOBS" 2>&1 | tail -n 1
}
echo "burst: $JOBS one-node jobs at once, $REPEAT rounds$([ -n "$BASE" ] && echo ", base $BASE")"
for r in $(seq 1 "$REPEAT"); do
	printf '  round %s  %s: %s\n' "$r" "$B" "$(one "$B")"
	[ -n "$BASE" ] && printf '  round %s  %s: %s\n' "$r" "$BASE" "$(one "$BASE")"
done
