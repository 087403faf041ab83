/*
 * attention.c - scaled dot-product attention per (record, head) with
 * optional RiemannFormer locality focusing.
 *
 * Threading choice: the per-(b, h) products are small (T x T x hd), so one
 * OpenMP loop runs over all B*H pairs and each iteration computes its
 * products alone (gemm_one, between gemm_solo_begin and gemm_solo_end):
 * never a threaded product inside a parallel region.  Partial sums over
 * records (the sigma gradient) are kept per (b, h) and added in order, so
 * results do not depend on the thread count.
 */
#include <math.h>
#include <omp.h>

#include "fastmath.h"
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

void
attention_forward(const struct attn *a, float *out /* [B][T][H*hd] */,
    float *P /* [B][H][T][T] */, const float *q, const float *k,
    const float *v, const float *logsig /* [H] or NULL */)
{
	int B = a->B, T = a->T, Tq = a->Tq, H = a->H, hd = a->hd, D = H * hd,
	    TT = Tq * T;
	float scale = 1.0f / sqrtf((float)hd);
	int blas = gemm_solo_begin();
	#pragma omp parallel for num_threads(a->nthr) schedule(dynamic, 8)
	for (int bh = 0; bh < B * H; bh++) {
		int b = bh / H, h = bh % H;
		const float *qb = q + (size_t)b * T * a->ldqk + h * hd;
		const float *kb = k + (size_t)b * T * a->ldqk + h * hd;
		const float *vb = v + (size_t)b * T * a->ldv + h * hd;
		/* without P, the thread's third scratch slot (locality takes
		 * the first two) */
		float *pb = P ? P + (size_t)bh * TT : a->scratch +
		    ((size_t)omp_get_thread_num() * 3 + 2) * T * T;
		float *ob = out + (size_t)b * Tq * D + h * hd;
		gemm_one(a->prec, 0, 1, Tq, T, hd, scale, qb, a->ldqk, kb,
		    a->ldqk, 0.0f, pb, T);
		softmax_rows(pb, Tq, T);
		const float *w = pb;
		if (logsig != NULL) {
			float *om = a->scratch + (size_t)omp_get_thread_num() * 3 * T * T;
			locality(a, b, expf(logsig[h]), pb, om, om + TT, TT);
			w = om + TT;
		}
		gemm_one(a->prec, 0, 0, Tq, hd, T, 1.0f, w, T, vb, a->ldv,
		    0.0f, ob, D);
		if (a->outc != NULL)
			gemm_bf16_fill(a->outc, (size_t)(ob - out), D, ob, D,
			    Tq, hd);
	}
	gemm_solo_end(blas);
}

void
attention_weights(const struct attn *a, float *W, const float *P,
    const float *logsig)
{
	size_t TT = (size_t)a->Tq * a->T;

	#pragma omp parallel for num_threads(a->nthr)
	for (int bh = 0; bh < a->B * a->H; bh++) {
		float *om = a->scratch + (size_t)omp_get_thread_num() * 3 * a->T * a->T;
		locality(a, bh / a->H, expf(logsig[bh % a->H]), P + bh * TT, om,
		    W + bh * TT, (int)TT);
	}
}

void
attention_backward(const struct attn *a, float *dq, float *dk, float *dv,
    float *dlogsig /* [H] += */, float *partial /* [B][H] */,
    const float *dout /* [B][T][H*hd] */, const float *P /* [B][H][T][T] */,
    const float *q, const float *k, const float *v,
    const float *logsig /* [H] or NULL */)
{
	int B = a->B, T = a->T, Tq = a->Tq, H = a->H, hd = a->hd, D = H * hd,
	    TT = Tq * T;
	float scale = 1.0f / sqrtf((float)hd);
	int blas = gemm_solo_begin();
	#pragma omp parallel for num_threads(a->nthr) schedule(dynamic, 8)
	for (int bh = 0; bh < B * H; bh++) {
		int b = bh / H, h = bh % H;
		size_t oqk = (size_t)b * T * a->ldqk + h * hd;
		size_t ov = (size_t)b * T * a->ldv + h * hd;
		const float *pb = P + (size_t)bh * TT, *db = dout + (size_t)b * Tq * D + h * hd;
		float *om = a->scratch + (size_t)omp_get_thread_num() * 3 * T * T;
		float *w = om + TT, *dw = w + TT;
		const float *wv = pb;
		float sg = 0;
		if (logsig != NULL) {
			sg = expf(logsig[h]);
			locality(a, b, sg, pb, om, w, TT);
			wv = w;
		}
		/* dW = dout v^T; dv = W^T dout */
		gemm_one(a->prec, 0, 1, Tq, T, hd, 1.0f, db, D, v + ov, a->ldv,
		    0.0f, dw, T);
		gemm_one(a->prec, 1, 0, T, hd, Tq, 1.0f, wv, T, db, D, 0.0f,
		    dv + ov, a->ldv);
		if (logsig != NULL) {
			/* dOmega = dW P; dOmega/dlogsig = Omega dist2 / sigma^2 */
			const float *d2 = dist_of(a, b);
			float s = 0;
			#pragma omp simd reduction(+:s)
			for (int i = 0; i < TT; i++)
				s += dw[i] * w[i] * d2[i];
			partial[bh] = s / (sg * sg);
			#pragma omp simd
			for (int i = 0; i < TT; i++)
				dw[i] *= om[i];
		}
		/* softmax: dS = P (dP - rowsum(dP P)) */
		for (int m = 0; m < Tq; m++) {
			float *r = dw + (size_t)m * T, s = 0;
			const float *pr = pb + (size_t)m * T;
			#pragma omp simd reduction(+:s)
			for (int n = 0; n < T; n++)
				s += r[n] * pr[n];
			#pragma omp simd
			for (int n = 0; n < T; n++)
				r[n] = pr[n] * (r[n] - s);
		}
		gemm_one(a->prec, 0, 0, Tq, hd, T, scale, dw, T, k + oqk,
		    a->ldqk, 0.0f, dq + oqk, a->ldqk);
		gemm_one(a->prec, 1, 0, T, hd, Tq, scale, dw, T, q + oqk,
		    a->ldqk, 0.0f, dk + oqk, a->ldqk);
	}
	gemm_solo_end(blas);
	if (logsig != NULL)
		for (int b = 0; b < B; b++)
			for (int h = 0; h < H; h++)
				dlogsig[h] += partial[b * H + h];
}
