/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * imds.c - the instance metadata service, as far as instances use it
 *
 * On EC2 an instance reaches its metadata at 169.254.169.254, and the
 * service knows which instance asks by the connection.  Here instances are
 * processes bound to their private (loopback) addresses, so the service is
 * on the simulator's own address and tells the instance by the peer
 * address: an instance's boot script connects from its private IP.
 *
 *   PUT /latest/api/token                  IMDSv2 session token (header
 *       X-aws-ec2-metadata-token-ttl-seconds: 1..21600, else 400)
 *   GET /latest/user-data                  the decoded UserData bytes
 *       (application/octet-stream); 404 when the instance has none
 *   GET /latest/meta-data/...
 *     instance-id, ami-launch-index, instance-type, local-ipv4
 *     placement/availability-zone, placement/region
 *     instance-life-cycle                  "spot" or "on-demand"
 *     tags/instance                        the tag keys, one per line
 *     tags/instance/K                      the value of tag K
 *     iam/security-credentials/            the role name; 404 without an
 *                                          instance profile
 *     iam/security-credentials/NAME        EC2's JSON: Code "Success",
 *         LastUpdated, Type "AWS-HMAC", AccessKeyId, SecretAccessKey, Token,
 *         Expiration (UTC, ISO 8601 with Z)
 *     spot/instance-action                 404 until a Spot interruption is
 *         scheduled, then {"action": "terminate", "time": "...Z"}
 *     spot/termination-time                the same time alone (EC2's older
 *                                          path)
 *     events/recommendations/rebalance     404 until a rebalance
 *         recommendation is due, then {"noticeTime": "...Z"}
 *
 * The role is named after the instance profile (IamInstanceProfile.Name,
 * or the last part of the ARN): the simulator has no IAM to map a profile
 * to its role.  Its credentials are a session of STS's machinery (sts.c:
 * gb_cs_sts_instance_session), role arn:aws:iam::ACCOUNT:role/NAME, session
 * name the instance id, so the EC2 API takes them (SigV4 with
 * X-Amz-Security-Token) and GET /_sim/sts lists them.  Notices come from
 * POST /_sim/interrupt (sim.h: gb_sim_interrupt); their times are the
 * simulated clock's, shown in wall-clock UTC as launchTime is.
 *
 * The instance's MetadataOptions apply: GETs need the token
 * (X-aws-ec2-metadata-token: 401 without) unless it was launched with
 * HttpTokens=optional; HttpEndpoint=disabled is 403 for everything, as EC2
 * answers when the IMDS is turned off; tags need InstanceMetadataTags=
 * enabled (404 otherwise, as EC2).  A peer that is no pending or running
 * instance gets 401 without a token, else 404.  Tags are read live:
 * CreateTags after the launch shows at once (EC2 takes a moment; readers
 * poll).
 */
#include "config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_str.h"
#include "gb_util.h"

#define TOKEN_PREFIX "gbsim-imds-"

static void reply(struct gb_cs_response *r, int status, const char *text)
{
	r->status = status;
	r->content_type = "text/plain";
	gb_buf_reset(&r->body);
	gb_buf_puts(&r->body, text);
}

static struct gb_sim_instance *caller(struct gb_cloudsim *cs, const char *peer);

/* HttpEndpoint=disabled: the instance cannot reach its metadata at all. */
static bool endpoint_off(struct gb_cloudsim *cs, const char *peer)
{
	struct gb_sim_instance *in;
	bool off;

	pthread_mutex_lock(&cs->mu);
	gb_sim_advance(cs->sim, gb_cloudsim_now(cs));
	in = caller(cs, peer);
	off = in && in->metadata.endpoint_disabled;
	pthread_mutex_unlock(&cs->mu);
	return off;
}

static void token(struct gb_cloudsim *cs, struct gb_cs_response *r,
		  const struct gb_cs_request *req)
{
	const char *ttl = gb_cs_header_get(req, "X-aws-ec2-metadata-token-ttl-seconds");
	long v;
	char t[64];
	unsigned char raw[12];

	if (endpoint_off(cs, req->peer)) {
		reply(r, 403, "");
		return;
	}
	if (!ttl || gb_parse_long(ttl, 1, 21600, &v)) {
		reply(r, 400, "");
		return;
	}
	if (gb_random_bytes(raw, sizeof(raw), NULL)) {
		reply(r, 500, "");
		return;
	}
	snprintf(t, sizeof(t), TOKEN_PREFIX);
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(t + strlen(t), sizeof(t) - strlen(t), "%02x", raw[i]);
	reply(r, 200, t);
}

static struct gb_sim_instance *caller(struct gb_cloudsim *cs, const char *peer)
{
	struct gb_sim_instance *const *in;
	size_t n;

	in = gb_sim_instances(cs->sim, &n);
	for (size_t i = 0; peer && i < n; i++)
		if ((in[i]->state == GB_SIM_STATE_PENDING ||
		     in[i]->state == GB_SIM_STATE_RUNNING) && strcmp(in[i]->ip, peer) == 0)
			return in[i];
	return NULL;
}

/* UTC ISO 8601 of epoch seconds [t], as EC2's metadata writes times. */
static void iso_time(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Simulated seconds [t] in UTC, as DescribeInstances shows launchTime. */
static void sim_time(const struct gb_cloudsim *cs, double t, char *buf, size_t n)
{
	iso_time(gb_sim_epoch(cs->sim) + t, buf, n);
}

/* The role name: the instance profile's (last part of its ARN), or NULL. */
static const char *role_of(const struct gb_sim_instance *in)
{
	const char *slash = in->iam_profile_arn ? strrchr(in->iam_profile_arn, '/') : NULL;

	return slash && slash[1] ? slash + 1 : NULL;
}

static void credentials(struct gb_cloudsim *cs, struct gb_cs_response *r,
			const struct gb_sim_instance *in, const char *role)
{
	struct gb_cs_session_creds c;
	char arn[GB_CS_ROLE_ARN_MAX + 1], upd[32], exp[32];
	json_t *j;
	char *s;

	snprintf(arn, sizeof(arn), "arn:aws:iam::%s:role/%s", cs->sc->account_id, role);
	if (!gb_cs_sts_instance_session(cs, in->id, arn, &c)) {
		reply(r, 500, "");
		return;
	}
	iso_time(c.issued, upd, sizeof(upd));
	iso_time(c.expiration, exp, sizeof(exp));
	j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "Code", "Success", "LastUpdated", upd,
		      "Type", "AWS-HMAC", "AccessKeyId", c.access_key_id,
		      "SecretAccessKey", c.secret, "Token", c.token, "Expiration", exp);
	gb_memzero(c.secret, sizeof(c.secret));
	s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	reply(r, s ? 200 : 500, s ? s : "");
	if (s) {
		gb_memzero(s, strlen(s));
		free(s);
	}
	json_decref(j);
}

/* iam/security-credentials[/NAME]: [name] is what follows the slash, or NULL. */
static void iam(struct gb_cloudsim *cs, struct gb_cs_response *r,
		const struct gb_sim_instance *in, const char *name)
{
	const char *role = role_of(in);

	if (!role)
		reply(r, 404, "");
	else if (!name || !*name)
		reply(r, 200, role);
	else if (strcmp(name, role) != 0)
		reply(r, 404, "");
	else
		credentials(cs, r, in, role);
}

/* spot/instance-action, spot/termination-time (EC2: both appear with the notice). */
static void spot_action(struct gb_cloudsim *cs, struct gb_cs_response *r,
			const struct gb_sim_instance *in, bool time_only)
{
	char t[32];

	if (!in->spot_notice) {
		reply(r, 404, "");
		return;
	}
	sim_time(cs, in->spot_action_time, t, sizeof(t));
	reply(r, 200, "");
	if (time_only)
		gb_buf_puts(&r->body, t);
	else
		gb_buf_printf(&r->body, "{\"action\": \"terminate\", \"time\": \"%s\"}", t);
}

static void rebalance(struct gb_cloudsim *cs, struct gb_cs_response *r,
		      const struct gb_sim_instance *in, double now)
{
	char t[32];

	if (!in->rebalance || in->rebalance_time > now) {
		reply(r, 404, "");
		return;
	}
	sim_time(cs, in->rebalance_time, t, sizeof(t));
	reply(r, 200, "");
	gb_buf_printf(&r->body, "{\"noticeTime\": \"%s\"}", t);
}

/* tags/instance[/KEY]: [rest] is what follows "tags/instance". */
static void tags(struct gb_cs_response *r, const struct gb_sim_instance *in,
		 const char *rest)
{
	if (!in->metadata.tags) {
		reply(r, 404, "");
	} else if (rest[0] == '\0' || strcmp(rest, "/") == 0) {
		reply(r, 200, "");
		for (size_t i = 0; i < in->ntags; i++)
			gb_buf_printf(&r->body, "%s%s", i ? "\n" : "", in->tags[i].key);
	} else if (rest[0] == '/') {
		reply(r, 404, "");
		for (size_t i = 0; i < in->ntags; i++)
			if (strcmp(in->tags[i].key, rest + 1) == 0)
				reply(r, 200, in->tags[i].value);
	} else {
		reply(r, 404, "");
	}
}

/* The plain values; RET false when [what] is none of them. */
static bool plain(struct gb_cs_response *r, const struct gb_sim_instance *in,
		  const char *what)
{
	char idx[16];
	const struct { const char *path; const char *value; } v[] = {
		{ "instance-id", in->id },
		{ "ami-launch-index", idx },
		{ "instance-type", in->type->name },
		{ "placement/availability-zone", in->az->name },
		{ "placement/region", in->region->name },
		{ "local-ipv4", in->ip },
		{ "instance-life-cycle", in->spot ? "spot" : "on-demand" },
	};

	snprintf(idx, sizeof(idx), "%d", in->launch_index);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (strcmp(what, v[i].path) == 0) {
			reply(r, 200, v[i].value);
			return true;
		}
	}
	return false;
}

/* [what] under /latest/meta-data/ for instance [in]; [mu] held. */
static void meta(struct gb_cloudsim *cs, struct gb_cs_response *r,
		 const struct gb_sim_instance *in, const char *what, double now)
{
	static const char creds[] = "iam/security-credentials";
	static const char tag[] = "tags/instance";

	if (plain(r, in, what))
		return;
	if (strncmp(what, creds, sizeof(creds) - 1) == 0 &&
	    (what[sizeof(creds) - 1] == '\0' || what[sizeof(creds) - 1] == '/'))
		iam(cs, r, in, what[sizeof(creds) - 1] ? what + sizeof(creds) : NULL);
	else if (strcmp(what, "spot/instance-action") == 0)
		spot_action(cs, r, in, false);
	else if (strcmp(what, "spot/termination-time") == 0)
		spot_action(cs, r, in, true);
	else if (strcmp(what, "events/recommendations/rebalance") == 0)
		rebalance(cs, r, in, now);
	else if (strncmp(what, tag, sizeof(tag) - 1) == 0)
		tags(r, in, what + sizeof(tag) - 1);
	else
		reply(r, 404, "");
}

static void user_data(struct gb_cs_response *r, const struct gb_sim_instance *in)
{
	if (!in->user_data) {
		reply(r, 404, "");
		return;
	}
	reply(r, 200, "");
	r->content_type = "application/octet-stream";
	gb_buf_append(&r->body, in->user_data, in->user_data_len);
}

/* A GET of [path]; [token]: a valid one came. */
static void get(struct gb_cloudsim *cs, struct gb_cs_response *r, const char *path,
		const char *peer, bool token)
{
	static const char md[] = "/latest/meta-data/";
	struct gb_sim_instance *in;
	double now;

	pthread_mutex_lock(&cs->mu);
	now = gb_cloudsim_now(cs);
	gb_sim_advance(cs->sim, now);
	in = caller(cs, peer);
	if (in && in->metadata.endpoint_disabled)
		reply(r, 403, "");
	else if (!token && (!in || !in->metadata.tokens_optional))
		reply(r, 401, "");
	else if (!in)
		reply(r, 404, "");
	else if (strcmp(path, "/latest/user-data") == 0)
		user_data(r, in);
	else if (strncmp(path, md, sizeof(md) - 1) == 0)
		meta(cs, r, in, path + sizeof(md) - 1, now);
	else
		reply(r, 404, "");
	pthread_mutex_unlock(&cs->mu);
}

void gb_imds_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		    struct gb_cs_response *resp)
{
	const char *tok = gb_cs_header_get(req, "X-aws-ec2-metadata-token");

	if (strcmp(req->path, "/latest/api/token") == 0 && strcmp(req->method, "PUT") == 0)
		token(cs, resp, req);
	else if (strcmp(req->method, "GET") != 0)
		reply(resp, 405, "");
	else
		get(cs, resp, req->path, req->peer, tok && gb_str_has_prefix(tok, TOKEN_PREFIX));
	gb_log_info("imds method=%s path=%s status=%d peer=%s", req->method, req->path,
		    resp->status, req->peer ? req->peer : "-");
}
