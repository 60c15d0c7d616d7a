/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.c - the AWS credential chain of gpuburst.yaml's cloud: section
 *
 * One place maps the configuration onto libcloud's chain, for the
 * orchestrator's EC2 clients, Bedrock's SigV4 and gpuburstctl doctor.
 */
#include "config.h"

#include "gb_creds.h"
#include "gb_plan.h"

gb_err_t gb_plan_creds_create(const struct gb_conf *conf, struct gb_creds **out,
			      gb_error_t *err)
{
	const struct gb_conf_cloud *c = &conf->cloud;
	struct gb_creds_opts co = { 0 };

	co.access_key_id = c->access_key_id;
	co.secret_access_key = c->secret_access_key;
	co.session_token = c->session_token;
	co.profile = c->profile;
	co.credentials_file = c->credentials_file;
	co.config_file = c->config_file;
	co.no_imds = !c->imds;
	return gb_creds_create(&co, out, err);
}
