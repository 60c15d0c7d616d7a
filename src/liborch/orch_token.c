/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_token.c - deterministic ClientTokens, per-call UserData, the sealed munge key
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_crypto.h"
#include "gb_orch.h"
#include "gb_seal.h"
#include "gb_util.h"

/*
 * EC2 idempotency: "a unique, case-sensitive string of up to 64 ASCII
 * characters"; the same token with the same parameters returns the original
 * reservation.  Deriving the token from what defines the attempt (instead
 * of drawing it at random, as the ancestor did) is what lets a re-run after
 * a crash send the very same token: the seq alone makes it unique within
 * the request, the hash ties it to the pool and counts so that a bug that
 * reused a seq for other parameters gets a distinct token.
 */
gb_err_t gb_orch_client_token(const char *request_id, const char *region,
			      const char *az, const char *subnet, int seq,
			      int min_count, int max_count, char *buf,
			      size_t n, gb_error_t *err)
{
	struct gb_buf in = GB_BUF_INIT;
	char hex[GB_SHA256_HEX_LEN + 1];
	int len;

	if (!request_id || !*request_id || seq < 0 || !buf)
		return gb_errorf(err, GB_E_INVALID, "client token: no request id or bad seq");
	for (const char *c = request_id; *c; c++)
		if (*c <= ' ' || *c > '~')
			return gb_errorf(err, GB_E_INVALID,
					 "client token: request id is not printable ASCII");
	gb_buf_printf(&in, "%s|%s|%s|%d|%d|%d", region ? region : "",
		      az ? az : "", subnet ? subnet : "", seq, min_count,
		      max_count);
	if (gb_buf_failed(&in)) {
		gb_buf_free(&in);
		return gb_errorf(err, GB_E_NOMEM, "client token: out of memory");
	}
	gb_crypto_sha256_hex(in.data, in.len, hex);
	gb_buf_free(&in);
	len = snprintf(buf, n, "gb-%s-%d-%.16s", request_id, seq, hex);
	if (len < 0 || (size_t)len >= n || len > GB_ORCH_TOKEN_MAX)
		return gb_errorf(err, GB_E_INVALID,
				 "client token for request %s seq %d would exceed %d characters",
				 request_id, seq, GB_ORCH_TOKEN_MAX);
	return GB_E_OK;
}

#define USER_DATA_MAX 16384	/* EC2: bytes before base64 */

static void put_nodes(struct gb_buf *b, const char *const *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			gb_buf_putc(b, ' ');
		gb_buf_puts(b, nodes[i]);
	}
}

/*
 * Placeholders are replaced in one left-to-right pass, so a value that
 * itself contains "{node}" is never expanded again.  Unknown "{...}" text
 * is kept as is: shell scripts are full of braces.
 */
gb_err_t gb_orch_user_data(const char *tmpl, const struct gb_orch_user_vars *v,
			   char **out, size_t *len, gb_error_t *err)
{
	static const char *const names[] = {
		"{cluster}", "{region}", "{request}", "{nodes}", "{node}", "{munge_key}",
	};
	struct gb_buf b = GB_BUF_INIT;
	const char *p = tmpl;

	*out = NULL;
	*len = 0;
	while (p && *p) {
		size_t k = 0;

		while (k < GB_ARRAY_LEN(names) && !gb_str_has_prefix(p, names[k]))
			k++;
		switch (k) {
		case 0:
			gb_buf_puts(&b, v->cluster ? v->cluster : "");
			break;
		case 1:
			gb_buf_puts(&b, v->region ? v->region : "");
			break;
		case 2:
			gb_buf_puts(&b, v->request_id ? v->request_id : "");
			break;
		case 3:
			put_nodes(&b, v->nodes, v->n_nodes);
			break;
		case 4:
			if (v->n_nodes != 1) {
				gb_buf_free(&b);
				return gb_errorf(err, GB_E_INVALID,
						 "user_data: {node} needs a call with exactly one node, not %zu",
						 v->n_nodes);
			}
			gb_buf_puts(&b, v->nodes[0]);
			break;
		case 5:
			if (!v->munge_key) {
				gb_buf_free(&b);
				return gb_errorf(err, GB_E_INVALID,
						 "user_data: {munge_key} without a sealed munge key (cloud.munge_key)");
			}
			gb_buf_puts(&b, v->munge_key);
			break;
		default:
			gb_buf_putc(&b, *p++);
			continue;
		}
		p += strlen(names[k]);
	}
	if (gb_buf_failed(&b)) {
		gb_buf_free(&b);
		return gb_errorf(err, GB_E_NOMEM, "user_data: out of memory");
	}
	if (b.len > USER_DATA_MAX) {
		size_t l = b.len;

		gb_buf_free(&b);
		return gb_errorf(err, GB_E_INVALID,
				 "user_data: %zu bytes after substitution, more than EC2's %d",
				 l, USER_DATA_MAX);
	}
	*len = b.len;
	*out = b.data ? gb_buf_steal(&b) : strdup("");
	if (!*out)
		return gb_errorf(err, GB_E_NOMEM, "user_data: out of memory");
	return GB_E_OK;
}

#define MUNGE_KEY_MIN 32	/* munge's own limits, as libconf checks them */
#define MUNGE_KEY_MAX 1024

/* Read the munge key at [path] into [buf] (MUNGE_KEY_MAX bytes); OUT *n. */
static gb_err_t munge_key_read(const char *path, unsigned char *buf, size_t *n,
			       gb_error_t *err)
{
	gb_error_t e = { 0 };
	size_t size = 0, got = 0;
	struct stat st;
	gb_err_t rc;
	int fd;

	rc = gb_file_open(path, MUNGE_KEY_MAX, &fd, &size, &e);
	if (rc == GB_E_INVALID)
		return gb_errorf(err, GB_E_CONFIG, "munge key %s has more than %d bytes",
				 path, MUNGE_KEY_MAX);
	if (rc)
		return gb_errorf(err, GB_E_CONFIG, "munge key: %s", e.text);
	if (fstat(fd, &st) == 0 && (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH))) {
		rc = gb_errorf(err, GB_E_CONFIG,
			       "munge key %s may be read or written by group or others (mode %04o)",
			       path, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got < MUNGE_KEY_MIN || got != size)
		rc = gb_errorf(err, GB_E_CONFIG, "munge key %s: read %zu of its %zu bytes, need %d to %d",
			       path, got, size, MUNGE_KEY_MIN, MUNGE_KEY_MAX);
	*n = got;
out:
	close(fd);
	return rc;
}

gb_err_t gb_orch_munge_seal(const struct gb_conf *conf, const char *request_id,
			    char **out, gb_error_t *err)
{
	const struct gb_conf_munge_key *mk = &conf->cloud.munge_key;
	unsigned char key[MUNGE_KEY_MAX];
	size_t n = 0;
	gb_err_t rc;

	*out = NULL;
	if (!mk->file || !mk->seal_to)
		return gb_errorf(err, GB_E_CONFIG, "{munge_key}: cloud.munge_key is not set");
	rc = munge_key_read(mk->file, key, &n, err);
	if (!rc)
		rc = gb_seal(mk->seal_to, request_id, key, n, out, err);
	gb_memzero(key, sizeof(key));
	return rc;
}
