/*
 * rotary.c - apply a layer's rotations (lib/pe/pe.h) to the queries and keys
 * of a whole batch, and the backward pass.  pe_apply_batch is serial; the
 * loops here are the parallel ones.
 *
 * With positions shared by the batch, every record's row t meets the same
 * R[t]: pe_apply_batch rotates all records' rows t while R[t] is in cache.
 * A work item is a range of tokens, every head, q and k: it reads the q
 * and k columns of those rows whole, so the lines the hardware fetches
 * next to the ones asked for (the other heads') are used while they are
 * still in L2 (items of one head at a time were ~15% slower with liere:8
 * to liere:64 on 2 threads).  The backward sums dR[t] over the records
 * inside the call, each token range owned by one work item (the same bits
 * on any thread count).  Per-record rotations take the same loops, a work
 * item a record.  (Tried and dropped: the dense head_dim x
 * head_dim sgemm per token and head over the records, no faster on liere:8
 * or liere:64; and copying the records' rows into a contiguous buffer
 * first, which made every encoding slower, rope-axial's forward by half:
 * the time goes to memory, and the copy only adds to it.)
 */
#include <string.h>

#include "nn.h"
#include "pe.h"

#define CHUNK	4	/* tokens per parallel work item */

/* Rows of record b's rotations inside set s of R (or of dR). */
static float *
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

/* Work items: with shared positions a range of CHUNK tokens of every
 * record (one kernel call takes all records, R[t] in cache); per record
 * one record's tokens, so each item owns its rows of dR too. */
struct item {
	int	 b0, nimg, t0, n;	/* records [b0, b0 + nimg), tokens [t0, t0 + n) */
};

static int
nitems(const struct rot *r)
{
	return r->per_record ? r->B : (r->Tn + CHUNK - 1) / CHUNK;
}

static struct item
item(const struct rot *r, int i)
{
	if (r->per_record)
		return (struct item){ i, 1, 0, r->Tn };
	int t0 = i * CHUNK;
	return (struct item){ 0, r->B, t0, r->Tn - t0 < CHUNK ? r->Tn - t0 : CHUNK };
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
	#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < nitems(r); i++) {
		struct item it = item(r, i);
		int nq = qrows(r, it.t0, it.n);
		for (int h = 0; h < r->H; h++) {
			const float *Rs = rot_rows(r, R, pe_set(r->pe, l, h), it.b0) +
			    (size_t)it.t0 * r->pe->rsize;
			size_t row = (size_t)it.b0 * r->T1 + skip + it.t0;
			const float *src = qkv + row * 3 * D + h * hd;
			float *dst = qkr + row * 2 * D + h * hd;
			if (nq)
				pe_apply_batch(r->pe, it.nimg, nq, Rs, src, s3, 3 * D,
				    dst, s2, 2 * D);
			pe_apply_batch(r->pe, it.nimg, it.n, Rs, src + D, s3, 3 * D,
			    dst + D, s2, 2 * D);
		}
	}
}

void
rotary_backward(const struct rot *r, int l, const float *R /* [nset][Tr][rsize] */,
    float *dR /* [nset][Tr][rsize] += */, float *dqkv /* [B][T1][3D] */,
    const float *dqkr /* [B][T1][2D] */, const float *qkv /* [B][T1][3D] */)
{
	int D = r->H * r->hd, skip = r->T1 - r->Tn, hd = r->hd;
	int64_t s3 = (int64_t)r->T1 * 3 * D, s2 = (int64_t)r->T1 * 2 * D;
	if (skip)
		for (int b = 0; b < r->B; b++)
			for (int h = 0; h < r->H; h++) {
				size_t o3 = (size_t)b * s3 + h * hd, o2 = (size_t)b * s2 + h * hd;
				memcpy(dqkv + o3, dqkr + o2, sizeof(float) * hd);
				memcpy(dqkv + o3 + D, dqkr + o2 + D, sizeof(float) * hd);
			}
	/* each work item owns a token range of every set's dR (per record,
	 * a record's rows), so no two threads add into one row */
	#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < nitems(r); i++) {
		struct item it = item(r, i);
		int nq = qrows(r, it.t0, it.n);
		for (int h = 0; h < r->H; h++) {
			int s = pe_set(r->pe, l, h);
			size_t ro = (size_t)it.t0 * r->pe->rsize;
			const float *Rs = rot_rows(r, R, s, it.b0) + ro;
			float *dRs = rot_rows(r, dR, s, it.b0) + ro;
			size_t row = (size_t)it.b0 * r->T1 + skip + it.t0;
			const float *x = qkv + row * 3 * D + h * hd;
			const float *dy = dqkr + row * 2 * D + h * hd;
			float *dx = dqkv + row * 3 * D + h * hd;
			if (nq)
				pe_apply_batch_backward(r->pe, it.nimg, nq, Rs, x, s3,
				    3 * D, dy, s2, 2 * D, dx, s3, 3 * D, dRs);
			pe_apply_batch_backward(r->pe, it.nimg, it.n, Rs, x + D, s3,
			    3 * D, dy + D, s2, 2 * D, dx + D, s3, 3 * D, dRs);
		}
	}
}
