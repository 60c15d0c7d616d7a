/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_common.c - libcommon: error table, logging, strings, hostlists, utils
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "gb_err.h"
#include "gb_hostlist.h"
#include "gb_log.h"
#include "gb_partition.h"
#include "gb_str.h"
#include "gb_util.h"

static void test_err_table(void **state)
{
	(void)state;
	assert_string_equal(gb_err_name(GB_E_CONFIG), "CONFIG");
	assert_string_equal(gb_strerror(GB_E_OK), "success");
	assert_string_equal(gb_strerror(GB_E_CAPACITY), "insufficient cloud capacity");
	assert_string_equal(gb_err_name(125), "UNKNOWN");
	assert_string_equal(gb_strerror(-1), "unknown error");
	/* every code is a valid exit status below the shell's 126 */
#define CHECK_(name, num, text) assert_true(num >= 0 && num < 126); \
	assert_string_equal(gb_err_name(num), #name);
	GB_ERR_MAP(CHECK_)
#undef CHECK_
}

static void test_errorf_prefix(void **state)
{
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_errorf(&e, GB_E_IO, "cannot open %s", "x"), GB_E_IO);
	assert_int_equal(e.code, GB_E_IO);
	assert_string_equal(e.text, "cannot open x");
	gb_error_prefix(&e, "loading %d", 7);
	assert_string_equal(e.text, "loading 7: cannot open x");
	assert_int_equal(gb_errorf(NULL, GB_E_PARSE, "ignored"), GB_E_PARSE);
	gb_error_clear(&e);
	assert_int_equal(e.code, GB_E_OK);
	assert_string_equal(e.text, "");
}

static void test_errlist(void **state)
{
	struct gb_errlist l = { 0 };

	(void)state;
	for (int i = 0; i < 20; i++)
		assert_int_equal(gb_errlist_add(&l, "e%d", i), GB_E_OK);
	assert_int_equal(l.n, 20);
	assert_string_equal(l.msgs[19], "e19");
	gb_errlist_free(&l);
	assert_int_equal(l.n, 0);
	assert_null(l.msgs);
}

static void test_parse_long(void **state)
{
	long v = 42;

	(void)state;
	assert_int_equal(gb_parse_long("17", 0, 100, &v), GB_E_OK);
	assert_int_equal(v, 17);
	assert_int_equal(gb_parse_long("-3", -5, 5, &v), GB_E_OK);
	assert_int_equal(v, -3);
	assert_int_equal(gb_parse_long("", 0, 9, &v), GB_E_INVALID);
	assert_int_equal(gb_parse_long(" 1", 0, 9, &v), GB_E_INVALID);
	assert_int_equal(gb_parse_long("1x", 0, 9, &v), GB_E_INVALID);
	assert_int_equal(gb_parse_long("10", 0, 9, &v), GB_E_INVALID);
	assert_int_equal(gb_parse_long("99999999999999999999", 0, 9, &v), GB_E_INVALID);
	assert_int_equal(gb_parse_long(NULL, 0, 9, &v), GB_E_INVALID);
	assert_int_equal(v, -3);	/* untouched on failure */
}

/* gb_grow: doubles from 16, keeps what it held, leaves the array alone when it fits. */
static void test_grow(void **state)
{
	size_t cap = 0;
	int *v = NULL, *w;

	(void)state;
	v = gb_grow(v, &cap, 1, sizeof(*v));
	assert_non_null(v);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 16; i++)
		v[i] = i;
	w = gb_grow(v, &cap, 16, sizeof(*v));
	assert_ptr_equal(w, v);
	assert_int_equal(cap, 16);
	v = gb_grow(v, &cap, 100, sizeof(*v));
	assert_non_null(v);
	assert_int_equal(cap, 128);
	for (int i = 0; i < 16; i++)
		assert_int_equal(v[i], i);
	free(v);
}

static void test_buf(void **state)
{
	struct gb_buf b = GB_BUF_INIT;
	char *s;

	(void)state;
	assert_string_equal(gb_buf_str(&b), "");
	for (int i = 0; i < 1000; i++)
		gb_buf_printf(&b, "%d,", i);
	gb_buf_puts(&b, "end");
	assert_false(gb_buf_failed(&b));
	assert_true(gb_str_has_prefix(gb_buf_str(&b), "0,1,2,"));
	assert_int_equal(b.len, strlen(gb_buf_str(&b)));
	s = gb_buf_steal(&b);
	assert_non_null(s);
	assert_true(strstr(s, "999,end") != NULL);
	assert_null(b.data);
	free(s);
	gb_buf_free(&b);
}

static void test_strlcpy(void **state)
{
	char small[4];

	(void)state;
	assert_int_equal(gb_strlcpy(small, "abcdef", sizeof(small)), 6);
	assert_string_equal(small, "abc");
	assert_int_equal(gb_strcmp0(NULL, NULL), 0);
	assert_true(gb_strcmp0(NULL, "a") < 0);
	assert_true(gb_strcmp0("a", NULL) > 0);
}

/* A proxy URL's password never survives gb_url_redact(); the rest does. */
static void test_url_redact(void **state)
{
	static const struct {
		const char *url, *want, *password;
	} cases[] = {
		{ "http://user:secret@proxy.example:3128", "http://user:***@proxy.example:3128", "secret" },
		{ "https://u:p@10.0.0.1:443/", "https://u:***@10.0.0.1:443/", "p" },
		{ "http://proxy.example:3128", "http://proxy.example:3128", NULL },
		{ "http://user@proxy.example:3128", "http://user@proxy.example:3128", NULL },
		{ "http://u:@h:1", "http://u:***@h:1", "" },
		/* unencoded '@', ':' and '/' in the password: hidden whole */
		{ "http://u:s@c:r/t@h:1", "http://u:***@h:1", "s@c:r/t" },
		/* no scheme (a bad config value shown in a message) */
		{ "user:secret@proxy:3128", "user:***@proxy:3128", "secret" },
		{ "socks5://u:pw@h", "socks5://u:***@h", "pw" },
		{ "", "", NULL },
	};
	char buf[128], tiny[12];
	const char *pw;
	size_t len;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		assert_string_equal(gb_url_redact(cases[i].url, buf, sizeof(buf)), cases[i].want);
		pw = gb_url_password(cases[i].url, &len);
		if (!cases[i].password) {
			assert_null(pw);
			continue;
		}
		assert_non_null(pw);
		assert_int_equal(len, strlen(cases[i].password));
		assert_memory_equal(pw, cases[i].password, len);
	}
	assert_string_equal(gb_url_redact(NULL, buf, sizeof(buf)), "");
	assert_null(gb_url_password(NULL, &len));
	/* truncated, never overflowing, still without the password */
	assert_string_equal(gb_url_redact("http://u:secret@h:1", tiny, sizeof(tiny)), "http://u:**");
}

static void expect_expand(const char *expr, const char *joined)
{
	gb_hostlist_t *hl = NULL;
	struct gb_strv sv = { 0 };
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e;

	assert_int_equal(gb_hostlist_parse(expr, &hl, &e), GB_E_OK);
	assert_int_equal(gb_hostlist_expand(hl, 1000, &sv, &e), GB_E_OK);
	for (size_t i = 0; i < sv.n; i++) {
		gb_buf_printf(&b, "%s%s", i ? " " : "", sv.v[i]);
		assert_true(gb_hostlist_match(hl, sv.v[i]));
	}
	assert_string_equal(gb_buf_str(&b), joined);
	assert_int_equal(gb_hostlist_count(hl), sv.n);
	gb_buf_free(&b);
	gb_strv_free(&sv);
	gb_hostlist_destroy(hl);
}

static void test_hostlist_expand(void **state)
{
	(void)state;
	expect_expand("gpu-1", "gpu-1");
	expect_expand("gpu-[1-3]", "gpu-1 gpu-2 gpu-3");
	expect_expand("g5-[01-03,10]", "g5-01 g5-02 g5-03 g5-10");
	expect_expand("a,b[8-10]", "a b8 b9 b10");
	expect_expand("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
	expect_expand("n[1-2]x", "n1x n2x");
}

static void test_hostlist_match(void **state)
{
	gb_hostlist_t *hl = NULL;

	(void)state;
	assert_int_equal(gb_hostlist_parse("g5-[1-64],g5-big", &hl, NULL), GB_E_OK);
	assert_true(gb_hostlist_match(hl, "g5-1"));
	assert_true(gb_hostlist_match(hl, "g5-64"));
	assert_true(gb_hostlist_match(hl, "g5-big"));
	assert_false(gb_hostlist_match(hl, "g5-65"));
	assert_false(gb_hostlist_match(hl, "g5-01"));	/* width 1: no padding */
	assert_false(gb_hostlist_match(hl, "g5-"));
	assert_false(gb_hostlist_match(hl, "g5-1x"));
	assert_int_equal(gb_hostlist_count(hl), 65);
	gb_hostlist_destroy(hl);

	assert_int_equal(gb_hostlist_parse("n[1-20]0", &hl, NULL), GB_E_OK);
	assert_true(gb_hostlist_match(hl, "n100"));	/* 10 then "0" */
	assert_true(gb_hostlist_match(hl, "n200"));
	assert_false(gb_hostlist_match(hl, "n210"));
	gb_hostlist_destroy(hl);

	assert_int_equal(gb_hostlist_parse("x[001-100]", &hl, NULL), GB_E_OK);
	assert_true(gb_hostlist_match(hl, "x007"));
	assert_false(gb_hostlist_match(hl, "x7"));
	gb_hostlist_destroy(hl);
}

static void test_hostlist_errors(void **state)
{
	static const char *bad[] = {
		"", "g5-[", "g5-[1-", "g5-[3-1]", "g5-[a]", "a,,b", "a b",
		"g5-[1-2", "g5-[1;2]", "x[1234567890]",
	};
	gb_hostlist_t *hl = NULL;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		gb_error_clear(&e);
		assert_int_not_equal(gb_hostlist_parse(bad[i], &hl, &e), GB_E_OK);
		assert_true(strlen(e.text) > 0);
	}
	assert_int_equal(gb_hostlist_parse("n[1-100000]", &hl, NULL), GB_E_OK);
	struct gb_strv sv = { 0 };
	assert_int_equal(gb_hostlist_expand(hl, 1000, &sv, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "100000 hosts"));
	gb_hostlist_destroy(hl);
	gb_strv_free(&sv);
}

static char *read_all(const char *path)
{
	char *data = NULL;

	assert_int_equal(gb_file_read(path, 1 << 20, &data, NULL, NULL), GB_E_OK);
	return data;
}

static void test_log_file_and_redaction(void **state)
{
	char dir[] = "/tmp/gb-test-log-XXXXXX";
	char path[256], q[64];
	struct gb_log_opts o = { .level = GB_LOG_INFO, .no_stderr = true };
	char *text;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gb.log", dir);
	o.file = path;
	assert_int_equal(gb_log_open("test-common", &o, NULL), GB_E_OK);
	gb_log_secret_add("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
	gb_log_info("launch region=%s secret=%s", "ap-south-1",
		    "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
	gb_log_debug("debug-is-filtered");
	gb_log_warn("multi\nline msg=%s", gb_log_q(q, sizeof(q), "a b\"c"));
	gb_log_close();
	gb_log_secret_clear();

	text = read_all(path);
	assert_non_null(strstr(text, "test-common["));
	assert_non_null(strstr(text, "]: info: launch region=ap-south-1 secret=[REDACTED]"));
	assert_null(strstr(text, "EXAMPLEKEY"));
	assert_null(strstr(text, "debug-is-filtered"));
	assert_non_null(strstr(text, "warning: multi line msg=\"a b\\\"c\"\n"));
	/* exactly two lines */
	int lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 2);
	free(text);
	unlink(path);
	rmdir(dir);
}

/* Log one info line with fd 2 on [fd]; RET what [rd] then holds (static). */
static const char *stderr_gets(int fd, int rd, bool no_stderr, const char *msg)
{
	static char buf[1024];
	struct gb_log_opts o = { .level = GB_LOG_INFO, .no_stderr = no_stderr };
	int saved = dup(STDERR_FILENO);
	ssize_t n;

	assert_true(saved >= 0);
	assert_true(dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	assert_int_equal(gb_log_open("test-common", &o, NULL), GB_E_OK);
	gb_log_info("%s", msg);
	gb_log_close();
	assert_true(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	close(saved);
	n = read(rd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Lines go to stderr only when it is a terminal (and not refused). */
static void test_log_stderr_only_tty(void **state)
{
	int p[2], master, slave;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	assert_string_equal(stderr_gets(p[1], p[0], false, "to-a-pipe"), "");
	close(p[0]);
	close(p[1]);

	if (openpty(&master, &slave, NULL, NULL, NULL) != 0) {
		skip();	/* no pseudo-terminals in this sandbox */
		return;
	}
	assert_int_equal(fcntl(master, F_SETFL, O_NONBLOCK), 0);
	assert_non_null(strstr(stderr_gets(slave, master, false, "to-a-tty"),
			       "]: info: to-a-tty"));
	assert_string_equal(stderr_gets(slave, master, true, "refused-tty"), "");
	close(master);
	close(slave);
}

/* After 100 rotations the live secret is still redacted, the oldest forgotten. */
static void test_log_secret_rotation(void **state)
{
	char dir[] = "/tmp/gb-test-rot-XXXXXX", path[256], sec[32];
	struct gb_log_opts o = { .level = GB_LOG_INFO, .no_stderr = true };
	char *text;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gb.log", dir);
	o.file = path;
	assert_int_equal(gb_log_open("rot", &o, NULL), GB_E_OK);
	for (int i = 0; i < 100; i++) {
		snprintf(sec, sizeof(sec), "SECRET-%03d-xyz", i);
		gb_log_secret_add(sec);
	}
	gb_log_info("newest=SECRET-099-xyz recent=SECRET-050-xyz oldest=SECRET-000-xyz");
	gb_log_close();
	gb_log_secret_clear();
	text = read_all(path);
	assert_non_null(strstr(text, "newest=[REDACTED] recent=[REDACTED] oldest=SECRET-000-xyz"));
	free(text);
	unlink(path);
	rmdir(dir);
}

static void test_log_q(void **state)
{
	char b[16];

	(void)state;
	assert_string_equal(gb_log_q(b, sizeof(b), "plain"), "plain");
	assert_string_equal(gb_log_q(b, sizeof(b), ""), "\"\"");
	assert_string_equal(gb_log_q(b, sizeof(b), "k=v"), "\"k=v\"");
	assert_string_equal(gb_log_q(b, sizeof(b), NULL), "(null)");
	/* the block-scoped form: each use has its own buffer */
	assert_string_equal(GB_LOG_Q("a b"), "\"a b\"");
	assert_string_equal(GB_LOG_Q("plain"), "plain");
	{
		char long_text[2 * GB_LOG_Q_MAX];

		for (size_t i = 0; i + 1 < sizeof(long_text); i++)
			long_text[i] = i % 2 ? ' ' : 'a';
		long_text[sizeof(long_text) - 1] = '\0';
		assert_true(strlen(GB_LOG_Q(long_text)) < GB_LOG_Q_MAX);
		assert_int_equal(GB_LOG_Q(long_text)[0], '"');
	}
	/* truncated but still quoted and terminated */
	const char *t = gb_log_q(b, sizeof(b), "a very long value with spaces");
	assert_true(strlen(t) < sizeof(b));
	assert_int_equal(t[0], '"');
	assert_int_equal(t[strlen(t) - 1], '"');
}

static void test_log_level_parse(void **state)
{
	enum gb_log_level l;

	(void)state;
	assert_int_equal(gb_log_level_parse("debug", &l), GB_E_OK);
	assert_int_equal(l, GB_LOG_DEBUG);
	assert_int_equal(gb_log_level_parse("loud", &l), GB_E_INVALID);
	assert_string_equal(gb_log_level_name(GB_LOG_WARNING), "warning");
}

/* botocore's partitions: regionRegex and dnsSuffix. */
static void test_partitions(void **state)
{
	static const struct {
		const char *region, *partition, *endpoint;
	} cases[] = {
		{ "us-east-1", "aws", "https://ec2.us-east-1.amazonaws.com" },
		{ "ap-southeast-7", "aws", "https://ec2.ap-southeast-7.amazonaws.com" },
		{ "il-central-1", "aws", "https://ec2.il-central-1.amazonaws.com" },
		{ "cn-north-1", "aws-cn", "https://ec2.cn-north-1.amazonaws.com.cn" },
		{ "cn-northwest-1", "aws-cn", "https://ec2.cn-northwest-1.amazonaws.com.cn" },
		{ "us-gov-west-1", "aws-us-gov", "https://ec2.us-gov-west-1.amazonaws.com" },
		{ "us-gov-east-1", "aws-us-gov", "https://ec2.us-gov-east-1.amazonaws.com" },
		{ "us-iso-east-1", "aws-iso", "https://ec2.us-iso-east-1.c2s.ic.gov" },
		{ "us-isob-east-1", "aws-iso-b", "https://ec2.us-isob-east-1.sc2s.sgov.gov" },
		/* in no partition known here: an endpoint must be given */
		{ "us-isof-south-1", NULL, NULL },
		{ "eu-isoe-west-1", NULL, NULL },
		{ "mars-north-1", NULL, NULL },
		{ "us-east", NULL, NULL },
		{ "us-east-1a", NULL, NULL },
		{ "cn--1", NULL, NULL },
		{ "", NULL, NULL },
	};
	char buf[128];
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		const struct gb_partition *p = gb_partition_of(cases[i].region);
		gb_err_t rc = gb_partition_endpoint("ec2", cases[i].region, buf, sizeof(buf), &e);

		if (!cases[i].partition) {
			if (p || rc != GB_E_INVALID || !strstr(e.text, "give its endpoint"))
				fail_msg("%s: want no partition, got %s", cases[i].region,
					 p ? p->name : e.text);
			continue;
		}
		if (!p || strcmp(p->name, cases[i].partition) || rc ||
		    strcmp(buf, cases[i].endpoint))
			fail_msg("%s: want %s %s, got %s %s", cases[i].region, cases[i].partition,
				 cases[i].endpoint, p ? p->name : "-", rc ? e.text : buf);
	}
	assert_null(gb_partition_of(NULL));
	assert_string_equal(gb_partition_named("aws-cn")->dns_suffix, "amazonaws.com.cn");
	assert_null(gb_partition_named("aws-moon"));
	assert_int_equal(gb_partition_endpoint("ec2", "us-east-1", buf, 10, &e), GB_E_INVALID);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* gb_time_sleep: nothing for <= 0 and NaN; a signal does not cut it short. */
static void test_time_sleep(void **state)
{
	struct sigaction sa, old;
	struct itimerval it = { .it_value = { .tv_usec = 20000 } };
	double t0;

	(void)state;
	t0 = gb_time_mono();
	gb_time_sleep(-1);
	gb_time_sleep(0);
	gb_time_sleep(NAN);
	gb_time_sleep(-INFINITY);
	assert_true(gb_time_mono() - t0 < 0.05);
	/* no SA_RESTART: nanosleep fails with EINTR after 20 ms */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
	alarms = 0;
	t0 = gb_time_mono();
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	gb_time_sleep(0.15);
	assert_int_equal(alarms, 1);
	assert_true(gb_time_mono() - t0 >= 0.149);
	assert_true(gb_time_mono() - t0 < 2.0);
	assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
}

static void test_time(void **state)
{
	char b[64];
	double t;

	(void)state;
	assert_string_equal(gb_time_iso(0, b, sizeof(b)), "1970-01-01T00:00:00Z");
	assert_int_equal(gb_time_parse("2026-11-29T15:13:45Z", 0, &t), GB_E_OK);
	assert_string_equal(gb_time_iso(t, b, sizeof(b)), "2026-11-29T15:13:45Z");
	assert_int_equal(gb_time_parse("2h", 10000, &t), GB_E_OK);
	assert_true(t == 10000 - 7200);
	assert_int_equal(gb_time_parse("yesterday", 0, &t), GB_E_INVALID);
	assert_int_equal(gb_time_parse("2026-11-29T15:13:45Zjunk", 0, &t), GB_E_INVALID);
	/* milliseconds: down (never later than the time), 0.1 s still .100 */
	assert_string_equal(gb_time_iso_ms(0, b, sizeof(b)), "1970-01-01T00:00:00.000Z");
	assert_string_equal(gb_time_iso_ms(1795965225.1, b, sizeof(b)),
			    "2026-11-29T15:13:45.100Z");
	assert_string_equal(gb_time_iso_ms(1795965225.9996, b, sizeof(b)),
			    "2026-11-29T15:13:45.999Z");
	for (int i = 0; i < 1000; i++) {
		double x = 1795965225 + i / 1000.0;

		gb_time_iso_ms(x, b, sizeof(b));
		assert_int_equal(strtol(b + 20, NULL, 10), i);
		assert_int_equal(gb_time_parse(b, 0, &t), GB_E_OK);
		assert_true(t <= x + 1e-6 && t > x - 1e-6);
	}
	assert_string_equal(gb_time_iso(1795965225.9996, b, sizeof(b)), "2026-11-29T15:13:45Z");
	assert_int_equal(gb_time_parse("2026-11-29T15:13:45.25Z", 0, &t), GB_E_OK);
	assert_true(t > 1795965225.2499 && t < 1795965225.2501);
	assert_int_equal(gb_time_parse("2026-11-29 15:13:45.5", 0, &t), GB_E_OK);
	assert_true(t > 1795965225.4999 && t < 1795965225.5001);
	assert_int_equal(gb_time_parse("2026-11-29T15:13:45.123", 0, &t), GB_E_INVALID);
	assert_int_equal(gb_time_parse("2026-11-29T15:13:45.Z", 0, &t), GB_E_INVALID);
	assert_int_equal(gb_time_parse("2026-11-29.5", 0, &t), GB_E_INVALID);
	/* what gpuburstctl prints reads back to the same millisecond */
	gb_time_iso_ms(1795965225.123, b, sizeof(b));
	assert_int_equal(gb_time_parse(b, 0, &t), GB_E_OK);
	assert_true(t > 1795965225.1229 && t < 1795965225.1231);
	assert_string_equal(gb_time_human(3725, b, sizeof(b)), "1h 02m 05s");
	assert_string_equal(gb_time_human(42, b, sizeof(b)), "42s");
	assert_string_equal(gb_time_human(90061, b, sizeof(b)), "1d 01h 01m");
}

static void test_random_and_mkdir(void **state)
{
	char a[17], b[17], dir[] = "/tmp/gb-test-mk-XXXXXX", sub[256];
	struct stat st;

	(void)state;
	assert_int_equal(gb_random_hex(a, 16, NULL), GB_E_OK);
	assert_int_equal(gb_random_hex(b, 16, NULL), GB_E_OK);
	assert_int_equal(strlen(a), 16);
	assert_string_not_equal(a, b);
	assert_int_equal(strspn(a, "0123456789abcdef"), 16);

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/x/y", dir);
	assert_int_equal(gb_mkdir_p(sub, 0750, NULL), GB_E_OK);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0750);
	assert_int_equal(gb_mkdir_p(sub, 0750, NULL), GB_E_OK);	/* idempotent */
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/x", dir);
	rmdir(sub);
	rmdir(dir);
}

/*
 * read(2) is wrapped (common.mk: -Wl,--wrap=read) to count the calls: a
 * file refused for its size must be refused before any read.
 */
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
static unsigned long n_reads;

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	n_reads++;
	return __real_read(fd, buf, n);
}

static void write_bytes(const char *path, char c, size_t n)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	memset(buf, c, sizeof(buf));
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);

		assert_int_equal(write(fd, buf, k), (ssize_t)k);
		n -= k;
	}
	close(fd);
}

/* gb_file_read() of [path] fails with [code] and exactly [text]. */
static void expect_refused(const char *path, gb_err_t code, const char *text)
{
	char *data = NULL;
	size_t len = 99;
	gb_error_t e;
	int fd = 7;

	assert_int_equal(gb_file_read(path, 1 << 20, &data, &len, &e), code);
	assert_string_equal(e.text, text);
	assert_null(data);
	assert_int_equal(len, 99);
	assert_int_equal(gb_file_check(path, 1 << 20, &e), code);
	assert_int_equal(gb_file_open(path, 1 << 20, &fd, NULL, &e), code);
	assert_int_equal(fd, -1);
}

static void test_file_read_regular(void **state)
{
	char dir[] = "/tmp/gb-test-file-XXXXXX";
	char path[256], sub[300], want[400];
	char *data = NULL;
	size_t len = 0, size = 0;
	gb_error_t e;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	write_bytes(path, 'a', 10);
	n_reads = 0;
	assert_int_equal(gb_file_read(path, 10, &data, &len, &e), GB_E_OK);
	assert_true(n_reads > 0);	/* the wrap counts */
	assert_int_equal(len, 10);
	assert_string_equal(data, "aaaaaaaaaa");
	free(data);
	/* the descriptor gb_file_open() hands out blocks again */
	assert_int_equal(gb_file_open(path, 10, &fd, &size, &e), GB_E_OK);
	assert_int_equal(size, 10);
	assert_int_equal(fcntl(fd, F_GETFL) & (O_NONBLOCK | O_ACCMODE), O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	write_bytes(path, 'a', 0);
	assert_int_equal(gb_file_read(path, 10, &data, &len, &e), GB_E_OK);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);

	/* missing, or under a non-directory: not found */
	snprintf(sub, sizeof(sub), "%s/missing", dir);
	snprintf(want, sizeof(want), "cannot open %s: No such file or directory", sub);
	expect_refused(sub, GB_E_NOTFOUND, want);
	snprintf(sub, sizeof(sub), "%s/f/x", dir);
	snprintf(want, sizeof(want), "cannot open %s: Not a directory", sub);
	expect_refused(sub, GB_E_NOTFOUND, want);

	/* one byte over the limit: refused before a byte is read */
	write_bytes(path, 'b', (1 << 20) + 1);
	n_reads = 0;
	snprintf(want, sizeof(want), "%s is larger than %d bytes", path, 1 << 20);
	expect_refused(path, GB_E_INVALID, want);
	assert_int_equal(n_reads, 0);
	unlink(path);
	rmdir(dir);
}

static void test_file_read_not_regular(void **state)
{
	char dir[] = "/tmp/gb-test-file-XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[256], want[400];
	int sock, wfd;

	(void)state;
	/* A blocking open of the FIFO would wait for a writer for ever: the
	 * alarm turns that into a failure of this test. */
	alarm(20);
	assert_non_null(mkdtemp(dir));

	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(want, sizeof(want), "%s is not a regular file (a FIFO)", path);
	expect_refused(path, GB_E_IO, want);
	/* with a writer and bytes in it too: still not a file to read */
	wfd = open(path, O_RDWR | O_NONBLOCK);
	assert_true(wfd >= 0);
	assert_int_equal(write(wfd, "x\n", 2), 2);
	expect_refused(path, GB_E_IO, want);
	close(wfd);
	unlink(path);

	snprintf(want, sizeof(want), "%s is not a regular file (a directory)", dir);
	expect_refused(dir, GB_E_IO, want);

	expect_refused("/dev/null", GB_E_IO,
		       "/dev/null is not a regular file (a character device)");

	snprintf(path, sizeof(path), "%s/sock", dir);
	gb_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(sock >= 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(sock, 1), 0);
	snprintf(want, sizeof(want), "%s is not a regular file (a socket)", path);
	expect_refused(path, GB_E_IO, want);
	close(sock);
	unlink(path);

	/* a block device node (loop0's numbers): only root may make one */
	snprintf(path, sizeof(path), "%s/blk", dir);
	if (mknod(path, S_IFBLK | 0600, makedev(7, 0)) == 0) {
		snprintf(want, sizeof(want), "%s is not a regular file (a block device)",
			 path);
		expect_refused(path, GB_E_IO, want);
		unlink(path);
	} else {
		print_message("note: no block device node (mknod: %s): that case not run\n",
			      strerror(errno));
	}
	rmdir(dir);
	alarm(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_table),
		cmocka_unit_test(test_errorf_prefix),
		cmocka_unit_test(test_errlist),
		cmocka_unit_test(test_parse_long),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_strlcpy),
		cmocka_unit_test(test_url_redact),
		cmocka_unit_test(test_hostlist_expand),
		cmocka_unit_test(test_hostlist_match),
		cmocka_unit_test(test_hostlist_errors),
		cmocka_unit_test(test_log_file_and_redaction),
		cmocka_unit_test(test_log_secret_rotation),
		cmocka_unit_test(test_log_stderr_only_tty),
		cmocka_unit_test(test_log_q),
		cmocka_unit_test(test_log_level_parse),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_time_sleep),
		cmocka_unit_test(test_random_and_mkdir),
		cmocka_unit_test(test_file_read_regular),
		cmocka_unit_test(test_file_read_not_regular),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
