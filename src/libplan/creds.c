/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.c - the AWS credential chain and the HTTP options of gpuburst.yaml's
 * cloud: section
 *
 * One place maps the configuration onto libcloud's chain and onto the HTTP
 * options (CA bundle, proxy), for the orchestrator's EC2 clients, STS,
 * Bedrock's SigV4, the LLM planner and gpuburstctl doctor.
 */
#include "config.h"

#include "gb_creds.h"
#include "gb_http.h"
#include "gb_plan.h"

void gb_plan_http_opts(const struct gb_conf *conf, struct gb_http_opts *ho)
{
	const struct gb_conf_cloud *c = &conf->cloud;

	ho->ca_bundle = c->ca_bundle;
	ho->proxy = c->proxy;
	ho->no_proxy_hosts = c->no_proxy_hosts;
}

gb_err_t gb_plan_creds_create(const struct gb_conf *conf, struct gb_creds **out,
			      gb_error_t *err)
{
	const struct gb_conf_cloud *c = &conf->cloud;
	struct gb_creds_opts co = { 0 };

	co.access_key_id = c->access_key_id;
	co.secret_access_key = c->secret_access_key;
	co.session_token = c->session_token;
	co.role_arn = c->role_arn;
	co.source_profile = c->source_profile;
	co.credential_source = c->credential_source;
	co.web_identity_token_file = c->web_identity_token_file;
	co.external_id = c->external_id;
	co.role_session_name = c->role_session_name;
	co.duration_seconds = (long)c->duration;
	co.credential_process = c->credential_process;
	co.process_timeout = c->process_timeout;
	co.sts_endpoint = c->sts_endpoint;
	co.sts_region = c->sts_region ? c->sts_region :
			conf->n_regions ? conf->regions[0].name : NULL;
	/* EC2 somewhere of the site's choosing: STS must be named too */
	co.sts_needs_endpoint = c->endpoint != NULL;
	for (size_t i = 0; i < conf->n_regions; i++)
		co.sts_needs_endpoint |= conf->regions[i].endpoint != NULL;
	co.http.connect_timeout_ms = (long)(c->connect_timeout * 1000);
	co.http.timeout_ms = (long)(c->request_timeout * 1000);
	gb_plan_http_opts(conf, &co.http);
	co.profile = c->profile;
	co.credentials_file = c->credentials_file;
	co.config_file = c->config_file;
	co.no_imds = !c->imds;
	return gb_creds_create(&co, out, err);
}
