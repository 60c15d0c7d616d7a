##*****************************************************************************
#  SYNOPSIS:
#    X_AC_WITH_SYSTEMDUNITDIR
#
#  DESCRIPTION:
#    --with-systemdunitdir=DIR: where the systemd units (the reconcile
#    timer and service) are installed.  The default asks systemd's
#    pkg-config file (systemdsystemunitdir) with its prefixes set to
#    ${prefix}, so that the distribution's layout is kept under our prefix
#    ("${prefix}/lib/systemd/system" on Debian); without systemd.pc, or when
#    its answer would leave ${prefix}, it is ${prefix}/lib/systemd/system:
#    `make install` never writes outside the prefix unless told to.
#    --without-systemdunitdir (or =no) installs no units.
#    Sets and substitutes systemdunitdir; AM_CONDITIONAL WITH_SYSTEMDUNITDIR.
#
#  USAGE:
#    X_AC_WITH_SYSTEMDUNITDIR   (after PKG_PROG_PKG_CONFIG)
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_WITH_SYSTEMDUNITDIR], [
  AC_ARG_WITH([systemdunitdir],
    AS_HELP_STRING([--with-systemdunitdir=DIR],
      [systemd unit directory (default: PREFIX/lib/systemd/system, from systemd.pc; no: none)]),
    [x_ac_unitdir="$withval"], [x_ac_unitdir=yes])
  AC_MSG_CHECKING([for the systemd unit directory])
  AS_CASE(["$x_ac_unitdir"],
    [no], [systemdunitdir=""],
    [yes|""], [
      systemdunitdir=""
      AS_IF([test -n "$PKG_CONFIG"], [
        systemdunitdir=`$PKG_CONFIG --define-variable=prefix='${prefix}' \
          --define-variable=rootprefix='${prefix}' \
          --define-variable=root_prefix='${prefix}' \
          --variable=systemdsystemunitdir systemd 2>/dev/null`])
      AS_CASE(["$systemdunitdir"],
        ['${prefix}'/*], [],
        [systemdunitdir='${prefix}/lib/systemd/system'])],
    [/*], [systemdunitdir="$x_ac_unitdir"],
    [AC_MSG_RESULT([failed])
     AC_MSG_ERROR([--with-systemdunitdir needs an absolute directory, or no])])
  AC_MSG_RESULT([${systemdunitdir:-none}])
  AC_SUBST([systemdunitdir])
  AM_CONDITIONAL([WITH_SYSTEMDUNITDIR], [test -n "$systemdunitdir"])
])
