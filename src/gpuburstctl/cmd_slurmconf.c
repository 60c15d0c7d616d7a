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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_hostlist.h"
#include "gb_slurm.h"
#include "gb_slurm_release.h"

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
};

static void power_block(FILE *fp, const struct sc_opts *o)
{
	unsigned long v = o->slurm;
	char ver[32];

	gb_slurm_version_str(v, ver, sizeof(ver));
	*strrchr(ver, '.') = '\0';	/* the release: 24.11 */
	fprintf(fp, "# ---- slurm.conf: power saving (for Slurm %s) ----\n", ver);
	fprintf(fp, "ResumeProgram=%s/gpuburst-resume\n", o->sbindir);
	fprintf(fp, "SuspendProgram=%s/gpuburst-suspend\n", o->sbindir);
	fprintf(fp, "ResumeFailProgram=%s/gpuburst-resume-fail\n", o->sbindir);
	fprintf(fp, "# launch + boot + slurmd registration; approvals wait half of it\n");
	fprintf(fp, "ResumeTimeout=%d\n", o->lab ? 60 : 1800);
	fprintf(fp, "SuspendTime=%d\n", o->lab ? 5 : 600);
	fprintf(fp, "SuspendTimeout=%d\n", o->lab ? 5 : 120);
	fprintf(fp, "# gpuburst batches launches itself\nResumeRate=0\nSuspendRate=0\n");
	fprintf(fp, "# cloud nodes cannot forward messages for each other\nTreeWidth=65533\n");
	fprintf(fp, "SlurmctldParameters=idle_on_node_suspend,power_save_interval=%d,power_save_min_interval=0\n",
		o->lab ? 1 : 5);
	if (!gb_slurm_has(v, GB_SLURM_NO_ADDR_CACHE_DEFUNCT))
		fprintf(fp, "CommunicationParameters=NoAddrCache\n");
	if (!gb_slurm_has(v, GB_SLURM_CLOUD_VISIBLE))
		fprintf(fp, "# powered-down cloud nodes are invisible without it\nPrivateData=cloud\n");
	if (gb_slurm_has(v, GB_SLURM_REQUEUE_ON_RESUME_FAILURE))
		fprintf(fp, "# a job whose cloud nodes could not be had goes back to the queue,\n"
			"# also one submitted with --no-requeue\n"
			"SchedulerParameters=requeue_on_resume_failure\n");
	fprintf(fp, "ReturnToService=2\nGresTypes=gpu\n");
	fprintf(fp, "# with the job_submit/gpuburst plugin installed:\n#JobSubmitPlugins=gpuburst\n");
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
		fprintf(fp, " MaxTime=INFINITE State=UP\n");
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
	{ NULL, 0, NULL, 0 }
};

gb_err_t ctl_cmd_slurm_conf(struct ctl *ctl, int argc, char **argv)
{
	const char *cmd = "slurm-conf";
	struct sc_opts o = { NULL, false, 0, GB_SBINDIR, gb_slurm_built_version_number() };
	gb_error_t err;
	struct gb_buf gres = GB_BUF_INIT;
	const struct gb_conf *conf;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	bool first = true;
	gb_err_t rc = GB_E_OK;
	int c;

	while ((c = ctl_getopt(ctl, cmd, argc, argv, ":jhlp:s:S:V:", sc_longopts, &first,
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
		default:
			return ctl_unimplemented(cmd, c);
		}
	}
	if (optind < argc)
		return ctl_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
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
	if (!o.section || strcmp(o.section, "power") == 0)
		power_block(fp, &o);
	rc = nodes_block(o.section && strcmp(o.section, "nodes") != 0 ? NULL : fp,
			 conf, &o, &gres);
	fclose(fp);
	if (rc == GB_E_OK && ctl->json) {
		ctl_json_print(json_pack("{s:s,s:s}", "slurm_conf", text,
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
