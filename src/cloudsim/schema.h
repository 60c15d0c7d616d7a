/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * schema.h - the EC2 and STS request parameters the simulator accepts, per action
 *
 * One table per action of the EC2 Query API (version 2016-11-15) lists every
 * wire parameter the simulator implements: its name as botocore's
 * EC2Serializer writes it ("TagSpecification.N.Tag.N.Key", a component "N"
 * standing for a list index 1, 2, ...), its type, its enum values, whether
 * it is required and the range EC2 states for it.  Every request is checked
 * against its action's table before any handler runs, with EC2's codes:
 * a name not in the table is UnknownParameter, a missing Version or
 * required parameter MissingParameter, another Version NoSuchVersion, a
 * value of the wrong type, outside the enum or the range
 * InvalidParameterValue, a parameter given twice InvalidQueryParameter.
 *
 * Names, types and enum values are cross-checked against botocore's EC2
 * model by tests/integration/cloudsim-schema.sh, from the table
 * gb_schema_dump() prints (gpuburst-cloudsim --dump-schema).
 */
#ifndef GB_CLOUDSIM_SCHEMA_H
#define GB_CLOUDSIM_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"
#include "sim.h"

/* The API versions the simulator speaks: EC2's and STS's. */
#define GB_SCHEMA_API_VERSION "2016-11-15"
#define GB_SCHEMA_STS_VERSION "2011-06-15"

enum gb_schema_type {
	GB_SCHEMA_STRING = 0,
	GB_SCHEMA_INTEGER,	/* decimal, 32-bit signed, optional range */
	GB_SCHEMA_BOOLEAN,	/* "true" or "false", as botocore sends them */
	GB_SCHEMA_ENUM,		/* one of [values] */
	GB_SCHEMA_TIMESTAMP,	/* ISO 8601: 2026-01-31T12:00:00[.fff](Z|+hh:mm) */
};

/* Flags of a parameter. */
#define GB_SCHEMA_REQUIRED 0x1u	/* the request must have it (a list: one item) */
#define GB_SCHEMA_IN_ITEM 0x2u	/* every item of its innermost list must have it */
#define GB_SCHEMA_MIN 0x4u	/* integer: [min] applies; string: its length */
#define GB_SCHEMA_MAX 0x8u	/* integer: [max] applies; string: its length */

struct gb_schema_param {
	const char *name;		/* wire name, "N" for each list index */
	enum gb_schema_type type;
	const char *const *values;	/* GB_SCHEMA_ENUM: NULL-terminated */
	unsigned flags;
	long min, max;
	const char *chars;		/* string: allowed besides [A-Za-z0-9_]; NULL: any */
};

/* One action's table. */
struct gb_schema_action {
	const char *name;		/* "RunInstances" */
	const struct gb_schema_param *p;
	size_t n;
};

/* One Query API service. */
struct gb_schema_service {
	const char *name;		/* in NoSuchVersion: "AmazonEC2" */
	const char *version;
	bool validation_errors;		/* bad values: ValidationError (STS), not
					 * InvalidParameterValue (EC2) */
	const struct gb_schema_action *actions;
	size_t n;
};

/* EC2 (actions in enum gb_sim_action order) and STS. */
extern const struct gb_schema_service gb_schema_ec2;
extern const struct gb_schema_service gb_schema_sts;

/* One decoded request parameter (the API layer's form). */
struct gb_cs_param {
	char *key;
	char *value;
};

/* RET BORROWED: the table of [a], *n entries. */
const struct gb_schema_param *gb_schema_params(enum gb_sim_action a, size_t *n);

/* RET BORROWED: the action of [sv] called [name], or NULL. */
const struct gb_schema_action *gb_schema_action_find(const struct gb_schema_service *sv,
						     const char *name);

/*
 * Check the [n] parameters of one request for action [a] of [sv]: Version,
 * then each parameter in request order (name, duplicate, value), then list
 * numbering, then what is required; with [sv]'s error style.  RET true, or
 * false with the first problem in [e] (HTTP 400).
 */
bool gb_schema_check_action(const struct gb_schema_service *sv,
			    const struct gb_schema_action *a, const struct gb_cs_param *p,
			    size_t n, struct gb_sim_error *e);

/*
 * EC2: check the [n] parameters of one request for action [a]: Version, then
 * each parameter in request order (name, duplicate, value), then list
 * numbering (1, 2, ... without gaps), then what is required.  Action and
 * X-Amz-* (a presigned query) are not looked at.  RET true, or false with
 * the first problem in [e] (HTTP 400).
 */
bool gb_schema_check(enum gb_sim_action a, const struct gb_cs_param *p, size_t n,
		     struct gb_sim_error *e);

/*
 * Parse an ISO 8601 timestamp as the schema accepts it.
 * RET true with *epoch (seconds since 1970, UTC), or false.
 */
bool gb_schema_timestamp(const char *s, double *epoch);

/*
 * The whole schema as a JSON document: {"version", "common": [names],
 * "actions": {ACTION: [{"name", "type", "values"?, "required"?,
 * "required_in_item"?, "min"?, "max"?, "chars"?}]}, "sts": {"version",
 * "actions"}}: EC2's at the top, STS's under "sts".  RET NEW string (free()), or
 * NULL when out of memory.
 */
char *gb_schema_dump(void);

#endif /* GB_CLOUDSIM_SCHEMA_H */
