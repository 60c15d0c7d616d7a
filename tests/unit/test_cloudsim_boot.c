/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cloudsim_boot.c - the boot hook on its own (no AWS CLI needed):
 * UserData that writes its environment to a file, and a long-running one
 * stopped when its instance enters shutting-down
 */
#include "config.h"

#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "boot.h"
#include "gb_log.h"
#include "gb_util.h"
#include "sim.h"

static char dir[256];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/test_cloudsim_boot.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static struct gb_sim_event event(enum gb_sim_event_kind kind, const char *id,
				 const char *script, struct gb_sim_tag *tags, size_t ntags)
{
	struct gb_sim_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	gb_strlcpy(ev.id, id, sizeof(ev.id));
	gb_strlcpy(ev.ip, "127.70.0.4", sizeof(ev.ip));
	ev.region = "ap-south-1";
	ev.az = "ap-south-1b";
	ev.instance_type = "g6.xlarge";
	ev.tags = tags;
	ev.ntags = ntags;
	ev.user_data = (char *)(uintptr_t)script;	/* read only by boot */
	ev.user_data_len = script ? strlen(script) : 0;
	return ev;
}

/* Wait up to 10 s for [path]; RET NEW contents. */
static char *wait_file(const char *path)
{
	for (int i = 0; i < 400; i++) {
		char *text = NULL;
		size_t len;

		if (gb_file_read(path, 1 << 20, &text, &len, NULL) == GB_E_OK && len &&
		    text[len - 1] == '\n')
			return text;
		free(text);
		usleep(25000);
	}
	fail_msg("%s did not appear", path);
	return NULL;
}

static void test_environment(void **state)
{
	static const char script[] = "#!/bin/sh\n/usr/bin/env | LC_ALL=C sort >env.tmp\n"
				     "echo on-stdout\nmv env.tmp env.txt\n";
	char k1[] = "gpuburst:node", v1[] = "g6-3", k2[] = "Name", v2[] = "x y";
	struct gb_sim_tag tags[] = { { k1, v1 }, { k2, v2 } };
	struct gb_sim_event ev = event(GB_SIM_EVENT_RUNNING, "i-0aaaaaaaaaaaaaaa1", script, tags, 2);
	gb_boot_t *b = NULL;
	char path[512], want[1024], *env, *log;
	struct stat st;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_boot_create(dir, &b, &e), GB_E_OK);
	assert_int_equal(gb_boot_event(b, &ev, &e), GB_E_OK);
	snprintf(path, sizeof(path), "%s/i-0aaaaaaaaaaaaaaa1/env.txt", dir);
	env = wait_file(path);
	/* exactly these, plus the PWD that /bin/sh sets: the instance's directory */
	snprintf(want, sizeof(want),
		 "GPUBURST_SIM_AMI_LAUNCH_INDEX=0\n"
		 "GPUBURST_SIM_AZ=ap-south-1b\n"
		 "GPUBURST_SIM_INSTANCE_ID=i-0aaaaaaaaaaaaaaa1\n"
		 "GPUBURST_SIM_INSTANCE_TYPE=g6.xlarge\n"
		 "GPUBURST_SIM_PRIVATE_IP=127.70.0.4\n"
		 "GPUBURST_SIM_REGION=ap-south-1\n"
		 "GPUBURST_SIM_TAG_GPUBURST_NODE=g6-3\n"
		 "GPUBURST_SIM_TAG_NAME=x y\n"
		 "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"
		 "PWD=%s/i-0aaaaaaaaaaaaaaa1\n", dir);
	assert_string_equal(env, want);
	free(env);
	snprintf(path, sizeof(path), "%s/i-0aaaaaaaaaaaaaaa1/user-data", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(path, sizeof(path), "%s/i-0aaaaaaaaaaaaaaa1/boot.log", dir);
	log = wait_file(path);
	assert_string_equal(log, "on-stdout\n");
	free(log);
	/* the same instance running again does not boot twice while alive */
	for (int i = 0; i < 200 && gb_boot_pid(b, ev.id); i++) {
		gb_boot_reap(b);
		usleep(25000);
	}
	assert_int_equal(gb_boot_pid(b, ev.id), 0);
	gb_boot_destroy(b);
}

static void test_terminate_stops_script(void **state)
{
	static const char script[] = "#!/bin/sh\ntrap 'echo term >got-term; exit 0' TERM\n"
				     "echo $$ >pid.tmp; mv pid.tmp pid\n"
				     "while :; do sleep 0.05; done\n";
	struct gb_sim_event run = event(GB_SIM_EVENT_RUNNING, "i-0bbbbbbbbbbbbbbb2", script, NULL, 0);
	struct gb_sim_event stop = event(GB_SIM_EVENT_SHUTTING_DOWN, "i-0bbbbbbbbbbbbbbb2", NULL, NULL, 0);
	gb_boot_t *b = NULL;
	char path[512], *text;
	pid_t pid;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_boot_create(dir, &b, &e), GB_E_OK);
	assert_int_equal(gb_boot_event(b, &run, &e), GB_E_OK);
	pid = gb_boot_pid(b, run.id);
	assert_true(pid > 0);
	snprintf(path, sizeof(path), "%s/i-0bbbbbbbbbbbbbbb2/pid", dir);
	text = wait_file(path);
	assert_int_equal(strtol(text, NULL, 10), pid);	/* no shell in between */
	free(text);
	assert_int_equal(getpgid(pid), pid);		/* its own session */
	assert_int_equal(getsid(pid), pid);
	usleep(100000);
	assert_int_equal(gb_boot_reap(b), 0);		/* still running */
	assert_int_equal(gb_boot_event(b, &stop, &e), GB_E_OK);
	for (int i = 0; i < 400 && gb_boot_pid(b, run.id); i++) {
		gb_boot_reap(b);
		usleep(25000);
	}
	assert_int_equal(gb_boot_pid(b, run.id), 0);
	assert_int_equal(kill(pid, 0), -1);		/* reaped: gone */
	snprintf(path, sizeof(path), "%s/i-0bbbbbbbbbbbbbbb2/got-term", dir);
	text = wait_file(path);
	assert_string_equal(text, "term\n");
	free(text);
	gb_boot_destroy(b);
}

static void test_destroy_stops_all(void **state)
{
	static const char script[] = "#!/bin/sh\necho $$ >pid.tmp; mv pid.tmp pid\n"
				     "while :; do sleep 0.05; done\n";
	struct gb_sim_event run = event(GB_SIM_EVENT_RUNNING, "i-0ccccccccccccccc3", script, NULL, 0);
	struct gb_sim_event bad = event(GB_SIM_EVENT_RUNNING, "i-0ddddddddddddddd4",
					"echo no shebang\n", NULL, 0);
	gb_boot_t *b = NULL;
	char path[512], *text;
	pid_t pid;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_boot_create(dir, &b, &e), GB_E_OK);
	assert_int_equal(gb_boot_event(b, &run, &e), GB_E_OK);
	pid = gb_boot_pid(b, run.id);
	snprintf(path, sizeof(path), "%s/i-0ccccccccccccccc3/pid", dir);
	free(wait_file(path));
	/* without #! there is no shell to fall back to: exit 127, said in the log */
	assert_int_equal(gb_boot_event(b, &bad, &e), GB_E_OK);
	snprintf(path, sizeof(path), "%s/i-0ddddddddddddddd4/boot.log", dir);
	text = wait_file(path);
	assert_non_null(strstr(text, "cannot execute user-data (it must start with #!)"));
	free(text);
	gb_boot_destroy(b);
	assert_int_equal(kill(pid, 0), -1);
}

static void test_no_dir(void **state)
{
	gb_boot_t *b = NULL;
	gb_error_t e;

	(void)state;
	assert_int_equal(gb_boot_create(NULL, &b, &e), GB_E_INVALID);
	assert_null(b);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_environment),
		T(test_terminate_stops_script),
		T(test_destroy_stops_all),
		T(test_no_dir),
	};

	gb_log_open("test_cloudsim_boot", &(struct gb_log_opts){ .level = GB_LOG_ERROR }, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
