/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ec2_api.c - the EC2 Query API: form decoding, dispatch, EC2-shaped XML
 *
 * Wire format: research/seed-and-protocols.md s3 (botocore's EC2 protocol):
 * POST / with an application/x-www-form-urlencoded body, lists flattened as
 * Name.1, Name.2 ..., responses in the 2016-11-15 namespace, errors in
 * <Response><Errors><Error> with a RequestID.  Every request is checked
 * against its action's parameter table (schema.c) before its handler runs;
 * handlers then only read values of the right type.  Element names follow
 * the samples in tests/data/ec2 (botocore's response fixtures) and the
 * members of botocore's Instance shape that EC2 always returns.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cloudsim.h"
#include "query.h"
#include "gb_conf.h"
#include "gb_log.h"
#include "gb_sigv4.h"
#include "gb_util.h"
#include "schema.h"

#define EC2_XMLNS "http://ec2.amazonaws.com/doc/2016-11-15/"
#define USER_DATA_MAX 16384	/* EC2: 16 KB before base64 */

/* Everything one call decoded and decided, for the handler and the log. */
struct call {
	struct gb_cloudsim *cs;
	struct gb_cs_form p;
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
 *  Parameters
 *****************************************************************************/

static const char *param(const struct gb_cs_form *p, const char *key)
{
	return gb_cs_form_get(p, key);
}

static const char *paramf(const struct gb_cs_form *p, char *buf, size_t n,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static const char *paramf(const struct gb_cs_form *p, char *buf, size_t n,
			  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return param(p, buf);
}

/* Keys "<prefix>N" (N >= 1) in order of N; values BORROWED. */
static size_t param_list(const struct gb_cs_form *p, const char *prefix,
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

/* A boolean parameter (checked by the schema): absent is false. */
static bool param_true(const struct gb_cs_form *p, const char *key)
{
	const char *v = param(p, key);

	return v && strcmp(v, "true") == 0;
}

/* An integer parameter (checked by the schema), or [dflt] when absent. */
static long param_long(const struct gb_cs_form *p, const char *key, long dflt)
{
	const char *v = param(p, key);
	long n;

	return v && gb_parse_long(v, LONG_MIN, LONG_MAX, &n) == GB_E_OK ? n : dflt;
}

/* Is [value] one of the parameter's? (NULL: absent.) */
static bool param_is(const struct gb_cs_form *p, const char *key, const char *value)
{
	const char *v = param(p, key);

	return v && strcmp(v, value) == 0;
}

/* Any parameter under "[prefix]." ? */
static const char *param_under(const struct gb_cs_form *p, const char *prefix)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < p->n; i++) {
		if (strncmp(p->v[i].key, prefix, n) == 0 && p->v[i].key[n] == '.')
			return p->v[i].key;
	}
	return NULL;
}

/* Filter.N.Name / Filter.N.Value.M.  OUT NEW arrays (filters_free). */
static bool filters_parse(const struct gb_cs_form *p, struct gb_sim_filter **out,
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
static size_t tags_parse(const struct gb_cs_form *p, const char *prefix,
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

static void xml_long(struct gb_buf *b, const char *tag, long v)
{
	gb_buf_printf(b, "<%s>%ld</%s>", tag, v, tag);
}

static void xml_begin(struct gb_buf *b, const char *action, const char *reqid)
{
	gb_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<%sResponse xmlns=\"" EC2_XMLNS "\">", action);
	gb_cs_xml_el(b, "requestId", reqid);
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
	gb_cs_xml_el(&r->body, "Code", e->code);
	gb_cs_xml_el(&r->body, "Message", e->message);
	gb_buf_puts(&r->body, "</Error></Errors>");
	gb_cs_xml_el(&r->body, "RequestID", r->request_id);
	gb_buf_puts(&r->body, "</Response>\n");
	r->status = e->status;
}

static void state_el(struct gb_buf *b, const char *tag, enum gb_sim_state s)
{
	gb_buf_printf(b, "<%s>", tag);
	xml_long(b, "code", (long)s);
	gb_cs_xml_el(b, "name", gb_sim_state_name(s));
	gb_buf_printf(b, "</%s>", tag);
}

/* FNV-1a of [a] and [b]: ids derived from others, without the sim's PRNG. */
static uint64_t fnv1a(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *s = a; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	for (const char *s = b; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* "eni-", "vol-", "sg-" ... and 17 hex digits, stable for [from]. */
static void derived_id(const char *prefix, const char *from, char *buf, size_t n)
{
	snprintf(buf, n, "%s%01x%016" PRIx64, prefix,
		 (unsigned)(fnv1a(from, prefix) & 0xf), fnv1a(prefix, from));
}

/* A stable, fake VPC id per region when the scenario names none. */
static void vpc_id(const struct gb_sim_instance *i, char *buf, size_t n)
{
	if (i->subnet->vpc_id) {
		gb_strlcpy(buf, i->subnet->vpc_id, n);
		return;
	}
	snprintf(buf, n, "vpc-%017" PRIx64,
		 (uint64_t)(fnv1a(i->region->name, "") & 0xfffffffffffffffULL));
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
		gb_cs_xml_el(b, "key", i->tags[t].key);
		gb_cs_xml_el(b, "value", i->tags[t].value);
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
	gmtime_r(&t, &tm);
	/* the codes and texts of a Capacity Block's end and of a Spot
	 * interruption are not confirmed against EC2 */
	if (i->cr_ended || i->spot_interrupted) {
		const char *code = i->cr_ended ? "Server.ScheduledStop"
					       : "Server.SpotInstanceTermination";

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S GMT", &tm);
		snprintf(reason, sizeof(reason), i->cr_ended ? "Capacity Block expired (%s)"
							     : "Service initiated (%s)", when);
		gb_cs_xml_el(b, "reason", reason);
		gb_buf_printf(b, "<stateReason><code>%s</code><message>%s: %s</message>"
			      "</stateReason>", code, code,
			      i->cr_ended ? "the Capacity Block ended" : "Spot instance termination");
		return;
	}
	if (!i->user_terminated) {
		gb_buf_puts(b, "<reason/>");
		return;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S GMT", &tm);
	snprintf(reason, sizeof(reason), "User initiated (%s)", when);
	gb_cs_xml_el(b, "reason", reason);
	gb_buf_puts(b, "<stateReason><code>Client.UserInitiatedShutdown</code>"
		    "<message>Client.UserInitiatedShutdown: User initiated shutdown</message>"
		    "</stateReason>");
}

/* What every instance part names: addresses, ids, the VPC. */
struct inst_view {
	const struct gb_sim_instance *i;
	double epoch;
	const char *owner;
	bool alive;			/* not terminated: has its ENI and address */
	bool ip;			/* the address is described (consistency setting) */
	char dns[128], vpc[40], eni[40], sg[40];
};

/* The security groups; without any EC2 puts the instance in the VPC's default. */
static void groups_el(struct gb_buf *b, const struct inst_view *v)
{
	gb_buf_puts(b, "<groupSet>");
	for (size_t k = 0; k < v->i->sg_ids.n; k++) {
		gb_buf_puts(b, "<item>");
		gb_cs_xml_el(b, "groupId", v->i->sg_ids.v[k]);
		gb_buf_puts(b, "<groupName>default</groupName></item>");
	}
	if (!v->i->sg_ids.n) {
		gb_buf_puts(b, "<item>");
		gb_cs_xml_el(b, "groupId", v->sg);
		gb_buf_puts(b, "<groupName>default</groupName></item>");
	}
	gb_buf_puts(b, "</groupSet>");
}

/* One interface of an instance: NetworkInterface.N, or the default one. */
struct eni_view {
	const char *subnet_id;
	const char *type;		/* "interface", "efa", "efa-only" */
	long device, card;
	bool delete_on_termination, primary;
	const struct gb_strv *sg;	/* NULL: the instance's groups */
	const char *from;		/* what its ids derive from */
};

static void eni_groups_el(struct gb_buf *b, const struct inst_view *v,
			  const struct gb_strv *sg)
{
	if (!sg || !sg->n) {
		groups_el(b, v);
		return;
	}
	gb_buf_puts(b, "<groupSet>");
	for (size_t k = 0; k < sg->n; k++) {
		gb_buf_puts(b, "<item>");
		gb_cs_xml_el(b, "groupId", sg->v[k]);
		gb_buf_puts(b, "<groupName>default</groupName></item>");
	}
	gb_buf_puts(b, "</groupSet>");
}

/* EC2 gives every interface but an EFA-only one a private address. */
static void eni_item_el(struct gb_buf *b, const struct inst_view *v, const struct eni_view *n)
{
	const struct gb_sim_instance *i = v->i;
	uint64_t mac = fnv1a("mac", n->from);
	bool ip = v->ip && n->primary;
	char id[48];

	gb_buf_puts(b, "<item>");
	derived_id("eni-", n->from, id, sizeof(id));
	gb_cs_xml_el(b, "networkInterfaceId", n->primary ? v->eni : id);
	gb_cs_xml_el(b, "subnetId", n->subnet_id);
	gb_cs_xml_el(b, "vpcId", v->vpc);
	gb_buf_puts(b, "<description/>");
	gb_cs_xml_el(b, "ownerId", v->owner);
	gb_buf_printf(b, "<status>in-use</status><macAddress>0a:%02x:%02x:%02x:%02x:%02x</macAddress>",
		      (unsigned)(mac >> 32) & 255, (unsigned)(mac >> 24) & 255,
		      (unsigned)(mac >> 16) & 255, (unsigned)(mac >> 8) & 255,
		      (unsigned)mac & 255);
	if (ip) {
		gb_cs_xml_el(b, "privateIpAddress", i->ip);
		gb_cs_xml_el(b, "privateDnsName", v->dns);
	}
	gb_buf_puts(b, "<sourceDestCheck>true</sourceDestCheck>");
	eni_groups_el(b, v, n->sg);
	derived_id("eni-attach-", n->from, id, sizeof(id));
	gb_buf_puts(b, "<attachment>");
	gb_cs_xml_el(b, "attachmentId", id);
	gb_buf_printf(b, "<deviceIndex>%ld</deviceIndex><status>%s</status>", n->device,
		      i->state == GB_SIM_STATE_PENDING ? "attaching" : "attached");
	time_el(b, "attachTime", v->epoch + i->launch_time);
	gb_buf_printf(b, "<deleteOnTermination>%s</deleteOnTermination>"
		      "<networkCardIndex>%ld</networkCardIndex></attachment>"
		      "<privateIpAddressesSet>", n->delete_on_termination ? "true" : "false",
		      n->card);
	if (ip) {
		gb_buf_puts(b, "<item>");
		gb_cs_xml_el(b, "privateIpAddress", i->ip);
		gb_cs_xml_el(b, "privateDnsName", v->dns);
		gb_buf_puts(b, "<primary>true</primary></item>");
	}
	gb_buf_puts(b, "</privateIpAddressesSet><ipv6AddressesSet/>");
	gb_cs_xml_el(b, "interfaceType", n->type);
	gb_buf_puts(b, "</item>");
}

/* The network interfaces of a VPC instance (gone once terminated). */
static void eni_el(struct gb_buf *b, const struct inst_view *v)
{
	const struct gb_sim_instance *i = v->i;
	char from[GB_SIM_ID_MAX + 24];

	if (!v->alive) {
		gb_buf_puts(b, "<networkInterfaceSet/>");
		return;
	}
	gb_buf_puts(b, "<networkInterfaceSet>");
	if (!i->nnetifs) {
		struct eni_view n = { i->subnet->id, "interface", 0, 0, true, true, NULL, i->id };

		eni_item_el(b, v, &n);
	}
	for (size_t k = 0; k < i->nnetifs; k++) {
		const struct gb_sim_netif *f = &i->netifs[k];
		bool primary = f->device_index == 0 && f->card_index == 0;
		struct eni_view n = { f->subnet->id, f->type, f->device_index, f->card_index,
				      f->delete_on_termination, primary, &f->sg_ids, from };

		snprintf(from, sizeof(from), "%s/%ld/%ld", i->id, f->card_index,
			 f->device_index);
		if (primary)
			n.from = i->id;
		eni_item_el(b, v, &n);
	}
	gb_buf_puts(b, "</networkInterfaceSet>");
}

/* The EBS root volume, attached once the instance runs (RunInstances: none yet). */
static void block_devices_el(struct gb_buf *b, const struct inst_view *v)
{
	char vol[40];

	if (!v->alive || v->i->state == GB_SIM_STATE_PENDING) {
		gb_buf_puts(b, "<blockDeviceMapping/>");
		return;
	}
	derived_id("vol-", v->i->id, vol, sizeof(vol));
	gb_buf_puts(b, "<blockDeviceMapping><item><deviceName>/dev/sda1</deviceName><ebs>");
	gb_cs_xml_el(b, "volumeId", vol);
	gb_buf_puts(b, "<status>attached</status>");
	time_el(b, "attachTime", v->epoch + v->i->launch_time);
	gb_buf_puts(b, "<deleteOnTermination>true</deleteOnTermination></ebs></item>"
		    "</blockDeviceMapping>");
}

/* IAM unique ids: "AIPA" and 17 of [A-Z2-7] (an instance profile's). */
static void profile_el(struct gb_buf *b, const char *arn)
{
	static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	char id[24] = "AIPA";
	uint64_t h, g;

	if (!arn)
		return;
	h = fnv1a("AIPA", arn);
	g = fnv1a(arn, "AIPA");
	for (int k = 0; k < 17; k++)
		id[4 + k] = b32[(k < 12 ? h >> (5 * k) : g >> (5 * (k - 12))) & 31];
	id[21] = '\0';
	gb_buf_puts(b, "<iamInstanceProfile>");
	gb_cs_xml_el(b, "arn", arn);
	gb_cs_xml_el(b, "id", id);
	gb_buf_puts(b, "</iamInstanceProfile>");
}

static void metadata_el(struct gb_buf *b, const struct gb_sim_instance *i)
{
	const struct gb_sim_metadata *m = &i->metadata;

	gb_buf_printf(b, "<metadataOptions><state>%s</state><httpTokens>%s</httpTokens>"
		      "<httpPutResponseHopLimit>%ld</httpPutResponseHopLimit>"
		      "<httpEndpoint>%s</httpEndpoint><httpProtocolIpv6>%s</httpProtocolIpv6>"
		      "<instanceMetadataTags>%s</instanceMetadataTags></metadataOptions>",
		      i->state == GB_SIM_STATE_PENDING ? "pending" : "applied",
		      m->tokens_optional ? "optional" : "required", m->hop_limit,
		      m->endpoint_disabled ? "disabled" : "enabled",
		      m->ipv6 ? "enabled" : "disabled", m->tags ? "enabled" : "disabled");
}

/* The members of botocore's Instance shape that EC2 returns for every instance. */
static void instance_tail_el(struct gb_buf *b, const struct inst_view *v)
{
	const struct gb_sim_instance *i = v->i;
	int threads = strcmp(i->type->arch, "arm64") == 0 ? 1 : 2;

	static const char *const prefs[] = {
		[GB_SIM_CR_PREF_OPEN] = "open", [GB_SIM_CR_PREF_NONE] = "none",
		[GB_SIM_CR_PREF_ONLY] = "capacity-reservations-only",
	};

	gb_buf_printf(b, "<ebsOptimized>%s</ebsOptimized><enaSupport>true</enaSupport>"
		      "<cpuOptions><coreCount>%d</coreCount><threadsPerCore>%d</threadsPerCore>"
		      "</cpuOptions>",
		      i->ebs_optimized ? "true" : "false", i->type->vcpus / threads, threads);
	if (i->cr)
		gb_cs_xml_el(b, "capacityReservationId", i->cr->sc->id);
	if (i->cr_targeted)
		gb_buf_printf(b, "<capacityReservationSpecification><capacityReservationTarget>"
			      "<capacityReservationId>%s</capacityReservationId>"
			      "</capacityReservationTarget></capacityReservationSpecification>",
			      i->cr->sc->id);
	else
		gb_buf_printf(b, "<capacityReservationSpecification><capacityReservationPreference>"
			      "%s</capacityReservationPreference></capacityReservationSpecification>",
			      prefs[i->cr_pref]);
	gb_buf_puts(b, "<hibernationOptions><configured>false</configured></hibernationOptions>"
		    "<enclaveOptions><enabled>false</enabled></enclaveOptions>");
	metadata_el(b, i);
	gb_buf_puts(b, "<maintenanceOptions><autoRecovery>default</autoRecovery>"
		    "</maintenanceOptions><privateDnsNameOptions><hostnameType>ip-name"
		    "</hostnameType><enableResourceNameDnsARecord>false"
		    "</enableResourceNameDnsARecord><enableResourceNameDnsAAAARecord>false"
		    "</enableResourceNameDnsAAAARecord></privateDnsNameOptions>"
		    "<platformDetails>Linux/UNIX</platformDetails>"
		    "<usageOperation>RunInstances</usageOperation>");
	time_el(b, "usageOperationUpdateTime", v->epoch + i->launch_time);
}

static const char *monitoring_state(const struct gb_sim_instance *i)
{
	if (!i->monitoring)
		return "disabled";
	return i->state == GB_SIM_STATE_PENDING ? "pending" : "enabled";
}

/*
 * One instancesSet item; [ip]: with the private address and DNS name
 * (DescribeInstances leaves them out while the simulator's consistency
 * setting says the address is not described yet).
 */
static void instance_el(struct gb_buf *b, const struct gb_sim_instance *i, double epoch,
			const char *owner, bool ip)
{
	struct inst_view v = { i, epoch, owner, i->state != GB_SIM_STATE_TERMINATED, ip,
			       { 0 }, { 0 }, { 0 }, { 0 } };
	unsigned a = i->ip_n;

	snprintf(v.dns, sizeof(v.dns), "ip-%u-%u-%u-%u.%s.compute.internal", a >> 24,
		 (a >> 16) & 255, (a >> 8) & 255, a & 255, i->region->name);
	vpc_id(i, v.vpc, sizeof(v.vpc));
	derived_id("eni-", i->id, v.eni, sizeof(v.eni));
	derived_id("sg-", v.vpc, v.sg, sizeof(v.sg));
	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "instanceId", i->id);
	gb_cs_xml_el(b, "imageId", i->image_id);
	state_el(b, "instanceState", i->state);
	gb_cs_xml_el(b, "privateDnsName", v.alive && v.ip ? v.dns : NULL);
	gb_cs_xml_el(b, "dnsName", NULL);
	state_reason_el(b, i, epoch);
	if (i->key_name)
		gb_cs_xml_el(b, "keyName", i->key_name);
	xml_long(b, "amiLaunchIndex", i->launch_index);
	gb_buf_puts(b, "<productCodes/>");
	gb_cs_xml_el(b, "instanceType", i->type->name);
	time_el(b, "launchTime", epoch + i->launch_time);
	gb_buf_puts(b, "<placement>");
	gb_cs_xml_el(b, "availabilityZone", i->az->name);
	if (i->pg) {
		gb_cs_xml_el(b, "groupName", i->pg->name);
		gb_cs_xml_el(b, "groupId", i->pg->id);
	} else {
		gb_buf_puts(b, "<groupName/>");
	}
	gb_buf_printf(b, "<tenancy>default</tenancy></placement>"
		      "<monitoring><state>%s</state></monitoring>", monitoring_state(i));
	gb_cs_xml_el(b, "subnetId", i->subnet->id);
	gb_cs_xml_el(b, "vpcId", v.vpc);
	if (v.alive && v.ip)
		gb_cs_xml_el(b, "privateIpAddress", i->ip);
	gb_buf_puts(b, "<sourceDestCheck>true</sourceDestCheck>");
	groups_el(b, &v);
	gb_buf_printf(b, "<architecture>%s</architecture><rootDeviceType>ebs</rootDeviceType>"
		      "<rootDeviceName>/dev/sda1</rootDeviceName>", i->type->arch);
	block_devices_el(b, &v);
	if (i->spot) {
		gb_buf_puts(b, "<instanceLifecycle>spot</instanceLifecycle>");
		gb_cs_xml_el(b, "spotInstanceRequestId", i->spot_request_id);
	}
	if (i->cr && i->cr->sc->kind == GB_SC_CR_BLOCK)
		gb_buf_puts(b, "<instanceLifecycle>capacity-block</instanceLifecycle>");
	gb_buf_puts(b, "<virtualizationType>hvm</virtualizationType>");
	gb_cs_xml_el(b, "clientToken", i->client_token);
	tagset_el(b, i);
	gb_buf_puts(b, "<hypervisor>xen</hypervisor>");
	eni_el(b, &v);
	profile_el(b, i->iam_profile_arn);
	instance_tail_el(b, &v);
	gb_buf_puts(b, "</item>");
}

static void reservation_head(struct gb_buf *b, const struct gb_sim_reservation *r,
			     const char *owner)
{
	gb_cs_xml_el(b, "reservationId", r->id);
	gb_cs_xml_el(b, "ownerId", owner);
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

/* Refuse the call with [code] (HTTP 400).  RET false, for "return refuse(...)". */
static bool refuse(struct call *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool refuse(struct call *c, const char *code, const char *fmt, ...)
{
	va_list ap;

	c->err.status = 400;
	gb_strlcpy(c->err.code, code, sizeof(c->err.code));
	va_start(ap, fmt);
	vsnprintf(c->err.message, sizeof(c->err.message), fmt, ap);
	va_end(ap);
	c->failed = true;
	return false;
}

/* Idempotency compares every parameter but the token and DryRun. */
static char *digest(const struct gb_cs_form *p)
{
	struct gb_buf b = GB_BUF_INIT;
	const struct gb_cs_param **v = calloc(p->n + 1, sizeof(*v));
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
			const struct gb_cs_param *t = v[j];

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
	if (!*owned)
		return refuse(c, "InvalidParameterValue", "Invalid BASE64 encoding of user data.");
	if (l->user_data_len > USER_DATA_MAX)
		return refuse(c, "InvalidParameterValue", "User data is limited to %d bytes",
			      USER_DATA_MAX);
	l->user_data = *owned;
	return true;
}

/*
 * Tags of every TagSpecification with ResourceType instance (the schema
 * made each name one); those of the other resource types are accepted and
 * dropped, the simulator has no volumes, interfaces or Spot requests to tag.
 */
static size_t launch_tags(const struct gb_cs_form *p, struct gb_sim_kv *tags, size_t max)
{
	char key[96], prefix[96];
	const char *rt;
	size_t n = 0;

	for (long s = 1; (rt = paramf(p, key, sizeof(key), "TagSpecification.%ld.ResourceType", s));
	     s++) {
		if (strcmp(rt, "instance") != 0)
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
			instance_el(&r->body, res->inst[k], epoch, c->cs->sc->account_id, true);
	}
	gb_buf_puts(&r->body, "</instancesSet>");
	xml_end(&r->body, "RunInstances");
	c->instances = (long)res->n;
}

/* MetadataOptions.* (values checked by the schema); absent: EC2's defaults. */
static void metadata_options(const struct gb_cs_form *p, struct gb_sim_metadata *m)
{
	m->tokens_optional = param_is(p, "MetadataOptions.HttpTokens", "optional");
	m->endpoint_disabled = param_is(p, "MetadataOptions.HttpEndpoint", "disabled");
	m->ipv6 = param_is(p, "MetadataOptions.HttpProtocolIpv6", "enabled");
	m->tags = param_is(p, "MetadataOptions.InstanceMetadataTags", "enabled");
	m->hop_limit = param_long(p, "MetadataOptions.HttpPutResponseHopLimit", 1);
}

/* A Spot price as EC2 writes them: digits, optionally a point and digits. */
static bool parse_price(const char *s, double *out)
{
	size_t n = strspn(s, "0123456789");

	if (!n || (s[n] && (s[n] != '.' || !isdigit((unsigned char)s[n + 1]) ||
			    s[n + 1 + strspn(s + n + 1, "0123456789")])))
		return false;
	return gb_parse_double(s, out) == GB_E_OK && *out > 0;
}

#define SPOT "InstanceMarketOptions.SpotOptions"

/*
 * InstanceMarketOptions: MarketType spot, a one-time request (what
 * RunInstances makes by default), interrupted by termination; MaxPrice
 * defaults to the On-Demand price, which no Spot price exceeds.
 */
static bool market_options(struct call *c, struct gb_sim_launch *l)
{
	const char *type = param(&c->p, SPOT ".SpotInstanceType");
	const char *behaviour = param(&c->p, SPOT ".InstanceInterruptionBehavior");
	const char *price = param(&c->p, SPOT ".MaxPrice");
	const char *opt = param_under(&c->p, SPOT);

	l->spot = param_is(&c->p, "InstanceMarketOptions.MarketType", "spot");
	l->capacity_block = param_is(&c->p, "InstanceMarketOptions.MarketType", "capacity-block");
	if (opt && l->capacity_block)
		return refuse(c, "InvalidParameterCombination",
			      "The parameter %s cannot be used with InstanceMarketOptions.MarketType capacity-block", opt);
	if (opt && !l->spot)
		return refuse(c, "InvalidParameterCombination",
			      "The parameter %s requires InstanceMarketOptions.MarketType spot", opt);
	if (type && strcmp(type, "persistent") == 0)
		return refuse(c, "Unsupported",
			      "The simulator launches one-time Spot Instances only: SpotInstanceType persistent is not supported");
	if (behaviour && strcmp(behaviour, "terminate") != 0)
		return refuse(c, "InvalidParameterCombination",
			      "InstanceInterruptionBehavior %s applies to persistent Spot requests only; a one-time request is terminated",
			      behaviour);
	if (param(&c->p, SPOT ".ValidUntil"))
		return refuse(c, "InvalidParameterCombination",
			      "ValidUntil applies to persistent Spot requests only");
	if (price && !parse_price(price, &l->spot_max_price))
		return refuse(c, "InvalidParameterValue",
			      "Value (%s) for parameter " SPOT ".MaxPrice is invalid. Expecting a price per hour such as 0.45",
			      price);
	return true;
}

#define CRS "CapacityReservationSpecification."

/*
 * CapacityReservationSpecification: a preference or a target, not both
 * (EC2 API reference: "you can specify only one"); a resource group is one
 * of the scenario's resource_groups.
 */
static bool cr_spec(struct call *c, struct gb_sim_launch *l)
{
	const char *pref = param(&c->p, CRS "CapacityReservationPreference");
	const char *group = param(&c->p, CRS "CapacityReservationTarget."
				  "CapacityReservationResourceGroupArn");

	l->cr_id = param(&c->p, CRS "CapacityReservationTarget.CapacityReservationId");
	if (pref && (l->cr_id || group))
		return refuse(c, "InvalidParameterCombination",
			      "CapacityReservationPreference and CapacityReservationTarget cannot be used together");
	if (l->cr_id && group)
		return refuse(c, "InvalidParameterCombination",
			      "CapacityReservationId and CapacityReservationResourceGroupArn cannot be used together");
	l->cr_group_arn = group;
	if (pref && !strcmp(pref, "none"))
		l->cr_pref = GB_SIM_CR_PREF_NONE;
	else if (pref && !strcmp(pref, "capacity-reservations-only"))
		l->cr_pref = GB_SIM_CR_PREF_ONLY;
	return true;
}

/* SecurityGroupId.N: EC2 allows up to 16 per interface with a raised quota. */
#define GROUPS_MAX 16

static bool security_group_list(struct call *c, const char *prefix, struct gb_strv *out)
{
	const char *sgs[GROUPS_MAX + 1];
	size_t n = param_list(&c->p, prefix, sgs, GROUPS_MAX + 1);

	if (n > GROUPS_MAX)
		return refuse(c, "SecurityGroupsPerInstanceLimitExceeded",
			      "The maximum number of security groups per interface has been reached (%d).",
			      GROUPS_MAX);
	for (size_t k = 0; k < n; k++) {
		if (gb_strv_add(out, sgs[k]) != GB_E_OK) {
			gb_sim_error_set(&c->err, 500, "InternalError",
					 "An internal error has occurred");
			return c->failed = true, false;
		}
	}
	return true;
}

static bool security_groups(struct call *c, struct gb_strv *out)
{
	return security_group_list(c, "SecurityGroupId.", out);
}

/* EC2 launches with interfaces of these types (InterfaceType of RunInstances). */
static const char *netif_type(const char *v)
{
	static const char *const types[] = { "interface", "efa", "efa-only" };

	for (size_t k = 0; k < GB_ARRAY_LEN(types); k++) {
		if (strcmp(v ? v : "interface", types[k]) == 0)
			return types[k];
	}
	return NULL;
}

#define NETIFS_MAX 64		/* more than any type's interfaces, so the sim refuses */

/* NetworkInterface.N.*: OUT *out NEW (netifs_free). */
static bool network_interfaces(struct call *c, struct gb_sim_netif **out, size_t *n)
{
	char key[96], pre[64];

	*out = NULL;
	*n = 0;
	for (long k = 1; paramf(&c->p, key, sizeof(key), "NetworkInterface.%ld.DeviceIndex", k);
	     k++) {
		struct gb_sim_netif *v = realloc(*out, (*n + 1) * sizeof(*v)), *f;
		const char *type;

		if (!v || *n == NETIFS_MAX) {
			if (v)
				*out = v;
			return refuse(c, "InvalidParameterValue",
				      "At most %d network interfaces may be specified", NETIFS_MAX);
		}
		*out = v;
		f = &v[(*n)++];
		memset(f, 0, sizeof(*f));
		snprintf(pre, sizeof(pre), "NetworkInterface.%ld.", k);
		f->device_index = param_long(&c->p, key, 0);
		snprintf(key, sizeof(key), "%sNetworkCardIndex", pre);
		f->card_index = param_long(&c->p, key, 0);
		f->subnet_id = paramf(&c->p, key, sizeof(key), "%sSubnetId", pre);
		snprintf(key, sizeof(key), "%sDeleteOnTermination", pre);
		f->delete_on_termination = !param_is(&c->p, key, "false");
		type = paramf(&c->p, key, sizeof(key), "%sInterfaceType", pre);
		if (!(f->type = netif_type(type)))
			return refuse(c, "InvalidParameterValue",
				      "Value (%s) for parameter %s is invalid. Valid values: interface, efa, efa-only",
				      type, key);
		snprintf(key, sizeof(key), "%sSecurityGroupId.", pre);
		if (!security_group_list(c, key, &f->sg_ids))
			return false;
	}
	return true;
}

static void netifs_free(struct gb_sim_netif *f, size_t n)
{
	for (size_t k = 0; f && k < n; k++)
		gb_strv_free(&f[k].sg_ids);
	free(f);
}

static void act_run(struct call *c, struct gb_cs_response *r, double now)
{
	struct gb_sim_launch l = { 0 };
	struct gb_sim_kv tags[TAGS_MAX];
	struct gb_strv sgv = { 0 };
	struct gb_sim_reservation *res = NULL;
	struct gb_sim_netif *nifs = NULL;
	size_t nnifs = 0;
	char *ud = NULL, *dg = NULL;

	l.min_count = param_long(&c->p, "MinCount", 0);
	l.max_count = param_long(&c->p, "MaxCount", 0);
	if (!user_data(c, &l, &ud) || !market_options(c, &l) || !cr_spec(c, &l) ||
	    !security_groups(c, &sgv) ||
	    !network_interfaces(c, &nifs, &nnifs))
		goto out;
	l.netifs = nifs;
	l.nnetifs = nnifs;
	l.placement_group = param(&c->p, "Placement.GroupName");
	l.image_id = param(&c->p, "ImageId");
	l.instance_type = param(&c->p, "InstanceType");
	l.subnet_id = param(&c->p, "SubnetId");
	l.az = param(&c->p, "Placement.AvailabilityZone");
	l.key_name = param(&c->p, "KeyName");
	l.iam_profile_name = param(&c->p, "IamInstanceProfile.Name");
	l.iam_profile_arn = param(&c->p, "IamInstanceProfile.Arn");
	l.client_token = param(&c->p, "ClientToken");
	l.dry_run = c->dry_run;
	metadata_options(&c->p, &l.metadata);
	l.monitoring = param_true(&c->p, "Monitoring.Enabled");
	l.ebs_optimized = param_true(&c->p, "EbsOptimized");
	l.ntags = launch_tags(&c->p, tags, TAGS_MAX);
	l.tags = tags;
	l.sg_ids = &sgv;
	l.digest = dg = digest(&c->p);
	if (l.client_token && strlen(l.client_token) > 64) {
		refuse(c, "InvalidParameterValue",
		       "The client token must be at most 64 ASCII characters");
		goto out;
	}
	if (!failed(c, gb_sim_run_instances(c->cs->sim, c->region, &l, now, &res, &c->err)))
		render_reservation(c, r, res);
out:
	free(ud);
	free(dg);
	gb_strv_free(&sgv);
	netifs_free(nifs, nnifs);
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
		instance_el(b, inst[k], epoch, c->cs->sc->account_id,
			    gb_sim_instance_shows_ip(c->cs->sim, inst[k], now));
	}
	if (cur)
		gb_buf_puts(b, "</instancesSet></item>");
	gb_buf_puts(b, "</reservationSet>");
	if (next && *next)
		gb_cs_xml_el(b, "nextToken", next);
	xml_end(b, "DescribeInstances");
	c->instances = (long)n;
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
	q.max_results = param_long(&c->p, "MaxResults", 0);
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
			gb_cs_xml_el(&r->body, "instanceId", ch[k].inst->id);
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

/* LocationType (one of the schema's values), default region. */
static enum gb_sim_location location_type(const struct gb_cs_form *p)
{
	if (param_is(p, "LocationType", "availability-zone"))
		return GB_SIM_LOC_AZ;
	if (param_is(p, "LocationType", "availability-zone-id"))
		return GB_SIM_LOC_AZ_ID;
	return GB_SIM_LOC_REGION;
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
	enum gb_sim_location loc = location_type(&c->p);
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	(void)now;
	if (!filters_parse(&c->p, &f, &q.nfilters)) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		c->failed = true;
		goto out;
	}
	q.max_results = param_long(&c->p, "MaxResults", 0);
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
		gb_cs_xml_el(&r->body, "instanceType", o[k].instance_type);
		gb_cs_xml_el(&r->body, "locationType", location_type_name(loc));
		gb_cs_xml_el(&r->body, "location", o[k].location);
		gb_buf_puts(&r->body, "</item>");
	}
	if (n)
		gb_buf_puts(&r->body, "</instanceTypeOfferingSet>");
	if (next[0])
		gb_cs_xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeInstanceTypeOfferings");
out:
	free(o);
	filters_free(f, q.nfilters);
}

static void az_el(struct gb_buf *b, const char *region, const struct gb_sc_az *az)
{
	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "zoneName", az->name);
	gb_buf_puts(b, "<zoneState>available</zoneState>");
	gb_cs_xml_el(b, "regionName", region);
	gb_buf_puts(b, "<messageSet/>");
	gb_cs_xml_el(b, "zoneId", az->zone_id);
	gb_cs_xml_el(b, "groupName", region);
	gb_cs_xml_el(b, "networkBorderGroup", region);
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

/* A query's common parts: Filter.N, MaxResults, NextToken; [ids] under [prefix]. */
static bool query_parse(struct call *c, struct gb_sim_query *q, const char **ids,
			const char *prefix, struct gb_sim_filter **f)
{
	if (!ids || !filters_parse(&c->p, f, &q->nfilters)) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		return c->failed = true, false;
	}
	q->filters = *f;
	q->ids = ids;
	q->nids = prefix ? param_list(&c->p, prefix, ids, c->p.n) : 0;
	q->max_results = param_long(&c->p, "MaxResults", 0);
	q->next_token = param(&c->p, "NextToken");
	return true;
}

static void bool_el(struct gb_buf *b, const char *tag, bool v)
{
	gb_buf_printf(b, "<%s>%s</%s>", tag, v ? "true" : "false", tag);
}

static void itype_gpu_el(struct gb_buf *b, const struct gb_instance_type *ct)
{
	char name[32];

	if (!ct->gpus)
		return;
	gb_buf_puts(b, "<gpuInfo><gpus><item>");
	gb_cs_xml_el(b, "name", gb_itype_gpu_name(ct->gpu_model ? ct->gpu_model : "", name,
						  sizeof(name)));
	if (ct->gpu_maker)
		gb_cs_xml_el(b, "manufacturer", ct->gpu_maker);
	xml_long(b, "count", ct->gpus);
	gb_buf_printf(b, "<memoryInfo><sizeInMiB>%d</sizeInMiB></memoryInfo></item></gpus>",
		      ct->gpu_memory_mib);
	xml_long(b, "totalGpuMemoryInMiB", (long)ct->gpus * ct->gpu_memory_mib);
	gb_buf_puts(b, "</gpuInfo>");
}

static void itype_network_el(struct gb_buf *b, const struct gb_instance_type *ct)
{
	gb_buf_puts(b, "<networkInfo>");
	if (ct->max_interfaces > 0)
		xml_long(b, "maximumNetworkInterfaces", ct->max_interfaces);
	xml_long(b, "maximumNetworkCards", ct->network_cards > 0 ? ct->network_cards : 1);
	gb_buf_puts(b, "<defaultNetworkCardIndex>0</defaultNetworkCardIndex>"
		    "<enaSupport>required</enaSupport>");
	bool_el(b, "efaSupported", ct->efa);
	if (ct->efa)
		gb_buf_printf(b, "<efaInfo><maximumEfaInterfaces>%d</maximumEfaInterfaces></efaInfo>",
			      ct->efa_max_interfaces);
	gb_buf_puts(b, "</networkInfo>");
}

/* One instanceTypeSet item: the figures of libconf's catalog. */
static void itype_el(struct gb_buf *b, const struct gb_itype *t)
{
	const struct gb_instance_type *ct = t->ct;
	int threads = strcmp(t->arch, "arm64") == 0 ? 1 : 2;
	const char *dot = strchr(t->name, '.');

	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "instanceType", t->name);
	gb_buf_puts(b, "<currentGeneration>true</currentGeneration>"
		    "<freeTierEligible>false</freeTierEligible>"
		    "<supportedUsageClasses><item>on-demand</item><item>spot</item>"
		    "</supportedUsageClasses><supportedRootDeviceTypes><item>ebs</item>"
		    "</supportedRootDeviceTypes><supportedVirtualizationTypes><item>hvm</item>"
		    "</supportedVirtualizationTypes>");
	bool_el(b, "bareMetal", dot && strcmp(dot, ".metal") == 0);
	if (!(dot && strcmp(dot, ".metal") == 0))
		gb_buf_puts(b, "<hypervisor>nitro</hypervisor>");	/* every GPU family */
	gb_buf_puts(b, "<processorInfo><supportedArchitectures><item>");
	gb_buf_puts(b, t->arch);
	gb_buf_puts(b, "</item></supportedArchitectures></processorInfo><vCpuInfo>");
	xml_long(b, "defaultVCpus", t->vcpus);
	xml_long(b, "defaultCores", t->vcpus / threads);
	xml_long(b, "defaultThreadsPerCore", threads);
	gb_buf_printf(b, "</vCpuInfo><memoryInfo><sizeInMiB>%d</sizeInMiB></memoryInfo>",
		      ct->memory_mib);
	itype_network_el(b, ct);
	itype_gpu_el(b, ct);
	gb_buf_puts(b, "<placementGroupInfo><supportedStrategies>");
	if (ct->cluster_placement)
		gb_buf_puts(b, "<item>cluster</item>");
	gb_buf_puts(b, "<item>partition</item><item>spread</item></supportedStrategies>"
		    "</placementGroupInfo></item>");
}

static void act_itypes(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	const struct gb_itype **t = NULL;
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	(void)now;
	if (!query_parse(c, &q, ids, "InstanceType.", &f) ||
	    failed(c, gb_sim_describe_itypes(c->cs->sim, c->region, &q, &t, &n, next, &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeInstanceTypes", r->request_id);
	gb_buf_puts(&r->body, "<instanceTypeSet>");
	for (size_t k = 0; k < n; k++)
		itype_el(&r->body, t[k]);
	gb_buf_puts(&r->body, "</instanceTypeSet>");
	if (next[0])
		gb_cs_xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeInstanceTypes");
out:
	free(t);
	filters_free(f, q.nfilters);
	free(ids);
}

static void pgroup_el(struct gb_buf *b, const char *tag, const struct gb_sim_pgroup *g,
		      const gb_sim_t *sim)
{
	char arn[512];

	gb_buf_printf(b, "<%s>", tag);
	gb_cs_xml_el(b, "groupName", g->name);
	gb_buf_puts(b, "<state>available</state>");
	gb_cs_xml_el(b, "strategy", g->strategy);
	gb_cs_xml_el(b, "groupId", g->id);
	if (g->ntags) {
		gb_buf_puts(b, "<tagSet>");
		for (size_t t = 0; t < g->ntags; t++) {
			gb_buf_puts(b, "<item>");
			gb_cs_xml_el(b, "key", g->tags[t].key);
			gb_cs_xml_el(b, "value", g->tags[t].value);
			gb_buf_puts(b, "</item>");
		}
		gb_buf_puts(b, "</tagSet>");
	}
	gb_sim_pgroup_arn(sim, g, arn, sizeof(arn));
	gb_cs_xml_el(b, "groupArn", arn);
	gb_buf_printf(b, "</%s>", tag);
}

static void act_create_pg(struct call *c, struct gb_cs_response *r, double now)
{
	struct gb_sim_kv tags[TAGS_MAX];
	const struct gb_sim_pgroup *g = NULL;
	const char *strategy = param(&c->p, "Strategy");
	size_t ntags = 0;
	char key[96], prefix[96];

	for (long s = 1; paramf(&c->p, key, sizeof(key), "TagSpecification.%ld.ResourceType", s);
	     s++) {
		snprintf(prefix, sizeof(prefix), "TagSpecification.%ld.Tag.", s);
		ntags += tags_parse(&c->p, prefix, tags + ntags, TAGS_MAX - ntags);
	}
	if (!strategy)
		strategy = "cluster";
	if (failed(c, gb_sim_create_pgroup(c->cs->sim, c->region, param(&c->p, "GroupName"),
					   strategy, tags, ntags, c->dry_run, now, &g, &c->err)))
		return;
	xml_begin(&r->body, "CreatePlacementGroup", r->request_id);
	pgroup_el(&r->body, "placementGroup", g, c->cs->sim);
	xml_end(&r->body, "CreatePlacementGroup");
}

static void act_describe_pg(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	const char **ids2 = calloc(c->p.n + 1, sizeof(*ids2));
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	const struct gb_sim_pgroup **g = NULL;
	size_t n = 0;

	if (!ids2 || !query_parse(c, &q, ids, "GroupName.", &f))
		goto out;
	q.ids2 = ids2;
	q.nids2 = param_list(&c->p, "GroupId.", ids2, c->p.n);
	if (failed(c, gb_sim_describe_pgroups(c->cs->sim, c->region, &q, now, &g, &n, &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribePlacementGroups", r->request_id);
	gb_buf_puts(&r->body, "<placementGroupSet>");
	for (size_t k = 0; k < n; k++)
		pgroup_el(&r->body, "item", g[k], c->cs->sim);
	gb_buf_puts(&r->body, "</placementGroupSet>");
	xml_end(&r->body, "DescribePlacementGroups");
out:
	free(g);
	filters_free(f, q.nfilters);
	free(ids);
	free(ids2);
}

static void act_delete_pg(struct call *c, struct gb_cs_response *r, double now)
{
	if (failed(c, gb_sim_delete_pgroup(c->cs->sim, c->region, param(&c->p, "GroupName"),
					   c->dry_run, now, &c->err)))
		return;
	xml_begin(&r->body, "DeletePlacementGroup", r->request_id);
	gb_buf_puts(&r->body, "<return>true</return>");
	xml_end(&r->body, "DeletePlacementGroup");
}

/* One rule: all traffic (-1) from the group itself, or to 0.0.0.0/0. */
static void sg_rule_el(struct gb_buf *b, const char *tag, const char *self, const char *owner,
		       bool world)
{
	gb_buf_printf(b, "<%s><item><ipProtocol>-1</ipProtocol>", tag);
	if (world) {
		gb_buf_puts(b, "<groups/><ipRanges><item><cidrIp>0.0.0.0/0</cidrIp></item>"
			    "</ipRanges>");
	} else {
		gb_buf_puts(b, "<groups><item>");
		gb_cs_xml_el(b, "userId", owner);
		gb_cs_xml_el(b, "groupId", self);
		gb_buf_puts(b, "</item></groups><ipRanges/>");
	}
	gb_buf_printf(b, "<ipv6Ranges/><prefixListIds/></item></%s>", tag);
}

static void sgroup_el(struct gb_buf *b, const struct gb_sc_region *rg, size_t k,
		      const char *owner)
{
	const char *id = rg->security_groups.v[k];
	enum gb_sc_sg_rules rules = rg->sg_rules ? rg->sg_rules[k] : GB_SC_SG_SELF;
	char vpc[40];

	snprintf(vpc, sizeof(vpc), "vpc-%017" PRIx64,
		 (uint64_t)(fnv1a(rg->name, "") & 0xfffffffffffffffULL));
	if (rg->azs[0].subnets[0].vpc_id)
		gb_strlcpy(vpc, rg->azs[0].subnets[0].vpc_id, sizeof(vpc));
	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "ownerId", owner);
	gb_cs_xml_el(b, "groupId", id);
	gb_cs_xml_el(b, "groupName", id);
	gb_cs_xml_el(b, "groupDescription", id);
	if (rules == GB_SC_SG_SELF)
		sg_rule_el(b, "ipPermissions", id, owner, false);
	else
		gb_buf_puts(b, "<ipPermissions/>");
	if (rules == GB_SC_SG_NONE)
		gb_buf_puts(b, "<ipPermissionsEgress/>");
	else
		sg_rule_el(b, "ipPermissionsEgress", id, owner, rules == GB_SC_SG_EGRESS);
	gb_cs_xml_el(b, "vpcId", vpc);
	gb_buf_puts(b, "</item>");
}

static void act_sgroups(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	const struct gb_sc_region *rg = gb_scenario_region(c->cs->sc, c->region);
	char next[GB_SIM_TOKEN_MAX];
	size_t *idx = NULL, n = 0;

	(void)now;
	if (!query_parse(c, &q, ids, "GroupId.", &f) ||
	    failed(c, gb_sim_describe_sgroups(c->cs->sim, c->region, &q, &idx, &n, next,
					      &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeSecurityGroups", r->request_id);
	gb_buf_puts(&r->body, "<securityGroupInfo>");
	for (size_t k = 0; k < n; k++)
		sgroup_el(&r->body, rg, idx[k], c->cs->sc->account_id);
	gb_buf_puts(&r->body, "</securityGroupInfo>");
	if (next[0])
		gb_cs_xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeSecurityGroups");
out:
	free(idx);
	filters_free(f, q.nfilters);
	free(ids);
}

static void cr_el(struct gb_buf *b, const struct gb_sim_cr *cr, const struct gb_cloudsim *cs,
		  double now)
{
	double epoch = gb_sim_epoch(cs->sim);
	const struct gb_sc_cr *s = cr->sc;

	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "capacityReservationId", s->id);
	gb_cs_xml_el(b, "ownerId", cs->sc->account_id);
	gb_buf_printf(b, "<capacityReservationArn>arn:aws:ec2:%s:%s:capacity-reservation/%s"
		      "</capacityReservationArn>", cr->region->name, cs->sc->account_id, s->id);
	gb_cs_xml_el(b, "availabilityZoneId", s->az->zone_id);
	gb_cs_xml_el(b, "instanceType", s->type->name);
	gb_buf_puts(b, "<instancePlatform>Linux/UNIX</instancePlatform>");
	gb_cs_xml_el(b, "availabilityZone", s->az->name);
	gb_buf_puts(b, "<tenancy>default</tenancy>");
	xml_long(b, "totalInstanceCount", s->count);
	xml_long(b, "availableInstanceCount", gb_sim_cr_available(cr, now));
	gb_buf_puts(b, "<ebsOptimized>false</ebsOptimized><ephemeralStorage>false</ephemeralStorage>");
	gb_cs_xml_el(b, "state", gb_sim_cr_state(cr, now));
	time_el(b, "startDate", epoch + s->start);
	if (s->end >= 0)
		time_el(b, "endDate", epoch + s->end);
	gb_cs_xml_el(b, "endDateType", s->end >= 0 ? "limited" : "unlimited");
	gb_cs_xml_el(b, "instanceMatchCriteria", s->open ? "open" : "targeted");
	time_el(b, "createDate", epoch + (s->start < 0 ? s->start : 0));
	gb_buf_puts(b, "<tagSet/>");
	gb_cs_xml_el(b, "reservationType", s->kind == GB_SC_CR_BLOCK ? "capacity-block" : "default");
	gb_buf_puts(b, "</item>");
}

static void act_crs(struct call *c, struct gb_cs_response *r, double now)
{
	const char **ids = calloc(c->p.n + 1, sizeof(*ids));
	struct gb_sim_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	const struct gb_sim_cr **v = NULL;
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	if (!query_parse(c, &q, ids, "CapacityReservationId.", &f) ||
	    failed(c, gb_sim_describe_crs(c->cs->sim, c->region, &q, now, &v, &n, next,
					  &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeCapacityReservations", r->request_id);
	gb_buf_puts(&r->body, "<capacityReservationSet>");
	for (size_t k = 0; k < n; k++)
		cr_el(&r->body, v[k], c->cs, now);
	gb_buf_puts(&r->body, "</capacityReservationSet>");
	if (next[0])
		gb_cs_xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeCapacityReservations");
out:
	free(v);
	filters_free(f, q.nfilters);
	free(ids);
}

/* A timestamp parameter as simulated seconds; -1 when absent. */
static double param_sim_time(struct call *c, const char *key)
{
	const char *v = param(&c->p, key);
	double t = 0;

	if (!v || !gb_schema_timestamp(v, &t))	/* the schema checked the form */
		return -1;
	t -= gb_sim_epoch(c->cs->sim);
	return t < 0 ? 0 : t;
}

static void cb_offering_el(struct gb_buf *b, const struct gb_sim_cb_offering *o,
			   double epoch)
{
	char id[40];

	snprintf(id, sizeof(id), "cb-%017" PRIx64,
		 (uint64_t)((fnv1a(o->sc->az->name, o->sc->type->name) ^ o->sc->line) &
		 0xfffffffffffffffULL));
	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "capacityBlockOfferingId", id);
	gb_cs_xml_el(b, "instanceType", o->sc->type->name);
	gb_cs_xml_el(b, "availabilityZone", o->sc->az->name);
	xml_long(b, "instanceCount", o->count);
	time_el(b, "startDate", epoch + o->sc->start);
	time_el(b, "endDate", epoch + o->sc->start + (double)o->sc->hours * 3600);
	xml_long(b, "capacityBlockDurationHours", o->sc->hours);
	gb_buf_printf(b, "<upfrontFee>%.2f</upfrontFee>", o->fee);
	gb_buf_puts(b, "<currencyCode>USD</currencyCode><tenancy>default</tenancy></item>");
}

static void act_cb_offerings(struct call *c, struct gb_cs_response *r, double now)
{
	struct gb_sim_cb_query q = { 0 };
	struct gb_sim_cb_offering *v = NULL;
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	q.instance_type = param(&c->p, "InstanceType");
	q.count = param_long(&c->p, "InstanceCount", 0);
	q.hours = param_long(&c->p, "CapacityDurationHours", 0);
	q.start_range = param_sim_time(c, "StartDateRange");
	q.end_range = param_sim_time(c, "EndDateRange");
	q.max_results = param_long(&c->p, "MaxResults", 0);
	q.next_token = param(&c->p, "NextToken");
	if (failed(c, gb_sim_describe_cb_offerings(c->cs->sim, c->region, &q, now, &v, &n,
						   next, &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeCapacityBlockOfferings", r->request_id);
	gb_buf_puts(&r->body, "<capacityBlockOfferingSet>");
	for (size_t k = 0; k < n; k++)
		cb_offering_el(&r->body, &v[k], gb_sim_epoch(c->cs->sim));
	gb_buf_puts(&r->body, "</capacityBlockOfferingSet>");
	if (next[0])
		gb_cs_xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeCapacityBlockOfferings");
out:
	free(v);
}

/* A timestamp parameter as wall-clock epoch seconds.  RET whether it was given. */
static bool param_epoch(struct call *c, const char *key, double *t)
{
	const char *v = param(&c->p, key);

	*t = 0;
	return v && gb_schema_timestamp(v, t);	/* the schema checked the form */
}

/* EC2 SpotPrice: the members botocore's model gives it, in its order. */
static void spot_price_el(struct gb_buf *b, const struct gb_sim_spot_price *v)
{
	char price[32];

	gb_buf_puts(b, "<item>");
	gb_cs_xml_el(b, "availabilityZone", v->pool->az->name);
	gb_cs_xml_el(b, "availabilityZoneId", v->pool->az->zone_id);
	gb_cs_xml_el(b, "instanceType", v->pool->type->name);
	gb_cs_xml_el(b, "productDescription", GB_SIM_SPOT_PRODUCT);
	gb_cs_xml_el(b, "spotPrice", gb_sim_spot_price_text(v->pool, price, sizeof(price)));
	time_el(b, "timestamp", v->at);
	gb_buf_puts(b, "</item>");
}

static void act_spot_prices(struct call *c, struct gb_cs_response *r, double now)
{
	const char **types = calloc(c->p.n + 1, sizeof(*types));
	const char **products = calloc(c->p.n + 1, sizeof(*products));
	struct gb_sim_spot_query q = { 0 };
	struct gb_sim_filter *f = NULL;
	struct gb_sim_spot_price *v = NULL;
	char next[GB_SIM_TOKEN_MAX];
	size_t n = 0;

	if (!types || !products || !filters_parse(&c->p, &f, &q.nfilters)) {
		gb_sim_error_set(&c->err, 500, "InternalError", "An internal error has occurred");
		c->failed = true;
		goto out;
	}
	q.types = types;
	q.ntypes = param_list(&c->p, "InstanceType.", types, c->p.n);
	q.products = products;
	q.nproducts = param_list(&c->p, "ProductDescription.", products, c->p.n);
	q.az = param(&c->p, "AvailabilityZone");
	q.has_start = param_epoch(c, "StartTime", &q.start);
	q.has_end = param_epoch(c, "EndTime", &q.end);
	q.filters = f;
	q.max_results = param_long(&c->p, "MaxResults", 0);
	q.next_token = param(&c->p, "NextToken");
	if (failed(c, gb_sim_describe_spot_prices(c->cs->sim, c->region, &q, now, &v, &n, next,
						  &c->err)))
		goto out;
	if (c->dry_run) {
		dry_run_answer(c);
		goto out;
	}
	xml_begin(&r->body, "DescribeSpotPriceHistory", r->request_id);
	gb_buf_puts(&r->body, "<spotPriceHistorySet>");
	for (size_t k = 0; k < n; k++)
		spot_price_el(&r->body, &v[k]);
	gb_buf_puts(&r->body, "</spotPriceHistorySet>");
	/* EC2 ends this listing with an empty token, not without one */
	gb_cs_xml_el(&r->body, "nextToken", next);
	xml_end(&r->body, "DescribeSpotPriceHistory");
out:
	free(v);
	filters_free(f, q.nfilters);
	free(products);
	free(types);
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
	[GB_SIM_ACTION_DESCRIBE_INSTANCE_TYPES] = act_itypes,
	[GB_SIM_ACTION_CREATE_PLACEMENT_GROUP] = act_create_pg,
	[GB_SIM_ACTION_DESCRIBE_PLACEMENT_GROUPS] = act_describe_pg,
	[GB_SIM_ACTION_DELETE_PLACEMENT_GROUP] = act_delete_pg,
	[GB_SIM_ACTION_DESCRIBE_SECURITY_GROUPS] = act_sgroups,
	[GB_SIM_ACTION_DESCRIBE_CAPACITY_RESERVATIONS] = act_crs,
	[GB_SIM_ACTION_DESCRIBE_CAPACITY_BLOCK_OFFERINGS] = act_cb_offerings,
	[GB_SIM_ACTION_DESCRIBE_SPOT_PRICE_HISTORY] = act_spot_prices,
};

/* The schema (schema.c) first, then the one parameter every action has: DryRun. */
static bool check_params(struct call *c)
{
	if (!gb_schema_check(c->act, c->p.v, c->p.n, &c->err))
		return c->failed = true, false;
	c->dry_run = param_true(&c->p, "DryRun");
	return true;
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
		gb_time_sleep(f->latency / cs->scale);
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
	if (!gb_cs_form_parse(&c->p, req->query, req->query ? strlen(req->query) : 0) ||
	    !gb_cs_form_parse(&c->p, req->body, req->body_len)) {
		gb_sim_error_set(&c->err, 400, "InvalidParameterValue",
				 "The request has too many parameters");
		return c->failed = true, false;
	}
	return true;
}

static void dispatch(struct call *c, const struct gb_cs_request *req,
		     struct gb_cs_response *r, struct gb_fault *f)
{
	struct gb_cs_principal who;

	if (!decode(c, req))
		return;
	c->action = param(&c->p, "Action");
	if (!gb_cs_authenticate(c->cs, req, "ec2", c->region, &who, &c->err)) {
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
	gb_cs_form_free(&c.p);
}
