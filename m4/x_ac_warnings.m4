##*****************************************************************************
#  SYNOPSIS:
#    X_AC_WARNINGS
#
#  DESCRIPTION:
#    The warning set of STYLE.md, probed one flag at a time so an older
#    compiler still builds.  --enable-werror adds -Werror (CI does).
#    -Wno-format-truncation: bounded snprintf that truncates is deliberate
#    (log lines, error detail); -Wno-missing-field-initializers: designated
#    initializers leave the rest zero on purpose.  Each -Wno-X is probed
#    by its positive form (X_AC_CHECK_CFLAG, m4/x_ac_check_cflag.m4).
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
    X_AC_CHECK_CFLAG([$f], [GB_WARN_CFLAGS="$GB_WARN_CFLAGS $f"], [], [-Werror])
  done
  AS_IF([test "$x_ac_werror" = yes], [GB_WARN_CFLAGS="$GB_WARN_CFLAGS -Werror"])
  AC_SUBST([GB_WARN_CFLAGS])
])
