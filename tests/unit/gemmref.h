/*
 * gemmref.h - the reference the matrix tests (test_gemm, test_bf16) hold
 * products to: a double product of the operands, as the backend saw them.
 */
#ifndef GEMMREF_H
#define GEMMREF_H

#include <math.h>
#include <stdlib.h>

#include "rng.h"
#include "test.h"

/* n standard normal floats (malloc'd). */
static float *
randn(struct rng *r, size_t n)
{
	float *p = malloc(sizeof(float) * n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)rng_normal(r);
	return p;
}

/* op(X)[i][j] of a row-major X with leading dimension ld, through rnd
 * (NULL: as it is). */
static double
at(const float *x, int t, int ld, int i, int j, float (*rnd)(float))
{
	float v = t ? x[(size_t)j * ld + i] : x[(size_t)i * ld + j];
	return rnd != NULL ? rnd(v) : v;
}

/* The largest error of c against alpha op(A) op(B) + beta c0 in units of
 * its rounding bound: K + 2 float roundings of the sum of the terms'
 * magnitudes; the operands first through rnd (NULL: as they are). */
static double
err_units(int ta, int tb, int M, int N, int K, float alpha, const float *a,
    int lda, const float *b, int ldb, float beta, const float *c0,
    const float *c, int ldc, float (*rnd)(float))
{
	double worst = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0, mag = 0;
			for (int k = 0; k < K; k++) {
				double p = at(a, ta, lda, i, k, rnd) *
				    at(b, tb, ldb, k, j, rnd);
				s += p;
				mag += fabs(p);
			}
			double c0v = c0[(size_t)i * ldc + j];
			double want = alpha * s + beta * c0v;
			double bound = (K + 2) * 0x1p-24 * (fabs(alpha) * mag +
			    fabs(beta * c0v)) + 1e-30;
			worst = maxn(worst, fabs(c[(size_t)i * ldc + j] - want) /
			    bound);
		}
	return worst;
}

#endif
