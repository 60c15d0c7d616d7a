/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_term.c - terminate by node or by id; list the cloud's instances, groups
 * and spot prices
 *
 * Outside a resume there is no worker pool: these run in the caller's
 * thread with one EC2 client per region, created for the call.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

struct victim {
	char *request_id, *region, *instance_id, *az, *type, *node;
	char *capacity;		/* the rung it came from: its memory row */
};

struct victims {
	struct victim *v;
	size_t n, cap;
	bool nomem;
};

static void victims_free(struct victims *vs)
{
	for (size_t i = 0; i < vs->n; i++) {
		free(vs->v[i].request_id);
		free(vs->v[i].region);
		free(vs->v[i].instance_id);
		free(vs->v[i].az);
		free(vs->v[i].type);
		free(vs->v[i].capacity);
		free(vs->v[i].node);
	}
	free(vs->v);
	memset(vs, 0, sizeof(*vs));
}

static int victim_row(const struct gb_instance *in, void *arg)
{
	struct victims *vs = arg;
	struct victim *v;

	for (size_t i = 0; i < vs->n; i++)
		if (strcmp(vs->v[i].instance_id, in->instance_id) == 0 &&
		    strcmp(vs->v[i].region, in->region) == 0)
			return 0;
	if (vs->n == vs->cap) {
		size_t cap = vs->cap ? 2 * vs->cap : 16;
		struct victim *nv = realloc(vs->v, cap * sizeof(*nv));

		if (!nv) {
			vs->nomem = true;
			return 1;
		}
		vs->v = nv;
		vs->cap = cap;
	}
	v = &vs->v[vs->n++];
	v->request_id = gb_strdup0(in->request_id);
	v->region = gb_strdup0(in->region);
	v->instance_id = gb_strdup0(in->instance_id);
	v->az = gb_strdup0(in->az);
	v->type = gb_strdup0(in->instance_type);
	v->capacity = gb_strdup0(in->capacity);
	v->node = gb_strdup0(in->node);
	vs->nomem |= !v->region || !v->instance_id;
	return vs->nomem;
}

static void close_record(gb_orch_t *o, gb_state_t *st, const struct victim *v,
			 enum gb_instance_state state, const char *reason,
			 unsigned flags)
{
	struct gb_instance up = { 0 };
	gb_error_t e;

	up.region = v->region;
	up.instance_id = v->instance_id;
	up.state = state;
	up.terminated_at = orch_wall(o);
	up.reason = reason;
	if (gb_state_instance_update(st, &up, &e) && e.code != GB_E_NOTFOUND)
		gb_log_warn("terminate_record_failed instance=%s error=%s",
			    v->instance_id, e.text);
	if ((flags & GB_ORCH_TERM_FAILURE) && v->type &&
	    gb_state_capacity_record(st, v->region, v->az, v->type, v->capacity, 0, 0, false,
				     true, orch_wall(o),
				     o->conf->policy.capacity_half_life, &e))
		gb_log_warn("capacity_record_failed instance=%s error=%s",
			    v->instance_id, e.text);
}

void orch_mark_terminating(gb_state_t *st, const char *region,
			   const char *const *ids, size_t n, const char *reason,
			   bool undo)
{
	gb_error_t e;
	gb_err_t rc;

	if (n == 0)
		return;
	rc = gb_state_tx_begin(st, &e);
	for (size_t i = 0; i < n && !rc; i++) {
		struct gb_instance up = { 0 };

		up.region = region;
		up.instance_id = ids[i];
		up.state = undo ? GB_INST_RUNNING : GB_INST_TERMINATING;
		up.reason = undo ? NULL : reason;
		rc = gb_state_instance_update(st, &up, &e);
		if (rc == GB_E_NOTFOUND)
			rc = GB_E_OK;	/* an instance the state file never had */
	}
	if (!rc)
		rc = gb_state_tx_commit(st, &e);
	else
		gb_state_tx_rollback(st);
	if (rc)
		gb_log_warn("terminating_mark_failed region=%s n=%zu error=%s", region,
			    n, GB_LOG_Q(e.text));
}

static bool not_found(const struct gb_ec2_error *ae)
{
	return gb_str_has_prefix(ae->code, "InvalidInstanceID");
}

/* Terminate the victims of [region]; one by one when a batch names a lost one. */
static gb_err_t region_terminate(gb_orch_t *o, gb_state_t *st,
				 struct victims *vs, const char *region,
				 const char *reason, unsigned flags, int *done,
				 gb_error_t *err)
{
	const char **ids = calloc(vs->n + 1, sizeof(*ids));
	struct victim **map = calloc(vs->n + 1, sizeof(*map));
	struct gb_ec2_state_change_list *ch = NULL;
	struct gb_ec2_error ae = { 0 };
	gb_ec2_t *c = NULL;
	size_t k = 0;
	gb_err_t rc;

	if (!ids || !map) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < vs->n; i++)
		if (strcmp(vs->v[i].region, region) == 0) {
			map[k] = &vs->v[i];
			ids[k++] = vs->v[i].instance_id;
		}
	if ((rc = orch_ec2_new(o, region, &c, err)))
		goto out;
	orch_mark_terminating(st, region, ids, k, reason, false);
	rc = gb_ec2_terminate_instances(c, ids, k, &ch, &ae, err);
	if (rc && ae.http_status && !not_found(&ae))
		orch_mark_terminating(st, region, ids, k, NULL, true);	/* refused */
	if (rc && not_found(&ae) && k > 1) {
		/* EC2 refuses the whole batch: find the lost ones one by one */
		rc = GB_E_OK;
		for (size_t i = 0; i < k; i++) {
			struct gb_ec2_state_change_list *one = NULL;

			if (gb_ec2_terminate_instances(c, &ids[i], 1, &one, &ae, NULL) == GB_E_OK) {
				close_record(o, st, map[i], GB_INST_TERMINATED, reason, flags);
				(*done)++;
			} else if (not_found(&ae)) {
				close_record(o, st, map[i], GB_INST_LOST, "not found at terminate", 0);
			} else if (!rc) {
				rc = gb_errorf(err, gb_ec2_class_err(ae.cls), "TerminateInstances in %s: %s: %s",
					       region, ae.code, ae.message);
			}
			gb_ec2_state_change_list_free(one);
		}
	} else if (rc && not_found(&ae)) {
		close_record(o, st, map[0], GB_INST_LOST, "not found at terminate", 0);
		rc = GB_E_OK;
	} else if (rc == GB_E_OK) {
		for (size_t i = 0; i < k; i++) {
			close_record(o, st, map[i], GB_INST_TERMINATED, reason, flags);
			(*done)++;
		}
	}
out:
	gb_ec2_state_change_list_free(ch);
	gb_ec2_destroy(c);
	free(ids);
	free(map);
	return rc;
}

static gb_err_t terminate_victims(gb_orch_t *o, gb_state_t *st,
				  const char *request_id, struct victims *vs,
				  const char *reason, unsigned flags,
				  int *n_terminated, gb_error_t *err)
{
	gb_err_t first = GB_E_OK;
	gb_error_t e;
	int done = 0;
	char line[256];

	for (size_t i = 0; i < vs->n; i++) {
		bool seen = false;
		gb_err_t rc;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(vs->v[j].region, vs->v[i].region) == 0;
		if (seen)
			continue;
		rc = region_terminate(o, st, vs, vs->v[i].region, reason, flags,
				      &done, &e);
		if (rc && !first) {
			first = rc;
			if (err)
				*err = e;
		}
	}
	snprintf(line, sizeof(line), "instances=%zu terminated=%d reason=%s", vs->n,
		 done, reason ? reason : "-");
	gb_log_info("orch_terminate req=%s %s", request_id ? request_id : "-", line);
	if (gb_state_event_add(st, request_id, "terminate", line, &e))
		gb_log_warn("event_failed error=%s", e.text);
	if (n_terminated)
		*n_terminated = done;
	return first;
}

gb_err_t gb_orch_terminate(gb_orch_t *o, gb_state_t *st,
			   const char *request_id, const char *const *nodes,
			   size_t n, const char *reason, unsigned flags,
			   int *n_terminated, gb_error_t *err)
{
	struct victims vs = { 0 };
	gb_err_t rc = GB_E_OK;

	if (n_terminated)
		*n_terminated = 0;
	if (!o || !st || (n && !nodes))
		return gb_errorf(err, GB_E_INVALID, "terminate: missing arguments");
	for (size_t i = 0; i < n && !rc; i++) {
		struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;

		f.node = nodes[i];
		f.alive = true;
		rc = gb_state_instance_list(st, &f, victim_row, &vs, err);
	}
	if (!rc && vs.nomem)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (!rc && vs.n)
		rc = terminate_victims(o, st, request_id, &vs, reason, flags,
				       n_terminated, err);
	victims_free(&vs);
	return rc;
}

gb_err_t gb_orch_terminate_instances(gb_orch_t *o, gb_state_t *st,
				     const char *region,
				     const char *const *ids, size_t n,
				     const char *reason, int *n_terminated,
				     gb_error_t *err)
{
	struct victims vs = { 0 };
	gb_err_t rc = GB_E_OK;

	if (n_terminated)
		*n_terminated = 0;
	if (!o || !st || !region || (n && !ids))
		return gb_errorf(err, GB_E_INVALID, "terminate: missing arguments");
	if (!gb_conf_region(o->conf, region))
		return gb_errorf(err, GB_E_INVALID, "terminate: region %s is not configured",
				 region);
	for (size_t i = 0; i < n && !rc; i++) {
		struct gb_instance in = { 0 };

		in.region = region;
		in.instance_id = ids[i];
		if (victim_row(&in, &vs))
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	if (!rc && vs.n)
		rc = terminate_victims(o, st, NULL, &vs, reason, 0, n_terminated, err);
	victims_free(&vs);
	return rc;
}

static gb_err_t region_instances(gb_orch_t *o, const char *region,
				 bool cluster_only,
				 int (*cb)(const struct gb_ec2_instance *,
					   const char *, void *),
				 void *arg, bool *stop, gb_error_t *err)
{
	const char *vals[1] = { o->conf->cluster_name };
	struct gb_ec2_filter f = { "tag:gpuburst:cluster", vals, 1 };
	struct gb_ec2_describe_params dp = { 0 };
	struct gb_ec2_instance_list *l = NULL;
	gb_ec2_t *c = NULL;
	gb_err_t rc;

	if (cluster_only) {
		dp.filters = &f;
		dp.n_filters = 1;
	}
	/*
	 * In pages: one answer for every instance of a large region could pass
	 * the HTTP client's body limit (an instance item is 3-4 KB).
	 */
	dp.max_results = 1000;
	if ((rc = orch_ec2_new(o, region, &c, err)))
		return rc;
	rc = gb_ec2_describe_instances(c, &dp, &l, NULL, err);
	for (size_t i = 0; !rc && l && i < l->n && !*stop; i++)
		*stop = cb(&l->v[i], region, arg) != 0;
	gb_ec2_instance_list_free(l);
	gb_ec2_destroy(c);
	return rc;
}

gb_err_t gb_orch_cloud_instances(gb_orch_t *o, const char *region,
				 bool cluster_only,
				 int (*cb)(const struct gb_ec2_instance *inst,
					   const char *region, void *arg),
				 void *arg, gb_error_t *err)
{
	bool stop = false;
	gb_err_t rc = GB_E_OK;

	if (!o || !cb)
		return gb_errorf(err, GB_E_INVALID, "cloud instances: missing arguments");
	if (region) {
		if (!gb_conf_region(o->conf, region))
			return gb_errorf(err, GB_E_INVALID, "region %s is not configured", region);
		return region_instances(o, region, cluster_only, cb, arg, &stop, err);
	}
	for (size_t i = 0; i < o->conf->n_regions && !rc && !stop; i++)
		rc = region_instances(o, o->conf->regions[i].name, cluster_only,
				      cb, arg, &stop, err);
	return rc;
}

gb_err_t gb_orch_cloud_groups(gb_orch_t *o, const char *region,
			      struct gb_ec2_placement_group_list **out,
			      gb_error_t *err)
{
	const char *vals[1];
	struct gb_ec2_filter f = { "tag:gpuburst:cluster", vals, 1 };
	gb_ec2_t *c = NULL;
	gb_err_t rc;

	*out = NULL;
	if (!o || !region || !gb_conf_region(o->conf, region))
		return gb_errorf(err, GB_E_INVALID, "region %s is not configured",
				 region ? region : "(none)");
	vals[0] = o->conf->cluster_name;
	if ((rc = orch_ec2_new(o, region, &c, err)))
		return rc;
	rc = gb_ec2_describe_placement_groups(c, NULL, 0, &f, 1, out, NULL, err);
	gb_ec2_destroy(c);
	return rc;
}

gb_err_t gb_orch_delete_group(gb_orch_t *o, const char *region, const char *name,
			      struct gb_ec2_error *ae, gb_error_t *err)
{
	gb_ec2_t *c = NULL;
	gb_err_t rc;

	if (!o || !region || !gb_conf_region(o->conf, region))
		return gb_errorf(err, GB_E_INVALID, "region %s is not configured",
				 region ? region : "(none)");
	if ((rc = orch_ec2_new(o, region, &c, err)))
		return rc;
	rc = gb_ec2_delete_placement_group(c, name, ae, err);
	gb_ec2_destroy(c);
	return rc;
}

gb_err_t gb_orch_spot_prices(gb_orch_t *o, const char *region, const char *const *types,
			     size_t n, double now, struct gb_ec2_spot_price_list **out,
			     struct gb_ec2_error *ae, gb_error_t *err)
{
	static const char *const linux_only[] = { GB_EC2_PRODUCT_LINUX };
	struct gb_ec2_spot_price_history_params p = {
		.instance_types = types,
		.n_instance_types = n,
		.product_descriptions = linux_only,
		.n_product_descriptions = 1,
		.start_time = now,
		.max_results = GB_EC2_SPOT_PRICE_PAGE,
	};
	gb_ec2_t *c = NULL;
	gb_err_t rc;

	*out = NULL;
	if (!o || !region || !gb_conf_region(o->conf, region))
		return gb_errorf(err, GB_E_INVALID, "region %s is not configured",
				 region ? region : "(none)");
	if (!n)
		return gb_errorf(err, GB_E_INVALID, "spot prices of %s: no instance type", region);
	if ((rc = orch_ec2_new(o, region, &c, err)))
		return rc;
	rc = gb_ec2_describe_spot_price_history(c, &p, out, ae, err);
	gb_ec2_destroy(c);
	return rc;
}
