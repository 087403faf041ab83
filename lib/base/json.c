/*
 * json.c - JSON strings out, a JSON cursor in (json.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

void
json_put_string(FILE *fp, const char *s)
{
	putc('"', fp);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(fp, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(fp, "\\u%04x", *s);
		else
			putc(*s, fp);
	putc('"', fp);
}

int
json_peek(struct json *j)
{
	while (j->p < j->end && strchr(" \t\r\n", *j->p))
		j->p++;
	return j->p < j->end ? (unsigned char)*j->p : 0;
}

int
json_expect(struct json *j, int c)
{
	int got = json_peek(j);

	if (got != c)
		return err_set(&j->err, "'%c' expected, found %s", c, got ? (char[]){ (char)got, 0 } :
		    "the end");
	j->p++;
	return 0;
}

int
json_begin(struct json *j, int open)
{
	if (json_expect(j, open) < 0)
		return -1;
	if (json_peek(j) != (open == '{' ? '}' : ']'))
		return 1;
	j->p++;
	return 0;
}

int
json_next(struct json *j, int close)
{
	int c = json_peek(j);

	if (c != ',' && c != close)
		return err_set(&j->err, "',' or '%c' expected", close);
	j->p++;
	return c == ',';
}

/* Four hex digits at p into *u; 0 or -1. */
static int
hex4(const char *p, const char *end, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++, p++) {
		if (p == end || !isxdigit((unsigned char)*p))
			return -1;
		*u = *u * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0' :
		    tolower((unsigned char)*p) - 'a' + 10);
	}
	return 0;
}

int
json_string(struct json *j, char *buf, size_t len)
{
	size_t n = 0;

	if (json_expect(j, '"') < 0)
		return -1;
	while (j->p < j->end && *j->p != '"') {
		char out[4];
		int k = 1;
		unsigned u, lo;

		out[0] = *j->p++;
		if ((unsigned char)out[0] < 0x20)
			return err_set(&j->err, "a control character in a string");
		if (out[0] == '\\') {
			if (j->p == j->end)
				break;
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *e = *j->p ? strchr(from, *j->p) : NULL;
			if (e != NULL) {
				out[0] = to[e - from];
				j->p++;
			} else if (*j->p != 'u')
				return err_set(&j->err, "bad escape '\\%c'", *j->p);
			else {
				if (hex4(j->p + 1, j->end, &u) < 0)
					return err_set(&j->err, "bad \\u escape");
				j->p += 5;
				if (u >= 0xd800 && u < 0xdc00) {
					if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' ||
					    hex4(j->p + 2, j->end, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
						return err_set(&j->err, "a lone surrogate in \\u escapes");
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
					j->p += 6;
				} else if (u >= 0xdc00 && u < 0xe000)
					return err_set(&j->err, "a lone surrogate in \\u escapes");
				if (u == 0)
					return err_set(&j->err, "a NUL in a string");
				if (u < 0x80)
					out[0] = (char)u;
				else if (u < 0x800) {
					out[0] = (char)(0xc0 | u >> 6);
					out[1] = (char)(0x80 | (u & 0x3f));
					k = 2;
				} else if (u < 0x10000) {
					out[0] = (char)(0xe0 | u >> 12);
					out[1] = (char)(0x80 | (u >> 6 & 0x3f));
					out[2] = (char)(0x80 | (u & 0x3f));
					k = 3;
				} else {
					out[0] = (char)(0xf0 | u >> 18);
					out[1] = (char)(0x80 | (u >> 12 & 0x3f));
					out[2] = (char)(0x80 | (u >> 6 & 0x3f));
					out[3] = (char)(0x80 | (u & 0x3f));
					k = 4;
				}
			}
		}
		if (buf == NULL)
			continue;
		if (n + k >= len)
			return err_set(&j->err, "a string longer than %zu bytes", len - 1);
		memcpy(buf + n, out, (size_t)k);
		n += k;
	}
	if (j->p == j->end)
		return err_set(&j->err, "a string without its end");
	j->p++;
	if (buf != NULL)
		buf[n] = '\0';
	return 0;
}

/* Past the digits at p, before end. */
static const char *
digits(const char *p, const char *end)
{
	while (p < end && isdigit((unsigned char)*p))
		p++;
	return p;
}

/* The end of the JSON number at p, before end: -? (0 | [1-9][0-9]*)
 * (. [0-9]+)? ([eE] [+-]? [0-9]+)?; or NULL. */
static const char *
number_end(const char *p, const char *end)
{
	const char *q;

	p += p < end && *p == '-';
	if ((q = p < end && *p == '0' ? p + 1 : digits(p, end)) == p)
		return NULL;
	if (q < end && *q == '.') {
		p = q + 1;
		if ((q = digits(p, end)) == p)
			return NULL;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		p = q + 1 + (q + 1 < end && (q[1] == '+' || q[1] == '-'));
		if ((q = digits(p, end)) == p)
			return NULL;
	}
	return q;
}

int
json_number(struct json *j, double *v)
{
	const char *d, *e;
	char *got;

	json_peek(j);
	d = j->p + (j->p < j->end && *j->p == '-');
	if (j->nonfinite && (strncmp(d, "nan", 3) == 0 || strncmp(d, "inf", 3) == 0)) {
		*v = *d == 'n' ? NAN : d > j->p ? -INFINITY : INFINITY;
		j->p = d + 3;
		return 0;
	}
	/* strtod takes more than JSON (hex, "1."): its end must be the
	 * grammar's */
	if ((e = number_end(j->p, j->end)) == NULL || (*v = strtod(j->p, &got), got != e))
		return err_set(&j->err, "a number expected");
	if (!isfinite(*v) && !j->nonfinite)
		return err_set(&j->err, "a number past a double's range");
	j->p = e;
	return 0;
}

/* json_skip at nesting depth. */
static int
skip(struct json *j, int depth)
{
	double v;
	int c = json_peek(j), close = c == '{' ? '}' : ']', more;

	if (depth > 64)
		return err_set(&j->err, "values nested more than 64 deep");

	if (c == '"')
		return json_string(j, NULL, 0);
	if (c == '{' || c == '[') {
		for (more = json_begin(j, c); more == 1; more = json_next(j, close))
			if ((c == '{' && (json_string(j, NULL, 0) < 0 ||
			    json_expect(j, ':') < 0)) || skip(j, depth + 1) < 0)
				return -1;
		return more;
	}
	for (const char *w = "true\0false\0null\0"; *w; w += strlen(w) + 1)
		if ((size_t)(j->end - j->p) >= strlen(w) && memcmp(j->p, w, strlen(w)) == 0) {
			j->p += strlen(w);
			return 0;
		}
	return json_number(j, &v);
}

int
json_skip(struct json *j)
{
	return skip(j, 0);
}
