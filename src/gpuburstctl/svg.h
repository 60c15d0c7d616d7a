/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * svg.h - gpuburstctl: a small SVG writer into a gb_buf
 *
 * Enough SVG 1.1 for a timeline: rectangles, lines, polygons and text, each
 * with an optional tooltip (<title>).  Every text, attribute value and
 * tooltip goes through ctl_svg_esc(): whatever bytes a record holds (an
 * EC2 message, a reason), the document stays well-formed XML.  Coordinates
 * are user units = pixels.  Text is monospace, so that its width is known
 * without a font engine: CTL_SVG_CHAR_EM of the font size per character.
 *
 * Depends on libcommon only (the unit tests compile it alone).
 */
#ifndef GB_GPUBURSTCTL_SVG_H
#define GB_GPUBURSTCTL_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "gb_err.h"
#include "gb_str.h"

/* Width of one monospace character, in font sizes (DejaVu Sans Mono: 0.602). */
#define CTL_SVG_CHAR_EM 0.61

/*
 * Append [s] escaped for XML character data and attribute values: & < > "
 * and ' as entities; a byte that does not start a well-formed UTF-8
 * character, and a character XML 1.0 does not allow (controls other than
 * tab, U+FFFE, U+FFFF), as U+FFFD; tab, CR and LF as a blank.  At most
 * [max] characters (0: no limit); a longer text ends with U+2026 within
 * [max].  NULL appends nothing.  RET the characters appended.
 */
size_t ctl_svg_esc(struct gb_buf *b, const char *s, size_t max);

/* Characters of [s] as ctl_svg_esc() counts them (0 for NULL). */
size_t ctl_svg_len(const char *s);

/* How many characters of font size [px] fit in [width] pixels. */
size_t ctl_svg_fit(double width, double px);

/*
 * The document: an <svg> of [width] x [height] pixels with a white
 * background and [title] as its <title>; monospace text of [px] pixels
 * unless an element says otherwise.  End with ctl_svg_end().
 */
void ctl_svg_begin(struct gb_buf *b, int width, int height, const char *title, double px);
void ctl_svg_end(struct gb_buf *b);

/*
 * Shapes.  [fill] and [stroke] are colours ("#2ca02c") or NULL for none;
 * [dash] draws the stroke dashed; [tip] (NULL: none) is the tooltip.
 */
void ctl_svg_rect(struct gb_buf *b, double x, double y, double w, double h, const char *fill,
		  const char *stroke, bool dash, const char *tip);
void ctl_svg_line(struct gb_buf *b, double x1, double y1, double x2, double y2,
		  const char *stroke, double width, bool dash);
/* A closed polygon of [n] points ([xy]: x0 y0 x1 y1 ...). */
void ctl_svg_poly(struct gb_buf *b, const double *xy, size_t n, const char *fill,
		  const char *stroke, const char *tip);

/*
 * Text at ([x], [y]) (the baseline), [anchor] "start", "middle" or "end",
 * [px] its size (0: the document's), [fill] its colour (NULL: black),
 * [bold]; cut to [max] characters (0: no limit).  RET the characters
 * written.
 */
size_t ctl_svg_text(struct gb_buf *b, double x, double y, const char *anchor, double px,
		    const char *fill, bool bold, const char *text, size_t max);

/*
 * Check that [file] can be replaced by a picture, before anything is
 * computed: "-" (standard output) always can; otherwise its directory must
 * exist and be writable, and [file] must not exist or be a regular file.
 * RET GB_E_OK; GB_E_INVALID (empty; a directory; not a regular file),
 * GB_E_NOTFOUND (no such directory), GB_E_PERM (the directory is not
 * writable), with [err] naming the path.
 */
gb_err_t ctl_svg_check_path(const char *file, gb_error_t *err);

/*
 * Write [b] to [file]: "-" is standard output (flushed), anything else is
 * replaced atomically (gb_file_replace: a temporary file in the same
 * directory, fsync, rename), mode 0644 less the umask.  A failure leaves
 * no part of the picture behind.  RET GB_E_OK, GB_E_NOMEM (the buffer
 * failed), ctl_svg_check_path()'s, GB_E_IO.
 */
gb_err_t ctl_svg_save(const char *file, const struct gb_buf *b, gb_error_t *err);

#endif /* GB_GPUBURSTCTL_SVG_H */
