/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - gpuburst-cloudsim: options, pid file, signals, start and stop
 *
 * The main thread owns the signals (blocked everywhere else) and the
 * simulator's clock tick: sigtimedwait() with a short timeout, so due state
 * changes and boot hooks happen even when no request comes in.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cloudsim.h"
#include "gb_log.h"
#include "gb_util.h"
#include "schema.h"
#include "server.h"

#define PROG "gpuburst-cloudsim"
#define DEFAULT_LISTEN "127.0.0.1:8773"
#define TICK_MS 50

struct opts {
	const char *listen;
	const char *scenario;
	const char *pid_file;
	const char *port_file;
	const char *log_file;
	const char *boot_dir;
	enum gb_log_level level;
	double time_scale;
	bool allow_any;
	bool check;
	bool manual_clock;
	bool dump_schema;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " --scenario FILE [OPTION]...\n"
		"       " PROG " --dump-schema\n"
		"An EC2-compatible capacity simulator (EC2 Query API, SigV4) on loopback.\n"
		"\n"
		"  -s, --scenario FILE      the simulated cloud (YAML; see gpuburst-cloudsim(8))\n"
		"  -l, --listen ADDR:PORT   listen address (default " DEFAULT_LISTEN ");\n"
		"                           port 0 picks a free port\n"
		"      --allow-non-loopback accept a --listen address outside 127.0.0.0/8, ::1\n"
		"      --pid-file FILE      write the pid once listening; removed at exit\n"
		"      --port-file FILE     write the bound port once listening\n"
		"      --log FILE           log file (default: standard error)\n"
		"      --log-level LEVEL    error, warning, notice, info (default), debug\n"
		"      --boot-dir DIR       per-instance files of `boot: exec`\n"
		"                           (default: the scenario's boot_dir, else\n"
		"                           $TMPDIR/gpuburst-cloudsim-boot.PID)\n"
		"      --time-scale X       simulated seconds per real second (default 1)\n"
		"      --manual-clock       simulated time moves only by POST /_sim/time\n"
		"      --check              validate the scenario and exit\n"
		"      --dump-schema        print the EC2 parameters it accepts (JSON), exit\n"
		"  -h, --help               this text\n"
		"  -V, --version            the version\n"
		"\n"
		"Prints \"listening on ADDR:PORT\" on standard output once bound.\n"
		"Control interface (no signature needed): /_sim/state, /_sim/capacity,\n"
		"/_sim/fault, /_sim/time, /_sim/health on the same address.\n");
}

static gb_err_t parse_opts(int argc, char **argv, struct opts *o, gb_error_t *err)
{
	enum { O_PID = 256, O_PORT, O_LOG, O_LEVEL, O_BOOT, O_SCALE, O_ANY, O_CHECK,
	       O_MANUAL, O_SCHEMA };
	static const struct option longs[] = {
		{ "scenario", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'l' },
		{ "pid-file", required_argument, NULL, O_PID },
		{ "port-file", required_argument, NULL, O_PORT },
		{ "log", required_argument, NULL, O_LOG },
		{ "log-level", required_argument, NULL, O_LEVEL },
		{ "boot-dir", required_argument, NULL, O_BOOT },
		{ "time-scale", required_argument, NULL, O_SCALE },
		{ "allow-non-loopback", no_argument, NULL, O_ANY },
		{ "check", no_argument, NULL, O_CHECK },
		{ "manual-clock", no_argument, NULL, O_MANUAL },
		{ "dump-schema", no_argument, NULL, O_SCHEMA },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->listen = DEFAULT_LISTEN;
	o->level = GB_LOG_INFO;
	o->time_scale = 1.0;
	while ((c = getopt_long(argc, argv, "s:l:hV", longs, NULL)) != -1) {
		switch (c) {
		case 's': o->scenario = optarg; break;
		case 'l': o->listen = optarg; break;
		case O_PID: o->pid_file = optarg; break;
		case O_PORT: o->port_file = optarg; break;
		case O_LOG: o->log_file = optarg; break;
		case O_BOOT: o->boot_dir = optarg; break;
		case O_ANY: o->allow_any = true; break;
		case O_CHECK: o->check = true; break;
		case O_MANUAL: o->manual_clock = true; break;
		case O_SCHEMA: o->dump_schema = true; break;
		case O_LEVEL:
			if (gb_log_level_parse(optarg, &o->level))
				return gb_errorf(err, GB_E_USAGE, "--log-level: unknown level '%s'", optarg);
			break;
		case O_SCALE:
			if (gb_parse_double(optarg, &o->time_scale) || o->time_scale <= 0 ||
			    o->time_scale > 10000)
				return gb_errorf(err, GB_E_USAGE, "--time-scale: a number in (0, 10000], not '%s'",
						 optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf(PROG " (" PACKAGE_NAME ") " PACKAGE_VERSION "\n");
			exit(0);
		default:
			return gb_errorf(err, GB_E_USAGE, "try '" PROG " --help'");
		}
	}
	if (optind < argc)
		return gb_errorf(err, GB_E_USAGE, "unexpected argument '%s'", argv[optind]);
	if (o->dump_schema)
		return GB_E_OK;		/* needs no scenario */
	if (!o->scenario)
		return gb_errorf(err, GB_E_USAGE, "--scenario FILE is required");
	return GB_E_OK;
}

/* Write [text] to [path] via a temporary file and rename: never half-written. */
static gb_err_t write_atomic(const char *path, const char *text, gb_error_t *err)
{
	char tmp[4096];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return gb_errorf(err, GB_E_IO, "cannot create %s: %s", tmp, strerror(errno));
	if (write(fd, text, len) != (ssize_t)len || close(fd) != 0 || rename(tmp, path) != 0) {
		gb_errorf(err, GB_E_IO, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return GB_E_IO;
	}
	return GB_E_OK;
}

/* --dump-schema: the parameter tables every request is checked against. */
static int dump_schema(void)
{
	char *s = gb_schema_dump();

	if (!s) {
		fprintf(stderr, PROG ": out of memory\n");
		return (int)GB_E_NOMEM;
	}
	if (puts(s) == EOF || fflush(stdout) != 0) {
		fprintf(stderr, PROG ": cannot write the schema: %s\n", strerror(errno));
		free(s);
		return (int)GB_E_IO;
	}
	free(s);
	return 0;
}

/* Remove the pid file only if it is still ours. */
static void remove_pid_file(const char *path)
{
	char *text = NULL;
	size_t len;

	if (!path || gb_file_read(path, 64, &text, &len, NULL) != GB_E_OK)
		return;
	if (strtol(text, NULL, 10) == (long)getpid())
		unlink(path);
	free(text);
}

static gb_err_t open_log(const struct opts *o, gb_error_t *err)
{
	struct gb_log_opts lo = { 0 };
	gb_err_t rc;

	lo.file = o->log_file ? o->log_file : "/dev/stderr";
	lo.level = o->level;
	lo.no_stderr = true;	/* stderr is the file, or not wanted */
	rc = gb_log_open(PROG, &lo, err);
	if (rc && !o->log_file) {
		/* stderr cannot be reopened (a socket?): the terminal copy only */
		lo.file = NULL;
		lo.no_stderr = false;
		rc = gb_log_open(PROG, &lo, err);
	}
	return rc;
}

static void summary(const struct gb_scenario *sc)
{
	size_t azs = 0, subnets = 0, pools = 0;

	for (size_t r = 0; r < sc->nregions; r++) {
		azs += sc->regions[r].nazs;
		for (size_t z = 0; z < sc->regions[r].nazs; z++) {
			subnets += sc->regions[r].azs[z].nsubnets;
			pools += sc->regions[r].azs[z].npools;
		}
	}
	printf("%s: ok: %zu regions, %zu availability zones, %zu subnets, %zu offerings, %zu capacity events, boot %s\n",
	       sc->path, sc->nregions, azs, subnets, pools, sc->nevents,
	       sc->boot == GB_SC_BOOT_EXEC ? "exec" : "none");
}

static void pick_boot_dir(const struct opts *o, const struct gb_scenario *sc,
			  char *buf, size_t n)
{
	const char *tmp = getenv("TMPDIR");

	if (o->boot_dir)
		gb_strlcpy(buf, o->boot_dir, n);
	else if (sc->boot_dir)
		gb_strlcpy(buf, sc->boot_dir, n);
	else
		snprintf(buf, n, "%s/gpuburst-cloudsim-boot.%ld", tmp && *tmp ? tmp : "/tmp",
			 (long)getpid());
}

/* Signals are handled by the main thread only: block them before threads. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void run_loop(struct gb_cloudsim *cs, const sigset_t *set)
{
	struct timespec ts = { 0, TICK_MS * 1000000L };

	for (;;) {
		int sig = sigtimedwait(set, NULL, &ts);

		if (sig == SIGTERM || sig == SIGINT) {
			gb_log_notice("stopping signal=%s", sig == SIGTERM ? "TERM" : "INT");
			return;
		}
		if (sig == SIGHUP)
			gb_log_info("ignoring signal=HUP");
		gb_cloudsim_tick(cs);	/* timeouts and SIGCHLD alike */
	}
}

/* Port file, then pid file: a test that sees the pid file can read both. */
static gb_err_t announce(const struct opts *o, const struct gb_simsrv_addr *a,
			 unsigned port, gb_error_t *err)
{
	char text[64];
	gb_err_t rc;

	snprintf(text, sizeof(text), "%u\n", port);
	if (o->port_file && (rc = write_atomic(o->port_file, text, err)))
		return rc;
	snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (o->pid_file && (rc = write_atomic(o->pid_file, text, err)))
		return rc;
	printf("listening on %s%s%s:%u\n", a->v6 ? "[" : "", a->host, a->v6 ? "]" : "", port);
	fflush(stdout);
	gb_log_notice("listening addr=%s port=%u pid=%ld", a->host, port, (long)getpid());
	return GB_E_OK;
}

static gb_err_t serve(const struct opts *o, const struct gb_simsrv_addr *addr,
		      struct gb_scenario *sc, gb_error_t *err)
{
	struct gb_cloudsim *cs = NULL;
	gb_simsrv_t *srv = NULL;
	char boot_dir[4096];
	sigset_t set;
	gb_err_t rc;

	for (size_t i = 0; i < sc->ncreds; i++)
		gb_log_secret_add(sc->creds[i].secret_access_key);
	pick_boot_dir(o, sc, boot_dir, sizeof(boot_dir));
	block_signals(&set);
	if ((rc = gb_cloudsim_create(sc, boot_dir, o->time_scale, &cs, err)))
		goto out;
	cs->frozen = o->manual_clock;
	if ((rc = gb_simsrv_start(cs, addr, &srv, err)) ||
	    (rc = announce(o, addr, gb_simsrv_port(srv), err)))
		goto out;
	gb_log_notice("started scenario=%s seed=%llu boot=%s%s%s", cs->sc->path,
		      (unsigned long long)cs->sc->seed, cs->boot ? "exec" : "none",
		      cs->boot ? " boot_dir=" : "", cs->boot ? boot_dir : "");
	run_loop(cs, &set);
out:
	gb_simsrv_stop(srv);
	gb_cloudsim_destroy(cs);
	remove_pid_file(o->pid_file);
	return rc;
}

int main(int argc, char **argv)
{
	struct gb_simsrv_addr addr;
	struct opts o;
	struct gb_scenario *sc = NULL;
	gb_error_t err;
	gb_err_t rc;

	memset(&o, 0, sizeof(o));
	gb_stdio_sanitize();
	if ((rc = parse_opts(argc, argv, &o, &err)))
		goto fail;
	if (o.dump_schema)
		return dump_schema();
	if ((rc = gb_simsrv_parse_addr(o.listen, o.allow_any, &addr, &err)) ||
	    (rc = gb_scenario_load(o.scenario, &sc, &err)))
		goto fail;
	if (o.check) {
		summary(sc);
		gb_scenario_destroy(sc);
		return 0;
	}
	if ((rc = open_log(&o, &err))) {
		gb_scenario_destroy(sc);
		goto fail;
	}
	if ((rc = serve(&o, &addr, sc, &err))) {
		if (o.log_file)	/* else the log is stderr: said below */
			gb_log_error("exiting error=%s detail=%s", gb_err_name(rc), GB_LOG_Q(err.text));
		goto fail;
	}
	gb_log_close();
	return 0;
fail:
	fprintf(stderr, PROG ": %s\n", err.text);
	gb_log_close();
	return (int)rc;
}
