/*
 * rotary.c - apply a layer's rotations (lib/pe.h) to the queries and keys
 * of a whole batch, and the backward pass.  pe_apply is serial; the loops
 * here are the parallel ones.
 */
#include <string.h>

#include "nn.h"
#include "pe.h"

/* Rows of one record's rotations inside set s. */
static const float *
rot_rows(const struct rot *r, const float *R, int s, int b)
{
	return pe_R(r->pe, (float *)R, s, r->Tr) +
	    (r->per_record ? (int64_t)b * r->Tn * r->pe->rsize : 0);
}

void
rotary_forward(const struct rot *r, int l, const float *R /* [nset][Tr][rsize] */,
    float *qkr /* [B][T1][2D] */, const float *qkv /* [B][T1][3D] */)
{
	int D = r->H * r->hd, skip = r->T1 - r->Tn;
	#pragma omp parallel for schedule(static)
	for (int bh = 0; bh < r->B * r->H; bh++) {
		int b = bh / r->H, h = bh % r->H;
		const float *Rs = rot_rows(r, R, pe_set(r->pe, l, h), b);
		const float *src = qkv + (size_t)b * r->T1 * 3 * D + h * r->hd;
		float *dst = qkr + (size_t)b * r->T1 * 2 * D + h * r->hd;
		if (skip) {	/* CLS row: q and k as they are */
			memcpy(dst, src, sizeof(float) * r->hd);
			memcpy(dst + D, src + D, sizeof(float) * r->hd);
		}
		src += (size_t)skip * 3 * D;
		dst += (size_t)skip * 2 * D;
		pe_apply(r->pe, r->Tn, Rs, src, 3 * D, dst, 2 * D);
		pe_apply(r->pe, r->Tn, Rs, src + D, 3 * D, dst + D, 2 * D);
	}
}

#define CHUNK	4	/* tokens per parallel work item */

void
rotary_backward(const struct rot *r, int l, const float *R /* [nset][Tr][rsize] */,
    float *dR /* [nset][Tr][rsize] += */, float *dqkv /* [B][T1][3D] */,
    const float *dqkr /* [B][T1][2D] */, const float *qkv /* [B][T1][3D] */)
{
	int D = r->H * r->hd, skip = r->T1 - r->Tn, rs = (int)r->pe->rsize;
	if (skip)
		for (int b = 0; b < r->B; b++)
			for (int h = 0; h < r->H; h++) {
				size_t o3 = (size_t)b * r->T1 * 3 * D + h * r->hd;
				size_t o2 = (size_t)b * r->T1 * 2 * D + h * r->hd;
				memcpy(dqkv + o3, dqkr + o2, sizeof(float) * r->hd);
				memcpy(dqkv + o3 + D, dqkr + o2 + D, sizeof(float) * r->hd);
			}
	/* each work item owns a token range of every set's dR (and of every
	 * record's, per record), so no two threads add into one row */
	int nchunk = (r->Tn + CHUNK - 1) / CHUNK;
	#pragma omp parallel for schedule(dynamic, 1)
	for (int c = 0; c < nchunk; c++) {
		int t0 = c * CHUNK, n = r->Tn - t0 < CHUNK ? r->Tn - t0 : CHUNK;
		for (int h = 0; h < r->H; h++) {
			int s = pe_set(r->pe, l, h);
			for (int b = 0; b < r->B; b++) {
				int64_t ro = (int64_t)t0 * rs + (r->per_record ?
				    (int64_t)b * r->Tn * rs : 0);
				const float *Rs = pe_R(r->pe, (float *)R, s, r->Tr) + ro;
				float *dRs = pe_R(r->pe, dR, s, r->Tr) + ro;
				size_t row = (size_t)b * r->T1 + skip + t0;
				const float *x = qkv + row * 3 * D + h * r->hd;
				const float *dy = dqkr + row * 2 * D + h * r->hd;
				float *dx = dqkv + row * 3 * D + h * r->hd;
				pe_apply_backward(r->pe, n, Rs, x, 3 * D, dy, 2 * D,
				    dx, 3 * D, dRs);
				pe_apply_backward(r->pe, n, Rs, x + D, 3 * D, dy + D,
				    2 * D, dx + D, 3 * D, dRs);
			}
		}
	}
}
