# conf.mk - libconf unit tests (data-driven cases in tests/data/conf/)

GB_UNIT_TESTS += test_conf
test_conf_SOURCES = test_conf.c
test_conf_CPPFLAGS = $(GB_UNIT_CPPFLAGS)
test_conf_LDADD = $(libconf) $(libcommon) $(YAML_LIBS) $(GB_UNIT_LIBS)
