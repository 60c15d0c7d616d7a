# state.mk - libstate unit tests: test_state, test_state_retention for the
# deletes (prune, forget, vacuum), test_state_capacity for schema 3 (the
# capacity kinds, the reservations cache, the migration from version 2) and
# test_state_agent for schema 4; all four also talk to SQLite directly to edit and inspect files behind
# the library's back (teststate.c: the fixture and that SQL, shared with
# test_reconcile; testutil.c: the shared helpers of every unit test)

GB_UNIT_TESTS += test_state
test_state_SOURCES = test_state.c teststate.c teststate.h testutil.c testutil.h
test_state_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)

GB_UNIT_TESTS += test_state_retention
test_state_retention_SOURCES = test_state_retention.c teststate.c teststate.h testutil.c \
	testutil.h
test_state_retention_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_retention_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)

GB_UNIT_TESTS += test_state_capacity
test_state_capacity_SOURCES = test_state_capacity.c teststate.c teststate.h testutil.c testutil.h
test_state_capacity_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_capacity_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)

# schema 4: the agent tag and the notice mark of instance records, the
# migration from version 3
GB_UNIT_TESTS += test_state_agent
test_state_agent_SOURCES = test_state_agent.c teststate.c teststate.h testutil.c testutil.h
test_state_agent_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_agent_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)

# gb_state_query: SQL written outside gpuburst (gpuburstctl ask) under guards
GB_UNIT_TESTS += test_state_query
test_state_query_SOURCES = test_state_query.c teststate.c teststate.h testutil.c testutil.h
test_state_query_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_query_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)
