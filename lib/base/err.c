/* err.c - struct err's messages (err.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

int
err_vset(struct err *e, const char *fmt, va_list ap)
{
	if (e != NULL)
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	return -1;
}

int
err_set(struct err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

int
err_prefix(struct err *e, const char *fmt, ...)
{
	char ctx[sizeof e->msg];
	size_t n, m, cap = sizeof e->msg - 1;
	va_list ap;

	if (e == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof ctx - 2, fmt, ap);
	va_end(ap);
	n = strlen(ctx);		/* at most cap - 2: ": " fits after it */
	m = strnlen(e->msg, cap);
	if (n + 2 + m > cap)
		m = cap - n - 2;	/* the message's tail is cut */
	memmove(e->msg + n + 2, e->msg, m);
	memcpy(e->msg, ctx, n);
	memcpy(e->msg + n, ": ", 2);
	e->msg[n + 2 + m] = '\0';
	return -1;
}
