/*
 * gemm.c - a large sgemm as one single-threaded OpenBLAS call per OpenMP
 * thread, each on its own block of rows of the result (see nn.h).
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
	/* blocks of whole 16-row panels, at least 64 rows each */
	int per = (M + nthr - 1) / nthr;
	per = (per + 15) & ~15;
	if (per < 64)
		per = 64;
	int nblk = (M + per - 1) / per;
	int blas = openblas_get_num_threads();
	openblas_set_num_threads(1);
	#pragma omp parallel for num_threads(nblk) schedule(static, 1)
	for (int i = 0; i < nblk; i++) {
		int m0 = i * per, m = M - m0 < per ? M - m0 : per;
		const float *a = transa ? A + m0 : A + (size_t)m0 * lda;
		cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans,
		    transb ? CblasTrans : CblasNoTrans, m, N, K, alpha, a, lda,
		    B, ldb, beta, C + (size_t)m0 * ldc, ldc);
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
