/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_node_conf.h - node.yaml, the configuration of gpuburst-node (the
 * program on each cloud instance): read as strictly as gpuburst.yaml
 *
 * Unknown and duplicate keys, wrong types, bad durations and values out of
 * range are errors "FILE:LINE:COL: message"; every key has a default, so
 * an empty file is valid.  The keys and their defaults are in
 * gpuburst-node(8).
 */
#ifndef GB_LIBCONF_GB_NODE_CONF_H
#define GB_LIBCONF_GB_NODE_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"

#define GB_NODE_CONF_DEFAULT_PATH GB_SYSCONFDIR "/gpuburst/node.yaml"
#define GB_NODE_CONF_GPUS_AUTO (-1)	/* health.gpus: from the catalog */

enum gb_node_rebalance {
	GB_NODE_REBALANCE_DRAIN = 0,	/* POWER_DOWN_ASAP on a recommendation */
	GB_NODE_REBALANCE_IGNORE,	/* log it only */
};

struct gb_node_conf_imds {
	char *endpoint;			/* http://169.254.169.254 */
	char *source_address;		/* IP literal, NULL: the kernel's choice */
	double timeout;			/* seconds per request */
};

struct gb_node_conf_ec2 {
	char *endpoint;			/* NULL: the region's AWS endpoint */
};

struct gb_node_conf_node {
	double tag_wait;		/* seconds to wait for gpuburst:node */
	bool set_hostname;
};

struct gb_node_conf_slurm {
	char *conf;			/* slurm.conf, NULL when configless */
	char *conf_server;		/* host[:port], NULL: not configless */
	char *slurmd, *scontrol, *squeue;	/* absolute paths */
	char **slurmd_args;		/* NULL-terminated */
	size_t n_slurmd_args;
};

struct gb_node_conf_munge {
	char *key;			/* the AMI's key file */
	char *sealed_with;		/* the private key that opens the
					 * user data's sealed key (munge-key);
					 * NULL: none */
};

struct gb_node_conf_health {
	char *nvidia_smi;		/* a name looked up in PATH, or a path */
	double timeout;			/* seconds, per program */
	bool dcgm;			/* also dcgmi diag -r 1 */
	char *dcgmi;
	int gpus;			/* GB_NODE_CONF_GPUS_AUTO or 0..64 */
	char *model;			/* NULL: auto (the catalog's) */
};

struct gb_node_conf_notices {
	double interval;		/* seconds between two IMDS polls */
	enum gb_node_rebalance rebalance;
};

struct gb_node_conf {
	char *path;			/* as loaded */
	struct gb_node_conf_imds imds;
	struct gb_node_conf_ec2 ec2;
	struct gb_node_conf_node node;
	struct gb_node_conf_slurm slurm;
	struct gb_node_conf_munge munge;
	struct gb_node_conf_health health;
	struct gb_node_conf_notices notices;
};

/*
 * Load and validate [path] (a regular file of at most 1 MiB).  On success
 * *out is NEW (gb_node_conf_destroy()).  Every problem is appended to
 * [errs] (may be NULL) in file order; the first is also in [err].
 * RET GB_E_OK, GB_E_NOTFOUND (no such file), GB_E_IO (cannot read it, not
 * a regular file), GB_E_CONFIG, GB_E_NOMEM.
 */
gb_err_t gb_node_conf_load(const char *path, struct gb_node_conf **out,
			   struct gb_errlist *errs, gb_error_t *err);

/* The same for [len] bytes of [text], named [name] in messages. */
gb_err_t gb_node_conf_load_string(const char *name, const char *text, size_t len,
				  struct gb_node_conf **out, struct gb_errlist *errs,
				  gb_error_t *err);

void gb_node_conf_destroy(struct gb_node_conf *conf);

/*
 * Write [conf] to [fp] (a FILE *) as the YAML it amounts to, every
 * default filled in: what `gpuburst-node check` prints.  The output loads
 * back to the same configuration.
 */
void gb_node_conf_print(const struct gb_node_conf *conf, void *fp);

/* RET static "drain" / "ignore". */
const char *gb_node_conf_rebalance_name(enum gb_node_rebalance r);

#endif /* GB_LIBCONF_GB_NODE_CONF_H */
