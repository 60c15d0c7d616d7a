##*****************************************************************************
#  SYNOPSIS:
#    X_AC_YAML
#
#  DESCRIPTION:
#    Finds libyaml (Debian: libyaml-dev), used for gpuburst.yaml and cloudsim scenarios, with line:column marks.
#    --with-yaml=PATH when given, else the pkg-config module "yaml-0.1 >= 0.2",
#    else a plain header/link test (see x_ac_pkg_dep.m4).  Sets YAML_CFLAGS, YAML_LIBS.
#
#  USAGE:
#    X_AC_YAML   (in configure.ac, "Checks for libraries")
##*****************************************************************************

AC_DEFUN_ONCE([X_AC_YAML], [
  X_AC_PKG_DEP([YAML], [yaml], [yaml-0.1 >= 0.2], [yaml.h], [yaml], [yaml_parser_initialize], [libyaml-dev], [libyaml])
])
