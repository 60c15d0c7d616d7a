# slurmif.mk - libslurmif unit tests: resume file (data cases under
# tests/data/resume), hostlists through libslurm, reasons, intent token;
# the slurm.conf generator; the Capacity Block plan

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

# the Capacity Block plan: pure (blocks, Slurm's reservations and nodes in,
# actions out); the reservation calls' argument checks need no controller
GB_UNIT_TESTS += test_slurm_cb
test_slurm_cb_SOURCES = test_slurm_cb.c
test_slurm_cb_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_slurm_cb_LDADD = $(libslurmif) $(libcommon) $(GB_UNIT_LIBS)
