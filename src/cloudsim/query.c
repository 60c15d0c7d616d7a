/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query.c - the AWS Query protocol's two halves the EC2 and STS handlers
 * share: x-www-form-urlencoded parameters in, XML text out
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"

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

static bool form_add(struct gb_cs_form *p, const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);
	size_t kl = eq ? (size_t)(eq - s) : n;
	struct gb_cs_param *v;

	if (n == 0)
		return true;
	if (p->n >= GB_CS_FORM_MAX)
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

bool gb_cs_form_parse(struct gb_cs_form *p, const char *s, size_t n)
{
	while (s && n) {
		const char *amp = memchr(s, '&', n);
		size_t len = amp ? (size_t)(amp - s) : n;

		if (!form_add(p, s, len))
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

void gb_cs_form_free(struct gb_cs_form *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

const char *gb_cs_form_get(const struct gb_cs_form *p, const char *key)
{
	for (size_t i = 0; i < p->n; i++) {
		if (strcmp(p->v[i].key, key) == 0)
			return p->v[i].value;
	}
	return NULL;
}

/*****************************************************************************
 *  XML text
 *****************************************************************************/

void gb_cs_xml_escape(struct gb_buf *b, const char *s)
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
void gb_cs_xml_el(struct gb_buf *b, const char *tag, const char *value)
{
	if (!value || !*value) {
		gb_buf_printf(b, "<%s/>", tag);
		return;
	}
	gb_buf_printf(b, "<%s>", tag);
	gb_cs_xml_escape(b, value);
	gb_buf_printf(b, "</%s>", tag);
}
