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
	# End of GB_INCLUDES

GB_DEFS = \
	-DGB_SYSCONFDIR=\"$(sysconfdir)\" \
	-DGB_STATE_DIR=\"$(GB_STATE_DIR)\" \
	-DGB_LIBEXECDIR=\"$(libexecdir)\" \
	-DGB_SBINDIR=\"$(sbindir)\" \
	# End of GB_DEFS

libcommon = $(top_builddir)/src/libcommon/libgbcommon.la
libconf = $(top_builddir)/src/libconf/libgbconf.la
libstate = $(top_builddir)/src/libstate/libgbstate.la
libpolicy = $(top_builddir)/src/libpolicy/libgbpolicy.la
libcloud = $(top_builddir)/src/libcloud/libgbcloud.la
libcloudsim = $(top_builddir)/src/cloudsim/libcloudsim.la
