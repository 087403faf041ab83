/*
 * vitconfig.c - ViT configuration: defaults, paper presets, validation and
 * its round trip through container header keys (checkpoints).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "pe_method.h"
#include "vit.h"
#include "vt.h"

void
vit_config_init(struct vit_config *c)
{
	memset(c, 0, sizeof *c);
	vit_preset(c, "tiny");
	c->classes = 10;
	c->P = 48;
	c->axes = 2;
	c->pool = VIT_POOL_CLS;
	snprintf(c->pe, sizeof c->pe, "none");
	c->share = PE_SHARE_NONE;
	c->sigma = 1.0f;
	for (int a = 0; a < VIT_MAXAXES; a++) {
		c->grid[a] = 8;
		c->pos_scale[a] = 1;
	}
}

int
vit_preset(struct vit_config *c, const char *name)
{
	static const struct { const char *name; int dim, depth, heads, mlp; } p[] = {
		{ "tiny", 192, 12, 3, 768 },
		{ "small", 384, 12, 6, 1536 },
		{ "base", 768, 12, 12, 3072 },
		{ "large", 1024, 24, 16, 4096 },
		{ "cifar", 512, 6, 8, 512 },	/* the LieRE code's CIFAR backbone */
	};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
		if (strcmp(name, p[i].name) == 0) {
			c->dim = p[i].dim;
			c->depth = p[i].depth;
			c->heads = p[i].heads;
			c->mlp = p[i].mlp;
			return 0;
		}
	return -1;
}

int
vit_config_check(const struct vit_config *c, struct err *e)
{
	if (c->dim < 1 || c->dim > VIT_MAXDIM || c->depth < 1 ||
	    c->depth > VIT_MAXDEPTH || c->heads < 1 || c->mlp < 1 ||
	    c->mlp > VIT_MAXMLP || c->classes < 1 ||
	    c->classes > VIT_MAXCLASSES || c->P < 1 || c->P > 1 << 24)
		return err_set(e, "sizes out of range (dim %d depth %d heads %d mlp %d classes %d P %d)",
		    c->dim, c->depth, c->heads, c->mlp, c->classes, c->P);
	if (c->dim % c->heads != 0)
		return err_set(e, "dim %d is not a multiple of heads %d", c->dim, c->heads);
	if (c->axes < 1 || c->axes > VIT_MAXAXES)
		return err_set(e, "axes %d not in 1..%d", c->axes, VIT_MAXAXES);
	if (c->pool != VIT_POOL_CLS && c->pool != VIT_POOL_MEAN)
		return err_set(e, "bad pool");
	if (c->share < PE_SHARE_NONE || c->share > PE_SHARE_ALL)
		return err_set(e, "bad share");
	if (!(c->dropout >= 0 && c->dropout < 1 && c->emb_dropout >= 0 &&
	    c->emb_dropout < 1))
		return err_set(e, "dropout must be in [0, 1)");
	if (c->locality && !(c->sigma > 0))
		return err_set(e, "locality sigma must be positive");
	for (int a = 0; a < c->axes; a++)
		if (!isfinite(c->pos_scale[a]) || c->pos_scale[a] == 0 ||
		    !isfinite(c->pos_shift[a]))
			return err_set(e, "position map of axis %d: scale %g shift %g", a,
			    c->pos_scale[a], c->pos_shift[a]);
	long g = 1;
	for (int a = 0; a < c->axes; a++) {
		if (c->grid[a] < 1 || c->grid[a] > 1 << 16)
			return err_set(e, "grid axis %d: %d out of range", a, c->grid[a]);
		g *= c->grid[a];
		if (g > 1 << 24)
			return err_set(e, "grid too large");
	}
	struct pe pe;
	const struct pe_table *t;
	if (pe_parse(&pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) == 0 && (t = pe.method->table) != NULL &&
	    c->dim < t->min_width * c->axes)
		return err_set(e, "%s needs dim >= %d * axes", pe.method->name, t->min_width);
	return 0;
}

static const char *const pool_names[] = { "cls", "mean", NULL };

static int
lookup(const char *const *names, const char *name)
{
	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int
vit_pool_parse(const char *name)
{
	return lookup(pool_names, name);
}


/* The header keys of a config, in one table for save and load. */
enum kind { KINT, KFLOAT, KSTR, KINTS, KFLOATS, KPOOL, KSHARE };
static const struct key {
	const char *key;
	enum kind kind;
	size_t off;
	int optional;		/* absent: the default of vit_config_init */
} keys[] = {
	{ "VIT_DIM", KINT, offsetof(struct vit_config, dim), 0 },
	{ "VIT_DEPTH", KINT, offsetof(struct vit_config, depth), 0 },
	{ "VIT_HEADS", KINT, offsetof(struct vit_config, heads), 0 },
	{ "VIT_MLP", KINT, offsetof(struct vit_config, mlp), 0 },
	{ "VIT_CLASSES", KINT, offsetof(struct vit_config, classes), 0 },
	{ "VIT_P", KINT, offsetof(struct vit_config, P), 0 },
	{ "VIT_AXES", KINT, offsetof(struct vit_config, axes), 0 },
	{ "VIT_POOL", KPOOL, offsetof(struct vit_config, pool), 0 },
	{ "VIT_PE", KSTR, offsetof(struct vit_config, pe), 0 },
	{ "VIT_SHARE", KSHARE, offsetof(struct vit_config, share), 0 },
	{ "VIT_DROPOUT", KFLOAT, offsetof(struct vit_config, dropout), 0 },
	{ "VIT_EMB_DROPOUT", KFLOAT, offsetof(struct vit_config, emb_dropout), 0 },
	{ "VIT_LOCALITY", KINT, offsetof(struct vit_config, locality), 0 },
	{ "VIT_SIGMA", KFLOAT, offsetof(struct vit_config, sigma), 0 },
	{ "VIT_GRID", KINTS, offsetof(struct vit_config, grid), 0 },
	{ "VIT_CLS_ROTATE", KINT, offsetof(struct vit_config, cls_rotate), 0 },
	{ "VIT_CLS_POS", KFLOATS, offsetof(struct vit_config, cls_pos), 0 },
	{ "VIT_POS_PER_RECORD", KINT, offsetof(struct vit_config, pos_per_record), 1 },
	{ "VIT_POS_SCALE", KFLOATS, offsetof(struct vit_config, pos_scale), 1 },
	{ "VIT_POS_SHIFT", KFLOATS, offsetof(struct vit_config, pos_shift), 1 },
};

int
vit_config_save(const struct vit_config *c, struct vt *s)
{
	struct err e;

	if (vit_config_check(c, &e) == -1)
		return -1;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *p = (const char *)c + keys[i].off;
		char buf[256];
		size_t n = 0;
		switch (keys[i].kind) {
		case KINT: snprintf(buf, sizeof buf, "%d", *(const int *)p); break;
		case KFLOAT: snprintf(buf, sizeof buf, "%.9g", *(const float *)p); break;
		case KSTR: snprintf(buf, sizeof buf, "%s", p); break;
		case KPOOL: snprintf(buf, sizeof buf, "%s", pool_names[*(const int *)p]); break;
		case KSHARE: snprintf(buf, sizeof buf, "%s", pe_share_name(*(const int *)p)); break;
		case KINTS:
		case KFLOATS:
			buf[0] = '\0';
			for (int a = 0; a < c->axes; a++)
				if (keys[i].kind == KINTS)
					n += snprintf(buf + n, sizeof buf - n, "%s%d",
					    a ? "," : "", ((const int *)p)[a]);
				else
					n += snprintf(buf + n, sizeof buf - n, "%s%.9g",
					    a ? "," : "", ((const float *)p)[a]);
			break;
		}
		if (vt_meta_set(s, keys[i].key, buf) == -1)
			return -1;
	}
	return 0;
}

int
vit_config_load(struct vit_config *c, const struct vt *s, struct err *e)
{
	vit_config_init(c);
	/* axes first: the list keys need it */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			const char *v = vt_meta(s, keys[i].key);
			char *p = (char *)c + keys[i].off, *end;
			int list = keys[i].kind == KINTS || keys[i].kind == KFLOATS;
			if (list != pass)
				continue;
			if (v == NULL && keys[i].optional)
				continue;
			if (v == NULL)
				return err_set(e, "missing header key %s", keys[i].key);
			int64_t x;
			int bad = 0;
			switch (keys[i].kind) {
			case KINT:	/* in int's range here, in the model's by the check */
				bad = vt_parse_int(v, NULL, INT_MIN, INT_MAX, &x);
				*(int *)p = bad ? 0 : (int)x;
				end = "";
				break;
			case KFLOAT:
				*(float *)p = strtof(v, &end);
				break;
			case KPOOL:
			case KSHARE:
				*(int *)p = keys[i].kind == KPOOL ?
				    lookup(pool_names, v) : pe_share_parse(v);
				end = *(int *)p < 0 ? (char *)v : "";
				break;
			case KSTR:
				if (strlen(v) >= VIT_PESPEC)
					return err_set(e, "%s too long", keys[i].key);
				strcpy(p, v);
				end = "";
				break;
			default:
				end = (char *)v;
				for (int a = 0; a < c->axes; a++) {
					const char *q = end + (a > 0 && *end == ',');
					if (keys[i].kind == KINTS) {
						if ((bad = vt_parse_int(q, &end, INT_MIN, INT_MAX,
						    &x)))
							break;
						((int *)p)[a] = (int)x;
					} else
						((float *)p)[a] = strtof(q, &end);
					if (end == q)
						break;
				}
				break;
			}
			if (bad || *end != '\0')
				return err_set(e, "bad value '%s' for %s", v, keys[i].key);
		}
	return vit_config_check(c, e);
}
