/*
 * gemmref.h - the reference the matrix tests (test_gemm, test_bf16) hold
 * products to: a double product of the operands, as the backend saw them.
 */
#ifndef GEMMREF_H
#define GEMMREF_H

#include <math.h>
#include <stdlib.h>

#include "nn.h"
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

/* A batch of n0 x n1 products M x N x K (alpha 0.75, transposes t >> 1
 * and t & 1) laid out as attention's: a record's rows hold its n1 heads'
 * blocks, records one after another, results dense; its operands drawn
 * into *a and *b (malloc'd, *na and *nb floats). */
static struct gemm_batch
attn_batch(struct rng *r, int t, int n0, int n1, int M, int N, int K,
    float **a, size_t *na, float **b, size_t *nb)
{
	int ta = t >> 1, tb = t & 1;
	int ra = ta ? K : M, ca = ta ? M : K, rb = tb ? N : K, cb = tb ? K : N;
	int lda = n1 * ca, ldb = n1 * cb;

	*na = (size_t)n0 * ra * lda;
	*nb = (size_t)n0 * rb * ldb;
	*a = randn(r, *na);
	*b = randn(r, *nb);
	return (struct gemm_batch){ n0, n1, ta, tb, M, N, K, lda, ldb, N,
	    { (size_t)ra * lda, ca }, { (size_t)rb * ldb, cb },
	    { (size_t)n1 * M * N, (size_t)M * N }, 0.75f };
}

/* The largest err_units of g's results c over its products. */
static double
batch_err(const struct gemm_batch *g, const float *a, const float *b,
    const float *c, float (*rnd)(float))
{
	float *zero = calloc((size_t)g->M * g->N, sizeof(float));
	double e = 0;

	for (int i = 0; i < g->n0; i++)
		for (int j = 0; j < g->n1; j++)
			e = maxn(e, err_units(g->ta, g->tb, g->M, g->N, g->K,
			    g->alpha, a + i * g->sa[0] + j * g->sa[1], g->lda,
			    b + i * g->sb[0] + j * g->sb[1], g->ldb, 0.0f, zero,
			    c + i * g->sc[0] + j * g->sc[1], g->ldc, rnd));
	free(zero);
	return e;
}

#endif
