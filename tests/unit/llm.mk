# llm.mk - the LLM planner (libplan's gb_llm.h) against scripted servers

GB_UNIT_TESTS += test_llm
test_llm_SOURCES = test_llm.c llmsrv.c llmsrv.h testproxy.c testproxy.h testsrv.c testsrv.h
test_llm_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(JANSSON_CFLAGS) $(MICROHTTPD_CFLAGS)
test_llm_LDADD = $(libplan) $(libstate) $(libcloud) $(libconf) $(libcommon) \
	$(GB_UNIT_LIBS) $(MICROHTTPD_LIBS) $(SQLITE_LIBS) $(YAML_LIBS) $(CURL_LIBS) \
	$(LIBCRYPTO_LIBS) $(JANSSON_LIBS) $(LIBXML2_LIBS)
