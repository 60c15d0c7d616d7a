/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurmconf_write.c - the slurm.conf and gres.conf lines gpuburst needs,
 * from the config, the GPU instance-type catalog and the target Slurm
 * release (no libslurm: gb_slurmconf.h says which rules and why)
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gb_conf.h"
#include "gb_hostlist.h"
#include "gb_slurm_release.h"
#include "gb_slurmconf.h"
#include "gb_util.h"

/*
 * Character devices present on any Linux host, for fake lab GPUs: eight,
 * as many as a p4d or p5 has.
 */
static const char *const lab_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx", "/dev/console",
};

/*****************************************************************************
 *  Power saving
 *****************************************************************************/

/*
 * Power saving touches only gpuburst's nodes: Slurm powers down a node
 * only when SuspendTime applies to it, and the generated lines set it on
 * the gpuburst partitions alone (gb_slurmconf_write_nodes), never
 * globally.  These global lines act on powered-down nodes only.
 */
void gb_slurmconf_write_power(struct gb_buf *out, const struct gb_slurmconf_gen *g)
{
	char ver[32];

	gb_slurm_version_str(g->slurm, ver, sizeof(ver));
	*strrchr(ver, '.') = '\0';	/* the release: 24.11 */
	gb_buf_printf(out, "# ---- slurm.conf: power saving (for Slurm %s) ----\n", ver);
	gb_buf_puts(out, "# Power saving is on only where SuspendTime is set: on the gpuburst\n"
		    "# partitions (their lines), so no other node is ever powered down.\n");
	gb_buf_printf(out, "ResumeProgram=%s/gpuburst-resume\n", g->sbindir);
	gb_buf_printf(out, "SuspendProgram=%s/gpuburst-suspend\n", g->sbindir);
	gb_buf_printf(out, "ResumeFailProgram=%s/gpuburst-resume-fail\n", g->sbindir);
	gb_buf_puts(out, "# gpuburst batches launches itself\nResumeRate=0\nSuspendRate=0\n");
	gb_buf_puts(out, "# with the job_submit/gpuburst plugin installed:\n#JobSubmitPlugins=gpuburst\n");
}

/*****************************************************************************
 *  Settings merged into the site's own lines
 *****************************************************************************/

/*
 * Settings Slurm keeps one line of, which the site has its own of too:
 * never emitted as a blind line (the later line would silently replace the
 * other).  Each says what gpuburst needs in it, why, and what it changes
 * for the site's own nodes.
 */
enum merge_kind { MERGE_LIST, MERGE_AT_LEAST };

struct merge_item {
	const char *key;
	enum merge_kind kind;
	char need[128];		/* LIST: comma-separated options; AT_LEAST: a number */
	const char *drop;	/* LIST: options of the site's to drop (defunct), or NULL */
	const char *why;
	const char *site_nodes;	/* what changes for nodes gpuburst does not own */
};

static size_t merge_items(const struct gb_slurmconf_gen *g, struct merge_item *v)
{
	size_t n = 0;

	v[n] = (struct merge_item){ "SlurmctldParameters", MERGE_LIST, "",
		gb_slurm_has(g->slurm, GB_SLURM_CTLD_OWNS_CLOUD_ADDR) ? "cloud_reg_addrs" : NULL,
		"nodes gpuburst sets DOWN are idle again when powered down; power saving "
		"looks every few seconds",
		"nothing: these act on power saving only" };
	snprintf(v[n++].need, sizeof(v[0].need),
		 "idle_on_node_suspend,power_save_interval=%d,power_save_min_interval=0",
		 g->lab ? 1 : 5);
	v[n++] = (struct merge_item){ "GresTypes", MERGE_LIST, "gpu", NULL,
		"the nodes' Gres=gpu:MODEL:N", "nothing: one GRES type more" };
	v[n++] = (struct merge_item){ "TreeWidth", MERGE_AT_LEAST, "65533", NULL,
		"cloud nodes cannot forward messages for each other",
		"slurmctld reaches every node directly instead of through a tree of slurmds "
		"(more slurmctld threads on a large cluster)" };
	if (!gb_slurm_has(g->slurm, GB_SLURM_NO_ADDR_CACHE_DEFUNCT))
		v[n++] = (struct merge_item){ "CommunicationParameters", MERGE_LIST, "NoAddrCache",
			NULL, "a cloud node's address changes with every instance",
			"node addresses are looked up every time, not cached" };
	else	/* only to take the defunct option out of the site's line */
		v[n++] = (struct merge_item){ "CommunicationParameters", MERGE_LIST, "",
			"NoAddrCache", "NoAddrCache is defunct from Slurm 23.11",
			"nothing: Slurm ignores it" };
	if (!gb_slurm_has(g->slurm, GB_SLURM_CLOUD_VISIBLE))
		v[n++] = (struct merge_item){ "PrivateData", MERGE_LIST, "cloud", NULL,
			"powered-down cloud nodes are shown to users",
			"nothing: only cloud nodes are concerned" };
	if (gb_slurm_has(g->slurm, GB_SLURM_REQUEUE_ON_RESUME_FAILURE))
		v[n++] = (struct merge_item){ "SchedulerParameters", MERGE_LIST,
			"requeue_on_resume_failure", NULL,
			"a job whose cloud nodes could not be had goes back to the queue, also "
			"one submitted with --no-requeue",
			"nothing: only nodes that fail to resume are concerned" };
	return n;
}

/* The option name of "k=v" or "k": its length. */
static size_t opt_key_len(const char *opt, size_t len)
{
	const char *eq = memchr(opt, '=', len);

	return eq ? (size_t)(eq - opt) : len;
}

/* Does comma list [have] hold an option of [opt]'s name? */
static bool list_has(const char *have, const char *opt, size_t len)
{
	size_t klen = opt_key_len(opt, len);

	for (const char *p = have; p && *p;) {
		size_t l = strcspn(p, ",");

		if (opt_key_len(p, l) == klen && strncasecmp(p, opt, klen) == 0)
			return true;
		p += l + (p[l] == ',');
	}
	return false;
}

/*
 * [have] (the site's value, or NULL) with what gpuburst needs added: the
 * site's options stay as they are (also its own value of an option gpuburst
 * would set otherwise), but for the ones defunct in the target release.
 * Into [out]; RET whether anything changed.
 */
static bool merged(const struct merge_item *m, const char *have, struct gb_buf *out)
{
	bool added = false;

	gb_buf_reset(out);
	if (m->kind == MERGE_AT_LEAST) {
		long h = 0, want = strtol(m->need, NULL, 10);

		if (have && gb_parse_long(have, 0, LONG_MAX, &h) == GB_E_OK && h >= want) {
			gb_buf_puts(out, have);
			return false;
		}
		gb_buf_puts(out, m->need);
		return true;
	}
	for (const char *p = have; p && *p;) {	/* the site's, less the defunct */
		size_t l = strcspn(p, ",");

		if (l && m->drop && list_has(m->drop, p, l))
			added = true;
		else if (l)
			gb_buf_printf(out, "%s%.*s", out->len ? "," : "", (int)l, p);
		p += l + (p[l] == ',');
	}
	for (const char *p = m->need; *p;) {
		size_t l = strcspn(p, ",");

		if (!list_has(have, p, l)) {
			gb_buf_printf(out, "%s%.*s", out->len ? "," : "", (int)l, p);
			added = true;
		}
		p += l + (p[l] == ',');
	}
	return added;
}

static bool partition_seen(const struct gb_conf *conf, size_t upto,
			   const char *partition)
{
	for (size_t i = 0; i < upto; i++)
		if (strcmp(conf->nodesets[i].partition, partition) == 0)
			return true;
	return false;
}

/*
 * The site's partitions a global SuspendTime would power down into
 * gpuburst's programs, merged into its SuspendExcParts.
 */
static void exc_parts_lines(struct gb_buf *out, const struct gb_conf *conf,
			    const struct gb_slurmconf *sc)
{
	struct gb_buf b = GB_BUF_INIT;
	bool added = false;

	if (sc->suspend_time < 0)
		return;
	if (sc->suspend_exc_parts)
		gb_buf_puts(&b, sc->suspend_exc_parts);
	for (size_t i = 0; i < sc->n_partitions; i++) {
		const char *name = sc->partitions[i].name;

		if (partition_seen(conf, conf->n_nodesets, name) ||
		    list_has(sc->suspend_exc_parts, name, strlen(name)))
			continue;
		gb_buf_printf(&b, "%s%s", b.len ? "," : "", name);
		added = true;
	}
	if (added) {
		gb_buf_printf(out, "# SuspendExcParts: your SuspendTime=%.0f powers down every idle node "
			      "into gpuburst's programs; your partitions are excluded\n",
			      sc->suspend_time);
		gb_buf_puts(out, "#   your nodes: never powered down by Slurm\n");
		gb_buf_printf(out, "SuspendExcParts=%s\n", gb_buf_str(&b));
	}
	gb_buf_free(&b);
}

/* No site slurm.conf: what to merge, as comments. */
static void merge_advice(struct gb_buf *out, const struct merge_item *items, size_t n)
{
	gb_buf_puts(out, "# ---- slurm.conf: settings to merge into your own lines ----\n"
		    "# Slurm keeps only the last line of each key (\"specified more than once,\n"
		    "# latest value used\"): add these values to your existing lines, or let\n"
		    "# `gpuburstctl slurm-conf --merge /etc/slurm/slurm.conf` print them merged.\n");
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(out, "# %s: %s %s (%s; your nodes: %s)\n", items[i].key,
			      items[i].kind == MERGE_LIST ? "add" : "at least", items[i].need,
			      items[i].why, items[i].site_nodes);
	gb_buf_puts(out, "# SuspendTime: leave it unset globally; if your slurm.conf sets it, "
		    "list your own partitions in SuspendExcParts\n");
	gb_buf_puts(out, "# ReturnToService: yours stays (gpuburst returns its nodes itself)\n");
}

void gb_slurmconf_write_merge(struct gb_buf *out, const struct gb_conf *conf,
			      const struct gb_slurmconf_gen *g,
			      const struct gb_slurmconf *site)
{
	struct merge_item items[8];
	size_t n = merge_items(g, items);
	struct gb_buf b = GB_BUF_INIT;

	if (!site) {
		merge_advice(out, items, n);
		return;
	}
	gb_buf_printf(out, "# ---- slurm.conf: merged with %s (replace these keys there) ----\n",
		      site->path);
	for (size_t i = 0; i < site->duplicates.n; i++)
		gb_buf_printf(out, "# WARNING: %s (Slurm uses only the later line)\n",
			      site->duplicates.v[i]);
	for (size_t i = 0; i < n; i++) {
		const char *have = gb_slurmconf_value(site, items[i].key);

		if (!merged(&items[i], have, &b)) {
			if (have && *items[i].need)
				gb_buf_printf(out, "# %s: yours (%s) has what gpuburst needs: keep it\n",
					      items[i].key, have);
			continue;
		}
		gb_buf_printf(out, "# %s: %s; %s\n#   your nodes: %s\n", items[i].key,
			      have ? "yours, merged" : "not set in yours", items[i].why,
			      items[i].site_nodes);
		if (b.len)
			gb_buf_printf(out, "%s=%s\n", items[i].key, gb_buf_str(&b));
		else
			gb_buf_printf(out, "#   (remove your %s line: nothing is left of it)\n",
				      items[i].key);
	}
	exc_parts_lines(out, conf, site);
	gb_buf_printf(out, "# ReturnToService: yours (%s) stays: gpuburst returns its nodes itself\n",
		      site->return_to_service ? site->return_to_service : "Slurm's default, 0");
	gb_buf_free(&b);
}

/*****************************************************************************
 *  Nodes, node sets, partitions, gres.conf
 *****************************************************************************/

/* "gpu:a10g:1" devices: /dev/nvidia0, /dev/nvidia[0-3]. */
static void gres_file(char *buf, size_t n, int count, bool lab)
{
	size_t len = 0;

	if (!lab) {
		if (count == 1)
			snprintf(buf, n, "/dev/nvidia0");
		else
			snprintf(buf, n, "/dev/nvidia[0-%d]", count - 1);
		return;
	}
	buf[0] = '\0';
	for (int i = 0; i < count && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "",
					lab_devices[i]);
}

static size_t nodeset_size(const struct gb_conf_nodeset *ns)
{
	gb_hostlist_t *hl = NULL;
	size_t n = 0;

	/* the loader parsed it already: this cannot fail */
	if (gb_hostlist_parse(ns->nodes, &hl, NULL) == GB_E_OK)
		n = gb_hostlist_count(hl);
	gb_hostlist_destroy(hl);
	return n;
}

size_t gb_slurmconf_node_count(const struct gb_conf *conf)
{
	size_t total = 0;

	for (size_t i = 0; i < conf->n_nodesets; i++)
		total += nodeset_size(&conf->nodesets[i]);
	return total;
}

/*
 * What Slurm is told of a nodeset of several types: the lowest GPU count,
 * vCPUs and memory among them (a node must not report less than slurm.conf
 * says), the first (preferred) type for the rest.  RET NULL when one is not
 * in the catalog (the loader refuses such files).
 */
static const struct gb_instance_type *lowest(const struct gb_conf *conf,
					     const struct gb_conf_nodeset *ns,
					     struct gb_instance_type *low)
{
	for (size_t i = 0; i < ns->n_instance_types; i++) {
		const struct gb_instance_type *t;

		if (!(t = gb_conf_instance_type(conf, ns->instance_types[i])))
			return NULL;
		if (i == 0) {
			*low = *t;
			continue;
		}
		low->gpus = t->gpus < low->gpus ? t->gpus : low->gpus;
		low->vcpus = t->vcpus < low->vcpus ? t->vcpus : low->vcpus;
		low->memory_mib = t->memory_mib < low->memory_mib ? t->memory_mib
								  : low->memory_mib;
	}
	return ns->n_instance_types ? low : NULL;
}

/* Feature=<GPU model>[,efa],<each instance type>: -C h100, -C p5e.48xlarge. */
static void features(struct gb_buf *out, const struct gb_conf_nodeset *ns,
		     const struct gb_instance_type *it)
{
	gb_buf_printf(out, "Feature=%s%s", it->gpu_model, ns->efa ? ",efa" : "");
	for (size_t i = 0; i < ns->n_instance_types; i++)
		gb_buf_printf(out, ",%s", ns->instance_types[i]);
}

/* One nodeset's NodeName and NodeSet lines, its gres.conf line into [gres]. */
static gb_err_t nodeset_lines(struct gb_buf *out, struct gb_buf *gres,
			      const struct gb_conf *conf, const struct gb_conf_nodeset *ns,
			      const struct gb_slurmconf_gen *g, long *port, gb_error_t *err)
{
	struct gb_instance_type low;
	const struct gb_instance_type *it = lowest(conf, ns, &low);
	size_t count = nodeset_size(ns);
	char ports[64] = "", file[256];

	if (!it)
		return gb_errorf(err, GB_E_CONFIG, "nodeset %s: instance type %s is not in the catalog",
				 ns->name, ns->instance_type);
	if (g->lab && it->gpus > (int)GB_ARRAY_LEN(lab_devices))
		return gb_errorf(err, GB_E_INVALID, "nodeset %s: --lab fakes at most %zu GPUs per node, %s has %d",
				 ns->name, GB_ARRAY_LEN(lab_devices), it->name, it->gpus);
	if (*port) {
		snprintf(ports, sizeof(ports), " Port=[%ld-%ld]", *port, *port + (long)count - 1);
		*port += (long)count;
	}
	if (ns->n_instance_types > 1)
		gb_buf_printf(out, "# nodeset %s: %zu types (lowest of them: %d vCPU, %d MiB, %d x %s), home %s, %s\n",
			      ns->name, ns->n_instance_types, it->vcpus, it->memory_mib,
			      it->gpus, it->gpu_model, ns->home_region,
			      gb_conf_mode_name(ns->mode));
	else
		gb_buf_printf(out, "# nodeset %s: %s (%d vCPU, %d MiB, %d x %s), home %s, %s\n",
			      ns->name, it->name, it->vcpus, it->memory_mib, it->gpus,
			      it->gpu_model, ns->home_region, gb_conf_mode_name(ns->mode));
	gb_buf_printf(out, "NodeName=%s%s CPUs=%d RealMemory=%d Gres=gpu:%s:%d ",
		      ns->nodes, ports, g->lab ? GB_SLURMCONF_LAB_CPUS : it->vcpus,
		      g->lab ? GB_SLURMCONF_LAB_MEMORY
			     : (int)floor(it->memory_mib * GB_SLURMCONF_MEMORY_HEADROOM),
		      it->gpu_model, it->gpus);
	features(out, ns, it);
	gb_buf_puts(out, " State=CLOUD\n");
	gb_buf_printf(out, "NodeSet=gb_%s Nodes=%s\n", ns->name, ns->nodes);
	gres_file(file, sizeof(file), it->gpus, g->lab);
	gb_buf_printf(gres, "NodeName=%s Name=gpu Type=%s File=%s\n", ns->nodes,
		      it->gpu_model, file);
	return GB_E_OK;
}

/* One PartitionName line per partition, over its node sets. */
static void partition_lines(struct gb_buf *out, const struct gb_conf *conf,
			    const struct gb_slurmconf_gen *g)
{
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const char *part = conf->nodesets[i].partition;
		bool first = true;

		if (partition_seen(conf, i, part))
			continue;
		gb_buf_printf(out, "PartitionName=%s Nodes=", part);
		for (size_t j = i; j < conf->n_nodesets; j++) {
			if (strcmp(conf->nodesets[j].partition, part) != 0)
				continue;
			gb_buf_printf(out, "%sgb_%s", first ? "" : ",", conf->nodesets[j].name);
			first = false;
		}
		/* power saving here only (gb_slurmconf_write_power) */
		gb_buf_printf(out, " MaxTime=INFINITE State=UP SuspendTime=%ld SuspendTimeout=%ld "
			      "ResumeTimeout=%ld\n", g->suspend_time, g->suspend_timeout,
			      g->resume_timeout);
	}
}

gb_err_t gb_slurmconf_write_nodes(struct gb_buf *out, struct gb_buf *gres,
				  const struct gb_conf *conf,
				  const struct gb_slurmconf_gen *g, gb_error_t *err)
{
	long port = g->ports;
	gb_err_t rc;

	gb_buf_puts(out, "# ---- slurm.conf: nodes and partitions ----\n");
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		rc = nodeset_lines(out, gres, conf, &conf->nodesets[i], g, &port, err);
		if (rc)
			return rc;
	}
	partition_lines(out, conf, g);
	return GB_E_OK;
}
