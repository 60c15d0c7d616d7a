##*****************************************************************************
#  SYNOPSIS:
#    X_AC_OPENSSL
#
#  DESCRIPTION:
#    Finds OpenSSL 3 libcrypto (Debian: libssl-dev), used for SHA-256, HMAC-SHA256 for SigV4;
#    random bytes; X25519, HKDF, RSA-OAEP and AES-GCM for the sealed munge key (gb_seal.c, which
#    uses the 3.0 EVP API: EVP_KDF, EVP_PKEY_is_a).
#    --with-openssl=PATH when given, else the pkg-config module "libcrypto >= 3.0", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets LIBCRYPTO_CFLAGS, LIBCRYPTO_LIBS.
#
#  USAGE:
#    X_AC_OPENSSL   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_OPENSSL], [
  X_AC_PKG_DEP([LIBCRYPTO], [openssl], [libcrypto >= 3.0], [openssl/evp.h], [crypto], [EVP_KDF_fetch], [libssl-dev], [OpenSSL libcrypto])
])
