##*****************************************************************************
#  SYNOPSIS:
#    X_AC_WARNINGS
#
#  DESCRIPTION:
#    The warning set of STYLE.md, probed one flag at a time so an older
#    compiler still builds.  --enable-werror adds -Werror (CI does).
#    -Wno-format-truncation: bounded snprintf that truncates is deliberate
#    (log lines, error detail); -Wno-missing-field-initializers: designated
#    initializers leave the rest zero on purpose.
#    Sets GB_WARN_CFLAGS.
#
#  USAGE:
#    X_AC_WARNINGS
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_WARNINGS], [
  AC_ARG_ENABLE([werror],
    AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI)]),
    [x_ac_werror="$enableval"], [x_ac_werror=no])
  GB_WARN_CFLAGS=""
  for f in -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
           -Wpointer-arith -Wwrite-strings -Wundef -Winit-self \
           -Werror=implicit-function-declaration -Wno-missing-field-initializers \
           -Wno-format-truncation; do
    AX_CHECK_COMPILE_FLAG([$f], [GB_WARN_CFLAGS="$GB_WARN_CFLAGS $f"], [], [-Werror])
  done
  AS_IF([test "$x_ac_werror" = yes], [GB_WARN_CFLAGS="$GB_WARN_CFLAGS -Werror"])
  AC_SUBST([GB_WARN_CFLAGS])
])

# AX_CHECK_COMPILE_FLAG(FLAG, [ACTION-SUCCESS], [ACTION-FAILURE], [EXTRA-FLAGS])
# (a minimal form of the autoconf-archive macro, so bootstrap needs nothing extra)
AC_DEFUN([AX_CHECK_COMPILE_FLAG], [
  AS_VAR_PUSHDEF([CACHEVAR], [ax_cv_check_cflags_$4_$1])
  AC_CACHE_CHECK([whether $CC accepts $1], CACHEVAR, [
    ax_check_save_flags=$CFLAGS
    CFLAGS="$CFLAGS $4 $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM()], [AS_VAR_SET(CACHEVAR, [yes])], [AS_VAR_SET(CACHEVAR, [no])])
    CFLAGS=$ax_check_save_flags])
  AS_VAR_IF(CACHEVAR, yes, [m4_default([$2], :)], [m4_default([$3], :)])
  AS_VAR_POPDEF([CACHEVAR])
])
