##*****************************************************************************
#  SYNOPSIS:
#    X_AC_SLURM
#
#  DESCRIPTION:
#    Finds Slurm's client library and headers (Debian: libslurm-dev), and the
#    directory slurmctld loads plugins from.  Slurm ships no pkg-config file,
#    so this is --with-slurm=PATH (PATH/include/slurm/slurm.h, PATH/lib/
#    libslurm.so) or the default search paths.
#
#    The programs link -lslurm (hostlists, node updates).  The job_submit
#    plugin only includes slurm/slurm.h and must NOT link -lslurm: it is
#    loaded into slurmctld, whose libslurmfull provides the symbols.
#
#    SLURM_VERSION_NUMBER of the headers is printed: the plugin must be
#    rebuilt for exactly the Slurm it is loaded into.  The libslurm API
#    differences of 22.05 .. 26.05 that gpuburst meets are configure checks
#    (HAVE_UPDATE_NODE_MSG_T_REASON_UID, HAVE_DECL_SLURM_FREE_CONF,
#    HAVE_SLURM_LOAD_JOB_STEP_ID, HAVE_RESV_DESC_MSG_T_COMMENT,
#    HAVE_RESERVE_INFO_T_COMMENT), used
#    in src/libslurmif/slurm_compat.h only.
#
#    The plugin goes to ${libdir}/slurm by default, as Slurm's and MUNGE's
#    own plugins do: `./configure --prefix=DIR && make install` writes only
#    under DIR.  --with-slurm-plugindir=DIR installs it where slurmctld loads
#    plugins from; --with-slurm-plugindir (=yes) takes the directory found on
#    this host (the first with auth_munge.so of /usr/lib/MULTIARCH/slurm-wlm
#    (Debian), /usr/lib64/slurm, /usr/lib/slurm, PATH/lib/slurm,
#    PATH/lib64/slurm), which configure also prints as a hint.
#    Sets SLURM_CPPFLAGS, SLURM_LDFLAGS, SLURM_LIBS, SLURM_PLUGINDIR,
#    SLURM_HOST_PLUGINDIR (empty when none was found), SLURM_VERSION_HEX.
#
#  USAGE:
#    X_AC_SLURM
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_SLURM], [
  AC_ARG_WITH([slurm],
    AS_HELP_STRING([--with-slurm=PATH], [prefix where Slurm's headers and libslurm are installed]),
    [x_ac_slurm_prefix="$withval"], [x_ac_slurm_prefix=check])
  AC_ARG_WITH([slurm-plugindir],
    AS_HELP_STRING([--with-slurm-plugindir@<:@=DIR@:>@],
      [where to install job_submit_gpuburst.so (default: LIBDIR/slurm; without DIR: the Slurm plugin directory of this host)]),
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR='${libdir}/slurm'])
  AS_IF([test "$x_ac_slurm_prefix" = no],
        [AC_MSG_ERROR([Slurm is required; --without-slurm is not supported])])
  SLURM_CPPFLAGS=""; SLURM_LDFLAGS=""
  AS_CASE(["$x_ac_slurm_prefix"], [check|yes], [], [
    SLURM_CPPFLAGS="-I$x_ac_slurm_prefix/include"
    x_ac_slurm_libdir="$x_ac_slurm_prefix/lib"
    AS_IF([test -d "$x_ac_slurm_prefix/lib64"], [x_ac_slurm_libdir="$x_ac_slurm_prefix/lib64"])
    SLURM_LDFLAGS="-L$x_ac_slurm_libdir -Wl,-rpath,$x_ac_slurm_libdir"])
  x_ac_save_CPPFLAGS="$CPPFLAGS"; x_ac_save_LDFLAGS="$LDFLAGS"; x_ac_save_LIBS="$LIBS"
  CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"; LDFLAGS="$LDFLAGS $SLURM_LDFLAGS"
  AC_CHECK_HEADER([slurm/slurm.h], [], [AC_MSG_ERROR([slurm/slurm.h not found.
  On Debian/Ubuntu: apt-get install libslurm-dev
  Or point configure at it: --with-slurm=PATH])])
  AC_CHECK_LIB([slurm], [slurm_hostlist_create], [SLURM_LIBS="-lslurm"],
    [AC_MSG_ERROR([libslurm not found (need slurm_hostlist_create in -lslurm).
  On Debian/Ubuntu: apt-get install libslurm-dev
  Or point configure at it: --with-slurm=PATH])])
  AC_COMPUTE_INT([x_ac_slurm_version], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>],
    [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER from slurm/slurm_version.h])])
  SLURM_VERSION_HEX=`printf '0x%06x' "$x_ac_slurm_version"`
  AC_MSG_CHECKING([Slurm version of the headers])
  AC_MSG_RESULT([$SLURM_VERSION_HEX])
  AS_IF([test "$x_ac_slurm_version" -lt 1443072],
        [AC_MSG_ERROR([Slurm $SLURM_VERSION_HEX is too old: gpuburst needs 22.05 or later])])
  # API differences between releases (src/libslurmif/slurm_compat.h): checked
  # in the headers, not by version number, so a backport is handled too.
  AC_CHECK_MEMBERS([update_node_msg_t.reason_uid], [], [], [[#include <slurm/slurm.h>]])
  # a reservation's Comment= (23.02)
  AC_CHECK_MEMBERS([resv_desc_msg_t.comment, reserve_info_t.comment], [], [],
    [[#include <slurm/slurm.h>]])
  AC_CHECK_DECLS([slurm_free_conf], [], [], [[#include <slurm/slurm.h>]])
  AC_CACHE_CHECK([whether slurm_load_job takes a slurm_step_id_t], [x_ac_cv_slurm_load_job_step_id],
    [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <slurm/slurm.h>]],
      [[job_info_msg_t *m = NULL; slurm_step_id_t s = SLURM_STEP_ID_INITIALIZER;
        s.job_id = 1; return slurm_load_job(&m, s, 0);]])],
      [x_ac_cv_slurm_load_job_step_id=yes], [x_ac_cv_slurm_load_job_step_id=no])])
  AS_IF([test "$x_ac_cv_slurm_load_job_step_id" = yes],
    [AC_DEFINE([HAVE_SLURM_LOAD_JOB_STEP_ID], [1], [Define to 1 if slurm_load_job() takes a slurm_step_id_t (26.05).])])
  CPPFLAGS="$x_ac_save_CPPFLAGS"; LDFLAGS="$x_ac_save_LDFLAGS"; LIBS="$x_ac_save_LIBS"
  AC_MSG_CHECKING([for the plugin directory of this host's Slurm])
  SLURM_HOST_PLUGINDIR=""
  x_ac_multiarch=`$CC -print-multiarch 2>/dev/null`
  for d in "/usr/lib/$x_ac_multiarch/slurm-wlm" /usr/lib64/slurm /usr/lib/slurm \
           "$x_ac_slurm_prefix/lib/slurm" "$x_ac_slurm_prefix/lib64/slurm"; do
    AS_IF([test -f "$d/auth_munge.so"], [SLURM_HOST_PLUGINDIR="$d"; break])
  done
  AC_MSG_RESULT([${SLURM_HOST_PLUGINDIR:-none found}])
  AS_CASE(["$SLURM_PLUGINDIR"],
    [yes|""], [AS_IF([test -z "$SLURM_HOST_PLUGINDIR"],
                 [AC_MSG_ERROR([--with-slurm-plugindir: no Slurm plugin directory found; give --with-slurm-plugindir=DIR])])
               SLURM_PLUGINDIR="$SLURM_HOST_PLUGINDIR"],
    [no], [AC_MSG_ERROR([the job_submit plugin is always built; --without-slurm-plugindir is not supported])],
    ['${libdir}'*|/*], [],
    [AC_MSG_ERROR([--with-slurm-plugindir needs an absolute directory])])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_LDFLAGS])
  AC_SUBST([SLURM_LIBS])
  AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_HOST_PLUGINDIR])
  AC_SUBST([SLURM_VERSION_HEX])
])
