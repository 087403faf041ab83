/*
 * err.h - the library's one error convention.  A function that can fail
 * takes a struct err * last and, on failure, fills it and returns -1 (or
 * NULL); the caller adds its context with err_prefix on the way up, and
 * only a command (lib/cli, cmd/) prints it and exits.
 */
#ifndef ERR_H
#define ERR_H

struct err {
	char	 msg[512];
};

/* Set e's message (printf format); returns -1.  e may be NULL. */
int	 err_set(struct err *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Put "CONTEXT: " (printf format) before e's message; returns -1. */
int	 err_prefix(struct err *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
