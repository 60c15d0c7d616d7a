/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.c - SigV4 verification of EC2 and STS requests against the
 * scenario's keys and the sessions STS issued
 *
 * The signature is recomputed by libcloud's verifier (the same code the
 * client signs with; the AWS CLI cross-checks both).  Errors are the
 * service's: no Authorization -> MissingAuthenticationToken, unparsable ->
 * IncompleteSignature, another service's scope -> SignatureDoesNotMatch,
 * unknown key or region, or a session token missing or not the key's ->
 * AuthFailure (EC2) / InvalidClientTokenId (STS), X-Amz-Date more than 15
 * minutes off -> RequestExpired, an expired session -> RequestExpired
 * (EC2) / ExpiredToken (STS), wrong signature -> SignatureDoesNotMatch.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_sigv4.h"
#include "gb_str.h"

#define AUTH_FAILURE "AWS was not able to validate the provided access credentials"
#define STS_INVALID_TOKEN "The security token included in the request is invalid."
#define STS_EXPIRED_TOKEN "The security token included in the request is expired"

static bool is_sts(const char *service)
{
	return strcmp(service, "sts") == 0;
}

/* An unknown key, or a session token that is missing or not the key's. */
static bool unknown_key(const char *service, struct gb_sim_error *e)
{
	if (is_sts(service))
		gb_sim_error_set(e, 403, "InvalidClientTokenId", STS_INVALID_TOKEN);
	else
		gb_sim_error_set(e, 401, "AuthFailure", AUTH_FAILURE);
	return false;
}

/*
 * The key [akid]: one of the scenario's long-term keys, or a session STS
 * issued (copied under the lock).  RET false when it is neither.
 */
static bool find_key(struct gb_cloudsim *cs, const char *akid,
		     struct gb_cs_principal *who)
{
	for (size_t i = 0; i < cs->sc->ncreds; i++) {
		if (strcmp(cs->sc->creds[i].access_key_id, akid) == 0) {
			gb_strlcpy(who->secret, cs->sc->creds[i].secret_access_key,
				   sizeof(who->secret));
			return true;
		}
	}
	return gb_cs_sts_session(cs, akid, who);
}

/* "20150830T123600Z" -> epoch seconds. */
static double amz_time(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!gb_sigv4_amz_date_valid(s) || !strptime(s, "%Y%m%dT%H%M%SZ", &tm))
		return -1;
	return (double)timegm(&tm);
}

/* The received headers named in SignedHeaders, in received order. */
static struct gb_sigv4_header *signed_headers(const struct gb_cs_request *req,
					      const struct gb_sigv4_auth *a,
					      size_t *n)
{
	struct gb_sigv4_header *h = calloc(req->nheaders + 1, sizeof(*h));

	*n = 0;
	for (size_t i = 0; h && i < req->nheaders; i++) {
		for (size_t k = 0; k < a->signed_headers.n; k++) {
			if (strcasecmp(req->headers[i].name, a->signed_headers.v[k]) == 0) {
				h[*n].name = req->headers[i].name;
				h[(*n)++].value = req->headers[i].value;
				break;
			}
		}
	}
	return h;
}

static bool check_scope(struct gb_cloudsim *cs, const struct gb_cs_request *req,
			const struct gb_sigv4_auth *a, const char *service,
			struct gb_cs_principal *who, struct gb_sim_error *e)
{
	const char *date = gb_cs_header_get(req, "X-Amz-Date");
	const char *token = gb_cs_header_get(req, "X-Amz-Security-Token");
	double t = date ? amz_time(date) : -1, now = cs->wall();
	bool region_ok = gb_sim_has_region(cs->sim, a->region) ||
			 (is_sts(service) && strcmp(a->region, GB_CS_STS_GLOBAL_REGION) == 0);

	if (strcmp(a->service, service) != 0) {
		gb_sim_error_set(e, 403, "SignatureDoesNotMatch",
				 "Credential should be scoped to correct service: '%s'.", service);
		return false;
	}
	if (!region_ok || !find_key(cs, a->access_key_id, who))
		return unknown_key(service, e);
	/* a session's token must come with it; a long-term key has none */
	if (who->session ? !token || strcmp(token, who->token) != 0 : token != NULL)
		return unknown_key(service, e);
	if (t < 0) {
		gb_sim_error_set(e, 400, "IncompleteSignature",
				 "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
		return false;
	}
	if (t < now - GB_CS_MAX_SKEW || t > now + GB_CS_MAX_SKEW) {
		gb_sim_error_set(e, 400, "RequestExpired", "Request has expired.");
		return false;
	}
	if (who->session && gb_cs_sts_now(cs) >= who->expiration) {
		if (is_sts(service))
			gb_sim_error_set(e, 400, "ExpiredToken", STS_EXPIRED_TOKEN);
		else
			gb_sim_error_set(e, 400, "RequestExpired", "Request has expired.");
		return false;
	}
	return true;
}

static bool verify(const struct gb_cs_request *req, const struct gb_sigv4_auth *a,
		   const struct gb_cs_principal *who, struct gb_sim_error *e)
{
	struct gb_sigv4_creds creds = { a->access_key_id, who->secret,
					who->session ? who->token : NULL };
	struct gb_sigv4_request r = { 0 };
	struct gb_sigv4_result res;
	gb_error_t err;
	gb_err_t rc;

	r.method = req->method;
	r.path = req->path;
	r.query = req->query;
	r.headers = signed_headers(req, a, &r.n_headers);
	r.payload = req->body;
	r.payload_len = req->body_len;
	if (!r.headers) {
		gb_sim_error_set(e, 500, "InternalError", "An internal error has occurred");
		return false;
	}
	memset(&res, 0, sizeof(res));
	rc = gb_sigv4_verify(&r, a, &creds, &res, &err);
	free((void *)r.headers);
	if (rc == GB_E_OK) {
		gb_sigv4_result_free(&res);
		return true;
	}
	gb_log_info("auth failed akid=%s reason=%s", a->access_key_id,
		    rc == GB_E_AUTH ? "signature" : gb_err_name(rc));
	/* the canonical request holds no secret (a session token, if any,
	 * was signed as a header and is useless without the key) */
	gb_log_debug("auth detail: %s; canonical request: %s", err.text,
		     res.canonical_request ? res.canonical_request : "-");
	gb_sigv4_result_free(&res);
	if (rc == GB_E_AUTH || rc == GB_E_INVALID)
		gb_sim_error_set(e, 403, "SignatureDoesNotMatch",
				 "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
	else
		gb_sim_error_set(e, 500, "InternalError", "An internal error has occurred");
	return false;
}

bool gb_cs_authenticate(struct gb_cloudsim *cs, const struct gb_cs_request *req,
			const char *service, char *region, struct gb_cs_principal *who,
			struct gb_sim_error *e)
{
	const char *value = gb_cs_header_get(req, "Authorization");
	struct gb_sigv4_auth a;
	gb_error_t err;
	bool ok = false;

	memset(&a, 0, sizeof(a));
	memset(who, 0, sizeof(*who));
	region[0] = '\0';
	if (!value) {
		gb_sim_error_set(e, 403, "MissingAuthenticationToken",
				 "Request is missing Authentication Token");
		return false;
	}
	if (gb_sigv4_auth_parse(value, &a, &err) != GB_E_OK) {
		gb_sim_error_set(e, 400, "IncompleteSignature", "%s", err.text);
		goto out;
	}
	gb_strlcpy(region, a.region, GB_SIGV4_FIELD_MAX);
	gb_strlcpy(who->access_key_id, a.access_key_id, sizeof(who->access_key_id));
	ok = check_scope(cs, req, &a, service, who, e) && verify(req, &a, who, e);
	if (ok && who->session)
		gb_cs_sts_session_used(cs, who->access_key_id);
out:
	gb_sigv4_auth_free(&a);
	gb_memzero(who->secret, sizeof(who->secret));
	return ok;
}
