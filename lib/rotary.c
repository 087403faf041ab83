/*
 * rotary.c - apply a layer's rotations (lib/pe.h) to the queries and keys
 * of a whole batch, and the backward pass.  pe_apply and pe_apply_batch
 * are serial; the loops here are the parallel ones.
 *
 * With positions shared by the batch, every record's row t meets the same
 * R[t]: pe_apply_batch rotates all records' rows t while R[t] is in cache.
 * A work item is a range of tokens, every head, q and k: it reads the
 * q and k columns of those rows whole, so the lines the hardware fetches
 * next to the ones asked for (the other heads') are used while they are
 * still in L2 (items of one head at a time were ~15% slower with
 * liere:8 to liere:64 on 2 threads).  The backward sums dR[t] over the records
 * inside the call, each token range owned by one work item (the same bits
 * on any thread count).  Per-record rotations go through pe_apply, record
 * by record.  (Tried and dropped: the dense head_dim x head_dim sgemm per
 * token and head over the records, no faster on liere:8 or liere:64; and
 * copying the records' rows into a contiguous buffer first, which made
 * every encoding slower, rope-axial's forward by half: the time goes to
 * memory, and the copy only adds to it.)
 */
#include <string.h>

#include "nn.h"
#include "pe.h"

#define CHUNK	4	/* tokens per parallel work item */

/* Rows of one record's rotations inside set s. */
static const float *
rot_rows(const struct rot *r, const float *R, int s, int b)
{
	return pe_R(r->pe, (float *)R, s, r->Tr) +
	    (r->per_record ? (int64_t)b * r->Tn * r->pe->rsize : 0);
}

/* Query rows to rotate among the n from rotated token t0: all, or with
 * qcls the CLS row alone, when it is rotated (the first token). */
static int
qrows(const struct rot *r, int t0, int n)
{
	if (!r->qcls)
		return n;
	return r->T1 == r->Tn && t0 == 0 ? 1 : 0;
}

void
rotary_forward(const struct rot *r, int l, const float *R /* [nset][Tr][rsize] */,
    float *qkr /* [B][T1][2D] */, const float *qkv /* [B][T1][3D] */)
{
	int D = r->H * r->hd, skip = r->T1 - r->Tn, hd = r->hd;
	int64_t s3 = (int64_t)r->T1 * 3 * D, s2 = (int64_t)r->T1 * 2 * D;
	if (skip)	/* CLS rows: q and k as they are */
		for (int b = 0; b < r->B; b++)
			for (int h = 0; h < r->H; h++) {
				size_t o3 = (size_t)b * s3 + h * hd, o2 = (size_t)b * s2 + h * hd;
				memcpy(qkr + o2, qkv + o3, sizeof(float) * hd);
				memcpy(qkr + o2 + D, qkv + o3 + D, sizeof(float) * hd);
			}
	if (!r->per_record) {
		int nchunk = (r->Tn + CHUNK - 1) / CHUNK;
		#pragma omp parallel for schedule(dynamic, 1)
		for (int c = 0; c < nchunk; c++) {
			int t0 = c * CHUNK, n = r->Tn - t0 < CHUNK ? r->Tn - t0 : CHUNK;
			size_t row = (size_t)skip + t0;
			for (int h = 0; h < r->H; h++) {
				const float *Rs = rot_rows(r, R, pe_set(r->pe, l, h), 0) +
				    (size_t)t0 * r->pe->rsize;
				const float *src = qkv + row * 3 * D + h * r->hd;
				float *dst = qkr + row * 2 * D + h * r->hd;
				int nq = qrows(r, t0, n);
				if (nq)
					pe_apply_batch(r->pe, r->B, nq, Rs, src, s3, 3 * D,
					    dst, s2, 2 * D);
				pe_apply_batch(r->pe, r->B, n, Rs, src + D, s3, 3 * D, dst + D,
				    s2, 2 * D);
			}
		}
		return;
	}
	#pragma omp parallel for schedule(static)
	for (int bh = 0; bh < r->B * r->H; bh++) {
		int b = bh / r->H, h = bh % r->H;
		const float *Rs = rot_rows(r, R, pe_set(r->pe, l, h), b);
		const float *src = qkv + (size_t)b * r->T1 * 3 * D + h * r->hd;
		float *dst = qkr + (size_t)b * r->T1 * 2 * D + h * r->hd;
		src += (size_t)skip * 3 * D;
		dst += (size_t)skip * 2 * D;
		int nq = qrows(r, 0, r->Tn);
		if (nq)
			pe_apply(r->pe, nq, Rs, src, 3 * D, dst, 2 * D);
		pe_apply(r->pe, r->Tn, Rs, src + D, 3 * D, dst + D, 2 * D);
	}
}

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
	if (!r->per_record) {
		#pragma omp parallel for schedule(dynamic, 1)
		for (int c = 0; c < nchunk; c++) {
			int t0 = c * CHUNK, n = r->Tn - t0 < CHUNK ? r->Tn - t0 : CHUNK;
			for (int h = 0; h < r->H; h++) {
				int s = pe_set(r->pe, l, h);
				int64_t ro = (int64_t)t0 * rs;
				size_t row = (size_t)skip + t0;
				const float *x = qkv + row * 3 * D + h * r->hd;
				const float *dy = dqkr + row * 2 * D + h * r->hd;
				float *dx = dqkv + row * 3 * D + h * r->hd;
				const float *Rs = pe_R(r->pe, (float *)R, s, r->Tr) + ro;
				float *dRs = pe_R(r->pe, dR, s, r->Tr) + ro;
				int64_t s3 = (int64_t)r->T1 * 3 * D, s2 = (int64_t)r->T1 * 2 * D;
				int nq = qrows(r, t0, n);
				if (nq)
					pe_apply_batch_backward(r->pe, r->B, nq, Rs, x, s3,
					    3 * D, dy, s2, 2 * D, dx, s3, 3 * D, dRs);
				pe_apply_batch_backward(r->pe, r->B, n, Rs, x + D, s3,
				    3 * D, dy + D, s2, 2 * D, dx + D, s3, 3 * D, dRs);
			}
		}
		return;
	}
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
				int nq = qrows(r, t0, n);
				if (nq)
					pe_apply_backward(r->pe, nq, Rs, x, 3 * D, dy,
					    2 * D, dx, 3 * D, dRs);
				pe_apply_backward(r->pe, n, Rs, x + D, 3 * D, dy + D,
				    2 * D, dx + D, 3 * D, dRs);
			}
		}
	}
}
