/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testutil.c - small helpers shared by the unit tests (testutil.h)
 */
#include "config.h"

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "gb_err.h"
#include "testutil.h"

int tu_tmpdir(char *dir, size_t dir_size, const char *name, char *path, size_t path_size,
	      const char *file)
{
	if ((size_t)snprintf(dir, dir_size, "/tmp/gb-test-%s-XXXXXX", name) >= dir_size ||
	    !mkdtemp(dir))
		return -1;
	if ((size_t)snprintf(path, path_size, "%s/%s", dir, file) >= path_size)
		return -1;
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void tu_rmtree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tu_ok(gb_err_t rc, const gb_error_t *e)
{
	if (rc)
		fail_msg("%s: %s", gb_err_name(rc), e->text);
}
