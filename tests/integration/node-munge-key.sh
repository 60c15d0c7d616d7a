#!/bin/sh
# node-munge-key.sh - `gpuburst-node munge-key` against the fake IMDS of
# node-imds.py on 127.0.0.1, its user data carrying a munge key sealed by
# the project's own sealer (gb_sealtool, gb_seal()):
#  - the key is written with the sealed bytes, mode 0400, owned as its
#    directory (as the munge user when root runs the test), no temporary
#    file left; IMDS reached from --source-address;
#    a second run replaces it;
#  - no munge.sealed_with: an error naming the key, exit 3 (config);
#  - a private key group or others may read: exit 22, nothing written;
#  - the wrong private key: "sealed for another key", nothing written;
#  - no sealed text in the user data, or no user data: an error, nothing
#    written.
# Exit 77 without python3 or the openssl command (the keys are openssl's).
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
PYTHON3="${PYTHON3:-python3}"
NODE="$GB_TOP_BUILDDIR/src/node/gpuburst-node"
SEAL="$GB_TOP_BUILDDIR/tests/integration/gb_sealtool"
"$PYTHON3" -c 'import http.server, json' 2>/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
command -v openssl >/dev/null 2>&1 || { echo "SKIP: the openssl command is needed"; exit 77; }
TMP="$(mktemp -d /tmp/gb-munge.XXXXXX)"
D="$TMP/imds"
SRV=
mkdir -p "$D" "$TMP/etc/munge" "$TMP/other"
cleanup() {
	rc=$?
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	[ -f "$TMP/err" ] && { echo "--- stderr"; tail -n 20 "$TMP/err"; }
	exit 1
}
ok() { echo "ok - $*"; }
# only the key itself in the directory: no key left, no temporary file
only_key() {
	[ "$(ls -A "$1")" = "munge.key" ] || fail "$1 holds: $(ls -A "$1")"
}
empty_dir() {
	[ -z "$(ls -A "$1")" ] || fail "$1 should be empty, holds: $(ls -A "$1")"
}
# run_node CONFIG WANT_STATUS [ARGS...]: munge-key, stderr to $TMP/err
run_node() {
	cfg=$1 want=$2
	shift 2
	"$NODE" -c "$cfg" "$@" munge-key 2>"$TMP/err"
	got=$?
	[ "$got" = "$want" ] || fail "munge-key with $cfg exited $got, want $want"
}
unset AWS_EC2_METADATA_DISABLED	# this IMDS is our own, on 127.0.0.1

"$PYTHON3" "$GB_TOP_SRCDIR/tests/integration/node-imds.py" "$D" &
SRV=$!
i=0
while [ ! -f "$D/port" ]; do
	i=$((i + 1)); [ "$i" -gt 100 ] && fail "the fake IMDS did not start"; sleep 0.05
done
URL="http://127.0.0.1:$(cat "$D/port")"

umask 022
for k in node wrong; do
	openssl genpkey -algorithm X25519 -out "$TMP/$k-key.pem" 2>/dev/null || fail "genpkey $k"
	openssl pkey -in "$TMP/$k-key.pem" -pubout -out "$TMP/$k-key.pub" || fail "pubout $k"
	chmod 0400 "$TMP/$k-key.pem"
done
head -c 128 /dev/urandom >"$TMP/munge.src"
"$SEAL" seal "$TMP/node-key.pub" req-7 <"$TMP/munge.src" >"$TMP/sealed" || fail "gb_sealtool seal"
printf '#!/bin/sh\nGPUBURST_NODES="g5-1"\n# %s\nexit 0\n' "$(cat "$TMP/sealed")" >"$D/user-data"

conf() {	# conf NAME KEY-PATH [SEALED_WITH]
	{
		echo "imds: {endpoint: '$URL', timeout: 2s}"
		if [ -n "${3:-}" ]; then
			echo "munge: {key: $2, sealed_with: $3}"
		else
			echo "munge: {key: $2}"
		fi
	} >"$TMP/$1.yaml"
}
conf good "$TMP/etc/munge/munge.key" "$TMP/node-key.pem"
conf wrong "$TMP/other/munge.key" "$TMP/wrong-key.pem"
conf nokey "$TMP/other/munge.key"
conf other "$TMP/other/munge.key" "$TMP/node-key.pem"

# ---- the key written ------------------------------------------------------
"$NODE" -c "$TMP/good.yaml" check >"$TMP/check" || fail "check"
grep -qxF "  sealed_with: $TMP/node-key.pem" "$TMP/check" || fail "check: $(cat "$TMP/check")"
run_node "$TMP/good.yaml" 0 --source-address 127.0.0.7
K="$TMP/etc/munge/munge.key"
cmp -s "$TMP/munge.src" "$K" || fail "munge.key does not hold the sealed key"
[ "$(stat -c %a "$K")" = 400 ] || fail "munge.key mode $(stat -c %a "$K"), want 400"
# the directory's owner, or the munge user when the directory is root's
owner=$(stat -c %u:%g "$TMP/etc/munge")
if [ "${owner%%:*}" = 0 ] && id munge >/dev/null 2>&1; then
	owner="$(id -u munge):$(id -g munge)"
fi
[ "$(stat -c %u:%g "$K")" = "$owner" ] ||
	fail "munge.key owner $(stat -c %u:%g "$K"), want $owner"
only_key "$TMP/etc/munge"
grep -q "munge_key_written" "$TMP/err" || fail "no munge_key_written line"
grep -qF "127.0.0.7 GET /latest/user-data 200" "$D/requests.log" ||
	fail "user data not read from --source-address: $(cat "$D/requests.log")"
grep -qF "$(od -An -tx1 "$TMP/munge.src" | head -n 1 | tr -d ' ')" "$TMP/err" &&
	fail "the key's bytes were logged"
ok "the sealed key is written: its bytes, mode 0400, its directory's owner, no temporary file"

# a second boot: the key is replaced, atomically, by the same bytes
run_node "$TMP/good.yaml" 0
cmp -s "$TMP/munge.src" "$K" || fail "munge.key after the second run"
[ "$(stat -c %a "$K")" = 400 ] || fail "mode after the second run"
only_key "$TMP/etc/munge"
ok "a second run replaces the key"

# ---- errors: nothing written ----------------------------------------------
run_node "$TMP/nokey.yaml" 3
grep -qF "munge.sealed_with is not set in $TMP/nokey.yaml" "$TMP/err" ||
	fail "no sealed_with: $(cat "$TMP/err")"
empty_dir "$TMP/other"
ok "without munge.sealed_with: an error naming the key (exit 3)"

chmod 0640 "$TMP/node-key.pem"
run_node "$TMP/other.yaml" 22
grep -qF "mode 0640 lets group or others at the private key" "$TMP/err" ||
	fail "private key mode: $(cat "$TMP/err")"
chmod 0400 "$TMP/node-key.pem"
empty_dir "$TMP/other"
ok "a private key group or others may read is refused (exit 22)"

run_node "$TMP/wrong.yaml" 10
grep -qF "sealed for another key or altered" "$TMP/err" || fail "wrong key: $(cat "$TMP/err")"
empty_dir "$TMP/other"
ok "the wrong private key: an error, no key written (exit 10)"

printf '#!/bin/sh\nGPUBURST_NODES="g5-1"\nexit 0\n' >"$D/user-data"
run_node "$TMP/other.yaml" 8
grep -qF "user data: no gbseal1: text" "$TMP/err" || fail "no token: $(cat "$TMP/err")"
empty_dir "$TMP/other"
rm -f "$D/user-data"
run_node "$TMP/other.yaml" 8
grep -qF "the instance has no user data" "$TMP/err" || fail "no user data: $(cat "$TMP/err")"
empty_dir "$TMP/other"
ok "no sealed text, no user data: an error, no key written (exit 8)"

exit 0
