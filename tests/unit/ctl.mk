# ctl.mk - gpuburstctl's SVG writer (src/gpuburstctl/svg.c: libcommon only,
# compiled in here, as the program's sources are no library): escaping,
# cutting, the frame, the output file checks and the atomic write

GB_UNIT_TESTS += test_svg
test_svg_SOURCES = test_svg.c testutil.c testutil.h ../../src/gpuburstctl/svg.c \
	../../src/gpuburstctl/svg.h
test_svg_CPPFLAGS = $(GB_UNIT_CPPFLAGS) -I$(top_srcdir)/src/gpuburstctl
test_svg_LDADD = $(libcommon) $(GB_UNIT_LIBS)
