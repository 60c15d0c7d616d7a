/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testsrv.c - scripted loopback HTTP(S) server for unit tests
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "testsrv.h"

#if MHD_VERSION < 0x00097002
typedef int testsrv_result_t;
#else
typedef enum MHD_Result testsrv_result_t;
#endif

struct testsrv {
	struct MHD_Daemon *d;
	testsrv_fn fn;
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping;
	struct testsrv_req *reqs;
	size_t n, cap;
	size_t connections;
	unsigned short port;
	char url[64];
};

/* Per-request state (MHD's *con_cls): the raw URI and the body so far. */
struct pending {
	char *uri;
	struct gb_buf body;
	bool started;	/* the first call only announces the headers */
};

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct pending *p = calloc(1, sizeof(*p));

	(void)cls;
	(void)c;
	if (p)
		p->uri = strdup(uri ? uri : "");
	return p;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct pending *p = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (p) {
		free(p->uri);
		gb_buf_free(&p->body);
		free(p);
		*con_cls = NULL;
	}
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct testsrv *s = cls;

	(void)c;
	(void)socket_ctx;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		pthread_mutex_lock(&s->lock);
		s->connections++;
		pthread_mutex_unlock(&s->lock);
	}
}

static testsrv_result_t collect_header(void *cls, enum MHD_ValueKind kind,
				       const char *key, const char *value)
{
	struct gb_strv *sv = cls;
	char line[8192];

	(void)kind;
	snprintf(line, sizeof(line), "%s: %s", key, value ? value : "");
	gb_strv_add(sv, line);
	return MHD_YES;
}

/* Record the finished request; RET its index, or -1 when out of memory. */
static long record(struct testsrv *s, struct MHD_Connection *c,
		   const char *method, struct pending *p)
{
	struct testsrv_req *r;
	char *q;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		struct testsrv_req *nv = realloc(s->reqs, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		s->reqs = nv;
		s->cap = ncap;
	}
	r = &s->reqs[s->n];
	memset(r, 0, sizeof(*r));
	snprintf(r->method, sizeof(r->method), "%s", method);
	r->path = strdup(p->uri ? p->uri : "");
	q = r->path ? strchr(r->path, '?') : NULL;
	if (q)
		*q++ = '\0';
	r->query = strdup(q ? q : "");
	MHD_get_connection_values(c, MHD_HEADER_KIND, collect_header, &r->headers);
	r->body_len = p->body.len;
	r->body = p->body.data ? gb_buf_steal(&p->body) : strdup("");
	return (long)s->n++;
}

static void wait_delay(struct testsrv *s, long ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!s->stopping &&
	       pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT)
		;
}

static testsrv_result_t on_request(void *cls, struct MHD_Connection *c,
				   const char *url, const char *method,
				   const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	struct testsrv *s = cls;
	struct pending *p = *con_cls;
	struct testsrv_resp resp;
	struct MHD_Response *r;
	testsrv_result_t ret;
	long idx;

	(void)url;
	(void)version;
	if (!p)
		return MHD_NO;
	if (!p->started) {
		p->started = true;
		return MHD_YES;
	}
	if (*upload_size) {
		gb_buf_append(&p->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	memset(&resp, 0, sizeof(resp));
	resp.status = 200;
	pthread_mutex_lock(&s->lock);
	idx = record(s, c, method, p);
	if (idx >= 0 && s->fn)
		s->fn(s->ctx, (size_t)idx, &s->reqs[idx], &resp);
	if (resp.delay_ms > 0)
		wait_delay(s, resp.delay_ms);
	pthread_mutex_unlock(&s->lock);
	if (idx < 0 || resp.drop) {
		gb_buf_free(&resp.body);
		return MHD_NO;
	}
	static char empty[1];

	r = MHD_create_response_from_buffer(resp.body.len,
					    resp.body.data ? resp.body.data : empty,
					    MHD_RESPMEM_MUST_COPY);
	gb_buf_free(&resp.body);
	if (!r)
		return MHD_NO;
	for (size_t i = 0; i < resp.n_headers; i++)
		MHD_add_response_header(r, resp.hname[i], resp.hvalue[i]);
	ret = MHD_queue_response(c, resp.status, r);
	MHD_destroy_response(r);
	return ret;
}

static struct testsrv *start(testsrv_fn fn, void *ctx, const char *key,
			     const char *cert)
{
	struct testsrv *s = calloc(1, sizeof(*s));
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	if (!s)
		return NULL;
	s->fn = fn;
	s->ctx = ctx;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (key) {
		s->d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL,
					on_request, s,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
					MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
					MHD_OPTION_HTTPS_MEM_KEY, key,
					MHD_OPTION_HTTPS_MEM_CERT, cert,
					MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
					MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
					MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
					MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
					MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
					MHD_OPTION_END);
	}
	if (!s->d) {
		fprintf(stderr, "testsrv: cannot start libmicrohttpd on 127.0.0.1\n");
		testsrv_stop(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%u",
		 key ? "https" : "http", s->port);
	return s;
}

struct testsrv *testsrv_start(testsrv_fn fn, void *ctx)
{
	return start(fn, ctx, NULL, NULL);
}

struct testsrv *testsrv_start_tls(testsrv_fn fn, void *ctx, const char *key_pem,
				  const char *cert_pem)
{
	return start(fn, ctx, key_pem, cert_pem);
}

bool testsrv_tls_supported(void)
{
	return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

const char *testsrv_url(const struct testsrv *s)
{
	return s->url;
}

unsigned short testsrv_port(const struct testsrv *s)
{
	return s->port;
}

size_t testsrv_count(struct testsrv *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n;
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t testsrv_connections(struct testsrv *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->connections;
	pthread_mutex_unlock(&s->lock);
	return n;
}

const struct testsrv_req *testsrv_request(struct testsrv *s, size_t i)
{
	const struct testsrv_req *r;

	pthread_mutex_lock(&s->lock);
	r = i < s->n ? &s->reqs[i] : NULL;
	pthread_mutex_unlock(&s->lock);
	return r;
}

const char *testsrv_header(const struct testsrv_req *r, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < r->headers.n; i++) {
		if (strncasecmp(r->headers.v[i], name, n) == 0 &&
		    r->headers.v[i][n] == ':')
			return r->headers.v[i] + n + 2;
	}
	return NULL;
}

void testsrv_stop(struct testsrv *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->d)
		MHD_stop_daemon(s->d);
	for (size_t i = 0; i < s->n; i++) {
		free(s->reqs[i].path);
		free(s->reqs[i].query);
		free(s->reqs[i].body);
		gb_strv_free(&s->reqs[i].headers);
	}
	free(s->reqs);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void testsrv_reply(struct testsrv_resp *resp, unsigned status, const char *body)
{
	resp->status = status;
	gb_buf_reset(&resp->body);
	if (body)
		gb_buf_puts(&resp->body, body);
}
