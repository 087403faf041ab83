/*
 * expm.c - exp of skew-symmetric blocks and its adjoint Frechet
 * derivative: scaling and squaring around the Bader-Blanes-Casas
 * degree-18 Taylor polynomial (see expm.h).
 *
 * The blocks are small (n <= head_dim, typically 8 .. 64) and there are
 * thousands of them per call, each done by one thread, so the products
 * run in the register-blocked kernels below rather than in BLAS (a BLAS
 * call inside the callers' OpenMP loops would oversubscribe the cores, and
 * for n = 64 these kernels are as fast).
 */
/* Fused multiply-add in the kernels; vectorize the short loops of unknown
 * trip count that -O2's cheap cost model leaves scalar. */
#pragma GCC optimize("fp-contract=fast", "vect-cost-model=dynamic")
#include <math.h>
#include <string.h>

#include "expm.h"

typedef double v8d __attribute__((vector_size(64), aligned(8)));

/* The T18 coefficients: B_i = sum_j c[i][j] {I, Z, Z^2, Z^3, Z^6}[j],
 * A9 = B0 B4 + B3, T18(Z) = B1 + (B2 + A9) A9 (Bader, Blanes, Casas 2019,
 * double precision table). */
static const double c18[5][5] = {
	{ 0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,
	  -8.92138498045729985177e-04, 0. },
	{ 0., 3.97849749499645077844e-01, 1.36783778460411720168e+00,
	  4.98289622525382669416e-01, -6.37898194594723280150e-04 },
	{ -1.09676396052962061844e+01, 1.68015813878906206114e+00,
	  5.71779846478865511061e-02, -6.98210122488052056106e-03,
	  3.34975017086070470649e-05 },
	{ -9.04316832390810593223e-02, -6.76404519071381882256e-02,
	  6.75961301770459654925e-02, 2.95552570429315521194e-02,
	  -1.39180257516060693404e-05 },
	{ 0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
	  -1.40086798182036094347e-05 },
};

/* C[8][16] (+)= A[8][n] B[n][16], rows at stride n. */
static inline void
kern8x16(int n, const double *A, const double *B, double *C, int acc)
{
	v8d c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
	v8d c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
	v8d c60 = {0}, c61 = {0}, c70 = {0}, c71 = {0};

	for (int k = 0; k < n; k++, A++, B += n) {
		v8d b0 = *(const v8d *)B, b1 = *(const v8d *)(B + 8);
#define ROW(r) { double x = A[r * n]; c##r##0 += x * b0; c##r##1 += x * b1; }
		ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
#undef ROW
	}
#define OUT(r) { v8d *o0 = (v8d *)(C + r * n), *o1 = (v8d *)(C + r * n + 8); \
	if (acc) { *o0 += c##r##0; *o1 += c##r##1; } \
	else { *o0 = c##r##0; *o1 = c##r##1; } }
	OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5) OUT(6) OUT(7)
#undef OUT
}

/* C[8][8] (+)= A[8][n] B[n][8], rows at stride n. */
static inline void
kern8x8(int n, const double *A, const double *B, double *C, int acc)
{
	v8d c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0};
	v8d c6 = {0}, c7 = {0};

	for (int k = 0; k < n; k++, A++, B += n) {
		v8d b = *(const v8d *)B;
#define ROW(r) c##r += A[r * n] * b;
		ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
#undef ROW
	}
#define OUT(r) { v8d *o = (v8d *)(C + r * n); if (acc) *o += c##r; else *o = c##r; }
	OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5) OUT(6) OUT(7)
#undef OUT
}

/*
 * C (+)= A B for n x n row-major matrices.  half: only the blocks that
 * meet the upper triangle (i <= j); the caller mirrors the rest.
 */
static void
mm(int n, const double *A, const double *B, double *C, int acc, int half)
{
	if (n % 8 == 0) {
		int w = n % 16 == 0 ? 16 : 8;
		for (int j0 = 0; j0 < n; j0 += w) {
			int iend = half && j0 + w < n ? j0 + w : n;
			for (int i0 = 0; i0 < iend; i0 += 8) {
				if (w == 16)
					kern8x16(n, A + i0 * n, B + j0, C + i0 * n + j0, acc);
				else
					kern8x8(n, A + i0 * n, B + j0, C + i0 * n + j0, acc);
			}
		}
		return;
	}
	for (int i = 0; i < n; i++) {
		double *c = C + i * n;
		if (!acc)
			memset(c, 0, sizeof *c * n);
		for (int k = 0; k < n; k++) {
			double a = A[i * n + k];
			const double *b = B + k * n;
			for (int j = 0; j < n; j++)
				c[j] += a * b[j];
		}
	}
}

/* C = A B where the product is known symmetric (sign 1) or skew (-1). */
static void
mm_sym(int n, const double *A, const double *B, double *C, double sign)
{
	mm(n, A, B, C, 0, 1);
	for (int i = 0; i < n; i++) {
		if (sign < 0)
			C[i * n + i] = 0;
		for (int j = 0; j < i; j++)
			C[i * n + j] = sign * C[j * n + i];
	}
}

void
expm_mul(int n, const double *A, const double *B, double *C, int acc)
{
	mm(n, A, B, C, acc, 0);
}

static int64_t
slot(int n)
{
	return ((int64_t)n * n + 7) / 8 * 8;
}

int64_t
expm_scratch(int n)
{
	return 24 * slot(n) + 2 * (((int64_t)n + 7) / 8 * 8);
}

/* Estimate ||X||_2 by power iteration on X^T X (a lower bound that is
 * sharp after a few steps), scaled up 10% and capped by ||X||_1. */
static double
norm2_est(int n, const double *X, double *v, double *w)
{
	double norm1 = 0, r = 0;

	for (int j = 0; j < n; j++)	/* column sums, row by row */
		v[j] = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			v[j] += fabs(X[i * n + j]);
	for (int j = 0; j < n; j++)
		norm1 = fmax(norm1, v[j]);
	if (norm1 == 0)
		return 0;
	for (int i = 0; i < n; i++)
		v[i] = 1 + (double)((i * 7919) % 13) / 13;
	for (int it = 0; it < 6; it++) {
		double vv = 0, ww = 0;
		/* w = X v = -X^T v, row by row so that it vectorizes */
		for (int i = 0; i < n; i++)
			w[i] = 0;
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++)
				w[i] -= v[j] * X[j * n + i];
		for (int i = 0; i < n; i++) {
			ww += w[i] * w[i];
			vv += v[i] * v[i];
		}
		r = fmax(r, sqrt(ww / vv));
		if (ww == 0)
			break;
		for (int j = 0; j < n; j++)	/* v = X^T w */
			v[j] = 0;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				v[j] += w[i] * X[i * n + j];
	}
	return fmin(1.1 * r, norm1);
}

static int
squarings(int n, const double *X, double *ws)
{
	double *v = ws + 24 * slot(n), *w = v + (n + 7) / 8 * 8;
	double rho = norm2_est(n, X, v, w);

	return rho > EXPM_THETA ? (int)ceil(log2(rho / EXPM_THETA)) : 0;
}

int
expm_squarings(int n, const double *X, double *ws)
{
	return squarings(n, X, ws);
}

/* out[i] = sum_j c18[i][j] m[j] over {I, Z, Z2, Z3, Z6} for the five B_i
 * in one pass (or their E parts, with no identity term when eye is 0). */
static void
combine(int n, double *const m[5], double *const out[5], int eye)
{
	int64_t nn = (int64_t)n * n;
	const double *m1 = m[1], *m2 = m[2], *m3 = m[3], *m4 = m[4];
	double *o0 = out[0], *o1 = out[1], *o2 = out[2], *o3 = out[3], *o4 = out[4];

	for (int64_t k = 0; k < nn; k++) {
		double z1 = m1[k], z2 = m2[k], z3 = m3[k], z4 = m4[k];
#define B(i) c18[i][1] * z1 + c18[i][2] * z2 + c18[i][3] * z3 + c18[i][4] * z4
		o0[k] = B(0); o1[k] = B(1); o2[k] = B(2); o3[k] = B(3); o4[k] = B(4);
#undef B
	}
	if (eye)
		for (int i = 0; i < 5; i++)
			for (int d = 0; d < n; d++)
				out[i][d * n + d] += c18[i][0];
}

/*
 * The algorithm on the pair (Z, E) standing for [[Z, E], [0, Z]] with Z
 * skew; E is NULL for the plain exponential.  On return P holds exp(Z)
 * and, with E, Q holds L(Z, E).  Z and E are scaled in place.
 */
static void
expm_pair(int n, int s, double *ws, double **P, double **Q)
{
	int64_t sz = slot(n), nn = (int64_t)n * n;
	double *a[12], *e[12];
	int pair = *Q != NULL;

	for (int k = 0; k < 12; k++) {
		a[k] = ws + k * sz;
		e[k] = ws + (12 + k) * sz;
	}
	/* a[0] = Z, a[1] = Z^2, a[2] = Z^3, a[3] = Z^6; a[4..8] = B0..B4;
	 * a[9] = A9, a[10] scratch, a[11] a squaring buffer. */
	mm_sym(n, a[0], a[0], a[1], 1);
	mm_sym(n, a[1], a[0], a[2], -1);
	mm_sym(n, a[2], a[2], a[3], 1);
	if (pair) {
		mm(n, a[0], e[0], e[1], 0, 0);
		mm(n, e[0], a[0], e[1], 1, 0);
		mm(n, a[1], e[0], e[2], 0, 0);
		mm(n, e[1], a[0], e[2], 1, 0);
		mm(n, a[2], e[2], e[3], 0, 0);
		mm(n, e[2], a[2], e[3], 1, 0);
	}
	double *am[5] = { NULL, a[0], a[1], a[2], a[3] };
	double *em[5] = { NULL, e[0], e[1], e[2], e[3] };
	combine(n, am, a + 4, 1);
	if (pair)
		combine(n, em, e + 4, 0);
	/* A9 = B0 B4 + B3 */
	memcpy(a[9], a[7], sizeof(double) * nn);
	mm(n, a[4], a[8], a[9], 1, 0);
	if (pair) {
		memcpy(e[9], e[7], sizeof(double) * nn);
		mm(n, a[4], e[8], e[9], 1, 0);
		mm(n, e[4], a[8], e[9], 1, 0);
	}
	/* T18 = B1 + (B2 + A9) A9 */
	for (int64_t k = 0; k < nn; k++)
		a[10][k] = a[6][k] + a[9][k];
	double *p = a[11], *q = e[11];
	memcpy(p, a[5], sizeof(double) * nn);
	mm(n, a[10], a[9], p, 1, 0);
	if (pair) {
		for (int64_t k = 0; k < nn; k++)
			e[10][k] = e[6][k] + e[9][k];
		memcpy(q, e[5], sizeof(double) * nn);
		mm(n, a[10], e[9], q, 1, 0);
		mm(n, e[10], a[9], q, 1, 0);
	}
	/* (P, Q)^2 = (P P, P Q + Q P), ping-pong with slots 0 and 1 */
	double *p2 = a[0], *q2 = e[0];
	for (int k = 0; k < s; k++) {
		mm(n, p, p, p2, 0, 0);
		if (pair) {
			mm(n, p, q, q2, 0, 0);
			mm(n, q, p, q2, 1, 0);
			double *t = q; q = q2; q2 = t;
		}
		double *t = p; p = p2; p2 = t;
	}
	*P = p;
	*Q = pair ? q : NULL;
}

static int
is_zero(int64_t nn, const double *X)
{
	for (int64_t k = 0; k < nn; k++)
		if (X[k] != 0)
			return 0;
	return 1;
}

void
expm_skew(int n, const double *X, double *R, double *ws)
{
	int64_t nn = (int64_t)n * n;
	int s = squarings(n, X, ws);
	double scale = ldexp(1.0, -s), *P, *Q = NULL;

	if (is_zero(nn, X)) {
		for (int64_t k = 0; k < nn; k++)
			R[k] = k % (n + 1) == 0;
		return;
	}
	for (int64_t k = 0; k < nn; k++)
		ws[k] = X[k] * scale;
	expm_pair(n, s, ws, &P, &Q);
	memcpy(R, P, sizeof(double) * nn);
}

void
expm_skew_adjoint(int n, const double *X, const double *G, double *dX,
    double *R, double *ws)
{
	int64_t nn = (int64_t)n * n, sz = slot(n);
	int s = squarings(n, X, ws);
	double scale = ldexp(1.0, -s), *P, *Q;

	if (is_zero(nn, X)) {		/* L(0, G) = G */
		memcpy(dX, G, sizeof(double) * nn);
		if (R)
			for (int64_t k = 0; k < nn; k++)
				R[k] = k % (n + 1) == 0;
		return;
	}
	/* [[X^T, G], [0, X^T]] / 2^s, X^T = -X */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			ws[i * n + j] = X[j * n + i] * scale;
			ws[12 * sz + i * n + j] = G[i * n + j] * scale;
		}
	Q = ws + 12 * sz;
	expm_pair(n, s, ws, &P, &Q);
	memcpy(dX, Q, sizeof(double) * nn);
	if (R)		/* exp(X) = exp(X^T)^T */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				R[i * n + j] = P[j * n + i];
}
