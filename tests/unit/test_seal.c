/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_seal.c - gb_seal: round trips, wrong keys, altered and cut texts,
 * key-file errors, gb_seal_find
 *
 * The keys are made here with EVP (X25519, RSA 3072, a too small RSA 2048,
 * an Ed25519) and written as `openssl genpkey` / `openssl pkey -pubout`
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
	for (int i = 1; i <= 2; i++) {
		char name[8];

		if (!(k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)3072)))
			return -1;
		snprintf(name, sizeof(name), "r%d", i);
		write_key(k, name);
		EVP_PKEY_free(k);
	}
	if (!(k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)))
		return -1;
	write_key(k, "small");
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
		"x1.pem", "x1.pub", "x2.pem", "x2.pub", "r1.pem", "r1.pub", "r2.pem",
		"r2.pub", "small.pem", "small.pub", "ed.pem", "ed.pub", "garbage.pub",
		"empty.pub", "enc.pem",
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
		unlink(path_of(names[i], 0));
	rmdir(path_of("adir", 0));
	return rmdir(dir);
}

static char *seal_ok(const char *key, const void *msg, size_t n)
{
	gb_error_t err = { 0 };
	char *text = NULL;

	if (gb_seal(path_of(key, 3), msg, n, &text, &err) != GB_E_OK)
		fail_msg("gb_seal %s: %s", key, err.text);
	return text;
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

static void seal_bad(const char *key, size_t n, gb_err_t code, const char *words)
{
	static const unsigned char msg[GB_SEAL_MSG_MAX + 1];
	gb_error_t err = { 0 };
	char *text = (char *)"x";

	assert_int_equal(gb_seal(path_of(key, 3), msg, n, &text, &err), code);
	assert_null(text);
	if (!strstr(err.text, words))
		fail_msg("'%s' not in '%s'", words, err.text);
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
	unsigned char m[1024];
	static const size_t sizes[] = { 1, 32, 1024, GB_SEAL_MSG_MAX };

	(void)state;
	fill(m, sizeof(m));
	for (size_t i = 0; i < GB_ARRAY_LEN(sizes); i++) {
		size_t n = sizes[i];
		unsigned char *big = malloc(n);
		char *tx, *tr;

		assert_non_null(big);
		fill(big, n);
		tx = seal_ok("x1.pub", big, n);
		tr = seal_ok("r1.pub", big, n);
		assert_true(gb_str_has_prefix(tx, GB_SEAL_PREFIX));
		assert_true(gb_str_has_prefix(tr, GB_SEAL_PREFIX));
		assert_null(strchr(tx, '\n'));
		assert_int_equal(strlen(tx), text_len(2 + 32 + 12, n));
		assert_int_equal(strlen(tr), text_len(2 + 2 + 384 + 12, n));
		open_ok("x1.pem", tx, big, n);
		open_ok("r1.pem", tr, big, n);
		free(tx);
		free(tr);
		free(big);
	}
	/* a fresh key (or AES key) and nonce every time */
	{
		char *a = seal_ok("x1.pub", m, 32), *b = seal_ok("x1.pub", m, 32);
		char *c = seal_ok("r1.pub", m, 32), *d = seal_ok("r1.pub", m, 32);

		assert_string_not_equal(a, b);
		assert_string_not_equal(c, d);
		free(a);
		free(b);
		free(c);
		free(d);
	}
}

static void test_wrong_key(void **state)
{
	unsigned char m[32];
	char *tx, *tr;

	(void)state;
	fill(m, sizeof(m));
	tx = seal_ok("x1.pub", m, sizeof(m));
	tr = seal_ok("r1.pub", m, sizeof(m));
	open_bad("x2.pem", tx, strlen(tx), GB_E_INVALID, "sealed for another key or altered");
	open_bad("r2.pem", tr, strlen(tr), GB_E_INVALID, "sealed for another key or altered");
	open_bad("r1.pem", tx, strlen(tx), GB_E_INVALID, "sealed to an X25519 key");
	open_bad("x1.pem", tr, strlen(tr), GB_E_INVALID, "sealed to an RSA key");
	open_bad("ed.pem", tx, strlen(tx), GB_E_INVALID, "wrong key type ED25519");
	open_bad("small.pem", tr, strlen(tr), GB_E_INVALID, "2048 bits");
	/* a public key is no private key */
	open_bad("x1.pub", tx, strlen(tx), GB_E_PARSE, "no PEM private key");
	free(tx);
	free(tr);
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
	altered("r1.pem", "r1.pub", 7);
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
	seal_bad("x1.pub", GB_SEAL_MSG_MAX + 1, GB_E_INVALID, "1 to 16384");
	seal_bad("nosuch.pub", 32, GB_E_NOTFOUND, "nosuch.pub");
	seal_bad("adir", 32, GB_E_IO, "not a regular file (a directory)");
	seal_bad("x1.pem", 32, GB_E_INVALID, "holds a private key: seal to its public half");
	seal_bad("ed.pub", 32, GB_E_INVALID, "wrong key type ED25519");
	seal_bad("small.pub", 32, GB_E_INVALID, "RSA key of 2048 bits: seal keys need at least 3072");
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
	t = seal_ok("r1.pub", key, sizeof(key));
	gb_buf_printf(&ud, "#!/bin/sh\nset -e\necho '%s' > /run/munge.sealed\n", t);
	assert_true(gb_seal_find(ud.data, ud.len, &tok, &tok_n));
	assert_int_equal(tok_n, strlen(t));
	assert_int_equal(gb_seal_open(path_of("r1.pem", 0), tok, tok_n, &msg, &msg_n, &err),
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
