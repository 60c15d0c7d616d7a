/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm_cb.c - the Capacity Block plan: reservations and drains to send
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_hostlist.h"
#include "gb_slurm_cb.h"

#define PREFIX_LEN (sizeof(GB_SLURM_CB_RESV_PREFIX) - 1)
#define RESV_NAME_MAX (PREFIX_LEN + GB_SLURM_CB_ID_MAX)

/* What one block keeps, found while planning it. */
struct block_plan {
	const struct gb_slurm_cb_block *b;
	bool keeps_resv;	/* not ended, with a live node Slurm knows */
};

static int cmp_block(const void *a, const void *b)
{
	return strcmp(((const struct block_plan *)a)->b->id, ((const struct block_plan *)b)->b->id);
}

static int cmp_resv(const void *a, const void *b)
{
	return strcmp((*(const struct gb_slurm_resv *const *)a)->name,
		      (*(const struct gb_slurm_resv *const *)b)->name);
}

const char *gb_slurm_cb_act_name(enum gb_slurm_cb_act act)
{
	switch (act) {
	case GB_SLURM_CB_ENSURE: return "ensure";
	case GB_SLURM_CB_POWER_DOWN: return "power_down_asap";
	case GB_SLURM_CB_DELETE: return "delete";
	}
	return "invalid";
}

/* [l] is sorted by name (gb_slurm_nodes_load). */
static const struct gb_slurm_node *node_find(const struct gb_slurm_node_list *l, const char *name)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, l->v[mid].name);

		if (c == 0)
			return &l->v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Already on its way down: POWER_DOWN_ASAP (POWER_DOWN + DRAIN) or further. */
static bool going_down(const struct gb_slurm_node *n)
{
	return n->powered_down || n->powering_down || (n->power_down_requested && n->drain);
}

static bool valid_id(const char *id)
{
	size_t len = id ? strlen(id) : 0;

	if (len == 0 || len >= GB_SLURM_CB_ID_MAX)
		return false;
	for (const char *p = id; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	}
	return true;
}

/* The live nodes of [b] that Slurm knows: sorted, unique. */
static gb_err_t known_nodes(const struct gb_slurm_cb_block *b,
			    const struct gb_slurm_node_list *l, struct gb_strv *out,
			    gb_error_t *err)
{
	for (size_t i = 0; i < b->n_nodes; i++) {
		const char *name = b->nodes[i];

		if (!name || !*name || (l && !node_find(l, name)))
			continue;
		if (gb_strv_add(out, name))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	gb_strv_sort_unique(out);
	return GB_E_OK;
}

static const struct gb_slurm_resv *resv_find(const struct gb_slurm_cb_in *in, const char *name)
{
	for (size_t i = 0; i < in->n_resvs; i++) {
		if (in->resvs[i].name && strcmp(in->resvs[i].name, name) == 0)
			return &in->resvs[i];
	}
	return NULL;
}

/*
 * Whether Slurm's [have] is the window [start, end) on [nodes], as
 * gb_slurm_resv_ensure() would leave it: the same node set and end, and
 * a start not yet reached that is the one it would send (a reached one
 * cannot move).  Whole seconds, as Slurm keeps them.
 */
static bool resv_same(const struct gb_slurm_resv *have, const struct gb_strv *nodes,
		      double start, double end, double now)
{
	long long hs = (long long)have->start, ws = (long long)start, n = (long long)now;
	gb_hostlist_t *hl = NULL;
	gb_error_t e;
	bool same;

	if ((long long)have->end != (long long)end)
		return false;
	if (hs > n && hs != (ws > n ? ws : n))
		return false;
	if (!have->nodes || gb_hostlist_parse(have->nodes, &hl, &e))
		return false;
	same = gb_hostlist_count(hl) == nodes->n;
	for (size_t i = 0; same && i < nodes->n; i++)
		same = gb_hostlist_match(hl, nodes->v[i]);
	gb_hostlist_destroy(hl);
	return same;
}

/* RET a new zeroed action at the end of [p], or NULL when out of memory. */
static struct gb_slurm_cb_action *add(struct gb_slurm_cb_plan *p, enum gb_slurm_cb_act act,
				      const char *block)
{
	struct gb_slurm_cb_action *v = realloc(p->v, (p->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	p->v = v;
	memset(&v[p->n], 0, sizeof(*v));
	v[p->n].act = act;
	v[p->n].block = block;
	return &v[p->n++];
}

/* "a,b,c" (Slurm takes a plain list as a hostlist expression). */
static char *join(const struct gb_strv *v)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < v->n; i++)
		gb_buf_printf(&b, "%s%s", i ? "," : "", v->v[i]);
	return gb_buf_failed(&b) ? (gb_buf_free(&b), NULL) : gb_buf_steal(&b);
}

static gb_err_t copy_nodes(const struct gb_strv *from, struct gb_slurm_cb_action *a)
{
	for (size_t i = 0; i < from->n; i++) {
		if (gb_strv_add(&a->nodes, from->v[i]))
			return GB_E_NOMEM;
	}
	return GB_E_OK;
}

static gb_err_t add_ensure(struct gb_slurm_cb_plan *p, const struct gb_slurm_cb_block *b,
			   const char *name, const struct gb_strv *nodes, double start,
			   const char *reason)
{
	struct gb_slurm_cb_action *a = add(p, GB_SLURM_CB_ENSURE, b->id);

	if (!a || copy_nodes(nodes, a) || !(a->resv.name = strdup(name)) ||
	    !(a->resv.nodes = join(nodes)) || !(a->resv.comment = strdup(reason)))
		return GB_E_NOMEM;
	a->resv.start = start;
	a->resv.end = b->end;
	snprintf(a->reason, sizeof(a->reason), "%s", reason);
	return GB_E_OK;
}

static gb_err_t add_power_down(struct gb_slurm_cb_plan *p, const struct gb_slurm_cb_in *in,
			       const struct gb_slurm_cb_block *b, const struct gb_strv *nodes,
			       const char *reason)
{
	struct gb_slurm_cb_action *a = NULL;

	for (size_t i = 0; i < nodes->n; i++) {
		if (in->nodes && going_down(node_find(in->nodes, nodes->v[i])))
			continue;
		if (!a && !(a = add(p, GB_SLURM_CB_POWER_DOWN, b->id)))
			return GB_E_NOMEM;
		if (gb_strv_add(&a->nodes, nodes->v[i]))
			return GB_E_NOMEM;
	}
	if (a)
		snprintf(a->reason, sizeof(a->reason), "%s", reason);
	return GB_E_OK;
}

/* ENSURE and POWER_DOWN of one block. */
static gb_err_t plan_block(const struct gb_slurm_cb_in *in, struct block_plan *bp,
			   struct gb_slurm_cb_plan *p, gb_error_t *err)
{
	const struct gb_slurm_cb_block *b = bp->b;
	const struct gb_slurm_resv *have;
	double start = b->end - in->margin;
	char name[RESV_NAME_MAX], reason[GB_REASON_MAX];
	struct gb_strv nodes = { 0 };
	gb_err_t rc;

	if ((rc = known_nodes(b, in->nodes, &nodes, err)) || nodes.n == 0)
		goto out;
	snprintf(name, sizeof(name), "%s%s", GB_SLURM_CB_RESV_PREFIX, b->id);
	gb_reason_capacity_block(reason, sizeof(reason), b->id, b->end);
	/* an ended block needs no window (Slurm would refuse one in the past) */
	bp->keeps_resv = in->now < b->end;
	have = resv_find(in, name);
	if (bp->keeps_resv && (!have || !resv_same(have, &nodes, start, b->end, in->now)) &&
	    (rc = add_ensure(p, b, name, &nodes, start, reason)))
		goto nomem;
	if (in->now >= start && (rc = add_power_down(p, in, b, &nodes, reason)))
		goto nomem;
	goto out;
nomem:
	rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	gb_strv_free(&nodes);
	return rc;
}

/* DELETE every gpuburst reservation whose block keeps none, in name order. */
static gb_err_t plan_deletes(const struct gb_slurm_cb_in *in, const struct block_plan *bps,
			     struct gb_slurm_cb_plan *p, gb_error_t *err)
{
	const struct gb_slurm_resv **del = calloc(in->n_resvs ? in->n_resvs : 1, sizeof(*del));
	size_t n = 0;
	gb_err_t rc = GB_E_OK;

	if (!del)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < in->n_resvs; i++) {
		const struct gb_slurm_resv *r = &in->resvs[i];
		struct gb_slurm_cb_block key = { 0 };
		const struct block_plan kp = { .b = &key }, *bp = NULL;

		if (!r->name || !gb_str_has_prefix(r->name, GB_SLURM_CB_RESV_PREFIX))
			continue;
		key.id = r->name + PREFIX_LEN;
		if (in->n_blocks)
			bp = bsearch(&kp, bps, in->n_blocks, sizeof(*bps), cmp_block);
		if (!bp || !bp->keeps_resv)
			del[n++] = r;
	}
	qsort(del, n, sizeof(*del), cmp_resv);
	for (size_t i = 0; i < n; i++) {
		struct gb_slurm_cb_action *a = add(p, GB_SLURM_CB_DELETE,
						   del[i]->name + PREFIX_LEN);

		if (!a || !(a->resv.name = strdup(del[i]->name))) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
	}
	free(del);
	return rc;
}

static gb_err_t check_in(const struct gb_slurm_cb_in *in, gb_error_t *err)
{
	if (!(in->margin >= 0))
		return gb_errorf(err, GB_E_INVALID, "negative capacity block margin %g", in->margin);
	for (size_t i = 0; i < in->n_blocks; i++) {
		if (!valid_id(in->blocks[i].id))
			return gb_errorf(err, GB_E_INVALID,
					 "bad capacity block id \"%s\" (want 1-%d of [a-z0-9-])",
					 in->blocks[i].id ? in->blocks[i].id : "",
					 GB_SLURM_CB_ID_MAX - 1);
	}
	return GB_E_OK;
}

gb_err_t gb_slurm_cb_plan(const struct gb_slurm_cb_in *in, struct gb_slurm_cb_plan **out,
			  gb_error_t *err)
{
	struct gb_slurm_cb_plan *p = NULL;
	struct block_plan *bps = NULL;
	gb_err_t rc;

	*out = NULL;
	if ((rc = check_in(in, err)))
		return rc;
	if (!(p = calloc(1, sizeof(*p))) ||
	    !(bps = calloc(in->n_blocks ? in->n_blocks : 1, sizeof(*bps)))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < in->n_blocks; i++)
		bps[i].b = &in->blocks[i];
	qsort(bps, in->n_blocks, sizeof(*bps), cmp_block);
	for (size_t i = 1; i < in->n_blocks; i++) {
		if (strcmp(bps[i - 1].b->id, bps[i].b->id) == 0) {
			rc = gb_errorf(err, GB_E_INVALID, "capacity block %s given twice",
				       bps[i].b->id);
			goto out;
		}
	}
	for (size_t i = 0; i < in->n_blocks && rc == GB_E_OK; i++)
		rc = plan_block(in, &bps[i], p, err);
	if (rc == GB_E_OK)
		rc = plan_deletes(in, bps, p, err);
	if (rc == GB_E_OK) {
		*out = p;
		p = NULL;
	}
out:
	gb_slurm_cb_plan_free(p);
	free(bps);
	return rc;
}

void gb_slurm_cb_plan_free(struct gb_slurm_cb_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free((char *)p->v[i].resv.name);
		free((char *)p->v[i].resv.nodes);
		free((char *)p->v[i].resv.comment);
		gb_strv_free(&p->v[i].nodes);
	}
	free(p->v);
	free(p);
}
