/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fault.h - per-call fault decisions: latency, throttling, 5xx, drops
 *
 * For each EC2 call the server asks once, under its lock, what should go
 * wrong with it; the answer comes from faults injected through the control
 * interface (first) and from the scenario's per-action profile, drawn from a
 * PRNG seeded by the scenario so that the same call sequence replays the
 * same faults.  The decision holds the latency to wait; the caller waits
 * without the lock.  Not thread-safe (the server's lock covers it).
 */
#ifndef GB_CLOUDSIM_FAULT_H
#define GB_CLOUDSIM_FAULT_H

#include <stdbool.h>

#include "gb_err.h"
#include "rng.h"
#include "scenario.h"
#include "sim.h"

typedef struct gb_faults gb_faults_t;

enum gb_fault_kind {
	GB_FAULT_NONE = 0,
	GB_FAULT_ERROR,		/* answer with [error] instead of acting */
	GB_FAULT_DROP,		/* close the connection, do nothing */
	GB_FAULT_LOST_RESPONSE,	/* act, then close without answering */
	GB_FAULT_LATENCY,	/* injection only: just the extra latency */
};

struct gb_fault {
	enum gb_fault_kind kind;
	double latency;			/* seconds to wait before answering */
	double slow_bps;		/* > 0: trickle the body at this rate */
	bool injected;			/* came from the control interface */
	struct gb_sim_error error;	/* for GB_FAULT_ERROR */
};

/* A fault for the next [count] matching calls (control interface). */
struct gb_fault_injection {
	enum gb_fault_kind kind;
	const char *code;		/* EC2 error code for GB_FAULT_ERROR */
	int status;			/* 0: EC2's status for [code] */
	const char *message;		/* NULL: a default text */
	double latency;			/* added latency (all kinds) */
	long count;			/* >= 1 */
	enum gb_sim_action action;	/* GB_SIM_ACTION_COUNT: any action */
	const char *region;		/* NULL: any region */
};

/* Per-action counters, for the state dump. */
struct gb_fault_counters {
	unsigned long calls, throttled, errors, drops, lost, slow, injected;
};

/* [sc] is BORROWED and must outlive the result. OUT *out NEW. */
gb_err_t gb_faults_create(const struct gb_scenario *sc, gb_faults_t **out,
			  gb_error_t *err);
void gb_faults_destroy(gb_faults_t *f);

/* Decide the fate of one call of [a] in [region] at simulated time [now]. */
void gb_faults_decide(gb_faults_t *f, enum gb_sim_action a, const char *region,
		      double now, struct gb_fault *out);

/* Queue an injection (copied). RET GB_E_INVALID with detail on bad input. */
gb_err_t gb_faults_inject(gb_faults_t *f, const struct gb_fault_injection *inj,
			  gb_error_t *err);

/* Drop every queued injection. */
void gb_faults_clear(gb_faults_t *f);

/* RET the number of injected faults still to fire (sum of counts). */
long gb_faults_pending(const gb_faults_t *f);

/* RET BORROWED counters of action [a]. */
const struct gb_fault_counters *gb_faults_counters(const gb_faults_t *f,
						   enum gb_sim_action a);

/* One latency sample of [l] (seconds, >= 0). */
double gb_latency_sample(const struct gb_latency *l, struct gb_rng *r);

/* The [p]-quantile (0 <= p <= 1) of [l]: what the samples should show. */
double gb_latency_quantile(const struct gb_latency *l, double p);

/*
 * RET the HTTP status EC2 sends with error [code] (500/503 for the server
 * errors, 401/403 for the auth ones, else 400).
 */
int gb_ec2_error_status(const char *code);

#endif /* GB_CLOUDSIM_FAULT_H */
