/*
 * gemm_fail.c - the products' failures (gemm_fail.h): one reason for the
 * process, kept by whichever thread fails first, and a trial a thread.
 */
#include <math.h>

#include "err.h"
#include "gemm_fail.h"
#include "nn.h"

static struct err failure;	/* the first product that could not run */
static int failed;
/* The calling thread's trial: 1 while on, 2 once a product of it failed. */
static _Thread_local int trial;

void
product_failed(const char *what)
{
	if (trial) {
		trial = 2;
		return;
	}
	#pragma omp critical (gemm_fail)
	if (!failed) {
		err_set(&failure, "matrix product: %s", what);
		failed = 1;
	}
}

void
product_trial_begin(void)
{
	trial = 1;
}

int
product_trial_end(void)
{
	int t = trial;

	trial = 0;
	return t == 2 ? -1 : 0;
}

int
gemm_failed(struct err *e)
{
	int f;

	#pragma omp critical (gemm_fail)
	{
		f = failed;
		if (f && e != NULL)
			*e = failure;
	}
	return f ? -1 : 0;
}

void
nan_matrix(float *C, int M, int N, int ldc)
{
	for (int r = 0; r < M; r++)
		for (int c = 0; c < N; c++)
			C[(size_t)r * ldc + c] = NAN;
}
