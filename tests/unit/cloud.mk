# cloud.mk - libcloud unit tests (SigV4, HTTP seam, credentials, EC2 client)

GB_CLOUD_TEST_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(LIBCRYPTO_CFLAGS) $(MICROHTTPD_CFLAGS)
GB_CLOUD_TEST_LIBS = $(libcloud) $(libcommon) $(GB_UNIT_LIBS)

GB_UNIT_TESTS += test_sigv4
test_sigv4_SOURCES = test_sigv4.c
test_sigv4_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_sigv4_LDADD = $(GB_CLOUD_TEST_LIBS)

GB_UNIT_TESTS += test_http
test_http_SOURCES = test_http.c testproxy.c testproxy.h testsrv.c testsrv.h
test_http_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_http_LDADD = $(GB_CLOUD_TEST_LIBS) $(MICROHTTPD_LIBS) $(LIBCRYPTO_LIBS)

GB_UNIT_TESTS += test_creds
test_creds_SOURCES = test_creds.c testproxy.c testproxy.h testsrv.c testsrv.h
test_creds_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_creds_LDADD = $(GB_CLOUD_TEST_LIBS) $(MICROHTTPD_LIBS)

GB_UNIT_TESTS += test_seal
test_seal_SOURCES = test_seal.c
test_seal_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_seal_LDADD = $(GB_CLOUD_TEST_LIBS) $(LIBCRYPTO_LIBS)

GB_UNIT_TESTS += test_ec2_xml
test_ec2_xml_SOURCES = test_ec2_xml.c
test_ec2_xml_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS) $(JANSSON_CFLAGS)
test_ec2_xml_LDADD = $(GB_CLOUD_TEST_LIBS) $(JANSSON_LIBS)

GB_UNIT_TESTS += test_ec2
test_ec2_SOURCES = test_ec2.c testsrv.c testsrv.h
test_ec2_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS)
test_ec2_LDADD = $(GB_CLOUD_TEST_LIBS) $(MICROHTTPD_LIBS)

# SigV4 cross-check with Debian's python3-botocore (exit 77 without it).
GB_UNIT_TESTS += test_sigv4_botocore
test_sigv4_botocore_SOURCES = test_sigv4_botocore.c
test_sigv4_botocore_CPPFLAGS = $(GB_CLOUD_TEST_CPPFLAGS) $(JANSSON_CFLAGS)
test_sigv4_botocore_LDADD = $(GB_CLOUD_TEST_LIBS) $(JANSSON_LIBS)
