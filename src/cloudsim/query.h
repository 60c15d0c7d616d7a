/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query.h - the AWS Query protocol as EC2's and STS's handlers share it:
 * the x-www-form-urlencoded query string and body decoded into key/value
 * pairs in received order, and the XML text of the answers
 */
#ifndef GB_CLOUDSIM_QUERY_H
#define GB_CLOUDSIM_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_str.h"
#include "schema.h"

/* At most this many parameters in one request. */
#define GB_CS_FORM_MAX 4096

struct gb_cs_form {
	struct gb_cs_param *v;		/* owned */
	size_t n;
};

/*
 * Decode [len] bytes of "k=v&k2=v2" (%XX, '+' for a blank) and append the
 * pairs to [f].  RET false when out of memory or past GB_CS_FORM_MAX.
 */
bool gb_cs_form_parse(struct gb_cs_form *f, const char *s, size_t len);

void gb_cs_form_free(struct gb_cs_form *f);

/* RET BORROWED the value of the first [key], or NULL. */
const char *gb_cs_form_get(const struct gb_cs_form *f, const char *key);

/* Append [s] to [b] with XML's five special characters escaped. */
void gb_cs_xml_escape(struct gb_buf *b, const char *s);

/* Append <tag>value</tag>, or <tag/> when [value] is NULL or empty. */
void gb_cs_xml_el(struct gb_buf *b, const char *tag, const char *value);

#endif /* GB_CLOUDSIM_QUERY_H */
