##*****************************************************************************
#  SYNOPSIS:
#    X_AC_DEBUG
#
#  DESCRIPTION:
#    --enable-debug: build with -O0 -g3 and keep assert() active; otherwise
#    -O2 -g and NDEBUG is NOT defined either (our asserts check invariants
#    that must hold in production too; they are cheap).  Sets GB_OPT_CFLAGS.
#
#  USAGE:
#    X_AC_DEBUG
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_DEBUG], [
  AC_ARG_ENABLE([debug],
    AS_HELP_STRING([--enable-debug], [build for debugging: -O0 -g3]),
    [x_ac_debug="$enableval"], [x_ac_debug=no])
  AS_IF([test "$x_ac_debug" = yes],
        [GB_OPT_CFLAGS="-O0 -g3"; AC_DEFINE([GB_DEBUG], [1], [Define for a debug build])],
        [GB_OPT_CFLAGS=""])
  AC_SUBST([GB_OPT_CFLAGS])
])
