/*
 * linear.c - fully connected layer, PyTorch weight layout w[No][Ni]: the
 * products over all rows of the batch, y and dx in chunks of rows that can
 * carry a row epilogue, dw one sgemm per thread's block of its rows.
 */
#include <string.h>

#include "arch.h"
#include "nn.h"

/* Columns j0 .. j0 + 16 K of x[N][D] summed over the rows, in row order,
 * in K vector registers, then added to acc. */
static inline __attribute__((always_inline)) void
colsum_vecs(float *restrict acc, const float *restrict x, int N, int D,
    int j0, const int K)
{
	v16 s[8];	/* K <= 8 */

	#pragma GCC unroll 8
	for (int k = 0; k < K; k++)
		s[k] = (v16){ 0 };
	for (int n = 0; n < N; n++)
		#pragma GCC unroll 8
		for (int k = 0; k < K; k++)
			s[k] += *(const v16 *)(x + (size_t)n * D + j0 + 16 * k);
	for (int k = 0; k < K; k++)
		*(v16 *)(acc + j0 + 16 * k) += s[k];
}

/* Register blocks of up to COLSUM_VECS vectors: a sum kept in memory
 * would wait on its own store every row. */
#define COLSUM_VECS	(ARCH_VREGS_HERE >= 32 ? 8 : 4)

/* Column strips in parallel (col_strip), each summing its rows in order
 * (the same order for every strip width and register block).  Wide
 * strips read up to 1 KiB of each row at a time: strips of 16 to 64
 * columns measured up to 3x slower on these shapes (strided rows defeat
 * the prefetcher). */
void
colsum_add(float *restrict acc, const float *restrict x, int N, int D)
{
	int sw = col_strip(D);
	#pragma omp parallel for schedule(static)
	for (int j0 = 0; j0 < D; j0 += sw) {
		int j = j0, end = D - j0 < sw ? D : j0 + sw;
		for (; end - j >= 16 * COLSUM_VECS; j += 16 * COLSUM_VECS)
			colsum_vecs(acc, x, N, D, j, COLSUM_VECS);
		/* the rest (under the block) in 4, 2 and 1 vectors */
		for (int K = 4; K >= 1; K /= 2)
			if (K < COLSUM_VECS && end - j >= 16 * K) {
				colsum_vecs(acc, x, N, D, j, K);
				j += 16 * K;
			}
		for (; j < end; j++) {
			float t = 0;
			for (int n = 0; n < N; n++)
				t += x[(size_t)n * D + j];
			acc[j] += t;
		}
	}
}

void
colsum_chunk(float *part, int chunk, int w, const float *x, int r0, int n)
{
	float *p = part + (size_t)(r0 / chunk) * w;
	memset(p, 0, sizeof(float) * w);
	colsum_add(p, x, n, w);
}

void
linear_forward_ep(enum gemm_prec p, float *y /* [N][No] */,
    const float *x /* [N][Ni] */, const float *w /* [No][Ni] */,
    const float *b /* [No] or NULL */, int N, int Ni, int No, int chunk,
    rows_fn *ep, void *arg)
{
	gemm_chunks(p, 1, N, No, Ni, x, Ni, w, Ni, b, y, No, chunk, ep, arg);
}

void
linear_forward(enum gemm_prec p, float *y /* [N][No] */,
    const float *x /* [N][Ni] */, const float *w /* [No][Ni] */,
    const float *b /* [No] or NULL */, int N, int Ni, int No)
{
	linear_forward_ep(p, y, x, w, b, N, Ni, No, gemm_chunk(p), NULL,
	    NULL);
}

void
linear_backward_dx(enum gemm_prec p, float *dx /* [N][Ni] */,
    const float *dy /* [N][No] */, const float *w /* [No][Ni] */, int N,
    int Ni, int No, int chunk, rows_fn *ep, void *arg)
{
	gemm_chunks(p, 0, N, Ni, No, dy, No, w, Ni, NULL, dx, Ni, chunk, ep,
	    arg);
}

/* A dx product's epilogue: the chunk's share of the bias gradient (dy's
 * rows summed, where part is not NULL), then the caller's (if any). */
struct shares {
	rows_fn	*ep;
	void	*arg;
	const float *dy;
	float	*part;
	int	 No, chunk;
};

static void
share_rows(void *arg, float *c, int r0, int n)
{
	const struct shares *s = arg;

	if (s->part != NULL)
		colsum_chunk(s->part, s->chunk, s->No, s->dy + (size_t)r0 * s->No,
		    r0, n);
	if (s->ep != NULL)
		s->ep(s->arg, c, r0, n);
}

void
linear_backward_ep(enum gemm_prec p, float *dx /* [N][Ni] or NULL */,
    float *dw /* [No][Ni] */, float *db /* [No] or NULL */,
    float *part /* [nchunk][No] or NULL */, const float *dy /* [N][No] */,
    const float *x /* [N][Ni] */, const float *w /* [No][Ni] */, int N,
    int Ni, int No, int chunk, rows_fn *ep, void *arg)
{
	struct shares s = { ep, arg, dy, part, No, chunk };
	/* dx's product runs where dx is kept or its rows go to ep */
	int dxp = dx != NULL || ep != NULL;
	/* in bf16 dy is an operand of both products: rounded once, and its
	 * chunks summed in the same pass */
	if (p == GEMM_BF16 && dxp && gemm_bf16_pin(dy, N, No, chunk, part))
		s.part = NULL;
	if (dxp)
		linear_backward_dx(p, dx, dy, w, N, Ni, No, chunk,
		    s.part != NULL || ep != NULL ? share_rows : NULL, &s);
	gemm_rows(p, 1, 0, No, Ni, N, 1.0f, dy, No, x, Ni, 1.0f, dw, Ni);
	if (p == GEMM_BF16 && dxp)
		gemm_bf16_unpin();
	if (db != NULL)
		colsum_add(db, dy, N, No);
}

void
linear_backward(enum gemm_prec p, float *dx /* [N][Ni] or NULL */,
    float *dw /* [No][Ni] */, float *db /* [No] or NULL */,
    const float *dy /* [N][No] */, const float *x /* [N][Ni] */,
    const float *w /* [No][Ni] */, int N, int Ni, int No)
{
	linear_backward_ep(p, dx, dw, db, NULL, dy, x, w, N, Ni, No,
	    gemm_chunk(p), NULL, NULL);
}
