/*
 * test_bf16.c - bf16 products (lib/nn/bf16.c, --precision bf16): rounding
 * to bf16 is to nearest with ties to even, subnormals to zero, against a
 * reference on random and edge values, and rows rounded (by the CPU's
 * conversion where it has one) are the same bits; the CPU's bf16 is found where it has one and only then
 * (emulation only when asked); a bf16 product of each kind is the fp32
 * product of the rounded operands within fp32 rounding, is not the fp32
 * product of the unrounded ones, and gives the same bits on 1 and 2
 * threads; so is each of a batch of products (gemm_batch);
 * attention in bf16 (batched per chunk of records) is fp32's within
 * bf16's tolerance, the same bits on 1 and 2 threads; for every encoding
 * a model's logits and gradient in bf16 are its fp32 ones within bf16's
 * tolerance.  A twin (gemm_bf16_twin) is what
 * products read in place of rounding its matrix, until it is untwinned;
 * a bf16 model twins its activations (4 a block) and the MLP's gradient,
 * and computes the same bits as without them.  Rounding a gradient
 * (gemm_bf16_pin) also sums its chunks for the bias gradient.  Where the CPU has no bf16 the products run
 * emulated (the same numbers, fp32 kernels).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemmref.h"
#include "nn.h"
#include "pe.h"
#include "vit.h"

static float
of_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static uint32_t
bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* The reference: of the two bf16 values around f (its bits truncated, and
 * one bf16 ulp further from zero), the nearer, ties to the even one; past
 * the largest bf16 the one further is infinity, at 2^128 for the
 * distance; a subnormal f is a zero of its sign (the CPU's conversion). */
static float
ref_round(float f)
{
	if (isnan(f) || isinf(f))
		return f;
	if (fpclassify(f) == FP_SUBNORMAL)
		return copysignf(0.0f, f);
	uint32_t lo = bits(f) & 0xffff0000u, hi = lo + 0x10000u;
	double vh = isinf(of_bits(hi)) ? copysign(0x1p128, f) : of_bits(hi);
	double dl = fabs((double)f - of_bits(lo)), dh = fabs(vh - f);
	if (dl < dh || (dl == dh && !(lo & 0x10000u)))
		return of_bits(lo);
	return of_bits(hi);
}

/* The value of element i of a rounded copy, as a float. */
static float
copy_value(const void *c, size_t i)
{
	if (gemm_bf16_size() == 4)
		return ((const float *)c)[i];
	return of_bits((uint32_t)((const uint16_t *)c)[i] << 16);
}

static void
test_round(void)
{
	enum { NV = 200000 };
	struct rng r;
	int bad = 0, subn = 0;
	float *v = malloc(sizeof(float) * NV);
	void *c16 = malloc(sizeof(float) * NV);
	rng_seed(&r, 3, 0);
	for (int i = 0; i < NV; i++) {
		/* random bits, values on and next to the ties, subnormals */
		uint32_t u = (uint32_t)rng_u64(&r);
		if (i % 2)
			u = (u & 0xffff0000u) | 0x8000u | (i % 4 == 1 ? 0 : 1);
		if (i % 50 == 3)
			u &= 0x807fffffu;
		float f = v[i] = of_bits(u), g = gemm_bf16_round(f),
		    want = ref_round(f);
		subn += fpclassify(f) == FP_SUBNORMAL;
		if (isnan(f) ? !isnan(g) : bits(g) != bits(want))
			bad++;
	}
	CHECK(bad == 0 && subn > 1000, "bf16 rounding: to nearest, ties to "
	    "even, subnormals to zero, on %d values, half of them ties or next "
	    "to one, %d subnormal (%d wrong)", NV, subn, bad);
	/* the rows' rounding (the CPU's conversion where it has one) */
	gemm_bf16_fill(c16, 0, 40, v, 40, NV / 40, 40);
	bad = 0;
	for (int i = 0; i < NV; i++)
		bad += isnan(v[i]) ? !isnan(copy_value(c16, i)) :
		    bits(copy_value(c16, i)) != bits(gemm_bf16_round(v[i]));
	CHECK(bad == 0, "gemm_bf16_fill rounds as gemm_bf16_round, bit for bit, "
	    "on the same values (%d differ)", bad);
	CHECK(signbit(gemm_bf16_round(-0x1p-130f)) &&
	    gemm_bf16_round(-0x1p-130f) == 0 &&
	    gemm_bf16_round(0x1p-126f - 0x1p-140f) == 0 &&
	    gemm_bf16_round(0x1p-126f) == 0x1p-126f, "bf16 rounding: a "
	    "subnormal, even the largest, to a zero of its sign; the smallest "
	    "normal kept");
	free(v);
	free(c16);
	CHECK(gemm_bf16_round(1.0f + 0x1p-8f) == 1.0f &&
	    gemm_bf16_round(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f &&
	    gemm_bf16_round(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f,
	    "bf16 rounding: 1 + 2^-8 -> 1, 1 + 3 2^-8 -> 1 + 2^-6 (ties to "
	    "even), past the tie -> up");
	CHECK(isinf(gemm_bf16_round(3.4e38f)) && isnan(gemm_bf16_round(NAN)) &&
	    signbit(gemm_bf16_round(-0.0f)) && isinf(gemm_bf16_round(-INFINITY)),
	    "bf16 rounding: past bf16's largest -> inf; NaN stays NaN; -0, "
	    "-inf kept");
}

static void
test_mode(void)
{
	__builtin_cpu_init();
	int has = __builtin_cpu_supports("avx512bf16");
	enum gemm_bf16 m = gemm_bf16_mode();
	CHECK(has ? m == GEMM_BF16_NATIVE : m == GEMM_BF16_NONE,
	    "bf16 found native exactly where the CPU has AVX512_BF16 (%s; "
	    "mode %d)", has ? "it has" : "it has not", (int)m);
	if (m == GEMM_BF16_NONE) {	/* a product refused: NaN, a reason, no exit */
		float a[4] = { 1, 2, 3, 4 }, c[4] = { 0 };
		struct err e;
		gemm_one(GEMM_BF16, 0, 0, 2, 2, 2, 1.0f, a, 2, a, 2, 0.0f, c, 2);
		CHECK(isnan(c[0]) && isnan(c[3]) && gemm_failed(&e) < 0 &&
		    strstr(e.msg, "matrix product: this CPU has no native bf16") != NULL,
		    "a bf16 product without bf16: NaN, and gemm_failed says why "
		    "(the process goes on)");
	} else
		CHECK(gemm_failed(NULL) == 0, "no product has failed");
	gemm_bf16_emulate();
	CHECK(gemm_bf16_mode() == (has ? GEMM_BF16_NATIVE : GEMM_BF16_EMULATED),
	    "emulation asked for: %s", has ? "native bf16 still used" :
	    "bf16 products emulated");
}

/* kind 0: gemm_one (in a team of one), 1: gemm_rows, 2: gemm_chunks with
 * a bias (transa 0, alpha 1, beta 1 on the bias rows). */
static void
run(int kind, enum gemm_prec p, int ta, int tb, int M, int N, int K,
    const float *a, int lda, const float *b, int ldb, const float *bias,
    float *c, int ldc)
{
	if (kind == 0) {
		int blas = gemm_solo_begin();
		#pragma omp parallel num_threads(1)
		gemm_one(p, ta, tb, M, N, K, 0.75f, a, lda, b, ldb, 0.5f, c, ldc);
		gemm_solo_end(blas);
	} else if (kind == 1)
		gemm_rows(p, ta, tb, M, N, K, 0.75f, a, lda, b, ldb, 0.5f, c, ldc);
	else
		gemm_chunks(p, tb, M, N, K, a, lda, b, ldb, bias, c, ldc, 64, NULL,
		    NULL);
}

static void
test_products(void)
{
	static const char *kinds[] = { "gemm_one", "gemm_rows", "gemm_chunks" };
	static const int shapes[][3] = { { 65, 65, 64 }, { 200, 37, 101 },
	    { 333, 70, 40 } };
	struct rng r;
	rng_seed(&r, 11, 0);
	for (int kind = 0; kind < 3; kind++)
		for (int s = 0; s < 3; s++)
			for (int t = 0; t < (kind == 2 ? 2 : 4); t++) {
				int ta = t >> 1, tb = t & 1;
				int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
				int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1,
				    ldc = N + 2;
				float *a = randn(&r, (size_t)(ta ? K : M) * lda);
				float *b = randn(&r, (size_t)(tb ? N : K) * ldb);
				float *bias = randn(&r, N);
				size_t nc = (size_t)M * ldc;
				float *c0 = randn(&r, nc), *c1 = malloc(sizeof(float) * nc);
				float *c2 = malloc(sizeof(float) * nc);
				float *cf = malloc(sizeof(float) * nc);
				if (kind == 2)
					for (int i = 0; i < M; i++)
						memcpy(c0 + (size_t)i * ldc, bias, sizeof(float) * N);
				memcpy(c1, c0, sizeof(float) * nc);
				memcpy(c2, c0, sizeof(float) * nc);
				memcpy(cf, c0, sizeof(float) * nc);
				omp_set_num_threads(2);
				run(kind, GEMM_BF16, ta, tb, M, N, K, a, lda, b, ldb, bias,
				    c1, ldc);
				run(kind, GEMM_FP32, ta, tb, M, N, K, a, lda, b, ldb, bias,
				    cf, ldc);
				omp_set_num_threads(1);
				run(kind, GEMM_BF16, ta, tb, M, N, K, a, lda, b, ldb, bias,
				    c2, ldc);
				float al = kind == 2 ? 1 : 0.75f, be = kind == 2 ? 1 : 0.5f;
				double e = err_units(ta, tb, M, N, K, al, a, lda, b, ldb, be,
				    c0, c1, ldc, gemm_bf16_round);
				double d = 0;
				for (size_t i = 0; i < nc; i++)
					d = maxn(d, fabs(c1[i] - cf[i]));
				CHECK(e <= 1 && d > 1e-3 && memcmp(c1, c2, sizeof(float) *
				    nc) == 0, "bf16 %s %dx%dx%d %s%s: the fp32 product of "
				    "the rounded operands (%.2f of the bound), %.1e from "
				    "fp32's, the same bits on 1 and 2 threads", kinds[kind],
				    M, N, K, ta ? "A^T" : "A", tb ? " B^T" : " B", e, d);
				free(a);
				free(b);
				free(bias);
				free(c0);
				free(c1);
				free(c2);
				free(cf);
			}
	omp_set_num_threads(2);
}

/* A batch of products (gemm_batch) as attention lays them out: n0
 * records of n1 heads side by side in each row, transposed or not: each
 * product is the fp32 product of its rounded operands. */
static void
test_batch(void)
{
	enum { n0 = 3, n1 = 2, M = 17, N = 9, K = 33 };
	struct rng r;
	rng_seed(&r, 12, 0);
	for (int t = 0; t < 4; t++) {
		float *a, *b;
		size_t na, nb;
		struct gemm_batch g = attn_batch(&r, t, n0, n1, M, N, K, &a, &na,
		    &b, &nb);
		float *c = malloc(sizeof(float) * n0 * n1 * M * N);
		void *a16 = malloc(na * 4), *b16 = malloc(nb * 4);
		gemm_bf16_fill(a16, 0, g.lda, a, g.lda, (int)(na / g.lda), g.lda);
		gemm_bf16_fill(b16, 0, g.ldb, b, g.ldb, (int)(nb / g.ldb), g.ldb);
		gemm_batch(GEMM_BF16, &g, a16, b16, c);
		double e = batch_err(&g, a, b, c, gemm_bf16_round);
		CHECK(e <= 1, "bf16 batch of %dx%d products %dx%dx%d %s%s: each "
		    "the fp32 product of its rounded operands (%.2f of the bound)",
		    n0, n1, M, N, K, g.ta ? "A^T" : "A", g.tb ? " B^T" : " B", e);
		free(a); free(b); free(c); free(a16); free(b16);
	}
}

/* attention in p on nthr threads: out, then dq, dk, dv in dqkv and
 * dlog sigma in dls (locality when ls) */
static void
attend(struct attn *a, enum gemm_prec p, int nthr, const float *qkv,
    const float *dout, const float *ls, float *out, float *P, float *dqkv,
    float *dls)
{
	int D = a->H * a->hd;
	float partial[64];
	a->prec = p;
	a->nthr = nthr;
	omp_set_num_threads(nthr);
	memset(dqkv, 0, sizeof(float) * a->B * a->T * 3 * D);
	memset(dls, 0, sizeof(float) * a->H);
	attention_forward(a, out, P, qkv, qkv + D, qkv + 2 * D, ls);
	attention_backward(a, dqkv, dqkv + D, dqkv + 2 * D, ls ? dls : NULL,
	    partial, dout, P, qkv, qkv + D, qkv + 2 * D, ls);
	omp_set_num_threads(2);
}

/* The largest |x - y| over n, in units of y's largest magnitude. */
static double
rel_gap(const float *x, const float *y, size_t n)
{
	double d = 0, m = 0;
	for (size_t i = 0; i < n; i++) {
		d = maxn(d, fabs(x[i] - y[i]));
		m = fmax(m, fabs(y[i]));
	}
	return d / m;
}

/* Attention in bf16 (records in chunks, batched products) against fp32
 * (per pair): its output and gradients within bf16's tolerance, not
 * fp32's bits, and the same bits on 1 and 2 threads; with and without
 * locality focusing (distances per record), every query or the CLS row
 * only, over records that do not fill the last chunk. */
static void
test_attention16(void)
{
	enum { B = 10, T = 17, H = 3, hd = 16, D = H * hd };
	struct rng r;
	rng_seed(&r, 13, 0);
	size_t n = (size_t)B * T * 3 * D, no = (size_t)B * T * D;
	float *qkv = randn(&r, n), *dout = randn(&r, no), *d2 = malloc(sizeof(float) * B * T * T);
	for (int i = 0; i < B * T * T; i++)
		d2[i] = (float)(i % 7) * 0.5f;
	float ls[H] = { 0.1f, -0.3f, 0.5f };
	float *scr = malloc(sizeof(float) * 2 * 2 * T * T), *P = malloc(sizeof(float) * B * H * T * T);
	float *o[4], *g[4], dl[4][H];
	/* qkv's rounded copy (attn's qkvc), and q, k, v all NaN beside it */
	void *qkvc = malloc(n * (size_t)gemm_bf16_size());
	float *nan = malloc(sizeof(float) * n);
	gemm_bf16_fill(qkvc, 0, 3 * D, qkv, 3 * D, B * T, 3 * D);
	for (size_t i = 0; i < n; i++)
		nan[i] = NAN;
	for (int i = 0; i < 4; i++) {
		o[i] = malloc(sizeof(float) * no);
		g[i] = malloc(sizeof(float) * n);
	}
	for (int loc = 0; loc < 2; loc++)
		for (int cls = 0; cls < 2; cls++) {
			struct attn a = { .B = B, .T = T, .Tq = cls ? 1 : T, .H = H,
			    .hd = hd, .ldqk = 3 * D, .ldv = 3 * D, .dist2 = d2,
			    .dist_per_record = 1, .scratch = scr };
			const float *l = loc ? ls : NULL;
			size_t nq = (size_t)B * a.Tq * D;
			attend(&a, GEMM_FP32, 2, qkv, dout, l, o[0], P, g[0], dl[0]);
			attend(&a, GEMM_BF16, 2, qkv, dout, l, o[1], P, g[1], dl[1]);
			attend(&a, GEMM_BF16, 1, qkv, dout, l, o[2], P, g[2], dl[2]);
			double eo = rel_gap(o[1], o[0], nq), eg = rel_gap(g[1], g[0], n);
			double el = loc ? rel_gap(dl[1], dl[0], H) : 0;
			a.qkvc = qkvc;
			attend(&a, GEMM_BF16, 2, nan, dout, l, o[3], P, g[3], dl[3]);
			a.qkvc = NULL;
			double co = rel_gap(o[3], o[1], nq), cg = rel_gap(g[3], g[1], n);
			CHECK(co < 1e-5 && cg < 1e-5 && (!loc || rel_gap(dl[3], dl[1], H) < 1e-5),
			    "bf16 attention%s%s from a rounded copy of q, k, v (NaN "
			    "beside it): output within %.1e, gradients %.1e of its "
			    "own rounding", loc ? " with locality" : "",
			    cls ? ", CLS query only" : "", co, cg);
			CHECK(eo < 0.02 && eg < 0.02 && el < 0.02 && eo > 1e-5 &&
			    memcmp(o[1], o[2], sizeof(float) * nq) == 0 &&
			    memcmp(g[1], g[2], sizeof(float) * n) == 0 &&
			    memcmp(dl[1], dl[2], sizeof dl[1]) == 0,
			    "bf16 attention%s%s, %d records: output within %.4f of "
			    "fp32's largest, dq, dk, dv within %.4f, dlog sigma %.4f "
			    "(bf16 took effect); the same bits on 1 and 2 threads",
			    loc ? " with locality" : "", cls ? ", CLS query only" : "",
			    B, eo, eg, el);
		}
	for (int i = 0; i < 4; i++) {
		free(o[i]);
		free(g[i]);
	}
	free(qkv); free(dout); free(d2); free(scr); free(P); free(qkvc); free(nan);
}

/* Free places in the table of twins, found by filling it with twins of
 * dummy's elements (left there when keep, else untwinned again). */
static float dummy[65];
static int
twin_room(int keep)
{
	static uint32_t copy[1];
	int n = 0;
	while (n < 65 && gemm_bf16_twin(dummy + n, copy, 1, 1) == 0)
		n++;
	if (!keep)
		for (int i = 0; i < n; i++)
			gemm_bf16_untwin(dummy + i);
	return n;
}

/* An epilogue that keeps the rows it is given, ldc N (test_nobuffer). */
struct keep {
	float	*out;
	int	 N, calls;
};

static void
keep_rows(void *arg, float *c, int r0, int n)
{
	struct keep *k = arg;
	#pragma omp atomic
	k->calls++;
	if (c != NULL)
		memcpy(k->out + (size_t)r0 * k->N, c, sizeof(float) * n * k->N);
}

/* gemm_chunks with C NULL: each chunk's rows, with the bias, reach the
 * epilogue as they would reach C, bit for bit, on 1 and 2 threads. */
static void
test_nobuffer(void)
{
	enum { M = 300, K = 40, N = 56, CH = 64 };
	struct rng r;
	rng_seed(&r, 37, 0);
	float *a = randn(&r, (size_t)M * K), *w = randn(&r, (size_t)N * K);
	float *bias = randn(&r, N), *c = malloc(sizeof(float) * M * N);
	float *kept = calloc((size_t)M * N, sizeof(float));
	int bad = 0;
	gemm_chunks(GEMM_BF16, 1, M, N, K, a, K, w, K, bias, c, N, CH, NULL,
	    NULL);
	for (int nthr = 1; nthr <= 2; nthr++) {
		struct keep k = { kept, N, 0 };
		omp_set_num_threads(nthr);
		memset(kept, 0, sizeof(float) * M * N);
		gemm_chunks(GEMM_BF16, 1, M, N, K, a, K, w, K, bias, NULL, N,
		    CH, keep_rows, &k);
		bad += k.calls != (M + CH - 1) / CH ||
		    memcmp(kept, c, sizeof(float) * M * N) != 0;
	}
	omp_set_num_threads(2);
	CHECK(bad == 0, "gemm_chunks without C: the epilogue gets each "
	    "chunk's rows, bias added, bit for bit as C gets them (1 and 2 "
	    "threads)");
	free(a); free(w); free(bias); free(c); free(kept);
}

/* A twin is read by every kind of product in place of its matrix, a block
 * of it included; untwinned, the matrix is rounded again.  gemm_bf16_fill
 * rounds a block from rows of another stride. */
static void
test_twins(void)
{
	enum { M = 150, K = 40, N = 24 };
	struct rng r;
	rng_seed(&r, 31, 0);
	float *a = randn(&r, (size_t)M * K), *a2 = malloc(sizeof(float) * M * K);
	float *dy = randn(&r, (size_t)40 * K), *w = randn(&r, (size_t)N * K);
	void *c16 = malloc((size_t)M * K * 4);
	float c0[M * N], c1[M * N], c2[M * N], g1[K * K], g2[K * K];
	for (size_t i = 0; i < (size_t)M * K; i++)
		a2[i] = 2 * a[i];
	/* the copy holds 2a, filled in two blocks of rows */
	gemm_bf16_fill(c16, 0, K, a2, K, 100, K);
	gemm_bf16_fill(c16, (size_t)100 * K, K, a2 + 100 * K, K, M - 100, K);
	int room = twin_room(0);
	CHECK(gemm_bf16_twin(a, c16, M, K) == 0, "a twin is registered (%d "
	    "places were free)", room);
	CHECK(twin_room(0) == room - 1, "... and takes one place");
	for (int kind = 0; kind < 3; kind++) {
		memset(c0, 0, sizeof c0);
		memset(c1, 0, sizeof c1);
		memset(c2, 0, sizeof c2);
		/* a w^T */
		if (kind < 2) {
			run(kind, GEMM_BF16, 0, 1, M, N, K, a, K, w, K, NULL, c1, N);
			run(kind, GEMM_BF16, 0, 1, M, N, K, a2, K, w, K, NULL, c2, N);
		} else {
			gemm_chunks(GEMM_BF16, 1, M, N, K, a, K, w, K, NULL, c1, N,
			    64, NULL, NULL);
			gemm_chunks(GEMM_BF16, 1, M, N, K, a2, K, w, K, NULL, c2, N,
			    64, NULL, NULL);
		}
		CHECK(memcmp(c1, c2, sizeof c1) == 0, "%s reads the twin, not "
		    "the matrix", kind == 0 ? "gemm_one" : kind == 1 ? "gemm_rows" :
		    "gemm_chunks");
	}
	memset(g1, 0, sizeof g1);
	memset(g2, 0, sizeof g2);
	/* dy^T a[40 .. 80] */
	gemm_rows(GEMM_BF16, 1, 0, K, K, 40, 1.0f, dy, K, a + 40 * K, K, 0.0f,
	    g1, K);
	gemm_rows(GEMM_BF16, 1, 0, K, K, 40, 1.0f, dy, K, a2 + 40 * K, K, 0.0f,
	    g2, K);
	CHECK(memcmp(g1, g2, sizeof g1) == 0, "a block of the matrix as a "
	    "weight gradient's B: the twin's block");
	size_t bad = 0;
	for (size_t i = 0; i < (size_t)M * K; i++)
		bad += copy_value(c16, i) != gemm_bf16_round(a2[i]);
	CHECK(bad == 0, "gemm_bf16_fill: every element rounded, in place "
	    "(%zu not)", bad);
	gemm_bf16_untwin(a);
	CHECK(twin_room(0) == room, "untwinned: its place is free again");
	memset(c1, 0, sizeof c1);
	run(1, GEMM_BF16, 0, 1, M, N, K, a, K, w, K, NULL, c1, N);
	CHECK(memcmp(c1, c2, sizeof c1) != 0, "... and the products round the "
	    "matrix again");
	free(a);
	free(a2);
	free(dy);
	free(w);
	free(c16);
}

/* gemm_bf16_pin's sums: each chunk's, bit for bit colsum_chunk's, from
 * the pass that rounds (1 and 2 threads), and none where the matrix is
 * twinned; linear_backward_ep's bias shares the same in bf16 (made by
 * that pass) as in fp32 (by dx's chunks), with and without an epilogue
 * of the caller's. */
static void
test_pin_sums(void)
{
	enum { N = 300, No = 40, Ni = 24, CH = 64, NC = (N + CH - 1) / CH };
	struct rng r;
	rng_seed(&r, 41, 0);
	float *dy = randn(&r, (size_t)N * No), *x = randn(&r, (size_t)N * Ni);
	float *w = randn(&r, (size_t)No * Ni), *dx = malloc(sizeof(float) * N * Ni);
	float ref[NC * No], part[NC * No], dw[No * Ni];
	void *c16 = malloc((size_t)N * No * 4);
	for (int i = 0; i < NC; i++)
		colsum_chunk(ref, CH, No, dy + (size_t)i * CH * No, i * CH,
		    N - i * CH < CH ? N - i * CH : CH);
	int bad = 0;
	for (int nthr = 1; nthr <= 2; nthr++) {
		omp_set_num_threads(nthr);
		memset(part, 0xff, sizeof part);
		bad += gemm_bf16_pin(dy, N, No, CH, part) != 1 ||
		    memcmp(part, ref, sizeof ref) != 0;
		gemm_bf16_unpin();
	}
	omp_set_num_threads(2);
	CHECK(bad == 0, "gemm_bf16_pin with part: each chunk's sums, bit for "
	    "bit colsum_chunk's (1 and 2 threads)");
	CHECK(gemm_bf16_twin(dy, c16, N, No) == 0, "a twin of dy");
	memset(part, 0xff, sizeof part);
	int made = gemm_bf16_pin(dy, N, No, CH, part);
	gemm_bf16_unpin();
	gemm_bf16_untwin(dy);
	CHECK(made == 0 && bits(part[0]) == 0xffffffffu, "twinned: no "
	    "pass, no sums (returns 0)");
	struct keep k = { dx, Ni, 0 };
	for (int kind = 0; kind < 4; kind++) {
		enum gemm_prec p = kind & 1 ? GEMM_BF16 : GEMM_FP32;
		memset(part, 0xff, sizeof part);
		memset(dw, 0, sizeof dw);
		k.calls = 0;
		linear_backward_ep(p, dx, dw, NULL, part, dy, x, w, N, Ni, No, CH,
		    kind & 2 ? keep_rows : NULL, &k);
		CHECK(memcmp(part, ref, sizeof ref) == 0 && k.calls ==
		    (kind & 2 ? NC : 0), "linear_backward_ep in %s%s: the bias "
		    "shares are colsum_chunk's, bit for bit", p == GEMM_BF16 ?
		    "bf16" : "fp32", kind & 2 ? " with an epilogue" : "");
	}
	free(dy); free(x); free(w); free(dx); free(c16);
}

/* A model of every encoding: its logits and gradient in bf16 against fp32
 * from the same parameters, relative to the largest (logits) and to the
 * norm (gradient).  bf16 keeps 8 bits: products of depth 2 land within a
 * few 2^-8 (measured: at most 0.01). */
static void
model(const char *pe, int axes)
{
	enum { B = 4, C = 7 };
	struct vit_config c;
	struct err e;
	vit_config_init(&c);
	c.dim = 128;
	c.depth = 2;
	c.heads = 2;
	c.mlp = 96;
	c.classes = C;
	c.P = 12;
	c.axes = axes;
	for (int k = 0; k < axes; k++)
		c.grid[k] = 3;
	snprintf(c.pe, sizeof c.pe, "%s", pe);
	int T = axes == 3 ? 27 : 9;
	struct vit *m = vit_create(&c, B, T, 5, &e);
	if (m == NULL) {
		CHECK(0, "%s %dD: %s", pe, axes, e.msg);
		return;
	}
	struct rng r;
	rng_seed(&r, 21, 0);
	float *x = randn(&r, (size_t)B * T * c.P);
	float *pos = malloc(sizeof(float) * B * T * axes);
	float target[B * C] = { 0 }, lf[B * C], lb[B * C];
	for (int b = 0; b < B; b++) {
		target[b * C + b] = 1;
		for (int t = 0; t < T; t++)
			for (int k = 0, rem = t; k < axes; k++, rem /= 3)
				pos[((size_t)b * T + t) * axes + axes - 1 - k] = rem % 3;
	}
	float *g = malloc(sizeof(float) * m->nparam);
	double lmax = 0, ld = 0, gn = 0, gd = 0;
	for (int k = 0; k < 2; k++) {
		m->prec = k ? GEMM_BF16 : GEMM_FP32;
		vit_zero_grad(m);
		vit_forward(m, x, pos, B, T, target, k ? lb : lf, 1, 1);
		vit_backward(m);
		vit_grad_complete(m);
		if (k == 0)
			memcpy(g, m->grad, sizeof(float) * m->nparam);
	}
	for (int i = 0; i < B * C; i++) {
		lmax = maxn(lmax, fabs(lf[i]));
		ld = maxn(ld, fabs(lb[i] - lf[i]));
	}
	for (size_t i = 0; i < m->nparam; i++) {
		gn += (double)g[i] * g[i];
		gd += ((double)m->grad[i] - g[i]) * ((double)m->grad[i] - g[i]);
	}
	double el = ld / lmax, eg = sqrt(gd / gn);
	CHECK(el < 0.02 && eg < 0.02 && el > 0 && eg > 0, "%s %dD: bf16 logits "
	    "within %.4f of fp32's largest, the gradient within %.4f of its "
	    "norm (bf16 took effect; tolerance 0.02)", pe, axes, el, eg);
	/* the same model without twins (the table full): the same bits */
	int room = twin_room(1);
	CHECK(room == 64 - 4 * c.depth - 1, "%s %dD: the model twins 4 "
	    "activations a block and the MLP's gradient (%d places left)", pe,
	    axes, room);
	struct vit *m2 = vit_create(&c, B, T, 5, &e);
	float l2[B * C];
	m2->prec = GEMM_BF16;
	vit_zero_grad(m2);
	vit_forward(m2, x, pos, B, T, target, l2, 1, 1);
	vit_backward(m2);
	vit_grad_complete(m2);
	CHECK(memcmp(l2, lb, sizeof lb) == 0 && memcmp(m2->grad, m->grad,
	    sizeof(float) * m->nparam) == 0, "%s %dD: without twins the same "
	    "logits and gradient, bit for bit", pe, axes);
	vit_destroy(m2);
	for (int i = 0; i < room; i++)
		gemm_bf16_untwin(dummy + i);
	vit_destroy(m);
	CHECK(twin_room(0) == 64, "%s %dD: destroyed, the model's twins are "
	    "gone", pe, axes);
	free(x);
	free(pos);
	free(g);
}

static void
test_models(void)
{
	char list[1024];
	pe_examples(list, sizeof list);
	for (char *p = strtok(list, ","); p != NULL; p = strtok(NULL, ","))
		model(p, 2);
	model("liere:8", 3);
	model("rope-mixed", 3);
}

int
main(void)
{
	omp_set_num_threads(2);
	test_mode();
	test_round();	/* after test_mode: emulated where the CPU has no bf16 */
	test_products();
	test_batch();
	test_attention16();
	test_twins();
	test_nobuffer();
	test_pin_sums();
	test_models();
	return test_done();
}
