/*
 * layernorm.c - LayerNorm over the last dimension; row statistics in
 * float, two passes (the mean, then the centred sum of squares: no
 * cancellation), vectorized across the row.
 */
#include <math.h>

#include "nn.h"

void
layernorm_forward(float *y /* [N][D] */, float *mean /* [N] */,
    float *rstd /* [N] */, const float *x /* [N][D] */,
    const float *g /* [D] */, const float *b /* [D] */, int N, int D)
{
	#pragma omp parallel for
	for (int n = 0; n < N; n++) {
		const float *xr = x + (size_t)n * D;
		float *yr = y + (size_t)n * D;
		float s = 0, ss = 0;
		#pragma omp simd reduction(+:s)
		for (int i = 0; i < D; i++)
			s += xr[i];
		float m = s / D;
		#pragma omp simd reduction(+:ss)
		for (int i = 0; i < D; i++)
			ss += (xr[i] - m) * (xr[i] - m);
		float r = 1.0f / sqrtf(ss / D + LN_EPS);
		#pragma omp simd
		for (int i = 0; i < D; i++)
			yr[i] = (xr[i] - m) * r * g[i] + b[i];
		mean[n] = m;
		rstd[n] = r;
	}
}

void
layernorm_backward(float *dx /* [N][D] += */, float *dg /* [D] += */,
    float *db /* [D] += */, const float *dy /* [N][D] */,
    const float *x /* [N][D] */, const float *mean /* [N] */,
    const float *rstd /* [N] */, const float *g /* [D] */, int N, int D)
{
	#pragma omp parallel for
	for (int n = 0; n < N; n++) {
		const float *xr = x + (size_t)n * D, *dyr = dy + (size_t)n * D;
		float *dxr = dx + (size_t)n * D;
		float m = mean[n], r = rstd[n];
		float s1 = 0, s2 = 0;	/* mean of dy*g, and of dy*g*xhat */
		#pragma omp simd reduction(+:s1, s2)
		for (int i = 0; i < D; i++) {
			float xh = (xr[i] - m) * r, d = dyr[i] * g[i];
			s1 += d;
			s2 += d * xh;
		}
		s1 /= D;
		s2 /= D;
		#pragma omp simd
		for (int i = 0; i < D; i++) {
			float xh = (xr[i] - m) * r;
			dxr[i] += (dyr[i] * g[i] - s1 - xh * s2) * r;
		}
	}
	if (dg != NULL)
		layernorm_params(dg, db, dy, x, mean, rstd, N, D);
}

void
layernorm_params(float *dg /* [D] += */, float *db /* [D] += */,
    const float *dy /* [N][D] */, const float *x /* [N][D] */,
    const float *mean /* [N] */, const float *rstd /* [N] */, int N, int D)
{
	/* column strips, rows in order: the same bits for any thread count
	 * (col_strip) */
	int sw = col_strip(D);
	#pragma omp parallel for schedule(static)
	for (int i0 = 0; i0 < D; i0 += sw) {
		int w = D - i0 < sw ? D - i0 : sw;
		float sg[STRIP_MAX] = { 0 }, sb[STRIP_MAX] = { 0 };
		for (int n = 0; n < N; n++) {
			const float *xr = x + (size_t)n * D + i0;
			const float *dyr = dy + (size_t)n * D + i0;
			float m = mean[n], r = rstd[n];
			#pragma omp simd
			for (int i = 0; i < w; i++) {
				sg[i] += dyr[i] * (xr[i] - m) * r;
				sb[i] += dyr[i];
			}
		}
		for (int i = 0; i < w; i++) {
			dg[i0 + i] += sg[i];
			db[i0 + i] += sb[i];
		}
	}
}
