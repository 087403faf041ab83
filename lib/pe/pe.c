/*
 * pe.c - position-encoding descriptions: the spec grammar, sharing,
 * parameter counts and the header keys that carry them (see pe.h).
 *
 * Spec grammar: NAME[:B][,OPTION[=VALUE]]...; the canonical form that
 * pe_parse leaves in pe->spec names every option that differs from its
 * default, so equal specs mean equal structures.  The names, options and
 * structure of each encoding come from its descriptor (pe_method.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "pe_method.h"
#include "vt.h"

static const char *const share_names[] = { "none", "heads", "layers", "all" };

/* The encoding named by the first n characters of name, or NULL. */
static const struct pe_method *
find_method(const char *name, size_t n)
{
	for (const struct pe_method *const *m = pe_methods; *m; m++)
		if (strlen((*m)->name) == n && strncmp(name, (*m)->name, n) == 0)
			return *m;
	return NULL;
}

int
pe_known(const char *word)
{
	return find_method(word, strcspn(word, ":,")) != NULL;
}

void
pe_list(char *buf, size_t len, const char *sep, int full, int rotary_only,
    int indent)
{
	size_t n = 0, col = indent;

	buf[0] = '\0';
	for (const struct pe_method *const *m = pe_methods; *m && n < len; m++) {
		const struct pe_method *e = *m;
		const char *b = !full && (e->flags & PEM_BLOCK) ? ":B" : "";
		char item[64];
		if (rotary_only && e->table)
			continue;
		col += snprintf(item, sizeof item, "%s%s", full ? e->synopsis : e->name, b);
		if (n && indent && col + strlen(sep) > 79) {
			n += snprintf(buf + n, len - n, "%.*s\n%*s",
			    (int)strcspn(sep, " "), sep, indent, "");
			col = indent + strlen(item);
		} else if (n) {
			n += snprintf(buf + n, len - n, "%s", sep);
			col += strlen(sep);
		}
		if (n < len)
			n += snprintf(buf + n, len - n, "%s", item);
	}
}

void
pe_examples(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (const struct pe_method *const *m = pe_methods; *m && n < len; m++)
		if ((*m)->flops_all)
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "", (*m)->flops_all);
}

const char *
pe_by_timm(const char *tensor)
{
	for (const struct pe_method *const *m = pe_methods; *m; m++)
		if ((*m)->timm && strcmp((*m)->timm, tensor) == 0)
			return (*m)->name;
	return NULL;
}

const char *
pe_baseline(void)
{
	for (const struct pe_method *const *m = pe_methods; *m; m++)
		if ((*m)->flags & PEM_BASELINE)
			return (*m)->name;
	return NULL;
}

int64_t
pe_table_rows(const struct pe *pe, const int *G, const char **name)
{
	const struct pe_table *t = pe->method->table;

	*name = t ? t->tensor : NULL;
	return *name ? t->rows(G, pe->axes) : 0;
}

const char *
pe_share_name(int share)
{
	return share >= 0 && share <= PE_SHARE_ALL ? share_names[share] : "?";
}

int
pe_share_parse(const char *name)
{
	for (int i = 0; i <= PE_SHARE_ALL; i++)
		if (strcmp(name, share_names[i]) == 0)
			return i;
	return -1;
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

/* Option name of pe's encoding, or NULL. */
static const struct pe_option *
find_option(const struct pe *pe, const char *name)
{
	for (const struct pe_option *o = pe->method->options; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* Where option o of pe is kept. */
static void *
option_at(struct pe *pe, const struct pe_option *o)
{
	return pe->opt.bytes + o->offset;
}

/* Every option of pe's encoding at its default. */
static void
default_options(struct pe *pe)
{
	for (const struct pe_option *o = pe->method->options; o && o->name; o++)
		if (o->kind == PE_OPT_FLAG)
			*(int *)option_at(pe, o) = 0;
		else
			*(double *)option_at(pe, o) = o->def;
}

double
pe_option(const struct pe *pe, const char *name)
{
	const struct pe_option *o = find_option(pe, name);
	const unsigned char *at = pe->opt.bytes + (o ? o->offset : 0);

	if (o == NULL)
		return NAN;
	return o->kind == PE_OPT_FLAG ? *(const int *)at : *(const double *)at;
}

/* The options after the name, as the encoding's table declares them. */
static int
parse_options(struct pe *pe, char *opt)
{
	char *save;
	size_t n = strlen(opt);

	if (n == 0 || opt[n - 1] == ',' || strstr(opt, ",,"))
		return err_set(&pe->err, "empty option in '%s'", opt);
	for (char *o = strtok_r(opt, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *val = strchr(o, '=');
		if (val)
			*val++ = '\0';
		const struct pe_option *d = find_option(pe, o);
		if (d == NULL || (d->kind == PE_OPT_FLAG) != (val == NULL))
			return err_set(&pe->err, "option '%s%s%s' does not apply to %s",
			    o, val ? "=" : "", val ? val : "", pe->method->name);
		if (d->kind == PE_OPT_FLAG)
			*(int *)option_at(pe, d) = 1;
		else if (parse_pos(val, option_at(pe, d)) < 0)
			return err_set(&pe->err, "%s=%s: want a positive number", o, val);
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
		return err_set(&pe->err, "block size '%s': want a whole number 2 .. %d", s, PE_MAXDIM);
	*b = (int)v;
	return 0;
}

static void
canonical(struct pe *pe)
{
	const char *name = pe->method->name;
	int flags = pe->method->flags, n;

	if (flags & PEM_BLOCK)
		n = snprintf(pe->spec, sizeof pe->spec, "%s:%d", name, pe->block);
	else
		n = snprintf(pe->spec, sizeof pe->spec, "%s", name);
	for (const struct pe_option *o = pe->method->options; o && o->name; o++) {
		double v = pe_option(pe, o->name);
		if (o->kind == PE_OPT_FLAG && v)
			n += snprintf(pe->spec + n, sizeof pe->spec - n, ",%s", o->name);
		else if (o->kind == PE_OPT_POSITIVE && v != o->def)
			n += snprintf(pe->spec + n, sizeof pe->spec - n, ",%s=%.17g",
			    o->name, v);
		if (n >= (int)sizeof pe->spec)
			n = sizeof pe->spec - 1;
	}
}

int
pe_parse(struct pe *pe, const char *spec, int head_dim, int axes, int heads,
    int layers, const char *share)
{
	char buf[sizeof pe->spec], *opt, *colon, names[256];
	int b, flags;

	memset(pe, 0, sizeof *pe);
	if (!spec || strlen(spec) >= sizeof buf)
		return err_set(&pe->err, "position encoding '%s': too long", spec ? spec : "");
	strcpy(buf, spec);
	if ((opt = strchr(buf, ',')))
		*opt++ = '\0';
	if ((colon = strchr(buf, ':')))
		*colon++ = '\0';
	if ((pe->method = find_method(buf, strlen(buf))) == NULL) {
		pe_list(names, sizeof names, ", ", 0, 0, 0);
		return err_set(&pe->err, "unknown position encoding '%s' (%s)", spec, names);
	}
	flags = pe->method->flags;
	default_options(pe);
	if (parse_block(pe, colon, &b) < 0)
		return -1;
	if (opt && parse_options(pe, opt) < 0)
		return -1;
	if (head_dim < 1 || head_dim > PE_MAXDIM)
		return err_set(&pe->err, "head dimension %d: want 1 .. %d", head_dim, PE_MAXDIM);
	if (axes < 1 || axes > 3)
		return err_set(&pe->err, "%d position axes: want 1, 2 or 3", axes);
	if (heads < 1 || layers < 1 || heads > PE_MAXHEADS ||
	    layers > PE_MAXHEADS)
		return err_set(&pe->err, "%d heads x %d layers: want 1 .. %d each", heads,
		    layers, PE_MAXHEADS);
	if ((pe->share = pe_share_parse(share ? share : "none")) < 0)
		return err_set(&pe->err, "sharing '%s': want none, heads, layers or all", share);
	pe->axes = axes;
	if (pe->method->check && pe->method->check(pe) < 0)
		return -1;

	if (flags & PEM_BLOCK) {
		if (!b && (flags & PEM_BLOCK_FULL))
			b = head_dim;	/* LieRE without a subscript: one full block */
		if (!b)
			return err_set(&pe->err, "%s needs a block size, as in %s:8", buf, buf);
		if (b < 2 || head_dim % b)
			return err_set(&pe->err, "block size %d: want 2 or more, dividing the head dimension %d", b, head_dim);
	} else if (colon) {
		return err_set(&pe->err, "%s takes no block size", buf);
	}
	if (flags & PEM_PAIRS) {
		b = 2;
		if (head_dim % 2)
			return err_set(&pe->err, "%s needs an even head dimension, not %d", buf, head_dim);
		if (head_dim / 2 < axes)
			return err_set(&pe->err, "%s needs at least one pair per axis: head dimension %d, %d axes",
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
	pe->set_params = pe->method->set_params ? pe->method->set_params(pe) : 0;
	pe->nparam = pe->nset * pe->set_params;
	pe->rotary = pe->method->table == NULL;
	pe->identity = (flags & PEM_IDENTITY) || !pe->rotary;
	pe->orthogonal = !(flags & PEM_NOT_ORTHOGONAL);
	pe->commutes = flags & PEM_COMMUTES_2X2 ? b == 2 || axes == 1 :
	    (flags & PEM_COMMUTES) != 0;
	pe->basis = pe->method->basis != NULL;
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

int64_t
pe_tied(const struct pe *pe, int64_t *off)
{
	*off = 0;
	return pe->method->tied ? pe->method->tied(pe, off) : 0;
}

int
pe_tie_first(const struct pe *pe, int set)
{
	int64_t off;

	if (pe_tied(pe, &off) == 0)
		return set;
	switch (pe->share) {
	case PE_SHARE_NONE:	return set / pe->heads * pe->heads;
	case PE_SHARE_HEADS:	return set;	/* a set per layer already */
	default:		return 0;	/* a set's heads span every layer */
	}
}

int64_t
pe_tied_copies(const struct pe *pe)
{
	int64_t off, n = pe_tied(pe, &off), copies = 0;

	for (int s = 0; s < pe->nset && n > 0; s++)
		copies += pe_tie_first(pe, s) != s ? n : 0;
	return copies;
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
	int64_t x;

	if (!str)
		return err_set(&pe->err, "%s: no %s key", s->name ? s->name : "input", key);
	if (vt_parse_int(str, NULL, 1, 1 << 20, &x) < 0)
		return err_set(&pe->err, "%s: %s '%s' is not a positive whole number",
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
		return err_set(&pe->err, "%s: no PE key: not a generator file or a checkpoint with "
		    "position-encoding generators", s->name ? s->name : "input");
	if (meta_int(pe, s, "HEAD_DIM", &head_dim) < 0 || meta_int(pe, s, "AXES", &axes) < 0 ||
	    meta_int(pe, s, "HEADS", &heads) < 0 || meta_int(pe, s, "LAYERS", &layers) < 0)
		return -1;
	if (pe_parse(pe, spec, head_dim, axes, heads, layers, share ? share : "none") < 0)
		return err_prefix(&pe->err, "%s", s->name ? s->name : "input");
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
		err_set(&pe->err, "%s: no field %s: the file names PE %s but holds no generators",
		    name, PE_FIELD, pe->spec);
		return NULL;
	}
	if (f->dtype != VT_F32 || f->rank != 1 || f->count != pe->nparam) {
		err_set(&pe->err, "%s: field %s is %s with %lld values; PE %s with %s sharing needs f32 [%lld]",
		    name, PE_FIELD, vt_dtype_name(f->dtype), (long long)f->count, pe->spec,
		    pe_share_name(pe->share), (long long)pe->nparam);
		return NULL;
	}
	return f->data;
}
