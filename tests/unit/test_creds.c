/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_creds.c - credential chain: explicit > environment > shared files >
 * IMDSv2 (against a loopback server), profiles, malformed files, expiry
 * and refresh with a fake clock, secrets kept out of the log, STS through
 * the configured proxy
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

#include "gb_creds.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"
#include "testproxy.h"
#include "testsrv.h"

#define T0 1767225600.0		/* 2026-01-01T00:00:00Z */

static char tmpdir[64];

static const char *const aws_vars[] = {
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_SECURITY_TOKEN", "AWS_CREDENTIAL_EXPIRATION", "AWS_PROFILE",
	"AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
	"AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT",
	"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
	"ALL_PROXY", "no_proxy", "NO_PROXY",
};

static char *path_in_tmp(const char *name)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmpdir, name);
	return buf[k];
}

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(path_in_tmp(name), "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Every test starts with an empty environment and HOME in a fresh dir. */
static int setup(void **state)
{
	char cmd[128];

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(aws_vars); i++)
		unsetenv(aws_vars[i]);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gb-test-creds-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	setenv("HOME", tmpdir, 1);
	snprintf(cmd, sizeof(cmd), "%s/.aws", tmpdir);
	return gb_mkdir_p(cmd, 0700, NULL) == GB_E_OK ? 0 : -1;
}

static void rm_tree(const char *dir)
{
	static const char *const names[] = { ".aws/credentials", ".aws/config",
					     "creds", "config", "log", "helper",
					     "token", "args", ".aws" };

	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++) {
		char p[256];

		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if (unlink(p) != 0)
			rmdir(p);
	}
	rmdir(dir);
}

static int teardown(void **state)
{
	(void)state;
	rm_tree(tmpdir);
	return 0;
}

/* Get credentials with [o]; RET the error code, snapshot in [s]. */
static gb_err_t get(const struct gb_creds_opts *o, struct gb_creds_snapshot *s,
		    gb_error_t *e)
{
	gb_creds_t *c = NULL;
	gb_err_t rc = gb_creds_create(o, &c, e);

	if (rc)
		return rc;
	rc = gb_creds_get(c, s, e);
	gb_creds_destroy(c);
	return rc;
}

static void test_explicit_first(void **state)
{
	struct gb_creds_opts o = { .access_key_id = "AKEXPLICIT",
				   .secret_access_key = "secret-explicit",
				   .session_token = "tok-explicit", .no_imds = true };
	struct gb_creds_snapshot s = { 0 };
	gb_creds_t *c = NULL;
	gb_error_t e;

	(void)state;
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret-env", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKEXPLICIT");
	assert_string_equal(s.secret_access_key, "secret-explicit");
	assert_string_equal(s.session_token, "tok-explicit");
	assert_int_equal(s.source, GB_CREDS_SRC_EXPLICIT);
	assert_true(s.expiration == 0);
	gb_creds_snapshot_clear(&s);
	assert_null(s.access_key_id);
	assert_null(s.secret_access_key);
	/* half-given explicit keys are a configuration error */
	o.secret_access_key = NULL;
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_CONFIG);
	assert_null(c);
	o.access_key_id = NULL;
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_CONFIG);
	assert_string_equal(gb_creds_source_name(GB_CREDS_SRC_IMDS), "imds");
	gb_creds_destroy(NULL);
	gb_creds_snapshot_clear(NULL);
}

static void test_env(void **state)
{
	struct gb_creds_opts o = { .no_imds = true };
	struct gb_creds_snapshot s = { 0 };
	gb_error_t e;

	(void)state;
	write_file(".aws/credentials",
		   "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = sfile\n"
		   "[other]\naws_access_key_id = AKOTHER\naws_secret_access_key = sother\n");
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret-env", 1);
	setenv("AWS_SECURITY_TOKEN", "legacy-token", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKENV");
	assert_string_equal(s.session_token, "legacy-token");
	assert_int_equal(s.source, GB_CREDS_SRC_ENV);
	gb_creds_snapshot_clear(&s);
	setenv("AWS_SESSION_TOKEN", "new-token", 1);
	setenv("AWS_CREDENTIAL_EXPIRATION", "2030-01-02T03:04:05Z", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.session_token, "new-token");
	assert_true(s.expiration == 1893553445.0);
	gb_creds_snapshot_clear(&s);
	setenv("AWS_CREDENTIAL_EXPIRATION", "soon", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "AWS_CREDENTIAL_EXPIRATION"));
	unsetenv("AWS_CREDENTIAL_EXPIRATION");
	/* AWS_PROFILE alone does not beat the environment keys (botocore) */
	setenv("AWS_PROFILE", "other", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKENV");
	gb_creds_snapshot_clear(&s);
	/* an explicitly configured profile does */
	o.profile = "other";
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKOTHER");
	assert_int_equal(s.source, GB_CREDS_SRC_CREDENTIALS_FILE);
	gb_creds_snapshot_clear(&s);
	o.profile = NULL;
	/* no_env skips the environment */
	o.no_env = true;
	unsetenv("AWS_PROFILE");
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKFILE");
	gb_creds_snapshot_clear(&s);
	o.no_env = false;
	/* half the pair is an error, not a silent fall-through */
	unsetenv("AWS_SECRET_ACCESS_KEY");
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_string_equal(e.text,
			    "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
}

static void test_files_profiles(void **state)
{
	struct gb_creds_opts o = { .no_imds = true };
	struct gb_creds_snapshot s = { 0 };
	gb_creds_t *c = NULL;
	char *region;
	gb_error_t e;

	(void)state;
	write_file(".aws/credentials",
		   "\xef\xbb\xbf# shared credentials\r\n"
		   "[default]\r\n"
		   "aws_access_key_id=AKDEFAULT\r\n"
		   "aws_secret_access_key =   sdefault   \r\n"
		   "\r\n"
		   "  ; indented comment\n"
		   "[ gpu-admin ]  # trailing comment\n"
		   "aws_access_key_id\t=\tAKADMIN\n"
		   "aws_secret_access_key = je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY\n"
		   "aws_session_token = tok;with#chars\n");
	write_file(".aws/config",
		   "[default]\nregion = us-west-2\n"
		   "[profile gpu-admin]\nregion = ap-northeast-1\n"
		   "s3 =\n  max_concurrent_requests = 20\n"
		   "[profile   cfgonly]\naws_access_key_id = AKCFG\n"
		   "aws_secret_access_key = scfg\nregion = eu-west-1\n"
		   "[cfgonly]\naws_access_key_id = AKWRONG\naws_secret_access_key = x\n"
		   "[profile role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n"
		   "[profile half]\naws_access_key_id = AKHALF\n");
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_OK);
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKDEFAULT");
	assert_string_equal(s.secret_access_key, "sdefault");
	assert_null(s.session_token);
	assert_int_equal(s.source, GB_CREDS_SRC_CREDENTIALS_FILE);
	region = gb_creds_region(c);
	assert_string_equal(region, "us-west-2");
	free(region);
	gb_creds_snapshot_clear(&s);
	gb_creds_destroy(c);

	setenv("AWS_PROFILE", "gpu-admin", 1);
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_OK);
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKADMIN");
	assert_string_equal(s.secret_access_key,
			    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY");
	/* values are verbatim: no inline comments (botocore) */
	assert_string_equal(s.session_token, "tok;with#chars");
	region = gb_creds_region(c);
	assert_string_equal(region, "ap-northeast-1");
	free(region);
	gb_creds_snapshot_clear(&s);
	gb_creds_destroy(c);

	/* keys in the config file ([profile x], not the bare [x]) */
	setenv("AWS_DEFAULT_PROFILE", "cfgonly", 1);
	unsetenv("AWS_PROFILE");
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKCFG");
	assert_int_equal(s.source, GB_CREDS_SRC_CONFIG_FILE);
	gb_creds_snapshot_clear(&s);
	unsetenv("AWS_DEFAULT_PROFILE");

	o.profile = "nosuch";
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "AWS profile \"nosuch\" not found"));
	/* a role: STS is asked (here a closed loopback port), never guessed */
	o.profile = "role";
	o.sts_endpoint = "http://127.0.0.1:1";
	assert_int_equal(get(&o, &s, &e), GB_E_HTTP);
	assert_non_null(strstr(e.text, "AWS profile \"role\""));
	assert_non_null(strstr(e.text, "STS AssumeRole arn:aws:iam::1:role/x"));
	o.sts_endpoint = NULL;
	o.sts_needs_endpoint = true;
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "set cloud.credentials.sts_endpoint"));
	o.sts_needs_endpoint = false;
	o.profile = "half";
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "[profile half] has aws_access_key_id but no aws_secret_access_key"));
	assert_non_null(strstr(e.text, "AWS profile \"half\""));

	/* explicit file paths and the environment variables for them */
	o.profile = NULL;
	write_file("creds", "[default]\naws_access_key_id = AKPATH\naws_secret_access_key = spath\n");
	setenv("AWS_SHARED_CREDENTIALS_FILE", path_in_tmp("creds"), 1);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKPATH");
	gb_creds_snapshot_clear(&s);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path_in_tmp("none"), 1);
	setenv("AWS_CONFIG_FILE", path_in_tmp("none2"), 1);
	/* missing files are skipped: nothing anywhere */
	assert_int_equal(get(&o, &s, &e), GB_E_AUTH);
	assert_non_null(strstr(e.text, "no AWS credentials found"));
	assert_non_null(strstr(e.text, "none2"));
	o.credentials_file = path_in_tmp("creds");
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "AKPATH");
	gb_creds_snapshot_clear(&s);
}

static void test_files_malformed(void **state)
{
	static const struct {
		const char *text;
		const char *msg;	/* expected after "FILE:" */
	} cases[] = {
		{ "[default\naws_access_key_id = A\n", "1: section header without ']'" },
		{ "[default]\naws_access_key_id A\n", "2: expected \"key = value\"" },
		{ "aws_access_key_id = A\n", "1: setting outside any [section]" },
		{ "[default]\n= x\n", "2: empty key" },
		{ "[a]\n[b]\n\n[a]\n", "4: duplicate section [a]" },
		{ "[default]\nx = 1\ny = 2\nx = 3\n", "4: duplicate key \"x\"" },
		{ "  indented = first\n", "1: indented line does not continue a setting" },
		{ "[]\n", "1: malformed section header" },
		{ "[default] junk\n", "1: malformed section header" },
	};
	struct gb_creds_opts o = { .no_imds = true };
	struct gb_creds_snapshot s = { 0 };
	char want[512];
	gb_error_t e;

	(void)state;
	o.credentials_file = path_in_tmp("creds");
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		write_file("creds", cases[i].text);
		assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
		snprintf(want, sizeof(want), "%s:%s", path_in_tmp("creds"),
			 cases[i].msg);
		if (strncmp(e.text, want, strlen(want)) != 0)
			fail_msg("case %zu: got \"%s\", want \"%s...\"", i, e.text,
				 want);
	}
	/* binary junk */
	{
		FILE *f = fopen(path_in_tmp("creds"), "w");

		assert_non_null(f);
		fwrite("[default]\n\0\0\0", 1, 13, f);
		fclose(f);
		assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
		assert_non_null(strstr(e.text, "NUL"));
	}
	/* a directory where the file should be */
	o.credentials_file = tmpdir;
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	snprintf(want, sizeof(want), "%s is not a regular file (a directory)", tmpdir);
	assert_string_equal(e.text, want);
	/* larger than 1 MiB */
	{
		FILE *f = fopen(path_in_tmp("creds"), "w");

		assert_non_null(f);
		for (int i = 0; i < (1 << 20) / 16 + 1; i++)
			fputs("# 16 bytes here\n", f);
		fclose(f);
		o.credentials_file = path_in_tmp("creds");
		assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
		snprintf(want, sizeof(want), "%s is larger than 1048576 bytes",
			 path_in_tmp("creds"));
		assert_string_equal(e.text, want);
	}
}

/*
 * A FIFO as either shared file: refused at once, naming it (a blocking
 * open waited for a writer for ever; the alarm fails the test instead).
 */
static void test_files_fifo(void **state)
{
	struct gb_creds_opts o = { .no_imds = true };
	struct gb_creds_snapshot s = { 0 };
	char want[512];
	gb_error_t e;

	(void)state;
	alarm(20);
	assert_int_equal(mkfifo(path_in_tmp("fifo"), 0600), 0);
	snprintf(want, sizeof(want), "%s is not a regular file (a FIFO)",
		 path_in_tmp("fifo"));
	o.credentials_file = path_in_tmp("fifo");
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_string_equal(e.text, want);
	o.credentials_file = path_in_tmp("none");
	o.config_file = path_in_tmp("fifo");
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_string_equal(e.text, want);
	unlink(path_in_tmp("fifo"));
	alarm(0);
}

/* ---- IMDSv2 ----------------------------------------------------------- */

struct imds {
	int mode;		/* what to misbehave about */
	int tokens_issued;
	int creds_served;
	char expiration[32];
};

enum {
	IMDS_OK, IMDS_NO_V2, IMDS_401_ONCE, IMDS_BAD_JSON, IMDS_CODE_FAIL,
	IMDS_NO_ROLE, IMDS_DOWN, IMDS_SLOW
};

static void imds_handler(void *ctx, size_t n, const struct testsrv_req *req,
			 struct testsrv_resp *resp)
{
	struct imds *m = ctx;
	const char *tok = testsrv_header(req, "X-aws-ec2-metadata-token");
	char want[32];

	(void)n;
	if (m->mode == IMDS_DOWN) {
		testsrv_reply(resp, 500, "down");
		return;
	}
	if (m->mode == IMDS_SLOW)
		resp->delay_ms = 3000;
	if (!strcmp(req->method, "PUT") && !strcmp(req->path, "/latest/api/token")) {
		const char *ttl = testsrv_header(req, "X-aws-ec2-metadata-token-ttl-seconds");

		if (m->mode == IMDS_NO_V2 || !ttl || strcmp(ttl, "21600")) {
			testsrv_reply(resp, 403, "");
			return;
		}
		m->tokens_issued++;
		snprintf(want, sizeof(want), "imds-token-%d", m->tokens_issued);
		testsrv_reply(resp, 200, want);
		return;
	}
	snprintf(want, sizeof(want), "imds-token-%d", m->tokens_issued);
	if (strcmp(req->method, "GET") || !tok || strcmp(tok, want)) {
		testsrv_reply(resp, 401, "");
		return;
	}
	if (m->mode == IMDS_401_ONCE) {
		m->mode = IMDS_OK;
		testsrv_reply(resp, 401, "");
		return;
	}
	if (!strcmp(req->path, "/latest/meta-data/iam/security-credentials/")) {
		if (m->mode == IMDS_NO_ROLE)
			testsrv_reply(resp, 404, "");
		else
			testsrv_reply(resp, 200, "gpu-worker-role\n");
		return;
	}
	if (!strcmp(req->path, "/latest/meta-data/iam/security-credentials/gpu-worker-role")) {
		m->creds_served++;
		if (m->mode == IMDS_BAD_JSON) {
			testsrv_reply(resp, 200, "{\"AccessKeyId\": ");
			return;
		}
		testsrv_reply(resp, 200, "");
		gb_buf_printf(&resp->body,
			      "{\"Code\": \"%s\", \"LastUpdated\": \"2026-01-01T00:00:00Z\","
			      " \"Type\": \"AWS-HMAC\", \"AccessKeyId\": \"ASIAIMDS%d\","
			      " \"SecretAccessKey\": \"imds-secret-%d\","
			      " \"Token\": \"imds-session-%d\", \"Expiration\": \"%s\"}",
			      m->mode == IMDS_CODE_FAIL ? "Failure" : "Success",
			      m->creds_served, m->creds_served, m->creds_served,
			      m->expiration);
		return;
	}
	testsrv_reply(resp, 404, "");
}

static double fake_now(void *ctx)
{
	return *(double *)ctx;
}

static void test_imds_flow_and_refresh(void **state)
{
	struct imds m = { .mode = IMDS_OK, .expiration = "2026-01-01T06:00:00Z" };
	struct testsrv *srv = testsrv_start(imds_handler, &m);
	double clock = T0;
	struct gb_creds_opts o = { .now = fake_now, .now_ctx = &clock };
	struct gb_creds_snapshot s = { 0 };
	const struct testsrv_req *r;
	gb_creds_t *c = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(srv);
	o.imds_endpoint = testsrv_url(srv);
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_OK);
	if (gb_creds_get(c, &s, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(s.access_key_id, "ASIAIMDS1");
	assert_string_equal(s.secret_access_key, "imds-secret-1");
	assert_string_equal(s.session_token, "imds-session-1");
	assert_int_equal(s.source, GB_CREDS_SRC_IMDS);
	assert_true(s.expiration == T0 + 6 * 3600);
	gb_creds_snapshot_clear(&s);
	/* token PUT, role list, role credentials: in that order */
	assert_int_equal(testsrv_count(srv), 3);
	r = testsrv_request(srv, 0);
	assert_string_equal(r->method, "PUT");
	assert_string_equal(r->path, "/latest/api/token");
	r = testsrv_request(srv, 2);
	assert_string_equal(testsrv_header(r, "X-aws-ec2-metadata-token"), "imds-token-1");

	/* cached: no more requests while far from expiry */
	clock = T0 + 3600;
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAIMDS1");
	gb_creds_snapshot_clear(&s);
	assert_int_equal(testsrv_count(srv), 3);

	/* inside the 10-minute window: refreshed, IMDS token reused */
	snprintf(m.expiration, sizeof(m.expiration), "2026-01-01T12:00:00Z");
	clock = T0 + 6 * 3600 - 500;
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAIMDS2");
	assert_true(s.expiration == T0 + 12 * 3600);
	gb_creds_snapshot_clear(&s);
	assert_int_equal(testsrv_count(srv), 5);
	assert_int_equal(m.tokens_issued, 1);

	/* refresh fails while the old credentials still hold: keep them */
	m.mode = IMDS_DOWN;
	clock = T0 + 12 * 3600 - 300;
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAIMDS2");
	gb_creds_snapshot_clear(&s);
	/* ... and do not hammer IMDS: next try a minute later at the earliest */
	{
		size_t before = testsrv_count(srv);

		clock += 30;
		assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
		gb_creds_snapshot_clear(&s);
		assert_int_equal(testsrv_count(srv), before);
	}
	/* expired and IMDS still down: an error */
	clock = T0 + 12 * 3600 + 1;
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_AUTH);
	assert_non_null(strstr(e.text, "IMDS"));

	/* IMDS back: invalidate forces a new resolution at once */
	m.mode = IMDS_OK;
	snprintf(m.expiration, sizeof(m.expiration), "2026-01-02T12:00:00Z");
	gb_creds_invalidate(c);
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAIMDS3");
	gb_creds_snapshot_clear(&s);
	gb_creds_destroy(c);
	testsrv_stop(srv);
}

static void test_imds_token_renewal(void **state)
{
	struct imds m = { .mode = IMDS_401_ONCE, .expiration = "2026-01-01T06:00:00Z" };
	struct testsrv *srv = testsrv_start(imds_handler, &m);
	double clock = T0;
	struct gb_creds_opts o = { .now = fake_now, .now_ctx = &clock };
	struct gb_creds_snapshot s = { 0 };
	gb_error_t e;

	(void)state;
	assert_non_null(srv);
	/* endpoint from the environment, with a trailing slash */
	{
		char url[80];

		snprintf(url, sizeof(url), "%s/", testsrv_url(srv));
		setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
	}
	/* a 401 means the token expired: a new one is fetched, once */
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAIMDS1");
	gb_creds_snapshot_clear(&s);
	assert_int_equal(m.tokens_issued, 2);
	/* disabled by the environment */
	setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_AUTH);
	assert_null(strstr(e.text, "IMDS"));
	testsrv_stop(srv);
}

static void test_imds_failures(void **state)
{
	static const struct {
		int mode;
		const char *msg;
	} cases[] = {
		{ IMDS_NO_V2, "token request refused (HTTP 403" },
		{ IMDS_NO_ROLE, "no IAM role attached" },
		{ IMDS_BAD_JSON, "not a JSON object" },
		{ IMDS_CODE_FAIL, "Code \"Failure\"" },
		{ IMDS_SLOW, "timed out" },
	};
	struct imds m;
	struct testsrv *srv = testsrv_start(imds_handler, &m);
	struct gb_creds_opts o = { .imds_timeout_ms = 500 };
	struct gb_creds_snapshot s = { 0 };
	gb_error_t e;

	(void)state;
	assert_non_null(srv);
	o.imds_endpoint = testsrv_url(srv);
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		memset(&m, 0, sizeof(m));
		m.mode = cases[i].mode;
		snprintf(m.expiration, sizeof(m.expiration), "2026-01-01T06:00:00Z");
		assert_int_equal(get(&o, &s, &e), GB_E_AUTH);
		if (!strstr(e.text, cases[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, e.text,
				 cases[i].msg);
		assert_non_null(strstr(e.text, "no AWS credentials found"));
	}
	testsrv_stop(srv);
	/* nothing listening at all */
	o.imds_endpoint = "http://127.0.0.1:1";
	assert_int_equal(get(&o, &s, &e), GB_E_AUTH);
	o.imds_endpoint = "ftp://x";
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "IMDS endpoint"));
	/* the same from the environment, found when the chain gets there */
	o.imds_endpoint = NULL;
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "not a url", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "IMDS endpoint"));
}

/* Loaded secrets are redacted from every log line. */
static void test_secrets_not_logged(void **state)
{
	struct gb_log_opts lo = { .level = GB_LOG_DEBUG, .no_stderr = true };
	struct gb_creds_opts o = { .no_imds = true };
	struct gb_creds_snapshot s = { 0 };
	char *log = NULL;
	gb_error_t e;

	(void)state;
	lo.file = path_in_tmp("log");
	assert_int_equal(gb_log_open("test_creds", &lo, &e), GB_E_OK);
	setenv("AWS_ACCESS_KEY_ID", "AKLOGTEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "very-secret-key-0123", 1);
	setenv("AWS_SESSION_TOKEN", "very-secret-token-4567", 1);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	gb_log_info("careless secret=%s token=%s", s.secret_access_key,
		    s.session_token);
	gb_creds_snapshot_clear(&s);
	gb_log_close();
	assert_int_equal(gb_file_read(path_in_tmp("log"), 1 << 20, &log, NULL, &e),
			 GB_E_OK);
	assert_non_null(strstr(log, "aws_credentials source=env"));
	assert_non_null(strstr(log, "careless secret=[REDACTED] token=[REDACTED]"));
	assert_null(strstr(log, "very-secret"));
	free(log);
	gb_log_secret_clear();
}


/* A helper script in the test directory; RET its path. */
static const char *helper(const char *body)
{
	char text[4096];
	const char *p = path_in_tmp("helper");

	snprintf(text, sizeof(text), "#!/bin/sh\n%s", body);
	write_file("helper", text);
	assert_int_equal(chmod(p, 0700), 0);
	return p;
}

/* The role settings are checked when the provider is created. */
static void test_own_source_rules(void **state)
{
	char *argv_rel[] = { (char *)"aws_signing_helper", NULL };
	static const struct {
		struct gb_creds_opts o;
		const char *msg;
	} cases[] = {
		{ { .role_arn = "arn:aws:iam::1:role/r" }, "exactly one of" },
		{ { .role_arn = "arn:aws:iam::1:role/r", .source_profile = "a",
		    .credential_source = "Environment" }, "exactly one of" },
		{ { .source_profile = "a" }, "need role_arn" },
		{ { .external_id = "xx" }, "need role_arn" },
		{ { .duration_seconds = 900 }, "need role_arn" },
		{ { .role_arn = "arn:aws:iam::1:role/r", .source_profile = "a",
		    .access_key_id = "AK", .secret_access_key = "s" }, "give one of" },
	};
	struct gb_creds_opts o = { 0 };
	gb_creds_t *c = NULL;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		assert_int_equal(gb_creds_create(&cases[i].o, &c, &e), GB_E_CONFIG);
		assert_null(c);
		if (!strstr(e.text, cases[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, e.text, cases[i].msg);
	}
	o.credential_process = argv_rel;
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_CONFIG);
	assert_non_null(strstr(e.text, "absolute path"));
}

/* Role settings that only show when the chain is walked. */
static void test_role_errors(void **state)
{
	static const struct {
		const char *config;
		const char *msg;
		const char *who;	/* NULL: "r" */
	} cases[] = {
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\n",
		  "role_arn needs source_profile, credential_source or web_identity_token_file" },
		{ "[profile r]\nweb_identity_token_file = /x\n",
		  "web_identity_token_file needs role_arn" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = nosuch\n",
		  "source_profile \"nosuch\" is in neither" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = b\n"
		  "[profile b]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = r\n",
		  "leads back to a profile already in the chain", "b" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = r\n",
		  "names the profile itself, which has no keys" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = EcsContainer\n",
		  "credential_source \"EcsContainer\" is not supported" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Ec2InstanceMetadata\n",
		  "instance metadata is off" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Environment\n",
		  "credential_source Environment: no credentials there" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Environment\nmfa_serial = arn:aws:iam::1:mfa/u\n",
		  "mfa_serial needs a person" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = r\naws_access_key_id = A\naws_secret_access_key = s\nduration_seconds = 60\n",
		  "duration_seconds \"60\" is not a number of seconds in 900-43200" },
		{ "[profile r]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = r\naws_access_key_id = A\naws_secret_access_key = s\nrole_session_name = a b\n",
		  "role_session_name \"a b\" is not 2-64" },
		{ "[profile r]\nrole_arn = nope\nsource_profile = r\naws_access_key_id = A\naws_secret_access_key = s\n",
		  "is not a role ARN" },
		{ "[profile r]\nsso_start_url = https://x\n",
		  "uses sso_start_url (IAM Identity Center)" },
		{ "[profile r]\ncredential_process = aws_signing_helper credential-process\n",
		  "\"aws_signing_helper\" must be an absolute path" },
		{ "[profile r]\ncredential_process = /bin/echo 'unterminated\n",
		  "unterminated ' quote" },
	};
	struct gb_creds_opts o = { .no_imds = true, .profile = "r",
				   .sts_endpoint = "http://127.0.0.1:1" };
	struct gb_creds_snapshot s = { 0 };
	char who[64], *cfg_path, *cred_path;
	gb_error_t e;

	(void)state;
	/* (path_in_tmp() reuses its buffers) */
	o.config_file = cfg_path = strdup(path_in_tmp("config"));
	o.credentials_file = cred_path = strdup(path_in_tmp("creds"));
	write_file("creds", "");
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		gb_err_t rc;

		write_file("config", cases[i].config);
		rc = get(&o, &s, &e);
		assert_int_not_equal(rc, GB_E_OK);
		if (!strstr(e.text, cases[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, e.text, cases[i].msg);
		snprintf(who, sizeof(who), "AWS profile \"%s\"", cases[i].who ? cases[i].who : "r");
		if (!strstr(e.text, who))
			fail_msg("case %zu: \"%s\" does not name the profile", i, e.text);
	}
	/* a role by web identity reads its token file at every refresh */
	write_file("config", "[profile r]\nrole_arn = arn:aws:iam::1:role/r\n"
			     "web_identity_token_file = /nonexistent/token\n");
	assert_int_equal(get(&o, &s, &e), GB_E_CONFIG);
	if (!strstr(e.text, "web_identity_token_file: cannot open /nonexistent/token"))
		fail_msg("%s", e.text);
	free(cfg_path);
	free(cred_path);
}

/* A scripted STS: every request gets AssumeRole's answer. */
static void sts_answer(void *ctx, size_t n, const struct testsrv_req *req,
		       struct testsrv_resp *resp)
{
	(void)ctx;
	(void)n;
	(void)req;
	testsrv_reply(resp, 200,
		      "<AssumeRoleResponse><AssumeRoleResult><Credentials>"
		      "<AccessKeyId>ASIAVIAPROXY</AccessKeyId>"
		      "<SecretAccessKey>via-proxy-secret</SecretAccessKey>"
		      "<SessionToken>via-proxy-token</SessionToken>"
		      "<Expiration>2026-01-01T01:00:00Z</Expiration>"
		      "</Credentials></AssumeRoleResult></AssumeRoleResponse>");
}

/*
 * The STS client of a role uses the proxy of opts.http (copied: the
 * caller's strings are gone by the time STS is asked).
 */
static void test_role_via_proxy(void **state)
{
	struct testsrv *sts = testsrv_start(sts_answer, NULL);
	struct testproxy *proxy = testproxy_start(0);
	struct gb_creds_opts o = { .no_imds = true, .profile = "r", .sts_region = "us-east-1",
				   .now = fake_now };
	struct gb_creds_snapshot s = { 0 };
	char endpoint[64], line[300], want[300];
	char *purl, *nph, *cfg_path, *cred_path;
	double clock = T0;
	gb_creds_t *c = NULL;
	gb_error_t e;

	(void)state;
	assert_non_null(sts);
	assert_non_null(proxy);
	o.now_ctx = &clock;
	snprintf(endpoint, sizeof(endpoint), "http://sts.gpuburst.test:%u", testsrv_port(sts));
	o.sts_endpoint = endpoint;
	o.config_file = cfg_path = strdup(path_in_tmp("config"));
	o.credentials_file = cred_path = strdup(path_in_tmp("creds"));
	write_file("config", "[profile r]\nrole_arn = arn:aws:iam::123456789012:role/gpuburst\n"
			     "source_profile = b\n");
	write_file("creds", "[b]\naws_access_key_id = AKIDEXAMPLE\n"
			    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n");
	o.http.proxy = purl = strdup(testproxy_url(proxy));
	o.http.no_proxy_hosts = nph = strdup("ec2.gpuburst.test");
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_OK);
	gb_free_secret(&purl);
	free(nph);
	if (gb_creds_get(c, &s, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(s.source, GB_CREDS_SRC_ASSUME_ROLE);
	assert_string_equal(s.access_key_id, "ASIAVIAPROXY");
	assert_int_equal(testproxy_count(proxy), 1);
	assert_true(testproxy_request(proxy, 0, line, sizeof(line), NULL, 0));
	snprintf(want, sizeof(want), "CONNECT sts.gpuburst.test:%u", testsrv_port(sts));
	assert_string_equal(line, want);
	assert_int_equal(testsrv_count(sts), 1);
	assert_non_null(strstr(testsrv_request(sts, 0)->body, "Action=AssumeRole"));
	gb_creds_snapshot_clear(&s);
	gb_creds_destroy(c);
	testproxy_stop(proxy);
	testsrv_stop(sts);
	free(cfg_path);
	free(cred_path);
	gb_log_secret_clear();
}

/* credential_process: a real helper, its JSON checked, its stderr logged. */
static void test_process(void **state)
{
	static const struct {
		const char *script;
		gb_err_t rc;
		const char *msg;
	} bad[] = {
		{ "echo '{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s\"}'\n",
		  GB_E_AUTH, "\"Version\" must be the number 1" },
		{ "echo '{\"Version\": \"1\", \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s\"}'\n",
		  GB_E_AUTH, "\"Version\" must be the number 1" },
		{ "echo '{\"Version\": 1, \"AccessKeyId\": \"A\"}'\n",
		  GB_E_AUTH, "no AccessKeyId or SecretAccessKey" },
		{ "echo '{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s\", \"Expiration\": \"soon\"}'\n",
		  GB_E_AUTH, "Expiration \"soon\" is not an ISO-8601 time" },
		{ "echo '{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s\", \"Expiration\": \"2020-01-01T00:00:00Z\"}'\n",
		  GB_E_AUTH, "expired at 2020-01-01T00:00:00Z" },
		{ "echo '{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s\", \"SessionToken\": 5}'\n",
		  GB_E_AUTH, "must be strings" },
		{ "echo 'not json'\n", GB_E_AUTH, "printed no JSON object" },
		{ "echo 'helper says no' >&2\nexit 3\n", GB_E_AUTH, "exited with status 3" },
		{ "exec sleep 10\n", GB_E_TIMEOUT, "did not finish within 0.3 s" },
		{ "head -c 70000 /dev/zero | tr '\\0' x\n", GB_E_AUTH, "printed more than 65536 bytes" },
	};
	struct gb_log_opts lo = { .level = GB_LOG_INFO, .no_stderr = true };
	/*
	 * 10 s for a helper to answer (the test binary under a sanitizer on a
	 * loaded machine takes more than the 0.3 s this once allowed); the
	 * case that must time out gets 0.3 s.
	 */
	struct gb_creds_opts o = { .no_imds = true, .process_timeout = 10 };
	struct gb_creds_snapshot s = { 0 };
	char *argv[4] = { NULL, (char *)"--role", (char *)"it's one arg", NULL };
	char *log = NULL, cfg[512], *cfg_path;
	gb_creds_t *c = NULL;
	gb_error_t e;

	(void)state;
	lo.file = path_in_tmp("log");
	assert_int_equal(gb_log_open("test_creds", &lo, &e), GB_E_OK);
	/* as an argv from gpuburst.yaml: no shell, PATH (and HOME) only */
	argv[0] = (char *)helper(
		"printf '%s\\n' \"$@\" > \"$HOME/args\"\n"
		"env | sort >> \"$HOME/args\"\n"
		"echo 'fetching credentials' >&2\n"
		"echo '{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\", "
		"\"SecretAccessKey\": \"proc-secret-0123\", "
		"\"SessionToken\": \"proc-token-4567\", "
		"\"Expiration\": \"2099-01-01T00:00:00Z\"}'\n");
	o.credential_process = argv;
	assert_int_equal(gb_creds_create(&o, &c, &e), GB_E_OK);
	assert_int_equal(gb_creds_get(c, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAPROC");
	assert_string_equal(s.session_token, "proc-token-4567");
	assert_int_equal(s.source, GB_CREDS_SRC_PROCESS);
	assert_true(s.expiration > 4000000000.0);
	gb_creds_snapshot_clear(&s);
	{
		char *d = gb_creds_describe(c);

		assert_string_equal(d, "credential-process");
		free(d);
	}
	gb_creds_destroy(c);
	assert_int_equal(gb_file_read(path_in_tmp("args"), 1 << 16, &log, NULL, &e), GB_E_OK);
	snprintf(cfg, sizeof(cfg), "--role\nit's one arg\nHOME=%s\n", tmpdir);
	if (strncmp(log, cfg, strlen(cfg)) != 0)
		fail_msg("helper saw \"%s\"", log);
	assert_non_null(strstr(log, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"));
	free(log);
	log = NULL;
	/* the same from a profile, the line split like a shell would */
	o.credential_process = NULL;
	o.profile = "proc";
	o.config_file = cfg_path = strdup(path_in_tmp("config"));
	snprintf(cfg, sizeof(cfg),
		 "[profile proc]\ncredential_process = %s --role \"it's one arg\"\n",
		 argv[0]);
	write_file("config", cfg);
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_string_equal(s.access_key_id, "ASIAPROC");
	gb_creds_snapshot_clear(&s);
	/* expiry: no Expiration, no expiry */
	helper("echo '{\"Version\": 1, \"AccessKeyId\": \"AKLONG\", \"SecretAccessKey\": \"s\"}'\n");
	assert_int_equal(get(&o, &s, &e), GB_E_OK);
	assert_true(s.expiration == 0);
	assert_null(s.session_token);
	gb_creds_snapshot_clear(&s);
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		gb_err_t rc;

		helper(bad[i].script);
		o.process_timeout = bad[i].rc == GB_E_TIMEOUT ? 0.3 : 10;
		rc = get(&o, &s, &e);
		if (rc != bad[i].rc)
			fail_msg("case %zu: %s (%s)", i, gb_err_name(rc), e.text);
		if (!strstr(e.text, bad[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, e.text, bad[i].msg);
		if (!strstr(e.text, "AWS profile \"proc\""))
			fail_msg("case %zu: \"%s\" does not name the profile", i, e.text);
	}
	gb_log_close();
	assert_int_equal(gb_file_read(path_in_tmp("log"), 1 << 20, &log, NULL, &e), GB_E_OK);
	assert_non_null(strstr(log, "credential_process_stderr"));
	assert_non_null(strstr(log, "line=\"fetching credentials\""));
	assert_non_null(strstr(log, "line=\"helper says no\""));
	assert_null(strstr(log, "proc-secret"));
	assert_null(strstr(log, "proc-token"));
	free(log);
	free(cfg_path);
	gb_log_secret_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_explicit_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imds_flow_and_refresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imds_token_renewal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imds_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secrets_not_logged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_source_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_role_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_role_via_proxy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process, setup, teardown),
	};

	return cmocka_run_group_tests_name("creds", tests, NULL, NULL);
}
