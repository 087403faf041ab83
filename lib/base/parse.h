/*
 * parse.h - numbers from text (options, header keys), the whole text one
 * number in a range, or a rule that says why not.
 */
#ifndef PARSE_H
#define PARSE_H

#include "err.h"

/* A whole decimal number (strtoll's) or a finite float (strtod's) in
 * [lo, hi], the whole of arg, into *v: 0, or -1 with the rule it breaks in
 * why ("not a whole number in [1, 64]"), for a caller that names what arg
 * is. */
int	 parse_int(const char *arg, long long lo, long long hi, long long *v,
	    struct err *why);
int	 parse_num(const char *arg, double lo, double hi, double *v,
	    struct err *why);

#endif
