/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timeline_svg.c - gpuburstctl requests show --svg: one request as a picture
 *
 * One lane per region/AZ the request touched.  In it, each RunInstances
 * call (an attempt row) is a bar from when it was sent to when EC2
 * answered (to now while it has no answer), coloured by its outcome; below
 * the calls, the instances launched there, from launch to termination (to
 * now while alive), with what the records know of each: the launch, the
 * NodeAddr update that gave Slurm its address (a slurm_update event),
 * reconcile's actions on it, its offering noticed dry, its termination.
 * Nothing is invented: a time the records do not hold is not drawn (EC2's
 * "running" and slurmd's registration are not recorded).  The request's
 * creation, the approval, each plan version and the result are vertical
 * markers.  The axis counts from the request's creation; when instances
 * outlive the launch by far, the axis breaks and the rest is compressed,
 * so that calls of milliseconds stay visible next to hours of instances.
 *
 * The size is bounded whatever the request: TL_W pixels wide, at most
 * TL_MAX_H high (TL_MAX_LANES lanes of TL_CALL_ROWS rows of calls and
 * TL_INST_ROWS rows of instances, TL_MAX_MARKS markers); what does not fit
 * is counted in the picture ("N more ...").
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "gb_hostlist.h"
#include "gb_util.h"
#include "svg.h"

#define TL_W 1200
#define TL_X0 240		/* the plot's left edge; lane labels before it */
#define TL_X1 (TL_W - 24)
#define TL_PX 12.0		/* text */
#define TL_SMALL 10.0		/* text in and next to bars */
#define TL_MAX_LANES 12
#define TL_CALL_ROWS 5
#define TL_INST_ROWS 8
#define TL_CALL_H 16
#define TL_INST_H 12
#define TL_GAP 4
#define TL_PAD 8
#define TL_LANE_MIN 48		/* three lines of lane label */
#define TL_MAX_MARKS 40
#define TL_MARK_ROWS 3
#define TL_HEAD 146		/* title, legend, marker labels */
#define TL_FOOT 78		/* axis, caption, what was not drawn */
#define TL_LANE_MAX (2 * TL_PAD + TL_CALL_ROWS * (TL_CALL_H + TL_GAP) + \
		     TL_INST_ROWS * (TL_INST_H + TL_GAP))
#define TL_MAX_H (TL_HEAD + TL_MAX_LANES * TL_LANE_MAX + TL_FOOT)
_Static_assert(TL_MAX_H <= 3200, "gpuburstctl(8) says at most 1200 x 3200 pixels");

enum outcome { OC_OK, OC_PARTIAL, OC_CAPACITY, OC_QUOTA, OC_THROTTLE, OC_ERROR, OC_UNKNOWN,
	       OC_COUNT };

static const struct {
	const char *fill, *ink, *label;
} outcomes[OC_COUNT] = {
	[OC_OK] = { "#2ca02c", "#ffffff", "ok: got all" },
	[OC_PARTIAL] = { "#bcbd22", "#000000", "partial" },
	[OC_CAPACITY] = { "#d62728", "#ffffff", "capacity refusal" },
	[OC_QUOTA] = { "#9467bd", "#ffffff", "quota" },
	[OC_THROTTLE] = { "#ff7f0e", "#000000", "throttled" },
	[OC_ERROR] = { "#8c564b", "#ffffff", "other error" },
	[OC_UNKNOWN] = { "#c7c7c7", "#000000", "unknown / no answer yet" },
};

#define INST_ALIVE "#1f77b4"
#define INST_ENDED "#9ecae1"
#define INST_LOST "#c49c94"
#define PIN_ADDR "#000000"
#define PIN_NOTICE "#ff7f0e"
#define PIN_RECONCILE "#7f7f7f"
#define TEXT_NOTE "#b22222"

/* A bar: time span, lane, and where packing put it. */
struct span {
	double t0, t1;
	size_t lane, ord;		/* ord: arrival, for a stable order */
	int row;			/* -1: not drawn (no room) */
	double x0, x1, room;		/* pixels; room: where the next bar of
					 * the row starts (a label may go there) */
};

struct call {
	struct span sp;
	bool open;			/* no answer yet: drawn to now */
	enum outcome oc;
	int seq, asked, min, got;
	const char *region, *az, *subnet, *type, *capacity, *target, *state, *code, *cls,
		*msg;
};

struct inst {
	struct span sp;
	bool alive, end_known, drawable;
	double noticed;
	const char *region, *az, *id, *node, *type, *capacity, *state, *reason, *agent;
};

enum mark_kind { MK_CREATED, MK_PLAN, MK_ASKED, MK_DECIDED, MK_RESULT };

struct mark {
	double t;
	enum mark_kind kind;
	const char *label, *colour;
};

enum pin_kind { PIN_SET_ADDR, PIN_RECONCILED };

/* Something an event says about instances: matched by node or instance id. */
struct pin {
	double t;
	enum pin_kind kind;
	gb_hostlist_t *nodes;		/* PIN_SET_ADDR: the nodes updated */
	const char *target, *node;	/* PIN_RECONCILED */
	const char *text;
	bool failed;
};

struct lane {
	const char *region, *az;
	double first, region_first;
	size_t calls, insts, calls_omitted, insts_omitted;
	int call_rows, inst_rows;
	double y, h;
	bool drawn;
};

struct ctl_tl {
	struct gb_strv keep;		/* every string below */
	bool oom;
	const char *id, *kind, *state, *result, *nodeset, *nodes, *type, *home, *reason;
	int node_count, launched;
	double created;
	struct call *calls;
	size_t n_calls, cap_calls;
	struct inst *insts;
	size_t n_insts, cap_insts;
	struct mark *marks;
	size_t n_marks, cap_marks, marks_omitted;
	struct pin *pins;
	size_t n_pins, cap_pins;
	struct lane *lanes;
	size_t n_lanes, cap_lanes;
};

/*****************************************************************************
 *  Collecting
 *****************************************************************************/

/* Room for one more of [*v]; false (and tl->oom) when there is none. */
static bool grow(struct ctl_tl *tl, void **v, size_t n, size_t *cap, size_t size)
{
	void *p;

	if (n < *cap)
		return true;
	p = realloc(*v, (*cap ? 2 * *cap : 16) * size);
	if (!p) {
		tl->oom = true;
		return false;
	}
	*v = p;
	*cap = *cap ? 2 * *cap : 16;
	return true;
}

#define GROW(tl, what) grow((tl), (void **)&(tl)->what, (tl)->n_##what, &(tl)->cap_##what, \
			    sizeof(*(tl)->what))

/* RET a copy of [s] that lives as long as [tl], or NULL (NULL, no memory). */
static const char *keep(struct ctl_tl *tl, const char *s)
{
	if (!s)
		return NULL;
	if (gb_strv_add(&tl->keep, s)) {
		tl->oom = true;
		return NULL;
	}
	return tl->keep.v[tl->keep.n - 1];
}

struct ctl_tl *ctl_tl_create(void)
{
	return calloc(1, sizeof(struct ctl_tl));
}

void ctl_tl_destroy(struct ctl_tl *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->n_pins; i++)
		gb_hostlist_destroy(tl->pins[i].nodes);
	free(tl->calls);
	free(tl->insts);
	free(tl->marks);
	free(tl->pins);
	free(tl->lanes);
	gb_strv_free(&tl->keep);
	free(tl);
}

static void add_mark(struct ctl_tl *tl, double t, enum mark_kind kind, const char *label,
		     const char *colour)
{
	if (t <= 0)
		return;
	if (tl->n_marks >= TL_MAX_MARKS) {
		tl->marks_omitted++;
		return;
	}
	if (!GROW(tl, marks))
		return;
	tl->marks[tl->n_marks++] = (struct mark){ t, kind, keep(tl, label), colour };
}

void ctl_tl_request(struct ctl_tl *tl, const struct gb_request *r)
{
	if (!tl)
		return;
	tl->id = keep(tl, r->id);
	tl->kind = gb_request_kind_name(r->kind);
	tl->state = gb_request_state_name(r->state);
	tl->result = r->result == GB_RESULT_NONE ? NULL : gb_request_result_name(r->result);
	tl->nodeset = keep(tl, r->nodeset);
	tl->nodes = keep(tl, r->nodes);
	tl->type = keep(tl, r->instance_type);
	tl->home = keep(tl, r->home_region);
	tl->reason = keep(tl, r->reason);
	tl->node_count = r->node_count;
	tl->launched = r->launched;
	tl->created = r->created_at;
	add_mark(tl, r->created_at, MK_CREATED, "created", "#000000");
}

void ctl_tl_approval(struct ctl_tl *tl, const struct gb_approval *a)
{
	char label[160];
	const char *colour = "#7f7f7f";

	if (!tl)
		return;
	add_mark(tl, a->requested_at, MK_ASKED, "approval asked", "#9467bd");
	if (a->state == GB_APPROVAL_APPROVED)
		colour = outcomes[OC_OK].fill;
	else if (a->state == GB_APPROVAL_DENIED)
		colour = outcomes[OC_CAPACITY].fill;
	snprintf(label, sizeof(label), "%s%s%s", gb_approval_state_name(a->state),
		 a->decided_by ? " by " : "", a->decided_by ? a->decided_by : "");
	add_mark(tl, a->decided_at, MK_DECIDED, label, colour);
}

void ctl_tl_plan(struct ctl_tl *tl, const struct gb_plan_row *p)
{
	char label[160];
	bool used = p->status && strcmp(p->status, "used") == 0;

	if (!tl)
		return;
	snprintf(label, sizeof(label), "v%d %s%s%s", p->version, p->planner ? p->planner : "?",
		 used ? "" : " ", used ? "" : (p->status ? p->status : "?"));
	add_mark(tl, p->created_at, MK_PLAN, label, "#555555");
}

/* The lane of (region, az), made when new.  RET its index, or SIZE_MAX. */
static size_t lane_of(struct ctl_tl *tl, const char *region, const char *az, double t)
{
	struct lane *l;

	for (size_t i = 0; i < tl->n_lanes; i++) {
		l = &tl->lanes[i];
		if (gb_strcmp0(l->region, region) == 0 && gb_strcmp0(l->az, az) == 0) {
			if (t > 0 && (l->first <= 0 || t < l->first))
				l->first = t;
			return i;
		}
	}
	if (!GROW(tl, lanes))
		return SIZE_MAX;
	l = &tl->lanes[tl->n_lanes];
	memset(l, 0, sizeof(*l));
	l->region = keep(tl, region ? region : "?");
	l->az = keep(tl, az);
	l->first = t;
	return tl->n_lanes++;
}

static enum outcome outcome_of(const struct gb_attempt *a)
{
	const char *cls = a->error_class ? a->error_class : "";

	if (a->state == GB_ATTEMPT_OK)
		return a->got >= a->asked ? OC_OK : OC_PARTIAL;
	if (a->state != GB_ATTEMPT_FAILED)
		return OC_UNKNOWN;
	if (strcmp(cls, "CAPACITY") == 0)
		return OC_CAPACITY;
	if (strcmp(cls, "QUOTA") == 0)
		return OC_QUOTA;
	if (strcmp(cls, "THROTTLE") == 0)
		return OC_THROTTLE;
	return OC_ERROR;
}

void ctl_tl_attempt(struct ctl_tl *tl, const struct gb_attempt *a)
{
	struct call *c;
	size_t lane;

	if (!tl || a->started_at <= 0)
		return;
	if ((lane = lane_of(tl, a->region, a->az, a->started_at)) == SIZE_MAX || !GROW(tl, calls))
		return;
	c = &tl->calls[tl->n_calls];
	memset(c, 0, sizeof(*c));
	c->sp = (struct span){ a->started_at, a->finished_at, lane, tl->n_calls, -1, 0, 0, 0 };
	c->open = a->finished_at <= 0;
	c->oc = outcome_of(a);
	c->seq = a->seq;
	c->asked = a->asked;
	c->min = a->min_count;
	c->got = a->got;
	c->region = keep(tl, a->region);
	c->az = keep(tl, a->az);
	c->subnet = keep(tl, a->subnet);
	c->type = keep(tl, a->instance_type);
	c->capacity = keep(tl, a->capacity);
	c->target = keep(tl, a->capacity_target);
	c->state = gb_attempt_state_name(a->state);
	c->code = keep(tl, a->error_code);
	c->cls = keep(tl, a->error_class);
	c->msg = keep(tl, a->message);
	tl->lanes[lane].calls++;
	tl->n_calls++;
}

void ctl_tl_instance(struct ctl_tl *tl, const struct gb_instance *in)
{
	struct inst *x;
	size_t lane;

	if (!tl)
		return;
	if ((lane = lane_of(tl, in->region, in->az, in->launched_at)) == SIZE_MAX ||
	    !GROW(tl, insts))
		return;
	x = &tl->insts[tl->n_insts];
	memset(x, 0, sizeof(*x));
	x->sp = (struct span){ in->launched_at, in->terminated_at, lane, tl->n_insts, -1, 0, 0, 0 };
	x->drawable = in->launched_at > 0;
	x->end_known = in->terminated_at > 0;
	x->alive = !x->end_known && in->state != GB_INST_TERMINATED && in->state != GB_INST_LOST;
	x->noticed = in->noticed_at;
	x->region = keep(tl, in->region);
	x->az = keep(tl, in->az);
	x->id = keep(tl, in->instance_id);
	x->node = keep(tl, in->node);
	x->type = keep(tl, in->instance_type);
	x->capacity = keep(tl, in->capacity);
	x->state = gb_instance_state_name(in->state);
	x->reason = keep(tl, in->reason);
	x->agent = keep(tl, in->agent);
	tl->lanes[lane].insts++;
	tl->n_insts++;
}

/* slurm_update {"action":"set_addr","nodes":...,"failed":N,"error":...} */
static void pin_set_addr(struct ctl_tl *tl, double at, json_t *d)
{
	const char *nodes = json_string_value(json_object_get(d, "nodes"));
	const char *error = json_string_value(json_object_get(d, "error"));
	json_int_t failed = json_integer_value(json_object_get(d, "failed"));
	gb_hostlist_t *hl = NULL;
	char text[512];

	if (!nodes || gb_hostlist_parse(nodes, &hl, NULL))
		return;
	if (!GROW(tl, pins)) {
		gb_hostlist_destroy(hl);
		return;
	}
	if (failed > 0)
		snprintf(text, sizeof(text), "Slurm NodeAddr update of %s failed for %lld: %s",
			 nodes, (long long)failed, error ? error : "?");
	else
		snprintf(text, sizeof(text), "address given to Slurm (NodeAddr of %s)", nodes);
	tl->pins[tl->n_pins++] = (struct pin){ at, PIN_SET_ADDR, hl, NULL, NULL, keep(tl, text),
					       failed > 0 };
}

/* reconcile {"action","target","node","detail","done","error"} */
static void pin_reconcile(struct ctl_tl *tl, double at, json_t *d)
{
	const char *action = json_string_value(json_object_get(d, "action"));
	const char *detail = json_string_value(json_object_get(d, "detail"));
	const char *error = json_string_value(json_object_get(d, "error"));
	char text[512];

	if (!GROW(tl, pins))
		return;
	snprintf(text, sizeof(text), "reconcile %s: %s%s%s", action ? action : "?",
		 detail ? detail : "", error ? "; failed: " : "", error ? error : "");
	tl->pins[tl->n_pins++] = (struct pin){
		at, PIN_RECONCILED, NULL, keep(tl, json_string_value(json_object_get(d, "target"))),
		keep(tl, json_string_value(json_object_get(d, "node"))), keep(tl, text), error != NULL
	};
}

void ctl_tl_event(struct ctl_tl *tl, const struct gb_event *ev)
{
	json_t *d;

	if (!tl || !ev->kind || ev->at <= 0)
		return;
	if (strcmp(ev->kind, "result") == 0) {
		char label[96];

		snprintf(label, sizeof(label), "result: %s", tl->result ? tl->result : "?");
		add_mark(tl, ev->at, MK_RESULT, label, "#000000");
		return;
	}
	if (strcmp(ev->kind, "slurm_update") != 0 && strcmp(ev->kind, "reconcile") != 0)
		return;
	if (!ev->detail || !(d = json_loads(ev->detail, 0, NULL)))
		return;
	if (!json_is_object(d))
		;
	else if (strcmp(ev->kind, "reconcile") == 0)
		pin_reconcile(tl, ev->at, d);
	else if (gb_strcmp0(json_string_value(json_object_get(d, "action")), "set_addr") == 0)
		pin_set_addr(tl, ev->at, d);
	json_decref(d);
}

static bool pin_matches(const struct pin *p, const struct inst *x)
{
	if (p->kind == PIN_SET_ADDR)
		return x->node && gb_hostlist_match(p->nodes, x->node);
	return (p->target && x->id && strcmp(p->target, x->id) == 0) ||
	       (p->node && x->node && strcmp(p->node, x->node) == 0);
}

/*****************************************************************************
 *  The time axis
 *****************************************************************************/

/*
 * Piecewise linear: knot i is time t[i] at pixel x[i]; the segment from
 * knot i to knot i + 1 is compressed when squeezed[i].
 */
struct axis {
	size_t n;			/* knots: 2 to 4 */
	double t[4], x[4];
	bool squeezed[3];
	double created;			/* tick labels count from here */
};

static double ax_x(const struct axis *a, double t)
{
	size_t i;

	if (t <= a->t[0])
		return a->x[0];
	if (t >= a->t[a->n - 1])
		return a->x[a->n - 1];
	for (i = 0; i + 2 < a->n && t > a->t[i + 1]; i++)
		;
	return a->x[i] + (t - a->t[i]) / (a->t[i + 1] - a->t[i]) * (a->x[i + 1] - a->x[i]);
}

static void knot(struct axis *a, double t, double x, bool squeezed)
{
	a->squeezed[a->n - 1] = squeezed;
	a->t[a->n] = t;
	a->x[a->n++] = x;
}

static double min0(double a, double b)
{
	return b > 0 && b < a ? b : a;
}

/*
 * The picture's times: all of it, [lo, hi]; the launch, [la, lb]: the
 * calls, plans, instance launches, address updates and the result (none:
 * all of it).
 */
struct extent {
	double lo, hi, la, lb;
};

static void extent(const struct ctl_tl *tl, double now, struct extent *e)
{
	*e = (struct extent){ tl->created > 0 ? tl->created : now, 0, HUGE_VAL, -HUGE_VAL };
	for (size_t i = 0; i < tl->n_calls; i++) {
		e->lo = min0(e->lo, tl->calls[i].sp.t0);
		e->la = fmin(e->la, tl->calls[i].sp.t0);
		e->lb = fmax(e->lb, tl->calls[i].sp.t1);
	}
	for (size_t i = 0; i < tl->n_insts; i++) {
		const struct inst *x = &tl->insts[i];

		if (!x->drawable)
			continue;
		e->lo = min0(e->lo, x->sp.t0);
		e->la = fmin(e->la, x->sp.t0);
		e->lb = fmax(e->lb, x->sp.t0);
		e->hi = fmax(e->hi, fmax(x->sp.t1, x->noticed));
	}
	for (size_t i = 0; i < tl->n_marks; i++) {
		const struct mark *m = &tl->marks[i];

		e->lo = min0(e->lo, m->t);
		e->hi = fmax(e->hi, m->t);
		if (m->kind == MK_PLAN || m->kind == MK_RESULT) {
			e->la = fmin(e->la, m->t);
			e->lb = fmax(e->lb, m->t);
		}
	}
	for (size_t i = 0; i < tl->n_pins; i++) {
		e->hi = fmax(e->hi, tl->pins[i].t);
		if (tl->pins[i].kind == PIN_SET_ADDR)
			e->lb = fmax(e->lb, tl->pins[i].t);
	}
	e->hi = fmax(e->hi, fmax(e->lo, e->lb));
	if (e->la > e->lb) {
		e->la = e->lo;
		e->lb = e->hi;
	}
}

/*
 * A wait before the launch (an approval) and what follows it (instances
 * running for hours, terminations, reconcile) may dwarf a launch of a few
 * seconds: either, when longer than twice the launch, is compressed into
 * 15% (before) or 25% (after) of the width.
 */
static void axis_make(const struct ctl_tl *tl, double now, struct axis *a)
{
	struct extent e;
	double len, w = TL_X1 - TL_X0, last, end;

	extent(tl, now, &e);
	len = fmax(e.lb - e.la, 1.0);
	memset(a, 0, sizeof(*a));
	a->created = tl->created > 0 ? tl->created : e.lo;
	a->t[0] = e.lo;
	a->x[0] = TL_X0;
	a->n = 1;
	if (e.la - e.lo > 2.1 * len)
		knot(a, e.la - 0.05 * len, TL_X0 + 0.15 * w, true);
	if (e.hi - e.lb > 2.1 * len) {
		knot(a, e.lb + 0.05 * len, TL_X1 - 0.25 * w, false);
		knot(a, e.hi + 0.02 * (e.hi - e.lb), TL_X1, true);
		return;
	}
	last = a->t[a->n - 1];
	end = fmax(e.hi, last + 1.0);
	knot(a, end + 0.04 * (end - last), TL_X1, false);
}

/* "+1.25s", "+45s", "+2m30s", "+3h", "-1s": [v] seconds at tick [step]. */
static const char *rel_text(double v, double step, char *buf, size_t n)
{
	const char *sign = v < -1e-9 ? "-" : v > 1e-9 ? "+" : "";
	double av = fabs(v);
	long s = (long)(av + 0.5);

	if (step < 1)
		snprintf(buf, n, "%s%.*fs", sign, step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3, av);
	else if (s < 60)
		snprintf(buf, n, "%s%lds", sign, s);
	else if (s < 3600)
		snprintf(buf, n, s % 60 ? "%s%ldm%02lds" : "%s%ldm", sign, s / 60, s % 60);
	else if (s < 172800)
		snprintf(buf, n, s % 3600 / 60 ? "%s%ldh%02ldm" : "%s%ldh", sign, s / 3600,
			 s % 3600 / 60);
	else
		snprintf(buf, n, s % 86400 / 3600 ? "%s%ldd%02ldh" : "%s%ldd", sign, s / 86400,
			 s % 86400 / 3600);
	return buf;
}

/* "+1.124s": an exact offset for tooltips. */
static const char *rel_exact(double t, double created, char *buf, size_t n)
{
	snprintf(buf, n, "%+.3fs", t - created);
	return buf;
}

/* The smallest tick step that leaves 90 pixels per label. */
static double tick_step(double span, double width)
{
	static const double steps[] = {
		0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60,
		120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800,
		604800, 2592000, 31536000,
	};
	double want = fmax(width / 90, 1);

	for (size_t i = 0; i < GB_ARRAY_LEN(steps); i++)
		if (span / steps[i] <= want)
			return steps[i];
	return span / want;
}

/*
 * Grid lines from [top] down to the axis at [y] and ticks of [s, e], with
 * a label where there is room after the last one (*[last]).
 */
static void ticks(struct gb_buf *b, const struct axis *a, double s, double e, double top,
		  double y, double *last)
{
	double step = tick_step(e - s, ax_x(a, e) - ax_x(a, s));
	double k = ceil((s - a->created) / step - 1e-9);
	char text[32];

	for (int i = 0; i < 200; i++, k++) {
		double t = a->created + k * step, x = ax_x(a, t);

		if (t > e + 1e-9)
			break;
		ctl_svg_line(b, x, top, x, y, "#e4e4e4", 1, false);
		ctl_svg_line(b, x, y, x, y + 5, "#000000", 1, false);
		if (x < *last + 64)
			continue;
		ctl_svg_text(b, x, y + 18, "middle", TL_SMALL, NULL, false,
			     rel_text(k * step, step, text, sizeof(text)), 0);
		*last = x;
	}
}

static void axis_draw(struct gb_buf *b, const struct axis *a, double top, double y)
{
	double last = -HUGE_VAL;

	for (size_t i = 0; i + 1 < a->n; i++)
		if (a->squeezed[i])
			ctl_svg_rect(b, a->x[i], top, a->x[i + 1] - a->x[i], y - top, "#f3f3f3",
				     NULL, false, NULL);
	for (size_t i = 0; i + 1 < a->n; i++) {
		ticks(b, a, a->t[i], a->t[i + 1], top, y, &last);
		if (!a->squeezed[i])
			continue;
		ctl_svg_text(b, (a->x[i] + a->x[i + 1]) / 2, y + 29, "middle", TL_SMALL,
			     "#555555", false, "(compressed)", 0);
		if (i > 0)
			ctl_svg_line(b, a->x[i], top, a->x[i], y + 8, "#555555", 1, true);
		if (i + 2 < a->n)
			ctl_svg_line(b, a->x[i + 1], top, a->x[i + 1], y + 8, "#555555", 1, true);
	}
	ctl_svg_line(b, a->x[0], y, a->x[a->n - 1], y, "#000000", 1, false);
}

/*****************************************************************************
 *  Layout
 *****************************************************************************/

struct layout {
	struct axis ax;
	struct lane **order;		/* lanes by region, then first use */
	double top, bottom;		/* of the lanes */
	int height;
	size_t lanes_omitted, calls_omitted, insts_omitted, insts_untimed;
};

/* Open ends drawn to [now]; an end the records lack is the start. */
static void settle(struct ctl_tl *tl, double now)
{
	for (size_t i = 0; i < tl->n_calls; i++) {
		struct span *s = &tl->calls[i].sp;

		s->t1 = fmax(tl->calls[i].open ? now : s->t1, s->t0);
	}
	for (size_t i = 0; i < tl->n_insts; i++) {
		struct inst *x = &tl->insts[i];

		x->sp.t1 = fmax(x->alive ? now : x->end_known ? x->sp.t1 : x->sp.t0, x->sp.t0);
	}
}

static double first_key(const struct lane *l)
{
	return l->first > 0 ? l->first : HUGE_VAL;
}

static int cmp_lane(const void *pa, const void *pb)
{
	const struct lane *a = *(struct lane *const *)pa, *b = *(struct lane *const *)pb;
	int c;

	if (a->region_first != b->region_first)
		return a->region_first < b->region_first ? -1 : 1;
	if ((c = strcmp(a->region, b->region)))
		return c;
	if (first_key(a) != first_key(b))
		return first_key(a) < first_key(b) ? -1 : 1;
	return gb_strcmp0(a->az, b->az);
}

static int cmp_span(const void *pa, const void *pb)
{
	const struct span *a = *(struct span *const *)pa, *b = *(struct span *const *)pb;

	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	return a->ord < b->ord ? -1 : a->ord > b->ord;
}

/*
 * Rows for one lane's spans [v]: in time order, each in the first row
 * where it fits, at most [max] rows.  RET the rows used; OUT *omitted +=
 * the spans left out.
 */
static int pack(struct span **v, size_t n, const struct axis *a, int max, size_t *omitted)
{
	struct span *last[TL_INST_ROWS > TL_CALL_ROWS ? TL_INST_ROWS : TL_CALL_ROWS] = { 0 };
	int rows = 0, r;

	qsort(v, n, sizeof(*v), cmp_span);
	for (size_t i = 0; i < n; i++) {
		struct span *s = v[i];

		s->x0 = floor(ax_x(a, s->t0));
		s->x1 = fmax(s->x0 + 3, ceil(ax_x(a, s->t1)));
		for (r = 0; r < rows && last[r]->x1 + 2 > s->x0; r++)
			;
		if (r == max) {
			s->row = -1;
			(*omitted)++;
			continue;
		}
		rows += r == rows;
		if (last[r])
			last[r]->room = s->x0;
		s->row = r;
		s->room = TL_X1;
		last[r] = s;
	}
	return rows;
}

/* Rows of lane [k] (drawn as the lane at [y]).  RET its height. */
static double lane_pack(struct ctl_tl *tl, struct layout *lo, size_t k, struct span **tmp)
{
	struct lane *l = &tl->lanes[k];
	size_t n = 0;

	for (size_t i = 0; i < tl->n_calls; i++)
		if (tl->calls[i].sp.lane == k)
			tmp[n++] = &tl->calls[i].sp;
	l->call_rows = pack(tmp, n, &lo->ax, TL_CALL_ROWS, &l->calls_omitted);
	n = 0;
	for (size_t i = 0; i < tl->n_insts; i++)
		if (tl->insts[i].sp.lane == k && tl->insts[i].drawable)
			tmp[n++] = &tl->insts[i].sp;
	l->inst_rows = pack(tmp, n, &lo->ax, TL_INST_ROWS, &l->insts_omitted);
	l->drawn = true;
	return fmax(TL_LANE_MIN, 2 * TL_PAD + l->call_rows * (TL_CALL_H + TL_GAP) +
				 l->inst_rows * (TL_INST_H + TL_GAP));
}

static bool layout(struct ctl_tl *tl, double now, struct layout *lo)
{
	size_t most = tl->n_calls > tl->n_insts ? tl->n_calls : tl->n_insts;
	struct span **tmp = calloc(most ? most : 1, sizeof(*tmp));
	double y = TL_HEAD;

	lo->order = calloc(tl->n_lanes ? tl->n_lanes : 1, sizeof(*lo->order));
	if (!tmp || !lo->order) {
		free(tmp);
		return false;
	}
	settle(tl, now);
	axis_make(tl, now, &lo->ax);
	for (size_t i = 0; i < tl->n_lanes; i++) {
		struct lane *l = &tl->lanes[i];

		lo->order[i] = l;
		l->region_first = HUGE_VAL;
		for (size_t j = 0; j < tl->n_lanes; j++)
			if (strcmp(tl->lanes[j].region, l->region) == 0)
				l->region_first = fmin(l->region_first, first_key(&tl->lanes[j]));
	}
	qsort(lo->order, tl->n_lanes, sizeof(*lo->order), cmp_lane);
	lo->top = y;
	for (size_t i = 0; i < tl->n_lanes; i++) {
		struct lane *l = lo->order[i];

		if (i >= TL_MAX_LANES) {
			lo->lanes_omitted++;
			lo->calls_omitted += l->calls;
			lo->insts_omitted += l->insts;
			continue;
		}
		l->y = y;
		l->h = lane_pack(tl, lo, (size_t)(l - tl->lanes), tmp);
		y += l->h;
	}
	for (size_t i = 0; i < tl->n_insts; i++)
		lo->insts_untimed += !tl->insts[i].drawable;
	lo->bottom = y + (tl->n_lanes ? 0 : 40);
	lo->height = (int)lo->bottom + TL_FOOT;
	free(tmp);
	return true;
}

/*****************************************************************************
 *  Drawing
 *****************************************************************************/

enum glyph { G_RIGHT, G_DIAMOND, G_UP, G_SQUARE };

static void glyph(struct gb_buf *b, enum glyph g, double x, double y, double r,
		  const char *fill, const char *stroke, const char *tip)
{
	double p[8];
	size_t n = 4;

	switch (g) {
	case G_RIGHT:
		p[0] = x, p[1] = y - r, p[2] = x + 1.4 * r, p[3] = y, p[4] = x, p[5] = y + r;
		n = 3;
		break;
	case G_DIAMOND:
		p[0] = x, p[1] = y - r, p[2] = x + r, p[3] = y, p[4] = x, p[5] = y + r;
		p[6] = x - r, p[7] = y;
		break;
	case G_UP:
		p[0] = x, p[1] = y - r, p[2] = x + r, p[3] = y + r, p[4] = x - r, p[5] = y + r;
		n = 3;
		break;
	case G_SQUARE:
		p[0] = x - r, p[1] = y - r, p[2] = x + r, p[3] = y - r, p[4] = x + r, p[5] = y + r;
		p[6] = x - r, p[7] = y + r;
		break;
	}
	ctl_svg_poly(b, p, n, fill, stroke, tip);
}

/* A swatch and its words at [*x] on the legend line [y]; advances *x. */
static void legend_item(struct gb_buf *b, double *x, double y, const char *fill,
			const char *stroke, bool dash, const char *words)
{
	ctl_svg_rect(b, *x, y - 9, 14, 10, fill, stroke, dash, NULL);
	*x += 18 + ctl_svg_text(b, *x + 18, y, "start", TL_SMALL, NULL, false, words, 0) *
			   TL_SMALL * CTL_SVG_CHAR_EM + 14;
}

static void legend_glyph(struct gb_buf *b, double *x, double y, enum glyph g,
			 const char *fill, const char *words)
{
	glyph(b, g, *x + 5, y - 4, 4, fill, "#000000", NULL);
	*x += 14 + ctl_svg_text(b, *x + 14, y, "start", TL_SMALL, NULL, false, words, 0) *
			   TL_SMALL * CTL_SVG_CHAR_EM + 14;
}

static void draw_legend(struct gb_buf *b)
{
	double x = 16;

	ctl_svg_text(b, x, 68, "start", TL_SMALL, NULL, true, "RunInstances:", 0);
	x = 110;
	for (int i = 0; i < OC_COUNT; i++)
		legend_item(b, &x, 68, outcomes[i].fill, i == OC_UNKNOWN ? "#333333" : NULL,
			    i == OC_UNKNOWN, outcomes[i].label);
	x = 16;
	ctl_svg_text(b, x, 88, "start", TL_SMALL, NULL, true, "instances:", 0);
	x = 110;
	legend_item(b, &x, 88, INST_ALIVE, NULL, false, "alive");
	legend_item(b, &x, 88, INST_ENDED, NULL, false, "ended");
	legend_item(b, &x, 88, INST_LOST, NULL, false, "lost");
	legend_item(b, &x, 88, "#ffffff", "#08306b", true, "extra (no node)");
	legend_glyph(b, &x, 88, G_RIGHT, "#08306b", "launched");
	legend_glyph(b, &x, 88, G_DIAMOND, PIN_ADDR, "address given to Slurm");
	legend_glyph(b, &x, 88, G_DIAMOND, "#ffffff", "(failed)");
	legend_glyph(b, &x, 88, G_UP, PIN_NOTICE, "offering noticed dry");
	legend_glyph(b, &x, 88, G_SQUARE, PIN_RECONCILE, "reconcile");
	ctl_svg_rect(b, x, 80, 3, 12, "#222222", NULL, false, NULL);
	ctl_svg_text(b, x + 8, 88, "start", TL_SMALL, NULL, false, "terminated", 0);
}

static void draw_head(struct gb_buf *b, const struct ctl_tl *tl, size_t lanes)
{
	struct gb_buf t = GB_BUF_INIT;
	char when[32];

	gb_buf_printf(&t, "Request %s: %s of %s (%d node%s, nodeset %s): %s%s%s",
		      tl->id ? tl->id : "?", tl->kind ? tl->kind : "?", tl->nodes ? tl->nodes : "-",
		      tl->node_count, tl->node_count == 1 ? "" : "s",
		      tl->nodeset ? tl->nodeset : "-", tl->state ? tl->state : "?",
		      tl->result ? ", " : "", tl->result ? tl->result : "");
	ctl_svg_text(b, 16, 24, "start", 15, NULL, true, gb_buf_str(&t),
		     ctl_svg_fit(TL_W - 32, 15));
	gb_buf_reset(&t);
	gb_buf_printf(&t, "created %s, %s, home %s; launched %d of %d; %zu call%s in %zu AZ "
		      "lane%s, %zu instance%s; %s", ctl_time(tl->created, when, sizeof(when)),
		      tl->type ? tl->type : "-", tl->home ? tl->home : "-", tl->launched,
		      tl->node_count, tl->n_calls, tl->n_calls == 1 ? "" : "s", lanes,
		      lanes == 1 ? "" : "s", tl->n_insts, tl->n_insts == 1 ? "" : "s",
		      tl->reason ? tl->reason : "");
	ctl_svg_text(b, 16, 44, "start", TL_PX, "#333333", false, gb_buf_str(&t),
		     ctl_svg_fit(TL_W - 32, TL_PX));
	gb_buf_free(&t);
	draw_legend(b);
}

static void draw_lane_label(struct gb_buf *b, const struct lane *l)
{
	char text[96];
	size_t fit = ctl_svg_fit(TL_X0 - 24, TL_SMALL);

	ctl_svg_line(b, 8, l->y + l->h, TL_X1, l->y + l->h, "#cccccc", 1, false);
	ctl_svg_text(b, 16, l->y + 15, "start", TL_SMALL, "#555555", true, l->region, fit);
	ctl_svg_text(b, 16, l->y + 29, "start", TL_PX, NULL, true, l->az ? l->az : "(no AZ)",
		     ctl_svg_fit(TL_X0 - 24, TL_PX));
	snprintf(text, sizeof(text), "%zu call%s, %zu instance%s", l->calls,
		 l->calls == 1 ? "" : "s", l->insts, l->insts == 1 ? "" : "s");
	ctl_svg_text(b, 16, l->y + 42, "start", TL_SMALL, "#555555", false, text, fit);
	/* a lane that left some out is full: room for two more lines */
	if (l->calls_omitted || l->insts_omitted) {
		snprintf(text, sizeof(text), "not drawn: %zu more call%s,", l->calls_omitted,
			 l->calls_omitted == 1 ? "" : "s");
		ctl_svg_text(b, 16, l->y + 56, "start", TL_SMALL, TEXT_NOTE, false, text, fit);
		snprintf(text, sizeof(text), "%zu more instance%s", l->insts_omitted,
			 l->insts_omitted == 1 ? "" : "s");
		ctl_svg_text(b, 16, l->y + 69, "start", TL_SMALL, TEXT_NOTE, false, text, fit);
	}
}

/*
 * [text] in the bar [x0, x1], [inset] from its start, at baseline [y] when
 * it fits, else after it up to [room]; nothing when fewer than 4
 * characters would show.
 */
static void bar_label(struct gb_buf *b, const struct span *s, double inset, double y,
		      const char *ink, const char *text)
{
	size_t len = ctl_svg_len(text), in = ctl_svg_fit(s->x1 - s->x0 - inset - 3, TL_SMALL);
	size_t out = ctl_svg_fit(s->room - s->x1 - 8, TL_SMALL);

	if (in >= len)
		ctl_svg_text(b, s->x0 + inset, y, "start", TL_SMALL, ink, false, text, 0);
	else if (out >= 4 && out >= in)
		ctl_svg_text(b, s->x1 + 3, y, "start", TL_SMALL, "#222222", false, text, out);
	else if (in >= 4)
		ctl_svg_text(b, s->x0 + inset, y, "start", TL_SMALL, ink, false, text, in);
}

static void draw_call(struct gb_buf *b, const struct ctl_tl *tl, const struct call *c)
{
	const struct lane *l = &tl->lanes[c->sp.lane];
	double y = l->y + TL_PAD + c->sp.row * (TL_CALL_H + TL_GAP);
	struct gb_buf t = GB_BUF_INIT;
	char r0[32], r1[32], iso[32];

	gb_buf_printf(&t, "attempt #%d %s/%s %s: %s %s%s%s, asked %d-%d, got %d, %s", c->seq,
		      c->region ? c->region : "?", c->az ? c->az : "-", c->subnet ? c->subnet : "-",
		      c->type ? c->type : "?", c->capacity ? c->capacity : "on-demand",
		      c->target ? " " : "", c->target ? c->target : "", c->min, c->asked, c->got,
		      c->state);
	if (c->code)
		gb_buf_printf(&t, " %s (%s): %s", c->code, c->cls ? c->cls : "?",
			      c->msg ? c->msg : "");
	gb_buf_printf(&t, "; sent %s (%s), ", rel_exact(c->sp.t0, tl->created, r0, sizeof(r0)),
		      gb_time_iso_ms(c->sp.t0, iso, sizeof(iso)));
	if (c->open)
		gb_buf_puts(&t, "no answer recorded (drawn to now)");
	else
		gb_buf_printf(&t, "answered %s after %.3fs", rel_exact(c->sp.t1, tl->created, r1,
								       sizeof(r1)),
			      c->sp.t1 - c->sp.t0);
	ctl_svg_rect(b, c->sp.x0, y, c->sp.x1 - c->sp.x0, TL_CALL_H, outcomes[c->oc].fill,
		     c->open || c->oc == OC_UNKNOWN ? "#333333" : NULL, true, gb_buf_str(&t));
	gb_buf_reset(&t);
	gb_buf_printf(&t, "%s got %d/%d%s%s", c->type ? c->type : "?", c->got, c->asked,
		      c->code ? " " : "", c->code ? c->code : "");
	bar_label(b, &c->sp, 3, y + TL_CALL_H - 4, outcomes[c->oc].ink, gb_buf_str(&t));
	gb_buf_free(&t);
}

static void inst_tip(struct gb_buf *t, const struct ctl_tl *tl, const struct inst *x)
{
	char r[32], iso[32];

	gb_buf_printf(t, "instance %s %s%s, %s %s in %s/%s, state %s; launched %s (%s)",
		      x->id ? x->id : "?", x->node ? "node " : "extra: launched for no node",
		      x->node ? x->node : "", x->type ? x->type : "?",
		      x->capacity ? x->capacity : "on-demand", x->region ? x->region : "?",
		      x->az ? x->az : "-", x->state, rel_exact(x->sp.t0, tl->created, r, sizeof(r)),
		      gb_time_iso_ms(x->sp.t0, iso, sizeof(iso)));
	if (x->end_known)
		gb_buf_printf(t, "; terminated %s (%s)%s%s",
			      rel_exact(x->sp.t1, tl->created, r, sizeof(r)),
			      gb_time_iso_ms(x->sp.t1, iso, sizeof(iso)), x->reason ? ": " : "",
			      x->reason ? x->reason : "");
	else if (x->alive)
		gb_buf_puts(t, "; alive (drawn to now)");
	else
		gb_buf_printf(t, "; its end is not recorded%s%s", x->reason ? ": " : "",
			      x->reason ? x->reason : "");
	if (x->agent)
		gb_buf_printf(t, "; agent: %s", x->agent);
}

/* What the events and the record know of [x], at their times. */
static void inst_marks(struct gb_buf *b, const struct ctl_tl *tl, const struct axis *a,
		       const struct inst *x, double mid)
{
	char iso[32], tip[600];

	for (size_t i = 0; i < tl->n_pins; i++) {
		const struct pin *p = &tl->pins[i];

		if (!pin_matches(p, x))
			continue;
		snprintf(tip, sizeof(tip), "%s (%s)", p->text, gb_time_iso_ms(p->t, iso, sizeof(iso)));
		if (p->kind == PIN_SET_ADDR)
			glyph(b, G_DIAMOND, ax_x(a, p->t), mid, 5, p->failed ? "#ffffff" : PIN_ADDR,
			      "#000000", tip);
		else
			glyph(b, G_SQUARE, ax_x(a, p->t), mid, 3.5, PIN_RECONCILE, "#000000", tip);
	}
	if (x->noticed > 0) {
		snprintf(tip, sizeof(tip), "reconcile noticed its offering dry (%s)",
			 gb_time_iso_ms(x->noticed, iso, sizeof(iso)));
		glyph(b, G_UP, ax_x(a, x->noticed), mid, 5, PIN_NOTICE, "#000000", tip);
	}
}

static void draw_inst(struct gb_buf *b, const struct ctl_tl *tl, const struct axis *a,
		      const struct inst *x)
{
	const struct lane *l = &tl->lanes[x->sp.lane];
	double y = l->y + TL_PAD + l->call_rows * (TL_CALL_H + TL_GAP) +
		   x->sp.row * (TL_INST_H + TL_GAP);
	const char *fill = x->alive ? INST_ALIVE : strcmp(x->state, "lost") == 0 ? INST_LOST
										    : INST_ENDED;
	struct gb_buf t = GB_BUF_INIT;
	char iso[32], tip[160];

	inst_tip(&t, tl, x);
	ctl_svg_rect(b, x->sp.x0, y, x->sp.x1 - x->sp.x0, TL_INST_H, fill,
		     x->node ? NULL : "#08306b", true, gb_buf_str(&t));
	snprintf(tip, sizeof(tip), "launched %s", gb_time_iso_ms(x->sp.t0, iso, sizeof(iso)));
	glyph(b, G_RIGHT, x->sp.x0, y + TL_INST_H / 2.0, 4, "#08306b", NULL, tip);
	if (x->end_known) {
		snprintf(tip, sizeof(tip), "terminated %s", gb_time_iso_ms(x->sp.t1, iso, sizeof(iso)));
		ctl_svg_rect(b, x->sp.x1 - 2, y - 2, 3, TL_INST_H + 4, "#222222", NULL, false, tip);
	} else if (x->alive) {
		glyph(b, G_RIGHT, x->sp.x1, y + TL_INST_H / 2.0, 5, INST_ALIVE, "#08306b",
		      "alive: drawn to now");
	}
	inst_marks(b, tl, a, x, y + TL_INST_H / 2.0);
	gb_buf_reset(&t);
	gb_buf_printf(&t, "%s %s", x->node ? x->node : "extra", x->id ? x->id : "?");
	bar_label(b, &x->sp, 8, y + TL_INST_H - 2, x->alive ? "#ffffff" : "#000000",
		  gb_buf_str(&t));	/* 8: after the launch mark */
	gb_buf_free(&t);
}

/*
 * Vertical markers across the lanes, their labels in rows above them
 * (before the line near the right edge), in the first row with room.
 */
static void draw_marks(struct gb_buf *b, const struct ctl_tl *tl, const struct layout *lo)
{
	double end[TL_MARK_ROWS];

	for (int r = 0; r < TL_MARK_ROWS; r++)
		end[r] = -HUGE_VAL;
	for (size_t i = 0; i < tl->n_marks; i++) {
		const struct mark *m = &tl->marks[i];
		double x = ax_x(&lo->ax, m->t), w, lx;
		size_t len = ctl_svg_len(m->label);
		int r;

		ctl_svg_line(b, x, TL_HEAD - 36, x, lo->bottom, m->colour, 1, m->kind == MK_PLAN);
		len = len < 24 ? len : 24;
		w = len * TL_SMALL * CTL_SVG_CHAR_EM;
		lx = x + 3 + w > TL_W - 8 ? x - 3 - w : x + 3;
		for (r = 0; r < TL_MARK_ROWS && end[r] + 6 > lx; r++)
			;
		if (r == TL_MARK_ROWS)
			continue;
		ctl_svg_text(b, lx, TL_HEAD - 28 + 12 * r, "start", TL_SMALL, m->colour, false,
			     m->label, len);
		end[r] = lx + w;
	}
}

static void draw_foot(struct gb_buf *b, const struct ctl_tl *tl, const struct layout *lo,
		      double now)
{
	struct gb_buf t = GB_BUF_INIT;
	double y = lo->bottom + 6;
	char c[32], n[32];

	gb_buf_printf(&t, "time since the request was created (%s); drawn %s",
		      ctl_time(tl->created, c, sizeof(c)), ctl_time(now, n, sizeof(n)));
	ctl_svg_text(b, TL_X0, y + 46, "start", TL_SMALL, "#333333", false, gb_buf_str(&t), 0);
	gb_buf_reset(&t);
	if (lo->lanes_omitted)
		gb_buf_printf(&t, "; %zu more AZ lane%s (%zu calls, %zu instances)",
			      lo->lanes_omitted, lo->lanes_omitted == 1 ? "" : "s",
			      lo->calls_omitted, lo->insts_omitted);
	if (tl->marks_omitted)
		gb_buf_printf(&t, "; %zu more marker%s (plan versions)", tl->marks_omitted,
			      tl->marks_omitted == 1 ? "" : "s");
	if (lo->insts_untimed)
		gb_buf_printf(&t, "; %zu instance%s without a launch time", lo->insts_untimed,
			      lo->insts_untimed == 1 ? "" : "s");
	if (t.len) {
		char note[512];

		snprintf(note, sizeof(note), "not drawn: %s", gb_buf_str(&t) + 2);
		ctl_svg_text(b, TL_X0, y + 62, "start", TL_SMALL, TEXT_NOTE, false, note, 0);
	}
	gb_buf_free(&t);
}

struct stats {
	int width, height;		/* pixels */
	size_t lanes, calls, instances;	/* drawn */
	size_t lanes_total, calls_total, instances_total;
};

static gb_err_t draw(struct ctl_tl *tl, double now, struct gb_buf *out, struct stats *stats)
{
	struct layout lo = { 0 };
	size_t drawn = 0;

	if (!tl || tl->oom || !layout(tl, now, &lo)) {
		free(lo.order);
		return GB_E_NOMEM;
	}
	ctl_svg_begin(out, TL_W, lo.height, tl->id ? tl->id : "request", TL_PX);
	draw_head(out, tl, tl->n_lanes);
	axis_draw(out, &lo.ax, lo.top, lo.bottom + 6);
	for (size_t i = 0; i < tl->n_lanes; i++)
		if (lo.order[i]->drawn)
			draw_lane_label(out, lo.order[i]);
	if (!tl->n_lanes)
		ctl_svg_text(out, TL_X0 + 8, lo.top + 26, "start", TL_PX, "#555555", false,
			     "no RunInstances call and no instance recorded", 0);
	draw_marks(out, tl, &lo);
	for (size_t i = 0; i < tl->n_calls; i++)
		if (tl->lanes[tl->calls[i].sp.lane].drawn && tl->calls[i].sp.row >= 0) {
			draw_call(out, tl, &tl->calls[i]);
			drawn++;
		}
	stats->calls = drawn;
	drawn = 0;
	for (size_t i = 0; i < tl->n_insts; i++)
		if (tl->insts[i].drawable && tl->lanes[tl->insts[i].sp.lane].drawn &&
		    tl->insts[i].sp.row >= 0) {
			draw_inst(out, tl, &lo.ax, &tl->insts[i]);
			drawn++;
		}
	stats->instances = drawn;
	draw_foot(out, tl, &lo, now);
	ctl_svg_end(out);
	stats->width = TL_W;
	stats->height = lo.height;
	stats->lanes = tl->n_lanes < TL_MAX_LANES ? tl->n_lanes : TL_MAX_LANES;
	stats->lanes_total = tl->n_lanes;
	stats->calls_total = tl->n_calls;
	stats->instances_total = tl->n_insts;
	free(lo.order);
	return gb_buf_failed(out) ? GB_E_NOMEM : GB_E_OK;
}

gb_err_t ctl_tl_draw(struct ctl_tl *tl, double now, struct gb_buf *out)
{
	struct stats st = { 0 };

	return draw(tl, now, out, &st);
}

gb_err_t ctl_tl_write(struct ctl *ctl, struct ctl_tl *tl, const char *file)
{
	struct gb_buf b = GB_BUF_INIT;
	struct stats st = { 0 };
	gb_error_t err = { 0 };
	gb_err_t rc;

	if ((rc = draw(tl, ctl->now, &b, &st)) || (rc = ctl_svg_save(file, &b, &err))) {
		ctl_fail(rc, "%s", rc == GB_E_NOMEM ? "out of memory drawing the picture" : err.text);
	} else if (ctl->json) {
		ctl_json_result(json_pack("{s:{s:s,s:I,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I}}", "svg",
					  "file", file, "bytes", (json_int_t)b.len,
					  "width", st.width, "height", st.height,
					  "lanes", (json_int_t)st.lanes,
					  "lanes_total", (json_int_t)st.lanes_total,
					  "calls", (json_int_t)st.calls,
					  "calls_total", (json_int_t)st.calls_total,
					  "instances", (json_int_t)st.instances,
					  "instances_total", (json_int_t)st.instances_total));
	} else if (strcmp(file, "-") != 0) {
		printf("wrote %s: %d x %d pixels; %zu of %zu AZ lanes, %zu of %zu calls, "
		       "%zu of %zu instances drawn\n", file, st.width, st.height, st.lanes,
		       st.lanes_total, st.calls, st.calls_total, st.instances, st.instances_total);
	}
	gb_buf_free(&b);
	return rc;
}
