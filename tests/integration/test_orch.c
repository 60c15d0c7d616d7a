/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_orch.c - the orchestrator (liborch + libplan) against a real
 * gpuburst-cloudsim on 127.0.0.1, over HTTP with SigV4: each strategy's
 * exact call pattern on small hand-made landscapes, error classes, job
 * locality, extras, terminate, crash-and-rerun without double launch, and
 * the ancestor's properties P1-P11 plus the invariants as randomized tests
 * over many generated capacity landscapes.
 *
 * The seed of the randomized part is printed; GB_ORCH_SEED overrides it and
 * GB_ORCH_LANDSCAPES the number of landscapes (default 300).  Output is TAP
 * ("ok - ..." / "not ok - ..."); the exit status is 0 only if every check
 * passed, 77 (skip) when the simulator was not built.
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gb_conf.h"
#include "gb_log.h"
#include "gb_orch.h"
#include "gb_simh.h"
#include "gb_state.h"
#include "gb_str.h"
#include "gb_util.h"
#include "orch_int.h"
#include "tap.h"

static struct gb_simh sim;
static struct gb_conf *conf;
static gb_orch_t *orch;
static gb_state_t *st;
static char tmpdir[256], statepath[320];
static int state_no, node_no = 1;
static double slept;

/*****************************************************************************
 *  Harness
 *****************************************************************************/

/* One TAP check (tests/tap.h): "ok N - ..." or "not ok N - ...". */
#define check(ok, ...) tap_ok((ok), __VA_ARGS__)

static void cleanup(void)
{
	gb_orch_destroy(orch);
	orch = NULL;
	gb_state_close(st);
	st = NULL;
	gb_conf_destroy(conf);
	conf = NULL;
	gb_simh_stop(&sim);
}

static void die(const char *what)
{
	tap_bail("%s", what);
	cleanup();
	exit(1);
}

static bool sleep_moves_sim;	/* fake_sleep moves the simulator's clock too */

/*
 * No real waits: back-off is counted, not slept.  With sleep_moves_sim
 * the simulated cloud lives through the wait (POST /_sim/time), so that
 * what it hides for a while (eventual consistency) shows after it.
 */
static void fake_sleep(double s, void *ctx)
{
	char json[64];
	gb_error_t err;

	(void)ctx;
	slept += s;
	if (!sleep_moves_sim)
		return;
	snprintf(json, sizeof(json), "{\"advance\": %.3f}", s);
	if (gb_simh_call(&sim, "POST", "/_sim/time", json, NULL, &err))
		die(err.text);
}

static char *read_all(const char *path)
{
	char *text = NULL;
	size_t len;

	if (gb_file_read(path, 1 << 20, &text, &len, NULL))
		die(path);
	return text;
}

static struct gb_conf *load_conf(const char *srcdir, const char *endpoint)
{
	char path[512], *text;
	struct gb_buf b = GB_BUF_INIT;
	struct gb_conf *c = NULL;
	gb_error_t err;
	size_t off;

	snprintf(path, sizeof(path), "%s/tests/data/orch/gpuburst.yaml", srcdir);
	text = read_all(path);
	off = strcspn(text, "@");
	if (strncmp(text + off, "@ENDPOINT@", 10) != 0)
		die("no @ENDPOINT@ in the test config");
	gb_buf_append(&b, text, off);
	gb_buf_puts(&b, endpoint);
	gb_buf_puts(&b, text + off + strlen("@ENDPOINT@"));
	free(text);
	if (gb_conf_load_string("gpuburst.yaml", b.data, b.len, &c, NULL, &err))
		die(err.text);
	gb_buf_free(&b);
	return c;
}

static void make_orch(const struct gb_orch_tuning *tuning)
{
	struct gb_orch_opts oo = { 0 };
	gb_error_t err;

	gb_orch_destroy(orch);
	oo.conf = conf;
	oo.state_path = statepath;
	oo.max_parallel = 8;
	oo.sleep = fake_sleep;
	oo.tuning = tuning;
	if (gb_orch_create(&oo, &orch, &err))
		die(err.text);
}

/* A fresh state file (empty memory and offerings cache). */
static void fresh_state(void)
{
	gb_error_t err;

	gb_state_close(st);
	snprintf(statepath, sizeof(statepath), "%s/state-%d.db", tmpdir, ++state_no);
	if (gb_state_open(statepath, 0, 5000, &st, &err))
		die(err.text);
}

static const char *const all_pools[][2] = {
	{ "ap-south-1a", "g5.xlarge" }, { "ap-south-1a", "g6e.xlarge" },
	{ "ap-south-1b", "g5.xlarge" },
	{ "ap-northeast-1a", "g5.xlarge" }, { "ap-northeast-1a", "g6e.xlarge" },
	{ "ap-northeast-1c", "g5.xlarge" },
	{ "ap-northeast-3a", "g5.xlarge" },
	{ "ap-northeast-2a", "g5.xlarge" }, { "ap-northeast-2a", "g6e.xlarge" },
	{ "ap-northeast-2b", "g5.xlarge" },
	{ "ap-northeast-2c", "g5.xlarge" }, { "ap-northeast-2c", "g6e.xlarge" },
};
#define N_POOLS GB_ARRAY_LEN(all_pools)

static void set_cap(const char *az, const char *type, long n)
{
	gb_error_t err;

	if (gb_simh_capacity(&sim, az, type, n, &err))
		die(err.text);
}

/* Every pool empty, then the given "az=type=n" settings. */
static void landscape(const char *const *spec)
{
	char az[64], type[64];
	long n;

	for (size_t i = 0; i < N_POOLS; i++)
		set_cap(all_pools[i][0], all_pools[i][1], 0);
	for (size_t i = 0; spec && spec[i]; i++) {
		if (sscanf(spec[i], "%63[^=]=%63[^=]=%ld", az, type, &n) != 3)
			die("bad landscape spec");
		set_cap(az, type, n);
	}
}

static void fault(const char *json)
{
	gb_error_t err;

	if (gb_simh_fault(&sim, json, &err))
		die(err.text);
}

static void no_faults(void)
{
	gb_error_t err;

	if (gb_simh_call(&sim, "DELETE", "/_sim/fault", NULL, NULL, &err))
		die(err.text);
}

struct req_opts {
	const char *nodeset;
	int n;
	int64_t job;
	int strategy;
	int mode;
	int locality;
	const char *home;
};
#define REQ(ns, n, strat) { ns, n, 0, strat, -1, -1, NULL }

static const char *prefix_of(const char *nodeset)
{
	return !strcmp(nodeset, "g5") ? "g5" : !strcmp(nodeset, "g6e") ? "g6e" :
	       !strcmp(nodeset, "tokyo") ? "tk" : "tke";
}

/* Add a request for [n] fresh nodes. */
static void add_req(const struct req_opts *q, struct gb_request *req)
{
	char nodes[128];
	gb_error_t e;

	snprintf(nodes, sizeof(nodes), "%s-[%d-%d]", prefix_of(q->nodeset), node_no,
		 node_no + q->n - 1);
	node_no += q->n;
	memset(req, 0, sizeof(*req));
	req->kind = GB_REQ_RESUME;
	req->state = GB_RSTATE_RUNNING;
	req->nodeset = q->nodeset;
	req->job_id = q->job;
	req->nodes = strdup(nodes);
	req->node_count = q->n;
	if (gb_state_request_add(st, req, &e))
		die(e.text);
}

/* Add a request for [n] fresh nodes and run it. */
static gb_err_t run_req(const struct req_opts *q, struct gb_request *req,
			struct gb_orch_result *res, gb_error_t *err)
{
	struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;

	add_req(q, req);
	ro.strategy = q->strategy;
	ro.mode = q->mode;
	ro.locality = q->locality;
	ro.home_region = q->home;
	memset(res, 0, sizeof(*res));
	return gb_orch_resume(orch, st, req, &ro, res, err);
}

/* A fresh state file and orchestrator, landscape [l], then run [q]. */
static gb_err_t fresh_run(const char *const *l, const struct req_opts *q,
			  struct gb_request *req, struct gb_orch_result *res,
			  gb_error_t *err)
{
	fresh_state();
	make_orch(NULL);
	landscape(l);
	return run_req(q, req, res, err);
}

static void req_free(struct gb_request *req)
{
	free((char *)req->nodes);
	req->nodes = NULL;
}

/* Attempts of a request, in seq order. */
struct att {
	int seq, min, asked, got;
	double started, finished;	/* wall clock */
	char region[32], az[32], subnet[32], token[72], code[64], state[16], capacity[16];
};
struct atts {
	struct att v[512];
	int n;
};

static int att_row(const struct gb_attempt *a, void *arg)
{
	struct atts *x = arg;
	struct att *t;

	if (x->n >= (int)GB_ARRAY_LEN(x->v))
		return 1;
	t = &x->v[x->n++];
	t->seq = a->seq;
	t->min = a->min_count;
	t->asked = a->asked;
	t->got = a->got;
	t->started = a->started_at;
	t->finished = a->finished_at;
	gb_strlcpy(t->region, a->region, sizeof(t->region));
	gb_strlcpy(t->az, a->az ? a->az : "", sizeof(t->az));
	gb_strlcpy(t->subnet, a->subnet ? a->subnet : "", sizeof(t->subnet));
	gb_strlcpy(t->token, a->client_token, sizeof(t->token));
	gb_strlcpy(t->code, a->error_code ? a->error_code : "", sizeof(t->code));
	gb_strlcpy(t->state, gb_attempt_state_name(a->state), sizeof(t->state));
	gb_strlcpy(t->capacity, a->capacity, sizeof(t->capacity));
	return 0;
}

static void attempts(const char *id, struct atts *x)
{
	gb_error_t err;

	x->n = 0;
	if (gb_state_attempt_list(st, id, att_row, x, &err))
		die(err.text);
}

static void asked_seq(const struct atts *x, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < x->n && len + 8 < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%d%s", i ? "," : "",
					x->v[i].asked, x->v[i].got ? "+" : "");
}

/* Recorded instances of a request (alive or all). */
struct recs {
	struct gb_strv ids, nodes, regions;
	int alive, extras;
};

static int rec_row(const struct gb_instance *in, void *arg)
{
	struct recs *r = arg;

	gb_strv_add(&r->ids, in->instance_id);
	gb_strv_add(&r->regions, in->region);
	gb_strv_add(&r->nodes, in->node ? in->node : "");
	r->alive += in->state == GB_INST_PENDING || in->state == GB_INST_RUNNING ||
		    in->state == GB_INST_TERMINATING;
	r->extras += !in->node;
	return 0;
}

static void records(const char *id, struct recs *r)
{
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	gb_error_t err;

	memset(r, 0, sizeof(*r));
	f.request_id = id;
	if (gb_state_instance_list(st, &f, rec_row, r, &err))
		die(err.text);
}

static void records_free(struct recs *r)
{
	gb_strv_free(&r->ids);
	gb_strv_free(&r->nodes);
	gb_strv_free(&r->regions);
}

static bool trace_has(const struct gb_orch_result *res, const char *needle)
{
	for (size_t i = 0; i < res->trace.n; i++)
		if (strstr(res->trace.v[i], needle))
			return true;
	return false;
}

static int count_region(const struct gb_orch_result *res, const char *region)
{
	int n = 0;

	for (size_t i = 0; i < res->n_nodes; i++)
		n += res->nodes[i].region && !strcmp(res->nodes[i].region, region);
	return n;
}

static struct gb_simh_count sim_count(const char *id)
{
	struct gb_simh_count c;
	gb_error_t err;

	if (gb_simh_count(&sim, id, &c, &err))
		die(err.text);
	return c;
}

/*****************************************************************************
 *  Call patterns of each strategy
 *****************************************************************************/

static void test_probe_fill_pattern(void)
{
	static const char *const l1[] = { "ap-south-1b=g5.xlarge=4", NULL };
	static const char *const l2[] = { "ap-south-1a=g5.xlarge=4",
					  "ap-south-1b=g5.xlarge=1", NULL };
	struct req_opts q = REQ("g5", 4, GB_STRATEGY_PROBE_FILL);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	char seq[256];
	gb_error_t err;
	gb_err_t rc;

	rc = fresh_run(l1, &q, &req, &res, &err);
	attempts(req.id, &x);
	asked_seq(&x, seq, sizeof(seq));
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 4,
	      "probe_fill: 4 nodes, SUCCESS (%s)", res.reason);
	check(!strcmp(seq, "4,2,1,4,2,1,4+"),
	      "probe_fill: 4,2,1 on each dry subnet of ap-south-1a, then 4 in ap-south-1b (%s)", seq);
	check(x.n == 7 && !strcmp(x.v[0].subnet, "subnet-aps1a-1") &&
	      !strcmp(x.v[3].subnet, "subnet-aps1a-2") &&
	      !strcmp(x.v[6].subnet, "subnet-aps1b-1") && x.v[0].min == x.v[0].asked,
	      "probe_fill: subnets in config order, MinCount = MaxCount");
	gb_orch_result_clear(&res);
	req_free(&req);

	landscape(l2);
	q.n = 5;
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	asked_seq(&x, seq, sizeof(seq));
	check(rc == GB_E_OK && res.launched == 5 && !strcmp(seq, "4+,1,1,1+"),
	      "probe_fill: 4 ok, ICE at 1 (subnet done), other subnet ICE at 1, next AZ 1 (%s)", seq);
	check(trace_has(&res, "region_result region=ap-south-1 status=FULL requested=5 launched=5"),
	      "probe_fill: region result FULL 5/5");
	gb_orch_result_clear(&res);
	req_free(&req);
}

static void test_best_effort_pattern(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=3",
					 "ap-south-1b=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 5, GB_STRATEGY_BEST_EFFORT);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	char seq[256];
	gb_error_t err;
	gb_err_t rc;

	rc = fresh_run(l, &q, &req, &res, &err);
	attempts(req.id, &x);
	asked_seq(&x, seq, sizeof(seq));
	check(rc == GB_E_OK && res.launched == 5 && x.n == 2 && x.v[0].min == 1 &&
	      x.v[0].asked == 4 && x.v[0].got == 3 && x.v[1].asked == 2 &&
	      x.v[1].got == 2 && !strcmp(x.v[1].az, "ap-south-1b"),
	      "best_effort: MinCount 1, MaxCount 4 takes 3, the dry AZ is left, 2 more next (%s)", seq);
	check(res.api_calls == 2 && res.extras == 0, "best_effort: 2 calls, no extras");
	gb_orch_result_clear(&res);
	req_free(&req);
}

static void test_all_or_nothing_pattern(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4",
					 "ap-northeast-2a=g5.xlarge=2", NULL };
	struct req_opts q = REQ("g5", 7, GB_STRATEGY_ALL_OR_NOTHING);
	struct gb_request req;
	struct gb_orch_result res;
	struct gb_simh_count c;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;
	bool exact = true;

	rc = fresh_run(l, &q, &req, &res, &err);
	attempts(req.id, &x);
	for (int i = 0; i < x.n; i++)
		exact &= x.v[i].min == x.v[i].asked;
	c = sim_count(req.id);
	check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.launched == 0,
	      "all_or_nothing: 6 of 7 obtainable is FAILED (%s)", res.reason);
	check(exact && res.rolled_back == 4 && c.alive == 0 && c.total == 4,
	      "all_or_nothing: MinCount = MaxCount (4, then 3 nowhere); the 4 launched were terminated at once (sim alive %d of %d)",
	      c.alive, c.total);
	gb_orch_result_clear(&res);
	req_free(&req);

	landscape(l);
	q.n = 6;
	rc = run_req(&q, &req, &res, &err);
	c = sim_count(req.id);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && c.alive == 6 &&
	      res.rolled_back == 0, "all_or_nothing: 6 of 6 obtainable is SUCCESS (%s)", res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);
}

static void test_default_pattern(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=3",
					 "ap-south-1b=g5.xlarge=2",
					 "ap-northeast-2a=g5.xlarge=2", NULL };
	struct req_opts q = REQ("g5", 6, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct recs r;
	struct atts x;
	char seq[256];
	gb_error_t err;
	gb_err_t rc;
	bool tagged = true;

	rc = fresh_run(l, &q, &req, &res, &err);
	attempts(req.id, &x);
	asked_seq(&x, seq, sizeof(seq));
	records(req.id, &r);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 6 &&
	      res.extras == 0, "default (cold): 6 nodes from 7 scattered, no extras (%s)", seq);
	check(x.n >= 2 && x.v[0].min == 1 && x.v[1].min == 1 && x.v[0].asked + x.v[1].asked == 6 &&
	      strcmp(x.v[0].az, x.v[1].az) != 0,
	      "default (cold): the first wave asks two AZs at once for 4 + 2");
	check(trace_has(&res, "wave round=1 calls=2"), "default: the trace shows the wave");
	for (size_t i = 0; i < res.n_nodes; i++)
		tagged &= res.nodes[i].instance_id && res.nodes[i].private_ip &&
			  res.nodes[i].az && res.nodes[i].subnet;
	check(tagged && r.ids.n == 6 && r.extras == 0,
	      "every node has instance, AZ, subnet and private IP; 6 records");
	records_free(&r);
	gb_orch_result_clear(&res);
	req_free(&req);
}

/*
 * max_rounds bounds the batches in a row that fill nothing, not the size
 * of a request: with one batch allowed, 100 nodes in calls of 4 (25 calls,
 * 8 in parallel) still all come; a 1000-node request (the largest the
 * policy allows) with the default knobs too, without a wasted call: a
 * pool that answers in full earns one more parallel call per answer.
 */
static void test_large_request(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=1000",
					 "ap-south-1b=g5.xlarge=1000", NULL };
	struct gb_orch_tuning one = { .max_rounds = 1 };
	struct req_opts q = REQ("g5", 100, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	fresh_state();
	make_orch(&one);
	landscape(l);
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 100 &&
	      x.n >= 25, "max_rounds 1: 100 nodes in %d calls (launched %d)", x.n,
	      res.launched);
	gb_orch_result_clear(&res);
	req_free(&req);

	fresh_state();
	make_orch(NULL);
	q.n = 1000;
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	/*
	 * No wasted ask: 250 calls that each launched a full 4, and at most one
	 * ICE probe of each of the 5 empty AZs.  Calls lost at the HTTP level
	 * on a loaded machine (then re-sent with their token) are allowed and
	 * named in the message.
	 */
	{
		int full = 0, short_ = 0, ice = 0, other = 0;
		char others[256] = "";

		for (int i = 0; i < x.n; i++) {
			if (x.v[i].got == 4)
				full++;
			else if (x.v[i].got > 0)
				short_++;
			else if (!strcmp(x.v[i].code, "InsufficientInstanceCapacity"))
				ice++;
			else if (other++ < 4)
				snprintf(others + strlen(others), sizeof(others) - strlen(others),
					 " %s:%s:%s", x.v[i].az, x.v[i].state, x.v[i].code);
		}
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 1000 &&
		      res.extras == 0 && full == 250 && short_ == 0 && ice <= 5,
		      "default knobs: 1000 nodes in %d calls: %d of 4, %d short, %d ICE probes, %d other%s (extras %d)",
		      x.n, full, short_, ice, other, others, res.extras);
	}
	check(trace_has(&res, "ap-south-1a:4+0,ap-south-1a:4+0,ap-south-1a:4+0,ap-south-1a:4+0"),
	      "a pool that answers in full is asked in parallel chunks (slow start)");
	gb_orch_result_clear(&res);
	req_free(&req);

	/*
	 * max_rounds 1, and only the plan's last pool holds anything: every
	 * batch of one call fills nothing until it, yet the request goes on
	 * while pools it has not asked remain, and asks none of them twice.
	 */
	{
		static const char *const last[] = { "ap-northeast-2c=g5.xlarge=2", NULL };
		int twice = 0;

		fresh_state();
		make_orch(&one);
		landscape(last);
		q.n = 2;
		rc = run_req(&q, &req, &res, &err);
		attempts(req.id, &x);
		for (int i = 0; i < x.n; i++)
			for (int k = 0; k < i; k++)
				twice += !strcmp(x.v[i].az, x.v[k].az) && x.v[k].got == 0;
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 2 &&
		      twice == 0 && x.n >= 2,
		      "max_rounds 1: the last pool of the plan still asked (%d calls, %d again after a refusal): %s",
		      x.n, twice, res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

/*
 * Memory says 1 per AZ; there are 5.  Need 2: the first AZ is asked 1 + 1
 * hedge named like the other call's node (in another region: a hedge never
 * shares a name within its region), the second exactly the 1 left; all
 * three come: one extra.
 */
static void test_extras(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=5",
					 "ap-northeast-2a=g5.xlarge=5", NULL };
	struct req_opts q = REQ("g5", 2, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct gb_simh_count c;
	struct recs r;
	gb_error_t err;
	gb_err_t rc;
	double now = gb_time_now() - 7200;

	fresh_state();
	make_orch(NULL);
	if (gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL, 4, 1,
				     true, false, now, 3600, &err) ||
	    gb_state_capacity_record(st, "ap-northeast-2", "ap-northeast-2a", "g5.xlarge", NULL, 4, 1,
				     true, false, now, 3600, &err))
		die(err.text);
	landscape(l);
	rc = run_req(&q, &req, &res, &err);
	c = sim_count(req.id);
	records(req.id, &r);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 2,
	      "hedged: 2 nodes (%s)", res.reason);
	check(res.extras == 1 && res.terminated == 1 && c.alive == 2 && c.dying == 1,
	      "hedged: the extra instance was terminated at once (extras %d, sim alive %d dying %d)",
	      res.extras, c.alive, c.dying);
	check(r.extras == 1 && r.alive == 2, "the extra is recorded (node NULL, terminated)");
	records_free(&r);
	gb_orch_result_clear(&res);
	req_free(&req);

	/*
	 * Need 3, memory 1 in each of three AZs; now ap-northeast-2a holds 1
	 * and ap-northeast-1a none.  The calls are ap-south-1a [1 + hedge
	 * named like ap-northeast-2a's node], ap-northeast-2a [1 + hedge like
	 * ap-northeast-1a's], ap-northeast-1a [1 + hedge]; ap-south-1a answers
	 * last (a fault's latency), after every other pool refused the node
	 * ap-northeast-1a could not give.  Its hedge, whose node
	 * ap-northeast-2a filled, serves that node instead of being
	 * terminated (before, it was terminated and ap-south-1a asked again).
	 */
	{
		static const char *const l3[] = { "ap-south-1a=g5.xlarge=5",
						  "ap-northeast-2a=g5.xlarge=1", NULL };

		fresh_state();
		make_orch(NULL);
		if (gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL, 4, 1,
					     true, false, now, 3600, &err) ||
		    gb_state_capacity_record(st, "ap-northeast-2", "ap-northeast-2a", "g5.xlarge", NULL,
					     4, 1, true, false, now, 3600, &err) ||
		    gb_state_capacity_record(st, "ap-northeast-1", "ap-northeast-1a", "g5.xlarge", NULL,
					     4, 1, true, false, now, 3600, &err))
			die(err.text);
		landscape(l3);
		fault("{\"count\":1,\"kind\":\"latency\",\"latency\":0.5,\"action\":\"RunInstances\","
		      "\"region\":\"ap-south-1\"}");
		q.n = 3;
		rc = run_req(&q, &req, &res, &err);
		no_faults();
		c = sim_count(req.id);
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 3 &&
		      res.extras == 0 && c.alive == 3 && c.dying == 0 && trace_has(&res, "reuse instance="),
		      "a hedge both calls delivered serves the node a third call missed (extras %d, alive %d, dying %d; %s)",
		      res.extras, c.alive, c.dying, res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

/* Our clock 30 s ahead of the cloud's (as good as EC2's whole seconds). */
static double ahead_wall(void *ctx)
{
	(void)ctx;
	return gb_time_now() + 30;
}

struct launch_check {
	gb_state_t *st;
	int n, before;
};

struct attempt_start {
	int64_t id;
	double at;
};

static int attempt_start_row(const struct gb_attempt *a, void *arg)
{
	struct attempt_start *x = arg;

	if (a->id == x->id)
		x->at = a->started_at;
	return 0;
}

static int launch_row(const struct gb_instance *in, void *arg)
{
	struct launch_check *x = arg;
	struct attempt_start as = { in->attempt_id, 0 };
	char id[GB_REQUEST_ID_LEN + 1];
	gb_error_t err;

	gb_strlcpy(id, in->request_id, sizeof(id));
	if (gb_state_attempt_list(x->st, id, attempt_start_row, &as, &err))
		die(err.text);
	x->n++;
	x->before += as.at <= 0 || in->launched_at < as.at;
	return 0;
}

/* No instance is recorded as launched before the call that launched it. */
static void test_launch_times(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", NULL };
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct req_opts q = REQ("g5", 2, GB_STRATEGY_BEST_EFFORT);
	struct launch_check x = { 0 };
	struct gb_orch_opts oo = { 0 };
	struct gb_request req;
	struct gb_orch_result res;
	gb_error_t err;
	gb_err_t rc;

	fresh_state();
	gb_orch_destroy(orch);
	oo.conf = conf;
	oo.state_path = statepath;
	oo.max_parallel = 8;
	oo.sleep = fake_sleep;
	oo.wall = ahead_wall;
	if (gb_orch_create(&oo, &orch, &err))
		die(err.text);
	landscape(l);
	rc = run_req(&q, &req, &res, &err);
	x.st = st;
	f.request_id = req.id;
	if (gb_state_instance_list(st, &f, launch_row, &x, &err))
		die(err.text);
	check(rc == GB_E_OK && res.launched == 2 && x.n == 2 && x.before == 0,
	      "cloud clock behind ours: %d of %d instances recorded before their call started",
	      x.before, x.n);
	gb_orch_result_clear(&res);
	req_free(&req);
	make_orch(NULL);
}

/*****************************************************************************
 *  Locality, error classes, modes
 *****************************************************************************/

static void test_locality(void)
{
	static const char *const l[] = {
		"ap-south-1a=g5.xlarge=2", "ap-south-1b=g5.xlarge=1",
		"ap-northeast-2a=g5.xlarge=2", "ap-northeast-2b=g5.xlarge=2",
		"ap-northeast-1a=g5.xlarge=3", NULL };
	static const int strategies[] = { GB_STRATEGY_DEFAULT, GB_STRATEGY_BEST_EFFORT,
					  GB_STRATEGY_PROBE_FILL };

	for (size_t s = 0; s < GB_ARRAY_LEN(strategies); s++) {
		struct req_opts q = { "g5", 4, 77, strategies[s], -1, GB_LOCALITY_REGION, NULL };
		struct gb_request req;
		struct gb_orch_result res;
		struct gb_simh_count c;
		gb_error_t err;
		gb_err_t rc;

		rc = fresh_run(l, &q, &req, &res, &err);
		c = sim_count(req.id);
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS &&
		      count_region(&res, "ap-northeast-2") == 4 && c.alive == 4,
		      "locality (%s): the 4-node job lands whole in ap-northeast-2 (%s)",
		      gb_conf_strategy_name(strategies[s]), res.reason);
		check(res.rolled_back == 3 && c.dying == 3,
		      "locality (%s): the 3 from ap-south-1 were rolled back (rolled_back %d, sim dying %d)",
		      gb_conf_strategy_name(strategies[s]), res.rolled_back, c.dying);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	{
		/* all_or_nothing: 4 + 2 chunks; ap-south-1 gives 4 then no 2 */
		static const char *const l3[] = { "ap-south-1a=g5.xlarge=5", "ap-south-1b=g5.xlarge=1",
						  "ap-northeast-2a=g5.xlarge=6", NULL };
		struct req_opts q = { "g5", 6, 79, GB_STRATEGY_ALL_OR_NOTHING, -1,
				      GB_LOCALITY_REGION, NULL };
		struct gb_request req;
		struct gb_orch_result res;
		gb_error_t err;

		fresh_run(l3, &q, &req, &res, &err);
		check(res.result == GB_RESULT_SUCCESS && count_region(&res, "ap-northeast-2") == 6 &&
		      res.rolled_back == 4 && sim_count(req.id).alive == 6,
		      "locality (all_or_nothing): 4 launched in ap-south-1 rolled back, 6 in ap-northeast-2 (%s)",
		      res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	{
		/* single-node jobs and jobless requests spread */
		struct req_opts q = { "g5", 4, 0, GB_STRATEGY_DEFAULT, -1, GB_LOCALITY_REGION, NULL };
		struct gb_request req;
		struct gb_orch_result res;
		gb_error_t err;

		fresh_run(l, &q, &req, &res, &err);
		check(res.result == GB_RESULT_SUCCESS && res.rolled_back == 0 &&
		      count_region(&res, "ap-south-1") == 3,
		      "a jobless request may spread over regions");
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	{
		/* no region can hold the job: nothing survives */
		static const char *const l2[] = { "ap-south-1a=g5.xlarge=2",
						  "ap-northeast-2a=g5.xlarge=2", NULL };
		struct req_opts q = { "g5", 4, 78, GB_STRATEGY_DEFAULT, -1, GB_LOCALITY_REGION, NULL };
		struct gb_request req;
		struct gb_orch_result res;
		gb_error_t err;

		fresh_run(l2, &q, &req, &res, &err);
		check(res.result == GB_RESULT_FAILED && res.rolled_back == 4 &&
		      strstr(res.reason, "(Code:Locality)") && sim_count(req.id).alive == 0,
		      "no region holds the job: FAILED, rolled back (%s)", res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	{
		/*
		 * locality: region.  Mumbai, the nearest, holds the job only
		 * across its two AZs (2 + 2); Seoul holds it in one.  The job
		 * stays in Mumbai: a region is a region, whatever its AZs.
		 */
		static const char *const l5[] = { "ap-south-1a=g5.xlarge=2", "ap-south-1b=g5.xlarge=2",
						  "ap-northeast-2a=g5.xlarge=4", NULL };

		for (size_t k = 0; k < GB_ARRAY_LEN(strategies); k++) {
			struct req_opts q = { "g5", 4, 82, strategies[k], -1, GB_LOCALITY_REGION, NULL };
			struct gb_request req;
			struct gb_orch_result res;
			gb_error_t err;

			fresh_run(l5, &q, &req, &res, &err);
			check(res.result == GB_RESULT_SUCCESS && count_region(&res, "ap-south-1") == 4 &&
			      res.rolled_back == 0 && sim_count(req.id).alive == 4,
			      "locality region (%s): 2 + 2 in Mumbai's two AZs hold the job (%d rolled back; %s)",
			      gb_conf_strategy_name(strategies[k]), res.rolled_back, res.reason);
			gb_orch_result_clear(&res);
			req_free(&req);
		}
	}
	{
		/*
		 * locality: az.  Mumbai holds 5 but in two AZs (2 + 3): region
		 * locality would keep it, AZ locality rolls it back and lands
		 * the job whole in one AZ of Seoul.
		 */
		static const char *const l4[] = { "ap-south-1a=g5.xlarge=2", "ap-south-1b=g5.xlarge=3",
						  "ap-northeast-2a=g5.xlarge=4", NULL };

		for (size_t k = 0; k < 2; k++) {
			struct req_opts q = { "g5", 4, 81, k ? GB_STRATEGY_BEST_EFFORT :
							       GB_STRATEGY_DEFAULT,
					      -1, GB_LOCALITY_AZ, NULL };
			struct gb_request req;
			struct gb_orch_result res;
			int in_az = 0;
			gb_error_t err;

			fresh_run(l4, &q, &req, &res, &err);
			for (size_t i = 0; i < res.n_nodes; i++)
				in_az += res.nodes[i].az && !strcmp(res.nodes[i].az, "ap-northeast-2a");
			check(res.result == GB_RESULT_SUCCESS && in_az == 4 && res.rolled_back >= 1 &&
			      sim_count(req.id).alive == 4,
			      "locality az (%s): the job lands whole in ap-northeast-2a, Mumbai's AZs rolled back (%d rolled back; %s)",
			      k ? "best_effort" : "default", res.rolled_back, res.reason);
			gb_orch_result_clear(&res);
			req_free(&req);
		}
	}
	{
		/* no capacity anywhere: a capacity failure, not a locality one */
		struct req_opts q = { "g5", 4, 80, GB_STRATEGY_DEFAULT, -1, GB_LOCALITY_REGION, NULL };
		struct gb_request req;
		struct gb_orch_result res;
		gb_error_t err;

		fresh_run(NULL, &q, &req, &res, &err);
		check(res.result == GB_RESULT_FAILED && res.rolled_back == 0 &&
		      res.cause == GB_E_CAPACITY &&
		      strstr(res.reason, "(Code:InsufficientInstanceCapacity)") &&
		      res.nodes && res.nodes[0].code &&
		      !strcmp(res.nodes[0].code, "InsufficientInstanceCapacity"),
		      "locality, no capacity anywhere: the code is capacity (%s)", res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

static void test_errors(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-south-1b=g5.xlarge=4",
					 "ap-northeast-2a=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 3, GB_STRATEGY_BEST_EFFORT);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	fault("{\"count\":20,\"kind\":\"error\",\"code\":\"VcpuLimitExceeded\",\"status\":400,"
	      "\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS &&
	      count_region(&res, "ap-northeast-2") == 3 && x.n == 2 &&
	      !strcmp(x.v[0].code, "VcpuLimitExceeded") && trace_has(&res, "quota region=ap-south-1"),
	      "QUOTA: the region is left for the run after one call, the next region fills (%s)",
	      res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);

	landscape(l);
	fault("{\"count\":2,\"kind\":\"error\",\"code\":\"RequestLimitExceeded\",\"status\":503,"
	      "\"action\":\"RunInstances\"}");
	slept = 0;
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && x.n == 2 &&
	      !strcmp(x.v[0].code, "RequestLimitExceeded") && slept > 0 &&
	      !strcmp(x.v[1].az, x.v[0].az),
	      "THROTTLE after the client's retries: back off (%.1f s) and retry the pool", slept);
	gb_orch_result_clear(&res);
	req_free(&req);

	landscape(l);
	fault("{\"count\":1,\"kind\":\"error\",\"code\":\"InternalError\",\"status\":500,"
	      "\"action\":\"RunInstances\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && x.n == 1 &&
	      res.api_calls == 2, "TRANSIENT: retried inside the client with the same token (calls %d)",
	      res.api_calls);
	gb_orch_result_clear(&res);
	req_free(&req);

	landscape(l);
	fault("{\"count\":1000,\"kind\":\"error\",\"code\":\"AuthFailure\",\"status\":401,"
	      "\"action\":\"RunInstances\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.cause == GB_E_AUTH &&
	      gb_str_has_prefix(res.reason, "(Code:AuthFailure)") &&
	      strstr(res.reason, "every region tried refused") && res.api_calls <= 2 * 3,
	      "AuthFailure in every region: the request is aborted with the reason after one call per region (%d HTTP, %s)",
	      res.api_calls, res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);

	landscape(l);
	fault("{\"count\":5,\"kind\":\"error\",\"code\":\"InvalidAMIID.NotFound\",\"status\":400,"
	      "\"message\":\"The image id '[ami-0123456789abcdef0]' does not exist\","
	      "\"action\":\"RunInstances\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.cause == GB_E_CLOUDCONFIG &&
	      strstr(res.reason, "InvalidAMIID.NotFound") && res.api_calls == 1 &&
	      res.nodes[0].code && !strcmp(res.nodes[0].code, "InvalidAMIID.NotFound"),
	      "CONFIG: aborted after one call, each node says why (%s)", res.reason);
	check(!strcmp(res.code, "InvalidAMIID.NotFound") && !strstr(res.text, "(Code:") &&
	      strstr(res.text, "does not exist") &&
	      !strncmp(res.reason, "(Code:InvalidAMIID.NotFound) ", 29) &&
	      !strncmp(res.reason + 29, res.text, strlen(res.reason + 29)) && res.nodes[0].why &&
	      !strstr(res.nodes[0].why, "(Code:"),
	      "the result carries the code and the text apart; the line is made of them (code=%s text=%s)",
	      res.code, res.text);
	gb_orch_result_clear(&res);
	req_free(&req);

	fresh_state();
	landscape(l);
	fault("{\"count\":1,\"kind\":\"error\",\"code\":\"Unsupported\",\"status\":400,"
	      "\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && x.n == 2 &&
	      !strcmp(x.v[0].code, "Unsupported") && strcmp(x.v[1].az, x.v[0].az) != 0,
	      "Unsupported: the AZ is dropped, the next AZ fills (%s then %s)", x.v[0].az,
	      x.n > 1 ? x.v[1].az : "-");
	gb_orch_result_clear(&res);
	req_free(&req);
}

/* {node} in ap-northeast-3's user data: one instance per call; a full /28. */
static void test_addresses(void)
{
	static const char *const l[] = { "ap-northeast-3a=g5.xlarge=30", NULL };
	struct req_opts q = REQ("tokyo", 13, GB_STRATEGY_BEST_EFFORT);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;
	int small = 0, big = 0, ones = 0;
	bool addr = false;

	rc = fresh_run(l, &q, &req, &res, &err);
	attempts(req.id, &x);
	for (size_t i = 0; i < res.n_nodes; i++) {
		small += res.nodes[i].subnet && !strcmp(res.nodes[i].subnet, "subnet-apne3a-small");
		big += res.nodes[i].subnet && !strcmp(res.nodes[i].subnet, "subnet-apne3a-big");
	}
	for (int i = 0; i < x.n; i++) {
		ones += x.v[i].asked == 1 || strcmp(x.v[i].region, "ap-northeast-3") != 0;
		addr |= !strcmp(x.v[i].code, "InsufficientFreeAddressesInSubnet");
	}
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && small == 11 && big == 2 &&
	      addr, "a full subnet: InsufficientFreeAddressesInSubnet moves to the AZ's next subnet (11 + 2)");
	check(ones == x.n, "{node} in ap-northeast-3's user data: every call there launches exactly one instance");
	gb_orch_result_clear(&res);
	req_free(&req);
}

/*****************************************************************************
 *  The default strategy's memory: lower bounds, quota walls, work queue
 *****************************************************************************/

struct cap_probe {
	const char *az;
	double level_sum, level_n, floor_sum, floor_n;
};

static int cap_row(const struct gb_capacity *c, void *arg)
{
	struct cap_probe *p = arg;

	if (c->az && !strcmp(c->az, p->az)) {
		p->level_sum = c->level_sum;
		p->level_n = c->level_n;
		p->floor_sum = c->floor_sum;
		p->floor_n = c->floor_n;
	}
	return 0;
}

static struct cap_probe capacity_of(const char *az)
{
	struct cap_probe p = { az, 0, 0, 0, 0 };
	gb_error_t err;

	if (gb_state_capacity_list(st, "g5.xlarge", gb_time_now(), 3600, cap_row, &p, &err))
		die(err.text);
	return p;
}

struct quota_probe {
	const char *region, *quota;
	double limit_sum, limit_n, refusals;
	char code[40];
};

static int quota_row(const struct gb_quota *q, void *arg)
{
	struct quota_probe *p = arg;

	if (!strcmp(q->region, p->region) && !strcmp(q->quota, p->quota)) {
		p->limit_sum = q->limit_sum;
		p->limit_n = q->limit_n;
		p->refusals = q->refusals;
		gb_strlcpy(p->code, q->code, sizeof(p->code));
	}
	return 0;
}

static struct quota_probe quota_of(const char *region, const char *quota)
{
	struct quota_probe p = { region, quota, 0, 0, 0, "" };
	gb_error_t err;

	if (gb_state_quota_list(st, gb_time_now(), 3600, quota_row, &p, &err))
		die(err.text);
	return p;
}

static int asked_in(const struct atts *x, const char *region)
{
	int n = 0;

	for (int i = 0; i < x->n; i++)
		n += !strcmp(x->v[i].region, region) ? x->v[i].asked : 0;
	return n;
}

/*
 * The board (orch_board.c): six one-node requests run at once, as a
 * worker runs the jobs of a burst.  ap-south-1a is dry and ap-south-1b
 * holds one instance; each pool costs at most one
 * InsufficientInstanceCapacity in all, every request gets its node
 * (Tokyo has room), and a request that left a pool says whose answer it
 * went by.  A request that begins after they all ended goes by capacity
 * memory instead (the next test's "still probed, one instance each").
 */
struct board_run {
	struct gb_request req;
	struct gb_orch_result res;
	gb_err_t rc;
	gb_error_t err;
};

static void *board_thread(void *arg)
{
	struct board_run *b = arg;
	struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;
	gb_state_t *h;

	ro.strategy = GB_STRATEGY_DEFAULT;
	if ((b->rc = gb_state_open(statepath, 0, 5000, &h, &b->err)))
		return NULL;
	b->rc = gb_orch_resume(orch, h, &b->req, &ro, &b->res, &b->err);
	gb_state_close(h);
	return NULL;
}

/* [action] calls the simulator has answered so far. */
static long sim_calls(const char *action)
{
	char *body = NULL;
	json_t *d, *a;
	long n;
	gb_error_t err;

	if (gb_simh_call(&sim, "GET", "/_sim/state", NULL, &body, &err))
		die(err.text);
	if (!(d = json_loads(body, 0, NULL)))
		die("/_sim/state: not JSON");
	a = json_object_get(json_object_get(d, "faults"), "actions");
	n = (long)json_integer_value(json_object_get(json_object_get(a, action), "calls"));
	json_decref(d);
	free(body);
	return n;
}

/* [n] requests of [q] at once, each in a thread of its own, all joined. */
static void board_burst(struct board_run *b, size_t n, const struct req_opts *q)
{
	pthread_t tid[16];
	bool started = true;

	if (n > GB_ARRAY_LEN(tid))
		die("board_burst: more than 16 requests");
	for (size_t i = 0; i < n; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		add_req(q, &b[i].req);
	}
	for (size_t i = 0; i < n; i++)
		started &= pthread_create(&tid[i], NULL, board_thread, &b[i]) == 0;
	if (!started)
		die("pthread_create");
	for (size_t i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
}

static void test_board(void)
{
	static const char *const l[] = { "ap-south-1b=g5.xlarge=1",
					 "ap-northeast-1a=g5.xlarge=8",
					 "ap-northeast-1c=g5.xlarge=8", NULL };
	struct req_opts q = REQ("g5", 1, GB_STRATEGY_DEFAULT);
	struct board_run b[6];
	int ice_1a = 0, ice_1b = 0, got_1b = 0, ok = 0, left = 0;

	struct gb_request one;
	struct gb_orch_result res;
	gb_error_t err;
	long offer0, offer_one, offer_burst;

	/* what one cold request asks for offerings: every candidate region */
	fresh_state();
	make_orch(NULL);
	landscape(l);
	offer0 = sim_calls("DescribeInstanceTypeOfferings");
	if (run_req(&q, &one, &res, &err))
		die(err.text);
	offer_one = sim_calls("DescribeInstanceTypeOfferings") - offer0;
	gb_orch_result_clear(&res);
	req_free(&one);

	fresh_state();
	make_orch(NULL);
	landscape(l);
	/* every first call is still in flight when the others begin */
	fault("{\"count\":6,\"kind\":\"latency\",\"latency\":0.3,\"action\":\"RunInstances\"}");
	offer0 = sim_calls("DescribeInstanceTypeOfferings");
	board_burst(b, GB_ARRAY_LEN(b), &q);
	offer_burst = sim_calls("DescribeInstanceTypeOfferings") - offer0;
	no_faults();
	for (size_t i = 0; i < GB_ARRAY_LEN(b); i++) {
		struct atts x;

		ok += b[i].rc == GB_E_OK && b[i].res.result == GB_RESULT_SUCCESS;
		left += trace_has(&b[i].res, "left: request ");
		attempts(b[i].req.id, &x);
		for (int k = 0; k < x.n; k++) {
			bool ice = !strcmp(x.v[k].code, GB_EC2_CODE_ICE);

			ice_1a += ice && !strcmp(x.v[k].az, "ap-south-1a");
			ice_1b += ice && !strcmp(x.v[k].az, "ap-south-1b");
			got_1b += !strcmp(x.v[k].az, "ap-south-1b") ? x.v[k].got : 0;
		}
		if (b[i].rc)
			tap_diag("request %zu: %s", i, b[i].err.text);
	}
	check(ok == 6, "board: six one-node requests at once all get their node (%d)", ok);
	check(ice_1a <= 1 && ice_1b <= 1 && got_1b == 1,
	      "board: one InsufficientInstanceCapacity at most per dry pool (ap-south-1a %d, ap-south-1b %d after giving %d)",
	      ice_1a, ice_1b, got_1b);
	check(left >= 1, "board: %d requests left a pool by another's answer, and say so", left);
	check(offer_one >= 1 && offer_burst == offer_one,
	      "board: the burst asks each region for its offerings once (%ld calls, one request alone %ld)",
	      offer_burst, offer_one);
	for (size_t i = 0; i < GB_ARRAY_LEN(b); i++) {
		gb_orch_result_clear(&b[i].res);
		req_free(&b[i].req);
	}
}

/*
 * A pool that delivers is asked by several requests at once: twelve
 * one-node requests into ample capacity overlap their calls to it (one
 * more at once per full answer), where one call at a time would queue
 * them; nothing is refused and every node is filled.
 */
static void test_board_flow(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=100", NULL };
	struct req_opts q = REQ("g5", 1, GB_STRATEGY_DEFAULT);
	struct board_run b[12];
	struct att all[64];
	struct gb_strv dry = { 0 };
	int ok = 0, ice = 0, na = 0, most = 0;
	bool twice = false;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	fault("{\"count\":24,\"kind\":\"latency\",\"latency\":0.3,\"action\":\"RunInstances\"}");
	board_burst(b, GB_ARRAY_LEN(b), &q);
	no_faults();
	for (size_t i = 0; i < GB_ARRAY_LEN(b); i++) {
		struct atts x;

		ok += b[i].rc == GB_E_OK && b[i].res.result == GB_RESULT_SUCCESS;
		attempts(b[i].req.id, &x);
		for (int k = 0; k < x.n; k++) {
			bool refused = !strcmp(x.v[k].code, GB_EC2_CODE_ICE);

			/* the other AZs are dry: each may refuse once */
			twice |= refused && gb_strv_find(&dry, x.v[k].az) >= 0;
			if (refused && gb_strv_add(&dry, x.v[k].az))
				die("out of memory");
			if (strcmp(x.v[k].az, "ap-south-1a"))
				continue;
			ice += refused;
			if (na < (int)GB_ARRAY_LEN(all))
				all[na++] = x.v[k];
		}
	}
	/* the most calls of different requests to ap-south-1a in flight at once */
	for (int i = 0; i < na; i++) {
		int at = 0;

		for (int k = 0; k < na; k++)
			at += all[k].started <= all[i].started && all[i].started < all[k].finished;
		if (at > most)
			most = at;
	}
	check(ok == 12 && ice == 0 && !twice,
	      "board flow: twelve one-node requests into ample capacity all filled (%d), none refused there (%d), the dry AZs once each (%zu)",
	      ok, ice, dry.n);
	gb_strv_free(&dry);
	check(most >= 3 && most <= 12,
	      "board flow: up to %d calls to a pool that delivers in flight at once (one at a time before)",
	      most);
	for (size_t i = 0; i < GB_ARRAY_LEN(b); i++) {
		gb_orch_result_clear(&b[i].res);
		req_free(&b[i].req);
	}
}

/*
 * A visit that got all it asked proves a lower bound, one that ran the AZ
 * dry measures its level; a warm run asks pools proven to hold a full
 * batch for exactly that, with no hedge and no spare.
 */
static void test_lower_bounds(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=1",
					 "ap-south-1b=g5.xlarge=6",
					 "ap-northeast-2a=g5.xlarge=6", NULL };
	struct req_opts q = REQ("g5", 5, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct cap_probe a, b;
	struct atts x;
	char seq[256];
	gb_error_t err;
	gb_err_t rc;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	/* cold: 1a asked 4 gives 1 (dry: level 1), 1b asked 1 gives 1 (at least 1) */
	rc = run_req(&q, &req, &res, &err);
	a = capacity_of("ap-south-1a");
	b = capacity_of("ap-south-1b");
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS,
	      "lower bounds: cold 5 nodes (%s)", res.reason);
	check(fabs(a.level_n - 1) < 0.01 && fabs(a.level_sum - 1) < 0.01 && a.floor_n == 0,
	      "a visit that ran the AZ dry measured its level (level %.2f over %.2f)",
	      a.level_sum, a.level_n);
	check(b.level_n == 0 && b.floor_n > 0.99 && b.floor_sum >= 0.99 * b.floor_n,
	      "a visit that got all it asked recorded a lower bound (at least %.2f over %.2f)",
	      b.floor_sum, b.floor_n);
	gb_orch_result_clear(&res);
	req_free(&req);

	/* warm: memory says 1b and 2a held at least 4 twice; 8 nodes */
	fresh_state();
	make_orch(NULL);
	landscape(l);
	for (int i = 0; i < 2; i++)
		if (gb_state_capacity_level(st, "ap-south-1", "ap-south-1b", "g5.xlarge", NULL, 4, false,
					    gb_time_now() - 1200 + 600 * i, 3600, &err) ||
		    gb_state_capacity_level(st, "ap-northeast-2", "ap-northeast-2a", "g5.xlarge", NULL, 4,
					    false, gb_time_now() - 1200 + 600 * i, 3600, &err))
			die(err.text);
	q.n = 8;
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	asked_seq(&x, seq, sizeof(seq));
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && x.n == 2 &&
	      !strcmp(seq, "4+,4+") && res.extras == 0 && strcmp(x.v[0].az, x.v[1].az),
	      "warm: the two pools proven to hold a full batch are asked 4 each, nothing else (%s)",
	      seq);
	gb_orch_result_clear(&res);
	req_free(&req);
}

/*
 * A quota refusal is remembered per (region, quota); the next request
 * neither probes the walled region nor asks a region past its remembered
 * room, and stops PARTIAL when only walls are left.  Pools that ran dry are
 * still probed (one instance each): capacity comes and goes, quotas stay.
 * best_effort plans as before (it ignores quota memory).
 */
static void test_quota_memory(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=5", "ap-south-1b=g5.xlarge=5",
					 "ap-northeast-2a=g5.xlarge=2", NULL };
	struct req_opts q = REQ("g5", 4, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct quota_probe qp;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;
	bool probes = true, ne1 = false;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	fault("{\"count\":20,\"kind\":\"error\",\"code\":\"VcpuLimitExceeded\",\"status\":400,"
	      "\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	qp = quota_of("ap-south-1", "vcpus:G");
	check(rc == GB_E_OK && res.result == GB_RESULT_PARTIAL && res.launched == 2 &&
	      qp.limit_n > 0.99 && qp.limit_sum < 0.01 && qp.refusals > 0.99 &&
	      !strcmp(qp.code, "VcpuLimitExceeded"),
	      "quota memory: the refusal is remembered as a limit of 0 vCPUs in ap-south-1 (%s)",
	      res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);

	/* no fault now: memory alone keeps the default out of ap-south-1 */
	landscape(l);
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	for (int i = 0; i < x.n; i++) {
		if (!strcmp(x.v[i].region, "ap-northeast-1")) {
			ne1 = true;
			probes &= x.v[i].asked == 1;
		}
	}
	check(rc == GB_E_OK && res.result == GB_RESULT_PARTIAL && res.launched == 2 &&
	      asked_in(&x, "ap-south-1") == 0 && strstr(res.reason, "ap-south-1") &&
	      trace_has(&res, "quota stop: every pool left is behind a remembered quota wall (ap-south-1:VcpuLimitExceeded)"),
	      "the walled region is not asked; PARTIAL, the reason names it (%s)", res.reason);
	check(ne1 && probes,
	      "pools that ran dry in the last request are still probed, one instance each");
	gb_orch_result_clear(&res);
	req_free(&req);

	q.strategy = GB_STRATEGY_BEST_EFFORT;
	landscape(l);
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.launched == 4 && asked_in(&x, "ap-south-1") > 0,
	      "best_effort ignores quota memory, as before (asked %d in ap-south-1)",
	      asked_in(&x, "ap-south-1"));
	gb_orch_result_clear(&res);
	req_free(&req);

	/* a remembered room of 8 vCPUs (2 g5.xlarge): never asked past it */
	fresh_state();
	make_orch(NULL);
	landscape(l);
	if (gb_state_quota_record(st, "ap-south-1", "vcpus:G", "VcpuLimitExceeded", 8, true,
				  gb_time_now() - 60, 3600, &err))
		die(err.text);
	q.strategy = GB_STRATEGY_DEFAULT;
	q.n = 6;
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.launched == 4 && asked_in(&x, "ap-south-1") == 2 &&
	      count_region(&res, "ap-south-1") == 2,
	      "the remembered room: 2 asked in ap-south-1, 2 from ap-northeast-2 (%s)",
	      res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);
}

/*****************************************************************************
 *  Regions the account may not use (issue 17)
 *****************************************************************************/

/* The first event of [kind] of request [id] whose detail has [needle]. */
struct ev_has {
	const char *kind, *needle;
	bool found;
};

static int ev_has_row(const struct gb_event *ev, void *arg)
{
	struct ev_has *h = arg;

	h->found |= !strcmp(ev->kind, h->kind) && ev->detail && strstr(ev->detail, h->needle);
	return 0;
}

static bool event_has(const char *id, const char *kind, const char *needle)
{
	struct ev_has h = { kind, needle, false };
	gb_error_t err;

	if (gb_state_event_list(st, id, ev_has_row, &h, &err))
		die(err.text);
	return h.found;
}

/* Attempts in [region], all with [code]. */
static int refused_in(const struct atts *x, const char *region, const char *code)
{
	int n = 0;

	for (int i = 0; i < x->n; i++) {
		if (strcmp(x->v[i].region, region))
			continue;
		if (strcmp(x->v[i].code, code))
			return -1;
		n++;
	}
	return n;
}

static const char *const region_codes[] = {
	"PendingVerification", "OptInRequired", "AuthFailure", "UnauthorizedOperation",
};

/*
 * The per-region error matrix: each region-account code injected in the
 * one region that would otherwise fill the request (ap-south-1, first in
 * the fallback order) skips it: the others fill, the skip is in the
 * trace, the events and the reason, and quota memory remembers it so the
 * next request does not ask it at all.
 */
static void test_region_matrix(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-south-1b=g5.xlarge=4",
					 "ap-northeast-2a=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 3, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct quota_probe qp;
	char json[256], skip[96], in_reason[96];
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	for (size_t k = 0; k < GB_ARRAY_LEN(region_codes); k++) {
		const char *code = region_codes[k];

		fresh_state();
		make_orch(NULL);
		landscape(l);
		snprintf(json, sizeof(json), "{\"count\":1000,\"kind\":\"error\",\"code\":\"%s\","
			 "\"status\":%d,\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}",
			 code, strcmp(code, "UnauthorizedOperation") ? 401 : 403);
		fault(json);
		rc = run_req(&q, &req, &res, &err);
		no_faults();
		attempts(req.id, &x);
		qp = quota_of("ap-south-1", "account");
		snprintf(skip, sizeof(skip), "region=ap-south-1 code=%s", code);
		snprintf(in_reason, sizeof(in_reason), "skipped ap-south-1 (Code:%s)", code);
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS &&
		      count_region(&res, "ap-northeast-2") == 3 &&
		      refused_in(&x, "ap-south-1", code) >= 1 && trace_has(&res, skip) &&
		      event_has(req.id, "skip", skip) && strstr(res.reason, in_reason),
		      "%s in ap-south-1 only: the region is skipped, ap-northeast-2 fills (%s)",
		      code, res.reason);
		check(qp.limit_n > 0.99 && qp.limit_sum < 0.01 && !strcmp(qp.code, code),
		      "%s: quota memory remembers an account wall of ap-south-1 (n %.2f, code %s)",
		      code, qp.limit_n, qp.code);
		gb_orch_result_clear(&res);
		req_free(&req);

		/* no fault now: the cool-down alone keeps the next request out */
		landscape(l);
		rc = run_req(&q, &req, &res, &err);
		attempts(req.id, &x);
		snprintf(skip, sizeof(skip), "skip region=ap-south-1 code=%s remembered", code);
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 3 &&
		      asked_in(&x, "ap-south-1") == 0 && trace_has(&res, skip),
		      "%s: the next request does not ask ap-south-1 within the cool-down (%s)",
		      code, res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

/* Every strategy skips the region, and heeds the remembered cool-down. */
static void test_region_strategies(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-northeast-1a=g5.xlarge=4",
					 NULL };
	static const int strategies[] = { GB_STRATEGY_PROBE_FILL, GB_STRATEGY_BEST_EFFORT,
					  GB_STRATEGY_ALL_OR_NOTHING };
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	for (size_t k = 0; k < GB_ARRAY_LEN(strategies); k++) {
		struct req_opts q = REQ("g5", 2, strategies[k]);
		const char *name = gb_conf_strategy_name((enum gb_strategy)strategies[k]);

		fresh_state();
		make_orch(NULL);
		landscape(l);
		fault("{\"count\":1000,\"kind\":\"error\",\"code\":\"OptInRequired\",\"status\":401,"
		      "\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}");
		rc = run_req(&q, &req, &res, &err);
		no_faults();
		attempts(req.id, &x);
		check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS &&
		      count_region(&res, "ap-northeast-1") == 2 &&
		      refused_in(&x, "ap-south-1", "OptInRequired") == 1,
		      "%s: OptInRequired in ap-south-1 skips it after one call, ap-northeast-1 fills (%s)",
		      name, res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
		landscape(l);
		rc = run_req(&q, &req, &res, &err);
		attempts(req.id, &x);
		check(rc == GB_E_OK && res.launched == 2 && asked_in(&x, "ap-south-1") == 0,
		      "%s: the remembered cool-down keeps the next request out of ap-south-1", name);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

/*
 * Where a region-account error is the same everywhere, or a credential
 * error comes from any region, the request aborts with the code as the
 * reason and remembers nothing.
 */
static void test_region_everywhere(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-northeast-1a=g5.xlarge=4",
					 "ap-northeast-2a=g5.xlarge=4", NULL };
	static const char *const global[] = {
		"InvalidClientTokenId", "SignatureDoesNotMatch", "IncompleteSignature",
		"MissingAuthenticationToken", "ExpiredToken",
	};
	struct gb_request req;
	struct gb_orch_result res;
	char json[256], lead[96];
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	for (size_t k = 0; k < GB_ARRAY_LEN(region_codes); k++) {
		struct req_opts q = REQ("g5", 3, GB_STRATEGY_DEFAULT);
		const char *code = region_codes[k];
		bool remembered = false;

		fresh_state();
		make_orch(NULL);
		landscape(l);
		snprintf(json, sizeof(json), "{\"count\":1000,\"kind\":\"error\",\"code\":\"%s\","
			 "\"status\":401,\"action\":\"RunInstances\"}", code);
		fault(json);
		rc = run_req(&q, &req, &res, &err);
		no_faults();
		remembered = quota_of("ap-south-1", "account").limit_n > 0 ||
			     quota_of("ap-northeast-1", "account").limit_n > 0 ||
			     quota_of("ap-northeast-2", "account").limit_n > 0;
		snprintf(lead, sizeof(lead), "(Code:%s) ", code);
		check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.cause == GB_E_AUTH &&
		      gb_str_has_prefix(res.reason, lead) &&
		      strstr(res.reason, "every region tried refused") && !remembered,
		      "%s in every region: aborted with the code, nothing remembered (%s)",
		      code, res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	for (size_t k = 0; k < GB_ARRAY_LEN(global); k++) {
		struct req_opts q = REQ("g5", 3, GB_STRATEGY_BEST_EFFORT);
		const char *code = global[k];

		fresh_state();
		make_orch(NULL);
		landscape(l);
		snprintf(json, sizeof(json), "{\"count\":1000,\"kind\":\"error\",\"code\":\"%s\","
			 "\"status\":403,\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}", code);
		fault(json);
		rc = run_req(&q, &req, &res, &err);
		no_faults();
		attempts(req.id, &x);
		snprintf(lead, sizeof(lead), "(Code:%s) ", code);
		check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.cause == GB_E_AUTH &&
		      gb_str_has_prefix(res.reason, lead) && x.n == 1 &&
		      asked_in(&x, "ap-northeast-1") + asked_in(&x, "ap-northeast-2") == 0 &&
		      quota_of("ap-south-1", "account").limit_n == 0,
		      "%s from ap-south-1 alone: the credentials, aborted at once (%s)", code,
		      res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

/*
 * The offerings preflight meets the refusal first: the region is skipped
 * before any launch; and the request whose regions are all skipped fails
 * with the skip as its reason.
 */
static void test_region_preflight(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-northeast-2a=g5.xlarge=4",
					 NULL };
	struct req_opts q = REQ("g5", 2, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	fault("{\"count\":1000,\"kind\":\"error\",\"code\":\"OptInRequired\",\"status\":401,"
	      "\"action\":\"DescribeInstanceTypeOfferings\",\"region\":\"ap-south-1\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && asked_in(&x, "ap-south-1") == 0 &&
	      count_region(&res, "ap-northeast-2") == 2 &&
	      trace_has(&res, "skip region=ap-south-1 code=OptInRequired action=DescribeInstanceTypeOfferings") &&
	      quota_of("ap-south-1", "account").limit_n > 0.99,
	      "OptInRequired at the offerings preflight: ap-south-1 skipped before any launch (%s)",
	      res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);

	/* every candidate region remembered: nothing asked, the skip is the reason */
	if (gb_state_quota_record(st, "ap-northeast-1", "account", "PendingVerification", 0, true,
				  gb_time_now(), 3600, &err) ||
	    gb_state_quota_record(st, "ap-northeast-2", "account", "UnauthorizedOperation", 0, true,
				  gb_time_now(), 3600, &err))
		die(err.text);
	landscape(l);
	rc = run_req(&q, &req, &res, &err);
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.cause == GB_E_AUTH && x.n == 0 &&
	      gb_str_has_prefix(res.reason, "(Code:OptInRequired) region ap-south-1 skipped") &&
	      strstr(res.reason, "ap-northeast-2 (Code:UnauthorizedOperation)") &&
	      res.nodes[0].code && !strcmp(res.nodes[0].code, "OptInRequired"),
	      "every region cooling down: FAILED without a call, the reason names the skips (%s)",
	      res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);
}

/* The request-scoped limits abort; a reserved-capacity shortage moves on. */
static void test_new_classes(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-south-1b=g5.xlarge=4",
					 "ap-northeast-2a=g5.xlarge=4", NULL };
	static const char *const request_limits[] = {
		"ResourceCountExceeded", "TagLimitExceeded", "SecurityGroupsPerInstanceLimitExceeded",
	};
	struct req_opts q = REQ("g5", 3, GB_STRATEGY_BEST_EFFORT);
	struct gb_request req;
	struct gb_orch_result res;
	char json[256];
	struct atts x;
	gb_error_t err;
	gb_err_t rc;

	for (size_t k = 0; k < GB_ARRAY_LEN(request_limits); k++) {
		fresh_state();
		make_orch(NULL);
		landscape(l);
		snprintf(json, sizeof(json), "{\"count\":1000,\"kind\":\"error\",\"code\":\"%s\","
			 "\"status\":400,\"action\":\"RunInstances\"}", request_limits[k]);
		fault(json);
		rc = run_req(&q, &req, &res, &err);
		no_faults();
		check(rc == GB_E_OK && res.result == GB_RESULT_FAILED &&
		      res.cause == GB_E_CLOUDCONFIG && res.api_calls == 1 &&
		      quota_of("ap-south-1", "instances").limit_n == 0 &&
		      strstr(res.reason, request_limits[k]),
		      "%s: the request is wrong, not the region's quota: aborted after one call (%s)",
		      request_limits[k], res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}

	fresh_state();
	make_orch(NULL);
	landscape(l);
	fault("{\"count\":1,\"kind\":\"error\",\"code\":\"InsufficientReservedInstancesCapacity\","
	      "\"status\":500,\"action\":\"RunInstances\",\"region\":\"ap-south-1\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && x.n == 2 &&
	      !strcmp(x.v[0].code, "InsufficientReservedInstancesCapacity") &&
	      strcmp(x.v[1].az, x.v[0].az) != 0,
	      "InsufficientReservedInstancesCapacity: capacity, the next AZ fills (%s then %s)",
	      x.v[0].az, x.n > 1 ? x.v[1].az : "-");
	gb_orch_result_clear(&res);
	req_free(&req);

	/* ConcurrentTagAccess: retried inside the client, the nodes are named
	 * (two: a one-node request is named at launch, without CreateTags) */
	landscape(l);
	fault("{\"count\":1,\"kind\":\"error\",\"code\":\"ConcurrentTagAccess\",\"status\":400,"
	      "\"action\":\"CreateTags\"}");
	q.n = 2;
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.other_calls >= 3 &&
	      !trace_has(&res, "tag node=") && sim_count(req.id).tagged == 2,
	      "ConcurrentTagAccess on CreateTags: retried, the instances are named (%d other calls)",
	      res.other_calls);
	gb_orch_result_clear(&res);
	req_free(&req);
}

/* Index of the first event of [kind] whose detail starts with [prefix]. */
struct ev_find {
	const char *kind, *prefix;
	int i, found;
};

static int ev_row(const struct gb_event *ev, void *arg)
{
	struct ev_find *f = arg;

	if (f->found < 0 && !strcmp(ev->kind, f->kind) && ev->detail &&
	    gb_str_has_prefix(ev->detail, f->prefix))
		f->found = f->i;
	f->i++;
	return 0;
}

static int event_index(const char *id, const char *kind, const char *prefix)
{
	struct ev_find f = { kind, prefix, 0, -1 };
	gb_error_t err;

	if (gb_state_event_list(st, id, ev_row, &f, &err))
		die(err.text);
	return f.found;
}

/*
 * The work queue: a call that hangs 3 s does not hold up the follow-up of
 * one that answered short: the follow-up is sent (its launch event) before
 * the slow call answers (its call event).
 */
static void test_work_queue(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4",
					 "ap-northeast-2a=g5.xlarge=1",
					 "ap-northeast-2b=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 6, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;
	int sent, slow;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	/*
	 * Memory: ap-south-1a held at least 4, ap-northeast-2a ran dry at 2,
	 * ap-northeast-2b at 1, the other pools were empty.
	 */
	if (gb_state_capacity_level(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL, 4, false,
				    gb_time_now() - 600, 3600, &err) ||
	    gb_state_capacity_level(st, "ap-northeast-2", "ap-northeast-2a", "g5.xlarge", NULL, 2,
				    true, gb_time_now() - 600, 3600, &err) ||
	    gb_state_capacity_level(st, "ap-northeast-2", "ap-northeast-2b", "g5.xlarge", NULL, 1,
				    true, gb_time_now() - 600, 3600, &err))
		die(err.text);
	{
		static const char *const empty[][2] = {
			{ "ap-south-1", "ap-south-1b" }, { "ap-northeast-2", "ap-northeast-2c" },
			{ "ap-northeast-1", "ap-northeast-1a" }, { "ap-northeast-1", "ap-northeast-1c" },
		};

		for (size_t i = 0; i < GB_ARRAY_LEN(empty); i++)
			if (gb_state_capacity_level(st, empty[i][0], empty[i][1], "g5.xlarge", NULL, 0,
						    true, gb_time_now() - 600, 3600, &err))
				die(err.text);
	}
	fault("{\"count\":1,\"kind\":\"latency\",\"latency\":3,\"action\":\"RunInstances\","
	      "\"region\":\"ap-south-1\"}");
	rc = run_req(&q, &req, &res, &err);
	no_faults();
	attempts(req.id, &x);
	sent = event_index(req.id, "launch", "seq=2 ");
	slow = event_index(req.id, "call", "seq=0 ");
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && x.n == 3 &&
	      !strcmp(x.v[0].az, "ap-south-1a") && !strcmp(x.v[2].az, "ap-northeast-2b"),
	      "work queue: 4 from ap-south-1a, 1 of 2 from ap-northeast-2a, the last from ap-northeast-2b (%s)",
	      res.reason);
	check(sent >= 0 && slow >= 0 && sent < slow,
	      "work queue: the follow-up was sent (event %d) before the slow call answered (event %d)",
	      sent, slow);
	gb_orch_result_clear(&res);
	req_free(&req);
}

static void test_modes(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=1", "ap-northeast-2a=g5.xlarge=9",
					 "ap-northeast-1a=g6e.xlarge=4", NULL };
	struct req_opts q = { "g5", 3, 0, GB_STRATEGY_PROBE_FILL, GB_MODE_SINGLE_REGION, -1, NULL };
	struct gb_request req;
	struct gb_orch_result res;
	struct atts x;
	gb_error_t err;
	gb_err_t rc;
	bool only = true;

	rc = fresh_run(l, &q, &req, &res, &err);
	attempts(req.id, &x);
	for (int i = 0; i < x.n; i++)
		only &= !strcmp(x.v[i].region, "ap-south-1");
	check(rc == GB_E_OK && res.result == GB_RESULT_PARTIAL && res.launched == 1 && only &&
	      trace_has(&res, "single_region"),
	      "single_region: only the first candidate, PARTIAL 1/3 (%s)", res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);

	q.home = "us-west-2";
	q.mode = -1;
	rc = run_req(&q, &req, &res, &err);
	check(rc == GB_E_OK && res.result == GB_RESULT_FAILED && res.cause == GB_E_PLAN &&
	      strstr(res.reason, "us-west-2 is in no fallback group") &&
	      strstr(res.reason, "ap-southeast-1, ap-northeast-1, ap-northeast-3") && res.api_calls == 0,
	      "a home region in no group is refused with the allowed consumers (%s)", res.reason);
	gb_orch_result_clear(&res);
	req_free(&req);

	/* g6e from Tokyo: ap-northeast-3 offers none, never launched in (P9) */
	{
		struct req_opts q2 = REQ("tokyo6e", 6, GB_STRATEGY_PROBE_FILL);

		rc = run_req(&q2, &req, &res, &err);
		attempts(req.id, &x);
		only = true;
		for (int i = 0; i < x.n; i++)
			only &= strcmp(x.v[i].region, "ap-northeast-3") != 0;
		check(rc == GB_E_OK && res.launched == 4 && only &&
		      trace_has(&res, "region=ap-northeast-3 NOT_OFFERED") &&
		      trace_has(&res, "region_result region=ap-northeast-3 status=NONE"),
		      "not offered: preflight skips ap-northeast-3 for g6e (%s)", res.reason);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
}

struct cloud_ctx {
	int n;
};

static int cloud_row(const struct gb_ec2_instance *in, const char *region, void *arg)
{
	(void)in;
	(void)region;
	((struct cloud_ctx *)arg)->n++;
	return 0;
}

/*
 * The offerings cache: the first request asks every candidate region once
 * (in parallel), a second one within offerings_ttl asks none.
 */
static void test_offerings_cache(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 2, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	gb_error_t err;
	long n0, n1, n2;

	fresh_state();
	make_orch(NULL);
	landscape(l);
	n0 = sim_calls("DescribeInstanceTypeOfferings");
	run_req(&q, &req, &res, &err);
	n1 = sim_calls("DescribeInstanceTypeOfferings");
	check(res.result == GB_RESULT_SUCCESS && n1 - n0 == 3,
	      "offerings: the first request asks each of the 3 candidate regions (%ld calls)",
	      n1 - n0);
	gb_orch_result_clear(&res);
	req_free(&req);
	run_req(&q, &req, &res, &err);
	n2 = sim_calls("DescribeInstanceTypeOfferings");
	check(res.result == GB_RESULT_SUCCESS && n2 == n1,
	      "offerings: a second request within offerings_ttl uses the cache (%ld calls)",
	      n2 - n1);
	gb_orch_result_clear(&res);
	req_free(&req);
}

static void test_terminate_and_tools(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 3, GB_STRATEGY_DEFAULT);
	struct gb_request req, dry = { 0 };
	struct gb_orch_result res;
	struct gb_plan *plan = NULL;
	struct cloud_ctx cc = { 0 };
	char *summary = NULL;
	const char *nodes[4];
	gb_error_t err;
	gb_err_t rc;
	int n = -1;

	fresh_run(l, &q, &req, &res, &err);
	rc = gb_orch_cloud_instances(orch, "ap-south-1", true, cloud_row, &cc, &err);
	check(rc == GB_E_OK && cc.n >= 3, "cloud instances by cluster tag: %d in ap-south-1", cc.n);
	for (int i = 0; i < 3; i++)
		nodes[i] = res.nodes[i].node;
	nodes[3] = "g5-0";	/* never launched: a no-op */
	rc = gb_orch_terminate(orch, st, req.id, nodes, 4, "suspend", 0, &n, &err);
	check(rc == GB_E_OK && n == 3 && sim_count(req.id).alive == 0,
	      "terminate: the 3 live instances of the nodes, the unknown node is a no-op");
	rc = gb_orch_terminate(orch, st, req.id, nodes, 4, "suspend", 0, &n, &err);
	check(rc == GB_E_OK && n == 0, "terminate again: nothing left to do");
	gb_orch_result_clear(&res);
	req_free(&req);

	dry.kind = GB_REQ_RESUME;
	dry.nodeset = "g5";
	dry.node_count = 5;
	rc = gb_orch_plan_dry_run(orch, st, &dry, NULL, &plan, &summary, NULL, &err);
	check(rc == GB_E_OK && plan && plan->n_steps >= 3 && !strcmp(plan->planner, "heuristic") &&
	      summary && strlen(summary) <= GB_PLAN_SUMMARY_MAX,
	      "dry run: a plan of %zu steps and a summary (%s)", plan ? plan->n_steps : 0,
	      summary ? summary : "-");
	gb_plan_free(plan);
	free(summary);
}

/*****************************************************************************
 *  A proposing planner (the LLM planner's hook): validated like any plan
 *****************************************************************************/

static int propose_mode;

static gb_err_t propose(const struct gb_plan_facts *f, const char *summary,
			struct gb_plan **out, void *ctx, gb_error_t *err)
{
	struct gb_plan *p = NULL;

	(void)ctx;
	(void)summary;
	if (propose_mode == 2)
		return gb_errorf(err, GB_E_TIMEOUT, "the model did not answer in time");
	if (gb_plan_new(f->instance_type, "llm:test", f->target, &p, err))
		return GB_E_NOMEM;
	if (propose_mode == 1)	/* outside the allowed set */
		gb_plan_add_step(p, "ap-northeast-3", "ap-northeast-3a", "subnet-apne3a-big", NULL, 4, 0,
				 "far away", err);
	gb_plan_add_step(p, "ap-northeast-2", "ap-northeast-2a", "subnet-apne2a-1", NULL, 4, 0,
			 "seoul first", err);
	*out = p;
	return GB_E_OK;
}

struct plan_rows {
	char status[8][16], planner[8][32], reason[8][200];
	int n;
};

static int plan_row(const struct gb_plan_row *p, void *arg)
{
	struct plan_rows *x = arg;

	if (x->n < 8) {
		gb_strlcpy(x->status[x->n], p->status, sizeof(x->status[0]));
		gb_strlcpy(x->planner[x->n], p->planner, sizeof(x->planner[0]));
		gb_strlcpy(x->reason[x->n], p->reason ? p->reason : "", sizeof(x->reason[0]));
		x->n++;
	}
	return 0;
}

static void test_proposer(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=4", "ap-northeast-2a=g5.xlarge=4",
					 NULL };
	struct req_opts q = REQ("g5", 2, GB_STRATEGY_BEST_EFFORT);
	struct gb_orch_opts oo = { 0 };
	struct gb_request req;
	struct gb_orch_result res;
	struct plan_rows x;
	gb_error_t err;
	gb_err_t rc;

	fresh_state();
	gb_orch_destroy(orch);
	oo.conf = conf;
	oo.sleep = fake_sleep;
	oo.propose = propose;
	if (gb_orch_create(&oo, &orch, &err))
		die(err.text);
	for (propose_mode = 0; propose_mode < 3; propose_mode++) {
		landscape(l);
		rc = run_req(&q, &req, &res, &err);
		memset(&x, 0, sizeof(x));
		gb_state_plan_list(st, req.id, plan_row, &x, &err);
		if (propose_mode == 0)
			check(rc == GB_E_OK && res.launched == 2 && count_region(&res, "ap-northeast-2") == 2 &&
			      x.n >= 1 && !strcmp(x.planner[0], "llm:test") && !strcmp(x.status[0], "used"),
			      "a valid proposed plan is used and stored (%s, %s)", x.planner[0], x.status[0]);
		else if (propose_mode == 1)
			check(rc == GB_E_OK && res.launched == 2 && x.n >= 2 &&
			      !strcmp(x.status[0], "rejected") &&
			      !strcmp(x.reason[0], "rejected: step 1: region ap-northeast-3 is outside the "
				      "allowed set {ap-south-1, ap-northeast-2, ap-northeast-1}") &&
			      !strcmp(x.planner[1], "heuristic") && !strcmp(x.status[1], "fallback"),
			      "an invalid proposed plan is stored rejected with the reason, the heuristic one is the fallback (%s)",
			      x.reason[0]);
		else
			check(rc == GB_E_OK && res.launched == 2 && x.n >= 1 &&
			      !strcmp(x.status[0], "fallback") && trace_has(&res, "proposal failed"),
			      "a late proposer: the heuristic plan is the fallback");
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	make_orch(NULL);
}

/*****************************************************************************
 *  Crash and re-run: no double launch
 *****************************************************************************/

static int started_attempts(const char *id)
{
	struct atts x;
	int n = 0;

	attempts(id, &x);
	for (int i = 0; i < x.n; i++)
		n += !strcmp(x.v[i].state, "started");
	return n;
}

/*
 * Kill a worker (a forked child) while the first wave of RunInstances hangs
 * 3 s in the simulator, then re-run the request at once.  [job] 0: a
 * jobless power-up (spread); else a job, whose nodes are one locality
 * group: the recovered instances fill it before any new wave.
 */
static char crash_id[GB_REQUEST_ID_LEN + 1];	/* the last crash_rerun's request */
static void (*crash_prep)(void);	/* run on the fresh state file, or NULL */

static void crash_rerun(const char *const *l, int n, int64_t job, const char *what)
{
	struct req_opts q = REQ("g5", n, GB_STRATEGY_DEFAULT);
	struct gb_orch_resume_opts ro = GB_ORCH_RESUME_OPTS_INIT;
	struct gb_request req;
	struct gb_orch_result res;
	struct gb_simh_count c;
	struct recs r;
	char nodes[64];
	gb_error_t err;
	gb_err_t rc;
	pid_t pid;
	int status;

	fresh_state();
	if (crash_prep)
		crash_prep();
	make_orch(NULL);
	landscape(l);
	snprintf(nodes, sizeof(nodes), "g5-[%d-%d]", node_no, node_no + q.n - 1);
	node_no += q.n;
	memset(&req, 0, sizeof(req));
	req.kind = GB_REQ_RESUME;
	req.state = GB_RSTATE_RUNNING;
	req.nodeset = "g5";
	req.job_id = job;
	req.nodes = nodes;
	req.node_count = q.n;
	if (gb_state_request_add(st, &req, &err))
		die(err.text);
	gb_strlcpy(crash_id, req.id, sizeof(crash_id));
	/* every RunInstances of the first wave hangs 3 s in the simulator */
	fault("{\"count\":4,\"kind\":\"latency\",\"latency\":3,\"action\":\"RunInstances\"}");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		gb_state_t *cst = NULL;
		struct gb_orch_result cres;

		if (gb_state_open(statepath, 0, 5000, &cst, &err))
			_exit(2);
		memset(&cres, 0, sizeof(cres));
		gb_orch_resume(orch, cst, &req, &ro, &cres, &err);
		_exit(0);
	}
	for (int i = 0; i < 500 && started_attempts(req.id) == 0; i++)
		usleep(10000);
	usleep(100000);	/* the calls are in flight */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	check(WIFSIGNALED(status) && started_attempts(req.id) >= 1,
	      "crash (%s): the worker was killed with %d attempt(s) in flight", what,
	      started_attempts(req.id));
	/* re-run at once, while the killed calls still sleep in the simulator */
	rc = gb_orch_resume(orch, st, &req, &ro, &res, &err);
	sleep(4);	/* let the original calls complete inside the simulator */
	c = sim_count(req.id);
	records(req.id, &r);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == n &&
	      trace_has(&res, "recover"),
	      "re-run (%s): SUCCESS %d/%d after re-sending the open attempts (%s)", what,
	      res.launched, n, res.reason);
	check(c.alive == n && c.total == n,
	      "no double launch (%s): the simulator has %d instances of the request (%d alive)",
	      what, c.total, c.alive);
	check((int)r.ids.n == c.total && r.alive == n,
	      "every instance is recorded (%s: %zu records)", what, r.ids.n);
	records_free(&r);
	gb_orch_result_clear(&res);
	no_faults();
}

struct type_rows {
	int n, of_type;		/* rows; of them, of [type] */
	const char *type;
	char seen[32][48];	/* "az/type" of capacity memory rows */
	int n_seen;
};

static int type_rec_row(const struct gb_instance *in, void *arg)
{
	struct type_rows *t = arg;

	t->n++;
	t->of_type += in->instance_type && !strcmp(in->instance_type, t->type);
	return 0;
}

static int type_cap_row(const struct gb_capacity *c, void *arg)
{
	struct type_rows *t = arg;

	if (t->n_seen < (int)GB_ARRAY_LEN(t->seen))
		snprintf(t->seen[t->n_seen++], sizeof(t->seen[0]), "%s/%s", c->az ? c->az : "",
			 c->instance_type);
	return 0;
}

static bool type_seen(const struct type_rows *t, const char *az_type)
{
	for (int i = 0; i < t->n_seen; i++)
		if (!strcmp(t->seen[i], az_type))
			return true;
	return false;
}

static int type_att_row(const struct gb_attempt *a, void *arg)
{
	struct type_rows *t = arg;

	t->n++;
	t->of_type += a->instance_type && !strcmp(a->instance_type, t->type) && a->got > 0;
	return 0;
}

/* Re-sent calls by type ("call" lines with recovered=1). */
struct recovered {
	int g5, g6e, wrong;
};

static int recovered_row(const struct gb_event *ev, void *arg)
{
	struct recovered *x = arg;

	if (strcmp(ev->kind, "call") || !ev->detail || !strstr(ev->detail, "recovered=1"))
		return 0;
	if (strstr(ev->detail, "type=g6e.xlarge"))
		x->g6e++;
	else if (strstr(ev->detail, "type=g5.xlarge"))
		x->g5++;
	/* a g6e.xlarge pool launched as g5.xlarge would ICE: it gave nothing */
	x->wrong += strstr(ev->detail, "type=g6e.xlarge") && strstr(ev->detail, " got=0 ");
	return 0;
}

/*
 * The offerings cache says g5.xlarge is offered nowhere and g6e.xlarge
 * where the simulator offers it: the calls in flight at the crash are of
 * the second type.
 */
static void g5_not_offered(void)
{
	static const char *const azs[][2] = {
		{ "ap-south-1", "ap-south-1a" }, { "ap-south-1", "ap-south-1b" },
		{ "ap-northeast-1", "ap-northeast-1a" }, { "ap-northeast-1", "ap-northeast-1c" },
		{ "ap-northeast-2", "ap-northeast-2a" }, { "ap-northeast-2", "ap-northeast-2b" },
		{ "ap-northeast-2", "ap-northeast-2c" },
	};
	double now = gb_time_now();
	gb_error_t err;

	for (size_t i = 0; i < GB_ARRAY_LEN(azs); i++) {
		bool g6e = false;

		for (size_t k = 0; k < N_POOLS; k++)
			g6e |= !strcmp(all_pools[k][0], azs[i][1]) &&
			       !strcmp(all_pools[k][1], "g6e.xlarge");
		if (gb_state_offering_put(st, azs[i][0], azs[i][1], "g5.xlarge", false, now, &err) ||
		    gb_state_offering_put(st, azs[i][0], azs[i][1], "g6e.xlarge", g6e, now, &err))
			die(err.text);
	}
}

/*
 * A nodeset of two types, the first dry: the attempts in flight at the
 * crash are re-sent with the type they were sent with (their ClientToken
 * stands for that call), and every record is of the type it got.
 */
static void crash_rerun_types(void)
{
	static const char *const l[] = { "ap-south-1a=g6e.xlarge=2", "ap-northeast-2a=g6e.xlarge=2",
					 NULL };
	static char t5[] = "g5.xlarge", t6e[] = "g6e.xlarge";
	static char *types[] = { t5, t6e, NULL };
	struct gb_conf_nodeset *ns = (struct gb_conf_nodeset *)gb_conf_nodeset(conf, "g5");
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct type_rows rec = { 0 };
	struct recovered rc = { 0, 0, 0 };
	gb_error_t err;

	/* the nodeset's types for this test only (restored below) */
	char **types0 = ns->instance_types;
	size_t n_types0 = ns->n_instance_types;

	ns->instance_types = types;
	ns->n_instance_types = 2;
	crash_prep = g5_not_offered;
	crash_rerun(l, 4, 0, "two types, the first dry");
	crash_prep = NULL;
	rec.type = "g6e.xlarge";
	f.alive = true;
	if (gb_state_instance_list(st, &f, type_rec_row, &rec, &err))
		die(err.text);
	check(rec.n == 4 && rec.of_type == 4,
	      "crash (two types): the 4 live records are g6e.xlarge (%d/%d)", rec.of_type, rec.n);
	if (gb_state_event_list(st, crash_id, recovered_row, &rc, &err))
		die(err.text);
	check(rc.g6e >= 1 && rc.wrong == 0 && rc.g5 == 0,
	      "crash (two types): %d re-sent call(s) of g6e.xlarge, each with its recorded type, "
	      "%d of g5.xlarge", rc.g6e, rc.g5);
	ns->instance_types = types0;
	ns->n_instance_types = n_types0;
}

struct mismatch {
	int recovered, mismatched;
};

static int mismatch_row(const struct gb_event *ev, void *arg)
{
	struct mismatch *x = arg;

	if (strcmp(ev->kind, "call") || !ev->detail || !strstr(ev->detail, "recovered=1"))
		return 0;
	x->recovered++;
	x->mismatched += strstr(ev->detail, "IdempotentParameterMismatch") != NULL;
	return 0;
}

/*
 * The crash with {munge_key} in the user data: the re-sent calls carry
 * the sealed key of the request again, byte for byte (the seal is
 * deterministic per request), so EC2 takes them for the originals and
 * answers no IdempotentParameterMismatch.  cloud.munge_key and the
 * region's user_data are set for this test only (restored below).
 */
static void crash_rerun_munge_key(void)
{
	static const char *const mumbai[] = { "ap-south-1a=g5.xlarge=4", NULL };
	static char tmpl[] = "#!/bin/sh\n# {munge_key}\nnodes=\"{nodes}\"\n";
	struct gb_conf_region *cr = (struct gb_conf_region *)gb_conf_region(conf, "ap-south-1");
	struct gb_conf_munge_key mk0 = conf->cloud.munge_key;
	char dir[] = "/tmp/gb-orch-munge-XXXXXX", key[64], pub[64];
	char *ud0 = cr->user_data;
	bool has0 = cr->user_data_munge_key;
	struct mismatch x = { 0, 0 };
	unsigned char bytes[32];
	gb_error_t err;
	EVP_PKEY *pk;
	FILE *f;

	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(key, sizeof(key), "%s/munge.key", dir);
	snprintf(pub, sizeof(pub), "%s/node-key.pub", dir);
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 11 + 5);
	if (!(f = fopen(key, "w")) || fwrite(bytes, 1, sizeof(bytes), f) != sizeof(bytes) ||
	    fclose(f) || chmod(key, 0400))
		die(key);
	if (!(pk = EVP_PKEY_Q_keygen(NULL, NULL, "X25519")) || !(f = fopen(pub, "w")) ||
	    PEM_write_PUBKEY(f, pk) != 1 || fclose(f))
		die(pub);
	EVP_PKEY_free(pk);
	conf->cloud.munge_key.file = key;
	conf->cloud.munge_key.seal_to = pub;
	cr->user_data = tmpl;
	cr->user_data_munge_key = true;
	crash_rerun(mumbai, 4, 4343, "{munge_key} in the user data");
	if (gb_state_event_list(st, crash_id, mismatch_row, &x, &err))
		die(err.text);
	check(x.recovered >= 1 && x.mismatched == 0,
	      "crash ({munge_key}): %d re-sent call(s), %d refused as IdempotentParameterMismatch",
	      x.recovered, x.mismatched);
	conf->cloud.munge_key = mk0;
	cr->user_data = ud0;
	cr->user_data_munge_key = has0;
	unlink(key);
	unlink(pub);
	rmdir(dir);
}

struct named_rows {
	int launches, named;
};

static int named_row(const struct gb_event *ev, void *arg)
{
	struct named_rows *x = arg;

	if (strcmp(ev->kind, "launch") || !ev->detail)
		return 0;
	x->launches++;
	x->named += strstr(ev->detail, " named=1 nodes=") != NULL;
	return 0;
}

/*
 * A one-node request names its instance at launch (gpuburst:node and Name
 * in the TagSpecification): no CreateTags, the launch event says so; a
 * two-node request's calls are not named (their instances are tagged
 * once recorded).  A crash in the middle re-sends the named call with the
 * same tags: EC2 takes it for the original.
 */
static void test_named_at_launch(void)
{
	static const char *const mumbai[] = { "ap-south-1a=g5.xlarge=4", NULL };
	struct req_opts q = REQ("g5", 1, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct named_rows nr = { 0, 0 };
	struct mismatch x = { 0, 0 };
	gb_error_t err;
	gb_err_t rc;
	long tags0;

	fresh_state();
	make_orch(NULL);
	landscape(mumbai);
	tags0 = sim_calls("CreateTags");
	rc = run_req(&q, &req, &res, &err);
	if (gb_state_event_list(st, req.id, named_row, &nr, &err))
		die(err.text);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && sim_calls("CreateTags") == tags0 &&
	      sim_count(req.id).tagged == 1 && nr.launches == 1 && nr.named == 1,
	      "one node: named at launch, no CreateTags (%ld, %d of %d launches named)",
	      sim_calls("CreateTags") - tags0, nr.named, nr.launches);
	gb_orch_result_clear(&res);
	req_free(&req);

	fresh_state();
	make_orch(NULL);
	landscape(mumbai);
	q.n = 2;
	nr = (struct named_rows){ 0, 0 };
	tags0 = sim_calls("CreateTags");
	rc = run_req(&q, &req, &res, &err);
	if (gb_state_event_list(st, req.id, named_row, &nr, &err))
		die(err.text);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && sim_calls("CreateTags") == tags0 + 2 &&
	      sim_count(req.id).tagged == 2 && nr.launches >= 1 && nr.named == 0,
	      "two nodes: not named at launch, one CreateTags per instance (%ld)",
	      sim_calls("CreateTags") - tags0);
	gb_orch_result_clear(&res);
	req_free(&req);

	crash_rerun(mumbai, 1, 4344, "one node, named at launch");
	nr = (struct named_rows){ 0, 0 };
	if (gb_state_event_list(st, crash_id, mismatch_row, &x, &err) ||
	    gb_state_event_list(st, crash_id, named_row, &nr, &err))
		die(err.text);
	check(x.recovered >= 1 && x.mismatched == 0 && nr.named == nr.launches && sim_count(crash_id).tagged == 1,
	      "crash (one node): %d re-sent call(s), %d refused as IdempotentParameterMismatch, %d of %d launches named",
	      x.recovered, x.mismatched, nr.named, nr.launches);
}

static void test_crash_rerun(void)
{
	static const char *const spread[] = { "ap-south-1a=g5.xlarge=2", "ap-south-1b=g5.xlarge=2",
					      "ap-northeast-2a=g5.xlarge=4", NULL };
	/* one pool holds the job: the re-sent call alone fills every node */
	static const char *const mumbai[] = { "ap-south-1a=g5.xlarge=4", NULL };

	crash_rerun(spread, 5, 0, "jobless");
	crash_rerun(mumbai, 4, 4242, "a 4-node job, locality region");
	crash_rerun_types();
	crash_rerun_munge_key();
}

/*****************************************************************************
 *  Randomized: P1-P11 and the invariants over generated landscapes
 *****************************************************************************/

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

struct lscape {
	long cap[N_POOLS];
};

static void random_landscape(struct lscape *ls)
{
	unsigned kind = rnd(4);

	for (size_t i = 0; i < N_POOLS; i++) {
		/* all empty, sparse, scattered or ample */
		ls->cap[i] = kind == 0 ? 0 : kind == 1 ? (rnd(3) == 0 ? rnd(3) : 0) :
			     kind == 2 ? rnd(4) : rnd(9);
		set_cap(all_pools[i][0], all_pools[i][1], ls->cap[i]);
	}
}

static const char *const sea_regions[] = { "ap-south-1", "ap-northeast-2", "ap-northeast-1" };
static const char *const jp_regions[] = { "ap-northeast-1", "ap-northeast-3" };

/* Capacity the request could get: offered pools of the allowed regions. */
static long obtainable(const struct lscape *ls, const char *type, bool japan, bool single)
{
	const char *const *rg = japan ? jp_regions : sea_regions;
	size_t nr = single ? 1 : japan ? 2 : 3;
	long n = 0;

	for (size_t i = 0; i < N_POOLS; i++) {
		if (strcmp(all_pools[i][1], type))
			continue;
		for (size_t k = 0; k < nr; k++)
			if (gb_str_has_prefix(all_pools[i][0], rg[k]))
				n += ls->cap[i];
	}
	return n;
}

struct prop_stats {
	int runs, violations;
	int p[12];
};

static void prop(struct prop_stats *ps, int k, bool ok, const char *what, int lno)
{
	if (ok)
		return;
	ps->p[k]++;
	ps->violations++;
	printf("# landscape %d: P%d violated: %s\n", lno, k, what);
}

/* Parse "region_result region=R status=S requested=Q launched=L remaining=M" lines. */
static void check_region_results(struct prop_stats *ps, const struct gb_orch_result *res,
				 int lno, bool single)
{
	char seen[8][32];
	int nseen = 0, last_remaining = 1 << 30;

	for (size_t i = 0; i < res->trace.n; i++) {
		char region[32], status[16], code[64];
		int q, l, m;

		if (sscanf(res->trace.v[i],
			   "region_result region=%31s status=%15s requested=%d launched=%d remaining=%d code=%63s",
			   region, status, &q, &l, &m, code) != 6)
			continue;
		prop(ps, 4, (!strcmp(status, "FULL") && l == q) ||
			    (!strcmp(status, "PARTIAL") && l > 0 && l < q) ||
			    (!strcmp(status, "NONE") && l == 0) ||
			    (!strcmp(status, "ERROR") && strcmp(code, "-") != 0),
		     "region status consistent with counts", lno);
		prop(ps, 5, m <= last_remaining, "remaining never increases", lno);
		last_remaining = m;
		for (int k = 0; k < nseen; k++)
			prop(ps, 6, strcmp(seen[k], region) != 0, "a region visited twice", lno);
		if (nseen < 8)
			gb_strlcpy(seen[nseen++], region, sizeof(seen[0]));
	}
	prop(ps, 6, nseen <= 3, "more visits than regions", lno);
	prop(ps, 11, !single || nseen <= 1, "single_region visited several regions", lno);
}

static void check_attempts(struct prop_stats *ps, const char *id, bool probe, int lno,
			   const char *type, bool japan, bool single, int *calls)
{
	struct atts x;

	attempts(id, &x);
	*calls = x.n;
	for (int i = 0; i < x.n; i++) {
		const struct att *a = &x.v[i];

		prop(ps, 1, a->asked <= 4 && a->asked >= 1, "a call asked more than batch_max", lno);
		for (int k = 0; k < i; k++)
			prop(ps, 8, strcmp(x.v[k].token, a->token) != 0, "client token reused", lno);
		prop(ps, 8, strlen(a->token) <= 64, "client token longer than 64", lno);
		if (probe && i + 1 < x.n && !strcmp(a->code, "InsufficientInstanceCapacity") &&
		    a->asked > 1 && !strcmp(x.v[i + 1].subnet, a->subnet))
			prop(ps, 2, x.v[i + 1].asked == (a->asked + 1) / 2,
			     "after ICE at n>1 the next count is ceil(n/2)", lno);
		prop(ps, 11, !single || !strcmp(a->region, japan ? "ap-northeast-1" : "ap-south-1"),
		     "single_region launched outside the first region", lno);
		/* P9: never launch where the type is not offered */
		prop(ps, 9, !(strcmp(type, "g6e.xlarge") == 0 &&
			      (!strcmp(a->az, "ap-south-1b") || !strcmp(a->az, "ap-northeast-1c") ||
			       !strcmp(a->az, "ap-northeast-2b") || !strcmp(a->region, "ap-northeast-3"))),
		     "a launch where the type is not offered", lno);
	}
}

static void check_records(struct prop_stats *ps, const char *id, const struct gb_orch_result *res,
			  int lno)
{
	struct recs r;
	char **ids = NULL;
	size_t n = 0;
	gb_error_t err;
	bool same = true;

	records(id, &r);
	if (gb_simh_ids(&sim, id, false, &ids, &n, &err))
		die(err.text);
	same = n == r.ids.n;
	for (size_t i = 0; same && i < n; i++)
		same = gb_strv_find(&r.ids, ids[i]) >= 0;
	prop(ps, 7, same, "launched ids differ from recorded ids", lno);
	gb_simh_ids_free(ids);
	if (gb_simh_ids(&sim, id, true, &ids, &n, &err))
		die(err.text);
	prop(ps, 0, (int)n == res->launched, "instances alive differ from nodes filled", lno);
	prop(ps, 0, r.alive == res->launched, "records alive differ from nodes filled", lno);
	gb_simh_ids_free(ids);
	records_free(&r);
}

/* The most one allowed region could give. */
static long best_region(const struct lscape *ls, const char *type, bool japan, bool single)
{
	const char *const *rg = japan ? jp_regions : sea_regions;
	size_t nr = single ? 1 : japan ? 2 : 3;
	long best = 0;

	for (size_t k = 0; k < nr; k++) {
		long n = 0;

		for (size_t i = 0; i < N_POOLS; i++)
			if (!strcmp(all_pools[i][1], type) && gb_str_has_prefix(all_pools[i][0], rg[k]))
				n += ls->cap[i];
		if (n > best)
			best = n;
	}
	return best;
}

/* Locality: a job's nodes all in one region, or none at all. */
static void check_locality(struct prop_stats *ps, const struct gb_orch_result *res, int lno)
{
	const char *region = NULL;
	bool one = true;

	for (size_t i = 0; i < res->n_nodes; i++) {
		if (!res->nodes[i].region)
			continue;
		one &= !region || !strcmp(region, res->nodes[i].region);
		region = res->nodes[i].region;
	}
	prop(ps, 0, one, "a job's nodes in several regions", lno);
	prop(ps, 0, res->result != GB_RESULT_PARTIAL, "a job partly filled", lno);
}

static void random_run(struct prop_stats *ps, int lno, int strategy)
{
	static const char *const sets[] = { "g5", "g6e", "tokyo", "tokyo6e" };
	struct lscape ls;
	const char *set = sets[rnd(4)];
	bool japan = set[0] == 't', single = rnd(5) == 0;
	bool job = strategy != GB_STRATEGY_PROBE_FILL && rnd(3) == 0;
	const char *type = strchr(set, '6') ? "g6e.xlarge" : "g5.xlarge";
	struct req_opts q = { set, 1 + (int)rnd(10), job ? 1000 + lno : 0, strategy,
			      single ? GB_MODE_SINGLE_REGION : GB_MODE_MULTI_REGION,
			      job ? GB_LOCALITY_REGION : GB_LOCALITY_NONE, NULL };
	struct gb_request req;
	struct gb_orch_result res;
	gb_error_t err;
	gb_err_t rc;
	long can, want;
	int calls = 0;

	random_landscape(&ls);
	can = job && q.n > 1 ? best_region(&ls, type, japan, single) :
	      obtainable(&ls, type, japan, single);
	want = job && q.n > 1 ? (can >= q.n ? q.n : 0) : (can < q.n ? can : q.n);
	rc = run_req(&q, &req, &res, &err);
	ps->runs++;
	prop(ps, 0, rc == GB_E_OK, rc ? err.text : "", lno);
	prop(ps, 4, (res.result == GB_RESULT_SUCCESS) == (res.launched == q.n) &&
		    (res.result == GB_RESULT_FAILED) == (res.launched == 0),
	     "result consistent with counts", lno);
	prop(ps, 3, obtainable(&ls, type, japan, single) > 0 || res.launched == 0,
	     "launched from nothing", lno);
	if (strategy == GB_STRATEGY_ALL_OR_NOTHING)
		prop(ps, 0, res.launched == 0 || res.launched == q.n,
		     "all_or_nothing left a partial request", lno);
	else if (strategy != GB_STRATEGY_PROBE_FILL)
		prop(ps, 0, res.launched == want, "did not obtain all obtainable capacity", lno);
	else
		prop(ps, 0, res.launched <= q.n && res.launched <= can, "launched too much", lno);
	if (job && q.n > 1)
		check_locality(ps, &res, lno);
	check_region_results(ps, &res, lno, single);
	check_attempts(ps, req.id, strategy == GB_STRATEGY_PROBE_FILL, lno, type, japan, single,
		       &calls);
	if (strategy == GB_STRATEGY_PROBE_FILL && can == 0) {
		/* P3: every subnet of every offered allowed region was tried */
		int subnets = 0;

		for (size_t i = 0; i < conf->n_regions; i++) {
			const struct gb_conf_region *cr = &conf->regions[i];
			bool allowed = false;

			for (size_t k = 0; k < (single ? 1 : japan ? 2 : 3); k++)
				allowed |= !strcmp(cr->name, japan ? jp_regions[k] : sea_regions[k]);
			for (size_t a = 0; allowed && a < cr->n_azs; a++) {
				bool offered = !strcmp(type, "g5.xlarge") ||
					       (strcmp(cr->azs[a].name, "ap-south-1b") &&
						strcmp(cr->azs[a].name, "ap-northeast-1c") &&
						strcmp(cr->azs[a].name, "ap-northeast-2b") &&
						strcmp(cr->name, "ap-northeast-3"));

				subnets += offered ? (int)cr->azs[a].n_subnets : 0;
			}
		}
		prop(ps, 3, res.result == GB_RESULT_FAILED && res.launched == 0 &&
			    calls >= subnets, "all-ICE did not try every subnet", lno);
	}
	check_records(ps, req.id, &res, lno);
	gb_orch_result_clear(&res);
	req_free(&req);
}

static void test_random(void)
{
	const char *e = getenv("GB_ORCH_SEED"), *n = getenv("GB_ORCH_LANDSCAPES");
	unsigned long long seed = 20261129;
	long count = 300;
	static const int strategies[] = { GB_STRATEGY_PROBE_FILL, GB_STRATEGY_BEST_EFFORT,
					  GB_STRATEGY_DEFAULT, GB_STRATEGY_ALL_OR_NOTHING };
	struct prop_stats ps[4];
	char line[128];

	if (e && *e)
		seed = strtoull(e, NULL, 10);
	if (n && *n)
		gb_parse_long(n, 1, 100000, &count);
	printf("# randomized landscapes: seed %llu (GB_ORCH_SEED), %ld landscapes (GB_ORCH_LANDSCAPES)\n",
	       seed, count);
	rng_state = seed ? seed : 1;
	memset(ps, 0, sizeof(ps));
	fresh_state();
	make_orch(NULL);
	for (long i = 0; i < count; i++) {
		/* probe_fill on most landscapes: P1-P11 are its properties */
		int s = i % 2 == 0 ? 0 : 1 + (int)rnd(3);

		random_run(&ps[s], (int)i, strategies[s]);
	}
	for (int s = 0; s < 4; s++) {
		snprintf(line, sizeof(line), "%s over %d landscapes", gb_conf_strategy_name(strategies[s]),
			 ps[s].runs);
		check(ps[s].runs > 0 && ps[s].violations == 0,
		      "randomized %s: P1 %d P2 %d P3 %d P4 %d P5 %d P6 %d P7 %d P8 %d P9 %d P11 %d, invariants %d violations",
		      line, ps[s].p[1], ps[s].p[2], ps[s].p[3], ps[s].p[4], ps[s].p[5], ps[s].p[6],
		      ps[s].p[7], ps[s].p[8], ps[s].p[9], ps[s].p[11], ps[s].p[0]);
	}
}

/*****************************************************************************
 *  Eventual consistency (issue 17): fresh ids and addresses not shown yet
 *****************************************************************************/

static void consistency(double invisible, double no_private_ip)
{
	char json[128];
	gb_error_t err;

	snprintf(json, sizeof(json), "{\"invisible\": %g, \"no_private_ip\": %g}", invisible,
		 no_private_ip);
	if (gb_simh_call(&sim, "POST", "/_sim/consistency", json, NULL, &err))
		die(err.text);
}

/* The simulator's private address of instance [id] into [buf], "" if none. */
static void sim_ip(const char *id, char *buf, size_t n)
{
	char *body = NULL;
	json_t *d, *it;
	size_t i;
	gb_error_t err;

	buf[0] = '\0';
	if (gb_simh_call(&sim, "GET", "/_sim/state", NULL, &body, &err))
		die(err.text);
	if (!(d = json_loads(body, 0, NULL)))
		die("/_sim/state: not JSON");
	json_array_foreach(json_object_get(d, "instances"), i, it) {
		const char *v = json_string_value(json_object_get(it, "id"));

		if (v && id && !strcmp(v, id))
			gb_strlcpy(buf, json_string_value(json_object_get(it, "private_ip")), n);
	}
	json_decref(d);
	free(body);
}

/*
 * The default strategy with the simulator's consistency settings on:
 * CreateTags and the extra's TerminateInstances meet InvalidInstanceID.
 * NotFound right after the launch and retry until the ids show; the
 * request fills, no extra stays alive, every node is named, and each
 * node's address is its instance's.
 */
static void test_consistency_fill(void)
{
	static const char *const l[] = { "ap-south-1a=g5.xlarge=5",
					 "ap-northeast-2a=g5.xlarge=5", NULL };
	static const char *const one_az[] = { "ap-south-1a=g5.xlarge=5", NULL };
	struct req_opts q = REQ("g5", 2, GB_STRATEGY_DEFAULT);
	struct gb_request req;
	struct gb_orch_result res;
	struct gb_simh_count c;
	struct recs r;
	char ip[32];
	bool same = true;
	gb_error_t err;
	gb_err_t rc;
	double now = gb_time_now() - 7200;

	fresh_state();
	make_orch(NULL);
	/* memory of two AZs with 1 each: the wave hedges, one instance is an extra */
	if (gb_state_capacity_record(st, "ap-south-1", "ap-south-1a", "g5.xlarge", NULL, 4, 1,
				     true, false, now, 3600, &err) ||
	    gb_state_capacity_record(st, "ap-northeast-2", "ap-northeast-2a", "g5.xlarge", NULL, 4, 1,
				     true, false, now, 3600, &err))
		die(err.text);
	landscape(l);
	consistency(1.5, 2.5);
	sleep_moves_sim = true;
	slept = 0;
	rc = run_req(&q, &req, &res, &err);
	sleep_moves_sim = false;
	consistency(0, 0);
	c = sim_count(req.id);
	records(req.id, &r);
	for (size_t i = 0; i < res.n_nodes; i++) {
		sim_ip(res.nodes[i].instance_id, ip, sizeof(ip));
		same &= res.nodes[i].private_ip && *ip && !strcmp(ip, res.nodes[i].private_ip);
	}
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 2 &&
	      res.extras == 1 && res.terminated == 1 && c.alive == 2 && c.dying == 1 &&
	      r.alive == 2,
	      "consistency on: the default fills, its extra is terminated once visible (extras %d, sim alive %d dying %d, %.2f s waited)",
	      res.extras, c.alive, c.dying, slept);
	check(trace_has(&res, "terminate region=") && trace_has(&res, "visible after") &&
	      c.tagged == 2 && slept >= 1.5 && slept <= 30,
	      "consistency on: TerminateInstances of the extra retried InvalidInstanceID.NotFound, both nodes named");
	check(same, "consistency on: every node's address is its instance's private address");
	records_free(&r);
	gb_orch_result_clear(&res);
	req_free(&req);

	/* no extra to wait for: CreateTags itself meets the fresh ids (two
	 * nodes: one would be named at launch) */
	fresh_state();
	make_orch(NULL);
	landscape(one_az);
	q.n = 2;
	consistency(1.5, 2.5);
	sleep_moves_sim = true;
	slept = 0;
	rc = run_req(&q, &req, &res, &err);
	sleep_moves_sim = false;
	consistency(0, 0);
	c = sim_count(req.id);
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && trace_has(&res, "tag retried") &&
	      !trace_has(&res, "tag node=") && c.tagged == 2 && slept >= 1.5 && slept <= 30,
	      "consistency on: CreateTags retried InvalidInstanceID.NotFound until the node could be named (%.2f s)",
	      slept);
	gb_orch_result_clear(&res);
	req_free(&req);
}

/*
 * orch_describe_ips: an address DescribeInstances does not show yet is
 * "not yet" (NotFound first, then no privateIpAddress), waited for with
 * back-off; the wait is bounded by ORCH_VISIBLE_BOUND.
 */
static void test_consistency_addresses(void)
{
	struct gb_ec2_run_params p = { 0 };
	struct gb_ec2_instance_list *l1 = NULL, *l2 = NULL;
	struct orch_pool *pool = NULL;
	struct gb_ec2_error ae;
	const char *ids[1], *all[2];
	char *ips[1] = { NULL };
	bool running[1] = { false };
	gb_ec2_t *c = NULL;
	double waited = 0;
	int calls = 0, n = 0;
	gb_error_t err;

	fresh_state();
	make_orch(NULL);
	set_cap("ap-south-1a", "g5.xlarge", 2);
	p.image_id = "ami-0123456789abcdef0";
	p.instance_type = "g5.xlarge";
	p.subnet_id = "subnet-aps1a-1";
	p.min_count = p.max_count = 1;
	if (orch_ec2_new(orch, "ap-south-1", &c, &err) ||
	    orch_pool_create(orch, &pool, &err))
		die(err.text);
	sleep_moves_sim = true;
	consistency(1, 3);
	if (gb_ec2_run_instances(c, &p, &l1, &ae, &err))
		die(err.text);
	ids[0] = l1->v[0].instance_id;
	slept = 0;
	if (orch_describe_ips(orch, pool, "ap-south-1", ids, 1, ips, running, &calls, &waited,
			      &err))
		die(err.text);
	check(ips[0] && l1->v[0].private_ip && !strcmp(ips[0], l1->v[0].private_ip) &&
	      running[0] && waited >= 3 - 1e-6 && waited < 30 && calls >= 3,
	      "address not shown yet: described again until it shows (%s after %.2f s, %d calls)",
	      ips[0] ? ips[0] : "-", waited, calls);
	free(ips[0]);
	ips[0] = NULL;

	consistency(100, 100);
	p.client_token = NULL;
	if (gb_ec2_run_instances(c, &p, &l2, &ae, &err))
		die(err.text);
	ids[0] = l2->v[0].instance_id;
	if (orch_describe_ips(orch, pool, "ap-south-1", ids, 1, ips, running, &calls, &waited,
			      &err))
		die(err.text);
	check(!ips[0] && fabs(waited - ORCH_VISIBLE_BOUND) < 1e-6,
	      "address never shown: given up after %.2f s of back-off (bound %.0f s)", waited,
	      ORCH_VISIBLE_BOUND);
	sleep_moves_sim = false;
	consistency(0, 0);
	all[0] = l1->v[0].instance_id;
	all[1] = l2->v[0].instance_id;
	if (gb_orch_terminate_instances(orch, st, "ap-south-1", all, 2, "test", &n, &err))
		die(err.text);
	orch_pool_destroy(pool);
	gb_ec2_destroy(c);
	gb_ec2_instance_list_free(l1);
	gb_ec2_instance_list_free(l2);
}

/*****************************************************************************
 *  A nodeset of several instance types
 *****************************************************************************/

/*
 * instance_types [g5.xlarge, g6e.xlarge] (two types the simulator serves;
 * the config parser checks that a real list has one GPU model): the first
 * type has no capacity anywhere, the second some in two AZs.  The request
 * fills from the second type; the records, attempts and the result say
 * which type each node got, and capacity memory has rows per type.
 */
static void test_instance_types(void)
{
	static const char *const l[] = { "ap-south-1a=g6e.xlarge=3",
					 "ap-northeast-2a=g6e.xlarge=2", NULL };
	static char t5[] = "g5.xlarge", t6e[] = "g6e.xlarge";
	static char *types[] = { t5, t6e, NULL };
	struct gb_conf_nodeset *ns = (struct gb_conf_nodeset *)gb_conf_nodeset(conf, "g5");
	struct req_opts q = REQ("g5", 5, GB_STRATEGY_DEFAULT);
	struct gb_instance_filter f = GB_INSTANCE_FILTER_ANY;
	struct type_rows rec = { 0 }, att = { 0 }, cap = { 0 };
	struct gb_request req;
	struct gb_orch_result res;
	bool all_g6e = true, offered = false, offered_b = true;
	gb_error_t err;
	gb_err_t rc;

	/* the nodeset's types for this test only (restored below) */
	char **types0 = ns->instance_types;
	size_t n_types0 = ns->n_instance_types;

	ns->instance_types = types;
	ns->n_instance_types = 2;
	rc = fresh_run(l, &q, &req, &res, &err);
	for (size_t i = 0; i < res.n_nodes; i++)
		all_g6e &= res.nodes[i].type && !strcmp(res.nodes[i].type, "g6e.xlarge");
	check(rc == GB_E_OK && res.result == GB_RESULT_SUCCESS && res.launched == 5 && all_g6e,
	      "instance_types: the first type dry everywhere, 5 nodes of the second (%s)",
	      res.reason);
	check(count_region(&res, "ap-south-1") == 3 && count_region(&res, "ap-northeast-2") == 2,
	      "instance_types: 3 from ap-south-1a, 2 from ap-northeast-2a");
	rec.type = "g6e.xlarge";
	f.request_id = req.id;
	if (gb_state_instance_list(st, &f, type_rec_row, &rec, &err))
		die(err.text);
	check(rec.n == 5 && rec.of_type == 5, "instance_types: 5 records, each of g6e.xlarge (%d/%d)",
	      rec.of_type, rec.n);
	att.type = "g5.xlarge";
	if (gb_state_attempt_list(st, req.id, type_att_row, &att, &err))
		die(err.text);
	check(att.n >= 2 && att.of_type == 0,
	      "instance_types: %d attempts, none of g5.xlarge got anything", att.n);
	if (gb_state_capacity_list(st, NULL, gb_time_now(), 3600, type_cap_row, &cap, &err))
		die(err.text);
	check(type_seen(&cap, "ap-south-1a/g5.xlarge") && type_seen(&cap, "ap-south-1a/g6e.xlarge"),
	      "instance_types: capacity memory rows per (AZ, type) (%d rows)", cap.n_seen);
	if (gb_state_offering_get(st, "ap-south-1", "ap-south-1a", "g6e.xlarge", 0, &offered,
				  &err) ||
	    gb_state_offering_get(st, "ap-south-1", "ap-south-1b", "g6e.xlarge", 0, &offered_b,
				  &err))
		die(err.text);
	check(offered && !offered_b,
	      "instance_types: the preflight's answer cached per type (g6e.xlarge in 1a, not 1b)");
	gb_orch_result_clear(&res);
	req_free(&req);
	ns->instance_types = types0;
	ns->n_instance_types = n_types0;
}

/*
 * A ladder with a targeted reservation of 3 (sim.yaml, ap-south-1b) before
 * on-demand: every strategy asks the reservation once, for 3, and never
 * again once it is used up (its count is exact: doc/orchestrator.md, "The
 * capacity ladder"); probe_fill used to ask it 3, 2 and 1 more times
 * (ReservationCapacityExceeded each).
 */
static void test_reservation_exact(void)
{
	static const int strategies[] = { GB_STRATEGY_PROBE_FILL, GB_STRATEGY_BEST_EFFORT,
					  GB_STRATEGY_ALL_OR_NOTHING, GB_STRATEGY_DEFAULT };
	static const char *const l[] = { "ap-south-1a=g5.xlarge=8", NULL };
	static char id[] = "cr-0e57000000000a001";
	static char *ids[] = { id, NULL };
	struct gb_conf_rung ladder[2] = { { .kind = GB_CAPACITY_RESERVATION, .ids = ids,
					    .n_ids = 1 },
					  { .kind = GB_CAPACITY_ON_DEMAND } };
	struct gb_conf_nodeset *ns = (struct gb_conf_nodeset *)gb_conf_nodeset(conf, "g5");
	/* the nodeset's ladder for this test only (restored below) */
	struct gb_conf_rung *ladder0 = ns->capacity;
	size_t n_ladder0 = ns->n_capacity;

	ns->capacity = ladder;
	ns->n_capacity = 2;
	for (size_t s = 0; s < GB_ARRAY_LEN(strategies); s++) {
		struct req_opts q = REQ("g5", 6, strategies[s]);
		const char *names[6];
		struct gb_request req;
		struct gb_orch_result res;
		struct atts x;
		char seq[256];
		int calls = 0, got = 0, full = 0;
		size_t n = 0;
		gb_error_t err;
		gb_err_t rc;

		rc = fresh_run(l, &q, &req, &res, &err);
		attempts(req.id, &x);
		asked_seq(&x, seq, sizeof(seq));
		for (int i = 0; i < x.n; i++) {
			if (strcmp(x.v[i].capacity, "reservation"))
				continue;
			calls++;
			got += x.v[i].got;
			full += !strcmp(x.v[i].code, "ReservationCapacityExceeded");
		}
		check(rc == GB_E_OK && res.launched == 6 && calls == 1 && got == 3 && full == 0,
		      "ladder %s: the reservation of 3 asked once (%d call(s), %d got, %d refused; %s)",
		      gb_conf_strategy_name((enum gb_strategy)strategies[s]), calls, got, full,
		      seq);
		/* the job ends: the reservation's slots come back for the next strategy */
		for (size_t i = 0; i < res.n_nodes && n < GB_ARRAY_LEN(names); i++)
			if (res.nodes[i].instance_id)
				names[n++] = res.nodes[i].node;
		if (gb_orch_terminate(orch, st, req.id, names, n, "test", 0, NULL, &err))
			die(err.text);
		gb_orch_result_clear(&res);
		req_free(&req);
	}
	ns->capacity = ladder0;
	ns->n_capacity = n_ladder0;
}

int main(void)
{
	const char *top = getenv("GB_TOP_BUILDDIR"), *src = getenv("GB_TOP_SRCDIR");
	const char *tmp = getenv("TMPDIR");
	struct gb_log_opts lo = { NULL, false, GB_LOG_ERROR, true };
	char bin[512], scenario[512];
	const char *args[] = { NULL };
	gb_error_t err;
	struct stat sb;
	int status;

	if (!top || !src) {
		return tap_skip_all("GB_TOP_BUILDDIR/GB_TOP_SRCDIR not set (run through make check)");
	}
	snprintf(bin, sizeof(bin), "%s/src/cloudsim/gpuburst-cloudsim", top);
	snprintf(scenario, sizeof(scenario), "%s/tests/data/orch/sim.yaml", src);
	if (stat(bin, &sb) != 0) {
		return tap_skip_all("%s not built", bin);
	}
	gb_log_open("test_orch", &lo, NULL);
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test-orch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir))
		die("mkdtemp");
	if (gb_simh_start(&sim, bin, scenario, args, &err))
		die(err.text);
	conf = load_conf(src, sim.endpoint);
	test_probe_fill_pattern();
	test_best_effort_pattern();
	test_all_or_nothing_pattern();
	test_default_pattern();
	test_instance_types();
	test_reservation_exact();
	test_large_request();
	test_offerings_cache();
	test_extras();
	test_locality();
	test_errors();
	test_launch_times();
	test_addresses();
	test_modes();
	test_lower_bounds();
	test_quota_memory();
	test_region_matrix();
	test_region_strategies();
	test_region_everywhere();
	test_region_preflight();
	test_new_classes();
	test_work_queue();
	test_board();
	test_board_flow();
	test_terminate_and_tools();
	test_proposer();
	test_crash_rerun();
	test_named_at_launch();
	test_random();
	/* last: these move the simulator's clock */
	test_consistency_fill();
	test_consistency_addresses();
	status = tap_done();
	cleanup();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "%s", tmpdir);
		for (int i = 1; i <= state_no; i++) {
			char p[400];

			snprintf(p, sizeof(p), "%s/state-%d.db", tmpdir, i);
			unlink(p);
			snprintf(p, sizeof(p), "%s/state-%d.db-wal", tmpdir, i);
			unlink(p);
			snprintf(p, sizeof(p), "%s/state-%d.db-shm", tmpdir, i);
			unlink(p);
		}
		rmdir(cmd);
	}
	return status;
}
