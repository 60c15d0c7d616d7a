# state.mk - libstate unit tests (the test also talks to SQLite directly to
# edit and inspect files behind the library's back)

GB_UNIT_TESTS += test_state
test_state_SOURCES = test_state.c
test_state_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(SQLITE_CFLAGS)
test_state_LDADD = $(libstate) $(libcommon) $(SQLITE_LIBS) $(GB_UNIT_LIBS)
