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
 *
 * An encoding with a basis rotates by P B P^T (pe.h).  Attention reads the
 * rotated q and k only in their dot products, where the P next to the dot
 * cancels (P^T P = I): q' = B P^T q and k' = B P^T k give its scores
 * exactly, CLS rows that B leaves alone included (P^T alone).  So P^T is
 * one product per head over every row (a row q becomes q P: P^T q as a
 * column; basis_in), then B as any encoding's; no dense R is made.  The backward makes P^T q and
 * P^T k again by the same products (the same bits) in qkr, which the
 * forward filled and nothing reads any more, takes B back in place in
 * dqkr, then dq = dU P^T and dP += q^T dU (basis_out).
 */
#include <string.h>

#include "nn.h"
#include "pe.h"
#include "rotary.h"

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

/* One set's basis, P[hd][hd], inside P (or dP). */
static float *
basis_of(const struct rot *r, const float *P, int l, int h)
{
	return (float *)P + (size_t)pe_set(r->pe, l, h) * r->hd * r->hd;
}

/* qkr's q (k 0) or k (k 1) columns of every row = qkv's P: P^T q, P^T k. */
static void
basis_in(const struct rot *r, int l, const float *qkv, float *qkr)
{
	int D = r->H * r->hd, hd = r->hd;
	for (int h = 0; h < r->H; h++)
		for (int k = 0; k < 2; k++)
			gemm_rows(GEMM_FP32, 0, 0, r->B * r->T1, hd, hd, 1.0f,
			    qkv + k * D + h * hd, 3 * D, basis_of(r, r->P, l, h),
			    hd, 0.0f, qkr + k * D + h * hd, 2 * D);
}

/* From dU = dL/d(P^T q), dL/d(P^T k) in du's rows: dqkv's q and k columns
 * = dU P^T, dP += q^T dU + k^T dU.  The q rows are CLS's alone under qcls.
 * A head's dP is one product over all rows; the heads of a layer run in
 * parallel when each has its own set, else in order. */
static void
basis_out(const struct rot *r, int l, const float *qkv, const float *du,
    float *dqkv)
{
	int D = r->H * r->hd, hd = r->hd;
	for (int h = 0; h < r->H; h++)
		for (int k = 0; k < 2; k++) {
			int st = !k && r->qcls ? r->T1 : 1;
			gemm_rows(GEMM_FP32, 0, 1, r->B * r->T1 / st, hd, hd,
			    1.0f, du + k * D + h * hd, st * 2 * D,
			    basis_of(r, r->P, l, h), hd, 0.0f,
			    dqkv + k * D + h * hd, st * 3 * D);
		}
	int own = r->pe->share == PE_SHARE_NONE || r->pe->share == PE_SHARE_LAYERS;
	int blas = gemm_solo_begin();
	#pragma omp parallel for if (own) schedule(dynamic, 1)
	for (int h = 0; h < r->H; h++)
		for (int k = 0; k < 2; k++) {
			int st = !k && r->qcls ? r->T1 : 1;
			gemm_one(GEMM_FP32, 1, 0, hd, hd, r->B * r->T1 / st, 1.0f,
			    qkv + k * D + h * hd, st * 3 * D, du + k * D + h * hd,
			    st * 2 * D, 1.0f, basis_of(r, r->dP, l, h), hd);
		}
	gemm_solo_end(blas);
}

/* The unrotated CLS rows' q and k (the first T1 - Tn rows of every
 * record) from src to dst, rows ls and ld floats long: qkv's 3D and
 * qkr's 2D, q at 0 and k at D in both. */
static void
cls_rows(const struct rot *r, const float *src, int ls, float *dst, int ld)
{
	int D = r->H * r->hd, hd = r->hd;
	for (int b = 0; b < r->B; b++)
		for (int t = 0; t < r->T1 - r->Tn; t++)
			for (int k = 0; k < 2; k++) {
				size_t row = (size_t)b * r->T1 + t;
				for (int h = 0; h < r->H; h++)
					memcpy(dst + row * ld + k * D + h * hd,
					    src + row * ls + k * D + h * hd,
					    sizeof(float) * hd);
			}
}

void
rotary_forward(const struct rot *r, int l, const float *R /* [nset][Tr][rsize] */,
    float *qkr /* [B][T1][2D] */, const float *qkv /* [B][T1][3D] */)
{
	int D = r->H * r->hd, skip = r->T1 - r->Tn, hd = r->hd;
	int64_t s2 = (int64_t)r->T1 * 2 * D;
	/* B's input: qkv's q and k, or with a basis P^T q and P^T k in qkr */
	const float *in = r->P ? qkr : qkv;
	int ldin = r->P ? 2 * D : 3 * D;
	int64_t xs = (int64_t)r->T1 * ldin;
	if (r->P)
		basis_in(r, l, qkv, qkr);
	else if (skip)	/* CLS rows: q and k as they are */
		cls_rows(r, qkv, 3 * D, qkr, 2 * D);
	#pragma omp parallel for schedule(dynamic, 1)
	for (int i = 0; i < nitems(r); i++) {
		struct item it = item(r, i);
		int nq = qrows(r, it.t0, it.n);
		for (int h = 0; h < r->H; h++) {
			const float *Rs = rot_rows(r, R, pe_set(r->pe, l, h), it.b0) +
			    (size_t)it.t0 * r->pe->rsize;
			size_t row = (size_t)it.b0 * r->T1 + skip + it.t0;
			const float *src = in + row * ldin + h * hd;
			float *dst = qkr + row * 2 * D + h * hd;
			if (nq)
				pe_apply_batch(r->pe, it.nimg, nq, Rs, src, xs, ldin,
				    dst, s2, 2 * D);
			pe_apply_batch(r->pe, it.nimg, it.n, Rs, src + D, xs, ldin,
			    dst + D, s2, 2 * D);
		}
	}
}

void
rotary_backward(const struct rot *r, int l, const float *R /* [nset][Tr][rsize] */,
    float *dR /* [nset][Tr][rsize] += */, float *dqkv /* [B][T1][3D] */,
    float *dqkr /* [B][T1][2D] */, float *qkr /* [B][T1][2D] */,
    const float *qkv /* [B][T1][3D] */)
{
	int D = r->H * r->hd, skip = r->T1 - r->Tn, hd = r->hd;
	int64_t s2 = (int64_t)r->T1 * 2 * D;
	/* B's input and where its gradient goes: qkv and dqkv, or with a
	 * basis P^T q, P^T k made again in qkr and their gradient in dqkr */
	const float *in = r->P ? qkr : qkv;
	float *out = r->P ? dqkr : dqkv;
	int ldin = r->P ? 2 * D : 3 * D;
	int64_t xs = (int64_t)r->T1 * ldin;
	if (r->P)
		basis_in(r, l, qkv, qkr);
	else if (skip)
		cls_rows(r, dqkr, 2 * D, dqkv, 3 * D);
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
			const float *x = in + row * ldin + h * hd;
			const float *dy = dqkr + row * 2 * D + h * hd;
			float *dx = out + row * ldin + h * hd;
			if (nq)
				pe_apply_batch_backward(r->pe, it.nimg, nq, Rs, x, xs,
				    ldin, dy, s2, 2 * D, dx, xs, ldin, dRs);
			pe_apply_batch_backward(r->pe, it.nimg, it.n, Rs, x + D, xs,
			    ldin, dy + D, s2, 2 * D, dx + D, xs, ldin, dRs);
		}
	}
	if (r->P)
		basis_out(r, l, qkv, dqkr, dqkv);
}
