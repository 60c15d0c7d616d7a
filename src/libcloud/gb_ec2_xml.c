/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gb_ec2_xml.c - EC2 (and STS) Query API responses to plain structs, with
 * libxml2
 */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "gb_ec2_xml.h"
#include "gb_sts.h"
#include "gb_str.h"
#include "gb_util.h"

/* Parse state: the document and whether an allocation failed. */
struct px {
	xmlDocPtr doc;
	xmlNodePtr root;
	bool oom;
};

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void xml_init(void)
{
	/* libxml2 wants this once, before any thread parses */
	xmlInitParser();
}

/* Swallow libxml2's stderr chatter (encoding errors bypass NOERROR). */
static void xml_quiet(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

/* ---- document access ---------------------------------------------------- */

static const char *lname(xmlNodePtr n)
{
	return (const char *)n->name;
}

static bool is_el(xmlNodePtr n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && n->name &&
	       strcmp(lname(n), name) == 0;
}

/* First element child of [p] with local name [name], or NULL. */
static xmlNodePtr child(xmlNodePtr p, const char *name)
{
	for (xmlNodePtr n = p ? p->children : NULL; n; n = n->next) {
		if (is_el(n, name))
			return n;
	}
	return NULL;
}

static size_t count_items(xmlNodePtr set)
{
	size_t n = 0;

	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		if (is_el(it, "item"))
			n++;
	}
	return n;
}

/* RET NEW text content of [n] ("" when empty); NULL and x->oom on ENOMEM. */
static char *text_of(struct px *x, xmlNodePtr n)
{
	xmlChar *c = xmlNodeGetContent(n);
	char *s = strdup(c ? (const char *)c : "");

	xmlFree(c);
	if (!s)
		x->oom = true;
	return s;
}

/* RET NEW text of child [name] of [p]; NULL when there is no such child. */
static char *ctext(struct px *x, xmlNodePtr p, const char *name)
{
	xmlNodePtr n = child(p, name);

	return n ? text_of(x, n) : NULL;
}

/* RET child [name] of [p] as an int, or [dflt] when absent or not a number. */
static int cint(struct px *x, xmlNodePtr p, const char *name, int dflt)
{
	char *s = ctext(x, p, name);
	long v = dflt;

	if (s && gb_parse_long(s, INT_MIN, INT_MAX, &v) != GB_E_OK)
		v = dflt;
	free(s);
	return (int)v;
}

/* Copy child [name]'s text into a fixed buffer, blanks for control chars. */
static void cfixed(struct px *x, xmlNodePtr p, const char *name, char *dst,
		   size_t size)
{
	char *s = ctext(x, p, name);

	if (!s)
		return;
	gb_strlcpy(dst, s, size);
	for (char *q = dst; *q; q++) {
		if ((unsigned char)*q < 0x20)
			*q = ' ';
	}
	free(s);
}

/*
 * EC2 never sends a DTD: find one in the prolog (after the XML
 * declaration, processing instructions and comments), so that a document
 * with one is refused before libxml2 reads any of its entities.
 */
static bool has_doctype(const char *body, size_t len)
{
	const char *p = body, *end = body + len;

	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		const char *close;

		if (end - p >= 2 && p[1] == '?')
			close = memmem(p, (size_t)(end - p), "?>", 2);
		else if (end - p >= 4 && memcmp(p, "<!--", 4) == 0)
			close = memmem(p + 4, (size_t)(end - p - 4), "-->", 3);
		else
			return end - p >= 9 && memcmp(p, "<!DOCTYPE", 9) == 0;
		if (!close)
			return false;	/* unterminated: not well-formed anyway */
		p = close;
	}
	return false;
}

/*
 * Parse [body] into x->doc / x->root.  The size and DTD checks keep
 * hostile documents out before anything walks the tree.
 */
static gb_err_t px_open(struct px *x, const char *body, size_t len,
			gb_error_t *err)
{
	xmlParserCtxtPtr ctxt;

	memset(x, 0, sizeof(*x));
	if (!body || len == 0)
		return gb_errorf(err, GB_E_PARSE, "empty response body");
	if (len > GB_EC2_XML_MAX)
		return gb_errorf(err, GB_E_PARSE,
				 "response body of %zu bytes is over the %u-byte limit",
				 len, GB_EC2_XML_MAX);
	if (has_doctype(body, len))
		return gb_errorf(err, GB_E_PARSE, "response has a DTD: refused");
	pthread_once(&xml_once, xml_init);
	/* per thread in libxml2: set it where the parsing happens */
	xmlSetGenericErrorFunc(NULL, xml_quiet);
	ctxt = xmlNewParserCtxt();
	if (!ctxt)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	x->doc = xmlCtxtReadMemory(ctxt, body, (int)len, NULL, NULL,
				   XML_PARSE_NONET | XML_PARSE_NOERROR |
				   XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);
	if (!x->doc) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);	/* const from libxml2 2.12 */
		char msg[160] = "unknown error";

		if (e && e->message) {
			gb_strlcpy(msg, e->message, sizeof(msg));
			msg[strcspn(msg, "\r\n")] = '\0';
		}
		gb_errorf(err, GB_E_PARSE,
			  "response is not well-formed XML (line %d: %s)",
			  e ? e->line : 0, msg);
		xmlFreeParserCtxt(ctxt);
		return GB_E_PARSE;
	}
	xmlFreeParserCtxt(ctxt);
	if (x->doc->intSubset || x->doc->extSubset) {
		xmlFreeDoc(x->doc);
		x->doc = NULL;
		return gb_errorf(err, GB_E_PARSE, "response has a DTD: refused");
	}
	x->root = xmlDocGetRootElement(x->doc);
	if (!x->root) {
		xmlFreeDoc(x->doc);
		x->doc = NULL;
		return gb_errorf(err, GB_E_PARSE, "response has no root element");
	}
	return GB_E_OK;
}

static void px_close(struct px *x)
{
	if (x->doc)
		xmlFreeDoc(x->doc);
	x->doc = NULL;
}

static gb_err_t wrong_root(struct px *x, const char *want, gb_error_t *err)
{
	char got[64];

	gb_strlcpy(got, lname(x->root), sizeof(got));
	if (!strcmp(got, "Response") || !strcmp(got, "ErrorResponse"))
		return gb_errorf(err, GB_E_PARSE,
				 "expected %s, got an error envelope <%s>", want, got);
	return gb_errorf(err, GB_E_PARSE, "expected %s, got <%.63s>", want, got);
}

/* ---- error envelope ------------------------------------------------------- */

gb_err_t gb_ec2_xml_parse_error(const char *body, size_t len,
				struct gb_ec2_error *ae, gb_error_t *err)
{
	static const char *const rid_names[] = { "RequestID", "RequestId",
						  "requestId" };
	struct px x;
	xmlNodePtr e = NULL;
	gb_err_t rc;

	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (is_el(x.root, "Response"))
		e = child(child(x.root, "Errors"), "Error");
	else if (is_el(x.root, "ErrorResponse"))
		e = child(x.root, "Error");
	else if (is_el(x.root, "Error"))
		e = x.root;
	if (!e) {
		rc = gb_errorf(err, GB_E_NOTFOUND, "<%.63s> is not an error envelope",
			       lname(x.root));
		goto out;
	}
	if (!child(e, "Code")) {
		rc = gb_errorf(err, GB_E_PARSE, "error envelope without <Code>");
		goto out;
	}
	ae->code[0] = ae->message[0] = ae->request_id[0] = '\0';
	cfixed(&x, e, "Code", ae->code, sizeof(ae->code));
	cfixed(&x, e, "Message", ae->message, sizeof(ae->message));
	for (size_t i = 0; i < GB_ARRAY_LEN(rid_names) && !ae->request_id[0]; i++) {
		cfixed(&x, x.root, rid_names[i], ae->request_id,
		       sizeof(ae->request_id));
		if (!ae->request_id[0])
			cfixed(&x, e, rid_names[i], ae->request_id,
			       sizeof(ae->request_id));
	}
	if (x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	else if (!ae->code[0])
		rc = gb_errorf(err, GB_E_PARSE, "error envelope with an empty <Code>");
out:
	px_close(&x);
	return rc;
}

/* ---- instances -------------------------------------------------------- */

/* "2026-02-14T08:29:31.000Z" (fraction optional) -> epoch seconds, or 0. */
/* "2026-02-14T08:29:31.250Z", to the fraction (EC2 sends .000, the simulator ms). */
static double parse_iso(const char *s)
{
	double t;

	if (!s || !strchr(s, 'T') || gb_time_parse(s, 0, &t) != GB_E_OK || t <= 0)
		return 0;
	return t;
}

static void instance_free(struct gb_ec2_instance *i)
{
	char **fields[] = {
		&i->instance_id, &i->image_id, &i->instance_type, &i->state_name,
		&i->availability_zone, &i->subnet_id, &i->vpc_id, &i->private_ip,
		&i->public_ip, &i->private_dns, &i->public_dns, &i->key_name,
		&i->client_token, &i->launch_time, &i->lifecycle,
		&i->state_reason_code, &i->state_reason_message,
		&i->reservation_id,
	};

	for (size_t k = 0; k < GB_ARRAY_LEN(fields); k++)
		GB_FREE_NULL(*fields[k]);
	for (size_t k = 0; k < i->n_tags; k++) {
		free(i->tags[k].key);
		free(i->tags[k].value);
	}
	GB_FREE_NULL(i->tags);
	i->n_tags = 0;
}

void gb_ec2_instance_list_free(struct gb_ec2_instance_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		instance_free(&l->v[i]);
	free(l->v);
	free(l->request_id);
	free(l->reservation_id);
	free(l->owner_id);
	free(l->client_token);
	free(l->next_token);
	free(l);
}

const char *gb_ec2_instance_tag(const struct gb_ec2_instance *inst,
				const char *key)
{
	for (size_t i = 0; i < inst->n_tags; i++) {
		if (inst->tags[i].key && strcmp(inst->tags[i].key, key) == 0)
			return inst->tags[i].value;
	}
	return NULL;
}

/* The <tagSet> of [it] into *tags / *n_tags; [what] names the owner in errors. */
static gb_err_t parse_tag_set(struct px *x, xmlNodePtr it, const char *what,
			      struct gb_ec2_tag **tags, size_t *n_tags, gb_error_t *err)
{
	xmlNodePtr set = child(it, "tagSet");
	size_t n = count_items(set);

	if (n == 0)
		return GB_E_OK;
	*tags = calloc(n, sizeof(**tags));
	if (!*tags)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (xmlNodePtr t = set->children; t; t = t->next) {
		struct gb_ec2_tag *tag;

		if (!is_el(t, "item"))
			continue;
		tag = &(*tags)[(*n_tags)++];
		tag->key = ctext(x, t, "key");
		tag->value = ctext(x, t, "value");
		if (!tag->key || !*tag->key)
			return gb_errorf(err, GB_E_PARSE, "%s tag without a key", what);
		if (!tag->value)
			tag->value = strdup("");
		if (!tag->value)
			x->oom = true;
	}
	return GB_E_OK;
}

static gb_err_t parse_instance(struct px *x, xmlNodePtr it, const char *resv,
			       struct gb_ec2_instance *o, gb_error_t *err)
{
	xmlNodePtr st = child(it, "instanceState");
	xmlNodePtr reason = child(it, "stateReason");
	int code;

	o->instance_id = ctext(x, it, "instanceId");
	if (!x->oom && (!o->instance_id || !*o->instance_id))
		return gb_errorf(err, GB_E_PARSE, "instance item without <instanceId>");
	o->image_id = ctext(x, it, "imageId");
	o->instance_type = ctext(x, it, "instanceType");
	code = st ? cint(x, st, "code", -1) : -1;
	/* the high byte is internal to AWS: only the low byte is the state */
	o->state_code = code < 0 ? -1 : (code & 0xff);
	o->state_name = st ? ctext(x, st, "name") : NULL;
	o->availability_zone = ctext(x, child(it, "placement"), "availabilityZone");
	o->subnet_id = ctext(x, it, "subnetId");
	o->vpc_id = ctext(x, it, "vpcId");
	o->private_ip = ctext(x, it, "privateIpAddress");
	o->public_ip = ctext(x, it, "ipAddress");
	o->private_dns = ctext(x, it, "privateDnsName");
	o->public_dns = ctext(x, it, "dnsName");
	o->key_name = ctext(x, it, "keyName");
	o->client_token = ctext(x, it, "clientToken");
	o->launch_time = ctext(x, it, "launchTime");
	o->launch_epoch = parse_iso(o->launch_time);
	o->ami_launch_index = cint(x, it, "amiLaunchIndex", -1);
	o->lifecycle = ctext(x, it, "instanceLifecycle");
	o->state_reason_code = reason ? ctext(x, reason, "code") : NULL;
	o->state_reason_message = reason ? ctext(x, reason, "message") : NULL;
	if (resv) {
		o->reservation_id = strdup(resv);
		if (!o->reservation_id)
			x->oom = true;
	}
	return parse_tag_set(x, it, "instance", &o->tags, &o->n_tags, err);
}

/* Append the items of <instancesSet> under [parent] to [l]. */
static gb_err_t parse_instances_set(struct px *x, xmlNodePtr parent,
				    const char *resv, struct gb_ec2_instance_list *l,
				    size_t *cap, gb_error_t *err)
{
	xmlNodePtr set = child(parent, "instancesSet");
	gb_err_t rc;

	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		if (!is_el(it, "item"))
			continue;
		if (l->n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 8;
			struct gb_ec2_instance *nv = realloc(l->v, ncap * sizeof(*nv));

			if (!nv)
				return gb_errorf(err, GB_E_NOMEM, "out of memory");
			l->v = nv;
			*cap = ncap;
		}
		memset(&l->v[l->n], 0, sizeof(l->v[0]));
		rc = parse_instance(x, it, resv, &l->v[l->n++], err);
		if (rc)
			return rc;
		if (x->oom)
			return gb_errorf(err, GB_E_NOMEM, "out of memory");
	}
	return GB_E_OK;
}

/* NULL for an absent or empty <nextToken/> (the last page). */
static char *next_token(struct px *x)
{
	char *t = ctext(x, x->root, "nextToken");

	if (t && !*t)
		GB_FREE_NULL(t);
	return t;
}

static gb_err_t parse_reservations(struct px *x, struct gb_ec2_instance_list *l,
				   gb_error_t *err)
{
	xmlNodePtr set = child(x->root, "reservationSet");
	size_t cap = 0;
	gb_err_t rc;

	for (xmlNodePtr r = set ? set->children : NULL; r; r = r->next) {
		char *resv;

		if (!is_el(r, "item"))
			continue;
		resv = ctext(x, r, "reservationId");
		rc = parse_instances_set(x, r, resv, l, &cap, err);
		free(resv);
		if (rc)
			return rc;
	}
	l->next_token = next_token(x);
	return GB_E_OK;
}

gb_err_t gb_ec2_xml_parse_instances(const char *body, size_t len,
				    struct gb_ec2_instance_list **out,
				    gb_error_t *err)
{
	struct gb_ec2_instance_list *l = NULL;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	if (is_el(x.root, "RunInstancesResponse")) {
		size_t cap = 0;

		if (!child(x.root, "instancesSet")) {
			rc = gb_errorf(err, GB_E_PARSE,
				       "RunInstancesResponse without <instancesSet>");
			goto out;
		}
		l->reservation_id = ctext(&x, x.root, "reservationId");
		l->owner_id = ctext(&x, x.root, "ownerId");
		rc = parse_instances_set(&x, x.root, l->reservation_id, l, &cap, err);
	} else if (is_el(x.root, "DescribeInstancesResponse")) {
		rc = parse_reservations(&x, l, err);
	} else {
		rc = wrong_root(&x, "RunInstancesResponse or DescribeInstancesResponse",
				err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_instance_list_free(l);
	else
		*out = l;
	return rc;
}

/*
 * [l] = a new zeroed gb_ec2_*_list with room for [n] zeroed items in
 * l->v ([n] is evaluated twice).  RET false on OOM, when [l] may still need
 * its _free.
 */
#define LIST_NEW(l, n) \
	(((l) = calloc(1, sizeof(*(l)))) != NULL && \
	 (!(n) || ((l)->v = calloc((n), sizeof(*(l)->v))) != NULL))

/* ---- state changes ------------------------------------------------------ */

void gb_ec2_state_change_list_free(struct gb_ec2_state_change_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].instance_id);
		free(l->v[i].current_name);
		free(l->v[i].previous_name);
	}
	free(l->v);
	free(l->request_id);
	free(l);
}

static void parse_state(struct px *x, xmlNodePtr st, int *code, char **name)
{
	int c = st ? cint(x, st, "code", -1) : -1;

	*code = c < 0 ? -1 : (c & 0xff);
	*name = st ? ctext(x, st, "name") : NULL;
}

gb_err_t gb_ec2_xml_parse_state_changes(const char *body, size_t len,
					struct gb_ec2_state_change_list **out,
					gb_error_t *err)
{
	struct gb_ec2_state_change_list *l = NULL;
	const char *root;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	root = lname(x.root);
	if (strcmp(root, "TerminateInstancesResponse") &&
	    strcmp(root, "StopInstancesResponse") &&
	    strcmp(root, "StartInstancesResponse")) {
		rc = wrong_root(&x, "TerminateInstancesResponse", err);
		goto out;
	}
	set = child(x.root, "instancesSet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		struct gb_ec2_state_change *s;

		if (!is_el(it, "item"))
			continue;
		s = &l->v[l->n++];
		s->instance_id = ctext(&x, it, "instanceId");
		if (!x.oom && (!s->instance_id || !*s->instance_id)) {
			rc = gb_errorf(err, GB_E_PARSE,
				       "state change item without <instanceId>");
			goto out;
		}
		parse_state(&x, child(it, "currentState"), &s->current_code,
			    &s->current_name);
		parse_state(&x, child(it, "previousState"), &s->previous_code,
			    &s->previous_name);
	}
	if (x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_state_change_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- instance type offerings ---------------------------------------------- */

void gb_ec2_offering_list_free(struct gb_ec2_offering_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].instance_type);
		free(l->v[i].location_type);
		free(l->v[i].location);
	}
	free(l->v);
	free(l->request_id);
	free(l->next_token);
	free(l);
}

gb_err_t gb_ec2_xml_parse_offerings(const char *body, size_t len,
				    struct gb_ec2_offering_list **out,
				    gb_error_t *err)
{
	struct gb_ec2_offering_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeInstanceTypeOfferingsResponse")) {
		rc = wrong_root(&x, "DescribeInstanceTypeOfferingsResponse", err);
		goto out;
	}
	set = child(x.root, "instanceTypeOfferingSet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	l->next_token = next_token(&x);
	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		struct gb_ec2_offering *o;

		if (!is_el(it, "item"))
			continue;
		o = &l->v[l->n++];
		o->instance_type = ctext(&x, it, "instanceType");
		o->location_type = ctext(&x, it, "locationType");
		o->location = ctext(&x, it, "location");
		if (!x.oom && (!o->instance_type || !*o->instance_type ||
			       !o->location || !*o->location)) {
			rc = gb_errorf(err, GB_E_PARSE,
				       "offering item without <instanceType> or <location>");
			goto out;
		}
	}
	if (x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_offering_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- availability zones ------------------------------------------------- */

void gb_ec2_az_list_free(struct gb_ec2_az_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].zone_name);
		free(l->v[i].zone_id);
		free(l->v[i].state);
		free(l->v[i].region_name);
	}
	free(l->v);
	free(l->request_id);
	free(l);
}

gb_err_t gb_ec2_xml_parse_azs(const char *body, size_t len,
			      struct gb_ec2_az_list **out, gb_error_t *err)
{
	struct gb_ec2_az_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeAvailabilityZonesResponse")) {
		rc = wrong_root(&x, "DescribeAvailabilityZonesResponse", err);
		goto out;
	}
	set = child(x.root, "availabilityZoneInfo");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	for (xmlNodePtr it = set ? set->children : NULL; it; it = it->next) {
		struct gb_ec2_az *z;

		if (!is_el(it, "item"))
			continue;
		z = &l->v[l->n++];
		z->zone_name = ctext(&x, it, "zoneName");
		z->zone_id = ctext(&x, it, "zoneId");
		z->state = ctext(&x, it, "zoneState");
		z->region_name = ctext(&x, it, "regionName");
		if (!x.oom && (!z->zone_name || !*z->zone_name)) {
			rc = gb_errorf(err, GB_E_PARSE, "zone item without <zoneName>");
			goto out;
		}
	}
	if (x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_az_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- field readers for the newer Describe* replies -------------------- */

/* The element at [path] ("a/b/c": first child of each name) under [p], or NULL. */
static xmlNodePtr path_child(xmlNodePtr p, const char *path)
{
	char name[64];

	while (p && *path) {
		size_t n = strcspn(path, "/");

		if (n >= sizeof(name))
			return NULL;
		memcpy(name, path, n);
		name[n] = '\0';
		p = child(p, name);
		path += n + (path[n] == '/');
	}
	return p;
}

/*
 * *v = the number at [path] under [p] in [lo, hi], or [dflt] when absent.
 * RET GB_E_OK; GB_E_CLOUD naming [path] and [owner] when it is not such a
 * number; GB_E_NOMEM.
 */
static gb_err_t fnum(struct px *x, xmlNodePtr p, const char *path, long lo,
		     long hi, int dflt, const char *owner, int *v, gb_error_t *err)
{
	xmlNodePtr n = path_child(p, path);
	gb_err_t rc = GB_E_OK;
	long l = dflt;
	char *s;

	*v = dflt;
	if (!n)
		return GB_E_OK;
	s = text_of(x, n);
	if (!s)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (gb_parse_long(s, lo, hi, &l) != GB_E_OK)
		rc = gb_errorf(err, GB_E_CLOUD, "%s: <%s> '%.32s' is not a number in %ld..%ld",
			       owner, path, s, lo, hi);
	else
		*v = (int)l;
	free(s);
	return rc;
}

/* *v = the flag at [path] ("true"/"false"), false when absent; as fnum(). */
static gb_err_t fbool(struct px *x, xmlNodePtr p, const char *path,
		      const char *owner, bool *v, gb_error_t *err)
{
	xmlNodePtr n = path_child(p, path);
	gb_err_t rc = GB_E_OK;
	char *s;

	*v = false;
	if (!n)
		return GB_E_OK;
	s = text_of(x, n);
	if (!s)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (!strcmp(s, "true"))
		*v = true;
	else if (strcmp(s, "false") != 0)
		rc = gb_errorf(err, GB_E_CLOUD, "%s: <%s> '%.32s' is not true or false",
			       owner, path, s);
	free(s);
	return rc;
}

/* The first <item> of the element at [path] under [p], or NULL. */
static xmlNodePtr first_item(xmlNodePtr p, const char *path)
{
	return child(path_child(p, path), "item");
}

/* ---- instance types --------------------------------------------------------- */

void gb_ec2_instance_type_list_free(struct gb_ec2_instance_type_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].instance_type);
		free(l->v[i].arch);
		free(l->v[i].gpu_name);
		free(l->v[i].gpu_maker);
	}
	free(l->v);
	free(l->request_id);
	free(l->next_token);
	free(l);
}

/* Whether the <item>s of [set] include the text [want]. */
static bool items_have(struct px *x, xmlNodePtr set, const char *want)
{
	bool found = false;

	for (xmlNodePtr it = set ? set->children : NULL; it && !found; it = it->next) {
		char *s;

		if (!is_el(it, "item"))
			continue;
		s = text_of(x, it);
		found = s && strcmp(s, want) == 0;
		free(s);
	}
	return found;
}

/* EC2 InstanceTypeInfo: vCpuInfo, memoryInfo, gpuInfo, networkInfo, ... */
static gb_err_t parse_type_figures(struct px *x, xmlNodePtr it, const char *owner,
				   struct gb_ec2_instance_type *t, gb_error_t *err)
{
	xmlNodePtr gpu = first_item(it, "gpuInfo/gpus");
	xmlNodePtr arch = first_item(it, "processorInfo/supportedArchitectures");
	gb_err_t rc;

	if ((rc = fnum(x, it, "vCpuInfo/defaultVCpus", 0, INT_MAX, 0, owner, &t->vcpus,
		       err)) ||
	    (rc = fnum(x, it, "memoryInfo/sizeInMiB", 0, INT_MAX, 0, owner,
		       &t->memory_mib, err)) ||
	    (rc = fnum(x, it, "gpuInfo/totalGpuMemoryInMiB", 0, INT_MAX, 0, owner,
		       &t->gpu_total_memory_mib, err)) ||
	    (rc = fbool(x, it, "networkInfo/efaSupported", owner, &t->efa, err)) ||
	    (rc = fnum(x, it, "networkInfo/efaInfo/maximumEfaInterfaces", 0, INT_MAX, 0,
		       owner, &t->efa_max_interfaces, err)) ||
	    (rc = fnum(x, it, "networkInfo/maximumNetworkCards", 0, INT_MAX, 0, owner,
		       &t->network_cards, err)) ||
	    (rc = fnum(x, it, "networkInfo/maximumNetworkInterfaces", 0, INT_MAX, 0,
		       owner, &t->max_interfaces, err)))
		return rc;
	if (gpu) {
		/* gpus/item[0]: the fields are those of GpuDeviceInfo */
		if ((rc = fnum(x, gpu, "count", 0, INT_MAX, 0, owner, &t->gpus, err)) ||
		    (rc = fnum(x, gpu, "memoryInfo/sizeInMiB", 0, INT_MAX, 0, owner,
			       &t->gpu_memory_mib, err)))
			return rc;
		t->gpu_name = ctext(x, gpu, "name");
		t->gpu_maker = ctext(x, gpu, "manufacturer");
	}
	if (arch)
		t->arch = text_of(x, arch);
	t->cluster_placement = items_have(x, path_child(it, "placementGroupInfo/"
							    "supportedStrategies"), "cluster");
	return GB_E_OK;
}

gb_err_t gb_ec2_xml_parse_instance_types(const char *body, size_t len,
					 struct gb_ec2_instance_type_list **out,
					 gb_error_t *err)
{
	struct gb_ec2_instance_type_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeInstanceTypesResponse")) {
		rc = wrong_root(&x, "DescribeInstanceTypesResponse", err);
		goto out;
	}
	set = child(x.root, "instanceTypeSet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	l->next_token = next_token(&x);
	for (xmlNodePtr it = set ? set->children : NULL; it && !rc; it = it->next) {
		struct gb_ec2_instance_type *t;
		char owner[96];

		if (!is_el(it, "item"))
			continue;
		t = &l->v[l->n++];
		t->instance_type = ctext(&x, it, "instanceType");
		if (!x.oom && (!t->instance_type || !*t->instance_type)) {
			rc = gb_errorf(err, GB_E_CLOUD,
				       "instance type item %zu without <instanceType>", l->n);
			goto out;
		}
		snprintf(owner, sizeof(owner), "instance type %.64s",
			 t->instance_type ? t->instance_type : "?");
		rc = parse_type_figures(&x, it, owner, t, err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_instance_type_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- placement groups ------------------------------------------------------- */

static void tags_free(struct gb_ec2_tag *tags, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		free(tags[k].key);
		free(tags[k].value);
	}
	free(tags);
}

void gb_ec2_placement_group_list_free(struct gb_ec2_placement_group_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].group_name);
		free(l->v[i].group_id);
		free(l->v[i].strategy);
		free(l->v[i].state);
		tags_free(l->v[i].tags, l->v[i].n_tags);
	}
	free(l->v);
	free(l->request_id);
	free(l);
}

gb_err_t gb_ec2_xml_parse_placement_groups(const char *body, size_t len,
					   struct gb_ec2_placement_group_list **out,
					   gb_error_t *err)
{
	struct gb_ec2_placement_group_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribePlacementGroupsResponse")) {
		rc = wrong_root(&x, "DescribePlacementGroupsResponse", err);
		goto out;
	}
	set = child(x.root, "placementGroupSet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	for (xmlNodePtr it = set ? set->children : NULL; it && !rc; it = it->next) {
		struct gb_ec2_placement_group *g;

		if (!is_el(it, "item"))
			continue;
		g = &l->v[l->n++];
		g->group_name = ctext(&x, it, "groupName");
		if (!x.oom && (!g->group_name || !*g->group_name)) {
			rc = gb_errorf(err, GB_E_CLOUD,
				       "placement group item %zu without <groupName>", l->n);
			goto out;
		}
		g->group_id = ctext(&x, it, "groupId");
		g->strategy = ctext(&x, it, "strategy");
		g->state = ctext(&x, it, "state");
		rc = parse_tag_set(&x, it, "placement group", &g->tags, &g->n_tags, err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_placement_group_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- security groups -------------------------------------------------------- */

static void strv_free(char **v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(v[k]);
	free(v);
}

static void perms_free(struct gb_ec2_sg_permission *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(p[i].ip_protocol);
		strv_free(p[i].group_ids, p[i].n_group_ids);
		strv_free(p[i].cidrs, p[i].n_cidrs);
	}
	free(p);
}

void gb_ec2_security_group_list_free(struct gb_ec2_security_group_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].group_id);
		free(l->v[i].group_name);
		free(l->v[i].vpc_id);
		perms_free(l->v[i].ingress, l->v[i].n_ingress);
		perms_free(l->v[i].egress, l->v[i].n_egress);
	}
	free(l->v);
	free(l->request_id);
	free(l->next_token);
	free(l);
}

/*
 * The [field] of every <item> of child [set] of [p], NULL-terminated, in
 * *v / *n (empty: NULL, 0).  Items without it are skipped.
 */
static gb_err_t item_texts(struct px *x, xmlNodePtr p, const char *set,
			   const char *field, char ***v, size_t *n, gb_error_t *err)
{
	xmlNodePtr s = child(p, set);
	size_t max = count_items(s);

	if (!max)
		return GB_E_OK;
	*v = calloc(max + 1, sizeof(**v));
	if (!*v)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (xmlNodePtr it = s->children; it; it = it->next) {
		char *t;

		if (!is_el(it, "item") || !(t = ctext(x, it, field)))
			continue;
		(*v)[(*n)++] = t;
	}
	return GB_E_OK;
}

/* ipPermissions / ipPermissionsEgress: EC2 IpPermission items. */
static gb_err_t parse_perms(struct px *x, xmlNodePtr sg, const char *set,
			    const char *owner, struct gb_ec2_sg_permission **out,
			    size_t *n, gb_error_t *err)
{
	xmlNodePtr s = child(sg, set);
	size_t max = count_items(s);
	gb_err_t rc = GB_E_OK;

	if (!max)
		return GB_E_OK;
	*out = calloc(max, sizeof(**out));
	if (!*out)
		return gb_errorf(err, GB_E_NOMEM, "out of memory");
	for (xmlNodePtr it = s->children; it && !rc; it = it->next) {
		struct gb_ec2_sg_permission *p;

		if (!is_el(it, "item"))
			continue;
		p = &(*out)[(*n)++];
		p->ip_protocol = ctext(x, it, "ipProtocol");
		if ((rc = fnum(x, it, "fromPort", -1, 65535, -1, owner, &p->from_port, err)) ||
		    (rc = fnum(x, it, "toPort", -1, 65535, -1, owner, &p->to_port, err)) ||
		    (rc = item_texts(x, it, "groups", "groupId", &p->group_ids,
				     &p->n_group_ids, err)))
			break;
		rc = item_texts(x, it, "ipRanges", "cidrIp", &p->cidrs, &p->n_cidrs, err);
	}
	return rc;
}

static gb_err_t parse_security_group(struct px *x, xmlNodePtr it, size_t i,
				     struct gb_ec2_security_group *g, gb_error_t *err)
{
	char owner[96];
	gb_err_t rc;

	g->group_id = ctext(x, it, "groupId");
	if (!x->oom && (!g->group_id || !*g->group_id))
		return gb_errorf(err, GB_E_CLOUD, "security group item %zu without <groupId>", i);
	g->group_name = ctext(x, it, "groupName");
	g->vpc_id = ctext(x, it, "vpcId");
	snprintf(owner, sizeof(owner), "security group %.64s", g->group_id ? g->group_id : "?");
	rc = parse_perms(x, it, "ipPermissions", owner, &g->ingress, &g->n_ingress, err);
	if (!rc)
		rc = parse_perms(x, it, "ipPermissionsEgress", owner, &g->egress,
				 &g->n_egress, err);
	return rc;
}

gb_err_t gb_ec2_xml_parse_security_groups(const char *body, size_t len,
					  struct gb_ec2_security_group_list **out,
					  gb_error_t *err)
{
	struct gb_ec2_security_group_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeSecurityGroupsResponse")) {
		rc = wrong_root(&x, "DescribeSecurityGroupsResponse", err);
		goto out;
	}
	set = child(x.root, "securityGroupInfo");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	l->next_token = next_token(&x);
	for (xmlNodePtr it = set ? set->children : NULL; it && !rc; it = it->next) {
		if (!is_el(it, "item"))
			continue;
		l->n++;
		rc = parse_security_group(&x, it, l->n, &l->v[l->n - 1], err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_security_group_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- capacity reservations and Capacity Block offerings ----------------- */

/*
 * *t = the ISO 8601 time at child [name] of [p] (as launchTime), 0 when
 * absent.  RET GB_E_OK; GB_E_CLOUD naming [name] and [owner] when it is
 * not such a time; GB_E_NOMEM.
 */
static gb_err_t fdate(struct px *x, xmlNodePtr p, const char *name, const char *owner,
		      double *t, gb_error_t *err)
{
	char *s = ctext(x, p, name);
	gb_err_t rc = GB_E_OK;

	*t = 0;
	if (!s)
		return x->oom ? gb_errorf(err, GB_E_NOMEM, "out of memory") : GB_E_OK;
	*t = parse_iso(s);
	if (*t <= 0)
		rc = gb_errorf(err, GB_E_CLOUD, "%s: <%s> '%.40s' is not an ISO 8601 time",
			       owner, name, s);
	free(s);
	return rc;
}

void gb_ec2_capacity_reservation_list_free(struct gb_ec2_capacity_reservation_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct gb_ec2_capacity_reservation *r = &l->v[i];
		char *fields[] = {
			r->id, r->arn, r->instance_type, r->availability_zone, r->platform,
			r->tenancy, r->state, r->reservation_type, r->match_criteria,
			r->end_date_type,
		};

		for (size_t k = 0; k < GB_ARRAY_LEN(fields); k++)
			free(fields[k]);
		tags_free(r->tags, r->n_tags);
	}
	free(l->v);
	free(l->request_id);
	free(l->next_token);
	free(l);
}

/* EC2 CapacityReservation, by its locationNames. */
static gb_err_t parse_reservation(struct px *x, xmlNodePtr it, size_t i,
				  struct gb_ec2_capacity_reservation *r, gb_error_t *err)
{
	char owner[96];
	gb_err_t rc;

	r->id = ctext(x, it, "capacityReservationId");
	if (!x->oom && (!r->id || !*r->id))
		return gb_errorf(err, GB_E_CLOUD,
				 "capacity reservation item %zu without <capacityReservationId>", i);
	r->arn = ctext(x, it, "capacityReservationArn");
	r->instance_type = ctext(x, it, "instanceType");
	r->availability_zone = ctext(x, it, "availabilityZone");
	r->platform = ctext(x, it, "instancePlatform");
	r->tenancy = ctext(x, it, "tenancy");
	r->state = ctext(x, it, "state");
	r->reservation_type = ctext(x, it, "reservationType");
	r->match_criteria = ctext(x, it, "instanceMatchCriteria");
	r->end_date_type = ctext(x, it, "endDateType");
	snprintf(owner, sizeof(owner), "capacity reservation %.64s", r->id ? r->id : "?");
	if ((rc = fnum(x, it, "totalInstanceCount", 0, INT_MAX, 0, owner, &r->total, err)) ||
	    (rc = fnum(x, it, "availableInstanceCount", 0, INT_MAX, 0, owner, &r->available,
		       err)) ||
	    (rc = fdate(x, it, "startDate", owner, &r->start_date, err)) ||
	    (rc = fdate(x, it, "endDate", owner, &r->end_date, err)))
		return rc;
	return parse_tag_set(x, it, "capacity reservation", &r->tags, &r->n_tags, err);
}

gb_err_t gb_ec2_xml_parse_capacity_reservations(
	const char *body, size_t len, struct gb_ec2_capacity_reservation_list **out,
	gb_error_t *err)
{
	struct gb_ec2_capacity_reservation_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeCapacityReservationsResponse")) {
		rc = wrong_root(&x, "DescribeCapacityReservationsResponse", err);
		goto out;
	}
	set = child(x.root, "capacityReservationSet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	l->next_token = next_token(&x);
	for (xmlNodePtr it = set ? set->children : NULL; it && !rc; it = it->next) {
		if (!is_el(it, "item"))
			continue;
		l->n++;
		rc = parse_reservation(&x, it, l->n, &l->v[l->n - 1], err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_capacity_reservation_list_free(l);
	else
		*out = l;
	return rc;
}

void gb_ec2_capacity_block_offering_list_free(struct gb_ec2_capacity_block_offering_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].instance_type);
		free(l->v[i].availability_zone);
		free(l->v[i].upfront_fee);
		free(l->v[i].currency);
		free(l->v[i].tenancy);
	}
	free(l->v);
	free(l->request_id);
	free(l->next_token);
	free(l);
}

/* EC2 CapacityBlockOffering, by its locationNames. */
static gb_err_t parse_block_offering(struct px *x, xmlNodePtr it, size_t i,
				     struct gb_ec2_capacity_block_offering *o,
				     gb_error_t *err)
{
	char owner[96];
	gb_err_t rc;

	o->id = ctext(x, it, "capacityBlockOfferingId");
	o->instance_type = ctext(x, it, "instanceType");
	o->availability_zone = ctext(x, it, "availabilityZone");
	if (!x->oom && (!o->id || !*o->id))
		return gb_errorf(err, GB_E_CLOUD,
				 "capacity block offering item %zu without <capacityBlockOfferingId>",
				 i);
	if (!x->oom && (!o->instance_type || !*o->instance_type ||
			!o->availability_zone || !*o->availability_zone))
		return gb_errorf(err, GB_E_CLOUD,
				 "capacity block offering %.64s without <instanceType> or <availabilityZone>",
				 o->id);
	o->upfront_fee = ctext(x, it, "upfrontFee");
	o->currency = ctext(x, it, "currencyCode");
	o->tenancy = ctext(x, it, "tenancy");
	snprintf(owner, sizeof(owner), "capacity block offering %.64s", o->id ? o->id : "?");
	if ((rc = fnum(x, it, "instanceCount", 0, INT_MAX, 0, owner, &o->count, err)) ||
	    (rc = fnum(x, it, "capacityBlockDurationHours", 0, INT_MAX, 0, owner,
		       &o->duration_hours, err)) ||
	    (rc = fdate(x, it, "startDate", owner, &o->start_date, err)))
		return rc;
	return fdate(x, it, "endDate", owner, &o->end_date, err);
}

gb_err_t gb_ec2_xml_parse_capacity_block_offerings(
	const char *body, size_t len, struct gb_ec2_capacity_block_offering_list **out,
	gb_error_t *err)
{
	struct gb_ec2_capacity_block_offering_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeCapacityBlockOfferingsResponse")) {
		rc = wrong_root(&x, "DescribeCapacityBlockOfferingsResponse", err);
		goto out;
	}
	set = child(x.root, "capacityBlockOfferingSet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	l->next_token = next_token(&x);
	for (xmlNodePtr it = set ? set->children : NULL; it && !rc; it = it->next) {
		if (!is_el(it, "item"))
			continue;
		l->n++;
		rc = parse_block_offering(&x, it, l->n, &l->v[l->n - 1], err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_capacity_block_offering_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- Spot price history -------------------------------------------------- */

void gb_ec2_spot_price_list_free(struct gb_ec2_spot_price_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].availability_zone);
		free(l->v[i].instance_type);
		free(l->v[i].product_description);
	}
	free(l->v);
	free(l->request_id);
	free(l->next_token);
	free(l);
}

/* EC2 writes spotPrice as a decimal string ("2.718400"): digits, a point, digits. */
static bool spot_price_ok(const char *s, double *v)
{
	size_t n = strspn(s, "0123456789");

	if (!n || (s[n] && (s[n] != '.' || !s[n + 1] ||
			    s[n + 1 + strspn(s + n + 1, "0123456789")])))
		return false;
	return gb_parse_double(s, v) == GB_E_OK && *v > 0;
}

/* EC2 SpotPrice, by its locationNames; every member is required. */
static gb_err_t parse_spot_price(struct px *x, xmlNodePtr it, size_t i,
				 struct gb_ec2_spot_price *o, gb_error_t *err)
{
	char owner[160], *price = NULL;
	struct {
		const char *name;
		char **dst;
	} f[] = {
		{ "availabilityZone", &o->availability_zone },
		{ "instanceType", &o->instance_type },
		{ "productDescription", &o->product_description },
		{ "spotPrice", &price },
	};
	gb_err_t rc = GB_E_OK;

	for (size_t k = 0; k < GB_ARRAY_LEN(f) && !rc; k++) {
		*f[k].dst = ctext(x, it, f[k].name);
		if (x->oom)
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		else if (!*f[k].dst || !**f[k].dst)
			rc = gb_errorf(err, GB_E_CLOUD, "spot price item %zu without <%s>", i,
				       f[k].name);
	}
	if (!rc) {
		snprintf(owner, sizeof(owner), "spot price %.64s %.40s", o->instance_type,
			 o->availability_zone);
		if (!spot_price_ok(price, &o->price))
			rc = gb_errorf(err, GB_E_CLOUD, "%s: <spotPrice> '%.32s' is not a price",
				       owner, price);
		else if (!child(it, "timestamp"))
			rc = gb_errorf(err, GB_E_CLOUD, "spot price item %zu without <timestamp>",
				       i);
		else
			rc = fdate(x, it, "timestamp", owner, &o->timestamp, err);
	}
	free(price);
	return rc;
}

gb_err_t gb_ec2_xml_parse_spot_price_history(const char *body, size_t len,
					     struct gb_ec2_spot_price_list **out,
					     gb_error_t *err)
{
	struct gb_ec2_spot_price_list *l = NULL;
	xmlNodePtr set;
	struct px x;
	gb_err_t rc;

	*out = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, "DescribeSpotPriceHistoryResponse")) {
		rc = wrong_root(&x, "DescribeSpotPriceHistoryResponse", err);
		goto out;
	}
	set = child(x.root, "spotPriceHistorySet");
	if (!LIST_NEW(l, count_items(set))) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	l->request_id = ctext(&x, x.root, "requestId");
	l->next_token = next_token(&x);
	for (xmlNodePtr it = set ? set->children : NULL; it && !rc; it = it->next) {
		if (!is_el(it, "item"))
			continue;
		l->n++;
		rc = parse_spot_price(&x, it, l->n, &l->v[l->n - 1], err);
	}
	if (!rc && x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	px_close(&x);
	if (rc)
		gb_ec2_spot_price_list_free(l);
	else
		*out = l;
	return rc;
}

/* ---- acknowledgements ---------------------------------------------------- */

gb_err_t gb_ec2_xml_parse_ack(const char *body, size_t len, const char *root,
			      char **request_id, gb_error_t *err)
{
	char *ret = NULL;
	struct px x;
	gb_err_t rc;

	if (request_id)
		*request_id = NULL;
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, root)) {
		rc = wrong_root(&x, root, err);
		goto out;
	}
	ret = ctext(&x, x.root, "return");
	if (ret && strcmp(ret, "true") != 0) {
		rc = gb_errorf(err, GB_E_PARSE, "%s returned \"%.32s\"", root, ret);
		goto out;
	}
	if (request_id)
		*request_id = ctext(&x, x.root, "requestId");
	if (x.oom)
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
out:
	free(ret);
	px_close(&x);
	return rc;
}

/* ---- STS credentials ------------------------------------------------------ */

/* RET NEW text of child [name], wiping libxml2's temporary copy. */
static char *csecret(struct px *x, xmlNodePtr p, const char *name)
{
	xmlNodePtr n = child(p, name);
	xmlChar *c;
	char *s;

	if (!n)
		return NULL;
	c = xmlNodeGetContent(n);
	s = strdup(c ? (const char *)c : "");
	if (c) {
		gb_memzero(c, strlen((const char *)c));
		xmlFree(c);
	}
	if (!s)
		x->oom = true;
	return s;
}

gb_err_t gb_sts_parse_credentials(const char *body, size_t len,
				  const char *result,
				  struct gb_creds_snapshot *out,
				  char **assumed_arn, gb_error_t *err)
{
	char root[96];
	char *ak = NULL, *sk = NULL, *tok = NULL, *exp = NULL;
	xmlNodePtr res, cr;
	struct px x;
	double t = 0;
	char *arn = NULL;
	gb_err_t rc;

	if (assumed_arn)
		*assumed_arn = NULL;
	snprintf(root, sizeof(root), "%.*sResponse",
		 (int)(strlen(result) - strlen("Result")), result);
	rc = px_open(&x, body, len, err);
	if (rc)
		return rc;
	if (!is_el(x.root, root)) {
		rc = wrong_root(&x, root, err);
		goto out;
	}
	res = child(x.root, result);
	cr = child(res, "Credentials");
	if (!cr) {
		rc = gb_errorf(err, GB_E_PARSE, "%s without <%s><Credentials>", root,
			       result);
		goto out;
	}
	ak = csecret(&x, cr, "AccessKeyId");
	sk = csecret(&x, cr, "SecretAccessKey");
	tok = csecret(&x, cr, "SessionToken");
	exp = csecret(&x, cr, "Expiration");
	if (x.oom) {
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
		goto out;
	}
	if (!ak || !*ak || !sk || !*sk || !tok || !*tok || !exp) {
		rc = gb_errorf(err, GB_E_PARSE,
			       "%s: <Credentials> lacks AccessKeyId, SecretAccessKey, SessionToken or Expiration",
			       root);
		goto out;
	}
	t = parse_iso(exp);
	if (t <= 0) {
		rc = gb_errorf(err, GB_E_PARSE, "%s: Expiration \"%.40s\" is not an ISO-8601 time",
			       root, exp);
		goto out;
	}
	if (assumed_arn) {
		arn = ctext(&x, child(res, "AssumedRoleUser"), "Arn");
		if (x.oom) {
			rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
			goto out;
		}
		*assumed_arn = arn;
	}
	out->access_key_id = ak;
	out->secret_access_key = sk;
	out->session_token = tok;
	out->expiration = t;
	ak = sk = tok = NULL;
out:
	gb_free_secret(&ak);
	gb_free_secret(&sk);
	gb_free_secret(&tok);
	free(exp);
	px_close(&x);
	return rc;
}
