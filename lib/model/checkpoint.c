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
pe_keys(const struct vit_config *c, struct vt *s, struct err *e)
{
	struct pe pe;
	if (pe_parse(&pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) < 0)
		return err_set(e, "%s", pe.err.msg);
	if (pe_meta_write(&pe, s) < 0) {
		err_set(e, "%s", s->err.msg);
		return -1;
	}
	return 0;
}

int
ckpt_describe(struct vt *s, const struct vit *m, const struct vt *extra,
    int optimizer, struct err *e)
{
	/* a diverged model: a file keeps the last good one */
	if (vit_finite(m, optimizer, e) < 0)
		return err_prefix(e, "not written");
	for (int i = 0; extra != NULL && i < extra->nmeta; i++)
		if (vt_meta_add(s, extra->meta[i].key, extra->meta[i].val) < 0)
			goto fail;
	if (vit_config_save(&m->c, s) < 0)
		goto fail;
	if (pe_keys(&m->c, s, e) < 0)
		return -1;
	for (int t = 0; t < m->ntensor; t++) {
		const struct vit_tensor *w = &m->tensor[t];
		if (add_floats(s, w->name, w->rank, w->shape, m->param + w->off) < 0)
			goto fail;
	}
	if (optimizer) {
		int n[1];
		if (m->nparam > INT32_MAX) {
			err_set(e, "%zu parameters: too many", m->nparam);
			return -1;
		}
		n[0] = (int)m->nparam;
		if (add_floats(s, CKPT_ADAM_M, 1, n, m->adam_m) < 0 ||
		    add_floats(s, CKPT_ADAM_V, 1, n, m->adam_v) < 0)
			goto fail;
	}
	return 0;
fail:
	err_set(e, "%s", s->err.msg);
	return -1;
}

int
ckpt_save(const char *path, const struct vit *m, const struct vt *extra,
    int optimizer, struct err *e)
{
	struct vt s;
	int rc = -1;

	vt_init(&s);
	if (ckpt_describe(&s, m, extra, optimizer, e) < 0) {
		/* the message names the file, as vt_save's do */
		err_prefix(e, "%s", path);
	} else if (vt_save(&s, path) < 0)
		err_set(e, "%s", s.err.msg);
	else
		rc = 0;
	vt_free(&s);
	return rc;
}

/* Copy the f32 field name of s, which must hold n floats, to dst. */
static int
copy_field(struct vt *s, const char *name, float *dst, size_t n, struct err *e)
{
	struct vt_field *f = vt_get(s, name);
	if (f == NULL) {
		err_set(e, "%s: no field '%s'", s->name, name);
		return -1;
	}
	if (f->dtype != VT_F32 || (size_t)f->count != n) {
		err_set(e, "%s: field '%s' is %s[%lld], the model wants f32[%zu]",
		    s->name, name, vt_dtype_name(f->dtype), (long long)f->count, n);
		return -1;
	}
	memcpy(dst, f->data, n * sizeof *dst);
	return 0;
}

int
ckpt_copy_tensor(struct vit *m, struct vt *s, const char *name, struct err *e)
{
	const struct vit_tensor *w = vit_find_tensor(m, name);
	if (w == NULL) {
		err_set(e, "the model has no tensor '%s'", name);
		return -1;
	}
	return copy_field(s, name, m->param + w->off, w->n, e);
}

/* ckpt_load's arguments and model, for build. */
struct load {
	int	 maxB, maxT, resume;
	struct vit *m;
};

/* Where in L->m the field name is read: a tensor, or when resuming a
 * moment; NULL for a field the model does not read. */
static float *
destination(const struct load *L, const char *name)
{
	const struct vit_tensor *w = vit_find_tensor(L->m, name);

	if (w != NULL)
		return L->m->param + w->off;
	if (L->resume && strcmp(name, CKPT_ADAM_M) == 0)
		return L->m->adam_m;
	if (L->resume && strcmp(name, CKPT_ADAM_V) == 0)
		return L->m->adam_v;
	return NULL;
}

/* Whether the header of s declares the field name as f32 of shape
 * dims[rank], exactly.  0, or -1 with why. */
static int
declared(struct vt *s, const char *name, int rank, const int64_t *dims,
    struct err *why)
{
	const struct vt_field *f = vt_get(s, name);
	char have[128], want[128];
	int same;

	if (f == NULL)
		return err_set(why, "no field '%s'", name);
	same = f->dtype == VT_F32 && f->rank == rank;
	for (int k = 0; same && k < rank; k++)
		same = f->dim[k] == dims[k];
	if (same)
		return 0;
	return err_set(why, "field '%s' is %s%s, the model wants f32%s", name,
	    vt_dtype_name(f->dtype), vt_shape_str(f->dim, f->rank, have, sizeof have),
	    vt_shape_str(dims, rank, want, sizeof want));
}

/* fits's arguments: the record, and where to say why a field does not. */
struct fit {
	struct vt *s;
	struct err *why;
};

/* vit_layout's visitor: tensor t of the model must have a field of its
 * own shape. */
static int
fits(void *arg, const struct vit_tensor *t)
{
	struct fit *F = arg;
	int64_t dims[VIT_MAXRANK];

	for (int k = 0; k < t->rank; k++)
		dims[k] = t->shape[k];
	return declared(F->s, t->name, t->rank, dims, F->why);
}

/* Whether the record of s, header read, carries the model of c: a field
 * of the exact dtype and shape of each of its tensors, laid out as
 * vit_create will (vit_layout), and with resume the moments [nparam];
 * and, in a regular file, the bytes the header declares must be there.
 * Checked before anything is built, so that a checkpoint whose keys
 * describe a model larger than its fields costs only its own bytes.
 * 0, or -1 with why. */
static int
carried(struct vt *s, const struct vit_config *c, int resume, struct err *why)
{
	struct fit F = { s, why };
	double bytes = 0;
	int64_t n[1];
	size_t np;
	struct stat st;
	off_t at;

	for (int i = 0; i < s->nfield; i++)
		bytes += (double)s->field[i].nbytes;
	if (fstat(fileno(s->fp), &st) == 0 && S_ISREG(st.st_mode) &&
	    (at = ftello(s->fp)) >= 0 && bytes > (double)(st.st_size - at)) {
		return err_set(why, "the header declares %.0f bytes of fields, the file "
		    "holds %lld after it (truncated?)", bytes,
		    (long long)(st.st_size - at));
	}
	if (vit_layout(c, fits, &F, &np, why) != 0)
		return -1;
	n[0] = (int64_t)np;
	if (resume && (declared(s, CKPT_ADAM_M, 1, n, why) < 0 ||
	    declared(s, CKPT_ADAM_V, 1, n, why) < 0))
		return -1;
	return 0;
}

/* vt_load_with's prepare: the model the keys describe, once its fields
 * are known to carry it, with its arrays lent to their fields, so the
 * record is read straight into it (no copy of the parameters is ever
 * held), and the other fields read past. */
static int
build(struct vt *s, void *arg)
{
	struct load *L = arg;
	struct vit_config c;
	struct err why;

	/* a stream given where a model goes (operands swapped) */
	if (vt_meta(s, "VIT_DIM") == NULL && vt_find(s, "patch") >= 0) {
		err_set(&s->err, "%s: a data stream (field 'patch'), not a model "
		    "checkpoint: the model comes first", s->name);
		return -1;
	}
	if (vit_config_load(&c, s, &why) < 0 ||
	    carried(s, &c, L->resume, &why) < 0)
		goto bad;
	int maxT = L->maxT > 0 ? L->maxT : vit_grid_size(c.grid, c.axes);
	L->m = L->resume ? vit_create(&c, L->maxB, maxT, 0, &why) :
	    vit_create_infer(&c, L->maxB, maxT, &why);
	if (L->m == NULL)
		goto bad;
	for (int i = 0; i < s->nfield; i++) {
		float *dst = destination(L, s->field[i].name);
		if (dst != NULL)
			vt_lend(s, i, dst);
		else
			vt_skip(s, i);
	}
	return 0;
bad:
	err_set(&s->err, "%s: %s", s->name, why.msg);
	return -1;
}

/* Whether path starts as a safetensors file does: an 8-byte header
 * length, then the header's '{'. */
static int
safetensors_magic(const char *path)
{
	unsigned char b[9];
	FILE *fp = fopen(path, "rb");
	int yes = fp != NULL && fread(b, 1, 9, fp) == 9 && b[8] == '{' && b[6] == 0 && b[7] == 0;

	if (fp != NULL)
		fclose(fp);
	return yes;
}

struct vit *
ckpt_load(const char *path, struct vt *s, int maxB, int maxT, int resume,
    struct err *e)
{
	struct load L = { maxB, maxT, resume, NULL };

	if (vt_load_with(s, path, build, &L) < 0) {
		err_set(e, "%s%s", s->err.msg, safetensors_magic(path) ?
		    ": a safetensors file, which vtool from-safetensors converts" : "");
		vit_destroy(L.m);
		vt_free(s);
		return NULL;
	}
	if (vit_finite(L.m, resume, e) < 0) {
		err_prefix(e, "%s", path);
		vit_destroy(L.m);
		vt_free(s);
		return NULL;
	}
	return L.m;
}

int
ckpt_load_generators(struct vit *m, const char *path, struct err *e)
{
	struct vt g, want;
	int rc = -1;

	vt_init(&want);
	if (vt_load_with(&g, path, pe_generators_only, NULL) < 0) {
		err_set(e, "%s", g.err.msg);
		goto out;
	}
	if (pe_keys(&m->c, &want, e) < 0)
		goto out;
	for (int i = 0; i < want.nmeta; i++) {
		const char *key = want.meta[i].key, *v = vt_meta(&g, key);
		if (v == NULL || strcmp(v, want.meta[i].val) != 0) {
			err_set(e, "%s: %s is %s, the model's is %s", path,
			    key, v ? v : "missing", want.meta[i].val);
			goto out;
		}
	}
	rc = ckpt_copy_tensor(m, &g, PE_FIELD, e);
	if (rc == 0 && vit_finite(m, 0, e) < 0)
		rc = err_prefix(e, "%s", path);
out:
	vt_free(&g);
	vt_free(&want);
	return rc;
}
