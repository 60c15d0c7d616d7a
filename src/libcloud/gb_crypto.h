/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_crypto.h - the few primitives libcloud needs from OpenSSL libcrypto
 *
 * SHA-256, HMAC-SHA256, base64 and a constant-time comparison.  With
 * gb_seal.c (public-key sealing, gb_seal.h) this is the only file of
 * libcloud that includes OpenSSL headers; no OpenSSL type appears here.
 * Every function is thread-safe and allocates nothing.
 */
#ifndef GB_LIBCLOUD_GB_CRYPTO_H
#define GB_LIBCLOUD_GB_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"

#define GB_SHA256_LEN 32	/* bytes of a SHA-256 digest */
#define GB_SHA256_HEX_LEN 64	/* hex digits of a SHA-256 digest */

/* [out] = SHA-256 of [n] bytes at [p] ([p] may be NULL when [n] is 0). */
void gb_crypto_sha256(const void *p, size_t n, unsigned char out[GB_SHA256_LEN]);

/* [hex] = lower-case hex SHA-256 of [n] bytes at [p], NUL-terminated. */
void gb_crypto_sha256_hex(const void *p, size_t n,
			  char hex[GB_SHA256_HEX_LEN + 1]);

/*
 * [out] = HMAC-SHA256([key], [data]).
 * RET GB_E_OK, or GB_E_CRYPTO (with detail) if OpenSSL fails.
 */
gb_err_t gb_crypto_hmac_sha256(const void *key, size_t keylen,
			       const void *data, size_t n,
			       unsigned char out[GB_SHA256_LEN], gb_error_t *err);

/* Write [n] bytes as lower-case hex plus NUL into [hex] (2n+1 bytes). */
void gb_crypto_hex(const unsigned char *p, size_t n, char *hex);

/*
 * Standard base64 (RFC 4648, with '=' padding, no line breaks) of [n]
 * bytes into [out] of [outsize] bytes.
 * RET the encoded length, or 0 with *out = "" when [outsize] is smaller
 * than gb_crypto_base64_len(n) + 1 (an empty input also gives 0).
 */
size_t gb_crypto_base64(const void *p, size_t n, char *out, size_t outsize);

/* RET the length of the base64 text of [n] bytes, without the NUL. */
size_t gb_crypto_base64_len(size_t n);

/* RET whether the strings are equal, in time that depends only on lengths. */
bool gb_crypto_streq_ct(const char *a, const char *b);

#endif /* GB_LIBCLOUD_GB_CRYPTO_H */
