#!/bin/sh
# seal-openssl.sh - gb_seal agrees with the openssl command: keys made by
# `openssl genpkey` (X25519, RSA 3072) and `openssl pkey -pubout` load; a
# text gb_seal makes is opened by the openssl command (X25519 derive, HKDF,
# RSA-OAEP) with python3-cryptography for AES-GCM, and one made from the
# format's description (seal_interop.py) is opened by gb_seal_open; an
# RSA 2048 key and an Ed25519 key are refused.  Exit 77 without openssl;
# the cross-checks need python3-cryptography (skipped, saying so, without).
set -u
: "${GB_TOP_BUILDDIR:?}" "${GB_TOP_SRCDIR:?}"
TOOL="$GB_TOP_BUILDDIR/tests/integration/gb_sealtool"
PY="$GB_TOP_SRCDIR/tests/integration/seal_interop.py"
command -v openssl >/dev/null 2>&1 || { echo "SKIP: the openssl command is needed"; exit 77; }
openssl version | grep -q '^OpenSSL 3' || { echo "SKIP: OpenSSL 3's command is needed"; exit 77; }
TMP="$(mktemp -d /tmp/gb-seal.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok - $*"; }
cross=yes
if ! "${PYTHON3:-python3}" -c 'import cryptography' 2>/dev/null; then
	cross=
	echo "# skipping the cross-checks: python3-cryptography is not installed"
fi

openssl genpkey -algorithm X25519 -out "$TMP/x.pem" 2>/dev/null || fail "genpkey X25519"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072 -out "$TMP/r.pem" 2>/dev/null ||
	fail "genpkey RSA"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/small.pem" 2>/dev/null ||
	fail "genpkey RSA 2048"
openssl genpkey -algorithm ED25519 -out "$TMP/ed.pem" 2>/dev/null || fail "genpkey ED25519"
for k in x r small ed; do
	openssl pkey -in "$TMP/$k.pem" -pubout -out "$TMP/$k.pub" || fail "pkey -pubout $k"
done
head -c 1024 /dev/urandom >"$TMP/munge.key"
hex=$(od -An -v -tx1 "$TMP/munge.key" | tr -d ' \n')

for k in x r; do
	"$TOOL" seal "$TMP/$k.pub" <"$TMP/munge.key" >"$TMP/$k.txt" || fail "seal to $k.pub"
	grep -q '^gbseal1:[A-Za-z0-9+/=]*$' "$TMP/$k.txt" || fail "$k: not one gbseal1: line"
	printf '#!/bin/sh\n# %s\nexit 0\n' "$(cat "$TMP/$k.txt")" >"$TMP/$k.ud"
	"$TOOL" open "$TMP/$k.pem" <"$TMP/$k.ud" >"$TMP/$k.out" || fail "open with $k.pem"
	cmp -s "$TMP/munge.key" "$TMP/$k.out" || fail "$k: the key did not come back"
	ok "$k: openssl genpkey keys seal and open a 1024-byte key through user data"
	[ -n "$cross" ] || continue
	got=$("${PYTHON3:-python3}" "$PY" open "$TMP/$k.pem" "$TMP/$k.txt") ||
		fail "$k: the openssl command did not open gb_seal's text"
	[ "$got" = "$hex" ] || fail "$k: the openssl command opened another message"
	ok "$k: the openssl command (with AES-GCM from python3-cryptography) opens gb_seal's text"
	"${PYTHON3:-python3}" "$PY" seal "$TMP/$k.pub" "$hex" >"$TMP/$k.py.txt" ||
		fail "$k: seal_interop.py seal"
	"$TOOL" open "$TMP/$k.pem" <"$TMP/$k.py.txt" >"$TMP/$k.py.out" ||
		fail "$k: gb_seal_open refused a text made from the format's description"
	cmp -s "$TMP/munge.key" "$TMP/$k.py.out" || fail "$k: wrong message from the other sealer"
	ok "$k: gb_seal_open opens a text made from the format's description"
done

"$TOOL" open "$TMP/r.pem" <"$TMP/x.txt" 2>"$TMP/err" && fail "an RSA key opened an X25519 text"
grep -q "sealed to an X25519 key" "$TMP/err" || fail "wrong-key message: $(cat "$TMP/err")"
"$TOOL" seal "$TMP/small.pub" <"$TMP/munge.key" 2>"$TMP/err" && fail "sealed to RSA 2048"
grep -q "RSA key of 2048 bits" "$TMP/err" || fail "small-key message: $(cat "$TMP/err")"
"$TOOL" seal "$TMP/ed.pub" <"$TMP/munge.key" 2>"$TMP/err" && fail "sealed to Ed25519"
grep -q "wrong key type ED25519" "$TMP/err" || fail "key-type message: $(cat "$TMP/err")"
"$TOOL" seal "$TMP/x.pem" <"$TMP/munge.key" 2>"$TMP/err" && fail "sealed to a private key"
grep -q "holds a private key" "$TMP/err" || fail "private-key message: $(cat "$TMP/err")"
ok "RSA 2048, Ed25519 and private keys are refused, naming why"
exit 0
