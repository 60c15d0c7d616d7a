/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_seal.c - gb_seal: round trips, the same text for the same request,
 * wrong keys, altered and cut texts, key-file errors, gb_seal_find
 *
 * The keys are made here with EVP (two X25519, an RSA 2048 and an Ed25519
 * that are refused) and written as `openssl genpkey` / `openssl pkey -pubout`
 * write them, into a fresh temporary directory.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "gb_crypto.h"
#include "gb_seal.h"
#include "gb_str.h"

static char dir[64];

/* <dir>/[name] in a static buffer of [slot] (0..3: several at once). */
static const char *path_of(const char *name, int slot)
{
	static char buf[4][128];

	snprintf(buf[slot], sizeof(buf[slot]), "%s/%s", dir, name);
	return buf[slot];
}

static void write_key(EVP_PKEY *k, const char *name)
{
	char priv[64], pub[64];
	FILE *f;

	snprintf(priv, sizeof(priv), "%s.pem", name);
	snprintf(pub, sizeof(pub), "%s.pub", name);
	assert_non_null(f = fopen(path_of(priv, 0), "w"));
	assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
	assert_int_equal(fclose(f), 0);
	assert_non_null(f = fopen(path_of(pub, 0), "w"));
	assert_int_equal(PEM_write_PUBKEY(f, k), 1);
	assert_int_equal(fclose(f), 0);
}

static void write_text(const char *name, const char *text)
{
	FILE *f = fopen(path_of(name, 0), "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	EVP_PKEY *k;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gb-seal-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (!(k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519")))
		return -1;
	write_key(k, "x1");
	EVP_PKEY_free(k);
	if (!(k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519")))
		return -1;
	write_key(k, "x2");
	EVP_PKEY_free(k);
	if (!(k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)))
		return -1;
	write_key(k, "rsa");
	EVP_PKEY_free(k);
	if (!(k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")))
		return -1;
	write_key(k, "ed");
	EVP_PKEY_free(k);
	write_text("garbage.pub", "not a key\n");
	write_text("empty.pub", "");
	return mkdir(path_of("adir", 0), 0700);
}

static int teardown(void **state)
{
	static const char *const names[] = {
		"x1.pem", "x1.pub", "x2.pem", "x2.pub", "rsa.pem", "rsa.pub", "ed.pem",
		"ed.pub", "garbage.pub",
		"empty.pub", "enc.pem",
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
		unlink(path_of(names[i], 0));
	rmdir(path_of("adir", 0));
	return rmdir(dir);
}

static char *seal_for(const char *key, const char *ctx, const void *msg, size_t n)
{
	gb_error_t err = { 0 };
	char *text = NULL;

	if (gb_seal(path_of(key, 3), ctx, msg, n, &text, &err) != GB_E_OK)
		fail_msg("gb_seal %s: %s", key, err.text);
	return text;
}

static char *seal_ok(const char *key, const void *msg, size_t n)
{
	return seal_for(key, "r-1", msg, n);
}

static void open_ok(const char *key, const char *text, const void *want, size_t n)
{
	unsigned char *msg = NULL;
	size_t msg_n = 0;
	gb_error_t err = { 0 };

	if (gb_seal_open(path_of(key, 3), text, strlen(text), &msg, &msg_n, &err))
		fail_msg("gb_seal_open %s: %s", key, err.text);
	assert_int_equal(msg_n, n);
	assert_memory_equal(msg, want, n);
	assert_int_equal(msg[n], '\0');
	gb_seal_free(msg, msg_n);
}

/* Open [n] bytes of [text] with [key], expecting [code] and [words] in the message. */
static void open_bad(const char *key, const char *text, size_t n, gb_err_t code,
		     const char *words)
{
	unsigned char *msg = (unsigned char *)"x";
	size_t msg_n = 1;
	gb_error_t err = { 0 };

	assert_int_equal(gb_seal_open(path_of(key, 3), text, n, &msg, &msg_n, &err), code);
	assert_null(msg);
	assert_int_equal(msg_n, 0);
	if (!strstr(err.text, words))
		fail_msg("'%s' not in '%s'", words, err.text);
}

static void seal_bad_ctx(const char *key, const char *ctx, size_t n, gb_err_t code,
			 const char *words)
{
	static const unsigned char msg[GB_SEAL_MSG_MAX + 1];
	gb_error_t err = { 0 };
	char *text = (char *)"x";

	assert_int_equal(gb_seal(path_of(key, 3), ctx, msg, n, &text, &err), code);
	assert_null(text);
	if (!strstr(err.text, words))
		fail_msg("'%s' not in '%s'", words, err.text);
}

static void seal_bad(const char *key, size_t n, gb_err_t code, const char *words)
{
	seal_bad_ctx(key, "r-1", n, code, words);
}

static void fill(unsigned char *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		m[i] = (unsigned char)(i * 7 + 3);
}

/* Header + ciphertext + tag, base64, behind the prefix. */
static size_t text_len(size_t header, size_t n)
{
	return GB_SEAL_PREFIX_LEN + gb_crypto_base64_len(header + n + 16);
}

static void test_round_trip(void **state)
{
	static const size_t sizes[] = { GB_SEAL_MSG_MIN, 32, 1024, GB_SEAL_MSG_MAX };

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(sizes); i++) {
		size_t n = sizes[i];
		unsigned char *big = malloc(n);
		char *tx;

		assert_non_null(big);
		fill(big, n);
		tx = seal_ok("x1.pub", big, n);
		assert_true(gb_str_has_prefix(tx, GB_SEAL_PREFIX));
		assert_null(strchr(tx, '\n'));
		assert_int_equal(strlen(tx), text_len(2 + 32 + 12, n));
		open_ok("x1.pem", tx, big, n);
		free(tx);
		free(big);
	}
}

/* Decode [t] (a whole text) into [blob] of [n] bytes, which it must fill. */
static void blob_of(const char *t, unsigned char *blob, size_t n)
{
	size_t b = strlen(t + GB_SEAL_PREFIX_LEN);
	unsigned char *tmp = malloc(b / 4 * 3);

	assert_non_null(tmp);
	assert_true(EVP_DecodeBlock(tmp, (const unsigned char *)t + GB_SEAL_PREFIX_LEN, (int)b) >=
		    (int)n);
	memcpy(blob, tmp, n);
	free(tmp);
}

/*
 * A launch re-sent after a crash carries the same user data: the same
 * request, key and message seal to the same text.  Another request, key
 * or message: another ephemeral key and nonce.
 */
static void test_deterministic(void **state)
{
	unsigned char m[32], m2[32], ha[46], hb[46];
	char *a, *b, *c, *d, *e, *f;

	(void)state;
	fill(m, sizeof(m));
	memcpy(m2, m, sizeof(m2));
	m2[31] ^= 1;
	a = seal_for("x1.pub", "req-0001", m, sizeof(m));
	b = seal_for("x1.pub", "req-0001", m, sizeof(m));
	c = seal_for("x1.pub", "req-0002", m, sizeof(m));
	d = seal_for("x2.pub", "req-0001", m, sizeof(m));
	e = seal_for("x1.pub", "req-0001", m2, sizeof(m2));
	f = seal_for("x1.pub", "req-00010", m, sizeof(m));
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_string_not_equal(a, d);
	assert_string_not_equal(a, e);
	assert_string_not_equal(a, f);
	/* not only the ciphertext: the ephemeral key and the nonce differ */
	blob_of(a, ha, sizeof(ha));
	for (size_t k = 0; k < 4; k++) {
		const char *o = (const char *[]){ c, d, e, f }[k];

		blob_of(o, hb, sizeof(hb));
		assert_memory_not_equal(ha + 2, hb + 2, 32);
		assert_memory_not_equal(ha + 34, hb + 34, 12);
	}
	open_ok("x1.pem", a, m, sizeof(m));
	open_ok("x1.pem", c, m, sizeof(m));
	open_ok("x2.pem", d, m, sizeof(m));
	open_ok("x1.pem", e, m2, sizeof(m2));
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(f);
}

static void test_wrong_key(void **state)
{
	unsigned char m[32];
	char *tx;

	(void)state;
	fill(m, sizeof(m));
	tx = seal_ok("x1.pub", m, sizeof(m));
	open_bad("x2.pem", tx, strlen(tx), GB_E_INVALID, "sealed for another key or altered");
	open_bad("rsa.pem", tx, strlen(tx), GB_E_INVALID, "wrong key type RSA");
	open_bad("ed.pem", tx, strlen(tx), GB_E_INVALID, "wrong key type ED25519");
	/* a public key is no private key */
	open_bad("x1.pub", tx, strlen(tx), GB_E_PARSE, "no PEM private key");
	free(tx);
}

/* Replace the base64 character at [i] by another: the bytes always change. */
static void flip(char *t, size_t i)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = strchr(b64, t[i]);

	assert_non_null(p);
	t[i] = b64[((size_t)(p - b64) + 1) % 64];
}

static void altered(const char *priv, const char *pub, size_t step)
{
	unsigned char m[40];
	char *t;
	size_t n, checked = 0;

	fill(m, sizeof(m));
	t = seal_ok(pub, m, sizeof(m));
	n = strlen(t);
	for (size_t i = GB_SEAL_PREFIX_LEN; i < n; i += step) {
		char keep = t[i];
		unsigned char *msg = NULL;
		size_t msg_n = 0;
		gb_error_t err = { 0 };

		if (t[i] == '=')
			continue;
		flip(t, i);
		if (gb_seal_open(path_of(priv, 3), t, n, &msg, &msg_n, &err) == GB_E_OK)
			fail_msg("%s: character %zu changed and the text still opens", priv, i);
		assert_null(msg);
		t[i] = keep;
		checked++;
	}
	assert_true(checked > 10);
	open_ok(priv, t, m, sizeof(m));
	free(t);
}

static void test_altered(void **state)
{
	(void)state;
	altered("x1.pem", "x1.pub", 1);
}

/* Re-encode [blob] as a text; RET NEW. */
static char *text_of(const unsigned char *blob, size_t n)
{
	size_t b = gb_crypto_base64_len(n);
	char *t = malloc(GB_SEAL_PREFIX_LEN + b + 1);

	assert_non_null(t);
	memcpy(t, GB_SEAL_PREFIX, GB_SEAL_PREFIX_LEN);
	assert_int_equal(gb_crypto_base64(blob, n, t + GB_SEAL_PREFIX_LEN, b + 1), b);
	return t;
}

static void test_header(void **state)
{
	unsigned char m[34], blob[2 + 32 + 12 + 34 + 16];
	char *t, *u;

	(void)state;
	fill(m, sizeof(m));
	t = seal_ok("x1.pub", m, sizeof(m));
	assert_int_equal(EVP_DecodeBlock(blob, (unsigned char *)t + GB_SEAL_PREFIX_LEN,
					 (int)strlen(t + GB_SEAL_PREFIX_LEN)),
			 (int)sizeof(blob));	/* 96 bytes: no padding to strip */
	assert_int_equal(blob[0], 1);
	assert_int_equal(blob[1], 1);
	blob[0] = 2;
	u = text_of(blob, sizeof(blob));
	open_bad("x1.pem", u, strlen(u), GB_E_PARSE, "version 2, this program reads 1");
	free(u);
	blob[0] = 1;
	blob[1] = 9;
	u = text_of(blob, sizeof(blob));
	open_bad("x1.pem", u, strlen(u), GB_E_PARSE, "unknown key type 9");
	free(u);
	/* RSA-OAEP texts (key type 2) are no longer read */
	blob[1] = 2;
	u = text_of(blob, sizeof(blob));
	open_bad("x1.pem", u, strlen(u), GB_E_PARSE, "key type 2 (RSA), no longer read");
	free(u);
	/* a header and a tag, no ciphertext */
	blob[1] = 1;
	u = text_of(blob, 2 + 32 + 12 + 16);
	open_bad("x1.pem", u, strlen(u), GB_E_PARSE, "truncated");
	free(u);
	free(t);
}

static void test_truncated_and_prefix(void **state)
{
	unsigned char m[32];
	char *t, *u;
	size_t n;

	(void)state;
	fill(m, sizeof(m));
	t = seal_ok("x1.pub", m, sizeof(m));
	n = strlen(t);
	open_bad("x1.pem", t, n - 1, GB_E_PARSE, "not a positive multiple of 4 (truncated?)");
	open_bad("x1.pem", t, n - 4, GB_E_INVALID, "sealed for another key or altered");
	open_bad("x1.pem", t, GB_SEAL_PREFIX_LEN, GB_E_PARSE, "0 base64 characters");
	open_bad("x1.pem", t, GB_SEAL_PREFIX_LEN + 8, GB_E_PARSE, "truncated (6 bytes");
	open_bad("x1.pem", t, 5, GB_E_PARSE, "does not start with gbseal1:");
	open_bad("x1.pem", "", 0, GB_E_PARSE, "does not start with gbseal1:");
	u = strdup(t);
	assert_non_null(u);
	u[6] = '2';
	open_bad("x1.pem", u, n, GB_E_PARSE, "does not start with gbseal1:");
	memcpy(u, t, n);
	u[20] = '*';
	open_bad("x1.pem", u, n, GB_E_PARSE, "bad base64 character 0x2a at offset 20");
	memcpy(u, t, n);
	u[n - 4] = '=';
	open_bad("x1.pem", u, n, GB_E_PARSE, "bad base64 character 0x3d");
	/* a text with its newline is not a text */
	open_bad("x1.pem", "gbseal1:AAAA\n", 13, GB_E_PARSE, "not a positive multiple of 4");
	free(u);
	free(t);
}

static void test_key_files(void **state)
{
	unsigned char m[32];
	FILE *f;
	char *t;

	(void)state;
	fill(m, sizeof(m));
	seal_bad("x1.pub", 0, GB_E_INVALID, "0 bytes to seal");
	seal_bad("x1.pub", GB_SEAL_MSG_MIN - 1, GB_E_INVALID, "16 to 16384");
	seal_bad("x1.pub", GB_SEAL_MSG_MAX + 1, GB_E_INVALID, "16 to 16384");
	seal_bad_ctx("x1.pub", NULL, 32, GB_E_INVALID, "a context of 0 bytes: 1 to 256");
	seal_bad_ctx("x1.pub", "", 32, GB_E_INVALID, "a context of 0 bytes");
	{
		char longctx[GB_SEAL_CONTEXT_MAX + 2];

		memset(longctx, 'r', sizeof(longctx) - 1);
		longctx[sizeof(longctx) - 1] = '\0';
		seal_bad_ctx("x1.pub", longctx, 32, GB_E_INVALID, "a context of 257 bytes");
		longctx[GB_SEAL_CONTEXT_MAX] = '\0';
		free(seal_for("x1.pub", longctx, m, sizeof(m)));
	}
	seal_bad("nosuch.pub", 32, GB_E_NOTFOUND, "nosuch.pub");
	seal_bad("adir", 32, GB_E_IO, "not a regular file (a directory)");
	seal_bad("x1.pem", 32, GB_E_INVALID, "holds a private key: seal to its public half");
	seal_bad("ed.pub", 32, GB_E_INVALID, "wrong key type ED25519");
	seal_bad("rsa.pub", 32, GB_E_INVALID, "wrong key type RSA");
	seal_bad("rsa.pub", 32, GB_E_INVALID, "seal keys are X25519");
	seal_bad("garbage.pub", 32, GB_E_PARSE, "holds no PEM public key (BEGIN PUBLIC KEY)");
	seal_bad("empty.pub", 32, GB_E_PARSE, "is empty");
	t = seal_ok("x1.pub", m, sizeof(m));
	open_bad("nosuch.pem", t, strlen(t), GB_E_NOTFOUND, "nosuch.pem");
	/* an encrypted private key is refused, never prompted for */
	{
		EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");

		assert_non_null(k);
		assert_non_null(f = fopen(path_of("enc.pem", 0), "w"));
		assert_int_equal(PEM_write_PKCS8PrivateKey(f, k, EVP_aes_256_cbc(), "pw", 2,
							   NULL, NULL), 1);
		assert_int_equal(fclose(f), 0);
		EVP_PKEY_free(k);
	}
	open_bad("enc.pem", t, strlen(t), GB_E_PARSE, "encrypted private key");
	if (geteuid() != 0) {
		assert_int_equal(chmod(path_of("x1.pem", 0), 0), 0);
		open_bad("x1.pem", t, strlen(t), GB_E_IO, "x1.pem");
		assert_int_equal(chmod(path_of("x1.pem", 0), 0600), 0);
	}
	free(t);
}

static void test_find(void **state)
{
	static const char script[] =
		"#!/bin/sh\nMUNGE='gbseal1:QUJD+/9=' other=gbseal1:Zm9v\n";
	const char *tok = NULL;
	size_t n = 0;

	(void)state;
	assert_true(gb_seal_find(script, strlen(script), &tok, &n));
	assert_int_equal(n, strlen("gbseal1:QUJD+/9="));
	assert_memory_equal(tok, "gbseal1:QUJD+/9='", n + 1);
	/* bounded by n, not by a NUL */
	assert_true(gb_seal_find(script, 27, &tok, &n));
	assert_int_equal(tok - script, 17);
	assert_int_equal(n, 10);
	assert_false(gb_seal_find(script, 20, &tok, &n));
	assert_null(tok);
	assert_int_equal(n, 0);
	assert_false(gb_seal_find("gbseal2:AAAA", 12, &tok, &n));
	assert_false(gb_seal_find(NULL, 0, &tok, &n));
	assert_true(gb_seal_find("x gbseal1:", 10, &tok, &n));
	assert_int_equal(n, GB_SEAL_PREFIX_LEN);
}

/* What gpuburst-node does: find the token in its user data and open it. */
static void test_find_and_open(void **state)
{
	unsigned char key[64], *msg = NULL;
	struct gb_buf ud = GB_BUF_INIT;
	const char *tok;
	size_t tok_n, msg_n = 0;
	gb_error_t err = { 0 };
	char *t;

	(void)state;
	fill(key, sizeof(key));
	t = seal_ok("x1.pub", key, sizeof(key));
	gb_buf_printf(&ud, "#!/bin/sh\nset -e\necho '%s' > /run/munge.sealed\n", t);
	assert_true(gb_seal_find(ud.data, ud.len, &tok, &tok_n));
	assert_int_equal(tok_n, strlen(t));
	assert_int_equal(gb_seal_open(path_of("x1.pem", 0), tok, tok_n, &msg, &msg_n, &err),
			 GB_E_OK);
	assert_int_equal(msg_n, sizeof(key));
	assert_memory_equal(msg, key, sizeof(key));
	gb_seal_free(msg, msg_n);
	gb_seal_free(NULL, 0);
	gb_buf_free(&ud);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_altered),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_truncated_and_prefix),
		cmocka_unit_test(test_key_files),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_and_open),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
