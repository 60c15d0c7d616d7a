##*****************************************************************************
#  SYNOPSIS:
#    X_AC_LIBXML2
#
#  DESCRIPTION:
#    Finds libxml2 (Debian: libxml2-dev), used for EC2 Query API responses (namespace-agnostic parsing).
#    --with-libxml2=PATH when given, else the pkg-config module "libxml-2.0 >= 2.9", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets LIBXML2_CFLAGS, LIBXML2_LIBS.
#
#  USAGE:
#    X_AC_LIBXML2   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_LIBXML2], [
  X_AC_PKG_DEP([LIBXML2], [libxml2], [libxml-2.0 >= 2.9], [libxml/parser.h], [xml2], [xmlReadMemory], [libxml2-dev], [libxml2])
])
