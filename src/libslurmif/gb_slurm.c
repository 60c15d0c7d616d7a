/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_slurm.c - libslurm glue: hostlists, node updates, node and job reads,
 * reservations
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "gb_log.h"
#include "gb_slurm.h"
#include "gb_slurm_release.h"
#include "gb_util.h"
#include "slurm_compat.h"

/* Slurm's compiled-in default (Debian and upstream default sysconfdir). */
#define SLURM_DEFAULT_CONF "/etc/slurm/slurm.conf"

static pthread_mutex_t slurm_mu = PTHREAD_MUTEX_INITIALIZER;
static bool slurm_inited;

/* GB_E_SLURM with Slurm's message for its current errno. */
static gb_err_t slurm_fail(gb_error_t *err, const char *what, const char *nodes)
{
	int e = errno;	/* libslurm sets errno (slurm_get_errno() only read it) */

	return gb_errorf(err, GB_E_SLURM, "%s%s%s: %s (Slurm error %d)", what,
			 nodes ? " " : "", nodes ? nodes : "", slurm_strerror(e), e);
}

/*****************************************************************************
 *  Hostlists
 *****************************************************************************/

/*
 * libslurm refuses a bracket range of more than MAX_RANGE (64 * 1024)
 * hosts ("_parse_single_range: Too many hosts in range", hostlist.c), fewer
 * than the 100000 nodes a request may hold, and Slurm's own ranged strings
 * can name more ("gpu-[1-100000]" for nodes defined on two lines).
 */
#define SLURM_MAX_RANGE 65536ul

/* "lo-hi" of [len] bytes, digits only.  OUT width: strlen(lo), as Slurm's. */
static bool parse_range(const char *s, size_t len, unsigned long *lo,
			unsigned long *hi, int *width)
{
	const char *dash = memchr(s, '-', len);
	char num[24];

	if (!dash || dash == s || dash == s + len - 1 || dash - s > 18 ||
	    s + len - dash - 1 > 18)
		return false;
	for (const char *p = s; p < s + len; p++)
		if (p != dash && (*p < '0' || *p > '9'))
			return false;
	memcpy(num, s, dash - s);
	num[dash - s] = '\0';
	*lo = strtoul(num, NULL, 10);
	*width = (int)(dash - s);
	memcpy(num, dash + 1, s + len - dash - 1);
	num[s + len - dash - 1] = '\0';
	*hi = strtoul(num, NULL, 10);
	return *lo <= *hi;
}

/*
 * [expr] with every bracket range over SLURM_MAX_RANGE hosts cut into
 * consecutive pieces ("[1-100000]" -> "[1-65536,65537-100000]"), each
 * low end zero-padded to the range's width: the same hosts, in the same
 * order, with the same names.  Anything else is copied for libslurm to
 * judge.
 */
static void split_ranges(const char *expr, struct gb_buf *b)
{
	bool in = false;

	for (const char *p = expr; *p;) {
		unsigned long lo, hi;
		size_t len;
		int w;

		if (!in || *p == ',' || *p == ']') {
			in = *p == '[' || (in && *p != ']');
			gb_buf_putc(b, *p++);
			continue;
		}
		len = strcspn(p, ",]");
		if (!parse_range(p, len, &lo, &hi, &w) || hi - lo < SLURM_MAX_RANGE) {
			gb_buf_append(b, p, len);
		} else {
			for (unsigned long v = lo; v <= hi && v >= lo; v += SLURM_MAX_RANGE) {
				unsigned long end = hi - v < SLURM_MAX_RANGE ? hi
								 : v + SLURM_MAX_RANGE - 1;

				gb_buf_printf(b, "%s%0*lu-%0*lu", v == lo ? "" : ",", w, v, w, end);
			}
		}
		p += len;
	}
}

gb_err_t gb_slurm_hostlist_expand(const char *expr, size_t max,
				  struct gb_strv *out, gb_error_t *err)
{
	struct hostlist *hl = NULL;	/* slurm_compat.h: hostlist_t */
	struct gb_buf split = GB_BUF_INIT;
	char *h = NULL;
	gb_err_t rc = GB_E_OK;
	int count;

	if (!expr || !*expr)
		return gb_errorf(err, GB_E_INVALID, "empty host list");
	/* libslurm accepts "a[1-" as a literal name: reject brackets that
	 * do not pair up before handing it over. */
	for (const char *p = expr, *open = NULL; *p || open; p++) {
		if (!*p || (*p == '[' && open) || (*p == ']' && !open))
			return gb_errorf(err, GB_E_INVALID,
					 "malformed host list \"%s\": unbalanced brackets",
					 expr);
		if (*p == '[')
			open = p;
		else if (*p == ']')
			open = NULL;
	}
	split_ranges(expr, &split);
	if (gb_buf_failed(&split)) {
		gb_buf_free(&split);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	hl = slurm_hostlist_create(gb_buf_str(&split));
	gb_buf_free(&split);
	if (!hl)
		return gb_errorf(err, GB_E_INVALID, "malformed host list \"%s\"", expr);
	count = slurm_hostlist_count(hl);
	if (count <= 0 || (size_t)count > max) {
		rc = gb_errorf(err, GB_E_INVALID, "host list \"%s\": %d hosts (limit %zu)",
			       expr, count, max);
		goto out;
	}
	while ((h = slurm_hostlist_shift(hl))) {
		if (gb_strv_add(out, h)) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			break;
		}
		free(h);
		h = NULL;
	}
out:
	free(h);
	slurm_hostlist_destroy(hl);
	return rc;
}

gb_err_t gb_slurm_hostlist_compress(char *const *names, size_t n, char **out,
				    gb_error_t *err)
{
	struct hostlist *hl = slurm_hostlist_create(NULL);
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	if (!hl)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (slurm_hostlist_push_host(hl, names[i]) <= 0) {
			rc = gb_errorf(err, GB_E_INVALID, "bad host name \"%s\"", names[i]);
			goto out;
		}
	}
	slurm_hostlist_uniq(hl);	/* sorts, then drops duplicates */
	if (!(*out = compat_hostlist_ranged(hl)))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	slurm_hostlist_destroy(hl);
	return rc;
}

/*****************************************************************************
 *  Init
 *****************************************************************************/

gb_err_t gb_slurm_init(gb_error_t *err)
{
	const char *conf = getenv("SLURM_CONF");
	gb_err_t rc = GB_E_OK;
	gb_error_t e;

	pthread_mutex_lock(&slurm_mu);
	if (slurm_inited)
		goto out;
	if (conf && *conf && access(conf, R_OK) != 0) {
		rc = gb_errorf(err, GB_E_SLURM, "SLURM_CONF=%s: %s", conf, strerror(errno));
		goto out;
	}
	if ((!conf || !*conf) && access(SLURM_DEFAULT_CONF, R_OK) != 0) {
		/* Configless mode would send a DNS SRV query: never. */
		rc = gb_errorf(err, GB_E_SLURM,
			       "SLURM_CONF is not set and %s is not readable: "
			       "refusing Slurm's configless (DNS) lookup",
			       SLURM_DEFAULT_CONF);
		goto out;
	}
	/* libslurm takes a FIFO or a device for an empty file and fatal()s:
	 * the program would exit, the nodes untouched, the reason unsaid.
	 * Its size is libslurm's business: no bound here. */
	if (gb_file_check(conf && *conf ? conf : SLURM_DEFAULT_CONF, SIZE_MAX, &e)) {
		rc = gb_errorf(err, GB_E_SLURM, "%s", e.text);
		goto out;
	}
	slurm_init(NULL);
	slurm_inited = true;
out:
	pthread_mutex_unlock(&slurm_mu);
	return rc;
}

/*****************************************************************************
 *  Node updates
 *****************************************************************************/

const char *gb_slurm_action_name(enum gb_slurm_node_action action)
{
	switch (action) {
	case GB_SLURM_DOWN: return "down";
	case GB_SLURM_POWER_DOWN_FORCE: return "power_down_force";
	case GB_SLURM_POWER_DOWN: return "power_down";
	case GB_SLURM_RESUME: return "resume";
	case GB_SLURM_POWER_DOWN_ASAP: return "power_down_asap";
	}
	return "invalid";
}

/*
 * Slurm could not be reached (slurmctld down, network): every further RPC
 * would fail the same way, each after libslurm's own connect retries
 * (about MessageTimeout seconds).
 */
static bool unreachable(int e)
{
	return (e >= SLURM_UNEXPECTED_MSG_ERROR && e < SLURM_NO_CHANGE_IN_DATA) ||
	       e == ETIMEDOUT || e == ECONNREFUSED || e == EHOSTUNREACH;
}

/* One RPC; [msg] is filled by the caller. Takes the lock. OUT *serr. */
static gb_err_t update_rpc(update_node_msg_t *msg, const char *what,
			   int *serr, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	*serr = 0;
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited) {
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	} else if (slurm_update_node(msg) != SLURM_SUCCESS) {
		*serr = errno;
		rc = slurm_fail(err, what, msg->node_names);
	}
	pthread_mutex_unlock(&slurm_mu);
	return rc;
}

/* "a,b,c" of names[from..to) (the order is the index match). */
static char *join(char *const *v, size_t from, size_t to)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = from; i < to; i++) {
		if (i > from)
			gb_buf_putc(&b, ',');
		gb_buf_puts(&b, v[i]);
	}
	return gb_buf_failed(&b) ? (gb_buf_free(&b), NULL) : gb_buf_steal(&b);
}

struct batch_op {
	char *const *names, *const *addrs, *const *hostnames;
	enum gb_slurm_node_action action;	/* when no addresses */
	const char *reason;
	bool addr_op;
	const char *features_act;	/* set: an ActiveFeatures update alone */
};

static void fill_state(update_node_msg_t *m, const struct batch_op *op)
{
	switch (op->action) {
	case GB_SLURM_DOWN:
		m->node_state = NODE_STATE_DOWN;
		break;
	case GB_SLURM_POWER_DOWN_FORCE:	/* as scontrol's POWER_DOWN_FORCE */
		m->node_state = NODE_STATE_POWER_DOWN | NODE_STATE_POWERED_DOWN;
		break;
	case GB_SLURM_POWER_DOWN:
		m->node_state = NODE_STATE_POWER_DOWN;
		break;
	case GB_SLURM_RESUME:
		m->node_state = NODE_RESUME;
		break;
	case GB_SLURM_POWER_DOWN_ASAP:	/* as scontrol's POWER_DOWN_ASAP */
		m->node_state = NODE_STATE_POWER_DOWN | NODE_STATE_POWER_DRAIN;
		break;
	}
	m->reason = (char *)op->reason;
	compat_set_reason_uid(m, (uint32_t)getuid());
}

/* Nodes [from, to) in one RPC.  OUT *serr Slurm's errno of a failed RPC. */
static gb_err_t run_batch(const struct batch_op *op, size_t from, size_t to,
			  int *serr, gb_error_t *err)
{
	update_node_msg_t m;
	char *names = NULL, *addrs = NULL, *hosts = NULL;
	gb_err_t rc = GB_E_OK;

	*serr = 0;
	slurm_init_update_node_msg(&m);
	if (op->addr_op) {
		names = join(op->names, from, to);
		if (op->addrs)
			addrs = join(op->addrs, from, to);
		if (op->hostnames)
			hosts = join(op->hostnames, from, to);
		if (!names || (op->addrs && !addrs) || (op->hostnames && !hosts)) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
		m.node_addr = addrs;
		m.node_hostname = hosts;
	} else {
		rc = gb_slurm_hostlist_compress(op->names + from, to - from, &names, err);
		if (rc)
			goto out;
		if (op->features_act)
			m.features_act = (char *)op->features_act;
		else
			fill_state(&m, op);
	}
	m.node_names = names;
	rc = update_rpc(&m, op->addr_op ? "update NodeAddr" :
			op->features_act ? "update ActiveFeatures" :
			gb_slurm_action_name(op->action), serr, err);
out:
	free(names);
	free(addrs);
	free(hosts);
	return rc;
}

struct batch_result {
	size_t failed;
	gb_err_t first;
	gb_error_t *err;
};

static void batch_failed(struct batch_result *br, size_t n, const gb_error_t *e1)
{
	br->failed += n;
	if (!br->first) {
		br->first = e1->code;
		if (br->err)
			*br->err = *e1;
	}
}

/*
 * slurmctld stops a batch at its first unknown node (node_mgr.c): then
 * the batch is retried node by node, so every good node is updated.  When
 * slurmctld cannot be reached the rest is given up at once.  RET false
 * when the rest is given up.
 */
static bool retry_one_by_one(const struct batch_op *op, size_t from, size_t to,
			     struct batch_result *br)
{
	gb_error_t e1;
	int serr;

	for (size_t i = from; i < to; i++) {
		if (run_batch(op, i, i + 1, &serr, &e1) == GB_E_OK)
			continue;
		if (unreachable(serr)) {
			batch_failed(br, to - i, &e1);
			return false;
		}
		batch_failed(br, 1, &e1);
	}
	return true;
}

static gb_err_t run_batches(const struct batch_op *op, size_t n,
			    size_t *n_failed, gb_error_t *err)
{
	struct batch_result br = { 0, GB_E_OK, err };

	for (size_t from = 0; from < n; from += GB_SLURM_UPDATE_BATCH) {
		size_t to = from + GB_SLURM_UPDATE_BATCH < n ? from + GB_SLURM_UPDATE_BATCH : n;
		gb_error_t e1;
		int serr;

		if (run_batch(op, from, to, &serr, &e1) == GB_E_OK)
			continue;
		if (unreachable(serr)) {
			gb_log_error("slurm_unreachable nodes_given_up=%zu error=%s", n - from,
				     GB_LOG_Q(e1.text));
			batch_failed(&br, n - from, &e1);
			break;
		}
		if (to - from == 1 || serr != ESLURM_INVALID_NODE_NAME) {
			batch_failed(&br, to - from, &e1);
			continue;
		}
		gb_log_warn("slurm_update_batch_failed nodes=%zu error=%s retry=per_node",
			    to - from, GB_LOG_Q(e1.text));
		if (!retry_one_by_one(op, from, to, &br)) {
			batch_failed(&br, n - to, &e1);
			break;
		}
	}
	if (n_failed)
		*n_failed = br.failed;
	return br.first;
}

gb_err_t gb_slurm_nodes_set_addr(char *const *names, char *const *addrs,
				 char *const *hostnames, size_t n,
				 size_t *n_failed, gb_error_t *err)
{
	struct batch_op op = { names, addrs, hostnames, GB_SLURM_DOWN, NULL, true };

	if (n_failed)
		*n_failed = 0;
	if (!addrs && !hostnames)
		return GB_E_OK;
	return run_batches(&op, n, n_failed, err);
}

gb_err_t gb_slurm_nodes_clear_addr(char *const *names, size_t n,
				   size_t *n_failed, gb_error_t *err)
{
	return gb_slurm_nodes_set_addr(names, names, names, n, n_failed, err);
}

gb_err_t gb_slurm_nodes_update(enum gb_slurm_node_action action,
			       char *const *names, size_t n,
			       const char *reason, size_t *n_failed,
			       gb_error_t *err)
{
	struct batch_op op = { names, NULL, NULL, action, reason, false };

	if (n_failed)
		*n_failed = 0;
	if ((action == GB_SLURM_DOWN || action == GB_SLURM_POWER_DOWN_ASAP) &&
	    (!reason || !*reason))
		return gb_errorf(err, GB_E_INVALID, "setting nodes %s needs a reason",
				 gb_slurm_action_name(action));
	return run_batches(&op, n, n_failed, err);
}

gb_err_t gb_slurm_nodes_set_active(char *const *names, size_t n,
				   const char *features_act, size_t *n_failed,
				   gb_error_t *err)
{
	struct batch_op op = { names, NULL, NULL, GB_SLURM_DOWN, NULL, false,
			       features_act ? features_act : "" };

	if (n_failed)
		*n_failed = 0;
	return run_batches(&op, n, n_failed, err);
}

char *gb_slurm_features_without(const char *avail, const char *const *drop,
				size_t n_drop)
{
	struct gb_buf b = GB_BUF_INIT;
	const char *p = avail ? avail : "";

	while (*p) {
		size_t len = strcspn(p, ",");
		bool dropped = false;

		for (size_t i = 0; i < n_drop && !dropped; i++)
			dropped = strlen(drop[i]) == len && strncmp(drop[i], p, len) == 0;
		if (len && !dropped)
			gb_buf_printf(&b, "%s%.*s", b.len ? "," : "", (int)len, p);
		p += len + (p[len] == ',');
	}
	if (gb_buf_failed(&b)) {
		gb_buf_free(&b);
		return NULL;
	}
	return b.len ? gb_buf_steal(&b) : strdup("");
}

/*****************************************************************************
 *  Reading nodes
 *****************************************************************************/

static char *state_string(uint32_t s)
{
	static const char *const base[] = { "UNKNOWN", "DOWN", "IDLE", "ALLOCATED",
					    "ERROR", "MIXED", "FUTURE" };
	static const struct { uint32_t bit; const char *name; } flags[] = {
		{ NODE_STATE_CLOUD, "CLOUD" },
		{ NODE_STATE_COMPLETING, "COMPLETING" },
		{ NODE_STATE_DRAIN, "DRAIN" },
		{ NODE_STATE_FAIL, "FAIL" },
		{ NODE_STATE_INVALID_REG, "INVALID_REG" },
		{ NODE_STATE_MAINT, "MAINTENANCE" },
		{ NODE_STATE_POWER_DOWN, "POWER_DOWN" },
		{ NODE_STATE_POWER_UP, "POWER_UP" },
		{ NODE_STATE_POWERED_DOWN, "POWERED_DOWN" },
		{ NODE_STATE_POWERING_DOWN, "POWERING_DOWN" },
		{ NODE_STATE_NO_RESPOND, "NOT_RESPONDING" },
		{ NODE_STATE_POWERING_UP, "POWERING_UP" },
		{ NODE_STATE_REBOOT_REQUESTED, "REBOOT_REQUESTED" },
	};
	struct gb_buf b = GB_BUF_INIT;
	uint32_t bs = s & NODE_STATE_BASE;

	gb_buf_puts(&b, bs < GB_ARRAY_LEN(base) ? base[bs] : "UNKNOWN");
	for (size_t i = 0; i < GB_ARRAY_LEN(flags); i++) {
		if (s & flags[i].bit)
			gb_buf_printf(&b, "+%s", flags[i].name);
	}
	return gb_buf_failed(&b) ? (gb_buf_free(&b), NULL) : gb_buf_steal(&b);
}

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gb_slurm_node *)a)->name,
		      ((const struct gb_slurm_node *)b)->name);
}

static gb_err_t copy_node(const node_info_t *ni, struct gb_slurm_node *n)
{
	uint32_t s = ni->node_state, bs = s & NODE_STATE_BASE;

	n->name = strdup(ni->name);
	n->addr = strdup(ni->node_addr ? ni->node_addr : ni->name);
	n->hostname = strdup(ni->node_hostname ? ni->node_hostname : ni->name);
	n->reason = ni->reason && *ni->reason ? strdup(ni->reason) : NULL;
	n->features = strdup(ni->features ? ni->features : "");
	n->features_act = strdup(ni->features_act ? ni->features_act :
				 ni->features ? ni->features : "");
	n->state_str = state_string(s);
	if (!n->name || !n->addr || !n->hostname || !n->state_str || !n->features ||
	    !n->features_act || (ni->reason && *ni->reason && !n->reason))
		return GB_E_NOMEM;
	n->reason_time = n->reason ? (double)ni->reason_time : 0;
	n->state = s;
	n->down = bs == NODE_STATE_DOWN;
	n->idle = bs == NODE_STATE_IDLE;
	n->allocated = bs == NODE_STATE_ALLOCATED || bs == NODE_STATE_MIXED;
	n->cloud = s & NODE_STATE_CLOUD;
	n->drain = s & NODE_STATE_DRAIN;
	n->not_responding = s & NODE_STATE_NO_RESPOND;
	n->powered_down = s & NODE_STATE_POWERED_DOWN;
	n->powering_up = s & NODE_STATE_POWERING_UP;
	n->powering_down = s & NODE_STATE_POWERING_DOWN;
	n->power_down_requested = s & NODE_STATE_POWER_DOWN;
	return GB_E_OK;
}

gb_err_t gb_slurm_nodes_load(struct gb_slurm_node_list **out, gb_error_t *err)
{
	struct gb_slurm_node_list *l = NULL;
	node_info_msg_t *msg = NULL;
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited)
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	else if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS)
		rc = slurm_fail(err, "slurm_load_node", NULL);
	pthread_mutex_unlock(&slurm_mu);
	if (rc)
		return rc;
	if (!(l = calloc(1, sizeof(*l))) ||
	    !(l->v = calloc(msg->record_count ? msg->record_count : 1, sizeof(*l->v)))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const node_info_t *ni = &msg->node_array[i];

		if (!ni->name || !*ni->name)
			continue;	/* hidden: packed without a name */
		if (copy_node(ni, &l->v[l->n++])) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
	}
	qsort(l->v, l->n, sizeof(*l->v), node_cmp);
	*out = l;
	l = NULL;
out:
	gb_slurm_node_list_free(l);
	slurm_free_node_info_msg(msg);
	return rc;
}

void gb_slurm_node_list_free(struct gb_slurm_node_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].addr);
		free(l->v[i].hostname);
		free(l->v[i].reason);
		free(l->v[i].features);
		free(l->v[i].features_act);
		free(l->v[i].state_str);
	}
	free(l->v);
	free(l);
}

const struct gb_slurm_node *gb_slurm_node_find(const struct gb_slurm_node_list *l,
					       const char *name)
{
	struct gb_slurm_node key = { .name = (char *)name };

	if (!l || !name)
		return NULL;
	return bsearch(&key, l->v, l->n, sizeof(*l->v), node_cmp);
}

/*****************************************************************************
 *  Jobs
 *****************************************************************************/

static gb_err_t dup_field(const char *v, char **out, gb_error_t *err)
{
	if (v && !(*out = strdup(v)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	return GB_E_OK;
}

/* Every job (slurm_load_jobs) into *msg (slurm_free_job_info_msg). */
static gb_err_t load_all_jobs(job_info_msg_t **msg, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	*msg = NULL;
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited)
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	else if (slurm_load_jobs((time_t)0, msg, SHOW_ALL) != SLURM_SUCCESS)
		rc = slurm_fail(err, "slurm_load_jobs", NULL);
	pthread_mutex_unlock(&slurm_mu);
	return rc;
}

/*
 * Job [job_id] (slurm_load_job) into *msg (slurm_free_job_info_msg), with
 * at least one record.  RET GB_E_NOTFOUND when Slurm does not know it.
 */
static gb_err_t load_one_job(uint32_t job_id, job_info_msg_t **msg,
			     gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;
	int e;

	*msg = NULL;
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited) {
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	} else if (compat_load_job(msg, job_id, SHOW_DETAIL) != SLURM_SUCCESS) {
		e = errno;
		if (e == ESLURM_INVALID_JOB_ID)
			rc = gb_errorf(err, GB_E_NOTFOUND, "job %u: %s", job_id,
				       slurm_strerror(e));
		else
			rc = slurm_fail(err, "slurm_load_job", NULL);
	}
	pthread_mutex_unlock(&slurm_mu);
	if (rc == GB_E_OK && (*msg)->record_count < 1) {
		rc = gb_errorf(err, GB_E_NOTFOUND, "job %u: not found", job_id);
		slurm_free_job_info_msg(*msg);
		*msg = NULL;
	}
	return rc;
}

/* The name of [uid] (Slurm leaves user_name unset in most answers). */
static const char *user_of(uint32_t uid, char *buf, size_t n)
{
	struct passwd pw, *res = NULL;

	if (getpwuid_r((uid_t)uid, &pw, buf, n, &res) != 0 || !res)
		return NULL;
	return res->pw_name;
}

/*
 * A job's state as squeue spells it: the base state, then the flags that
 * matter to a cloud job ("RUNNING+CONFIGURING": its nodes are booting).
 * libslurm exports no such function.
 */
static void job_state_text(uint32_t st, char *buf, size_t n)
{
	static const char *const base[] = {
		"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
		"TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY",
	};
	uint32_t b = st & JOB_STATE_BASE;
	size_t len;

	if (b < sizeof(base) / sizeof(base[0]))
		snprintf(buf, n, "%s", base[b]);
	else
		snprintf(buf, n, "STATE_%u", b);
	len = strlen(buf);
	if (st & JOB_CONFIGURING)
		len += (size_t)snprintf(buf + len, n > len ? n - len : 0, "+CONFIGURING");
	if (st & JOB_COMPLETING)
		len += (size_t)snprintf(buf + len, n > len ? n - len : 0, "+COMPLETING");
	if (st & JOB_REQUEUE)
		snprintf(buf + len, n > len ? n - len : 0, "+REQUEUED");
}

/* Slurm's word for the reasons a cloud job waits; others by number. */
static void job_reason_text(uint32_t r, char *buf, size_t n)
{
	static const struct { uint32_t r; const char *s; } names[] = {
		{ WAIT_NO_REASON, NULL },
		{ WAIT_PRIORITY, "Priority" },
		{ WAIT_DEPENDENCY, "Dependency" },
		{ WAIT_RESOURCES, "Resources" },
		{ WAIT_PART_NODE_LIMIT, "PartitionNodeLimit" },
		{ WAIT_PART_TIME_LIMIT, "PartitionTimeLimit" },
		{ WAIT_PART_DOWN, "PartitionDown" },
		{ WAIT_PART_INACTIVE, "PartitionInactive" },
		{ WAIT_HELD, "JobHeldAdmin" },
		{ WAIT_HELD_USER, "JobHeldUser" },
		{ WAIT_TIME, "BeginTime" },
		{ WAIT_LICENSES, "Licenses" },
		{ WAIT_RESERVATION, "Reservation" },
		{ WAIT_NODE_NOT_AVAIL, "ReqNodeNotAvail" },
		{ FAIL_LAUNCH, "JobLaunchFailure" },
		{ FAIL_DOWN_PARTITION, "PartitionDown" },
		{ FAIL_DOWN_NODE, "NodeDown" },
		{ FAIL_BAD_CONSTRAINTS, "BadConstraints" },
		{ FAIL_SYSTEM, "SystemFailure" },
		{ FAIL_TIMEOUT, "TimeLimit" },
		{ FAIL_INACTIVE_LIMIT, "InactiveLimit" },
		{ FAIL_ACCOUNT, "InvalidAccount" },
	};

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].r != r)
			continue;
		if (names[i].s)
			snprintf(buf, n, "%s", names[i].s);
		return;
	}
	snprintf(buf, n, "reason %u", r);
}

gb_err_t gb_slurm_job_text(uint32_t job_id, struct gb_slurm_job_text *out,
			   gb_error_t *err)
{
	char state[64], reason[64];
	job_info_msg_t *msg = NULL;
	const slurm_job_info_t *j;
	char pwbuf[1024];
	gb_err_t rc;

	memset(out, 0, sizeof(*out));
	if ((rc = load_one_job(job_id, &msg, err)))
		return rc;
	j = &msg->job_array[0];
	if ((rc = dup_field(j->admin_comment, &out->admin_comment, err)) ||
	    (rc = dup_field(j->name, &out->name, err)) ||
	    (rc = dup_field(j->comment, &out->comment, err)) ||
	    (rc = dup_field(j->features, &out->features, err)) ||
	    (rc = dup_field(j->user_name && *j->user_name ? j->user_name
				: user_of(j->user_id, pwbuf, sizeof(pwbuf)),
			    &out->user, err)) ||
	    (rc = dup_field(j->account, &out->account, err)) ||
	    (rc = dup_field(j->partition, &out->partition, err)) ||
	    (job_state_text(j->job_state, state, sizeof(state)),
	     rc = dup_field(state, &out->state, err)) ||
	    (job_reason_text(j->state_reason, reason, sizeof(reason)),
	     rc = dup_field(reason[0] ? reason : NULL, &out->reason, err)) ||
	    (rc = dup_field(j->nodes, &out->nodes, err)))
		gb_slurm_job_text_clear(out);
	out->num_nodes = j->num_nodes;
	out->time_limit = j->time_limit == INFINITE || j->time_limit == NO_VAL ? 0 :
			  j->time_limit;
	out->submit_time = (double)j->submit_time;
	out->start_time = (double)j->start_time;
	slurm_free_job_info_msg(msg);
	return rc;
}

void gb_slurm_job_text_clear(struct gb_slurm_job_text *t)
{
	if (!t)
		return;
	free(t->admin_comment);
	free(t->name);
	free(t->comment);
	free(t->features);
	free(t->user);
	free(t->account);
	free(t->partition);
	free(t->state);
	free(t->reason);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool holds_nodes(const slurm_job_info_t *j)
{
	uint32_t base = j->job_state & JOB_STATE_BASE;

	if (!j->nodes || !*j->nodes)
		return false;
	return base == JOB_RUNNING || base == JOB_SUSPENDED ||
	       (j->job_state & (JOB_CONFIGURING | JOB_COMPLETING));
}

/* Whether job [j] holds one of [sorted] ([n] names). */
static gb_err_t job_touches(const slurm_job_info_t *j, char *const *sorted, size_t n,
			    bool *hit, gb_error_t *err)
{
	struct gb_strv mine = { 0 };
	gb_err_t rc;

	*hit = false;
	if ((rc = gb_slurm_hostlist_expand(j->nodes, 1000000, &mine, err)))
		return rc;
	for (size_t i = 0; i < mine.n && !*hit; i++)
		*hit = bsearch(&mine.v[i], sorted, n, sizeof(char *), cmp_name) != NULL;
	gb_strv_free(&mine);
	return GB_E_OK;
}

/* Slurm's name of the states holds_nodes() takes (its own is private). */
static const char *job_state_name(uint32_t s)
{
	if (s & JOB_COMPLETING)
		return "COMPLETING";
	if (s & JOB_CONFIGURING)
		return "CONFIGURING";
	return (s & JOB_STATE_BASE) == JOB_SUSPENDED ? "SUSPENDED" : "RUNNING";
}

static gb_err_t copy_job(const slurm_job_info_t *j, struct gb_slurm_job *o, gb_error_t *err)
{
	char pwbuf[1024];

	o->job_id = j->job_id;
	o->user_id = j->user_id;
	o->requeue = j->requeue != 0;
	if (!(o->state = strdup(job_state_name(j->job_state))) ||
	    !(o->nodes = strdup(j->nodes)))
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (dup_field(j->user_name && *j->user_name ? j->user_name : user_of(j->user_id, pwbuf,
					sizeof(pwbuf)), &o->user, err))
		return GB_E_NOMEM;
	return dup_field(j->name, &o->name, err);
}

gb_err_t gb_slurm_jobs_on(char *const *names, size_t n,
			  struct gb_slurm_job_list **out, gb_error_t *err)
{
	struct gb_slurm_job_list *l = NULL;
	job_info_msg_t *msg = NULL;
	char **sorted = NULL;
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	if ((rc = load_all_jobs(&msg, err)))
		return rc;
	if (!(l = calloc(1, sizeof(*l))) ||
	    !(l->v = calloc(msg->record_count ? msg->record_count : 1, sizeof(*l->v))) ||
	    !(sorted = malloc((n ? n : 1) * sizeof(*sorted)))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	memcpy(sorted, names, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_name);
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const slurm_job_info_t *j = &msg->job_array[i];
		bool hit;

		if (!holds_nodes(j))
			continue;
		if ((rc = job_touches(j, sorted, n, &hit, err)))
			goto out;
		if (hit && (rc = copy_job(j, &l->v[l->n++], err)))
			goto out;
	}
	*out = l;
	l = NULL;
out:
	free(sorted);
	gb_slurm_job_list_free(l);
	slurm_free_job_info_msg(msg);
	return rc;
}

void gb_slurm_job_list_free(struct gb_slurm_job_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].user);
		free(l->v[i].name);
		free(l->v[i].state);
		free(l->v[i].nodes);
	}
	free(l->v);
	free(l);
}

/*****************************************************************************
 *  Jobs held for approval
 *****************************************************************************/

/* Pending, priority 0, with a GB_APPROVAL_KEY token: a job gpuburst holds. */
static bool held_by_us(const slurm_job_info_t *j)
{
	char tok[64];

	return (j->job_state & JOB_STATE_BASE) == JOB_PENDING && j->priority == 0 &&
	       gb_approval_token(j->admin_comment, tok, sizeof(tok));
}

static gb_err_t copy_held(const slurm_job_info_t *j, struct gb_slurm_held_job *o,
			  gb_error_t *err)
{
	char pwbuf[1024];
	gb_err_t rc;

	o->job_id = j->job_id;
	o->user_id = j->user_id;
	o->num_nodes = j->num_nodes;
	o->time_limit = j->time_limit == INFINITE || j->time_limit == NO_VAL
				? 0 : j->time_limit;
	o->user_hold = j->state_reason == WAIT_HELD_USER;
	o->gpus = gb_tres_gpus(j->tres_per_job, j->tres_per_node, j->num_nodes);
	o->allocated = holds_nodes(j);
	if ((rc = dup_field(j->user_name && *j->user_name ? j->user_name
				: user_of(j->user_id, pwbuf, sizeof(pwbuf)),
			    &o->user, err)) ||
	    (rc = dup_field(j->account, &o->account, err)) ||
	    (rc = dup_field(j->partition, &o->partition, err)) ||
	    (rc = dup_field(j->name, &o->name, err)) ||
	    (rc = dup_field(j->tres_req_str, &o->tres, err)) ||
	    (rc = dup_field(j->admin_comment ? j->admin_comment : "",
			    &o->admin_comment, err)))
		return rc;
	return GB_E_OK;
}

gb_err_t gb_slurm_jobs_held(struct gb_slurm_held_list **out, gb_error_t *err)
{
	struct gb_slurm_held_list *l = NULL;
	job_info_msg_t *msg = NULL;
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	if ((rc = load_all_jobs(&msg, err)))
		return rc;
	if (!(l = calloc(1, sizeof(*l))) ||
	    !(l->v = calloc(msg->record_count ? msg->record_count : 1, sizeof(*l->v)))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < msg->record_count; i++) {
		if (held_by_us(&msg->job_array[i]) &&
		    (rc = copy_held(&msg->job_array[i], &l->v[l->n++], err)))
			goto out;
	}
	*out = l;
	l = NULL;
out:
	gb_slurm_held_list_free(l);
	slurm_free_job_info_msg(msg);
	return rc;
}

void gb_slurm_held_job_clear(struct gb_slurm_held_job *j)
{
	if (!j)
		return;
	free(j->user);
	free(j->account);
	free(j->partition);
	free(j->name);
	free(j->admin_comment);
	free(j->tres);
	memset(j, 0, sizeof(*j));
}

void gb_slurm_held_list_free(struct gb_slurm_held_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		gb_slurm_held_job_clear(&l->v[i]);
	free(l->v);
	free(l);
}

gb_err_t gb_slurm_job_brief(uint32_t job_id, struct gb_slurm_held_job *out,
			    gb_error_t *err)
{
	job_info_msg_t *msg = NULL;
	gb_err_t rc;

	memset(out, 0, sizeof(*out));
	if ((rc = load_one_job(job_id, &msg, err)))
		return rc;
	if ((rc = copy_held(&msg->job_array[0], out, err)))
		gb_slurm_held_job_clear(out);
	slurm_free_job_info_msg(msg);
	return rc;
}

gb_err_t gb_slurm_job_act(uint32_t job_id, enum gb_slurm_job_action a,
			  const char *admin_comment, gb_error_t *err)
{
	job_desc_msg_t d;
	char what[64], id[16];
	gb_err_t rc = GB_E_OK;
	int r, e = 0;

	static const char *const names[] = { "release", "hold", "cancel", "requeue-hold" };

	snprintf(what, sizeof(what), "%s of job %u", names[a], job_id);
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited) {
		pthread_mutex_unlock(&slurm_mu);
		return gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	}
	/* the job id as text: the one form every release's calls take (26.05
	 * made the numeric ones slurm_step_id_t); the *2 calls answer per job */
	snprintf(id, sizeof(id), "%u", job_id);
	if (a == GB_SLURM_JOB_CANCEL) {
		r = slurm_kill_job2(id, SIGKILL, 0, NULL);
		e = errno;
	} else {
		job_array_resp_msg_t *resp = NULL;

		if (a == GB_SLURM_JOB_REQUEUE_HOLD) {
			r = slurm_requeue2(id, JOB_REQUEUE_HOLD, &resp);
		} else {
			/* _update_job2: libslurm's slurm_update_job() prints an
			 * error for a job_id_str */
			slurm_init_job_desc_msg(&d);
			d.job_id_str = id;
			d.priority = a == GB_SLURM_JOB_HOLD ? 0 : INFINITE;
			d.admin_comment = (char *)admin_comment;
			r = slurm_update_job2(&d, &resp);
		}
		e = errno;
		/* one job, one answer: its own code, when Slurm gave one */
		if (r == SLURM_SUCCESS && resp && resp->job_array_count > 0 &&
		    resp->error_code[0] != SLURM_SUCCESS) {
			r = SLURM_ERROR;
			e = (int)resp->error_code[0];
		}
		slurm_free_job_array_resp(resp);
	}
	if (r != SLURM_SUCCESS) {
		errno = e;	/* slurm_fail() reads it */
		if (e == ESLURM_INVALID_JOB_ID || e == ESLURM_ALREADY_DONE ||
		    e == ESLURM_JOB_FINISHED || e == ESLURM_JOB_NOT_PENDING ||
		    e == ESLURM_JOB_PENDING)
			rc = gb_errorf(err, GB_E_NOTFOUND, "%s: %s", what,
				       slurm_strerror(e));
		else if (e == ESLURM_DISABLED || e == ESLURM_BATCH_ONLY)
			rc = gb_errorf(err, GB_E_PERM, "%s: %s", what,
				       slurm_strerror(e));
		else
			rc = slurm_fail(err, what, NULL);
	}
	pthread_mutex_unlock(&slurm_mu);
	return rc;
}

gb_err_t gb_slurm_held_act(uint32_t job_id, enum gb_slurm_job_action a,
			   const char *value, gb_error_t *err)
{
	struct gb_slurm_job_text t;
	char *comment = NULL;
	gb_err_t rc;

	if (a == GB_SLURM_JOB_REQUEUE_HOLD) {
		gb_error_t e;

		if ((rc = gb_slurm_job_act(job_id, a, NULL, err)))
			return rc;
		a = GB_SLURM_JOB_HOLD;	/* now pending: the comment */
		if (gb_slurm_job_text(job_id, &t, &e) == GB_E_OK) {
			if (gb_approval_comment(t.admin_comment, value, &comment, &e) == GB_E_OK)
				gb_slurm_job_act(job_id, a, comment, &e);
			free(comment);
			gb_slurm_job_text_clear(&t);
		}
		return GB_E_OK;
	}
	if ((rc = gb_slurm_job_text(job_id, &t, err)))
		return rc;
	rc = gb_approval_comment(t.admin_comment, value, &comment, err);
	if (rc == GB_E_OK)
		rc = gb_slurm_job_act(job_id, a, comment, err);
	free(comment);
	gb_slurm_job_text_clear(&t);
	return rc;
}

/*****************************************************************************
 *  Versions (gpuburstctl doctor: the plugin must match slurmctld exactly)
 *****************************************************************************/

char *gb_slurm_built_version(char *buf, size_t n)
{
	/* slurm_version.h has only the number: 0x160508 -> "22.05.8" */
	return gb_slurm_version_str(SLURM_VERSION_NUMBER, buf, n);
}

/* SLURM_VERSION_NUMBER of the headers this was built with. */
unsigned long gb_slurm_built_version_number(void)
{
	return SLURM_VERSION_NUMBER;
}

gb_err_t gb_slurm_ctl_version(char *buf, size_t n, gb_error_t *err)
{
	slurm_conf_t *conf = NULL;
	gb_err_t rc = GB_E_OK;

	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited)
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	else if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
		rc = slurm_fail(err, "slurm_load_ctl_conf", NULL);
	pthread_mutex_unlock(&slurm_mu);
	if (rc == GB_E_OK)
		snprintf(buf, n, "%s", conf->version ? conf->version : "unknown");
	compat_free_ctl_conf(conf);
	return rc;
}

/*****************************************************************************
 *  Power-saving configuration (gpuburstctl doctor)
 *****************************************************************************/

static long seconds32(uint32_t v)
{
	return (v == NO_VAL || v == INFINITE) ? -1 : (long)v;
}

static long seconds16(uint16_t v)
{
	return (v == NO_VAL16 || v == INFINITE16) ? -1 : (long)v;
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

gb_err_t gb_slurm_power_load(struct gb_slurm_power **out, gb_error_t *err)
{
	struct gb_slurm_power *p = NULL;
	partition_info_msg_t *parts = NULL;
	slurm_conf_t *conf = NULL;
	gb_err_t rc = GB_E_OK;

	*out = NULL;
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited)
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	else if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
		rc = slurm_fail(err, "slurm_load_ctl_conf", NULL);
	else if (slurm_load_partitions((time_t)0, &parts, SHOW_ALL) != SLURM_SUCCESS)
		rc = slurm_fail(err, "slurm_load_partitions", NULL);
	pthread_mutex_unlock(&slurm_mu);
	if (rc)
		goto out;
	if (!(p = calloc(1, sizeof(*p))) ||
	    !(p->parts = calloc(parts->record_count ? parts->record_count : 1, sizeof(*p->parts))))
		goto nomem;
	p->suspend_time = seconds32(conf->suspend_time);
	p->resume_timeout = seconds16(conf->resume_timeout);
	if (!(p->slurmctld_params = dup0(conf->slurmctld_params)) ||
	    !(p->suspend_exc_nodes = dup0(conf->suspend_exc_nodes)) ||
	    !(p->suspend_exc_parts = dup0(conf->suspend_exc_parts)))
		goto nomem;
	for (uint32_t i = 0; i < parts->record_count; i++) {
		const partition_info_t *pi = &parts->partition_array[i];
		struct gb_slurm_power_part *pp = &p->parts[p->n_parts++];

		pp->suspend_time = seconds32(pi->suspend_time);
		pp->resume_timeout = seconds16(pi->resume_timeout);
		if (!(pp->name = dup0(pi->name)) || !(pp->nodes = dup0(pi->nodes)))
			goto nomem;
	}
	*out = p;
	p = NULL;
	goto out;
nomem:
	rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	gb_slurm_power_free(p);
	if (parts)
		slurm_free_partition_info_msg(parts);
	if (conf)
		compat_free_ctl_conf(conf);
	return rc;
}

void gb_slurm_power_free(struct gb_slurm_power *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_parts; i++) {
		free(p->parts[i].name);
		free(p->parts[i].nodes);
	}
	free(p->parts);
	free(p->slurmctld_params);
	free(p->suspend_exc_nodes);
	free(p->suspend_exc_parts);
	free(p);
}

/*****************************************************************************
 *  Reservations
 *****************************************************************************/

/* The window: no job outside it may reach into it (gb_slurm.h). */
#define RESV_FLAGS (RESERVE_FLAG_MAINT | RESERVE_FLAG_IGN_JOBS)
/* Slurm wants an access list (ESLURM_RESERVATION_EMPTY without one). */
#define RESV_USERS "root"
#define RESV_NODES_MAX 1000000

/* Slurm keeps whole seconds. */
static time_t whole(double t)
{
	return (time_t)t;
}

/* The start to send: [r]'s, or now when that is past. */
static time_t resv_start(const struct gb_slurm_resv *r, time_t now)
{
	return whole(r->start) > now ? whole(r->start) : now;
}

static gb_err_t resv_check(const struct gb_slurm_resv *r, time_t now, gb_error_t *err)
{
	if (!r->name || !*r->name || strchr(r->name, ','))
		return gb_errorf(err, GB_E_INVALID, "bad reservation name \"%s\"",
				 r->name ? r->name : "");
	if (!r->nodes || !*r->nodes)
		return gb_errorf(err, GB_E_INVALID, "reservation %s: no nodes", r->name);
	if (whole(r->end) <= whole(r->start) || whole(r->end) <= now)
		return gb_errorf(err, GB_E_INVALID,
				 "reservation %s: end %.0f is not after its start %.0f and now",
				 r->name, r->end, r->start);
	return GB_E_OK;
}

/* OUT *msg NEW (slurm_free_reservation_info_msg). */
static gb_err_t resv_load(reserve_info_msg_t **msg, gb_error_t *err)
{
	gb_err_t rc = GB_E_OK;

	*msg = NULL;
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited)
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	else if (slurm_load_reservations((time_t)0, msg) != SLURM_SUCCESS)
		rc = slurm_fail(err, "slurm_load_reservations", NULL);
	pthread_mutex_unlock(&slurm_mu);
	return rc;
}

static const reserve_info_t *resv_find(const reserve_info_msg_t *msg, const char *name)
{
	for (uint32_t i = 0; i < msg->record_count; i++) {
		if (msg->reservation_array[i].name &&
		    strcmp(msg->reservation_array[i].name, name) == 0)
			return &msg->reservation_array[i];
	}
	return NULL;
}

/* The hosts of [expr], sorted, without duplicates. */
static gb_err_t host_set(const char *expr, struct gb_strv *out, gb_error_t *err)
{
	gb_err_t rc = gb_slurm_hostlist_expand(expr, RESV_NODES_MAX, out, err);

	if (rc)
		return rc;
	gb_strv_sort_unique(out);
	return GB_E_OK;
}

/* Whether [want] and Slurm's [have] (may be NULL) name the same hosts. */
static gb_err_t same_hosts(const char *want, const char *have, bool *same, gb_error_t *err)
{
	struct gb_strv a = { 0 }, b = { 0 };
	gb_err_t rc;

	*same = false;
	if (!have || !*have)
		return GB_E_OK;
	if ((rc = host_set(want, &a, err)) || (rc = host_set(have, &b, err)))
		goto out;
	*same = a.n == b.n;
	for (size_t i = 0; i < a.n && *same; i++)
		*same = strcmp(a.v[i], b.v[i]) == 0;
out:
	gb_strv_free(&a);
	gb_strv_free(&b);
	return rc;
}

/* One create or update RPC.  OUT *serr Slurm's errno when it failed. */
static gb_err_t resv_rpc(resv_desc_msg_t *m, bool create, int *serr, gb_error_t *err)
{
	char what[256];
	gb_err_t rc = GB_E_OK;
	char *name = NULL;

	*serr = 0;
	snprintf(what, sizeof(what), "%s reservation %s%s", create ? "create" : "update",
		 m->name, m->node_list ? " on" : "");
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited) {
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	} else if (create ? !(name = slurm_create_reservation(m)) :
			    slurm_update_reservation(m) != SLURM_SUCCESS) {
		*serr = errno;
		rc = slurm_fail(err, what, m->node_list);
	}
	pthread_mutex_unlock(&slurm_mu);
	compat_free_resv_name(name);
	return rc;
}

static gb_err_t resv_create(const struct gb_slurm_resv *r, time_t now, int *serr,
			    gb_error_t *err)
{
	resv_desc_msg_t m;

	slurm_init_resv_desc_msg(&m);
	m.name = (char *)r->name;
	m.node_list = (char *)r->nodes;
	m.start_time = resv_start(r, now);
	m.end_time = whole(r->end);
	m.flags = RESV_FLAGS;
	m.users = (char *)RESV_USERS;
	compat_resv_set_comment(&m, r->comment);
	return resv_rpc(&m, true, serr, err);
}

/* Update what of [cur] differs from [r].  OUT *sent whether an RPC went. */
static gb_err_t resv_update(const struct gb_slurm_resv *r, const reserve_info_t *cur,
			    time_t now, bool *sent, int *serr, gb_error_t *err)
{
	const char *comment = r->comment && *r->comment ? r->comment : NULL;
	resv_desc_msg_t m;
	bool same;
	gb_err_t rc;

	*sent = false;
	*serr = 0;
	slurm_init_resv_desc_msg(&m);
	m.name = (char *)r->name;
	if ((rc = same_hosts(r->nodes, cur->node_list, &same, err)))
		return rc;
	if (!same)
		m.node_list = (char *)r->nodes;
	/* Slurm moves no start of a started reservation (ESLURM_RSV_ALREADY_STARTED) */
	if (cur->start_time > now && cur->start_time != resv_start(r, now))
		m.start_time = resv_start(r, now);
	if (cur->end_time != whole(r->end))
		m.end_time = whole(r->end);
	if ((cur->flags & RESV_FLAGS) != RESV_FLAGS)
		m.flags = RESV_FLAGS;
	if (COMPAT_RESV_COMMENT && gb_strcmp0(compat_resv_comment(cur), comment) != 0) {
		compat_resv_set_comment(&m, comment ? comment : "");	/* "" clears it */
		*sent = true;
	}
	if (m.node_list || m.start_time != (time_t)NO_VAL || m.end_time != (time_t)NO_VAL ||
	    m.flags != NO_VAL64)
		*sent = true;
	return *sent ? resv_rpc(&m, false, serr, err) : GB_E_OK;
}

gb_err_t gb_slurm_resv_ensure(const struct gb_slurm_resv *r, enum gb_slurm_resv_did *did,
			      gb_error_t *err)
{
	gb_err_t rc;

	if (did)
		*did = GB_SLURM_RESV_UNCHANGED;
	if ((rc = resv_check(r, time(NULL), err)))
		return rc;
	/*
	 * Another process may create, start or delete it between the load and
	 * the RPC (ESLURM_RESERVATION_NAME_DUP, ESLURM_RSV_ALREADY_STARTED,
	 * ESLURM_RESERVATION_INVALID): a second look decides again.
	 */
	for (int attempt = 0;; attempt++) {
		reserve_info_msg_t *msg = NULL;
		const reserve_info_t *cur;
		time_t now = time(NULL);
		bool sent = true;
		int serr = 0;

		if ((rc = resv_load(&msg, err)))
			return rc;
		if ((cur = resv_find(msg, r->name)))
			rc = resv_update(r, cur, now, &sent, &serr, err);
		else
			rc = resv_create(r, now, &serr, err);
		slurm_free_reservation_info_msg(msg);
		if (rc == GB_E_OK) {
			if (did && sent)
				*did = cur ? GB_SLURM_RESV_UPDATED : GB_SLURM_RESV_CREATED;
			return GB_E_OK;
		}
		if (attempt > 0 || (serr != ESLURM_RESERVATION_NAME_DUP &&
				    serr != ESLURM_RSV_ALREADY_STARTED &&
				    serr != ESLURM_RESERVATION_INVALID))
			return rc;
	}
}

gb_err_t gb_slurm_resv_delete(const char *name, gb_error_t *err)
{
	reservation_name_msg_t m = { .name = (char *)name };
	gb_err_t rc = GB_E_OK;

	if (!name || !*name)
		return gb_errorf(err, GB_E_INVALID, "no reservation name");
	pthread_mutex_lock(&slurm_mu);
	if (!slurm_inited)
		rc = gb_errorf(err, GB_E_INTERNAL, "gb_slurm_init() was not called");
	else if (slurm_delete_reservation(&m) != SLURM_SUCCESS &&
		 errno != ESLURM_RESERVATION_INVALID)	/* absent: done */
		rc = slurm_fail(err, "delete reservation", name);
	pthread_mutex_unlock(&slurm_mu);
	return rc;
}

gb_err_t gb_slurm_resv_list(const char *prefix,
			    int (*cb)(const struct gb_slurm_resv *r, void *arg),
			    void *arg, gb_error_t *err)
{
	reserve_info_msg_t *msg = NULL;
	gb_err_t rc;

	if ((rc = resv_load(&msg, err)))
		return rc;
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const reserve_info_t *ri = &msg->reservation_array[i];
		struct gb_slurm_resv r = {
			ri->name, ri->node_list ? ri->node_list : "", (double)ri->start_time,
			(double)ri->end_time, compat_resv_comment(ri)
		};

		if (!ri->name || (prefix && !gb_str_has_prefix(ri->name, prefix)))
			continue;
		if (cb(&r, arg)) {
			rc = GB_E_CANCELLED;
			break;
		}
	}
	slurm_free_reservation_info_msg(msg);
	return rc;
}
