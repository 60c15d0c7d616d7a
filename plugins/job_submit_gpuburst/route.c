/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * route.c - which burst nodesets can run a job, and what to tell its user
 *
 * A job is "ours" when it names a burst partition (a nodeset's partition),
 * or, with job_submit.route_gpu_jobs, when it names no partition and asks
 * for GPUs or for an EC2 instance type.  Jobs that are not ours are left
 * alone (only a home-region key in their comment is checked).  For ours,
 * the candidate nodesets are narrowed one rule at a time; the rule that
 * leaves none is the one the user is told about.
 */
#include "config.h"

#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"

/* Slurm's constraint operators and grouping; the rest is a feature name. */
#define FEATURE_SEPS "&|,()[] \t"
#define HOME_DELIMS " \t\r\n,;"
#define STACK_NODESETS 64
#define SHOW_MAX 64

struct route_ns {
	const struct gb_conf_nodeset *ns;
	const struct gb_instance_type *type;	/* &low */
	struct gb_instance_type low;	/* the first type, with the lowest GPU
					 * count of all (what Slurm is told) */
	uint64_t nodes;
	size_t part;			/* index into gb_route.parts */
};

struct gb_route {
	const struct gb_conf *conf;
	struct route_ns *ns;
	size_t n_ns;
	const char **parts;		/* distinct partitions, config order */
	size_t n_parts;
	char *part_list;		/* "a, b" */
	char *homes;			/* allowed home regions, "a, b" */
	char *families;			/* allowed families, "g4dn, g5" */
	uint32_t *budget_uid;		/* per budget: its user's uid, or
					 * NO_UID (not a user budget, or the
					 * name is not known here) */
};
#define NO_UID UINT32_MAX

/* What a job asks for, from all its tres_per_* fields. */
struct need {
	uint64_t per_node;		/* GPUs each node must have */
	uint64_t total;			/* GPUs in all */
	uint64_t nodes;			/* nodes at least */
	const char *model;
	size_t model_len;
	bool gpu;
	bool complex;			/* counts/model not understood */
};

/*****************************************************************************
 *  Small helpers
 *****************************************************************************/

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a && b > UINT64_MAX / a)
		return UINT64_MAX;
	return a * b;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return b ? a / b + (a % b != 0) : a;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool span_eq(const char *s, size_t len, const char *z)
{
	return strlen(z) == len && memcmp(s, z, len) == 0;
}

/* [s] of [len] as shown to a user: bounded, control bytes replaced. */
static const char *show(const char *s, size_t len, char *buf, size_t n)
{
	size_t i, max = n - 4 < SHOW_MAX ? n - 4 : SHOW_MAX;

	for (i = 0; i < len && i < max; i++)
		buf[i] = (s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	if (i < len) {
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

/* "a, b, c" into a NEW string; NULL on ENOMEM. */
static char *join(char *const *v, size_t n)
{
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		gb_buf_printf(&b, "%s%s", i ? ", " : "", v[i]);
	gb_buf_puts(&b, "");
	return gb_buf_failed(&b) ? (gb_buf_free(&b), NULL) : gb_buf_steal(&b);
}

/*****************************************************************************
 *  Parsers
 *****************************************************************************/

/* Slurm's counts: digits with an optional k/m/g/t suffix (powers of 1024). */
static bool parse_count(const char *s, size_t len, uint64_t *out)
{
	static const char suffixes[] = "kKmMgGtT";
	uint64_t v = 0, mult = 1;
	size_t i;

	for (i = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return false;
	if (i + 1 == len && s[i]) {
		const char *sfx = strchr(suffixes, s[i]);

		if (!sfx)
			return false;
		for (long k = (sfx - suffixes) / 2; k >= 0; k--)
			mult *= 1024;
		i++;
	}
	if (i != len)
		return false;
	*out = sat_mul(v, mult);
	return true;
}

/*
 * One item of a tres_per_* list: [gres:|gres/]NAME[:TYPE][:COUNT] or the
 * TRES form gres/NAME[:TYPE]=COUNT.  RET 0 not a GPU, 1 a GPU, -1 a GPU
 * item not understood.
 */
static int parse_gpu_item(const char *s, size_t len, struct gb_route_gpus *g)
{
	const char *eq, *colon, *body, *end = s + len;

	if (len >= 5 && (!memcmp(s, "gres:", 5) || !memcmp(s, "gres/", 5)))
		s += 5;
	if (end - s < 3 || memcmp(s, "gpu", 3) ||
	    (end - s > 3 && s[3] != ':' && s[3] != '='))
		return 0;
	body = s + 3;
	g->model = NULL;
	g->model_len = 0;
	g->count = 1;
	if (body == end)
		return 1;
	if (*body == '=')
		return parse_count(body + 1, (size_t)(end - body - 1), &g->count) ? 1 : -1;
	body++;
	eq = memchr(body, '=', (size_t)(end - body));
	colon = memchr(body, ':', (size_t)(end - body));
	if (eq || colon) {
		const char *sep = eq ? eq : colon;

		if (sep == body || (eq && colon) ||
		    memchr(sep + 1, ':', (size_t)(end - sep - 1)))
			return -1;
		g->model = body;
		g->model_len = (size_t)(sep - body);
		return parse_count(sep + 1, (size_t)(end - sep - 1), &g->count) ? 1 : -1;
	}
	if (parse_count(body, (size_t)(end - body), &g->count))
		return 1;
	if (body == end || (*body >= '0' && *body <= '9'))
		return -1;	/* no type, or a count we cannot read */
	g->model = body;
	g->model_len = (size_t)(end - body);
	return 1;
}

bool gb_route_parse_gpus(const char *tres, struct gb_route_gpus *out)
{
	struct gb_route_gpus item;
	bool found = false;

	memset(out, 0, sizeof(*out));
	for (const char *p = tres; p && *p;) {
		size_t len = strcspn(p, ",");
		int rc = parse_gpu_item(p, len, &item);

		p += len + (p[len] == ',');
		if (rc == 0 || (rc > 0 && item.count == 0))
			continue;	/* not a GPU, or "gpu:0" */
		if (rc < 0 || found || out->complex) {
			/* several GPU items, or one not understood */
			out->complex = true;
			out->model = NULL;
			out->model_len = 0;
			if (rc > 0)
				out->count = sat_add(out->count, item.count);
		} else {
			*out = item;
			out->complex = false;
		}
		found = true;
	}
	return out->count > 0 || out->complex;
}

/* EC2 sizes: nano .. xlarge, NNxlarge, metal, metal-NNxl. */
static bool size_ok(const char *s, size_t len)
{
	static const char *const sizes[] = {
		"nano", "micro", "small", "medium", "large", "xlarge", "metal"
	};
	size_t d = 0;

	for (size_t i = 0; i < GB_ARRAY_LEN(sizes); i++) {
		if (span_eq(s, len, sizes[i]))
			return true;
	}
	if (len > 6 && !memcmp(s, "metal-", 6)) {
		for (size_t i = 6; i < len; i++) {
			if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
				return false;
		}
		return true;
	}
	while (d < len && s[d] >= '0' && s[d] <= '9')
		d++;
	return d > 0 && span_eq(s + d, len - d, "xlarge");
}

bool gb_route_is_instance_type(const char *s, size_t len)
{
	const char *dot = memchr(s, '.', len);
	bool digit = false;

	if (!dot || dot == s || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (const char *p = s; p < dot; p++) {
		digit = digit || (*p >= '0' && *p <= '9');
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	}
	return digit && size_ok(dot + 1, (size_t)(s + len - dot - 1));
}

/*
 * The next feature name of a constraint expression: operators and
 * brackets separate names; "*N" counts and negated names are skipped.
 * RET false at the end.
 */
static bool next_feature(const char **p, const char **name, size_t *len)
{
	while (**p) {
		const char *s = *p + strspn(*p, FEATURE_SEPS);
		size_t n = strcspn(s, FEATURE_SEPS);
		size_t star = strcspn(s, "*");

		*p = s + n;
		if (n == 0)
			return false;
		if (s[0] == '!')
			continue;
		*name = s;
		*len = star < n ? star : n;
		return true;
	}
	return false;
}

static bool features_name(const char *features, const char *type)
{
	const char *p = features, *s;
	size_t len;

	while (next_feature(&p, &s, &len)) {
		if (span_eq(s, len, type))
			return true;
	}
	return false;
}

static bool is_home_delim(char c)
{
	return c == '\0' || strchr(HOME_DELIMS, c);
}

const char *gb_route_find_home(const char *text, size_t *len)
{
	const size_t klen = strlen(GB_ROUTE_HOME_KEY);

	for (const char *p = text; p && (p = strstr(p, GB_ROUTE_HOME_KEY)); p += klen) {
		if (p != text && !is_home_delim(p[-1]))
			continue;
		*len = strcspn(p + klen, HOME_DELIMS);
		return p + klen;
	}
	return NULL;
}

/* [ns]'s first type with the lowest GPU count of its types. RET false: unknown. */
static bool route_low(const struct gb_conf *conf, const struct gb_conf_nodeset *ns,
		      struct gb_instance_type *low)
{
	for (size_t i = 0; i < ns->n_instance_types; i++) {
		const struct gb_instance_type *t;

		if (!(t = gb_conf_instance_type(conf, ns->instance_types[i])))
			return false;
		if (i == 0)
			*low = *t;
		else if (t->gpus < low->gpus)
			low->gpus = t->gpus;
	}
	return ns->n_instance_types > 0;
}

/*****************************************************************************
 *  The route table
 *****************************************************************************/

static gb_err_t route_parts(gb_route_t *r)
{
	char **names = calloc(r->n_ns + 1, sizeof(*names));

	if (!names)
		return GB_E_NOMEM;
	for (size_t i = 0; i < r->n_ns; i++) {
		const char *p = r->ns[i].ns->partition;
		size_t j;

		for (j = 0; j < r->n_parts && strcmp(names[j], p); j++)
			;
		if (j == r->n_parts)
			names[r->n_parts++] = (char *)p;
		r->ns[i].part = j;
	}
	r->parts = (const char **)names;
	r->part_list = join(names, r->n_parts);
	return r->part_list ? GB_E_OK : GB_E_NOMEM;
}

static gb_err_t route_homes(gb_route_t *r)
{
	const struct gb_conf *c = r->conf;
	struct gb_buf b = GB_BUF_INIT;

	for (size_t i = 0; i < c->n_groups; i++) {
		for (size_t j = 0; j < c->groups[i].n_consumer_regions; j++)
			gb_buf_printf(&b, "%s%s", b.len ? ", " : "",
				      c->groups[i].consumer_regions[j]);
	}
	gb_buf_puts(&b, "");
	r->homes = gb_buf_steal(&b);
	r->families = join(c->policy.allowed_families,
			   c->policy.n_allowed_families);
	return r->homes && r->families ? GB_E_OK : GB_E_NOMEM;
}

/*
 * The uid of each user budget's name, looked up once here (a lookup on
 * the submit path could wait on a directory service under slurmctld's
 * locks).  A name not known now never matches, until the next load.
 */
static gb_err_t route_budgets(gb_route_t *r)
{
	const struct gb_conf_policy *p = &r->conf->policy;
	char buf[1024];

	if (!p->n_budgets)
		return GB_E_OK;
	if (!(r->budget_uid = calloc(p->n_budgets, sizeof(*r->budget_uid))))
		return GB_E_NOMEM;
	for (size_t i = 0; i < p->n_budgets; i++) {
		struct passwd pw, *res = NULL;

		r->budget_uid[i] = NO_UID;
		if (p->budgets[i].scope == GB_BUDGET_USER &&
		    getpwnam_r(p->budgets[i].user, &pw, buf, sizeof(buf), &res) == 0 && res)
			r->budget_uid[i] = (uint32_t)res->pw_uid;
	}
	return GB_E_OK;
}

gb_err_t gb_route_create(const struct gb_conf *conf, gb_route_t **out,
			 gb_error_t *err)
{
	gb_route_t *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r || !(r->ns = calloc(conf->n_nodesets + 1, sizeof(*r->ns))))
		goto nomem;
	r->conf = conf;
	for (size_t i = 0; i < conf->n_nodesets; i++) {
		const struct gb_conf_nodeset *ns = &conf->nodesets[i];
		struct route_ns *n = &r->ns[r->n_ns];

		if (!route_low(conf, ns, &n->low))	/* the loader refuses such files */
			continue;
		n->ns = ns;
		n->type = &n->low;
		n->nodes = gb_conf_nodeset_size(ns);
		r->n_ns++;
	}
	if (route_parts(r) || route_homes(r) || route_budgets(r))
		goto nomem;
	*out = r;
	return GB_E_OK;
nomem:
	gb_route_destroy(r);
	return gb_errorf(err, GB_E_NOMEM, "out of memory building the route table");
}

void gb_route_destroy(gb_route_t *r)
{
	if (!r)
		return;
	free(r->ns);
	free(r->parts);
	free(r->part_list);
	free(r->homes);
	free(r->families);
	free(r->budget_uid);
	free(r);
}

const char *gb_route_partitions(const gb_route_t *r)
{
	return r->part_list;
}

void gb_route_result_init(struct gb_route_result *res)
{
	memset(res, 0, sizeof(*res));
	res->estimate = res->worst = -1;
}

void gb_route_result_free(struct gb_route_result *res)
{
	gb_buf_free(&res->msg);
	gb_buf_free(&res->partition);
	gb_buf_free(&res->features);
	gb_buf_free(&res->admin_comment);
}

/*****************************************************************************
 *  Deciding
 *****************************************************************************/

/* Per-job scratch: the candidate nodesets and the job's partitions. */
struct job_ctx {
	const gb_route_t *r;
	const struct gb_route_job *job;
	struct gb_route_result *res;
	struct need need;
	unsigned char *fit;		/* per nodeset: still a candidate */
	unsigned char *listed;		/* per partition: the job names it */
	size_t n_listed, n_other;	/* burst / other partitions named */
	bool types;			/* features name instance types */
};

static enum gb_route_verdict reject(struct job_ctx *x, enum gb_route_reason why,
				    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum gb_route_verdict reject(struct job_ctx *x, enum gb_route_reason why,
				    const char *fmt, ...)
{
	struct gb_buf *m = &x->res->msg;
	char line[512], *big = NULL;
	bool oom = false;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len >= (int)sizeof(line)) {	/* long lists: the whole text */
		if ((big = malloc((size_t)len + 1))) {
			va_start(ap, fmt);
			vsnprintf(big, (size_t)len + 1, fmt, ap);
			va_end(ap);
		}
		oom = !big;
	}
	gb_buf_reset(m);
	gb_buf_printf(m, "gpuburst: %s", big ? big : line);
	free(big);
	x->res->reason = oom || gb_buf_failed(m) ? GB_ROUTE_NOMEM : why;
	return x->res->verdict = GB_ROUTE_REJECT;
}

static size_t count_fit(const struct job_ctx *x)
{
	size_t n = 0;

	for (size_t i = 0; i < x->r->n_ns; i++)
		n += x->fit[i];
	return n;
}

static void add_need(struct need *n, const struct gb_route_job *job,
		     const char *tres, int kind)
{
	struct gb_route_gpus g;
	uint64_t pn, total, tpn = job->ntasks_per_node ? job->ntasks_per_node : 1;

	if (!gb_route_parse_gpus(tres, &g))
		return;
	n->gpu = true;
	if (g.complex || (n->model && g.model &&
			  (n->model_len != g.model_len ||
			   memcmp(n->model, g.model, g.model_len)))) {
		n->complex = true;
		return;
	}
	if (g.model) {
		n->model = g.model;
		n->model_len = g.model_len;
	}
	switch (kind) {
	case 'j':	/* --gpus: spread over at most max_nodes nodes */
		pn = job->max_nodes ? div_up(g.count, job->max_nodes) : 1;
		total = g.count;
		break;
	case 't':	/* --gpus-per-task */
		pn = sat_mul(g.count, tpn);
		total = sat_mul(g.count, job->num_tasks ? job->num_tasks :
					 sat_mul(tpn, n->nodes));
		break;
	default:	/* --gpus-per-node, --gres, --gpus-per-socket (>= 1 socket) */
		pn = g.count;
		total = sat_mul(g.count, n->nodes);
		break;
	}
	n->per_node = max_u64(n->per_node, pn);
	n->total = max_u64(n->total, total);
}

static void job_need(struct need *n, const struct gb_route_job *job)
{
	memset(n, 0, sizeof(*n));
	n->nodes = job->min_nodes ? job->min_nodes : 1;
	add_need(n, job, job->tres_per_job, 'j');
	add_need(n, job, job->tres_per_node, 'n');
	add_need(n, job, job->tres_per_socket, 's');
	add_need(n, job, job->tres_per_task, 't');
	if (n->complex) {
		n->model = NULL;
		n->model_len = 0;
	}
}

/* Mark the burst partitions the job names; count the others. */
static void job_partitions(struct job_ctx *x)
{
	const char *p = x->job->partition;

	while (p && *p) {
		size_t len = strcspn(p, ","), j;

		for (j = 0; j < x->r->n_parts && !span_eq(p, len, x->r->parts[j]); j++)
			;
		if (j < x->r->n_parts) {
			x->n_listed += !x->listed[j];
			x->listed[j] = 1;
		} else if (len) {
			x->n_other++;
		}
		p += len + (p[len] == ',');
	}
}

/* Does the constraint name EC2 instance types at all? */
static void scan_types(struct job_ctx *x)
{
	const char *p = x->job->features, *s;
	size_t len;

	while (p && !x->types && next_feature(&p, &s, &len))
		x->types = gb_route_is_instance_type(s, len);
}

/* Every instance type the constraint names must be an allowed GPU type. */
static enum gb_route_verdict check_types(struct job_ctx *x)
{
	const char *p = x->job->features, *s;
	char type[SHOW_MAX + 8];
	gb_error_t e = { 0 };
	size_t len;

	while (p && next_feature(&p, &s, &len)) {
		if (!gb_route_is_instance_type(s, len))
			continue;
		show(s, len, type, sizeof(type));
		if (!gb_conf_type_allowed(x->r->conf, type))
			return reject(x, GB_ROUTE_BAD_TYPE,
				      "instance type %s is not allowed: only GPU families %s",
				      type, x->r->families);
		if (!gb_conf_instance_type(x->r->conf, type))
			return reject(x, GB_ROUTE_BAD_TYPE,
				      "instance type %s is not a known GPU instance type",
				      type);
		if (gb_conf_type_check(x->r->conf, type, &e))	/* fractional, ... */
			return reject(x, GB_ROUTE_BAD_TYPE, "%s", e.text);
	}
	return GB_ROUTE_ACCEPT;
}

static enum gb_route_verdict check_home(struct job_ctx *x)
{
	const struct gb_conf_group *g;
	char region[SHOW_MAX + 8];
	size_t len = 0;
	const char *h = gb_route_find_home(x->job->comment, &len);

	if (!h)
		return GB_ROUTE_ACCEPT;
	show(h, len, region, sizeof(region));
	if (len && len < sizeof(region) && (g = gb_conf_group_for(x->r->conf, region))) {
		for (size_t j = 0; j < g->n_consumer_regions; j++) {
			if (!strcmp(g->consumer_regions[j], region))
				x->res->home = g->consumer_regions[j];
		}
		return GB_ROUTE_ACCEPT;
	}
	if (!x->r->conf->n_groups)
		return reject(x, GB_ROUTE_BAD_HOME,
			      "home region %s is not allowed: no fallback group is configured",
			      len ? region : "(empty)");
	return reject(x, GB_ROUTE_BAD_HOME,
		      "home region %s is not in any fallback group: allowed home regions are %s",
		      len ? region : "(empty)", x->r->homes);
}

/* Keep the candidates [keep] accepts; RET how many are left. */
static size_t narrow(struct job_ctx *x,
		     bool (*keep)(const struct job_ctx *, const struct route_ns *))
{
	for (size_t i = 0; i < x->r->n_ns; i++) {
		if (x->fit[i] && !keep(x, &x->r->ns[i]))
			x->fit[i] = 0;
	}
	return count_fit(x);
}

/* Any type of the nodeset: each is one of its nodes' features. */
static bool keep_type(const struct job_ctx *x, const struct route_ns *n)
{
	for (size_t i = 0; i < n->ns->n_instance_types; i++) {
		if (features_name(x->job->features, n->ns->instance_types[i]))
			return true;
	}
	return false;
}

static bool keep_model(const struct job_ctx *x, const struct route_ns *n)
{
	return span_eq(x->need.model, x->need.model_len, n->type->gpu_model);
}

static bool keep_per_node(const struct job_ctx *x, const struct route_ns *n)
{
	return (uint64_t)n->type->gpus >= x->need.per_node;
}

static bool keep_home(const struct job_ctx *x, const struct route_ns *n)
{
	return n->ns->mode != GB_MODE_SINGLE_REGION ||
	       !strcmp(n->ns->home_region, x->res->home);
}

/* Append "a10g (g5.xlarge), l4 (g6.xlarge)": what the candidates offer. */
static void list_fit(const struct job_ctx *x, struct gb_buf *b, int what)
{
	bool first = true;

	for (size_t i = 0; i < x->r->n_ns; i++) {
		const struct route_ns *n = &x->r->ns[i];

		if (!x->fit[i])
			continue;
		if (!first)
			gb_buf_puts(b, ", ");
		first = false;
		if (what == 'm')
			gb_buf_printf(b, "%s (%s)", n->type->gpu_model, n->type->name);
		else if (what == 'h')
			gb_buf_printf(b, "%s in %s", n->ns->name, n->ns->home_region);
		else
			gb_buf_printf(b, "%s (%s)", n->type->name, n->ns->partition);
	}
}

/* Refuse, naming what the candidates offer (as long as the list is). */
static enum gb_route_verdict reject_list(struct job_ctx *x,
					 enum gb_route_reason why,
					 const char *what, int kind)
{
	struct gb_buf *m = &x->res->msg;

	gb_buf_reset(m);
	gb_buf_printf(m, "gpuburst: %s", what);
	list_fit(x, m, kind);
	x->res->reason = gb_buf_failed(m) ? GB_ROUTE_NOMEM : why;
	return x->res->verdict = GB_ROUTE_REJECT;
}

static const char *model_str(const struct need *n, char *buf, size_t len)
{
	char m[SHOW_MAX + 8];

	if (!n->model)
		return "";
	snprintf(buf, len, " %s", show(n->model, n->model_len, m, sizeof(m)));
	return buf;
}

/* The per-node filter emptied the set: name the biggest type there was. */
static enum gb_route_verdict reject_per_node(struct job_ctx *x,
					     const unsigned char *before)
{
	const struct route_ns *best = NULL;
	char m[SHOW_MAX + 16];

	for (size_t i = 0; i < x->r->n_ns; i++) {
		if (before[i] && (!best || x->r->ns[i].type->gpus > best->type->gpus))
			best = &x->r->ns[i];
	}
	return reject(x, GB_ROUTE_TOO_MANY_GPUS,
		      "this job asks for %llu%s GPUs per node, more than any burst nodeset has: at most %d (%s)",
		      (unsigned long long)x->need.per_node,
		      model_str(&x->need, m, sizeof(m)),
		      best ? best->type->gpus : 0, best ? best->type->name : "-");
}

/*
 * Capacity: the nodes of one job share a partition, so sum the candidates
 * of each partition; drop the partitions too small for the whole job.
 */
static enum gb_route_verdict check_capacity(struct job_ctx *x)
{
	uint64_t best_gpus = 0, best_nodes = 0;
	const char *gp = "-", *np = "-";
	char m[SHOW_MAX + 16];
	size_t kept = 0;

	for (size_t p = 0; p < x->r->n_parts; p++) {
		uint64_t nodes = 0, gpus = 0;

		for (size_t i = 0; i < x->r->n_ns; i++) {
			const struct route_ns *n = &x->r->ns[i];

			if (!x->fit[i] || n->part != p)
				continue;
			nodes = sat_add(nodes, n->nodes);
			gpus = sat_add(gpus, sat_mul(n->nodes, (uint64_t)n->type->gpus));
		}
		if (nodes && nodes >= x->need.nodes &&
		    (x->need.complex || gpus >= x->need.total)) {
			kept++;
			continue;
		}
		if (gpus > best_gpus)
			best_gpus = gpus, gp = x->r->parts[p];
		if (nodes > best_nodes)
			best_nodes = nodes, np = x->r->parts[p];
		for (size_t i = 0; i < x->r->n_ns; i++) {
			if (x->r->ns[i].part == p)
				x->fit[i] = 0;
		}
	}
	if (kept)
		return GB_ROUTE_ACCEPT;
	if (!x->need.complex && x->need.total > best_gpus)
		return reject(x, GB_ROUTE_TOO_MANY_GPUS,
			      "this job asks for %llu%s GPUs, more than any burst nodeset can give: at most %llu in partition %s",
			      (unsigned long long)x->need.total,
			      model_str(&x->need, m, sizeof(m)),
			      (unsigned long long)best_gpus, gp);
	return reject(x, GB_ROUTE_TOO_MANY_NODES,
		      "this job asks for %llu nodes, more than the burst nodesets have: at most %llu in partition %s",
		      (unsigned long long)x->need.nodes,
		      (unsigned long long)best_nodes, np);
}

static void reset_fit(struct job_ctx *x)
{
	for (size_t i = 0; i < x->r->n_ns; i++)
		x->fit[i] = !x->n_listed || x->listed[x->r->ns[i].part];
}

/* Run the filters in order; the first that leaves nothing is reported. */
static enum gb_route_verdict match(struct job_ctx *x, unsigned char *scratch)
{
	char what[SHOW_MAX + 64], m[SHOW_MAX + 8];
	size_t n = x->r->n_ns;

	if (x->types && narrow(x, keep_type) == 0) {
		reset_fit(x);
		return reject_list(x, GB_ROUTE_BAD_TYPE, x->n_listed ?
				   "no nodeset of the partitions asked for provides the instance type asked for: they have " :
				   "no burst nodeset provides the instance type asked for: there are ",
				   't');
	}
	memcpy(scratch, x->fit, n);
	if (x->need.model && narrow(x, keep_model) == 0) {
		memcpy(x->fit, scratch, n);
		snprintf(what, sizeof(what), "no burst nodeset has GPU model %s: there are ",
			 show(x->need.model, x->need.model_len, m, sizeof(m)));
		return reject_list(x, GB_ROUTE_BAD_MODEL, what, 'm');
	}
	memcpy(scratch, x->fit, n);
	if (!x->need.complex && narrow(x, keep_per_node) == 0)
		return reject_per_node(x, scratch);
	memcpy(scratch, x->fit, n);
	if (x->res->home && narrow(x, keep_home) == 0) {
		memcpy(x->fit, scratch, n);
		return reject_list(x, GB_ROUTE_NO_NODESET,
				   "no burst nodeset can serve this home region: the matching ones launch only in their own region: ",
				   'h');
	}
	return check_capacity(x);
}

/*****************************************************************************
 *  Results
 *****************************************************************************/

/* The old admin comment without any home key, then the new one. */
static void record_home(struct job_ctx *x)
{
	const size_t klen = strlen(GB_ROUTE_HOME_KEY);
	struct gb_buf *b = &x->res->admin_comment;
	const char *old = x->job->admin_comment ? x->job->admin_comment : "";
	const char *p = old, *h;
	size_t len;

	while ((h = gb_route_find_home(p, &len))) {
		const char *start = h - klen;

		if (start > p && strchr(" \t", start[-1]))
			start--;	/* and the blank before it */
		gb_buf_append(b, p, (size_t)(start - p));
		p = h + len;
	}
	gb_buf_puts(b, p);
	while (b->len && strchr(" \t", b->data[b->len - 1]))
		b->data[--b->len] = '\0';
	gb_buf_printf(b, "%s%s%s", b->len ? " " : "", GB_ROUTE_HOME_KEY, x->res->home);
}

/*
 * The admin comment so far (or the job's own) without any [key] token,
 * then "KEY[value]" (a token is a whole word: a key inside a word is
 * text, kept).
 */
static void set_token(struct job_ctx *x, const char *key, const char *value)
{
	const size_t klen = strlen(key);
	struct gb_buf old = GB_BUF_INIT, *b = &x->res->admin_comment;
	const char *p, *t;

	gb_buf_puts(&old, b->len ? gb_buf_str(b)
			: x->job->admin_comment ? x->job->admin_comment : "");
	gb_buf_reset(b);
	p = gb_buf_str(&old);
	while ((t = strstr(p, key))) {
		const char *start = t, *end = t + klen;

		if (t > gb_buf_str(&old) && !strchr(" \t;,", t[-1])) {
			gb_buf_append(b, p, (size_t)(end - p));
			p = end;
			continue;	/* not a token: part of a word */
		}
		if (start > p && strchr(" \t", start[-1]))
			start--;
		gb_buf_append(b, p, (size_t)(start - p));
		end += strcspn(end, " \t;,");
		p = end;
	}
	gb_buf_puts(b, p);
	while (b->len && strchr(" \t", b->data[b->len - 1]))
		b->data[--b->len] = '\0';
	gb_buf_printf(b, "%s%s%s", b->len ? " " : "", key, value);
	b->oom = b->oom || old.oom;	/* gb_route_job() checks b */
	gb_buf_free(&old);
}

/* "gpuburst:approval=pending/NODES", and the budget it would go over. */
static void record_hold(struct job_ctx *x)
{
	char v[32];

	snprintf(v, sizeof(v), "pending/%llu", (unsigned long long)x->res->nodes);
	set_token(x, GB_ROUTE_APPROVAL_KEY, v);
	if (x->res->budget)
		set_token(x, GB_ROUTE_BUDGET_KEY, x->res->budget->name);
}

/* "gpuburst:cost=LIKELY/WORST" in US dollars, when known. */
static void record_cost(struct job_ctx *x)
{
	char v[64];

	if (x->res->estimate < 0)
		return;
	snprintf(v, sizeof(v), "%.2f/%.2f", x->res->estimate, x->res->worst);
	set_token(x, GB_ROUTE_COST_KEY, v);
}

/* Has a candidate before nodeset [i] (or [i] before its type [k]) type [t]? */
static bool type_listed(const struct job_ctx *x, size_t i, size_t k, const char *t)
{
	for (size_t j = 0; j <= i; j++) {
		const struct gb_conf_nodeset *ns = x->r->ns[j].ns;
		size_t end = j == i ? k : ns->n_instance_types;

		for (size_t m = 0; x->fit[j] && m < end; m++) {
			if (strcmp(ns->instance_types[m], t) == 0)
				return true;
		}
	}
	return false;
}

/*
 * Partitions, or instance types, of the candidates, each once, in config
 * order.  Every type of a nodeset of several: a node's active feature is
 * the type it was launched as.
 */
static void list_distinct(const struct job_ctx *x, struct gb_buf *b,
			  bool parts, const char *sep)
{
	for (size_t i = 0; i < x->r->n_ns; i++) {
		const struct route_ns *n = &x->r->ns[i];
		bool seen = false;

		if (!x->fit[i])
			continue;
		if (!parts) {
			for (size_t k = 0; k < n->ns->n_instance_types; k++) {
				const char *t = n->ns->instance_types[k];

				if (!type_listed(x, i, k, t))
					gb_buf_printf(b, "%s%s", b->len ? sep : "", t);
			}
			continue;
		}
		for (size_t j = 0; j < i && !seen; j++)
			seen = x->fit[j] && x->r->ns[j].part == n->part;
		if (!seen)
			gb_buf_printf(b, "%s%s", b->len ? sep : "", x->r->parts[n->part]);
	}
}

/* Nodes the job needs at best: its node count, or its GPUs on the largest type. */
static uint64_t estimate_nodes(const struct job_ctx *x)
{
	uint64_t best = UINT64_MAX;

	if (!x->need.gpu || x->need.complex || !x->need.total)
		return x->need.nodes;
	for (size_t i = 0; i < x->r->n_ns; i++) {
		if (x->fit[i])
			best = min_u64(best, div_up(x->need.total,
						    (uint64_t)x->r->ns[i].type->gpus));
	}
	return max_u64(x->need.nodes, best == UINT64_MAX ? 1 : best);
}

/*
 * The region a nodeset's first launch goes to: the job's (or the
 * nodeset's) home when gpuburst launches there, else the first fallback.
 */
static const char *first_region(const struct job_ctx *x, const struct gb_conf_nodeset *ns)
{
	const char *home = x->res->home ? x->res->home : ns->home_region;
	const struct gb_conf_group *g;

	if (gb_conf_region(x->r->conf, home))
		return home;
	g = gb_conf_group_for(x->r->conf, home);
	return g && g->n_fallback_regions ? g->fallback_regions[0] : home;
}

/* The dearest price of [ns]'s types in [region] over its ladder; -1: none. */
static double dearest(const struct gb_conf *conf, const struct gb_conf_nodeset *ns,
		      const char *region)
{
	double worst = -1;

	for (size_t t = 0; t < ns->n_instance_types; t++) {
		for (size_t k = 0; k < ns->n_capacity; k++) {
			double p = gb_conf_price(conf, region, ns->instance_types[t],
						 ns->capacity[k].kind, NULL);

			if (p > worst)
				worst = p;
		}
	}
	return worst;
}

/*
 * What the job may cost: nodes x time limit x the price of the likeliest
 * pool (the first fitting nodeset's first type and rung, in its first
 * region), and of the dearest pool any fitting nodeset may launch (its
 * types and rungs, in the regions of its home's fallback group).  Not
 * known (< 0) without a time limit or a price.
 */
static void estimate_cost(struct job_ctx *x, char *why, size_t n)
{
	const struct gb_conf *conf = x->r->conf;
	struct gb_route_result *res = x->res;
	double hours = x->job->time_limit / 60.0, likely = -1, worst = -1;

	res->estimate = res->worst = -1;
	if (!x->job->time_limit) {
		snprintf(why, n, "it has no time limit (--time)");
		return;
	}
	for (size_t i = 0; i < x->r->n_ns; i++) {
		const struct gb_conf_nodeset *ns = x->r->ns[i].ns;
		const char *home = res->home ? res->home : ns->home_region;
		const struct gb_conf_group *g = gb_conf_group_for(conf, home);
		double p;

		if (!x->fit[i])
			continue;
		if (likely < 0)
			likely = gb_conf_price(conf, first_region(x, ns), ns->instance_types[0],
					       ns->capacity[0].kind, NULL);
		if ((p = dearest(conf, ns, home)) > worst)
			worst = p;
		for (size_t r = 0; g && r < g->n_fallback_regions; r++) {
			if ((p = dearest(conf, ns, g->fallback_regions[r])) > worst)
				worst = p;
		}
	}
	if (likely < 0) {
		snprintf(why, n, "no price is known for its first pool (gpuburstctl prices)");
		return;
	}
	res->estimate = (double)res->nodes * hours * likely;
	res->worst = (double)res->nodes * hours * (worst > likely ? worst : likely);
}

/* The user name of a budget that names the submitter, or NULL. */
static const char *budget_user(const struct job_ctx *x)
{
	const struct gb_conf_policy *p = &x->r->conf->policy;

	for (size_t i = 0; x->r->budget_uid && i < p->n_budgets; i++) {
		if (x->r->budget_uid[i] != NO_UID && x->r->budget_uid[i] == x->job->user_id)
			return p->budgets[i].user;
	}
	return NULL;
}

/*
 * policy.budgets: the first one the job would go over holds it for
 * approval (with the size rule's hold, if any) or refuses it.
 * RET GB_ROUTE_REJECT when refused.
 */
static enum gb_route_verdict check_budgets(struct job_ctx *x)
{
	struct gb_route_result *res = x->res;
	struct gb_buf why = GB_BUF_INIT;
	char unknown[96] = "";
	struct gb_budget_job bj;
	const struct gb_conf_budget *b;

	estimate_cost(x, unknown, sizeof(unknown));
	if (!x->r->conf->policy.n_budgets)
		return GB_ROUTE_ACCEPT;
	bj = (struct gb_budget_job){
		.user = budget_user(x),
		.account = x->job->account,
		.partitions = res->partition.len ? gb_buf_str(&res->partition)
						 : x->job->partition,
		.estimate = res->estimate,
		.why_unknown = unknown,
	};
	if (!(b = gb_budget_over(x->r->conf, x->job->spent, &bj, x->job->now, &why))) {
		gb_buf_free(&why);
		return GB_ROUTE_ACCEPT;
	}
	res->budget = b;
	if (b->over == GB_BUDGET_REFUSE) {
		gb_buf_reset(&res->msg);
		reject(x, GB_ROUTE_BUDGET, "%s: this budget refuses such jobs",
		       gb_buf_str(&why));
		gb_buf_free(&why);
		return GB_ROUTE_REJECT;
	}
	res->needs_approval = true;
	res->hold = true;
	if (res->msg.len)
		gb_buf_puts(&res->msg, "; ");
	else
		gb_buf_puts(&res->msg, "gpuburst: ");
	gb_buf_printf(&res->msg, "%s: it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)",
		      gb_buf_str(&why));
	gb_buf_free(&why);
	return GB_ROUTE_ACCEPT;
}

static enum gb_route_verdict fill_changes(struct job_ctx *x, size_t before)
{
	const struct gb_route_job *job = x->job;
	struct gb_route_result *res = x->res;
	int threshold = gb_conf_threshold(x->r->conf);

	if (!job->partition || !*job->partition)
		list_distinct(x, &res->partition, true, ",");
	if ((!job->features || !*job->features) && !x->n_other &&
	    count_fit(x) < before)
		list_distinct(x, &res->features, false, "|");
	res->nodes = estimate_nodes(x);
	if (res->nodes > (uint64_t)threshold) {
		res->needs_approval = true;
		res->hold = x->r->conf->policy.approve_at_submit;
		gb_buf_printf(&res->msg,
			      "gpuburst: this job needs %llu cloud nodes, more than the approval threshold of %d (%s): %s",
			      (unsigned long long)res->nodes, threshold,
			      gb_conf_env_name(x->r->conf->environment),
			      res->hold ? "it is held until an administrator approves it (gpuburstctl approvals; gpuburstctl why JOB tells its story)"
					: "an administrator must approve it (gpuburstctl approvals, then gpuburstctl approve ID) before its nodes start");
	}
	return check_budgets(x);
}

static bool is_ours(const struct job_ctx *x)
{
	const struct gb_route_job *job = x->job;
	bool named = job->partition && *job->partition;

	if (!x->r->n_ns)
		return false;
	if (x->n_listed)
		return true;
	return !named && x->r->conf->job_submit.route_gpu_jobs &&
	       (x->need.gpu || x->types);
}

static enum gb_route_verdict decide(struct job_ctx *x, unsigned char *scratch)
{
	struct gb_route_result *res = x->res;
	size_t before, len;
	bool ours;

	job_partitions(x);
	job_need(&x->need, x->job);
	scan_types(x);
	ours = is_ours(x);
	if (!ours && !gb_route_find_home(x->job->comment, &len))
		return res->verdict = GB_ROUTE_UNTOUCHED;
	if ((ours && check_types(x) == GB_ROUTE_REJECT) ||
	    check_home(x) == GB_ROUTE_REJECT)
		return GB_ROUTE_REJECT;
	if (ours) {
		reset_fit(x);
		before = count_fit(x);
		if (match(x, scratch) != GB_ROUTE_REJECT) {
			if (!x->job->update && fill_changes(x, before) == GB_ROUTE_REJECT)
				return GB_ROUTE_REJECT;
		} else if (x->n_other && res->reason != GB_ROUTE_NOMEM) {
			/* it may run outside the cloud: Slurm's to judge */
			gb_buf_reset(&res->msg);
			res->reason = GB_ROUTE_OK;
			ours = false;
		} else {
			return GB_ROUTE_REJECT;
		}
	}
	if (res->home)
		record_home(x);
	if (ours && !x->job->update)
		record_cost(x);
	if (res->hold)
		record_hold(x);
	if (!ours && !res->home)
		return res->verdict = GB_ROUTE_UNTOUCHED;
	return res->verdict = GB_ROUTE_ACCEPT;
}

enum gb_route_verdict gb_route_job(const gb_route_t *r,
				   const struct gb_route_job *job,
				   struct gb_route_result *res)
{
	unsigned char stack[3 * STACK_NODESETS], *mem = stack;
	struct job_ctx x = { .r = r, .job = job, .res = res };
	enum gb_route_verdict v;

	gb_route_result_free(res);
	gb_route_result_init(res);
	if (r->n_ns > STACK_NODESETS && !(mem = calloc(3, r->n_ns))) {
		res->reason = GB_ROUTE_NOMEM;
		return res->verdict = GB_ROUTE_REJECT;
	}
	memset(mem, 0, 3 * (r->n_ns > STACK_NODESETS ? r->n_ns : STACK_NODESETS));
	x.fit = mem;
	x.listed = mem + r->n_ns;	/* n_parts <= n_ns */
	v = decide(&x, mem + 2 * r->n_ns);
	if (v != GB_ROUTE_REJECT &&
	    (gb_buf_failed(&res->msg) || gb_buf_failed(&res->partition) ||
	     gb_buf_failed(&res->features) || gb_buf_failed(&res->admin_comment))) {
		res->reason = GB_ROUTE_NOMEM;
		v = res->verdict = GB_ROUTE_REJECT;
	}
	if (mem != stack)
		free(mem);
	return v;
}
