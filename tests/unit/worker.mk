# worker.mk - libworker unit tests: reconcile's NOTICE from Slurm's reasons
# (the nodes given to the pass: no Slurm, no cloud)

GB_UNIT_TESTS += test_reconcile
test_reconcile_SOURCES = test_reconcile.c teststate.c teststate.h testutil.c testutil.h
test_reconcile_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
test_reconcile_LDADD = $(GB_WORKER_LIBS) $(GB_UNIT_LIBS)
