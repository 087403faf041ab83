/*
 * bf16.h - bf16 products for gemm.c: operands rounded to bf16 by
 * bf16_pack, multiplied with fp32 accumulation into an fp32 result by
 * oneDNN's matmul primitive (bf16 kernels where the CPU has them; fp32
 * kernels on the rounded values when emulated).  nn.h's gemm_bf16_*
 * functions are the public side.
 */
#ifndef BF16_H
#define BF16_H

#include "nn.h"

/* A[rows][cols] (leading dimension ld) rounded to bf16 into the calling
 * thread's operand buffer slot (0 or 1, reused by the thread's next pack
 * of that slot); returns it, rows x cols, contiguous. */
const void *bf16_pack(int slot, const float *A, int rows, int cols, int ld);

/* A[rows][cols] (contiguous) rounded to bf16 into the process's shared
 * operand buffer (grown, never shrunk; one matrix at a time), in chunks
 * of chunk rows over the OpenMP threads, and with part, part[i][cols] the
 * sums of chunk i's rows (colsum_chunk's) from the same pass: call it from
 * serial code.  Returns the copy, rows x cols, contiguous, valid until the
 * next call; NULL when it could not (gemm_failed says why). */
const void *bf16_pack_all(const float *A, int rows, int cols, int chunk,
	    float *part);

/* A[rows][cols] (leading dimension lda) rounded into dst[rows][ldd], in
 * bf16_size's elements, by the calling thread. */
void	 bf16_round(void *dst, int ldd, const float *A, int lda, int rows,
	    int cols);

/* C[M][N] = alpha op(A) op(B) + beta C (C row-major, leading dimension
 * ldc) for A and B rounded by bf16_pack or bf16_pack_all (A stored K x M
 * when transa, B N x K when transb, rows lda and ldb elements apart),
 * computed by the calling thread alone. */
void	 bf16_product(int transa, int transb, int M, int N, int K,
	    float alpha, const void *A, int lda, const void *B, int ldb,
	    float beta, float *C, int ldc);

/* g's products on rounded operands (gemm_batch in bf16), the calling
 * thread alone; NaN results where they cannot run. */
void	 bf16_batch(const struct gemm_batch *g, const void *A, const void *B,
	    float *C);
/* g's products on fp32 operands by oneDNN's matmul, the calling thread
 * alone (gemm.c's gemm_batch); NaN results where they cannot run. */
void	 onednn_batch(const struct gemm_batch *g, const float *A,
	    const float *B, float *C);

#endif
