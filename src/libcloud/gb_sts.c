/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_sts.c - STS AssumeRole / AssumeRoleWithWebIdentity over the Query API
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb_ec2.h"
#include "gb_ec2_xml.h"
#include "gb_log.h"
#include "gb_retry.h"
#include "gb_sigv4.h"
#include "gb_sts.h"
#include "gb_util.h"

#define FORM_CONTENT_TYPE "application/x-www-form-urlencoded; charset=utf-8"
#define STS_MAX_RESPONSE (64u << 10)

bool gb_sts_session_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 2 || n > 64)
		return false;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && !strchr("_+=,.@-", *s))
			return false;
	}
	return true;
}

/* The body of [action] for [r] (+ the web identity token). */
static gb_err_t form(const char *action, const struct gb_sts_role *r,
		     const char *token, struct gb_buf *b, gb_error_t *err)
{
	char dur[24];

	if (!r->role_arn || !*r->role_arn)
		return gb_errorf(err, GB_E_CONFIG, "STS %s: no role ARN", action);
	if (!gb_sts_session_name_ok(r->session_name))
		return gb_errorf(err, GB_E_CONFIG,
				 "STS %s %s: role session name \"%.64s\" is not 2-64 of letters, digits and _+=,.@-",
				 action, r->role_arn, r->session_name ? r->session_name : "");
	if (r->duration_seconds &&
	    (r->duration_seconds < GB_STS_MIN_DURATION ||
	     r->duration_seconds > GB_STS_MAX_DURATION))
		return gb_errorf(err, GB_E_CONFIG,
				 "STS %s %s: duration %ld s is outside %ld-%ld s",
				 action, r->role_arn, r->duration_seconds,
				 GB_STS_MIN_DURATION, GB_STS_MAX_DURATION);
	gb_sigv4_form_put(b, "Action", action);
	gb_sigv4_form_put(b, "Version", GB_STS_API_VERSION);
	gb_sigv4_form_put(b, "RoleArn", r->role_arn);
	gb_sigv4_form_put(b, "RoleSessionName", r->session_name);
	if (r->duration_seconds) {
		snprintf(dur, sizeof(dur), "%ld", r->duration_seconds);
		gb_sigv4_form_put(b, "DurationSeconds", dur);
	}
	if (r->external_id)
		gb_sigv4_form_put(b, "ExternalId", r->external_id);
	if (token)
		gb_sigv4_form_put(b, "WebIdentityToken", token);
	if (gb_buf_failed(b))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

/* One POST; signed when [base] is given. */
static gb_err_t send_once(gb_http_t *h, const char *region,
			  const struct gb_creds_snapshot *base,
			  const struct gb_buf *body, struct gb_http_response *resp,
			  gb_error_t *err)
{
	struct gb_sigv4_header sh[2] = {
		{ "Host", gb_http_host(h) },
		{ "Content-Type", FORM_CONTENT_TYPE },
	};
	struct gb_sigv4_request sr = { .method = "POST", .path = gb_http_base_path(h),
				       .headers = sh, .n_headers = 2,
				       .payload = body->data, .payload_len = body->len };
	struct gb_sigv4_result sig = { 0 };
	struct gb_http_header hh[4];
	struct gb_http_request req = { .method = "POST", .headers = hh,
				       .body = body->data, .body_len = body->len };
	gb_err_t rc;

	hh[req.n_headers++] = (struct gb_http_header){ "Content-Type", FORM_CONTENT_TYPE };
	if (base) {
		struct gb_sigv4_creds sc = { base->access_key_id,
					     base->secret_access_key,
					     base->session_token };

		rc = gb_sigv4_sign(&sr, &sc, region, GB_STS_SERVICE, time(NULL),
				   &sig, err);
		if (rc) {
			gb_sigv4_result_free(&sig);
			return rc == GB_E_NOMEM ? rc : GB_E_CONFIG;
		}
		hh[req.n_headers++] = (struct gb_http_header){ "X-Amz-Date", sig.amz_date };
		if (sig.need_token_header)
			hh[req.n_headers++] = (struct gb_http_header){ "X-Amz-Security-Token",
								       base->session_token };
		hh[req.n_headers++] = (struct gb_http_header){ "Authorization",
							       sig.authorization };
	}
	rc = gb_http_do(h, &req, resp, err);
	gb_sigv4_result_free(&sig);
	return rc;
}

static void default_sleep(double seconds, void *ctx)
{
	(void)ctx;
	gb_time_sleep(seconds);
}

/* STS's answer to one request: GB_E_OK, or whether to try again. */
static gb_err_t judge(const char *action, const struct gb_sts_role *r,
		      const struct gb_http_response *resp, bool *again,
		      gb_error_t *err)
{
	struct gb_ec2_error ae = { 0 };
	gb_err_t prc;

	*again = false;
	if (resp->status >= 200 && resp->status <= 299)
		return GB_E_OK;
	prc = gb_ec2_xml_parse_error(resp->body, resp->body_len, &ae, NULL);
	if (prc != GB_E_OK) {
		*again = resp->status >= 500;
		return gb_errorf(err, resp->status >= 500 ? GB_E_HTTP : GB_E_AUTH,
				 "STS %s %s: HTTP %ld without an STS error envelope",
				 action, r->role_arn, resp->status);
	}
	*again = resp->status >= 500 || !strcmp(ae.code, "Throttling") ||
		 !strcmp(ae.code, "IDPCommunicationError");
	return gb_errorf(err, *again ? GB_E_HTTP : GB_E_AUTH,
			 "STS %s %s: %s: %s (HTTP %ld, RequestId %s)", action,
			 r->role_arn, ae.code, ae.message, resp->status,
			 ae.request_id[0] ? ae.request_id : "none");
}

static gb_err_t sts_call(const struct gb_sts_opts *o, const char *action,
			 const struct gb_creds_snapshot *base,
			 const struct gb_sts_role *r, const char *token,
			 struct gb_creds_snapshot *out, gb_error_t *err)
{
	struct gb_http_opts ho = o->http;
	struct gb_http_response resp = { 0 };
	struct gb_buf body = GB_BUF_INIT;
	struct gb_retry_policy rp = { 0 };
	char result[64], *arn = NULL;
	gb_http_t *h = NULL;
	gb_err_t rc;

	gb_creds_snapshot_clear(out);
	if (!o->endpoint || !o->region)
		return gb_errorf(err, GB_E_CONFIG, "STS %s: no endpoint or region", action);
	rc = form(action, r, token, &body, err);
	if (rc)
		goto out;
	ho.max_response_bytes = STS_MAX_RESPONSE;
	if (gb_http_create(o->endpoint, &ho, &h, err) != GB_E_OK) {
		gb_error_prefix(err, "STS endpoint");
		rc = GB_E_CONFIG;
		if (err)
			err->code = rc;
		goto out;
	}
	gb_retry_policy_fill(&rp);
	for (int attempt = 1;; attempt++) {
		bool again = false;
		gb_error_t e;

		rc = send_once(h, o->region, base, &body, &resp, &e);
		if (rc == GB_E_OK)
			rc = judge(action, r, &resp, &again, &e);
		else if (rc == GB_E_HTTP || rc == GB_E_TIMEOUT)
			again = gb_http_fail_retryable(resp.fail);
		if (rc == GB_E_OK || !again || attempt >= GB_STS_ATTEMPTS) {
			if (rc && err) {
				*err = e;
				if (rc == GB_E_HTTP || rc == GB_E_TIMEOUT)
					gb_error_prefix(err, "STS %s %s (%d attempt%s)",
							action, r->role_arn, attempt,
							attempt == 1 ? "" : "s");
			}
			break;
		}
		gb_log_warn("sts_retry action=%s attempt=%d status=%ld", action,
			    attempt, resp.status);
		gb_http_response_free(&resp);
		(o->sleep ? o->sleep : default_sleep)(
			gb_retry_backoff(&rp, attempt - 1, gb_retry_uniform()),
			o->sleep_ctx);
	}
	if (rc)
		goto out;
	snprintf(result, sizeof(result), "%sResult", action);
	rc = gb_sts_parse_credentials(resp.body, resp.body_len, result, out, &arn, err);
	if (rc) {
		gb_error_prefix(err, "STS %s %s", action, r->role_arn);
		goto out;
	}
	gb_log_secret_add(out->secret_access_key);
	gb_log_secret_add(out->session_token);
	gb_log_info("sts_credentials action=%s role=%s assumed=%s expires_in=%.0f",
		    action, r->role_arn, arn ? arn : "-",
		    out->expiration - gb_time_now());
out:
	free(arn);
	gb_http_response_free(&resp);
	if (body.data)
		gb_memzero(body.data, body.len);
	gb_buf_free(&body);
	gb_http_destroy(h);
	return rc;
}

gb_err_t gb_sts_assume_role(const struct gb_sts_opts *o,
			    const struct gb_creds_snapshot *base,
			    const struct gb_sts_role *r,
			    struct gb_creds_snapshot *out, gb_error_t *err)
{
	if (!base || !base->access_key_id || !base->secret_access_key)
		return gb_errorf(err, GB_E_AUTH, "STS AssumeRole %s: no source credentials",
				 r->role_arn ? r->role_arn : "-");
	return sts_call(o, "AssumeRole", base, r, NULL, out, err);
}

gb_err_t gb_sts_assume_role_web_identity(const struct gb_sts_opts *o,
					 const struct gb_sts_role *r,
					 const char *token,
					 struct gb_creds_snapshot *out,
					 gb_error_t *err)
{
	size_t n = token ? strlen(token) : 0;

	if (n < 4 || n > 20000)
		return gb_errorf(err, GB_E_CONFIG,
				 "STS AssumeRoleWithWebIdentity %s: the web identity token has %zu bytes (4-20000)",
				 r->role_arn ? r->role_arn : "-", n);
	gb_log_secret_add(token);
	return sts_call(o, "AssumeRoleWithWebIdentity", NULL, r, token, out, err);
}
