/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fill-bench.c - the launch strategies side by side on the same capacity
 * scenarios (bench/fill/scenarios), against gpuburst-cloudsim with realistic
 * latency (RunInstances 300-900 ms), plus an oracle that knows the
 * capacities.  For each scenario, cold (empty capacity memory) and warm
 * (memory from earlier runs of similar landscapes), every strategy runs at
 * the same time against its own simulator (same scenario, same seed), so
 * they see the same latency distribution.
 *
 *   fill-bench --sim BIN --srcdir DIR [--scenario NAME]... [--time-scale X]
 *              [--seed-runs N] [--noise PERCENT] [--markdown FILE] [--hedge N]
 *              [--no-prior] [--repeat N] [--conf FILE] [--reprobe SECONDS]
 *              [--scenario-file FILE [--nodes N] [--job] [--placement]
 *               [--second-type TYPE] [--capacity YAML]]...
 *
 * Any landscape can be run: --scenario-file names a simulator scenario
 * (gpuburst-cloudsim(1)'s format; its name is the file's without .yaml),
 * run with the request shape the options after it give (16 nodes, one
 * request per node, nodeset g5, unless told).  --conf names the geography:
 * a gpuburst.yaml like bench/fill/gpuburst.yaml (its regions, AZs and
 * fallback groups; "@ENDPOINT@" where each simulator's URL goes, nodeset g5
 * with "instance_type: g5.xlarge" once, nodeset h100 for --placement).
 *
 * --reprobe SECONDS runs each strategy's request as the worker does when
 * it ends short for capacity: again after the re-probe waits
 * (gb_orch_reprobe_delay), inside a window of SECONDS from its start
 * (policy.reprobe_window); the calls are summed over the runs.
 *
 * Times are simulated seconds: with --time-scale X (default 10) the
 * simulator runs X times faster than real time and so do the
 * orchestrator's clock and back-off sleeps, so the numbers are those of a
 * real-time run, minus nothing but a scaled-up share of our own CPU time.
 * Exit status 1 when any strategy breaks an invariant (more live instances
 * than nodes, a node with two instances, an unrecorded instance, an extra
 * still alive 60 s after the run, an internal error of the engine, or
 * anything left once the run is over: after the 60 s the job ends, its
 * instances are terminated and its placement groups deleted, as reconcile
 * deletes them, and a group or a live instance of the request still there
 * fails the run, loudly).
 *
 * The train-* scenarios use nodeset h100 (p5.48xlarge, efa, placement
 * cluster): their job runs all_or_nothing in one AZ at a time whatever the
 * strategy, each AZ in a cluster placement group of its own; the oracle
 * makes one group in the first AZ that can hold the job (pool, quota and
 * the scenario's cluster_capacity, read from the scenario file with the
 * simulator's own parser).
 *
 * The ladder scenario gives nodeset g5 a capacity ladder (reservations,
 * capacity_blocks, spot, on_demand), written into the configuration's text
 * as second-type's type list is.  The oracle climbs the ladder rung by
 * rung: it knows the reservations and Capacity Blocks (listed with
 * DescribeCapacityReservations before its clock starts, not counted) and
 * the spot prices, and launches with the engine's own
 * gb_orch_launch_params().  A table per rung follows such a scenario's:
 * each lane's calls and instances per rung, and its calls into pools that
 * gave nothing (counted from the attempts).
 *
 * The last lines sum up the extras (instances beyond the nodes, from
 * hedges and spares; rolled-back ones apart) of each strategy per 100
 * nodes requested, over every scenario run, against EXTRAS_BOUND, the
 * default strategy's bound that doc/orchestrator.md states.  --repeat N
 * runs every scenario N times, the simulators' seed moved by one each
 * time, for a sum over more than one latency draw.
 *
 * Debugging aids: FILL_TRACE=1 prints the default strategy's plans,
 * capacity memory and decision trace to stderr (FILL_TRACE=probe_fill,
 * best_effort or all_or_nothing: that strategy's); FILL_SEEDS=1 adds those
 * of the warm-up runs.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gb_conf.h"
#include "gb_log.h"
#include "itype.h"
#include "scenario.h"
#include "gb_orch.h"
#include "gb_plan.h"
#include "gb_simh.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"

struct scenario {
	const char *name;
	int nodes;
	bool job;		/* one multi-node job: locality region, or
				 * az with placement */
	bool placement;		/* nodeset h100: p5.48xlarge, efa, placement
				 * cluster (every strategy all_or_nothing) */
	const char *second;	/* the nodeset's second instance type, or NULL */
	const char *capacity;	/* the nodeset's capacity ladder (YAML), or NULL */
	const char *path;	/* --scenario-file; NULL: bench/fill/scenarios/NAME.yaml */
	/* while it runs: the file as the simulator parses it (its
	 * placement_groups.cluster_capacity, which /_sim/state does not show) */
	const struct gb_scenario *model;
};

/* the ladder scenario's rungs (bench/fill/scenarios/ladder.yaml) */
#define LADDER_CAPACITY \
	"[reservations: {ids: [cr-0b0000000000000a1, cr-0b0000000000000a2]}, " \
	"capacity_blocks: {}, spot: {max_price: \"0.50\"}, on_demand: {}]"

static const struct scenario all_scenarios[] = {
	{ "ample", 20, false, false, NULL, NULL, NULL, NULL },
	{ "scattered", 20, false, false, NULL, NULL, NULL, NULL },
	{ "home-empty", 16, false, false, NULL, NULL, NULL, NULL },
	{ "throttle-storm", 16, false, false, NULL, NULL, NULL, NULL },
	{ "quota-wall", 16, false, false, NULL, NULL, NULL, NULL },
	{ "job8", 8, true, false, NULL, NULL, NULL, NULL },
	{ "second-type", 16, false, false, "g5.2xlarge", NULL, NULL, NULL },
	{ "ladder", 16, false, false, NULL, LADDER_CAPACITY, NULL, NULL },
	{ "train-fallback", 4, true, true, NULL, NULL, NULL, NULL },
	{ "train-nowhere", 4, true, true, NULL, NULL, NULL, NULL },
};

/* the lanes' node names are 100 apart (struct lane's node0) */
#define SCENARIO_NODES_MAX 100

/* the nodeset, instance type and vCPUs of a scenario's nodes */
static const char *sc_nodeset(const struct scenario *sc)
{
	return sc->placement ? "h100" : "g5";
}

static const char *sc_type(const struct scenario *sc)
{
	return sc->placement ? "p5.48xlarge" : "g5.xlarge";
}

/* how many of the scenario's instances one cluster placement group holds
 * in [region]; unlimited: only the AZ limits */
static int group_cap(const struct scenario *sc, const char *region)
{
	const struct gb_sc_region *r = gb_scenario_region(sc->model, region);
	long n;

	if (!r)
		return 0;
	n = r->pg_capacity;
	for (size_t i = 0; i < r->npg_caps; i++)
		if (!strcmp(r->pg_caps[i].type->name, sc_type(sc)))
			n = r->pg_caps[i].n;
	return n == GB_SC_UNLIMITED || n > 1 << 30 ? 1 << 30 : (int)n;
}

/* RET the scenario's file, in [buf] */
static const char *sc_path(const struct scenario *sc, char *buf, size_t n);

enum lane_kind { L_PROBE = 0, L_BEST, L_AON, L_DEFAULT, L_ORACLE, L_COUNT };
static const char *const lane_names[L_COUNT] = {
	"probe_fill", "best_effort", "all_or_nothing", "default", "oracle",
};
static const int lane_strategy[L_COUNT] = {
	GB_STRATEGY_PROBE_FILL, GB_STRATEGY_BEST_EFFORT, GB_STRATEGY_ALL_OR_NOTHING,
	GB_STRATEGY_DEFAULT, -1,
};

/* doc/orchestrator.md, "Extras": the default strategy's extras per 100
 * nodes requested, summed over the scenarios, stay below this */
#define EXTRAS_BOUND 3.0

struct opts {
	const char *sim;
	const char *srcdir;
	double scale;
	int seed_runs;
	int noise;		/* percent of pools moved by one in warm-up runs */
	const char *markdown;
	struct gb_orch_tuning tuning;
	const char *only[16];
	int n_only;
	struct scenario files[16];	/* --scenario-file */
	int n_files;
	const char *conf;		/* --conf; NULL: bench/fill/gpuburst.yaml */
	int repeat;
	bool first_type_only;	/* the nodeset without its second type (as
				 * before nodesets had several); the oracle
				 * still counts both */
	double reprobe;		/* --reprobe: the re-probe window, simulated
				 * seconds from the request's start; 0: none */
};

static struct opts O;
static const char *workdir;	/* the run's temporary directory */
static int seed_shift;		/* added to each scenario's seed (--repeat) */

/*****************************************************************************
 *  Clock seams: simulated seconds
 *****************************************************************************/

struct clock {
	double scale;
	double wall_offset;	/* seconds subtracted from the wall clock */
};

static double sim_mono(void *ctx)
{
	return gb_time_mono() * ((struct clock *)ctx)->scale;
}

static double sim_wall(void *ctx)
{
	return gb_time_now() - ((struct clock *)ctx)->wall_offset;
}

static void sim_sleep(double s, void *ctx)
{
	double real = s / ((struct clock *)ctx)->scale;
	struct timespec ts;

	if (real <= 0)
		return;
	ts.tv_sec = (time_t)real;
	ts.tv_nsec = (long)((real - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*****************************************************************************
 *  Helpers
 *****************************************************************************/

__attribute__((noreturn))
static void die(const char *what)
{
	fprintf(stderr, "fill-bench: %s\n", what);
	exit(2);
}

/*
 * Replace the one [from] in [text] (NEW, freed here) with [to].  RET NEW.
 */
static char *conf_subst(char *text, const char *from, const char *to)
{
	struct gb_buf b = GB_BUF_INIT;
	char *at = strstr(text, from);

	if (!at || strstr(at + 1, from)) {
		fprintf(stderr, "fill-bench: %s: '%s' is not there exactly once\n",
			O.conf, from);
		exit(2);
	}
	gb_buf_append(&b, text, (size_t)(at - text));
	gb_buf_puts(&b, to);
	gb_buf_puts(&b, at + strlen(from));
	free(text);
	return gb_buf_steal(&b);
}

/*
 * bench/fill/gpuburst.yaml for a simulator at [endpoint] and scenario
 * [sc]: a scenario with a second type lists both types on nodeset g5, one
 * with a capacity ladder gives it to nodeset g5 (one bench config for
 * every scenario; the parser checks the list and the ladder).
 */
static char *conf_text(const char *endpoint, const struct scenario *sc)
{
	char types[512], *text = NULL;
	size_t len;
	gb_error_t err;

	if (gb_file_read(O.conf, 1 << 20, &text, &len, &err))
		die(err.text);
	text = conf_subst(text, "@ENDPOINT@", endpoint);
	if (sc->second && !O.first_type_only)
		snprintf(types, sizeof(types), "instance_types: [g5.xlarge, %s]\n", sc->second);
	else
		snprintf(types, sizeof(types), "instance_type: g5.xlarge\n");
	if (sc->capacity)	/* a key of the same nodeset, after its type */
		snprintf(types + strlen(types), sizeof(types) - strlen(types),
			 "    capacity: %s\n", sc->capacity);
	return conf_subst(text, "instance_type: g5.xlarge\n", types);
}

static struct gb_conf *load_conf(const char *endpoint, const struct scenario *sc)
{
	char *text = conf_text(endpoint, sc);
	struct gb_conf *c = NULL;
	gb_error_t err;

	if (gb_conf_load_string(O.conf, text, strlen(text), &c, NULL, &err))
		die(err.text);
	free(text);
	return c;
}

/* the scenario file with its "seed: N" line moved by seed_shift, in the
 * run's directory */
static void shifted_scenario(const char *from, const char *scenario, char *to, size_t tolen)
{
	char *text = NULL, *line;
	long seed;
	size_t len;
	FILE *f;
	gb_error_t err;

	if (gb_file_read(from, 1 << 20, &text, &len, &err))
		die(err.text);
	line = strstr(text, "\nseed: ");
	if (!line || sscanf(line, "\nseed: %ld", &seed) != 1)
		die("a scenario without a \"seed:\" line cannot be repeated");
	snprintf(to, tolen, "%s/%s-seed%d.yaml", workdir, scenario, seed_shift);
	if (!(f = fopen(to, "w")))
		die("cannot write a scenario copy");
	fprintf(f, "%.*s\nseed: %ld%s", (int)(line - text), text, seed + seed_shift,
		line + 1 + strcspn(line + 1, "\n"));
	if (fclose(f))
		die("cannot write a scenario copy");
	free(text);
}

static const char *sc_path(const struct scenario *sc, char *buf, size_t n)
{
	if (sc->path)
		gb_strlcpy(buf, sc->path, n);
	else
		snprintf(buf, n, "%s/bench/fill/scenarios/%s.yaml", O.srcdir, sc->name);
	return buf;
}

static void start_sim(struct gb_simh *s, const struct scenario *scn, double scale)
{
	char orig[1024], path[1024], sc[32];
	const char *args[] = { "--time-scale", sc, NULL };
	gb_error_t err;

	sc_path(scn, orig, sizeof(orig));
	if (seed_shift)
		shifted_scenario(orig, scn->name, path, sizeof(path));
	else
		gb_strlcpy(path, orig, sizeof(path));
	snprintf(sc, sizeof(sc), "%g", scale);
	if (gb_simh_start(s, O.sim, path, args, &err))
		die(err.text);
}

static bool copy_file(const char *from, const char *to)
{
	char *data = NULL;
	size_t len;
	FILE *f;
	bool ok;

	if (gb_file_read(from, 1u << 30, &data, &len, NULL))
		return false;
	f = fopen(to, "wb");
	ok = f && fwrite(data, 1, len, f) == len;
	if (f)
		ok &= fclose(f) == 0;
	free(data);
	return ok;
}

static void rm_state(const char *path)
{
	char p[600];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

/*****************************************************************************
 *  The simulator's view: pools, quotas, instances
 *****************************************************************************/

/* a pool the oracle may launch into: on-demand or spot capacity of an AZ,
 * or a reservation or Capacity Block (target: its id) */
struct az_cap {
	char region[32], az[32], type[32];
	enum gb_capacity_kind kind;
	char target[32];	/* reservation or block id; "" for none */
	double price;		/* spot: USD per hour */
	int rung;		/* its rung of the nodeset's ladder; -1: none
				 * (not on the ladder, or refused) */
	long avail;
};

#define WORLD_POOLS 96

struct world {
	struct az_cap az[WORLD_POOLS];
	int n;
	/* room for instances: [0] on-demand (reservations and blocks count
	 * there too), [1] spot */
	struct { char name[32]; long room[2]; } region[16];
	int n_regions;
	int n_rungs;
};

/* room for instances of [sc]'s type in quotas [q] used by [u]: g5.xlarge 4
 * vCPUs of the G bucket, p5.48xlarge 192 of the P bucket; [instances]: the
 * On-Demand instance count quota applies too */
static long quota_room(json_t *q, json_t *u, const struct scenario *sc, bool instances)
{
	const char *bucket = sc->placement ? "p_vcpus" : "g_vt_vcpus";
	long vcpus = sc->placement ? 192 : 4;
	json_t *vq = json_object_get(q, bucket), *iq = json_object_get(q, "instances");
	long room = 1L << 30;

	if (json_is_integer(vq)) {
		long r = (long)(json_integer_value(vq) -
				json_integer_value(json_object_get(u, bucket))) / vcpus;

		room = r < room ? r : room;
	}
	if (instances && json_is_integer(iq)) {
		long r = (long)(json_integer_value(iq) -
				json_integer_value(json_object_get(u, "instances")));

		room = r < room ? r : room;
	}
	return room < 0 ? 0 : room;
}

static struct az_cap *world_add(struct world *w, const char *region, const char *az,
				const char *type, enum gb_capacity_kind kind, long avail)
{
	struct az_cap *p;

	if (w->n >= WORLD_POOLS)
		die("too many pools for the oracle");
	p = &w->az[w->n++];
	memset(p, 0, sizeof(*p));
	gb_strlcpy(p->region, region, sizeof(p->region));
	gb_strlcpy(p->az, az, sizeof(p->az));
	gb_strlcpy(p->type, type, sizeof(p->type));
	p->kind = kind;
	p->avail = avail;
	p->rung = -1;
	return p;
}

/* One pool of /_sim/state (an AZ's, of [kind]) when it is of [sc]'s types. */
static void az_pool(struct world *w, const struct scenario *sc, const char *second,
		    const char *region, const char *az, json_t *pool, enum gb_capacity_kind kind)
{
	const char *t = json_string_value(json_object_get(pool, "instance_type"));
	struct az_cap *p;

	if (!t || (strcmp(t, sc_type(sc)) && (!second || strcmp(t, second))))
		return;
	p = world_add(w, region, az, t, kind,
		      (long)json_integer_value(json_object_get(pool, "available")));
	p->price = json_number_value(json_object_get(pool, "price"));
}

/* The AZ pools (on-demand, then spot) of [sc]'s types ([second]: the
 * nodeset's second type, or NULL). */
static void read_world(const struct gb_simh *s, const struct scenario *sc,
		       const char *second, struct world *w)
{
	char *text = NULL;
	json_error_t je;
	json_t *root, *rg, *az, *pool;
	size_t i, j, k;
	gb_error_t err;

	memset(w, 0, sizeof(*w));
	if (gb_simh_call(s, "GET", "/_sim/state", NULL, &text, &err))
		die(err.text);
	if (!(root = json_loads(text, 0, &je)))
		die(je.text);
	free(text);
	json_array_foreach(json_object_get(root, "regions"), i, rg) {
		const char *rn = json_string_value(json_object_get(rg, "name"));
		json_t *spot = json_object_get(rg, "spot");

		gb_strlcpy(w->region[w->n_regions].name, rn, sizeof(w->region[0].name));
		w->region[w->n_regions].room[0] = quota_room(json_object_get(rg, "quotas"),
							     json_object_get(rg, "usage"), sc, true);
		w->region[w->n_regions++].room[1] = quota_room(json_object_get(spot, "quotas"),
							       json_object_get(spot, "usage"), sc,
							       false);
		json_array_foreach(json_object_get(rg, "azs"), j, az) {
			const char *an = json_string_value(json_object_get(az, "name"));

			json_array_foreach(json_object_get(az, "pools"), k, pool)
				az_pool(w, sc, second, rn, an, pool, GB_CAPACITY_ON_DEMAND);
			json_array_foreach(json_object_get(az, "spot_pools"), k, pool)
				az_pool(w, sc, second, rn, an, pool, GB_CAPACITY_SPOT);
		}
	}
	json_decref(root);
}

/* Live instances of a request: count, and whether a node has two. */
struct live {
	int alive;
	int dup_nodes;
	int untagged;
};

static void read_live(const struct gb_simh *s, const char *request_id, struct live *l)
{
	char *text = NULL;
	json_error_t je;
	json_t *root, *it;
	struct gb_strv nodes = { 0 };
	size_t i;
	gb_error_t err;

	memset(l, 0, sizeof(*l));
	if (gb_simh_call(s, "GET", "/_sim/state", NULL, &text, &err))
		die(err.text);
	if (!(root = json_loads(text, 0, &je)))
		die(je.text);
	free(text);
	json_array_foreach(json_object_get(root, "instances"), i, it) {
		json_t *tags = json_object_get(it, "tags");
		const char *req = json_string_value(json_object_get(tags, "gpuburst:request"));
		const char *node = json_string_value(json_object_get(tags, "gpuburst:node"));
		const char *state = json_string_value(json_object_get(it, "state"));

		if (!req || strcmp(req, request_id) || !state ||
		    (strcmp(state, "pending") && strcmp(state, "running")))
			continue;
		l->alive++;
		if (!node) {
			l->untagged++;
		} else if (gb_strv_find(&nodes, node) >= 0) {
			l->dup_nodes++;
		} else {
			gb_strv_add(&nodes, node);
		}
	}
	gb_strv_free(&nodes);
	json_decref(root);
}

/*****************************************************************************
 *  Calls per rung of the ladder, and calls into pools that gave nothing
 *****************************************************************************/

/* A lane's RunInstances calls (not HTTP requests: retries apart) per pool. */
struct rung_acc {
	struct {
		char key[160];		/* region/az/target */
		enum gb_capacity_kind kind;
		int calls, got;
	} pool[128];
	int n;
};

/* Per capacity kind: calls and instances, and the calls into pools (AZ,
 * kind, reservation) that gave nothing in the whole run. */
struct rung_sum {
	int calls, got;
	int dead_calls, dead_pools, dead_most;	/* most calls in one such pool */
};

static void acc_add(struct rung_acc *a, enum gb_capacity_kind kind, const char *region,
		    const char *az, const char *target, int got)
{
	char key[160];
	int i;

	snprintf(key, sizeof(key), "%s/%s/%s", region, az, target ? target : "");
	for (i = 0; i < a->n; i++)
		if (a->pool[i].kind == kind && !strcmp(a->pool[i].key, key))
			break;
	if (i == a->n) {
		if (a->n == (int)GB_ARRAY_LEN(a->pool))
			die("too many pools to account for");
		gb_strlcpy(a->pool[a->n].key, key, sizeof(a->pool[0].key));
		a->pool[a->n++].kind = kind;
	}
	a->pool[i].calls++;
	a->pool[i].got += got > 0 ? got : 0;
}

static void acc_sum(const struct rung_acc *a, struct rung_sum s[GB_CAPACITY_COUNT])
{
	memset(s, 0, GB_CAPACITY_COUNT * sizeof(*s));
	for (int i = 0; i < a->n; i++) {
		struct rung_sum *k = &s[a->pool[i].kind];

		k->calls += a->pool[i].calls;
		k->got += a->pool[i].got;
		if (a->pool[i].got)
			continue;
		k->dead_calls += a->pool[i].calls;
		k->dead_pools++;
		if (a->pool[i].calls > k->dead_most)
			k->dead_most = a->pool[i].calls;
	}
}

/* An attempt of the engine's, from the state file. */
static int acc_attempt(const struct gb_attempt *at, void *arg)
{
	for (int k = 0; k < GB_CAPACITY_COUNT; k++)
		if (!strcmp(at->capacity, gb_conf_capacity_name((enum gb_capacity_kind)k)))
			acc_add(arg, (enum gb_capacity_kind)k, at->region, at->az,
				at->capacity_target, at->got);
	return 0;
}

/*****************************************************************************
 *  One lane: a strategy (or the oracle) against its own simulator
 *****************************************************************************/

struct lane {
	enum lane_kind kind;
	const struct scenario *sc;
	bool warm;
	struct gb_simh sim;
	struct gb_conf *conf;
	char state_path[512];
	char request_id[GB_REQUEST_ID_LEN + 1];
	struct clock clk;
	double t0;		/* the oracle's start */
	int node0;		/* first node number */
	/* results */
	int obtained, obtainable, calls, other, extras, rolled_back;
	double ttc;
	bool internal_error;
	char reason[GB_ORCH_REASON_MAX];
	struct live live60;
	int recorded_alive;
	int groups_made, groups_left, alive_left;	/* after the run (end_run) */
	int in_use;		/* DeletePlacementGroup answered InUse */
	bool release;		/* a warm-up run: its jobs end, nodes suspended */
	struct rung_sum rung[GB_CAPACITY_COUNT];	/* per capacity kind */
	enum gb_capacity_kind ladder[GB_CAPACITY_COUNT];	/* the nodeset's rungs */
	int n_rungs;
};

static int rec_alive(const struct gb_instance *in, void *arg)
{
	(void)in;
	(*(int *)arg)++;
	return 0;
}

static int print_plan(const struct gb_plan_row *p, void *arg)
{
	(void)arg;
	fprintf(stderr, "  plan v%d %s: %s\n", p->version, p->status, p->body);
	return 0;
}

static int print_mem(const struct gb_capacity *c, void *arg)
{
	(void)arg;
	fprintf(stderr, "  memory %s %s %s asked %.2f got %.2f ice %.2f\n", c->az, c->instance_type,
		c->capacity, c->asked, c->got, c->ice);
	return 0;
}

/* FILL_TRACE=NAME: that strategy's lane is traced; any other value: the default's. */
static bool traced(const struct lane *ln)
{
	const char *t = getenv("FILL_TRACE");
	bool named = false;

	if (!t)
		return false;
	for (int k = 0; k < L_ORACLE; k++)
		named |= !strcmp(t, lane_names[k]);
	return named ? !strcmp(t, lane_names[ln->kind]) : ln->kind == L_DEFAULT;
}

/* The run's calls per rung, from its attempts in the state file. */
static void account_attempts(gb_state_t *st, const char *request_id, struct lane *ln)
{
	struct rung_acc *a = calloc(1, sizeof(*a));
	gb_error_t err;

	if (!a)
		die("out of memory");
	if (gb_state_attempt_list(st, request_id, acc_attempt, a, &err))
		die(err.text);
	acc_sum(a, ln->rung);
	free(a);
}

/*
 * The request run as the worker runs it: once, then again after each
 * re-probe wait (gb_orch_reprobe_delay) while --reprobe's window, counted
 * from the first run's start, has room (none without --reprobe).  The
 * counts are summed over the runs, the time to capacity is from the first
 * start; OUT [res] the last run's result.
 */
static gb_err_t run_with_reprobes(struct lane *ln, gb_orch_t *o, gb_state_t *st,
				  const struct gb_request *req,
				  const struct gb_orch_resume_opts *ro,
				  struct gb_orch_result *res, gb_error_t *err)
{
	double t_start = sim_mono(&ln->clk), t_run = t_start, delay = 0;
	gb_err_t rc;

	ln->calls = ln->other = ln->extras = ln->rolled_back = 0;
	ln->ttc = 0;
	for (int done = 0;; done++) {
		int before = res->launched;

		if (done > 0) {
			if (traced(ln))
				fprintf(stderr, "  %s %s: re-probe %d after %.0f s\n", ln->sc->name,
					ln->warm ? "warm" : "cold", done, delay);
			gb_orch_result_clear(res);
			t_run = sim_mono(&ln->clk);
		}
		rc = gb_orch_resume(o, st, req, ro, res, err);
		ln->calls += res->api_calls;
		ln->other += res->other_calls;
		ln->extras += res->extras;
		ln->rolled_back += res->rolled_back;
		if (done == 0 || res->launched > before)
			ln->ttc = t_run - t_start + res->time_to_capacity;
		if (rc || O.reprobe <= 0)
			return rc;
		delay = gb_orch_reprobe_delay(res, done,
					      t_start + O.reprobe - sim_mono(&ln->clk));
		if (delay < 0)
			return GB_E_OK;
		if (traced(ln) && (ln->clk.scale == O.scale || getenv("FILL_SEEDS")))
			for (size_t i = 0; i < res->trace.n; i++)
				fprintf(stderr, "  %s %s: %s\n", ln->sc->name,
					ln->warm ? "warm" : "cold", res->trace.v[i]);
		sim_sleep(delay, &ln->clk);
	}
}

static void *run_engine_lane(void *arg)
{
	struct lane *ln = arg;
	struct gb_orch_opts oo = { 0 };
	struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct gb_request req = { 0 };
	struct gb_orch_result res = { 0 };
	gb_orch_t *o = NULL;
	gb_state_t *st = NULL;
	char nodes[64];
	gb_error_t err;
	gb_err_t rc;

	if (gb_state_open(ln->state_path, 0, 10000, &st, &err))
		die(err.text);
	oo.conf = ln->conf;
	oo.state_path = ln->state_path;
	oo.tuning = &O.tuning;
	oo.mono = sim_mono;
	oo.sleep = sim_sleep;
	oo.wall = sim_wall;
	oo.seam_ctx = &ln->clk;
	if (gb_orch_create(&oo, &o, &err))
		die(err.text);
	/* fresh node names: a node with a live instance counts as filled */
	snprintf(nodes, sizeof(nodes), "%s-[%d-%d]", sc_nodeset(ln->sc), ln->node0,
		 ln->node0 + ln->sc->nodes - 1);
	req.kind = GB_REQ_RESUME;
	req.state = GB_RSTATE_RUNNING;
	req.nodeset = sc_nodeset(ln->sc);
	req.job_id = ln->sc->job ? 4242 : 0;
	req.nodes = nodes;
	req.node_count = ln->sc->nodes;
	if (gb_state_request_add(st, &req, &err))
		die(err.text);
	gb_strlcpy(ln->request_id, req.id, sizeof(ln->request_id));
	ro.strategy = lane_strategy[ln->kind];
	/* placement: cluster takes az (and all_or_nothing, whatever ro.strategy) */
	ro.locality = ln->sc->placement ? GB_LOCALITY_AZ : ln->sc->job ? GB_LOCALITY_REGION :
		      GB_LOCALITY_NONE;
	rc = run_with_reprobes(ln, o, st, &req, &ro, &res, &err);
	ln->internal_error = rc == GB_E_INTERNAL || rc == GB_E_STATE;
	if (rc)
		fprintf(stderr, "fill-bench: %s %s: %s\n", ln->sc->name, lane_names[ln->kind],
			err.text);
	ln->obtained = res.launched;
	gb_strlcpy(ln->reason, res.reason, sizeof(ln->reason));
	account_attempts(st, req.id, ln);
	if (traced(ln) && ln->clk.scale == O.scale) {
		gb_state_plan_list(st, req.id, print_plan, NULL, NULL);
		gb_state_capacity_list(st, NULL, gb_time_now(), 3600, print_mem, NULL, NULL);
	}
	if (traced(ln) && (ln->clk.scale == O.scale || getenv("FILL_SEEDS")))
		for (size_t i = 0; i < res.trace.n; i++)
			fprintf(stderr, "  %s %s: %s\n", ln->sc->name, ln->warm ? "warm" : "cold",
				res.trace.v[i]);
	if (ln->release) {
		/*
		 * An earlier run's jobs ended and Slurm suspended the nodes:
		 * their instances are terminated and closed in the state file,
		 * as gpuburst-suspend does.  (Left "alive" in the file they
		 * would count against the region's quota in the measured run,
		 * whose simulator never saw them.)
		 */
		const char **names = calloc(res.n_nodes + 1, sizeof(*names));
		size_t k = 0;

		for (size_t i = 0; names && i < res.n_nodes; i++)
			if (res.nodes[i].instance_id)
				names[k++] = res.nodes[i].node;
		if (!names || gb_orch_terminate(o, st, req.id, names, k, "bench: the job ended",
						0, NULL, &err))
			die(names ? err.text : "out of memory");
		free(names);
	}
	f.request_id = req.id;
	f.alive = true;
	ln->recorded_alive = 0;
	gb_state_instance_list(st, &f, rec_alive, &ln->recorded_alive, NULL);
	gb_orch_result_clear(&res);
	gb_orch_destroy(o);
	gb_state_close(st);
	return NULL;
}

/*****************************************************************************
 *  The oracle: knows every pool and quota, climbs the nodeset's ladder
 *  rung by rung and asks each pool exactly what it holds (largest first,
 *  fewest calls), all calls at once.
 *****************************************************************************/

static bool listed(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/*
 * Reservation or block [c] of [region], when [ns]'s ladder launches into
 * it: a reservation it names (or an open one, with reservations.open), a
 * block it names (or any, when capacity_blocks names none); active, with
 * room, of [sc]'s types.  Resource groups are not followed.
 */
static void resv_pool(struct world *w, const struct scenario *sc,
		      const struct gb_conf_nodeset *ns, const char *region,
		      const struct gb_ec2_capacity_reservation *c)
{
	bool block = !gb_strcmp0(c->reservation_type, "capacity-block");
	const struct gb_conf_rung *rg = gb_conf_nodeset_rung(ns, block ? GB_CAPACITY_BLOCK :
							     GB_CAPACITY_RESERVATION);
	bool named = rg && c->id && listed(rg->ids, rg->n_ids, c->id);
	bool open = rg && !block && rg->open && !gb_strcmp0(c->match_criteria, "open");
	const char *t = c->instance_type;
	struct az_cap *p;

	if (!rg || !t || !c->availability_zone || gb_strcmp0(c->state, "active") ||
	    c->available <= 0 || (!named && !open && !(block && rg->n_ids == 0)) ||
	    (strcmp(t, sc_type(sc)) && (!sc->second || strcmp(t, sc->second))))
		return;
	p = world_add(w, region, c->availability_zone, t, rg->kind, c->available);
	/* an open one unnamed: capacity-reservations-only, as the engine */
	if (named || block)
		gb_strlcpy(p->target, c->id, sizeof(p->target));
}

/* An EC2 client of [region] against the lane's simulator; OUT *creds NEW
 * (destroy after the client). */
static gb_ec2_t *lane_ec2(const struct lane *ln, const char *region, gb_creds_t **creds)
{
	struct gb_ec2_opts eo = { 0 };
	struct gb_creds_opts co = { 0 };
	gb_ec2_t *ec2 = NULL;
	gb_error_t err;

	co.access_key_id = ln->conf->cloud.access_key_id;
	co.secret_access_key = ln->conf->cloud.secret_access_key;
	co.no_env = co.no_files = co.no_imds = true;
	if (gb_creds_create(&co, creds, &err))
		die(err.text);
	eo.region = region;
	eo.endpoint = ln->sim.endpoint;
	eo.creds = *creds;
	eo.http.no_proxy = true;
	eo.retry.max_attempts = 5;
	eo.retry.max_total = 60;
	eo.sleep = sim_sleep;
	eo.mono = sim_mono;
	eo.seam_ctx = (void *)&ln->clk;
	if (gb_ec2_create(&eo, &ec2, &err))
		die(err.text);
	return ec2;
}

/*
 * The reservations and Capacity Blocks [ns]'s ladder can launch into, in
 * every region of the lane's simulator: DescribeCapacityReservations, the
 * oracle's knowledge like /_sim/state (which does not list them), read
 * before its clock starts and not counted.
 */
static void read_reservations(const struct lane *ln, const struct gb_conf_nodeset *ns,
			      struct world *w)
{
	if (!gb_conf_nodeset_rung(ns, GB_CAPACITY_RESERVATION) &&
	    !gb_conf_nodeset_rung(ns, GB_CAPACITY_BLOCK))
		return;
	for (size_t r = 0; r < ln->conf->n_regions; r++) {
		struct gb_ec2_capacity_reservations_params p = { 0 };
		struct gb_ec2_capacity_reservation_list *l = NULL;
		struct gb_ec2_error ae = { 0 };
		gb_creds_t *creds = NULL;
		gb_ec2_t *ec2 = lane_ec2(ln, ln->conf->regions[r].name, &creds);
		gb_error_t err;

		if (gb_ec2_describe_capacity_reservations(ec2, &p, &l, &ae, &err))
			die(err.text);
		for (size_t i = 0; i < l->n; i++)
			resv_pool(w, ln->sc, ns, ln->conf->regions[r].name, &l->v[i]);
		gb_ec2_capacity_reservation_list_free(l);
		gb_ec2_destroy(ec2);
		gb_creds_destroy(creds);
	}
}

/*
 * Which rung of [ns]'s ladder each pool is on (-1: none).  A spot pool
 * priced over the rung's max_price is on none: EC2 refuses it
 * (SpotMaxPriceTooLow) and the oracle knows the price.
 */
static void assign_rungs(struct world *w, const struct gb_conf_nodeset *ns)
{
	w->n_rungs = (int)ns->n_capacity;
	for (int i = 0; i < w->n; i++) {
		struct az_cap *p = &w->az[i];
		const struct gb_conf_rung *rg = gb_conf_nodeset_rung(ns, p->kind);
		double cap;

		p->rung = -1;
		if (!rg || (p->kind == GB_CAPACITY_SPOT && rg->max_price &&
			    !gb_parse_double(rg->max_price, &cap) && p->price > cap))
			continue;
		p->rung = (int)(rg - ns->capacity);
	}
}

struct take {
	const struct az_cap *pool;	/* in the lane's world */
	int n;
};

static int region_at(const struct world *w, const char *name)
{
	for (int k = 0; k < w->n_regions; k++)
		if (!strcmp(w->region[k].name, name))
			return k;
	die("a pool outside the simulator's regions");
}

/*
 * Greedy, rung by rung of the ladder: inside a rung the biggest effective
 * pool first (fewest calls).  Reservations and blocks count against the
 * On-Demand quotas, spot against its own.
 */
static int plan_takes(const struct world *w, const char *only_region, int need,
		      struct take *t, int bmax, int *calls)
{
	long room[16][2];
	bool used[WORLD_POOLS] = { false };
	int n = 0, got = 0;

	for (int i = 0; i < w->n_regions; i++) {
		room[i][0] = w->region[i].room[0];
		room[i][1] = w->region[i].room[1];
	}
	*calls = 0;
	for (int rung = 0; rung < w->n_rungs; rung++) {
		while (got < need) {
			int best = -1;
			long best_take = 0, *best_room = NULL;

			for (int i = 0; i < w->n; i++) {
				const struct az_cap *p = &w->az[i];
				long *r, take;

				if (used[i] || p->rung != rung ||
				    (only_region && strcmp(p->region, only_region)))
					continue;
				r = &room[region_at(w, p->region)][p->kind == GB_CAPACITY_SPOT];
				take = p->avail < *r ? p->avail : *r;
				if (take > need - got)
					take = need - got;
				if (take > best_take) {
					best_take = take;
					best = i;
					best_room = r;
				}
			}
			if (best < 0)
				break;
			used[best] = true;
			*best_room -= best_take;
			t[n].pool = &w->az[best];
			t[n++].n = (int)best_take;
			*calls += (int)((best_take + bmax - 1) / bmax);
			got += (int)best_take;
		}
	}
	return got;
}

struct ocall {
	struct lane *ln;
	const struct gb_conf_nodeset *ns;
	const struct az_cap *pool;
	int n;
	int first;		/* its first node, counted from ln->node0 */
	int attempts;
	int other;		/* CreatePlacementGroup requests */
	int got;
	double done;
};

static const char *subnet_of(const struct gb_conf_region *cr, const char *az)
{
	for (size_t i = 0; i < cr->n_azs; i++)
		if (!strcmp(cr->azs[i].name, az))
			return cr->azs[i].subnets[0];
	return NULL;
}

/*
 * Leave out the pools of AZs the geography (--conf) does not configure:
 * the engine cannot launch there, so neither does the oracle.
 */
static void world_configured(struct world *w, const struct gb_conf *conf)
{
	int k = 0;

	for (int i = 0; i < w->n; i++) {
		const struct gb_conf_region *cr = gb_conf_region(conf, w->az[i].region);

		if (cr && subnet_of(cr, w->az[i].az))
			w->az[k++] = w->az[i];
	}
	w->n = k;
}

#define OCALL_NODES 64		/* a call's nodes at most (MaxCount) */

static void *ocall_main(void *arg)
{
	struct ocall *c = arg;
	const struct az_cap *pl = c->pool;
	const struct gb_conf_rung *rg = gb_conf_nodeset_rung(c->ns, pl->kind);
	const struct gb_conf_region *cr = gb_conf_region(c->ln->conf, pl->region);
	struct gb_orch_capacity cap = { pl->kind, pl->target[0] ? pl->target : NULL,
					rg ? rg->max_price : NULL };
	struct gb_ec2_kv kv[2] = { { "gpuburst:cluster", "bench" },
				   { "gpuburst:request", c->ln->request_id } };
	struct gb_ec2_tag_spec gs = { "placement-group", kv, 2 };
	struct gb_ec2_instance_list *l = NULL;
	struct gb_ec2_error ae = { 0 };
	struct gb_orch_launch lp = { 0 };
	gb_creds_t *creds = NULL;
	gb_ec2_t *ec2 = lane_ec2(c->ln, pl->region, &creds);
	char group[256], names[OCALL_NODES][32];
	const char *nv[OCALL_NODES];
	gb_error_t err;

	for (int i = 0; i < c->n && i < OCALL_NODES; i++) {
		snprintf(names[i], sizeof(names[i]), "%s-%d", c->ns->name,
			 c->ln->node0 + c->first + i);
		nv[i] = names[i];
	}
	/*
	 * The engine's parameters for the pool's rung (reservation or block
	 * target, spot price cap), tags and user data; a placement job's
	 * launch leaves out the EFA interfaces (the simulator places an
	 * instance without them).
	 */
	if (c->n > OCALL_NODES ||
	    gb_orch_launch_params(c->ln->conf, c->ln->sc->placement ? NULL : c->ns, pl->type,
				  &cap, pl->region, subnet_of(cr, pl->az), c->ln->request_id, nv,
				  c->n, c->n, NULL, NULL, &lp, &err))
		die(c->n > OCALL_NODES ? "an oracle call of too many nodes" : err.text);
	if (c->ln->sc->placement) {
		/* the engine's name and tags, so that the same clean-up finds it */
		snprintf(group, sizeof(group), "gpuburst-bench-%s-%s", c->ln->request_id, pl->az);
		if (gb_ec2_create_placement_group(ec2, group, "cluster", &gs, &ae, &err))
			die(err.text);
		c->other = ae.attempts;
		memset(&ae, 0, sizeof(ae));
		lp.run.placement_group = group;
	}
	if (gb_ec2_run_instances(ec2, &lp.run, &l, &ae, &err) == GB_E_OK)
		c->got = (int)l->n;
	c->attempts = ae.attempts;
	c->done = sim_mono(&c->ln->clk) - c->ln->t0;
	gb_orch_launch_clear(&lp);
	gb_ec2_instance_list_free(l);
	gb_ec2_destroy(ec2);
	gb_creds_destroy(creds);
	return NULL;
}

/*
 * A placement job: the whole job in one call, into a cluster group of its
 * own in the first AZ where the pool, the region's quota and the region's
 * group size (the scenario's cluster_capacity) all hold it; RET the nodes,
 * or 0 when no AZ does.
 */
static int group_plan(const struct scenario *sc, const struct world *w, struct take *t, int *nt)
{
	for (int i = 0; i < w->n; i++) {
		const struct az_cap *p = &w->az[i];

		if (p->rung < 0 || p->avail < sc->nodes ||
		    w->region[region_at(w, p->region)].room[p->kind == GB_CAPACITY_SPOT] <
		    sc->nodes || group_cap(sc, p->region) < sc->nodes)
			continue;
		t[0].pool = p;
		t[0].n = sc->nodes;
		*nt = 1;
		return sc->nodes;
	}
	return 0;
}

/* The oracle's best plan; RET what it can obtain. */
static int oracle_plan(struct lane *ln, struct world *w, struct take *t, int *nt)
{
	int bmax = ln->conf->policy.batch_max, calls, best_calls = 1 << 30, got = 0;

	*nt = 0;
	if (ln->sc->placement)
		return group_plan(ln->sc, w, t, nt);
	if (!ln->sc->job) {
		got = plan_takes(w, NULL, ln->sc->nodes, t, bmax, &calls);
		for (*nt = 0; *nt < WORLD_POOLS && t[*nt].n > 0; (*nt)++)
			;
		return got;
	}
	for (int r = 0; r < w->n_regions; r++) {
		struct take tr[WORLD_POOLS];
		int g;

		memset(tr, 0, sizeof(tr));
		g = plan_takes(w, w->region[r].name, ln->sc->nodes, tr, bmax, &calls);
		if (g == ln->sc->nodes && calls < best_calls) {
			best_calls = calls;
			memcpy(t, tr, sizeof(tr));
			got = g;
		}
	}
	for (*nt = 0; got && *nt < WORLD_POOLS && t[*nt].n > 0; (*nt)++)
		;
	return got;
}

static void *run_oracle_lane(void *arg)
{
	struct lane *ln = arg;
	const struct gb_conf_nodeset *ns = gb_conf_nodeset(ln->conf, sc_nodeset(ln->sc));
	struct world w;
	struct take t[WORLD_POOLS];
	struct ocall c[128];
	pthread_t tid[128];
	int nt, nc = 0, first = 0, bmax = ln->conf->policy.batch_max;
	struct rung_acc acc = { 0 };

	memset(t, 0, sizeof(t));
	read_world(&ln->sim, ln->sc, ln->sc->second, &w);
	read_reservations(ln, ns, &w);
	world_configured(&w, ln->conf);
	assign_rungs(&w, ns);
	gb_random_hex(ln->request_id, GB_REQUEST_ID_LEN, NULL);
	ln->obtainable = oracle_plan(ln, &w, t, &nt);
	for (int i = 0; i < nt; i++) {
		/* a placement job goes in one call, as the engine sends it */
		int chunk = ln->sc->placement ? t[i].n : bmax;

		for (int left = t[i].n; left > 0 && nc < 128; left -= chunk) {
			c[nc].ln = ln;
			c[nc].ns = ns;
			c[nc].pool = t[i].pool;
			c[nc].n = left < chunk ? left : chunk;
			c[nc].first = first;
			first += c[nc].n;
			c[nc].got = c[nc].attempts = c[nc].other = 0;
			nc++;
		}
	}
	ln->t0 = sim_mono(&ln->clk);
	ln->ttc = 0;
	/* as many calls at once as the engine may make */
	for (int w0 = 0; w0 < nc; w0 += GB_ORCH_DEFAULT_PARALLEL) {
		int w1 = w0 + GB_ORCH_DEFAULT_PARALLEL < nc ? w0 + GB_ORCH_DEFAULT_PARALLEL : nc;

		for (int i = w0; i < w1; i++)
			pthread_create(&tid[i], NULL, ocall_main, &c[i]);
		for (int i = w0; i < w1; i++) {
			pthread_join(tid[i], NULL);
			ln->obtained += c[i].got;
			ln->calls += c[i].attempts;
			ln->other += c[i].other;
			if (c[i].done > ln->ttc)
				ln->ttc = c[i].done;
			acc_add(&acc, c[i].pool->kind, c[i].pool->region, c[i].pool->az,
				c[i].pool->target, c[i].got);
		}
	}
	acc_sum(&acc, ln->rung);
	ln->recorded_alive = ln->obtained;
	snprintf(ln->reason, sizeof(ln->reason), "%d calls in parallel", nc);
	return NULL;
}

/*****************************************************************************
 *  After a run: the job ends, its placement groups go, nothing is left
 *****************************************************************************/

#define END_REGIONS 16
#define END_TRIES 120		/* DeletePlacementGroup attempts, 1 s apart */

struct ended {
	const struct lane *ln;
	const struct gb_conf *conf;
	struct gb_strv ids[END_REGIONS];	/* live instances, per region */
};

static int end_instance(const struct gb_ec2_instance *in, const char *region, void *arg)
{
	struct ended *e = arg;
	const char *req = gb_ec2_instance_tag(in, "gpuburst:request");

	if (!req || strcmp(req, e->ln->request_id) || !in->state_name ||
	    (strcmp(in->state_name, "pending") && strcmp(in->state_name, "running")))
		return 0;
	for (size_t r = 0; r < e->conf->n_regions && r < END_REGIONS; r++)
		if (!strcmp(e->conf->regions[r].name, region))
			gb_strv_add(&e->ids[r], in->instance_id);
	return 0;
}

/* the job's nodes are released: every live instance of the request goes */
static void end_instances(gb_orch_t *o, const struct lane *ln)
{
	struct ended e = { ln, ln->conf, { { 0 } } };
	gb_error_t err;

	if (gb_orch_cloud_instances(o, NULL, true, end_instance, &e, &err))
		die(err.text);
	for (size_t r = 0; r < ln->conf->n_regions && r < END_REGIONS; r++) {
		struct gb_ec2_state_change_list *sl = NULL;
		gb_creds_t *creds = NULL;
		gb_ec2_t *ec2;

		if (e.ids[r].n == 0)
			continue;
		ec2 = lane_ec2(ln, ln->conf->regions[r].name, &creds);
		if (gb_ec2_terminate_instances(ec2, (const char *const *)e.ids[r].v, e.ids[r].n,
					       &sl, NULL, &err))
			die(err.text);
		gb_ec2_state_change_list_free(sl);
		gb_ec2_destroy(ec2);
		gb_creds_destroy(creds);
		gb_strv_free(&e.ids[r]);
	}
}

/* [g] is one of the request's groups, not yet going away */
static bool run_group(const struct lane *ln, const struct gb_ec2_placement_group *g)
{
	for (size_t t = 0; t < g->n_tags; t++)
		if (!strcmp(g->tags[t].key, "gpuburst:request") &&
		    !strcmp(g->tags[t].value, ln->request_id))
			return !g->state || !strcmp(g->state, "available") ||
			       !strcmp(g->state, "pending");
	return false;
}

/*
 * One pass over [region]'s groups of the request: each is deleted (with
 * [del]) or counted; RET how many are still there (EC2 says InUse while an
 * instance in the group is shutting down: a later pass), names added to
 * [seen].
 */
static int group_pass(gb_orch_t *o, struct lane *ln, const char *region, bool del,
		      struct gb_strv *seen)
{
	struct gb_ec2_placement_group_list *l = NULL;
	int there = 0;
	gb_error_t err;

	if (gb_orch_cloud_groups(o, region, &l, &err))
		die(err.text);
	for (size_t k = 0; k < l->n; k++) {
		struct gb_ec2_error ae = { 0 };

		if (!run_group(ln, &l->v[k]))
			continue;
		if (gb_strv_find(seen, l->v[k].group_name) < 0)
			gb_strv_add(seen, l->v[k].group_name);
		if (del && gb_orch_delete_group(o, region, l->v[k].group_name, &ae, &err) == GB_E_OK)
			continue;
		if (del && !strcmp(ae.code, GB_EC2_CODE_PG_IN_USE))
			ln->in_use++;
		else if (del)
			fprintf(stderr, "fill-bench: %s %s: DeletePlacementGroup %s: %s\n",
				ln->sc->name, lane_names[ln->kind], l->v[k].group_name, err.text);
		there++;
	}
	gb_ec2_placement_group_list_free(l);
	return there;
}

/*
 * After the measurement: the job ends (every live instance of the request
 * is terminated), then its placement groups are deleted as reconcile
 * deletes them, retried while the simulator's instances finish shutting
 * down.  Counted: the groups the run made, those left, and the request's
 * live instances left; the last two must be 0.
 */
static void end_run(struct lane *ln)
{
	struct gb_orch_opts oo = { 0 };
	struct gb_strv seen = { 0 };
	struct live l;
	gb_orch_t *o = NULL;
	gb_error_t err;

	oo.conf = ln->conf;
	oo.state_path = ln->state_path;
	oo.mono = sim_mono;
	oo.sleep = sim_sleep;
	oo.wall = sim_wall;
	oo.seam_ctx = &ln->clk;
	if (gb_orch_create(&oo, &o, &err))
		die(err.text);
	end_instances(o, ln);
	for (size_t r = 0; r < ln->conf->n_regions; r++) {
		const char *rn = ln->conf->regions[r].name;

		for (int k = 0; k < END_TRIES && group_pass(o, ln, rn, true, &seen) > 0; k++)
			sim_sleep(1, &ln->clk);
	}
	ln->groups_made = (int)seen.n;
	ln->groups_left = 0;
	for (size_t r = 0; r < ln->conf->n_regions; r++)
		ln->groups_left += group_pass(o, ln, ln->conf->regions[r].name, false, &seen);
	read_live(&ln->sim, ln->request_id, &l);
	ln->alive_left = l.alive;
	if (ln->groups_left || ln->alive_left)
		fprintf(stderr, "fill-bench: FAILED %s %s: after the run %d placement group(s) and "
			"%d instance(s) of request %s are left\n", ln->sc->name, lane_names[ln->kind],
			ln->groups_left, ln->alive_left, ln->request_id);
	gb_strv_free(&seen);
	gb_orch_destroy(o);
}

/*****************************************************************************
 *  Warm memory: earlier runs of similar landscapes
 *****************************************************************************/

static unsigned long long rng = 88172645463325252ULL;

static int rnd(int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int)(rng % (unsigned long long)n);
}

/*
 * N earlier runs of the default strategy on the same landscape (with
 * --noise P, each pool moved by one, up or down, with probability P%: a
 * similar day), 20 minutes apart, the last one 20 minutes before the
 * measured run (older than the ICE cool-down).
 */
static void seed_memory(const struct scenario *sc, const char *path)
{
	struct world base;
	struct gb_simh sim;

	rm_state(path);
	for (int k = 0; k < O.seed_runs; k++) {
		struct lane ln;

		memset(&ln, 0, sizeof(ln));
		start_sim(&sim, sc, 1000);
		if (k == 0)
			read_world(&sim, sc, sc->second, &base);
		for (int i = 0; i < base.n; i++) {
			long c;
			gb_error_t err;

			if (base.az[i].kind != GB_CAPACITY_ON_DEMAND)
				continue;	/* the on-demand pools move */
			c = base.az[i].avail + (rnd(100) < O.noise ? (rnd(2) ? 1 : -1) : 0);
			if (gb_simh_capacity(&sim, base.az[i].az, base.az[i].type, c < 0 ? 0 : c,
					     &err))
				die(err.text);
		}
		ln.kind = L_DEFAULT;
		ln.release = true;
		ln.node0 = 100 + 100 * k;
		ln.sc = sc;
		ln.sim = sim;
		ln.conf = load_conf(sim.endpoint, sc);
		ln.clk.scale = 1000;
		ln.clk.wall_offset = 60.0 * 20 * (O.seed_runs - k);
		gb_strlcpy(ln.state_path, path, sizeof(ln.state_path));
		run_engine_lane(&ln);
		gb_conf_destroy(ln.conf);
		gb_simh_stop(&sim);
	}
}

/*****************************************************************************
 *  A scenario, cold or warm
 *****************************************************************************/

static FILE *md;
static int violations;
/* over every scenario run: per strategy, extras, rolled back, nodes asked */
static int sum_extras[L_COUNT], sum_rolled[L_COUNT], sum_nodes[L_COUNT];

static bool lane_ok(const struct lane *ln)
{
	return !ln->internal_error && ln->live60.alive == ln->obtained &&
	       ln->live60.dup_nodes == 0 && ln->recorded_alive == ln->obtained &&
	       ln->obtained <= ln->sc->nodes && ln->groups_left == 0 && ln->alive_left == 0;
}

static void verdict(const struct lane *L, const struct scenario *sc, bool warm, FILE *out)
{
	const struct lane *d = &L[L_DEFAULT], *o = &L[L_ORACLE], *p = &L[L_PROBE];

	fprintf(out, "default: %s obtainable capacity (%d/%d)", d->obtained >= o->obtainable ?
		"100% of" : "MISSED", d->obtained, o->obtainable);
	if (warm && o->calls == 0)
		fprintf(out, "; the oracle found nothing to ask for");
	else if (warm)
		fprintf(out, "; calls %.2fx oracle%s, time %.2fx oracle%s",
			o->calls ? (double)d->calls / o->calls : 0,
			sc->placement ? "" : " (target <= 1.2)", o->ttc > 0 ? d->ttc / o->ttc : 0,
			sc->placement ? "" : " (target <= 1.5)");
	else
		fprintf(out, "; calls %.2fx probe_fill, time %.2fx probe_fill%s",
			p->calls ? (double)d->calls / p->calls : 0,
			p->ttc > 0 ? d->ttc / p->ttc : 0,
			!strcmp(sc->name, "scattered") ? " (target <= 0.5 each)" : "");
	fprintf(out, "; extras alive after 60 s: %d\n", d->live60.alive - d->obtained);
	fprintf(out, "after the run (job ended, groups deleted), every strategy:");
	for (int k = 0; k < L_COUNT; k++)
		fprintf(out, "%s %s %d group(s) and %d instance(s) left%s (%d InUse)", k ? "," : "",
			lane_names[k], L[k].groups_left, L[k].alive_left,
			L[k].groups_left || L[k].alive_left ? " FAILED" : "", L[k].in_use);
	fprintf(out, "\n");
}

static const char *sc_what(const struct scenario *sc)
{
	if (sc->placement)
		return ", one job, efa + placement cluster: every strategy runs all_or_nothing, "
		       "one AZ and one group at a time";
	return sc->job ? ", one job, locality region" : "";
}

/* The lane's nodeset's rungs, in the order climbed. */
static void ladder_of(struct lane *ln)
{
	const struct gb_conf_nodeset *ns = gb_conf_nodeset(ln->conf, sc_nodeset(ln->sc));

	for (size_t i = 0; ns && i < ns->n_capacity && i < GB_CAPACITY_COUNT; i++)
		ln->ladder[ln->n_rungs++] = ns->capacity[i].kind;
}

/*
 * A scenario with a ladder: each lane's RunInstances calls and instances
 * per rung, and the calls into pools (AZ and kind, or reservation) that
 * gave nothing in the whole run: how many, in how many pools, and the most
 * in one pool (the ladder's bound: one call per such pool).
 */
static void print_rungs(const struct lane *L, FILE *out, bool markdown)
{
	const struct lane *d = &L[L_DEFAULT];
	int most = 0, dead = 0, pools = 0;

	fprintf(out, markdown ? "\nper rung: RunInstances calls / instances; calls into pools that gave nothing, in how many pools (most in one pool)\n\n| strategy |" :
		"per rung: calls / instances; calls into pools that gave nothing, in how many pools (most in one)\n%-15s", markdown ? "" : "strategy");
	for (int r = 0; r < d->n_rungs; r++)
		fprintf(out, markdown ? " %s |" : " %-24s", gb_conf_capacity_name(d->ladder[r]));
	if (markdown) {
		fprintf(out, "\n|---|");
		for (int r = 0; r < d->n_rungs; r++)
			fprintf(out, "---|");
	}
	fprintf(out, "\n");
	for (int k = 0; k < L_COUNT; k++) {
		fprintf(out, markdown ? "| %s |" : "%-15s", lane_names[k]);
		for (int r = 0; r < d->n_rungs; r++) {
			const struct rung_sum *u = &L[k].rung[d->ladder[r]];
			char cell[64];
			int n = snprintf(cell, sizeof(cell), "%d / %d", u->calls, u->got);

			if (u->dead_calls)
				snprintf(cell + n, sizeof(cell) - (size_t)n, "; %d in %d (%d)",
					 u->dead_calls, u->dead_pools, u->dead_most);
			fprintf(out, markdown ? " %s |" : " %-24s", cell);
		}
		fprintf(out, "\n");
	}
	for (int r = 0; r < d->n_rungs; r++) {
		const struct rung_sum *u = &d->rung[d->ladder[r]];

		dead += u->dead_calls;
		pools += u->dead_pools;
		most = u->dead_most > most ? u->dead_most : most;
	}
	fprintf(out, "%sdefault: %d call(s) into %d pool(s) that gave nothing, at most %d per pool (bound 1: %s)\n",
		markdown ? "\n" : "", dead, pools, most, most <= 1 ? "met" : "MISSED");
}

static void print_table(const struct lane *L, const struct scenario *sc, bool warm, FILE *out,
			bool markdown)
{
	if (markdown) {
		fprintf(out, "\n**%s** (%d nodes%s, %s", sc->name, sc->nodes, sc_what(sc),
			warm ? "warm" : "cold");
		if (O.repeat > 1)
			fprintf(out, ", seed +%d", seed_shift);
		fprintf(out, ")\n\n");
		fprintf(out, "| strategy | obtained / obtainable | RunInstances calls | other calls | time to capacity s | extras (terminated) | rolled back | alive extras at 60 s | placement groups made / left | invariants |\n");
		fprintf(out, "|---|---|---|---|---|---|---|---|---|---|\n");
	} else {
		fprintf(out, "\n== %s (%d nodes%s) %s ==\n", sc->name, sc->nodes, sc_what(sc),
			warm ? "WARM" : "COLD");
		fprintf(out, "%-15s %11s %6s %6s %9s %7s %7s %8s %7s %5s  %s\n", "strategy",
			"obtained", "calls", "other", "ttc_s", "extras", "rolled", "alive60", "groups",
			"inv", "reason");
	}
	for (int k = 0; k < L_COUNT; k++) {
		const struct lane *ln = &L[k];
		char ob[32], gr[32];

		snprintf(ob, sizeof(ob), "%d/%d", ln->obtained, L[L_ORACLE].obtainable);
		snprintf(gr, sizeof(gr), "%d/%d", ln->groups_made, ln->groups_left);
		if (markdown)
			fprintf(out, "| %s | %s | %d | %d | %.1f | %d | %d | %d | %s | %s |\n",
				lane_names[k], ob, ln->calls, ln->other, ln->ttc, ln->extras,
				ln->rolled_back, ln->live60.alive - ln->obtained, gr,
				lane_ok(ln) ? "ok" : "BROKEN");
		else
			fprintf(out, "%-15s %11s %6d %6d %9.1f %7d %7d %8d %7s %5s  %s\n",
				lane_names[k], ob, ln->calls, ln->other, ln->ttc, ln->extras,
				ln->rolled_back, ln->live60.alive - ln->obtained, gr,
				lane_ok(ln) ? "ok" : "BROKEN", ln->reason);
	}
	if (markdown)
		fprintf(out, "\n");
	verdict(L, sc, warm, out);
	if (sc->capacity)
		print_rungs(L, out, markdown);
}

static void run_scenario(const struct scenario *scn, bool warm, const char *dir)
{
	struct scenario run = *scn, *sc = &run;
	struct gb_scenario *model = NULL;
	struct lane L[L_COUNT];
	pthread_t tid[L_COUNT];
	char seeded[512], path[1024];
	gb_error_t err;

	/* checked whole first: a bad file says so before any simulator runs */
	if (gb_scenario_load(sc_path(sc, path, sizeof(path)), &model, &err))
		die(err.text);
	run.model = model;
	memset(L, 0, sizeof(L));
	snprintf(seeded, sizeof(seeded), "%s/seed-%s.db", dir, sc->name);
	if (warm)
		seed_memory(sc, seeded);
	for (int k = 0; k < L_COUNT; k++) {
		struct lane *ln = &L[k];

		ln->kind = (enum lane_kind)k;
		ln->node0 = 10000 + 100 * k;
		ln->sc = sc;
		ln->warm = warm;
		ln->clk.scale = O.scale;
		snprintf(ln->state_path, sizeof(ln->state_path), "%s/%s-%s-%s.db", dir, sc->name,
			 warm ? "warm" : "cold", lane_names[k]);
		rm_state(ln->state_path);
		if (warm && k != L_ORACLE && !copy_file(seeded, ln->state_path))
			die("cannot copy the seeded state file");
		start_sim(&ln->sim, sc, O.scale);
		ln->conf = load_conf(ln->sim.endpoint, sc);
		ladder_of(ln);
	}
	for (int k = 0; k < L_COUNT; k++)
		pthread_create(&tid[k], NULL, k == L_ORACLE ? run_oracle_lane : run_engine_lane, &L[k]);
	for (int k = 0; k < L_COUNT; k++)
		pthread_join(tid[k], NULL);
	sim_sleep(60, &L[0].clk);	/* 60 simulated seconds */
	for (int k = 0; k < L_COUNT; k++) {
		read_live(&L[k].sim, L[k].request_id, &L[k].live60);
		end_run(&L[k]);
		violations += !lane_ok(&L[k]);
		sum_extras[k] += L[k].extras;
		sum_rolled[k] += L[k].rolled_back;
		sum_nodes[k] += sc->nodes;
		gb_simh_stop(&L[k].sim);
		gb_conf_destroy(L[k].conf);
		rm_state(L[k].state_path);
	}
	rm_state(seeded);
	print_table(L, sc, warm, stdout, false);
	fflush(stdout);
	if (md)
		print_table(L, sc, warm, md, true);
	gb_scenario_destroy(model);
}

/* the extras of each strategy per 100 nodes requested, over every run */
static void print_extras(FILE *out)
{
	double per100 = 0;

	fprintf(out, "\nextras per 100 nodes requested (%d run(s) of each scenario, cold and warm):",
		O.repeat);
	for (int k = 0; k < L_ORACLE; k++) {
		double v = sum_nodes[k] ? 100.0 * sum_extras[k] / sum_nodes[k] : 0;

		fprintf(out, "%s %s %.2f (%d in %d nodes; %d rolled back)", k ? "," : "",
			lane_names[k], v, sum_extras[k], sum_nodes[k], sum_rolled[k]);
		if (k == L_DEFAULT)
			per100 = v;
	}
	fprintf(out, "\ndefault: %.2f extras per 100 nodes, bound %.0f: %s\n", per100, EXTRAS_BOUND,
		per100 < EXTRAS_BOUND ? "met" : "MISSED");
}

/* the scenarios this run picked: named ones, then files */
static const struct scenario *picked[GB_ARRAY_LEN(all_scenarios) + 16];
static size_t n_picked;

static void rm_scenario_copies(const char *dir)
{
	char p[600];

	for (int r = 1; r < O.repeat; r++)
		for (size_t s = 0; s < n_picked; s++) {
			snprintf(p, sizeof(p), "%s/%s-seed%d.yaml", dir, picked[s]->name, r);
			unlink(p);
		}
}

__attribute__((noreturn))
static void usage(void)
{
	fprintf(stderr, "usage: fill-bench --sim BIN --srcdir DIR [--scenario NAME]... "
		"[--time-scale X] [--seed-runs N] [--noise PERCENT] [--markdown FILE] [--hedge N] "
		"[--no-prior] [--repeat N] [--first-type-only] [--conf FILE] [--reprobe SECONDS] "
		"[--scenario-file FILE [--nodes N] [--job] [--placement] [--second-type TYPE] "
		"[--capacity YAML]]...\n");
	exit(2);
}

/* A bad argument: say which and why, then the usage. */
__attribute__((noreturn, format(printf, 1, 2)))
static void bad_arg(const char *fmt, ...)
{
	va_list ap;

	fputs("fill-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage();
}

/* The shape options apply to the last --scenario-file. */
static struct scenario *last_file(const char *opt)
{
	if (O.n_files == 0)
		bad_arg("%s applies to a --scenario-file: give one before it", opt);
	return &O.files[O.n_files - 1];
}

static void add_file(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t len = strlen(base);
	struct scenario *f;
	char *name;

	if (O.n_files == (int)GB_ARRAY_LEN(O.files))
		bad_arg("more than %zu --scenario-file", GB_ARRAY_LEN(O.files));
	if (len > 5 && !strcmp(base + len - 5, ".yaml"))
		len -= 5;
	if (len == 0 || len > 40)
		bad_arg("--scenario-file %s: a file name of 1 to 40 characters before .yaml", path);
	name = strndup(base, len);
	if (!name)
		die("out of memory");
	for (size_t s = 0; s < GB_ARRAY_LEN(all_scenarios); s++)
		if (!strcmp(all_scenarios[s].name, name))
			bad_arg("--scenario-file %s: named like bench/fill/scenarios/%s.yaml "
				"(use --scenario %s for that one)", path, name, name);
	for (int i = 0; i < O.n_files; i++)
		if (!strcmp(O.files[i].name, name))
			bad_arg("--scenario-file %s: a second scenario named %s", path, name);
	f = &O.files[O.n_files++];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->path = path;
	f->nodes = 16;
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sim", required_argument, NULL, 's' },
		{ "srcdir", required_argument, NULL, 'd' },
		{ "scenario", required_argument, NULL, 'c' },
		{ "time-scale", required_argument, NULL, 't' },
		{ "seed-runs", required_argument, NULL, 'n' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "hedge", required_argument, NULL, 'h' },
		{ "no-prior", no_argument, NULL, 'p' },
		{ "noise", required_argument, NULL, 'z' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "first-type-only", no_argument, NULL, 'f' },
		{ "conf", required_argument, NULL, 'C' },
		{ "reprobe", required_argument, NULL, 'R' },
		{ "scenario-file", required_argument, NULL, 'F' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "job", no_argument, NULL, 'J' },
		{ "placement", no_argument, NULL, 'P' },
		{ "second-type", required_argument, NULL, 'S' },
		{ "capacity", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	static char conf[1024];
	long v;
	int c;

	O.scale = 10;
	O.seed_runs = 5;
	O.repeat = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': O.sim = optarg; break;
		case 'f': O.first_type_only = true; break;
		case 'd': O.srcdir = optarg; break;
		case 'c': {
			bool known = false;

			for (size_t k = 0; k < GB_ARRAY_LEN(all_scenarios); k++)
				known |= !strcmp(all_scenarios[k].name, optarg);
			if (!known)
				bad_arg("--scenario %s: not one of bench/fill/scenarios (ample, scattered, "
					"home-empty, throttle-storm, quota-wall, job8, second-type, ladder, "
					"train-fallback, train-nowhere); --scenario-file runs a file", optarg);
			if (O.n_only == (int)GB_ARRAY_LEN(O.only))
				bad_arg("more than %zu --scenario", GB_ARRAY_LEN(O.only));
			O.only[O.n_only++] = optarg;
			break;
		}
		case 'C': O.conf = optarg; break;
		case 'R':
			if (gb_parse_double(optarg, &O.reprobe) || !(O.reprobe >= 0) ||
			    O.reprobe > 86400)
				bad_arg("--reprobe %s: the re-probe window, seconds from 0 to 86400",
					optarg);
			break;
		case 'F': add_file(optarg); break;
		case 'N':
			if (gb_parse_long(optarg, 1, SCENARIO_NODES_MAX, &v))
				bad_arg("--nodes %s: a whole number from 1 to %d", optarg,
					SCENARIO_NODES_MAX);
			last_file("--nodes")->nodes = (int)v;
			break;
		case 'J': last_file("--job")->job = true; break;
		case 'P': last_file("--placement")->placement = true; break;
		case 'S': last_file("--second-type")->second = optarg; break;
		case 'L': last_file("--capacity")->capacity = optarg; break;
		case 't':
			if (gb_parse_double(optarg, &O.scale) || O.scale <= 0 || O.scale > 100)
				usage();
			break;
		case 'n':
			if (gb_parse_long(optarg, 1, 20, &v))
				usage();
			O.seed_runs = (int)v;
			break;
		case 'm': O.markdown = optarg; break;
		case 'h':
			if (gb_parse_long(optarg, -1, 4, &v))
				usage();
			O.tuning.hedge = v == 0 ? -1 : (int)v;
			break;
		case 'p': O.tuning.prior = -1; break;
		case 'z':
			if (gb_parse_long(optarg, 0, 100, &v))
				usage();
			O.noise = (int)v;
			break;
		case 'r':
			if (gb_parse_long(optarg, 1, 100, &v))
				usage();
			O.repeat = (int)v;
			break;
		default: usage();
		}
	}
	if (!O.sim || !O.srcdir)
		usage();
	if (optind < argc)
		bad_arg("unexpected argument \"%s\"", argv[optind]);
	for (int i = 0; i < O.n_files; i++) {
		struct gb_scenario *model = NULL;
		gb_error_t err;

		if (O.files[i].placement && !O.files[i].job)
			bad_arg("--scenario-file %s: --placement is a training job: give --job too",
				O.files[i].path);
		/* every file checked before the first scenario runs */
		if (gb_scenario_load(O.files[i].path, &model, &err))
			die(err.text);
		gb_scenario_destroy(model);
	}
	if (!O.conf) {
		snprintf(conf, sizeof(conf), "%s/bench/fill/gpuburst.yaml", O.srcdir);
		O.conf = conf;
	}
	/* the named scenarios (all of them when neither option names one), then the files */
	for (size_t k = 0; k < GB_ARRAY_LEN(all_scenarios); k++) {
		bool pick = O.n_only == 0 && O.n_files == 0;

		for (int i = 0; i < O.n_only; i++)
			pick |= !strcmp(O.only[i], all_scenarios[k].name);
		if (pick)
			picked[n_picked++] = &all_scenarios[k];
	}
	for (int i = 0; i < O.n_files; i++)
		picked[n_picked++] = &O.files[i];
}

int main(int argc, char **argv)
{
	struct gb_log_opts lo = { NULL, false, GB_LOG_ERROR, true };
	const char *tmp = getenv("TMPDIR");
	char dir[256];
	double t0 = gb_time_mono();

	parse(argc, argv);
	gb_log_open("fill-bench", &lo, NULL);
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "%s/fill-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die("mkdtemp");
	if (O.markdown && !(md = fopen(O.markdown, "w")))
		die("cannot write the markdown file");
	printf("fill-bench: time scale %g (simulated seconds), %d warm-up runs (noise %d%%), hedge %d, prior %s\n",
	       O.scale, O.seed_runs, O.noise, O.tuning.hedge > 0 ? O.tuning.hedge :
	       O.tuning.hedge < 0 ? 0 : 1, O.tuning.prior < 0 ? "off" : "on");
	workdir = dir;
	for (seed_shift = 0; seed_shift < O.repeat; seed_shift++)
		for (size_t s = 0; s < n_picked; s++) {
			if (O.repeat > 1)
				printf("\n--- %s, seed +%d ---\n", picked[s]->name, seed_shift);
			run_scenario(picked[s], false, dir);
			run_scenario(picked[s], true, dir);
		}
	rm_scenario_copies(dir);
	rmdir(dir);
	print_extras(stdout);
	if (md) {
		fprintf(md, "\n");
		print_extras(md);
		fclose(md);
	}
	printf("\nfill-bench: %.0f s, %d invariant violation(s)\n", gb_time_mono() - t0, violations);
	return violations ? 1 : 0;
}
