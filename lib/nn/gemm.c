/*
 * gemm.c - the matrix backend: every product of the engine is computed
 * here, by OpenBLAS or by oneDNN (see nn.h), each thread's share of a
 * product one single-threaded call of the library that the plan chose for
 * its shape (gemm_plan.c), or without a plan the one its kind takes on
 * this kind of CPU (gemm_backend_of); bf16 products by bf16.c, on
 * operands rounded to bf16 once a product (the shared operand once for all
 * of a product's blocks).
 */
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "bf16.h"
#include "gemm_fail.h"
#include "gemm_plan.h"

static const char *const names[] = { "auto", "openblas", "onednn" };
static enum gemm_backend forced = GEMM_AUTO;

int
gemm_backend_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int
gemm_prec_parse(const char *name)
{
	return strcmp(name, "fp32") == 0 ? GEMM_FP32 : strcmp(name, "bf16") == 0 ?
	    GEMM_BF16 : -1;
}

const char *
gemm_backend_name(enum gemm_backend b)
{
	return names[b];
}

void
gemm_force(enum gemm_backend b)
{
	forced = b;
}

/*
 * The backend of each kind of product without a plan: the library that
 * computed it faster, by the kernels oneDNN runs on this CPU (figures in
 * doc/performance.md; bench_sgemm measures every kind with both).  With
 * AVX2 (Zen 3) oneDNN's kernels, which read the operands in place, beat
 * OpenBLAS's on attention's small products and on the chunked ones, not on
 * the weight gradients' long sums.  With AVX-512 (Zen 4, issue 22) they
 * beat them on the chunked products' shapes; the other kinds, not measured
 * there, stay with OpenBLAS.  Attention's batches: one oneDNN call over a
 * chunk's pairs against OpenBLAS pair by pair, oneDNN's measured faster
 * with AVX-512 (Zen 5, bench_attention), as its per-pair calls were with
 * AVX2.
 */
static const enum gemm_backend rule[2][4] = {
	/* GEMM_ONE	GEMM_ROWS	GEMM_CHUNKS	GEMM_BATCH */
	{ GEMM_ONEDNN, GEMM_OPENBLAS, GEMM_ONEDNN, GEMM_ONEDNN },	/* no AVX-512 */
	{ GEMM_OPENBLAS, GEMM_OPENBLAS, GEMM_ONEDNN, GEMM_ONEDNN },	/* AVX-512 */
};
static int avx512;	/* the CPU's row of rule, read once at load */

__attribute__((constructor)) static void
read_isa(void)
{
	avx512 = (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) ==
	    dnnl_cpu_isa_avx512_core;
}

enum gemm_backend
gemm_backend_of(enum gemm_kind k)
{
	return forced != GEMM_AUTO ? forced : rule[avx512][k];
}

int
gemm_solo_begin(void)
{
	int blas = openblas_get_num_threads();

	openblas_set_num_threads(1);
	return blas;
}

void
gemm_solo_end(int saved)
{
	openblas_set_num_threads(saved);
}

void
gemm_product_by(int b, int transa, int transb, int M, int N, int K,
    float alpha, const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc)
{
	if (b == GEMM_OPENBLAS) {
		cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans,
		    transb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda,
		    B, ldb, beta, C, ldc);
		return;
	}
	/* oneDNN threads a call itself (in OpenMP's pool) unless an active
	 * parallel region encloses it, and a team of one (num_threads(1),
	 * if (0)) is not active: this thread's own thread count says one.
	 * Inside a region that setting belongs to the region's task and ends
	 * with it. */
	if (omp_get_level() > 0 && omp_get_max_threads() > 1)
		omp_set_num_threads(1);
	if (dnnl_sgemm(transa ? 'T' : 'N', transb ? 'T' : 'N', M, N, K,
	    alpha, A, lda, B, ldb, beta, C, ldc) != dnnl_success) {
		product_failed("oneDNN could not run an sgemm");
		nan_matrix(C, M, N, ldc);
	}
}

void
gemm_batch_by(int b, const struct gemm_batch *g, const float *A,
    const float *B, float *C)
{
	if (b == GEMM_ONEDNN) {
		onednn_batch(g, A, B, C);
		return;
	}
	for (int i = 0; i < g->n0; i++)
		for (int j = 0; j < g->n1; j++)
			gemm_product_by(b, g->ta, g->tb, g->M, g->N, g->K,
			    g->alpha, A + i * g->sa[0] + j * g->sa[1], g->lda,
			    B + i * g->sb[0] + j * g->sb[1], g->ldb, 0.0f,
			    C + i * g->sc[0] + j * g->sc[1], g->ldc);
}

void
gemm_batch(enum gemm_prec p, const struct gemm_batch *g, const void *A,
    const void *B, float *C)
{
	int b = forced;

	if (p == GEMM_BF16) {
		bf16_batch(g, A, B, C);
		return;
	}
	if (b == GEMM_AUTO) {
		struct gemm_call c = { GEMM_BATCH, g->ta, g->tb, g->M, g->N,
			g->K, g->alpha, 0.0f, A, B, C, g->lda, g->ldb, g->ldc, g };
		b = gemm_plan_backend(&c, rule[avx512][GEMM_BATCH]);
	}
	gemm_batch_by(b, g, A, B, C);
}

/* An fp32 product of kind k, by the forced backend, else by the plan's
 * choice for its shape (the rule's without a plan). */
static void
product(enum gemm_kind k, int transa, int transb, int M, int N, int K,
    float alpha, const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc)
{
	int b = forced;

	if (b == GEMM_AUTO) {
		struct gemm_call c = { k, transa, transb, M, N, K, alpha, beta,
			A, B, C, lda, ldb, ldc, NULL };
		b = gemm_plan_backend(&c, rule[avx512][k]);
	}
	gemm_product_by(b, transa, transb, M, N, K, alpha, A, lda, B, ldb,
	    beta, C, ldc);
}

/* A matrix whose rounded copy products read instead of rounding it: the
 * one gemm_bf16_pin rounded, and those whose producers keep one
 * (gemm_bf16_twin).  A NULL: none. */
struct copy {
	const float *A;
	int	 ld;		/* its columns, and rows ld elements apart */
	size_t	 n;		/* its elements */
	const char *p;		/* its rounded copy, the same layout */
};
#define TWINS	64	/* a model registers 4 a block and dM's */
static struct copy pin, twin[TWINS];
static int ntwin;	/* twin[ntwin ..] are free: lookups stop there */

/* X's rounded copy in c, when X is in c's matrix with its rows ld
 * apart, else NULL. */
static const void *
copy_of(const struct copy *c, const float *X, int ld)
{
	uintptr_t x = (uintptr_t)X, a = (uintptr_t)c->A;

	/* addresses, not pointers: X may be of another array */
	if (c->A == NULL || ld != c->ld || x < a || x >= a + c->n * sizeof *X)
		return NULL;
	return c->p + (x - a) / sizeof *X * gemm_bf16_size();
}

/* X[.][ld]'s rounded copy (leading dimension *out), when X is in the
 * pinned matrix or a twinned one with its rows ld apart, else NULL. */
static const void *
pinned(const float *X, int ld, int *out)
{
	const void *p = copy_of(&pin, X, ld);

	for (int i = 0; p == NULL && i < ntwin; i++)
		p = copy_of(&twin[i], X, ld);
	*out = ld;
	return p;
}

int
gemm_bf16_pin(const float *A, int rows, int cols, int chunk, float *part)
{
	int ld;

	pin.A = NULL;
	if (pinned(A, cols, &ld) != NULL)
		return 0;	/* its producer keeps a rounded copy */
	double t0 = work_begin();
	pin.p = bf16_pack_all(A, rows, cols, chunk, part);
	work_end(WORK_ROUNDING, t0, omp_get_max_threads());
	if (pin.p == NULL)
		return 0;	/* its products round their own (gemm_failed
				   says why this could not) */
	pin = (struct copy){ A, cols, (size_t)rows * cols, pin.p };
	return part != NULL;
}

void
gemm_bf16_unpin(void)
{
	pin.A = NULL;
}

int
gemm_bf16_twin(const float *A, const void *A16, int rows, int cols)
{
	for (int i = 0; i < TWINS; i++)
		if (twin[i].A == NULL) {
			twin[i] = (struct copy){ A, cols, (size_t)rows * cols,
			    A16 };
			if (i >= ntwin)
				ntwin = i + 1;
			return 0;
		}
	return -1;
}

void
gemm_bf16_untwin(const float *A)
{
	for (int i = 0; i < ntwin; i++)
		if (twin[i].A == A)
			twin[i].A = NULL;
	while (ntwin > 0 && twin[ntwin - 1].A == NULL)
		ntwin--;
}

void
gemm_bf16_fill(void *A16, size_t off, int ld, const float *X, int ldx,
    int rows, int cols)
{
	bf16_round((char *)A16 + off * gemm_bf16_size(), ld, X, ldx, rows,
	    cols);
}

void
gemm_bf16_nan(void *A16, size_t off, size_t n)
{
	size_t z = (size_t)gemm_bf16_size();

	/* all ones: a NaN in either element size */
	memset((char *)A16 + off * z, 0xff, n * z);
}

/* op(A)'s rows r0 .. r0 + m of M, K columns, rounded to bf16 (in slot 0,
 * or the pinned copy's), *ld its leading dimension. */
static const void *
pack_rows(int transa, const float *A, int lda, int r0, int m, int K, int *ld)
{
	const float *a = transa ? A + r0 : A + (size_t)r0 * lda;
	const void *p = pinned(a, lda, ld);

	if (p != NULL)
		return p;
	*ld = transa ? m : K;
	return transa ? bf16_pack(0, a, K, m, lda) : bf16_pack(0, a, m, K, lda);
}

/* op(B) (K x N) rounded to bf16 (in slot 1, or the pinned copy's), *ld
 * its leading dimension. */
static const void *
pack_b(int transb, const float *B, int ldb, int K, int N, int *ld)
{
	const void *p = pinned(B, ldb, ld);

	if (p != NULL)
		return p;
	*ld = transb ? K : N;
	return transb ? bf16_pack(1, B, N, K, ldb) : bf16_pack(1, B, K, N, ldb);
}

/* op(B) rounded for a team's products in precision p (NULL in fp32), by
 * the calling thread while the team waits: a rounding of the whole
 * team's time. */
static const void *
team_b(enum gemm_prec p, int transb, const float *B, int ldb, int K, int N,
    int *ld)
{
	if (p != GEMM_BF16)
		return NULL;
	double t0 = work_begin();
	const void *b16 = pack_b(transb, B, ldb, K, N, ld);
	work_end(WORK_ROUNDING, t0, omp_get_max_threads());
	return b16;
}

void
gemm_one(enum gemm_prec p, int transa, int transb, int M, int N, int K,
    float alpha, const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc)
{
	double t0 = work_begin();
	if (p == GEMM_BF16) {
		int la, lb;
		const void *b = pack_b(transb, B, ldb, K, N, &lb);
		const void *a = pack_rows(transa, A, lda, 0, M, K, &la);
		bf16_product(transa, transb, M, N, K, alpha, a, la, b, lb, beta,
		    C, ldc);
	} else
		product(GEMM_ONE, transa, transb, M, N, K, alpha, A, lda, B,
		    ldb, beta, C, ldc);
	work_end(WORK_PRODUCT, t0, 1);
}

/*
 * gemm_rows's blocks: ROWS rows each whatever the thread count, so that
 * every row is computed by a call of the same shape on any thread count.
 * A library's bits for a row can depend on the call's size (oneDNN's
 * blocking and edges follow it; OpenBLAS's AVX-512 kernels take a
 * small-matrix path below a size, which rounds alpha and beta otherwise)
 * and on where it starts (Zen's kernels compute an edge panel narrower
 * than their unroll in another order).  96 rows: a multiple of every
 * OpenBLAS unroll (12 rows on Haswell and Zen, 16 on SkylakeX); oneDNN's
 * AVX2 kernels read these shapes' operands in place, so more blocks cost
 * it little, and OpenBLAS packs the shared operand once a block, a few
 * per cent of a weight gradient's time on one thread.
 */
#define ROWS	96

void
gemm_rows(enum gemm_prec p, int transa, int transb, int M, int N, int K,
    float alpha, const float *A, int lda, const float *B, int ldb, float beta,
    float *C, int ldc)
{
	int nthr = omp_get_max_threads(), nblk = (M + ROWS - 1) / ROWS, lb;
	const void *b16 = team_b(p, transb, B, ldb, K, N, &lb);
	int blas = gemm_solo_begin();
	#pragma omp parallel for num_threads(nblk < nthr ? nblk : nthr) \
	    schedule(dynamic, 1)
	for (int i = 0; i < nblk; i++) {
		int r0 = i * ROWS, m = M - r0 < ROWS ? M - r0 : ROWS;
		const float *a = A + (transa ? (size_t)r0 : (size_t)r0 * lda);
		double t1 = work_begin();
		if (b16 != NULL) {
			int la;
			const void *a16 = pack_rows(transa, A, lda, r0, m, K, &la);
			bf16_product(transa, transb, m, N, K, alpha, a16, la,
			    b16, lb, beta, C + (size_t)r0 * ldc, ldc);
		}
		else
			product(GEMM_ROWS, transa, transb, m, N, K, alpha, a,
			    lda, B, ldb, beta, C + (size_t)r0 * ldc, ldc);
		work_end(WORK_PRODUCT, t1, 1);
	}
	gemm_solo_end(blas);
}

void
gemm_chunks(enum gemm_prec p, int transb, int M, int N, int K,
    const float *A, int lda, const float *B, int ldb, const float *bias,
    float *C, int ldc, int chunk, rows_fn *ep, void *arg)
{
	int lb;
	const void *b16 = team_b(p, transb, B, ldb, K, N, &lb);
	int nchunk = (M + chunk - 1) / chunk;
	int blas = gemm_solo_begin();
	#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < nchunk; i++) {
		int r0 = i * chunk, m = M - r0 < chunk ? M - r0 : chunk;
		float *c = C != NULL ? C + (size_t)r0 * ldc :
		    gemm_bf16_buffer(0, sizeof(float) * (size_t)m * ldc);
		if (c == NULL) {
			ep(arg, NULL, r0, m);
			continue;
		}
		double t1 = work_begin();
		if (bias != NULL)
			for (int r = 0; r < m; r++)
				memcpy(c + (size_t)r * ldc, bias, sizeof(float) * N);
		float beta = bias != NULL ? 1.0f : 0.0f;
		if (b16 != NULL) {
			int la;
			const void *a16 = pack_rows(0, A, lda, r0, m, K, &la);
			bf16_product(0, transb, m, N, K, 1.0f, a16, la, b16, lb,
			    beta, c, ldc);
		}
		else
			product(GEMM_CHUNKS, 0, transb, m, N, K, 1.0f,
			    A + (size_t)r0 * lda, lda, B, ldb, beta, c, ldc);
		work_end(WORK_PRODUCT, t1, 1);
		if (ep != NULL) {
			t1 = work_begin();
			ep(arg, c, r0, m);
			work_end(WORK_EPILOGUE, t1, 1);
		}
	}
	gemm_solo_end(blas);
}
