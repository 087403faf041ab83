/*
 * circulant.c - Circulant-STRING (Schenck et al., ICML 2025, "Learning the
 * RoPEs: better 2D and 3D position encodings with STRING"): R(r) =
 * exp(sum_k r_k L_k) with L_k = C_k - C_k^T, C_k circulant.  Circulant
 * matrices commute, so R(x)^T R(y) = R(y - x) exactly, and the real
 * Fourier basis F diagonalises all of them at once: L_k = F M_k F^T, M_k
 * 2 x 2 blocks whose angles are the sine transform of L_k's first row.
 * So R = F B(r) F^T, B(r) a rotation of pairs (rope-mixed's form) and F a
 * fixed orthogonal basis: applied to q and k as every basis is, F^T then
 * B (rotary.c), F^T q the real DFT of q as one exact product per head
 * (the FFT's result, by a matrix product on the GEMM path).
 *
 * L = C - C^T keeps of C its antisymmetric part: a skew-symmetric
 * circulant, first row (0, a_1, .., a_{h-1}, 0, -a_{h-1}, .., -a_1), h =
 * d/2; those a are the parameters, a[axes][h - 1] per set.  Its eigenvalues
 * are i s_m, s_m = 2 sum_n a_n sin(2 pi n m / d), on the pair (cos, sin) of
 * frequency m = 1 .. h-1: pair m - 1 of B turns by s_m; the last pair of B
 * spans the constant and the alternating vector, eigenvalue 0.
 *
 * Default init: the spectrum s of RoPE-Mixed's initial frequencies (Heo et
 * al.; pair m - 1's, the last pair's left out), a by the inverse sine
 * transform, a_n = (2/d) sum_m s_m sin(2 pi n m / d); other inits fill a.
 */
#include <math.h>

#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"
#include "rope_mixed.h"

/* Free parameters of one L_k: a_1 .. a_{h-1}. */
static int
nfree(const struct pe *pe)
{
	return pe->head_dim / 2 - 1;
}

static int64_t
set_params(const struct pe *pe)
{
	return (int64_t)pe->axes * nfree(pe);
}

/* sin(2 pi n m / d) */
static double
dst(const struct pe *pe, int n, int m)
{
	return sin(2 * M_PI * ((int64_t)n * m % pe->head_dim) / pe->head_dim);
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	int h = pe->head_dim / 2, d = pe->head_dim;
	float f[3 * PE_MAXDIM / 2];

	if (ini->kind != PE_INIT_DEFAULT) {
		pe_fill(ini, r, p, set_params(pe));
		return;
	}
	pe_mixed_init(pe, ini, r, f);	/* U[axes][h]: pair m - 1's upper entry */
	for (int i = 0; i < pe->axes; i++)
		for (int n = 1; n < h; n++) {
			double v = 0;
			for (int m = 1; m < h; m++)
				v += f[i * h + m - 1] * dst(pe, n, m);
			p[i * nfree(pe) + n - 1] = (float)(2 * v / d);
		}
}

/* Pair j of A_i: upper entry s_{j+1} of axis i; the last pair 0. */
static void
generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	double s = 0;

	for (int n = 1; n <= nfree(pe) && j < nfree(pe); n++)
		s += par[i * nfree(pe) + n - 1] * dst(pe, n, j + 1);
	g[1] = 2 * s;
	g[2] = -2 * s;
}

/* dg[axes][h][1] = dL/ds: dL/da_n = 2 sum_m dL/ds_m sin(2 pi n m / d). */
static void
backward(const struct pe *pe, const float *par, const double *dg, float *dpar)
{
	int h = pe->head_dim / 2;

	for (int i = 0; i < pe->axes; i++)
		for (int n = 1; n < h; n++) {
			double v = 0;
			for (int m = 1; m < h; m++)
				v += dg[i * h + m - 1] * dst(pe, n, m);
			dpar[i * nfree(pe) + n - 1] += (float)(2 * v);
		}
}

/* F: column 2(m-1) the cosine, 2(m-1)+1 the sine of frequency m, scaled
 * to unit length; the last two the constant and the alternating vector. */
static void
basis(const struct pe *pe, const float *par, double *P, double *ws)
{
	int d = pe->head_dim, h = d / 2;
	double c = sqrt(2.0 / d), e = 1 / sqrt((double)d);

	for (int j = 0; j < d; j++) {
		double *row = P + (int64_t)j * d;
		for (int m = 1; m < h; m++) {
			double t = 2 * M_PI * ((int64_t)j * m % d) / d;
			row[2 * (m - 1)] = c * cos(t);
			row[2 * (m - 1) + 1] = c * sin(t);
		}
		row[d - 2] = e;
		row[d - 1] = j % 2 ? -e : e;
	}
}

/* F is fixed: nothing of the parameters in it. */
static void
basis_backward(const struct pe *pe, const float *par, const double *dP,
    float *dpar, double *ws)
{
}

static int64_t
basis_scratch(const struct pe *pe)
{
	return 0;
}

/* d^2 sines and cosines, counted as one multiply-accumulate each */
static double
basis_macs(const struct pe *pe)
{
	return (double)pe->head_dim * pe->head_dim;
}

const struct pe_method pe_circulant_string = {
	.name = "circulant-string", .synopsis = "circulant-string",
	.flops_all = "circulant-string",
	.flags = PEM_PAIRS | PEM_COMMUTES,
	.conv = PE_CONV_INTEGER,	/* RoPE-Mixed's, whose spectrum it starts from */
	.set_params = set_params, .init = init, .generator = generator,
	.backward = backward,
	.basis = basis, .basis_backward = basis_backward,
	.basis_scratch = basis_scratch, .basis_macs = basis_macs,
};
