##*****************************************************************************
#  SYNOPSIS:
#    X_AC_CMOCKA
#
#  DESCRIPTION:
#    Finds cmocka (Debian: libcmocka-dev), used only by the unit tests.
#    Optional: without it `make check` still runs, and every unit test exits
#    77 (skip) naming the missing package.  --with-cmocka (or =PATH) makes it
#    required, which is what CI does so that a skip can never hide a failure.
#    Sets CMOCKA_CFLAGS, CMOCKA_LIBS and the automake conditional HAVE_CMOCKA.
#
#  USAGE:
#    X_AC_CMOCKA
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_CMOCKA], [
  X_AC_PKG_DEP([CMOCKA], [cmocka], [cmocka >= 1.1], [cmocka.h], [cmocka],
               [_cmocka_run_group_tests], [libcmocka-dev], [cmocka], [no])
  AM_CONDITIONAL([HAVE_CMOCKA], [test "$HAVE_CMOCKA" = yes])
])
