##*****************************************************************************
#  SYNOPSIS:
#    X_AC_SQLITE
#
#  DESCRIPTION:
#    Finds SQLite3 (Debian: libsqlite3-dev), used for the state file (WAL, user_version migrations).
#    --with-sqlite3=PATH when given, else the pkg-config module "sqlite3 >= 3.31", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets SQLITE_CFLAGS, SQLITE_LIBS.
#
#  USAGE:
#    X_AC_SQLITE   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_SQLITE], [
  X_AC_PKG_DEP([SQLITE], [sqlite3], [sqlite3 >= 3.31], [sqlite3.h], [sqlite3], [sqlite3_open_v2], [libsqlite3-dev], [SQLite3])
])
