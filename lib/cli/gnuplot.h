/*
 * gnuplot.h - pictures drawn by gnuplot(1) (Debian's gnuplot-nox), as
 * vit-plot and vit-probe draw them: a script from memory, its data
 * inlined as datablocks; the picture, read whole from a pipe, is written
 * out only then, every write checked, so that a full disk or a gnuplot
 * that drew nothing leaves the previous file as it was.  Failures die
 * (cli.h).
 */
#ifndef GNUPLOT_H
#define GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

enum gp_format { GP_NONE, GP_PNG, GP_SVG, GP_PDF, GP_DUMB };

/* The format --format arg names (png, svg, pdf, dumb), or a usage error. */
int	 gp_format_opt(const char *arg);
/* The format of a picture to out (NULL or "-": stdout) asked as fmt
 * (GP_NONE: not asked): else the suffix of out (.png, .svg, .pdf; .txt
 * for text), else text.  A usage error when out's suffix names none; an
 * error when a PNG or PDF would go to a terminal. */
int	 gp_output_format(int fmt, const char *out);
/* --size WxH into *w, *h (10 .. 10000 each), or a usage error. */
void	 gp_size_opt(const char *arg, long *w, long *h);
/* The width in characters of a text picture to out: the terminal's, when
 * it goes to one, else 80. */
long	 gp_text_width(const char *out);
/* gnuplot's "set terminal" line for fmt at w x h: pixels (a PDF at 100
 * to the inch), characters for text. */
void	 gp_terminal(FILE *fp, int fmt, long w, long h);
/* s as a gnuplot string: single-quoted parts, each ' joined in as "'",
 * control characters as '?'. */
void	 gp_quote(FILE *fp, const char *s);
/* Run gnuplot on script[slen] and write its picture to out (NULL or "-":
 * stdout; else atomically), a text one tidied; die unless it succeeds
 * and draws something, with its last message. */
void	 gp_draw(const char *script, size_t slen, int fmt, const char *out);
/* Write data[len] to out as gp_draw writes a picture: whole, atomically
 * to a file; text tidied (no form feeds, leading empty lines or trailing
 * blanks, a newline at the end) when tidy. */
void	 gp_write(const char *data, size_t len, int tidy, const char *out);

#endif
