/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * svg.c - gpuburstctl: a small SVG writer into a gb_buf
 */
#include "config.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gb_util.h"
#include "svg.h"

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */
#define ELLIPSIS "\xe2\x80\xa6"		/* U+2026 */

/*
 * The length of the well-formed UTF-8 character at [p] (RFC 3629: no
 * overlong form, no surrogate, at most U+10FFFF), 0 when there is none.
 * OUT *cp its code point.
 */
static size_t utf8_next(const unsigned char *p, unsigned *cp)
{
	size_t n;
	unsigned c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0)
		n = 2, c = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, c = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* XML 1.0 Char, less what a renderer would fold anyway (tab, CR, LF). */
static bool xml_char(unsigned c)
{
	return c >= 0x20 && c != 0xfffe && c != 0xffff;
}

/* One character of [s] escaped into [b] (NULL: only measure).  RET bytes read. */
static size_t esc_one(struct gb_buf *b, const char *s)
{
	unsigned c = 0;
	size_t n = utf8_next((const unsigned char *)s, &c);

	if (!b)
		return n ? n : 1;
	if (n == 0) {
		gb_buf_puts(b, REPLACEMENT);
		return 1;
	}
	switch (c) {
	case '&': gb_buf_puts(b, "&amp;"); break;
	case '<': gb_buf_puts(b, "&lt;"); break;
	case '>': gb_buf_puts(b, "&gt;"); break;
	case '"': gb_buf_puts(b, "&quot;"); break;
	case '\'': gb_buf_puts(b, "&apos;"); break;
	case '\t': case '\n': case '\r': gb_buf_putc(b, ' '); break;
	default:
		if (xml_char(c))
			gb_buf_append(b, s, n);
		else
			gb_buf_puts(b, REPLACEMENT);
	}
	return n;
}

size_t ctl_svg_len(const char *s)
{
	size_t k = 0;

	while (s && *s) {
		s += esc_one(NULL, s);
		k++;
	}
	return k;
}

size_t ctl_svg_esc(struct gb_buf *b, const char *s, size_t max)
{
	size_t len = ctl_svg_len(s), keep = len, k;

	if (max && len > max)
		keep = max - 1;		/* room for the ellipsis */
	for (k = 0; k < keep; k++)
		s += esc_one(b, s);
	if (keep < len) {
		gb_buf_puts(b, ELLIPSIS);
		k++;
	}
	return k;
}

size_t ctl_svg_fit(double width, double px)
{
	double n = px > 0 ? width / (px * CTL_SVG_CHAR_EM) : 0;

	return n >= 1 ? (size_t)n : 0;
}

/*****************************************************************************
 *  Elements
 *****************************************************************************/

void ctl_svg_begin(struct gb_buf *b, int width, int height, const char *title, double px)
{
	gb_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		      "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		      "font-family=\"DejaVu Sans Mono, monospace\" font-size=\"%.1f\">\n<title>",
		      width, height, width, height, px);
	ctl_svg_esc(b, title, 0);
	gb_buf_printf(b, "</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		      "fill=\"#ffffff\"/>\n", width, height);
}

void ctl_svg_end(struct gb_buf *b)
{
	gb_buf_puts(b, "</svg>\n");
}

static void paint(struct gb_buf *b, const char *fill, const char *stroke, bool dash)
{
	gb_buf_puts(b, " fill=\"");
	ctl_svg_esc(b, fill ? fill : "none", 0);
	gb_buf_putc(b, '"');
	if (stroke) {
		gb_buf_puts(b, " stroke=\"");
		ctl_svg_esc(b, stroke, 0);
		gb_buf_puts(b, dash ? "\" stroke-dasharray=\"3 2\"" : "\"");
	}
}

/* Close an element: with a <title> child when there is a tooltip. */
static void close_tip(struct gb_buf *b, const char *name, const char *tip)
{
	if (!tip) {
		gb_buf_puts(b, "/>\n");
		return;
	}
	gb_buf_puts(b, "><title>");
	ctl_svg_esc(b, tip, 0);
	gb_buf_printf(b, "</title></%s>\n", name);
}

void ctl_svg_rect(struct gb_buf *b, double x, double y, double w, double h, const char *fill,
		  const char *stroke, bool dash, const char *tip)
{
	gb_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x, y,
		      w > 0 ? w : 0, h > 0 ? h : 0);
	paint(b, fill, stroke, dash);
	close_tip(b, "rect", tip);
}

void ctl_svg_line(struct gb_buf *b, double x1, double y1, double x2, double y2,
		  const char *stroke, double width, bool dash)
{
	gb_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		      "stroke-width=\"%.1f\"", x1, y1, x2, y2, width);
	paint(b, NULL, stroke ? stroke : "#000000", dash);
	gb_buf_puts(b, "/>\n");
}

void ctl_svg_poly(struct gb_buf *b, const double *xy, size_t n, const char *fill,
		  const char *stroke, const char *tip)
{
	gb_buf_puts(b, "<polygon points=\"");
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(b, "%s%.1f,%.1f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
	gb_buf_putc(b, '"');
	paint(b, fill, stroke, false);
	close_tip(b, "polygon", tip);
}

size_t ctl_svg_text(struct gb_buf *b, double x, double y, const char *anchor, double px,
		    const char *fill, bool bold, const char *text, size_t max)
{
	size_t k;

	gb_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
	if (anchor && strcmp(anchor, "start") != 0) {
		gb_buf_puts(b, " text-anchor=\"");
		ctl_svg_esc(b, anchor, 0);
		gb_buf_putc(b, '"');
	}
	if (px > 0)
		gb_buf_printf(b, " font-size=\"%.1f\"", px);
	if (fill) {
		gb_buf_puts(b, " fill=\"");
		ctl_svg_esc(b, fill, 0);
		gb_buf_putc(b, '"');
	}
	if (bold)
		gb_buf_puts(b, " font-weight=\"bold\"");
	gb_buf_putc(b, '>');
	k = ctl_svg_esc(b, text, max);
	gb_buf_puts(b, "</text>\n");
	return k;
}

/*****************************************************************************
 *  The file
 *****************************************************************************/

gb_err_t ctl_svg_check_path(const char *file, gb_error_t *err)
{
	char copy[PATH_MAX];
	const char *dir;
	struct stat sb;

	if (!file || !*file)
		return gb_errorf(err, GB_E_INVALID, "no file name (\"-\" is standard output)");
	if (strcmp(file, "-") == 0)
		return GB_E_OK;
	if (gb_strlcpy(copy, file, sizeof(copy)) >= sizeof(copy))
		return gb_errorf(err, GB_E_INVALID, "%.64s...: the path is too long", file);
	if (file[strlen(file) - 1] == '/')
		return gb_errorf(err, GB_E_INVALID, "%s: a directory, not a file name", file);
	if (stat(file, &sb) == 0) {
		if (S_ISDIR(sb.st_mode))
			return gb_errorf(err, GB_E_INVALID, "%s is a directory, not a file", file);
		if (!S_ISREG(sb.st_mode))
			return gb_errorf(err, GB_E_INVALID, "%s is %s: only a regular file is "
					 "replaced (\"-\" writes to standard output)", file,
					 gb_file_kind(sb.st_mode));
	}
	dir = dirname(copy);
	if (stat(dir, &sb) != 0)
		return gb_errorf(err, errno == ENOENT || errno == ENOTDIR ? GB_E_NOTFOUND
									  : GB_E_IO,
				 "cannot write %s: directory %s: %s", file, dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return gb_errorf(err, GB_E_NOTFOUND, "cannot write %s: %s is not a directory",
				 file, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return gb_errorf(err, errno == EACCES ? GB_E_PERM : GB_E_IO,
				 "cannot write %s: directory %s: %s", file, dir, strerror(errno));
	return GB_E_OK;
}

gb_err_t ctl_svg_save(const char *file, const struct gb_buf *b, gb_error_t *err)
{
	gb_err_t rc;
	mode_t mask;

	if (gb_buf_failed(b))
		return gb_errorf(err, GB_E_NOMEM, "out of memory drawing the picture");
	if ((rc = ctl_svg_check_path(file, err)))
		return rc;
	if (strcmp(file, "-") == 0) {
		if (fwrite(b->data, 1, b->len, stdout) != b->len || fflush(stdout) != 0)
			return gb_errorf(err, GB_E_IO, "standard output: %s", strerror(errno));
		return GB_E_OK;
	}
	mask = umask(0);
	umask(mask);
	return gb_file_replace(file, b->data, b->len, 0666 & ~mask, err);
}
