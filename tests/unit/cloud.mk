# cloud.mk - libcloud unit tests (SigV4, HTTP seam, credentials, EC2 client)

GB_CLOUD_TEST_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(LIBCRYPTO_CFLAGS) $(MICROHTTPD_CFLAGS)
GB_CLOUD_TEST_LIBS = $(libcloud) $(libcommon) $(GB_UNIT_LIBS)

GB_UNIT_TESTS += test_sigv4
test_sigv4_SOURCES = test_sigv4.c
test_sigv4_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_sigv4_LDADD = $(GB_CLOUD_TEST_LIBS)

GB_UNIT_TESTS += test_http
test_http_SOURCES = test_http.c testsrv.c testsrv.h
test_http_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_http_LDADD = $(GB_CLOUD_TEST_LIBS) $(MICROHTTPD_LIBS) $(LIBCRYPTO_LIBS)

GB_UNIT_TESTS += test_creds
test_creds_SOURCES = test_creds.c testsrv.c testsrv.h
test_creds_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_creds_LDADD = $(GB_CLOUD_TEST_LIBS) $(MICROHTTPD_LIBS)
