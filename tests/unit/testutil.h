/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testutil.h - small helpers shared by the unit tests: a private mkdtemp
 * directory per test and its removal, a gb_err_t that must be GB_E_OK,
 * the head of the small configurations the tests load
 *
 * Include after <cmocka.h>.  testutil.c needs libcommon only.
 */
#ifndef GB_TESTS_TESTUTIL_H
#define GB_TESTS_TESTUTIL_H

#include <stddef.h>

#include "gb_err.h"

/*
 * The first lines of a test configuration: cluster t, no state directory,
 * no log file, region ap-south-1 with ami-1; its azs line follows.
 */
#define TU_CONF_HEAD \
	"cluster_name: t\n" \
	"state_dir: /nonexistent\n" \
	"log: {file: ''}\n" \
	"regions:\n" \
	"  - name: ap-south-1\n" \
	"    ami: ami-1\n"

/*
 * Make the directory /tmp/gb-test-[name]-XXXXXX into [dir] and set [path]
 * to [file] below it (the file is not created).
 * RET 0, or -1 when the directory cannot be made
 */
int tu_tmpdir(char *dir, size_t dir_size, const char *name, char *path, size_t path_size,
	      const char *file);

/* Remove [dir] and everything below it (links are not followed). */
void tu_rmtree(const char *dir);

/* Fail the test with [e]'s text unless [rc] is GB_E_OK. */
void tu_ok(gb_err_t rc, const gb_error_t *e);

#endif /* GB_TESTS_TESTUTIL_H */
