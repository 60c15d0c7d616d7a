/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testsrv.h - scripted loopback HTTP(S) server for unit tests (libmicrohttpd)
 *
 * A test starts a server on 127.0.0.1 with an ephemeral port and a handler
 * function; the handler sees every request (method, path, query, headers,
 * body) in order and fills the response: status, body, headers, an optional
 * delay (to make the client time out) or "drop" (close the connection
 * without answering).  Every request is recorded for later assertions.
 * One thread per connection: a delayed response does not block others.
 */
#ifndef GB_TESTS_TESTSRV_H
#define GB_TESTS_TESTSRV_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_str.h"

struct testsrv_req {
	char method[16];
	char *path;		/* as received, before '?' */
	char *query;		/* raw query after '?', or "" */
	struct gb_strv headers;	/* "Name: value", in order */
	char *body;		/* NUL-terminated */
	size_t body_len;
};

#define TESTSRV_MAX_HEADERS 8

struct testsrv_resp {
	unsigned status;			/* default 200 */
	struct gb_buf body;			/* default empty */
	const char *hname[TESTSRV_MAX_HEADERS];	/* extra headers (static text) */
	const char *hvalue[TESTSRV_MAX_HEADERS];
	size_t n_headers;
	long delay_ms;		/* wait before answering (ends early on stop) */
	bool drop;		/* close without a response */
};

/* Called for request number [n] (0-based), under the server's lock. */
typedef void (*testsrv_fn)(void *ctx, size_t n, const struct testsrv_req *req,
			   struct testsrv_resp *resp);

struct testsrv;

/* RET NEW server, or NULL (with a message on stderr). */
struct testsrv *testsrv_start(testsrv_fn fn, void *ctx);

/* The same over TLS with the PEM key and certificate given. */
struct testsrv *testsrv_start_tls(testsrv_fn fn, void *ctx, const char *key_pem,
				  const char *cert_pem);

/* RET whether libmicrohttpd was built with TLS support. */
bool testsrv_tls_supported(void);

/* RET BORROWED "http://127.0.0.1:PORT" (https:// for TLS servers). */
const char *testsrv_url(const struct testsrv *s);
unsigned short testsrv_port(const struct testsrv *s);

/* RET the number of requests answered or dropped so far. */
size_t testsrv_count(struct testsrv *s);

/* RET the number of TCP connections accepted so far. */
size_t testsrv_connections(struct testsrv *s);

/*
 * RET BORROWED recorded request [i], or NULL.  Valid until the next request
 * reaches the server or testsrv_stop(): read it when the client is idle.
 */
const struct testsrv_req *testsrv_request(struct testsrv *s, size_t i);

/* RET BORROWED value of header [name] of [r] (case-insensitive) or NULL. */
const char *testsrv_header(const struct testsrv_req *r, const char *name);

/* Stop the server and free everything; NULL is accepted. */
void testsrv_stop(struct testsrv *s);

/* Convenience for handlers: set status and a copy of [body]. */
void testsrv_reply(struct testsrv_resp *resp, unsigned status, const char *body);

#endif /* GB_TESTS_TESTSRV_H */
