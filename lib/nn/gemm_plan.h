/*
 * gemm_plan.h - between the matrix backend (gemm.c) and its planner
 * (gemm_plan.c): inside lib/nn only.
 */
#ifndef GEMM_PLAN_H
#define GEMM_PLAN_H

#include "nn.h"

/* One fp32 product, as cblas_sgemm (row-major), and its kind; or, batch
 * not NULL, a batch of them (kind GEMM_BATCH: the shape is each one's). */
struct gemm_call {
	int		 kind, transa, transb, M, N, K;
	float		 alpha, beta;
	const float	*A, *B;
	float		*C;
	int		 lda, ldb, ldc;
	const struct gemm_batch *batch;
};

/* The backend that computes c's shape: the plan's choice, made now by
 * timing both on c's operands (C untouched) at its shape's first product;
 * rule's when no plan is open. */
int	 gemm_plan_backend(const struct gemm_call *c, int rule);
/* C = alpha op(A) op(B) + beta C by backend b, on the calling thread
 * inside a parallel region. */
void	 gemm_product_by(int b, int transa, int transb, int M, int N, int K,
	    float alpha, const float *A, int lda, const float *B, int ldb,
	    float beta, float *C, int ldc);

/* g's products by backend b (gemm_batch in fp32), on the calling thread
 * inside a parallel region. */
void	 gemm_batch_by(int b, const struct gemm_batch *g, const float *A,
	    const float *B, float *C);

#endif
