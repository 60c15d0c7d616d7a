/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_svg.c - gpuburstctl's SVG writer (src/gpuburstctl/svg.c): text
 * escaping, cutting to a width, the document's frame, the output file
 * checks and the atomic write
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gb_str.h"
#include "gb_util.h"
#include "svg.h"
#include "testutil.h"

/* RET how many entries [dir] has, besides . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* RET [s] as ctl_svg_esc() writes it with [max] (static buffer). */
static const char *esc(const char *s, size_t max)
{
	static char out[512];
	struct gb_buf b = GB_BUF_INIT;

	ctl_svg_esc(&b, s, max);
	assert_false(gb_buf_failed(&b));
	gb_strlcpy(out, gb_buf_str(&b), sizeof(out));
	gb_buf_free(&b);
	return out;
}

static void test_esc_markup(void **state)
{
	(void)state;
	assert_string_equal(esc("a & b < c > d \"e\" 'f'", 0),
			    "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;");
	assert_string_equal(esc("</text><script>x</script>", 0),
			    "&lt;/text&gt;&lt;script&gt;x&lt;/script&gt;");
	assert_string_equal(esc("&amp;", 0), "&amp;amp;");	/* not taken as an entity */
	assert_string_equal(esc("]]>", 0), "]]&gt;");
	assert_string_equal(esc("", 0), "");
	assert_string_equal(esc(NULL, 0), "");
	assert_int_equal(ctl_svg_len(NULL), 0);
}

static void test_esc_bytes(void **state)
{
	(void)state;
	/* well-formed UTF-8 passes: é, €, U+1F600 */
	assert_string_equal(esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_int_equal(ctl_svg_len("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), 8);
	/* controls: blanks for tab/CR/LF, U+FFFD for the rest */
	assert_string_equal(esc("a\tb\nc\rd", 0), "a b c d");
	assert_string_equal(esc("a\x01" "b\x1b" "c", 0), "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c");
	/* not UTF-8: a lone continuation, a cut sequence, an overlong '/', a
	 * surrogate, past U+10FFFF, U+FFFE */
	assert_string_equal(esc("\x80", 0), "\xef\xbf\xbd");
	assert_string_equal(esc("x\xe2\x82", 0), "x\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(esc("\xc0\xaf", 0), "\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(esc("\xed\xa0\x80", 0), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(esc("\xf4\x90\x80\x80", 0),
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(esc("\xef\xbf\xbe", 0), "\xef\xbf\xbd");
	assert_string_equal(esc("\xff<", 0), "\xef\xbf\xbd&lt;");
}

static void test_esc_cut(void **state)
{
	(void)state;
	assert_string_equal(esc("abcdef", 6), "abcdef");
	assert_string_equal(esc("abcdefg", 6), "abcde\xe2\x80\xa6");
	/* cut by characters, never inside one; an entity counts as one */
	assert_string_equal(esc("\xc3\xa9\xc3\xa9\xc3\xa9", 2), "\xc3\xa9\xe2\x80\xa6");
	assert_string_equal(esc("&&&&", 3), "&amp;&amp;\xe2\x80\xa6");
	assert_string_equal(esc("abc", 1), "\xe2\x80\xa6");
	assert_int_equal(ctl_svg_fit(61, 10), 10);	/* 0.61 em a character */
	assert_int_equal(ctl_svg_fit(5, 10), 0);
	assert_int_equal(ctl_svg_fit(-5, 10), 0);
}

static void test_document(void **state)
{
	struct gb_buf b = GB_BUF_INIT;
	double tri[] = { 0, 0, 4, 2, 0, 4 };

	(void)state;
	ctl_svg_begin(&b, 300, 200, "req <1> & \"2\"", 12);
	ctl_svg_rect(&b, 1, 2, 3, 4, "#2ca02c", NULL, false, "tip 'x' < y");
	ctl_svg_rect(&b, 1, 2, -3, 4, "#d62728", "#333333", true, NULL);
	ctl_svg_poly(&b, tri, 3, "#000000", NULL, NULL);
	assert_int_equal(ctl_svg_text(&b, 5, 6, "end", 10, "#111111", true, "a<b&c", 4), 4);
	ctl_svg_line(&b, 0, 0, 1, 1, NULL, 1, true);
	ctl_svg_end(&b);
	assert_false(gb_buf_failed(&b));
	assert_non_null(strstr(gb_buf_str(&b),
			       "width=\"300\" height=\"200\" viewBox=\"0 0 300 200\""));
	assert_non_null(strstr(gb_buf_str(&b), "<title>req &lt;1&gt; &amp; &quot;2&quot;</title>"));
	assert_non_null(strstr(gb_buf_str(&b), "<title>tip &apos;x&apos; &lt; y</title></rect>"));
	assert_non_null(strstr(gb_buf_str(&b), "width=\"0.0\" height=\"4.0\""));
	assert_non_null(strstr(gb_buf_str(&b), "stroke-dasharray=\"3 2\""));
	assert_non_null(strstr(gb_buf_str(&b), "points=\"0.0,0.0 4.0,2.0 0.0,4.0\""));
	assert_non_null(strstr(gb_buf_str(&b), "text-anchor=\"end\""));
	assert_non_null(strstr(gb_buf_str(&b), ">a&lt;b\xe2\x80\xa6</text>"));
	assert_null(strstr(gb_buf_str(&b), "a<b"));
	assert_true(strlen(gb_buf_str(&b)) > 7 &&
		    strcmp(gb_buf_str(&b) + strlen(gb_buf_str(&b)) - 7, "</svg>\n") == 0);
	gb_buf_free(&b);
}

static void test_paths(void **state)
{
	char dir[256], path[512], sub[600], fifo[600];
	struct gb_buf b = GB_BUF_INIT;
	gb_error_t e = { 0 };
	struct stat sb;
	char *data = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(tu_tmpdir(dir, sizeof(dir), "svg", path, sizeof(path), "t.svg"), 0);
	assert_int_equal(ctl_svg_check_path("-", &e), GB_E_OK);
	assert_int_equal(ctl_svg_check_path("", &e), GB_E_INVALID);
	assert_int_equal(ctl_svg_check_path(dir, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "is a directory"));
	snprintf(sub, sizeof(sub), "%s/", dir);
	assert_int_equal(ctl_svg_check_path(sub, &e), GB_E_INVALID);
	snprintf(sub, sizeof(sub), "%s/missing/t.svg", dir);
	assert_int_equal(ctl_svg_check_path(sub, &e), GB_E_NOTFOUND);
	assert_non_null(strstr(e.text, "/missing"));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(ctl_svg_check_path(fifo, &e), GB_E_INVALID);
	assert_non_null(strstr(e.text, "a FIFO"));
	snprintf(sub, sizeof(sub), "%s/fifo/t.svg", dir);
	assert_int_equal(ctl_svg_check_path(sub, &e), GB_E_NOTFOUND);

	/* the write: whole, then replaced whole; nothing else left behind */
	gb_buf_puts(&b, "<svg/>\n");
	assert_int_equal(ctl_svg_save(path, &b, &e), GB_E_OK);
	tu_ok(gb_file_read(path, 1024, &data, &len, &e), &e);
	assert_string_equal(data, "<svg/>\n");
	free(data);
	gb_buf_puts(&b, "<!-- more -->\n");
	assert_int_equal(ctl_svg_save(path, &b, &e), GB_E_OK);
	tu_ok(gb_file_read(path, 1024, &data, &len, &e), &e);
	assert_string_equal(data, "<svg/>\n<!-- more -->\n");
	free(data);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(ctl_svg_save(dir, &b, &e), GB_E_INVALID);
	snprintf(sub, sizeof(sub), "%s/missing/t.svg", dir);
	assert_int_equal(ctl_svg_save(sub, &b, &e), GB_E_NOTFOUND);
	assert_int_equal(entries(dir), 2);	/* t.svg, fifo: no temporary file */
	gb_buf_free(&b);
	tu_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_esc_markup),
		cmocka_unit_test(test_esc_bytes),
		cmocka_unit_test(test_esc_cut),
		cmocka_unit_test(test_document),
		cmocka_unit_test(test_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
