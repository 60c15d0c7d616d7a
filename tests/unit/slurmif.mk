# slurmif.mk - libslurmif unit tests: resume file (data cases under
# tests/data/resume), hostlists through libslurm, reasons, intent token;
# the slurm.conf generator

GB_UNIT_TESTS += test_slurmif
test_slurmif_SOURCES = test_slurmif.c
test_slurmif_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_slurmif_LDADD = $(libslurmif) $(libcommon) $(GB_UNIT_LIBS)

# the slurm.conf generator: pure (a config and a Slurm version in, text
# out), so libconf for the config and no libslurm
GB_UNIT_TESTS += test_slurmconf
test_slurmconf_SOURCES = test_slurmconf.c
test_slurmconf_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_slurmconf_LDADD = $(libslurmif) $(libconf) $(libcommon) $(YAML_LIBS) $(GB_UNIT_LIBS)
