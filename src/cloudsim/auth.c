/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * auth.c - SigV4 verification of EC2 requests against the scenario's keys
 *
 * The signature is recomputed by libcloud's verifier (the same code the
 * client signs with; the AWS CLI cross-checks both).  Errors are EC2's:
 * no Authorization -> MissingAuthenticationToken, unparsable ->
 * IncompleteSignature, unknown key or region -> AuthFailure, X-Amz-Date
 * more than 15 minutes off -> RequestExpired, wrong signature ->
 * SignatureDoesNotMatch.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_sigv4.h"

#define AUTH_FAILURE "AWS was not able to validate the provided access credentials"

static const struct gb_sc_cred *find_cred(const struct gb_scenario *sc,
					  const char *akid)
{
	for (size_t i = 0; i < sc->ncreds; i++) {
		if (strcmp(sc->creds[i].access_key_id, akid) == 0)
			return &sc->creds[i];
	}
	return NULL;
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
			const struct gb_sigv4_auth *a, struct gb_sim_error *e)
{
	const char *date = gb_cs_header_get(req, "X-Amz-Date");
	double t = date ? amz_time(date) : -1, now = cs->wall();

	if (strcmp(a->service, "ec2") != 0) {
		gb_sim_error_set(e, 403, "SignatureDoesNotMatch",
				 "Credential should be scoped to correct service: 'ec2'.");
		return false;
	}
	if (!gb_sim_has_region(cs->sim, a->region) || !find_cred(cs->sc, a->access_key_id)) {
		gb_sim_error_set(e, 401, "AuthFailure", AUTH_FAILURE);
		return false;
	}
	if (t < 0) {
		gb_sim_error_set(e, 400, "IncompleteSignature",
				 "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
		return false;
	}
	if (t < now - GB_CS_MAX_SKEW || t > now + GB_CS_MAX_SKEW) {
		gb_sim_error_set(e, 400, "RequestExpired", "Request has expired.");
		return false;
	}
	return true;
}

static bool verify(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		   const struct gb_sigv4_auth *a, struct gb_sim_error *e)
{
	const struct gb_sc_cred *cr = find_cred(cs->sc, a->access_key_id);
	struct gb_sigv4_creds creds = { cr->access_key_id, cr->secret_access_key, NULL };
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
			char *region, struct gb_sim_error *e)
{
	const char *value = gb_cs_header_get(req, "Authorization");
	struct gb_sigv4_auth a;
	gb_error_t err;
	bool ok = false;

	memset(&a, 0, sizeof(a));
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
	ok = check_scope(cs, req, &a, e) && verify(cs, req, &a, e);
out:
	gb_sigv4_auth_free(&a);
	return ok;
}
