/*
 * posenc.c - the position stage of the ViT (posenc.h): the encoding's
 * rotations and tables for a batch's positions, their backward, and the
 * bookkeeping of reuse and of the deferred gradient.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adamw.h"
#include "carve.h"
#include "err.h"
#include "nn.h"
#include "pe_method.h"
#include "posemb.h"
#include "posenc.h"
#include "rng.h"
#include "rotary.h"

int
posenc_init(struct posenc *p, const struct vit_config *c, struct err *e)
{
	memset(p, 0, sizeof *p);
	p->c = c;
	if (pe_parse(&p->pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) == -1)
		return err_set(e, "%s", p->pe.err.msg);
	p->rotary = p->pe.rotary && !p->pe.identity;
	p->tab = p->pe.method->table;
	p->K = 1 << c->axes;
	return 0;
}

int
posenc_table_rows(const struct posenc *p, const char **name)
{
	return (int)pe_table_rows(&p->pe, p->c->grid, name);
}

size_t
posenc_fixed_floats(const struct posenc *p)
{
	const struct vit_config *c = p->c;

	return p->tab && p->tab->fill ?
	    (size_t)p->tab->rows(c->grid, c->axes) * c->dim : 0;
}

void
posenc_bind(struct posenc *p, float *table, float *dtable, float *params,
    float *dparams)
{
	p->table = table;
	p->dtable = dtable;
	p->params = params;
	p->dparams = dparams;
}

void
posenc_init_table(const struct posenc *p, float *tab, size_t n, struct rng *r)
{
	p->tab->init(tab, n, r);
}

int
posenc_init_params(struct posenc *p, uint64_t seed, struct err *e)
{
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = seed };

	if (p->params == NULL)
		return 0;
	if (pe_init_params(&p->pe, &ini, p->params) == -1)
		return err_set(e, "%s", p->pe.err.msg);
	return 0;
}

size_t
posenc_carve(struct posenc *p, int maxB, int maxT, int train, char *block)
{
	const struct vit_config *c = p->c;
	char *cur = block;
	size_t tot = 0;

	if (!p->rotary)
		return 0;
	size_t Tr = (size_t)(c->pos_per_record ? maxB : 1) * (maxT + 1),
	    nr = (size_t)p->pe.nset * Tr * p->pe.rsize,
	    hd = c->dim / c->heads, np = p->pe.basis ? (size_t)p->pe.nset * hd * hd : 0;
	p->R = carve(&cur, nr, &tot);
	p->dR = train ? carve(&cur, nr, &tot) : NULL;
	p->basis = np > 0 ? carve(&cur, np, &tot) : NULL;
	p->dbasis = np > 0 && train ? carve(&cur, np, &tot) : NULL;
	p->posr = carve(&cur, Tr * c->axes, &tot);
	p->keypos = carve(&cur, Tr * c->axes, &tot);
	p->keypar = carve(&cur, p->pe.nparam, &tot);
	return tot;
}

int
posenc_alloc(struct posenc *p, int maxB, int maxT, struct err *e)
{
	const struct vit_config *c = p->c;

	if (p->rotary && pe_work_init(&p->work, &p->pe,
	    (c->pos_per_record ? maxB : 1) * (maxT + 1)) == -1)
		return err_set(e, "%s", p->work.err.msg);
	p->work.f32 = 1;	/* float R, as float32 autograd: posenc_exact */
	int sampled = p->tab && p->tab->sample;
	size_t rows = (size_t)(1 + maxT) * (sampled ? maxB : 1);
	p->pidx = malloc(sizeof(int) * rows * p->K);
	p->pw = malloc(sizeof(float) * rows * p->K);
	if (p->pidx == NULL || p->pw == NULL)
		return err_set(e, "out of memory");
	if (sampled && (p->apos = malloc(sizeof(float) * rows * c->axes)) == NULL)
		return err_set(e, "out of memory");
	if (p->tab && p->tab->fill) {
		if ((p->fixed = malloc(sizeof(float) * posenc_fixed_floats(p))) == NULL)
			return err_set(e, "out of memory");
		p->tab->fill(&p->pe, p->fixed, c->grid, c->dim);
	}
	if (posenc_grid_table(p) && vit_grid_size(c->grid, c->axes) <= maxT)
		posenc_set_grid(p, c->grid);
	return 0;
}

void
posenc_free(struct posenc *p)
{
	free(p->pidx);
	free(p->pw);
	free(p->apos);
	free(p->fixed);
	pe_work_free(&p->work);
	p->pidx = NULL;
	p->pw = p->apos = p->fixed = NULL;
}

int
posenc_grid_table(const struct posenc *p)
{
	return p->tab && p->tab->grid;
}

int
posenc_needs_positions(const struct posenc *p)
{
	return p->rotary || (p->tab && p->tab->sample);
}

void
posenc_set_grid(struct posenc *p, const int *grid)
{
	memcpy(p->grid, grid, sizeof(int) * p->c->axes);
	if (posenc_grid_table(p))
		p->tab->grid(p->pidx, p->pw, p->c->grid, grid, p->c->axes);
}

void
posenc_set_cls(struct posenc *p, const float *cls)
{
	p->clsrec = cls;
}

const float *
posenc_cls(const struct posenc *p, int b)
{
	return p->clsrec ? p->clsrec + (size_t)b * p->c->axes : p->c->cls_pos;
}

/* n rows of A positions in place as the encoding sees them:
 * pos_scale * p + pos_shift (the identity is left alone, bit for bit). */
static void
map_positions(const struct vit_config *c, float *p, size_t n)
{
	int A = c->axes, same = 1;

	for (int a = 0; a < A; a++)
		same &= c->pos_scale[a] == 1 && c->pos_shift[a] == 0;
	for (size_t t = 0; t < n && !same; t++)
		for (int a = 0; a < A; a++)
			p[t * A + a] = (float)((double)c->pos_scale[a] * p[t * A + a] +
			    c->pos_shift[a]);
}

/* dst[nrec][cls + T][A]: the first nrec records' CLS position (when cls)
 * and their tokens' pos[b][T][A], as the encoding sees them. */
static void
gather_positions(const struct posenc *p, const float *pos, int nrec, int T,
    int cls, float *dst)
{
	int A = p->c->axes;

	for (int b = 0; b < nrec; b++) {
		float *d = dst + (size_t)b * (T + cls) * A;
		if (cls)
			memcpy(d, posenc_cls(p, b), sizeof(float) * A);
		memcpy(d + (size_t)cls * A, pos + (size_t)b * T * A,
		    sizeof(float) * T * A);
	}
	map_positions(p->c, dst, (size_t)nrec * (T + cls));
}

/* The (row, weight) pairs of a table read at positions for this batch:
 * the CLS at its position (none without one), then the tokens; once for
 * all records when they share positions, else for each record's rows. */
static void
sample_table(struct posenc *p, const float *pos /* [B][T][A] */, int B, int T,
    int shared)
{
	const struct vit_config *c = p->c;
	int T1 = T + 1, K = p->K, nrec = shared ? 1 : B;

	p->tab_per_record = !shared;
	gather_positions(p, pos, nrec, T, 1, p->apos);
	p->tab->sample(&p->pe, p->pidx, p->pw, p->apos, nrec * T1, c->grid);
	if (!c->cls_rotate)
		for (int b = 0; b < nrec; b++)
			memset(p->pw + (size_t)b * T1 * K, 0, sizeof(float) * K);
}

/* The positions R is made for into posr, its rows into Tn, Tr; 1 when
 * the R held was made from them and the parameters as they are. */
static int
current(struct posenc *p, const float *pos, int B, int T, int shared)
{
	int A = p->c->axes, cls = p->c->cls_rotate, nrec = shared ? 1 : B;

	p->Tn = T + cls;
	p->Tr = nrec * p->Tn;
	p->per_record = !shared;
	gather_positions(p, pos, nrec, T, cls, p->posr);
	/* R[set][t] depends on t's position and the parameters alone */
	size_t npos = sizeof(float) * p->Tr * A, npar = sizeof(float) * p->pe.nparam;
	return p->rot_ok && p->keyTr == p->Tr && memcmp(p->keypos, p->posr, npos) == 0 &&
	    (npar == 0 || memcmp(p->keypar, p->params, npar) == 0);
}

void
posenc_settle_stale(struct posenc *p, const float *pos, int B, int T, int shared)
{
	if (p->rotary && p->dR_pending && !current(p, pos, B, T, shared))
		posenc_settle(p);
}

int
posenc_prepare(struct posenc *p, const float *pos, int B, int T, int shared)
{
	p->B = B;
	p->T1 = T + 1;
	if (p->tab && p->tab->sample)
		sample_table(p, pos, B, T, shared);
	if (!p->rotary || current(p, pos, B, T, shared))
		return 0;
	pe_rotations(&p->pe, &p->work, p->params, p->Tr, p->posr, p->R);
	if (p->pe.basis)
		pe_bases(&p->pe, &p->work, p->params, p->basis);
	memcpy(p->keypos, p->posr, sizeof(float) * p->Tr * p->c->axes);
	if (p->pe.nparam > 0)
		memcpy(p->keypar, p->params, sizeof(float) * p->pe.nparam);
	p->keyTr = p->Tr;
	p->rot_ok = 1;
	p->made++;
	return 1;
}

void
posenc_add_table(const struct posenc *p, float *h, int B, int T1)
{
	if (p->tab)
		posemb_forward(h, p->fixed ? p->fixed : p->table, p->pidx, p->pw,
		    p->tab_per_record, B, T1, p->K, p->c->dim);
}

/* The shape of the rotary kernels for this batch. */
static struct rot
rot_shape(const struct posenc *p, int qcls)
{
	const struct vit_config *c = p->c;
	return (struct rot){ .pe = &p->pe, .B = p->B, .T1 = p->T1,
	    .H = c->heads, .hd = c->dim / c->heads, .Tn = p->Tn,
	    .Tr = p->Tr, .per_record = p->per_record, .qcls = qcls,
	    .P = p->basis, .dP = p->dbasis };
}

void
posenc_rotate(const struct posenc *p, int l, int qcls, float *qkr,
    const float *qkv)
{
	struct rot rt = rot_shape(p, qcls);
	rotary_forward(&rt, l, p->R, qkr, qkv);
}

void
posenc_backward_begin(struct posenc *p)
{
	int hd = p->c->dim / p->c->heads;

	if (!p->rotary || p->dR_pending)
		return;
	memset(p->dR, 0, sizeof(float) * p->pe.nset * p->Tr * p->pe.rsize);
	if (p->pe.basis)
		memset(p->dbasis, 0, sizeof(float) * p->pe.nset * hd * hd);
}

void
posenc_rotate_backward(struct posenc *p, int l, int qcls, float *dqkv,
    float *dqkr, float *qkr, const float *qkv)
{
	struct rot rt = rot_shape(p, qcls);
	rotary_backward(&rt, l, p->R, p->dR, dqkv, dqkr, qkr, qkv);
}

void
posenc_backward_end(struct posenc *p, const float *dh, int B, int T1)
{
	if (p->rotary) {
		p->dR_pending = 1;
		if (!p->defer)
			posenc_settle(p);
	}
	if (p->dtable != NULL)
		p->tab->backward(p->dtable, dh, p->pidx, p->pw, p->tab_per_record, B,
		    T1, p->K, p->c->dim);
}

void
posenc_settle(struct posenc *p)
{
	if (!p->dR_pending)
		return;
	pe_rotations_backward(&p->pe, &p->work, p->keypar, p->keyTr, p->keypos,
	    p->R, p->dR, p->dparams);
	if (p->pe.basis)
		pe_bases_backward(&p->pe, &p->work, p->keypar, p->dbasis, p->dparams);
	p->dR_pending = 0;
}

void
posenc_defer(struct posenc *p, int on)
{
	p->defer = on;
	if (!on)
		posenc_settle(p);
}

void
posenc_exact(struct posenc *p, int exact)
{
	if (p->work.f32 == !exact)
		return;
	posenc_settle(p);
	p->work.f32 = !exact;
	p->rot_ok = 0;
}

void
posenc_zero_grad(struct posenc *p)
{
	p->dR_pending = 0;
}

double
posenc_untied_sumsq(const struct posenc *p, double sum)
{
	int64_t off, n = pe_tied(&p->pe, &off);

	if (n == 0 || p->dparams == NULL)
		return sum;
	for (int k = 0; k < p->pe.nset; k++)
		if (pe_tie_first(&p->pe, k) != k)
			sum -= grad_sumsq(p->dparams + k * p->pe.set_params + off, n);
	return sum;
}

int
posenc_shared(const struct posenc *p, const float *pos, int B, int T)
{
	int A = p->c->axes;

	return pos == NULL || (vit_shared_positions(pos, B, T, A) &&
	    (p->clsrec == NULL || vit_shared_positions(p->clsrec, B, 1, A)));
}
