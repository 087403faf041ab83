/* parse.c - numbers from text (parse.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"

int
parse_int(const char *arg, long long lo, long long hi, long long *v,
    struct err *why)
{
	char *end;

	errno = 0;
	*v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || *v < lo || *v > hi)
		return err_set(why, "not a whole number in [%lld, %lld]", lo, hi);
	return 0;
}

int
parse_num(const char *arg, double lo, double hi, double *v,
    struct err *why)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*v) || *v < lo || *v > hi)
		return err_set(why, "not a number in [%g, %g]", lo, hi);
	return 0;
}
