/*
 * expm_impl.h - the algorithm of expm.h, written once for a scalar type:
 * expm.c includes it with REAL double, expm_f32.c with REAL float (where
 * a 64-byte vector holds 16 lanes, so the same kernels do twice the work
 * per instruction).  Before including, define REAL, VL (lanes of a 64-byte
 * vector), VEC and HVEC (arch.h's vector of VL REALs and its
 * half), HALF (1 when a 32-byte half vector kernel is wanted for n a
 * multiple of 8 but not of VL), THETA (the scaled norm bound, expm.h) and
 * NAME(x) (the public name of x).
 */
#include <math.h>
#include <string.h>

#include "arch.h"
#include "expm_t18.h"

typedef VEC vec;		/* VL REALs: 64 bytes (arch.h) */
typedef HVEC hvec;		/* half of one */

static const REAL c18[5][5] = EXPM_T18;

/* C[8][2 VL] (+)= A[8][n] B[n][2 VL], rows at stride n. */
ARCH_TILE_FITS(8 * 2 + 2, "kern_2v");	/* the accumulators and a row of B */
static inline void
kern_2v(int n, const REAL *A, const REAL *B, REAL *C, int acc)
{
	vec c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
	vec c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
	vec c60 = {0}, c61 = {0}, c70 = {0}, c71 = {0};

	for (int k = 0; k < n; k++, A++, B += n) {
		vec b0 = *(const vec *)B, b1 = *(const vec *)(B + VL);
#define ROW(r) { REAL x = A[r * n]; c##r##0 += x * b0; c##r##1 += x * b1; }
		ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7)
#undef ROW
	}
#define OUT(r) { vec *o0 = (vec *)(C + r * n), *o1 = (vec *)(C + r * n + VL); \
	if (acc) { *o0 += c##r##0; *o1 += c##r##1; } \
	else { *o0 = c##r##0; *o1 = c##r##1; } }
	OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5) OUT(6) OUT(7)
#undef OUT
}

/* C[8][w] (+)= A[8][n] B[n][w] with a w-lane vector type V. */
#define KERN_1V(name, V)						\
static inline void							\
name(int n, const REAL *A, const REAL *B, REAL *C, int acc)		\
{									\
	V c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0};	\
	V c6 = {0}, c7 = {0};						\
									\
	for (int k = 0; k < n; k++, A++, B += n) {			\
		V b = *(const V *)B;					\
		c0 += A[0] * b; c1 += A[n] * b; c2 += A[2 * n] * b;	\
		c3 += A[3 * n] * b; c4 += A[4 * n] * b;			\
		c5 += A[5 * n] * b; c6 += A[6 * n] * b;			\
		c7 += A[7 * n] * b;					\
	}								\
	V *o[8];							\
	for (int r = 0; r < 8; r++)					\
		o[r] = (V *)(C + r * n);				\
	if (acc) {							\
		*o[0] += c0; *o[1] += c1; *o[2] += c2; *o[3] += c3;	\
		*o[4] += c4; *o[5] += c5; *o[6] += c6; *o[7] += c7;	\
	} else {							\
		*o[0] = c0; *o[1] = c1; *o[2] = c2; *o[3] = c3;		\
		*o[4] = c4; *o[5] = c5; *o[6] = c6; *o[7] = c7;		\
	}								\
}
KERN_1V(kern_1v, vec)
/* Where 64-byte tiles would spill (AVX2: sixteen 32-byte registers), every
 * product runs on half vectors: 8 rows of one, as kern_h. */
#define SMALL_REGS	(ARCH_VREGS_HERE < 8 * 2 + 2)
#if HALF || SMALL_REGS
KERN_1V(kern_h, hvec)
#endif
#undef KERN_1V

/*
 * C (+)= A B for n x n row-major matrices: tiles of 8 rows by the widest
 * vector width that divides n.  half: only the tiles that meet the upper
 * triangle (i <= j); the caller mirrors the rest.
 */
static void
mm(int n, const REAL *A, const REAL *B, REAL *C, int acc, int half)
{
	int w = SMALL_REGS ? (n % 8 == 0 ? VL / 2 : 0) :	/* 8 rows a tile */
	    n % (2 * VL) == 0 ? 2 * VL : n % VL == 0 ? VL :
	    HALF && n % 8 == 0 ? 8 : 0;

	if (w != 0) {
		for (int j0 = 0; j0 < n; j0 += w) {
			int iend = half && j0 + w < n ? j0 + w : n;
			for (int i0 = 0; i0 < iend; i0 += 8) {
				const REAL *a = A + i0 * n, *b = B + j0;
				REAL *c = C + i0 * n + j0;
				if (w == 2 * VL)
					kern_2v(n, a, b, c, acc);
				else if (w == VL)
					kern_1v(n, a, b, c, acc);
#if HALF || SMALL_REGS
				else
					kern_h(n, a, b, c, acc);
#endif
			}
		}
		return;
	}
	for (int i = 0; i < n; i++) {
		REAL *c = C + i * n;
		if (!acc)
			memset(c, 0, sizeof *c * n);
		for (int k = 0; k < n; k++) {
			REAL a = A[i * n + k];
			const REAL *b = B + k * n;
			for (int j = 0; j < n; j++)
				c[j] += a * b[j];
		}
	}
}

/* C = A B where the product is known symmetric (sign 1) or skew (-1). */
static void
mm_sym(int n, const REAL *A, const REAL *B, REAL *C, REAL sign)
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
NAME(expm_mul)(int n, const REAL *A, const REAL *B, REAL *C, int acc)
{
	mm(n, A, B, C, acc, 0);
}

/* Elements of one n x n slot, rounded up to whole 64-byte lines. */
static int64_t
slot(int n)
{
	return ((int64_t)n * n + VL - 1) / VL * VL;
}

int64_t
NAME(expm_scratch)(int n)
{
	return 10 * slot(n) + 2 * (((int64_t)n + VL - 1) / VL * VL);
}

/* y = X^T x, y[j] = sum_i x[i] X[i][j], for X[n][n]: whole vectors of
 * columns with four rows per step (four independent sums), then what is
 * left of the columns one by one. */
#define XT_COLUMNS(V, W)						\
	for (; j0 + W <= n; j0 += W) {					\
		V a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};		\
		int i = 0;						\
		for (; i + 4 <= n; i += 4) {				\
			const REAL *r = X + (int64_t)i * n + j0;	\
			a0 += x[i] * *(const V *)r;			\
			a1 += x[i + 1] * *(const V *)(r + n);		\
			a2 += x[i + 2] * *(const V *)(r + 2 * n);	\
			a3 += x[i + 3] * *(const V *)(r + 3 * n);	\
		}							\
		for (; i < n; i++)					\
			a0 += x[i] * *(const V *)(X + (int64_t)i * n + j0); \
		*(V *)(y + j0) = (a0 + a1) + (a2 + a3);			\
	}
static void
xt_times(int n, const REAL *X, const REAL *x, REAL *y)
{
	int j0 = 0;

	XT_COLUMNS(vec, VL)
#if HALF
	XT_COLUMNS(hvec, 8)
#endif
	for (; j0 < n; j0++) {
		REAL a = 0;
		for (int i = 0; i < n; i++)
			a += x[i] * X[(int64_t)i * n + j0];
		y[j0] = a;
	}
}
#undef XT_COLUMNS

/* sum of x[i]^2, in whole vectors (GCC keeps a float sum scalar) */
static double
sumsq(int64_t n, const REAL *x)
{
	vec a = {0};
	REAL t = 0;
	int64_t i = 0;

	for (; i + VL <= n; i += VL) {
		vec u = *(const vec *)(x + i);
		a += u * u;
	}
	for (; i < n; i++)
		t += x[i] * x[i];
	for (int k = 0; k < VL; k++)
		t += a[k];
	return t;
}

/* Estimate ||X||_2 by power iteration on X^T X (a lower bound that is
 * sharp after a few steps), scaled up 10% and capped by ||X||_F.  For
 * skew X, X v = -X^T v: both products are X^T times a vector, and the
 * sign flip each step leaves the norms alone. */
static double
norm2_est(int n, const REAL *X, REAL *v, REAL *w)
{
	double normf = sqrt(sumsq((int64_t)n * n, X)), r = 0;

	if (normf == 0)
		return 0;
	for (int i = 0; i < n; i++)
		v[i] = 1 + (REAL)((i * 7919) % 13) / 13;
	for (int it = 0; it < 6; it++) {
		xt_times(n, X, v, w);
		double ww = sumsq(n, w), vv = sumsq(n, v);
		r = fmax(r, sqrt(ww / vv));
		if (ww == 0)
			break;
		/* w to unit length: v would grow by ||X||^2 a step and
		 * overflow float within six (||X|| ~ 100 at LieRE's init) */
		REAL u = (REAL)(1 / sqrt(ww));
		for (int i = 0; i < n; i++)
			w[i] *= u;
		xt_times(n, X, w, v);
	}
	return fmin(1.1 * r, normf);
}

/*
 * Blocks up to SMALL bound the norm by ||X||_2 <= sqrt(||X^2||_F) (X is
 * normal, so ||X^2||_2 = ||X||_2^2), from the X^2 the polynomial needs
 * anyway, which squarings leaves in slot 1: the power iteration's dozen
 * matrix-vector products cost more than these blocks' products (a sixth
 * of liere:8's time with a rotation per token), and the bound is at most
 * (n/2)^(1/4) above the norm.  Larger blocks keep the iteration: there
 * a products is dear and its sharper estimate saves squarings.
 */
#define SMALL	16

static int
squarings(int n, const REAL *X, REAL *ws)
{
	REAL *v = ws + 10 * slot(n), *w = v + (n + VL - 1) / VL * VL;
	double rho;

	if (n <= SMALL) {
		mm_sym(n, X, X, ws + slot(n), 1);
		rho = sqrt(sqrt(sumsq((int64_t)n * n, ws + slot(n))));
	} else {
		rho = norm2_est(n, X, v, w);
	}
	return rho > THETA ? (int)ceil(log2(rho / THETA)) : 0;
}

int
NAME(expm_squarings)(int n, const REAL *X, REAL *ws)
{
	return squarings(n, X, ws);
}

/* out[i] = sum_j c18[i][j] m[j] over {I, Z, Z2, Z3, Z6} for the five B_i
 * in one pass (or their E parts, with no identity term when eye is 0). */
static void
combine(int n, REAL *const m[5], REAL *const out[5], int eye)
{
	int64_t nn = (int64_t)n * n, k = 0;
	const REAL *m1 = m[1], *m2 = m[2], *m3 = m[3], *m4 = m[4];
	REAL *o0 = out[0], *o1 = out[1], *o2 = out[2], *o3 = out[3], *o4 = out[4];

	/* whole vectors by hand: GCC leaves this loop of nine streams scalar */
#define B(i) c18[i][1] * z1 + c18[i][2] * z2 + c18[i][3] * z3 + c18[i][4] * z4
	for (; k + VL <= nn; k += VL) {
		vec z1 = *(const vec *)(m1 + k), z2 = *(const vec *)(m2 + k);
		vec z3 = *(const vec *)(m3 + k), z4 = *(const vec *)(m4 + k);
		*(vec *)(o0 + k) = B(0); *(vec *)(o1 + k) = B(1);
		*(vec *)(o2 + k) = B(2); *(vec *)(o3 + k) = B(3);
		*(vec *)(o4 + k) = B(4);
	}
	for (; k < nn; k++) {
		REAL z1 = m1[k], z2 = m2[k], z3 = m3[k], z4 = m4[k];
		o0[k] = B(0); o1[k] = B(1); o2[k] = B(2); o3[k] = B(3); o4[k] = B(4);
	}
#undef B
	if (eye)
		for (int i = 0; i < 5; i++)
			for (int d = 0; d < n; d++)
				out[i][d * n + d] += c18[i][0];
}

/*
 * The algorithm on the pair (Z, E) standing for [[Z, E], [0, Z]] with Z
 * skew; E is NULL for the plain exponential.  On return P holds exp(Z)
 * and, with E, Q holds L(Z, E); P NULL with E: exp(Z) is not wanted, and
 * the last squaring leaves it out (one product in 3 s + 14).  Z (slot 0)
 * and E (slot 5) are scaled in place; slot 1 holds Z^2 already for n <=
 * SMALL (from squarings, scaled).  Five slots a side, as in
 * expm_lanes.c: each result over a term it has used up.
 */
static void
expm_pair(int n, int s, REAL *ws, REAL **P, REAL **Q)
{
	int64_t sz = slot(n), nn = (int64_t)n * n;
	REAL *a[5], *e[5];
	int pair = *Q != NULL;

	for (int k = 0; k < 5; k++) {
		a[k] = ws + k * sz;
		e[k] = ws + (5 + k) * sz;
	}
	/* a[0] = Z, a[1] = Z^2, a[2] = Z^3, a[3] = Z^6 */
	if (n > SMALL)
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
	/* B0 .. B3 over Z, Z^2, Z^3, Z^6 (read before written), B4 in slot 4 */
	REAL *am[5] = { NULL, a[0], a[1], a[2], a[3] };
	REAL *em[5] = { NULL, e[0], e[1], e[2], e[3] };
	combine(n, am, a, 1);
	if (pair)
		combine(n, em, e, 0);
	/* A9 = B3 + B0 B4 over B3, B2 + A9 over B2, T18 = B1 + (B2 + A9) A9
	 * over B1 */
	mm(n, a[0], a[4], a[3], 1, 0);
	if (pair) {
		mm(n, a[0], e[4], e[3], 1, 0);
		mm(n, e[0], a[4], e[3], 1, 0);
	}
	for (int64_t k = 0; k < nn; k++)
		a[2][k] += a[3][k];
	REAL *p = a[1], *q = e[1];
	mm(n, a[2], a[3], p, 1, 0);
	if (pair) {
		for (int64_t k = 0; k < nn; k++)
			e[2][k] += e[3][k];
		mm(n, a[2], e[3], q, 1, 0);
		mm(n, e[2], a[3], q, 1, 0);
	}
	/* (P, Q)^2 = (P P, P Q + Q P), ping-pong with slots 0 (B0 used up) */
	REAL *p2 = a[0], *q2 = e[0];
	for (int k = 0; k < s; k++) {
		if (P != NULL || k + 1 < s)
			mm(n, p, p, p2, 0, 0);
		if (pair) {
			mm(n, p, q, q2, 0, 0);
			mm(n, q, p, q2, 1, 0);
			REAL *t = q; q = q2; q2 = t;
		}
		REAL *t = p; p = p2; p2 = t;
	}
	if (P != NULL)
		*P = p;
	*Q = pair ? q : NULL;
}

/* X^2 in slot 1 (squarings', n <= SMALL) to Z^2 = (scale X)^2: a power
 * of two, so the same bits as squaring Z. */
static void
scale_square(int n, REAL *ws, REAL scale)
{
	if (n > SMALL)
		return;
	REAL *z2 = ws + slot(n);
	for (int64_t k = 0; k < (int64_t)n * n; k++)
		z2[k] *= scale * scale;
}

static int
is_zero(int64_t nn, const REAL *X)
{
	for (int64_t k = 0; k < nn; k++)
		if (X[k] != 0)
			return 0;
	return 1;
}

void
NAME(expm_skew)(int n, const REAL *X, REAL *R, REAL *ws)
{
	int64_t nn = (int64_t)n * n;
	int s = squarings(n, X, ws);
	REAL scale = (REAL)ldexp(1.0, -s), *P, *Q = NULL;

	if (is_zero(nn, X)) {
		for (int64_t k = 0; k < nn; k++)
			R[k] = k % (n + 1) == 0;
		return;
	}
	for (int64_t k = 0; k < nn; k++)
		ws[k] = X[k] * scale;
	scale_square(n, ws, scale);
	expm_pair(n, s, ws, &P, &Q);
	memcpy(R, P, sizeof(REAL) * nn);
}

void
NAME(expm_skew_adjoint)(int n, const REAL *X, const REAL *G, REAL *dX,
    REAL *R, REAL *ws)
{
	int64_t nn = (int64_t)n * n, sz = slot(n);
	int s = squarings(n, X, ws);
	REAL scale = (REAL)ldexp(1.0, -s), *P, *Q;

	if (is_zero(nn, X)) {		/* L(0, G) = G */
		memcpy(dX, G, sizeof(REAL) * nn);
		if (R)
			for (int64_t k = 0; k < nn; k++)
				R[k] = k % (n + 1) == 0;
		return;
	}
	/* [[X^T, G], [0, X^T]] / 2^s, X^T = -X */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			ws[i * n + j] = X[j * n + i] * scale;
			ws[5 * sz + i * n + j] = G[i * n + j] * scale;
		}
	Q = ws + 5 * sz;
	scale_square(n, ws, scale);	/* (X^T)^2 = X^2, symmetric */
	expm_pair(n, s, ws, R != NULL ? &P : NULL, &Q);
	memcpy(dX, Q, sizeof(REAL) * nn);
	if (R)		/* exp(X) = exp(X^T)^T */
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				R[i * n + j] = P[j * n + i];
}
