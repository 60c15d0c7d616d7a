/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_creds.h - AWS credentials: gpuburst's own settings, environment,
 * shared files, credential_process, STS roles, IMDSv2
 *
 * A gb_creds_t provider resolves credentials on first use and hands out
 * copies (snapshots).  The chain, first match wins (the AWS CLI's order,
 * with gpuburst's configuration first):
 *
 *  1. gpuburst's own source, at most one of:
 *     - explicit keys: opts.access_key_id + secret_access_key (+ token);
 *     - a role: opts.role_arn with opts.source_profile (a profile of the
 *       shared files, resolved as in 3), opts.credential_source
 *       ("Environment": the variables of 2; "Ec2InstanceMetadata": 4) or
 *       opts.web_identity_token_file; external_id, role_session_name
 *       (default "gpuburst-<epoch>") and duration_seconds go with it;
 *     - opts.credential_process: an argv (see below);
 *     When one is configured and fails, that is the error: the chain does
 *     not fall through to another identity;
 *  2. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, optional
 *     AWS_SESSION_TOKEN (or legacy AWS_SECURITY_TOKEN) and
 *     AWS_CREDENTIAL_EXPIRATION.  Skipped when a profile is named in the
 *     options (an explicit profile wins over the environment, as with
 *     `aws --profile`); AWS_PROFILE alone does not skip it;
 *  3. shared files, profile = opts.profile, else AWS_PROFILE, else
 *     AWS_DEFAULT_PROFILE, else "default": the credentials file
 *     (opts.credentials_file, else AWS_SHARED_CREDENTIALS_FILE, else
 *     ~/.aws/credentials; section [NAME]) and the config file
 *     (opts.config_file, else AWS_CONFIG_FILE, else ~/.aws/config; section
 *     [profile NAME], or [default]), a setting in the credentials file
 *     winning over the same one in the config file.  A profile resolves,
 *     in botocore's order, to: a role (role_arn with source_profile or
 *     credential_source: STS AssumeRole signed by the source's
 *     credentials, which may themselves be a role, up to 8 hops, loops
 *     refused; a profile naming itself uses its own keys), a role by web
 *     identity (role_arn + web_identity_token_file: STS
 *     AssumeRoleWithWebIdentity with the file's token, read again at every
 *     refresh), the credentials file's keys, credential_process, the
 *     config file's keys.  mfa_serial and sso_* need a person and are
 *     errors; so is half a key pair.  A missing file is skipped; a
 *     malformed one is an error "FILE:LINE: message"; a profile that was
 *     named (not "default") but exists in neither file is an error.
 *     Lines: "[section]", "key = value" (value verbatim after trimming: no
 *     inline comments, as botocore), full-line comments starting with '#'
 *     or ';', indented continuation lines (ignored).  Duplicate sections
 *     or keys are errors (configparser's strict mode);
 *  4. EC2 instance metadata, IMDSv2 only: PUT /latest/api/token (TTL
 *     header), GET .../iam/security-credentials/ (role), GET .../<role>
 *     (JSON with AccessKeyId, SecretAccessKey, Token, Expiration).  The
 *     endpoint is opts.imds_endpoint, else AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *     else http://169.254.169.254; never through a proxy; 1 s timeouts by
 *     default; AWS_EC2_METADATA_DISABLED=true (or opts.no_imds) skips it.
 *     The session token is cached for its TTL; a 401 gets a new one once.
 *
 * credential_process (opts.credential_process as an argv, or a profile's
 * credential_process line split like a shell would, without expanding
 * anything): argv[0] must be an absolute path; it runs without a shell,
 * with PATH (and HOME when set) as its environment, for at most
 * opts.process_timeout seconds (default GB_CREDS_PROCESS_TIMEOUT), then
 * its process group is killed.  Its stderr is logged line by line
 * ("credential_process_stderr"); its stdout (at most 64 KiB, never logged)
 * must be the JSON object of the AWS CLI's contract: "Version": 1,
 * "AccessKeyId", "SecretAccessKey", optional "SessionToken" and
 * "Expiration" (ISO-8601; absent: the keys do not expire; already past:
 * an error).  A non-zero exit is an error naming the program.
 *
 * STS: opts.sts_endpoint, else (unless opts.sts_needs_endpoint, which makes
 * its absence an error) the regional endpoint https://sts.REGION.<the
 * partition's DNS suffix>, REGION being opts.sts_region, else the
 * profile's region, else us-east-1; signed for that region; HTTP options
 * (timeouts, CA bundle, proxy) from opts.http.  See gb_sts.h.
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
#include "gb_http.h"

#define GB_CREDS_IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define GB_CREDS_IMDS_DEFAULT_TIMEOUT_MS 1000L
#define GB_CREDS_IMDS_TOKEN_TTL 21600L		/* seconds (6 h, the maximum) */
#define GB_CREDS_REFRESH_WINDOW 600.0		/* seconds before expiry */
#define GB_CREDS_PROCESS_TIMEOUT 30.0		/* seconds */

enum gb_creds_source {
	GB_CREDS_SRC_NONE = 0,
	GB_CREDS_SRC_EXPLICIT,
	GB_CREDS_SRC_ENV,
	GB_CREDS_SRC_CREDENTIALS_FILE,
	GB_CREDS_SRC_CONFIG_FILE,
	GB_CREDS_SRC_IMDS,
	GB_CREDS_SRC_PROCESS,
	GB_CREDS_SRC_ASSUME_ROLE,
	GB_CREDS_SRC_WEB_IDENTITY,
};

struct gb_creds_opts {
	const char *access_key_id;	/* explicit credentials (both or neither) */
	const char *secret_access_key;
	const char *session_token;	/* optional */
	/* a role (see above; role_arn needs one of the three sources) */
	const char *role_arn;
	const char *source_profile;
	const char *credential_source;	/* "Environment", "Ec2InstanceMetadata" */
	const char *web_identity_token_file;
	const char *external_id;
	const char *role_session_name;	/* NULL: "gpuburst-<epoch>" */
	long duration_seconds;		/* 0: STS's default (3600) */
	char *const *credential_process;	/* argv, NULL-terminated, or NULL */
	double process_timeout;		/* 0: GB_CREDS_PROCESS_TIMEOUT */
	const char *sts_endpoint;	/* NULL: regional (see above) */
	const char *sts_region;		/* NULL: profile's, else us-east-1 */
	bool sts_needs_endpoint;	/* no default STS endpoint */
	struct gb_http_opts http;	/* for STS (strings copied) */
	const char *profile;		/* explicit profile (skips the environment keys) */
	const char *credentials_file;	/* NULL: see above */
	const char *config_file;	/* NULL: see above */
	bool no_env;			/* skip step 2 */
	bool no_files;			/* skip step 3 */
	bool no_imds;			/* skip step 4 */
	const char *imds_endpoint;	/* NULL: see above */
	long imds_timeout_ms;		/* 0: GB_CREDS_IMDS_DEFAULT_TIMEOUT_MS */
	const char *imds_local_address;	/* connect to the IMDS from this
					 * address (gb_http_opts.local_address);
					 * NULL: the kernel's choice */
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
 * RET GB_E_OK; GB_E_CONFIG for half-given explicit credentials, more than
 * one own source, a role without exactly one source, role settings
 * without a role, a credential_process that is not an absolute path, or a
 * bad IMDS endpoint; GB_E_NOMEM.
 */
gb_err_t gb_creds_create(const struct gb_creds_opts *o, gb_creds_t **out,
			 gb_error_t *err);

/* Wipe every secret and free [c]; NULL is accepted. */
void gb_creds_destroy(gb_creds_t *c);

/*
 * Current credentials, resolved or refreshed as needed.
 * OUT [out] NEW copies (gb_creds_snapshot_clear(), also after failure).
 * RET GB_E_OK; GB_E_CONFIG (malformed file, unknown named profile,
 * partial keys, an unusable role or credential_process setting);
 * GB_E_AUTH when no source has credentials (the detail names what was
 * tried), IMDS answered with an error, STS refused (its code and message)
 * or credential_process failed; GB_E_HTTP / GB_E_TIMEOUT when STS could
 * not be reached, GB_E_TIMEOUT when credential_process was killed;
 * GB_E_NOMEM.
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

/*
 * RET NEW one line saying what the last successful resolution used,
 * without secrets: "credentials-file", "assume-role ARN <- profile base
 * credentials-file", "credential-process", "web-identity ARN (token
 * PATH)"; "" before any (free()).
 */
char *gb_creds_describe(gb_creds_t *c);

void gb_creds_snapshot_clear(struct gb_creds_snapshot *s);

/* RET static name: "explicit", "env", "credentials-file", ... */
const char *gb_creds_source_name(enum gb_creds_source s);

#endif /* GB_LIBCLOUD_GB_CREDS_H */
