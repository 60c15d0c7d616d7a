# node.mk - gpuburst-node: node.yaml (libconf), the user data's node list,
# the nvidia-smi check, IMDS notices, the reasons and tag values

GB_UNIT_TESTS += test_node
test_node_SOURCES = test_node.c
test_node_CPPFLAGS = $(GB_UNIT_CPPFLAGS) -I$(top_srcdir)/src/node
test_node_LDADD = $(top_builddir)/src/node/libgbnode.la $(libcloud) $(libconf) $(libcommon) \
	$(CURL_LIBS) $(LIBCRYPTO_LIBS) $(LIBXML2_LIBS) $(JANSSON_LIBS) $(YAML_LIBS) \
	$(GB_UNIT_LIBS)
