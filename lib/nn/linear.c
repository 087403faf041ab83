/*
 * linear.c - fully connected layer, PyTorch weight layout w[No][Ni]: the
 * products over all rows of the batch, y and dx in chunks of rows that can
 * carry a row epilogue, dw one sgemm per thread's block of its rows.
 */
#include "nn.h"

/* Column strips in parallel (col_strip), each summing its rows in order.
 * Wide strips read up to 1 KiB of each row at a time: strips of 16 to 64
 * columns measured up to 3x slower on these shapes (strided rows defeat
 * the prefetcher). */
void
colsum_add(float *restrict acc, const float *restrict x, int N, int D)
{
	int sw = col_strip(D);
	#pragma omp parallel for schedule(static)
	for (int j0 = 0; j0 < D; j0 += sw) {
		int w = D - j0 < sw ? D - j0 : sw;
		float s[STRIP_MAX] = { 0 };
		for (int n = 0; n < N; n++) {
			const float *r = x + (size_t)n * D + j0;
			#pragma omp simd
			for (int j = 0; j < w; j++)
				s[j] += r[j];
		}
		for (int j = 0; j < w; j++)
			acc[j0 + j] += s[j];
	}
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
	linear_forward_ep(p, y, x, w, b, N, Ni, No, GEMM_CHUNK, NULL, NULL);
}

void
linear_backward_dx(enum gemm_prec p, float *dx /* [N][Ni] */,
    const float *dy /* [N][No] */, const float *w /* [No][Ni] */, int N,
    int Ni, int No, int chunk, rows_fn *ep, void *arg)
{
	gemm_chunks(p, 0, N, Ni, No, dy, No, w, Ni, NULL, dx, Ni, chunk, ep,
	    arg);
}

void
linear_backward_ep(enum gemm_prec p, float *dx /* [N][Ni] or NULL */,
    float *dw /* [No][Ni] */, float *db /* [No] or NULL */,
    const float *dy /* [N][No] */, const float *x /* [N][Ni] */,
    const float *w /* [No][Ni] */, int N, int Ni, int No, int chunk,
    rows_fn *ep, void *arg)
{
	/* in bf16 dy is an operand of both products: rounded once */
	if (p == GEMM_BF16 && dx != NULL)
		gemm_bf16_pin(dy, N, No);
	if (dx != NULL)
		linear_backward_dx(p, dx, dy, w, N, Ni, No, chunk, ep, arg);
	gemm_rows(p, 1, 0, No, Ni, N, 1.0f, dy, No, x, Ni, 1.0f, dw, Ni);
	if (p == GEMM_BF16 && dx != NULL)
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
	linear_backward_ep(p, dx, dw, db, dy, x, w, N, Ni, No, GEMM_CHUNK,
	    NULL, NULL);
}
