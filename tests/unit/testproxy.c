/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testproxy.c - a loopback HTTP CONNECT proxy for unit tests
 *
 * Every wait is a poll() of at most TP_TICK_MS, so that testproxy_stop()
 * ends each thread by a flag rather than by shutting sockets under them.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gb_str.h"
#include "testproxy.h"

#define TP_MAX_CONNS 64
#define TP_HEAD_MAX 8192
#define TP_TICK_MS 50

struct tp_req {
	char line[300];		/* "CONNECT host:port" */
	char auth[256];
};

struct tp_conn {
	struct testproxy *p;
	pthread_t tid;
	int fd;
};

struct testproxy {
	int lfd;
	unsigned status;
	unsigned short port;
	char url[64];
	pthread_t acceptor;
	pthread_mutex_t lock;
	bool stopping;
	struct tp_req reqs[TP_MAX_CONNS];
	size_t n_reqs;
	struct tp_conn conns[TP_MAX_CONNS];
	size_t n_conns;
};

static bool stopping(struct testproxy *p)
{
	bool s;

	pthread_mutex_lock(&p->lock);
	s = p->stopping;
	pthread_mutex_unlock(&p->lock);
	return s;
}

/* RET whether [fd] became readable (or hung up) before the proxy stopped. */
static bool wait_readable(struct testproxy *p, int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	while (!stopping(p)) {
		int r = poll(&pf, 1, TP_TICK_MS);

		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
	return false;
}

static bool send_all(int fd, const char *b, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

static void reply(int fd, unsigned status)
{
	char b[256];

	snprintf(b, sizeof(b), "HTTP/1.1 %u Test\r\nContent-Length: 0\r\n%s\r\n", status,
		 status == 407 ? "Proxy-Authenticate: Basic realm=\"testproxy\"\r\n" : "");
	send_all(fd, b, strlen(b));
}

/* The value of header [name] in the request head [h] into [out]. */
static void header(const char *h, const char *name, char *out, size_t n)
{
	char key[64];
	const char *v;

	snprintf(key, sizeof(key), "\r\n%s:", name);
	out[0] = '\0';
	if (!(v = strcasestr(h, key)))
		return;
	v += strlen(key);
	v += strspn(v, " \t");
	snprintf(out, n, "%.*s", (int)strcspn(v, "\r\n"), v);
}

static int connect_loopback(const char *target)
{
	const char *colon = strrchr(target, ':');
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long port;
	int fd;

	if (!colon || gb_parse_long(colon + 1, 1, 65535, &port))
		return -1;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Copy bytes both ways until either side closes or the proxy stops. */
static void relay(struct testproxy *p, int a, int b)
{
	struct pollfd pf[2] = { { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };
	char buf[16384];

	while (!stopping(p)) {
		int r = poll(pf, 2, TP_TICK_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return;
		for (int i = 0; i < 2 && r > 0; i++) {
			ssize_t got;

			if (!pf[i].revents)
				continue;
			got = recv(pf[i].fd, buf, sizeof(buf), 0);
			if (got <= 0 || !send_all(pf[1 - i].fd, buf, (size_t)got))
				return;
		}
	}
}

static void *serve(void *arg)
{
	struct tp_conn *c = arg;
	struct testproxy *p = c->p;
	char head[TP_HEAD_MAX + 1], method[16], target[256], auth[256];
	const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n";
	char *end = NULL;
	size_t len = 0;
	int up = -1;

	while (!end && len < TP_HEAD_MAX) {
		ssize_t r;

		if (!wait_readable(p, c->fd) ||
		    (r = recv(c->fd, head + len, TP_HEAD_MAX - len, 0)) <= 0)
			goto out;
		len += (size_t)r;
		head[len] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (!end || sscanf(head, "%15s %255s HTTP/1.", method, target) != 2) {
		reply(c->fd, 400);
		goto out;
	}
	header(head, "Proxy-Authorization", auth, sizeof(auth));
	pthread_mutex_lock(&p->lock);
	if (p->n_reqs < TP_MAX_CONNS) {
		struct tp_req *r = &p->reqs[p->n_reqs++];

		snprintf(r->line, sizeof(r->line), "%s %s", method, target);
		gb_strlcpy(r->auth, auth, sizeof(r->auth));
	}
	pthread_mutex_unlock(&p->lock);
	if (strcmp(method, "CONNECT") != 0) {	/* a forwarding request: not ours */
		reply(c->fd, p->status ? p->status : 400);
		goto out;
	}
	if (p->status) {
		reply(c->fd, p->status);
		goto out;
	}
	if ((up = connect_loopback(target)) < 0) {
		reply(c->fd, 502);
		goto out;
	}
	end += 4;
	if (send_all(c->fd, ok, strlen(ok)) &&
	    send_all(up, end, len - (size_t)(end - head)))
		relay(p, c->fd, up);
out:
	if (up >= 0)
		close(up);
	close(c->fd);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct testproxy *p = arg;

	while (wait_readable(p, p->lfd)) {
		int fd = accept(p->lfd, NULL, NULL);
		struct tp_conn *c;

		if (fd < 0)
			continue;
		pthread_mutex_lock(&p->lock);
		c = p->n_conns < TP_MAX_CONNS ? &p->conns[p->n_conns] : NULL;
		if (c) {
			c->p = p;
			c->fd = fd;
		}
		if (c && pthread_create(&c->tid, NULL, serve, c) == 0)
			p->n_conns++;
		else
			close(fd);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

struct testproxy *testproxy_start(unsigned status)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct testproxy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->status = status;
	pthread_mutex_init(&p->lock, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((p->lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(p->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(p->lfd, 16) < 0 ||
	    getsockname(p->lfd, (struct sockaddr *)&sa, &sl) < 0 ||
	    pthread_create(&p->acceptor, NULL, accept_loop, p) != 0) {
		fprintf(stderr, "testproxy: %s\n", strerror(errno));
		if (p->lfd >= 0)
			close(p->lfd);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL;
	}
	p->port = ntohs(sa.sin_port);
	snprintf(p->url, sizeof(p->url), "http://127.0.0.1:%u", p->port);
	return p;
}

const char *testproxy_url(const struct testproxy *p)
{
	return p->url;
}

unsigned short testproxy_port(const struct testproxy *p)
{
	return p->port;
}

size_t testproxy_count(struct testproxy *p)
{
	size_t n;

	pthread_mutex_lock(&p->lock);
	n = p->n_reqs;
	pthread_mutex_unlock(&p->lock);
	return n;
}

bool testproxy_request(struct testproxy *p, size_t i, char *buf, size_t n,
		       char *auth, size_t an)
{
	bool have;

	pthread_mutex_lock(&p->lock);
	have = i < p->n_reqs;
	if (have) {
		gb_strlcpy(buf, p->reqs[i].line, n);
		if (auth)
			gb_strlcpy(auth, p->reqs[i].auth, an);
	}
	pthread_mutex_unlock(&p->lock);
	return have;
}

void testproxy_stop(struct testproxy *p)
{
	size_t n;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->acceptor, NULL);
	/* the acceptor is gone: n_conns no longer changes */
	n = p->n_conns;
	for (size_t i = 0; i < n; i++)
		pthread_join(p->conns[i].tid, NULL);
	close(p->lfd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
