/*
 * string.c - Cayley-STRING (Schenck et al. 2025, "Learning the RoPEs:
 * better 2D and 3D position encodings with STRING"): R(r) = P B(r) P^T,
 * the form their Theorem 3.4 gives every STRING exp(sum_k r_k L_k) with
 * commuting skew L_k, and P = (I - S)(I + S)^-1 of a learned skew S (their
 * eq. 10), one P per head (per set here).  B is RoPE-Mixed's rotation, a
 * learned frequency per axis and pair: the whole maximal torus, which the
 * theorem's generality needs (an axial RoPE would leave out the
 * frequencies off the axes).  The paper learns both the frequencies and S.
 *
 * Layout: U[axes][head_dim/2][1] as rope-mixed, then S's upper triangle
 * [d(d-1)/2], S = S_up - S_up^T.  Default init: the frequencies
 * RoPE-Mixed's (Heo et al.), the baseline the paper compares with, and
 * S = 0 (the paper states no initial S): P = I, so STRING starts as
 * RoPE-Mixed and learns its basis.
 */
#include <math.h>
#include <string.h>

#include "liere.h"
#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"
#include "rope_mixed.h"
#include "skew.h"

/* Floats of the rotation's frequencies, before S. */
static int64_t
nfreq(const struct pe *pe)
{
	return (int64_t)pe->axes * (pe->head_dim / 2);
}

static int64_t
set_params(const struct pe *pe)
{
	return nfreq(pe) + tri(pe->head_dim);
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	pe_mixed_init(pe, ini, r, p);
	if (ini->kind == PE_INIT_DEFAULT)
		memset(p + nfreq(pe), 0, sizeof *p * tri(pe->head_dim));
	else
		pe_fill(ini, r, p + nfreq(pe), tri(pe->head_dim));
}

/* M = (I + S)^-1 by Gauss-Jordan elimination with partial pivoting; I + S
 * is never singular (x^T (I + S) x = |x|^2).  A: d x d scratch. */
static void
cayley_inverse(int d, const float *s, double *M, double *A)
{
	skew_from_upper(d, s, 1, A);
	for (int i = 0; i < d; i++) {
		A[i * d + i] = 1;
		for (int j = 0; j < d; j++)
			M[i * d + j] = i == j;
	}
	for (int c = 0; c < d; c++) {
		int p = c;
		for (int i = c + 1; i < d; i++)
			if (fabs(A[i * d + c]) > fabs(A[p * d + c]))
				p = i;
		for (int j = 0; j < d && p != c; j++) {
			double t = A[c * d + j];
			A[c * d + j] = A[p * d + j];
			A[p * d + j] = t;
			t = M[c * d + j];
			M[c * d + j] = M[p * d + j];
			M[p * d + j] = t;
		}
		double inv = 1 / A[c * d + c];
		for (int j = c; j < d; j++)
			A[c * d + j] *= inv;
		for (int j = 0; j < d; j++)
			M[c * d + j] *= inv;
		for (int i = 0; i < d; i++) {
			double f = A[i * d + c];
			if (i == c || f == 0)
				continue;
			for (int j = c; j < d; j++)
				A[i * d + j] -= f * A[c * d + j];
			for (int j = 0; j < d; j++)
				M[i * d + j] -= f * M[c * d + j];
		}
	}
}

/* P = (I - S)(I + S)^-1 = 2 (I + S)^-1 - I. */
static void
basis(const struct pe *pe, const float *par, double *P, double *ws)
{
	int d = pe->head_dim;

	cayley_inverse(d, par + nfreq(pe), P, ws);
	for (int i = 0; i < d; i++)
		for (int j = 0; j < d; j++)
			P[i * d + j] = 2 * P[i * d + j] - (i == j);
}

/* dP = -2 M dS M with M = (I + S)^-1, so dL/dS = -2 M^T G M^T; S's upper
 * entry (i, j) is +S_ij and -S_ji. */
static void
basis_backward(const struct pe *pe, const float *par, const double *G,
    float *dpar, double *ws)
{
	int d = pe->head_dim;
	int64_t dd = (int64_t)d * d;
	double *M = ws + dd, *T = ws + 2 * dd;
	float *ds = dpar + nfreq(pe);

	cayley_inverse(d, par + nfreq(pe), M, ws);
	for (int i = 0; i < d; i++)	/* T = M^T G */
		for (int j = 0; j < d; j++) {
			double v = 0;
			for (int k = 0; k < d; k++)
				v += M[k * d + i] * G[k * d + j];
			T[i * d + j] = v;
		}
	for (int i = 0, q = 0; i < d; i++)	/* (T M^T)_ij - (T M^T)_ji */
		for (int j = i + 1; j < d; j++, q++) {
			double a = 0, b = 0;
			for (int k = 0; k < d; k++) {
				a += T[i * d + k] * M[j * d + k];
				b += T[j * d + k] * M[i * d + k];
			}
			ds[q] += (float)(-2 * (a - b));
		}
}

static int64_t
basis_scratch(const struct pe *pe)
{
	return 3 * (int64_t)pe->head_dim * pe->head_dim;
}

/* Gauss-Jordan on I + S and on I: 3/2 d^3 */
static double
basis_macs(const struct pe *pe)
{
	double d = pe->head_dim;
	return 1.5 * d * d * d;
}

const struct pe_method pe_string = {
	.name = "string", .synopsis = "string", .flops_all = "string",
	.flags = PEM_PAIRS | PEM_COMMUTES,
	.conv = PE_CONV_INTEGER,	/* RoPE-Mixed's, whose frequencies it starts from */
	.set_params = set_params, .init = init, .generator = pe_free_generator,
	.basis = basis, .basis_backward = basis_backward,
	.basis_scratch = basis_scratch, .basis_macs = basis_macs,
};
