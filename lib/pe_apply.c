/*
 * pe_apply.c - rotate query/key rows by their tokens' block-diagonal R,
 * and the backward pass (see pe.h).  Serial: the engine calls these from
 * its own parallel loops over images and heads.
 *
 * One image's rows read each R once, so a lone image is bound by memory
 * (a 64 x 64 block is 16 KB per token); a batch of images applies each
 * block to every image while it sits in L1.  Blocks up to 64 wide run in
 * kernels whose width is a compile-time constant, so the accumulators live
 * in registers.
 */
#pragma GCC optimize("fp-contract=fast", "vect-cost-model=dynamic")
#include <string.h>

#include "pe.h"

#define KMAX	64	/* widest block of the register kernels */

typedef float v16 __attribute__((vector_size(64), aligned(4)));

/* Vector kernels for B = 16 NV (NV = 1, 2, 4): accumulators in registers. */
#define LD(p)		(*(const v16 *)(p))
#define ST(p, v)	(*(v16 *)(p) = (v))

/* out_i = M^T in_i for the images, M[B][B] row-major: two images at a
 * time, so that each row of M loaded serves both. */
static inline __attribute__((always_inline)) void
mtv_vec(int NV, const float *M, int nimg, const float *in, int64_t is, float *out, int64_t os)
{
	const int B = 16 * NV;
	int i = 0;

	for (; i + 1 < nimg; i += 2) {
		const float *p = in + i * is, *p2 = p + is;
		v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
		for (int k = 0; k < B; k++) {
			const float *m = M + k * B;
			float u = p[k], w = p2[k];
			v16 m0 = LD(m);
			a0 += u * m0; b0 += w * m0;
			if (NV > 1) { v16 m1 = LD(m + 16); a1 += u * m1; b1 += w * m1; }
			if (NV > 2) {
				v16 m2 = LD(m + 32), m3 = LD(m + 48);
				a2 += u * m2; b2 += w * m2; a3 += u * m3; b3 += w * m3;
			}
		}
		float *o = out + i * os, *o2 = o + os;
		ST(o, a0); ST(o2, b0);
		if (NV > 1) { ST(o + 16, a1); ST(o2 + 16, b1); }
		if (NV > 2) { ST(o + 32, a2); ST(o2 + 32, b2); ST(o + 48, a3); ST(o2 + 48, b3); }
	}
	for (; i < nimg; i++) {
		const float *p = in + i * is;
		v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
		for (int k = 0; k < B; k++) {
			const float *m = M + k * B;
			float u = p[k];
			a0 += u * LD(m);
			if (NV > 1) a1 += u * LD(m + 16);
			if (NV > 2) { a2 += u * LD(m + 32); a3 += u * LD(m + 48); }
		}
		float *o = out + i * os;
		ST(o, a0);
		if (NV > 1) ST(o + 16, a1);
		if (NV > 2) { ST(o + 32, a2); ST(o + 48, a3); }
	}
}

/* G += sum_i dy_i x_i^T four rows at a time, then dx_i = Q^T dy_i (in
 * that order: dx may be dy). */
static inline __attribute__((always_inline)) void
bwd_vec(int NV, const float *Q, int nimg, const float *x, int64_t xs,
    const float *dy, int64_t dys, float *dx, int64_t dxs, float *G)
{
	const int B = 16 * NV;

	for (int r = 0; r < B; r += 4) {
		v16 g[4][4];
		for (int u = 0; u < 4; u++)
			for (int v = 0; v < NV; v++)
				g[u][v] = LD(G + (r + u) * B + 16 * v);
		for (int i = 0; i < nimg; i++) {
			const float *xi = x + i * xs, *di = dy + i * dys + r;
			v16 x0 = LD(xi), x1 = NV > 1 ? LD(xi + 16) : x0;
			v16 x2 = NV > 2 ? LD(xi + 32) : x0, x3 = NV > 2 ? LD(xi + 48) : x0;
#define ROW(u) { float d = di[u]; g[u][0] += d * x0; if (NV > 1) g[u][1] += d * x1; \
		if (NV > 2) { g[u][2] += d * x2; g[u][3] += d * x3; } }
			ROW(0) ROW(1) ROW(2) ROW(3)
#undef ROW
		}
		for (int u = 0; u < 4; u++)
			for (int v = 0; v < NV; v++)
				ST(G + (r + u) * B + 16 * v, g[u][v]);
	}
	mtv_vec(NV, Q, nimg, dy, dys, dx, dxs);
}

/* y_i = Q x_i for the images of one token and block: Q^T is QT[B][B]. */
static inline __attribute__((always_inline)) void
fwd_block(int B, const float *QT, int nimg, const float *x, int64_t xs,
    float *y, int64_t ys)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs;
		float acc[KMAX] = { 0 };
		for (int k = 0; k < B; k++) {
			float xk = xi[k];
			for (int r = 0; r < B; r++)
				acc[r] += xk * QT[k * B + r];
		}
		memcpy(y + i * ys, acc, sizeof(float) * B);
	}
}

/* dx_i = Q^T dy_i and G += sum_i dy_i x_i^T for one token and block. */
static inline __attribute__((always_inline)) void
bwd_block(int B, const float *Q, int nimg, const float *x, int64_t xs,
    const float *dy, int64_t dys, float *dx, int64_t dxs, float *G)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs, *di = dy + i * dys;
		float acc[KMAX] = { 0 };
		for (int r = 0; r < B; r++) {
			float d = di[r];
			for (int c = 0; c < B; c++) {
				acc[c] += d * Q[r * B + c];
				G[r * B + c] += d * xi[c];
			}
		}
		memcpy(dx + i * dxs, acc, sizeof(float) * B);
	}
}

/* The same for any width, with a row scratch (blocks wider than KMAX). */
static void
fwd_wide(int B, const float *Q, int nimg, const float *x, int64_t xs, float *y,
    int64_t ys, float *tmp)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs;
		for (int r = 0; r < B; r++) {
			float s = 0;
#pragma omp simd reduction(+:s)
			for (int k = 0; k < B; k++)
				s += Q[(int64_t)r * B + k] * xi[k];
			tmp[r] = s;
		}
		memcpy(y + i * ys, tmp, sizeof(float) * B);
	}
}

static void
bwd_wide(int B, const float *Q, int nimg, const float *x, int64_t xs,
    const float *dy, int64_t dys, float *dx, int64_t dxs, float *G, float *tmp)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs, *di = dy + i * dys;
		memset(tmp, 0, sizeof(float) * B);
		for (int r = 0; r < B; r++)
			for (int c = 0; c < B; c++) {
				tmp[c] += di[r] * Q[(int64_t)r * B + c];
				G[(int64_t)r * B + c] += di[r] * xi[c];
			}
		memcpy(dx + i * dxs, tmp, sizeof(float) * B);
	}
}

void
pe_apply_batch(const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, float *y, int64_t ys, int ldy)
{
	int b = pe->block, nb = pe->nblock;
	float QT[KMAX * KMAX], tmp[PE_MAXDIM];

	for (int t = 0; t < T; t++) {
		const float *xt = x + (int64_t)t * ldx, *r = R + t * pe->rsize;
		float *yt = y + (int64_t)t * ldy;

		if (pe->identity) {
			for (int i = 0; i < nimg; i++)
				if (yt + i * ys != xt + i * xs)
					memmove(yt + i * ys, xt + i * xs, sizeof(float) * pe->head_dim);
			continue;
		}
		for (int j = 0; j < nb; j++) {
			const float *q = r + (int64_t)j * b * b, *xb = xt + j * b;
			float *yb = yt + j * b;
			if (b > KMAX) {
				fwd_wide(b, q, nimg, xb, xs, yb, ys, tmp);
				continue;
			}
			for (int k = 0; k < b; k++)
				for (int c = 0; c < b; c++)
					QT[k * b + c] = q[c * b + k];
			switch (b) {
			case 2:  fwd_block(2, QT, nimg, xb, xs, yb, ys); break;
			case 4:  fwd_block(4, QT, nimg, xb, xs, yb, ys); break;
			case 8:  fwd_block(8, QT, nimg, xb, xs, yb, ys); break;
			case 16: mtv_vec(1, QT, nimg, xb, xs, yb, ys); break;
			case 32: mtv_vec(2, QT, nimg, xb, xs, yb, ys); break;
			case 64: mtv_vec(4, QT, nimg, xb, xs, yb, ys); break;
			default: fwd_block(b, QT, nimg, xb, xs, yb, ys); break;
			}
		}
	}
}

void
pe_apply_batch_backward(const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, const float *dy, int64_t dys, int lddy,
    float *dx, int64_t dxs, int lddx, float *dR)
{
	int b = pe->block, nb = pe->nblock;
	float tmp[PE_MAXDIM];

	for (int t = 0; t < T; t++) {
		const float *xt = x + (int64_t)t * ldx, *r = R + t * pe->rsize;
		const float *dyt = dy + (int64_t)t * lddy;
		float *dxt = dx + (int64_t)t * lddx, *g = dR + t * pe->rsize;

		for (int j = 0; j < nb; j++) {
			const float *q = r + (int64_t)j * b * b, *xb = xt + j * b, *db = dyt + j * b;
			float *dxb = dxt + j * b, *gb = g + (int64_t)j * b * b;
			switch (b) {
			case 1:  bwd_block(1, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 2:  bwd_block(2, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 4:  bwd_block(4, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 8:  bwd_block(8, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 16: bwd_vec(1, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 32: bwd_vec(2, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 64: bwd_vec(4, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			default:
				if (b <= KMAX)
					bwd_block(b, q, nimg, xb, xs, db, dys, dxb, dxs, gb);
				else
					bwd_wide(b, q, nimg, xb, xs, db, dys, dxb, dxs, gb, tmp);
				break;
			}
		}
	}
}

void
pe_apply(const struct pe *pe, int T, const float *R, const float *x, int ldx,
    float *y, int ldy)
{
	pe_apply_batch(pe, 1, T, R, x, 0, ldx, y, 0, ldy);
}

void
pe_apply_backward(const struct pe *pe, int T, const float *R, const float *x,
    int ldx, const float *dy, int lddy, float *dx, int lddx, float *dR)
{
	pe_apply_batch_backward(pe, 1, T, R, x, 0, ldx, dy, 0, lddy, dx, 0, lddx, dR);
}
