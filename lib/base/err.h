/*
 * err.h - the library's one error convention.  A function that can fail
 * takes a struct err * last and, on failure, fills it and returns -1 (or
 * NULL); the caller adds its context with err_prefix on the way up, and
 * only a command (lib/cli, cmd/) prints it and exits.  An object that
 * reports the failures of its own calls (a stream, a safetensors file, a
 * JSON cursor, a log being read) keeps a struct err, its err member,
 * filled the same way.
 */
#ifndef ERR_H
#define ERR_H

#include <stdarg.h>

struct err {
	char	 msg[512];
};

/* Set e's message (printf format); returns -1.  e may be NULL. */
int	 err_set(struct err *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* err_set with a va_list, for a function of printf's kind. */
int	 err_vset(struct err *e, const char *fmt, va_list ap);

/* Put "CONTEXT: " (printf format) before e's message; returns -1. */
int	 err_prefix(struct err *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
