##*****************************************************************************
#  SYNOPSIS:
#    X_AC_SANITIZER
#
#  DESCRIPTION:
#    --enable-sanitizer=LIST, LIST a comma-separated subset of address,
#    undefined, thread (address and thread exclude each other).  Adds
#    -fsanitize=LIST -fno-omit-frame-pointer (and -fno-sanitize-recover=all,
#    so UBSan findings fail the test) to CFLAGS and LDFLAGS.  Sets
#    GB_SAN_CFLAGS, GB_SAN_LDFLAGS and the conditional WITH_SANITIZER (the
#    tests that preload or exec foreign programs consult it).
#
#  USAGE:
#    X_AC_SANITIZER
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_SANITIZER], [
  AC_ARG_ENABLE([sanitizer],
    AS_HELP_STRING([--enable-sanitizer=LIST], [build with -fsanitize=LIST (address,undefined | thread)]),
    [x_ac_san="$enableval"], [x_ac_san=no])
  GB_SAN_CFLAGS=""; GB_SAN_LDFLAGS=""
  AS_CASE(["$x_ac_san"],
    [no], [],
    [yes], [x_ac_san="address,undefined"])
  AS_IF([test "$x_ac_san" != no], [
    for s in `echo "$x_ac_san" | tr ',' ' '`; do
      AS_CASE(["$s"], [address|undefined|thread|leak], [],
              [AC_MSG_ERROR([--enable-sanitizer: unknown sanitizer "$s" (use address, undefined, thread, leak)])])
    done
    AS_CASE([",$x_ac_san,"], [*,address,*thread*|*thread*,address,*],
            [AC_MSG_ERROR([--enable-sanitizer: address and thread cannot be combined])])
    GB_SAN_CFLAGS="-fsanitize=$x_ac_san -fno-omit-frame-pointer -fno-sanitize-recover=all"
    GB_SAN_LDFLAGS="-fsanitize=$x_ac_san"
    x_ac_save_CFLAGS="$CFLAGS"; x_ac_save_LDFLAGS="$LDFLAGS"
    CFLAGS="$CFLAGS $GB_SAN_CFLAGS"; LDFLAGS="$LDFLAGS $GB_SAN_LDFLAGS"
    AC_MSG_CHECKING([whether $CC supports -fsanitize=$x_ac_san])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [return 0;])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no]); AC_MSG_ERROR([$CC cannot build with -fsanitize=$x_ac_san])])
    CFLAGS="$x_ac_save_CFLAGS"; LDFLAGS="$x_ac_save_LDFLAGS"])
  AC_SUBST([GB_SAN_CFLAGS])
  AC_SUBST([GB_SAN_LDFLAGS])
  AM_CONDITIONAL([WITH_SANITIZER], [test "$x_ac_san" != no])
])
