# slurmif.mk - libslurmif unit tests: resume file (data cases under
# tests/data/resume), hostlists through libslurm, reasons, intent token

GB_UNIT_TESTS += test_slurmif
test_slurmif_SOURCES = test_slurmif.c
test_slurmif_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_slurmif_LDADD = $(libslurmif) $(libcommon) $(GB_UNIT_LIBS)
