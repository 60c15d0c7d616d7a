/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fault.c - latency sampling, throttling (rate, bursts, token bucket), 5xx,
 * dropped connections and slow bodies; faults injected for the next N calls
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "gb_str.h"

struct injection {
	enum gb_fault_kind kind;
	char *code;
	int status;
	char *message;
	double latency;
	long count;
	enum gb_sim_action action;
	char *region;
};

struct bucket {
	double tokens;
	double last;		/* simulated time of the last refill */
	bool started;
};

struct gb_faults {
	const struct gb_scenario *sc;
	struct gb_rng rng;
	struct bucket *buckets;		/* [region][action] */
	struct injection *inj;
	size_t ninj;
	struct gb_fault_counters counters[GB_SIM_ACTION_COUNT];
};

/* EC2 error codes with their HTTP status and a default message. */
static const struct {
	const char *code;
	int status;
	const char *message;
} ec2_errors[] = {
	{ "InsufficientInstanceCapacity", 500,
	  "We currently do not have sufficient capacity in the Availability Zone you requested. Our system will be working on provisioning additional capacity." },
	{ "InternalError", 500, "An internal error has occurred" },
	{ "InternalFailure", 500, "An internal error has occurred" },
	{ "RequestLimitExceeded", 503, "Request limit exceeded." },
	{ "Unavailable", 503, "The server is overloaded and can't handle the request." },
	{ "ServiceUnavailable", 503, "The service is unavailable. Please try again shortly." },
	{ "AuthFailure", 401, "AWS was not able to validate the provided access credentials" },
	{ "UnauthorizedOperation", 403, "You are not authorized to perform this operation." },
	{ "SignatureDoesNotMatch", 403,
	  "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details." },
	{ "MissingAuthenticationToken", 403, "Request is missing Authentication Token" },
	{ "DryRunOperation", 412, "Request would have succeeded, but DryRun flag is set." },
};

int gb_ec2_error_status(const char *code)
{
	for (size_t i = 0; code && i < GB_ARRAY_LEN(ec2_errors); i++) {
		if (strcmp(ec2_errors[i].code, code) == 0)
			return ec2_errors[i].status;
	}
	return 400;
}

static const char *default_message(const char *code)
{
	for (size_t i = 0; code && i < GB_ARRAY_LEN(ec2_errors); i++) {
		if (strcmp(ec2_errors[i].code, code) == 0)
			return ec2_errors[i].message;
	}
	return "Injected fault.";
}

/*****************************************************************************
 *  Latency distributions
 *****************************************************************************/

/* Inverse standard normal CDF (P. J. Acklam's rational approximation). */
static double norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02,
		-3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01,
		-1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00,
		4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r;

	if (p <= 0)
		return -HUGE_VAL;
	if (p >= 1)
		return HUGE_VAL;
	if (p < 0.02425 || p > 1 - 0.02425) {
		q = sqrt(-2 * log(p < 0.5 ? p : 1 - p));
		r = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
		return p < 0.5 ? r : -r;
	}
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* Piecewise-linear interpolation between the configured quantile points. */
static double pct_quantile(const struct gb_latency *l, double p)
{
	for (int i = 1; i < GB_LATENCY_NQ; i++) {
		double p0 = gb_latency_qprob[i - 1], p1 = gb_latency_qprob[i];

		if (p <= p1)
			return l->q[i - 1] + (l->q[i] - l->q[i - 1]) * (p - p0) / (p1 - p0);
	}
	return l->q[GB_LATENCY_NQ - 1];
}

double gb_latency_quantile(const struct gb_latency *l, double p)
{
	switch (l->kind) {
	case GB_LATENCY_FIXED:
		return l->a;
	case GB_LATENCY_UNIFORM:
		return l->a + p * (l->b - l->a);
	case GB_LATENCY_LOGNORMAL:
		return p <= 0 ? 0 : l->a * exp(l->b * norm_quantile(p));
	case GB_LATENCY_PERCENTILES:
		return pct_quantile(l, p);
	}
	return 0;
}

double gb_latency_sample(const struct gb_latency *l, struct gb_rng *r)
{
	switch (l->kind) {
	case GB_LATENCY_FIXED:
		return l->a;
	case GB_LATENCY_UNIFORM:
		return l->a + gb_rng_double(r) * (l->b - l->a);
	case GB_LATENCY_LOGNORMAL:
		return l->a * exp(l->b * gb_rng_normal(r));
	case GB_LATENCY_PERCENTILES:
		return pct_quantile(l, gb_rng_double(r));
	}
	return 0;
}

/*****************************************************************************
 *  Life cycle and injections
 *****************************************************************************/

gb_err_t gb_faults_create(const struct gb_scenario *sc, gb_faults_t **out,
			  gb_error_t *err)
{
	gb_faults_t *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f || !(f->buckets = calloc(sc->nregions * GB_SIM_ACTION_COUNT + 1,
					sizeof(*f->buckets)))) {
		free(f);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	f->sc = sc;
	gb_rng_seed(&f->rng, sc->seed, 3);
	*out = f;
	return GB_E_OK;
}

static void injection_free(struct injection *in)
{
	free(in->code);
	free(in->message);
	free(in->region);
}

void gb_faults_clear(gb_faults_t *f)
{
	for (size_t i = 0; i < f->ninj; i++)
		injection_free(&f->inj[i]);
	GB_FREE_NULL(f->inj);
	f->ninj = 0;
}

void gb_faults_destroy(gb_faults_t *f)
{
	if (!f)
		return;
	gb_faults_clear(f);
	free(f->buckets);
	free(f);
}

gb_err_t gb_faults_inject(gb_faults_t *f, const struct gb_fault_injection *inj,
			  gb_error_t *err)
{
	struct injection *p, *in;

	if (inj->count < 1)
		return gb_errorf(err, GB_E_INVALID, "count must be at least 1");
	if (inj->kind == GB_FAULT_ERROR && (!inj->code || !inj->code[0]))
		return gb_errorf(err, GB_E_INVALID, "an error fault needs a code");
	if (inj->latency < 0 || inj->latency > 3600)
		return gb_errorf(err, GB_E_INVALID, "latency must be in [0, 3600] seconds");
	if (inj->status && (inj->status < 400 || inj->status > 599))
		return gb_errorf(err, GB_E_INVALID, "status must be a 4xx or 5xx HTTP status");
	p = realloc(f->inj, (f->ninj + 1) * sizeof(*p));
	if (!p)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	f->inj = p;
	in = &p[f->ninj];
	memset(in, 0, sizeof(*in));
	in->kind = inj->kind;
	in->status = inj->status ? inj->status : gb_ec2_error_status(inj->code);
	in->latency = inj->latency;
	in->count = inj->count;
	in->action = inj->action;
	in->code = gb_strdup0(inj->code);
	in->message = gb_strdup0(inj->message ? inj->message : default_message(inj->code));
	in->region = gb_strdup0(inj->region);
	if ((inj->code && !in->code) || !in->message || (inj->region && !in->region)) {
		injection_free(in);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	f->ninj++;
	return GB_E_OK;
}

long gb_faults_pending(const gb_faults_t *f)
{
	long n = 0;

	for (size_t i = 0; i < f->ninj; i++)
		n += f->inj[i].count;
	return n;
}

const struct gb_fault_counters *gb_faults_counters(const gb_faults_t *f,
						   enum gb_sim_action a)
{
	return &f->counters[a];
}

/*****************************************************************************
 *  Decisions
 *****************************************************************************/

/* Fire the first queued injection that matches; RET whether one did. */
static bool take_injection(gb_faults_t *f, enum gb_sim_action a,
			   const char *region, struct gb_fault *out)
{
	for (size_t i = 0; i < f->ninj; i++) {
		struct injection *in = &f->inj[i];

		if ((in->action != GB_SIM_ACTION_COUNT && in->action != a) ||
		    (in->region && (!region || strcmp(in->region, region) != 0)))
			continue;
		out->kind = in->kind == GB_FAULT_LATENCY ? GB_FAULT_NONE : in->kind;
		out->latency += in->latency;
		out->injected = true;
		if (in->kind == GB_FAULT_ERROR)
			gb_sim_error_set(&out->error, in->status, in->code, "%s",
					 in->message);
		if (--in->count == 0) {
			injection_free(in);
			memmove(in, in + 1, (f->ninj - i - 1) * sizeof(*in));
			f->ninj--;
		}
		return true;
	}
	return false;
}

static size_t region_index(const gb_faults_t *f, const char *region)
{
	for (size_t i = 0; region && i < f->sc->nregions; i++) {
		if (strcmp(f->sc->regions[i].name, region) == 0)
			return i;
	}
	return f->sc->nregions;		/* unknown: no bucket */
}

/* EC2's request token bucket: RET false when the call finds it empty. */
static bool bucket_take(gb_faults_t *f, const struct gb_fault_profile *p,
			enum gb_sim_action a, const char *region, double now)
{
	size_t r = region_index(f, region);
	struct bucket *b;

	if (p->bucket_size <= 0 || r == f->sc->nregions)
		return true;
	b = &f->buckets[r * GB_SIM_ACTION_COUNT + a];
	if (!b->started) {
		b->tokens = p->bucket_size;
		b->last = now;
		b->started = true;
	}
	b->tokens += (now - b->last) * p->bucket_refill;
	if (b->tokens > p->bucket_size)
		b->tokens = p->bucket_size;
	b->last = now;
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}

/* The throttle rate at [now]: the base rate, or a burst window's if higher. */
static double throttle_rate_at(const struct gb_fault_profile *p, double now)
{
	double rate = p->throttle_rate;

	for (size_t i = 0; i < p->nbursts; i++) {
		const struct gb_sc_burst *b = &p->bursts[i];

		if (now >= b->at && now < b->at + b->duration && b->rate > rate)
			rate = b->rate;
	}
	return rate;
}

/* Every call draws the same number of values, so outcomes stay independent. */
static void decide_profile(gb_faults_t *f, const struct gb_fault_profile *p,
			   enum gb_sim_action a, const char *region, double now,
			   struct gb_fault *out)
{
	double u_drop = gb_rng_double(&f->rng), u_thr = gb_rng_double(&f->rng);
	double u_err = gb_rng_double(&f->rng), u_lost = gb_rng_double(&f->rng);
	double u_slow = gb_rng_double(&f->rng);
	bool bucket_ok = bucket_take(f, p, a, region, now);

	if (u_drop < p->drop_rate) {
		out->kind = GB_FAULT_DROP;
	} else if (!bucket_ok || u_thr < throttle_rate_at(p, now)) {
		out->kind = GB_FAULT_ERROR;
		gb_sim_error_set(&out->error, 503, "RequestLimitExceeded",
				 "Request limit exceeded.");
	} else if (u_err < p->error_rate) {
		out->kind = GB_FAULT_ERROR;
		gb_sim_error_set(&out->error, gb_ec2_error_status(p->error_code),
				 p->error_code, "%s", default_message(p->error_code));
	} else if (u_lost < p->lost_response_rate) {
		out->kind = GB_FAULT_LOST_RESPONSE;
	}
	if (u_slow < p->slow_body_rate)
		out->slow_bps = p->slow_body_bps;
}

static void count(gb_faults_t *f, enum gb_sim_action a, const struct gb_fault *d)
{
	struct gb_fault_counters *c = &f->counters[a];

	c->calls++;
	c->injected += d->injected;
	c->slow += d->slow_bps > 0;
	switch (d->kind) {
	case GB_FAULT_ERROR:
		if (strcmp(d->error.code, "RequestLimitExceeded") == 0)
			c->throttled++;
		else
			c->errors++;
		break;
	case GB_FAULT_DROP:
		c->drops++;
		break;
	case GB_FAULT_LOST_RESPONSE:
		c->lost++;
		break;
	default:
		break;
	}
}

void gb_faults_decide(gb_faults_t *f, enum gb_sim_action a, const char *region,
		      double now, struct gb_fault *out)
{
	const struct gb_fault_profile *p = &f->sc->faults[a];

	memset(out, 0, sizeof(*out));
	/* the profile's latency is sampled for every call, faulty or not */
	out->latency = gb_latency_sample(&p->latency, &f->rng);
	if (!take_injection(f, a, region, out))
		decide_profile(f, p, a, region, now, out);
	count(f, a, out);
}
