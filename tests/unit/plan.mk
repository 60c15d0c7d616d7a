# plan.mk - libplan unit tests (candidates, validator, plan JSON, memory,
# heuristic) and the pure parts of liborch (client tokens, user data)

GB_UNIT_TESTS += test_plan
test_plan_SOURCES = test_plan.c
test_plan_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(LIBCRYPTO_CFLAGS)
test_plan_LDADD = $(liborch) $(libplan) $(libstate) $(libcloud) $(libconf) \
	$(libcommon) $(SQLITE_LIBS) $(YAML_LIBS) $(CURL_LIBS) $(LIBCRYPTO_LIBS) \
	$(JANSSON_LIBS) $(LIBXML2_LIBS) $(GB_UNIT_LIBS)
