/*
 * gemm.c - a large sgemm as one single-threaded OpenBLAS call per OpenMP
 * thread, each on its own block of rows (or columns) of the result (see
 * nn.h).
 */
#include <cblas.h>
#include <omp.h>
#include <string.h>

#include "nn.h"

void
gemm_rows(int transa, int transb, int M, int N, int K, float alpha,
    const float *A, int lda, const float *B, int ldb, float beta, float *C,
    int ldc)
{
	int nthr = omp_get_max_threads();
	/* split the longer side of C: each thread packs all of the other
	 * operand, so the shorter side's is the one packed twice (fc2's
	 * weight gradient, 192 x 768: 256 -> 273 GFLOP/s on 2 threads) */
	int cols = N > M, L = cols ? N : M;
	/* blocks of whole 16-row (column) panels, at least 64 each */
	int per = (L + nthr - 1) / nthr;
	per = (per + 15) & ~15;
	if (per < 64)
		per = 64;
	int nblk = (L + per - 1) / per;
	int blas = openblas_get_num_threads();
	openblas_set_num_threads(1);
	#pragma omp parallel for num_threads(nblk) schedule(static, 1)
	for (int i = 0; i < nblk; i++) {
		int l0 = i * per, l = L - l0 < per ? L - l0 : per;
		const float *a = A, *b = B;
		float *c = C;
		if (cols) {
			b += transb ? (size_t)l0 * ldb : (size_t)l0;
			c += l0;
		} else {
			a += transa ? (size_t)l0 : (size_t)l0 * lda;
			c += (size_t)l0 * ldc;
		}
		cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans,
		    transb ? CblasTrans : CblasNoTrans, cols ? M : l, cols ? l : N,
		    K, alpha, a, lda, b, ldb, beta, c, ldc);
	}
	openblas_set_num_threads(blas);
}

void
gemm_chunks(int transb, int M, int N, int K, const float *A, int lda,
    const float *B, int ldb, const float *bias, float *C, int ldc, int chunk,
    rows_fn *ep, void *arg)
{
	int nchunk = (M + chunk - 1) / chunk;
	int blas = openblas_get_num_threads();
	openblas_set_num_threads(1);
	#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < nchunk; i++) {
		int r0 = i * chunk, m = M - r0 < chunk ? M - r0 : chunk;
		float *c = C + (size_t)r0 * ldc;
		if (bias != NULL)
			for (int r = 0; r < m; r++)
				memcpy(c + (size_t)r * ldc, bias, sizeof(float) * N);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, transb ? CblasTrans :
		    CblasNoTrans, m, N, K, 1.0f, A + (size_t)r0 * lda, lda, B, ldb,
		    bias != NULL ? 1.0f : 0.0f, c, ldc);
		if (ep != NULL)
			ep(arg, r0, m);
	}
	openblas_set_num_threads(blas);
}
