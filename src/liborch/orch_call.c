/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * orch_call.c - one RunInstances call: before, during, after
 *
 * Before: a deterministic ClientToken, the attempt row (state "started")
 * and a "launch" event with the call's node list, in one transaction, so
 * that a re-run after a crash can re-send the identical request.
 * During: a worker thread sends it (orch_pool.c).
 * After: every instance is recorded and given its node by ami_launch_index
 * (the instance's boot script reads the same index from {nodes}), extras
 * are terminated at once, the attempt is completed and capacity memory
 * learns what the pool gave.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "orch_int.h"

void orch_call_free(struct orch_call *c)
{
	if (!c)
		return;
	orch_job_clear(&c->job);
	free(c->nodes);
	gb_orch_launch_clear(&c->launch);
	free(c);
}

void gb_orch_launch_clear(struct gb_orch_launch *l)
{
	if (!l)
		return;
	free(l->user_data_);
	memset(l, 0, sizeof(*l));
}

/*
 * EFA: one interface per network card, up to the type's EFA maximum; the
 * subnet and the security groups move from the top level onto each.  A
 * type with more network cards than EFA interfaces (p6-b300: 17 and 16)
 * has an ENA-only card 0: the primary interface there is a plain one and
 * the EFA interfaces take the next cards.
 */
static gb_err_t efa_interfaces(const struct gb_conf *conf, const char *type,
			       struct gb_orch_launch *l, gb_error_t *err)
{
	const struct gb_instance_type *it = gb_conf_instance_type(conf, type);
	struct gb_ec2_run_params *p = &l->run;
	int n, first;

	if (!it || !it->efa)
		return gb_errorf(err, GB_E_INVALID, "launch: efa is on, but the catalog gives %s no EFA",
				 type ? type : "(no type)");
	n = it->network_cards < it->efa_max_interfaces ? it->network_cards :
	    it->efa_max_interfaces;
	if (n < 1)
		n = 1;
	first = it->network_cards > it->efa_max_interfaces ? 1 : 0;
	n += first;
	if (n > (int)GB_ARRAY_LEN(l->nif_))
		n = (int)GB_ARRAY_LEN(l->nif_);
	for (int i = 0; i < n; i++) {
		l->nif_[i] = (struct gb_ec2_net_if){
			.device_index = i == 0 ? 0 : 1,
			.network_card_index = i,
			.interface_type = i < first ? "interface" : "efa",
			.subnet_id = p->subnet_id,
			.security_group_ids = p->security_group_ids,
			.n_security_group_ids = p->n_security_group_ids,
			.delete_on_termination = true,
		};
	}
	p->net_ifs = l->nif_;
	p->n_net_ifs = (size_t)n;
	p->subnet_id = NULL;
	p->security_group_ids = NULL;
	p->n_security_group_ids = 0;
	return GB_E_OK;
}

/* What [cap] draws on, into the RunInstances parameters [p].  RET its kind. */
static enum gb_capacity_kind capacity_params(const struct gb_conf_nodeset *ns,
					     const struct gb_orch_capacity *cap,
					     struct gb_ec2_run_params *p)
{
	enum gb_capacity_kind k = cap ? cap->kind :
				  ns && ns->market == GB_MARKET_SPOT ? GB_CAPACITY_SPOT :
				  GB_CAPACITY_ON_DEMAND;

	switch (k) {
	case GB_CAPACITY_ON_DEMAND:
		break;
	case GB_CAPACITY_SPOT:
		p->spot = true;
		p->spot_max_price = cap ? cap->max_price : NULL;
		break;
	case GB_CAPACITY_RESERVATION:
		if (!cap->target)
			p->capacity_reservation_preference = "capacity-reservations-only";
		else if (gb_str_has_prefix(cap->target, "arn:"))
			p->capacity_reservation_group_arn = cap->target;
		else
			p->capacity_reservation_id = cap->target;
		break;
	case GB_CAPACITY_BLOCK:
		p->capacity_block = true;
		p->capacity_reservation_id = cap->target;
		break;
	}
	return k;
}

gb_err_t gb_orch_launch_params(const struct gb_conf *conf,
			       const struct gb_conf_nodeset *ns, const char *type,
			       const struct gb_orch_capacity *cap,
			       const char *region, const char *subnet,
			       const char *request_id, const char *const *nodes,
			       int min, int max, const char *token,
			       const char *munge_key, struct gb_orch_launch *l,
			       gb_error_t *err)
{
	const struct gb_conf_region *cr = gb_conf_region(conf, region);
	struct gb_ec2_run_params *p = &l->run;
	struct gb_orch_user_vars uv;
	size_t nk = 0, ns_sg = 0, len = 0;
	enum gb_capacity_kind kind;
	gb_err_t rc;

	gb_orch_launch_clear(l);
	if (!cr)
		return gb_errorf(err, GB_E_INVALID, "launch: region %s not configured", region);
	p->image_id = cr->ami;
	p->instance_type = type;
	p->min_count = min;
	p->max_count = max;
	p->subnet_id = subnet;	/* the subnet fixes the AZ (zonal idempotency) */
	if (cr->n_security_groups > GB_ARRAY_LEN(l->sg_))
		return gb_errorf(err, GB_E_INVALID, "launch: region %s has %zu security groups, more than %d",
				 region, cr->n_security_groups, GB_CONF_SECURITY_GROUPS_MAX);
	for (; ns_sg < cr->n_security_groups; ns_sg++)
		l->sg_[ns_sg] = cr->security_groups[ns_sg];
	p->security_group_ids = l->sg_;
	p->n_security_group_ids = ns_sg;
	if (ns && ns->efa && (rc = efa_interfaces(conf, type, l, err)))
		return rc;
	p->key_name = cr->key_name;
	p->iam_instance_profile_name = cr->iam_profile;
	p->client_token = token;
	kind = capacity_params(ns, cap, p);
	l->kv_[nk++] = (struct gb_ec2_kv){ "gpuburst:cluster", conf->cluster_name };
	l->kv_[nk++] = (struct gb_ec2_kv){ "gpuburst:request", request_id };
	l->kv_[nk++] = (struct gb_ec2_kv){ "gpuburst:capacity", gb_conf_capacity_name(kind) };
	/*
	 * No gpuburst:node here: the instance learns who it is from that tag
	 * in the IMDS (InstanceMetadataTags), and only the instance a record
	 * keeps is the node.  CreateTags names it once the record does
	 * (orch_tag_nodes), unless the call could only ever name one node
	 * (gb_orch_launch_name, orch_call_params).
	 */
	p->metadata_tags = true;
	l->spec_.resource_type = "instance";
	l->spec_.tags = l->kv_;
	l->spec_.n_tags = nk;
	p->tag_specs = &l->spec_;
	p->n_tag_specs = 1;
	if (!cr->user_data)
		return GB_E_OK;
	uv = (struct gb_orch_user_vars){ conf->cluster_name, region, request_id, nodes,
					 (size_t)max, munge_key };
	rc = gb_orch_user_data(cr->user_data, &uv, &l->user_data_, &len, err);
	if (rc)
		return rc;
	p->user_data = l->user_data_;
	p->user_data_len = len;
	return GB_E_OK;
}

/* An AWS tag value: up to 256 letters, digits, blanks and + - = . _ : / @. */
static bool tag_value_ok(const char *v)
{
	if (!v || !*v || strlen(v) > 256)
		return false;
	for (; *v; v++) {
		if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		      (*v >= '0' && *v <= '9') || strchr(" +-=._:/@", *v)))
			return false;
	}
	return true;
}

void gb_orch_launch_cost_tags(const struct gb_conf *conf, struct gb_orch_launch *l,
			      int64_t job_id, const char *user, const char *account,
			      const char *partition)
{
	const struct gb_conf_cost_tags *t = &conf->policy.cost_tags;
	const struct {
		const char *key, *value;
	} add[] = {
		{ t->job, job_id > 0 ? l->job_ : NULL },
		{ t->user, user },
		{ t->account, account },
		{ t->partition, partition },
	};
	size_t nk = l->spec_.n_tags;

	if (l->spec_.tags != l->kv_)
		return;		/* no instance tags were set up */
	snprintf(l->job_, sizeof(l->job_), "%lld", (long long)job_id);
	for (size_t i = 0; i < GB_ARRAY_LEN(add) && nk < GB_ARRAY_LEN(l->kv_); i++) {
		if (add[i].key && tag_value_ok(add[i].value))
			l->kv_[nk++] = (struct gb_ec2_kv){ add[i].key, add[i].value };
	}
	l->spec_.n_tags = nk;
}

/* The tags that make an instance Slurm node [node]: at launch or after. */
static void node_name_tags(struct gb_ec2_kv kv[2], const char *node)
{
	kv[0] = (struct gb_ec2_kv){ "gpuburst:node", node };
	kv[1] = (struct gb_ec2_kv){ "Name", node };
}

void gb_orch_launch_name(struct gb_orch_launch *l, const char *node)
{
	size_t nk = l->spec_.n_tags;

	if (l->spec_.tags != l->kv_ || nk + 2 > GB_ARRAY_LEN(l->kv_))
		return;		/* no instance tags were set up */
	node_name_tags(&l->kv_[nk], node);
	l->spec_.n_tags = nk + 2;
}

gb_err_t orch_call_params(struct orch_run *r, struct orch_call *c,
			  gb_error_t *err)
{
	const struct gb_pool *pl = &r->facts.pools[c->pool];
	const struct gb_conf_region *cr = gb_conf_region(r->conf, pl->region);
	struct gb_orch_capacity cap = { pl->capacity, pl->target, pl->max_price };
	gb_err_t rc;

	if (!cr)
		return gb_errorf(err, GB_E_INTERNAL, "call: region %s not configured", pl->region);
	if (cr->user_data_per_node && c->max != 1)
		return gb_errorf(err, GB_E_INTERNAL,
				 "call: {node} in the user data of %s needs MaxCount 1, not %d",
				 pl->region, c->max);
	/*
	 * Sealed for the request (its id is the seal's context), made once
	 * and kept by the run: the seal is deterministic, so a later run that
	 * re-sends a recovered attempt seals the same text and its UserData
	 * is the original call's, byte for byte, as the ClientToken requires.
	 */
	if (cr->user_data_munge_key && !r->munge_key &&
	    (rc = gb_orch_munge_seal(r->conf, r->req->id, &r->munge_key, err)))
		return rc;
	c->job.kind = ORCH_JOB_RUN;
	c->job.region = cr->name;
	rc = gb_orch_launch_params(r->conf, r->ns, pl->type, &cap, cr->name, pl->subnet,
				   r->req->id, c->nodes, c->min, c->max, c->token,
				   r->munge_key, &c->launch, err);
	if (!rc)
		gb_orch_launch_cost_tags(r->conf, &c->launch, r->req->job_id, r->owner_user,
					 r->owner_account, r->owner_partition);
	/*
	 * Named at launch where the instance can only ever be that node: a
	 * one-node request (no other node it could serve instead), or user
	 * data that names one node per instance (it knows already).  Its
	 * hedge, if both deliver, is an extra as always.  A recovered
	 * attempt is named as its launch event says it was (orch_recover),
	 * so it is re-sent with the tags it had, as its ClientToken requires.
	 */
	if (!c->recovered)
		c->named = c->max == 1 && c->nodes[0] &&
			   (r->n == 1 || cr->user_data_per_node);
	if (!rc && c->named)
		gb_orch_launch_name(&c->launch, c->nodes[0]);
	/*
	 * The subnet fixes the AZ; a placed job's group is the AZ's
	 * (deterministic: a recovered attempt names the group it was sent
	 * with, as its ClientToken requires).  A reservation or a Capacity
	 * Block is placed already: EC2 chose where it lies, and a launch
	 * into it names no group of ours.
	 */
	if (!rc && r->placed && pl->capacity != GB_CAPACITY_RESERVATION &&
	    pl->capacity != GB_CAPACITY_BLOCK) {
		orch_place_name(r, pl->az, c->group, sizeof(c->group));
		c->launch.run.placement_group = c->group;
	}
	c->job.run = c->launch.run;
	return rc;
}

static void node_list(const struct orch_call *c, struct gb_buf *b)
{
	for (int i = 0; i < c->max; i++)
		gb_buf_printf(b, "%s%s", i ? "," : "", c->nodes[i]);
}

gb_err_t orch_call_begin(struct orch_run *r, struct orch_call *c,
			 gb_error_t *err)
{
	const struct gb_pool *pl = &r->facts.pools[c->pool];
	struct gb_attempt a = { 0 };
	struct gb_buf ev = GB_BUF_INIT;
	gb_err_t rc;

	c->seq = r->next_seq++;
	rc = gb_orch_client_token(r->req->id, pl->region, pl->az, pl->subnet,
				  c->seq, c->min, c->max, c->token,
				  sizeof(c->token), err);
	if (rc)
		return rc;
	rc = orch_call_params(r, c, err);
	if (rc)
		return rc;
	/*
	 * On the board: noted already when the default strategy admitted it
	 * (c->board_key set), else announced when sent (orch_calls_send,
	 * orch_wave); not when out of memory made it fly unannounced.
	 */
	if (!c->board_key[0])
		orch_board_key(r, c->pool, c->group[0] ? c->group : NULL, c->board_key,
			       sizeof(c->board_key));
	c->job.board_key = c->board_unnoted ? NULL : c->board_key;
	c->job.board_owner = r;
	c->job.board_request = r->req->id;
	a.request_id = r->req->id;
	a.seq = c->seq;
	a.region = pl->region;
	a.az = pl->az;
	a.subnet = pl->subnet;
	a.instance_type = pl->type;
	a.capacity = gb_conf_capacity_name(pl->capacity);
	a.capacity_target = pl->target;
	a.min_count = c->min;
	a.asked = c->max;
	a.client_token = c->token;
	a.started_at = c->started_at = orch_wall(r->o);
	if ((rc = gb_state_tx_begin(r->st, err)))
		return rc;
	rc = gb_state_attempt_begin(r->st, &a, err);
	if (rc == GB_E_OK) {
		/* the node list makes the call reproducible after a crash */
		gb_buf_printf(&ev, "seq=%d attempt=%lld region=%s az=%s subnet=%s type=%s capacity=%s%s%s min=%d max=%d token=%s%s nodes=",
			      c->seq, (long long)a.id, pl->region, pl->az,
			      pl->subnet, pl->type, a.capacity, pl->target ? " target=" : "",
			      pl->target ? pl->target : "", c->min, c->max, c->token,
			      c->named ? " named=1" : "");
		node_list(c, &ev);
		rc = gb_buf_failed(&ev) ? gb_errorf(err, GB_E_NOMEM, "out of memory") :
		     gb_state_event_add(r->st, r->req->id, "launch",
					gb_buf_str(&ev), err);
	}
	gb_buf_free(&ev);
	if (rc == GB_E_OK)
		rc = gb_state_tx_commit(r->st, err);
	if (rc) {
		gb_state_tx_rollback(r->st);
		return rc;
	}
	c->attempt_id = a.id;
	return GB_E_OK;
}

/*****************************************************************************
 *  Outcomes
 *****************************************************************************/

static struct slot *slot_of(struct orch_run *r, const char *node)
{
	for (int i = 0; node && i < r->n; i++)
		if (strcmp(r->slots[i].name, node) == 0)
			return &r->slots[i];
	return NULL;
}

static void slot_fill(struct orch_run *r, struct slot *s,
		      const struct gb_ec2_instance *in, const struct orch_call *c)
{
	const struct gb_pool *pl = &r->facts.pools[c->pool];

	s->state = r->grouped || r->strategy == GB_STRATEGY_ALL_OR_NOTHING ?
		   SLOT_TENTATIVE : SLOT_COMMITTED;
	s->instance_id = gb_strdup0(in->instance_id);
	s->region = gb_strdup0(pl->region);
	s->az = gb_strdup0(in->availability_zone ? in->availability_zone : pl->az);
	s->subnet = gb_strdup0(in->subnet_id ? in->subnet_id : pl->subnet);
	s->type = gb_strdup0(pl->type);
	s->private_ip = gb_strdup0(in->private_ip);
	s->public_ip = gb_strdup0(in->public_ip);
	GB_FREE_NULL(s->code);
	GB_FREE_NULL(s->why);
	s->group = orch_group_of(r, c->pool);
	s->filled_at = c->job.t_done;
	s->tagged = c->named;	/* else orch_tag_nodes names it */
	s->attempt_id = c->attempt_id;
	if (s->state == SLOT_COMMITTED)
		r->remaining--;
}

/* Extras of a wave, per region, terminated together after it. */
struct extras {
	struct gb_strv ids;
	struct gb_strv regions;
};

static gb_err_t record_instance(struct orch_run *r, const struct orch_call *c,
				const struct gb_ec2_instance *in,
				const char *node, gb_error_t *err)
{
	const struct gb_pool *pl = &r->facts.pools[c->pool];
	struct gb_instance rec = { 0 };
	gb_err_t rc;

	rec.request_id = r->req->id;
	rec.region = pl->region;
	rec.instance_id = in->instance_id;
	rec.node = node;
	rec.az = in->availability_zone ? in->availability_zone : pl->az;
	rec.subnet = in->subnet_id ? in->subnet_id : pl->subnet;
	rec.instance_type = pl->type;	/* the type this instance got */
	rec.capacity = gb_conf_capacity_name(pl->capacity);
	rec.capacity_target = pl->target;
	rec.private_ip = in->private_ip;
	rec.public_ip = in->public_ip;
	rec.state = in->state_code == 16 ? GB_INST_RUNNING : GB_INST_PENDING;
	rec.attempt_id = c->attempt_id;
	rec.launched_at = in->launch_epoch > 0 ? in->launch_epoch : orch_wall(r->o);
	/*
	 * EC2's launchTime has whole seconds (".000Z") on the cloud's clock;
	 * an instance of this call did not launch before the call started, and
	 * the replay must not show it before the approval that let it run.
	 */
	if (rec.launched_at < c->started_at)
		rec.launched_at = c->started_at;
	rc = gb_state_instance_add(r->st, &rec, err);
	if (rc == GB_E_EXISTS) {
		/* a re-sent token gave back what a crashed run recorded */
		rc = gb_state_instance_update(r->st, &rec, err);
	}
	return rc;
}

/*
 * An instance its own node no longer needs (a hedge both calls delivered)
 * serves another node of the request that has none yet, rather than be
 * terminated: it learns its node from the gpuburst:node tag, set once the
 * record names it (orch_tag_nodes).  Not where the instance knows its node
 * already: named at launch, or by user data that names one node per
 * instance ({node}); and not for a node whose launch has an unknown
 * outcome (its instance may exist).  RET the slot, or NULL.
 */
static struct slot *reuse_slot(struct orch_run *r, const struct orch_call *c)
{
	const struct gb_conf_region *cr = gb_conf_region(r->conf, r->facts.pools[c->pool].region);
	struct slot *any = NULL;

	if (c->named || (cr && cr->user_data_per_node))
		return NULL;
	/* first one this call's other instances will not fill */
	for (int i = 0; i < r->n; i++) {
		bool named = false;

		if (r->slots[i].state != SLOT_EMPTY)
			continue;
		for (int k = 0; k < c->max && !named; k++)
			named = c->nodes[k] == r->slots[i].name;
		if (!named)
			return &r->slots[i];
		if (!any)
			any = &r->slots[i];
	}
	return any;
}

/* The slot that holds instance [id] already, or NULL. */
static struct slot *slot_holding(struct orch_run *r, const char *id)
{
	for (int i = 0; i < r->n; i++)
		if (gb_strcmp0(r->slots[i].instance_id, id) == 0)
			return &r->slots[i];
	return NULL;
}

static gb_err_t take_instances(struct orch_run *r, struct orch_call *c,
			       struct extras *x, gb_error_t *err)
{
	const struct gb_ec2_instance_list *l = c->job.instances;
	gb_err_t rc;

	for (size_t i = 0; i < l->n; i++) {
		const struct gb_ec2_instance *in = &l->v[i];
		int idx = in->ami_launch_index >= 0 ? in->ami_launch_index : (int)i;
		const char *node = idx < c->max ? c->nodes[idx] : NULL;
		struct slot *s = slot_of(r, node);
		bool extra = !s || (s->state != SLOT_EMPTY && s->state != SLOT_DOUBT);

		/*
		 * A re-sent token gives back what a crashed run may have
		 * recorded and recovery adopted: the node's own instance, or
		 * the one it served instead (reuse_slot).
		 */
		if (c->recovered && in->instance_id && slot_holding(r, in->instance_id)) {
			r->launched_seen++;
			r->launched_recorded++;
			continue;
		}

		r->launched_seen++;
		if (!in->instance_id || !*in->instance_id) {
			gb_log_error("orch_invariant req=%s what=instance_without_id", r->req->id);
			continue;
		}
		if (extra) {
			struct slot *t = reuse_slot(r, c);

			if (t) {
				orch_trace(r, "reuse", "instance=%s launched for %s serves %s instead",
					   in->instance_id, node ? node : "-", t->name);
				s = t;
				node = t->name;
				extra = false;
			}
		}
		rc = record_instance(r, c, in, extra ? NULL : node, err);
		if (rc)
			return rc;
		r->launched_recorded++;
		if (extra) {
			r->extras++;
			if (gb_strv_add(&x->ids, in->instance_id) ||
			    gb_strv_add(&x->regions, r->facts.pools[c->pool].region))
				return gb_errorf(err, GB_E_NOMEM, "out of memory");
			continue;
		}
		slot_fill(r, s, in, c);
	}
	return GB_E_OK;
}

static void deny_nodes(struct orch_run *r, struct orch_call *c)
{
	const struct orch_job *j = &c->job;
	const char *code = j->ae.code[0] ? j->ae.code : gb_ec2_class_name(j->ae.cls);
	enum call_outcome oc = orch_call_outcome(c);

	for (int i = 0; i < c->max; i++) {
		struct slot *s = slot_of(r, c->nodes[i]);

		if (!s || (s->state != SLOT_EMPTY && s->state != SLOT_DOUBT))
			continue;
		free(s->code);
		free(s->why);
		s->code = gb_strdup0(code);
		s->why = gb_strdup0(j->ae.message[0] ? j->ae.message : j->err.text);
		if (oc == CALL_UNKNOWN)
			s->state = SLOT_DOUBT;
	}
}

static gb_err_t finish_attempt(struct orch_run *r, struct orch_call *c,
			       gb_error_t *err)
{
	const struct orch_job *j = &c->job;
	enum call_outcome oc = orch_call_outcome(c);
	struct gb_attempt a = { 0 };

	a.id = c->attempt_id;
	a.got = orch_call_got(c);
	a.state = oc == CALL_OK ? GB_ATTEMPT_OK :
		  oc == CALL_UNKNOWN ? GB_ATTEMPT_UNKNOWN : GB_ATTEMPT_FAILED;
	if (j->rc && oc != CALL_ICE) {
		a.error_code = j->ae.code[0] ? j->ae.code : gb_err_name(j->rc);
		a.error_class = gb_ec2_class_name(j->ae.cls);
		a.message = j->ae.message[0] ? j->ae.message : j->err.text;
	} else if (j->rc) {
		a.error_code = j->ae.code[0] ? j->ae.code : GB_EC2_CODE_ICE;
		a.error_class = "CAPACITY";
		a.message = j->ae.message;
	}
	a.finished_at = orch_wall(r->o);
	a.latency = j->t_done - j->t_start;
	/* "unknown" stays open: the next run re-sends the same token */
	return gb_state_attempt_finish(r->st, &a, err);
}

static bool call_dry(const struct orch_call *c)
{
	enum call_outcome oc = orch_call_outcome(c);

	/* EC2 answers MinCount..MaxCount with what it has: fewer means dry. */
	return oc == CALL_ICE ||
	       (oc == CALL_OK && c->min < c->max && orch_call_got(c) < c->max);
}

/*
 * Was [region]'s visit cut by its quota: refused, or given all the room
 * quota memory left it?  Then what the run got there says nothing of the
 * capacity of its AZs but "at least that".
 */
static bool quota_cut(const struct orch_run *r, const char *region)
{
	double room = HUGE_VAL;
	int got = 0;

	for (size_t i = 0; i < r->facts.n_pools; i++) {
		if (strcmp(r->facts.pools[i].region, region))
			continue;
		if (r->pr[i].q_refused)
			return true;
		got += r->pr[i].m_got;
		if (r->pr[i].room0 < room)
			room = r->pr[i].room0;
	}
	return !isinf(room) && got >= room;
}

/*
 * Quota memory: each region that refused with a quota shows its limit as
 * what our live instances hold of that quota there (this run's included)
 * plus the MinCount - 1 instances the refused call could not add.
 */
static void learn_quotas(struct orch_run *r)
{
	double held, now = orch_wall(r->o);
	gb_error_t e;

	for (size_t i = 0; i < r->facts.n_pools; i++) {
		const struct pool_run *pr = &r->pr[i];
		const char *region = r->facts.pools[i].region;
		bool spot = r->facts.pools[i].capacity == GB_CAPACITY_SPOT;
		bool first = pr->q_refused;
		char key[64];
		int units;

		for (size_t j = 0; j < i && first; j++)
			first = !r->pr[j].q_refused ||
				strcmp(r->facts.pools[j].region, region) ||
				strcmp(r->pr[j].q_code, pr->q_code);
		if (!first)
			continue;
		/* a vCPU quota counts in the refused pool's type's vCPUs */
		units = gb_plan_quota_key(r->conf, r->facts.pools[i].type, spot, pr->q_code,
					  key, sizeof(key));
		if (gb_plan_quota_held(r->conf, r->st, region, key, spot, &held, &e) ||
		    gb_state_quota_record(r->st, region, key, pr->q_code,
					  held + (pr->q_min > 1 ? pr->q_min - 1 : 0) * units,
					  true, now, r->conf->policy.capacity_half_life, &e))
			gb_log_warn("quota_record_failed req=%s region=%s error=%s",
				    r->req->id, region, e.text);
	}
}

/*
 * Capacity memory, one observation per (AZ, type) per request: the calls
 * of one run to one AZ for one type (chunks, waves, subnets) are one
 * visit.  Two records:
 *  - schema 2 (the default strategy's estimate): a visit that ran the AZ
 *    dry measured its level (what the run got there in all); one that got
 *    everything it asked, or was cut by the region's quota, proves a
 *    lower bound (what it got, when something);
 *  - the counters (asked, got, ice; the other strategies' estimate), as
 *    before: a dry visit adds (asked, got, 1), a visit that got all it
 *    asked only as evidence of plenty (2 x batch_max or more from a pool
 *    that never ran dry); smaller ones would bias got/ice upwards
 *    (doc/orchestrator.md, "Capacity memory").
 */
void orch_learn(struct orch_run *r)
{
	double now = orch_wall(r->o), hl = r->conf->policy.capacity_half_life;
	gb_error_t e;

	for (size_t i = 0; r->pr && i < r->facts.n_pools; i++) {
		const struct gb_pool *pl = &r->facts.pools[i];
		const char *kind = gb_conf_capacity_name(pl->capacity);
		double est = pl->mem.counter_est;
		int asked = 0, got = 0;
		bool dry = false, seen = false, first = true;

		/* a reservation's count is EC2's to say, not memory's to guess */
		if (pl->reserved >= 0)
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = !orch_same_capacity(r, j, i);
		if (!first)
			continue;
		for (size_t j = i; j < r->facts.n_pools; j++) {
			if (!orch_same_capacity(r, j, i) || !r->pr[j].m_seen)
				continue;
			seen = true;
			asked += r->pr[j].m_asked;
			got += r->pr[j].m_got;
			dry |= r->pr[j].m_dry;
		}
		if (!seen)
			continue;
		/*
		 * ICE inside a placement group is that group's (the run
		 * excluded its AZ): it does not make the AZ dry for launches
		 * outside groups.  What a group got is still capacity seen.
		 */
		if (r->placed)
			dry = false;
		if (dry && !quota_cut(r, pl->region) ?
		    gb_state_capacity_level(r->st, pl->region, pl->az, pl->type, kind,
					    got, true, now, hl, &e) :
		    got > 0 && gb_state_capacity_level(r->st, pl->region, pl->az, pl->type,
						       kind, got, false, now, hl, &e))
			gb_log_warn("capacity_record_failed req=%s error=%s", r->req->id,
				    e.text);
		if (!dry && (got < 2 * r->bmax || (est >= 0 && !isinf(est))))
			continue;
		if (gb_state_capacity_record(r->st, pl->region, pl->az, pl->type, kind,
					     asked, got, dry, false, now, hl, &e))
			gb_log_warn("capacity_record_failed req=%s error=%s", r->req->id,
				    e.text);
	}
	if (r->pr)
		learn_quotas(r);
}

/*
 * " capacity=spot", " capacity=reservation target=" ...: what the call's
 * pool drew on, for the trace (nothing for on-demand, as before the
 * ladder).  RET [buf].
 */
static const char *capacity_word(const struct gb_pool *pl, char *buf, size_t n)
{
	buf[0] = '\0';
	if (pl->capacity != GB_CAPACITY_ON_DEMAND)
		snprintf(buf, n, " capacity=%s%s", gb_conf_capacity_name(pl->capacity),
			 pl->target ? " target=" : "");
	return buf;
}

static void note_region(struct orch_run *r, const char *region)
{
	if (gb_strv_find(&r->tried_regions, region) < 0)
		gb_strv_add(&r->tried_regions, region);
}

static gb_err_t process(struct orch_run *r, struct orch_call *c,
			struct extras *x, gb_error_t *err)
{
	const struct gb_pool *pl = &r->facts.pools[c->pool];
	enum call_outcome oc = orch_call_outcome(c);
	int http = c->job.ae.attempts > 0 ? c->job.ae.attempts : 1;
	char q[GB_ERROR_TEXT_MAX], cw[64];
	gb_err_t rc;

	r->api_calls += http;
	note_region(r, pl->region);
	/* EC2 answered, and not "this account may not": the credentials work */
	if (oc != CALL_REGION && oc != CALL_UNKNOWN &&
	    (c->job.rc == GB_E_OK || c->job.ae.http_status) &&
	    c->job.ae.cls != GB_EC2_CLASS_AUTH)
		orch_region_accepted(r, pl->region);
	if (oc == CALL_OK && (rc = take_instances(r, c, x, err)))
		return rc;
	if (oc == CALL_OK)
		orch_ladder_took(r, c->pool, orch_call_got(c));
	else if (oc == CALL_ICE && pl->reserved > 0)
		orch_ladder_took(r, c->pool, pl->reserved);	/* EC2 knows better */
	if (oc != CALL_OK)
		deny_nodes(r, c);
	if ((rc = finish_attempt(r, c, err)))
		return rc;
	if (oc == CALL_OK || oc == CALL_ICE) {
		struct pool_run *pr = &r->pr[c->pool];

		pr->m_seen = true;
		pr->m_asked += c->max;
		pr->m_got += orch_call_got(c);
		pr->m_dry |= call_dry(c);
	} else if (oc == CALL_QUOTA) {
		/*
		 * What we can get there is what we got: this AZ's visit ends
		 * here, and the region's unvisited AZs count as empty.
		 */
		r->pr[c->pool].m_seen = r->pr[c->pool].m_dry = true;
		r->pr[c->pool].m_asked += c->max;
		r->pr[c->pool].q_refused = true;
		r->pr[c->pool].q_min = c->min;
		gb_strlcpy(r->pr[c->pool].q_code, c->job.ae.code[0] ? c->job.ae.code :
			   GB_EC2_CODE_VCPU_LIMIT, sizeof(r->pr[c->pool].q_code));
		for (size_t i = 0; i < r->facts.n_pools; i++) {
			struct pool_run *pr = &r->pr[i];

			if (!orch_same_quota(r, i, c->pool) || pr->m_seen)
				continue;
			pr->m_seen = pr->m_dry = true;
		}
	}
	orch_outcome_note(r, c);
	/* http= and t= (seconds since the start: sent, answered) for replays */
	if (oc == CALL_OK)
		orch_trace(r, "call", "seq=%d pool=%s/%s type=%s%s%s min=%d max=%d got=%d http=%d t=%.2f-%.2f%s",
			   c->seq, pl->az, pl->subnet, pl->type, capacity_word(pl, cw, sizeof(cw)),
			   pl->target ? pl->target : "", c->min, c->max,
			   orch_call_got(c), http, c->job.t_start - r->t0,
			   c->job.t_done - r->t0, c->recovered ? " recovered=1" : "");
	else
		orch_trace(r, "call", "seq=%d pool=%s/%s type=%s%s%s min=%d max=%d got=0 code=%s class=%s http=%d t=%.2f-%.2f msg=%s%s",
			   c->seq, pl->az, pl->subnet, pl->type, capacity_word(pl, cw, sizeof(cw)),
			   pl->target ? pl->target : "", c->min, c->max,
			   c->job.ae.code[0] ? c->job.ae.code : "-",
			   gb_ec2_class_name(c->job.ae.cls), http,
			   c->job.t_start - r->t0, c->job.t_done - r->t0,
			   gb_log_q(q, 120, c->job.ae.message[0] ? c->job.ae.message :
				    c->job.err.text),
			   c->recovered ? " recovered=1" : "");
	return GB_E_OK;
}

/*****************************************************************************
 *  After a wave: extras and node tags, in one parallel batch
 *****************************************************************************/

struct tagjob {
	struct orch_job job;
	struct gb_ec2_kv kv[2];
	const char *id[1];
	struct slot *slot;
	bool failed;		/* for good: not sent again */
};

static size_t untagged(const struct orch_run *r)
{
	size_t n = 0;

	for (int i = 0; i < r->n; i++)
		if (r->slots[i].instance_id && !r->slots[i].tagged)
			n++;
	return n;
}

/* Close the records of what one TerminateInstances ended. */
static gb_err_t terminated(struct orch_run *r, const char *region,
			   const struct orch_job *j, const char *reason,
			   int *done, gb_error_t *err)
{
	struct gb_instance up = { 0 };
	double now = orch_wall(r->o);
	gb_err_t rc;

	for (size_t i = 0; j->changes && i < j->changes->n; i++) {
		up.request_id = r->req->id;
		up.region = region;
		up.instance_id = j->changes->v[i].instance_id;
		up.state = GB_INST_TERMINATED;
		up.terminated_at = now;
		up.reason = reason;
		if ((rc = gb_state_instance_update(r->st, &up, err)) && rc != GB_E_NOTFOUND)
			return rc;
		if (done)
			(*done)++;
	}
	return GB_E_OK;
}

/*
 * One round of TerminateInstances for the ids in [left]: one call for all
 * of them, or ([split]) one call each, in parallel, so that the ids EC2
 * already knows end at once.  Ids not yet visible stay in [left]; the
 * others leave it, ended or refused (logged, traced).
 */
static gb_err_t terminate_round(struct orch_run *r, const char *region,
				struct gb_strv *left, bool split,
				const char *reason, int *done, gb_error_t *err)
{
	size_t n = split ? left->n : 1;
	struct orch_job *jobs = calloc(n, sizeof(*jobs));
	struct orch_job **jp = calloc(n, sizeof(*jp));
	struct gb_strv keep = { 0 };
	gb_err_t rc = GB_E_OK;

	if (!jobs || !jp) {
		free(jobs);
		free(jp);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		jobs[i].kind = ORCH_JOB_TERMINATE;
		jobs[i].region = region;
		jobs[i].ids = (const char *const *)left->v + (split ? i : 0);
		jobs[i].n_ids = split ? 1 : left->n;
		jp[i] = &jobs[i];
	}
	orch_pool_run(r->pool, jp, n);
	for (size_t i = 0; i < n; i++) {
		struct orch_job *j = &jobs[i];

		r->other_calls += j->ae.attempts > 0 ? j->ae.attempts : 1;
		if (!rc)
			rc = terminated(r, region, j, reason, done, err);
		if (orch_not_visible(j)) {
			for (size_t k = 0; k < j->n_ids && !rc; k++)
				if (gb_strv_add(&keep, j->ids[k]))
					rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		} else if (j->rc) {
			if (j->ae.http_status && !gb_str_has_prefix(j->ae.code, "InvalidInstanceID"))
				orch_mark_terminating(r->st, region, j->ids, j->n_ids, NULL,
						      true);	/* refused */
			gb_log_error("terminate_failed req=%s region=%s n=%zu error=%s",
				     r->req->id, region, j->n_ids, j->err.text);
			orch_trace(r, "terminate", "region=%s n=%zu failed: %s", region,
				   j->n_ids, j->err.text);
		}
		orch_job_clear(j);
	}
	free(jobs);
	free(jp);
	gb_strv_free(left);
	*left = keep;
	return rc;
}

gb_err_t orch_terminate_ids(struct orch_run *r, const char *region,
			    const char *const *ids, size_t n,
			    const char *reason, int *done, gb_error_t *err)
{
	struct gb_strv left = { 0 };
	double wait = ORCH_VISIBLE_FIRST, waited = 0, w;
	bool split = false;
	gb_err_t rc = GB_E_OK;

	if (n == 0)
		return GB_E_OK;
	for (size_t i = 0; i < n; i++)
		if (gb_strv_add(&left, ids[i])) {
			gb_strv_free(&left);
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		}
	orch_mark_terminating(r->st, region, ids, n, reason, false);
	for (;;) {
		size_t before = left.n;

		if ((rc = terminate_round(r, region, &left, split, reason, done, err)) ||
		    left.n == 0)
			break;
		/* EC2 refuses a whole batch for one unknown id: one by one now */
		if (!split && before > 1) {
			split = true;
			continue;
		}
		split = true;
		if (!(w = orch_visible_wait(&wait, waited))) {
			gb_log_error("terminate_failed req=%s region=%s n=%zu error=\"InvalidInstanceID.NotFound after %.1f s\"",
				     r->req->id, region, left.n, waited);
			orch_trace(r, "terminate", "region=%s n=%zu failed: InvalidInstanceID.NotFound for %.1f s (not visible yet); the records stay terminating, reconcile ends them",
				   region, left.n, waited);
			break;
		}
		gb_log_info("terminate_retry req=%s region=%s n=%zu code=InvalidInstanceID.NotFound wait=%.2f",
			    r->req->id, region, left.n, w);
		orch_sleep(r->o, w);
		waited += w;
	}
	if (!rc && left.n == 0 && waited > 0)
		orch_trace(r, "terminate", "region=%s n=%zu visible after %.2f s of InvalidInstanceID.NotFound",
			   region, n, waited);
	gb_strv_free(&left);
	return rc;
}

static gb_err_t kill_extras(struct orch_run *r, struct extras *x,
			    gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	int done = 0;

	/* one TerminateInstances per region (rarely more than one) */
	for (size_t i = 0; i < x->ids.n && !rc; i++) {
		const char *region = x->regions.v[i];
		const char **ids;
		size_t k = 0;
		bool first = true;

		for (size_t j = 0; j < i; j++)
			first &= strcmp(x->regions.v[j], region) != 0;
		if (!first)
			continue;
		if (!(ids = calloc(x->ids.n, sizeof(*ids))))
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
		for (size_t j = i; j < x->ids.n; j++)
			if (strcmp(x->regions.v[j], region) == 0)
				ids[k++] = x->ids.v[j];
		orch_trace(r, "extra", "region=%s terminating=%zu", region, k);
		rc = orch_terminate_ids(r, region, ids, k,
					"extra: beyond the nodes still needed",
					&done, err);
		free(ids);
	}
	r->terminated += done;
	return rc;
}

/*
 * Send the tag jobs of [t] neither done nor failed ([jp] has room for
 * all); RET how many wait for their instance to become visible ([last]:
 * none, they failed).
 */
static size_t tag_round(struct orch_run *r, struct tagjob *t, size_t k,
			struct orch_job **jp, bool last)
{
	size_t m = 0, later = 0;

	for (size_t i = 0; i < k; i++) {
		if (t[i].slot->tagged || t[i].failed)
			continue;
		jp[m++] = &t[i].job;
	}
	orch_pool_run(r->pool, jp, m);
	for (size_t i = 0; i < m; i++) {
		struct tagjob *tj = (struct tagjob *)(void *)jp[i];

		r->other_calls += tj->job.ae.attempts > 0 ? tj->job.ae.attempts : 1;
		if (tj->job.rc == GB_E_OK) {
			tj->slot->tagged = true;
			continue;
		}
		if (orch_not_visible(&tj->job) && !last) {
			later++;	/* again after the wait */
			continue;
		}
		tj->failed = true;
		orch_trace(r, "tag", "node=%s instance=%s failed: %s", tj->slot->name,
			   tj->slot->instance_id, tj->job.err.text);
	}
	return later;
}

gb_err_t orch_tag_nodes(struct orch_run *r, gb_error_t *err)
{
	size_t n = untagged(r), k = 0, later;
	double wait = ORCH_VISIBLE_FIRST, waited = 0, w = 0;
	struct tagjob *t;
	struct orch_job **jp;

	if (n == 0)
		return GB_E_OK;
	t = calloc(n, sizeof(*t));
	jp = calloc(n, sizeof(*jp));
	if (!t || !jp) {
		free(t);
		free(jp);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < r->n && k < n; i++) {
		struct slot *s = &r->slots[i];

		if (!s->instance_id || s->tagged)
			continue;
		t[k].slot = s;
		t[k].id[0] = s->instance_id;
		node_name_tags(t[k].kv, s->name);
		t[k].job.kind = ORCH_JOB_TAGS;
		t[k].job.region = s->region;
		t[k].job.ids = t[k].id;
		t[k].job.n_ids = 1;
		t[k].job.tags = t[k].kv;
		t[k].job.n_tags = 2;
		k++;
	}
	/* fresh ids may not be visible yet: those are tagged again, later */
	while ((later = tag_round(r, t, k, jp, false)) > 0) {
		if (!(w = orch_visible_wait(&wait, waited)))
			break;
		gb_log_info("tag_retry req=%s n=%zu code=InvalidInstanceID.NotFound wait=%.2f",
			    r->req->id, later, w);
		orch_sleep(r->o, w);
		waited += w;
	}
	if (later)
		tag_round(r, t, k, jp, true);
	if (waited > 0)
		orch_trace(r, "tag", "retried %.2f s for InvalidInstanceID.NotFound; %zu of %zu instances still untagged",
			   waited, untagged(r), k);
	free(t);
	free(jp);
	return GB_E_OK;
}

gb_err_t orch_calls_process(struct orch_run *r, struct orch_call **calls,
			    size_t n, gb_error_t *err)
{
	struct extras x = { { 0 }, { 0 } };
	gb_err_t rc;

	/*
	 * The answers at hand in one transaction: their instances, attempts
	 * and trace lines are written together or not at all (a lost write
	 * leaves instances that reconcile finds by their request tag).
	 */
	rc = n > 0 ? gb_state_tx_begin(r->st, err) : GB_E_OK;
	for (size_t i = 0; i < n && !rc; i++)
		rc = process(r, calls[i], &x, err);
	if (n > 0 && !rc)
		rc = gb_state_tx_commit(r->st, err);
	if (n > 0 && rc)
		gb_state_tx_rollback(r->st);
	if (!rc)
		rc = kill_extras(r, &x, err);
	gb_strv_free(&x.ids);
	gb_strv_free(&x.regions);
	if (!rc)
		rc = orch_check(r, "wave", err);
	return rc;
}

/* Tell the other requests of this worker which pools [calls] ask. */
static void announce(struct orch_run *r, struct orch_call **calls, size_t n)
{
	double now = orch_mono(r->o);

	for (size_t i = 0; i < n; i++) {
		struct orch_job *j = &calls[i]->job;

		if (j->board_key && !j->board_flying &&
		    !orch_board_fly(r->o->board, j->board_key, r, now))
			j->board_key = NULL;	/* out of memory: unannounced */
	}
}

bool orch_calls_send(struct orch_run *r, struct orch_call **calls, size_t n)
{
	struct orch_job **jp = calloc(n ? n : 1, sizeof(*jp));
	bool ok;

	if (!jp)
		return false;
	for (size_t i = 0; i < n; i++)
		jp[i] = &calls[i]->job;
	announce(r, calls, n);
	ok = orch_pool_submit(r->pool, jp, n);
	for (size_t i = 0; i < n && !ok; i++) {	/* not sent after all */
		if (jp[i]->board_key)
			orch_board_land(r->o->board, jp[i]->board_key, r, orch_mono(r->o),
					false, false, r->req->id, "");
		jp[i]->board_flying = false;	/* orch_wave() announces it again */
	}
	free(jp);
	return ok;
}

size_t orch_calls_answered(struct orch_run *r, struct orch_call **out,
			   size_t max)
{
	struct orch_job *jp[GB_ORCH_MAX_PARALLEL];
	size_t n;

	n = orch_pool_collect(r->pool, jp, max < GB_ARRAY_LEN(jp) ? max : GB_ARRAY_LEN(jp));
	/* the job is the first member of its call */
	for (size_t i = 0; i < n; i++)
		out[i] = (struct orch_call *)(void *)jp[i];
	return n;
}

gb_err_t orch_wave(struct orch_run *r, struct orch_call **calls, size_t n,
		   gb_error_t *err)
{
	struct orch_job **jp = calloc(n ? n : 1, sizeof(*jp));

	if (!jp)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		jp[i] = &calls[i]->job;
	announce(r, calls, n);
	orch_pool_run(r->pool, jp, n);
	free(jp);
	return orch_calls_process(r, calls, n, err);
}

/* A call for [pool] with the first [k] empty slots not [used] yet. */
struct orch_call *orch_call_new(struct orch_run *r, size_t pool, int min,
				  int max, int k, bool *used)
{
	struct orch_call *c = calloc(1, sizeof(*c));
	int got = 0;

	if (max < k)
		max = k;	/* the node list holds at least the k nodes */
	if (!c || !(c->nodes = calloc((size_t)(max > 0 ? max : 1), sizeof(*c->nodes)))) {
		free(c);
		return NULL;
	}
	c->pool = pool;
	c->min = min;
	c->max = max;
	for (int i = 0; i < r->n && got < k; i++) {
		if (r->slots[i].state != SLOT_EMPTY || (used && used[i]))
			continue;
		c->nodes[got++] = r->slots[i].name;
		if (used)
			used[i] = true;
	}
	c->n_new = got;
	return c;
}
