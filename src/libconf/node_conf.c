/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_conf.c - node.yaml (gpuburst-node): its schema, load and print
 *
 * The same row tables and walker as gpuburst.yaml (conf_int.h), so the
 * same strictness and the same messages.  To add a key: its field in
 * gb_node_conf.h, one row here, a line in print() and in gpuburst-node(8).
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_int.h"
#include "gb_node_conf.h"
#include "gb_util.h"

#define SEEN(key) conf_seen(sc, seen, key)
#define GPUS_MAX 64

static const char *const rebalance_names[] = { "drain", "ignore" };
static const struct conf_enum node_enum_rebalance = {
	rebalance_names, (int)GB_ARRAY_LEN(rebalance_names)
};

/*****************************************************************************
 *  Checks of one value
 *****************************************************************************/

static bool check_ip(struct conf_ctx *c, const struct conf_key *k,
		     yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	unsigned char addr[16];
	char tmp[CONF_SHOW_MAX + 8];

	if (!s || inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1)
		return true;
	conf_error_at(c, n, "'%s' must be an IPv4 or IPv6 address, got '%s'",
		      k->name, conf_show(s, tmp, sizeof(tmp)));
	return false;
}

/* host[:port], as slurmd --conf-server takes it. */
static bool check_conf_server(struct conf_ctx *c, const struct conf_key *k,
			      yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst, *colon = strrchr(s, ':');
	char tmp[CONF_SHOW_MAX + 8];
	long port;
	bool ok = colon != s;

	for (const char *p = s; ok && *p && p != colon; p++)
		ok = isalnum((unsigned char)*p) || *p == '.' || *p == '-';
	if (ok && colon)
		ok = gb_parse_long(colon + 1, 1, 65535, &port) == GB_E_OK;
	if (ok)
		return true;
	conf_error_at(c, n, "'%s' must be host[:port] (a port 1 to 65535), got '%s'",
		      k->name, conf_show(s, tmp, sizeof(tmp)));
	return false;
}

/* A program: an absolute path, or a name looked up in PATH. */
static bool check_program(struct conf_ctx *c, const struct conf_key *k,
			  yaml_node_t *n, void *dst)
{
	const char *s = *(char **)dst;
	char tmp[CONF_SHOW_MAX + 8];

	if (s[0] == '/' || !strchr(s, '/'))
		return true;
	conf_error_at(c, n, "'%s' must be an absolute path or a program name looked up in PATH, got '%s'",
		      k->name, conf_show(s, tmp, sizeof(tmp)));
	return false;
}

/* health.gpus: auto, or a count 0..GPUS_MAX written as a plain number. */
static void read_gpus(struct conf_ctx *c, const struct conf_key *k,
		      yaml_node_t *n, void *obj)
{
	struct gb_node_conf_health *h = obj;
	const char *s = (const char *)n->data.scalar.value;
	char tmp[CONF_SHOW_MAX + 8];
	long v;

	if (n->type != YAML_SCALAR_NODE) {
		conf_error_at(c, n, "'%s' must be auto or a number of GPUs, got %s",
			      k->name, conf_kind_name(n));
		return;
	}
	if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !strcmp(s, "auto")) {
		h->gpus = GB_NODE_CONF_GPUS_AUTO;
		return;
	}
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || conf_has_nul(n) ||
	    gb_parse_long(s, 0, GPUS_MAX, &v)) {
		conf_error_at(c, n, "'%s' must be auto or a number of GPUs from 0 to %d, got '%s'",
			      k->name, GPUS_MAX,
			      conf_show_len(s, n->data.scalar.length, tmp, sizeof(tmp)));
		return;
	}
	h->gpus = (int)v;
}

/*****************************************************************************
 *  Schema
 *****************************************************************************/

#define S struct gb_node_conf_imds
static const struct conf_key imds_keys[] = {
	K_URL("endpoint", endpoint),
	K_STR("source_address", source_address, NULL, CF_EMPTY_NULL, .check = check_ip),
	K_DUR("timeout", timeout, "2s", 1, 60, 0),
	K_END
};
#undef S

static const struct conf_schema imds_schema = {
	"imds", imds_keys, sizeof(struct gb_node_conf_imds),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

#define S struct gb_node_conf_ec2
static const struct conf_key ec2_keys[] = {
	K_URL("endpoint", endpoint),
	K_END
};
#undef S

static const struct conf_schema ec2_schema = {
	"ec2", ec2_keys, sizeof(struct gb_node_conf_ec2),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

#define S struct gb_node_conf_node
static const struct conf_key node_keys[] = {
	K_DUR("tag_wait", tag_wait, "300s", 0, 3600, 0),
	K_BOOL("set_hostname", set_hostname, "true"),
	K_END
};
#undef S

static const struct conf_schema node_schema = {
	"node", node_keys, sizeof(struct gb_node_conf_node),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

/* conf and conf_server exclude each other; configless has no slurm.conf. */
static void slurm_post(struct conf_ctx *c, const struct conf_schema *sc,
		       yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_node_conf_slurm *s = obj;

	(void)map;
	if (!s->conf_server)
		return;
	if (SEEN("conf"))
		conf_error_at(c, SEEN("conf_server"),
			      "'conf_server' (configless Slurm) and 'conf' exclude each other: give one");
	GB_FREE_NULL(s->conf);
}

#define S struct gb_node_conf_slurm
static const struct conf_key slurm_keys[] = {
	K_PATH("conf", conf, "/etc/slurm/slurm.conf", 0),
	K_STR("conf_server", conf_server, NULL, 0, .check = check_conf_server),
	K_PATH("slurmd", slurmd, "/usr/sbin/slurmd", 0),
	K_PATH("scontrol", scontrol, "/usr/bin/scontrol", 0),
	K_PATH("squeue", squeue, "/usr/bin/squeue", 0),
	K_STRV("slurmd_args", slurmd_args, NULL, 0),
	K_END
};
#undef S

static const struct conf_schema slurm_schema = {
	"slurm", slurm_keys, sizeof(struct gb_node_conf_slurm),
	CONF_NO_OFF, CONF_NO_OFF, slurm_post, NULL
};

#define S struct gb_node_conf_munge
static const struct conf_key munge_keys[] = {
	K_PATH("key", key, "/etc/munge/munge.key", 0),
	K_PATH("sealed_with", sealed_with, NULL, 0),
	K_END
};
#undef S

static const struct conf_schema munge_schema = {
	"munge", munge_keys, sizeof(struct gb_node_conf_munge),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

/* model: "auto" is the catalog's, stored as NULL. */
static void health_post(struct conf_ctx *c, const struct conf_schema *sc,
			yaml_node_t *map, void *obj, yaml_node_t *const *seen)
{
	struct gb_node_conf_health *h = obj;

	(void)c;
	(void)sc;
	(void)map;
	(void)seen;
	if (h->model && !strcmp(h->model, "auto"))
		GB_FREE_NULL(h->model);
}

#define S struct gb_node_conf_health
static const struct conf_key health_keys[] = {
	K_STR("nvidia_smi", nvidia_smi, "nvidia-smi", 0, .check = check_program),
	K_DUR("timeout", timeout, "60s", 1, 3600, 0),
	K_BOOL("dcgm", dcgm, "false"),
	K_STR("dcgmi", dcgmi, "dcgmi", 0, .check = check_program),
	K_FUNC("gpus", read_gpus),
	K_STR("model", model, NULL, 0),
	K_END
};
#undef S

static const struct conf_schema health_schema = {
	"health", health_keys, sizeof(struct gb_node_conf_health),
	CONF_NO_OFF, CONF_NO_OFF, health_post, NULL
};

#define S struct gb_node_conf_notices
static const struct conf_key notices_keys[] = {
	K_DUR("interval", interval, "5s", 1, 300, 0),
	K_ENUM("rebalance", rebalance, "drain", &node_enum_rebalance),
	K_END
};
#undef S

static const struct conf_schema notices_schema = {
	"notices", notices_keys, sizeof(struct gb_node_conf_notices),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

#define S struct gb_node_conf
static const struct conf_key top_keys[] = {
	K_MAP("imds", imds, &imds_schema),
	K_MAP("ec2", ec2, &ec2_schema),
	K_MAP("node", node, &node_schema),
	K_MAP("slurm", slurm, &slurm_schema),
	K_MAP("munge", munge, &munge_schema),
	K_MAP("health", health, &health_schema),
	K_MAP("notices", notices, &notices_schema),
	K_END
};
#undef S

static const struct conf_schema top_schema = {
	"node.yaml", top_keys, sizeof(struct gb_node_conf),
	CONF_NO_OFF, CONF_NO_OFF, NULL, NULL
};

/*****************************************************************************
 *  Load
 *****************************************************************************/

gb_err_t gb_node_conf_load_string(const char *name, const char *text, size_t len,
				  struct gb_node_conf **out, struct gb_errlist *errs,
				  gb_error_t *err)
{
	struct conf_ctx c = { 0 };
	struct gb_conf_mark none = { 0, 0 };
	struct gb_node_conf *nc;
	gb_err_t rc;

	*out = NULL;
	c.file = name;
	if (!(nc = calloc(1, sizeof(*nc))) || !(nc->path = strdup(name))) {
		conf_nomem(&c);
	} else if (len > CONF_MAX_FILE_BYTES) {
		conf_error(&c, none, "the file is larger than %d bytes",
			   CONF_MAX_FILE_BYTES);
	} else {
		conf_defaults(&c, &top_schema, nc);
		nc->imds.endpoint = strdup("http://169.254.169.254");
		if (!nc->imds.endpoint)
			conf_nomem(&c);
		nc->health.gpus = GB_NODE_CONF_GPUS_AUTO;
	}
	conf_parse(&c, text, len, &top_schema, nc, NULL, NULL);
	rc = conf_report(&c, errs, err);
	conf_ctx_free(&c);
	if (rc) {
		gb_node_conf_destroy(nc);
		return rc;
	}
	*out = nc;
	return GB_E_OK;
}

gb_err_t gb_node_conf_load(const char *path, struct gb_node_conf **out,
			   struct gb_errlist *errs, gb_error_t *err)
{
	char *text = NULL;
	size_t len = 0;
	gb_err_t rc;

	*out = NULL;
	if ((rc = conf_read_file(path, &text, &len, errs, err)))
		return rc;
	rc = gb_node_conf_load_string(path, text, len, out, errs, err);
	free(text);
	return rc;
}

void gb_node_conf_destroy(struct gb_node_conf *conf)
{
	if (!conf)
		return;
	conf_free_obj(&top_schema, conf);
	free(conf->path);
	free(conf);
}

const char *gb_node_conf_rebalance_name(enum gb_node_rebalance r)
{
	int v = (int)r;

	return v >= 0 && v < node_enum_rebalance.n ? node_enum_rebalance.names[v]
						   : "unknown";
}

/*****************************************************************************
 *  Print
 *****************************************************************************/

/* A scalar as YAML: plain when that reads back the same, else quoted. */
static void put_val(FILE *fp, const char *v)
{
	bool plain = v && *v && !strchr("!&*-?[]{}|>'\"%@`#,: ~", v[0]);

	for (const char *p = v; plain && *p; p++)
		plain = isalnum((unsigned char)*p) || strchr("/._-+@=", *p) ||
			(*p == ':' && p[1] != ' ' && p[1] != '\0');
	if (plain && (!strcmp(v, "true") || !strcmp(v, "false") || !strcmp(v, "yes") ||
		      !strcmp(v, "no") || !strcmp(v, "null") || !strcmp(v, "auto")))
		plain = false;
	if (!v) {
		fputs("~\n", fp);
		return;
	}
	if (plain) {
		fprintf(fp, "%s\n", v);
		return;
	}
	fputc('"', fp);
	for (const char *p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			fprintf(fp, "\\x%02x", (unsigned char)*p);
		else
			fputc(*p, fp);
	}
	fputs("\"\n", fp);
}

static void put_str(FILE *fp, const char *key, const char *v)
{
	fprintf(fp, "  %s: ", key);
	put_val(fp, v);
}

static void put_dur(FILE *fp, const char *key, double v)
{
	char b[32];

	fprintf(fp, "  %s: %s\n", key, conf_duration_str(v, b, sizeof(b)));
}

static void put_bool(FILE *fp, const char *key, bool v)
{
	fprintf(fp, "  %s: %s\n", key, v ? "true" : "false");
}

void gb_node_conf_print(const struct gb_node_conf *conf, void *fpv)
{
	FILE *fp = fpv;
	const struct gb_node_conf_health *h = &conf->health;

	fputs("imds:\n", fp);
	put_str(fp, "endpoint", conf->imds.endpoint);
	put_str(fp, "source_address", conf->imds.source_address);
	put_dur(fp, "timeout", conf->imds.timeout);
	fputs("ec2:\n", fp);
	put_str(fp, "endpoint", conf->ec2.endpoint);
	fputs("node:\n", fp);
	put_dur(fp, "tag_wait", conf->node.tag_wait);
	put_bool(fp, "set_hostname", conf->node.set_hostname);
	fputs("slurm:\n", fp);
	if (conf->slurm.conf_server)
		put_str(fp, "conf_server", conf->slurm.conf_server);
	else
		put_str(fp, "conf", conf->slurm.conf);
	put_str(fp, "slurmd", conf->slurm.slurmd);
	put_str(fp, "scontrol", conf->slurm.scontrol);
	put_str(fp, "squeue", conf->slurm.squeue);
	fprintf(fp, "  slurmd_args:%s\n", conf->slurm.n_slurmd_args ? "" : " []");
	for (size_t i = 0; i < conf->slurm.n_slurmd_args; i++) {
		fputs("    - ", fp);
		put_val(fp, conf->slurm.slurmd_args[i]);
	}
	fputs("munge:\n", fp);
	put_str(fp, "key", conf->munge.key);
	if (conf->munge.sealed_with)
		put_str(fp, "sealed_with", conf->munge.sealed_with);
	fputs("health:\n", fp);
	put_str(fp, "nvidia_smi", h->nvidia_smi);
	put_dur(fp, "timeout", h->timeout);
	put_bool(fp, "dcgm", h->dcgm);
	put_str(fp, "dcgmi", h->dcgmi);
	if (h->gpus == GB_NODE_CONF_GPUS_AUTO)
		fputs("  gpus: auto\n", fp);
	else
		fprintf(fp, "  gpus: %d\n", h->gpus);
	if (h->model)
		put_str(fp, "model", h->model);
	else
		fputs("  model: auto\n", fp);
	fputs("notices:\n", fp);
	put_dur(fp, "interval", conf->notices.interval);
	put_str(fp, "rebalance", gb_node_conf_rebalance_name(conf->notices.rebalance));
}
