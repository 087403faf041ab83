/*
 * checkpoint.c - models to and from single-record containers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checkpoint.h"
#include "pe.h"

/* Add an f32 field name[rank] whose payload is the floats at src, lent:
 * a checkpoint is written from the model's arrays, never a copy of them
 * (which for ViT-B would be 1 GB more at every save). */
static int
add_floats(struct vt *s, const char *name, int rank, const int *shape,
    float *src)
{
	int64_t dim[VT_MAXRANK];
	for (int k = 0; k < rank; k++)
		dim[k] = shape[k];
	int i = vt_add_field(s, name, VT_F32, rank, dim);
	if (i < 0)
		return -1;
	vt_lend(s, i, src);
	return 0;
}

/* The skewgen keys (PE SHARE HEAD_DIM AXES HEADS LAYERS) of config c. */
static int
pe_keys(const struct vit_config *c, struct vt *s, char *err, size_t errlen)
{
	struct pe pe;
	if (pe_parse(&pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) < 0) {
		snprintf(err, errlen, "%s", pe.err);
		return -1;
	}
	if (pe_meta_write(&pe, s) < 0) {
		snprintf(err, errlen, "%s", s->err);
		return -1;
	}
	return 0;
}

int
ckpt_describe(struct vt *s, const struct vit *m, const struct vt *extra,
    int optimizer, char *err, size_t errlen)
{
	for (int i = 0; extra != NULL && i < extra->nmeta; i++)
		if (vt_meta_add(s, extra->meta[i].key, extra->meta[i].val) < 0)
			goto fail;
	if (vit_config_save(&m->c, s) < 0)
		goto fail;
	if (pe_keys(&m->c, s, err, errlen) < 0)
		return -1;
	for (int t = 0; t < m->ntensor; t++) {
		const struct vit_tensor *w = &m->tensor[t];
		if (add_floats(s, w->name, w->rank, w->shape, m->param + w->off) < 0)
			goto fail;
	}
	if (optimizer) {
		int n[1];
		if (m->nparam > INT32_MAX) {
			snprintf(err, errlen, "%zu parameters: too many", m->nparam);
			return -1;
		}
		n[0] = (int)m->nparam;
		if (add_floats(s, CKPT_ADAM_M, 1, n, m->adam_m) < 0 ||
		    add_floats(s, CKPT_ADAM_V, 1, n, m->adam_v) < 0)
			goto fail;
	}
	return 0;
fail:
	snprintf(err, errlen, "%s", s->err);
	return -1;
}

int
ckpt_save(const char *path, const struct vit *m, const struct vt *extra,
    int optimizer, char *err, size_t errlen)
{
	struct vt s;
	int rc = -1;

	vt_init(&s);
	if (ckpt_describe(&s, m, extra, optimizer, err, errlen) < 0) {
		/* the message names the file, as vt_save's do */
		char why[256];
		snprintf(why, sizeof why, "%s", err);
		snprintf(err, errlen, "%s: %s", path, why);
	} else if (vt_save(&s, path) < 0)
		snprintf(err, errlen, "%s", s.err);
	else
		rc = 0;
	vt_free(&s);
	return rc;
}

/* Copy the f32 field name of s, which must hold n floats, to dst. */
static int
copy_field(struct vt *s, const char *name, float *dst, size_t n, char *err,
    size_t errlen)
{
	struct vt_field *f = vt_get(s, name);
	if (f == NULL) {
		snprintf(err, errlen, "%s: no field '%s'", s->name, name);
		return -1;
	}
	if (f->dtype != VT_F32 || (size_t)f->count != n) {
		snprintf(err, errlen, "%s: field '%s' is %s[%lld], the model wants f32[%zu]",
		    s->name, name, vt_dtype_name(f->dtype), (long long)f->count, n);
		return -1;
	}
	memcpy(dst, f->data, n * sizeof *dst);
	return 0;
}

int
ckpt_copy_tensor(struct vit *m, struct vt *s, const char *name, char *err,
    size_t errlen)
{
	const struct vit_tensor *w = vit_find_tensor(m, name);
	if (w == NULL) {
		snprintf(err, errlen, "the model has no tensor '%s'", name);
		return -1;
	}
	return copy_field(s, name, m->param + w->off, w->n, err, errlen);
}

/* Tokens of the training grid. */
static int
grid_tokens(const struct vit_config *c)
{
	int t = 1;
	for (int a = 0; a < c->axes; a++)
		t *= c->grid[a];
	return t;
}

/* ckpt_load's arguments and model, for build. */
struct load {
	int	 maxB, maxT, resume;
	struct vit *m;
};

/* Where in L->m the field name is read, and its n floats: a tensor, or
 * when resuming a moment; NULL for a field the model does not read. */
static float *
destination(const struct load *L, const char *name, size_t *n)
{
	const struct vit_tensor *w = vit_find_tensor(L->m, name);

	if (w != NULL) {
		*n = w->n;
		return L->m->param + w->off;
	}
	*n = L->m->nparam;
	if (L->resume && strcmp(name, CKPT_ADAM_M) == 0)
		return L->m->adam_m;
	if (L->resume && strcmp(name, CKPT_ADAM_V) == 0)
		return L->m->adam_v;
	return NULL;
}

/* Whether the record of s, header read, can hold the model of c: its f32
 * fields must carry at least the weight matrices c implies (patch, the
 * blocks', head: a lower bound on the parameters, which vit.h lists), and,
 * in a regular file, the bytes the header declares must be there.  Checked
 * before the model is built, so that a checkpoint of a few bytes whose
 * keys describe a large model costs a few bytes, not the model's memory.
 * 0, or -1 with why. */
static int
carried(struct vt *s, const struct vit_config *c, char *why, size_t len)
{
	double D = c->dim, need = 4 * (D * c->P + c->depth * (4 * D * D +
	    2 * D * c->mlp) + (double)c->classes * D), have = 0, declared = 0;
	struct stat st;
	off_t at;

	for (int i = 0; i < s->nfield; i++) {
		declared += (double)s->field[i].nbytes;
		if (s->field[i].dtype == VT_F32)
			have += (double)s->field[i].nbytes;
	}
	if (have < need) {
		snprintf(why, len, "its keys describe a model of %.0f bytes of weights or "
		    "more, its fields carry %.0f", need, have);
		return -1;
	}
	if (fstat(fileno(s->fp), &st) == 0 && S_ISREG(st.st_mode) &&
	    (at = ftello(s->fp)) >= 0 && declared > (double)(st.st_size - at)) {
		snprintf(why, len, "the header declares %.0f bytes of fields, the file "
		    "holds %lld after it (truncated?)", declared,
		    (long long)(st.st_size - at));
		return -1;
	}
	return 0;
}

/* vt_load_with's prepare: the model the keys describe, with its arrays
 * lent to their fields, so the record is read straight into it (no copy
 * of the parameters is ever held), and the other fields read past. */
static int
build(struct vt *s, void *arg)
{
	struct load *L = arg;
	struct vit_config c;
	char why[256];

	if (vit_config_load(&c, s, why, sizeof why) < 0 ||
	    carried(s, &c, why, sizeof why) < 0)
		goto bad;
	int maxT = L->maxT > 0 ? L->maxT : grid_tokens(&c);
	L->m = L->resume ? vit_create(&c, L->maxB, maxT, 0, why, sizeof why) :
	    vit_create_infer(&c, L->maxB, maxT, why, sizeof why);
	if (L->m == NULL)
		goto bad;
	for (int i = 0; i < s->nfield; i++) {
		struct vt_field *f = &s->field[i];
		size_t n;
		float *dst = destination(L, f->name, &n);
		if (dst == NULL) {
			vt_skip(s, i);
			continue;
		}
		if (f->dtype != VT_F32 || f->nbytes != n * sizeof *dst) {
			snprintf(why, sizeof why, "field '%s' is %s[%lld], the model wants f32[%zu]",
			    f->name, vt_dtype_name(f->dtype), (long long)f->count, n);
			goto bad;
		}
		vt_lend(s, i, dst);
	}
	for (int t = 0; t < L->m->ntensor + 2 * L->resume; t++) {
		const char *name = t < L->m->ntensor ? L->m->tensor[t].name :
		    t == L->m->ntensor ? CKPT_ADAM_M : CKPT_ADAM_V;
		if (vt_find(s, name) < 0) {
			snprintf(why, sizeof why, "no field '%s'", name);
			goto bad;
		}
	}
	return 0;
bad:
	snprintf(s->err, sizeof s->err, "%s: %s", s->name, why);
	return -1;
}

struct vit *
ckpt_load(const char *path, struct vt *s, int maxB, int maxT, int resume,
    char *err, size_t errlen)
{
	struct load L = { maxB, maxT, resume, NULL };

	if (vt_load_with(s, path, build, &L) < 0) {
		snprintf(err, errlen, "%s", s->err);
		vit_destroy(L.m);
		return NULL;
	}
	return L.m;
}

int
ckpt_load_generators(struct vit *m, const char *path, char *err, size_t errlen)
{
	struct vt g, want;
	int rc = -1;

	vt_init(&want);
	if (vt_load_with(&g, path, pe_generators_only, NULL) < 0) {
		snprintf(err, errlen, "%s", g.err);
		goto out;
	}
	if (pe_keys(&m->c, &want, err, errlen) < 0)
		goto out;
	for (int i = 0; i < want.nmeta; i++) {
		const char *key = want.meta[i].key, *v = vt_meta(&g, key);
		if (v == NULL || strcmp(v, want.meta[i].val) != 0) {
			snprintf(err, errlen, "%s: %s is %s, the model's is %s", path,
			    key, v ? v : "missing", want.meta[i].val);
			goto out;
		}
	}
	rc = ckpt_copy_tensor(m, &g, PE_FIELD, err, errlen);
out:
	vt_free(&g);
	vt_free(&want);
	return rc;
}
