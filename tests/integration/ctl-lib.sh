# ctl-lib.sh - sourced by the ctl-*.sh tests that run gpuburstctl on a state
# file built by gb_mkstate: the programs, python3 (skip without it), a
# private directory removed at exit (0755: the non-administrator checks run
# as nobody), and the counters bad/ok.
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
CTL="$GB_TOP_BUILDDIR/src/gpuburstctl/gpuburstctl"
MK="$GB_TOP_BUILDDIR/tests/integration/gb_mkstate"
PY="${PYTHON3:-python3}"
"$PY" -c 'import json' 2>/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
fail=0
n=0
bad() { echo "FAIL: $*"; fail=1; }
ok() { n=$((n + 1)); }
