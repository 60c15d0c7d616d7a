/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_seal.c - X25519/HKDF key transport, AES-256-GCM, as text
 *
 * The format and the derivation are in gb_seal.h.  OpenSSL 3 EVP only: no
 * low-level calls, no deprecated API.  Every failure of OpenSSL is turned into a
 * gb_err_t here, with its error queue emptied.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/pem.h>

#include "gb_crypto.h"
#include "gb_seal.h"
#include "gb_str.h"
#include "gb_util.h"

#define SEAL_VERSION 1
#define KIND_X25519 1
#define KIND_RSA 2		/* gone: texts of this type are refused */
#define X25519_LEN 32		/* RFC 7748: keys and shared secrets */
#define AES_KEY_LEN 32		/* AES-256 */
#define NONCE_LEN 12		/* GCM's 96-bit IV */
#define TAG_LEN 16
#define HKDF_INFO "gpuburst seal 1 X25519"
#define DERIVE_LABEL "gpuburst seal 1 ephemeral"
#define ALTERED "sealed for another key or altered"

/* Report OpenSSL's first queued error after [what]; empty the queue. */
static gb_err_t ossl_fail(gb_error_t *err, gb_err_t code, const char *what)
{
	unsigned long e = ERR_get_error();
	char msg[256] = "no detail";

	if (e)
		ERR_error_string_n(e, msg, sizeof(msg));
	ERR_clear_error();
	return gb_errorf(err, code, "%s: %s", what, msg);
}

static void wipe_free(char *p, size_t n)
{
	if (!p)
		return;
	gb_memzero(p, n);
	free(p);
}

/*
 * Read the PEM file [path] into one buffer of its size (no growth, so no
 * stray copy of a private key is left in freed memory).  OUT *pem NEW,
 * NUL-terminated, *len; give it back with wipe_free(*pem, *len + 1).
 */
static gb_err_t read_pem(const char *path, char **pem, size_t *len,
			 gb_error_t *err)
{
	size_t size = 0, got = 0;
	char *buf = NULL;
	gb_err_t rc;
	int fd;

	*pem = NULL;
	rc = gb_file_open(path, GB_SEAL_KEY_FILE_MAX, &fd, &size, err);
	if (rc == GB_E_INVALID)
		return gb_errorf(err, GB_E_INVALID, "key file %s is larger than %d bytes: not a PEM key",
				 path, GB_SEAL_KEY_FILE_MAX);
	if (rc)
		return rc;
	if (!(buf = malloc(size + 1))) {
		rc = gb_errorf(err, GB_E_NOMEM, "reading %s: out of memory", path);
		goto out;
	}
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = gb_errorf(err, GB_E_IO, "cannot read %s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got == 0) {
		rc = gb_errorf(err, GB_E_PARSE, "key file %s is empty", path);
		goto out;
	}
	buf[got] = '\0';
	*pem = buf;
	*len = got;
	buf = NULL;
out:
	wipe_free(buf, size + 1);
	close(fd);
	return rc;
}

/* RET whether [k] is an X25519 key, else false with [err] set. */
static bool key_usable(EVP_PKEY *k, const char *path, gb_error_t *err)
{
	const char *name = EVP_PKEY_get0_type_name(k);

	if (EVP_PKEY_is_a(k, "X25519"))
		return true;
	gb_errorf(err, GB_E_INVALID, "wrong key type %s in %s: seal keys are X25519",
		  name ? name : "(unknown)", path);
	return false;
}

/* Never prompt for a passphrase: gpuburst runs without a terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/*
 * Load the key of PEM file [path]: its public key ([private] false) or its
 * private key, X25519.  OUT *key NEW (EVP_PKEY_free).
 */
static gb_err_t load_key(const char *path, bool private, EVP_PKEY **key,
			 gb_error_t *err)
{
	char *pem = NULL;
	size_t len = 0;
	BIO *bio = NULL;
	gb_err_t rc;

	*key = NULL;
	if ((rc = read_pem(path, &pem, &len, err)))
		return rc;
	if (!private && strstr(pem, "PRIVATE KEY-----")) {
		rc = gb_errorf(err, GB_E_INVALID,
			       "%s holds a private key: seal to its public half (openssl pkey -in KEY -pubout)",
			       path);
		goto out;
	}
	if (private && (strstr(pem, "ENCRYPTED") || strstr(pem, "Proc-Type: 4,"))) {
		rc = gb_errorf(err, GB_E_PARSE, "%s is an encrypted private key: it must be stored unencrypted",
			       path);
		goto out;
	}
	if (!(bio = BIO_new_mem_buf(pem, (int)len))) {
		rc = ossl_fail(err, GB_E_NOMEM, "BIO_new_mem_buf");
		goto out;
	}
	*key = private ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) :
		PEM_read_bio_PUBKEY(bio, NULL, no_passphrase, NULL);
	ERR_clear_error();
	if (!*key) {
		rc = gb_errorf(err, GB_E_PARSE, "%s holds no PEM %s key (BEGIN %s KEY)", path,
			       private ? "private" : "public", private ? "PRIVATE" : "PUBLIC");
		goto out;
	}
	if (!key_usable(*key, path, err)) {
		EVP_PKEY_free(*key);
		*key = NULL;
		rc = GB_E_INVALID;
	}
out:
	BIO_free(bio);
	wipe_free(pem, len + 1);
	return rc;
}

/*
 * [out_n] bytes [out] = HKDF-SHA256(ikm [ikm], salt [salt] (none when
 * [salt_n] is 0), info [info]).
 */
static gb_err_t hkdf(const void *ikm, size_t ikm_n, const unsigned char *salt,
		     size_t salt_n, const unsigned char *info, size_t info_n,
		     unsigned char *out, size_t out_n, gb_error_t *err)
{
	char digest[] = "SHA256";
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *kc = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM p[5];
	size_t k = 0;
	gb_err_t rc = GB_E_OK;

	/* OpenSSL only reads these buffers */
	p[k++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
	p[k++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_n);
	if (salt_n)
		p[k++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt,
							   salt_n);
	p[k++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_n);
	p[k] = OSSL_PARAM_construct_end();
	if (!kc || EVP_KDF_derive(kc, out, out_n, p) != 1)
		rc = ossl_fail(err, GB_E_CRYPTO, "HKDF-SHA256");
	EVP_KDF_CTX_free(kc);
	EVP_KDF_free(kdf);
	return rc;
}

/* [out] = HKDF-SHA256(ikm [ss], salt [eph] || [rcpt], info HKDF_INFO). */
static gb_err_t x25519_kdf(const unsigned char *ss, const unsigned char *eph,
			   const unsigned char *rcpt, unsigned char out[AES_KEY_LEN],
			   gb_error_t *err)
{
	unsigned char salt[2 * X25519_LEN];

	memcpy(salt, eph, X25519_LEN);
	memcpy(salt + X25519_LEN, rcpt, X25519_LEN);
	return hkdf(ss, X25519_LEN, salt, sizeof(salt), (const unsigned char *)HKDF_INFO,
		    strlen(HKDF_INFO), out, AES_KEY_LEN, err);
}

/* [ss] = X25519([mine], [peer]).  A zero result (a low-order point) fails. */
static bool x25519_derive(EVP_PKEY *mine, EVP_PKEY *peer,
			  unsigned char ss[X25519_LEN])
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, mine, NULL);
	size_t n = X25519_LEN;
	bool ok;

	ok = c && EVP_PKEY_derive_init(c) == 1 &&
		EVP_PKEY_derive_set_peer(c, peer) == 1 &&
		EVP_PKEY_derive(c, ss, &n) == 1 && n == X25519_LEN;
	EVP_PKEY_CTX_free(c);
	return ok;
}

/*
 * The ephemeral private key (32 bytes) then the nonce (12) of a seal:
 * HKDF-SHA256(ikm [msg], no salt, info DERIVE_LABEL || [rcpt] || [ctx]).
 * DERIVE_LABEL and [rcpt] have fixed lengths, so the info names one
 * context.  [okm] is a secret: the caller wipes it.
 */
static gb_err_t seal_derive(const void *msg, size_t n, const unsigned char rcpt[X25519_LEN],
			    const char *ctx, size_t ctx_n,
			    unsigned char okm[X25519_LEN + NONCE_LEN], gb_error_t *err)
{
	unsigned char info[sizeof(DERIVE_LABEL) - 1 + X25519_LEN + GB_SEAL_CONTEXT_MAX];
	size_t l = sizeof(DERIVE_LABEL) - 1;

	memcpy(info, DERIVE_LABEL, l);
	memcpy(info + l, rcpt, X25519_LEN);
	memcpy(info + l + X25519_LEN, ctx, ctx_n);
	return hkdf(msg, n, NULL, 0, info, l + X25519_LEN + ctx_n, okm,
		    X25519_LEN + NONCE_LEN, err);
}

/*
 * The key pair of this seal, from [msg], [rcpt] and [ctx]: its public key
 * goes to [eph], the nonce to [nonce], the AES key to [key].
 */
static gb_err_t x25519_wrap(EVP_PKEY *rcpt, const void *msg, size_t n,
			    const char *ctx, size_t ctx_n, unsigned char eph[X25519_LEN],
			    unsigned char nonce[NONCE_LEN], unsigned char key[AES_KEY_LEN],
			    gb_error_t *err)
{
	unsigned char ss[X25519_LEN], pub[X25519_LEN], okm[X25519_LEN + NONCE_LEN];
	EVP_PKEY *mine = NULL;
	size_t pn = X25519_LEN, en = X25519_LEN;
	gb_err_t rc;

	if (EVP_PKEY_get_raw_public_key(rcpt, pub, &pn) != 1 || pn != X25519_LEN) {
		rc = ossl_fail(err, GB_E_CRYPTO, "X25519 public key");
		goto out;
	}
	if ((rc = seal_derive(msg, n, pub, ctx, ctx_n, okm, err)))
		goto out;
	mine = EVP_PKEY_new_raw_private_key_ex(NULL, "X25519", NULL, okm, X25519_LEN);
	if (!mine || EVP_PKEY_get_raw_public_key(mine, eph, &en) != 1 || en != X25519_LEN) {
		rc = ossl_fail(err, GB_E_CRYPTO, "X25519 ephemeral key");
		goto out;
	}
	memcpy(nonce, okm + X25519_LEN, NONCE_LEN);
	if (!x25519_derive(mine, rcpt, ss)) {
		rc = ossl_fail(err, GB_E_INVALID, "X25519 with the recipient's key");
		goto out;
	}
	rc = x25519_kdf(ss, eph, pub, key, err);
out:
	gb_memzero(ss, sizeof(ss));
	gb_memzero(okm, sizeof(okm));
	EVP_PKEY_free(mine);
	return rc;
}

static gb_err_t x25519_unwrap(EVP_PKEY *priv, const unsigned char eph[X25519_LEN],
			      unsigned char key[AES_KEY_LEN], gb_error_t *err)
{
	unsigned char ss[X25519_LEN], pub[X25519_LEN];
	EVP_PKEY *peer = EVP_PKEY_new_raw_public_key_ex(NULL, "X25519", NULL, eph, X25519_LEN);
	size_t pn = X25519_LEN;
	gb_err_t rc;

	if (!peer || EVP_PKEY_get_raw_public_key(priv, pub, &pn) != 1 || pn != X25519_LEN) {
		rc = ossl_fail(err, GB_E_CRYPTO, "X25519 keys");
		goto out;
	}
	if (!x25519_derive(priv, peer, ss)) {
		ERR_clear_error();
		rc = gb_errorf(err, GB_E_INVALID, ALTERED);
		goto out;
	}
	rc = x25519_kdf(ss, eph, pub, key, err);
out:
	gb_memzero(ss, sizeof(ss));
	EVP_PKEY_free(peer);
	return rc;
}

/*
 * AES-256-GCM of [n] bytes [in] into [out] with additional data [aad].
 * Sealing writes [tag]; opening checks it (GB_E_INVALID when it differs).
 */
static gb_err_t gcm(bool enc, const unsigned char key[AES_KEY_LEN],
		    const unsigned char nonce[NONCE_LEN], const unsigned char *aad,
		    size_t aad_n, const unsigned char *in, size_t n, unsigned char *out,
		    unsigned char tag[TAG_LEN], gb_error_t *err)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int (*init)(EVP_CIPHER_CTX *, const EVP_CIPHER *, const unsigned char *,
		    const unsigned char *, const OSSL_PARAM *) =
		enc ? EVP_EncryptInit_ex2 : EVP_DecryptInit_ex2;
	int (*update)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int) =
		enc ? EVP_EncryptUpdate : EVP_DecryptUpdate;
	int l = 0, fl = 0;
	gb_err_t rc = GB_E_OK;

	/* n and aad_n are bounded by GB_SEAL_MSG_MAX and the header's size */
	if (!c || init(c, EVP_aes_256_gcm(), key, nonce, NULL) != 1 ||
	    update(c, NULL, &l, aad, (int)aad_n) != 1 ||
	    update(c, out, &l, in, (int)n) != 1 || (size_t)l != n ||
	    (!enc && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, tag) != 1)) {
		rc = ossl_fail(err, GB_E_CRYPTO, "AES-256-GCM");
		goto out;
	}
	if (!enc) {
		if (EVP_DecryptFinal_ex(c, out + l, &fl) != 1 || fl != 0) {
			ERR_clear_error();
			gb_memzero(out, n);
			rc = gb_errorf(err, GB_E_INVALID, ALTERED);
		}
		goto out;
	}
	if (EVP_EncryptFinal_ex(c, out + l, &fl) != 1 || fl != 0 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, tag) != 1)
		rc = ossl_fail(err, GB_E_CRYPTO, "AES-256-GCM");
out:
	EVP_CIPHER_CTX_free(c);
	return rc;
}

#define HEADER_LEN (2 + X25519_LEN + NONCE_LEN)

/* The text of [n] bytes [blob]: "gbseal1:" + base64.  RET NEW, or NULL. */
static char *to_text(const unsigned char *blob, size_t n)
{
	size_t b64 = gb_crypto_base64_len(n);
	char *t = malloc(GB_SEAL_PREFIX_LEN + b64 + 1);

	if (!t)
		return NULL;
	memcpy(t, GB_SEAL_PREFIX, GB_SEAL_PREFIX_LEN);
	if (gb_crypto_base64(blob, n, t + GB_SEAL_PREFIX_LEN, b64 + 1) != b64) {
		free(t);
		return NULL;
	}
	return t;
}

gb_err_t gb_seal(const char *pubkey_path, const char *context, const void *msg,
		 size_t n, char **text, gb_error_t *err)
{
	unsigned char key[AES_KEY_LEN], *blob = NULL;
	size_t ctx_n = context ? strlen(context) : 0, total = HEADER_LEN + n + TAG_LEN;
	EVP_PKEY *rcpt = NULL;
	gb_err_t rc;

	*text = NULL;
	if (!msg || n < GB_SEAL_MSG_MIN || n > GB_SEAL_MSG_MAX)
		return gb_errorf(err, GB_E_INVALID, "seal: %zu bytes to seal: %d to %d can be",
				 n, GB_SEAL_MSG_MIN, GB_SEAL_MSG_MAX);
	if (ctx_n == 0 || ctx_n > GB_SEAL_CONTEXT_MAX)
		return gb_errorf(err, GB_E_INVALID, "seal: a context of %zu bytes: 1 to %d can be",
				 ctx_n, GB_SEAL_CONTEXT_MAX);
	if ((rc = load_key(pubkey_path, false, &rcpt, err)))
		return rc;
	if (!(blob = malloc(total))) {
		rc = gb_errorf(err, GB_E_NOMEM, "seal: out of memory");
		goto out;
	}
	blob[0] = SEAL_VERSION;
	blob[1] = KIND_X25519;
	rc = x25519_wrap(rcpt, msg, n, context, ctx_n, blob + 2, blob + 2 + X25519_LEN, key, err);
	if (rc)
		goto out;
	rc = gcm(true, key, blob + HEADER_LEN - NONCE_LEN, blob, HEADER_LEN, msg, n,
		 blob + HEADER_LEN, blob + HEADER_LEN + n, err);
	if (!rc && !(*text = to_text(blob, total)))
		rc = gb_errorf(err, GB_E_NOMEM, "seal: out of memory");
out:
	gb_memzero(key, sizeof(key));
	wipe_free((char *)blob, total);
	EVP_PKEY_free(rcpt);
	return rc;
}

static int b64_value(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/*
 * Strict RFC 4648 base64: a multiple of 4 characters, '=' only as the
 * last one or two, no blanks, no stray bits.  OUT *out NEW (free()), *out_n.
 */
static gb_err_t b64_decode(const char *s, size_t n, unsigned char **out,
			   size_t *out_n, gb_error_t *err)
{
	size_t pad = 0, k = 0;
	unsigned char *o;

	*out = NULL;
	if (n == 0 || n % 4)
		return gb_errorf(err, GB_E_PARSE,
				 "sealed text: %zu base64 characters, not a positive multiple of 4 (truncated?)",
				 n);
	pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
	if (!(o = malloc(n / 4 * 3)))
		return gb_errorf(err, GB_E_NOMEM, "sealed text: out of memory");
	for (size_t i = 0; i < n; i += 4) {
		uint32_t v = 0;

		for (size_t j = i; j < i + 4; j++) {
			int d = b64_value((unsigned char)s[j]);

			if (d < 0 && !(j >= n - pad && s[j] == '=')) {
				free(o);
				return gb_errorf(err, GB_E_PARSE,
						 "sealed text: bad base64 character 0x%02x at offset %zu",
						 (unsigned char)s[j], GB_SEAL_PREFIX_LEN + j);
			}
			v = v << 6 | (uint32_t)(d < 0 ? 0 : d);
		}
		/* the bits under the padding are 0: one text per message */
		if (i + 4 == n && pad && (v & ((1u << (8 * pad)) - 1))) {
			free(o);
			return gb_errorf(err, GB_E_PARSE, "sealed text: bad base64 padding");
		}
		o[k++] = (unsigned char)(v >> 16);
		o[k++] = (unsigned char)(v >> 8);
		o[k++] = (unsigned char)v;
	}
	*out = o;
	*out_n = k - pad;
	return GB_E_OK;
}

/* Check the decoded [blob]'s header. */
static gb_err_t parse_header(const unsigned char *blob, size_t n, gb_error_t *err)
{
	if (n < 2)
		return gb_errorf(err, GB_E_PARSE, "sealed text: truncated (%zu bytes)", n);
	if (blob[0] != SEAL_VERSION)
		return gb_errorf(err, GB_E_PARSE, "sealed text: version %u, this program reads %d",
				 blob[0], SEAL_VERSION);
	if (blob[1] == KIND_RSA)
		return gb_errorf(err, GB_E_PARSE,
				 "sealed text: key type 2 (RSA), no longer read: seal to an X25519 key");
	if (blob[1] != KIND_X25519)
		return gb_errorf(err, GB_E_PARSE, "sealed text: unknown key type %d", blob[1]);
	if (n < HEADER_LEN + 1 + TAG_LEN)
		return gb_errorf(err, GB_E_PARSE, "sealed text: truncated (%zu bytes, at least %d expected)",
				 n, HEADER_LEN + 1 + TAG_LEN);
	return GB_E_OK;
}

gb_err_t gb_seal_open(const char *privkey_path, const char *text, size_t n,
		      unsigned char **msg, size_t *msg_n, gb_error_t *err)
{
	unsigned char key[AES_KEY_LEN], *blob = NULL, *out = NULL;
	size_t blob_n = 0, ct_n;
	EVP_PKEY *priv = NULL;
	gb_err_t rc;

	*msg = NULL;
	*msg_n = 0;
	if (!text || n < GB_SEAL_PREFIX_LEN || memcmp(text, GB_SEAL_PREFIX, GB_SEAL_PREFIX_LEN))
		return gb_errorf(err, GB_E_PARSE, "not a sealed text: it does not start with %s",
				 GB_SEAL_PREFIX);
	rc = b64_decode(text + GB_SEAL_PREFIX_LEN, n - GB_SEAL_PREFIX_LEN, &blob, &blob_n, err);
	if (rc || (rc = parse_header(blob, blob_n, err)))
		goto out;
	if ((rc = load_key(privkey_path, true, &priv, err)))
		goto out;
	if ((rc = x25519_unwrap(priv, blob + 2, key, err)))
		goto out;
	ct_n = blob_n - HEADER_LEN - TAG_LEN;
	if (!(out = malloc(ct_n + 1))) {
		rc = gb_errorf(err, GB_E_NOMEM, "sealed text: out of memory");
		goto out;
	}
	rc = gcm(false, key, blob + HEADER_LEN - NONCE_LEN, blob, HEADER_LEN, blob + HEADER_LEN,
		 ct_n, out, blob + HEADER_LEN + ct_n, err);
	if (rc)
		goto out;
	out[ct_n] = '\0';
	*msg = out;
	*msg_n = ct_n;
	out = NULL;
out:
	gb_memzero(key, sizeof(key));
	free(out);		/* gcm() wiped it when the tag failed */
	free(blob);		/* ciphertext only */
	EVP_PKEY_free(priv);
	return rc;
}

void gb_seal_free(unsigned char *msg, size_t n)
{
	wipe_free((char *)msg, msg ? n + 1 : 0);
}

bool gb_seal_find(const char *text, size_t n, const char **token,
		  size_t *token_n)
{
	const char *p = text ? memmem(text, n, GB_SEAL_PREFIX, GB_SEAL_PREFIX_LEN) : NULL;
	const char *q;

	*token = NULL;
	*token_n = 0;
	if (!p)
		return false;
	for (q = p + GB_SEAL_PREFIX_LEN; q < text + n; q++)
		if (b64_value((unsigned char)*q) < 0 && *q != '=')
			break;
	*token = p;
	*token_n = (size_t)(q - p);
	return true;
}
