/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_imds.c - IMDSv2 on gb_http: token, GET, one retry after a 401
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_http.h"
#include "gb_imds.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"

#define DEFAULT_TIMEOUT_MS 1000L

struct gb_imds {
	gb_http_t *http;
	char *token;		/* a secret */
	double token_expiry;	/* monotonic seconds */
	long token_ttl;
};

gb_err_t gb_imds_create(const struct gb_imds_opts *o, gb_imds_t **out,
			gb_error_t *err)
{
	struct gb_imds_opts def = { 0 };
	struct gb_http_opts ho = { 0 };
	gb_imds_t *m;
	gb_err_t rc;

	*out = NULL;
	if (!o)
		o = &def;
	if (o->timeout_ms < 0 || o->token_ttl < 0)
		return gb_errorf(err, GB_E_INVALID, "IMDS: negative timeout or token TTL");
	if (!(m = calloc(1, sizeof(*m))))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	m->token_ttl = o->token_ttl ? o->token_ttl : GB_IMDS_TOKEN_TTL;
	ho.connect_timeout_ms = o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	ho.timeout_ms = ho.connect_timeout_ms;
	ho.max_response_bytes = o->max_bytes ? o->max_bytes : GB_IMDS_MAX_BYTES;
	ho.no_proxy = true;	/* link-local metadata never goes via a proxy */
	ho.local_address = o->local_address;
	rc = gb_http_create(o->endpoint && *o->endpoint ? o->endpoint
							: GB_IMDS_DEFAULT_ENDPOINT,
			    &ho, &m->http, err);
	if (rc) {
		gb_error_prefix(err, "IMDS");
		gb_imds_destroy(m);
		return rc;
	}
	*out = m;
	return GB_E_OK;
}

void gb_imds_destroy(gb_imds_t *m)
{
	if (!m)
		return;
	gb_free_secret(&m->token);
	gb_http_destroy(m->http);
	free(m);
}

void gb_imds_reset_token(gb_imds_t *m)
{
	gb_free_secret(&m->token);
}

/* One request to "<endpoint path>/latest/<rest>"; [r] freed by the caller. */
static gb_err_t imds_do(gb_imds_t *m, const char *method, const char *rest,
			const struct gb_http_header *h, struct gb_http_response *r,
			gb_error_t *err)
{
	const char *base = gb_http_base_path(m->http);
	size_t n = strlen(base);
	struct gb_buf path = GB_BUF_INIT;
	struct gb_http_request req = { .method = method, .headers = h,
				       .n_headers = 1 };
	gb_err_t rc;

	while (n > 0 && base[n - 1] == '/')
		n--;
	gb_buf_append(&path, base, n);
	gb_buf_printf(&path, "/latest/%s", rest);
	if (gb_buf_failed(&path)) {
		gb_buf_free(&path);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	req.path = gb_buf_str(&path);
	rc = gb_http_do(m->http, &req, r, err);
	gb_buf_free(&path);
	if (rc)
		return gb_error_prefix(err, "IMDS %s", rest);
	return GB_E_OK;
}

static gb_err_t get_token(gb_imds_t *m, gb_error_t *err)
{
	struct gb_http_response r = { 0 };
	struct gb_http_header h;
	char ttl[32];
	size_t len;
	gb_err_t rc;

	if (m->token && gb_time_mono() < m->token_expiry)
		return GB_E_OK;
	gb_free_secret(&m->token);
	snprintf(ttl, sizeof(ttl), "%ld", m->token_ttl);
	h = (struct gb_http_header){ "X-aws-ec2-metadata-token-ttl-seconds", ttl };
	rc = imds_do(m, "PUT", "api/token", &h, &r, err);
	if (rc)
		goto out;
	if (r.status != 200) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "IMDS api/token: token request refused (HTTP %ld; IMDSv2 off or hop limit too low)",
			       r.status);
		goto out;
	}
	len = strcspn(r.body, "\r\n");
	if (len == 0 || r.body[len + strspn(r.body + len, "\r\n")] != '\0') {
		rc = gb_errorf(err, GB_E_AUTH, "IMDS api/token: empty or malformed token");
		goto out;
	}
	if (!(m->token = strndup(r.body, len))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	gb_log_secret_add(m->token);
	/* renew a minute early (or at half a short TTL): never mid-call */
	m->token_expiry = gb_time_mono() +
			  (m->token_ttl > 120 ? (double)m->token_ttl - 60
					      : (double)m->token_ttl / 2);
out:
	gb_http_response_free(&r);
	return rc;
}

gb_err_t gb_imds_get(gb_imds_t *m, const char *path, char **body, size_t *len,
		     gb_error_t *err)
{
	struct gb_http_response r = { 0 };
	struct gb_http_header h;
	gb_err_t rc = GB_E_OK;

	*body = NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		gb_http_response_free(&r);
		if ((rc = get_token(m, err)))
			return rc;
		h = (struct gb_http_header){ "X-aws-ec2-metadata-token", m->token };
		if ((rc = imds_do(m, "GET", path, &h, &r, err)))
			goto out;
		if (r.status != 401)
			break;
		gb_free_secret(&m->token);	/* expired: one new token */
	}
	switch (r.status) {
	case 200:
		*body = r.body;
		if (len)
			*len = r.body_len;
		r.body = NULL;
		r.body_len = 0;
		break;
	case 404:
		rc = gb_errorf(err, GB_E_NOTFOUND, "IMDS %s: not found (HTTP 404)", path);
		break;
	case 401:
	case 403:
		rc = gb_errorf(err, GB_E_AUTH, "IMDS %s: HTTP %ld (token refused)",
			       path, r.status);
		break;
	default:
		rc = gb_errorf(err, GB_E_CLOUD, "IMDS %s: HTTP %ld", path, r.status);
		break;
	}
out:
	gb_http_response_free(&r);
	return rc;
}
