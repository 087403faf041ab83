/*
 * pe_apply.c - rotate query/key rows by their tokens' block-diagonal R,
 * and the backward pass (see pe.h).  Serial: the engine calls these from
 * its own parallel loops over images and heads.
 */
#include <string.h>

#include "pe.h"

void
pe_apply(const struct pe *pe, int T, const float *R, const float *x, int ldx,
    float *y, int ldy)
{
	int b = pe->block, nb = pe->nblock, d = pe->head_dim;

	for (int t = 0; t < T; t++) {
		const float *xt = x + (int64_t)t * ldx, *r = R + t * pe->rsize;
		float *yt = y + (int64_t)t * ldy;

		if (pe->identity) {
			if (yt != xt)
				memmove(yt, xt, sizeof *yt * d);
		} else if (b == 2) {
			for (int j = 0; j < nb; j++) {
				float x0 = xt[2 * j], x1 = xt[2 * j + 1];
				const float *q = r + 4 * j;
				yt[2 * j] = q[0] * x0 + q[1] * x1;
				yt[2 * j + 1] = q[2] * x0 + q[3] * x1;
			}
		} else {
			float tmp[PE_MAXDIM];
			for (int j = 0; j < nb; j++) {
				const float *xb = xt + j * b, *q = r + (int64_t)j * b * b;
				for (int i = 0; i < b; i++) {
					float s = 0;
#pragma omp simd reduction(+:s)
					for (int k = 0; k < b; k++)
						s += q[i * b + k] * xb[k];
					tmp[j * b + i] = s;
				}
			}
			memcpy(yt, tmp, sizeof *yt * d);
		}
	}
}

void
pe_apply_backward(const struct pe *pe, int T, const float *R, const float *x,
    int ldx, const float *dy, int lddy, float *dx, int lddx, float *dR)
{
	int b = pe->block, nb = pe->nblock, d = pe->head_dim;

	for (int t = 0; t < T; t++) {
		const float *xt = x + (int64_t)t * ldx, *r = R + t * pe->rsize;
		const float *dyt = dy + (int64_t)t * lddy;
		float *dxt = dx + (int64_t)t * lddx, *g = dR + t * pe->rsize;

		if (pe->identity) {	/* 1 x 1 blocks of 1 */
			for (int k = 0; k < d; k++)
				g[k] += dyt[k] * xt[k];
			if (dxt != dyt)
				memmove(dxt, dyt, sizeof *dxt * d);
		} else if (b == 2) {
			for (int j = 0; j < nb; j++) {
				float x0 = xt[2 * j], x1 = xt[2 * j + 1];
				float d0 = dyt[2 * j], d1 = dyt[2 * j + 1];
				const float *q = r + 4 * j;
				float *gq = g + 4 * j;
				gq[0] += d0 * x0; gq[1] += d0 * x1;
				gq[2] += d1 * x0; gq[3] += d1 * x1;
				dxt[2 * j] = q[0] * d0 + q[2] * d1;
				dxt[2 * j + 1] = q[1] * d0 + q[3] * d1;
			}
		} else {
			float tmp[PE_MAXDIM];
			for (int j = 0; j < nb; j++) {
				const float *xb = xt + j * b, *db = dyt + j * b;
				const float *q = r + (int64_t)j * b * b;
				float *gq = g + (int64_t)j * b * b, *o = tmp + j * b;
				for (int k = 0; k < b; k++)
					o[k] = 0;
				for (int i = 0; i < b; i++) {
					float di = db[i];
					for (int k = 0; k < b; k++) {
						o[k] += di * q[i * b + k];
						gq[i * b + k] += di * xb[k];
					}
				}
			}
			memcpy(dxt, tmp, sizeof *dxt * d);
		}
	}
}
