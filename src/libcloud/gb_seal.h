/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_seal.h - seal a small secret to a public key, as text for user data
 *
 * The controller seals the cluster's munge key to the instance image's
 * public key and puts the result in the user data (the {munge_key}
 * placeholder); gpuburst-node finds it there with gb_seal_find() and opens
 * it with the image's private key.  Anyone who can read the user data (the
 * EC2 API, the instance metadata) sees only the sealed text.
 *
 * Keys are PEM files: the public key as `openssl pkey -pubout` writes it
 * (SubjectPublicKeyInfo, "BEGIN PUBLIC KEY"), the private key as `openssl
 * genpkey -algorithm X25519` writes it (PKCS#8, "BEGIN PRIVATE KEY", not
 * encrypted).  Keys are X25519, and only X25519: one mechanism.
 *
 * A seal is deterministic: the same message, context and recipient key
 * always give the same text.  A launch that is sent again after a crash
 * (same ClientToken) must carry byte-identical user data, or EC2 answers
 * IdempotentParameterMismatch; the controller seals with the request's id
 * as the context, so a re-sent launch carries the same text, and another
 * request's launches carry another ephemeral key and nonce.
 *
 *   derive   OKM = HKDF-SHA256(ikm: the message, no salt,
 *                  info: "gpuburst seal 1 ephemeral" || the recipient's
 *                  raw 32-byte public key || the context), 44 bytes:
 *            bytes 0-31 the ephemeral X25519 private key (clamped as
 *            RFC 7748 says), bytes 32-43 the GCM nonce.
 *   wrap     the 32-byte X25519 shared secret of the ephemeral private key
 *            and the recipient's public key goes through HKDF-SHA256
 *            (salt: the ephemeral public key then the recipient's, info:
 *            "gpuburst seal 1 X25519") to an AES-256-GCM key.
 *
 * Since the key pair and the nonce come from the message, one AES key and
 * nonce never encrypt two messages: another message is another key pair.
 * The message is the derivation's only secret input: it must be random
 * and long enough that it cannot be guessed (a munge key is 32 to 1024
 * random bytes; fewer than GB_SEAL_MSG_MIN bytes are refused), since
 * whoever guesses it can check the guess against the text.  Two texts for
 * the same context and key tell that they carry the same message.
 *
 * The sealed text is "gbseal1:" followed by standard base64 (RFC 4648,
 * '=' padding, no line breaks) of these bytes:
 *
 *   byte 0       version, 1
 *   byte 1       key type, 1: X25519
 *   32 bytes     the ephemeral public key
 *   12 bytes     the GCM nonce
 *   ...          the ciphertext, as long as the message (GB_SEAL_MSG_MIN
 *                to GB_SEAL_MSG_MAX bytes)
 *   16 bytes     the GCM tag
 *
 * Everything before the ciphertext (the header) is the GCM additional
 * data: a changed version, key type, ephemeral key or nonce fails the tag
 * like a changed ciphertext does.  The derivation does not show in the
 * format (an opener reads the ephemeral public key and the nonce from the
 * header, however they were chosen), so the format stays "gbseal1": texts
 * of earlier X25519 seals still open, and earlier openers open these.
 * Key type 2 (RSA-OAEP) is gone: such a text is refused, naming why.
 *
 * Every function is thread-safe.  Key material, the AES key, the derived
 * bytes and the shared secret are wiped before these functions return.
 * This is the only file besides gb_crypto.c that uses OpenSSL; no OpenSSL
 * type appears here.
 */
#ifndef GB_LIBCLOUD_GB_SEAL_H
#define GB_LIBCLOUD_GB_SEAL_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"

#define GB_SEAL_PREFIX "gbseal1:"	/* how a sealed text starts */
#define GB_SEAL_PREFIX_LEN 8
#define GB_SEAL_MSG_MIN 16		/* the smallest message sealed */
#define GB_SEAL_MSG_MAX 16384		/* the largest message sealed */
#define GB_SEAL_CONTEXT_MAX 256		/* the longest context */
#define GB_SEAL_KEY_FILE_MAX 65536	/* larger PEM files are refused */

/*
 * Seal the [n] bytes at [msg] (GB_SEAL_MSG_MIN <= n <= GB_SEAL_MSG_MAX, a
 * random secret) to the X25519 public key in the PEM file [pubkey_path],
 * for [context] (a string of 1 to GB_SEAL_CONTEXT_MAX bytes: the request
 * id): the same arguments always give the same text.
 * OUT *text NEW (free()), NUL-terminated "gbseal1:..."; NULL on failure.
 * RET GB_E_OK; GB_E_NOTFOUND/GB_E_IO (the file: missing, unreadable, not
 * a regular file); GB_E_PARSE (no PEM public key in it); GB_E_INVALID (a
 * private key, a key of another type, a bad [n] or [context]);
 * GB_E_CRYPTO (OpenSSL failed); GB_E_NOMEM.  [err] names the file.
 */
gb_err_t gb_seal(const char *pubkey_path, const char *context, const void *msg,
		 size_t n, char **text, gb_error_t *err);

/*
 * Open the sealed text of [n] bytes at [text] ("gbseal1:..." exactly, as
 * gb_seal_find() delimits it; no NUL needed) with the private key in the
 * PEM file [privkey_path].
 * OUT *msg NEW, *msg_n bytes (a NUL follows them, not counted): a secret,
 * give it back with gb_seal_free(); NULL and 0 on failure.
 * RET GB_E_OK; GB_E_NOTFOUND/GB_E_IO (the key file); GB_E_PARSE (no
 * unencrypted PEM private key in it; the text: no "gbseal1:" prefix, bad
 * base64, an unknown version or key type (RSA's included), too short);
 * GB_E_INVALID (a key of another type than X25519, or "sealed for another
 * key or altered": the tag failed); GB_E_CRYPTO; GB_E_NOMEM.
 */
gb_err_t gb_seal_open(const char *privkey_path, const char *text, size_t n,
		      unsigned char **msg, size_t *msg_n, gb_error_t *err);

/* Wipe the [n] bytes at [msg] (from gb_seal_open()) and free them; NULL is fine. */
void gb_seal_free(unsigned char *msg, size_t n);

/*
 * Find the first sealed text in the [n] bytes at [text] (a user-data
 * script; no NUL needed): "gbseal1:" and the base64 characters
 * (A-Z a-z 0-9 + / =) that follow it, up to the first other byte.
 * OUT *token BORROWED (points into [text]), *token_n its length with the
 * prefix.  RET whether a prefix was found (the token may still be
 * malformed: gb_seal_open() says how).
 */
bool gb_seal_find(const char *text, size_t n, const char **token,
		  size_t *token_n);

#endif /* GB_LIBCLOUD_GB_SEAL_H */
