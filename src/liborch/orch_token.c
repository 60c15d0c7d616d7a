/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_token.c - deterministic ClientTokens and per-call UserData
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_crypto.h"
#include "gb_orch.h"

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
gb_err_t gb_orch_user_data(const char *tmpl, const char *cluster,
			   const char *region, const char *request_id,
			   const char *const *nodes, size_t n, char **out,
			   size_t *len, gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	const char *p = tmpl;

	*out = NULL;
	*len = 0;
	while (p && *p) {
		if (gb_str_has_prefix(p, "{cluster}")) {
			gb_buf_puts(&b, cluster ? cluster : "");
			p += 9;
		} else if (gb_str_has_prefix(p, "{region}")) {
			gb_buf_puts(&b, region ? region : "");
			p += 8;
		} else if (gb_str_has_prefix(p, "{request}")) {
			gb_buf_puts(&b, request_id ? request_id : "");
			p += 9;
		} else if (gb_str_has_prefix(p, "{nodes}")) {
			put_nodes(&b, nodes, n);
			p += 7;
		} else if (gb_str_has_prefix(p, "{node}")) {
			if (n != 1) {
				gb_buf_free(&b);
				return gb_errorf(err, GB_E_INVALID,
						 "user_data: {node} needs a call with exactly one node, not %zu",
						 n);
			}
			gb_buf_puts(&b, nodes[0]);
			p += 6;
		} else {
			gb_buf_putc(&b, *p++);
		}
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
