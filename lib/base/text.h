/*
 * text.h - text from input (names, metadata, file names, source texts)
 * written so that it cannot drive a terminal.
 */
#ifndef TEXT_H
#define TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Write s[n] to fp with its control characters (C0, DEL, and UTF-8's C1,
 * U+0080..U+009F) as \xHH escapes, as ls -b and git quote names. */
void	 text_put(FILE *fp, const char *s, size_t n);

#endif
