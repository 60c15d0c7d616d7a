/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ec2.c - the EC2 client end to end against scripted loopback servers:
 * signatures verified server-side, retries (same ClientToken every time),
 * errors returned at once, timeouts, caps, pagination, batches
 *
 * Waits go through the sleep seam (a fake clock), so back-off delays are
 * asserted exactly and nothing sleeps for real.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gb_creds.h"
#include "gb_ec2.h"
#include "gb_sigv4.h"
#include "gb_str.h"
#include "gb_util.h"
#include "testsrv.h"

#define AK "AKIDGPUBURSTTEST"
#define SK "test/secret+key=0123456789"
#define REGION "ap-northeast-1"
#define WALL 1771057771.0	/* 2026-02-14T08:29:31Z */

/* ---- the fake clock and sleep seam ------------------------------------ */

struct fake {
	double mono;
	double delays[32];
	int n_sleeps;
	double u;
};

static void fake_sleep(double s, void *ctx)
{
	struct fake *f = ctx;

	if (f->n_sleeps < 32)
		f->delays[f->n_sleeps] = s;
	f->n_sleeps++;
	f->mono += s;
}

static double fake_mono(void *ctx)
{
	return ((struct fake *)ctx)->mono;
}

static double fake_wall(void *ctx)
{
	(void)ctx;
	return WALL;
}

static double fake_uniform(void *ctx)
{
	return ((struct fake *)ctx)->u;
}

/* ---- server side helpers ---------------------------------------------- */

/* RET NEW decoded value of [key] in a form body, or NULL. */
static char *form_get(const char *body, const char *key)
{
	size_t klen = strlen(key);
	const char *p = body;

	while (p && *p) {
		const char *amp = strchr(p, '&');
		size_t len = amp ? (size_t)(amp - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			struct gb_buf b = GB_BUF_INIT;

			for (size_t i = klen + 1; i < len; i++) {
				unsigned v;

				if (p[i] == '%' && i + 2 < len &&
				    sscanf(p + i + 1, "%2x", &v) == 1) {
					gb_buf_putc(&b, (char)v);
					i += 2;
				} else {
					gb_buf_putc(&b, p[i]);
				}
			}
			return b.data ? gb_buf_steal(&b) : strdup("");
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

static size_t form_count(const char *body, const char *prefix)
{
	size_t n = 0, plen = strlen(prefix);

	for (const char *p = body; p && *p;) {
		if (!strncmp(p, prefix, plen))
			n++;
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return n;
}

/*
 * What a real endpoint does first: recompute the SigV4 signature from the
 * received request (our verifier) and compare.  RET whether it matched.
 */
static bool verify_request(const struct testsrv_req *r)
{
	struct gb_sigv4_header h[16];
	struct gb_sigv4_request req = { 0 };
	struct gb_sigv4_creds c = { AK, SK, NULL };
	struct gb_sigv4_auth auth;
	const char *authz = testsrv_header(r, "Authorization");
	gb_err_t rc;

	if (!authz || gb_sigv4_auth_parse(authz, &auth, NULL) != GB_E_OK)
		return false;
	if (strcmp(auth.service, "ec2") || strcmp(auth.region, REGION) ||
	    auth.signed_headers.n > 16) {
		gb_sigv4_auth_free(&auth);
		return false;
	}
	for (size_t i = 0; i < auth.signed_headers.n; i++) {
		h[i].name = auth.signed_headers.v[i];
		h[i].value = testsrv_header(r, auth.signed_headers.v[i]);
		if (!h[i].value) {
			gb_sigv4_auth_free(&auth);
			return false;
		}
	}
	req.method = r->method;
	req.path = r->path;
	req.query = r->query;
	req.headers = h;
	req.n_headers = auth.signed_headers.n;
	req.payload = r->body;
	req.payload_len = r->body_len;
	rc = gb_sigv4_verify(&req, &auth, &c, NULL, NULL);
	gb_sigv4_auth_free(&auth);
	return rc == GB_E_OK;
}

static void reply_error(struct testsrv_resp *resp, unsigned status,
			const char *code, const char *msg)
{
	testsrv_reply(resp, status, NULL);
	gb_buf_printf(&resp->body,
		      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>"
		      "<Code>%s</Code><Message>%s</Message></Error></Errors>"
		      "<RequestID>req-%s</RequestID></Response>", code, msg, code);
}

/* A RunInstancesResponse with [n] instances carrying [token]. */
static void reply_run(struct testsrv_resp *resp, const char *token, int n)
{
	testsrv_reply(resp, 200, NULL);
	gb_buf_printf(&resp->body,
		      "<RunInstancesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
		      "<requestId>run-1</requestId><reservationId>r-1</reservationId>"
		      "<ownerId>111122223333</ownerId><groupSet/><instancesSet>");
	for (int i = 0; i < n; i++)
		gb_buf_printf(&resp->body,
			      "<item><instanceId>i-%04d</instanceId><imageId>ami-1</imageId>"
			      "<instanceState><code>0</code><name>pending</name></instanceState>"
			      "<instanceType>g6.xlarge</instanceType>"
			      "<launchTime>2026-02-14T08:29:31.000Z</launchTime>"
			      "<placement><availabilityZone>ap-northeast-1a</availabilityZone></placement>"
			      "<subnetId>subnet-1</subnetId><privateIpAddress>10.0.0.%d</privateIpAddress>"
			      "<clientToken>%s</clientToken><amiLaunchIndex>%d</amiLaunchIndex>"
			      "<tagSet><item><key>gpuburst:node</key><value>g6-%d</value></item></tagSet>"
			      "</item>", i, i + 10, token, i, i + 1);
	gb_buf_puts(&resp->body, "</instancesSet></RunInstancesResponse>");
}

static int page_number(const char *s);

/* A scripted endpoint: behaviour [script[n]] for the n-th request. */
enum step {
	S_OK,			/* the right success response for the action */
	S_THROTTLE,		/* 503 RequestLimitExceeded */
	S_ICE,			/* 500 InsufficientInstanceCapacity */
	S_VCPU,			/* 400 VcpuLimitExceeded */
	S_BADPARAM,		/* 400 InvalidParameterValue */
	S_UNAUTH,		/* 403 UnauthorizedOperation */
	S_AUTHFAIL,		/* 401 AuthFailure */
	S_INTERNAL,		/* 500 InternalError */
	S_HTML502,		/* 502 with an HTML page */
	S_HTML400,		/* 400 with an HTML page */
	S_SLOW,			/* answer after 3 s (the client times out) */
	S_HUGE,			/* a 2 MiB body */
	S_ICE200,		/* an error envelope with status 200 */
	S_DRYRUN,		/* 412 DryRunOperation */
	S_NOAMI,		/* 400 InvalidAMIID.NotFound */
	S_CODE,			/* ep->err_status with ep->err_code, ep->err_msg */
};

struct endpoint {
	const enum step *script;
	size_t n_script;
	bool bad_signature;	/* some request failed verification */
	int run_instances;	/* instances per RunInstances */
	int pages;		/* DescribeInstances pages to serve */
	bool repeat_token;	/* serve the same nextToken forever */
	unsigned err_status;	/* S_CODE */
	const char *err_code;
	const char *err_msg;
	const char *body;	/* S_OK answers this instead, whatever the action */
};

/* Answer with constructed file [rel] of tests/data/ec2/constructed. */
static void reply_file(struct testsrv_resp *resp, const char *rel)
{
	char path[512];
	char *data = NULL;

	snprintf(path, sizeof(path), "%s/tests/data/ec2/constructed/%s", GB_TOP_SRCDIR, rel);
	assert_int_equal(gb_file_read(path, 1 << 20, &data, NULL, NULL), GB_E_OK);
	testsrv_reply(resp, 200, data);
	free(data);
}

/*
 * Issue 19's actions: page 1 of a listing carries a nextToken; a request
 * with NextToken or with named items gets the last page.
 */
static bool reply_ok_issue19(const char *action, const struct testsrv_req *r,
			     struct testsrv_resp *resp)
{
	bool more = strstr(r->body, "&NextToken=") || strstr(r->body, "&InstanceType.1=") ||
		    strstr(r->body, "&GroupId.1=") || strstr(r->body, "&CapacityReservationId.1=");

	if (!strcmp(action, "DescribeInstanceTypes"))
		reply_file(resp, more ? "describe-instance-types-page2.xml"
				      : "describe-instance-types-page1.xml");
	else if (!strcmp(action, "DescribeSecurityGroups"))
		reply_file(resp, more ? "describe-security-groups-page2.xml"
				      : "describe-security-groups-page1.xml");
	else if (!strcmp(action, "DescribeCapacityReservations"))
		reply_file(resp, more ? "describe-capacity-reservations-page2.xml"
				      : "describe-capacity-reservations-page1.xml");
	else if (!strcmp(action, "DescribeCapacityBlockOfferings"))
		reply_file(resp, strstr(r->body, "&NextToken=")
					 ? "describe-capacity-block-offerings-page2.xml"
					 : "describe-capacity-block-offerings-page1.xml");
	else if (!strcmp(action, "DescribeSpotPriceHistory"))
		reply_file(resp, strstr(r->body, "&NextToken=")
					 ? "describe-spot-price-history-page2.xml"
					 : "describe-spot-price-history-page1.xml");
	else if (!strcmp(action, "DescribePlacementGroups"))
		reply_file(resp, "describe-placement-groups.xml");
	else if (!strcmp(action, "CreatePlacementGroup"))
		testsrv_reply(resp, 200, "<CreatePlacementGroupResponse><requestId>cpg</requestId>"
				       "<return>true</return></CreatePlacementGroupResponse>");
	else if (!strcmp(action, "DeletePlacementGroup"))
		testsrv_reply(resp, 200, "<DeletePlacementGroupResponse><requestId>dpg</requestId>"
				       "<return>true</return></DeletePlacementGroupResponse>");
	else
		return false;
	return true;
}

static void reply_ok(struct endpoint *ep, size_t n, const char *action,
		     const struct testsrv_req *r, struct testsrv_resp *resp)
{
	if (ep->body) {
		testsrv_reply(resp, 200, ep->body);
	} else if (reply_ok_issue19(action, r, resp)) {
		return;
	} else if (!strcmp(action, "RunInstances")) {
		char *tok = form_get(r->body, "ClientToken");

		reply_run(resp, tok ? tok : "", ep->run_instances ? ep->run_instances : 1);
		free(tok);
	} else if (!strcmp(action, "DescribeInstances")) {
		char *tok = form_get(r->body, "NextToken");
		int page = tok ? page_number(tok) : 0;

		(void)n;
		testsrv_reply(resp, 200, NULL);
		gb_buf_printf(&resp->body,
			      "<DescribeInstancesResponse><requestId>d-%d</requestId><reservationSet>"
			      "<item><reservationId>r-p%d</reservationId><instancesSet>"
			      "<item><instanceId>i-p%da</instanceId></item>"
			      "<item><instanceId>i-p%db</instanceId></item>"
			      "</instancesSet></item></reservationSet>", page, page, page, page);
		if (ep->repeat_token)
			gb_buf_puts(&resp->body, "<nextToken>page-1</nextToken>");
		else if (page + 1 < ep->pages)
			gb_buf_printf(&resp->body, "<nextToken>page-%d</nextToken>", page + 1);
		gb_buf_puts(&resp->body, "</DescribeInstancesResponse>");
		free(tok);
	} else if (!strcmp(action, "TerminateInstances")) {
		size_t ids = form_count(r->body, "InstanceId.");

		testsrv_reply(resp, 200, "<TerminateInstancesResponse><requestId>t</requestId><instancesSet>");
		for (size_t i = 1; i <= ids; i++) {
			char key[32];
			char *id;

			snprintf(key, sizeof(key), "InstanceId.%zu", i);
			id = form_get(r->body, key);
			gb_buf_printf(&resp->body,
				      "<item><instanceId>%s</instanceId><currentState><code>32</code>"
				      "<name>shutting-down</name></currentState><previousState>"
				      "<code>16</code><name>running</name></previousState></item>",
				      id ? id : "?");
			free(id);
		}
		gb_buf_puts(&resp->body, "</instancesSet></TerminateInstancesResponse>");
	} else if (!strcmp(action, "CreateTags")) {
		testsrv_reply(resp, 200, "<CreateTagsResponse><requestId>ct</requestId>"
				       "<return>true</return></CreateTagsResponse>");
	} else {
		reply_error(resp, 400, "InvalidAction", "not scripted");
	}
}

static void endpoint_handler(void *ctx, size_t n, const struct testsrv_req *r,
			     struct testsrv_resp *resp)
{
	struct endpoint *ep = ctx;
	enum step st = n < ep->n_script ? ep->script[n] : S_OK;
	char *action = form_get(r->body, "Action");

	if (!verify_request(r)) {
		ep->bad_signature = true;
		reply_error(resp, 403, "SignatureDoesNotMatch", "bad signature");
		free(action);
		return;
	}
	switch (st) {
	case S_OK:
		reply_ok(ep, n, action ? action : "", r, resp);
		break;
	case S_THROTTLE:
		reply_error(resp, 503, "RequestLimitExceeded", "Request limit exceeded.");
		break;
	case S_ICE:
		reply_error(resp, 500, "InsufficientInstanceCapacity",
			    "We currently do not have sufficient g6.xlarge capacity.");
		break;
	case S_ICE200:
		reply_error(resp, 200, "InsufficientInstanceCapacity", "odd but seen");
		break;
	case S_VCPU:
		reply_error(resp, 400, "VcpuLimitExceeded", "vCPU limit of 32");
		break;
	case S_BADPARAM:
		reply_error(resp, 400, "InvalidParameterValue", "bad value");
		break;
	case S_UNAUTH:
		reply_error(resp, 403, "UnauthorizedOperation", "not authorized");
		break;
	case S_AUTHFAIL:
		reply_error(resp, 401, "AuthFailure", "could not validate");
		break;
	case S_INTERNAL:
		reply_error(resp, 500, "InternalError", "oops");
		break;
	case S_HTML502:
		testsrv_reply(resp, 502, "<html><body>Bad Gateway</body></html>");
		break;
	case S_HTML400:
		testsrv_reply(resp, 400, "<html><body>Bad Request</body></html>");
		break;
	case S_DRYRUN:
		reply_error(resp, 412, "DryRunOperation",
			    "Request would have succeeded, but DryRun flag is set.");
		break;
	case S_NOAMI:
		reply_error(resp, 400, "InvalidAMIID.NotFound",
			    "The image id '[ami-025ece6a3a0e7558f]' does not exist");
		break;
	case S_CODE:
		reply_error(resp, ep->err_status, ep->err_code, ep->err_msg);
		break;
	case S_SLOW:
		reply_ok(ep, n, action ? action : "", r, resp);
		resp->delay_ms = 3000;
		break;
	case S_HUGE:
		testsrv_reply(resp, 200, NULL);
		for (int i = 0; i < (2 << 20) / 16; i++)
			gb_buf_puts(&resp->body, "<!-- padding -->");
		break;
	}
	free(action);
}

/* The page number at the end of "page-N". */
static int page_number(const char *s)
{
	long v = 0;
	const char *dash = strrchr(s, '-');

	if (dash && gb_parse_long(dash + 1, 0, 1000, &v) == GB_E_OK)
		return (int)v;
	return 0;
}

/* ---- fixture --------------------------------------------------------------- */

struct fix {
	struct endpoint ep;
	struct testsrv *srv;
	gb_creds_t *creds;
	gb_ec2_t *ec2;
	struct fake clock;
};

static void fix_start(struct fix *f, const enum step *script, size_t n,
		      const struct gb_ec2_opts *extra)
{
	struct gb_creds_opts co = { .access_key_id = AK, .secret_access_key = SK };
	struct gb_ec2_opts o = { 0 };
	gb_error_t e;

	memset(f, 0, sizeof(*f));
	f->ep.script = script;
	f->ep.n_script = n;
	f->clock.u = 0.5;
	f->srv = testsrv_start(endpoint_handler, &f->ep);
	assert_non_null(f->srv);
	assert_int_equal(gb_creds_create(&co, &f->creds, &e), GB_E_OK);
	if (extra)
		o = *extra;
	o.region = REGION;
	if (!o.endpoint)
		o.endpoint = testsrv_url(f->srv);
	o.creds = f->creds;
	o.sleep = fake_sleep;
	o.mono = fake_mono;
	o.wall = fake_wall;
	o.uniform = fake_uniform;
	o.seam_ctx = &f->clock;
	if (!o.retry.max_attempts)
		o.retry.max_attempts = 4;
	if (!o.retry.base_delay)
		o.retry.base_delay = 0.5;
	if (gb_ec2_create(&o, &f->ec2, &e) != GB_E_OK)
		fail_msg("%s", e.text);
}

static void fix_stop(struct fix *f)
{
	assert_false(f->ep.bad_signature);
	gb_ec2_destroy(f->ec2);
	gb_creds_destroy(f->creds);
	testsrv_stop(f->srv);
}

static const struct gb_ec2_run_params run4 = {
	.image_id = "ami-025ece6a3a0e7558f", .instance_type = "g6.xlarge",
	.min_count = 1, .max_count = 4, .subnet_id = "subnet-1",
};

/* ---- tests --------------------------------------------------------------- */

static void test_throttle_then_success(void **state)
{
	static const enum step script[] = { S_THROTTLE, S_THROTTLE, S_OK };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char *tok[3];

	(void)state;
	fix_start(&f, script, 3, NULL);
	f.ep.run_instances = 3;
	if (gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 3);
	assert_int_equal(ae.attempts, 3);
	assert_int_equal(ae.cls, GB_EC2_CLASS_NONE);
	/* full jitter with u = 0.5: 0.5 * 0.5 * 2^n */
	assert_int_equal(f.clock.n_sleeps, 2);
	assert_true(f.clock.delays[0] == 0.25);
	assert_true(f.clock.delays[1] == 0.5);
	/* three identical requests, one ClientToken (generated, "gb-...") */
	assert_int_equal(testsrv_count(f.srv), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct testsrv_req *r = testsrv_request(f.srv, i);

		tok[i] = form_get(r->body, "ClientToken");
		assert_non_null(tok[i]);
		assert_string_equal(r->body, testsrv_request(f.srv, 0)->body);
		assert_string_equal(testsrv_header(r, "X-Amz-Date"), "20260214T082931Z");
		assert_string_equal(testsrv_header(r, "Content-Type"),
				    "application/x-www-form-urlencoded; charset=utf-8");
	}
	assert_true(gb_str_has_prefix(tok[0], "gb-"));
	assert_string_equal(tok[0], tok[1]);
	assert_string_equal(tok[1], tok[2]);
	assert_string_equal(l->client_token, tok[0]);
	assert_string_equal(l->v[0].client_token, tok[0]);
	assert_string_equal(l->v[2].instance_id, "i-0002");
	assert_string_equal(gb_ec2_instance_tag(&l->v[1], "gpuburst:node"), "g6-2");
	for (size_t i = 0; i < 3; i++)
		free(tok[i]);
	gb_ec2_instance_list_free(l);
	fix_stop(&f);
}

static void test_capacity_returned_at_once(void **state)
{
	static const enum step script[] = { S_ICE, S_OK };
	static const char *const sgs[] = { "sg-1", "sg-2" };
	struct gb_ec2_run_params p = run4;
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char *v;

	(void)state;
	fix_start(&f, script, 2, NULL);
	p.client_token = "req0007-ap-northeast-1-s0-1";
	p.security_group_ids = sgs;
	p.n_security_group_ids = 2;
	assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), GB_E_CAPACITY);
	assert_null(l);
	assert_int_equal(ae.cls, GB_EC2_CLASS_CAPACITY);
	assert_int_equal(ae.http_status, 500);
	assert_int_equal(ae.attempts, 1);
	assert_true(ae.known_code);
	assert_string_equal(ae.code, "InsufficientInstanceCapacity");
	assert_string_equal(ae.request_id, "req-InsufficientInstanceCapacity");
	assert_non_null(strstr(ae.message, "sufficient g6.xlarge capacity"));
	assert_non_null(strstr(e.text, "RunInstances ap-northeast-1: InsufficientInstanceCapacity: "));
	assert_non_null(strstr(e.text, "(HTTP 500, RequestID req-InsufficientInstanceCapacity, CAPACITY, 1 attempt)"));
	assert_int_equal(f.clock.n_sleeps, 0);
	assert_int_equal(testsrv_count(f.srv), 1);
	v = form_get(testsrv_request(f.srv, 0)->body, "ClientToken");
	assert_string_equal(v, "req0007-ap-northeast-1-s0-1");
	free(v);
	v = form_get(testsrv_request(f.srv, 0)->body, "SecurityGroupId.2");
	assert_string_equal(v, "sg-2");
	free(v);
	fix_stop(&f);
}

/* DryRun=true: DryRunOperation is success, anything else the classified error. */
static void test_dry_run(void **state)
{
	static const enum step ok[] = { S_THROTTLE, S_DRYRUN };
	static const char *const sgs[] = { "sg-1", "sg-2" };
	struct gb_ec2_run_params p = run4;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e = { GB_E_IO, "stale" };
	const char *body;
	char *v;

	(void)state;
	p.security_group_ids = sgs;
	p.n_security_group_ids = 2;
	p.key_name = "ops";
	p.iam_instance_profile_name = "gpuburst-node";
	fix_start(&f, ok, 2, NULL);
	if (gb_ec2_run_instances_dry_run(f.ec2, &p, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(e.code, GB_E_OK);
	assert_string_equal(e.text, "");
	assert_int_equal(ae.cls, GB_EC2_CLASS_NONE);
	assert_string_equal(ae.code, "DryRunOperation");
	assert_int_equal(ae.http_status, 412);
	assert_string_equal(ae.request_id, "req-DryRunOperation");
	assert_int_equal(ae.attempts, 2);	/* the throttle was retried */
	assert_int_equal(testsrv_count(f.srv), 2);
	body = testsrv_request(f.srv, 1)->body;
	assert_true(strlen(body) > 12 && !strcmp(body + strlen(body) - 12, "&DryRun=true"));
	assert_string_equal(body, testsrv_request(f.srv, 0)->body);
	v = form_get(body, "SecurityGroupId.2");
	assert_string_equal(v, "sg-2");
	free(v);
	v = form_get(body, "IamInstanceProfile.Name");
	assert_string_equal(v, "gpuburst-node");
	free(v);
	v = form_get(body, "ClientToken");
	assert_true(gb_str_has_prefix(v, "gb-"));
	free(v);
	fix_stop(&f);
}

static void test_dry_run_errors(void **state)
{
	static const struct {
		enum step st;
		gb_err_t rc;
		const char *code;
		const char *text;
	} cases[] = {
		{ S_NOAMI, GB_E_CLOUDCONFIG, "InvalidAMIID.NotFound",
		  "RunInstances ap-northeast-1: InvalidAMIID.NotFound: The image id '[ami-025ece6a3a0e7558f]' does not exist (HTTP 400" },
		{ S_UNAUTH, GB_E_AUTH, "UnauthorizedOperation",
		  "RunInstances ap-northeast-1: UnauthorizedOperation: not authorized (HTTP 403" },
		{ S_ICE, GB_E_CAPACITY, "InsufficientInstanceCapacity", "(HTTP 500" },
		/* an endpoint that ignores DryRun and launches */
		{ S_OK, GB_E_CLOUD, "",
		  "RunInstances ap-northeast-1: the endpoint ignored DryRun=true and launched 2 instances: i-0000 i-0001" },
	};
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_run_params p = run4;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		fix_start(&f, &cases[i].st, 1, NULL);
		f.ep.run_instances = 2;
		assert_int_equal(gb_ec2_run_instances_dry_run(f.ec2, &run4, &ae, &e), cases[i].rc);
		assert_string_equal(ae.code, cases[i].code);
		if (!strstr(e.text, cases[i].text))
			fail_msg("want '%s' in '%s'", cases[i].text, e.text);
		assert_int_equal(testsrv_count(f.srv), 1);
		fix_stop(&f);
	}
	/* a dry run is its own call; the launch refuses the flag */
	fix_start(&f, NULL, 0, NULL);
	p.dry_run = true;
	assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), GB_E_INVALID);
	assert_null(l);
	assert_int_equal(gb_ec2_run_instances_dry_run(f.ec2, NULL, &ae, &e), GB_E_INVALID);
	assert_int_equal(testsrv_count(f.srv), 0);
	fix_stop(&f);
}

static void test_final_classes_not_retried(void **state)
{
	static const struct {
		enum step st;
		gb_err_t rc;
		enum gb_ec2_class cls;
		long status;
	} cases[] = {
		{ S_VCPU, GB_E_QUOTA, GB_EC2_CLASS_QUOTA, 400 },
		{ S_BADPARAM, GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG, 400 },
		{ S_UNAUTH, GB_E_AUTH, GB_EC2_CLASS_REGION, 403 },
		{ S_HTML400, GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG, 400 },
		{ S_ICE200, GB_E_CAPACITY, GB_EC2_CLASS_CAPACITY, 200 },
	};

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		struct gb_ec2_instance_list *l = NULL;
		struct gb_ec2_error ae;
		struct fix f;
		gb_error_t e;

		fix_start(&f, &cases[i].st, 1, NULL);
		assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e),
				 cases[i].rc);
		assert_int_equal(ae.cls, cases[i].cls);
		assert_int_equal(ae.http_status, cases[i].status);
		assert_int_equal(ae.attempts, 1);
		assert_int_equal(f.clock.n_sleeps, 0);
		assert_int_equal(testsrv_count(f.srv), 1);
		assert_null(l);
		fix_stop(&f);
	}
}

static void test_auth_failure_refreshes_once(void **state)
{
	static const enum step s1[] = { S_AUTHFAIL, S_OK };
	static const enum step s2[] = { S_AUTHFAIL, S_AUTHFAIL, S_OK };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, s1, 2, NULL);
	assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_OK);
	assert_int_equal(ae.attempts, 2);
	assert_int_equal(f.clock.n_sleeps, 1);
	assert_true(f.clock.delays[0] == 0);
	gb_ec2_instance_list_free(l);
	fix_stop(&f);
	/* a second AuthFailure is final */
	fix_start(&f, s2, 3, NULL);
	assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_AUTH);
	assert_int_equal(ae.attempts, 2);
	assert_string_equal(ae.code, "AuthFailure");
	assert_int_equal(ae.cls, GB_EC2_CLASS_REGION);
	assert_int_equal(testsrv_count(f.srv), 2);
	fix_stop(&f);
}

static void test_transient_bounded(void **state)
{
	static const enum step script[] = { S_INTERNAL, S_HTML502, S_INTERNAL,
					    S_INTERNAL, S_INTERNAL, S_OK };
	struct gb_ec2_opts budget = { .retry = { .max_attempts = 10, .base_delay = 1,
						 .max_delay = 100, .max_total = 5 } };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	/* attempts: 4 requests, 3 waits of 0.25, 0.5, 1.0 */
	fix_start(&f, script, 6, NULL);
	assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_TRANSIENT);
	assert_int_equal(ae.attempts, 4);
	assert_int_equal(testsrv_count(f.srv), 4);
	assert_int_equal(f.clock.n_sleeps, 3);
	assert_true(f.clock.delays[0] == 0.25 && f.clock.delays[1] == 0.5 &&
		    f.clock.delays[2] == 1.0);
	assert_string_equal(ae.code, "InternalError");
	assert_non_null(strstr(e.text, "4 attempts"));
	fix_stop(&f);
	/* total time: waits 0.5, 1, 2 fit in 5 s, the next (4) does not */
	fix_start(&f, script, 6, &budget);
	assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_TRANSIENT);
	assert_int_equal(ae.attempts, 4);
	assert_true(f.clock.mono <= 5.0);
	fix_stop(&f);
	/* a 502 without an envelope is transient too, and then it works */
	{
		static const enum step s[] = { S_HTML502, S_OK };

		fix_start(&f, s, 2, NULL);
		assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_OK);
		assert_int_equal(ae.attempts, 2);
		gb_ec2_instance_list_free(l);
		fix_stop(&f);
	}
}

static void test_timeout_same_token(void **state)
{
	static const enum step script[] = { S_SLOW, S_OK };
	struct gb_ec2_opts o = { .http = { .timeout_ms = 800 } };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char *t0, *t1;

	(void)state;
	fix_start(&f, script, 2, &o);
	if (gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(ae.attempts, 2);
	/* the server saw the launch twice, with one token: EC2 launches once */
	assert_int_equal(testsrv_count(f.srv), 2);
	t0 = form_get(testsrv_request(f.srv, 0)->body, "ClientToken");
	t1 = form_get(testsrv_request(f.srv, 1)->body, "ClientToken");
	assert_string_equal(t0, t1);
	assert_string_equal(l->client_token, t0);
	free(t0);
	free(t1);
	gb_ec2_instance_list_free(l);
	fix_stop(&f);
	/* always too slow: GB_E_TIMEOUT, outcome unknown, class TRANSIENT */
	{
		static const enum step slow[] = { S_SLOW, S_SLOW };
		struct gb_ec2_opts o2 = { .http = { .timeout_ms = 500 },
					  .retry = { .max_attempts = 2 } };

		fix_start(&f, slow, 2, &o2);
		assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e),
				 GB_E_TIMEOUT);
		assert_int_equal(ae.attempts, 2);
		assert_int_equal(ae.http_status, 0);
		assert_int_equal(ae.cls, GB_EC2_CLASS_TRANSIENT);
		assert_non_null(strstr(e.text, "no HTTP response"));
		fix_stop(&f);
	}
}

static void test_transport_limits(void **state)
{
	static const enum step huge[] = { S_HUGE, S_OK };
	struct gb_ec2_opts o = { .http = { .max_response_bytes = 1 << 20 } };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char url[64];

	(void)state;
	/* an oversized answer is not retried: it would be oversized again */
	fix_start(&f, huge, 2, &o);
	assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_HTTP);
	assert_int_equal(ae.attempts, 1);
	assert_int_equal(ae.cls, GB_EC2_CLASS_CONFIG);
	assert_non_null(strstr(e.text, "larger than 1048576 bytes"));
	fix_stop(&f);
	/* nobody listening: connection refused, retried, then GB_E_HTTP */
	{
		struct testsrv *gone = testsrv_start(NULL, NULL);

		assert_non_null(gone);
		snprintf(url, sizeof(url), "%s", testsrv_url(gone));
		testsrv_stop(gone);
	}
	o.endpoint = url;
	o.http.max_response_bytes = 0;
	fix_start(&f, NULL, 0, &o);
	assert_int_equal(gb_ec2_run_instances(f.ec2, &run4, &l, &ae, &e), GB_E_HTTP);
	assert_int_equal(ae.attempts, 4);
	assert_int_equal(ae.cls, GB_EC2_CLASS_TRANSIENT);
	assert_int_equal(f.clock.n_sleeps, 3);
	fix_stop(&f);
}

static void test_describe_pagination(void **state)
{
	static const char *const vals[] = { "gpu-cluster" };
	static const struct gb_ec2_filter flt[] = { { "tag:gpuburst:cluster", vals, 1 } };
	struct gb_ec2_describe_params p = { .filters = flt, .n_filters = 1 };
	struct gb_ec2_opts cap2 = { .max_pages = 2 };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char *v;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	f.ep.pages = 3;
	if (gb_ec2_describe_instances(f.ec2, &p, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 3);
	assert_int_equal(l->n, 6);
	assert_null(l->next_token);
	assert_string_equal(l->v[0].instance_id, "i-p0a");
	assert_string_equal(l->v[5].instance_id, "i-p2b");
	assert_string_equal(l->v[5].reservation_id, "r-p2");
	assert_string_equal(l->request_id, "d-2");
	v = form_get(testsrv_request(f.srv, 0)->body, "NextToken");
	assert_null(v);
	v = form_get(testsrv_request(f.srv, 2)->body, "NextToken");
	assert_string_equal(v, "page-2");
	free(v);
	v = form_get(testsrv_request(f.srv, 1)->body, "Filter.1.Name");
	assert_string_equal(v, "tag:gpuburst:cluster");
	free(v);
	gb_ec2_instance_list_free(l);
	fix_stop(&f);
	/* more pages than allowed */
	fix_start(&f, NULL, 0, &cap2);
	f.ep.pages = 3;
	assert_int_equal(gb_ec2_describe_instances(f.ec2, &p, &l, &ae, &e), GB_E_CLOUD);
	assert_null(l);
	assert_non_null(strstr(e.text, "more than 2 pages"));
	fix_stop(&f);
	/* a server that keeps sending the same token */
	fix_start(&f, NULL, 0, NULL);
	f.ep.repeat_token = true;
	assert_int_equal(gb_ec2_describe_instances(f.ec2, NULL, &l, &ae, &e), GB_E_PARSE);
	assert_int_equal(testsrv_count(f.srv), 2);
	fix_stop(&f);
	/* an error on page 2: nothing returned (all or nothing) */
	{
		static const enum step s[] = { S_OK, S_BADPARAM };

		fix_start(&f, s, 2, NULL);
		f.ep.pages = 3;
		assert_int_equal(gb_ec2_describe_instances(f.ec2, NULL, &l, &ae, &e),
				 GB_E_CLOUDCONFIG);
		assert_null(l);
		fix_stop(&f);
	}
}

/* Serves the constructed offering pages: page1 carries a nextToken. */
static void offerings_handler(void *ctx, size_t n, const struct testsrv_req *r,
			      struct testsrv_resp *resp)
{
	char path[512];
	char *data = NULL;
	size_t len;

	(void)ctx;
	if (!verify_request(r)) {
		reply_error(resp, 403, "SignatureDoesNotMatch", "bad");
		return;
	}
	snprintf(path, sizeof(path), "%s/tests/data/ec2/constructed/%s", GB_TOP_SRCDIR,
		 n == 0 ? "describe-instance-type-offerings-page1.xml"
			: "describe-instance-type-offerings-page2.xml");
	assert_int_equal(gb_file_read(path, 1 << 20, &data, &len, NULL), GB_E_OK);
	testsrv_reply(resp, 200, data);
	free(data);
}

static void test_offerings_pages(void **state)
{
	static const char *const types[] = { "g6.xlarge" };
	static const struct gb_ec2_filter flt[] = { { "instance-type", types, 1 } };
	struct gb_ec2_offerings_params p = { "availability-zone", flt, 1, 5 };
	struct gb_ec2_offering_list *l = NULL;
	struct fix f;
	gb_error_t e;
	char path[512];
	char *want = NULL;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	testsrv_stop(f.srv);
	gb_ec2_destroy(f.ec2);
	f.srv = testsrv_start(offerings_handler, NULL);
	{
		struct gb_ec2_opts o = { .region = REGION, .endpoint = testsrv_url(f.srv),
					 .creds = f.creds };

		assert_int_equal(gb_ec2_create(&o, &f.ec2, &e), GB_E_OK);
	}
	if (gb_ec2_describe_instance_type_offerings(f.ec2, &p, &l, NULL, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 3);
	assert_string_equal(l->v[2].location, "ap-northeast-1d");
	assert_null(l->next_token);
	/* the first request is byte for byte the constructed request body */
	snprintf(path, sizeof(path), "%s/tests/data/ec2/constructed/"
		 "describe-instance-type-offerings-request.form.txt", GB_TOP_SRCDIR);
	assert_int_equal(gb_file_read(path, 1 << 20, &want, NULL, NULL), GB_E_OK);
	assert_string_equal(testsrv_request(f.srv, 0)->body, want);
	free(want);
	assert_non_null(strstr(testsrv_request(f.srv, 1)->body,
			       "&NextToken=eyJ2IjoiMiIsImMiOiJwYWdlLTIifQ%3D%3D"));
	gb_ec2_offering_list_free(l);
	fix_stop(&f);
}

static void test_terminate_batches(void **state)
{
	static const enum step fail2[] = { S_OK, S_THROTTLE, S_THROTTLE, S_THROTTLE,
					   S_THROTTLE };
	const size_t n = 2500;
	const char **ids = calloc(n, sizeof(*ids));
	char (*buf)[16] = calloc(n, sizeof(*buf));
	struct gb_ec2_state_change_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	assert_non_null(ids);
	assert_non_null(buf);
	for (size_t i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "i-%06zu", i);
		ids[i] = buf[i];
	}
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_terminate_instances(f.ec2, ids, n, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 3);
	assert_int_equal(form_count(testsrv_request(f.srv, 0)->body, "InstanceId."), 1000);
	assert_int_equal(form_count(testsrv_request(f.srv, 1)->body, "InstanceId."), 1000);
	assert_int_equal(form_count(testsrv_request(f.srv, 2)->body, "InstanceId."), 500);
	assert_int_equal(l->n, n);
	assert_string_equal(l->v[1999].instance_id, "i-001999");
	assert_int_equal(l->v[2499].current_code, 32);
	gb_ec2_state_change_list_free(l);
	fix_stop(&f);
	/* batch 2 keeps failing: batch 1's results still come back */
	fix_start(&f, fail2, 5, NULL);
	assert_int_equal(gb_ec2_terminate_instances(f.ec2, ids, n, &l, &ae, &e),
			 GB_E_THROTTLE);
	assert_non_null(l);
	assert_int_equal(l->n, 1000);
	assert_int_equal(ae.attempts, 4);
	gb_ec2_state_change_list_free(l);
	fix_stop(&f);
	/* nothing to do */
	fix_start(&f, NULL, 0, NULL);
	assert_int_equal(gb_ec2_terminate_instances(f.ec2, ids, 0, &l, &ae, &e), GB_E_OK);
	assert_int_equal(l->n, 0);
	assert_int_equal(testsrv_count(f.srv), 0);
	gb_ec2_state_change_list_free(l);
	fix_stop(&f);
	free(ids);
	free(buf);
}

static void azs_handler(void *ctx, size_t n, const struct testsrv_req *r,
			struct testsrv_resp *resp)
{
	char path[512];
	char *data = NULL;

	(void)ctx;
	(void)n;
	if (!verify_request(r) || !strstr(r->body, "Action=DescribeAvailabilityZones")) {
		reply_error(resp, 403, "SignatureDoesNotMatch", "bad");
		return;
	}
	snprintf(path, sizeof(path), "%s/tests/data/ec2/"
		 "botocore-ec2-describe-availability-zones.xml", GB_TOP_SRCDIR);
	assert_int_equal(gb_file_read(path, 1 << 20, &data, NULL, NULL), GB_E_OK);
	testsrv_reply(resp, 200, data);
	free(data);
}

static void test_tags_and_zones(void **state)
{
	static const char *const ids[] = { "i-1", "i-2" };
	static const struct gb_ec2_kv tags[] = { { "gpuburst:node", "g6-1" } };
	struct gb_ec2_az_list *az = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char *v;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	assert_int_equal(gb_ec2_create_tags(f.ec2, ids, 2, tags, 1, &ae, &e), GB_E_OK);
	v = form_get(testsrv_request(f.srv, 0)->body, "Tag.1.Key");
	assert_string_equal(v, "gpuburst:node");
	free(v);
	fix_stop(&f);
	f.srv = testsrv_start(azs_handler, NULL);
	assert_non_null(f.srv);
	{
		struct gb_creds_opts co = { .access_key_id = AK, .secret_access_key = SK };
		struct gb_ec2_opts o = { .region = REGION };

		assert_int_equal(gb_creds_create(&co, &f.creds, &e), GB_E_OK);
		o.creds = f.creds;
		o.endpoint = testsrv_url(f.srv);
		assert_int_equal(gb_ec2_create(&o, &f.ec2, &e), GB_E_OK);
	}
	if (gb_ec2_describe_availability_zones(f.ec2, NULL, 0, &az, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(az->n, 3);
	assert_string_equal(az->v[2].zone_name, "us-west-2c");
	gb_ec2_az_list_free(az);
	memset(&f.ep, 0, sizeof(f.ep));
	fix_stop(&f);
}

/* Temporary credentials: the token is sent and signed. */
static void token_handler(void *ctx, size_t n, const struct testsrv_req *r,
			  struct testsrv_resp *resp)
{
	int *ok = ctx;
	const char *authz = testsrv_header(r, "Authorization");

	(void)n;
	*ok = authz && strstr(authz, "SignedHeaders=content-type;host;x-amz-date;"
				     "x-amz-security-token,") &&
	      !gb_strcmp0(testsrv_header(r, "X-Amz-Security-Token"), "session/token==") &&
	      verify_request(r);
	reply_run(resp, "t", 1);
}

static void test_session_token_signed(void **state)
{
	struct gb_creds_opts co = { .access_key_id = AK, .secret_access_key = SK,
				    .session_token = "session/token==" };
	struct gb_ec2_instance_list *l = NULL;
	struct testsrv *srv;
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = NULL;
	gb_error_t e;
	int ok = 0;

	(void)state;
	srv = testsrv_start(token_handler, &ok);
	assert_non_null(srv);
	assert_int_equal(gb_creds_create(&co, &creds, &e), GB_E_OK);
	{
		struct gb_ec2_opts o = { .region = REGION, .creds = creds };

		o.endpoint = testsrv_url(srv);
		assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	}
	assert_int_equal(gb_ec2_run_instances(ec2, &run4, &l, NULL, &e), GB_E_OK);
	assert_true(ok);
	gb_ec2_instance_list_free(l);
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
	testsrv_stop(srv);
}

static void test_no_request_sent(void **state)
{
	struct gb_creds_opts none = { .no_env = true, .no_files = true, .no_imds = true };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_run_params bad = run4;
	struct gb_ec2_error ae;
	struct fix f;
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = NULL;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	bad.max_count = 0;
	assert_int_equal(gb_ec2_run_instances(f.ec2, &bad, &l, &ae, &e), GB_E_INVALID);
	assert_int_equal(gb_ec2_run_instances(f.ec2, NULL, &l, &ae, &e), GB_E_INVALID);
	/* no credentials anywhere */
	assert_int_equal(gb_creds_create(&none, &creds, &e), GB_E_OK);
	{
		struct gb_ec2_opts o = { .region = REGION, .creds = creds };

		o.endpoint = testsrv_url(f.srv);
		assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	}
	assert_int_equal(gb_ec2_run_instances(ec2, &run4, &l, &ae, &e), GB_E_AUTH);
	assert_int_equal(ae.cls, GB_EC2_CLASS_AUTH);
	assert_non_null(strstr(e.text, "no AWS credentials found"));
	assert_int_equal(testsrv_count(f.srv), 0);
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
	fix_stop(&f);
}

/* ---- issue 19: instance types, placement groups, security groups, EFA -------- */

/* The body of request [i] to [f]'s server. */
static const char *body_of(struct fix *f, size_t i)
{
	const struct testsrv_req *r = testsrv_request(f->srv, i);

	assert_non_null(r);
	return r->body;
}

static void test_instance_types_pages(void **state)
{
	static const char *const pat[] = { "p5.*" };
	static const struct gb_ec2_filter flt[] = { { "instance-type", pat, 1 } };
	static const char *const types[] = { "g6.xlarge" };
	struct gb_ec2_opts cap1 = { .max_pages = 1 };
	struct gb_ec2_instance_type_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_describe_instance_types(f.ec2, NULL, 0, flt, 1, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 2);
	assert_string_equal(body_of(&f, 0), "Action=DescribeInstanceTypes&Version=2016-11-15"
			    "&Filter.1.Name=instance-type&Filter.1.Value.1=p5.%2A&MaxResults=100");
	assert_string_equal(body_of(&f, 1), "Action=DescribeInstanceTypes&Version=2016-11-15"
			    "&Filter.1.Name=instance-type&Filter.1.Value.1=p5.%2A&MaxResults=100"
			    "&NextToken=eyJ2IjoiMSIsImMiOiJpdC0yIn0%3D");
	assert_int_equal(l->n, 3);
	assert_string_equal(l->v[0].instance_type, "p5.48xlarge");
	assert_int_equal(l->v[0].gpus, 8);
	assert_true(l->v[0].efa);
	assert_string_equal(l->v[1].instance_type, "m7i.large");
	assert_null(l->v[1].gpu_name);
	assert_string_equal(l->v[2].instance_type, "g6.xlarge");
	assert_string_equal(l->v[2].gpu_name, "L4");
	assert_string_equal(l->request_id, "2d0c7f2a-5b8e-4c51-9a57-0d1f3e6b7a02");
	assert_null(l->next_token);
	gb_ec2_instance_type_list_free(l);
	fix_stop(&f);
	/* named types, throttled once: one page, no MaxResults, same body twice */
	{
		static const enum step s[] = { S_THROTTLE, S_OK };

		fix_start(&f, s, 2, NULL);
		if (gb_ec2_describe_instance_types(f.ec2, types, 1, NULL, 0, &l, &ae, &e))
			fail_msg("%s", e.text);
		assert_int_equal(ae.attempts, 2);
		assert_int_equal(testsrv_count(f.srv), 2);
		assert_string_equal(body_of(&f, 1), "Action=DescribeInstanceTypes"
				    "&Version=2016-11-15&InstanceType.1=g6.xlarge");
		assert_string_equal(body_of(&f, 0), body_of(&f, 1));
		assert_int_equal(l->n, 1);
		assert_int_equal(l->v[0].gpu_total_memory_mib, 22888);
		gb_ec2_instance_type_list_free(l);
		fix_stop(&f);
	}
	/* more pages than allowed */
	fix_start(&f, NULL, 0, &cap1);
	assert_int_equal(gb_ec2_describe_instance_types(f.ec2, NULL, 0, NULL, 0, &l, &ae, &e),
			 GB_E_CLOUD);
	assert_null(l);
	assert_string_equal(e.text, "DescribeInstanceTypes ap-northeast-1: more than 1 pages");
	fix_stop(&f);
	/* an error on page 2: nothing returned */
	{
		static const enum step s[] = { S_OK, S_BADPARAM };

		fix_start(&f, s, 2, NULL);
		assert_int_equal(gb_ec2_describe_instance_types(f.ec2, NULL, 0, NULL, 0, &l,
								&ae, &e), GB_E_CLOUDCONFIG);
		assert_null(l);
		assert_string_equal(ae.code, "InvalidParameterValue");
		assert_int_equal(testsrv_count(f.srv), 2);
		fix_stop(&f);
	}
	/* a reply with a bad figure: GB_E_CLOUD naming action, region, type, field */
	fix_start(&f, NULL, 0, NULL);
	f.ep.body = "<DescribeInstanceTypesResponse><instanceTypeSet><item><instanceType>"
		    "p5.48xlarge</instanceType><memoryInfo><sizeInMiB>2T</sizeInMiB>"
		    "</memoryInfo></item></instanceTypeSet></DescribeInstanceTypesResponse>";
	assert_int_equal(gb_ec2_describe_instance_types(f.ec2, NULL, 0, NULL, 0, &l, &ae, &e),
			 GB_E_CLOUD);
	assert_null(l);
	assert_string_equal(e.text, "DescribeInstanceTypes ap-northeast-1: instance type "
			    "p5.48xlarge: <memoryInfo/sizeInMiB> '2T' is not a number in 0..2147483647");
	assert_int_equal(ae.attempts, 1);
	assert_int_equal(testsrv_count(f.srv), 1);
	/* and a bad parameter sends nothing */
	assert_int_equal(gb_ec2_describe_instance_types(f.ec2, (const char *const[]){ "" }, 1,
							NULL, 0, &l, &ae, &e), GB_E_INVALID);
	assert_int_equal(testsrv_count(f.srv), 1);
	fix_stop(&f);
}

static void test_placement_groups(void **state)
{
	static const struct gb_ec2_kv tags[] = { { "gpuburst:cluster", "gpu-cluster" } };
	static const struct gb_ec2_tag_spec spec = { "placement-group", tags, 1 };
	static const char *const names[] = { "gpuburst-train-ap-northeast-1a" };
	struct gb_ec2_placement_group_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_create_placement_group(f.ec2, "gpuburst-train-ap-northeast-1a", "cluster",
					  &spec, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(ae.attempts, 1);
	assert_string_equal(body_of(&f, 0), "Action=CreatePlacementGroup&Version=2016-11-15"
			    "&GroupName=gpuburst-train-ap-northeast-1a&Strategy=cluster"
			    "&TagSpecification.1.ResourceType=placement-group"
			    "&TagSpecification.1.Tag.1.Key=gpuburst%3Acluster"
			    "&TagSpecification.1.Tag.1.Value=gpu-cluster");
	if (gb_ec2_describe_placement_groups(f.ec2, names, 1, NULL, 0, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(body_of(&f, 1), "Action=DescribePlacementGroups&Version=2016-11-15"
			    "&GroupName.1=gpuburst-train-ap-northeast-1a");
	assert_int_equal(l->n, 2);
	assert_string_equal(l->v[0].group_id, "pg-0a1b2c3d4e5f60718");
	assert_string_equal(l->v[0].state, "available");
	assert_string_equal(l->v[0].tags[0].value, "gpu-cluster");
	gb_ec2_placement_group_list_free(l);
	if (gb_ec2_delete_placement_group(f.ec2, "gpuburst-train-ap-northeast-1a", &ae, &e))
		fail_msg("%s", e.text);
	assert_string_equal(body_of(&f, 2), "Action=DeletePlacementGroup&Version=2016-11-15"
			    "&GroupName=gpuburst-train-ap-northeast-1a");
	assert_int_equal(testsrv_count(f.srv), 3);
	/* refused parameters send nothing */
	assert_int_equal(gb_ec2_create_placement_group(f.ec2, "g", "tight", NULL, &ae, &e),
			 GB_E_INVALID);
	assert_int_equal(gb_ec2_delete_placement_group(f.ec2, "", &ae, &e), GB_E_INVALID);
	assert_int_equal(testsrv_count(f.srv), 3);
	fix_stop(&f);
}

/* EC2's placement group errors: classified, returned at once, named in the text. */
static void test_placement_group_errors(void **state)
{
	static const struct {
		int call;	/* 0 create, 1 delete, 2 describe */
		const char *code;
		const char *msg;
		gb_err_t rc;
		enum gb_ec2_class cls;
	} cases[] = {
		{ 0, GB_EC2_CODE_PG_DUPLICATE,
		  "The Placement Group 'gpuburst-train-1a' already exists.",
		  GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG },
		{ 0, GB_EC2_CODE_PG_LIMIT, "You have reached the limit of placement groups.",
		  GB_E_QUOTA, GB_EC2_CLASS_QUOTA },
		{ 1, GB_EC2_CODE_PG_IN_USE,
		  "The placement group 'gpuburst-train-1a' is in use and may not be deleted.",
		  GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG },
		{ 1, GB_EC2_CODE_PG_UNKNOWN, "The Placement Group 'gpuburst-train-1a' is unknown.",
		  GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG },
		{ 2, GB_EC2_CODE_PG_UNKNOWN, "The Placement Group 'gpuburst-train-1a' is unknown.",
		  GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG },
	};
	static const char *const actions[] = { "CreatePlacementGroup", "DeletePlacementGroup",
					       "DescribePlacementGroups" };
	static const enum step st = S_CODE;

	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		struct gb_ec2_placement_group_list *l = NULL;
		const char *const name = "gpuburst-train-1a";
		struct gb_ec2_error ae;
		struct fix f;
		gb_error_t e;
		char want[256];
		gb_err_t rc;

		fix_start(&f, &st, 1, NULL);
		f.ep.err_status = 400;
		f.ep.err_code = cases[i].code;
		f.ep.err_msg = cases[i].msg;
		if (cases[i].call == 0)
			rc = gb_ec2_create_placement_group(f.ec2, name, "cluster", NULL, &ae, &e);
		else if (cases[i].call == 1)
			rc = gb_ec2_delete_placement_group(f.ec2, name, &ae, &e);
		else
			rc = gb_ec2_describe_placement_groups(f.ec2, &name, 1, NULL, 0, &l, &ae,
							      &e);
		assert_int_equal(rc, cases[i].rc);
		assert_null(l);
		assert_int_equal(ae.cls, cases[i].cls);
		assert_true(ae.known_code);
		assert_string_equal(ae.code, cases[i].code);
		assert_int_equal(ae.attempts, 1);
		assert_int_equal(testsrv_count(f.srv), 1);
		snprintf(want, sizeof(want), "%s ap-northeast-1: %s: %s (HTTP 400, RequestID req-%s, %s, 1 attempt)",
			 actions[cases[i].call], cases[i].code, cases[i].msg, cases[i].code,
			 gb_ec2_class_name(cases[i].cls));
		assert_string_equal(e.text, want);
		fix_stop(&f);
	}
}

static void test_security_groups_pages(void **state)
{
	static const char *const ids[] = { "sg-0de0000000000000002" };
	struct gb_ec2_security_group_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_describe_security_groups(f.ec2, NULL, 0, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 2);
	assert_string_equal(body_of(&f, 0), "Action=DescribeSecurityGroups&Version=2016-11-15"
			    "&MaxResults=1000");
	assert_string_equal(body_of(&f, 1), "Action=DescribeSecurityGroups&Version=2016-11-15"
			    "&MaxResults=1000&NextToken=eyJ2IjoiMSIsImMiOiJzZy0yIn0%3D");
	assert_int_equal(l->n, 2);
	assert_string_equal(l->v[0].group_id, "sg-0efa0000000000001");
	assert_int_equal(l->v[0].n_ingress, 2);
	assert_string_equal(l->v[0].ingress[0].group_ids[0], "sg-0efa0000000000001");
	assert_int_equal(l->v[0].ingress[1].from_port, 22);
	assert_string_equal(l->v[1].group_id, "sg-0de0000000000000002");
	assert_string_equal(l->v[1].egress[0].cidrs[0], "0.0.0.0/0");
	assert_string_equal(l->request_id, "59dbff89-35bd-4eac-99ed-be587EXAMPLF");
	assert_null(l->next_token);
	gb_ec2_security_group_list_free(l);
	/* named groups: GroupId.N, no MaxResults, one page */
	if (gb_ec2_describe_security_groups(f.ec2, ids, 1, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 3);
	assert_string_equal(body_of(&f, 2), "Action=DescribeSecurityGroups&Version=2016-11-15"
			    "&GroupId.1=sg-0de0000000000000002");
	assert_int_equal(l->n, 1);
	assert_string_equal(l->v[0].group_name, "default");
	gb_ec2_security_group_list_free(l);
	fix_stop(&f);
	/* an unknown group: CONFIG, not retried */
	{
		static const enum step s[] = { S_CODE };

		fix_start(&f, s, 1, NULL);
		f.ep.err_status = 400;
		f.ep.err_code = "InvalidGroup.NotFound";
		f.ep.err_msg = "The security group 'sg-0de0000000000000002' does not exist";
		assert_int_equal(gb_ec2_describe_security_groups(f.ec2, ids, 1, &l, &ae, &e),
				 GB_E_CLOUDCONFIG);
		assert_null(l);
		assert_int_equal(ae.cls, GB_EC2_CLASS_CONFIG);
		assert_int_equal(ae.attempts, 1);
		fix_stop(&f);
	}
	/* a reply with a bad port */
	fix_start(&f, NULL, 0, NULL);
	f.ep.body = "<DescribeSecurityGroupsResponse><securityGroupInfo><item><groupId>sg-1"
		    "</groupId><ipPermissions><item><ipProtocol>tcp</ipProtocol><toPort>ssh"
		    "</toPort></item></ipPermissions></item></securityGroupInfo>"
		    "</DescribeSecurityGroupsResponse>";
	assert_int_equal(gb_ec2_describe_security_groups(f.ec2, NULL, 0, &l, &ae, &e),
			 GB_E_CLOUD);
	assert_null(l);
	assert_string_equal(e.text, "DescribeSecurityGroups ap-northeast-1: security group sg-1: "
			    "<toPort> 'ssh' is not a number in -1..65535");
	fix_stop(&f);
}

static const char *const efa_sgs1[] = { "sg-0efa0000000000001", "sg-0de0000000000000002" };
static const char *const efa_sgs2[] = { "sg-0efa0000000000001" };
static const struct gb_ec2_net_if efa_ifs[] = {
	{ 0, 0, "efa", "subnet-0c82087f981728760", efa_sgs1, 2, true },
	{ 1, 1, "efa-only", "subnet-0c82087f981728760", efa_sgs2, 1, true },
};
static const struct gb_ec2_kv efa_tags[] = { { "gpuburst:cluster", "gpu-cluster" } };
static const struct gb_ec2_tag_spec efa_ts = { "instance", efa_tags, 1 };
static const struct gb_ec2_run_params run_efa = {
	.image_id = "ami-0b6c1e0b8f5e1a2c3", .instance_type = "p5.48xlarge",
	.min_count = 2, .max_count = 2, .availability_zone = "ap-northeast-1a",
	.placement_group = "gpuburst-train-ap-northeast-1a",
	.net_ifs = efa_ifs, .n_net_ifs = 2, .key_name = "gpu-key-ap-northeast-1",
	.client_token = "req0019-ap-northeast-1-s0-0", .tag_specs = &efa_ts, .n_tag_specs = 1,
};

static void test_run_efa_placement(void **state)
{
	static const struct {
		enum step st;
		const char *code;
		const char *msg;
		gb_err_t rc;
		enum gb_ec2_class cls;
		long status;
	} cases[] = {
		/* ICE in a cluster placement group is the usual capacity error */
		{ S_ICE, GB_EC2_CODE_ICE, NULL, GB_E_CAPACITY, GB_EC2_CLASS_CAPACITY, 500 },
		{ S_CODE, GB_EC2_CODE_PARAM_COMBINATION,
		  "EFA interfaces are not supported on m7i.large.", GB_E_CLOUDCONFIG,
		  GB_EC2_CLASS_CONFIG, 400 },
		{ S_CODE, GB_EC2_CODE_PARAM_VALUE,
		  "Network card index 1 is not valid for instance type g6.xlarge.",
		  GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG, 400 },
		{ S_CODE, GB_EC2_CODE_PG_UNKNOWN,
		  "The Placement Group 'gpuburst-train-ap-northeast-1a' is unknown.",
		  GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG, 400 },
	};
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char path[512];
	char *want = NULL;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	f.ep.run_instances = 2;
	if (gb_ec2_run_instances(f.ec2, &run_efa, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->client_token, "req0019-ap-northeast-1-s0-0");
	/* what arrived is byte for byte the constructed EFA body */
	snprintf(path, sizeof(path), "%s/tests/data/ec2/constructed/"
		 "run-instances-request-efa.form.txt", GB_TOP_SRCDIR);
	assert_int_equal(gb_file_read(path, 1 << 20, &want, NULL, NULL), GB_E_OK);
	assert_string_equal(body_of(&f, 0), want);
	free(want);
	gb_ec2_instance_list_free(l);
	fix_stop(&f);
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		fix_start(&f, &cases[i].st, 1, NULL);
		f.ep.err_status = 400;
		f.ep.err_code = cases[i].code;
		f.ep.err_msg = cases[i].msg;
		assert_int_equal(gb_ec2_run_instances(f.ec2, &run_efa, &l, &ae, &e), cases[i].rc);
		assert_null(l);
		assert_string_equal(ae.code, cases[i].code);
		assert_int_equal(ae.cls, cases[i].cls);
		assert_int_equal(ae.http_status, cases[i].status);
		assert_true(ae.known_code);
		assert_int_equal(ae.attempts, 1);
		if (cases[i].msg)
			assert_string_equal(ae.message, cases[i].msg);
		assert_non_null(strstr(body_of(&f, 0),
				       "&Placement.GroupName=gpuburst-train-ap-northeast-1a&"));
		fix_stop(&f);
	}
}

/* EC2 refuses a top-level subnet or groups with interfaces: so do we, sending nothing. */
static void test_net_ifs_refused_without_sending(void **state)
{
	static const char *const sg[] = { "sg-1" };
	struct gb_ec2_instance_list *l = (void *)1;
	struct gb_ec2_run_params p = run_efa;
	struct gb_ec2_net_if bad_if = efa_ifs[0];
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	p.subnet_id = "subnet-0c82087f981728760";
	assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), GB_E_INVALID);
	assert_null(l);
	assert_string_equal(e.text, "RunInstances: SubnetId with NetworkInterface: the subnet goes on each interface");
	assert_int_equal(ae.attempts, 0);
	assert_int_equal(gb_ec2_run_instances_dry_run(f.ec2, &p, &ae, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: SubnetId with NetworkInterface: the subnet goes on each interface");
	p = run_efa;
	p.security_group_ids = sg;
	p.n_security_group_ids = 1;
	assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: SecurityGroupId with NetworkInterface: the security groups go on each interface");
	p = run_efa;
	bad_if.interface_type = "fabric";
	p.net_ifs = &bad_if;
	p.n_net_ifs = 1;
	assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), GB_E_INVALID);
	assert_string_equal(e.text, "RunInstances: NetworkInterface.1.InterfaceType 'fabric' is not interface, efa or efa-only");
	assert_int_equal(testsrv_count(f.srv), 0);
	fix_stop(&f);
}

/* ---- the capacity ladder: reservations, Capacity Blocks ------------------- */

static void test_capacity_reservations_pages(void **state)
{
	static const char *const st[] = { "active", "scheduled" };
	static const struct gb_ec2_filter flt[] = { { "state", st, 2 } };
	static const char *const ids[] = { "cr-0c3d4e5f607182930" };
	struct gb_ec2_capacity_reservations_params rp = { .filters = flt, .n_filters = 1,
							  .max_results = 100 };
	struct gb_ec2_capacity_reservations_params named = { .ids = ids, .n_ids = 1,
							     .max_results = 100 };
	struct gb_ec2_opts cap1 = { .max_pages = 1 };
	struct gb_ec2_capacity_reservation_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	size_t len;
	char path[512];
	char *page1 = NULL;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_describe_capacity_reservations(f.ec2, &rp, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 2);
	assert_string_equal(body_of(&f, 0), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15&Filter.1.Name=state&Filter.1.Value.1=active"
			    "&Filter.1.Value.2=scheduled&MaxResults=100");
	assert_string_equal(body_of(&f, 1), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15&Filter.1.Name=state&Filter.1.Value.1=active"
			    "&Filter.1.Value.2=scheduled&MaxResults=100"
			    "&NextToken=eyJ2IjoiMSIsImMiOiJjci0yIn0%3D");
	assert_int_equal(l->n, 3);
	assert_string_equal(l->v[0].id, "cr-0a1b2c3d4e5f60718");
	assert_string_equal(l->v[0].reservation_type, "capacity-block");
	assert_int_equal(l->v[0].available, 3);
	assert_string_equal(l->v[1].id, "cr-0b2c3d4e5f6071829");
	assert_true(l->v[1].end_date == 0);
	assert_string_equal(l->v[2].id, "cr-0c3d4e5f607182930");
	assert_string_equal(l->v[2].state, "scheduled");
	assert_string_equal(l->request_id, "7f1c2a3b-4d5e-4f60-8172-839405a6EXAN");
	assert_null(l->next_token);
	gb_ec2_capacity_reservation_list_free(l);
	/* named reservations: CapacityReservationId.N, no MaxResults, one page */
	if (gb_ec2_describe_capacity_reservations(f.ec2, &named, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 3);
	assert_string_equal(body_of(&f, 2), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15&CapacityReservationId.1=cr-0c3d4e5f607182930");
	assert_int_equal(l->n, 1);
	gb_ec2_capacity_reservation_list_free(l);
	/* NULL parameters: every reservation of the region */
	if (gb_ec2_describe_capacity_reservations(f.ec2, NULL, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_string_equal(body_of(&f, 3), "Action=DescribeCapacityReservations"
			    "&Version=2016-11-15");
	assert_int_equal(l->n, 3);
	gb_ec2_capacity_reservation_list_free(l);
	fix_stop(&f);
	/* more pages than allowed */
	fix_start(&f, NULL, 0, &cap1);
	assert_int_equal(gb_ec2_describe_capacity_reservations(f.ec2, NULL, &l, &ae, &e),
			 GB_E_CLOUD);
	assert_null(l);
	assert_string_equal(e.text, "DescribeCapacityReservations ap-northeast-1: more than 1 pages");
	fix_stop(&f);
	/* a server that serves page 1 for ever: the repeated token stops it */
	snprintf(path, sizeof(path), "%s/tests/data/ec2/constructed/"
		 "describe-capacity-reservations-page1.xml", GB_TOP_SRCDIR);
	assert_int_equal(gb_file_read(path, 1 << 20, &page1, &len, NULL), GB_E_OK);
	fix_start(&f, NULL, 0, NULL);
	f.ep.body = page1;
	assert_int_equal(gb_ec2_describe_capacity_reservations(f.ec2, NULL, &l, &ae, &e),
			 GB_E_PARSE);
	assert_null(l);
	assert_string_equal(e.text, "DescribeCapacityReservations ap-northeast-1: NextToken repeated");
	assert_int_equal(testsrv_count(f.srv), 2);
	fix_stop(&f);
	free(page1);
	/* an unknown reservation: CONFIG, not retried */
	{
		static const enum step s[] = { S_CODE };

		fix_start(&f, s, 1, NULL);
		f.ep.err_status = 400;
		f.ep.err_code = GB_EC2_CODE_RESERVATION_UNKNOWN;
		f.ep.err_msg = "The capacity reservation ID 'cr-0c3d4e5f607182930' does not exist";
		assert_int_equal(gb_ec2_describe_capacity_reservations(f.ec2, &named, &l, &ae, &e),
				 GB_E_CLOUDCONFIG);
		assert_null(l);
		assert_int_equal(ae.cls, GB_EC2_CLASS_CONFIG);
		assert_true(ae.known_code);
		assert_int_equal(ae.attempts, 1);
		fix_stop(&f);
	}
	/* a reply with a bad date: GB_E_CLOUD naming action, region, reservation, field */
	fix_start(&f, NULL, 0, NULL);
	f.ep.body = "<DescribeCapacityReservationsResponse><capacityReservationSet><item>"
		    "<capacityReservationId>cr-1</capacityReservationId><startDate>tomorrow"
		    "</startDate></item></capacityReservationSet>"
		    "</DescribeCapacityReservationsResponse>";
	assert_int_equal(gb_ec2_describe_capacity_reservations(f.ec2, NULL, &l, &ae, &e),
			 GB_E_CLOUD);
	assert_null(l);
	assert_string_equal(e.text, "DescribeCapacityReservations ap-northeast-1: capacity "
			    "reservation cr-1: <startDate> 'tomorrow' is not an ISO 8601 time");
	/* and a bad parameter sends nothing */
	rp.max_results = 1001;
	assert_int_equal(gb_ec2_describe_capacity_reservations(f.ec2, &rp, &l, &ae, &e),
			 GB_E_INVALID);
	assert_int_equal(testsrv_count(f.srv), 1);
	fix_stop(&f);
}

static void test_capacity_block_offerings_pages(void **state)
{
	struct gb_ec2_capacity_block_offerings_params bp = {
		.instance_type = "p5.48xlarge", .instance_count = 2, .duration_hours = 48,
		.start_range = 1796292000.0,	/* 2026-12-03T10:00:00Z */
		.end_range = 1796896800.0,	/* 2026-12-10T10:00:00Z */
	};
	struct gb_ec2_capacity_block_offering_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_describe_capacity_block_offerings(f.ec2, &bp, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 2);
	assert_string_equal(body_of(&f, 0), "Action=DescribeCapacityBlockOfferings"
			    "&Version=2016-11-15&InstanceType=p5.48xlarge&InstanceCount=2"
			    "&CapacityDurationHours=48&StartDateRange=2026-12-03T10%3A00%3A00Z"
			    "&EndDateRange=2026-12-10T10%3A00%3A00Z");
	assert_string_equal(body_of(&f, 1), "Action=DescribeCapacityBlockOfferings"
			    "&Version=2016-11-15&InstanceType=p5.48xlarge&InstanceCount=2"
			    "&CapacityDurationHours=48&StartDateRange=2026-12-03T10%3A00%3A00Z"
			    "&EndDateRange=2026-12-10T10%3A00%3A00Z"
			    "&NextToken=eyJ2IjoiMSIsImMiOiJjYnItMiJ9");
	assert_int_equal(l->n, 2);
	assert_string_equal(l->v[0].id, "cbr-0123456789abcdef0");
	assert_string_equal(l->v[0].upfront_fee, "3787.20");
	assert_true(l->v[0].start_date == 1796297400.0);
	assert_string_equal(l->v[1].id, "cbr-0fedcba9876543210");
	assert_string_equal(l->v[1].availability_zone, "ap-northeast-1c");
	assert_string_equal(l->request_id, "3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5EXAN");
	assert_null(l->next_token);
	gb_ec2_capacity_block_offering_list_free(l);
	/* required fields are checked here: nothing is sent */
	bp.instance_count = 0;
	assert_int_equal(gb_ec2_describe_capacity_block_offerings(f.ec2, &bp, &l, &ae, &e),
			 GB_E_INVALID);
	assert_null(l);
	assert_int_equal(gb_ec2_describe_capacity_block_offerings(f.ec2, NULL, &l, &ae, &e),
			 GB_E_INVALID);
	assert_int_equal(testsrv_count(f.srv), 2);
	fix_stop(&f);
	/* throttled once: retried with the very same body */
	{
		static const enum step s[] = { S_THROTTLE, S_OK, S_OK };

		bp.instance_count = 2;
		fix_start(&f, s, 3, NULL);
		if (gb_ec2_describe_capacity_block_offerings(f.ec2, &bp, &l, &ae, &e) != GB_E_OK)
			fail_msg("%s", e.text);
		assert_int_equal(testsrv_count(f.srv), 3);
		assert_string_equal(body_of(&f, 0), body_of(&f, 1));
		assert_int_equal(l->n, 2);
		gb_ec2_capacity_block_offering_list_free(l);
		fix_stop(&f);
	}
}

/* DescribeSpotPriceHistory: two pages, the last one with an empty <nextToken/>. */
static void test_spot_price_history_pages(void **state)
{
	static const char *const types[] = { "p5.48xlarge", "g6.xlarge" };
	static const char *const linux_only[] = { GB_EC2_PRODUCT_LINUX };
	struct gb_ec2_spot_price_history_params sp = {
		.instance_types = types, .n_instance_types = 2,
		.product_descriptions = linux_only, .n_product_descriptions = 1,
		.start_time = 1772323200.0,	/* 2026-03-01T00:00:00Z */
	};
	struct gb_ec2_spot_price_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;

	(void)state;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_describe_spot_price_history(f.ec2, &sp, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	assert_int_equal(testsrv_count(f.srv), 2);
	assert_string_equal(body_of(&f, 0), "Action=DescribeSpotPriceHistory&Version=2016-11-15"
			    "&InstanceType.1=p5.48xlarge&InstanceType.2=g6.xlarge"
			    "&ProductDescription.1=Linux%2FUNIX&StartTime=2026-03-01T00%3A00%3A00Z");
	assert_string_equal(body_of(&f, 1), "Action=DescribeSpotPriceHistory&Version=2016-11-15"
			    "&InstanceType.1=p5.48xlarge&InstanceType.2=g6.xlarge"
			    "&ProductDescription.1=Linux%2FUNIX&StartTime=2026-03-01T00%3A00%3A00Z"
			    "&NextToken=eyJ2IjoiMSIsImMiOiJzcGgtMiJ9");
	assert_int_equal(l->n, 3);
	assert_string_equal(l->v[0].instance_type, "p5.48xlarge");
	assert_true(l->v[0].price == 38.4194);
	assert_string_equal(l->v[1].availability_zone, "us-east-2b");
	assert_true(l->v[2].price == 41.06);
	assert_true(l->v[2].timestamp == 1772406341.0);	/* 2026-03-01T23:05:41Z */
	assert_string_equal(l->request_id, "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6bEXAN");
	assert_null(l->next_token);
	gb_ec2_spot_price_list_free(l);
	/* a bad parameter sends nothing */
	sp.max_results = 1001;
	assert_int_equal(gb_ec2_describe_spot_price_history(f.ec2, &sp, &l, &ae, &e),
			 GB_E_INVALID);
	assert_null(l);
	assert_int_equal(testsrv_count(f.srv), 2);
	fix_stop(&f);
	/* a reply with a bad price: GB_E_CLOUD naming action, region, item and field */
	fix_start(&f, NULL, 0, NULL);
	f.ep.body = "<DescribeSpotPriceHistoryResponse><spotPriceHistorySet><item>"
		    "<availabilityZone>ap-northeast-1a</availabilityZone>"
		    "<instanceType>g6.xlarge</instanceType>"
		    "<productDescription>Linux/UNIX</productDescription>"
		    "<spotPrice>cheap</spotPrice><timestamp>2026-03-02T08:40:12.000Z</timestamp>"
		    "</item></spotPriceHistorySet></DescribeSpotPriceHistoryResponse>";
	assert_int_equal(gb_ec2_describe_spot_price_history(f.ec2, NULL, &l, &ae, &e),
			 GB_E_CLOUD);
	assert_null(l);
	assert_string_equal(e.text, "DescribeSpotPriceHistory ap-northeast-1: spot price "
			    "g6.xlarge ap-northeast-1a: <spotPrice> 'cheap' is not a price");
	assert_string_equal(body_of(&f, 0), "Action=DescribeSpotPriceHistory&Version=2016-11-15");
	fix_stop(&f);
	/* EC2's refusal of a parameter: CONFIG, not retried */
	{
		static const enum step s[] = { S_CODE };

		fix_start(&f, s, 1, NULL);
		f.ep.err_status = 400;
		f.ep.err_code = GB_EC2_CODE_PARAM_VALUE;
		f.ep.err_msg = "Value (p9.huge) for parameter instanceType is invalid.";
		assert_int_equal(gb_ec2_describe_spot_price_history(f.ec2, &sp, &l, &ae, &e),
				 GB_E_INVALID);
		sp.max_results = 0;
		assert_int_equal(gb_ec2_describe_spot_price_history(f.ec2, &sp, &l, &ae, &e),
				 GB_E_CLOUDCONFIG);
		assert_null(l);
		assert_int_equal(ae.cls, GB_EC2_CLASS_CONFIG);
		assert_string_equal(ae.code, GB_EC2_CODE_PARAM_VALUE);
		assert_int_equal(ae.attempts, 1);
		fix_stop(&f);
	}
}

/* RunInstances into a Capacity Block, and the ladder's error classes. */
static void test_run_capacity_block(void **state)
{
	static const struct {
		const char *code;
		gb_err_t rc;
		enum gb_ec2_class cls;
	} cases[] = {
		{ GB_EC2_CODE_RESERVATION_FULL, GB_E_CAPACITY, GB_EC2_CLASS_CAPACITY },
		{ GB_EC2_CODE_RESERVATION_UNKNOWN, GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG },
		{ "InvalidCapacityReservationId.Malformed", GB_E_CLOUDCONFIG, GB_EC2_CLASS_CONFIG },
	};
	static const enum step st = S_CODE;
	struct gb_ec2_run_params p = run4;
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae;
	struct fix f;
	gb_error_t e;
	char *v;

	(void)state;
	p.capacity_reservation_id = "cr-0a1b2c3d4e5f60718";
	p.capacity_block = true;
	fix_start(&f, NULL, 0, NULL);
	if (gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e) != GB_E_OK)
		fail_msg("%s", e.text);
	v = form_get(body_of(&f, 0), "CapacityReservationSpecification."
		     "CapacityReservationTarget.CapacityReservationId");
	assert_string_equal(v, "cr-0a1b2c3d4e5f60718");
	free(v);
	v = form_get(body_of(&f, 0), "InstanceMarketOptions.MarketType");
	assert_string_equal(v, "capacity-block");
	free(v);
	gb_ec2_instance_list_free(l);
	/* with spot: refused, nothing sent */
	p.spot = true;
	assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), GB_E_INVALID);
	assert_null(l);
	assert_int_equal(testsrv_count(f.srv), 1);
	fix_stop(&f);
	p.spot = false;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		fix_start(&f, &st, 1, NULL);
		f.ep.err_status = 400;
		f.ep.err_code = cases[i].code;
		f.ep.err_msg = "refused";
		assert_int_equal(gb_ec2_run_instances(f.ec2, &p, &l, &ae, &e), cases[i].rc);
		assert_null(l);
		assert_int_equal(ae.cls, cases[i].cls);
		assert_true(ae.known_code);
		assert_int_equal(ae.attempts, 1);
		fix_stop(&f);
	}
}

static void test_create_options(void **state)
{
	struct gb_creds_opts co = { .access_key_id = AK, .secret_access_key = SK };
	struct gb_ec2_opts o = { .region = "us-east-1" };
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_creds_create(&co, &creds, &e), GB_E_OK);
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_INVALID);	/* no creds */
	o.creds = creds;
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	assert_string_equal(gb_ec2_endpoint(ec2), "https://ec2.us-east-1.amazonaws.com");
	assert_string_equal(gb_ec2_region(ec2), "us-east-1");
	gb_ec2_destroy(ec2);
	/* the default endpoint is the partition's */
	o.region = "cn-north-1";
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	assert_string_equal(gb_ec2_endpoint(ec2), "https://ec2.cn-north-1.amazonaws.com.cn");
	gb_ec2_destroy(ec2);
	o.region = "us-gov-west-1";
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	assert_string_equal(gb_ec2_endpoint(ec2), "https://ec2.us-gov-west-1.amazonaws.com");
	gb_ec2_destroy(ec2);
	o.region = "us-isob-east-1";
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	assert_string_equal(gb_ec2_endpoint(ec2), "https://ec2.us-isob-east-1.sc2s.sgov.gov");
	gb_ec2_destroy(ec2);
	/* no partition known, no endpoint: refused, naming the region */
	o.region = "mars-north-1";
	ec2 = NULL;
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_INVALID);
	assert_null(ec2);
	assert_non_null(strstr(e.text, "EC2 client: region 'mars-north-1' is in no AWS partition"));
	o.endpoint = "http://127.0.0.1:1";
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_OK);
	gb_ec2_destroy(ec2);
	o.endpoint = NULL;
	o.region = "us east";
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_INVALID);
	o.region = "us-east-1";
	o.endpoint = "ftp://nope";
	assert_int_equal(gb_ec2_create(&o, &ec2, &e), GB_E_INVALID);
	assert_null(ec2);
	gb_ec2_destroy(NULL);
	gb_creds_destroy(creds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_throttle_then_success),
		cmocka_unit_test(test_capacity_returned_at_once),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_dry_run_errors),
		cmocka_unit_test(test_final_classes_not_retried),
		cmocka_unit_test(test_auth_failure_refreshes_once),
		cmocka_unit_test(test_transient_bounded),
		cmocka_unit_test(test_timeout_same_token),
		cmocka_unit_test(test_transport_limits),
		cmocka_unit_test(test_describe_pagination),
		cmocka_unit_test(test_offerings_pages),
		cmocka_unit_test(test_terminate_batches),
		cmocka_unit_test(test_tags_and_zones),
		cmocka_unit_test(test_session_token_signed),
		cmocka_unit_test(test_no_request_sent),
		cmocka_unit_test(test_create_options),
		cmocka_unit_test(test_instance_types_pages),
		cmocka_unit_test(test_placement_groups),
		cmocka_unit_test(test_placement_group_errors),
		cmocka_unit_test(test_security_groups_pages),
		cmocka_unit_test(test_run_efa_placement),
		cmocka_unit_test(test_net_ifs_refused_without_sending),
		cmocka_unit_test(test_capacity_reservations_pages),
		cmocka_unit_test(test_capacity_block_offerings_pages),
		cmocka_unit_test(test_spot_price_history_pages),
		cmocka_unit_test(test_run_capacity_block),
	};
	static const char *const vars[] = { "http_proxy", "https_proxy", "HTTPS_PROXY",
					    "all_proxy", "ALL_PROXY" };

	for (size_t i = 0; i < GB_ARRAY_LEN(vars); i++)
		unsetenv(vars[i]);
	return cmocka_run_group_tests_name("ec2", tests, NULL, NULL);
}
