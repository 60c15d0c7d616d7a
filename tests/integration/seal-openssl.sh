#!/bin/sh
# seal-openssl.sh - gb_seal agrees with the openssl command: X25519 keys
# made by `openssl genpkey` and `openssl pkey -pubout` load; a text gb_seal
# makes is opened by the openssl command (X25519 derive, HKDF) with
# python3-cryptography for AES-GCM; one made from the format's description
# (seal_interop.py, deriving the ephemeral key and nonce as gb_seal.h says)
# is gb_seal's text byte for byte and opens with gb_seal_open; the same
# request seals to the same text, another request to another; RSA,
# Ed25519 and private keys are refused.  Exit 77 without openssl; the
# cross-checks need python3-cryptography (skipped, saying so, without).
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
openssl genpkey -algorithm ED25519 -out "$TMP/ed.pem" 2>/dev/null || fail "genpkey ED25519"
for k in x r ed; do
	openssl pkey -in "$TMP/$k.pem" -pubout -out "$TMP/$k.pub" || fail "pkey -pubout $k"
done
head -c 1024 /dev/urandom >"$TMP/munge.key"
hex=$(od -An -v -tx1 "$TMP/munge.key" | tr -d ' \n')

"$TOOL" seal "$TMP/x.pub" req-1 <"$TMP/munge.key" >"$TMP/x.txt" || fail "seal to x.pub"
grep -q '^gbseal1:[A-Za-z0-9+/=]*$' "$TMP/x.txt" || fail "not one gbseal1: line"
printf '#!/bin/sh\n# %s\nexit 0\n' "$(cat "$TMP/x.txt")" >"$TMP/x.ud"
"$TOOL" open "$TMP/x.pem" <"$TMP/x.ud" >"$TMP/x.out" || fail "open with x.pem"
cmp -s "$TMP/munge.key" "$TMP/x.out" || fail "the key did not come back"
ok "openssl genpkey keys seal and open a 1024-byte key through user data"

"$TOOL" seal "$TMP/x.pub" req-1 <"$TMP/munge.key" >"$TMP/x.again" || fail "seal again"
cmp -s "$TMP/x.txt" "$TMP/x.again" || fail "the same request sealed to another text"
"$TOOL" seal "$TMP/x.pub" req-2 <"$TMP/munge.key" >"$TMP/x.other" || fail "seal req-2"
cmp -s "$TMP/x.txt" "$TMP/x.other" && fail "another request sealed to the same text"
ok "the same request seals to the same text, another request to another"

if [ -n "$cross" ]; then
	got=$("${PYTHON3:-python3}" "$PY" open "$TMP/x.pem" "$TMP/x.txt") ||
		fail "the openssl command did not open gb_seal's text"
	[ "$got" = "$hex" ] || fail "the openssl command opened another message"
	ok "the openssl command (with AES-GCM from python3-cryptography) opens gb_seal's text"
	"${PYTHON3:-python3}" "$PY" seal "$TMP/x.pub" req-1 "$hex" >"$TMP/x.py.txt" ||
		fail "seal_interop.py seal"
	cmp -s "$TMP/x.txt" "$TMP/x.py.txt" ||
		fail "a text made from the format's description differs from gb_seal's"
	"$TOOL" open "$TMP/x.pem" <"$TMP/x.py.txt" >"$TMP/x.py.out" ||
		fail "gb_seal_open refused a text made from the format's description"
	cmp -s "$TMP/munge.key" "$TMP/x.py.out" || fail "wrong message from the other sealer"
	ok "a text made from the format's description is gb_seal's, byte for byte, and opens"
fi

"$TOOL" open "$TMP/r.pem" <"$TMP/x.txt" 2>"$TMP/err" && fail "an RSA key opened a text"
grep -q "wrong key type RSA" "$TMP/err" || fail "wrong-key message: $(cat "$TMP/err")"
"$TOOL" seal "$TMP/r.pub" req-1 <"$TMP/munge.key" 2>"$TMP/err" && fail "sealed to RSA"
grep -q "wrong key type RSA.*seal keys are X25519" "$TMP/err" ||
	fail "RSA-key message: $(cat "$TMP/err")"
"$TOOL" seal "$TMP/ed.pub" req-1 <"$TMP/munge.key" 2>"$TMP/err" && fail "sealed to Ed25519"
grep -q "wrong key type ED25519" "$TMP/err" || fail "key-type message: $(cat "$TMP/err")"
"$TOOL" seal "$TMP/x.pem" req-1 <"$TMP/munge.key" 2>"$TMP/err" && fail "sealed to a private key"
grep -q "holds a private key" "$TMP/err" || fail "private-key message: $(cat "$TMP/err")"
ok "RSA, Ed25519 and private keys are refused, naming why"
exit 0
