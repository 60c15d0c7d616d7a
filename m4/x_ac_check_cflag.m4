##*****************************************************************************
#  SYNOPSIS:
#    X_AC_CHECK_CFLAG(FLAG, [ACTION-IF-ACCEPTED], [ACTION-IF-NOT], [EXTRA-FLAGS])
#
#  DESCRIPTION:
#    Whether $CC compiles an empty program with FLAG (and EXTRA-FLAGS, e.g.
#    -Werror, so that a merely warned-about flag counts as refused).
#
#    GCC accepts any unknown -Wno-X without a word (it only complains when
#    some other diagnostic is printed), so -Wno-X is probed by its positive
#    form -WX; the ACTIONs still see FLAG as given.  The result is cached per
#    FLAG and EXTRA-FLAGS.  Our own name: the autoconf-archive macro
#    AX_CHECK_COMPILE_FLAG is not shadowed, and bootstrap needs nothing extra.
#
#  USAGE:
#    X_AC_CHECK_CFLAG([-Wshadow], [CFLAGS="$CFLAGS -Wshadow"], [], [-Werror])
##*****************************************************************************

AC_DEFUN([X_AC_CHECK_CFLAG], [
  AS_VAR_PUSHDEF([x_ac_cflag_var], [x_ac_cv_cflag_$4_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], [x_ac_cflag_var], [
    x_ac_cflag_probe=`AS_ECHO(["$1"]) | sed -e 's/^-Wno-/-W/'`
    x_ac_cflag_save=$CFLAGS
    CFLAGS="$CFLAGS $4 $x_ac_cflag_probe"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM()],
      [AS_VAR_SET([x_ac_cflag_var], [yes])], [AS_VAR_SET([x_ac_cflag_var], [no])])
    CFLAGS=$x_ac_cflag_save])
  AS_VAR_IF([x_ac_cflag_var], [yes], [m4_default([$2], [:])], [m4_default([$3], [:])])
  AS_VAR_POPDEF([x_ac_cflag_var])
])
