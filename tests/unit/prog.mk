# prog.mk - libenqueue unit tests: nodes -> nodesets -> requests, approval
# policy in the enqueue, one-transaction enqueue

GB_UNIT_TESTS += test_prog
test_prog_SOURCES = test_prog.c testutil.c testutil.h
test_prog_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(JANSSON_CFLAGS)
test_prog_LDADD = $(GB_PROG_LIBS) $(GB_UNIT_LIBS)
