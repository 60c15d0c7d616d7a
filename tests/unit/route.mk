# route.mk - job_submit/gpuburst routing rules (plugins/job_submit_gpuburst/route.c)

libroute = $(top_builddir)/plugins/job_submit_gpuburst/libgbroute.la

GB_UNIT_TESTS += test_route
test_route_SOURCES = test_route.c
test_route_CPPFLAGS = $(GB_UNIT_CPPFLAGS) -I$(top_srcdir)/plugins/job_submit_gpuburst
test_route_LDADD = $(libroute) $(libconf) $(libcommon) $(YAML_LIBS) $(GB_UNIT_LIBS)
