/*
 * gemm.c - a large sgemm as one single-threaded OpenBLAS call per OpenMP
 * thread, each on its own block of rows of the result (see nn.h).
 */
#include <cblas.h>
#include <omp.h>

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
