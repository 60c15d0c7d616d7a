/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_http.h - the HTTP seam: the only code of gpuburst that uses libcurl
 *
 * A gb_http_t is a client for one endpoint (scheme://host[:port][/path]).
 * It keeps one libcurl easy handle, so consecutive requests to the endpoint
 * reuse the connection (keep-alive, TLS session).  Every request has a
 * connect timeout and a total timeout, TLS peer and host verification are
 * always on (the CA bundle is configurable), CURLOPT_NOSIGNAL is set (no
 * SIGALRM: safe with threads), redirects are not followed, only http and
 * https are allowed, and the response body is capped.
 *
 * Proxy: only gb_http_opts.proxy is ever used; libcurl's environment
 * variables (http_proxy, HTTPS_PROXY, all_proxy, no_proxy ...) are always
 * ignored, so a program behaves the same whatever environment it inherits.
 * Whether a client uses the proxy is decided once, by gb_http_create(): not
 * when gb_http_opts.no_proxy is set, not for a loopback endpoint
 * (gb_http_url_is_loopback()) and not for a host matched by
 * gb_http_opts.no_proxy_hosts; gb_http_proxy() tells.  Through a proxy every
 * request, to an http:// endpoint too, goes through a CONNECT tunnel: the
 * endpoint gets the request byte for byte as signed, and a refusal is the
 * proxy's answer to CONNECT, never mistaken for the endpoint's.  Messages
 * name the proxy with its password replaced by "***".
 *
 * A gb_http_t is not thread-safe: use one per thread.  No curl type or
 * header is visible here.  Transport failures are translated in this module
 * into GB_E_TIMEOUT / GB_E_HTTP plus a gb_http_fail kind (which the retry
 * logic consults) and a one-line detail; an HTTP response with any status
 * is a success at this level.  Request and response headers and bodies are
 * never logged (they carry signatures and tokens); one debug line per
 * request gives method, host, path, status, size and time.
 */
#ifndef GB_LIBCLOUD_GB_HTTP_H
#define GB_LIBCLOUD_GB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

#define GB_HTTP_DEFAULT_CONNECT_TIMEOUT_MS 5000L
#define GB_HTTP_DEFAULT_TIMEOUT_MS 30000L
#define GB_HTTP_DEFAULT_MAX_RESPONSE (8u << 20)	/* 8 MiB */

struct gb_http_opts {
	long connect_timeout_ms;	/* 0: GB_HTTP_DEFAULT_CONNECT_TIMEOUT_MS */
	long timeout_ms;		/* whole request; 0: default */
	size_t max_response_bytes;	/* body cap; 0: default */
	const char *ca_bundle;		/* PEM file; NULL: system store (it
					 * also verifies an https:// proxy) */
	/*
	 * "http://[user[:password]@]host[:port]" or https://; NULL or "":
	 * connect directly.  Without a port, libcurl's default (1080 for
	 * http://, 443 for https://).
	 */
	const char *proxy;
	/*
	 * Hosts reached without the proxy, comma-separated as for curl's
	 * CURLOPT_NOPROXY: a name matches itself and every name under it
	 * ("example.com" and ".example.com" both match "ec2.example.com"),
	 * an IP address only itself, "*" everything.  NULL: none.
	 */
	const char *no_proxy_hosts;
	bool no_proxy;			/* never use the proxy (IMDS) */
	/*
	 * An IPv4 or IPv6 literal: connect from this local address
	 * (CURLOPT_INTERFACE "host!IP").  NULL or "": the kernel's choice.
	 * The simulator's IMDS tells instances apart by it, as EC2 does by
	 * the network interface.
	 */
	const char *local_address;
	const char *user_agent;		/* NULL: "gpuburst/<version>" */
};

typedef struct gb_http gb_http_t;

struct gb_http_header {
	const char *name;
	const char *value;
};

struct gb_http_request {
	const char *method;		/* "GET", "POST", "PUT", "DELETE" */
	/*
	 * Absolute, already percent-encoded path with optional "?query",
	 * sent as is; NULL: the endpoint's own path (gb_http_base_path()).
	 */
	const char *path;
	const struct gb_http_header *headers;	/* sent as given */
	size_t n_headers;
	const void *body;		/* sent for any method when non-NULL */
	size_t body_len;
};

/* Why a request got no usable response. */
enum gb_http_fail {
	GB_HTTP_FAIL_NONE = 0,
	GB_HTTP_FAIL_CONNECT,	/* resolve/connect failed or refused */
	GB_HTTP_FAIL_TIMEOUT,	/* connect or total timeout */
	GB_HTTP_FAIL_IO,	/* connection lost while sending/receiving */
	GB_HTTP_FAIL_TLS,	/* handshake or certificate verification */
	GB_HTTP_FAIL_TOO_LARGE,	/* body over max_response_bytes */
	GB_HTTP_FAIL_PROXY,	/* the proxy refused the tunnel (CONNECT 403 ...) */
	GB_HTTP_FAIL_PROXY_AUTH,	/* the proxy wants credentials (407) */
	GB_HTTP_FAIL_OTHER,	/* bad URL, out of memory, ... */
};

/*
 * A response.  Zero-initialise; gb_http_response_free() wipes the body
 * (it may hold credentials) and releases everything.
 */
struct gb_http_response {
	long status;			/* HTTP status; 0 when none */
	char *body;			/* NEW, NUL-terminated, may be "" */
	size_t body_len;
	struct gb_strv headers;		/* NEW "name: value" of the final response */
	enum gb_http_fail fail;
	double elapsed;			/* seconds */
};

/*
 * Initialise libcurl (curl_global_init) once per process.  Programs call it
 * early in main(), before starting threads; gb_http_create() calls it too.
 * RET GB_E_OK or GB_E_HTTP.
 */
gb_err_t gb_http_global_init(gb_error_t *err);

/*
 * Create a client for [base_url] (http:// or https://, no query or
 * fragment, no user:password).  [o] may be NULL for the defaults; what
 * the client keeps of it is copied (the caller's strings may go away).
 * A proxy URL is checked even when this endpoint does not use it.
 * OUT *out NEW, gb_http_destroy().
 * RET GB_E_OK; GB_E_INVALID for an unusable URL, proxy URL, local address
 * or option (the message shows the proxy's password as "***"); GB_E_NOMEM.
 */
gb_err_t gb_http_create(const char *base_url, const struct gb_http_opts *o,
			gb_http_t **out, gb_error_t *err);

/* Close the connection and free [h]; NULL is accepted. */
void gb_http_destroy(gb_http_t *h);

/*
 * RET BORROWED the Host header value curl sends: the host, with ":port"
 * when the port is not the scheme's default ("127.0.0.1:8080"); IPv6
 * literals keep their brackets.  Sign with this value.
 */
const char *gb_http_host(const gb_http_t *h);

/* RET BORROWED the endpoint's path ("/" when it had none). */
const char *gb_http_base_path(const gb_http_t *h);

/* RET BORROWED the endpoint URL as given to gb_http_create(). */
const char *gb_http_url(const gb_http_t *h);

/*
 * RET BORROWED the proxy [h]'s requests go through, its password shown as
 * "***" ("http://user:***@proxy:3128"), or NULL when they go direct.
 */
const char *gb_http_proxy(const gb_http_t *h);

/*
 * Perform [req].  [resp] is reset first and must be freed by the caller
 * with gb_http_response_free() whatever this returns.
 * RET GB_E_OK when a response arrived (any status, body within the cap);
 * GB_E_TIMEOUT (resp->fail TIMEOUT); GB_E_HTTP for every other transport
 * failure (resp->fail says which); GB_E_INVALID for a bad request.
 */
gb_err_t gb_http_do(gb_http_t *h, const struct gb_http_request *req,
		    struct gb_http_response *resp, gb_error_t *err);

void gb_http_response_free(struct gb_http_response *r);

/*
 * RET BORROWED value of response header [name] (case-insensitive; the
 * first one if repeated), or NULL.
 */
const char *gb_http_response_header(const struct gb_http_response *r,
				    const char *name);

/*
 * RET whether a failure of kind [f] may succeed if the request is sent
 * again (connect, timeout, I/O; a proxy that cannot be reached, or that
 * answers CONNECT with 5xx, is a connect failure) as opposed to needing a
 * fix (TLS, size, URL, a proxy that refuses the tunnel or wants other
 * credentials).  Only idempotent requests should be resent.
 */
bool gb_http_fail_retryable(enum gb_http_fail f);

/*
 * RET whether [url]'s host is this machine by exact match: "localhost"
 * (or "localhost."), an IPv4 literal in 127.0.0.0/8, or [::1].  A prefix
 * is not enough: "localhost.example.com" and "127.example.com" are not
 * loopback.  Loopback endpoints (the simulator) never use a proxy.
 */
bool gb_http_url_is_loopback(const char *url);

/* RET static name of [f] ("timeout", "proxy_auth"), for logs. */
const char *gb_http_fail_name(enum gb_http_fail f);

#endif /* GB_LIBCLOUD_GB_HTTP_H */
