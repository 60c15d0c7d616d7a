/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.c - gpuburstctl metrics serve: the metrics, and the status page,
 * over HTTP
 *
 * Read-only: GET and HEAD, nothing else, and no path changes anything
 * (approving stays in the CLI, where the real uid is known).
 *
 *   /metrics                   the Prometheus text (cmd_metrics.c)
 *   / and the page's files     with metrics.status_page (www/, in the binary)
 *   /api/status                the page's document (status.c), JSON
 *   /api/events                the same as Server-Sent Events: one `status`
 *                              event at connect, another each time more
 *                              than its time changed (looked at every
 *                              second), a comment every 5 s in between
 *   /api/requests/ID.svg       a request's timeline (`requests show --svg`)
 *
 * It listens on metrics.listen: a loopback TCP address by default, or a
 * unix socket (unix:/PATH).  With metrics.token_file every request for
 * data (/metrics, /api/...) must bear the token (Authorization: Bearer, or
 * ?token= for what a browser loads by itself: the page passes its own on);
 * the page's own files, which hold none, are served without it.
 *
 * libmicrohttpd runs a thread per connection (an event stream holds its
 * thread); one mutex serializes everything that touches the configuration,
 * the state handle and the last document, so the handle is only ever used
 * by one thread at a time.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <microhttpd.h>

#include "ctl.h"
#include "gb_log.h"
#include "gb_util.h"

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define KEEPALIVE_S 5			/* an event stream's comment when idle */
#define CONNECTIONS_MAX 32u
#define TOKEN_MIN 16
#define TOKEN_MAX 256

/* Every answer: nothing cached, nothing loaded from elsewhere, not framed. */
static const char *const security_headers[][2] = {
	{ "Cache-Control", "no-store" },
	{ "X-Content-Type-Options", "nosniff" },
	{ "Referrer-Policy", "no-referrer" },
	{ "X-Frame-Options", "DENY" },
	{ "Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "
	  "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
	  "frame-ancestors 'none'" },
};

struct server {
	struct ctl *ctl;
	const struct gb_conf *conf;
	const char *token;		/* NULL: none asked */
	pthread_mutex_t lock;		/* all below, ctl and its state handle */
	pthread_cond_t changed;		/* a new document, or the stop */
	char *doc;			/* the last status document, or NULL */
	char *doc_same;			/* the same without its time */
	unsigned long gen;		/* its number */
	unsigned listeners;		/* open event streams */
	bool stopping;
	unsigned long scrapes, failures;
};

static volatile sig_atomic_t stop_serving;

static void on_signal(int sig)
{
	(void)sig;
	stop_serving = 1;
}

static void add_headers(struct MHD_Response *r, const char *type)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	for (size_t i = 0; i < GB_ARRAY_LEN(security_headers); i++)
		MHD_add_response_header(r, security_headers[i][0], security_headers[i][1]);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_headers(r, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"gpuburst\"");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8", text, strlen(text));
}

/* [a] equals [b], in a time that does not tell how much of it did. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return d == 0;
}

static bool authorized(const struct server *s, struct MHD_Connection *conn)
{
	const char *h, *q;

	if (!s->token)
		return true;
	h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (h && strncasecmp(h, "Bearer ", 7) == 0 && same_secret(h + 7, s->token))
		return true;
	q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
	return q && same_secret(q, s->token);
}

/* With the lock: the state handle (the file may appear after the start), now. */
static gb_state_t *state_now(struct server *s)
{
	gb_err_t rc;

	s->ctl->now = gb_time_now();
	if (!s->ctl->st)
		ctl_state(s->ctl, false, &rc);
	return s->ctl->st;
}

/* With the lock: compute the document; a new one is published to the streams. */
static void publish(struct server *s)
{
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t err = { 0 };
	json_t *doc = NULL;
	char *text;

	if (ctl_status_json(s->ctl, s->conf, state_now(s), &doc, &err)) {
		s->failures++;
		gb_log_error("status_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
		return;
	}
	/* the same but for its time: not new */
	json_object_del(doc, "now");
	text = json_dumps(doc, JSON_COMPACT);	/* one line: an event's data */
	if (!text || (s->doc && s->doc_same && strcmp(text, s->doc_same) == 0)) {
		json_decref(doc);
		free(text);
		return;
	}
	free(s->doc_same);
	s->doc_same = text;
	json_object_set_new(doc, "now", json_real(s->ctl->now));
	free(s->doc);
	s->doc = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	s->gen++;
	pthread_cond_broadcast(&s->changed);
}

/*****************************************************************************
 *  /api/events
 *****************************************************************************/

struct stream {
	struct server *s;
	unsigned long seen;		/* the document number last sent */
	bool started;
	struct gb_buf out;		/* what is still to be sent, from [off] */
	size_t off;
};

/* libmicrohttpd's content reader: blocks until there is something to send. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *c = cls;
	struct server *s = c->s;
	size_t n;

	(void)pos;
	while (c->off >= c->out.len) {
		struct timespec until;
		bool idle = false;

		gb_buf_reset(&c->out);
		c->off = 0;
		pthread_mutex_lock(&s->lock);
		if (!c->started) {
			c->started = true;
			gb_buf_puts(&c->out, "retry: 2000\n\n");
			publish(s);
		} else if (s->gen == c->seen && !s->stopping) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += KEEPALIVE_S;
			idle = pthread_cond_timedwait(&s->changed, &s->lock, &until) == ETIMEDOUT;
		}
		if (s->stopping) {
			pthread_mutex_unlock(&s->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (s->doc && s->gen != c->seen) {
			gb_buf_printf(&c->out, "event: status\ndata: %s\n\n", s->doc);
			c->seen = s->gen;
		} else if (idle) {
			gb_buf_puts(&c->out, ": idle\n\n");
		}
		pthread_mutex_unlock(&s->lock);
		if (gb_buf_failed(&c->out))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = c->out.len - c->off < max ? c->out.len - c->off : max;
	memcpy(buf, c->out.data + c->off, n);
	c->off += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *c = cls;

	pthread_mutex_lock(&c->s->lock);
	c->s->listeners--;
	pthread_mutex_unlock(&c->s->lock);
	gb_buf_free(&c->out);
	free(c);
}

static enum MHD_Result events(struct server *s, struct MHD_Connection *conn)
{
	struct stream *c = calloc(1, sizeof(*c));
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!c)
		return MHD_NO;
	c->s = s;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, c,
					      stream_free);
	if (!r) {
		free(c);
		return MHD_NO;
	}
	pthread_mutex_lock(&s->lock);
	s->listeners++;
	pthread_mutex_unlock(&s->lock);
	add_headers(r, "text/event-stream; charset=utf-8");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/*****************************************************************************
 *  The other paths
 *****************************************************************************/

static enum MHD_Result metrics(struct server *s, struct MHD_Connection *conn)
{
	struct gb_buf b = GB_BUF_INIT;
	char lq[GB_ERROR_TEXT_MAX + 8];
	gb_error_t err = { 0 };
	enum MHD_Result ret;
	gb_err_t rc;

	pthread_mutex_lock(&s->lock);
	s->scrapes++;
	rc = ctl_metrics_text(s->ctl, s->conf, state_now(s), &b, &err);
	if (rc)
		s->failures++;
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		gb_log_error("metrics_failed error=%s", gb_log_q(lq, sizeof(lq), err.text));
		gb_buf_free(&b);
		gb_buf_printf(&b, "metrics failed: %s\n", err.text);
		ret = reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
			    b.data ? b.data : "", b.len);
	} else {
		ret = reply(conn, MHD_HTTP_OK, METRICS_TYPE, b.data ? b.data : "", b.len);
	}
	gb_buf_free(&b);
	return ret;
}

static enum MHD_Result status(struct server *s, struct MHD_Connection *conn)
{
	enum MHD_Result ret;
	char *doc;

	pthread_mutex_lock(&s->lock);
	publish(s);
	doc = s->doc ? strdup(s->doc) : NULL;
	pthread_mutex_unlock(&s->lock);
	if (!doc)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "the status could not be computed (see the log)\n");
	ret = reply(conn, MHD_HTTP_OK, "application/json", doc, strlen(doc));
	free(doc);
	return ret;
}

/* /api/requests/ID.svg */
static enum MHD_Result picture(struct server *s, struct MHD_Connection *conn, const char *name)
{
	struct gb_buf b = GB_BUF_INIT;
	char id[GB_REQUEST_ID_LEN + 1], text[GB_ERROR_TEXT_MAX + 32];
	gb_error_t err = { 0 };
	enum MHD_Result ret;
	gb_state_t *st;
	gb_err_t rc = GB_E_NOTFOUND;
	size_t n = ctl_id_len(name);

	if (n != GB_REQUEST_ID_LEN || strcmp(name + n, ".svg") != 0)
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found: a picture is /api/requests/ID.svg, ID a request's\n");
	memcpy(id, name, n);
	id[n] = '\0';
	pthread_mutex_lock(&s->lock);
	st = state_now(s);
	if (st)
		rc = ctl_request_svg(s->ctl, st, id, &b, &err);
	else
		gb_errorf(&err, rc, "no request %s (no state file yet)", id);
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		snprintf(text, sizeof(text), "%s\n", err.text);
		ret = reply_text(conn, rc == GB_E_NOTFOUND ? MHD_HTTP_NOT_FOUND
							   : MHD_HTTP_INTERNAL_SERVER_ERROR, text);
	} else {
		ret = reply(conn, MHD_HTTP_OK, "image/svg+xml", b.data ? b.data : "", b.len);
	}
	gb_buf_free(&b);
	return ret;
}

static const struct ctl_www_file *www_file(const char *url)
{
	if (url[0] != '/')
		return NULL;
	if (strcmp(url, "/") == 0)
		url = "/index.html";
	for (const struct ctl_www_file *f = ctl_www_files; f->name; f++)
		if (strcmp(url + 1, f->name) == 0)
			return f;
	return NULL;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *data,
			       size_t *data_len, void **con_cls)
{
	struct server *s = cls;
	const struct ctl_www_file *f;

	(void)version;
	(void)data;
	if (!*con_cls) {	/* the headers: answer once the (empty) body is in */
		*con_cls = s;
		return MHD_YES;
	}
	if (*data_len) {	/* a body: refused below, read and dropped */
		*data_len = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "read-only: GET and HEAD only; nothing can be changed here\n");
	/* the page's own files hold no data: a browser loads them without the token */
	if (s->conf->metrics.status_page && (f = www_file(url)))
		return reply(conn, MHD_HTTP_OK, f->type, f->data, f->len);
	if (!authorized(s, conn))
		return reply_text(conn, MHD_HTTP_UNAUTHORIZED,
				  "a token is needed (metrics.token_file): Authorization: Bearer TOKEN, or ?token=TOKEN\n");
	if (strcmp(url, "/metrics") == 0)
		return metrics(s, conn);
	if (!s->conf->metrics.status_page)
		return reply_text(conn, MHD_HTTP_NOT_FOUND,
				  "not found: the metrics are at /metrics (the status page is off: metrics.status_page)\n");
	if (strcmp(url, "/api/status") == 0)
		return status(s, conn);
	if (strcmp(url, "/api/events") == 0)
		return events(s, conn);
	if (strncmp(url, "/api/requests/", 14) == 0)
		return picture(s, conn, url + 14);
	return reply_text(conn, MHD_HTTP_NOT_FOUND,
			  "not found: the status page is at /, the metrics at /metrics\n");
}

/*****************************************************************************
 *  Listening, the token
 *****************************************************************************/

/* [listen] (gb_conf_listen_parse: a checked literal) as a socket address. */
static bool listen_addr(const char *listen, struct sockaddr_storage *ss, char *host,
			size_t hn, unsigned *port)
{
	memset(ss, 0, sizeof(*ss));
	if (!gb_conf_listen_parse(listen, host, hn, port))
		return false;
	if (strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)*port);
		return inet_pton(AF_INET6, host, &a->sin6_addr) == 1;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)*port);
		return inet_pton(AF_INET, host, &a->sin_addr) == 1;
	}
}

/*
 * A listening unix socket at [path], mode 0660 (the token, when asked,
 * still applies).  A socket file nobody answers on is a stale one and
 * replaced; anything else there is left alone and refused.  RET the fd,
 * or -1 with [err] set.
 */
static int unix_listen(const char *path, gb_error_t *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat sb;
	int fd;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			gb_errorf(err, GB_E_IO, "%s is %s, not a socket: not replaced", path,
				  S_ISREG(sb.st_mode) ? "a regular file" : gb_file_kind(sb.st_mode));
			return -1;
		}
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		    connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			gb_errorf(err, GB_E_BUSY, "%s: %s", path, fd < 0 ? strerror(errno) :
				  "something answers there already (another metrics serve?)");
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
		unlink(path);	/* stale: nobody listens */
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || chmod(path, 0660) != 0 ||
	    listen(fd, 64) != 0) {
		gb_errorf(err, GB_E_IO, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * The token of metrics.token_file: its first line, 16 to 256 printable
 * characters without blanks; a file every user may read is refused (asked
 * of the file opened, not of its name again).
 * OUT *token NEW.
 */
static gb_err_t token_read(const char *path, char **token, gb_error_t *err)
{
	char data[TOKEN_MAX + 2];
	struct stat sb;
	ssize_t got;
	size_t n;
	gb_err_t rc;
	int fd;

	*token = NULL;
	if ((rc = gb_file_open(path, 4096, &fd, NULL, err)))
		return rc;
	if (fstat(fd, &sb) == 0 && (sb.st_mode & S_IROTH)) {
		close(fd);
		return gb_errorf(err, GB_E_DENIED, "%s: every user may read it (mode %04o): chmod o-r",
				 path, (unsigned)(sb.st_mode & 07777));
	}
	got = read(fd, data, sizeof(data) - 1);
	close(fd);
	if (got < 0)
		return gb_errorf(err, GB_E_IO, "%s: %s", path, strerror(errno));
	data[got] = '\0';
	n = strcspn(data, "\r\n");
	data[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (data[i] <= ' ' || data[i] > '~')
			return gb_errorf(err, GB_E_INVALID,
					 "%s: the token has a blank or a character outside printable ASCII at byte %zu",
					 path, i + 1);
	if (n < TOKEN_MIN || n > TOKEN_MAX)
		return gb_errorf(err, GB_E_INVALID, "%s: the token is %s%zu characters; %d to %d needed",
				 path, n > TOKEN_MAX ? "over " : "", n > TOKEN_MAX ? (size_t)TOKEN_MAX : n,
				 TOKEN_MIN, TOKEN_MAX);
	if (!(*token = strdup(data)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

/*****************************************************************************
 *  gpuburstctl metrics serve [--listen ADDR:PORT|unix:PATH]
 *****************************************************************************/

gb_err_t ctl_cmd_metrics_serve(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		CTL_COMMON_LONGOPTS, { 0 }
	};
	const char *cmd = "metrics serve";
	struct server s = { .ctl = ctl };
	struct sockaddr_storage ss = { 0 };
	const char *listen = NULL, *sock = NULL;
	struct MHD_Daemon *d;
	struct sigaction sa;
	gb_error_t err = { 0 };
	char host[64], *token = NULL;
	unsigned port = 0, flags;
	bool first = true;
	gb_err_t rc;
	int c, fd = -1;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":hl:", longopts, &first, &rc)) != -1) {
		if (c == CTL_OPT_DONE)
			return rc;
		if (c == 'l')
			listen = optarg;
		else
			return ctl_unimplemented(cmd, c);
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument '%s'", argv[optind]);
	if (!(s.conf = ctl_conf(ctl, &rc)))
		return rc;
	if (!listen)
		listen = s.conf->metrics.listen;
	if (!(sock = gb_conf_listen_unix(listen)) &&
	    !listen_addr(listen, &ss, host, sizeof(host), &port))
		return ctl_usage(cmd, "--listen '%s' is not an address and port nor a socket: "
				 "IPv4:PORT or [IPv6]:PORT, a literal address, or unix:/PATH",
				 listen);
	if (s.conf->metrics.token_file && (rc = token_read(s.conf->metrics.token_file, &token,
							   &err)))
		return ctl_fail(rc, "metrics.token_file: %s", err.text);
	s.token = token;
	ctl_state(ctl, false, &rc);
	if (rc) {
		free(token);
		return rc;
	}
	if (sock && (fd = unix_listen(sock, &err)) < 0) {
		free(token);
		return ctl_fail(err.code ? err.code : GB_E_IO, "%s: cannot listen on %s", cmd,
				err.text);
	}
	ctl_log_open(ctl);
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.changed, NULL);
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	if (fd >= 0)
		d = MHD_start_daemon(flags, 0, NULL, NULL, handler, &s,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				     MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				     (uint16_t)port, NULL, NULL, handler, &s,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				     MHD_OPTION_CONNECTION_LIMIT, CONNECTIONS_MAX,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				     MHD_OPTION_END);
	if (!d) {
		rc = ctl_fail(GB_E_IO, "%s: cannot listen on %s: %s", cmd, listen,
			      errno ? strerror(errno) : "libmicrohttpd failed");
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	gb_log_notice("metrics_serve listen=%s status_page=%d token=%d pid=%ld", listen,
		      s.conf->metrics.status_page, token != NULL, (long)getpid());
	if (sock)
		printf("serving the metrics%s at unix:%s (read-only%s)\n",
		       s.conf->metrics.status_page ? " and the status page" : "", sock,
		       token ? ", with a token" : "");
	else
		printf("serving the metrics at http://%s%s%s:%u/metrics%s (read-only%s)\n",
		       ss.ss_family == AF_INET6 ? "[" : "", host, ss.ss_family == AF_INET6 ? "]" : "",
		       port, s.conf->metrics.status_page ? " and the status page at /" : "",
		       token ? ", with a token" : "");
	fflush(stdout);
	/* every second: a new document for the open event streams */
	while (!stop_serving) {
		struct timespec one = { 1, 0 };

		nanosleep(&one, NULL);
		pthread_mutex_lock(&s.lock);
		if (s.listeners && !stop_serving)
			publish(&s);
		pthread_mutex_unlock(&s.lock);
	}
	pthread_mutex_lock(&s.lock);
	s.stopping = true;
	pthread_cond_broadcast(&s.changed);
	pthread_mutex_unlock(&s.lock);
	MHD_stop_daemon(d);	/* closes the socket it was given too */
	fd = -1;
	gb_log_notice("metrics_serve_stopped scrapes=%lu failures=%lu", s.scrapes, s.failures);
	rc = GB_E_OK;
out:
	if (fd >= 0)
		close(fd);
	if (sock)
		unlink(sock);
	free(s.doc);
	free(s.doc_same);
	free(token);
	pthread_cond_destroy(&s.changed);
	pthread_mutex_destroy(&s.lock);
	return rc;
}
