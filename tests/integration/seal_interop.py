#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# seal_interop.py - the gbseal1 format of src/libcloud/gb_seal.h, written
# again from its description with the openssl command and python3-cryptography.
#
#   seal_interop.py open PRIVKEY.pem TEXT-FILE   prints the message (hex)
#   seal_interop.py seal PUBKEY.pem HEX-MESSAGE  prints a gbseal1: text
#
# "open" takes the key apart with the openssl command only (pkeyutl for
# RSA-OAEP and X25519, kdf for HKDF) and leaves AES-256-GCM, which the
# command does not do, to python3-cryptography; "seal" uses the library
# for everything.  Exit 77 without python3-cryptography.
import base64
import os
import subprocess
import sys
import tempfile

try:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa, x25519
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
except ImportError:
    print("SKIP: python3-cryptography is needed")
    sys.exit(77)

PREFIX = "gbseal1:"
INFO = b"gpuburst seal 1 X25519"
X25519_SPKI = bytes.fromhex("302a300506032b656e032100")  # DER before the raw key


def openssl(*args, data=None):
    return subprocess.run(("openssl",) + args, input=data, check=True,
                          capture_output=True).stdout


def open_text(priv, text):
    assert text.startswith(PREFIX), "no prefix"
    blob = base64.b64decode(text[len(PREFIX):], validate=True)
    assert blob[0] == 1, "version"
    kind = blob[1]
    with tempfile.TemporaryDirectory() as d:
        if kind == 1:
            eph = blob[2:34]
            hl = 34 + 12
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
        elif kind == 2:
            k = int.from_bytes(blob[2:4], "big")
            hl = 4 + k + 12
            key = openssl("pkeyutl", "-decrypt", "-inkey", priv,
                          "-pkeyopt", "rsa_padding_mode:oaep",
                          "-pkeyopt", "rsa_oaep_md:sha256",
                          "-pkeyopt", "rsa_mgf1_md:sha256", data=blob[4:4 + k])
        else:
            raise SystemExit("unknown key type %d" % kind)
    return AESGCM(key).decrypt(blob[hl - 12:hl], blob[hl:], blob[:hl])


def seal(pub_path, msg):
    with open(pub_path, "rb") as f:
        pub = serialization.load_pem_public_key(f.read())
    nonce = os.urandom(12)
    if isinstance(pub, x25519.X25519PublicKey):
        eph = x25519.X25519PrivateKey.generate()
        e = eph.public_key().public_bytes(serialization.Encoding.Raw,
                                          serialization.PublicFormat.Raw)
        r = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        key = HKDF(hashes.SHA256(), 32, e + r, INFO).derive(eph.exchange(pub))
        head = bytes([1, 1]) + e + nonce
    elif isinstance(pub, rsa.RSAPublicKey):
        key = os.urandom(32)
        w = pub.encrypt(key, padding.OAEP(padding.MGF1(hashes.SHA256()), hashes.SHA256(), None))
        head = bytes([1, 2]) + len(w).to_bytes(2, "big") + w + nonce
    else:
        raise SystemExit("key type")
    blob = head + AESGCM(key).encrypt(nonce, msg, head)
    return PREFIX + base64.b64encode(blob).decode()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit("usage: seal_interop.py open|seal KEY ARG")
    if sys.argv[1] == "open":
        with open(sys.argv[3]) as f:
            print(open_text(sys.argv[2], f.read()).hex())
    else:
        print(seal(sys.argv[2], bytes.fromhex(sys.argv[3])), end="")
