/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_creds.h - AWS credentials: explicit, environment, shared files, IMDSv2
 *
 * A gb_creds_t provider resolves credentials on first use and hands out
 * copies (snapshots).  The chain, first match wins (botocore's order):
 *
 *  1. explicit: gb_creds_opts.access_key_id + secret_access_key (+ token),
 *     i.e. gpuburst's own configuration;
 *  2. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, optional
 *     AWS_SESSION_TOKEN (or legacy AWS_SECURITY_TOKEN) and
 *     AWS_CREDENTIAL_EXPIRATION.  Skipped when a profile is named in the
 *     options (an explicit profile wins over the environment, as with
 *     `aws --profile`); AWS_PROFILE alone does not skip it;
 *  3. shared files, profile = opts.profile, else AWS_PROFILE, else
 *     AWS_DEFAULT_PROFILE, else "default": the credentials file
 *     (opts.credentials_file, else AWS_SHARED_CREDENTIALS_FILE, else
 *     ~/.aws/credentials; section [NAME]), then the config file
 *     (opts.config_file, else AWS_CONFIG_FILE, else ~/.aws/config; section
 *     [profile NAME], or [default]).  Keys aws_access_key_id,
 *     aws_secret_access_key, aws_session_token (aws_security_token).
 *     A missing file is skipped; a malformed one is an error
 *     "FILE:LINE: message"; a profile that was named (not "default") but
 *     exists in neither file is an error; so is a profile with only half
 *     the keys, or one that relies on role_arn/credential_process/sso_*
 *     (not supported).  Lines: "[section]", "key = value" (value verbatim
 *     after trimming: no inline comments, as botocore), full-line comments
 *     starting with '#' or ';', indented continuation lines (ignored).
 *     Duplicate sections or keys are errors (configparser's strict mode);
 *  4. EC2 instance metadata, IMDSv2 only: PUT /latest/api/token (TTL
 *     header), GET .../iam/security-credentials/ (role), GET .../<role>
 *     (JSON with AccessKeyId, SecretAccessKey, Token, Expiration).  The
 *     endpoint is opts.imds_endpoint, else AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *     else http://169.254.169.254; never through a proxy; 1 s timeouts by
 *     default; AWS_EC2_METADATA_DISABLED=true (or opts.no_imds) skips it.
 *     The session token is cached for its TTL; a 401 gets a new one once.
 *
 * Credentials with an expiry are refreshed (the whole chain is walked
 * again) once they are within refresh_window of expiring; when a refresh
 * fails while the old credentials are still valid, the old ones are used
 * (warning logged) and the refresh is retried at most once a minute.
 *
 * Secrets (secret key, session token, IMDS token) are registered with
 * gb_log_secret_add() when loaded and never logged; every copy the
 * provider owns, file contents and HTTP bodies included, is wiped with
 * gb_memzero() before it is freed.  (Copies made inside libcurl and
 * jansson while parsing are outside our reach.)  The provider is
 * thread-safe (one mutex).
 */
#ifndef GB_LIBCLOUD_GB_CREDS_H
#define GB_LIBCLOUD_GB_CREDS_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"

#define GB_CREDS_IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define GB_CREDS_IMDS_DEFAULT_TIMEOUT_MS 1000L
#define GB_CREDS_IMDS_TOKEN_TTL 21600L		/* seconds (6 h, the maximum) */
#define GB_CREDS_REFRESH_WINDOW 600.0		/* seconds before expiry */

enum gb_creds_source {
	GB_CREDS_SRC_NONE = 0,
	GB_CREDS_SRC_EXPLICIT,
	GB_CREDS_SRC_ENV,
	GB_CREDS_SRC_CREDENTIALS_FILE,
	GB_CREDS_SRC_CONFIG_FILE,
	GB_CREDS_SRC_IMDS,
};

struct gb_creds_opts {
	const char *access_key_id;	/* explicit credentials (both or neither) */
	const char *secret_access_key;
	const char *session_token;	/* optional */
	const char *profile;		/* explicit profile (skips the environment keys) */
	const char *credentials_file;	/* NULL: see above */
	const char *config_file;	/* NULL: see above */
	bool no_env;			/* skip step 2 */
	bool no_files;			/* skip step 3 */
	bool no_imds;			/* skip step 4 */
	const char *imds_endpoint;	/* NULL: see above */
	long imds_timeout_ms;		/* 0: GB_CREDS_IMDS_DEFAULT_TIMEOUT_MS */
	double refresh_window;		/* 0: GB_CREDS_REFRESH_WINDOW */
	/* Wall clock for expiry decisions; NULL: gb_time_now().  Tests. */
	double (*now)(void *ctx);
	void *now_ctx;
};

/*
 * One set of credentials.  Zero-initialise; gb_creds_snapshot_clear()
 * wipes and frees the strings.
 */
struct gb_creds_snapshot {
	char *access_key_id;		/* NEW */
	char *secret_access_key;	/* NEW */
	char *session_token;		/* NEW or NULL */
	double expiration;		/* epoch seconds; 0: does not expire */
	enum gb_creds_source source;
};

typedef struct gb_creds gb_creds_t;

/*
 * Create a provider; strings in [o] (may be NULL) are copied.  Nothing is
 * resolved yet.
 * OUT *out NEW, gb_creds_destroy().
 * RET GB_E_OK; GB_E_CONFIG for half-given explicit credentials or a bad
 * IMDS endpoint; GB_E_NOMEM.
 */
gb_err_t gb_creds_create(const struct gb_creds_opts *o, gb_creds_t **out,
			 gb_error_t *err);

/* Wipe every secret and free [c]; NULL is accepted. */
void gb_creds_destroy(gb_creds_t *c);

/*
 * Current credentials, resolved or refreshed as needed.
 * OUT [out] NEW copies (gb_creds_snapshot_clear(), also after failure).
 * RET GB_E_OK; GB_E_CONFIG (malformed file, unknown named profile,
 * partial keys); GB_E_AUTH when no source has credentials (the detail
 * names what was tried) or IMDS answered with an error; GB_E_NOMEM.
 */
gb_err_t gb_creds_get(gb_creds_t *c, struct gb_creds_snapshot *out,
		      gb_error_t *err);

/*
 * Forget the cached credentials (after an AuthFailure): the next
 * gb_creds_get() resolves again.
 */
void gb_creds_invalidate(gb_creds_t *c);

/*
 * RET NEW copy of the "region" of the selected profile in the config file
 * as seen by the last resolution through the files, or NULL (free()).
 */
char *gb_creds_region(gb_creds_t *c);

void gb_creds_snapshot_clear(struct gb_creds_snapshot *s);

/* RET static name: "explicit", "env", "credentials-file", ... */
const char *gb_creds_source_name(enum gb_creds_source s);

#endif /* GB_LIBCLOUD_GB_CREDS_H */
