##*****************************************************************************
#  SYNOPSIS:
#    X_AC_CURL
#
#  DESCRIPTION:
#    Finds libcurl (Debian: libcurl4-openssl-dev), used for HTTP client for the cloud and LLM endpoints (only src/libcloud uses it).
#    --with-libcurl=PATH when given, else the pkg-config module "libcurl >= 7.74", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets CURL_CFLAGS, CURL_LIBS.
#
#  USAGE:
#    X_AC_CURL   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_CURL], [
  X_AC_PKG_DEP([CURL], [libcurl], [libcurl >= 7.74], [curl/curl.h], [curl], [curl_easy_init], [libcurl4-openssl-dev], [libcurl])
])
