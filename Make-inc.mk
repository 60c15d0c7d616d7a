# Make-inc.mk - included by every Makefile.am: one place for flags and paths.

AM_CFLAGS = \
	$(GB_STD_CFLAGS) \
	$(GB_WARN_CFLAGS) \
	$(GB_OPT_CFLAGS) \
	$(GB_SAN_CFLAGS) \
	# End of AM_CFLAGS

AM_LDFLAGS = \
	$(GB_SAN_LDFLAGS) \
	# End of AM_LDFLAGS

GB_INCLUDES = \
	-I$(top_srcdir)/src/libcommon \
	-I$(top_srcdir)/src/libconf \
	-I$(top_srcdir)/src/libstate \
	-I$(top_srcdir)/src/libpolicy \
	-I$(top_srcdir)/src/libcloud \
	-I$(top_srcdir)/src/libslurmif \
	-I$(top_srcdir)/src/libplan \
	-I$(top_srcdir)/src/liborch \
	-I$(top_srcdir)/src/libenqueue \
	-I$(top_srcdir)/src/libworker \
	# End of GB_INCLUDES

GB_DEFS = \
	-DGB_SYSCONFDIR=\"$(sysconfdir)\" \
	-DGB_STATE_DIR=\"$(GB_STATE_DIR)\" \
	-DGB_LIBEXECDIR=\"$(libexecdir)\" \
	-DGB_SBINDIR=\"$(sbindir)\" \
	-DGB_PKGLIBEXECDIR=\"$(pkglibexecdir)\" \
	-DGB_PKGDATADIR=\"$(pkgdatadir)\" \
	# End of GB_DEFS

libcommon = $(top_builddir)/src/libcommon/libgbcommon.la
libconf = $(top_builddir)/src/libconf/libgbconf.la
libstate = $(top_builddir)/src/libstate/libgbstate.la
libpolicy = $(top_builddir)/src/libpolicy/libgbpolicy.la
libcloud = $(top_builddir)/src/libcloud/libgbcloud.la
libslurmif = $(top_builddir)/src/libslurmif/libgbslurmif.la
libenqueue = $(top_builddir)/src/libenqueue/libgbenqueue.la
libworker = $(top_builddir)/src/libworker/libgbworker.la
libplan = $(top_builddir)/src/libplan/libgbplan.la
liborch = $(top_builddir)/src/liborch/libgborch.la
libcloudsim = $(top_builddir)/src/cloudsim/libcloudsim.la

# The programs slurmctld runs (gpuburst-resume, -suspend, -resume-fail):
# the fast path only, no cloud client (start-up time is per library).
GB_PROG_LIBS = \
	$(libenqueue) \
	$(libpolicy) \
	$(libslurmif) \
	$(libstate) \
	$(libconf) \
	$(libcommon) \
	$(SLURM_LDFLAGS) $(SLURM_LIBS) \
	$(SQLITE_LIBS) $(JANSSON_LIBS) $(YAML_LIBS) \
	# End of GB_PROG_LIBS

# The worker and everything that runs it (gpuburst-worker, gpuburstctl).
GB_WORKER_LIBS = \
	$(libworker) \
	$(libenqueue) \
	$(libpolicy) \
	$(liborch) \
	$(libplan) \
	$(libslurmif) \
	$(libstate) \
	$(libcloud) \
	$(libconf) \
	$(libcommon) \
	$(SLURM_LDFLAGS) $(SLURM_LIBS) \
	$(SQLITE_LIBS) $(CURL_LIBS) $(LIBCRYPTO_LIBS) $(LIBXML2_LIBS) \
	$(JANSSON_LIBS) $(YAML_LIBS) \
	# End of GB_WORKER_LIBS

# The directory variables, filled in at make time: configure leaves them as
# "${prefix}/..." references that only make expands in full (and a user may
# override prefix on make's command line).  MUNGE's Make-inc.mk does the same.
# Templates (NAME.in) use @VERSION@, @DATE@ (GB_RELEASE_DATE of
# configure.ac), @prefix@, @sbindir@, @sysconfdir@, @pkglibexecdir@,
# @pkgdatadir@, @localstatedir@ and @statedir@ (the default state_dir).
substitute = $(SED) \
	-e 's|@VERSION[@]|$(VERSION)|g' \
	-e 's|@DATE[@]|$(GB_RELEASE_DATE)|g' \
	-e 's|@prefix[@]|$(prefix)|g' \
	-e 's|@sbindir[@]|$(sbindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' \
	-e 's|@pkgdatadir[@]|$(pkgdatadir)|g' \
	-e 's|@localstatedir[@]|$(localstatedir)|g' \
	-e 's|@statedir[@]|$(GB_STATE_DIR)|g' \
	# End of substitute

# The recipe of a rule "FILE: FILE.in Makefile": FILE from $(srcdir)/FILE.in,
# its directory made first (FILE may be "systemd/x.service").
gb_substitute_file = \
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(substitute) <$(srcdir)/$@.in >$@.tmp && mv $@.tmp $@
