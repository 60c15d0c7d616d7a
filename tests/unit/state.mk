# state.mk - libstate unit tests: test_state, and test_state_retention for
# the deletes (prune, forget, vacuum); both also talk to SQLite directly to
# edit and inspect files behind the library's back

GB_UNIT_TESTS += test_state
test_state_SOURCES = test_state.c
test_state_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)

GB_UNIT_TESTS += test_state_retention
test_state_retention_SOURCES = test_state_retention.c
test_state_retention_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_retention_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)
