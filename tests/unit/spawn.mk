# spawn.mk - libcommon's gb_spawn: programs and functions run with a
# deadline, output captured; the detached double fork

GB_UNIT_TESTS += test_spawn
test_spawn_SOURCES = test_spawn.c
test_spawn_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_spawn_LDADD = $(libcommon) $(GB_UNIT_LIBS)
