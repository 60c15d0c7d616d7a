# cloudsim.mk - gpuburst-cloudsim unit tests (scenario parser, simulated
# cloud, faults, EC2 API layer, boot hook)

GB_CLOUDSIM_TEST_LIBS = $(libcloudsim) $(libconf) $(libcloud) $(libcommon) $(GB_UNIT_LIBS) \
	$(CURL_LIBS) $(YAML_LIBS) $(JANSSON_LIBS) $(MICROHTTPD_LIBS) $(LIBCRYPTO_LIBS)
GB_CLOUDSIM_TEST_CPPFLAGS = $(GB_UNIT_CPPFLAGS) -I$(top_srcdir)/src/cloudsim

GB_UNIT_TESTS += test_cloudsim_scenario
test_cloudsim_scenario_SOURCES = test_cloudsim_scenario.c
test_cloudsim_scenario_CPPFLAGS = $(GB_CLOUDSIM_TEST_CPPFLAGS)
test_cloudsim_scenario_LDADD = $(GB_CLOUDSIM_TEST_LIBS)

GB_UNIT_TESTS += test_cloudsim_sim
test_cloudsim_sim_SOURCES = test_cloudsim_sim.c
test_cloudsim_sim_CPPFLAGS = $(GB_CLOUDSIM_TEST_CPPFLAGS)
test_cloudsim_sim_LDADD = $(GB_CLOUDSIM_TEST_LIBS)

GB_UNIT_TESTS += test_cloudsim_fault
test_cloudsim_fault_SOURCES = test_cloudsim_fault.c
test_cloudsim_fault_CPPFLAGS = $(GB_CLOUDSIM_TEST_CPPFLAGS)
test_cloudsim_fault_LDADD = $(GB_CLOUDSIM_TEST_LIBS)

GB_UNIT_TESTS += test_cloudsim_api
test_cloudsim_api_SOURCES = test_cloudsim_api.c
test_cloudsim_api_CPPFLAGS = $(GB_CLOUDSIM_TEST_CPPFLAGS) $(LIBXML2_CFLAGS)
test_cloudsim_api_LDADD = $(GB_CLOUDSIM_TEST_LIBS) $(LIBXML2_LIBS)

GB_UNIT_TESTS += test_cloudsim_boot
test_cloudsim_boot_SOURCES = test_cloudsim_boot.c
test_cloudsim_boot_CPPFLAGS = $(GB_CLOUDSIM_TEST_CPPFLAGS)
test_cloudsim_boot_LDADD = $(GB_CLOUDSIM_TEST_LIBS)
