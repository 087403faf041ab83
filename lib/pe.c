/*
 * pe.c - position-encoding descriptions: the spec grammar, sharing,
 * parameter counts and the header keys that carry them (see pe.h).
 *
 * Spec grammar: NAME[:B][,OPTION[=VALUE]]...; the canonical form that
 * pe_parse leaves in pe->spec names every option that differs from its
 * default, so equal specs mean equal structures.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "vt.h"

static const struct {
	const char	*name;
	int		 kind;
} kinds[] = {
	{ "none", PE_NONE }, { "zeros", PE_ZEROS }, { "abs", PE_ABS },
	{ "sincos", PE_SINCOS }, { "rope-axial", PE_ROPE_AXIAL },
	{ "rope-mixed", PE_ROPE_MIXED }, { "liere", PE_LIERE },
	{ "comrope-ap", PE_COMROPE_AP }, { "comrope-ld", PE_COMROPE_LD },
	{ "riemann", PE_RIEMANN },
};

static const char *const share_names[] = { "none", "heads", "layers", "all" };

static int
fail(struct pe *pe, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pe->err, sizeof pe->err, fmt, ap);
	va_end(ap);
	return -1;
}

const char *
pe_share_name(int share)
{
	return share >= 0 && share <= PE_SHARE_ALL ? share_names[share] : "?";
}

/* A positive finite number, whole string. */
static int
parse_pos(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && *v > 0 && *v < 1e300 ? 0 : -1;
}

/* Options after the name: theta=, alpha=, reflect. */
static int
parse_options(struct pe *pe, char *opt)
{
	char *save;
	size_t n = strlen(opt);

	if (n == 0 || opt[n - 1] == ',' || strstr(opt, ",,"))
		return fail(pe, "empty option in '%s'", opt);
	for (char *o = strtok_r(opt, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *val = strchr(o, '=');
		if (val)
			*val++ = '\0';
		if (strcmp(o, "theta") == 0 && val &&
		    (pe->kind == PE_ROPE_AXIAL || pe->kind == PE_RIEMANN)) {
			if (parse_pos(val, &pe->theta) < 0)
				return fail(pe, "theta=%s: want a positive number", val);
		} else if (strcmp(o, "alpha") == 0 && val && pe->kind == PE_RIEMANN) {
			if (parse_pos(val, &pe->alpha) < 0)
				return fail(pe, "alpha=%s: want a positive number", val);
		} else if (strcmp(o, "reflect") == 0 && !val && pe->kind == PE_RIEMANN) {
			pe->reflect = 1;
		} else {
			return fail(pe, "option '%s%s%s' does not apply to %s",
			    o, val ? "=" : "", val ? val : "", kinds[pe->kind].name);
		}
	}
	return 0;
}

/* Block size after "name:", 0 when absent. */
static int
parse_block(struct pe *pe, const char *s, int *b)
{
	char *end;
	long v;

	*b = 0;
	if (!s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > PE_MAXDIM)
		return fail(pe, "block size '%s': want a whole number 2 .. %d", s, PE_MAXDIM);
	*b = (int)v;
	return 0;
}

static void
canonical(struct pe *pe)
{
	const char *name = kinds[pe->kind].name;
	int n;

	if (pe->kind == PE_LIERE || pe->kind == PE_COMROPE_AP || pe->kind == PE_COMROPE_LD)
		n = snprintf(pe->spec, sizeof pe->spec, "%s:%d", name, pe->block);
	else
		n = snprintf(pe->spec, sizeof pe->spec, "%s", name);
	if (pe->theta != 100 && (pe->kind == PE_ROPE_AXIAL || pe->kind == PE_RIEMANN))
		n += snprintf(pe->spec + n, sizeof pe->spec - n, ",theta=%.17g", pe->theta);
	if (pe->kind == PE_RIEMANN && pe->alpha != 0.1)
		n += snprintf(pe->spec + n, sizeof pe->spec - n, ",alpha=%.17g", pe->alpha);
	if (pe->reflect)
		snprintf(pe->spec + n, sizeof pe->spec - n, ",reflect");
}

int
pe_parse(struct pe *pe, const char *spec, int head_dim, int axes, int heads,
    int layers, const char *share)
{
	char buf[sizeof pe->spec], *opt, *colon;
	int b, pairwise;

	memset(pe, 0, sizeof *pe);
	pe->theta = 100;
	pe->alpha = 0.1;
	pe->kind = -1;
	if (!spec || strlen(spec) >= sizeof buf)
		return fail(pe, "position encoding '%s': too long", spec ? spec : "");
	strcpy(buf, spec);
	if ((opt = strchr(buf, ',')))
		*opt++ = '\0';
	if ((colon = strchr(buf, ':')))
		*colon++ = '\0';
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (strcmp(buf, kinds[i].name) == 0)
			pe->kind = kinds[i].kind;
	if (pe->kind < 0)
		return fail(pe, "unknown position encoding '%s' (none, zeros, abs, sincos, "
		    "rope-axial, rope-mixed, liere:B, comrope-ap:B, comrope-ld:B, riemann)", spec);
	if (parse_block(pe, colon, &b) < 0)
		return -1;
	if (opt && parse_options(pe, opt) < 0)
		return -1;
	if (head_dim < 1 || head_dim > PE_MAXDIM)
		return fail(pe, "head dimension %d: want 1 .. %d", head_dim, PE_MAXDIM);
	if (axes < 1 || axes > 3)
		return fail(pe, "%d position axes: want 1, 2 or 3", axes);
	if (heads < 1 || layers < 1 || heads > 4096 || layers > 4096)
		return fail(pe, "%d heads x %d layers: want 1 .. 4096 each", heads, layers);
	pe->share = -1;
	for (int i = 0; i <= PE_SHARE_ALL; i++)
		if (strcmp(share ? share : "none", share_names[i]) == 0)
			pe->share = i;
	if (pe->share < 0)
		return fail(pe, "sharing '%s': want none, heads, layers or all", share);

	switch (pe->kind) {
	case PE_LIERE:
		if (!b)
			b = head_dim;	/* LieRE without a subscript: one full block */
		/* FALLTHROUGH */
	case PE_COMROPE_AP:
	case PE_COMROPE_LD:
		if (!b)
			return fail(pe, "%s needs a block size, as in %s:8", buf, buf);
		if (b < 2 || head_dim % b)
			return fail(pe, "block size %d: want 2 or more, dividing the head dimension %d", b, head_dim);
		break;
	default:
		if (colon)
			return fail(pe, "%s takes no block size", buf);
		break;
	}
	pairwise = pe->kind == PE_ROPE_AXIAL || pe->kind == PE_ROPE_MIXED || pe->kind == PE_RIEMANN;
	if (pairwise) {
		b = 2;
		if (head_dim % 2)
			return fail(pe, "%s needs an even head dimension, not %d", buf, head_dim);
		if (head_dim / 2 < axes)
			return fail(pe, "%s needs at least one pair per axis: head dimension %d, %d axes",
			    buf, head_dim, axes);
	}
	if (!b)
		b = 1;		/* identity: 1 x 1 blocks of 1 */

	pe->block = b;
	pe->head_dim = head_dim;
	pe->axes = axes;
	pe->heads = heads;
	pe->layers = layers;
	pe->nblock = head_dim / b;
	pe->rsize = (int64_t)pe->nblock * b * b;
	pe->nset = pe->share == PE_SHARE_NONE ? heads * layers :
	    pe->share == PE_SHARE_HEADS ? layers :
	    pe->share == PE_SHARE_LAYERS ? heads : 1;
	int64_t k = (int64_t)b * (b - 1) / 2;
	switch (pe->kind) {
	case PE_LIERE:
	case PE_ROPE_MIXED:
		pe->set_params = axes * pe->nblock * k;
		break;
	case PE_COMROPE_AP:
		pe->set_params = pe->nblock * k;
		break;
	case PE_COMROPE_LD:
		pe->set_params = pe->nblock * k + (int64_t)axes * pe->nblock;
		break;
	case PE_RIEMANN:
		pe->set_params = head_dim / 2 + 1;
		break;
	default:
		pe->set_params = 0;
		break;
	}
	pe->nparam = pe->nset * pe->set_params;
	pe->rotary = pe->kind != PE_ABS && pe->kind != PE_SINCOS;
	pe->identity = pe->kind == PE_NONE || pe->kind == PE_ZEROS || !pe->rotary;
	pe->orthogonal = pe->kind != PE_RIEMANN;
	/* LieRE commutes only with 2 x 2 blocks (or a single axis);
	 * RiemannFormer's scale breaks R(x)^T R(y) = R(y - x). */
	pe->commutes = pe->kind == PE_LIERE ? b == 2 || axes == 1 : pe->kind != PE_RIEMANN;
	canonical(pe);
	return 0;
}

int
pe_set(const struct pe *pe, int layer, int head)
{
	switch (pe->share) {
	case PE_SHARE_HEADS:	return layer;
	case PE_SHARE_LAYERS:	return head;
	case PE_SHARE_ALL:	return 0;
	default:		return layer * pe->heads + head;
	}
}

/* Group of pair j: the pairs are cut into axes contiguous groups. */
static int
pair_group(const struct pe *pe, int pair, int *start, int *size)
{
	int npair = pe->head_dim / 2, g = 0;

	while (g + 1 < pe->axes && pair >= (g + 1) * npair / pe->axes)
		g++;
	*start = g * npair / pe->axes;
	*size = (g + 1) * npair / pe->axes - *start;
	return g;
}

int
pe_pair_axis(const struct pe *pe, int pair)
{
	int start, size;

	return pe->axes - 1 - pair_group(pe, pair, &start, &size);
}

double
pe_pair_freq(const struct pe *pe, int pair, double theta)
{
	int start, size;

	pair_group(pe, pair, &start, &size);
	return pow(theta, -(double)(pair - start) / size);
}

int
pe_pair_group(const struct pe *pe, int pair)
{
	int start, size;

	return pair_group(pe, pair, &start, &size);
}

int
pe_meta_write(const struct pe *pe, struct vt *s)
{
	char v[32];
	int r = 0;

	r |= vt_meta_set(s, "PE", pe->spec);
	r |= vt_meta_set(s, "SHARE", pe_share_name(pe->share));
	snprintf(v, sizeof v, "%d", pe->head_dim);
	r |= vt_meta_set(s, "HEAD_DIM", v);
	snprintf(v, sizeof v, "%d", pe->axes);
	r |= vt_meta_set(s, "AXES", v);
	snprintf(v, sizeof v, "%d", pe->heads);
	r |= vt_meta_set(s, "HEADS", v);
	snprintf(v, sizeof v, "%d", pe->layers);
	r |= vt_meta_set(s, "LAYERS", v);
	return r ? -1 : 0;
}

/* A header key holding a whole number in [1, 1 << 20]. */
static int
meta_int(struct pe *pe, const struct vt *s, const char *key, int *v)
{
	const char *str = vt_meta(s, key);
	char *end;
	long x;

	if (!str)
		return fail(pe, "%s: no %s key", s->name ? s->name : "input", key);
	errno = 0;
	x = strtol(str, &end, 10);
	if (!*str || *end || errno || x < 1 || x > (1 << 20))
		return fail(pe, "%s: %s '%s' is not a positive whole number",
		    s->name ? s->name : "input", key, str);
	*v = (int)x;
	return 0;
}

int
pe_meta_read(struct pe *pe, const struct vt *s)
{
	const char *spec = vt_meta(s, "PE"), *share = vt_meta(s, "SHARE");
	int head_dim, axes, heads, layers;

	memset(pe, 0, sizeof *pe);
	if (!spec)
		return fail(pe, "%s: no PE key: not a generator file or a checkpoint with "
		    "position-encoding generators", s->name ? s->name : "input");
	if (meta_int(pe, s, "HEAD_DIM", &head_dim) < 0 || meta_int(pe, s, "AXES", &axes) < 0 ||
	    meta_int(pe, s, "HEADS", &heads) < 0 || meta_int(pe, s, "LAYERS", &layers) < 0)
		return -1;
	if (pe_parse(pe, spec, head_dim, axes, heads, layers, share ? share : "none") < 0) {
		char msg[sizeof pe->err];
		snprintf(msg, sizeof msg, "%s", pe->err);
		return fail(pe, "%s: %s", s->name ? s->name : "input", msg);
	}
	return 0;
}

int
pe_generators_only(struct vt *s, void *unused)
{
	for (int i = 0; i < s->nfield; i++)
		if (strcmp(s->field[i].name, PE_FIELD) != 0)
			vt_skip(s, i);
	return 0;
}

const float *
pe_load_params(struct pe *pe, struct vt *s)
{
	static const float none[1];
	const char *name = s->name ? s->name : "input";
	struct vt_field *f;

	if (pe_meta_read(pe, s) == -1)
		return NULL;
	f = vt_get(s, PE_FIELD);
	if (!f && pe->nparam == 0)
		return none;
	if (!f) {
		fail(pe, "%s: no field %s: the file names PE %s but holds no generators",
		    name, PE_FIELD, pe->spec);
		return NULL;
	}
	if (f->dtype != VT_F32 || f->rank != 1 || f->count != pe->nparam) {
		fail(pe, "%s: field %s is %s with %lld values; PE %s with %s sharing needs f32 [%lld]",
		    name, PE_FIELD, vt_dtype_name(f->dtype), (long long)f->count, pe->spec,
		    pe_share_name(pe->share), (long long)pe->nparam);
		return NULL;
	}
	return f->data;
}
