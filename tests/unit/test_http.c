/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_http.c - the libcurl seam against loopback servers: requests and
 * headers, keep-alive, timeouts, response cap, transport failures, the
 * configured proxy (a loopback CONNECT proxy, testproxy.c: tunnels, who
 * bypasses it, its refusals, the environment ignored), TLS verification
 * with a configurable CA bundle, directly and through the proxy
 *
 * No name is ever resolved: endpoints named *.gpuburst.test are reached
 * only through testproxy, which maps every name to 127.0.0.1.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "gb_http.h"
#include "gb_log.h"
#include "gb_util.h"
#include "testproxy.h"
#include "testsrv.h"

/* Handler: echo the method and body; status from the path "/status/NNN". */
static void echo(void *ctx, size_t n, const struct testsrv_req *req,
		 struct testsrv_resp *resp)
{
	(void)ctx;
	(void)n;
	resp->status = 200;
	if (strncmp(req->path, "/status/", 8) == 0)
		resp->status = (unsigned)strtoul(req->path + 8, NULL, 10);
	gb_buf_printf(&resp->body, "%s %s ", req->method, req->path);
	gb_buf_append(&resp->body, req->body, req->body_len);
	resp->hname[0] = "X-Test-Header";
	resp->hvalue[0] = "yes";
	resp->n_headers = 1;
}

static void clear_proxy_env(void)
{
	static const char *const vars[] = { "http_proxy", "HTTP_PROXY",
					    "https_proxy", "HTTPS_PROXY",
					    "all_proxy", "ALL_PROXY",
					    "no_proxy", "NO_PROXY" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void test_endpoint_parsing(void **state)
{
	static const struct {
		const char *url, *host, *path;
	} ok[] = {
		{ "https://ec2.us-east-1.amazonaws.com", "ec2.us-east-1.amazonaws.com", "/" },
		{ "https://ec2.us-east-1.amazonaws.com/", "ec2.us-east-1.amazonaws.com", "/" },
		{ "http://127.0.0.1:8080/prefix/", "127.0.0.1:8080", "/prefix/" },
		{ "https://h.example:443", "h.example", "/" },
		{ "http://h.example:80/", "h.example", "/" },
		{ "http://h.example:443/", "h.example:443", "/" },
		{ "http://[::1]:9000", "[::1]:9000", "/" },
	};
	static const char *const bad[] = {
		"", "ftp://h/", "http://h/?q=1", "http://u:p@h/", "http://h/#f",
		"no url at all", "file:///etc/passwd",
	};
	struct gb_http_opts o = { .ca_bundle = "/nonexistent/ca.pem" };
	char dir[] = "/tmp/gb-test-http-XXXXXX", fifo[64], want[128];
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(gb_http_create(ok[i].url, NULL, &h, &e), GB_E_OK);
		assert_string_equal(gb_http_host(h), ok[i].host);
		assert_string_equal(gb_http_base_path(h), ok[i].path);
		assert_string_equal(gb_http_url(h), ok[i].url);
		gb_http_destroy(h);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (gb_http_create(bad[i], NULL, &h, &e) != GB_E_INVALID)
			fail_msg("accepted endpoint \"%s\"", bad[i]);
		assert_null(h);
		assert_true(e.text[0] != '\0');
	}
	assert_int_equal(gb_http_create("https://h/", &o, &h, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "/nonexistent/ca.pem"));
	/* a FIFO would hang curl's read of it at the first call */
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/ca.pem", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	o.ca_bundle = fifo;
	assert_int_equal(gb_http_create("https://h/", &o, &h, &e), GB_E_INVALID);
	assert_null(h);
	snprintf(want, sizeof(want), "CA bundle: %s is not a regular file (a FIFO)", fifo);
	assert_string_equal(e.text, want);
	unlink(fifo);
	rmdir(dir);
	gb_http_destroy(NULL);
}

static void test_post_get_put(void **state)
{
	struct testsrv *s = testsrv_start(echo, NULL);
	struct gb_http_header hdr[] = {
		{ "Content-Type", "application/x-www-form-urlencoded; charset=utf-8" },
		{ "X-Amz-Date", "20150830T123600Z" },
	};
	struct gb_http_request req = { .method = "POST", .path = "/",
				       .headers = hdr, .n_headers = 2,
				       .body = "Action=X&Version=1", .body_len = 18 };
	struct gb_http_response resp;
	const struct testsrv_req *got;
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(s);
	assert_int_equal(gb_http_create(testsrv_url(s), NULL, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_NONE);
	assert_string_equal(resp.body, "POST / Action=X&Version=1");
	assert_int_equal(resp.body_len, strlen(resp.body));
	assert_string_equal(gb_http_response_header(&resp, "x-test-header"), "yes");
	assert_null(gb_http_response_header(&resp, "X-Absent"));
	gb_http_response_free(&resp);
	got = testsrv_request(s, 0);
	assert_string_equal(got->method, "POST");
	/* the Host on the wire is the one we sign */
	assert_string_equal(testsrv_header(got, "Host"), gb_http_host(h));
	assert_string_equal(testsrv_header(got, "Content-Type"),
			    "application/x-www-form-urlencoded; charset=utf-8");
	assert_string_equal(testsrv_header(got, "X-Amz-Date"), "20150830T123600Z");
	assert_null(testsrv_header(got, "Expect"));
	assert_non_null(strstr(testsrv_header(got, "User-Agent"), "gpuburst/"));

	/* GET with a query; status passed through as success */
	req.method = "GET";
	req.path = "/status/404?a=1&b=%2F";
	req.body = NULL;
	req.body_len = 0;
	req.n_headers = 0;
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	assert_int_equal(resp.status, 404);
	gb_http_response_free(&resp);
	got = testsrv_request(s, 1);
	assert_string_equal(got->method, "GET");
	assert_string_equal(got->path, "/status/404");
	assert_string_equal(got->query, "a=1&b=%2F");
	assert_null(testsrv_header(got, "Content-Type"));

	/* PUT without a body (the IMDSv2 token request) */
	req.method = "PUT";
	req.path = "/latest/api/token";
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	assert_string_equal(resp.body, "PUT /latest/api/token ");
	gb_http_response_free(&resp);
	got = testsrv_request(s, 2);
	assert_string_equal(testsrv_header(got, "Content-Length"), "0");

	/* DELETE, and a NULL path meaning the endpoint's own path */
	req.method = "DELETE";
	req.path = NULL;
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	assert_string_equal(resp.body, "DELETE / ");
	gb_http_response_free(&resp);

	/* three requests, one connection: keep-alive works */
	assert_int_equal(testsrv_count(s), 4);
	assert_int_equal(testsrv_connections(s), 1);
	gb_http_destroy(h);
	testsrv_stop(s);
}

static void test_bad_requests(void **state)
{
	struct gb_http_header inj[] = { { "X-A", "v\r\nX-Injected: 1" } };
	struct gb_http_header colon[] = { { "X:A", "v" } };
	struct gb_http_request req = { .method = "GET", .path = "/" };
	struct gb_http_response resp;
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_http_create("http://127.0.0.1:9/", NULL, &h, &e),
			 GB_E_OK);
	req.headers = inj;
	req.n_headers = 1;
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_INVALID);
	gb_http_response_free(&resp);
	req.headers = colon;
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_INVALID);
	gb_http_response_free(&resp);
	req.n_headers = 0;
	req.path = "no-slash";
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_INVALID);
	gb_http_response_free(&resp);
	req.path = "/a b";
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_INVALID);
	gb_http_response_free(&resp);
	gb_http_destroy(h);
}

static void slow(void *ctx, size_t n, const struct testsrv_req *req,
		 struct testsrv_resp *resp)
{
	(void)ctx;
	(void)req;
	testsrv_reply(resp, 200, "late");
	if (n == 0)
		resp->delay_ms = 3000;
}

static void test_timeout(void **state)
{
	struct testsrv *s = testsrv_start(slow, NULL);
	struct gb_http_opts o = { .timeout_ms = 500, .connect_timeout_ms = 500 };
	struct gb_http_request req = { .method = "GET", .path = "/" };
	struct gb_http_response resp;
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(s);
	assert_int_equal(gb_http_create(testsrv_url(s), &o, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_TIMEOUT);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_TIMEOUT);
	assert_true(gb_http_fail_retryable(resp.fail));
	assert_int_equal(resp.status, 0);
	assert_null(resp.body);
	assert_non_null(strstr(e.text, "timeout"));
	gb_http_response_free(&resp);
	/* the handle is usable again after a timeout */
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	assert_string_equal(resp.body, "late");
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	testsrv_stop(s);
}

static void big(void *ctx, size_t n, const struct testsrv_req *req,
		struct testsrv_resp *resp)
{
	size_t len = strtoul(req->path + 1, NULL, 10);

	(void)ctx;
	(void)n;
	resp->status = 200;
	for (size_t i = 0; i < len; i++)
		gb_buf_putc(&resp->body, 'x');
}

static void test_response_cap(void **state)
{
	struct testsrv *s = testsrv_start(big, NULL);
	struct gb_http_opts o = { .max_response_bytes = 4096 };
	struct gb_http_request req = { .method = "GET" };
	struct gb_http_response resp;
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(s);
	assert_int_equal(gb_http_create(testsrv_url(s), &o, &h, &e), GB_E_OK);
	req.path = "/4096";
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	assert_int_equal(resp.body_len, 4096);
	gb_http_response_free(&resp);
	req.path = "/4097";
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_TOO_LARGE);
	assert_false(gb_http_fail_retryable(resp.fail));
	assert_non_null(strstr(e.text, "larger than 4096 bytes"));
	gb_http_response_free(&resp);
	req.path = "/1000000";
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_TOO_LARGE);
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	testsrv_stop(s);
}

static void dropper(void *ctx, size_t n, const struct testsrv_req *req,
		    struct testsrv_resp *resp)
{
	(void)ctx;
	(void)n;
	(void)req;
	resp->drop = true;
}

static void test_transport_failures(void **state)
{
	struct testsrv *s = testsrv_start(dropper, NULL);
	struct gb_http_request req = { .method = "GET", .path = "/" };
	struct gb_http_response resp;
	gb_http_t *h = NULL;
	char url[64];
	gb_error_t e;

	(void)state;
	assert_non_null(s);
	/* the server closes without answering */
	assert_int_equal(gb_http_create(testsrv_url(s), NULL, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_IO);
	assert_true(gb_http_fail_retryable(resp.fail));
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	/* nobody listens any more */
	snprintf(url, sizeof(url), "%s", testsrv_url(s));
	testsrv_stop(s);
	assert_int_equal(gb_http_create(url, NULL, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_CONNECT);
	assert_true(gb_http_fail_retryable(resp.fail));
	assert_non_null(strstr(e.text, "GET http://127.0.0.1:"));
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	assert_string_equal(gb_http_fail_name(GB_HTTP_FAIL_TLS), "tls");
}

/* "http://NAME:PORT" of loopback server [s] under another name. */
static const char *named_url(const struct testsrv *s, const char *name, char *buf,
			     size_t n)
{
	snprintf(buf, n, "http://%s:%u", name, testsrv_port(s));
	return buf;
}

/*
 * Through the proxy: a CONNECT tunnel (an http:// endpoint too) with the
 * proxy's credentials, the endpoint's own Host header inside, keep-alive
 * through the tunnel; the options' strings are copied at creation.
 */
static void test_proxy_tunnel(void **state)
{
	struct testsrv *origin = testsrv_start(echo, NULL);
	struct testproxy *proxy = testproxy_start(0);
	struct gb_http_request req = { .method = "GET", .path = "/via" };
	struct gb_http_response resp;
	struct gb_http_opts o = { 0 };
	char url[128], purl[128], nph[64], line[300], auth[256], want[300];
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(origin);
	assert_non_null(proxy);
	snprintf(purl, sizeof(purl), "http://user:secret@127.0.0.1:%u", testproxy_port(proxy));
	snprintf(nph, sizeof(nph), "elsewhere.example");
	o.proxy = purl;
	o.no_proxy_hosts = nph;
	assert_int_equal(gb_http_create(named_url(origin, "ec2.gpuburst.test", url, sizeof(url)),
					&o, &h, &e), GB_E_OK);
	/* the caller's strings may go away: the client kept its own copies */
	memset(purl, 'x', sizeof(purl) - 1);
	snprintf(nph, sizeof(nph), "*");
	snprintf(want, sizeof(want), "http://user:***@127.0.0.1:%u", testproxy_port(proxy));
	assert_string_equal(gb_http_proxy(h), want);
	for (int i = 0; i < 2; i++) {
		if (gb_http_do(h, &req, &resp, &e) != GB_E_OK)
			fail_msg("%s", e.text);
		assert_int_equal(resp.status, 200);
		assert_string_equal(resp.body, "GET /via ");
		gb_http_response_free(&resp);
	}
	/* one tunnel for both requests: keep-alive through the proxy */
	assert_int_equal(testproxy_count(proxy), 1);
	assert_true(testproxy_request(proxy, 0, line, sizeof(line), auth, sizeof(auth)));
	snprintf(want, sizeof(want), "CONNECT ec2.gpuburst.test:%u", testsrv_port(origin));
	assert_string_equal(line, want);
	assert_string_equal(auth, "Basic dXNlcjpzZWNyZXQ=");	/* user:secret */
	assert_int_equal(testsrv_count(origin), 2);
	assert_int_equal(testsrv_connections(origin), 1);
	snprintf(want, sizeof(want), "ec2.gpuburst.test:%u", testsrv_port(origin));
	assert_string_equal(testsrv_header(testsrv_request(origin, 0), "Host"), want);
	assert_string_equal(testsrv_request(origin, 0)->path, "/via");
	gb_http_destroy(h);
	testproxy_stop(proxy);
	testsrv_stop(origin);
}

/*
 * Who goes direct, as gb_http_proxy() reports it (no request is needed:
 * the client decides at creation): the IMDS option, loopback endpoints,
 * and the hosts no_proxy_hosts names, by curl's CURLOPT_NOPROXY rules.
 */
static void test_proxy_bypass(void **state)
{
	static const struct {
		const char *url, *list;
		bool direct;
	} cases[] = {
		{ "http://127.0.0.1:8080", NULL, true },
		{ "http://localhost:8080/x", NULL, true },
		{ "http://[::1]:8080", NULL, true },
		{ "http://localhost.example.com:8080", NULL, false },
		{ "https://ec2.us-east-1.amazonaws.com", NULL, false },
		{ "https://ec2.us-east-1.amazonaws.com", "", false },
		{ "https://ec2.us-east-1.amazonaws.com", "amazonaws.com", true },
		{ "https://ec2.us-east-1.amazonaws.com", ".amazonaws.com", true },
		{ "https://ec2.us-east-1.amazonaws.com", "ec2.us-east-1.amazonaws.com.", true },
		{ "https://EC2.US-EAST-1.amazonaws.com", "ec2.us-east-1.AMAZONAWS.com", true },
		{ "https://ec2.us-east-1.amazonaws.com", "notamazonaws.com", false },
		{ "https://ec2.us-east-1.amazonaws.com", "east-1.amazonaws", false },
		{ "https://api.openai.com", "x.internal, api.openai.com", true },
		{ "https://api.openai.com", "x.internal,openai.com.evil", false },
		{ "https://h.example", "*", true },
		{ "https://h.example", "*.example", false },
		{ "http://10.0.0.5:80", "10.0.0.5", true },
		{ "http://10.0.0.5:80", "0.0.5", false },
		{ "http://10.0.0.5:80", ".0.0.5", false },
		{ "http://[fd00::1]:80", "fd00::1", true },
		{ "http://[fd00::1]:80", "[fd00::1]", true },
		{ "http://[fd00::1]:80", "::1", false },
	};
	struct gb_http_opts o = { .proxy = "http://proxy.example:3128" };
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o.no_proxy_hosts = cases[i].list;
		assert_int_equal(gb_http_create(cases[i].url, &o, &h, &e), GB_E_OK);
		if (cases[i].direct != (gb_http_proxy(h) == NULL))
			fail_msg("%s with no_proxy_hosts \"%s\": %s", cases[i].url,
				 cases[i].list ? cases[i].list : "(null)",
				 cases[i].direct ? "should go direct" : "should use the proxy");
		gb_http_destroy(h);
	}
	/* the IMDS client: never through a proxy */
	o.no_proxy = true;
	o.no_proxy_hosts = NULL;
	assert_int_equal(gb_http_create("http://169.254.169.254", &o, &h, &e), GB_E_OK);
	assert_null(gb_http_proxy(h));
	gb_http_destroy(h);
	/* no proxy configured, "" included */
	o.no_proxy = false;
	o.proxy = "";
	assert_int_equal(gb_http_create("https://h.example", &o, &h, &e), GB_E_OK);
	assert_null(gb_http_proxy(h));
	gb_http_destroy(h);
}

/* A loopback endpoint goes direct on the wire too, with a proxy configured. */
static void test_proxy_loopback_direct(void **state)
{
	struct testsrv *origin = testsrv_start(echo, NULL);
	struct testproxy *proxy = testproxy_start(0);
	struct gb_http_request req = { .method = "GET", .path = "/direct" };
	struct gb_http_response resp;
	struct gb_http_opts o = { 0 };
	char url[128];
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(origin);
	assert_non_null(proxy);
	o.proxy = testproxy_url(proxy);
	for (int i = 0; i < 2; i++) {
		const char *u = i ? named_url(origin, "localhost", url, sizeof(url))
				  : testsrv_url(origin);

		assert_int_equal(gb_http_create(u, &o, &h, &e), GB_E_OK);
		assert_null(gb_http_proxy(h));
		if (gb_http_do(h, &req, &resp, &e) != GB_E_OK)
			fail_msg("%s: %s", u, e.text);
		assert_int_equal(resp.status, 200);
		gb_http_response_free(&resp);
		gb_http_destroy(h);
	}
	assert_int_equal(testsrv_count(origin), 2);
	assert_int_equal(testproxy_count(proxy), 0);
	testproxy_stop(proxy);
	testsrv_stop(origin);
}

/*
 * The proxy variables of the environment change nothing: not without a
 * configured proxy (a loopback endpoint stays direct), not with one
 * (no_proxy/NO_PROXY do not bypass it, http_proxy does not replace it).
 */
static void test_proxy_env_ignored(void **state)
{
	struct testsrv *origin = testsrv_start(echo, NULL);
	struct testproxy *envproxy = testproxy_start(0), *proxy = testproxy_start(0);
	struct gb_http_request req = { .method = "GET", .path = "/env" };
	struct gb_http_response resp;
	struct gb_http_opts o = { 0 };
	char url[128];
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(origin);
	assert_non_null(envproxy);
	assert_non_null(proxy);
	setenv("http_proxy", testproxy_url(envproxy), 1);
	setenv("HTTPS_PROXY", testproxy_url(envproxy), 1);
	setenv("ALL_PROXY", testproxy_url(envproxy), 1);
	setenv("all_proxy", testproxy_url(envproxy), 1);
	setenv("NO_PROXY", "*", 1);
	setenv("no_proxy", "ec2.gpuburst.test", 1);
	/* no proxy configured: a loopback endpoint is reached directly */
	assert_int_equal(gb_http_create(testsrv_url(origin), NULL, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_OK);
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	/* the configured proxy, whatever no_proxy and http_proxy say */
	o.proxy = testproxy_url(proxy);
	assert_int_equal(gb_http_create(named_url(origin, "ec2.gpuburst.test", url, sizeof(url)),
					&o, &h, &e), GB_E_OK);
	if (gb_http_do(h, &req, &resp, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	clear_proxy_env();
	assert_int_equal(testsrv_count(origin), 2);
	assert_int_equal(testproxy_count(envproxy), 0);
	assert_int_equal(testproxy_count(proxy), 1);
	testproxy_stop(envproxy);
	testproxy_stop(proxy);
	testsrv_stop(origin);
}

/* A log line holding [secret] has it replaced: gb_http_create() registered it. */
static void check_log_redacts(const char *secret)
{
	char dir[] = "/tmp/gb-test-http-log-XXXXXX", path[128];
	struct gb_log_opts lo = { .level = GB_LOG_INFO, .no_stderr = true };
	char *text = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gb.log", dir);
	lo.file = path;
	assert_int_equal(gb_log_open("test-http", &lo, NULL), GB_E_OK);
	gb_log_info("careless password=%s", secret);
	gb_log_close();
	assert_int_equal(gb_file_read(path, 1 << 16, &text, NULL, NULL), GB_E_OK);
	assert_null(strstr(text, secret));
	assert_non_null(strstr(text, "password=[REDACTED]"));
	free(text);
	unlink(path);
	rmdir(dir);
}

/* One request through a proxy answering [status]; RET gb_http_do's code. */
static gb_err_t via(struct testproxy *p, const char *user, struct gb_http_response *resp,
		    gb_error_t *e)
{
	struct gb_http_request req = { .method = "GET", .path = "/" };
	struct gb_http_opts o = { .connect_timeout_ms = 2000, .timeout_ms = 5000 };
	char purl[128];
	gb_http_t *h = NULL;
	gb_err_t rc;

	snprintf(purl, sizeof(purl), "http://%s127.0.0.1:%u", user, testproxy_port(p));
	o.proxy = purl;
	assert_int_equal(gb_http_create("https://ec2.gpuburst.test:1/", &o, &h, e), GB_E_OK);
	rc = gb_http_do(h, &req, resp, e);
	gb_http_destroy(h);
	return rc;
}

/*
 * The proxy's refusals: 403 needs a fix (not retried), 407 is the proxy's
 * credentials, 5xx and an unreachable proxy are connect failures (retried).
 * Each message names the proxy, its password as "***".
 */
static void test_proxy_failures(void **state)
{
	static const struct {
		unsigned status;
		enum gb_http_fail fail;
		const char *why;
	} cases[] = {
		{ 403, GB_HTTP_FAIL_PROXY, "the proxy refused the tunnel (CONNECT answered 403) (proxy)" },
		{ 407, GB_HTTP_FAIL_PROXY_AUTH, "CONNECT answered 407" },
		{ 502, GB_HTTP_FAIL_CONNECT, "the proxy could not reach the endpoint (CONNECT answered 502) (connect)" },
	};
	struct gb_http_response resp;
	struct testproxy *p;
	char want[256], url[64];
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_non_null(p = testproxy_start(cases[i].status));
		assert_int_equal(via(p, "u:hunter22@", &resp, &e), GB_E_HTTP);
		assert_int_equal(resp.fail, cases[i].fail);
		assert_int_equal(gb_http_fail_retryable(resp.fail),
				 cases[i].fail == GB_HTTP_FAIL_CONNECT);
		snprintf(want, sizeof(want),
			 "GET https://ec2.gpuburst.test:1/ via proxy http://u:***@127.0.0.1:%u: ",
			 testproxy_port(p));
		if (strncmp(e.text, want, strlen(want)) != 0 || !strstr(e.text, cases[i].why))
			fail_msg("%u: %s", cases[i].status, e.text);
		assert_null(strstr(e.text, "hunter22"));
		assert_int_equal(testproxy_count(p), 1);
		gb_http_response_free(&resp);
		testproxy_stop(p);
	}
	assert_string_equal(gb_http_fail_name(GB_HTTP_FAIL_PROXY), "proxy");
	check_log_redacts("hunter22");
	assert_string_equal(gb_http_fail_name(GB_HTTP_FAIL_PROXY_AUTH), "proxy_auth");
	/* nobody listens where the proxy was */
	assert_non_null(p = testproxy_start(0));
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", testproxy_port(p));
	testproxy_stop(p);
	{
		struct gb_http_request req = { .method = "GET", .path = "/" };
		struct gb_http_opts o = { .proxy = url };
		gb_http_t *h = NULL;

		assert_int_equal(gb_http_create("https://ec2.gpuburst.test:1/", &o, &h, &e),
				 GB_E_OK);
		assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
		assert_int_equal(resp.fail, GB_HTTP_FAIL_CONNECT);
		assert_true(gb_http_fail_retryable(resp.fail));
		snprintf(want, sizeof(want), " via proxy %s: ", url);
		if (!strstr(e.text, want))
			fail_msg("%s", e.text);
		gb_http_response_free(&resp);
		gb_http_destroy(h);
	}
}

/* A proxy URL that cannot work is refused at creation, its password hidden. */
static void test_proxy_url_checked(void **state)
{
	static const char *const bad[] = {
		"ftp://u:hunter22@proxy.example:21", "proxy.example:3128",
		"http://u:hunter22@proxy.example:99999", "http://u:hunter22@proxy.example:3128/path",
		"http://proxy.example:3128?x=1", "http://", "socks5://u:hunter22@proxy.example:1080",
	};
	static const char *const good[] = {
		"http://proxy.example:3128", "https://proxy.example", "http://u:p@10.1.2.3:8080/",
		"http://[fd00::1]:3128",
	};
	struct gb_http_opts o = { 0 };
	gb_http_t *h = NULL;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.proxy = bad[i];
		/* checked even for an endpoint that would not use it */
		if (gb_http_create("http://127.0.0.1:1", &o, &h, &e) != GB_E_INVALID)
			fail_msg("accepted proxy \"%s\"", bad[i]);
		assert_null(h);
		assert_non_null(strstr(e.text, "proxy \""));
		if (strstr(e.text, "hunter22"))
			fail_msg("password shown: %s", e.text);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		o.proxy = good[i];
		if (gb_http_create("https://ec2.us-east-1.amazonaws.com", &o, &h, &e) != GB_E_OK)
			fail_msg("refused proxy \"%s\": %s", good[i], e.text);
		assert_non_null(gb_http_proxy(h));
		gb_http_destroy(h);
	}
}

/* A self-signed P-256 certificate for 127.0.0.1 and ec2.gpuburst.test, in PEM. */
static int make_cert(char **key_pem, char **cert_pem)
{
	EVP_PKEY *pkey = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	BIO *kb = BIO_new(BIO_s_mem()), *cb = BIO_new(BIO_s_mem());
	char *p;
	long n;
	int ok = -1;

	if (!pkey || !x || !kb || !cb)
		goto out;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pkey);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)"127.0.0.1", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name,
				  "IP:127.0.0.1,DNS:ec2.gpuburst.test");
	if (!ext)
		goto out;
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
	if (!ext)
		goto out;
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	if (!X509_sign(x, pkey, EVP_sha256()) ||
	    !PEM_write_bio_PrivateKey(kb, pkey, NULL, NULL, 0, NULL, NULL) ||
	    !PEM_write_bio_X509(cb, x))
		goto out;
	n = BIO_get_mem_data(kb, &p);
	*key_pem = strndup(p, (size_t)n);
	n = BIO_get_mem_data(cb, &p);
	*cert_pem = strndup(p, (size_t)n);
	ok = (*key_pem && *cert_pem) ? 0 : -1;
out:
	BIO_free(kb);
	BIO_free(cb);
	X509_free(x);
	EVP_PKEY_free(pkey);
	return ok;
}

/*
 * https:// through the proxy, as every AWS endpoint is reached: TLS inside
 * the tunnel, the certificate verified for the endpoint's name (not the
 * proxy's), with the configured CA bundle.
 */
static void tls_via_proxy(const struct testsrv *s, const char *cafile)
{
	struct testproxy *p = testproxy_start(0);
	struct gb_http_request req = { .method = "GET", .path = "/tls" };
	struct gb_http_opts o = { .ca_bundle = cafile };
	struct gb_http_response resp;
	char url[128], line[300], want[300];
	gb_http_t *h = NULL;
	gb_error_t e;

	assert_non_null(p);
	o.proxy = testproxy_url(p);
	snprintf(url, sizeof(url), "https://ec2.gpuburst.test:%u", testsrv_port(s));
	assert_int_equal(gb_http_create(url, &o, &h, &e), GB_E_OK);
	if (gb_http_do(h, &req, &resp, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(resp.status, 200);
	assert_string_equal(resp.body, "GET /tls ");
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	/* a name the certificate does not carry fails verification there */
	snprintf(url, sizeof(url), "https://other.gpuburst.test:%u", testsrv_port(s));
	assert_int_equal(gb_http_create(url, &o, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_TLS);
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	assert_int_equal(testproxy_count(p), 2);
	assert_true(testproxy_request(p, 0, line, sizeof(line), NULL, 0));
	snprintf(want, sizeof(want), "CONNECT ec2.gpuburst.test:%u", testsrv_port(s));
	assert_string_equal(line, want);
	testproxy_stop(p);
}

static void test_tls_verification(void **state)
{
	char *key = NULL, *cert = NULL;
	char cafile[] = "/tmp/gb-test-ca-XXXXXX";
	struct testsrv *s;
	struct gb_http_opts o = { 0 };
	struct gb_http_request req = { .method = "GET", .path = "/tls" };
	struct gb_http_response resp;
	gb_http_t *h = NULL;
	gb_error_t e;
	int fd;

	(void)state;
	if (!testsrv_tls_supported()) {
		print_message("libmicrohttpd has no TLS support: TLS case skipped\n");
		skip();
	}
	assert_int_equal(make_cert(&key, &cert), 0);
	s = testsrv_start_tls(echo, NULL, key, cert);
	assert_non_null(s);
	/* an unknown self-signed certificate is refused (no CA bundle) */
	o.ca_bundle = NULL;
	assert_int_equal(gb_http_create(testsrv_url(s), &o, &h, &e), GB_E_OK);
	assert_int_equal(gb_http_do(h, &req, &resp, &e), GB_E_HTTP);
	assert_int_equal(resp.fail, GB_HTTP_FAIL_TLS);
	assert_false(gb_http_fail_retryable(resp.fail));
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	/* trusted through the configured CA bundle */
	fd = mkstemp(cafile);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, cert, strlen(cert)), (ssize_t)strlen(cert));
	close(fd);
	o.ca_bundle = cafile;
	assert_int_equal(gb_http_create(testsrv_url(s), &o, &h, &e), GB_E_OK);
	if (gb_http_do(h, &req, &resp, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(resp.status, 200);
	assert_string_equal(resp.body, "GET /tls ");
	gb_http_response_free(&resp);
	gb_http_destroy(h);
	tls_via_proxy(s, cafile);
	unlink(cafile);
	testsrv_stop(s);
	free(key);
	free(cert);
}

/* Loopback is an exact host match, never a prefix. */
static void test_loopback(void **state)
{
	static const char *const yes[] = {
		"http://127.0.0.1:8080", "http://127.1.2.3/", "https://localhost",
		"http://LOCALHOST.:80/x", "http://[::1]:9000", "http://[::1]",
		"http://127.255.255.255?x", "http://[::1]?x", "http://[::1]#f",
	};
	static const char *const no[] = {
		"http://localhost.example.com:8080", "http://127.example.com",
		"http://127.evil.net/", "http://localhost@evil.net/",
		"http://127.0.0.1@evil.net/", "http://localhost.example.com.",
		"http://1270.0.0.1", "http://128.0.0.1", "http://127.1",
		"http://[::1].evil", "http://[::10]:80", "https://sts.us-east-1.amazonaws.com",
		"localhost", "", "http://", NULL,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!gb_http_url_is_loopback(yes[i]))
			fail_msg("%s is loopback", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (gb_http_url_is_loopback(no[i]))
			fail_msg("%s is not loopback", no[i] ? no[i] : "NULL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_endpoint_parsing),
		cmocka_unit_test(test_post_get_put),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_response_cap),
		cmocka_unit_test(test_transport_failures),
		cmocka_unit_test(test_proxy_tunnel),
		cmocka_unit_test(test_proxy_bypass),
		cmocka_unit_test(test_proxy_loopback_direct),
		cmocka_unit_test(test_proxy_env_ignored),
		cmocka_unit_test(test_proxy_failures),
		cmocka_unit_test(test_proxy_url_checked),
		cmocka_unit_test(test_tls_verification),
	};

	clear_proxy_env();
	if (gb_http_global_init(NULL) != GB_E_OK)
		return 99;
	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
