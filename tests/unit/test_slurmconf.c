/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_slurmconf.c - libslurmif's slurm.conf generator (gb_slurmconf_write_*):
 * the lines each Slurm release accepts, RealMemory's headroom, the
 * Feature the plugin constrains on, the Gres and gres.conf lines, lab
 * ports, the merge into a site's own values
 *
 * Pure: a config from a string, a Slurm version number, text out.  The
 * same text through gpuburstctl is tests/integration/ctl-*.sh's.
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

#include "gb_conf.h"
#include "gb_slurm_release.h"
#include "gb_slurmconf.h"
#include "gb_str.h"

static const char conf_text[] =
	"cluster_name: t\n"
	"regions:\n"
	"  - {name: ap-south-1, ami: ami-1, azs: [{name: ap-south-1a, subnets: [subnet-1]}]}\n"
	"fallback_groups:\n"
	"  g: {consumer_regions: [ap-south-1], fallback_regions: [ap-south-1]}\n"
	"nodesets:\n"
	"  - {name: g5, nodes: \"g5-[1-4]\", instance_type: g5.xlarge, home_region: ap-south-1, partition: fast}\n"
	"  - {name: big, nodes: \"big-[1-2]\", instance_type: g5.12xlarge, home_region: ap-south-1, partition: fast}\n"
	"  - {name: g6, nodes: \"g6-[1-3]\", instance_type: g6.xlarge, home_region: ap-south-1}\n";

static int setup(void **state)
{
	struct gb_conf *conf = NULL;
	gb_error_t e = { 0 };

	unsetenv("GPUBURST_ENV");
	if (gb_conf_load_string("test.yaml", conf_text, strlen(conf_text), &conf, NULL, &e))
		fail_msg("config: %s", e.text);
	*state = conf;
	return 0;
}

static int teardown(void **state)
{
	gb_conf_destroy(*state);
	return 0;
}

static struct gb_slurmconf_gen gen(unsigned long slurm)
{
	return (struct gb_slurmconf_gen){ slurm, "/opt/gb/sbin", false, 0, 600, 120, 1800 };
}

static void assert_has(const struct gb_buf *b, const char *s)
{
	if (!strstr(gb_buf_str(b), s))
		fail_msg("missing \"%s\" in:\n%s", s, gb_buf_str(b));
}

static void assert_lacks(const struct gb_buf *b, const char *s)
{
	if (strstr(gb_buf_str(b), s))
		fail_msg("unexpected \"%s\" in:\n%s", s, gb_buf_str(b));
}

/* The power-save block names the release and this installation's programs. */
static void test_power(void **state)
{
	struct gb_slurmconf_gen g = gen(GB_SLURM_VERSION(24, 11, 5));
	struct gb_buf b = GB_BUF_INIT;

	(void)state;
	gb_slurmconf_write_power(&b, &g);
	assert_has(&b, "# ---- slurm.conf: power saving (for Slurm 24.11) ----\n");
	assert_has(&b, "\nResumeProgram=/opt/gb/sbin/gpuburst-resume\n");
	assert_has(&b, "\nSuspendProgram=/opt/gb/sbin/gpuburst-suspend\n");
	assert_has(&b, "\nResumeFailProgram=/opt/gb/sbin/gpuburst-resume-fail\n");
	assert_has(&b, "\nResumeRate=0\nSuspendRate=0\n");
	assert_lacks(&b, "SuspendTime=");	/* never global */
	gb_buf_free(&b);
}

/*
 * CommunicationParameters=NoAddrCache is defunct from 23.11 and PrivateData=cloud
 * unneeded from 23.02: asked for on 22.05, not on 23.11.
 */
static void test_version_gating(void **state)
{
	const struct gb_conf *conf = *state;
	struct gb_slurmconf_gen old = gen(GB_SLURM_VERSION(22, 5, 8));
	struct gb_slurmconf_gen now = gen(GB_SLURM_VERSION(23, 11, 0));
	struct gb_buf b = GB_BUF_INIT;

	gb_slurmconf_write_merge(&b, conf, &old, NULL);
	assert_has(&b, "# CommunicationParameters: add NoAddrCache (");
	assert_has(&b, "# PrivateData: add cloud (");
	assert_lacks(&b, "requeue_on_resume_failure");
	gb_buf_reset(&b);
	gb_slurmconf_write_merge(&b, conf, &now, NULL);
	assert_lacks(&b, "add NoAddrCache");
	assert_lacks(&b, "PrivateData");
	assert_has(&b, "NoAddrCache is defunct from Slurm 23.11");
	gb_buf_free(&b);
}

/* A site's own lines: kept, added to, and rid of what the release dropped. */
static void test_merge_site(void **state)
{
	const struct gb_conf *conf = *state;
	struct gb_slurmconf_gen old = gen(GB_SLURM_VERSION(22, 5, 8));
	struct gb_slurmconf_gen now = gen(GB_SLURM_VERSION(23, 11, 0));
	struct gb_slurmconf_partition parts[] = { { (char *)"cpu", -1 }, { (char *)"fast", -1 } };
	struct gb_slurmconf site = { 0 };
	struct gb_buf b = GB_BUF_INIT;

	site.path = (char *)"/etc/slurm/slurm.conf";
	site.slurmctld_parameters = (char *)"cloud_reg_addrs,enable_configless";
	site.communication_parameters = (char *)"NoAddrCache";
	site.tree_width = (char *)"70000";
	site.suspend_time = 300;
	site.partitions = parts;
	site.n_partitions = GB_ARRAY_LEN(parts);
	gb_slurmconf_write_merge(&b, conf, &old, &site);
	assert_has(&b, "# ---- slurm.conf: merged with /etc/slurm/slurm.conf");
	assert_has(&b, "\nSlurmctldParameters=cloud_reg_addrs,enable_configless,"
		   "idle_on_node_suspend,power_save_interval=5,power_save_min_interval=0\n");
	assert_has(&b, "# CommunicationParameters: yours (NoAddrCache) has what gpuburst needs");
	assert_has(&b, "# TreeWidth: yours (70000) has what gpuburst needs");
	assert_has(&b, "\nGresTypes=gpu\n");
	/* the site's partition excluded from its global SuspendTime, not ours */
	assert_has(&b, "\nSuspendExcParts=cpu\n");
	gb_buf_reset(&b);
	gb_slurmconf_write_merge(&b, conf, &now, &site);
	assert_has(&b, "\nSlurmctldParameters=enable_configless,idle_on_node_suspend,");
	assert_has(&b, "#   (remove your CommunicationParameters line: nothing is left of it)\n");
	assert_lacks(&b, "CommunicationParameters=");
	gb_buf_free(&b);
}

/* CPUs, RealMemory at 95 % rounded down, Gres, Feature=<type>, State=CLOUD. */
static void test_nodes(void **state)
{
	const struct gb_conf *conf = *state;
	struct gb_slurmconf_gen g = gen(GB_SLURM_VERSION(24, 11, 0));
	const struct gb_instance_type *it = gb_catalog_find("g5.xlarge");
	struct gb_buf b = GB_BUF_INIT, gres = GB_BUF_INIT;
	gb_error_t e = { 0 };

	assert_non_null(it);
	assert_int_equal(it->memory_mib, 16384);
	assert_int_equal(gb_slurmconf_write_nodes(&b, &gres, conf, &g, &e), GB_E_OK);
	/* 16384 * 0.95 = 15564.8: slurmd must not report less than configured */
	assert_has(&b, "\nNodeName=g5-[1-4] CPUs=4 RealMemory=15564 Gres=gpu:a10g:1 "
		   "Feature=a10g,g5.xlarge State=CLOUD\n");
	assert_has(&b, "\nNodeName=big-[1-2] CPUs=48 RealMemory=186777 Gres=gpu:a10g:4 "
		   "Feature=a10g,g5.12xlarge State=CLOUD\n");
	assert_has(&b, "\nNodeSet=gb_g5 Nodes=g5-[1-4]\n");
	assert_has(&b, "\nPartitionName=fast Nodes=gb_g5,gb_big MaxTime=INFINITE State=UP "
		   "SuspendTime=600 SuspendTimeout=120 ResumeTimeout=1800\n");
	assert_has(&b, "\nPartitionName=gpuburst Nodes=gb_g6 ");
	assert_lacks(&b, "Port=");
	assert_string_equal(gb_buf_str(&gres),
			    "NodeName=g5-[1-4] Name=gpu Type=a10g File=/dev/nvidia0\n"
			    "NodeName=big-[1-2] Name=gpu Type=a10g File=/dev/nvidia[0-3]\n"
			    "NodeName=g6-[1-3] Name=gpu Type=l4 File=/dev/nvidia0\n");
	assert_int_equal(gb_slurmconf_node_count(conf), 9);
	gb_buf_free(&b);
	gb_buf_free(&gres);
}

/* The lab: fake GPUs on character devices, small nodes, one port each. */
static void test_nodes_lab(void **state)
{
	const struct gb_conf *conf = *state;
	struct gb_slurmconf_gen g = gen(GB_SLURM_VERSION(24, 11, 0));
	struct gb_buf b = GB_BUF_INIT, gres = GB_BUF_INIT;
	gb_error_t e = { 0 };

	g.lab = true;
	g.ports = 7000;
	assert_int_equal(gb_slurmconf_write_nodes(&b, &gres, conf, &g, &e), GB_E_OK);
	assert_has(&b, "\nNodeName=g5-[1-4] Port=[7000-7003] CPUs=1 RealMemory=500 "
		   "Gres=gpu:a10g:1 Feature=a10g,g5.xlarge State=CLOUD\n");
	assert_has(&b, "\nNodeName=big-[1-2] Port=[7004-7005] CPUs=1 RealMemory=500 ");
	assert_has(&b, "\nNodeName=g6-[1-3] Port=[7006-7008] ");
	assert_has(&gres, "NodeName=big-[1-2] Name=gpu Type=a10g "
		   "File=/dev/null,/dev/zero,/dev/full,/dev/random\n");
	gb_buf_free(&b);
	gb_buf_free(&gres);
}

static const char train_text[] =
	"cluster_name: t\n"
	"regions:\n"
	"  - {name: us-east-1, ami: ami-1, azs: [{name: us-east-1a, subnets: [subnet-1]}]}\n"
	"fallback_groups:\n"
	"  g: {consumer_regions: [us-east-1], fallback_regions: [us-east-1]}\n"
	"nodesets:\n"
	"  - {name: h100, nodes: \"h100-[1-4]\", instance_type: p5.48xlarge, efa: true,\n"
	"     placement: cluster, home_region: us-east-1}\n"
	"  - {name: l4, nodes: \"l4-[1-2]\", instance_types: [g6.12xlarge, g6.xlarge, gr6.8xlarge],\n"
	"     home_region: us-east-1}\n"
	"policy: {allowed_families: [p5, g6, gr6]}\n";

/*
 * A p5.48xlarge EFA nodeset: 8 x h100, 192 CPUs, 2 TiB less the headroom,
 * the features a job constrains on (model, efa, type).  A nodeset of
 * several types: the lowest GPU count, CPUs and memory, every type a
 * feature in preference order.
 */
static void test_nodes_types(void **state)
{
	struct gb_slurmconf_gen g = gen(GB_SLURM_VERSION(24, 11, 0));
	struct gb_buf b = GB_BUF_INIT, gres = GB_BUF_INIT;
	struct gb_conf *conf = NULL;
	gb_error_t e = { 0 };

	(void)state;
	if (gb_conf_load_string("train.yaml", train_text, strlen(train_text), &conf, NULL, &e))
		fail_msg("config: %s", e.text);
	assert_int_equal(conf->nodesets[0].locality, GB_LOCALITY_AZ);
	assert_int_equal(gb_slurmconf_write_nodes(&b, &gres, conf, &g, &e), GB_E_OK);
	/* 2048 GiB = 2097152 MiB; * 0.95 = 1992294.4 */
	assert_has(&b, "\nNodeName=h100-[1-4] CPUs=192 RealMemory=1992294 Gres=gpu:h100:8 "
		   "Feature=h100,efa,p5.48xlarge State=CLOUD\n");
	/* lowest: 1 GPU (g6.xlarge, gr6.8xlarge), 4 CPUs and 16 GiB (g6.xlarge) */
	assert_has(&b, "\nNodeName=l4-[1-2] CPUs=4 RealMemory=15564 Gres=gpu:l4:1 "
		   "Feature=l4,g6.12xlarge,g6.xlarge,gr6.8xlarge State=CLOUD\n");
	assert_has(&b, "# nodeset l4: 3 types (lowest of them: 4 vCPU, 16384 MiB, 1 x l4)");
	assert_has(&gres, "NodeName=h100-[1-4] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n");
	assert_has(&gres, "NodeName=l4-[1-2] Name=gpu Type=l4 File=/dev/nvidia0\n");
	gb_buf_free(&b);
	gb_buf_free(&gres);
	gb_conf_destroy(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_version_gating),
		cmocka_unit_test(test_merge_site),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_nodes_lab),
		cmocka_unit_test(test_nodes_types),
	};

	return cmocka_run_group_tests_name("slurmconf", tests, setup, teardown);
}
