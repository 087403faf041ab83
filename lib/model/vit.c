/*
 * vit.c - the ViT model: parameter arena and tensor table, activations,
 * forward and backward through the layers of nn.h.
 *
 * Rows: the residual stream is h[B][T1][D] with T1 = T + 1 (CLS first);
 * every per-token layer works on the N = B * T1 rows at once.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "adamw.h"
#include "carve.h"
#include "err.h"
#include "hugemem.h"
#include "nn.h"
#include "posenc.h"
#include "rng.h"
#include "vit.h"

struct layer {			/* parameter views of one block */
	float	*ln1g, *ln1b;	/* [D] */
	float	*qkvw, *qkvb;	/* [3D][D], [3D] */
	float	*projw, *projb;	/* [D][D], [D] */
	float	*logsig;	/* [H] locality, or NULL */
	float	*ln2g, *ln2b;	/* [D] */
	float	*fc1w, *fc1b;	/* [M][D], [M] */
	float	*fc2w, *fc2b;	/* [D][M], [D] */
};

struct lact {			/* activations of one block */
	float	*ln1;		/* [N][D] */
	float	*ln1m, *ln1r;	/* [N] */
	float	*qkv;		/* [N][3D] */
	float	*qkr;		/* [N][2D] rotated q, k (rotary encodings), or NULL */
	float	*P;		/* [B][H][T1][T1] softmax (infer: NULL) */
	float	*att;		/* [N][D] attention output before proj */
	float	*h1;		/* [N][D] residual after attention (infer:
				 * att's buffer) */
	float	*ln2;		/* [N][D] (infer: ln1's buffer) */
	float	*ln2m, *ln2r;	/* [N] (infer: ln1m's, ln1r's) */
	float	*fc1;		/* [N][M] before GELU (GELU' of it after a
				 * forward with targets) */
	float	*gel;		/* [N][M] after GELU and dropout (infer:
				 * fc1's buffer) */
	float	*mproj, *mgel, *mfc2;	/* dropout masks [N][D], [N][M], [N][D] */
	/* bf16 training: the rounded copies of ln1, att, ln2 and gel that
	 * their producers write while the rows are in cache, read by the
	 * forward's products and again by the weight gradients' (twins,
	 * gemm_bf16_twin); else NULL */
	void	*ln1c, *attc, *ln2c, *gelc;
	/* ... and without a rotation, qkv's rows rounded by the product's
	 * epilogue for attention, forward and backward (qkv itself is then
	 * never written); else NULL */
	void	*qkvc;
};

struct vit_state {
	struct posenc pos;	/* the position stage: encoding, rotations,
				   tables (posenc.h) */
	int	 nthr;

	/* parameter views; posemb: the position stage's learned table, and
	 * pe_params its pe.params [nparam], or NULL */
	float	*patchw, *patchb, *cls, *posemb, *normg, *normb, *headw, *headb;
	float	*pe_params;
	struct layer *L;	/* [depth] parameter views */

	/* last forward */
	int	 B, T, training, have_target;
	uint64_t seed;

	/* activations, all in one block */
	char	*block;
	float	*x;		/* [B][T][P] input copy (not infer) */
	float	*h0;		/* [N][D] embedding output (after emb dropout;
				 * infer: the second of hs) */
	float	*memb;		/* [N][D] embedding dropout mask */
	struct lact *A;		/* [depth]: one block's, all alike (infer) */
	float	*hs;		/* [depth or 2 (infer)][N][D] residual after
				 * each block (hout) */
	float	*lnf, *lnfm, *lnfr;	/* [N][D], [N], [N] */
	float	*pooled;	/* [B][D] */
	float	*logits, *prob, *target;	/* [B][C] */
	float	*dist2;		/* [B][T1][T1] locality distances */
	int	 dist_per_record;

	/* backward scratch */
	float	*dh;		/* [N][D] gradient of the residual stream */
	float	*dD;		/* [N][D] */
	float	*dqkv;		/* [N][3D] */
	float	*dqkr;		/* [N][2D] gradient of the rotated q, k */
	float	*dM;		/* [N][M] */
	void	*dMc;		/* bf16 training: dM's rounded copy, which
				 * fc2's backward epilogue writes for fc1's
				 * products (dM itself is then never
				 * written); else NULL */
	float	*dpooled, *dlogits;	/* [B][D], [B][C] */
	float	*dx;		/* [B][T][P] */
	float	*tmp;		/* [N][D] patch rows / projection outputs */
	float	*ascr;		/* attention scratch [nthr][2][T1][T1] */
	/* sums of parameter gradients over each chunk of rows, made by
	 * row epilogues while the rows are in cache, added in chunk order */
	float	*bpart;		/* [nchunk][max(M, 3D)] fc1's, proj's or qkv's
				 * bias */
	float	*fc2part;	/* [nchunk][D] fc2's bias (fc1's are made in
				 * bpart during the same product) */
	float	*lnpart;	/* [nchunk][2D] a LayerNorm's gain and bias */
	float	*partial;	/* [B][H] */
	/* [B][H][T1][T1] the weights a probe is shown, where the block keeps
	 * none (vit_set_probe) */
	float	*probe_w;
	char	*twins;		/* the block of lact's rounded copies, and
				   of scr */
	float	*scr;		/* [nscr][scrlen]: each thread's rows of an
				   epilogue's output that only its rounded
				   copy keeps (rows_out) */
	int	 nscr;
	size_t	 scrlen;
};

/* The gradient of parameter view p: the arena holds grad nparam floats
 * after param. */
#define GRAD(m, p)	((p) + ((m)->grad - (m)->param))

/* ---- arena and tensor table ---- */

/* Two passes over the same layout: the first (base NULL) sizes the arena
 * and fills the tensor table, the second points the views into it.  A
 * sizing pass with visit hands each tensor to it instead of the table
 * (vit_layout: a model's tensors before anything is built). */
struct builder {
	struct vit *m;
	float	*base;		/* params, or NULL while sizing */
	int	 cap;
	int	 sizing;
	int	(*visit)(void *arg, const struct vit_tensor *t);
	void	*arg;
	int	 rc;		/* visit's first non-zero; -1: no memory */
};

static float *
tensor(struct builder *b, const char *name, int decay,
    int rank, ...)
{
	struct vit *m = b->m;
	va_list ap;
	size_t n = 1;
	int shape[VIT_MAXRANK];
	va_start(ap, rank);
	for (int i = 0; i < rank; i++) {
		shape[i] = va_arg(ap, int);
		n *= shape[i];
	}
	va_end(ap);
	size_t off = m->nparam;
	m->nparam += (n + 15) & ~(size_t)15;	/* every tensor 64-byte aligned */
	if (!b->sizing)
		return b->base + off;
	if (b->rc != 0)
		return NULL;
	struct vit_tensor t = { .off = off, .n = n, .rank = rank, .decay = decay };
	snprintf(t.name, sizeof t.name, "%s", name);
	memcpy(t.shape, shape, sizeof(int) * rank);
	if (b->visit != NULL) {
		b->rc = b->visit(b->arg, &t);
		return NULL;
	}
	if (m->ntensor == b->cap) {
		int cap = b->cap ? 2 * b->cap : 64;
		void *p = realloc(m->tensor, sizeof *m->tensor * cap);
		if (p == NULL) {
			b->rc = -1;
			return NULL;
		}
		m->tensor = p;
		b->cap = cap;
	}
	m->tensor[m->ntensor++] = t;
	return NULL;
}

int
vit_grid_size(const int *g, int A)
{
	int n = 1;
	for (int a = 0; a < A; a++)
		n *= g[a];
	return n;
}

static void
layout(struct builder *b)
{
	struct vit *m = b->m;
	struct vit_state *s = m->st;
	const struct vit_config *c = &m->c;
	int D = c->dim, M = c->mlp, H = c->heads;
	char nm[VIT_MAXNAME];
	const char *table;
	int rows = posenc_table_rows(&s->pos, &table);

	m->nparam = 0;
	s->patchw = tensor(b, "patch.w", 1, 2, D, c->P);
	s->patchb = tensor(b, "patch.b", 0, 1, D);
	s->cls = tensor(b, "cls", 0, 1, D);
	if (rows > 0)
		s->posemb = tensor(b, table, 0, 2, rows, D);
	for (int l = 0; l < c->depth; l++) {
		struct layer none, *L = s->L != NULL ? &s->L[l] : &none;
#define T(field, decay, name, ...) do {					\
	snprintf(nm, sizeof nm, "blocks.%d.%s", l, name);		\
	L->field = tensor(b, nm, decay, __VA_ARGS__);	\
} while (0)
		T(ln1g, 0, "ln1.w", 1, D);
		T(ln1b, 0, "ln1.b", 1, D);
		T(qkvw, 1, "attn.qkv.w", 2, 3 * D, D);
		T(qkvb, 0, "attn.qkv.b", 1, 3 * D);
		T(projw, 1, "attn.proj.w", 2, D, D);
		T(projb, 0, "attn.proj.b", 1, D);
		if (c->locality)
			T(logsig, 0, "attn.log_sigma", 1, H);
		T(ln2g, 0, "ln2.w", 1, D);
		T(ln2b, 0, "ln2.b", 1, D);
		T(fc1w, 1, "mlp.fc1.w", 2, M, D);
		T(fc1b, 0, "mlp.fc1.b", 1, M);
		T(fc2w, 1, "mlp.fc2.w", 2, D, M);
		T(fc2b, 0, "mlp.fc2.b", 1, D);
#undef T
	}
	s->normg = tensor(b, "norm.w", 0, 1, D);
	s->normb = tensor(b, "norm.b", 0, 1, D);
	s->headw = tensor(b, "head.w", 1, 2, c->classes, D);
	s->headb = tensor(b, "head.b", 0, 1, c->classes);
	if (s->pos.pe.nparam > 0)
		s->pe_params = tensor(b, PE_FIELD, 0, 1, (int)s->pos.pe.nparam);
}

static int
init_params(struct vit *m, uint64_t seed, struct err *e)
{
	const struct vit_config *c = &m->c;
	struct vit_state *s = m->st;
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *t = &m->tensor[i];
		float *p = m->param + t->off;
		const char *leaf = strrchr(t->name, '.');
		struct rng r;
		rng_seed(&r, seed, (uint64_t)i);	/* one stream per tensor */
		if (p == s->pe_params)
			continue;	/* posenc_init_params below */
		if (p == s->posemb)
			posenc_init_table(&s->pos, p, t->n, &r);
		else if (strstr(t->name, "log_sigma") != NULL)
			for (size_t j = 0; j < t->n; j++)
				p[j] = logf(c->sigma);
		else if (t->rank >= 2 || strcmp(t->name, "cls") == 0)
			rng_trunc_normal(&r, p, t->n, 0.02f);
		else if (leaf != NULL && strcmp(leaf, ".w") == 0)
			for (size_t j = 0; j < t->n; j++)
				p[j] = 1.0f;	/* LayerNorm gains */
		else
			memset(p, 0, sizeof(float) * t->n);
	}
	return posenc_init_params(&s->pos, seed, e);
}

/* ---- activations ---- */

/* Chunks of chunk rows among N. */
static int
nchunks(int N, int chunk)
{
	return (N + chunk - 1) / chunk;
}

/* Carve n floats when want, else NULL. */
static float *
carve_if(int want, char **cur, size_t n, size_t *total)
{
	return want ? carve(cur, n, total) : NULL;
}

/* Point every activation buffer into block (NULL: just count).  A model
 * for forward passes alone (m->infer) has no backward's buffers, one
 * block's activations for every block (a block reads only its input, the
 * residual stream, once the previous one is done) and two residual
 * buffers, the embedding's in the second: depth times less memory.
 * Within its block, GELU works in place, ln2 takes ln1's buffer (dead
 * once qkv is made; the next ln1 is made after fc1 has read ln2), h1
 * att's (proj's chunks write the rows they have read: gemm_chunks), and
 * attention keeps no probabilities. */
static size_t
activations(struct vit *m, char *block)
{
	struct vit_state *s = m->st;
	const struct vit_config *c = &m->c;
	size_t B = m->maxB, T1 = m->maxT + 1, N = B * T1, D = c->dim,
	    M = c->mlp, H = c->heads, C = c->classes, tot = 0;
	int train = !m->infer;
	int drop = train && c->dropout > 0, edrop = train && c->emb_dropout > 0;
	char *cur = block;

	s->x = carve_if(train, &cur, B * m->maxT * c->P, &tot);
	s->dx = carve_if(train, &cur, B * m->maxT * c->P, &tot);
	s->h0 = carve_if(train, &cur, N * D, &tot);
	s->memb = carve_if(edrop, &cur, N * D, &tot);
	s->hs = carve(&cur, (size_t)(train ? c->depth : 2) * N * D, &tot);
	if (!train)	/* block 0 reads it, writes hs[0]; block 1 writes here */
		s->h0 = block != NULL ? s->hs + N * D : NULL;
	for (int l = 0; l < c->depth; l++) {
		struct lact *a = &s->A[l];
		if (!train && l > 0) {
			*a = s->A[0];
			continue;
		}
		a->ln1 = carve(&cur, N * D, &tot);
		a->ln1m = carve(&cur, N, &tot);
		a->ln1r = carve(&cur, N, &tot);
		a->qkv = carve(&cur, N * 3 * D, &tot);
		a->qkr = s->pos.rotary ? carve(&cur, N * 2 * D, &tot) : NULL;
		a->P = carve_if(train, &cur, B * H * T1 * T1, &tot);
		a->att = carve(&cur, N * D, &tot);
		a->h1 = train ? carve(&cur, N * D, &tot) : a->att;
		a->ln2 = train ? carve(&cur, N * D, &tot) : a->ln1;
		a->ln2m = train ? carve(&cur, N, &tot) : a->ln1m;
		a->ln2r = train ? carve(&cur, N, &tot) : a->ln1r;
		a->fc1 = carve(&cur, N * M, &tot);
		a->gel = train ? carve(&cur, N * M, &tot) : a->fc1;
		a->mproj = carve_if(drop, &cur, N * D, &tot);
		a->mgel = carve_if(drop, &cur, N * M, &tot);
		a->mfc2 = carve_if(drop, &cur, N * D, &tot);
	}
	s->lnf = carve(&cur, N * D, &tot);
	s->lnfm = carve(&cur, N, &tot);
	s->lnfr = carve(&cur, N, &tot);
	s->pooled = carve(&cur, B * D, &tot);
	s->logits = carve(&cur, B * C, &tot);
	s->prob = carve(&cur, B * C, &tot);
	s->target = carve_if(train, &cur, B * C, &tot);
	s->dist2 = carve_if(c->locality, &cur, B * T1 * T1, &tot);
	s->dh = carve_if(train, &cur, N * D, &tot);
	s->dD = carve_if(train, &cur, N * D, &tot);
	s->dqkv = carve_if(train, &cur, N * 3 * D, &tot);
	s->dqkr = carve_if(train && s->pos.rotary, &cur, N * 2 * D, &tot);
	size_t pb = posenc_carve(&s->pos, m->maxB, m->maxT, train, cur);
	tot += pb;
	if (cur != NULL)
		cur += pb;
	s->dM = carve_if(train, &cur, N * M, &tot);
	s->dpooled = carve_if(train, &cur, B * D, &tot);
	s->dlogits = carve_if(train, &cur, B * C, &tot);
	s->tmp = carve(&cur, N * D, &tot);
	s->ascr = carve(&cur, (size_t)s->nthr * 2 * T1 * T1, &tot);
	/* as many as bf16's shorter chunks make (m's precision is set
	 * later) */
	size_t nchunk = nchunks((int)N, GEMM_CHUNK_BF16);
	s->bpart = carve_if(train, &cur, nchunk * (M > 3 * D ? M : 3 * D), &tot);
	s->fc2part = carve_if(train, &cur, nchunk * D, &tot);
	s->lnpart = carve_if(train, &cur, nchunk * 2 * D, &tot);
	s->partial = carve_if(train, &cur, B * H, &tot);
	return tot;
}

/* The position stage of m's config, which it keeps a pointer to (m's own
 * copy, not the caller's); 0, or -1 with e. */
static int
position_stage(struct vit *m, struct err *e)
{
	return posenc_init(&m->st->pos, &m->c, e);
}

int
vit_layout(const struct vit_config *c, int (*fn)(void *arg,
    const struct vit_tensor *t), void *arg, size_t *nparam, struct err *e)
{
	struct vit_state s = { 0 };
	struct vit m = { .c = *c, .st = &s };
	struct builder b = { .m = &m, .sizing = 1, .visit = fn, .arg = arg };

	if (vit_config_check(c, e) == -1 || position_stage(&m, e) == -1)
		return -1;
	layout(&b);
	*nparam = m.nparam;
	return b.rc;
}

/* 0 when the fixed table of model m, sized (nparam known), which no file
 * carries, holds no more floats than its parameters or VIT_MAXFIXED: a
 * small file cannot make its reader build a large table, nor can a
 * writer make what readers refuse.  -1 with e. */
static int
fixed_check(const struct vit *m, struct err *e)
{
	const struct vit_config *c = &m->c;
	size_t n = posenc_fixed_floats(&m->st->pos), nparam = m->nparam;

	if (n <= nparam || n <= VIT_MAXFIXED)
		return 0;
	return err_set(e, "its %s table of %d tokens would be %zu floats, more than "
	    "its %zu parameters", c->pe, vit_grid_size(c->grid, c->axes), n, nparam);
}

static struct vit *
create(const struct vit_config *c, int maxB, int maxT, uint64_t seed,
    int infer, struct err *e)
{
	if (vit_config_check(c, e) == -1)
		return NULL;
	if (maxB < 1 || maxT < 1 || maxT > 1 << 20 || maxB > 1 << 20 ||
	    (double)maxB * (maxT + 1) * (maxT + 1) * c->heads > 1e11) {
		err_set(e, "batch %d x %d tokens out of range", maxB, maxT);
		return NULL;
	}
	struct vit *m = calloc(1, sizeof *m);
	struct vit_state *s = calloc(1, sizeof *s);
	if (m == NULL || s == NULL)
		goto nomem;
	m->c = *c;
	m->st = s;
	m->infer = infer;
	m->maxB = maxB;
	m->maxT = maxT;
	s->nthr = omp_get_max_threads();
	if (position_stage(m, e) == -1)
		goto fail;
	s->L = calloc(c->depth, sizeof *s->L);
	s->A = calloc(c->depth, sizeof *s->A);
	if (s->L == NULL || s->A == NULL)
		goto nomem;

	struct builder b = { .m = m, .sizing = 1 };
	layout(&b);
	if (b.rc != 0)
		goto nomem;
	if (fixed_check(m, e) == -1)
		goto fail;
	size_t np = m->nparam, arena = (infer ? 1 : 4) * np;
	m->param = huge_alloc(arena * sizeof(float));
	if (m->param == NULL)
		goto nomem;
	memset(m->param, 0, arena * sizeof(float));
	if (!infer) {
		m->grad = m->param + np;
		m->adam_m = m->grad + np;
		m->adam_v = m->adam_m + np;
	}
	b.sizing = 0;
	b.base = m->param;
	layout(&b);
	posenc_bind(&s->pos, s->posemb, s->posemb && !infer ? GRAD(m, s->posemb) : NULL,
	    s->pe_params, s->pe_params && !infer ? GRAD(m, s->pe_params) : NULL);
	if (!infer && init_params(m, seed, e) == -1)	/* infer: the caller's */
		goto fail;

	size_t abytes = activations(m, NULL);
	s->block = huge_alloc(abytes);
	if (s->block == NULL)
		goto nomem;
	activations(m, s->block);
	if (posenc_alloc(&s->pos, maxB, maxT, e) == -1)
		goto fail;
	return m;
nomem:
	err_set(e, "out of memory");
fail:
	vit_destroy(m);
	return NULL;
}

struct vit *
vit_describe(const struct vit_config *c, struct err *e)
{
	struct vit *m = calloc(1, sizeof *m);
	struct vit_state *s = calloc(1, sizeof *s);

	if (m != NULL)
		m->st = s;
	if (m == NULL || s == NULL) {
		err_set(e, "out of memory");
		goto fail;
	}
	m->c = *c;
	if (vit_config_check(c, e) == -1 || position_stage(m, e) == -1)
		goto fail;
	struct builder b = { .m = m, .sizing = 1 };
	layout(&b);
	if (b.rc == 0)
		return m;
	err_set(e, "out of memory");
fail:
	vit_destroy(m);
	return NULL;
}

struct vit *
vit_create(const struct vit_config *c, int maxB, int maxT, uint64_t seed,
    struct err *e)
{
	return create(c, maxB, maxT, seed, 0, e);
}

struct vit *
vit_create_infer(const struct vit_config *c, int maxB, int maxT, struct err *e)
{
	return create(c, maxB, maxT, 0, 1, e);
}

/* Whole records of Tq rows each, about a chunk (gemm_chunk) of m's
 * precision: the chunks of products whose epilogues draw dropout masks
 * (per record). */
static int
rec_chunk(const struct vit *m, int Tq)
{
	return (gemm_chunk(m->prec) + Tq - 1) / Tq * Tq;
}

/* The rounded copies' registration ended and their block freed. */
static void
twins_free(struct vit *m)
{
	struct vit_state *s = m->st;

	if (s->twins == NULL)
		return;
	for (int l = 0; l < m->c.depth; l++) {
		struct lact *a = &s->A[l];
		gemm_bf16_untwin(a->ln1);
		gemm_bf16_untwin(a->att);
		gemm_bf16_untwin(a->ln2);
		gemm_bf16_untwin(a->gel);
		a->ln1c = a->attc = a->ln2c = a->gelc = NULL;
	}
	gemm_bf16_untwin(s->dM);
	s->dMc = NULL;
	free(s->twins);
	s->twins = NULL;
	s->nscr = 0;
}

/* In bf16 training, rounded copies of the activations that products read
 * twice (forward, weight gradient), made at the first such forward
 * (prec is set after vit_create).  Without them (no room, the table of
 * twins full) the products round their operands themselves. */
static void
twins_make(struct vit *m)
{
	struct vit_state *s = m->st;
	size_t N = (size_t)m->maxB * (m->maxT + 1), D = m->c.dim,
	    M = m->c.mlp, z = (size_t)gemm_bf16_size();
	int ok = 1;

	size_t Q = s->pos.rotary ? 0 : 3 * D;	/* qkvc's width */
	size_t tw = ((m->c.depth * (3 * D + M + Q) + M) * N * z + 63) / 64 *
	    64;	/* and dMc */
	int nscr = omp_get_max_threads();
	/* rows of an epilogue: rec_chunk(m, Tq) for any Tq up to maxT + 1 */
	size_t scrlen = (size_t)(GEMM_CHUNK_BF16 + m->maxT + 1) * (M > D ? M : D);

	if (s->twins != NULL || m->infer || m->prec != GEMM_BF16 || z == 0 ||
	    (s->twins = huge_alloc(tw + nscr * scrlen * sizeof(float))) == NULL)
		return;
	s->scr = (float *)(s->twins + tw);
	s->nscr = nscr;
	s->scrlen = scrlen;
	char *cur = s->twins;
	for (int l = 0; l < m->c.depth; l++) {
		struct lact *a = &s->A[l];
		a->ln1c = cur, cur += N * D * z;
		a->attc = cur, cur += N * D * z;
		a->ln2c = cur, cur += N * D * z;
		a->gelc = cur, cur += N * M * z;
		a->qkvc = Q > 0 ? cur : NULL, cur += N * Q * z;
		ok = ok && gemm_bf16_twin(a->ln1, a->ln1c, N, D) == 0 &&
		    gemm_bf16_twin(a->att, a->attc, N, D) == 0 &&
		    gemm_bf16_twin(a->ln2, a->ln2c, N, D) == 0 &&
		    gemm_bf16_twin(a->gel, a->gelc, N, M) == 0;
	}
	s->dMc = cur;
	ok = ok && gemm_bf16_twin(s->dM, s->dMc, N, M) == 0;
	if (!ok)
		twins_free(m);
}

void
vit_destroy(struct vit *m)
{
	if (m == NULL)
		return;
	struct vit_state *s = m->st;
	if (s != NULL) {
		twins_free(m);
		free(s->block);
		free(s->probe_w);
		free(s->L);
		free(s->A);
		posenc_free(&s->pos);
		free(s);
	}
	free(m->param);
	free(m->tensor);
	free(m);
}

const struct vit_tensor *
vit_find_tensor(const struct vit *m, const char *name)
{
	for (int i = 0; i < m->ntensor; i++)
		if (strcmp(m->tensor[i].name, name) == 0)
			return &m->tensor[i];
	return NULL;
}

/* The first element of v[n] that is not finite, or -1. */
static int64_t
first_nonfinite(const float *v, size_t n)
{
	float z = 0;

	/* x * 0 is 0 for a finite x and NaN for the rest: one vector pass */
	#pragma omp parallel for simd reduction(+:z) schedule(static)
	for (size_t i = 0; i < n; i++)
		z += v[i] * 0.0f;
	if (z == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return (int64_t)i;
	return -1;
}

int
vit_finite(const struct vit *m, int moments, struct err *e)
{
	static const char *const what[] = { "", " (its AdamW m)", " (its AdamW v)" };
	const float *arr[] = { m->param, m->adam_m, m->adam_v };

	/* the arena whole, in one pass; the tensor found only when one is bad */
	for (int a = 0; a < (moments && !m->infer ? 3 : 1); a++) {
		int64_t i = first_nonfinite(arr[a], m->nparam);
		for (int t = 0; i >= 0 && t < m->ntensor; t++) {
			const struct vit_tensor *w = &m->tensor[t];
			if ((size_t)i >= w->off && (size_t)i < w->off + w->n) {
				float v = arr[a][i];
				return err_set(e, "tensor '%s'%s holds %g (element %zu of %zu)",
				    w->name, what[a], isnan(v) ? NAN : v, (size_t)i - w->off, w->n);
			}
		}
	}
	return 0;
}

int
vit_set_grid(struct vit *m, const int *grid)
{
	struct vit_state *s = m->st;
	int A = m->c.axes;
	long n = 1;
	for (int a = 0; a < A; a++) {
		if (grid[a] < 1)
			return -1;
		n *= grid[a];
		if (n > m->maxT)
			return -1;
	}
	posenc_set_grid(&s->pos, grid);
	return 0;
}

int
vit_has_table(const struct vit *m)
{
	return posenc_grid_table(&m->st->pos);
}

void
vit_exact_rotations(struct vit *m, int exact)
{
	posenc_exact(&m->st->pos, exact);
}

void
vit_defer_rotation_grad(struct vit *m, int on)
{
	posenc_defer(&m->st->pos, on);
}

void
vit_grad_complete(struct vit *m)
{
	posenc_settle(&m->st->pos);
}

void
vit_zero_grad(struct vit *m)
{
	if (m->grad != NULL)
		memset(m->grad, 0, m->nparam * sizeof(float));
	posenc_zero_grad(&m->st->pos);
}

double
vit_grad_sumsq(const struct vit *m)
{
	return posenc_untied_sumsq(&m->st->pos,
	    grad_sumsq(m->grad, (int64_t)m->nparam));
}

const float *
vit_dx(const struct vit *m)
{
	return m->st->dx;
}

double
vit_flops(const struct vit_config *c, int B, int T)
{
	double D = c->dim, M = c->mlp, T1 = T + 1, N = B * T1;
	double block = 2 * N * (3 * D * D + D * D + 2 * D * M) +
	    4.0 * B * T1 * T1 * D;
	/* under CLS pooling the last block computes q, k, v for every row but
	 * attention, projection and MLP for the CLS row only */
	double last = c->pool == VIT_POOL_CLS ? 2 * N * 3 * D * D +
	    2.0 * B * (D * D + 2 * D * M) + 4.0 * B * T1 * D : block;
	return 2.0 * B * T * c->P * D + (c->depth - 1) * block + last +
	    2.0 * B * D * c->classes;
}

/* ---- forward ---- */

/* Locality distances dist2[T1][T1] between token positions of one record
 * (row 0 CLS: its own coordinates, or distance 0 when unpositioned). */
static void
distances(const struct vit_config *c, float *d2 /* [T1][T1] */,
    const float *pos /* [T][A] */, const float *cls /* [A] */, int T)
{
	int A = c->axes, T1 = T + 1;
	for (int m = 0; m < T1; m++)
		for (int n = 0; n < T1; n++) {
			const float *pm = m ? pos + (size_t)(m - 1) * A : cls;
			const float *pn = n ? pos + (size_t)(n - 1) * A : cls;
			float s = 0;
			if ((m && n) || c->cls_rotate)
				for (int a = 0; a < A; a++) {
					float d = (pm[a] - pn[a]) * c->pos_scale[a];
					s += d * d;
				}
			d2[(size_t)m * T1 + n] = s;
		}
}

int
vit_shared_positions(const float *pos, int B, int T, int A)
{
	for (int b = 1; b < B; b++)
		if (memcmp(pos, pos + (size_t)b * T * A, sizeof(float) * T * A) != 0)
			return 0;
	return 1;
}

/* p[n] NaN: what an epilogue makes of rows that could not be made. */
static void
nan_fill(float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = NAN;
}

/* The dropout of a row epilogue: rows [r0, r0 + n) of y[.][Tq * len /
 * Tq], whole records. */
struct drop {
	float	*mask;		/* [Nq][len / Tq] or NULL when p is 0 */
	float	 p;
	uint64_t seed, site;
	int	 first;		/* index of row 0's record (first_record) */
};

static void
drop_rows(const struct drop *d, float *y /* row r0 */, int r0, int n, int Tq,
    int width)
{
	if (d->p <= 0)
		return;
	dropout_forward(y, d->mask + (size_t)r0 * width, y, d->p, n / Tq,
	    (size_t)Tq * width, d->seed, d->site, d->first + r0 / Tq);
}

/* Where an epilogue writes rows r0 .. r0 + n of x[.][w] that only bf16
 * products read, through its rounded copy xc: the calling thread's
 * scratch (x itself is then never touched: no memory), or x's rows where
 * the thread has none.  Without xc, x's rows. */
static float *
rows_out(const struct vit_state *s, float *x, const void *xc, int r0, int w)
{
	int t = omp_get_thread_num();

	if (xc != NULL && t < s->nscr)
		return s->scr + (size_t)t * s->scrlen;
	return x + (size_t)r0 * w;
}

/* Epilogue of the attention projection and of fc2: out = in + drop(y),
 * y the product's rows (dropped in place), then the LayerNorm that reads
 * out (ln NULL: none). */
struct resid {
	struct drop drop;
	const float *in;	/* [B][Tin][D] residual stream in: rows t < Tq */
	int	 Tin;
	float	*out;		/* [Nq][D] */
	int	 Tq, D;
	float	*ln, *lnm, *lnr;	/* [Nq][D], [Nq], [Nq] or NULL */
	void	*lnc;		/* ln's rounded copy, or NULL */
	const float *g, *b;	/* [D] */
	const struct vit_state *s;	/* its scratch (rows_out) */
};

static void
resid_rows(void *arg, float *c, int r0, int n)
{
	const struct resid *e = arg;
	int D = e->D;
	if (c == NULL)		/* the product's rows could not be made */
		nan_fill(e->out + (size_t)r0 * D, (size_t)n * D);
	else
		drop_rows(&e->drop, c, r0, n, e->Tq, D);
	for (int r = r0; c != NULL && r < r0 + n; r++) {
		const float *a = e->in + ((size_t)(r / e->Tq) * e->Tin + r % e->Tq) * D;
		const float *y = c + (size_t)(r - r0) * D;
		float *o = e->out + (size_t)r * D;
		#pragma omp simd
		for (int i = 0; i < D; i++)
			o[i] = a[i] + y[i];
	}
	if (e->ln == NULL)
		return;
	float *ln = rows_out(e->s, e->ln, e->lnc, r0, D);
	layernorm_forward(ln, e->lnm + r0, e->lnr + r0, e->out + (size_t)r0 * D,
	    e->g, e->b, n, D);
	if (e->lnc != NULL)
		gemm_bf16_fill(e->lnc, (size_t)r0 * D, D, ln, D, n, D);
}

/* Epilogue of fc1: gel = drop(GELU(y)), y the product's rows; with
 * deriv, pre = GELU'(y) for the backward. */
struct act {
	float	*pre;		/* [Nq][M] */
	float	*gel;		/* [Nq][M] */
	void	*gelc;		/* gel's rounded copy, or NULL */
	const struct vit_state *s;	/* its scratch (rows_out) */
	int	 deriv;		/* the forward has targets, so vit_backward
				 * will run: leave GELU' in pre */
	struct drop drop;
	int	 Tq, M;
};

static void
gelu_rows(void *arg, float *c, int r0, int n)
{
	const struct act *e = arg;
	size_t o = (size_t)r0 * e->M;
	float *gel = rows_out(e->s, e->gel, e->gelc, r0, e->M);
	if (c == NULL) {	/* the product's rows could not be made */
		nan_fill(gel, (size_t)n * e->M);
		if (e->deriv)
			nan_fill(e->pre + o, (size_t)n * e->M);
	}
	else
		gelu_forward(gel, e->deriv ? e->pre + o : NULL, c,
		    (size_t)n * e->M);
	drop_rows(&e->drop, gel, r0, n, e->Tq, e->M);
	if (e->gelc != NULL)
		gemm_bf16_fill(e->gelc, o, e->M, gel, e->M, n, e->M);
}

/* Epilogue of qkv with its rounded copy: the rows rounded into it, or
 * NaN where they could not be made. */
struct qkvrows {
	void	*qkvc;		/* [Nq][w] */
	int	 w;
};

static void
qkv_rows(void *arg, float *c, int r0, int n)
{
	const struct qkvrows *e = arg;

	if (c == NULL)
		gemm_bf16_nan(e->qkvc, (size_t)r0 * e->w, (size_t)n * e->w);
	else
		gemm_bf16_fill(e->qkvc, (size_t)r0 * e->w, e->w, c, e->w, n,
		    e->w);
}

/* The rounded copy of block l's q, k and v that attention reads, or NULL:
 * made in bf16 training without a rotation, where no probe reads qkv. */
static void *
qkv_copy(const struct vit *m, int l)
{
	const struct vit_state *s = m->st;

	return s->twins != NULL && m->prec == GEMM_BF16 && m->probe == NULL ?
	    s->A[l].qkvc : NULL;
}

/* Where a product whose rows only its epilogue reads (proj, fc1, fc2)
 * makes them: x, or in bf16 the thread's buffer (gemm_chunks's C NULL),
 * never memory. */
static float *
own_rows(const struct vit *m, float *x)
{
	return m->prec == GEMM_BF16 ? NULL : x;
}

/* A[N][D]'s rounded copy Ac (gemm_bf16_fill), the rows shared by the
 * threads. */
static void
fill_rows(void *Ac, const float *A, int N, int D)
{
	#pragma omp parallel for schedule(static)
	for (int r0 = 0; r0 < N; r0 += GEMM_CHUNK_BF16)
		gemm_bf16_fill(Ac, (size_t)r0 * D, D, A + (size_t)r0 * D, D,
		    N - r0 < GEMM_CHUNK_BF16 ? N - r0 : GEMM_CHUNK_BF16, D);
}

/* The residual stream [N][D] after block l (the embedding's for l -1),
 * N rows of this batch: a model for forward passes alone keeps two. */
static float *
residual(const struct vit *m, int l, size_t N)
{
	const struct vit_state *s = m->st;
	if (l < 0)
		return s->h0;
	return s->hs + (size_t)(m->infer ? l % 2 : l) * N * m->c.dim;
}

static struct attn
attn_shape(const struct vit *m)
{
	const struct vit_state *s = m->st;
	int D = m->c.dim;
	return (struct attn){ .B = s->B, .T = s->T + 1, .Tq = s->T + 1,
	    .H = m->c.heads,
	    .hd = D / m->c.heads, .ldqk = s->pos.rotary ? 2 * D : 3 * D, .ldv = 3 * D,
	    .dist2 = s->dist2, .dist_per_record = s->dist_per_record,
	    .nthr = s->nthr, .scratch = s->ascr, .prec = m->prec };
}

/* 1 when block l computes only the CLS rows after attention: the last
 * block under CLS pooling, whose other rows nothing reads but a probe. */
static int
cls_rows(const struct vit *m, int l)
{
	return m->c.pool == VIT_POOL_CLS && l == m->c.depth - 1 && m->probe == NULL;
}

/* The gradient through a dropout: dy itself when nothing was dropped. */
static const float *
drop_grad(float *buf, const float *dy, const float *mask, float p, size_t n)
{
	if (p <= 0)
		return dy;
	dropout_backward(buf, dy, mask, p, n);
	return buf;
}

int
vit_set_probe(struct vit *m, void (*fn)(void *arg, const struct vit_probe *p),
    void *arg, struct err *e)
{
	struct vit_state *s = m->st;
	size_t T1 = (size_t)m->maxT + 1;

	free(s->probe_w);
	s->probe_w = NULL;
	m->probe = fn;
	m->probe_arg = arg;
	if (fn == NULL || (!m->infer && !m->c.locality))
		return 0;	/* the block's own P are the weights */
	s->probe_w = malloc(sizeof(float) * m->maxB * m->c.heads * T1 * T1);
	if (s->probe_w != NULL)
		return 0;
	m->probe = NULL;
	return err_set(e, "out of memory for the attention weights of %d records",
	    m->maxB);
}

/* Show m's probe block l's attention: P its softmax (attention_forward's),
 * q and k the rows it took. */
static void
show_probe(struct vit *m, const struct attn *at, int l, const float *P,
    const float *q, const float *logsig)
{
	struct vit_state *s = m->st;
	const float *w = P;

	if (logsig != NULL) {
		attention_weights(at, s->probe_w, P, logsig);
		w = s->probe_w;
	}
	m->probe(m->probe_arg, &(struct vit_probe){ .layer = l, .B = at->B,
	    .T1 = at->T, .H = at->H, .hd = at->hd, .q = q, .k = q + m->c.dim,
	    .ld = at->ldqk, .w = w });
}

void
vit_set_cls_positions(struct vit *m, const float *cls)
{
	posenc_set_cls(&m->st->pos, cls);
}

float
vit_forward(struct vit *m, const float *x /* [B][T][P] */,
    const float *pos /* [B][T][A] */, int B, int T,
    const float *target /* [B][C] or NULL */, float *logits /* [B][C] */,
    int training, uint64_t seed)
{
	struct vit_state *s = m->st;
	const struct vit_config *c = &m->c;
	int D = c->dim, M = c->mlp, C = c->classes, T1 = T + 1, N = B * T1;

	if (B < 1 || B > m->maxB || T < 1 || T > m->maxT) {
		err_set(&m->err, "batch of %d x %d tokens: the "
		    "model holds %d x %d", B, T, m->maxB, m->maxT);
		return NAN;
	}
	if (vit_has_table(m) && T != vit_grid_size(s->pos.grid, c->axes)) {
		err_set(&m->err, "%d tokens do not fill the grid "
		    "of the position table (vit_set_grid)", T);
		return NAN;
	}
	if ((c->locality || posenc_needs_positions(&s->pos)) && pos == NULL) {
		err_set(&m->err, "positions needed");
		return NAN;
	}
	if (training && m->infer) {
		err_set(&m->err, "a model for forward passes "
		    "alone does not train");
		return NAN;
	}
	int shared = posenc_shared(&s->pos, pos, B, T);
	if (s->pos.rotary && !shared && !c->pos_per_record) {
		err_set(&m->err, "records of a batch have "
		    "different positions: the model needs pos_per_record");
		return NAN;
	}
	twins_make(m);
	int tw = s->twins != NULL && m->prec == GEMM_BF16;
	s->B = B;
	s->T = T;
	s->training = training;
	s->seed = seed;
	s->have_target = target != NULL && !m->infer;	/* vit_backward runs */
	float pdrop = training ? c->dropout : 0, pemb = training ? c->emb_dropout : 0;

	/* Bookkeeping before the forward: a rotation gradient deferred over
	 * micro-batches belongs to the R these positions may replace, and is
	 * taken to the parameters first (vit_defer_rotation_grad). */
	posenc_settle_stale(&s->pos, pos, B, T, shared);
	/* the positions' rotations and table rows */
	m->rotations_made += posenc_prepare(&s->pos, pos, B, T, shared);

	/* embedding: patch rows, CLS first, position table, dropout */
	if (!m->infer) {	/* for the backward's patch gradient */
		memcpy(s->x, x, sizeof(float) * B * T * c->P);
		x = s->x;
	}
	linear_forward(m->prec, s->tmp, x, s->patchw, s->patchb, B * T, c->P,
	    D);
	#pragma omp parallel for
	for (int b = 0; b < B; b++) {
		float *h = s->h0 + (size_t)b * T1 * D;
		memcpy(h, s->cls, sizeof(float) * D);
		memcpy(h + D, s->tmp + (size_t)b * T * D, sizeof(float) * T * D);
	}
	posenc_add_table(&s->pos, s->h0, B, T1);
	dropout_forward(s->h0, s->memb, s->h0, pemb, B, (size_t)T1 * D, seed, 0,
	    m->first_record);

	if (c->locality) {
		s->dist_per_record = !shared;
		int nd = s->dist_per_record ? B : 1;
		#pragma omp parallel for
		for (int b = 0; b < nd; b++)
			distances(c, s->dist2 + (size_t)b * T1 * T1,
			    pos + (size_t)b * T * c->axes, posenc_cls(&s->pos, b), T);
	}
	struct attn at = attn_shape(m);

	for (int l = 0; l < c->depth; l++) {
		const struct layer *L = &s->L[l];
		struct lact *a = &s->A[l];
		const float *hin = residual(m, l - 1, N);
		float *hout = residual(m, l, N);
		/* with CLS pooling only the CLS row of the last block is read:
		 * after k and v of every token, its rows are the CLS rows */
		int Tq = cls_rows(m, l) ? 1 : T1, Nq = B * Tq;
		at.Tq = Tq;
		at.outc = tw ? a->attc : NULL;
		if (l == 0) {	/* later layers': in the residual epilogue */
			layernorm_forward(a->ln1, a->ln1m, a->ln1r, hin, L->ln1g,
			    L->ln1b, N, D);
			if (tw)
				fill_rows(a->ln1c, a->ln1, N, D);
		}
		at.qkvc = qkv_copy(m, l);
		if (at.qkvc != NULL)
			linear_forward_ep(m->prec, NULL, a->ln1, L->qkvw,
			    L->qkvb, N, D, 3 * D, gemm_chunk(m->prec), qkv_rows,
			    &(struct qkvrows){ a->qkvc, 3 * D });
		else
			linear_forward(m->prec, a->qkv, a->ln1, L->qkvw,
			    L->qkvb, N, D, 3 * D);
		const float *q = a->qkv;
		if (s->pos.rotary) {
			posenc_rotate(&s->pos, l, Tq < T1, a->qkr, a->qkv);
			q = a->qkr;
		}
		/* a probe's weights: the block's P, else its own room */
		float *P = a->P != NULL || m->probe == NULL ? a->P : s->probe_w;
		attention_forward(&at, a->att, P, q, q + D, a->qkv + 2 * D,
		    L->logsig);
		if (m->probe != NULL)
			show_probe(m, &at, l, P, q, L->logsig);
		/* h1 = hin + drop(proj(att)); ln2 = LN(h1) */
		struct resid r = { .drop = { a->mproj, pdrop, seed,
		    1 + 3 * l, m->first_record }, .in = hin, .Tin = T1,
		    .out = a->h1, .Tq = Tq, .D = D, .ln = a->ln2, .lnm = a->ln2m,
		    .lnr = a->ln2r, .lnc = tw ? a->ln2c : NULL, .g = L->ln2g,
		    .b = L->ln2b, .s = s };
		linear_forward_ep(m->prec, own_rows(m, s->tmp), a->att,
		    L->projw, L->projb, Nq, D, D, rec_chunk(m, Tq), resid_rows,
		    &r);
		struct act e = { .pre = a->fc1, .gel = a->gel,
		    .gelc = tw ? a->gelc : NULL, .s = s,
		    .deriv = s->have_target, .drop = { a->mgel, pdrop, seed,
		    2 + 3 * l, m->first_record }, .Tq = Tq, .M = M };
		linear_forward_ep(m->prec, own_rows(m, a->fc1), a->ln2,
		    L->fc1w, L->fc1b, Nq, D, M, rec_chunk(m, Tq),
		    gelu_rows, &e);
		/* hout = h1 + drop(fc2(gel)); then the next LayerNorm: the next
		 * block's first, or the final one */
		r = (struct resid){ .drop = { a->mfc2, pdrop, seed,
		    3 + 3 * l, m->first_record }, .in = a->h1, .Tin = Tq,
		    .out = hout, .Tq = Tq, .D = D, .s = s };
		if (l + 1 < c->depth) {
			const struct layer *L1 = &s->L[l + 1];
			struct lact *a1 = &s->A[l + 1];
			r.ln = a1->ln1, r.lnm = a1->ln1m, r.lnr = a1->ln1r;
			r.lnc = tw ? a1->ln1c : NULL;
			r.g = L1->ln1g, r.b = L1->ln1b;
		} else {
			r.ln = s->lnf, r.lnm = s->lnfm, r.lnr = s->lnfr;
			r.g = s->normg, r.b = s->normb;
		}
		linear_forward_ep(m->prec, own_rows(m, s->tmp), a->gel,
		    L->fc2w, L->fc2b, Nq, M, D, rec_chunk(m, Tq), resid_rows,
		    &r);
	}

	/* final LayerNorm (of the rows the last block made), pooling, head */
	int Tf = cls_rows(m, c->depth - 1) ? 1 : T1;	/* lnf: in the last epilogue */
	for (int b = 0; b < B; b++) {
		const float *z = s->lnf + (size_t)b * Tf * D;
		float *p = s->pooled + (size_t)b * D;
		if (c->pool == VIT_POOL_CLS) {
			memcpy(p, z, sizeof(float) * D);
			continue;
		}
		for (int i = 0; i < D; i++) {
			float acc = 0;
			for (int t = 0; t < T1; t++)
				acc += z[(size_t)t * D + i];
			p[i] = acc / T1;
		}
	}
	linear_forward(m->prec, s->logits, s->pooled, s->headw, s->headb, B, D,
	    C);
	memcpy(logits, s->logits, sizeof(float) * B * C);
	if (s->have_target)
		memcpy(s->target, target, sizeof(float) * B * C);
	return xent_forward(s->prob, s->logits, target, B, C);
}

/* ---- backward ---- */

/* Epilogue of fc2's dx: dM = GELU' * drop'(dM) (the product's rows:
 * dM's, or in bf16 training the thread's, rounded into dM's copy dc),
 * and fc1's bias shares, the sums of dM's rows, while in cache. */
struct dact {
	float	*fc1part;	/* [nchunk][M] fc1's bias shares */
	void	*dc;		/* dM's rounded copy, or NULL */
	const float *dgel;	/* [Nq][M] GELU' of fc1's output (the forward's) */
	const float *mask;	/* [Nq][M] dropout mask, or NULL when p is 0 */
	float	 p;
	int	 M, chunk;
};

/* acc[w] += the chunks' partial sums part[nchunk][stride] (their first w),
 * in chunk order. */
static void
add_parts(float *acc, const float *part, int nchunk, int stride, int w)
{
	for (int c = 0; c < nchunk; c++)
		for (int i = 0; i < w; i++)
			acc[i] += part[(size_t)c * stride + i];
}

static void
gelu_back_rows(void *arg, float *c, int r0, int n)
{
	const struct dact *e = arg;
	size_t o = (size_t)r0 * e->M, k = (size_t)n * e->M;
	if (c == NULL) {	/* the product's rows could not be made */
		gemm_bf16_nan(e->dc, o, k);
		nan_fill(e->fc1part + (size_t)(r0 / e->chunk) * e->M, e->M);
		return;
	}
	if (e->p > 0)
		dropout_backward(c, c, e->mask + o, e->p, k);
	gelu_backward(c, c, e->dgel + o, k);
	colsum_chunk(e->fc1part, e->chunk, e->M, c, r0, n);
	if (e->dc != NULL)
		gemm_bf16_fill(e->dc, o, e->M, c, e->M, n, e->M);
}

/* Epilogue of a LayerNorm's dx: the rows of layernorm_backward, and the
 * chunk's share of the LayerNorm's parameter gradients. */
struct lnrows {
	float	*dx;		/* [N][D] += */
	const float *dy, *x, *mean, *rstd, *g;
	float	*lnpart;	/* [nchunk][2D]: each chunk's dg, db */
	int	 D, chunk;
};

static void
ln_back_rows(void *arg, float *c, int r0, int n)
{
	const struct lnrows *e = arg;
	size_t o = (size_t)r0 * e->D;
	float *lp = e->lnpart + (size_t)(r0 / e->chunk) * 2 * e->D;
	layernorm_backward(e->dx + o, NULL, NULL, e->dy + o, e->x + o,
	    e->mean + r0, e->rstd + r0, e->g, n, e->D);
	memset(lp, 0, sizeof(float) * 2 * e->D);
	layernorm_params(lp, lp + e->D, e->dy + o, e->x + o, e->mean + r0,
	    e->rstd + r0, n, e->D);
}

/* Back through a LayerNorm and the linear layer after it, for N rows:
 * dy[N][No] -> the LayerNorm output's gradient dln[N][D] = dy w (w[No][D])
 * -> dh += the LayerNorm's dx, and the chunk's shares of the LayerNorm's
 * and (unless summed: dy's producer left them in bpart) of b's
 * gradients, each chunk of rows while in cache; then w's gradient (from
 * lnout[N][D]) and the shares added in chunk order. */
static void
ln_back(struct vit *m, float *dln, const float *dy, int summed, float *w,
    float *b, const float *lnout, int No, const float *x,
    const float *mean, const float *rstd, float *g, float *bn, int N)
{
	struct vit_state *s = m->st;
	int D = m->c.dim, ch = gemm_chunk(m->prec), nc = nchunks(N, ch);
	struct lnrows e = { .dx = s->dh, .dy = dln, .x = x, .mean = mean,
	    .rstd = rstd, .g = g, .lnpart = s->lnpart, .D = D, .chunk = ch };
	linear_backward_ep(m->prec, dln, GRAD(m, w), NULL,
	    summed ? NULL : s->bpart, dy, lnout, w, N, D, No, ch,
	    ln_back_rows, &e);
	add_parts(GRAD(m, b), s->bpart, nc, No, No);
	add_parts(GRAD(m, g), s->lnpart, nc, 2 * D, D);
	add_parts(GRAD(m, bn), s->lnpart + D, nc, 2 * D, D);
}

void
vit_backward(struct vit *m)
{
	struct vit_state *s = m->st;
	const struct vit_config *c = &m->c;
	int B = s->B, T = s->T, D = c->dim, M = c->mlp, C = c->classes,
	    T1 = T + 1, N = B * T1, ch = gemm_chunk(m->prec);
	float pdrop = s->training ? c->dropout : 0,
	    pemb = s->training ? c->emb_dropout : 0;

	if (!s->have_target)
		return;
	xent_backward(s->dlogits, s->prob, s->target, B, C);
	linear_backward(m->prec, s->dpooled, GRAD(m, s->headw),
	    GRAD(m, s->headb), s->dlogits, s->pooled, s->headw, B, D, C);
	/* the rows the final LayerNorm saw: B (CLS pooling), or all N */
	int Tf = cls_rows(m, c->depth - 1) ? 1 : T1, Nf = B * Tf;
	#pragma omp parallel for
	for (int b = 0; b < B; b++) {
		float *dz = s->dD + (size_t)b * Tf * D;
		const float *dp = s->dpooled + (size_t)b * D;
		if (c->pool == VIT_POOL_CLS)
			memcpy(dz, dp, sizeof(float) * D);
		else
			for (int t = 0; t < T1; t++)
				for (int i = 0; i < D; i++)
					dz[(size_t)t * D + i] = dp[i] / T1;
	}
	memset(s->dh, 0, sizeof(float) * Nf * D);
	layernorm_backward(s->dh, GRAD(m, s->normg), GRAD(m, s->normb), s->dD,
	    residual(m, c->depth - 1, N), s->lnfm, s->lnfr, s->normg,
	    Nf, D);

	struct attn at = attn_shape(m);
	posenc_backward_begin(&s->pos);
	for (int l = c->depth - 1; l >= 0; l--) {
		const struct layer *L = &s->L[l];
		struct lact *a = &s->A[l];
		const float *hin = residual(m, l - 1, N);
		int Tq = cls_rows(m, l) ? 1 : T1, Nq = B * Tq;
		at.Tq = Tq;
		at.qkvc = qkv_copy(m, l);
		/* dh holds dL/d(block output), Nq rows */
		const float *d = drop_grad(s->dD, s->dh, a->mfc2, pdrop, (size_t)Nq * D);
		struct dact e = { .fc1part = s->bpart, .dc = s->dMc,
		    .dgel = a->fc1, .mask = a->mgel, .p = pdrop, .M = M,
		    .chunk = ch };
		linear_backward_ep(m->prec, s->dMc != NULL ? NULL : s->dM,
		    GRAD(m, L->fc2w), NULL, s->fc2part, d, a->gel, L->fc2w, Nq,
		    M, D, ch, gelu_back_rows, &e);
		add_parts(GRAD(m, L->fc2b), s->fc2part, nchunks(Nq, ch), D, D);
		ln_back(m, s->dD, s->dM, 1, L->fc1w, L->fc1b, a->ln2, M,
		    a->h1, a->ln2m, a->ln2r, L->ln2g, L->ln2b, Nq);
		/* dh now dL/dh1 */
		d = drop_grad(s->dD, s->dh, a->mproj, pdrop, (size_t)Nq * D);
		linear_backward_ep(m->prec, s->tmp, GRAD(m, L->projw), NULL,
		    s->bpart, d, a->att, L->projw, Nq, D, D, ch, NULL, NULL);
		add_parts(GRAD(m, L->projb), s->bpart, nchunks(Nq, ch), D, D);
		float *dq = s->pos.rotary ? s->dqkr : s->dqkv;
		const float *q = s->pos.rotary ? a->qkr : a->qkv;
		attention_backward(&at, dq, dq + D, s->dqkv + 2 * D,
		    L->logsig ? GRAD(m, L->logsig) : NULL, s->partial, s->tmp,
		    a->P, q, q + D, a->qkv + 2 * D, L->logsig);
		if (Tq < T1) {
			/* queries other than CLS had no use: zero gradient
			 * (the rotation's backward passes them by: qcls) */
			#pragma omp parallel for
			for (int r = 0; r < N; r++)
				if (r % T1 != 0)
					memset(s->dqkv + (size_t)r * 3 * D, 0, sizeof(float) * D);
			/* the residual reaches the CLS rows only: spread dh1 out
			 * to rows b * T1 (descending, so no row is overwritten
			 * before it is moved) */
			for (int b = B - 1; b >= 0; b--) {
				float *dst = s->dh + (size_t)b * T1 * D;
				memmove(dst, s->dh + (size_t)b * D, sizeof(float) * D);
				memset(dst + D, 0, sizeof(float) * T * D);
			}
		}
		if (s->pos.rotary)
			posenc_rotate_backward(&s->pos, l, Tq < T1, s->dqkv, s->dqkr,
			    a->qkr, a->qkv);
		ln_back(m, s->dD, s->dqkv, 0, L->qkvw, L->qkvb, a->ln1, 3 * D,
		    hin, a->ln1m, a->ln1r, L->ln1g, L->ln1b, N);
		/* dh now dL/dhin */
		if (m->grad_ready != NULL)
			m->grad_ready(m->grad_arg, l);
	}

	if (pemb > 0)
		dropout_backward(s->dh, s->dh, s->memb, pemb, (size_t)N * D);
	posenc_backward_end(&s->pos, s->dh, B, T1);
	float *gcls = GRAD(m, s->cls);
	for (int b = 0; b < B; b++)
		for (int i = 0; i < D; i++)
			gcls[i] += s->dh[(size_t)b * T1 * D + i];
	#pragma omp parallel for
	for (int b = 0; b < B; b++)
		memcpy(s->tmp + (size_t)b * T * D, s->dh + ((size_t)b * T1 + 1) * D,
		    sizeof(float) * T * D);
	linear_backward(m->prec, s->dx, GRAD(m, s->patchw), GRAD(m, s->patchb),
	    s->tmp, s->x, s->patchw, B * T, c->P, D);
}

struct adamw_seg *
vit_segments(const struct vit *m)
{
	struct adamw_seg *seg = malloc(sizeof *seg * (size_t)(m->ntensor > 0 ? m->ntensor : 1));

	for (int t = 0; seg != NULL && t < m->ntensor; t++)
		seg[t] = (struct adamw_seg){ (int64_t)m->tensor[t].off,
			(int64_t)m->tensor[t].n, m->tensor[t].decay };
	return seg;
}
