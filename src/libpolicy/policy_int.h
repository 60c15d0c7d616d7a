/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_int.h - private to libpolicy
 */
#ifndef GB_LIBPOLICY_POLICY_INT_H
#define GB_LIBPOLICY_POLICY_INT_H

#include <stdbool.h>

#include "gb_str.h"

/* The most nodes one request can name (libstate's request_nodes limit). */
#define GB_POLICY_MAX_NODES 100000

/* Append the hosts of hostlist [expr] to [names]; RET false if malformed. */
bool policy_add_hosts(struct gb_strv *names, const char *expr);

#endif /* GB_LIBPOLICY_POLICY_INT_H */
