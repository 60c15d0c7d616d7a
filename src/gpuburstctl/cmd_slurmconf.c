/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd_slurmconf.c - gpuburstctl slurm-conf: slurm.conf and gres.conf lines
 * for the nodesets, from the config and the GPU instance-type catalog
 *
 * Choices (gpuburstctl(8), SLURM-CONF):
 *  - CPUs = the type's vCPUs; RealMemory = 95 % of its memory, rounded
 *    down: slurmd reports what the kernel sees, a little less than the
 *    nominal size, and a node configured with more memory than it reports
 *    is drained ("Low RealMemory") when it registers;
 *  - Gres=gpu:<model>:<count>, Feature=<instance type> (what the
 *    job_submit/gpuburst plugin constrains on; no region feature, since a
 *    node may land in any region of its fallback group), State=CLOUD;
 *  - one NodeSet per nodeset, one PartitionName per partition over them;
 *  - gres.conf File=/dev/nvidia0.. per node (the devices of the type);
 *    --lab: fake GPUs on character devices that exist everywhere
 *    (/dev/null, ...), CPUs=1 and RealMemory=500, because every lab slurmd
 *    runs on this host and reports its resources;
 *  - --lab-ports BASE: Port=[BASE-...] per nodeset (several slurmd on one
 *    host need one port each), consecutive over the nodesets;
 *  - the power-save block with this installation's program paths; lines
 *    that only some Slurm releases accept (gb_slurm_release.h) are chosen
 *    for the release it targets: --slurm-version, by default the Slurm
 *    this gpuburst was built against (its plugin must match slurmctld).
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "gb_hostlist.h"
#include "gb_slurm.h"
#include "gb_slurm_release.h"
#include "gb_slurmconf.h"
#include "gb_util.h"

#define MEMORY_HEADROOM 0.95
#define LAB_CPUS 1
#define LAB_MEMORY 500
/* Character devices present on any Linux host, for fake lab GPUs. */
static const char *const lab_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};

struct sc_opts {
	const char *section;	/* power, nodes, gres, or NULL: all */
	bool lab;
	long ports;		/* 0: none */
	const char *sbindir;
	unsigned long slurm;	/* the release it targets (GB_SLURM_VERSION) */
	long suspend_time, suspend_timeout, resume_timeout;	/* per partition */
	const char *merge;	/* the site's slurm.conf, or NULL */
};

/*
 * Power saving touches only gpuburst's nodes: Slurm powers down a node
 * only when SuspendTime applies to it, and the generated lines set it on
 * the gpuburst partitions alone (nodes_lines), never globally.  These
 * global lines act on powered-down nodes only.
 */
static void power_block(FILE *fp, const struct sc_opts *o)
{
	char ver[32];

	gb_slurm_version_str(o->slurm, ver, sizeof(ver));
	*strrchr(ver, '.') = '\0';	/* the release: 24.11 */
	fprintf(fp, "# ---- slurm.conf: power saving (for Slurm %s) ----\n", ver);
	fprintf(fp, "# Power saving is on only where SuspendTime is set: on the gpuburst\n"
		"# partitions (their lines), so no other node is ever powered down.\n");
	fprintf(fp, "ResumeProgram=%s/gpuburst-resume\n", o->sbindir);
	fprintf(fp, "SuspendProgram=%s/gpuburst-suspend\n", o->sbindir);
	fprintf(fp, "ResumeFailProgram=%s/gpuburst-resume-fail\n", o->sbindir);
	fprintf(fp, "# gpuburst batches launches itself\nResumeRate=0\nSuspendRate=0\n");
	fprintf(fp, "# with the job_submit/gpuburst plugin installed:\n#JobSubmitPlugins=gpuburst\n");
}

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

static size_t merge_items(const struct sc_opts *o, struct merge_item *v)
{
	size_t n = 0;

	v[n] = (struct merge_item){ "SlurmctldParameters", MERGE_LIST, "",
		gb_slurm_has(o->slurm, GB_SLURM_CTLD_OWNS_CLOUD_ADDR) ? "cloud_reg_addrs" : NULL,
		"nodes gpuburst sets DOWN are idle again when powered down; power saving "
		"looks every few seconds",
		"nothing: these act on power saving only" };
	snprintf(v[n++].need, sizeof(v[0].need),
		 "idle_on_node_suspend,power_save_interval=%d,power_save_min_interval=0",
		 o->lab ? 1 : 5);
	v[n++] = (struct merge_item){ "GresTypes", MERGE_LIST, "gpu", NULL,
		"the nodes' Gres=gpu:MODEL:N", "nothing: one GRES type more" };
	v[n++] = (struct merge_item){ "TreeWidth", MERGE_AT_LEAST, "65533", NULL,
		"cloud nodes cannot forward messages for each other",
		"slurmctld reaches every node directly instead of through a tree of slurmds "
		"(more slurmctld threads on a large cluster)" };
	if (!gb_slurm_has(o->slurm, GB_SLURM_NO_ADDR_CACHE_DEFUNCT))
		v[n++] = (struct merge_item){ "CommunicationParameters", MERGE_LIST, "NoAddrCache",
			NULL, "a cloud node's address changes with every instance",
			"node addresses are looked up every time, not cached" };
	else	/* only to take the defunct option out of the site's line */
		v[n++] = (struct merge_item){ "CommunicationParameters", MERGE_LIST, "",
			"NoAddrCache", "NoAddrCache is defunct from Slurm 23.11",
			"nothing: Slurm ignores it" };
	if (!gb_slurm_has(o->slurm, GB_SLURM_CLOUD_VISIBLE))
		v[n++] = (struct merge_item){ "PrivateData", MERGE_LIST, "cloud", NULL,
			"powered-down cloud nodes are shown to users",
			"nothing: only cloud nodes are concerned" };
	if (gb_slurm_has(o->slurm, GB_SLURM_REQUEUE_ON_RESUME_FAILURE))
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
			   const char *partition);

/* Is [part] one of the gpuburst partitions? */
static bool burst_partition(const struct gb_conf *conf, const char *part)
{
	return partition_seen(conf, conf->n_nodesets, part);
}

/*
 * The site's partitions a global SuspendTime would power down into
 * gpuburst's programs, merged into its SuspendExcParts.
 */
static void exc_parts_lines(FILE *fp, const struct gb_conf *conf, const struct gb_slurmconf *sc)
{
	struct gb_buf b = GB_BUF_INIT;
	bool added = false;

	if (sc->suspend_time < 0)
		return;
	if (sc->suspend_exc_parts)
		gb_buf_puts(&b, sc->suspend_exc_parts);
	for (size_t i = 0; i < sc->n_partitions; i++) {
		const char *name = sc->partitions[i].name;

		if (burst_partition(conf, name) || list_has(sc->suspend_exc_parts, name, strlen(name)))
			continue;
		gb_buf_printf(&b, "%s%s", b.len ? "," : "", name);
		added = true;
	}
	if (added) {
		fprintf(fp, "# SuspendExcParts: your SuspendTime=%.0f powers down every idle node "
			"into gpuburst's programs; your partitions are excluded\n", sc->suspend_time);
		fprintf(fp, "#   your nodes: never powered down by Slurm\n");
		fprintf(fp, "SuspendExcParts=%s\n", gb_buf_str(&b));
	}
	gb_buf_free(&b);
}

static gb_err_t merge_block(FILE *fp, const struct gb_conf *conf, const struct sc_opts *o)
{
	struct merge_item items[8];
	size_t n = merge_items(o, items);
	struct gb_slurmconf sc;
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t err;

	if (!o->merge) {
		fprintf(fp, "# ---- slurm.conf: settings to merge into your own lines ----\n"
			"# Slurm keeps only the last line of each key (\"specified more than once,\n"
			"# latest value used\"): add these values to your existing lines, or let\n"
			"# `gpuburstctl slurm-conf --merge /etc/slurm/slurm.conf` print them merged.\n");
		for (size_t i = 0; i < n; i++)
			fprintf(fp, "# %s: %s %s (%s; your nodes: %s)\n", items[i].key,
				items[i].kind == MERGE_LIST ? "add" : "at least", items[i].need,
				items[i].why, items[i].site_nodes);
		fprintf(fp, "# SuspendTime: leave it unset globally; if your slurm.conf sets it, "
			"list your own partitions in SuspendExcParts\n");
		fprintf(fp, "# ReturnToService: yours stays (gpuburst returns its nodes itself)\n");
		return GB_E_OK;
	}
	if (gb_slurmconf_read(o->merge, &sc, &err)) {
		gb_slurmconf_clear(&sc);
		return ctl_fail(err.code, "--merge: %s", err.text);
	}
	fprintf(fp, "# ---- slurm.conf: merged with %s (replace these keys there) ----\n",
		o->merge);
	for (size_t i = 0; i < sc.duplicates.n; i++)
		fprintf(fp, "# WARNING: %s (Slurm uses only the later line)\n", sc.duplicates.v[i]);
	for (size_t i = 0; i < n; i++) {
		const char *have = gb_slurmconf_value(&sc, items[i].key);

		if (!merged(&items[i], have, &b)) {
			if (have && *items[i].need)
				fprintf(fp, "# %s: yours (%s) has what gpuburst needs: keep it\n",
					items[i].key, have);
			continue;
		}
		fprintf(fp, "# %s: %s; %s\n#   your nodes: %s\n", items[i].key,
			have ? "yours, merged" : "not set in yours", items[i].why,
			items[i].site_nodes);
		if (b.len)
			fprintf(fp, "%s=%s\n", items[i].key, gb_buf_str(&b));
		else
			fprintf(fp, "#   (remove your %s line: nothing is left of it)\n", items[i].key);
	}
	exc_parts_lines(fp, conf, &sc);
	fprintf(fp, "# ReturnToService: yours (%s) stays: gpuburst returns its nodes itself\n",
		sc.return_to_service ? sc.return_to_service : "Slurm's default, 0");
	gb_buf_free(&b);
	gb_slurmconf_clear(&sc);
	return GB_E_OK;
}

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

static bool partition_seen(const struct gb_conf *conf, size_t upto,
			   const char *partition)
{
	for (size_t i = 0; i < upto; i++)
		if (strcmp(conf->nodesets[i].partition, partition) == 0)
			return true;
	return false;
}

static gb_err_t nodes_lines(FILE *fp, const struct gb_conf *conf,
			    const struct sc_opts *o, struct gb_buf *gres, long port);

/* [fp] NULL: only the gres.conf lines (into [gres]) are wanted. */
static gb_err_t nodes_block(FILE *fp, const struct gb_conf *conf,
			    const struct sc_opts *o, struct gb_buf *gres)
{
	FILE *sink = NULL;
	long port = o->ports;
	gb_err_t rc;

	if (!fp && !(fp = sink = fopen("/dev/null", "w")))
		return ctl_fail(GB_E_IO, "/dev/null: cannot open");
	rc = nodes_lines(fp, conf, o, gres, port);
	if (sink)
		fclose(sink);
	return rc;
}

static gb_err_t nodes_lines(FILE *fp, const struct gb_conf *conf,
			    const struct sc_opts *o, struct gb_buf *gres, long port)
{

	fprintf(fp, "# ---- slurm.conf: nodes and partitions ----\n");
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];
		const struct gb_instance_type *it = gb_catalog_find(ns->instance_type);
		size_t count = nodeset_size(ns);
		char ports[64] = "", file[256];

		if (!it)
			return ctl_fail(GB_E_CONFIG, "nodeset %s: instance type %s is not in the catalog",
					ns->name, ns->instance_type);
		if (o->lab && it->gpus > (int)GB_ARRAY_LEN(lab_devices))
			return ctl_fail(GB_E_INVALID, "nodeset %s: --lab fakes at most %zu GPUs per node, %s has %d",
					ns->name, GB_ARRAY_LEN(lab_devices), it->name, it->gpus);
		if (port) {
			snprintf(ports, sizeof(ports), " Port=[%ld-%ld]", port,
				 port + (long)count - 1);
			port += (long)count;
		}
		fprintf(fp, "# nodeset %s: %s (%d vCPU, %d MiB, %d x %s), home %s, %s\n",
			ns->name, it->name, it->vcpus, it->memory_mib, it->gpus, it->gpu_model,
			ns->home_region, gb_conf_mode_name(ns->mode));
		fprintf(fp, "NodeName=%s%s CPUs=%d RealMemory=%d Gres=gpu:%s:%d Feature=%s State=CLOUD\n",
			ns->nodes, ports, o->lab ? LAB_CPUS : it->vcpus,
			o->lab ? LAB_MEMORY : (int)floor(it->memory_mib * MEMORY_HEADROOM),
			it->gpu_model, it->gpus, it->name);
		fprintf(fp, "NodeSet=gb_%s Nodes=%s\n", ns->name, ns->nodes);
		gres_file(file, sizeof(file), it->gpus, o->lab);
		gb_buf_printf(gres, "NodeName=%s Name=gpu Type=%s File=%s\n", ns->nodes,
			      it->gpu_model, file);
	}
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const char *part = conf->nodesets[i].partition;
		bool first = true;

		if (partition_seen(conf, i, part))
			continue;
		fprintf(fp, "PartitionName=%s Nodes=", part);
		for (size_t j = i; j < conf->n_nodesets; j++) {
			if (strcmp(conf->nodesets[j].partition, part) != 0)
				continue;
			fprintf(fp, "%sgb_%s", first ? "" : ",", conf->nodesets[j].name);
			first = false;
		}
		/* power saving here only (power_block) */
		fprintf(fp, " MaxTime=INFINITE State=UP SuspendTime=%ld SuspendTimeout=%ld "
			"ResumeTimeout=%ld\n", o->suspend_time, o->suspend_timeout, o->resume_timeout);
	}
	return GB_E_OK;
}

static const struct option sc_longopts[] = {
	CTL_COMMON_LONGOPTS,
	{ "lab", no_argument, NULL, 'l' },
	{ "lab-ports", required_argument, NULL, 'p' },
	{ "sbindir", required_argument, NULL, 's' },
	{ "section", required_argument, NULL, 'S' },
	{ "slurm-version", required_argument, NULL, 'V' },
	{ "merge", required_argument, NULL, 'm' },
	{ "suspend-time", required_argument, NULL, 'T' },
	{ "suspend-timeout", required_argument, NULL, 'U' },
	{ "resume-timeout", required_argument, NULL, 'R' },
	{ NULL, 0, NULL, 0 }
};

gb_err_t ctl_cmd_slurm_conf(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = "slurm-conf";
	struct sc_opts o = { NULL, false, 0, GB_SBINDIR, gb_slurm_built_version_number(),
			     -1, -1, -1, NULL };
	gb_error_t err;
	struct gb_buf gres = GB_BUF_INIT;
	const struct gb_conf *conf;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhlp:s:S:V:m:T:U:R:", sc_longopts, &first,
			       &rc)) != -1) {
		switch (c) {
		case CTL_OPT_DONE:
			return rc;
		case 'l':
			o.lab = true;
			break;
		case 'p':
			if ((rc = ctl_parse_long(cmd, "--lab-ports", optarg, 1024, 65000,
						 &o.ports)))
				return rc;
			o.lab = true;
			break;
		case 'S':
			if (strcmp(optarg, "power") && strcmp(optarg, "nodes") &&
			    strcmp(optarg, "gres"))
				return ctl_usage(cmd, "invalid section \"%s\" (power, nodes, gres)",
						 optarg);
			o.section = optarg;
			break;
		case 's':
			if (optarg[0] != '/')
				return ctl_usage(cmd, "--sbindir must be an absolute path (slurmctld runs the programs without PATH)");
			o.sbindir = optarg;
			break;
		case 'V':
			if (gb_slurm_version_parse(optarg, &o.slurm, &err))
				return ctl_usage(cmd, "--slurm-version: %s", err.text);
			break;
		case 'm':
			o.merge = optarg;
			break;
		case 'T':
			if ((rc = ctl_parse_long(cmd, "--suspend-time", optarg, 1, 31536000,
						 &o.suspend_time)))
				return rc;
			break;
		case 'U':
			if ((rc = ctl_parse_long(cmd, "--suspend-timeout", optarg, 1, 65533,
						 &o.suspend_timeout)))
				return rc;
			break;
		case 'R':
			if ((rc = ctl_parse_long(cmd, "--resume-timeout", optarg, 1, 65533,
						 &o.resume_timeout)))
				return rc;
			break;
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	/* launch + boot + slurmd registration; approvals wait half of it */
	if (o.resume_timeout < 0)
		o.resume_timeout = o.lab ? 60 : 1800;
	if (o.suspend_time < 0)
		o.suspend_time = o.lab ? 5 : 600;
	if (o.suspend_timeout < 0)
		o.suspend_timeout = o.lab ? 5 : 120;
	if (!(conf = ctl_conf(ctl, &rc)))
		return rc;
	if (o.ports) {
		long total = 0;

		for (size_t i = 0; i < conf->n_nodesets; i++)
			total += (long)nodeset_size(&conf->nodesets[i]);
		if (o.ports + total - 1 > 65535)
			return ctl_usage(cmd, "--lab-ports %ld: %ld nodes need ports up to %ld",
					 o.ports, total, o.ports + total - 1);
	}
	if (!(fp = open_memstream(&text, &len)))
		return ctl_fail(GB_E_NOMEM, "out of memory");
	fprintf(fp, "# generated by gpuburstctl slurm-conf%s from %s\n", o.lab ? " --lab" : "",
		conf->path);
	if (!o.section || strcmp(o.section, "power") == 0) {
		power_block(fp, &o);
		rc = merge_block(fp, conf, &o);
	}
	if (rc == GB_E_OK)
		rc = nodes_block(o.section && strcmp(o.section, "nodes") != 0 ? NULL : fp,
				 conf, &o, &gres);
	fclose(fp);
	if (rc == GB_E_OK && ctl->json) {
		ctl_json_result(json_pack("{s:s,s:s}", "slurm_conf", text,
					  "gres_conf", gb_buf_str(&gres)));
	} else if (rc == GB_E_OK && o.section && strcmp(o.section, "gres") == 0) {
		fputs(gb_buf_str(&gres), stdout);
	} else if (rc == GB_E_OK) {
		fputs(text, stdout);
		if (!o.section) {
			printf("# ---- gres.conf ----\n");
			if (!o.lab)
				printf("# or, on hosts with NVML: AutoDetect=nvml\n");
			fputs(gb_buf_str(&gres), stdout);
		}
	}
	free(text);
	gb_buf_free(&gres);
	return rc;
}
