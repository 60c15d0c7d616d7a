/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strmap.c - FNV-1a hashing, linear probing, tombstones, rehash at 1/2 full
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

static const char tomb[] = "";	/* address marks a deleted slot */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* RET the slot holding [key], or the first free one on its probe path. */
static struct gb_strmap_slot *find(const struct gb_strmap *m, const char *key)
{
	size_t mask = m->cap - 1, i = (size_t)hash(key) & mask;
	struct gb_strmap_slot *free_slot = NULL;

	for (;;) {
		struct gb_strmap_slot *s = &m->slots[i];

		if (!s->key)
			return free_slot ? free_slot : s;
		if (s->key == tomb) {
			if (!free_slot)
				free_slot = s;
		} else if (strcmp(s->key, key) == 0) {
			return s;
		}
		i = (i + 1) & mask;
	}
}

static bool rehash(struct gb_strmap *m, size_t cap)
{
	struct gb_strmap old = *m;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return false;
	}
	m->cap = cap;
	m->used = m->filled = 0;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.slots[i].key && old.slots[i].key != tomb) {
			*find(m, old.slots[i].key) = old.slots[i];
			m->used++;
			m->filled++;
		}
	}
	free(old.slots);
	return true;
}

void *gb_strmap_get(const struct gb_strmap *m, const char *key)
{
	struct gb_strmap_slot *s;

	if (!m->cap)
		return NULL;
	s = find(m, key);
	return s->key && s->key != tomb ? s->val : NULL;
}

bool gb_strmap_put(struct gb_strmap *m, const char *key, void *val)
{
	struct gb_strmap_slot *s;

	if ((m->filled + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap : 64;

		while ((m->used + 1) * 4 > cap)	/* at most 1/4 full after */
			cap *= 2;
		if (!rehash(m, cap))
			return false;
	}
	s = find(m, key);
	if (!s->key) {
		m->filled++;
		m->used++;
	} else if (s->key == tomb) {
		m->used++;
	}
	s->key = key;
	s->val = val;
	return true;
}

void gb_strmap_del(struct gb_strmap *m, const char *key)
{
	struct gb_strmap_slot *s;

	if (!m->cap)
		return;
	s = find(m, key);
	if (s->key && s->key != tomb) {
		s->key = tomb;
		s->val = NULL;
		m->used--;
	}
}

void gb_strmap_free(struct gb_strmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
