/*
 * pe_conv.c - position conventions, their POS and CLSPOS text, and the
 * affine map between two of them (pe_conv.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"
#include "vt.h"

static const char *const names[] = { "none", "integer", "linspace", "centre", "fixed" };

const char *
pe_conv_name(int kind)
{
	return kind >= PE_CONV_NONE && kind <= PE_CONV_FIXED ? names[kind] : "?";
}

int
pe_conv_parse_name(const char *name)
{
	if (strcmp(name, "center") == 0)
		return PE_CONV_CENTRE;
	for (int k = PE_CONV_INTEGER; k <= PE_CONV_FIXED; k++)
		if (strcmp(name, names[k]) == 0)
			return k;
	return -1;
}

double
pe_conv_coord(const struct pe_conv *c, int a, int64_t i)
{
	double n = (double)c->grid[a];

	switch (c->kind) {
	case PE_CONV_INTEGER:
		return (double)i;
	case PE_CONV_CENTRE:
		return (i + 0.5) / n;
	case PE_CONV_FIXED:
		return n > 1 ? c->lo + (c->hi - c->lo) * i / (n - 1) : c->lo;
	case PE_CONV_LINSPACE:
		return n > 1 ? i * (n / c->n0[a]) / (n - 1) : 0;
	default:
		return (double)i;
	}
}

double
pe_conv_step(const struct pe_conv *c, int a)
{
	double n = (double)c->grid[a];

	switch (c->kind) {
	case PE_CONV_CENTRE:
		return 1 / n;
	case PE_CONV_FIXED:
		return n > 1 ? (c->hi - c->lo) / (n - 1) : c->hi - c->lo;
	case PE_CONV_LINSPACE:
		return n > 1 ? (n / c->n0[a]) / (n - 1) : 1 / c->n0[a];
	default:
		return 1;
	}
}

/* Dims v[axes] as "7x7" at buf. */
static int
dims(char *buf, size_t len, const char *key, const double *v, int axes)
{
	int n = snprintf(buf, len, " %s=", key);

	for (int a = 0; a < axes; a++)
		n += snprintf(buf + n, (size_t)n < len ? len - n : 0, "%s%g", a ? "x" : "", v[a]);
	return n;
}

int
pe_conv_format(const struct pe_conv *c, char *buf, size_t len)
{
	double g[3];
	int n = snprintf(buf, len, "%s", pe_conv_name(c->kind));

	for (int a = 0; a < c->axes; a++)
		g[a] = (double)c->grid[a];
	if (c->kind == PE_CONV_LINSPACE)
		n += dims(buf + n, (size_t)n < len ? len - n : 0, "n0", c->n0, c->axes);
	if (c->kind == PE_CONV_FIXED)
		n += snprintf(buf + n, (size_t)n < len ? len - n : 0, " range=%g,%g", c->lo, c->hi);
	return n + dims(buf + n, (size_t)n < len ? len - n : 0, "grid", g, c->axes);
}

/* Dims "7x7" (one number: every axis) into v[axes], each above 0. */
static int
parse_dims(const char *s, int axes, double *v)
{
	int64_t g[3];
	int n = vt_parse_dims(s, g, 3);

	if (n != axes && n != 1)
		return -1;
	for (int a = 0; a < axes; a++)
		if ((v[a] = (double)g[n == 1 ? 0 : a]) < 1)
			return -1;
	return 0;
}

int
pe_conv_parse(struct pe_conv *c, const char *pos, const char *grid,
    struct err *e)
{
	char buf[512], *save, *w;
	const char *n0 = NULL, *range = NULL;

	memset(c, 0, sizeof *c);
	if (pos == NULL || strlen(pos) >= sizeof buf)
		return err_set(e, "no POS key");
	strcpy(buf, pos);
	if ((w = strtok_r(buf, " ", &save)) == NULL || (c->kind = pe_conv_parse_name(w)) < 0) {
		c->kind = PE_CONV_NONE;
		return err_set(e, "POS '%s' names no convention of posgen", pos);
	}
	while ((w = strtok_r(NULL, " ", &save)) != NULL) {
		if (strncmp(w, "grid=", 5) == 0)
			grid = w + 5;
		else if (strncmp(w, "n0=", 3) == 0)
			n0 = w + 3;
		else if (strncmp(w, "range=", 6) == 0)
			range = w + 6;
	}
	if (grid == NULL || (c->axes = vt_parse_dims(grid, c->grid, 3)) < 1)
		return err_set(e, "POS '%s': no grid", pos);
	for (int a = 0; a < c->axes; a++)
		if (c->grid[a] < 1)
			return err_set(e, "POS '%s': bad grid '%s'", pos, grid);
		else
			c->n0[a] = (double)c->grid[a];
	if (c->kind == PE_CONV_LINSPACE && n0 && parse_dims(n0, c->axes, c->n0) < 0)
		return err_set(e, "POS '%s': bad n0", pos);
	c->hi = 1;
	if (c->kind == PE_CONV_FIXED && range) {
		char *end;
		c->lo = strtod(range, &end);
		if (*end == ',')
			c->hi = strtod(end + 1, &end);
		if (end == range || range[strcspn(range, ",")] != ',' || *end != '\0' ||
		    !(c->hi > c->lo) || c->hi - c->lo > 1e300)
			return err_set(e, "POS '%s': bad range", pos);
	}
	return 0;
}

int
pe_conv_native(const struct pe *pe)
{
	return pe->method->conv;
}

void
pe_conv_map(const struct pe_conv *from, int native, const int *n0, double *scale,
    double *shift)
{
	struct pe_conv to = *from;

	to.kind = native;
	for (int a = 0; a < from->axes; a++) {
		to.n0[a] = (double)(n0 ? n0[a] : from->grid[a]);
		scale[a] = pe_conv_step(&to, a) / pe_conv_step(from, a);
		shift[a] = pe_conv_coord(&to, a, 0) - scale[a] * pe_conv_coord(from, a, 0);
	}
}

/* The convention a POS value names first, or -1. */
static int
kind_of(const char *pos)
{
	char w[16];

	return pos && sscanf(pos, "%15s", w) == 1 ? pe_conv_parse_name(w) : -1;
}

int
pe_conv_check(const char *trained, const char *pos, struct err *e)
{
	int a = kind_of(trained), b = kind_of(pos);

	if (a < 0 || b < 0 || a == b)
		return 0;
	return err_set(e, "%s positions, but the model was trained on %s ones "
	    "(POS %s): it reads them as if they were %s ones (posgen -c %s makes "
	    "those)", pe_conv_name(b), pe_conv_name(a), trained, pe_conv_name(a),
	    pe_conv_name(a));
}

int
pe_conv_cls(const char *clspos, int axes, float *cls, struct err *e)
{
	const char *p = clspos;
	char *end;

	if (clspos == NULL || strcmp(clspos, "none") == 0)
		return 0;
	for (int a = 0; a < axes; a++, p = end + 1) {
		cls[a] = strtof(p, &end);
		if (end == p || *end != (a == axes - 1 ? '\0' : ','))
			return err_set(e, "CLSPOS '%s' is not 'none' or %d "
			    "coordinates", clspos, axes);
	}
	return 1;
}
