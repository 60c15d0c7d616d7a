/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * server.h - the simulator's HTTP listener (libmicrohttpd)
 *
 * One thread per connection (latency injection and slow bodies sleep in the
 * connection's own thread, never under the simulator's lock), HTTP/1.1
 * keep-alive.  Every request is handed to gb_cloudsim_handle().
 */
#ifndef GB_CLOUDSIM_SERVER_H
#define GB_CLOUDSIM_SERVER_H

#include <stdbool.h>

#include "cloudsim.h"
#include "gb_err.h"

typedef struct gb_simsrv gb_simsrv_t;

#define GB_SIMSRV_ADDR_MAX 64

/* A parsed --listen value. */
struct gb_simsrv_addr {
	char host[GB_SIMSRV_ADDR_MAX];	/* numeric IPv4 or IPv6 */
	unsigned port;			/* 0: pick a free one */
	bool v6;
};

/*
 * Parse "127.0.0.1:8773", "[::1]:0" or "localhost:PORT" (taken as
 * 127.0.0.1; no resolver is ever asked).  Refuses anything but a loopback
 * address unless [allow_any].  RET GB_E_OK or GB_E_USAGE with detail.
 */
gb_err_t gb_simsrv_parse_addr(const char *spec, bool allow_any,
			      struct gb_simsrv_addr *out, gb_error_t *err);

/* Bind and start serving [cs] (BORROWED). OUT *out NEW (gb_simsrv_stop). */
gb_err_t gb_simsrv_start(struct gb_cloudsim *cs, const struct gb_simsrv_addr *a,
			 gb_simsrv_t **out, gb_error_t *err);

/* RET the bound port (the chosen one when 0 was asked for). */
unsigned gb_simsrv_port(const gb_simsrv_t *s);

/* Stop listening, wait for the connection threads, free. NULL is fine. */
void gb_simsrv_stop(gb_simsrv_t *s);

#endif /* GB_CLOUDSIM_SERVER_H */
