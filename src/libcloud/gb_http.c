/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_http.c - the libcurl seam: one easy handle per endpoint, timeouts,
 * TLS verification, response cap, the proxy, CURLcode translation
 */
#include "config.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include "gb_http.h"
#include "gb_log.h"
#include "gb_util.h"

#define CA_BUNDLE_MAX (16u << 20)	/* bytes: a system bundle is about 200 KiB */
#define PROXY_SHOWN_MAX 512		/* the redacted proxy URL in messages */

struct gb_http {
	CURL *curl;
	char *url;		/* as given */
	char *origin;		/* scheme://host[:port], no path */
	char *host;		/* Host header value */
	char *name;		/* the host alone, as libcurl parsed it */
	char *base_path;	/* "/" or the endpoint's path */
	char *ca_bundle;
	char *user_agent;
	char *proxy;		/* NULL: direct; a secret (its password) */
	char *proxy_shown;	/* [proxy] with the password as "***" */
	char *interface;	/* CURLOPT_INTERFACE "host!IP", or NULL */
	long connect_timeout_ms;
	long timeout_ms;
	size_t max_response;
};

/* State of one transfer, seen by the callbacks. */
struct xfer {
	struct gb_buf body;
	struct gb_strv *headers;
	size_t max;
	bool too_large;
	bool oom;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init_once(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

gb_err_t gb_http_global_init(gb_error_t *err)
{
	pthread_once(&global_once, global_init_once);
	if (global_rc != CURLE_OK)
		return gb_errorf(err, GB_E_HTTP, "curl_global_init: %s",
				 curl_easy_strerror(global_rc));
	return GB_E_OK;
}

/* ---- endpoint URL ----------------------------------------------------- */

/* Take the endpoint apart with libcurl's own URL parser. */
static gb_err_t parse_endpoint(gb_http_t *h, const char *url, gb_error_t *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
	char *query = NULL, *user = NULL, *frag = NULL;
	struct gb_buf b = GB_BUF_INIT;
	gb_err_t rc = GB_E_OK;
	CURLUcode uc;

	if (!u)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		rc = gb_errorf(err, GB_E_INVALID, "endpoint \"%s\": %s", url,
			       curl_url_strerror(uc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
	if (!scheme || !host || (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		rc = gb_errorf(err, GB_E_INVALID,
			       "endpoint \"%s\": need an http:// or https:// URL",
			       url);
		goto out;
	}
	if (query || user || frag) {
		rc = gb_errorf(err, GB_E_INVALID,
			       "endpoint \"%s\": no query, fragment or user allowed",
			       url);
		goto out;
	}
	/* curl omits a port equal to the scheme's default from Host */
	if (port && ((!strcmp(scheme, "http") && !strcmp(port, "80")) ||
		     (!strcmp(scheme, "https") && !strcmp(port, "443")))) {
		curl_free(port);
		port = NULL;
	}
	gb_buf_printf(&b, "%s%s%s", host, port ? ":" : "", port ? port : "");
	h->host = gb_buf_steal(&b);
	gb_buf_printf(&b, "%s://%s", scheme, h->host ? h->host : "");
	h->origin = gb_buf_steal(&b);
	h->name = strdup(host);
	h->base_path = strdup(path && *path ? path : "/");
	if (!h->host || !h->origin || !h->name || !h->base_path)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(query);
	curl_free(user);
	curl_free(frag);
	curl_url_cleanup(u);
	gb_buf_free(&b);
	return rc;
}

/* ---- proxy ------------------------------------------------------------ */

/* Check [proxy] with libcurl's parser: http(s)://[user[:pass]@]host[:port][/]. */
static gb_err_t check_proxy(const char *proxy, gb_error_t *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *path = NULL, *query = NULL, *frag = NULL;
	char shown[PROXY_SHOWN_MAX];
	gb_err_t rc = GB_E_OK;
	CURLUcode uc;

	if (!u)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	gb_url_redact(proxy, shown, sizeof(shown));
	uc = curl_url_set(u, CURLUPART_URL, proxy, 0);
	if (uc != CURLUE_OK) {
		rc = gb_errorf(err, GB_E_INVALID, "proxy \"%s\": %s", shown,
			       curl_url_strerror(uc));
		goto out;
	}
	curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_PATH, &path, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
	if (!scheme || !host || !*host ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https")))
		rc = gb_errorf(err, GB_E_INVALID,
			       "proxy \"%s\": need an http:// or https:// URL with a host",
			       shown);
	else if ((path && *path && strcmp(path, "/")) || query || frag)
		rc = gb_errorf(err, GB_E_INVALID,
			       "proxy \"%s\": no path, query or fragment allowed", shown);
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(path);
	curl_free(query);
	curl_free(frag);
	curl_url_cleanup(u);
	return rc;
}

/* [s] of [n] bytes, with the brackets of an IPv6 literal and a final dot dropped. */
static void host_trim(const char **s, size_t *n)
{
	if (*n >= 2 && (*s)[0] == '[' && (*s)[*n - 1] == ']') {
		(*s)++;
		*n -= 2;
	}
	if (*n && (*s)[*n - 1] == '.')
		(*n)--;
}

/*
 * Does comma list [list] name host [name]?  CURLOPT_NOPROXY's rules, here
 * so that the client knows whether it uses the proxy (its messages and
 * gb_http_proxy() say so): "*" is every host, an IP address matches only
 * itself, a name itself and every name under it, a leading dot changing
 * nothing.
 */
static bool host_listed(const char *name, const char *list)
{
	unsigned char addr[sizeof(struct in6_addr)];
	char bare[INET6_ADDRSTRLEN + 1];
	size_t hn = strlen(name);
	bool ip = false;

	host_trim(&name, &hn);
	if (hn < sizeof(bare)) {
		memcpy(bare, name, hn);
		bare[hn] = '\0';
		ip = inet_pton(AF_INET, bare, addr) == 1 ||
		     inet_pton(AF_INET6, bare, addr) == 1;
	}
	for (const char *p = list; p && *p;) {
		const char *item;
		size_t n;

		p += strspn(p, ", \t");
		item = p;
		n = strcspn(p, ", \t");
		p += n;
		if (n == 1 && *item == '*')
			return true;
		if (n && *item == '.' && !ip) {
			item++;
			n--;
		}
		host_trim(&item, &n);
		if (!n || n > hn || strncasecmp(name + hn - n, item, n) != 0)
			continue;
		if (n == hn || (!ip && name[hn - n - 1] == '.'))
			return true;
	}
	return false;
}

/*
 * Take the proxy of [o] for this client unless the endpoint is reached
 * directly: the IMDS (no_proxy), loopback, or a host of no_proxy_hosts.
 */
static gb_err_t proxy_setup(gb_http_t *h, const struct gb_http_opts *o,
			    gb_error_t *err)
{
	char shown[PROXY_SHOWN_MAX];
	const char *pw;
	size_t pwlen;
	gb_err_t rc;

	if (!o->proxy || !*o->proxy)
		return GB_E_OK;
	rc = check_proxy(o->proxy, err);
	if (rc || o->no_proxy || gb_http_url_is_loopback(h->url) ||
	    host_listed(h->name, o->no_proxy_hosts))
		return rc;
	h->proxy = strdup(o->proxy);
	h->proxy_shown = strdup(gb_url_redact(o->proxy, shown, sizeof(shown)));
	if (!h->proxy || !h->proxy_shown)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	/* the password never reaches a log line */
	if ((pw = gb_url_password(h->proxy, &pwlen)) && pwlen) {
		char *copy = strndup(pw, pwlen);

		gb_log_secret_add(copy);
		gb_free_secret(&copy);
	}
	return GB_E_OK;
}

/* The local address to connect from, as libcurl's "host!IP". */
static gb_err_t local_setup(gb_http_t *h, const char *ip, gb_error_t *err)
{
	unsigned char addr[sizeof(struct in6_addr)];
	struct gb_buf b = GB_BUF_INIT;

	if (!ip || !*ip)
		return GB_E_OK;
	if (inet_pton(AF_INET, ip, addr) != 1 && inet_pton(AF_INET6, ip, addr) != 1)
		return gb_errorf(err, GB_E_INVALID,
				 "local address \"%s\": need an IPv4 or IPv6 address", ip);
	gb_buf_printf(&b, "host!%s", ip);
	if (!(h->interface = gb_buf_steal(&b)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

gb_err_t gb_http_create(const char *base_url, const struct gb_http_opts *o,
			gb_http_t **out, gb_error_t *err)
{
	struct gb_http_opts def = { 0 };
	gb_http_t *h = NULL;
	gb_error_t e;
	gb_err_t rc;

	*out = NULL;
	if (!o)
		o = &def;
	rc = gb_http_global_init(err);
	if (rc)
		return rc;
	if (!base_url || !*base_url)
		return gb_errorf(err, GB_E_INVALID, "no endpoint URL");
	if (o->connect_timeout_ms < 0 || o->timeout_ms < 0)
		return gb_errorf(err, GB_E_INVALID, "negative HTTP timeout");
	/* curl reads it on each connection: a FIFO would hang every call */
	if (o->ca_bundle && gb_file_check(o->ca_bundle, CA_BUNDLE_MAX, &e))
		return gb_errorf(err, GB_E_INVALID, "CA bundle: %s", e.text);
	h = calloc(1, sizeof(*h));
	if (!h)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	h->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms
						      : GB_HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
	h->timeout_ms = o->timeout_ms ? o->timeout_ms : GB_HTTP_DEFAULT_TIMEOUT_MS;
	h->max_response = o->max_response_bytes ? o->max_response_bytes
						: GB_HTTP_DEFAULT_MAX_RESPONSE;
	h->url = strdup(base_url);
	h->ca_bundle = gb_strdup0(o->ca_bundle);
	h->user_agent = strdup(o->user_agent ? o->user_agent
					     : PACKAGE_NAME "/" PACKAGE_VERSION);
	h->curl = curl_easy_init();
	if (!h->url || !h->user_agent || !h->curl ||
	    (o->ca_bundle && !h->ca_bundle)) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto fail;
	}
	rc = parse_endpoint(h, base_url, err);
	if (!rc)
		rc = proxy_setup(h, o, err);
	if (!rc)
		rc = local_setup(h, o->local_address, err);
	if (rc)
		goto fail;
	*out = h;
	return GB_E_OK;
fail:
	gb_http_destroy(h);
	return rc;
}

void gb_http_destroy(gb_http_t *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	free(h->url);
	free(h->origin);
	free(h->host);
	free(h->name);
	free(h->base_path);
	free(h->ca_bundle);
	free(h->user_agent);
	gb_free_secret(&h->proxy);
	free(h->proxy_shown);
	free(h->interface);
	free(h);
}

const char *gb_http_host(const gb_http_t *h)
{
	return h->host;
}

const char *gb_http_base_path(const gb_http_t *h)
{
	return h->base_path;
}

const char *gb_http_url(const gb_http_t *h)
{
	return h->url;
}

const char *gb_http_proxy(const gb_http_t *h)
{
	return h->proxy_shown;
}

/* ---- callbacks -------------------------------------------------------- */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;

	if (x->body.len + len > x->max) {
		x->too_large = true;
		return 0;	/* aborts the transfer with CURLE_WRITE_ERROR */
	}
	gb_buf_append(&x->body, p, len);
	if (gb_buf_failed(&x->body)) {
		x->oom = true;
		return 0;
	}
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	size_t l = len;
	char *line;

	while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == '\n'))
		l--;
	if (l == 0)
		return len;
	if (l >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* a new response (after 100 Continue): forget the old one */
		gb_strv_free(x->headers);
		return len;
	}
	line = strndup(p, l);
	if (!line || gb_strv_add(x->headers, line)) {
		x->oom = true;
		free(line);
		return 0;
	}
	free(line);
	return len;
}

/* ---- request ---------------------------------------------------------- */

static bool header_text_ok(const char *s)
{
	for (; *s; s++) {
		if (*s == '\r' || *s == '\n' || *s == '\0')
			return false;
	}
	return true;
}

static bool path_ok(const char *p)
{
	if (p[0] != '/')
		return false;
	for (; *p; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return false;
	}
	return true;
}

static bool has_header(const struct gb_http_request *req, const char *name)
{
	for (size_t i = 0; i < req->n_headers; i++) {
		if (strcasecmp(req->headers[i].name, name) == 0)
			return true;
	}
	return false;
}

/* Append "Name: value" (curl wants "Name;" for an empty value). */
static gb_err_t add_header(struct curl_slist **list, const char *name,
			   const char *value, gb_error_t *err)
{
	struct gb_buf b = GB_BUF_INIT;
	struct curl_slist *nl;

	if (!value || !*value)
		gb_buf_printf(&b, "%s;", name);
	else
		gb_buf_printf(&b, "%s: %s", name, value);
	nl = gb_buf_failed(&b) ? NULL : curl_slist_append(*list, b.data);
	/* the line may hold an Authorization or token: wipe our copy */
	gb_memzero(b.data, b.len);
	gb_buf_free(&b);
	if (!nl)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	*list = nl;
	return GB_E_OK;
}

/* "Name:" with nothing after the colon stops curl sending its default. */
static gb_err_t suppress_header(struct curl_slist **list, const char *line,
				gb_error_t *err)
{
	struct curl_slist *nl = curl_slist_append(*list, line);

	if (!nl)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	*list = nl;
	return GB_E_OK;
}

static gb_err_t build_headers(gb_http_t *h, const struct gb_http_request *req,
			      struct curl_slist **list, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	for (size_t i = 0; i < req->n_headers && !rc; i++) {
		const char *name = req->headers[i].name;
		const char *value = req->headers[i].value;

		if (!name || !*name || strchr(name, ':') || !header_text_ok(name) ||
		    (value && !header_text_ok(value)))
			return gb_errorf(err, GB_E_INVALID,
					 "invalid HTTP header \"%s\"",
					 name ? name : "(null)");
		rc = add_header(list, name, value, err);
	}
	if (!rc && !has_header(req, "Host"))
		rc = add_header(list, "Host", h->host, err);
	/* no "Expect: 100-continue" round trip; no default Content-Type */
	if (!rc && !has_header(req, "Expect"))
		rc = suppress_header(list, "Expect:", err);
	if (!rc && !has_header(req, "Content-Type"))
		rc = suppress_header(list, "Content-Type:", err);
	return rc;
}

static void set_method(CURL *c, const struct gb_http_request *req)
{
	static const char empty[1];
	const char *m = req->method;

	if (!req->body && (!strcmp(m, "GET") || !strcmp(m, "DELETE") ||
			   !strcmp(m, "HEAD"))) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
		if (!strcmp(m, "HEAD"))
			curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
		else if (strcmp(m, "GET"))
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m);
		return;
	}
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? req->body : empty);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(req->body ? req->body_len : 0));
	if (strcmp(m, "POST"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, m);
}

static void set_options(gb_http_t *h, const char *url, struct curl_slist *hdrs,
			struct xfer *x, char *errbuf)
{
	CURL *c = h->curl;

	/* curl_easy_reset keeps the connection cache: keep-alive survives */
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	if (h->interface)
		curl_easy_setopt(c, CURLOPT_INTERFACE, h->interface);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (h->ca_bundle)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_bundle);
	/*
	 * "" is "no proxy, whatever the environment says"; a NOPROXY of ""
	 * keeps curl from reading no_proxy/NO_PROXY: proxy_setup() decided.
	 */
	curl_easy_setopt(c, CURLOPT_PROXY, h->proxy ? h->proxy : "");
	if (h->proxy) {
		curl_easy_setopt(c, CURLOPT_NOPROXY, "");
		curl_easy_setopt(c, CURLOPT_HTTPPROXYTUNNEL, 1L);
		if (h->ca_bundle)
			curl_easy_setopt(c, CURLOPT_PROXY_CAINFO, h->ca_bundle);
	}
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	/* HTTP/1.1: the Host header we sign is the one on the wire */
	curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(c, CURLOPT_USERAGENT, h->user_agent);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_response);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
}

static enum gb_http_fail classify(CURLcode cc, const struct xfer *x)
{
	switch (cc) {
	case CURLE_OK:
		return GB_HTTP_FAIL_NONE;
	case CURLE_OPERATION_TIMEDOUT:
		return GB_HTTP_FAIL_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
		return GB_HTTP_FAIL_CONNECT;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return GB_HTTP_FAIL_IO;
	case CURLE_FILESIZE_EXCEEDED:
		return GB_HTTP_FAIL_TOO_LARGE;
	case CURLE_WRITE_ERROR:
		return x->too_large ? GB_HTTP_FAIL_TOO_LARGE : GB_HTTP_FAIL_OTHER;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_USE_SSL_FAILED:
		return GB_HTTP_FAIL_TLS;
	default:
		return GB_HTTP_FAIL_OTHER;
	}
}

/*
 * The proxy's answer to CONNECT when it was not 2xx (RFC 9110 9.3.6): 407
 * wants other credentials, 5xx says it could not reach the endpoint (a
 * connect failure, worth retrying), anything else is a refusal.
 * RET GB_HTTP_FAIL_NONE when there was no such answer.
 */
static enum gb_http_fail proxy_refusal(gb_http_t *h, long *code)
{
	*code = 0;
	if (!h->proxy ||
	    curl_easy_getinfo(h->curl, CURLINFO_HTTP_CONNECTCODE, code) != CURLE_OK ||
	    *code == 0 || (*code >= 200 && *code <= 299))
		return GB_HTTP_FAIL_NONE;
	if (*code == 407)
		return GB_HTTP_FAIL_PROXY_AUTH;
	return *code >= 500 ? GB_HTTP_FAIL_CONNECT : GB_HTTP_FAIL_PROXY;
}

/* Mask every copy of the proxy's password in [s] (curl's own words). */
static void proxy_scrub(const gb_http_t *h, char *s)
{
	const char *pw = NULL;
	size_t n = 0;
	char *p = s;

	if (h->proxy)
		pw = gb_url_password(h->proxy, &n);
	if (!pw || n < 4)	/* as gb_log_secret_add(): shorter would mask words */
		return;
	while ((p = memmem(p, strlen(p), pw, n))) {
		memset(p, '*', n);
		p += n;
	}
}

static gb_err_t transport_error(gb_http_t *h, const struct gb_http_request *req,
				CURLcode cc, const char *errbuf, long connect_code,
				struct gb_http_response *resp, gb_error_t *err)
{
	const char *path = req->path ? req->path : h->base_path;
	char why[CURL_ERROR_SIZE + 128], via[PROXY_SHOWN_MAX + 16] = "";

	if (h->proxy)
		snprintf(via, sizeof(via), " via proxy %s", h->proxy_shown);
	if (resp->fail == GB_HTTP_FAIL_PROXY_AUTH)
		snprintf(why, sizeof(why),
			 "the proxy wants other credentials (CONNECT answered 407): check the user and password in the proxy URL");
	else if (connect_code >= 500)
		snprintf(why, sizeof(why),
			 "the proxy could not reach the endpoint (CONNECT answered %ld)",
			 connect_code);
	else if (connect_code)
		snprintf(why, sizeof(why), "the proxy refused the tunnel (CONNECT answered %ld)",
			 connect_code);
	else if (resp->fail == GB_HTTP_FAIL_TOO_LARGE)
		snprintf(why, sizeof(why), "response larger than %zu bytes", h->max_response);
	else
		snprintf(why, sizeof(why), "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
	proxy_scrub(h, why);
	if (resp->fail == GB_HTTP_FAIL_TOO_LARGE)
		return gb_errorf(err, GB_E_HTTP, "%s %s%s%s: %s", req->method, h->origin,
				 path, via, why);
	return gb_errorf(err, resp->fail == GB_HTTP_FAIL_TIMEOUT ? GB_E_TIMEOUT
								 : GB_E_HTTP,
			 "%s %s%s%s: %s (%s)", req->method, h->origin, path, via, why,
			 gb_http_fail_name(resp->fail));
}

gb_err_t gb_http_do(gb_http_t *h, const struct gb_http_request *req,
		    struct gb_http_response *resp, gb_error_t *err)
{
	struct xfer x = { GB_BUF_INIT, NULL, 0, false, false };
	struct curl_slist *hdrs = NULL;
	struct gb_buf url = GB_BUF_INIT;
	char errbuf[CURL_ERROR_SIZE] = "";
	enum gb_http_fail refusal;
	const char *path;
	long connect_code;
	double t0 = gb_time_mono();
	gb_err_t rc;
	CURLcode cc;

	memset(resp, 0, sizeof(*resp));
	path = req->path ? req->path : h->base_path;
	if (!req->method || !*req->method || !path_ok(path) ||
	    (req->n_headers && !req->headers))
		return gb_errorf(err, GB_E_INVALID,
				 "invalid HTTP request (method or path)");
	rc = build_headers(h, req, &hdrs, err);
	if (rc)
		goto out;
	gb_buf_printf(&url, "%s%s", h->origin, path);
	if (gb_buf_failed(&url)) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	x.headers = &resp->headers;
	x.max = h->max_response;
	set_options(h, url.data, hdrs, &x, errbuf);
	set_method(h->curl, req);
	cc = curl_easy_perform(h->curl);
	resp->elapsed = gb_time_mono() - t0;
	resp->fail = x.oom ? GB_HTTP_FAIL_OTHER : classify(cc, &x);
	refusal = cc != CURLE_OK ? proxy_refusal(h, &connect_code) : GB_HTTP_FAIL_NONE;
	if (refusal != GB_HTTP_FAIL_NONE && !x.oom)
		resp->fail = refusal;
	else
		connect_code = 0;
	if (cc != CURLE_OK) {
		if (x.oom)
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		else
			rc = transport_error(h, req, cc, errbuf, connect_code, resp, err);
		gb_log_debug("http_fail method=%s host=%s proxy=%s fail=%s ms=%.0f",
			     req->method, h->host, h->proxy ? h->proxy_shown : "-",
			     gb_http_fail_name(resp->fail), resp->elapsed * 1000);
		goto out;
	}
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &resp->status);
	resp->body_len = x.body.len;
	resp->body = x.body.data ? gb_buf_steal(&x.body) : strdup("");
	if (!resp->body) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	gb_log_debug("http_request method=%s host=%s proxy=%s status=%ld bytes=%zu ms=%.0f",
		     req->method, h->host, h->proxy ? h->proxy_shown : "-",
		     resp->status, resp->body_len, resp->elapsed * 1000);
out:
	/* the handle keeps a pointer to the list: unhook it before freeing */
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	gb_memzero(x.body.data, x.body.cap);
	gb_buf_free(&x.body);
	gb_buf_free(&url);
	return rc;
}

void gb_http_response_free(struct gb_http_response *r)
{
	if (!r)
		return;
	if (r->body) {
		gb_memzero(r->body, r->body_len);
		free(r->body);
	}
	gb_strv_free(&r->headers);
	memset(r, 0, sizeof(*r));
}

const char *gb_http_response_header(const struct gb_http_response *r,
				    const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < r->headers.n; i++) {
		const char *line = r->headers.v[i];

		if (strncasecmp(line, name, n) == 0 && line[n] == ':') {
			line += n + 1;
			while (*line == ' ' || *line == '\t')
				line++;
			return line;
		}
	}
	return NULL;
}

bool gb_http_fail_retryable(enum gb_http_fail f)
{
	return f == GB_HTTP_FAIL_CONNECT || f == GB_HTTP_FAIL_TIMEOUT ||
	       f == GB_HTTP_FAIL_IO;
}

const char *gb_http_fail_name(enum gb_http_fail f)
{
	switch (f) {
	case GB_HTTP_FAIL_NONE:
		return "none";
	case GB_HTTP_FAIL_CONNECT:
		return "connect";
	case GB_HTTP_FAIL_TIMEOUT:
		return "timeout";
	case GB_HTTP_FAIL_IO:
		return "io";
	case GB_HTTP_FAIL_TLS:
		return "tls";
	case GB_HTTP_FAIL_TOO_LARGE:
		return "too_large";
	case GB_HTTP_FAIL_PROXY:
		return "proxy";
	case GB_HTTP_FAIL_PROXY_AUTH:
		return "proxy_auth";
	case GB_HTTP_FAIL_OTHER:
		break;
	}
	return "other";
}

bool gb_http_url_is_loopback(const char *url)
{
	const char *h = url ? strstr(url, "://") : NULL;
	char host[256];
	struct in_addr a;
	size_t n;

	if (!h)
		return false;
	h += 3;
	if (*h == '[')
		return strncmp(h, "[::1]", 5) == 0 && strchr(":/?#", h[5] ? h[5] : '/');
	n = strcspn(h, ":/?#");
	if (n == 0 || n >= sizeof(host))
		return false;
	memcpy(host, h, n);
	host[n] = '\0';
	if (strcasecmp(host, "localhost") == 0 || strcasecmp(host, "localhost.") == 0)
		return true;
	/* inet_pton takes dotted quads only: "127.1" and names are refused */
	return inet_pton(AF_INET, host, &a) == 1 &&
	       (ntohl(a.s_addr) >> 24) == 127;
}
