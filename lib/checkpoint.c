/*
 * checkpoint.c - models to and from single-record containers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "pe.h"

/* Add an f32 field name[rank] whose payload is the floats at src, lent:
 * a checkpoint is written from the model's arrays, never a copy of them
 * (which for ViT-B would be 1 GB more at every save). */
static int
add_floats(struct vt *s, const char *name, int rank, const int *shape,
    const float *src)
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
ckpt_save(const char *path, const struct vit *m, const struct vt *extra,
    int optimizer, char *err, size_t errlen)
{
	struct vt s;
	int rc = -1;

	vt_init(&s);
	for (int i = 0; extra != NULL && i < extra->nmeta; i++)
		if (vt_meta_add(&s, extra->meta[i].key, extra->meta[i].val) < 0)
			goto fail;
	if (vit_config_save(&m->c, &s) < 0)
		goto fail;
	if (pe_keys(&m->c, &s, err, errlen) < 0)
		goto out;
	for (int t = 0; t < m->ntensor; t++) {
		const struct vit_tensor *w = &m->tensor[t];
		if (add_floats(&s, w->name, w->rank, w->shape, m->param + w->off) < 0)
			goto fail;
	}
	if (optimizer) {
		int n[1];
		if (m->nparam > INT32_MAX) {
			snprintf(err, errlen, "%s: %zu parameters: too many", path, m->nparam);
			goto out;
		}
		n[0] = (int)m->nparam;
		if (add_floats(&s, CKPT_ADAM_M, 1, n, m->adam_m) < 0 ||
		    add_floats(&s, CKPT_ADAM_V, 1, n, m->adam_v) < 0)
			goto fail;
	}
	if (vt_save(&s, path) < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	snprintf(err, errlen, "%s", s.err);
out:
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

/* For vt_load_fields: every field but the AdamW moments. */
static int
not_moment(const char *name)
{
	return strcmp(name, CKPT_ADAM_M) != 0 && strcmp(name, CKPT_ADAM_V) != 0;
}

struct vit *
ckpt_load(const char *path, struct vt *s, int maxB, int maxT, int resume,
    char *err, size_t errlen)
{
	struct vit_config c;
	struct vit *m;
	char why[256];

	if (vt_load_fields(s, path, resume ? NULL : not_moment) < 0) {
		snprintf(err, errlen, "%s", s->err);
		return NULL;
	}
	if (vit_config_load(&c, s, why, sizeof why) < 0)
		goto bad;
	if (maxT <= 0)
		maxT = grid_tokens(&c);
	m = resume ? vit_create(&c, maxB, maxT, 0, why, sizeof why) :
	    vit_create_infer(&c, maxB, maxT, why, sizeof why);
	if (m == NULL)
		goto bad;
	for (int t = 0; t < m->ntensor; t++)
		if (ckpt_copy_tensor(m, s, m->tensor[t].name, err, errlen) < 0)
			goto fail;
	if (resume &&
	    (copy_field(s, CKPT_ADAM_M, m->adam_m, m->nparam, err, errlen) < 0 ||
	    copy_field(s, CKPT_ADAM_V, m->adam_v, m->nparam, err, errlen) < 0))
		goto fail;
	for (int i = 0; i < s->nfield; i++) {	/* in m now: the keys stay */
		free(s->field[i].data);
		s->field[i].data = NULL;
		s->field[i].cap = s->field[i].nbytes = 0;
	}
	return m;
fail:
	vit_destroy(m);
	return NULL;
bad:
	snprintf(err, errlen, "%s: %s", path, why);
	return NULL;
}

int
ckpt_load_generators(struct vit *m, const char *path, char *err, size_t errlen)
{
	struct vt g, want;
	int rc = -1;

	vt_init(&want);
	if (vt_load_fields(&g, path, pe_field) < 0) {
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
