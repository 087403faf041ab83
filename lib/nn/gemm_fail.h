/*
 * gemm_fail.h - products that cannot run (oneDNN refuses a shape, memory
 * runs out), inside lib/nn only: the first reason is kept for gemm_failed
 * (nn.h), the product's result is NaN, and the caller stops.  While the
 * planner times a backend, a failure is that timing's instead (a trial),
 * and the process goes on with the other backend.
 */
#ifndef GEMM_FAIL_H
#define GEMM_FAIL_H

/* A product could not run, for reason what: kept for gemm_failed (the
 * first reason of any thread), or the calling thread's trial's if one is
 * on. */
void	 product_failed(const char *what);
/* Products that fail on the calling thread from now on fail the trial
 * instead of the process. */
void	 product_trial_begin(void);
/* Ends the calling thread's trial: -1 if a product of it failed, else 0. */
int	 product_trial_end(void);
/* C[M][N] (rows ldc apart) all NaN: the result of a product that could
 * not run. */
void	 nan_matrix(float *C, int M, int N, int ldc);

#endif
