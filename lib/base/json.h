/*
 * json.h - the little JSON vitpipe writes and reads back: strings written
 * with the escapes JSON needs, and a cursor over a JSON text (vtool's
 * header.json) that reads strings and numbers and skips any value.
 *
 * Readers return -1 and leave a message in j->err (err.h).
 */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Write s (UTF-8) to fp as a JSON string: quoted, '"' '\' and control
 * characters escaped. */
void	 json_put_string(FILE *fp, const char *s);

struct json {
	const char *p, *end;	/* the text not read yet; *end is a NUL */
	int	 nonfinite;	/* numbers may be nan, inf, -inf too, as
				   printf writes them (vit-train's log) */
	struct err err;
};

/* Skip white space; the next character, or 0 at the end of the text. */
int	 json_peek(struct json *j);
/* Read the character c (after white space).  0, or -1. */
int	 json_expect(struct json *j, int c);
/* Read the '[' or '{' open: 1 when an element follows, 0 when the
 * matching close does (read past: empty).  Or -1. */
int	 json_begin(struct json *j, int open);
/* After an element of an array or object that close ends: 1 when a ','
 * follows (another element), 0 when close does (read past).  Or -1. */
int	 json_next(struct json *j, int close);
/* Read a string into buf[len] as UTF-8 (escapes resolved, no NUL
 * allowed), or only check it when buf is NULL (any length).  0, or -1. */
int	 json_string(struct json *j, char *buf, size_t len);
/* Read a number, finite unless j->nonfinite.  0, or -1. */
int	 json_number(struct json *j, double *v);
/* Read past any one value.  0, or -1. */
int	 json_skip(struct json *j);

#endif
