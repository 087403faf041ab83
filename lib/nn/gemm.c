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
	/* Blocks of whole 48-row panels, at least 96 rows each.  OpenBLAS
	 * computes an edge panel narrower than its unroll (12 rows on Haswell
	 * and Zen, 16 on SkylakeX) with other register kernels, in another
	 * order, so blocks start on a multiple of every unroll.  Rows, never
	 * columns: a column block's bits depend on where it starts under any
	 * alignment (Zen kernels), and the same bits on any thread count
	 * matter more than packing the shorter operand once. */
	int per = (M + nthr - 1) / nthr;
	per = (per + 47) / 48 * 48;
	if (per < 96)
		per = 96;
	int nblk = (M + per - 1) / per;
	int blas = openblas_get_num_threads();
	openblas_set_num_threads(1);
	#pragma omp parallel for num_threads(nblk) schedule(static, 1)
	for (int i = 0; i < nblk; i++) {
		int r0 = i * per, m = M - r0 < per ? M - r0 : per;
		const float *a = A + (transa ? (size_t)r0 : (size_t)r0 * lda);
		cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans,
		    transb ? CblasTrans : CblasNoTrans, m, N, K, alpha, a, lda,
		    B, ldb, beta, C + (size_t)r0 * ldc, ldc);
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
