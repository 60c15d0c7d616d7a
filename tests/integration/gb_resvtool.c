/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_resvtool.c - libslurmif's reservation calls and the Capacity Block
 * plan against a real slurmctld (SLURM_CONF), for slurm-cb-lab.sh
 *
 *   gb_resvtool ensure NAME NODES START END [COMMENT]
 *       gb_slurm_resv_ensure; prints "created", "updated" or "unchanged"
 *   gb_resvtool delete NAME
 *   gb_resvtool list [PREFIX]
 *       one "NAME NODES START END COMMENT" line per reservation
 *   gb_resvtool asap REASON NODE...
 *       gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_ASAP)
 *   gb_resvtool plan MARGIN ID END NODES [ID END NODES]...
 *       gb_slurm_cb_plan over Slurm's gpuburst_cb_* reservations and
 *       nodes, each action printed ("ensure NAME NODES START END",
 *       "power_down_asap NODES", "delete NAME") and done
 *
 * Times are epoch seconds, or "+N" / "-N": N seconds from now.  NODES is
 * a hostlist expression ("" for none).  Exit status: the gb_err_t.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_slurm.h"
#include "gb_slurm_cb.h"
#include "gb_util.h"

static double now;

static double when(const char *s)
{
	double v;

	if (gb_parse_double(s, &v)) {
		fprintf(stderr, "gb_resvtool: bad time %s\n", s);
		exit(GB_E_USAGE);
	}
	return *s == '+' || *s == '-' ? now + v : v;
}

static int die(gb_err_t rc, const gb_error_t *e)
{
	fprintf(stderr, "gb_resvtool: %s: %s\n", gb_err_name(rc), e->text);
	return rc;
}

static int print_resv(const struct gb_slurm_resv *r, void *arg)
{
	(void)arg;
	printf("%s %s %.0f %.0f %s\n", r->name, r->nodes, r->start, r->end,
	       r->comment ? r->comment : "-");
	return 0;
}

/* Collect Slurm's gpuburst reservations (the strings die with the call). */
struct resvs {
	struct gb_slurm_resv v[64];
	size_t n;
};

static int keep_resv(const struct gb_slurm_resv *r, void *arg)
{
	struct resvs *rs = arg;

	if (rs->n == GB_ARRAY_LEN(rs->v))
		return 1;
	rs->v[rs->n] = *r;
	rs->v[rs->n].name = strdup(r->name);
	rs->v[rs->n].nodes = strdup(r->nodes);
	rs->v[rs->n].comment = r->comment ? strdup(r->comment) : NULL;
	rs->n++;
	return 0;
}

static gb_err_t run(const struct gb_slurm_cb_action *a, gb_error_t *e)
{
	switch (a->act) {
	case GB_SLURM_CB_ENSURE:
		printf("ensure %s %s %.0f %.0f\n", a->resv.name, a->resv.nodes, a->resv.start,
		       a->resv.end);
		return gb_slurm_resv_ensure(&a->resv, NULL, e);
	case GB_SLURM_CB_POWER_DOWN:
		printf("power_down_asap");
		for (size_t i = 0; i < a->nodes.n; i++)
			printf("%s%s", i ? "," : " ", a->nodes.v[i]);
		printf("\n");
		return gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_ASAP, a->nodes.v, a->nodes.n,
					     a->reason, NULL, e);
	case GB_SLURM_CB_DELETE:
		printf("delete %s\n", a->resv.name);
		return gb_slurm_resv_delete(a->resv.name, e);
	}
	return GB_E_INTERNAL;
}

static gb_err_t plan(int argc, char **argv, gb_error_t *e)
{
	struct gb_slurm_cb_block b[8];
	struct gb_strv nodes[8] = { { 0 } };
	struct gb_slurm_cb_in in = { b, 0, NULL, 0, NULL, 0, now };
	struct gb_slurm_node_list *sn = NULL;
	struct gb_slurm_cb_plan *p = NULL;
	struct resvs rs = { .n = 0 };
	gb_err_t rc;

	if (gb_parse_double(argv[2], &in.margin)) {
		fprintf(stderr, "gb_resvtool: bad margin %s\n", argv[2]);
		return GB_E_USAGE;
	}
	for (int i = 3; i + 2 < argc && in.n_blocks < GB_ARRAY_LEN(b); i += 3) {
		struct gb_strv *nv = &nodes[in.n_blocks];

		if (*argv[i + 2] && (rc = gb_slurm_hostlist_expand(argv[i + 2], 1000, nv, e)))
			goto out;
		b[in.n_blocks++] = (struct gb_slurm_cb_block){ argv[i], when(argv[i + 1]),
							       nv->v, nv->n };
	}
	if ((rc = gb_slurm_resv_list(GB_SLURM_CB_RESV_PREFIX, keep_resv, &rs, e)) ||
	    (rc = gb_slurm_nodes_load(&sn, e)))
		goto out;
	in.resvs = rs.v;
	in.n_resvs = rs.n;
	in.nodes = sn;
	if ((rc = gb_slurm_cb_plan(&in, &p, e)) == GB_E_OK) {
		for (size_t i = 0; i < p->n && rc == GB_E_OK; i++)
			rc = run(&p->v[i], e);
		if (p->n == 0)
			printf("nothing to do\n");
	}
out:
	for (size_t i = 0; i < rs.n; i++) {
		free((char *)rs.v[i].name);
		free((char *)rs.v[i].nodes);
		free((char *)rs.v[i].comment);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(nodes); i++)
		gb_strv_free(&nodes[i]);
	gb_slurm_cb_plan_free(p);
	gb_slurm_node_list_free(sn);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const did[] = { "unchanged", "created", "updated" };
	enum gb_slurm_resv_did d;
	gb_error_t e;
	gb_err_t rc;

	now = gb_time_now();
	if (argc < 2) {
		fprintf(stderr, "usage: gb_resvtool ensure|delete|list|asap|plan ...\n");
		return GB_E_USAGE;
	}
	if ((rc = gb_slurm_init(&e)))
		return die(rc, &e);
	if (strcmp(argv[1], "ensure") == 0 && argc >= 6) {
		struct gb_slurm_resv r = { argv[2], argv[3], when(argv[4]), when(argv[5]),
					   argc > 6 ? argv[6] : NULL };

		if ((rc = gb_slurm_resv_ensure(&r, &d, &e)))
			return die(rc, &e);
		printf("%s\n", did[d]);
	} else if (strcmp(argv[1], "delete") == 0 && argc == 3) {
		if ((rc = gb_slurm_resv_delete(argv[2], &e)))
			return die(rc, &e);
	} else if (strcmp(argv[1], "list") == 0 && argc <= 3) {
		if ((rc = gb_slurm_resv_list(argc == 3 ? argv[2] : NULL, print_resv, NULL, &e)))
			return die(rc, &e);
	} else if (strcmp(argv[1], "asap") == 0 && argc >= 4) {
		if ((rc = gb_slurm_nodes_update(GB_SLURM_POWER_DOWN_ASAP, argv + 3,
						(size_t)(argc - 3), argv[2], NULL, &e)))
			return die(rc, &e);
	} else if (strcmp(argv[1], "plan") == 0 && argc >= 3) {
		if ((rc = plan(argc, argv, &e)))
			return die(rc, &e);
	} else {
		fprintf(stderr, "gb_resvtool: bad command line\n");
		return GB_E_USAGE;
	}
	return GB_E_OK;
}
