/*
 * rotary.c - apply a layer's rotations (lib/pe.h) to the queries and keys
 * of a whole batch, and the backward pass.  pe_apply is serial; the loops
 * here are the parallel ones.
 *
 * Large blocks with positions shared by the batch go through sgemm: for a
 * token t and block j every record's row is multiplied by the same b x b
 * R[t][j], so Q'[records] = Q[records] R^T is one product of B rows (rows
 * strided by a record), dQ = dQ' R another, and dR += dQ'^T Q sums over
 * the records inside the product.  This turns liere:64's rotation from a
 * bandwidth-bound matrix-vector loop that re-reads R for every record into
 * compute-bound products.  Small blocks (and per-record rotations) use
 * pe_apply, whose R stays in cache.
 */
#include <cblas.h>
#include <string.h>

#include "nn.h"
#include "pe.h"

#define GEMM_BLOCK	16	/* smallest block rotated through sgemm */

static int
use_gemm(const struct rot *r)
{
	return !r->per_record && r->pe->block >= GEMM_BLOCK;
}

/* One token's rotation of one head's q or k rows over every record:
 * y[b] = R x[b] for each of the nb blocks (rows strided ldx, ldy). */
static void
rotate_token(const struct pe *pe, int B, const float *R /* [nb][b][b] */,
    const float *x, int ldx, float *y, int ldy)
{
	int bs = pe->block;
	for (int j = 0; j < pe->nblock; j++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, bs, bs,
		    1.0f, x + j * bs, ldx, R + (size_t)j * bs * bs, bs, 0.0f,
		    y + j * bs, ldy);
}

/* Its backward: dx[b] = R^T dy[b], dR += sum_b dy[b] x[b]^T. */
static void
rotate_token_backward(const struct pe *pe, int B, const float *R,
    float *dR, const float *x, int ldx, const float *dy, int lddy, float *dx,
    int lddx)
{
	int bs = pe->block;
	for (int j = 0; j < pe->nblock; j++) {
		const float *Rj = R + (size_t)j * bs * bs;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, bs, bs,
		    1.0f, dy + j * bs, lddy, Rj, bs, 0.0f, dx + j * bs, lddx);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, bs, bs, B,
		    1.0f, dy + j * bs, lddy, x + j * bs, ldx, 1.0f,
		    dR + (size_t)j * bs * bs, bs);
	}
}

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
	if (use_gemm(r)) {
		int blas = openblas_get_num_threads();
		openblas_set_num_threads(1);
		#pragma omp parallel for schedule(static)
		for (int ht = 0; ht < r->H * r->T1; ht++) {
			int h = ht / r->T1, t = ht % r->T1;
			const float *src = qkv + (size_t)t * 3 * D + h * r->hd;
			float *dst = qkr + (size_t)t * 2 * D + h * r->hd;
			int ld3 = r->T1 * 3 * D, ld2 = r->T1 * 2 * D;
			if (t < skip) {	/* CLS row: q and k as they are */
				for (int b = 0; b < r->B; b++) {
					memcpy(dst + (size_t)b * ld2, src + (size_t)b * ld3,
					    sizeof(float) * r->hd);
					memcpy(dst + (size_t)b * ld2 + D,
					    src + (size_t)b * ld3 + D, sizeof(float) * r->hd);
				}
				continue;
			}
			const float *Rt = rot_rows(r, R, pe_set(r->pe, l, h), 0) +
			    (size_t)(t - skip) * r->pe->rsize;
			rotate_token(r->pe, r->B, Rt, src, ld3, dst, ld2);
			rotate_token(r->pe, r->B, Rt, src + D, ld3, dst + D, ld2);
		}
		openblas_set_num_threads(blas);
		return;
	}
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
	if (use_gemm(r)) {
		int blas = openblas_get_num_threads();
		openblas_set_num_threads(1);
		#pragma omp parallel for schedule(dynamic, 1)
		for (int t = 0; t < r->Tn; t++)
			for (int h = 0; h < r->H; h++) {
				int s = pe_set(r->pe, l, h);
				int64_t ro = (int64_t)t * rs;
				size_t row = (size_t)skip + t;
				const float *x = qkv + row * 3 * D + h * r->hd;
				const float *dy = dqkr + row * 2 * D + h * r->hd;
				float *dx = dqkv + row * 3 * D + h * r->hd;
				const float *Rt = pe_R(r->pe, (float *)R, s, r->Tr) + ro;
				float *dRt = pe_R(r->pe, dR, s, r->Tr) + ro;
				int ld3 = r->T1 * 3 * D, ld2 = r->T1 * 2 * D;
				rotate_token_backward(r->pe, r->B, Rt, dRt, x, ld3,
				    dy, ld2, dx, ld3);
				rotate_token_backward(r->pe, r->B, Rt, dRt, x + D, ld3,
				    dy + D, ld2, dx + D, ld3);
			}
		openblas_set_num_threads(blas);
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
				pe_apply_backward(r->pe, n, Rs, x, 3 * D, dy, 2 * D,
				    dx, 3 * D, dRs);
				pe_apply_backward(r->pe, n, Rs, x + D, 3 * D, dy + D,
				    2 * D, dx + D, 3 * D, dRs);
			}
		}
	}
}
