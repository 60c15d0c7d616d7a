/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ec2_api.c - the EC2 Query API: form decoding, dispatch, EC2-shaped XML
 *
 * Wire format: research/seed-and-protocols.md s3 (botocore's EC2 protocol):
 * POST / with an application/x-www-form-urlencoded body, lists flattened as
 * Name.1, Name.2 ..., responses in the 2016-11-15 namespace, errors in
 * <Response><Errors><Error> with a RequestID.  Element names follow the
 * samples in tests/data/ec2 (botocore's response fixtures).
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_sigv4.h"
#include "gb_util.h"

#define EC2_XMLNS "http://ec2.amazonaws.com/doc/2016-11-15/"
#define USER_DATA_MAX 16384	/* EC2: 16 KB before base64 */
#define BODY_PARAMS_MAX 4096

struct param {
	char *key;
	char *value;
};

struct params {
	struct param *v;
	size_t n;
};

/* Everything one call decoded and decided, for the handler and the log. */
struct call {
	struct gb_cloudsim *cs;
	struct params p;
	const char *action;
	enum gb_sim_action act;
	char region[GB_SIGV4_FIELD_MAX];
	struct gb_sim_error err;
	bool failed;
	bool dry_run;			/* DryRun=true: validate, then 412 */
	long instances;			/* for the log */
	struct gb_sim_event *events;	/* taken under the lock, run after */
	size_t nevents;
};

/*****************************************************************************
 *  Form decoding
 *****************************************************************************/

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* x-www-form-urlencoded: %XX and '+' for a blank. RET NEW string. */
static char *form_decode(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+') {
			*o++ = ' ';
		} else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
			   hexval(s[i + 2]) >= 0) {
			*o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

static bool params_add(struct params *p, const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);
	size_t kl = eq ? (size_t)(eq - s) : n;
	struct param *v;

	if (n == 0)
		return true;
	if (p->n >= BODY_PARAMS_MAX)
		return false;
	v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return false;
	p->v = v;
	v[p->n].key = form_decode(s, kl);
	v[p->n].value = eq ? form_decode(eq + 1, n - kl - 1) : strdup("");
	if (!v[p->n].key || !v[p->n].value) {
		free(v[p->n].key);
		free(v[p->n].value);
		return false;
	}
	p->n++;
	return true;
}

static bool params_parse(struct params *p, const char *s, size_t n)
{
	while (s && n) {
		const char *amp = memchr(s, '&', n);
		size_t len = amp ? (size_t)(amp - s) : n;

		if (!params_add(p, s, len))
			return false;
		s += len;
		n -= len;
		if (amp) {
			s++;
			n--;
		}
	}
	return true;
}

static void params_free(struct params *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static const char *param(const struct params *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->v[i].key, key) == 0)
			return p->v[i].value;
	}
	return NULL;
}

static const char *paramf(const struct params *p, char *buf, size_t n,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static const char *paramf(const struct params *p, char *buf, size_t n,
			  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return param(p, buf);
}

/* Keys "<prefix>N" (N >= 1) in order of N; values BORROWED. */
static size_t param_list(const struct params *p, const char *prefix,
			 const char **out, size_t max)
{
	size_t n = 0;
	char key[160];

	for (long i = 1; n < max; i++) {
		const char *v = paramf(p, key, sizeof(key), "%s%ld", prefix, i);

		if (!v)
			break;
		out[n++] = v;
	}
	return n;
}

/* A boolean parameter: absent is false, else "true" or "false". */
static bool parse_bool(struct call *c, const char *key, bool *out)
{
	const char *v = param(&c->p, key);

	*out = v && strcasecmp(v, "true") == 0;
	if (!v || *out || strcasecmp(v, "false") == 0)
		return true;
	gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
			 "Invalid value '%s' for %s: expecting a boolean (true or false)", v, key);
	return c->failed = true, false;
}

/* Filter.N.Name / Filter.N.Value.M.  OUT NEW arrays (filters_free). */
static bool filters_parse(const struct params *p, struct gb_sim_filter **out,
			  size_t *n)
{
	char key[96];
	const char *name;

	*out = NULL;
	*n = 0;
	for (long i = 1; (name = paramf(p, key, sizeof(key), "Filter.%ld.Name", i)); i++) {
		struct gb_sim_filter *f = realloc(*out, (*n + 1) * sizeof(*f));
		const char **vals = calloc(p->n + 1, sizeof(*vals));

		if (!f || !vals) {
			free(vals);
			if (f)
				*out = f;
			return false;
		}
		*out = f;
		snprintf(key, sizeof(key), "Filter.%ld.Value.", i);
		f[*n].name = name;
		f[*n].nvalues = param_list(p, key, vals, p->n);
		f[(*n)++].values = vals;
	}
	return true;
}

static void filters_free(struct gb_sim_filter *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		free((void *)f[i].values);
	free(f);
}

/* Prefix.N.Key / Prefix.N.Value, e.g. "TagSpecification.1.Tag." or "Tag.". */
static size_t tags_parse(const struct params *p, const char *prefix,
			 struct gb_sim_kv *out, size_t max)
{
	char key[160];
	size_t n = 0;

	for (long i = 1; n < max; i++) {
		const char *k = paramf(p, key, sizeof(key), "%s%ld.Key", prefix, i);

		if (!k)
			break;
		out[n].key = k;
		out[n++].value = paramf(p, key, sizeof(key), "%s%ld.Value", prefix, i);
	}
	return n;
}

/* Strict RFC 4648 base64.  RET NEW bytes (NUL-terminated) or NULL. */
static char *base64_decode(const char *s, size_t *len)
{
	static const char alpha[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(s), o = 0;
	unsigned acc = 0;
	int bits = 0, pad = 0;
	char *out;

	if (n % 4)
		return NULL;
	if (!(out = malloc(n / 4 * 3 + 1)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *c = s[i] ? strchr(alpha, s[i]) : NULL;

		if (s[i] == '=' && i >= n - 2) {
			pad++;
			continue;
		}
		if (!c || pad)
			goto bad;
		acc = (acc << 6) | (unsigned)(c - alpha);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
bad:
	free(out);
	return NULL;
}

/*****************************************************************************
 *  XML
 *****************************************************************************/

static void xml_escape(struct gb_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			gb_buf_puts(b, "&lt;");
			break;
		case '>':
			gb_buf_puts(b, "&gt;");
			break;
		case '&':
			gb_buf_puts(b, "&amp;");
			break;
		case '"':
			gb_buf_puts(b, "&quot;");
			break;
		case '\'':
			gb_buf_puts(b, "&apos;");
			break;
		default:
			gb_buf_putc(b, *s);
		}
	}
}

/* <tag>value</tag>, or <tag/> when [value] is NULL or empty. */
static void xml_el(struct gb_buf *b, const char *tag, const char *value)
{
	if (!value || !*value) {
		gb_buf_printf(b, "<%s/>", tag);
		return;
	}
	gb_buf_printf(b, "<%s>", tag);
	xml_escape(b, value);
	gb_buf_printf(b, "</%s>", tag);
}

static void xml_long(struct gb_buf *b, const char *tag, long v)
{
	gb_buf_printf(b, "<%s>%ld</%s>", tag, v, tag);
}

static void xml_begin(struct gb_buf *b, const char *action, const char *reqid)
{
	gb_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<%sResponse xmlns=\"" EC2_XMLNS "\">", action);
	xml_el(b, "requestId", reqid);
}

static void xml_end(struct gb_buf *b, const char *action)
{
	gb_buf_printf(b, "</%sResponse>\n", action);
}

/* The EC2 error envelope (errors-overview "Example error response"). */
static void error_body(struct gb_cs_response *r, const struct gb_sim_error *e)
{
	gb_buf_reset(&r->body);
	gb_buf_puts(&r->body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<Response><Errors><Error>");
	xml_el(&r->body, "Code", e->code);
	xml_el(&r->body, "Message", e->message);
	gb_buf_puts(&r->body, "</Error></Errors>");
	xml_el(&r->body, "RequestID", r->request_id);
	gb_buf_puts(&r->body, "</Response>\n");
	r->status = e->status;
}

static void state_el(struct gb_buf *b, const char *tag, enum gb_sim_state s)
{
	gb_buf_printf(b, "<%s>", tag);
	xml_long(b, "code", (long)s);
	xml_el(b, "name", gb_sim_state_name(s));
	gb_buf_printf(b, "</%s>", tag);
}

/* A stable, fake VPC id per region when the scenario names none. */
static void vpc_id(const struct gb_sim_instance *i, char *buf, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	if (i->subnet->vpc_id) {
		gb_strlcpy(buf, i->subnet->vpc_id, n);
		return;
	}
	for (const char *s = i->region->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	snprintf(buf, n, "vpc-%017" PRIx64, (uint64_t)(h & 0xfffffffffffffffULL));
}

static void time_el(struct gb_buf *b, const char *tag, double epoch)
{
	time_t t = (time_t)epoch;
	struct tm tm;
	char s[40];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	gb_buf_printf(b, "<%s>%s.%03dZ</%s>", tag, s,
		      (int)((epoch - (double)t) * 1000) % 1000, tag);
}

static void tagset_el(struct gb_buf *b, const struct gb_sim_instance *i)
{
	if (!i->ntags)
		return;
	gb_buf_puts(b, "<tagSet>");
	for (size_t t = 0; t < i->ntags; t++) {
		gb_buf_puts(b, "<item>");
		xml_el(b, "key", i->tags[t].key);
		xml_el(b, "value", i->tags[t].value);
		gb_buf_puts(b, "</item>");
	}
	gb_buf_puts(b, "</tagSet>");
}

static void state_reason_el(struct gb_buf *b, const struct gb_sim_instance *i,
			    double epoch)
{
	char reason[96], when[40];
	time_t t = (time_t)(epoch + i->state_time);
	struct tm tm;

	if (i->state == GB_SIM_STATE_PENDING) {
		gb_buf_puts(b, "<reason/><stateReason><code>pending</code>"
			    "<message>pending</message></stateReason>");
		return;
	}
	if (!i->user_terminated) {
		gb_buf_puts(b, "<reason/>");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S GMT", &tm);
	snprintf(reason, sizeof(reason), "User initiated (%s)", when);
	xml_el(b, "reason", reason);
	gb_buf_puts(b, "<stateReason><code>Client.UserInitiatedShutdown</code>"
		    "<message>Client.UserInitiatedShutdown: User initiated shutdown</message>"
		    "</stateReason>");
}

/*
 * One instancesSet item; [ip]: with privateIpAddress and privateDnsName
 * (DescribeInstances leaves them out while the simulator's consistency
 * setting says the address is not described yet).
 */
static void instance_el(struct gb_buf *b, const struct gb_sim_instance *i, double epoch,
			bool ip)
{
	char dns[128], vpc[40];
	unsigned a = i->ip_n;

	snprintf(dns, sizeof(dns), "ip-%u-%u-%u-%u.%s.compute.internal", a >> 24,
		 (a >> 16) & 255, (a >> 8) & 255, a & 255, i->region->name);
	vpc_id(i, vpc, sizeof(vpc));
	gb_buf_puts(b, "<item>");
	xml_el(b, "instanceId", i->id);
	xml_el(b, "imageId", i->image_id);
	state_el(b, "instanceState", i->state);
	xml_el(b, "privateDnsName", i->state == GB_SIM_STATE_TERMINATED || !ip ? NULL : dns);
	xml_el(b, "dnsName", NULL);
	state_reason_el(b, i, epoch);
	if (i->key_name)
		xml_el(b, "keyName", i->key_name);
	xml_long(b, "amiLaunchIndex", i->launch_index);
	gb_buf_puts(b, "<productCodes/>");
	xml_el(b, "instanceType", i->type->name);
	time_el(b, "launchTime", epoch + i->launch_time);
	gb_buf_puts(b, "<placement>");
	xml_el(b, "availabilityZone", i->az->name);
	gb_buf_puts(b, "<groupName/><tenancy>default</tenancy></placement>"
		    "<monitoring><state>disabled</state></monitoring>");
	xml_el(b, "subnetId", i->subnet->id);
	xml_el(b, "vpcId", vpc);
	if (i->state != GB_SIM_STATE_TERMINATED && ip)
		xml_el(b, "privateIpAddress", i->ip);
	gb_buf_puts(b, "<sourceDestCheck>true</sourceDestCheck><groupSet>");
	for (size_t k = 0; k < i->sg_ids.n; k++) {
		gb_buf_puts(b, "<item>");
		xml_el(b, "groupId", i->sg_ids.v[k]);
		gb_buf_puts(b, "<groupName>default</groupName></item>");
	}
	gb_buf_printf(b, "</groupSet><architecture>%s</architecture>"
		      "<rootDeviceType>ebs</rootDeviceType>"
		      "<rootDeviceName>/dev/sda1</rootDeviceName><blockDeviceMapping/>"
		      "<virtualizationType>hvm</virtualizationType>",
		      i->type->arch);
	xml_el(b, "clientToken", i->client_token);
	tagset_el(b, i);
	gb_buf_puts(b, "<hypervisor>xen</hypervisor><networkInterfaceSet/>"
		    "<ebsOptimized>false</ebsOptimized><enaSupport>true</enaSupport></item>");
}

static void reservation_head(struct gb_buf *b, const struct gb_sim_reservation *r,
			     const char *owner)
{
	xml_el(b, "reservationId", r->id);
	xml_el(b, "ownerId", owner);
	gb_buf_puts(b, "<groupSet/><instancesSet>");
}

/*****************************************************************************
 *  Actions (called with the lock held)
 *****************************************************************************/

static bool failed(struct call *c, gb_err_t rc)
{
	c->failed = rc != GB_E_OK;
	return c->failed;
}

/* DryRun of a call whose checks all passed: EC2's 412 instead of the answer. */
static void dry_run_answer(struct call *c)
{
	gb_sim_error_set(&c->err, 412, "DryRunOperation",
			 "Request would have succeeded, but DryRun flag is set.");
	c->failed = true;
}

static bool parse_count(struct call *c, const char *name, long *out)
{
	const char *v = param(&c->p, name);

	if (!v) {
		gb_sim_error_set(&c->err, 400, "MissingParameter",
				 "The request must contain the parameter %s", name);
		return c->failed = true, false;
	}
	if (gb_parse_long(v, 0, 1000000, out) != GB_E_OK) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "Invalid value '%s' for %s", v, name);
		return c->failed = true, false;
	}
	return true;
}

/* Idempotency compares every parameter but the token and DryRun. */
static char *digest(const struct params *p)
{
	struct gb_buf b = GB_BUF_INIT;
	const struct param **v = calloc(p->n + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < p->n; i++) {
		const char *k = p->v[i].key;

		if (strcmp(k, "ClientToken") && strcmp(k, "DryRun") &&
		    strcmp(k, "Action") && strcmp(k, "Version"))
			v[n++] = &p->v[i];
	}
	for (size_t i = 1; i < n; i++) {	/* insertion sort: few keys */
		for (size_t j = i; j > 0 && strcmp(v[j - 1]->key, v[j]->key) > 0; j--) {
			const struct param *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	}
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(&b, "%s=%s\n", v[i]->key, v[i]->value);
	free(v);
	return gb_buf_steal(&b);
}

/* UserData: base64 of at most 16 KB. RET false with the error set. */
static bool user_data(struct call *c, struct gb_sim_launch *l, char **owned)
{
	const char *ud = param(&c->p, "UserData");

	*owned = NULL;
	if (!ud || !*ud)
		return true;
	*owned = base64_decode(ud, &l->user_data_len);
	if (!*owned) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "Invalid BASE64 encoding of user data.");
		return c->failed = true, false;
	}
	if (l->user_data_len > USER_DATA_MAX) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "User data is limited to %d bytes", USER_DATA_MAX);
		return c->failed = true, false;
	}
	l->user_data = *owned;
	return true;
}

/* Tags of every TagSpecification with ResourceType instance. */
static size_t launch_tags(const struct params *p, struct gb_sim_kv *tags, size_t max)
{
	char key[96], prefix[96];
	const char *rt;
	size_t n = 0;

	for (long s = 1; (rt = paramf(p, key, sizeof(key), "TagSpecification.%ld.ResourceType", s)) ||
			 paramf(p, key, sizeof(key), "TagSpecification.%ld.Tag.1.Key", s); s++) {
		if (rt && strcmp(rt, "instance") != 0)
			continue;
		snprintf(prefix, sizeof(prefix), "TagSpecification.%ld.Tag.", s);
		n += tags_parse(p, prefix, tags + n, max - n);
	}
	return n;
}

#define TAGS_MAX 64		/* more than EC2's 50, so the sim can refuse */

static void render_reservation(struct call *c, struct gb_cs_response *r,
			       const struct gb_sim_reservation *res)
{
	double epoch = gb_sim_epoch(c->cs->sim);

	xml_begin(&r->body, "RunInstances", r->request_id);
	reservation_head(&r->body, res, c->cs->sc->account_id);
	for (size_t k = 0; k < res->n; k++) {
		if (res->inst[k])
			instance_el(&r->body, res->inst[k], epoch, true);
	}
	gb_buf_puts(&r->body, "</instancesSet>");
	xml_end(&r->body, "RunInstances");
	c->instances = (long)res->n;
}

/* MetadataOptions.InstanceMetadataTags: enabled | disabled (the default). */
static bool metadata_tags(struct call *c, bool *on)
{
	const char *v = param(&c->p, "MetadataOptions.InstanceMetadataTags");

	*on = v && strcmp(v, "enabled") == 0;
	if (!v || *on || strcmp(v, "disabled") == 0)
		return true;
	gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
			 "Value (%s) for parameter InstanceMetadataTags is invalid. Valid values: enabled, disabled",
			 v);
	return c->failed = true, false;
}

static void act_run(struct call *c, struct gb_cs_response *r, double now)
{
	struct gb_sim_launch l = { 0 };
	struct gb_sim_kv tags[TAGS_MAX];
	const char *sgs[64];
	struct gb_strv sgv = { 0 };
	struct gb_sim_reservation *res = NULL;
	char *ud = NULL, *dg = NULL;
	size_t nsg;

	if (!parse_count(c, "MinCount", &l.min_count) ||
	    !parse_count(c, "MaxCount", &l.max_count) || !user_data(c, &l, &ud))
		goto out;
	l.image_id = param(&c->p, "ImageId");
	l.instance_type = param(&c->p, "InstanceType");
	l.subnet_id = param(&c->p, "SubnetId");
	l.az = param(&c->p, "Placement.AvailabilityZone");
	l.key_name = param(&c->p, "KeyName");
	l.iam_profile_name = param(&c->p, "IamInstanceProfile.Name");
	l.iam_profile_arn = param(&c->p, "IamInstanceProfile.Arn");
	l.client_token = param(&c->p, "ClientToken");
	l.dry_run = c->dry_run;
	if (!metadata_tags(c, &l.metadata_tags))
		goto out;
	l.ntags = launch_tags(&c->p, tags, TAGS_MAX);
	l.tags = tags;
	nsg = param_list(&c->p, "SecurityGroupId.", sgs, 64);
	for (size_t k = 0; k < nsg; k++)
		gb_strv_add(&sgv, sgs[k]);
	l.sg_ids = &sgv;
	l.digest = dg = digest(&c->p);
	if (l.client_token && strlen(l.client_token) > 64) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "The client token must be at most 64 ASCII characters");
		c->failed = true;
		goto out;
	}
	if (!failed(c, gb_sim_run_instances(c->cs->sim, c->region, &l, now, &res, &c->err)))
		render_reservation(c, r, res);
out:
	free(ud);
	free(dg);
	gb_strv_free(&sgv);
}

/* Consecutive instances of one reservation share a reservationSet item. */
static void render_describe(struct call *c, struct gb_cs_response *r,
			    struct gb_sim_instance **inst, size_t n, const char *next,
			    double now)
{
	const struct gb_sim_reservation *cur = NULL;
	double epoch = gb_sim_epoch(c->cs->sim);
	struct gb_buf *b = &r->body;

	xml_begin(b, "DescribeInstances", r->request_id);
	gb_buf_puts(b, "<reservationSet>");
	for (size_t k = 0; k < n; k++) {
		if (inst[k]->res != cur) {
			if (cur)
				gb_buf_puts(b, "</instancesSet></item>");
			cur = inst[k]->res;
			gb_buf_puts(b, "<item>");
			reservation_head(b, cur, c->cs->sc->account_id);
		}
		instance_el(b, inst[k], epoch, gb_sim_instance_shows_ip(c->cs->sim, inst[k], now));
	}
	if (cur)
		gb_buf_puts(b, "</instancesSet></item>");
	gb_buf_puts(b, "</reservationSet>");
	if (next && *next)
		xml_el(b, "nextToken", next);
	xml_end(b, "DescribeInstances");
	c->instances = (long)n;
}

static bool parse_max_results(struct call *c, long *out)
{
	const char *v = param(&c->p, "MaxResults");

	*out = 0;
	if (v && gb_parse_long(v, 1, 100000, out) != GB_E_OK) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "Invalid value '%s' for MaxResults", v);
		return c->failed = true, false;
	}
	return true;
}

static void act_describe(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	struct gb_sim_instance **out = NULL;
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	if (!ids || !filters_parse(&c->p, &f, &q.nfilters)) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		c->failed = true;
		goto out;
	}
	if (!parse_max_results(c, &q.max_results))
		goto out;
	q.filters = f;
	q.ids = ids;
	q.nids = param_list(&c->p, "InstanceId.", ids, c->p.n);
	q.next_token = param(&c->p, "NextToken");
	if (failed(c, gb_sim_describe_instances(c->cs->sim, c->region, &q, now,
						&out, &n, next, &c->err)))
		goto out;
	if (c->dry_run)
		dry_run_answer(c);
	else
		render_describe(c, r, out, n, next, now);
out:
	free(out);
	filters_free(f, q.nfilters);
	free(ids);
}

static void act_terminate(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	struct gb_sim_state_change *ch = NULL;
	size_t nids, n = 0;

	if (!ids) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		c->failed = true;
		return;
	}
	nids = param_list(&c->p, "InstanceId.", ids, c->p.n);
	if (!failed(c, gb_sim_terminate_instances(c->cs->sim, c->region, ids, nids,
						  c->dry_run, now, &ch, &n, &c->err))) {
		xml_begin(&r->body, "TerminateInstances", r->request_id);
		gb_buf_puts(&r->body, "<instancesSet>");
		for (size_t k = 0; k < n; k++) {
			gb_buf_puts(&r->body, "<item>");
			xml_el(&r->body, "instanceId", ch[k].inst->id);
			state_el(&r->body, "currentState", ch[k].cur);
			state_el(&r->body, "previousState", ch[k].prev);
			gb_buf_puts(&r->body, "</item>");
		}
		gb_buf_puts(&r->body, "</instancesSet>");
		xml_end(&r->body, "TerminateInstances");
		c->instances = (long)n;
	}
	free(ch);
	free(ids);
}

static void act_create_tags(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	struct gb_sim_kv tags[TAGS_MAX];
	size_t nids, ntags;

	if (!ids) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		c->failed = true;
		return;
	}
	nids = param_list(&c->p, "ResourceId.", ids, c->p.n);
	ntags = tags_parse(&c->p, "Tag.", tags, TAGS_MAX);
	if (!failed(c, gb_sim_create_tags(c->cs->sim, c->region, ids, nids, tags, ntags,
					  c->dry_run, now, &c->err))) {
		xml_begin(&r->body, "CreateTags", r->request_id);
		gb_buf_puts(&r->body, "<return>true</return>");
		xml_end(&r->body, "CreateTags");
		c->instances = (long)nids;
	}
	free(ids);
}

static bool parse_location(struct call *c, enum gb_sim_location *loc)
{
	const char *v = param(&c->p, "LocationType");

	*loc = GB_SIM_LOC_REGION;
	if (!v || strcmp(v, "region") == 0)
		return true;
	if (strcmp(v, "availability-zone") == 0)
		*loc = GB_SIM_LOC_AZ;
	else if (strcmp(v, "availability-zone-id") == 0)
		*loc = GB_SIM_LOC_AZ_ID;
	else {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "Value (%s) for parameter locationType is invalid.", v);
		return c->failed = true, false;
	}
	return true;
}

static const char *location_type_name(enum gb_sim_location loc)
{
	return loc == GB_SIM_LOC_AZ ? "availability-zone" :
	       loc == GB_SIM_LOC_AZ_ID ? "availability-zone-id" : "region";
}

static void act_offerings(struct call *c, struct gb_cs_response *r, double now)
{
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	struct gb_sim_offering *o = NULL;
	enum gb_sim_location loc;
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	(void)now;
	if (!filters_parse(&c->p, &f, &q.nfilters) || !parse_location(c, &loc) ||
	    !parse_max_results(c, &q.max_results))
		goto out;
	q.filters = f;
	q.next_token = param(&c->p, "NextToken");
	if (failed(c, gb_sim_describe_offerings(c->cs->sim, c->region, loc, &q, &o, &n,
						next, &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeInstanceTypeOfferings", r->request_id);
	gb_buf_puts(&r->body, n ? "<instanceTypeOfferingSet>" : "<instanceTypeOfferingSet/>");
	for (size_t k = 0; k < n; k++) {
		gb_buf_puts(&r->body, "<item>");
		xml_el(&r->body, "instanceType", o[k].instance_type);
		xml_el(&r->body, "locationType", location_type_name(loc));
		xml_el(&r->body, "location", o[k].location);
		gb_buf_puts(&r->body, "</item>");
	}
	if (n)
		gb_buf_puts(&r->body, "</instanceTypeOfferingSet>");
	if (next[0])
		xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeInstanceTypeOfferings");
out:
	free(o);
	filters_free(f, q.nfilters);
}

static void az_el(struct gb_buf *b, const char *region, const struct gb_sc_az *az)
{
	gb_buf_puts(b, "<item>");
	xml_el(b, "zoneName", az->name);
	gb_buf_puts(b, "<zoneState>available</zoneState>");
	xml_el(b, "regionName", region);
	gb_buf_puts(b, "<messageSet/>");
	xml_el(b, "zoneId", az->zone_id);
	xml_el(b, "groupName", region);
	xml_el(b, "networkBorderGroup", region);
	gb_buf_puts(b, "<optInStatus>opt-in-not-required</optInStatus>"
		    "<zoneType>availability-zone</zoneType></item>");
}

static void act_azs(struct call *c, struct gb_cs_response *r, double now)
{
	const char **names = calloc(c->p.n + 1, sizeof(*names));
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	const struct gb_sc_az **azs = NULL;
	size_t n = 0;

	(void)now;
	if (!names || !filters_parse(&c->p, &f, &q.nfilters)) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		c->failed = true;
		goto out;
	}
	q.filters = f;
	q.ids = names;
	q.nids = param_list(&c->p, "ZoneName.", names, c->p.n);
	q.nids += param_list(&c->p, "ZoneId.", names + q.nids, c->p.n - q.nids);
	if (failed(c, gb_sim_describe_azs(c->cs->sim, c->region, &q, &azs, &n, &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeAvailabilityZones", r->request_id);
	gb_buf_puts(&r->body, "<availabilityZoneInfo>");
	for (size_t k = 0; k < n; k++)
		az_el(&r->body, c->region, azs[k]);
	gb_buf_puts(&r->body, "</availabilityZoneInfo>");
	xml_end(&r->body, "DescribeAvailabilityZones");
out:
	free(azs);
	filters_free(f, q.nfilters);
	free(names);
}

/*****************************************************************************
 *  Dispatch
 *****************************************************************************/

typedef void (*action_fn)(struct call *, struct gb_cs_response *, double);

static const action_fn actions[GB_SIM_ACTION_COUNT] = {
	[GB_SIM_ACTION_RUN_INSTANCES] = act_run,
	[GB_SIM_ACTION_DESCRIBE_INSTANCES] = act_describe,
	[GB_SIM_ACTION_TERMINATE_INSTANCES] = act_terminate,
	[GB_SIM_ACTION_DESCRIBE_OFFERINGS] = act_offerings,
	[GB_SIM_ACTION_CREATE_TAGS] = act_create_tags,
	[GB_SIM_ACTION_DESCRIBE_AZS] = act_azs,
};

/*
 * The request parameters of each action (top-level member names of the
 * 2016-11-15 API, botocore's service-2.json); "Name.N..." counts as Name.
 * EC2 refuses any other with UnknownParameter.
 */
static const char *const known_params[GB_SIM_ACTION_COUNT][48] = {
	[GB_SIM_ACTION_RUN_INSTANCES] = {
		"AdditionalInfo", "BlockDeviceMapping", "CapacityReservationSpecification",
		"ClientToken", "CpuOptions", "CreditSpecification", "DisableApiStop",
		"DisableApiTermination", "DryRun", "EbsOptimized", "ElasticGpuSpecification",
		"ElasticInferenceAccelerator", "EnablePrimaryIpv6", "EnclaveOptions",
		"HibernationOptions", "IamInstanceProfile", "ImageId",
		"InstanceInitiatedShutdownBehavior", "InstanceMarketOptions", "InstanceType",
		"Ipv6Address", "Ipv6AddressCount", "KernelId", "KeyName", "LaunchTemplate",
		"LicenseSpecification", "MaintenanceOptions", "MaxCount", "MetadataOptions",
		"MinCount", "Monitoring", "NetworkInterface", "NetworkPerformanceOptions",
		"Operator", "Placement", "PrivateDnsNameOptions", "PrivateIpAddress",
		"RamdiskId", "SecondaryInterface", "SecurityGroup", "SecurityGroupId",
		"SubnetId", "TagSpecification", "UserData", NULL },
	[GB_SIM_ACTION_DESCRIBE_INSTANCES] = {
		"DryRun", "Filter", "IncludeManagedResources", "InstanceId", "MaxResults",
		"NextToken", NULL },
	[GB_SIM_ACTION_TERMINATE_INSTANCES] = {
		"DryRun", "Force", "InstanceId", "SkipOsShutdown", NULL },
	[GB_SIM_ACTION_DESCRIBE_OFFERINGS] = {
		"DryRun", "Filter", "LocationType", "MaxResults", "NextToken", NULL },
	[GB_SIM_ACTION_CREATE_TAGS] = { "DryRun", "ResourceId", "Tag", NULL },
	[GB_SIM_ACTION_DESCRIBE_AZS] = {
		"AllAvailabilityZones", "DryRun", "Filter", "ZoneId", "ZoneName", NULL },
};

static bool param_known(enum gb_sim_action a, const char *key)
{
	size_t n = strcspn(key, ".");

	if (strcmp(key, "Action") == 0 || strcmp(key, "Version") == 0 ||
	    gb_str_has_prefix(key, "X-Amz-"))
		return true;
	for (const char *const *k = known_params[a]; *k; k++) {
		if (strlen(*k) == n && strncmp(*k, key, n) == 0)
			return true;
	}
	return false;
}

/* Parameter names first, then the one every action has: DryRun. */
static bool check_params(struct call *c)
{
	for (size_t i = 0; i < c->p.n; i++) {
		if (!param_known(c->act, c->p.v[i].key)) {
			gb_sim_error_set(&c->err, 400, "UnknownParameter",
					 "The parameter %s is not recognized", c->p.v[i].key);
			return c->failed = true, false;
		}
	}
	return parse_bool(c, "DryRun", &c->dry_run);
}

static void wait_for(double seconds)
{
	struct timespec ts, rem;

	if (seconds <= 0)
		return;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &rem) != 0)
		ts = rem;	/* EINTR: sleep the rest */
}

static const char *fault_name(const struct gb_fault *f)
{
	switch (f->kind) {
	case GB_FAULT_ERROR:
		return strcmp(f->error.code, "RequestLimitExceeded") == 0 ?
		       "throttle" : "error";
	case GB_FAULT_DROP:
		return "drop";
	case GB_FAULT_LOST_RESPONSE:
		return "lost-response";
	default:
		return f->slow_bps > 0 ? "slow-body" : "-";
	}
}

/* Faults first (latency waited out without the lock), then the action. */
static void run_action(struct call *c, struct gb_cs_response *r, struct gb_fault *f)
{
	struct gb_cloudsim *cs = c->cs;

	pthread_mutex_lock(&cs->mu);
	gb_faults_decide(cs->faults, c->act, c->region, gb_cloudsim_now(cs), f);
	cs->last_latency = f->latency;
	cs->received[c->act]++;
	pthread_mutex_unlock(&cs->mu);
	if (!cs->no_sleep)
		wait_for(f->latency / cs->scale);
	if (f->kind == GB_FAULT_DROP) {
		r->close = true;
		return;
	}
	if (f->kind == GB_FAULT_ERROR) {
		c->err = f->error;
		c->failed = true;
		return;
	}
	pthread_mutex_lock(&cs->mu);
	actions[c->act](c, r, gb_cloudsim_now(cs));
	cs->answered[c->act]++;
	if (cs->boot)
		c->nevents = gb_sim_events_take(cs->sim, &c->events);
	pthread_mutex_unlock(&cs->mu);
	r->close = f->kind == GB_FAULT_LOST_RESPONSE;
	r->slow_bps = f->slow_bps;
}

static bool decode(struct call *c, const struct gb_cs_request *req)
{
	if (!params_parse(&c->p, req->query, req->query ? strlen(req->query) : 0) ||
	    !params_parse(&c->p, req->body, req->body_len)) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "The request has too many parameters");
		return c->failed = true, false;
	}
	return true;
}

static void dispatch(struct call *c, const struct gb_cs_request *req,
		     struct gb_cs_response *r, struct gb_fault *f)
{
	if (!decode(c, req))
		return;
	c->action = param(&c->p, "Action");
	if (!gb_cs_authenticate(c->cs, req, c->region, &c->err)) {
		c->failed = true;
	} else if (!c->action) {
		gb_sim_error_set(&c->err, 400, "MissingAction",
				 "The request must contain the parameter Action");
		c->failed = true;
	} else if ((c->act = gb_sim_action_find(c->action)) == GB_SIM_ACTION_COUNT) {
		gb_sim_error_set(&c->err, 400, "InvalidAction",
				 "The action %s is not valid for this web service.", c->action);
		c->failed = true;
	} else if (check_params(c)) {
		run_action(c, r, f);
	}
}

static void log_call(const struct call *c, const struct gb_cs_response *r,
		     const struct gb_fault *f, double ms, const char *peer)
{
	char qa[128];

	gb_log_info("call action=%s region=%s status=%d code=%s latency_ms=%.1f instances=%ld fault=%s req=%s peer=%s",
		    gb_log_q(qa, sizeof(qa), c->action ? c->action : "-"),
		    c->region[0] ? c->region : "-", r->close ? 0 : r->status,
		    c->failed ? c->err.code : "-", ms, c->instances, fault_name(f),
		    r->request_id, peer ? peer : "-");
}

void gb_ec2api_handle(struct gb_cloudsim *cs, const struct gb_cs_request *req,
		      struct gb_cs_response *resp)
{
	struct call c;
	struct gb_fault f;
	double t0 = gb_time_mono();

	memset(&c, 0, sizeof(c));
	memset(&f, 0, sizeof(f));
	c.cs = cs;
	c.act = GB_SIM_ACTION_COUNT;
	pthread_mutex_lock(&cs->mu);
	gb_sim_request_id(cs->sim, resp->request_id);
	pthread_mutex_unlock(&cs->mu);
	resp->status = 200;
	resp->content_type = "text/xml;charset=UTF-8";
	dispatch(&c, req, resp, &f);
	if (c.failed)
		error_body(resp, &c.err);
	log_call(&c, resp, &f, (gb_time_mono() - t0) * 1000.0, req->peer);
	if (c.nevents)
		gb_cloudsim_run_events(cs, c.events, c.nevents);
	gb_sim_events_free(c.events, c.nevents);
	params_free(&c.p);
}
