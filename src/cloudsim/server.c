/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * server.c - libmicrohttpd glue: raw URI, headers and body in, response out
 *
 * SigV4 signs the path and query exactly as sent, so the raw request URI is
 * taken from MHD's URI log callback (MHD decodes the URL it passes to the
 * handler).  The body is kept as received: its hash is part of the
 * signature.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_util.h"
#include "server.h"

#define BODY_MAX (1024 * 1024)	/* EC2 Query API bodies are far smaller */
#define CONN_LIMIT 512
#define CONN_TIMEOUT_S 120

struct gb_simsrv {
	struct MHD_Daemon *d;
	struct gb_cloudsim *cs;
	unsigned port;
};

/* Per-request state, from the URI callback to the completion callback. */
struct req {
	char *uri;
	struct gb_buf body;
	bool too_big;
	bool headers_seen;	/* MHD's first call: headers only */
};

struct hdrs {
	struct gb_cs_header *v;
	size_t n, cap;
};

struct slow {
	char *data;
	size_t len;
	double bps;
};

/*****************************************************************************
 *  Addresses
 *****************************************************************************/

static bool is_loopback(const struct gb_simsrv_addr *a)
{
	struct in_addr v4;

	if (a->v6)
		return strcmp(a->host, "::1") == 0;
	return inet_pton(AF_INET, a->host, &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

static gb_err_t split_host_port(const char *spec, struct gb_simsrv_addr *out,
				const char **port, gb_error_t *err)
{
	const char *colon;
	size_t hl;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':')
			return gb_errorf(err, GB_E_USAGE, "--listen %s: expected [IPV6]:PORT", spec);
		hl = (size_t)(close - spec - 1);
		colon = close + 1;
		out->v6 = true;
		spec++;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return gb_errorf(err, GB_E_USAGE, "--listen %s: expected ADDRESS:PORT", spec);
		hl = (size_t)(colon - spec);
	}
	if (hl == 0 || hl >= sizeof(out->host))
		return gb_errorf(err, GB_E_USAGE, "--listen: bad address in '%s'", spec);
	memcpy(out->host, spec, hl);
	out->host[hl] = '\0';
	*port = colon + 1;
	return GB_E_OK;
}

gb_err_t gb_simsrv_parse_addr(const char *spec, bool allow_any,
			      struct gb_simsrv_addr *out, gb_error_t *err)
{
	unsigned char buf[sizeof(struct in6_addr)];
	const char *port = NULL;
	long p;

	memset(out, 0, sizeof(*out));
	if (split_host_port(spec, out, &port, err))
		return GB_E_USAGE;
	if (!out->v6 && strcmp(out->host, "localhost") == 0)
		gb_strlcpy(out->host, "127.0.0.1", sizeof(out->host));
	if (inet_pton(out->v6 ? AF_INET6 : AF_INET, out->host, buf) != 1)
		return gb_errorf(err, GB_E_USAGE, "--listen %s: '%s' is not a numeric IP address",
				 spec, out->host);
	if (gb_parse_long(port, 0, 65535, &p) != GB_E_OK)
		return gb_errorf(err, GB_E_USAGE, "--listen %s: bad port '%s'", spec, port);
	out->port = (unsigned)p;
	if (!allow_any && !is_loopback(out))
		return gb_errorf(err, GB_E_USAGE,
				 "--listen %s: refusing a non-loopback address (use --allow-non-loopback to override)",
				 spec);
	return GB_E_OK;
}

/*****************************************************************************
 *  MHD callbacks
 *****************************************************************************/

static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = calloc(1, sizeof(*r));

	(void)cls;
	(void)c;
	if (r && !(r->uri = strdup(uri ? uri : "/"))) {
		free(r);
		r = NULL;
	}
	return r;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (r) {
		free(r->uri);
		gb_buf_free(&r->body);
		free(r);
		*con_cls = NULL;
	}
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind,
				  const char *key, const char *value)
{
	struct hdrs *h = cls;
	struct gb_cs_header *v;

	(void)kind;
	v = gb_grow(h->v, &h->cap, h->n + 1, sizeof(*v));
	if (!v)
		return MHD_NO;
	h->v = v;
	h->v[h->n].name = key;
	h->v[h->n++].value = value ? value : "";
	return MHD_YES;
}

static void peer_of(struct MHD_Connection *c, char *buf, size_t n)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	gb_strlcpy(buf, "-", n);
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
			  buf, (socklen_t)n);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  buf, (socklen_t)n);
}

/* Trickle the body: small chunks, each after the time it takes at [bps]. */
static ssize_t slow_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct slow *s = cls;
	size_t chunk = (size_t)(s->bps / 20) + 1;

	if (pos >= s->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (chunk > max)
		chunk = max;
	if (chunk > s->len - pos)
		chunk = s->len - (size_t)pos;
	gb_time_sleep((double)chunk / s->bps);
	memcpy(buf, s->data + pos, chunk);
	return (ssize_t)chunk;
}

static void slow_free(void *cls)
{
	struct slow *s = cls;

	free(s->data);
	free(s);
}

static struct MHD_Response *make_response(struct gb_cs_response *cr)
{
	size_t len = cr->body.len;
	char *data = gb_buf_steal(&cr->body);
	struct slow *s;

	if (!data)
		data = strdup("");
	if (!data)
		return NULL;
	if (cr->slow_bps <= 0 || len == 0)
		return MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(data);
		return NULL;
	}
	s->data = data;
	s->len = len;
	s->bps = cr->slow_bps;
	return MHD_create_response_from_callback(len, 4096, slow_reader, s, slow_free);
}

static enum MHD_Result respond(struct MHD_Connection *c, struct gb_cs_response *cr)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;

	if (cr->close)
		return MHD_NO;	/* fault: close the connection, send nothing */
	resp = make_response(cr);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				cr->content_type ? cr->content_type : "text/plain");
	MHD_add_response_header(resp, "x-amzn-RequestId", cr->request_id);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_SERVER, "AmazonEC2");
	rc = MHD_queue_response(c, (unsigned)cr->status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result serve(struct gb_simsrv *s, struct MHD_Connection *c,
			     const char *method, struct req *r)
{
	struct gb_cs_request in = { 0 };
	struct gb_cs_response out;
	struct hdrs h = { 0 };
	char *q = strchr(r->uri, '?'), peer[64];
	enum MHD_Result rc;

	memset(&out, 0, sizeof(out));
	if (q)
		*q++ = '\0';
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, &h);
	peer_of(c, peer, sizeof(peer));
	in.method = method;
	in.path = r->uri;
	in.query = q;
	in.headers = h.v;
	in.nheaders = h.n;
	in.body = r->body.data;
	in.body_len = r->body.len;
	in.peer = peer;
	if (r->too_big) {
		out.status = 413;
		out.content_type = "text/plain";
		gb_buf_puts(&out.body, "request body too large\n");
	} else {
		gb_cloudsim_handle(s->cs, &in, &out);
	}
	rc = respond(c, &out);
	gb_cs_response_free(&out);
	free(h.v);
	return rc;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c,
				      const char *url, const char *method,
				      const char *version, const char *upload,
				      size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;

	(void)url;
	(void)version;
	if (!r)
		return MHD_NO;	/* out of memory in uri_logger */
	if (!r->headers_seen) {
		r->headers_seen = true;
		return MHD_YES;
	}
	if (*upload_size) {
		if (r->body.len + *upload_size > BODY_MAX)
			r->too_big = true;
		else
			gb_buf_append(&r->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (gb_buf_failed(&r->body))
		return MHD_NO;
	return serve(cls, c, method, r);
}

/* libmicrohttpd's MHD_OPTION_EXTERNAL_LOGGER: [fmt] is its own printf format */
__attribute__((format(printf, 2, 0)))
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	gb_log_warn("http %s", msg);
}

/*****************************************************************************
 *  Start and stop
 *****************************************************************************/

gb_err_t gb_simsrv_start(struct gb_cloudsim *cs, const struct gb_simsrv_addr *a,
			 gb_simsrv_t **out, gb_error_t *err)
{
	struct sockaddr_in6 sa6 = { 0 };
	struct sockaddr_in sa4 = { 0 };
	const struct sockaddr *sa = (const struct sockaddr *)&sa4;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *info;
	gb_simsrv_t *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (a->v6) {
		sa6.sin6_family = AF_INET6;
		sa6.sin6_port = htons((uint16_t)a->port);
		inet_pton(AF_INET6, a->host, &sa6.sin6_addr);
		sa = (const struct sockaddr *)&sa6;
		flags |= MHD_USE_IPv6;
	} else {
		sa4.sin_family = AF_INET;
		sa4.sin_port = htons((uint16_t)a->port);
		inet_pton(AF_INET, a->host, &sa4.sin_addr);
	}
	s->cs = cs;
	s->d = MHD_start_daemon(flags, (uint16_t)a->port, NULL, NULL, access_handler, s,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
				MHD_OPTION_SOCK_ADDR, sa,
				MHD_OPTION_URI_LOG_CALLBACK, uri_logger, NULL,
				MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				MHD_OPTION_END);
	if (!s->d) {
		free(s);
		return gb_errorf(err, GB_E_IO, "cannot listen on %s%s%s:%u: %s",
				 a->v6 ? "[" : "", a->host, a->v6 ? "]" : "", a->port,
				 errno ? strerror(errno) : "libmicrohttpd failed");
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : a->port;
	*out = s;
	return GB_E_OK;
}

unsigned gb_simsrv_port(const gb_simsrv_t *s)
{
	return s->port;
}

void gb_simsrv_stop(gb_simsrv_t *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	free(s);
}
