#!/bin/sh
# cloudsim-cli.sh - gpuburst-cloudsim refuses to listen anywhere but on
# loopback (192.0.2.1, the wildcards 0.0.0.0 and [::]) and refuses a bad
# --listen, each with exit 2, a message naming the address, and nothing
# started (no pid file).  No address here is ever bound: the refusal comes
# before the socket.
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
CLOUDSIM="$GB_TOP_BUILDDIR/src/cloudsim/gpuburst-cloudsim"
SCENARIO="$GB_TOP_SRCDIR/etc/cloudsim/default.yaml"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok - $*"; }
[ -x "$CLOUDSIM" ] || fail "$CLOUDSIM not built"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/cloudsim-cli.XXXXXX")" || fail "mktemp"
trap 'rm -rf "$TMP"' EXIT

refused() {	# refused ADDRESS MESSAGE
	rc=0
	"$CLOUDSIM" --scenario "$SCENARIO" --listen "$1" --pid-file "$TMP/sim.pid" \
		>"$TMP/out" 2>"$TMP/err" </dev/null || rc=$?
	[ "$rc" = 2 ] || fail "--listen $1: exit $rc, expected 2 ($(cat "$TMP/err"))"
	grep -qF -- "--listen $1: $2" "$TMP/err" || fail "--listen $1: message: $(cat "$TMP/err")"
	[ ! -e "$TMP/sim.pid" ] || fail "--listen $1: a pid file was written"
	ok "--listen $1 refused: $2"
}

refused 192.0.2.1:0 "refusing a non-loopback address"
refused 0.0.0.0:0 "refusing a non-loopback address"
refused '[::]:0' "refusing a non-loopback address"
refused nonsense "expected ADDRESS:PORT"
refused 127.0.0.1:99999 "bad port '99999'"
