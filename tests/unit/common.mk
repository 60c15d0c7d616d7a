# common.mk - libcommon unit tests

GB_UNIT_TESTS += test_common
test_common_SOURCES = test_common.c
test_common_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_common_LDADD = $(libcommon) $(GB_UNIT_LIBS)
# counts read(2) calls: a file over its limit is refused before any
test_common_LDFLAGS = -Wl,--wrap=read
