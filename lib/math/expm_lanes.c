/*
 * expm_lanes.c - expm.h's float exponential and adjoint for 16 small
 * blocks at once, one block per lane of a 64-byte vector: a rotation per
 * token (per-record positions) makes thousands of 8 x 8 exponentials a
 * call, where one block at a time fills half a vector per instruction and
 * spends as long again on its bookkeeping (norm bound, scaling, copies).
 *
 * Element (i, j) of all 16 blocks is one vector, L[i * n + j]; a product
 * is then n^3 vector FMAs in 4 x 4 register tiles.  The algorithm is
 * expm_impl.h's: T18 after scaling by 2^-s, s from sqrt(||X^2||_F) per
 * lane and the largest s for all, then s squarings; the adjoint on the
 * pair (X^T, G).  Each squaring doubles a lane's rounding error, so a
 * lane scaled further than its own norm asks is less accurate (and its
 * squarings wasted): callers batch blocks of like norm.  Lanes never mix:
 * a NaN block gives NaN in its own lane alone.
 */
#include "arch.h"
ARCH_CONTRACT
#include <math.h>
#include <string.h>

#include "expm.h"
#include "expm_t18.h"

typedef v16a vec;

static const float c18[5][5] = EXPM_T18;

/* C = D + A B (D NULL: zero; D may be C), blocks of n x n vectors, n a
 * multiple of 4, in tiles of C held in registers.  Each element's sum runs
 * over k in order, so the tiling never changes a bit. */
#if ARCH_VREGS_HERE >= 4 * 4 + 4 + 4
typedef vec tvec;		/* C's tile: 4 x 4 64-byte vectors */
enum { HALVES = 1, TR = 4, TQ = 4 };
#else
/* Fewer registers (AVX2: sixteen of 32 bytes): a 64-byte tile would
 * spill on every FMA, so each half of the lanes, 8 blocks, goes on its
 * own in 2 x 4 tiles of 32-byte vectors. */
typedef v8 tvec;
enum { HALVES = 2, TR = 2, TQ = 4 };
#endif
ARCH_TILE_FITS((TR * TQ + TR + TQ) / HALVES, "lmul");	/* C's tile, a column of A, a row of B */
static void
lmul(int n, const vec *A, const vec *B, vec *C, const vec *D)
{
	const tvec *a = (const tvec *)A, *b = (const tvec *)B, *d = (const tvec *)D;
	tvec *c = (tvec *)C;

	for (int h = 0; h < HALVES; h++)	/* element e of part h: [HALVES e + h] */
		for (int i0 = 0; i0 < n; i0 += TR)
			for (int j0 = 0; j0 < n; j0 += TQ) {
				tvec t[TR][TQ];
#pragma GCC unroll 4
				for (int r = 0; r < TR; r++)
#pragma GCC unroll 4
					for (int q = 0; q < TQ; q++)
						t[r][q] = d ? d[HALVES * ((i0 + r) * n + j0 + q) + h] : (tvec){ 0 };
				for (int k = 0; k < n; k++)
#pragma GCC unroll 4
					for (int r = 0; r < TR; r++)
#pragma GCC unroll 4
						for (int q = 0; q < TQ; q++)
							t[r][q] += a[HALVES * ((i0 + r) * n + k) + h] *
							    b[HALVES * (k * n + j0 + q) + h];
#pragma GCC unroll 4
				for (int r = 0; r < TR; r++)
#pragma GCC unroll 4
					for (int q = 0; q < TQ; q++)
						c[HALVES * ((i0 + r) * n + j0 + q) + h] = t[r][q];
			}
}

int64_t
expm_lanes_scratch(int n)
{
	return 10 * (int64_t)n * n * EXPM_LANES;
}

/* The squarings for X^2 (in a1, unscaled): the largest over the lanes of
 * ceil(log2(sqrt(||X^2||_F) / theta)); lanes whose bound is not finite
 * (NaN, Inf) are left out.  a1 is scaled to Z^2 = X^2 4^-s in place. */
static int
squarings(int n, vec *a1, float *scale)
{
	vec ss = { 0 };
	int s = 0;

	for (int e = 0; e < n * n; e++)
		ss += a1[e] * a1[e];
	double top = 0;	/* ceil(log2(x)) grows with x: one log2, of the largest */
	for (int l = 0; l < EXPM_LANES; l++) {
		double rho = sqrt(sqrt((double)ss[l]));
		if (isfinite(rho) && rho > top)
			top = rho;
	}
	if (top > EXPM_THETA_F32)
		s = (int)ceil(log2(top / EXPM_THETA_F32));
	*scale = ldexpf(1.0f, -s);
	for (int e = 0; e < n * n; e++)
		a1[e] *= *scale * *scale;
	return s;
}

/* out[i] = sum_j c18[i][j] m[j] over {I, Z, Z2, Z3, Z6} (no I with eye 0). */
static void
combine(int n, vec *const m[5], vec *const out[5], int eye)
{
	for (int e = 0; e < n * n; e++) {
		vec z1 = m[1][e], z2 = m[2][e], z3 = m[3][e], z4 = m[4][e];
		for (int i = 0; i < 5; i++)
			out[i][e] = c18[i][1] * z1 + c18[i][2] * z2 + c18[i][3] * z3 +
			    c18[i][4] * z4;
	}
	if (eye)
		for (int i = 0; i < 5; i++)
			for (int d = 0; d < n; d++)
				out[i][d * n + d] += c18[i][0];
}

/*
 * expm_impl.h's expm_pair on lanes: slot 0 holds Z, slot 1 Z^2 and, with
 * pair, slot 5 E.  Returns exp(Z) (or NULL when pair and !wantp: the last
 * squaring leaves it out) and, with pair, L(Z, E) in *Q.  Five slots a
 * side: the B_i take the places of the powers they are made of, and each
 * later result the place of a B that is used up, so that a forward's
 * slots, 20 KB at n = 8, stay in L1 (doc/performance.md).
 */
static vec *
pair_lanes(int n, int s, vec *ws, int pair, int wantp, vec **Q)
{
	int nn = n * n;
	vec *a[5], *e[5];

	for (int k = 0; k < 5; k++) {
		a[k] = ws + k * nn;
		e[k] = ws + (5 + k) * nn;
	}
	lmul(n, a[1], a[0], a[2], NULL);	/* Z^3 */
	lmul(n, a[2], a[2], a[3], NULL);	/* Z^6 */
	if (pair) {
		lmul(n, a[0], e[0], e[1], NULL);
		lmul(n, e[0], a[0], e[1], e[1]);
		lmul(n, a[1], e[0], e[2], NULL);
		lmul(n, e[1], a[0], e[2], e[2]);
		lmul(n, a[2], e[2], e[3], NULL);
		lmul(n, e[2], a[2], e[3], e[3]);
	}
	/* B0 .. B3 over Z, Z^2, Z^3, Z^6 (read before written), B4 in slot 4 */
	vec *am[5] = { NULL, a[0], a[1], a[2], a[3] };
	vec *em[5] = { NULL, e[0], e[1], e[2], e[3] };
	combine(n, am, a, 1);
	if (pair)
		combine(n, em, e, 0);
	/* A9 = B0 B4 + B3 over B3, B2 + A9 over B2, T18 = B1 + (B2 + A9) A9
	 * over B1 */
	lmul(n, a[0], a[4], a[3], a[3]);
	for (int k = 0; k < nn; k++)
		a[2][k] += a[3][k];
	vec *p = a[1], *q = e[1], *p2 = a[0], *q2 = e[0];
	lmul(n, a[2], a[3], p, p);
	if (pair) {
		lmul(n, a[0], e[4], e[3], e[3]);
		lmul(n, e[0], a[4], e[3], e[3]);
		for (int k = 0; k < nn; k++)
			e[2][k] += e[3][k];
		lmul(n, a[2], e[3], q, q);
		lmul(n, e[2], a[3], q, q);
	}
	for (int k = 0; k < s; k++) {	/* B0 and its E part used up */
		if (!pair || wantp || k + 1 < s)
			lmul(n, p, p, p2, NULL);
		if (pair) {
			lmul(n, p, q, q2, NULL);
			lmul(n, q, p, q2, q2);
			vec *t = q; q = q2; q2 = t;
		}
		vec *t = p; p = p2; p2 = t;
	}
	if (pair)
		*Q = q;
	return pair && !wantp ? NULL : p;
}

void
expm_skew_lanes(int n, const float *X, float *R, float *ws)
{
	const vec *x = (const vec *)X;
	vec *w = (vec *)ws, *z = w, *z2 = w + n * n;
	float scale;

	lmul(n, x, x, z2, NULL);
	int s = squarings(n, z2, &scale);
	for (int e = 0; e < n * n; e++)
		z[e] = x[e] * scale;
	memcpy(R, pair_lanes(n, s, w, 0, 1, NULL), sizeof(vec) * n * n);
}

void
expm_skew_adjoint_lanes(int n, const float *X, const float *G, float *dX,
    float *ws)
{
	const vec *x = (const vec *)X, *g = (const vec *)G;
	int nn = n * n;
	vec *w = (vec *)ws, *z = w, *z2 = w + nn, *E = w + 5 * nn, *Q;
	float scale;

	/* [[X^T, G], [0, X^T]] / 2^s; (X^T)^2 = X^2 */
	lmul(n, x, x, z2, NULL);
	int s = squarings(n, z2, &scale);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			z[i * n + j] = x[j * n + i] * scale;
			E[i * n + j] = g[i * n + j] * scale;
		}
	pair_lanes(n, s, w, 1, 0, &Q);
	memcpy(dX, Q, sizeof(vec) * nn);
}
