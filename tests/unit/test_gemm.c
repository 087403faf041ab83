/*
 * test_gemm.c - the matrix backends (lib/nn/gemm.c): OpenBLAS and oneDNN
 * each give a product within float rounding of a double one, on odd
 * shapes, every transpose and padded leading dimensions; each gives the
 * same bits on 1 and 2 threads (row blocks, chunks, and a product of one
 * block that oneDNN would otherwise thread itself); the backends' names;
 * the time of products and epilogues counted where it belongs while
 * timing is on (nn.h's work), and only then.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "gemmref.h"
#include "nn.h"

static const enum gemm_backend backends[] = { GEMM_OPENBLAS, GEMM_ONEDNN };

/* Every backend, every transpose, odd shapes with padded leading
 * dimensions: within rounding of the double product, the two backends
 * within twice that of each other, and the same bits on 1 and 2 threads. */
static void
test_products(void)
{
	static const int shape[][3] = { { 1, 1, 1 }, { 7, 5, 3 }, { 13, 17, 129 },
	    { 97, 33, 65 }, { 65, 65, 64 }, { 65, 64, 65 }, { 301, 29, 1001 },
	    { 200, 192, 48 } };
	struct rng r;
	rng_seed(&r, 7, 0);
	for (size_t s = 0; s < sizeof shape / sizeof *shape; s++)
		for (int t = 0; t < 4; t++) {
			int M = shape[s][0], N = shape[s][1], K = shape[s][2];
			int ta = t >> 1, tb = t & 1;
			int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
			size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb;
			size_t nc = (size_t)M * ldc;
			float *a = randn(&r, na), *b = randn(&r, nb), *c0 = randn(&r, nc);
			float *c[2], *c1 = malloc(sizeof(float) * nc);
			double worst = 0, diff = 0;
			int same = 1;
			for (int k = 0; k < 2; k++) {
				gemm_force(backends[k]);
				c[k] = malloc(sizeof(float) * nc);
				memcpy(c[k], c0, sizeof(float) * nc);
				memcpy(c1, c0, sizeof(float) * nc);
				omp_set_num_threads(2);
				gemm_rows(GEMM_FP32, ta, tb, M, N, K, 0.75f, a, lda, b,
				    ldb, 0.5f, c[k], ldc);
				omp_set_num_threads(1);
				gemm_rows(GEMM_FP32, ta, tb, M, N, K, 0.75f, a, lda, b,
				    ldb, 0.5f, c1, ldc);
				same &= memcmp(c[k], c1, sizeof(float) * nc) == 0;
				worst = maxn(worst, err_units(ta, tb, M, N, K, 0.75f, a,
				    lda, b, ldb, 0.5f, c0, c[k], ldc, NULL));
			}
			for (size_t i = 0; i < nc; i++)
				diff = maxn(diff, fabs(c[0][i] - c[1][i]));
			CHECK(worst <= 1, "%dx%dx%d %s%s: both backends within float "
			    "rounding (%.2f of the bound; they differ by %.1e)", M, N, K,
			    ta ? "A^T" : "A", tb ? " B^T" : " B", worst, diff);
			CHECK(same, "%dx%dx%d %s%s: each backend the same bits on 1 "
			    "and 2 threads", M, N, K, ta ? "A^T" : "A", tb ? " B^T" : " B");
			free(a);
			free(b);
			free(c0);
			free(c[0]);
			free(c[1]);
			free(c1);
		}
}

/* gemm_batch in fp32, laid out as attention's (a record's rows hold its
 * heads' blocks), every transpose: by each backend each product within
 * float rounding, and OpenBLAS's the bits of the same products one call
 * each (gemm_one). */
static void
test_batch(void)
{
	/* a chunk of 4 records of 3 heads of 16, 65 tokens */
	enum { n0 = 4, n1 = 3, M = 65, N = 16, K = 65 };
	struct rng r;
	rng_seed(&r, 13, 0);
	for (int t = 0; t < 4; t++) {
		float *a, *b;
		size_t na, nb, nc = (size_t)n0 * n1 * M * N;
		struct gemm_batch g = attn_batch(&r, t, n0, n1, M, N, K, &a, &na,
		    &b, &nb);
		float *c = malloc(sizeof(float) * nc), *one = malloc(sizeof(float) * nc);
		for (int k = 0; k < 2; k++) {
			gemm_force(backends[k]);
			gemm_batch(GEMM_FP32, &g, a, b, c);
			double e = batch_err(&g, a, b, c, NULL);
			CHECK(e <= 1, "%s: fp32 batch of %dx%d products %dx%dx%d "
			    "%s%s: each within float rounding (%.2f of the bound)",
			    gemm_backend_name(backends[k]), n0, n1, M, N, K,
			    g.ta ? "A^T" : "A", g.tb ? " B^T" : " B", e);
			if (backends[k] != GEMM_OPENBLAS)
				continue;
			for (int i = 0; i < n0; i++)
				for (int j = 0; j < n1; j++)
					gemm_one(GEMM_FP32, g.ta, g.tb, M, N, K, 0.75f,
					    a + i * g.sa[0] + j * g.sa[1], g.lda,
					    b + i * g.sb[0] + j * g.sb[1], g.ldb, 0.0f,
					    one + i * g.sc[0] + j * g.sc[1], N);
			CHECK(memcmp(c, one, sizeof(float) * nc) == 0,
			    "... OpenBLAS's the bits of its products one call each");
		}
		gemm_force(GEMM_AUTO);
		free(a); free(b); free(c); free(one);
	}
}

/* gemm_chunks with a bias, W and W^T: within rounding, and the same bits
 * on 1 and 2 threads. */
static void
test_chunks(void)
{
	enum { M = 333, N = 40, K = 70, CH = 64 };
	struct rng r;
	rng_seed(&r, 8, 0);
	float *a = randn(&r, M * K), *w = randn(&r, N * K), *bias = randn(&r, N);
	float *c0 = malloc(sizeof(float) * M * N), *c1 = malloc(sizeof(float) * M * N);
	float *c2 = malloc(sizeof(float) * M * N);
	for (int i = 0; i < M; i++)
		memcpy(c0 + i * N, bias, sizeof(float) * N);
	for (int k = 0; k < 2; k++)
		for (int tb = 0; tb < 2; tb++) {
			gemm_force(backends[k]);
			omp_set_num_threads(2);
			gemm_chunks(GEMM_FP32, tb, M, N, K, a, K, w, tb ? K : N, bias,
			    c1, N, CH, NULL, NULL);
			omp_set_num_threads(1);
			gemm_chunks(GEMM_FP32, tb, M, N, K, a, K, w, tb ? K : N, bias,
			    c2, N, CH, NULL, NULL);
			double e = err_units(0, tb, M, N, K, 1, a, K, w, tb ? K : N, 1,
			    c0, c1, N, NULL);
			CHECK(e <= 1 && memcmp(c1, c2, sizeof(float) * M * N) == 0,
			    "gemm_chunks by %s, W%s, bias: within rounding (%.2f), same "
			    "bits on 1 and 2 threads", gemm_backend_name(backends[k]),
			    tb ? "^T" : "", e);
		}
	free(a);
	free(w);
	free(bias);
	free(c0);
	free(c1);
	free(c2);
}

/* An epilogue that takes its time (test_work): sleeps 2 ms a chunk. */
static void
slow_rows(void *arg, float *c, int r0, int n)
{
	double t = omp_get_wtime();
	while (omp_get_wtime() - t < 2e-3)
		;
}

/* Where a step's time goes (nn.h's work): while timing is on, gemm_chunks
 * adds its products' and its epilogues' thread time, each where it
 * belongs; off, nothing is added, and turning it on zeroes the sums. */
static void
test_work(void)
{
	enum { M = 256, N = 40, K = 70, CH = 64 };
	struct rng r;
	rng_seed(&r, 9, 0);
	float *a = randn(&r, M * K), *w = randn(&r, N * K);
	float *c = malloc(sizeof(float) * M * N);
	double t[WORK_KINDS];
	omp_set_num_threads(2);
	work_timing(1);
	gemm_chunks(GEMM_FP32, 1, M, N, K, a, K, w, K, NULL, c, N, CH,
	    slow_rows, NULL);
	work_times(t);
	/* 4 chunks of 2 ms: 8 ms of thread time in the epilogues */
	CHECK(t[WORK_EPILOGUE] >= 8e-3 && t[WORK_EPILOGUE] < 0.5 &&
	    t[WORK_PRODUCT] > 0 && t[WORK_ROUNDING] == 0 &&
	    t[WORK_ATTENTION] == 0, "timing on: epilogues %.1f ms (4 chunks "
	    "of 2 ms), products %.3f ms, no rounding, no attention", t[WORK_EPILOGUE] *
	    1e3, t[WORK_PRODUCT] * 1e3);
	work_timing(0);
	CHECK(work_begin() == 0, "timing off: no start time");
	gemm_chunks(GEMM_FP32, 1, M, N, K, a, K, w, K, NULL, c, N, CH,
	    slow_rows, NULL);
	double u[WORK_KINDS];
	work_times(u);
	CHECK(memcmp(t, u, sizeof t) == 0, "timing off: nothing added");
	work_timing(1);
	work_times(u);
	CHECK(u[WORK_PRODUCT] == 0 && u[WORK_EPILOGUE] == 0, "timing on again: "
	    "the sums start from zero");
	work_timing(0);
	free(a);
	free(w);
	free(c);
}

/*
 * A basis gradient (rotary.c's dP: head_dim x head_dim over every row of
 * the batch) is one block: gemm_rows runs it in a team of one, which is no
 * active parallel region, where oneDNN would thread the call itself and
 * split it over its threads.  Its bits on 2 threads must be those on 1,
 * and the caller's thread count must be left as it was.
 */
static void
test_one_block(void)
{
	enum { M = 64, N = 64, K = 8320 };
	struct rng r;
	rng_seed(&r, 9, 0);
	float *a = randn(&r, (size_t)K * M), *b = randn(&r, (size_t)K * N);
	float *c1 = calloc(M * N, sizeof(float)), *c2 = calloc(M * N, sizeof(float));
	gemm_force(GEMM_ONEDNN);
	omp_set_num_threads(2);
	gemm_rows(GEMM_FP32, 1, 0, M, N, K, 1, a, M, b, N, 0, c1, N);
	CHECK(omp_get_max_threads() == 2, "oneDNN: the caller keeps its 2 threads");
	omp_set_num_threads(1);
	gemm_rows(GEMM_FP32, 1, 0, M, N, K, 1, a, M, b, N, 0, c2, N);
	CHECK(memcmp(c1, c2, sizeof(float) * M * N) == 0,
	    "oneDNN, one block of %d x %d over %d: the same bits on 1 and 2 "
	    "threads", M, N, K);
	free(a);
	free(b);
	free(c1);
	free(c2);
}

static void
test_names(void)
{
	CHECK(gemm_backend_parse("auto") == GEMM_AUTO &&
	    gemm_backend_parse("openblas") == GEMM_OPENBLAS &&
	    gemm_backend_parse("onednn") == GEMM_ONEDNN &&
	    gemm_backend_parse("OpenBLAS") == -1 && gemm_backend_parse("") == -1,
	    "backend names: auto, openblas, onednn, nothing else");
	for (int k = 0; k < 2; k++) {
		gemm_force(backends[k]);
		CHECK(gemm_backend_of(GEMM_ONE) == backends[k] &&
		    gemm_backend_of(GEMM_ROWS) == backends[k] &&
		    gemm_backend_of(GEMM_CHUNKS) == backends[k],
		    "forced %s: every kind of product by it",
		    gemm_backend_name(backends[k]));
	}
	/* auto: the chunked products by oneDNN, the weight gradients by
	 * OpenBLAS, the per-head products by oneDNN without AVX-512 */
	gemm_force(GEMM_AUTO);
	int avx512 = __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
	    __builtin_cpu_supports("avx512dq");
	CHECK(gemm_backend_of(GEMM_ONE) == (avx512 ? GEMM_OPENBLAS : GEMM_ONEDNN) &&
	    gemm_backend_of(GEMM_ROWS) == GEMM_OPENBLAS &&
	    gemm_backend_of(GEMM_CHUNKS) == GEMM_ONEDNN &&
	    gemm_backend_of(GEMM_BATCH) == GEMM_ONEDNN,
	    "auto on this CPU (%s): single products by %s, row blocks by "
	    "openblas, chunks and batches by onednn", avx512 ? "AVX-512" : "AVX2",
	    gemm_backend_name(gemm_backend_of(GEMM_ONE)));
}

int
main(void)
{
	test_names();
	test_products();
	test_chunks();
	test_batch();
	test_one_block();
	test_work();
	return test_done();
}
