/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * node_ident.c - who this instance is (IMDSv2) and which Slurm node it is
 *
 * The node name is the instance's gpuburst:node tag, which gpuburst sets
 * at launch (a one-node request) or by CreateTags right after RunInstances
 * returns: it may not be there yet at boot, so it is polled.  Without
 * instance metadata tags (404 on tags/instance) the user data's
 * GPUBURST_NODES list, indexed by ami-launch-index, names it: the same
 * index gpuburst assigns nodes by.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_log.h"
#include "gb_util.h"
#include "node_int.h"

#define TAG_POLL 0.5		/* seconds between two looks at the tag */
#define ITEM_MAX 128		/* an identity item's length */

/* Trim trailing blanks and newlines of [s] in place. */
static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* RET whether [s] is 1..ITEM_MAX of [A-Za-z0-9] and [extra]. */
static bool item_ok(const char *s, const char *extra)
{
	size_t n = strlen(s);

	if (n == 0 || n > ITEM_MAX)
		return false;
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
			return false;
	}
	return true;
}

/* GET meta-data/[path] into *out, which must be made of [extra] and alnum. */
static gb_err_t get_item(gb_imds_t *m, const char *path, const char *extra,
			 char **out, gb_error_t *err)
{
	char full[256];
	char *v = NULL;
	gb_err_t rc;

	snprintf(full, sizeof(full), "meta-data/%s", path);
	if ((rc = gb_imds_get(m, full, &v, NULL, err)))
		return rc;
	chomp(v);
	if (!item_ok(v, extra)) {
		rc = gb_errorf(err, GB_E_PARSE,
			       "IMDS %s: malformed answer '%s' (expected 1 to %d of letters, digits and '%s')",
			       full, GB_LOG_Q(v), ITEM_MAX, extra);
		free(v);
		return rc;
	}
	*out = v;
	return GB_E_OK;
}

/* The node name from the gpuburst:node tag, polled; GB_E_NOTFOUND: tags off. */
static gb_err_t node_from_tag(gb_imds_t *m, double wait, char **node, gb_error_t *err)
{
	static const char path[] = "meta-data/tags/instance/" NODE_NAME_TAG;
	double deadline = gb_time_mono() + wait;
	char *v = NULL, *keys = NULL;
	bool logged = false;
	gb_err_t rc;

	for (;;) {
		rc = gb_imds_get(m, path, &v, NULL, err);
		if (rc == GB_E_OK)
			break;
		if (rc != GB_E_NOTFOUND)
			return rc;
		/* 404 on the list itself: instance metadata tags are off */
		rc = gb_imds_get(m, "meta-data/tags/instance", &keys, NULL, err);
		free(keys);
		keys = NULL;
		if (rc == GB_E_NOTFOUND)
			return gb_errorf(err, GB_E_NOTFOUND,
					 "instance metadata tags are off (IMDS meta-data/tags/instance: 404)");
		if (rc)
			return rc;
		if (gb_time_mono() + TAG_POLL > deadline)
			return gb_errorf(err, GB_E_TIMEOUT,
					 "IMDS %s: no tag %s after %.0f s (node.tag_wait)",
					 path, NODE_NAME_TAG, wait);
		if (!logged)
			gb_log_info("node_tag_wait tag=%s wait=%.0fs", NODE_NAME_TAG, wait);
		logged = true;
		gb_time_sleep(TAG_POLL);
	}
	chomp(v);
	if (!node_name_ok(v)) {
		rc = gb_errorf(err, GB_E_PARSE,
			       "IMDS %s: '%s' is not a node name (1 to %d of letters, digits, '.', '_', '-')",
			       path, GB_LOG_Q(v), NODE_NAME_MAX);
		free(v);
		return rc;
	}
	*node = v;
	return GB_E_OK;
}

/* The node name from the user data's list at the launch index. */
static gb_err_t node_from_userdata(gb_imds_t *m, long index, char **node,
				   gb_error_t *err)
{
	struct gb_strv nodes = { 0 };
	char *ud = NULL;
	size_t len = 0;
	gb_err_t rc;

	rc = gb_imds_get(m, "user-data", &ud, &len, err);
	if (rc == GB_E_NOTFOUND)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "the instance has no user data (IMDS user-data: 404), so no %s list",
			       NODE_USERDATA_KEY);
	if (!rc)
		rc = node_userdata_nodes(ud, len, &nodes, err);
	if (!rc && (size_t)index >= nodes.n)
		rc = gb_errorf(err, GB_E_NOTFOUND,
			       "user data: %s has %zu node(s), no node for ami-launch-index %ld",
			       NODE_USERDATA_KEY, nodes.n, index);
	if (!rc && !(*node = strdup(nodes.v[index])))
		rc = gb_errorf(err, GB_E_NOMEM, "out of memory");
	if (ud)
		gb_memzero(ud, len);	/* user data may carry a sealed key */
	free(ud);
	gb_strv_free(&nodes);
	return rc;
}

gb_err_t node_ident_read(gb_imds_t *m, const struct gb_node_conf *conf,
			 struct node_ident *id, gb_error_t *err)
{
	char *idx = NULL;
	gb_error_t e;
	gb_err_t rc;

	memset(id, 0, sizeof(*id));
	if ((rc = get_item(m, "instance-id", "-", &id->instance_id, err)) ||
	    (rc = get_item(m, "ami-launch-index", "", &idx, err)) ||
	    (rc = get_item(m, "instance-type", ".-", &id->instance_type, err)) ||
	    (rc = get_item(m, "placement/availability-zone", "-", &id->az, err)) ||
	    (rc = get_item(m, "placement/region", "-", &id->region, err)))
		goto out;
	if (!gb_str_has_prefix(id->instance_id, "i-")) {
		rc = gb_errorf(err, GB_E_PARSE,
			       "IMDS meta-data/instance-id: '%s' is not an instance id (i-...)",
			       id->instance_id);
		goto out;
	}
	if (gb_parse_long(idx, 0, 100000, &id->launch_index)) {
		rc = gb_errorf(err, GB_E_PARSE,
			       "IMDS meta-data/ami-launch-index: '%s' is not a number from 0 to 100000",
			       idx);
		goto out;
	}
	rc = node_from_tag(m, conf->node.tag_wait, &id->node, &e);
	id->node_from = "tag";
	if (rc == GB_E_NOTFOUND || rc == GB_E_TIMEOUT) {
		gb_err_t rc2;

		gb_log_info("node_name_fallback why=%s source=user-data", GB_LOG_Q(e.text));
		rc2 = node_from_userdata(m, id->launch_index, &id->node, err);
		id->node_from = "user-data";
		if (rc2)
			gb_error_prefix(err, "%s; and", e.text);
		rc = rc2 ? (rc == GB_E_TIMEOUT ? GB_E_TIMEOUT : rc2) : GB_E_OK;
	} else if (rc) {
		gb_errorf(err, rc, "%s", e.text);
	}
out:
	free(idx);
	return rc;
}

void node_ident_clear(struct node_ident *id)
{
	free(id->instance_id);
	free(id->instance_type);
	free(id->az);
	free(id->region);
	free(id->node);
	memset(id, 0, sizeof(*id));
}
