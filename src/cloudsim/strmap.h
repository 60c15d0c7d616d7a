/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strmap.h - a string-keyed hash map (open addressing) for the simulator
 *
 * Keys are BORROWED: each key must live inside (or as long as) its value,
 * e.g. an instance's own id.  Not thread-safe (the simulator's lock covers it).
 */
#ifndef GB_CLOUDSIM_STRMAP_H
#define GB_CLOUDSIM_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct gb_strmap_slot {
	const char *key;	/* NULL: empty; gb_strmap_tomb: deleted */
	void *val;
};

struct gb_strmap {
	struct gb_strmap_slot *slots;
	size_t cap;		/* power of two, or 0 */
	size_t used;		/* live entries */
	size_t filled;		/* live entries plus tombstones */
};

/* RET BORROWED value for [key], or NULL. */
void *gb_strmap_get(const struct gb_strmap *m, const char *key);

/* Insert or replace.  RET false on allocation failure (map unchanged). */
bool gb_strmap_put(struct gb_strmap *m, const char *key, void *val);

/* Remove [key] if present. */
void gb_strmap_del(struct gb_strmap *m, const char *key);

/* Free the table (not the keys or values); the map is empty afterwards. */
void gb_strmap_free(struct gb_strmap *m);

#endif /* GB_CLOUDSIM_STRMAP_H */
