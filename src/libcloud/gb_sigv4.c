/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_sigv4.c - AWS Signature Version 4: canonical request, string to sign,
 * signing key, Authorization header; parsing and verification
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gb_crypto.h"
#include "gb_sigv4.h"

#define SCOPE_TERMINATOR "aws4_request"

/* One canonical header: lower-case name, values joined with ','. */
struct cheader {
	char *name;
	struct gb_buf value;
};

struct cheaders {
	struct cheader *v;
	size_t n;
};

/* A decoded-then-encoded query parameter. */
struct qparam {
	char *key;
	char *value;
};

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	       c == '~';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* RFC 7230 token characters: what a header name or method may contain. */
static bool is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_token(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_tchar((unsigned char)s[i]))
			return false;
	}
	return true;
}

void gb_sigv4_uri_encode(struct gb_buf *b, const void *p, size_t n,
			 bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		if (is_unreserved(s[i]) || (keep_slash && s[i] == '/')) {
			gb_buf_putc(b, (char)s[i]);
		} else {
			char e[3] = { '%', hex[s[i] >> 4], hex[s[i] & 0xf] };

			gb_buf_append(b, e, sizeof(e));
		}
	}
}

void gb_sigv4_form_put(struct gb_buf *b, const char *key, const char *value)
{
	if (b->len)
		gb_buf_putc(b, '&');
	gb_buf_puts(b, key);
	gb_buf_putc(b, '=');
	gb_sigv4_uri_encode(b, value, strlen(value), false);
}

bool gb_sigv4_amz_date_valid(const char *s)
{
	static const char shape[] = "ddddddddTddddddZ";

	if (!s || strlen(s) != GB_SIGV4_AMZ_DATE_LEN)
		return false;
	for (size_t i = 0; i < GB_SIGV4_AMZ_DATE_LEN; i++) {
		if (shape[i] == 'd' ? !isdigit((unsigned char)s[i])
				    : s[i] != shape[i])
			return false;
	}
	return true;
}

char *gb_sigv4_amz_date(time_t when, char buf[GB_SIGV4_AMZ_DATE_LEN + 1])
{
	struct tm tm;

	if (!gmtime_r(&when, &tm) ||
	    strftime(buf, GB_SIGV4_AMZ_DATE_LEN + 1, "%Y%m%dT%H%M%SZ", &tm) !=
		    GB_SIGV4_AMZ_DATE_LEN)
		gb_strlcpy(buf, "19700101T000000Z", GB_SIGV4_AMZ_DATE_LEN + 1);
	return buf;
}

/* ---- canonical URI ---------------------------------------------------- */

/*
 * Remove "." and ".." segments and empty segments (AWS wants "//" gone too),
 * keeping a leading slash and, when something remains, a trailing one
 * (RFC 3986 5.2.4 as botocore applies it to non-S3 services).
 */
static void normalize_path(struct gb_buf *out, const char *path)
{
	size_t len = strlen(path);
	size_t *starts = NULL;	/* offsets in [out] of each kept segment */
	size_t nseg = 0;
	const char *p = path;

	starts = calloc(len / 2 + 2, sizeof(*starts));
	if (!starts) {
		out->oom = true;
		return;
	}
	gb_buf_putc(out, '/');
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* skip */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (nseg > 0) {
				nseg--;
				out->len = starts[nseg];
				if (out->data)
					out->data[out->len] = '\0';
			}
		} else {
			starts[nseg++] = out->len;
			if (out->len > 1)
				gb_buf_putc(out, '/');
			gb_buf_append(out, p, n);
		}
		p += n;
		if (*p == '/')
			p++;
	}
	if (nseg > 0 && len > 0 && path[len - 1] == '/')
		gb_buf_putc(out, '/');
	free(starts);
}

static void canonical_uri(struct gb_buf *cr, const char *path, unsigned flags)
{
	struct gb_buf norm = GB_BUF_INIT;

	if (!path || !*path)
		path = "/";
	if (flags & GB_SIGV4_S3_PATH) {
		gb_buf_puts(cr, path);
		return;
	}
	normalize_path(&norm, path);
	if (gb_buf_failed(&norm))
		cr->oom = true;
	else
		gb_sigv4_uri_encode(cr, norm.data, norm.len, true);
	gb_buf_free(&norm);
}

/* ---- canonical query -------------------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* RET NEW the canonical encoding of the percent-decoded [n] bytes at [s]. */
static char *recode(const char *s, size_t n)
{
	struct gb_buf dec = GB_BUF_INIT, enc = GB_BUF_INIT;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
		    (lo = hexval(s[i + 2])) >= 0) {
			gb_buf_putc(&dec, (char)(hi << 4 | lo));
			i += 2;
		} else {
			gb_buf_putc(&dec, s[i]);
		}
	}
	gb_sigv4_uri_encode(&enc, dec.data ? dec.data : "", dec.len, false);
	gb_buf_free(&dec);
	if (gb_buf_failed(&enc)) {
		gb_buf_free(&enc);
		return NULL;
	}
	if (!enc.data)
		return strdup("");
	return gb_buf_steal(&enc);
}

static int qparam_cmp(const void *a, const void *b)
{
	const struct qparam *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->value, y->value);
}

static gb_err_t canonical_query(struct gb_buf *cr, const char *query,
				gb_error_t *err)
{
	struct qparam *params = NULL;
	size_t n = 0, cap = 0;
	gb_err_t rc = GB_E_OK;
	const char *p = query;

	while (p && *p) {
		const char *end = strchr(p, '&');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t klen = eq ? (size_t)(eq - p) : len;

		if (len > 0) {
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				struct qparam *nv = realloc(params,
							    ncap * sizeof(*nv));

				if (!nv)
					goto nomem;
				params = nv;
				cap = ncap;
			}
			params[n].key = recode(p, klen);
			params[n].value = eq ? recode(eq + 1, len - klen - 1)
					     : strdup("");
			n++;
			if (!params[n - 1].key || !params[n - 1].value)
				goto nomem;
		}
		p += len;
		if (*p == '&')
			p++;
	}
	if (n > 1)
		qsort(params, n, sizeof(*params), qparam_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i)
			gb_buf_putc(cr, '&');
		gb_buf_puts(cr, params[i].key);
		gb_buf_putc(cr, '=');
		gb_buf_puts(cr, params[i].value);
	}
	goto out;
nomem:
	rc = gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
out:
	for (size_t i = 0; i < n; i++) {
		free(params[i].key);
		free(params[i].value);
	}
	free(params);
	return rc;
}

/* ---- canonical headers ------------------------------------------------ */

static void cheaders_free(struct cheaders *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].name);
		gb_buf_free(&h->v[i].value);
	}
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

static struct cheader *cheaders_find(struct cheaders *h, const char *lname)
{
	for (size_t i = 0; i < h->n; i++) {
		if (strcmp(h->v[i].name, lname) == 0)
			return &h->v[i];
	}
	return NULL;
}

/* Append [v] trimmed, with every run of blanks folded into one space. */
static void put_folded(struct gb_buf *b, const char *v)
{
	bool pending_space = false;

	while (*v && is_blank(*v))
		v++;
	for (; *v; v++) {
		if (is_blank(*v)) {
			pending_space = true;
			continue;
		}
		if (pending_space)
			gb_buf_putc(b, ' ');
		pending_space = false;
		gb_buf_putc(b, *v);
	}
}

/* Add one header (name of [nlen] bytes) to [h], joining repeats with ','. */
static gb_err_t cheaders_add(struct cheaders *h, const char *name, size_t nlen,
			     const char *value, gb_error_t *err)
{
	struct cheader *c;
	char *lname = malloc(nlen + 1);

	if (!lname)
		return gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
	for (size_t i = 0; i < nlen; i++)
		lname[i] = (char)tolower((unsigned char)name[i]);
	lname[nlen] = '\0';
	c = cheaders_find(h, lname);
	if (c) {
		free(lname);
		gb_buf_putc(&c->value, ',');
	} else {
		/* [h] has room: the caller sized it for every input header. */
		c = &h->v[h->n++];
		c->name = lname;
		memset(&c->value, 0, sizeof(c->value));
	}
	put_folded(&c->value, value ? value : "");
	return GB_E_OK;
}

static int cheader_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cheader *)a)->name,
		      ((const struct cheader *)b)->name);
}

/* Trim blanks around a header name: RET start, *len set. */
static const char *trim_name(const char *name, size_t *len)
{
	size_t n;

	while (*name && is_blank(*name))
		name++;
	n = strlen(name);
	while (n > 0 && is_blank(name[n - 1]))
		n--;
	*len = n;
	return name;
}

/*
 * Build the sorted canonical header list from the request, plus the
 * x-amz-date and x-amz-security-token headers the signer adds.  Also
 * finds the signing time.
 */
static gb_err_t build_headers(const struct gb_sigv4_request *req,
			      const struct gb_sigv4_creds *creds, time_t when,
			      struct cheaders *h, struct gb_sigv4_result *out,
			      gb_error_t *err)
{
	struct cheader *date, *token;
	gb_err_t rc;

	h->v = calloc(req->n_headers + 2, sizeof(*h->v));
	if (!h->v)
		return gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
	for (size_t i = 0; i < req->n_headers; i++) {
		size_t nlen;
		const char *name;

		if (!req->headers[i].name)
			return gb_errorf(err, GB_E_INVALID,
					 "sigv4: header %zu has no name", i);
		name = trim_name(req->headers[i].name, &nlen);
		if (!is_token(name, nlen))
			return gb_errorf(err, GB_E_INVALID,
					 "sigv4: invalid header name \"%s\"",
					 req->headers[i].name);
		rc = cheaders_add(h, name, nlen, req->headers[i].value, err);
		if (rc)
			return rc;
	}
	if (!cheaders_find(h, "host"))
		return gb_errorf(err, GB_E_INVALID,
				 "sigv4: no Host header among the headers to sign");
	date = cheaders_find(h, "x-amz-date");
	if (date) {
		const char *v = gb_buf_str(&date->value);

		if (!gb_sigv4_amz_date_valid(v))
			return gb_errorf(err, GB_E_INVALID,
					 "sigv4: X-Amz-Date \"%s\" is not YYYYMMDDTHHMMSSZ",
					 v);
		gb_strlcpy(out->amz_date, v, sizeof(out->amz_date));
	} else {
		gb_sigv4_amz_date(when, out->amz_date);
		rc = cheaders_add(h, "x-amz-date", 10, out->amz_date, err);
		if (rc)
			return rc;
		out->need_amz_date_header = true;
	}
	token = cheaders_find(h, "x-amz-security-token");
	if (!token && creds->session_token && *creds->session_token) {
		out->need_token_header = true;
		if (!(req->flags & GB_SIGV4_TOKEN_UNSIGNED)) {
			rc = cheaders_add(h, "x-amz-security-token", 20,
					  creds->session_token, err);
			if (rc)
				return rc;
		}
	}
	for (size_t i = 0; i < h->n; i++) {
		if (gb_buf_failed(&h->v[i].value))
			return gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
	}
	qsort(h->v, h->n, sizeof(*h->v), cheader_cmp);
	return GB_E_OK;
}

/* ---- signature -------------------------------------------------------- */

static bool field_ok(const char *s)
{
	if (!s || !*s || strlen(s) >= GB_SIGV4_FIELD_MAX)
		return false;
	for (; *s; s++) {
		if (*s == '/' || *s == ',' || *s == '=' || is_blank(*s) ||
		    (unsigned char)*s < 0x20)
			return false;
	}
	return true;
}

static gb_err_t check_input(const struct gb_sigv4_request *req,
			    const struct gb_sigv4_creds *creds,
			    const char *region, const char *service,
			    gb_error_t *err)
{
	if (!req || !creds)
		return gb_errorf(err, GB_E_INVALID, "sigv4: no request or credentials");
	if (!req->method || !is_token(req->method, strlen(req->method)))
		return gb_errorf(err, GB_E_INVALID, "sigv4: invalid method");
	if (!field_ok(creds->access_key_id))
		return gb_errorf(err, GB_E_INVALID,
				 "sigv4: missing or invalid access key id");
	if (!creds->secret_access_key || !*creds->secret_access_key)
		return gb_errorf(err, GB_E_INVALID, "sigv4: missing secret key");
	if (!field_ok(region))
		return gb_errorf(err, GB_E_INVALID, "sigv4: invalid region");
	if (!field_ok(service))
		return gb_errorf(err, GB_E_INVALID, "sigv4: invalid service");
	if (req->n_headers && !req->headers)
		return gb_errorf(err, GB_E_INVALID, "sigv4: headers missing");
	if (req->payload_len && !req->payload && !req->payload_hash)
		return gb_errorf(err, GB_E_INVALID, "sigv4: payload missing");
	return GB_E_OK;
}

/*
 * Signature = hex(HMAC(kSigning, string_to_sign)) with kSigning =
 * HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
 * "aws4_request").  The derived keys are wiped before returning.
 */
static gb_err_t compute_signature(const char *secret, const char *date,
				  const char *region, const char *service,
				  const char *sts, char sig[GB_SIGV4_SIG_HEX_LEN + 1],
				  gb_error_t *err)
{
	unsigned char k1[GB_SHA256_LEN], k2[GB_SHA256_LEN];
	struct gb_buf seed = GB_BUF_INIT;
	gb_err_t rc;

	gb_buf_puts(&seed, "AWS4");
	gb_buf_puts(&seed, secret);
	if (gb_buf_failed(&seed)) {
		rc = gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
		goto out;
	}
	rc = gb_crypto_hmac_sha256(seed.data, seed.len, date, strlen(date), k1, err);
	if (!rc)
		rc = gb_crypto_hmac_sha256(k1, sizeof(k1), region, strlen(region),
					   k2, err);
	if (!rc)
		rc = gb_crypto_hmac_sha256(k2, sizeof(k2), service,
					   strlen(service), k1, err);
	if (!rc)
		rc = gb_crypto_hmac_sha256(k1, sizeof(k1), SCOPE_TERMINATOR,
					   strlen(SCOPE_TERMINATOR), k2, err);
	if (!rc)
		rc = gb_crypto_hmac_sha256(k2, sizeof(k2), sts, strlen(sts), k1,
					   err);
	if (!rc)
		gb_crypto_hex(k1, sizeof(k1), sig);
out:
	gb_memzero(k1, sizeof(k1));
	gb_memzero(k2, sizeof(k2));
	gb_memzero(seed.data, seed.cap);
	gb_buf_free(&seed);
	return rc;
}

static gb_err_t build_canonical_request(const struct gb_sigv4_request *req,
					const struct cheaders *h,
					struct gb_sigv4_result *out,
					gb_error_t *err)
{
	struct gb_buf cr = GB_BUF_INIT, sh = GB_BUF_INIT;
	char hash[GB_SHA256_HEX_LEN + 1];
	gb_err_t rc;

	gb_buf_puts(&cr, req->method);
	gb_buf_putc(&cr, '\n');
	canonical_uri(&cr, req->path, req->flags);
	gb_buf_putc(&cr, '\n');
	rc = canonical_query(&cr, req->query, err);
	if (rc)
		goto out;
	gb_buf_putc(&cr, '\n');
	for (size_t i = 0; i < h->n; i++) {
		gb_buf_puts(&cr, h->v[i].name);
		gb_buf_putc(&cr, ':');
		gb_buf_puts(&cr, gb_buf_str(&h->v[i].value));
		gb_buf_putc(&cr, '\n');
		if (i)
			gb_buf_putc(&sh, ';');
		gb_buf_puts(&sh, h->v[i].name);
	}
	gb_buf_putc(&cr, '\n');
	gb_buf_puts(&cr, gb_buf_str(&sh));
	gb_buf_putc(&cr, '\n');
	if (req->payload_hash) {
		gb_buf_puts(&cr, req->payload_hash);
	} else {
		gb_crypto_sha256_hex(req->payload, req->payload_len, hash);
		gb_buf_puts(&cr, hash);
	}
	if (gb_buf_failed(&cr) || gb_buf_failed(&sh)) {
		rc = gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
		goto out;
	}
	out->canonical_request = gb_buf_steal(&cr);
	out->signed_headers = gb_buf_steal(&sh);
	if (!out->canonical_request || !out->signed_headers)
		rc = gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
out:
	gb_buf_free(&cr);
	gb_buf_free(&sh);
	return rc;
}

gb_err_t gb_sigv4_sign(const struct gb_sigv4_request *req,
		       const struct gb_sigv4_creds *creds, const char *region,
		       const char *service, time_t when,
		       struct gb_sigv4_result *out, gb_error_t *err)
{
	struct cheaders h = { NULL, 0 };
	struct gb_buf sts = GB_BUF_INIT, auth = GB_BUF_INIT;
	char crhash[GB_SHA256_HEX_LEN + 1];
	char date[9];
	gb_err_t rc;

	memset(out, 0, sizeof(*out));
	rc = check_input(req, creds, region, service, err);
	if (rc)
		goto out;
	rc = build_headers(req, creds, when, &h, out, err);
	if (rc)
		goto out;
	rc = build_canonical_request(req, &h, out, err);
	if (rc)
		goto out;
	memcpy(date, out->amz_date, 8);
	date[8] = '\0';
	gb_crypto_sha256_hex(out->canonical_request,
			     strlen(out->canonical_request), crhash);
	gb_buf_printf(&sts, "%s\n%s\n%s/%s/%s/%s\n%s", GB_SIGV4_ALGORITHM,
		      out->amz_date, date, region, service, SCOPE_TERMINATOR,
		      crhash);
	if (gb_buf_failed(&sts)) {
		rc = gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
		goto out;
	}
	rc = compute_signature(creds->secret_access_key, date, region, service,
			       sts.data, out->signature, err);
	if (rc)
		goto out;
	gb_buf_printf(&auth, "%s Credential=%s/%s/%s/%s/%s, SignedHeaders=%s, "
		      "Signature=%s", GB_SIGV4_ALGORITHM, creds->access_key_id,
		      date, region, service, SCOPE_TERMINATOR,
		      out->signed_headers, out->signature);
	out->string_to_sign = gb_buf_steal(&sts);
	out->authorization = gb_buf_steal(&auth);
	if (!out->string_to_sign || !out->authorization)
		rc = gb_errorf(err, GB_E_NOMEM, "sigv4: out of memory");
out:
	cheaders_free(&h);
	gb_buf_free(&sts);
	gb_buf_free(&auth);
	return rc;
}

void gb_sigv4_result_free(struct gb_sigv4_result *r)
{
	if (!r)
		return;
	if (r->canonical_request) {
		/* it may hold a session token */
		gb_memzero(r->canonical_request, strlen(r->canonical_request));
		free(r->canonical_request);
	}
	free(r->string_to_sign);
	free(r->signed_headers);
	free(r->authorization);
	memset(r, 0, sizeof(*r));
}

/* ---- Authorization header parsing -------------------------------------- */

/* Copy [n] bytes at [s] into [dst] of [size]; RET false if it does not fit. */
static bool copy_field(char *dst, size_t size, const char *s, size_t n)
{
	if (n == 0 || n >= size)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

static gb_err_t parse_credential(const char *v, size_t n,
				 struct gb_sigv4_auth *out, gb_error_t *err)
{
	const char *parts[5];
	size_t lens[5];
	size_t k = 0;
	const char *p = v, *end = v + n;

	while (k < 5) {
		/* the last part runs to the end, so "a/b/c/d/e/f" fails below */
		const char *slash = k < 4 ? memchr(p, '/', (size_t)(end - p))
					  : NULL;

		parts[k] = p;
		lens[k] = slash ? (size_t)(slash - p) : (size_t)(end - p);
		k++;
		if (!slash)
			break;
		p = slash + 1;
	}
	if (k != 5 || memchr(parts[4], '/', lens[4]))
		return gb_errorf(err, GB_E_PARSE,
				 "Credential must be KEY/DATE/REGION/SERVICE/aws4_request");
	if (!copy_field(out->access_key_id, sizeof(out->access_key_id),
			parts[0], lens[0]))
		return gb_errorf(err, GB_E_PARSE,
				 "Credential: missing or overlong access key id");
	if (lens[1] != 8 || !copy_field(out->date, sizeof(out->date), parts[1], 8))
		return gb_errorf(err, GB_E_PARSE, "Credential: date is not YYYYMMDD");
	for (size_t i = 0; i < 8; i++) {
		if (!isdigit((unsigned char)out->date[i]))
			return gb_errorf(err, GB_E_PARSE,
					 "Credential: date is not YYYYMMDD");
	}
	if (!copy_field(out->region, sizeof(out->region), parts[2], lens[2]))
		return gb_errorf(err, GB_E_PARSE, "Credential: missing region");
	if (!copy_field(out->service, sizeof(out->service), parts[3], lens[3]))
		return gb_errorf(err, GB_E_PARSE, "Credential: missing service");
	if (lens[4] != strlen(SCOPE_TERMINATOR) ||
	    memcmp(parts[4], SCOPE_TERMINATOR, lens[4]) != 0)
		return gb_errorf(err, GB_E_PARSE,
				 "Credential scope must end in aws4_request");
	return GB_E_OK;
}

static gb_err_t parse_signed_headers(const char *v, size_t n,
				     struct gb_sigv4_auth *out, gb_error_t *err)
{
	const char *p = v, *end = v + n;

	if (n == 0)
		return gb_errorf(err, GB_E_PARSE, "SignedHeaders is empty");
	while (p <= end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		size_t len = semi ? (size_t)(semi - p) : (size_t)(end - p);
		char name[256];

		if (!is_token(p, len) || len >= sizeof(name))
			return gb_errorf(err, GB_E_PARSE,
					 "SignedHeaders has an invalid name");
		for (size_t i = 0; i < len; i++)
			name[i] = (char)tolower((unsigned char)p[i]);
		name[len] = '\0';
		if (gb_strv_add(&out->signed_headers, name))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		if (!semi)
			break;
		p = semi + 1;
	}
	return GB_E_OK;
}

static gb_err_t parse_signature(const char *v, size_t n,
				struct gb_sigv4_auth *out, gb_error_t *err)
{
	if (n != GB_SIGV4_SIG_HEX_LEN)
		return gb_errorf(err, GB_E_PARSE, "Signature is not 64 hex digits");
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)v[i]))
			return gb_errorf(err, GB_E_PARSE,
					 "Signature is not 64 hex digits");
		out->signature[i] = (char)tolower((unsigned char)v[i]);
	}
	out->signature[n] = '\0';
	return GB_E_OK;
}

/* The three components of an Authorization value, each exactly once. */
static const struct auth_part {
	const char *name;
	gb_err_t (*parse)(const char *v, size_t n, struct gb_sigv4_auth *out,
			  gb_error_t *err);
} auth_parts[] = {
	{ "Credential", parse_credential },
	{ "SignedHeaders", parse_signed_headers },
	{ "Signature", parse_signature },
};

#define AUTH_PARTS (sizeof(auth_parts) / sizeof(auth_parts[0]))

/* One "Name=value" component of [n] bytes at [p]; [seen] per auth_parts[]. */
static gb_err_t auth_component(const char *p, size_t n, bool *seen,
			       struct gb_sigv4_auth *out, gb_error_t *err)
{
	const char *eq = memchr(p, '=', n);
	size_t nlen;

	if (!eq)
		return gb_errorf(err, GB_E_PARSE,
				 "Authorization component without '='");
	nlen = (size_t)(eq - p);
	for (size_t i = 0; i < AUTH_PARTS; i++) {
		if (strlen(auth_parts[i].name) != nlen ||
		    strncmp(p, auth_parts[i].name, nlen) != 0 || seen[i])
			continue;
		seen[i] = true;
		return auth_parts[i].parse(eq + 1, n - nlen - 1, out, err);
	}
	return gb_errorf(err, GB_E_PARSE,
			 "Authorization has an unknown or repeated component");
}

gb_err_t gb_sigv4_auth_parse(const char *value, struct gb_sigv4_auth *out,
			     gb_error_t *err)
{
	bool seen[AUTH_PARTS] = { false };
	const char *p;
	gb_err_t rc = GB_E_OK;

	memset(out, 0, sizeof(*out));
	if (!value)
		return gb_errorf(err, GB_E_PARSE, "no Authorization header");
	while (is_blank(*value))
		value++;
	if (!gb_str_has_prefix(value, GB_SIGV4_ALGORITHM) ||
	    !is_blank(value[strlen(GB_SIGV4_ALGORITHM)]))
		return gb_errorf(err, GB_E_PARSE,
				 "Authorization does not start with %s",
				 GB_SIGV4_ALGORITHM);
	p = value + strlen(GB_SIGV4_ALGORITHM);
	for (;;) {
		size_t len, n;

		while (is_blank(*p) || *p == ',')
			p++;
		if (!*p)
			break;
		len = n = strcspn(p, ",");
		while (n > 0 && is_blank(p[n - 1]))
			n--;
		if ((rc = auth_component(p, n, seen, out, err)))
			goto out;
		p += len;
	}
	for (size_t i = 0; i < AUTH_PARTS; i++)
		if (!seen[i]) {
			rc = gb_errorf(err, GB_E_PARSE, "Authorization lacks %s",
				       auth_parts[i].name);
			goto out;
		}
out:
	if (rc)
		gb_sigv4_auth_free(out);
	return rc;
}

void gb_sigv4_auth_free(struct gb_sigv4_auth *a)
{
	if (!a)
		return;
	gb_strv_free(&a->signed_headers);
	memset(a, 0, sizeof(*a));
}

/* ---- verification ----------------------------------------------------- */

static bool signed_headers_match(const char *computed,
				 const struct gb_strv *claimed)
{
	struct gb_buf b = GB_BUF_INIT;
	bool same;

	for (size_t i = 0; i < claimed->n; i++) {
		if (i)
			gb_buf_putc(&b, ';');
		gb_buf_puts(&b, claimed->v[i]);
	}
	same = !gb_buf_failed(&b) && strcmp(gb_buf_str(&b), computed) == 0;
	gb_buf_free(&b);
	return same;
}

gb_err_t gb_sigv4_verify(const struct gb_sigv4_request *req,
			 const struct gb_sigv4_auth *auth,
			 const struct gb_sigv4_creds *creds,
			 struct gb_sigv4_result *out, gb_error_t *err)
{
	struct gb_sigv4_result local;
	struct gb_sigv4_result *r = out ? out : &local;
	struct gb_sigv4_creds c;
	gb_err_t rc;

	memset(&local, 0, sizeof(local));
	if (!auth || !creds || !creds->access_key_id)
		return gb_errorf(err, GB_E_INVALID, "sigv4: nothing to verify");
	c = *creds;
	c.session_token = NULL;	/* a signed token is one of the headers */
	rc = gb_sigv4_sign(req, &c, auth->region, auth->service, 0, r, err);
	if (rc)
		goto out;
	if (r->need_amz_date_header) {
		rc = gb_errorf(err, GB_E_AUTH, "X-Amz-Date is not a signed header");
	} else if (strcmp(creds->access_key_id, auth->access_key_id) != 0) {
		rc = gb_errorf(err, GB_E_AUTH, "access key id mismatch");
	} else if (strncmp(r->amz_date, auth->date, 8) != 0) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "credential scope date %s does not match X-Amz-Date %s",
			       auth->date, r->amz_date);
	} else if (!signed_headers_match(r->signed_headers,
					 &auth->signed_headers)) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "SignedHeaders do not match the headers supplied (%s)",
			       r->signed_headers);
	} else if (!gb_crypto_streq_ct(r->signature, auth->signature)) {
		rc = gb_errorf(err, GB_E_AUTH,
			       "the request signature does not match");
	}
out:
	if (!out)
		gb_sigv4_result_free(&local);
	return rc;
}
