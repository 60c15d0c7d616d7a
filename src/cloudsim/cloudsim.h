/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cloudsim.h - the simulator's shared context and its HTTP-free request seam
 *
 * The server (server.c) turns each HTTP request into a struct gb_cs_request
 * and hands it to gb_cloudsim_handle(), which routes it to the EC2 Query API
 * (ec2_api.c) or, under /_sim/, to the control interface (control.c), and
 * fills a struct gb_cs_response.  Unit tests call gb_cloudsim_handle()
 * directly, with a driven clock and without sleeping.
 *
 * Locking: [mu] guards sim, faults and the clock offset.  Nothing sleeps or
 * forks while holding it: fault latency is waited out after the decision,
 * and boot hooks run after the state change was made.
 */
#ifndef GB_CLOUDSIM_CLOUDSIM_H
#define GB_CLOUDSIM_CLOUDSIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "boot.h"
#include "fault.h"
#include "gb_err.h"
#include "gb_str.h"
#include "scenario.h"
#include "sim.h"

/* Requests to paths under this prefix go to the control interface. */
#define GB_CS_CONTROL_PREFIX "/_sim/"
/* The instance metadata service, for the instances' own addresses. */
#define GB_CS_IMDS_PREFIX "/latest/"

/* SigV4: a request older or newer than this is RequestExpired (EC2: 15 min). */
#define GB_CS_MAX_SKEW 900.0

/* STS takes requests scoped to the scenario's regions and to this one. */
#define GB_CS_STS_GLOBAL_REGION "us-east-1"
#define GB_CS_ROLE_ARN_MAX 2048
#define GB_CS_SESSION_TOKEN_MAX 1024

/* Who signed a request: filled by gb_cs_authenticate(). */
struct gb_cs_principal {
	char access_key_id[32];
	char secret[128];		/* wiped before gb_cs_authenticate returns */
	bool session;			/* temporary credentials STS issued */
	char token[GB_CS_SESSION_TOKEN_MAX];
	double expiration;		/* a session's, on the STS clock */
	char role_arn[GB_CS_ROLE_ARN_MAX + 1];	/* a session's role */
	char session_name[65];
};

struct gb_cs_sts;

struct gb_cs_header {
	const char *name;
	const char *value;
};

/* One received HTTP request; everything BORROWED. */
struct gb_cs_request {
	const char *method;
	const char *path;		/* raw path, without the query */
	const char *query;		/* raw query after '?', or NULL */
	const struct gb_cs_header *headers;
	size_t nheaders;
	const char *body;
	size_t body_len;
	const char *peer;		/* "127.0.0.1", for the log */
};

/* What to send back.  gb_cs_response_free() releases [body]. */
struct gb_cs_response {
	int status;
	const char *content_type;	/* static */
	struct gb_buf body;
	bool close;			/* drop the connection, send nothing */
	double slow_bps;		/* > 0: trickle the body */
	char request_id[40];
};

struct gb_cloudsim {
	struct gb_scenario *sc;		/* owned */
	gb_sim_t *sim;			/* owned */
	gb_faults_t *faults;		/* owned */
	gb_boot_t *boot;		/* owned; NULL: no boot hook */
	pthread_mutex_t mu;
	double mono0;			/* monotonic clock at start */
	double scale;			/* simulated seconds per real second */
	double offset;			/* simulated seconds added (/_sim/time) */
	bool frozen;			/* tests: time moves only by offset */
	bool no_sleep;			/* tests: do not wait out latencies */
	double (*wall)(void);		/* wall clock for X-Amz-Date checks */
	double last_latency;		/* tests: the latency last decided */
	/* tests (/_sim/state "calls"): EC2 calls per action received (past
	 * authentication and parameter checks, before any latency) and
	 * answered (the action done, its response on the way) */
	long received[GB_SIM_ACTION_COUNT], answered[GB_SIM_ACTION_COUNT];
	struct gb_cs_sts *sts;		/* owned: the sessions STS issued */
};

/*
 * Build the context for [sc] (STEALS it: freed by gb_cloudsim_destroy
 * even on failure).  [boot_dir] is where boot hooks keep per-instance
 * files (used only with `boot: exec`).  OUT *out NEW.
 */
gb_err_t gb_cloudsim_create(struct gb_scenario *sc, const char *boot_dir,
			    double time_scale, struct gb_cloudsim **out,
			    gb_error_t *err);
void gb_cloudsim_destroy(struct gb_cloudsim *cs);

/* Simulated now; the caller holds [mu]. */
double gb_cloudsim_now(const struct gb_cloudsim *cs);

/* Serve one request (takes [mu] itself).  [resp] must be zeroed. */
void gb_cloudsim_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
			struct gb_cs_response *resp);

/* Advance time, run due boot hooks, reap children (timer thread). */
void gb_cloudsim_tick(struct gb_cloudsim *cs);

void gb_cs_response_free(struct gb_cs_response *resp);

/* RET BORROWED value of header [name] (any case), or NULL. */
const char *gb_cs_header_get(const struct gb_cs_request *req, const char *name);

/*
 * auth.c: verify the request's SigV4 signature for [service] ("ec2",
 * "sts") with the scenario's keys or a session STS issued.
 * OUT [region] the credential scope's region (128 bytes); [who] the signer.
 * RET true, or false with the service's error in [e].
 */
bool gb_cs_authenticate(struct gb_cloudsim *cs, const struct gb_cs_request *req,
			const char *service, char *region, struct gb_cs_principal *who,
			struct gb_sim_error *e);

/*
 * sts.c: STS's AssumeRole, AssumeRoleWithWebIdentity and GetCallerIdentity
 * for the scenario's roles.  Its clock is the wall clock plus what
 * /_sim/time added, so a test can let a session expire.
 */
gb_err_t gb_cs_sts_create(struct gb_cloudsim *cs, gb_error_t *err);
void gb_cs_sts_destroy(struct gb_cloudsim *cs);

/* Is [req] for STS: signed for "sts", or an unsigned web-identity call? */
bool gb_cs_is_sts(const struct gb_cs_request *req);

/* Serve an STS Query API request. */
void gb_sts_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		   struct gb_cs_response *resp);

/* RET the STS clock (takes [mu]). */
double gb_cs_sts_now(struct gb_cloudsim *cs);

/*
 * Copy the session [akid] into [who] (secret, token, expiration, role)
 * under [mu].  RET false when STS issued no such key.
 */
bool gb_cs_sts_session(struct gb_cloudsim *cs, const char *akid,
		       struct gb_cs_principal *who);

/* Count one authenticated request signed by session [akid] (takes [mu]). */
void gb_cs_sts_session_used(struct gb_cloudsim *cs, const char *akid);

/* An instance role's session, as the IMDS hands it out (a copy). */
struct gb_cs_session_creds {
	char access_key_id[32];
	char secret[64];
	char token[GB_CS_SESSION_TOKEN_MAX];
	double issued, expiration;	/* on the STS clock */
};

/* The source GET /_sim/sts shows for instance-role sessions. */
#define GB_CS_INSTANCE_SOURCE "instance-profile"

/*
 * The credentials of instance [instance_id]'s role [role_arn]: a session
 * like AssumeRole's (auth.c takes it the same way), named after the
 * instance, kept while it has more than 15 minutes left, then a new one.
 * [mu] held.  OUT *out (wipe the secret after use).  RET false: no memory.
 */
bool gb_cs_sts_instance_session(struct gb_cloudsim *cs, const char *instance_id,
				const char *role_arn, struct gb_cs_session_creds *out);

/* RET NEW {"calls", "roles", "sessions"} for GET /_sim/sts; [mu] held. */
struct json_t *gb_cs_sts_json(struct gb_cloudsim *cs);

/* ec2_api.c: serve an EC2 Query API request. */
void gb_ec2api_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		      struct gb_cs_response *resp);

/* imds.c: serve a request under GB_CS_IMDS_PREFIX. */
void gb_imds_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		    struct gb_cs_response *resp);

/* control.c: serve a request under GB_CS_CONTROL_PREFIX. */
void gb_simctl_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		      struct gb_cs_response *resp);

/* Hand the sim's queued state-change events to the boot hook (no lock held). */
void gb_cloudsim_run_events(struct gb_cloudsim *cs, struct gb_sim_event *ev,
			    size_t n);

#endif /* GB_CLOUDSIM_CLOUDSIM_H */
