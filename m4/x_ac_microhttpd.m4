##*****************************************************************************
#  SYNOPSIS:
#    X_AC_MICROHTTPD
#
#  DESCRIPTION:
#    Finds GNU libmicrohttpd (Debian: libmicrohttpd-dev), used for the gpuburst-cloudsim server and loopback test servers.
#    --with-libmicrohttpd=PATH when given, else the pkg-config module "libmicrohttpd >= 0.9.70", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets MICROHTTPD_CFLAGS, MICROHTTPD_LIBS.
#
#  USAGE:
#    X_AC_MICROHTTPD   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_MICROHTTPD], [
  X_AC_PKG_DEP([MICROHTTPD], [libmicrohttpd], [libmicrohttpd >= 0.9.70], [microhttpd.h], [microhttpd], [MHD_start_daemon], [libmicrohttpd-dev], [GNU libmicrohttpd])
])
