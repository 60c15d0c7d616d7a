/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_sigv4.h - AWS Signature Version 4 (Authorization header), signing and
 * verification
 *
 * One implementation serves the client (EC2 Query API, Bedrock REST) and the
 * simulator, which recomputes the signature of a request it received.  The
 * rules are those of the AWS SigV4 test suite (tests/data/sigv4, all 34
 * cases reproduced by test_sigv4) and of botocore's SigV4Auth:
 *
 *  - header names are lower-cased; values are trimmed and every run of
 *    blanks (SP, HT, CR, LF: obs-fold continuation lines included) becomes
 *    one space; repeated headers are joined with ',' in the order given;
 *    the canonical headers are sorted by name.  Every header passed in is
 *    signed: pass exactly the headers to sign (Host is required).
 *  - the path is the raw path as sent on the wire.  Dot segments and
 *    repeated slashes are removed, then every byte other than
 *    A-Z a-z 0-9 - _ . ~ and '/' is percent-encoded (upper-case hex).  An
 *    already-encoded path is therefore encoded again: a Bedrock model id
 *    "a:b" sent as "/model/a%3Ab/converse" is signed as ".../a%253Ab/..."
 *    exactly as botocore does.  GB_SIGV4_S3_PATH uses the path verbatim.
 *  - the query is split on '&' and the first '=', each key and value is
 *    percent-decoded (%XX only; '+' is a literal plus) and re-encoded with
 *    the unreserved set, and the pairs are sorted by key, then value.  So
 *    "ሴ=bar" and "%E1%88%B4=bar" sign alike.  A key without '=' gets "=".
 *  - the payload is hashed as is (form bodies are NOT moved to the query).
 *
 * Request time: if an X-Amz-Date header is among the headers, its value
 * (YYYYMMDDTHHMMSSZ) is the signing time; otherwise [when] is used and an
 * x-amz-date header is added to the signed headers, and the caller must
 * send "X-Amz-Date: <result.amz_date>".  Session token: when
 * creds->session_token is set and no X-Amz-Security-Token header is given,
 * one is added to the signed headers (or, with GB_SIGV4_TOKEN_UNSIGNED,
 * left out of the signature), and the caller must send it.
 *
 * Nothing here logs, and nothing returned contains the secret key; the
 * canonical request may contain the session token: never log it.
 * All functions are thread-safe.
 */
#ifndef GB_LIBCLOUD_GB_SIGV4_H
#define GB_LIBCLOUD_GB_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_SIGV4_ALGORITHM "AWS4-HMAC-SHA256"
#define GB_SIGV4_AMZ_DATE_LEN 16	/* "20150830T123600Z" */
#define GB_SIGV4_SIG_HEX_LEN 64
#define GB_SIGV4_FIELD_MAX 128		/* access key, region, service */
#define GB_SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

struct gb_sigv4_header {
	const char *name;	/* any case; leading/trailing blanks ignored */
	const char *value;	/* raw value; NULL is taken as "" */
};

struct gb_sigv4_creds {
	const char *access_key_id;
	const char *secret_access_key;
	const char *session_token;	/* NULL or "": none */
};

enum gb_sigv4_flag {
	/* Send X-Amz-Security-Token after signing: not in SignedHeaders. */
	GB_SIGV4_TOKEN_UNSIGNED = 1u << 0,
	/* S3 rules: the path is used verbatim (no normalization, no encoding). */
	GB_SIGV4_S3_PATH = 1u << 1,
};

struct gb_sigv4_request {
	const char *method;		/* "GET", "POST", ... (as sent) */
	const char *path;		/* raw path, no query; NULL/"" = "/" */
	const char *query;		/* raw query after '?'; NULL/"" = none */
	const struct gb_sigv4_header *headers;	/* the headers to sign */
	size_t n_headers;
	const void *payload;		/* body (NULL when payload_len is 0) */
	size_t payload_len;
	/*
	 * Lower-case hex SHA-256 of the body, or GB_SIGV4_UNSIGNED_PAYLOAD;
	 * when set, [payload] is ignored (e.g. a verifier that received
	 * x-amz-content-sha256, or a caller that hashed a stream).
	 */
	const char *payload_hash;
	unsigned flags;			/* enum gb_sigv4_flag bits */
};

/*
 * What a signature produced.  Zero-initialise; gb_sigv4_result_free()
 * releases the NEW strings and zeroes the struct.
 */
struct gb_sigv4_result {
	char amz_date[GB_SIGV4_AMZ_DATE_LEN + 1];	/* signing time */
	char signature[GB_SIGV4_SIG_HEX_LEN + 1];	/* lower-case hex */
	char *canonical_request;	/* NEW */
	char *string_to_sign;		/* NEW */
	char *signed_headers;		/* NEW, "host;x-amz-date" */
	char *authorization;		/* NEW, the Authorization header value */
	bool need_amz_date_header;	/* send "X-Amz-Date: <amz_date>" */
	bool need_token_header;		/* send "X-Amz-Security-Token: <token>" */
};

/*
 * Sign [req] for [region] and [service] with [creds] at [when] (UTC epoch
 * seconds; ignored when an X-Amz-Date header is given, see above).
 * OUT [out] filled (free with gb_sigv4_result_free(), also after failure).
 * RET GB_E_OK; GB_E_INVALID for unusable input (no Host header, empty key,
 * bad X-Amz-Date, a header name with blanks...); GB_E_NOMEM; GB_E_CRYPTO.
 */
gb_err_t gb_sigv4_sign(const struct gb_sigv4_request *req,
		       const struct gb_sigv4_creds *creds, const char *region,
		       const char *service, time_t when,
		       struct gb_sigv4_result *out, gb_error_t *err);

void gb_sigv4_result_free(struct gb_sigv4_result *r);

/*
 * A parsed Authorization header:
 * "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/ec2/aws4_request,
 *  SignedHeaders=host;x-amz-date, Signature=<64 hex>".
 * Zero-initialise; gb_sigv4_auth_free() releases [signed_headers].
 */
struct gb_sigv4_auth {
	char access_key_id[GB_SIGV4_FIELD_MAX];
	char date[9];				/* YYYYMMDD of the scope */
	char region[GB_SIGV4_FIELD_MAX];
	char service[GB_SIGV4_FIELD_MAX];
	char signature[GB_SIGV4_SIG_HEX_LEN + 1];
	struct gb_strv signed_headers;		/* NEW, lower-case, in order */
};

/*
 * Parse an Authorization header value.  Components may come in any order,
 * separated by ',' and optional blanks; all three are required.
 * RET GB_E_OK, or GB_E_PARSE with a message naming the faulty part.
 */
gb_err_t gb_sigv4_auth_parse(const char *value, struct gb_sigv4_auth *out,
			     gb_error_t *err);

void gb_sigv4_auth_free(struct gb_sigv4_auth *a);

/*
 * Verify a received request.  [req]->headers must hold the received
 * headers named in [auth]->signed_headers (X-Amz-Date among them), with
 * their received values; [creds] are those of auth->access_key_id (its
 * session_token is ignored: a signed token is one of the headers).
 * The signature is recomputed with auth's region, service and scope date
 * and compared in constant time.
 * OUT [out] (may be NULL) the recomputed canonical request etc.
 * RET GB_E_OK when it matches; GB_E_AUTH with detail when it does not (or
 * when the signed header names, the access key or the scope date disagree
 * with the request); other codes as gb_sigv4_sign().
 */
gb_err_t gb_sigv4_verify(const struct gb_sigv4_request *req,
			 const struct gb_sigv4_auth *auth,
			 const struct gb_sigv4_creds *creds,
			 struct gb_sigv4_result *out, gb_error_t *err);

/*
 * Append [n] bytes at [p] to [b], percent-encoding every byte other than
 * A-Z a-z 0-9 - _ . ~ (and '/' when [keep_slash]) as %XX, upper-case.
 * This is also the form encoding of the EC2 Query API bodies.
 */
void gb_sigv4_uri_encode(struct gb_buf *b, const void *p, size_t n,
			 bool keep_slash);

/*
 * Append "key=value" to a Query API form body, with '&' first unless [b] is
 * empty; [value] URI-encoded as it is signed (EC2, STS).
 */
void gb_sigv4_form_put(struct gb_buf *b, const char *key, const char *value);

/* RET whether [s] is a valid X-Amz-Date value (YYYYMMDDTHHMMSSZ). */
bool gb_sigv4_amz_date_valid(const char *s);

/*
 * Format [when] (UTC epoch seconds) as an X-Amz-Date value into [buf].
 * RET [buf].
 */
char *gb_sigv4_amz_date(time_t when, char buf[GB_SIGV4_AMZ_DATE_LEN + 1]);

#endif /* GB_LIBCLOUD_GB_SIGV4_H */
