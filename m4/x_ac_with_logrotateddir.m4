##*****************************************************************************
#  SYNOPSIS:
#    X_AC_WITH_LOGROTATEDDIR
#
#  DESCRIPTION:
#    --with-logrotateddir=DIR: where etc/logrotate.d/gpuburst is installed;
#    default ${sysconfdir}/logrotate.d (with --sysconfdir=/etc that is where
#    logrotate reads it).  --without-logrotateddir (or =no) installs none.
#    Sets and substitutes logrotateddir; AM_CONDITIONAL WITH_LOGROTATEDDIR.
#
#  USAGE:
#    X_AC_WITH_LOGROTATEDDIR
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_WITH_LOGROTATEDDIR], [
  AC_ARG_WITH([logrotateddir],
    AS_HELP_STRING([--with-logrotateddir=DIR],
      [logrotate configuration directory (default: SYSCONFDIR/logrotate.d; no: none)]),
    [x_ac_logrotateddir="$withval"], [x_ac_logrotateddir=yes])
  AC_MSG_CHECKING([for the logrotate directory])
  AS_CASE(["$x_ac_logrotateddir"],
    [no], [logrotateddir=""],
    [yes|""], [logrotateddir='${sysconfdir}/logrotate.d'],
    [/*], [logrotateddir="$x_ac_logrotateddir"],
    [AC_MSG_RESULT([failed])
     AC_MSG_ERROR([--with-logrotateddir needs an absolute directory, or no])])
  AC_MSG_RESULT([${logrotateddir:-none}])
  AC_SUBST([logrotateddir])
  AM_CONDITIONAL([WITH_LOGROTATEDDIR], [test -n "$logrotateddir"])
])
