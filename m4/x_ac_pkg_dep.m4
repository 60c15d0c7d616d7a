##*****************************************************************************
#  SYNOPSIS:
#    X_AC_PKG_DEP(VAR, WITH-NAME, PKG-MODULE, HEADER, LIB, FUNC, DEBIAN-PKG,
#                 DESCRIPTION, [REQUIRED=yes])
#
#  DESCRIPTION:
#    The one mechanism every dependency check of gpuburst goes through.
#    1. --with-WITH-NAME=PATH: use PATH/include and PATH/lib (or lib64) and
#       verify HEADER and FUNC in LIB by a compile and a link test.
#    2. otherwise pkg-config PKG-MODULE (PKG_CHECK_MODULES).
#    3. otherwise a plain header + link test on the default search paths.
#    On success VAR_CFLAGS and VAR_LIBS are AC_SUBSTed and HAVE_VAR is set to
#    "yes".  When the library is missing and REQUIRED is "yes", configure stops
#    with a message naming the Debian package that provides it; when REQUIRED
#    is "no" HAVE_VAR is "no" and the caller decides (AM_CONDITIONAL).
#    --without-WITH-NAME is refused for required dependencies.
#
#  USAGE:
#    X_AC_PKG_DEP([JANSSON], [jansson], [jansson >= 2.10], [jansson.h],
#                 [jansson], [json_loads], [libjansson-dev], [Jansson])
##*****************************************************************************

AC_DEFUN([X_AC_PKG_DEP], [
  m4_pushdef([_req], m4_default([$9], [yes]))
  AC_ARG_WITH([$2],
    AS_HELP_STRING([--with-$2=PATH], [prefix where $8 is installed (default: pkg-config)]),
    [x_ac_with_$1="$withval"], [x_ac_with_$1=check])
  HAVE_$1=no
  AS_CASE(["$x_ac_with_$1"],
    [no], [AS_IF([test "_req" = yes],
                 [AC_MSG_ERROR([$8 is required; --without-$2 is not supported])])],
    [check|yes], [
      PKG_CHECK_MODULES([$1], [$3], [HAVE_$1=yes], [
        x_ac_save_LIBS="$LIBS"
        AC_CHECK_HEADER([$4], [
          AC_CHECK_LIB([$5], [$6], [HAVE_$1=yes; $1_CFLAGS=""; $1_LIBS="-l$5"])])
        LIBS="$x_ac_save_LIBS"])],
    [
      x_ac_save_CPPFLAGS="$CPPFLAGS"; x_ac_save_LIBS="$LIBS"; x_ac_save_LDFLAGS="$LDFLAGS"
      x_ac_libdir="$x_ac_with_$1/lib"
      AS_IF([test -d "$x_ac_with_$1/lib64"], [x_ac_libdir="$x_ac_with_$1/lib64"])
      CPPFLAGS="$CPPFLAGS -I$x_ac_with_$1/include"
      LDFLAGS="$LDFLAGS -L$x_ac_libdir"
      AS_UNSET([ac_cv_header_]AS_TR_SH([$4]))
      AC_CHECK_HEADER([$4], [
        AC_CHECK_LIB([$5], [$6], [
          HAVE_$1=yes
          $1_CFLAGS="-I$x_ac_with_$1/include"
          $1_LIBS="-L$x_ac_libdir -Wl,-rpath,$x_ac_libdir -l$5"])])
      CPPFLAGS="$x_ac_save_CPPFLAGS"; LIBS="$x_ac_save_LIBS"; LDFLAGS="$x_ac_save_LDFLAGS"])
  AS_IF([test "$HAVE_$1" != yes && test "$x_ac_with_$1" != no], [
    AS_IF([test "_req" = yes || test "$x_ac_with_$1" != check],
      [AC_MSG_ERROR([$8 not found (need $4 and lib$5).
  On Debian/Ubuntu: apt-get install $7
  Or point configure at it: --with-$2=PATH])],
      [AC_MSG_WARN([$8 not found (apt-get install $7); the parts that need it are skipped])])])
  AC_SUBST([$1_CFLAGS])
  AC_SUBST([$1_LIBS])
  m4_popdef([_req])
])
