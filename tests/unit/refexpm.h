/*
 * refexpm.h - the high-precision reference exponential of the unit tests:
 * scaling and squaring around 40 Taylor terms in long double; and the
 * orthogonality error and determinant of a block.
 */
#ifndef REFEXPM_H
#define REFEXPM_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* exp(X) by scaling and squaring around 40 Taylor terms in long double. */
static inline void
ref_expm(int n, const double *X, double *R)
{
	long double *A = malloc(sizeof *A * n * n), *S = malloc(sizeof *S * n * n);
	long double *T = malloc(sizeof *T * n * n), *U = malloc(sizeof *U * n * n);
	long double norm = 0;
	int s = 0;

	for (int j = 0; j < n; j++) {
		long double c = 0;
		for (int i = 0; i < n; i++)
			c += fabsl((long double)X[i * n + j]);
		norm = fmaxl(norm, c);
	}
	while (norm > 0.125L) {
		norm /= 2;
		s++;
	}
	for (int k = 0; k < n * n; k++) {
		A[k] = ldexpl(X[k], -s);
		S[k] = T[k] = (k / n == k % n);
	}
	for (int m = 1; m <= 40; m++) {		/* T = T A / m; S += T */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				long double v = 0;
				for (int k = 0; k < n; k++)
					v += T[i * n + k] * A[k * n + j];
				U[i * n + j] = v / m;
			}
		memcpy(T, U, sizeof *T * n * n);
		for (int k = 0; k < n * n; k++)
			S[k] += T[k];
	}
	for (int q = 0; q < s; q++) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				long double v = 0;
				for (int k = 0; k < n; k++)
					v += S[i * n + k] * S[k * n + j];
				U[i * n + j] = v;
			}
		memcpy(S, U, sizeof *S * n * n);
	}
	for (int k = 0; k < n * n; k++)
		R[k] = (double)S[k];
	free(A); free(S); free(T); free(U);
}

/* max |R^T R - I| of R[n][n]. */
static inline double
orth_err(int n, const double *R)
{
	double e = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double v = 0;
			for (int k = 0; k < n; k++)
				v += R[k * n + i] * R[k * n + j];
			e = maxn(e, fabs(v - (i == j)));
		}
	return e;
}

/* Determinant by Gaussian elimination with partial pivoting. */
static inline double
det(int n, const double *R)
{
	double *A = malloc(sizeof *A * n * n), d = 1;
	memcpy(A, R, sizeof *A * n * n);
	for (int c = 0; c < n; c++) {
		int p = c;
		for (int i = c + 1; i < n; i++)
			if (fabs(A[i * n + c]) > fabs(A[p * n + c]))
				p = i;
		if (p != c) {
			for (int j = 0; j < n; j++) {
				double t = A[c * n + j];
				A[c * n + j] = A[p * n + j];
				A[p * n + j] = t;
			}
			d = -d;
		}
		d *= A[c * n + c];
		for (int i = c + 1; i < n; i++) {
			double f = A[i * n + c] / A[c * n + c];
			for (int j = c; j < n; j++)
				A[i * n + j] -= f * A[c * n + j];
		}
	}
	free(A);
	return d;
}

#endif
