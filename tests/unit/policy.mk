# policy.mk - libpolicy unit tests (gating, decisions, expiry, authorization,
# notify, and the slurm.conf reader the policy uses)

GB_UNIT_TESTS += test_policy
test_policy_SOURCES = test_policy.c testutil.c testutil.h
test_policy_CPPFLAGS = $(GB_UNIT_CPPFLAGS) $(JANSSON_CFLAGS)
test_policy_LDADD = $(libpolicy) $(libslurmif) $(libstate) $(libconf) $(libcommon) \
	$(SQLITE_LIBS) $(YAML_LIBS) $(JANSSON_LIBS) $(GB_UNIT_LIBS)
