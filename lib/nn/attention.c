/*
 * attention.c - scaled dot-product attention per (record, head) with
 * optional RiemannFormer locality focusing.
 *
 * The per-(b, h) products are small (T x T x hd): one costs more to call
 * than to compute, so the work runs over chunks of REC records, one
 * OpenMP task a chunk, and each product is one batched call over the
 * chunk's REC x H pairs (gemm_batch), alone on its thread (between
 * gemm_solo_begin and gemm_solo_end): never a threaded product inside a
 * parallel region.  In fp32 the batches read q, k, v, P, dout and dS where
 * they are, and the plan chooses their backend (one oneDNN call, or
 * OpenBLAS pair by pair: the same products as one call each).  In bf16 a
 * chunk's q, k, v and dout are rounded once into the thread's buffers (q,
 * k and v: unless the caller has a rounded copy, attn's qkvc).  The
 * chunks do not depend on the thread count, and partial sums over records
 * (the sigma gradient) are kept per (b, h) and added in order, so neither
 * do the bits.
 */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "fastmath.h"
#include "gemm_fail.h"
#include "nn.h"

static const float *
dist_of(const struct attn *a, int b)
{
	return a->dist2 + (a->dist_per_record ? (size_t)b * a->T * a->T : 0);
}

/* Locality focusing of record b with scale sigma: Omega = exp(-dist2 /
 * (2 sigma^2)) into om[n], the weights W = P o Omega into w[n]. */
static void
locality(const struct attn *a, int b, float sigma, const float *P, float *om,
    float *w, int n)
{
	const float *d2 = dist_of(a, b);
	float c = 0.5f / (sigma * sigma);
	#pragma omp simd
	for (int i = 0; i < n; i++) {
		om[i] = fast_expf(-d2[i] * c);
		w[i] = P[i] * om[i];
	}
}

/* Locality's backward for record b: dW (over dw[n]) becomes dP = dW o
 * Omega; returns dL/dlog sigma, from dOmega = dW P and dOmega/dlog sigma =
 * Omega dist2 / sigma^2 (om, w: locality's). */
static float
locality_back(const struct attn *a, int b, float sigma, float *dw,
    const float *om, const float *w, int n)
{
	const float *d2 = dist_of(a, b);
	float s = 0;
	#pragma omp simd reduction(+:s)
	for (int i = 0; i < n; i++)
		s += dw[i] * w[i] * d2[i];
	#pragma omp simd
	for (int i = 0; i < n; i++)
		dw[i] *= om[i];
	return s / (sigma * sigma);
}

static void
softmax_rows(float *s /* [Tq][T] */, int Tq, int T)
{
	for (int m = 0; m < Tq; m++) {
		float *r = s + (size_t)m * T, mx = r[0], sum = 0;
		#pragma omp simd reduction(max:mx)
		for (int n = 1; n < T; n++)
			mx = r[n] > mx ? r[n] : mx;
		#pragma omp simd reduction(+:sum)
		for (int n = 0; n < T; n++) {
			r[n] = fast_expf(r[n] - mx);
			sum += r[n];
		}
		float inv = 1.0f / sum;
		#pragma omp simd
		for (int n = 0; n < T; n++)
			r[n] *= inv;
	}
}

/* The softmax's backward: dS = P o (dP - rowsum(dP o P)), over dw. */
static void
softmax_back(float *dw /* [Tq][T] */, const float *P /* [Tq][T] */, int Tq,
    int T)
{
	for (int m = 0; m < Tq; m++) {
		float *r = dw + (size_t)m * T, s = 0;
		const float *pr = P + (size_t)m * T;
		#pragma omp simd reduction(+:s)
		for (int n = 0; n < T; n++)
			s += r[n] * pr[n];
		#pragma omp simd
		for (int n = 0; n < T; n++)
			r[n] = pr[n] * (r[n] - s);
	}
}

/* ---- a chunk of records a call ---- */

#define REC	4	/* records in a chunk */

/* A thread's room for a chunk.  Rounded (bf16): q, k, v rows [REC][T][D]
 * (each record's T rows, Tq or not), weights and dS [REC][H][Tq][T], dout
 * [REC][Tq][D]; fp32 products read q, k, v, P, dout and dS where they
 * are, and need only the weights under locality [REC][H][Tq][T].  In
 * fp32 in either precision: scores or dW [REC][H][Tq][T], and in bf16
 * output rows [REC][Tq][D] kept only as their rounded copy (attn's
 * outc). */
struct chunk {
	void	*q, *k, *v, *w, *ds, *d;
	float	*s, *o;
};

/* Bytes of n elements of e bytes, up to a multiple of 64 (each part of a
 * chunk on cache lines of its own). */
static size_t
lines(size_t n, size_t e)
{
	return (n * e + 63) / 64 * 64;
}

/* The calling thread's chunk for a: 0, or -1 (gemm_failed says why). */
static int
chunk_of(const struct attn *a, struct chunk *c)
{
	int r = a->prec == GEMM_BF16;
	size_t e = r ? (size_t)gemm_bf16_size() : sizeof(float);
	size_t rows = (size_t)REC * a->T * a->H * a->hd;
	size_t pairs = (size_t)REC * a->H * a->T * a->T;
	size_t nr = r ? lines(rows, e) : 0, nw = lines(pairs, e);
	size_t nd = r ? nw : 0, ns = lines(pairs, sizeof(float));
	size_t no = r ? lines(rows, sizeof(float)) : 0;
	char *p = r ? gemm_bf16_buffer(0, 4 * nr + nw + nd) :
	    gemm_buffer(0, nw);
	char *f = gemm_buffer(1, ns + no);

	if (p == NULL || f == NULL)
		return -1;
	*c = (struct chunk){ .q = p, .k = p + nr, .v = p + 2 * nr,
	    .d = p + 3 * nr, .w = p + 4 * nr, .ds = p + 4 * nr + nw,
	    .s = (float *)f, .o = (float *)(f + ns) };
	return 0;
}

/* The layouts of a chunk's operands: a record's T rows of D (rounded q,
 * k, v), its Tq rows of D (dout, out), a (record, head) pair's Tq x T
 * block (scores, weights, dS), or a record's T rows in q's and k's
 * layout (dq, dk) or v's (dv). */
enum layout { ROWS_T, ROWS_TQ, PAIRS, QK, VV };

/* Where layout l's operand (i, j) starts (s[0] i + s[1] j) and its rows'
 * distance. */
static int
strides(const struct attn *a, enum layout l, size_t s[2])
{
	size_t D = (size_t)a->H * a->hd, TT = (size_t)a->Tq * a->T;

	int ld = l == PAIRS ? a->T : l == QK ? a->ldqk : l == VV ? a->ldv :
	    (int)D;

	s[0] = l == PAIRS ? TT * a->H : (size_t)(l == ROWS_TQ ? a->Tq : a->T) * ld;
	s[1] = l == PAIRS ? TT : (size_t)a->hd;
	return ld;
}

/* The batch of n x H products C = alpha op(A) op(B) of a chunk of n
 * records, each operand of its layout. */
static void
batch(const struct attn *a, int n, int ta, int tb, int M, int N, int K,
    float alpha, enum layout la, const void *A, enum layout lb,
    const void *B, enum layout lc, float *C)
{
	struct gemm_batch g = { .n0 = n, .n1 = a->H, .ta = ta, .tb = tb,
	    .M = M, .N = N, .K = K, .alpha = alpha };

	g.lda = strides(a, la, g.sa);
	g.ldb = strides(a, lb, g.sb);
	g.ldc = strides(a, lc, g.sc);
	gemm_batch(a->prec, &g, A, B, C);
}

/* Records b0 .. b0 + n of q, k and v rounded into the chunk. */
static void
round_qkv(const struct attn *a, const struct chunk *c, int b0, int n,
    const float *q, const float *k, const float *v)
{
	size_t D = (size_t)a->H * a->hd, r0 = (size_t)b0 * a->T;

	gemm_bf16_fill(c->q, 0, D, q + r0 * a->ldqk, a->ldqk, n * a->T, D);
	gemm_bf16_fill(c->k, 0, D, k + r0 * a->ldqk, a->ldqk, n * a->T, D);
	gemm_bf16_fill(c->v, 0, D, v + r0 * a->ldv, a->ldv, n * a->T, D);
}

/* A chunk's q, k and v operands and their layouts. */
struct qkv_ops {
	const void *q, *k, *v;
	enum layout lq, lv;
};

/* The q, k and v operands of records b0 .. b0 + n: in fp32 q, k and v
 * themselves; in bf16 in a's rounded copy, where it has one; else, where
 * they are the thirds of one array's rows, those rows rounded into the
 * chunk in that layout (the copy's: the same products, so the same bits
 * with a copy or without); else each rounded into the chunk. */
static struct qkv_ops
qkv_of(const struct attn *a, const struct chunk *c, int b0, int n,
    const float *q, const float *k, const float *v)
{
	size_t D = (size_t)a->H * a->hd, r0 = (size_t)b0 * a->T;

	if (a->prec != GEMM_BF16)
		return (struct qkv_ops){ q + r0 * a->ldqk, k + r0 * a->ldqk,
		    v + r0 * a->ldv, QK, VV };
	size_t e = (size_t)gemm_bf16_size();
	const char *p = a->qkvc;

	if (p != NULL)
		p += r0 * a->ldqk * e;
	else if (k == q + D && v == k + D && a->ldqk == a->ldv &&
	    (size_t)a->ldqk == 3 * D) {
		/* the chunk's q, k and v rooms are one, 3 D wide */
		gemm_bf16_fill(c->q, 0, a->ldqk, q + r0 * a->ldqk, a->ldqk,
		    n * a->T, 3 * (int)D);
		p = c->q;
	}
	if (p != NULL)
		return (struct qkv_ops){ p, p + D * e, p + 2 * D * e, QK, VV };
	round_qkv(a, c, b0, n, q, k, v);
	return (struct qkv_ops){ c->q, c->k, c->v, ROWS_T, ROWS_T };
}

/* The thread's locality scratch (its two T x T slots). */
static float *
omega(const struct attn *a)
{
	return a->scratch + (size_t)omp_get_thread_num() * 2 * a->T * a->T;
}

/* nn.h's: a chunk of records a task */
void
attention_forward(const struct attn *a, float *out /* [B][T][H*hd] */,
    float *P /* [B][H][T][T] */, const float *q, const float *k,
    const float *v, const float *logsig /* [H] or NULL */)
{
	int B = a->B, T = a->T, Tq = a->Tq, H = a->H, hd = a->hd, D = H * hd;
	int r = a->prec == GEMM_BF16;
	size_t TT = (size_t)Tq * T;
	double t0 = work_begin();
	int blas = gemm_solo_begin();
	#pragma omp parallel for num_threads(a->nthr) schedule(dynamic, 1)
	for (int b0 = 0; b0 < B; b0 += REC) {
		int n = B - b0 < REC ? B - b0 : REC;
		float *ob = out + (size_t)b0 * Tq * D;
		struct chunk c;
		if (chunk_of(a, &c) < 0) {
			if (a->outc != NULL)
				gemm_bf16_nan(a->outc, (size_t)b0 * Tq * D,
				    (size_t)n * Tq * D);
			else
				nan_matrix(ob, n * Tq, D, D);
			continue;
		}
		if (a->outc != NULL)
			ob = c.o;
		struct qkv_ops o = qkv_of(a, &c, b0, n, q, k, v);
		/* P = softmax(q k^T / sqrt(hd)), W = P o Omega */
		float *pc = P ? P + (size_t)b0 * H * TT : c.s;
		batch(a, n, 0, 1, Tq, T, hd, 1.0f / sqrtf((float)hd), o.lq,
		    o.q, o.lq, o.k, PAIRS, pc);
		for (int i = 0; i < n * H; i++) {
			float *pb = pc + i * TT;
			const float *w = pb;
			softmax_rows(pb, Tq, T);
			if (logsig != NULL) {
				float *om = omega(a);
				float *wl = r ? om + TT : (float *)c.w + i * TT;
				locality(a, b0 + i / H, expf(logsig[i % H]), pb, om,
				    wl, (int)TT);
				w = wl;
			}
			if (r)
				gemm_bf16_fill(c.w, i * TT, T, w, T, Tq, T);
		}
		/* out = W v */
		batch(a, n, 0, 0, Tq, hd, T, 1.0f, PAIRS,
		    r || logsig != NULL ? c.w : pc, o.lv, o.v, ROWS_TQ, ob);
		if (a->outc != NULL)
			gemm_bf16_fill(a->outc, (size_t)b0 * Tq * D, D, ob, D,
			    n * Tq, D);
	}
	gemm_solo_end(blas);
	work_end(WORK_ATTENTION, t0, a->nthr);
}

/* nn.h's: a chunk of records a task */
void
attention_backward(const struct attn *a, float *dq, float *dk, float *dv,
    float *dlogsig /* [H] += */, float *partial /* [B][H] */,
    const float *dout /* [B][T][H*hd] */, const float *P /* [B][H][T][T] */,
    const float *q, const float *k, const float *v,
    const float *logsig /* [H] or NULL */)
{
	int B = a->B, T = a->T, Tq = a->Tq, H = a->H, hd = a->hd, D = H * hd;
	int r = a->prec == GEMM_BF16;
	size_t TT = (size_t)Tq * T, ldqk = a->ldqk, ldv = a->ldv;
	float scale = 1.0f / sqrtf((float)hd);
	double t0 = work_begin();
	int blas = gemm_solo_begin();
	#pragma omp parallel for num_threads(a->nthr) schedule(dynamic, 1)
	for (int b0 = 0; b0 < B; b0 += REC) {
		int n = B - b0 < REC ? B - b0 : REC;
		float *dqb = dq + b0 * T * ldqk, *dkb = dk + b0 * T * ldqk;
		float *dvb = dv + b0 * T * ldv, *om = omega(a);
		const float *pc = P + (size_t)b0 * H * TT;
		const float *db = dout + (size_t)b0 * Tq * D;
		struct chunk c;
		if (chunk_of(a, &c) < 0) {
			for (int j = 0; j < n; j++)
				nan_matrix(dqb + j * T * ldqk, Tq, D, (int)ldqk);
			nan_matrix(dkb, n * T, D, (int)ldqk);
			nan_matrix(dvb, n * T, D, (int)ldv);
			continue;
		}
		struct qkv_ops o = qkv_of(a, &c, b0, n, q, k, v);
		if (r)
			gemm_bf16_fill(c.d, 0, D, db, D, n * Tq, D);
		const void *d = r ? c.d : db;
		/* dW = dout v^T */
		batch(a, n, 0, 1, Tq, T, hd, 1.0f, ROWS_TQ, d, o.lv, o.v,
		    PAIRS, c.s);
		/* each pair's weights W that multiplied v, and dS over dW */
		for (int i = 0; i < n * H; i++) {
			int b = b0 + i / H, h = i % H;
			float *dw = c.s + i * TT;
			const float *pb = pc + i * TT, *w = pb;
			if (logsig != NULL) {
				float sg = expf(logsig[h]);
				float *wl = r ? om + TT : (float *)c.w + i * TT;
				locality(a, b, sg, pb, om, wl, (int)TT);
				partial[b * H + h] = locality_back(a, b, sg, dw,
				    om, wl, (int)TT);
				w = wl;
			}
			softmax_back(dw, pb, Tq, T);
			if (r) {
				gemm_bf16_fill(c.w, i * TT, T, w, T, Tq, T);
				gemm_bf16_fill(c.ds, i * TT, T, dw, T, Tq, T);
			}
		}
		const void *w = r || logsig != NULL ? c.w : pc;
		const void *ds = r ? c.ds : c.s;
		/* dv = W^T dout */
		batch(a, n, 1, 0, T, hd, Tq, 1.0f, PAIRS, w, ROWS_TQ, d, VV, dvb);
		/* dq = dS k / sqrt(hd), Tq rows a record; dk = dS^T q / sqrt(hd) */
		batch(a, n, 0, 0, Tq, hd, T, scale, PAIRS, ds, o.lq, o.k,
		    QK, dqb);
		batch(a, n, 1, 0, T, hd, Tq, scale, PAIRS, ds, o.lq, o.q,
		    QK, dkb);
	}
	gemm_solo_end(blas);
	if (logsig != NULL)	/* in record order: any thread count */
		for (int b = 0; b < B; b++)
			for (int h = 0; h < H; h++)
				dlogsig[h] += partial[b * H + h];
	work_end(WORK_ATTENTION, t0, a->nthr);
}

/* ---- the weights a probe shows ---- */

void
attention_weights(const struct attn *a, float *W, const float *P,
    const float *logsig)
{
	size_t TT = (size_t)a->Tq * a->T;

	#pragma omp parallel for num_threads(a->nthr)
	for (int bh = 0; bh < a->B * a->H; bh++)
		locality(a, bh / a->H, expf(logsig[bh % a->H]), P + bh * TT,
		    omega(a), W + bh * TT, (int)TT);
}

