/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_imds.h - an IMDSv2 client for a program running on the instance
 *
 * EC2's instance metadata service, version 2 only: PUT /latest/api/token
 * (header X-aws-ec2-metadata-token-ttl-seconds) gives a session token that
 * every GET carries (X-aws-ec2-metadata-token).  The token is cached for
 * its TTL less a minute; a 401 gets a new token once.  The client never
 * uses a proxy, connects from gb_imds_opts.local_address when set (the
 * simulator tells instances apart by it) and registers the token with
 * gb_log_secret_add().  Not thread-safe (one gb_http_t).
 */
#ifndef GB_LIBCLOUD_GB_IMDS_H
#define GB_LIBCLOUD_GB_IMDS_H

#include <stddef.h>

#include "gb_err.h"

#define GB_IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define GB_IMDS_TOKEN_TTL 21600L	/* seconds, EC2's maximum */
#define GB_IMDS_MAX_BYTES (64u << 10)	/* an answer; user data is at most 16 KiB */

struct gb_imds_opts {
	const char *endpoint;		/* NULL: GB_IMDS_DEFAULT_ENDPOINT */
	const char *local_address;	/* IP literal, or NULL */
	long timeout_ms;		/* per request; 0: 1000 */
	long token_ttl;			/* seconds; 0: GB_IMDS_TOKEN_TTL */
	size_t max_bytes;		/* answer cap; 0: GB_IMDS_MAX_BYTES */
};

typedef struct gb_imds gb_imds_t;

/*
 * Create a client; strings of [o] are copied; nothing is sent.
 * OUT *out NEW, gb_imds_destroy().
 * RET GB_E_OK, GB_E_INVALID (bad endpoint or local address), GB_E_NOMEM.
 */
gb_err_t gb_imds_create(const struct gb_imds_opts *o, gb_imds_t **out,
			gb_error_t *err);

/* Wipe the token and free [m]; NULL is accepted. */
void gb_imds_destroy(gb_imds_t *m);

/*
 * GET /latest/[path] ("meta-data/instance-id", "user-data") with the
 * token.  OUT *body NEW (free()), NUL-terminated, *len its length
 * ([len] may be NULL); NULL when the call fails.
 * RET GB_E_OK (HTTP 200); GB_E_NOTFOUND (404: EC2's answer for "no such
 * item", e.g. no spot notice, no user data, tags not exposed);
 * GB_E_AUTH (the token was refused, or 401 twice); GB_E_CLOUD (another
 * status, named in [err]); GB_E_TIMEOUT / GB_E_HTTP (no answer);
 * GB_E_NOMEM.  The text of [err] starts with "IMDS PATH: ".
 */
gb_err_t gb_imds_get(gb_imds_t *m, const char *path, char **body, size_t *len,
		     gb_error_t *err);

/* Forget the token: the next gb_imds_get() asks for a new one. */
void gb_imds_reset_token(gb_imds_t *m);

#endif /* GB_LIBCLOUD_GB_IMDS_H */
