#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# seal_interop.py - the gbseal1 format of src/libcloud/gb_seal.h, written
# again from its description with the openssl command and python3-cryptography.
#
#   seal_interop.py open PRIVKEY.pem TEXT-FILE           prints the message (hex)
#   seal_interop.py seal PUBKEY.pem CONTEXT HEX-MESSAGE  prints a gbseal1: text
#
# "open" takes the key apart with the openssl command only (pkeyutl for
# X25519, kdf for HKDF) and leaves AES-256-GCM, which the command does not
# do, to python3-cryptography; "seal" uses the library for everything,
# deriving the ephemeral key and the nonce as gb_seal.h says, so its text
# is gb_seal's, byte for byte.  Exit 77 without python3-cryptography.
import base64
import os
import subprocess
import sys
import tempfile

try:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import x25519
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
except ImportError:
    print("SKIP: python3-cryptography is needed")
    sys.exit(77)

PREFIX = "gbseal1:"
INFO = b"gpuburst seal 1 X25519"
DERIVE = b"gpuburst seal 1 ephemeral"
X25519_SPKI = bytes.fromhex("302a300506032b656e032100")  # DER before the raw key


def openssl(*args, data=None):
    return subprocess.run(("openssl",) + args, input=data, check=True,
                          capture_output=True).stdout


def open_text(priv, text):
    assert text.startswith(PREFIX), "no prefix"
    blob = base64.b64decode(text[len(PREFIX):], validate=True)
    assert blob[0] == 1, "version"
    assert blob[1] == 1, "key type %d, not X25519" % blob[1]
    eph = blob[2:34]
    hl = 34 + 12
    with tempfile.TemporaryDirectory() as d:
        peer = os.path.join(d, "eph.der")
        with open(peer, "wb") as f:
            f.write(X25519_SPKI + eph)
        ss = openssl("pkeyutl", "-derive", "-inkey", priv, "-peerkey", peer,
                     "-peerform", "DER")
        pub = openssl("pkey", "-in", priv, "-pubout", "-outform", "DER")[-32:]
        key = bytes.fromhex(openssl(
            "kdf", "-keylen", "32", "-kdfopt", "digest:SHA256",
            "-kdfopt", "hexkey:" + ss.hex(), "-kdfopt", "hexsalt:" + (eph + pub).hex(),
            "-kdfopt", "info:" + INFO.decode(), "HKDF").decode().strip().replace(":", ""))
    return AESGCM(key).decrypt(blob[hl - 12:hl], blob[hl:], blob[:hl])


def seal(pub_path, context, msg):
    with open(pub_path, "rb") as f:
        pub = serialization.load_pem_public_key(f.read())
    if not isinstance(pub, x25519.X25519PublicKey):
        raise SystemExit("key type")
    r = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    okm = HKDF(hashes.SHA256(), 44, None, DERIVE + r + context).derive(msg)
    eph = x25519.X25519PrivateKey.from_private_bytes(okm[:32])
    nonce = okm[32:]
    e = eph.public_key().public_bytes(serialization.Encoding.Raw,
                                      serialization.PublicFormat.Raw)
    key = HKDF(hashes.SHA256(), 32, e + r, INFO).derive(eph.exchange(pub))
    head = bytes([1, 1]) + e + nonce
    blob = head + AESGCM(key).encrypt(nonce, msg, head)
    return PREFIX + base64.b64encode(blob).decode()


if __name__ == "__main__":
    if sys.argv[1:2] == ["open"] and len(sys.argv) == 4:
        with open(sys.argv[3]) as f:
            print(open_text(sys.argv[2], f.read()).hex())
    elif sys.argv[1:2] == ["seal"] and len(sys.argv) == 5:
        print(seal(sys.argv[2], sys.argv[3].encode(), bytes.fromhex(sys.argv[4])), end="")
    else:
        raise SystemExit("usage: seal_interop.py open KEY TEXT-FILE | seal KEY CONTEXT HEX")
