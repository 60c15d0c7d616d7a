/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_crypto.c - SHA-256, HMAC-SHA256, base64 over OpenSSL libcrypto
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "gb_crypto.h"

void gb_crypto_sha256(const void *p, size_t n, unsigned char out[GB_SHA256_LEN])
{
	static const unsigned char empty[1];

	/* SHA256() cannot fail for in-memory input with the default provider. */
	SHA256(p ? p : empty, n, out);
}

void gb_crypto_hex(const unsigned char *p, size_t n, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[p[i] >> 4];
		hex[2 * i + 1] = digits[p[i] & 0x0f];
	}
	hex[2 * n] = '\0';
}

void gb_crypto_sha256_hex(const void *p, size_t n,
			  char hex[GB_SHA256_HEX_LEN + 1])
{
	unsigned char md[GB_SHA256_LEN];

	gb_crypto_sha256(p, n, md);
	gb_crypto_hex(md, sizeof(md), hex);
}

gb_err_t gb_crypto_hmac_sha256(const void *key, size_t keylen,
			       const void *data, size_t n,
			       unsigned char out[GB_SHA256_LEN], gb_error_t *err)
{
	static const unsigned char empty[1];
	unsigned int mdlen = 0;

	if (keylen > INT32_MAX)
		return gb_errorf(err, GB_E_CRYPTO, "HMAC key too long");
	if (!HMAC(EVP_sha256(), key ? key : empty, (int)keylen,
		  data ? data : empty, n, out, &mdlen) ||
	    mdlen != GB_SHA256_LEN) {
		char msg[256];

		ERR_error_string_n(ERR_get_error(), msg, sizeof(msg));
		ERR_clear_error();
		return gb_errorf(err, GB_E_CRYPTO, "HMAC-SHA256 failed: %s", msg);
	}
	return GB_E_OK;
}

size_t gb_crypto_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

size_t gb_crypto_base64(const void *p, size_t n, char *out, size_t outsize)
{
	size_t need = gb_crypto_base64_len(n);
	size_t done = 0;

	if (outsize == 0)
		return 0;
	out[0] = '\0';
	if (n == 0 || outsize < need + 1)
		return 0;
	/*
	 * EVP_EncodeBlock takes an int length: feed it in chunks that are a
	 * multiple of 3 bytes so that no padding appears in the middle.
	 */
	while (n > 0) {
		size_t chunk = n > 3 * (1u << 28) ? 3 * (1u << 28) : n;
		int w = EVP_EncodeBlock((unsigned char *)out + done, p, (int)chunk);

		done += (size_t)w;
		p = (const unsigned char *)p + chunk;
		n -= chunk;
	}
	out[done] = '\0';
	return done;
}

bool gb_crypto_streq_ct(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la != lb)
		return false;
	return CRYPTO_memcmp(a, b, la) == 0;
}
