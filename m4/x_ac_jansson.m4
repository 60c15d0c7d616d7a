##*****************************************************************************
#  SYNOPSIS:
#    X_AC_JANSSON
#
#  DESCRIPTION:
#    Finds Jansson (Debian: libjansson-dev), used for SLURM_RESUME_FILE, --json output, LLM wire formats.
#    --with-jansson=PATH when given, else the pkg-config module "jansson >= 2.10", else a
#    plain header/link test (see x_ac_pkg_dep.m4).  Sets JANSSON_CFLAGS, JANSSON_LIBS.
#
#  USAGE:
#    X_AC_JANSSON   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_JANSSON], [
  X_AC_PKG_DEP([JANSSON], [jansson], [jansson >= 2.10], [jansson.h], [jansson], [json_loads], [libjansson-dev], [Jansson])
])
