##*****************************************************************************
#  SYNOPSIS:
#    X_AC_OPENSSL
#
#  DESCRIPTION:
#    Finds OpenSSL libcrypto (Debian: libssl-dev), used for SHA-256, HMAC-SHA256 for SigV4; random bytes.
#    --with-openssl=PATH when given, else the pkg-config module "libcrypto >= 1.1.1", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets LIBCRYPTO_CFLAGS, LIBCRYPTO_LIBS.
#
#  USAGE:
#    X_AC_OPENSSL   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_OPENSSL], [
  X_AC_PKG_DEP([LIBCRYPTO], [openssl], [libcrypto >= 1.1.1], [openssl/evp.h], [crypto], [EVP_DigestInit_ex], [libssl-dev], [OpenSSL libcrypto])
])
