/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_sts.h - AWS STS AssumeRole and AssumeRoleWithWebIdentity (Query API,
 * Version 2011-06-15), for role credentials
 *
 * Requests are "POST /" to the STS endpoint (the regional one,
 * https://sts.REGION.amazonaws.com, unless configured otherwise) with an
 * application/x-www-form-urlencoded body.  AssumeRole is signed with SigV4
 * (service "sts", the given signing region) by the source credentials;
 * AssumeRoleWithWebIdentity is not signed (the token is the proof).  The
 * answer's <Credentials> become a gb_creds_snapshot with the session
 * token and the Expiration STS gave.
 *
 * Retries: transport failures that may heal, HTTP 5xx and the Throttling
 * code are retried up to GB_STS_ATTEMPTS times with a short back-off
 * (requests are idempotent: they only mint credentials).  Anything else
 * (AccessDenied, ValidationError, InvalidIdentityToken, ExpiredToken ...)
 * is GB_E_AUTH at once, its text "STS ACTION ROLE: CODE: MESSAGE (HTTP n,
 * RequestId r)".  The secret key, session token and web identity token are
 * registered with gb_log_secret_add() and wiped from every buffer this
 * module owns.
 */
#ifndef GB_LIBCLOUD_GB_STS_H
#define GB_LIBCLOUD_GB_STS_H

#include <stdbool.h>

#include "gb_creds.h"
#include "gb_err.h"
#include "gb_http.h"

#define GB_STS_API_VERSION "2011-06-15"
#define GB_STS_SERVICE "sts"
#define GB_STS_ATTEMPTS 3
#define GB_STS_MIN_DURATION 900L	/* seconds, STS's limits */
#define GB_STS_MAX_DURATION 43200L

struct gb_sts_opts {
	const char *endpoint;		/* "https://sts.us-east-1.amazonaws.com" */
	const char *region;		/* signing region */
	struct gb_http_opts http;
	/* Tests: the back-off between attempts; NULL: nanosleep. */
	void (*sleep)(double seconds, void *ctx);
	void *sleep_ctx;
};

struct gb_sts_role {
	const char *role_arn;		/* required */
	const char *session_name;	/* required, 2-64 of [\w+=,.@-] */
	const char *external_id;	/* NULL: none */
	long duration_seconds;		/* 0: STS's default (3600) */
};

/*
 * AssumeRole [r] with [base] credentials.
 * OUT [out] NEW (gb_creds_snapshot_clear(), also after failure), source
 * left as the caller sets it.
 * RET GB_E_OK; GB_E_AUTH (STS refused; text as above); GB_E_HTTP /
 * GB_E_TIMEOUT (unreachable after the retries); GB_E_PARSE (an answer
 * that is not STS's); GB_E_CONFIG (bad endpoint or parameters);
 * GB_E_NOMEM.
 */
gb_err_t gb_sts_assume_role(const struct gb_sts_opts *o,
			    const struct gb_creds_snapshot *base,
			    const struct gb_sts_role *r,
			    struct gb_creds_snapshot *out, gb_error_t *err);

/* AssumeRoleWithWebIdentity [r] with [token] (a JWT).  As above. */
gb_err_t gb_sts_assume_role_web_identity(const struct gb_sts_opts *o,
					 const struct gb_sts_role *r,
					 const char *token,
					 struct gb_creds_snapshot *out,
					 gb_error_t *err);

/* RET whether [s] is a valid RoleSessionName (2-64 of [\w+=,.@-]). */
bool gb_sts_session_name_ok(const char *s);

/*
 * Read the <Credentials> of an AssumeRole / AssumeRoleWithWebIdentity
 * answer ([result]: "AssumeRoleResult" or "AssumeRoleWithWebIdentityResult").
 * Used by gb_sts.c, exposed for the parser tests.
 * IN [out] empty (zeroed or cleared).
 * OUT [out] NEW strings and expiration, set only on GB_E_OK; *assumed_arn
 * NEW or NULL ([assumed_arn] may be NULL itself).
 * RET GB_E_OK; GB_E_PARSE naming what is missing or malformed; GB_E_NOMEM.
 */
gb_err_t gb_sts_parse_credentials(const char *body, size_t len,
				  const char *result,
				  struct gb_creds_snapshot *out,
				  char **assumed_arn, gb_error_t *err);

#endif /* GB_LIBCLOUD_GB_STS_H */
