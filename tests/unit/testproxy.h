/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testproxy.h - a loopback HTTP CONNECT proxy for unit tests
 *
 * Listens on 127.0.0.1 with an ephemeral port and records the first
 * request line and Proxy-Authorization header of every connection.  A
 * "CONNECT host:port" is answered with the fixed status the proxy was
 * started with (403, 407 with a Proxy-Authenticate challenge, 502 ...), or
 * tunnelled: the proxy connects to 127.0.0.1:port whatever the host (so
 * that names which resolve nowhere work through it), answers 200 and
 * relays bytes both ways until one side closes.  Any other request (a
 * forwarding "GET http://...") is answered 400 (or that status) unserved.
 * It never connects anywhere but the loopback.  One thread per connection.
 */
#ifndef GB_TESTS_TESTPROXY_H
#define GB_TESTS_TESTPROXY_H

#include <stdbool.h>
#include <stddef.h>

struct testproxy;

/* [status] 0: tunnel; else answer every CONNECT with it.  RET NEW or NULL. */
struct testproxy *testproxy_start(unsigned status);

/* RET BORROWED "http://127.0.0.1:PORT". */
const char *testproxy_url(const struct testproxy *p);
unsigned short testproxy_port(const struct testproxy *p);

/* RET the number of requests received so far. */
size_t testproxy_count(struct testproxy *p);

/*
 * Copy request line [i] without its version ("CONNECT host:port") into
 * [buf] of [n] bytes, and its Proxy-Authorization value ("" when none)
 * into [auth] of [an] bytes ([auth] may be NULL).
 * RET false when there is no such request.
 */
bool testproxy_request(struct testproxy *p, size_t i, char *buf, size_t n,
		       char *auth, size_t an);

/* Stop, close every connection and free; NULL is accepted. */
void testproxy_stop(struct testproxy *p);

#endif /* GB_TESTS_TESTPROXY_H */
