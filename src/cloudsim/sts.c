/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sts.c - STS (Query API 2011-06-15): AssumeRole, AssumeRoleWithWebIdentity
 * and GetCallerIdentity for the roles of the scenario
 *
 * A request is STS's when its SigV4 scope names the service "sts", or when
 * it is unsigned and asks for AssumeRoleWithWebIdentity (the one action STS
 * takes without a signature).  Parameters are checked against the STS
 * tables of schema.c (ValidationError, as STS words it); then:
 *
 *   AssumeRole: the role must be one of the scenario's `roles` and, when it
 *   has an external_id, the request must send it (else AccessDenied);
 *   DurationSeconds defaults to 3600 and may not exceed the role's
 *   max_session_duration, nor 3600 when the signer is itself a session
 *   (role chaining); ValidationError otherwise.
 *   AssumeRoleWithWebIdentity: the token must be one of the role's
 *   web_identity_tokens (InvalidIdentityToken).
 *
 * Each success issues a session: an ASIA key, a secret, a session token and
 * an expiration on the STS clock (the wall clock plus what /_sim/time
 * added).  auth.c accepts the session's key with its token, for EC2 and
 * STS, until it expires, and refuses it after (RequestExpired for EC2,
 * ExpiredToken for STS).  Sessions expired for more than a day are
 * forgotten.  The instance metadata service (imds.c) hands out sessions of
 * the same kind for instance roles (gb_cs_sts_instance_session: source
 * "instance-profile", session name the instance id, six hours), so there is
 * one mechanism for temporary credentials.  Answers and errors are STS's XML (the namespace
 * https://sts.amazonaws.com/doc/2011-06-15/, <ErrorResponse><Error>).
 */
#include "config.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_sigv4.h"
#include "gb_util.h"
#include "query.h"
#include "rng.h"
#include "schema.h"

#define STS_XMLNS "https://sts.amazonaws.com/doc/2011-06-15/"
#define STS_DEFAULT_DURATION 3600L
#define STS_CHAIN_MAX 3600L		/* role chaining: at most one hour */
#define STS_FORGET_AFTER 86400.0	/* expired sessions kept this long */
#define STS_SESSIONS_MAX 100000

enum sts_action { STS_ASSUME_ROLE = 0, STS_ASSUME_ROLE_WEB, STS_CALLER, STS_COUNT };

static const char *const sts_action_names[STS_COUNT] = {
	"AssumeRole", "AssumeRoleWithWebIdentity", "GetCallerIdentity",
};

struct session {
	char akid[21];			/* "ASIA" + 16 */
	char secret[41];
	char token[GB_CS_SESSION_TOKEN_MAX];
	double expiration;
	double issued;
	char *role_arn;
	char session_name[65];
	char source[40];		/* the signer's key, or "web-identity" */
	long calls;			/* requests signed with it */
};

struct gb_cs_sts {
	struct session *v;
	size_t n;
	struct gb_rng rng;
	long calls[STS_COUNT];		/* answered with credentials or identity */
	long *assumed;			/* per scenario role */
};

/* One request as this file sees it. */
struct sts_call {
	struct gb_cloudsim *cs;
	struct gb_cs_form p;
	const char *action;
	enum sts_action act;
	struct gb_cs_principal who;	/* the signer (not for web identity) */
	bool signed_req;
	char region[GB_SIGV4_FIELD_MAX];
	struct gb_sim_error err;
	bool failed;
};

gb_err_t gb_cs_sts_create(struct gb_cloudsim *cs, gb_error_t *err)
{
	struct gb_cs_sts *s = calloc(1, sizeof(*s));

	if (!s || !(s->assumed = calloc(cs->sc->nroles + 1, sizeof(long)))) {
		free(s);
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	gb_rng_seed(&s->rng, cs->sc->seed, 0x535453);	/* "STS" */
	cs->sts = s;
	return GB_E_OK;
}

void gb_cs_sts_destroy(struct gb_cloudsim *cs)
{
	struct gb_cs_sts *s = cs->sts;

	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		gb_memzero(s->v[i].secret, sizeof(s->v[i].secret));
		free(s->v[i].role_arn);
	}
	free(s->v);
	free(s->assumed);
	free(s);
	cs->sts = NULL;
}

static double sts_now_locked(const struct gb_cloudsim *cs)
{
	return cs->wall() + cs->offset;
}

double gb_cs_sts_now(struct gb_cloudsim *cs)
{
	double t;

	pthread_mutex_lock(&cs->mu);
	t = sts_now_locked(cs);
	pthread_mutex_unlock(&cs->mu);
	return t;
}

static struct session *find_session(struct gb_cs_sts *s, const char *akid)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].akid, akid) == 0)
			return &s->v[i];
	}
	return NULL;
}

bool gb_cs_sts_session(struct gb_cloudsim *cs, const char *akid,
		       struct gb_cs_principal *who)
{
	struct session *x;

	pthread_mutex_lock(&cs->mu);
	x = find_session(cs->sts, akid);
	if (x) {
		who->session = true;
		gb_strlcpy(who->secret, x->secret, sizeof(who->secret));
		gb_strlcpy(who->token, x->token, sizeof(who->token));
		gb_strlcpy(who->role_arn, x->role_arn, sizeof(who->role_arn));
		gb_strlcpy(who->session_name, x->session_name, sizeof(who->session_name));
		who->expiration = x->expiration;
	}
	pthread_mutex_unlock(&cs->mu);
	return x != NULL;
}

void gb_cs_sts_session_used(struct gb_cloudsim *cs, const char *akid)
{
	struct session *x;

	pthread_mutex_lock(&cs->mu);
	if ((x = find_session(cs->sts, akid)))
		x->calls++;
	pthread_mutex_unlock(&cs->mu);
}

/*****************************************************************************
 *  Routing
 *****************************************************************************/

bool gb_cs_is_sts(const struct gb_cs_request *req)
{
	const char *auth = gb_cs_header_get(req, "Authorization");
	struct gb_cs_form f = { 0 };
	struct gb_sigv4_auth a;
	gb_error_t err;
	bool sts = false;

	if (auth) {
		memset(&a, 0, sizeof(a));
		if (gb_sigv4_auth_parse(auth, &a, &err) == GB_E_OK)
			sts = strcmp(a.service, "sts") == 0;
		gb_sigv4_auth_free(&a);
		return sts;
	}
	if (gb_cs_form_parse(&f, req->query, req->query ? strlen(req->query) : 0) &&
	    gb_cs_form_parse(&f, req->body, req->body_len)) {
		const char *act = gb_cs_form_get(&f, "Action");

		sts = act && strcmp(act, "AssumeRoleWithWebIdentity") == 0;
	}
	gb_cs_form_free(&f);
	return sts;
}

/*****************************************************************************
 *  Answers
 *****************************************************************************/

static void error_body(struct gb_cs_response *r, const struct gb_sim_error *e)
{
	gb_buf_reset(&r->body);
	gb_buf_puts(&r->body, "<ErrorResponse xmlns=\"" STS_XMLNS "\">\n  <Error>\n"
		    "    <Type>Sender</Type>\n    ");
	gb_cs_xml_el(&r->body, "Code", e->code);
	gb_buf_puts(&r->body, "\n    ");
	gb_cs_xml_el(&r->body, "Message", e->message);
	gb_buf_puts(&r->body, "\n  </Error>\n  ");
	gb_cs_xml_el(&r->body, "RequestId", r->request_id);
	gb_buf_puts(&r->body, "\n</ErrorResponse>\n");
	r->status = e->status;
}

static void begin(struct gb_buf *b, const char *action)
{
	gb_buf_printf(b, "<%sResponse xmlns=\"%s\">\n  <%sResult>\n", action, STS_XMLNS,
		      action);
}

static void end(struct gb_buf *b, const char *action, const char *reqid)
{
	gb_buf_printf(b, "  </%sResult>\n  <ResponseMetadata>\n    ", action);
	gb_cs_xml_el(b, "RequestId", reqid);
	gb_buf_printf(b, "\n  </ResponseMetadata>\n</%sResponse>\n", action);
}

static void iso_time(double t, char *buf, size_t n)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*****************************************************************************
 *  Sessions
 *****************************************************************************/

static void random_chars(struct gb_rng *r, const char *set, char *out, size_t n)
{
	size_t m = strlen(set);

	for (size_t i = 0; i < n; i++)
		out[i] = set[gb_rng_next(r) % m];
	out[n] = '\0';
}

/* A role's unique id as STS shows it: AROA + 17 characters, from its ARN. */
static void role_id(const char *arn, const char *session, char *buf, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (const char *p = arn; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	snprintf(buf, n, "AROA%017" PRIu64 ":%s", (uint64_t)(h % 100000000000000000ULL), session);
}

/* The account of arn:aws:iam::ACCOUNT:role/NAME (12 digits, checked at load). */
static void role_account(const char *arn, char out[13])
{
	memcpy(out, arn + strlen("arn:aws:iam::"), 12);
	out[12] = '\0';
}

/* NAME of arn:aws:iam::ACCOUNT:role/path/NAME. */
static const char *role_name(const char *arn)
{
	return strrchr(arn, '/') + 1;
}

static void forget_expired(struct gb_cs_sts *s, double now)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].expiration + STS_FORGET_AFTER < now) {
			gb_memzero(s->v[i].secret, sizeof(s->v[i].secret));
			free(s->v[i].role_arn);
			continue;
		}
		s->v[k++] = s->v[i];
	}
	s->n = k;
}

/*
 * A new session of [role_arn] for [duration] seconds from [now]; [mu] held.
 * RET BORROWED (until the next session is issued) or NULL (no memory).
 */
static struct session *session_new(struct gb_cs_sts *s, const char *role_arn,
				   const char *name, const char *source, long duration,
				   double now)
{
	static const char upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	struct session *v, *x;
	char body[257];

	forget_expired(s, now);
	if (s->n >= STS_SESSIONS_MAX ||
	    !(v = realloc(s->v, (s->n + 1) * sizeof(*v))))
		return NULL;
	s->v = v;
	x = &v[s->n];
	memset(x, 0, sizeof(*x));
	if (!(x->role_arn = strdup(role_arn)))
		return NULL;
	memcpy(x->akid, "ASIA", 4);
	random_chars(&s->rng, upper, x->akid + 4, 16);
	random_chars(&s->rng, b64, x->secret, 40);
	/* a session token is long and opaque; this one says what it is */
	random_chars(&s->rng, b64, body, 256);
	snprintf(x->token, sizeof(x->token), "FwoGZXIvYXdzEGSIM%s%s", x->akid, body);
	x->issued = now;
	x->expiration = floor(now) + (double)duration;
	gb_strlcpy(x->session_name, name, sizeof(x->session_name));
	gb_strlcpy(x->source, source, sizeof(x->source));
	s->n++;
	return x;
}

/* Issue a session for [role]; [mu] held.  RET BORROWED or NULL (InternalError). */
static struct session *issue(struct sts_call *c, const struct gb_sc_role *role,
			     const char *name, long duration)
{
	struct session *x;

	x = session_new(c->cs->sts, role->arn, name,
			c->signed_req ? c->who.access_key_id : "web-identity", duration,
			sts_now_locked(c->cs));
	if (x)
		c->cs->sts->assumed[role - c->cs->sc->roles]++;
	return x;
}

/*
 * EC2 instance roles: "We make new credentials available at least five
 * minutes before the expiration of the old credentials"; the IMDS hands out
 * credentials valid for hours.  Here: six hours, a new session once fewer
 * than fifteen minutes are left (botocore refreshes at fifteen).
 */
#define INSTANCE_SESSION_S 21600L
#define INSTANCE_RENEW_S 900.0

bool gb_cs_sts_instance_session(struct gb_cloudsim *cs, const char *instance_id,
				const char *role_arn, struct gb_cs_session_creds *out)
{
	struct gb_cs_sts *s = cs->sts;
	double now = sts_now_locked(cs);
	struct session *x = NULL;

	for (size_t i = s->n; i-- > 0;) {
		if (strcmp(s->v[i].source, GB_CS_INSTANCE_SOURCE) == 0 &&
		    strcmp(s->v[i].session_name, instance_id) == 0 &&
		    strcmp(s->v[i].role_arn, role_arn) == 0) {
			x = &s->v[i];
			break;
		}
	}
	if (!x || x->expiration - now < INSTANCE_RENEW_S) {
		x = session_new(s, role_arn, instance_id, GB_CS_INSTANCE_SOURCE,
				INSTANCE_SESSION_S, now);
		if (!x)
			return false;
		gb_log_info("sts instance-session instance=%s role=%s akid=%s", instance_id,
			    role_arn, x->akid);
	}
	gb_strlcpy(out->access_key_id, x->akid, sizeof(out->access_key_id));
	gb_strlcpy(out->secret, x->secret, sizeof(out->secret));
	gb_strlcpy(out->token, x->token, sizeof(out->token));
	out->issued = x->issued;
	out->expiration = x->expiration;
	return true;
}

/*****************************************************************************
 *  Actions
 *****************************************************************************/

#define refuse(c, status, code, ...) \
	((c)->failed = true, gb_sim_error_set(&(c)->err, status, code, __VA_ARGS__))

/* The caller's ARN as STS names it in AccessDenied and GetCallerIdentity. */
static void caller_arn(const struct sts_call *c, char *buf, size_t n)
{
	char acct[13];

	if (c->who.session) {
		role_account(c->who.role_arn, acct);
		snprintf(buf, n, "arn:aws:sts::%s:assumed-role/%s/%s", acct,
			 role_name(c->who.role_arn), c->who.session_name);
	} else {
		snprintf(buf, n, "arn:aws:iam::%s:user/sim-%s", c->cs->sc->account_id,
			 c->who.access_key_id);
	}
}

static long duration_of(struct sts_call *c, const struct gb_sc_role *role)
{
	const char *d = gb_cs_form_get(&c->p, "DurationSeconds");
	long v = STS_DEFAULT_DURATION;

	if (d && gb_parse_long(d, 900, 43200, &v) != GB_E_OK)
		v = STS_DEFAULT_DURATION;	/* the schema checked it */
	if (v > role->max_session_s) {
		refuse(c, 400, "ValidationError",
		       "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.");
		return -1;
	}
	if (c->who.session && v > STS_CHAIN_MAX) {
		refuse(c, 400, "ValidationError",
		       "The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.");
		return -1;
	}
	return v;
}

/* The session [role] grants this request, or NULL with the refusal in [c]. */
static struct session *grant(struct sts_call *c, const struct gb_sc_role *role)
{
	struct session *x;
	long d = duration_of(c, role);

	if (d < 0)
		return NULL;
	if (!(x = issue(c, role, gb_cs_form_get(&c->p, "RoleSessionName"), d)))
		refuse(c, 500, "InternalFailure", "An internal error has occurred");
	return x;
}

static void credentials_el(struct gb_buf *b, const struct session *x)
{
	char exp[32];

	iso_time(x->expiration, exp, sizeof(exp));
	gb_buf_puts(b, "    <Credentials>\n      ");
	gb_cs_xml_el(b, "AccessKeyId", x->akid);
	gb_buf_puts(b, "\n      ");
	gb_cs_xml_el(b, "SecretAccessKey", x->secret);
	gb_buf_puts(b, "\n      ");
	gb_cs_xml_el(b, "SessionToken", x->token);
	gb_buf_puts(b, "\n      ");
	gb_cs_xml_el(b, "Expiration", exp);
	gb_buf_puts(b, "\n    </Credentials>\n");
}

static void assumed_user_el(struct gb_buf *b, const struct session *x)
{
	char acct[13], arn[GB_CS_ROLE_ARN_MAX + 128], id[128];

	role_account(x->role_arn, acct);
	snprintf(arn, sizeof(arn), "arn:aws:sts::%s:assumed-role/%s/%s", acct,
		 role_name(x->role_arn), x->session_name);
	role_id(x->role_arn, x->session_name, id, sizeof(id));
	gb_buf_puts(b, "    <AssumedRoleUser>\n      ");
	gb_cs_xml_el(b, "AssumedRoleId", id);
	gb_buf_puts(b, "\n      ");
	gb_cs_xml_el(b, "Arn", arn);
	gb_buf_puts(b, "\n    </AssumedRoleUser>\n");
}

static void act_assume(struct sts_call *c, struct gb_cs_response *r)
{
	const char *arn = gb_cs_form_get(&c->p, "RoleArn");
	const char *ext = gb_cs_form_get(&c->p, "ExternalId");
	const struct gb_sc_role *role = gb_scenario_role(c->cs->sc, arn);
	char who[GB_CS_ROLE_ARN_MAX + 128];
	struct session *x;

	caller_arn(c, who, sizeof(who));
	/* a trust policy without an sts:ExternalId condition ignores one sent */
	if (!role || (role->external_id && (!ext || strcmp(ext, role->external_id) != 0))) {
		gb_log_info("sts refused role=%s reason=%s", arn,
			    !role ? "no-such-role" : "external-id");
		refuse(c, 403, "AccessDenied",
		       "User: %s is not authorized to perform: sts:AssumeRole on resource: %s",
		       who, arn);
		return;
	}
	if (!(x = grant(c, role)))
		return;
	begin(&r->body, "AssumeRole");
	assumed_user_el(&r->body, x);
	credentials_el(&r->body, x);
	end(&r->body, "AssumeRole", r->request_id);
}

static void act_assume_web(struct sts_call *c, struct gb_cs_response *r)
{
	const char *arn = gb_cs_form_get(&c->p, "RoleArn");
	const char *tok = gb_cs_form_get(&c->p, "WebIdentityToken");
	const struct gb_sc_role *role = gb_scenario_role(c->cs->sc, arn);
	char acct[13];
	struct session *x;

	if (!role) {
		refuse(c, 403, "AccessDenied",
		       "Not authorized to perform sts:AssumeRoleWithWebIdentity");
		return;
	}
	if (gb_strv_find(&role->web_tokens, tok) < 0) {
		refuse(c, 400, "InvalidIdentityToken",
		       "The web identity token that was passed could not be validated by AWS. Get a new identity token from the identity provider and then retry the request.");
		return;
	}
	if (!(x = grant(c, role)))
		return;
	role_account(role->arn, acct);
	begin(&r->body, "AssumeRoleWithWebIdentity");
	gb_buf_puts(&r->body, "    ");
	gb_cs_xml_el(&r->body, "SubjectFromWebIdentityToken", "system:serviceaccount:gpuburst:sim");
	gb_buf_puts(&r->body, "\n    ");
	gb_cs_xml_el(&r->body, "Audience", "sts.amazonaws.com");
	gb_buf_puts(&r->body, "\n");
	assumed_user_el(&r->body, x);
	credentials_el(&r->body, x);
	gb_buf_printf(&r->body, "    <Provider>arn:aws:iam::%s:oidc-provider/oidc.gpuburst.test</Provider>\n",
		      acct);
	end(&r->body, "AssumeRoleWithWebIdentity", r->request_id);
}

static void act_caller(struct sts_call *c, struct gb_cs_response *r)
{
	char arn[GB_CS_ROLE_ARN_MAX + 128], id[128], acct[13];

	caller_arn(c, arn, sizeof(arn));
	if (c->who.session) {
		role_account(c->who.role_arn, acct);
		role_id(c->who.role_arn, c->who.session_name, id, sizeof(id));
	} else {
		gb_strlcpy(acct, c->cs->sc->account_id, sizeof(acct));
		gb_strlcpy(id, c->who.access_key_id, sizeof(id));
	}
	begin(&r->body, "GetCallerIdentity");
	gb_buf_puts(&r->body, "    ");
	gb_cs_xml_el(&r->body, "Arn", arn);
	gb_buf_puts(&r->body, "\n    ");
	gb_cs_xml_el(&r->body, "UserId", id);
	gb_buf_puts(&r->body, "\n    ");
	gb_cs_xml_el(&r->body, "Account", acct);
	gb_buf_puts(&r->body, "\n");
	end(&r->body, "GetCallerIdentity", r->request_id);
}

/*****************************************************************************
 *  Dispatch
 *****************************************************************************/

static enum sts_action find_action(const char *name)
{
	for (int i = 0; name && i < STS_COUNT; i++) {
		if (strcmp(sts_action_names[i], name) == 0)
			return (enum sts_action)i;
	}
	return STS_COUNT;
}

static void dispatch(struct sts_call *c, const struct gb_cs_request *req,
		     struct gb_cs_response *r)
{
	const struct gb_schema_action *sa;

	if (!gb_cs_form_parse(&c->p, req->query, req->query ? strlen(req->query) : 0) ||
	    !gb_cs_form_parse(&c->p, req->body, req->body_len)) {
		refuse(c, 400, "MalformedQueryString", "The request has too many parameters");
		return;
	}
	c->action = gb_cs_form_get(&c->p, "Action");
	c->act = find_action(c->action);
	c->signed_req = gb_cs_header_get(req, "Authorization") != NULL;
	/* AssumeRoleWithWebIdentity needs no signature; a signed one is checked */
	if ((c->signed_req || c->act != STS_ASSUME_ROLE_WEB) &&
	    !gb_cs_authenticate(c->cs, req, "sts", c->region, &c->who, &c->err)) {
		c->failed = true;
		return;
	}
	if (!c->action) {
		refuse(c, 400, "MissingAction", "The request must contain the parameter Action");
		return;
	}
	if (c->act == STS_COUNT || !(sa = gb_schema_action_find(&gb_schema_sts, c->action))) {
		refuse(c, 400, "InvalidAction",
		       "Could not find operation %.64s for version %s", c->action,
		       gb_schema_sts.version);
		return;
	}
	if (!gb_schema_check_action(&gb_schema_sts, sa, c->p.v, c->p.n, &c->err)) {
		c->failed = true;
		return;
	}
	pthread_mutex_lock(&c->cs->mu);
	switch (c->act) {
	case STS_ASSUME_ROLE:
		act_assume(c, r);
		break;
	case STS_ASSUME_ROLE_WEB:
		act_assume_web(c, r);
		break;
	default:
		act_caller(c, r);
		break;
	}
	if (!c->failed)
		c->cs->sts->calls[c->act]++;
	pthread_mutex_unlock(&c->cs->mu);
}

void gb_sts_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		   struct gb_cs_response *resp)
{
	struct sts_call c;
	double t0 = gb_time_mono();
	char qa[128];

	memset(&c, 0, sizeof(c));
	c.cs = cs;
	c.act = STS_COUNT;
	pthread_mutex_lock(&cs->mu);
	gb_sim_request_id(cs->sim, resp->request_id);
	pthread_mutex_unlock(&cs->mu);
	resp->status = 200;
	resp->content_type = "text/xml";
	dispatch(&c, req, resp);
	if (c.failed)
		error_body(resp, &c.err);
	gb_log_info("sts action=%s region=%s status=%d code=%s latency_ms=%.1f req=%s peer=%s",
		    gb_log_q(qa, sizeof(qa), c.action ? c.action : "-"),
		    c.region[0] ? c.region : "-", resp->status,
		    c.failed ? c.err.code : "-", (gb_time_mono() - t0) * 1000.0,
		    resp->request_id, req->peer ? req->peer : "-");
	gb_memzero(&c.who, sizeof(c.who));
	gb_cs_form_free(&c.p);
}

/*****************************************************************************
 *  GET /_sim/sts
 *****************************************************************************/

json_t *gb_cs_sts_json(struct gb_cloudsim *cs)
{
	struct gb_cs_sts *s = cs->sts;
	double now = sts_now_locked(cs);
	json_t *calls = json_object(), *roles = json_object(), *sess = json_array();
	char exp[32];

	for (int i = 0; i < STS_COUNT; i++)
		json_object_set_new(calls, sts_action_names[i], json_integer(s->calls[i]));
	for (size_t i = 0; i < cs->sc->nroles; i++)
		json_object_set_new(roles, cs->sc->roles[i].arn, json_integer(s->assumed[i]));
	for (size_t i = 0; i < s->n; i++) {
		iso_time(s->v[i].expiration, exp, sizeof(exp));
		json_array_append_new(sess, json_pack("{s:s,s:s,s:s,s:s,s:s,s:f,s:I,s:b}",
			"access_key_id", s->v[i].akid, "role_arn", s->v[i].role_arn,
			"session_name", s->v[i].session_name, "source", s->v[i].source,
			"expiration", exp, "expires_in", s->v[i].expiration - now,
			"calls", (json_int_t)s->v[i].calls,
			"expired", now >= s->v[i].expiration));
	}
	return json_pack("{s:o,s:o,s:o,s:f}", "calls", calls, "roles", roles,
			 "sessions", sess, "now", now);
}
