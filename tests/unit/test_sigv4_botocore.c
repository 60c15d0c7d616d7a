/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_sigv4_botocore.c - our SigV4 against a real third-party signer
 *
 * The same requests, built by our own code paths (EC2 form bodies from
 * gb_ec2_form_*, Host from gb_http), are signed by gb_sigv4_sign and by
 * Debian's python3-botocore (botocore.auth.SigV4Auth, via botocore_sign.py)
 * with the same credentials at the same frozen time; the Authorization
 * headers must be identical.  Exits 77 when /usr/bin/python3 cannot import
 * botocore (apt-get install python3-botocore).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "gb_ec2.h"
#include "gb_http.h"
#include "gb_sigv4.h"
#include "gb_str.h"

#define PYTHON "/usr/bin/python3"
#define SCRIPT GB_TOP_SRCDIR "/tests/unit/botocore_sign.py"
#define AK "AKIAIOSFODNN7EXAMPLE"
#define SK "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define TOKEN "IQoJb3JpZ2luX2VjEXAMPLE/+token=="
#define WHEN 1771057771	/* 2026-02-14T08:29:31Z */
#define WHEN_ISO "2026-02-14T08:29:31"

/*
 * Run python with [argv], feed [in] on stdin, collect stdout into [out].
 * RET the exit status, or -1 if it could not run.
 */
static int run_python(const char *const argv[], const char *in, struct gb_buf *out)
{
	static const char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8",
				      "PYTHONNOUSERSITE=1", "PYTHONDONTWRITEBYTECODE=1",
				      NULL };
	int pin[2], pout[2], status = 0;
	size_t off = 0, len = in ? strlen(in) : 0;
	char chunk[4096];
	pid_t pid;

	if (pipe2(pin, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(pout, O_CLOEXEC) != 0) {
		close(pin[0]);
		close(pin[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		/* execve's prototype predates const; it does not write */
		execve(PYTHON, (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	while (off < len) {
		ssize_t w = write(pin[1], in + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(pin[1]);
	for (;;) {
		ssize_t r = read(pout[0], chunk, sizeof(chunk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		gb_buf_append(out, chunk, (size_t)r);
	}
	close(pout[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool botocore_available(void)
{
	const char *const argv[] = { "python3", "-c", "import botocore.auth", NULL };
	struct gb_buf out = GB_BUF_INIT;
	int rc;

	if (access(PYTHON, X_OK) != 0)
		return false;
	rc = run_python(argv, NULL, &out);
	gb_buf_free(&out);
	return rc == 0;
}

/* One request to sign both ways. */
struct xreq {
	const char *name;
	const char *url;
	const char *service;
	const char *region;
	const char *content_type;
	const char *token;
	struct gb_buf body;
	char *ours;		/* our Authorization */
	char *our_creq;
};

static void hex_into(json_t *o, const char *key, const struct gb_buf *b)
{
	static const char digits[] = "0123456789abcdef";
	struct gb_buf h = GB_BUF_INIT;

	for (size_t i = 0; i < b->len; i++) {
		gb_buf_putc(&h, digits[(unsigned char)b->data[i] >> 4]);
		gb_buf_putc(&h, digits[(unsigned char)b->data[i] & 15]);
	}
	json_object_set_new(o, key, json_string(gb_buf_str(&h)));
	gb_buf_free(&h);
}

/* Sign [x] with our code: Host and path exactly as the client would send. */
static void sign_ours(struct xreq *x)
{
	gb_http_t *h = NULL;
	const char *q;
	char path[512];
	struct gb_sigv4_header hdr[2];
	struct gb_sigv4_request req = { .method = "POST", .headers = hdr,
					.n_headers = 2 };
	struct gb_sigv4_creds c = { AK, SK, x->token };
	struct gb_sigv4_result res;
	char base[256];
	gb_error_t e;

	/* the endpoint is everything before the path; the path may have a query */
	q = strstr(x->url, "://");
	assert_non_null(q);
	q = strchr(q + 3, '/');
	assert_non_null(q);
	snprintf(base, sizeof(base), "%.*s", (int)(q - x->url), x->url);
	snprintf(path, sizeof(path), "%s", q);
	assert_int_equal(gb_http_create(base, NULL, &h, &e), GB_E_OK);
	hdr[0].name = "Host";
	hdr[0].value = gb_http_host(h);
	hdr[1].name = "Content-Type";
	hdr[1].value = x->content_type;
	req.query = strchr(path, '?');
	if (req.query)
		*(char *)req.query++ = '\0';
	req.path = path;
	req.payload = x->body.data;
	req.payload_len = x->body.len;
	if (gb_sigv4_sign(&req, &c, x->region, x->service, WHEN, &res, &e) != GB_E_OK)
		fail_msg("%s: %s", x->name, e.text);
	x->ours = strdup(res.authorization);
	x->our_creq = strdup(res.canonical_request);
	assert_string_equal(res.amz_date, "20260214T082931Z");
	gb_sigv4_result_free(&res);
	gb_http_destroy(h);
}

static void build_requests(struct xreq *x, size_t *n)
{
	static const char *const sgs[] = { "sg-0123456789abcdef0", "sg-0fedcba9876543210" };
	static const struct gb_ec2_kv itags[] = {
		{ "gpuburst:cluster", "hpc east" }, { "gpuburst:node", "g5-[1-8]" },
		{ "Name", "burst node ✓ (α/β) +=&?" }, { "empty", "" },
	};
	static const struct gb_ec2_kv vtags[] = { { "gpuburst:request", "req-0001" } };
	static const struct gb_ec2_tag_spec ts[] = { { "instance", itags, 4 },
						     { "volume", vtags, 1 } };
	static const char ud[] = "#!/bin/bash\nset -eu\necho \"node=$(hostname)\" >> /tmp/x\n"
				 "printf '%s\\n' 'ünïcødé ok' # trailing ~!@#$%^&*()_+\n";
	static const char *const states[] = { "pending", "running" };
	static const char *const cluster[] = { "hpc east" };
	static const struct gb_ec2_filter flt[] = {
		{ "tag:gpuburst:cluster", cluster, 1 },
		{ "instance-state-name", states, 2 },
	};
	struct gb_ec2_run_params rp = {
		.image_id = "ami-025ece6a3a0e7558f", .instance_type = "g5.12xlarge",
		.min_count = 1, .max_count = 8, .subnet_id = "subnet-0c82087f981728760",
		.security_group_ids = sgs, .n_security_group_ids = 2,
		.key_name = "gpu key", .iam_instance_profile_name = "gpu-worker",
		.tag_specs = ts, .n_tag_specs = 2, .user_data = ud,
		.user_data_len = sizeof(ud) - 1, .spot = true,
		.spot_instance_type = "one-time", .spot_max_price = "1.25",
		.spot_interruption = "terminate",
	};
	struct gb_ec2_describe_params dp = { .filters = flt, .n_filters = 2,
					     .max_results = 100 };
	static const char converse[] =
		"{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":"
		"\"Plan 8 x g5.12xlarge across us-east-1, us-west-2 \\u2713\"}]}],"
		"\"inferenceConfig\":{\"maxTokens\":512,\"temperature\":0}}";
	const char *form = "application/x-www-form-urlencoded; charset=utf-8";
	gb_error_t e;

	memset(x, 0, 5 * sizeof(*x));
	x[0] = (struct xreq){ .name = "ec2-run-instances",
			      .url = "https://ec2.us-east-1.amazonaws.com/",
			      .service = "ec2", .region = "us-east-1",
			      .content_type = form };
	assert_int_equal(gb_ec2_form_run_instances(&rp, "req0001-us-east-1-s0-0-1a2b3c4d",
						   &x[0].body, &e), GB_E_OK);
	x[1] = (struct xreq){ .name = "ec2-describe-instances",
			      .url = "https://ec2.ap-northeast-1.amazonaws.com/",
			      .service = "ec2", .region = "ap-northeast-1",
			      .content_type = form };
	assert_int_equal(gb_ec2_form_describe_instances(&dp, "eyJ2IjoiMiJ9/+==",
							&x[1].body, &e), GB_E_OK);
	x[2] = (struct xreq){
		.name = "bedrock-converse",
		.url = "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
		       "anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
		.service = "bedrock", .region = "us-east-1",
		.content_type = "application/json" };
	gb_buf_puts(&x[2].body, converse);
	/* the launch again with temporary credentials (token signed) */
	x[3] = (struct xreq){ .name = "ec2-run-instances-session-token",
			      .url = "https://ec2.us-east-1.amazonaws.com/",
			      .service = "ec2", .region = "us-east-1",
			      .content_type = form, .token = TOKEN };
	assert_int_equal(gb_ec2_form_run_instances(&rp, "req0001-us-east-1-s0-0-1a2b3c4d",
						   &x[3].body, &e), GB_E_OK);
	/* a query string and a non-default port */
	x[4] = (struct xreq){ .name = "query-and-port",
			      .url = "http://127.0.0.1:8443/ec2/?Version=2016-11-15&Action=DescribeInstances"
				     "&Filter.1.Name=tag%3Agpuburst%3Acluster&Filter.1.Value.1=a%20b",
			      .service = "ec2", .region = "eu-west-1",
			      .content_type = form };
	*n = 5;
}

static void test_against_botocore(void **state)
{
	struct xreq x[5];
	size_t n = 0;
	json_t *specs = json_array(), *out, *results;
	char *in;
	const char *const argv[] = { "python3", SCRIPT, NULL };
	struct gb_buf buf = GB_BUF_INIT;
	json_error_t je;
	int rc;

	(void)state;
	build_requests(x, &n);
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_object();
		json_t *h = json_object();

		sign_ours(&x[i]);
		json_object_set_new(h, "Content-Type", json_string(x[i].content_type));
		json_object_set_new(s, "method", json_string("POST"));
		json_object_set_new(s, "url", json_string(x[i].url));
		json_object_set_new(s, "headers", h);
		hex_into(s, "body_hex", &x[i].body);
		json_object_set_new(s, "service", json_string(x[i].service));
		json_object_set_new(s, "region", json_string(x[i].region));
		json_object_set_new(s, "access_key", json_string(AK));
		json_object_set_new(s, "secret_key", json_string(SK));
		json_object_set_new(s, "token", x[i].token ? json_string(x[i].token)
							   : json_null());
		json_object_set_new(s, "time", json_string(WHEN_ISO));
		json_array_append_new(specs, s);
	}
	in = json_dumps(specs, JSON_COMPACT);
	rc = run_python(argv, in, &buf);
	assert_int_equal(rc, 0);
	out = json_loads(gb_buf_str(&buf), 0, &je);
	if (!out)
		fail_msg("botocore_sign.py printed no JSON: %s", gb_buf_str(&buf));
	print_message("botocore %s\n",
		      json_string_value(json_object_get(out, "botocore")));
	results = json_object_get(out, "results");
	assert_int_equal(json_array_size(results), n);
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(results, i);
		const char *theirs = json_string_value(json_object_get(r, "authorization"));

		assert_string_equal(json_string_value(json_object_get(r, "amz_date")),
				    "20260214T082931Z");
		if (strcmp(theirs, x[i].ours) != 0)
			fail_msg("%s:\n ours     %s\n botocore %s\n--- our canonical request\n%s\n"
				 "--- botocore's\n%s", x[i].name, x[i].ours, theirs,
				 x[i].our_creq,
				 json_string_value(json_object_get(r, "canonical_request")));
		print_message("%-32s identical: %.60s...\n", x[i].name, theirs + 17);
	}
	/* the Bedrock path was double-encoded by both */
	assert_non_null(strstr(x[2].our_creq, "v1%253A0/converse"));
	assert_non_null(strstr(x[3].ours, "x-amz-security-token"));
	for (size_t i = 0; i < n; i++) {
		free(x[i].ours);
		free(x[i].our_creq);
		gb_buf_free(&x[i].body);
	}
	free(in);
	json_decref(out);
	json_decref(specs);
	gb_buf_free(&buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_botocore),
	};

	if (!botocore_available()) {
		printf("SKIP: %s cannot import botocore (apt-get install python3-botocore)\n",
		       PYTHON);
		return 77;
	}
	return cmocka_run_group_tests_name("sigv4_botocore", tests, NULL, NULL);
}
