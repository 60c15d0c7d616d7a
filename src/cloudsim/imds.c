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
 *   GET /latest/meta-data/instance-id
 *   GET /latest/meta-data/tags/instance    the tag keys, one per line
 *   GET /latest/meta-data/tags/instance/K  the value of tag K
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* [what] under /latest/meta-data/ (NULL: another path); [token]: a valid one came. */
static void meta(struct gb_cloudsim *cs, struct gb_cs_response *r, const char *what,
		 const char *peer, bool token)
{
	static const char tags[] = "tags/instance";
	struct gb_sim_instance *in;

	pthread_mutex_lock(&cs->mu);
	gb_sim_advance(cs->sim, gb_cloudsim_now(cs));
	in = caller(cs, peer);
	if (in && in->metadata.endpoint_disabled) {
		reply(r, 403, "");
	} else if (!token && (!in || !in->metadata.tokens_optional)) {
		reply(r, 401, "");
	} else if (!in || !what) {
		reply(r, 404, "");
	} else if (strcmp(what, "instance-id") == 0) {
		reply(r, 200, in->id);
	} else if (strncmp(what, tags, sizeof(tags) - 1) != 0 || !in->metadata.tags) {
		reply(r, 404, "");
	} else if (what[sizeof(tags) - 1] == '\0' || strcmp(what + sizeof(tags) - 1, "/") == 0) {
		reply(r, 200, "");
		for (size_t i = 0; i < in->ntags; i++)
			gb_buf_printf(&r->body, "%s%s", i ? "\n" : "", in->tags[i].key);
	} else if (what[sizeof(tags) - 1] == '/') {
		const char *key = what + sizeof(tags);

		reply(r, 404, "");
		for (size_t i = 0; i < in->ntags; i++)
			if (strcmp(in->tags[i].key, key) == 0)
				reply(r, 200, in->tags[i].value);
	} else {
		reply(r, 404, "");
	}
	pthread_mutex_unlock(&cs->mu);
}

void gb_imds_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		    struct gb_cs_response *resp)
{
	static const char md[] = "/latest/meta-data/";
	const char *tok = gb_cs_header_get(req, "X-aws-ec2-metadata-token");

	if (strcmp(req->path, "/latest/api/token") == 0 && strcmp(req->method, "PUT") == 0)
		token(cs, resp, req);
	else if (strcmp(req->method, "GET") != 0)
		reply(resp, 405, "");
	else
		meta(cs, resp, strncmp(req->path, md, sizeof(md) - 1) == 0 ?
			       req->path + sizeof(md) - 1 : NULL,
		     req->peer, tok && gb_str_has_prefix(tok, TOKEN_PREFIX));
	gb_log_info("imds method=%s path=%s status=%d peer=%s", req->method, req->path,
		    resp->status, req->peer ? req->peer : "-");
}
