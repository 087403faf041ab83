/*
 * bench_sgemm.c - OpenBLAS sgemm GFLOP/s on 2048^3 at 1 and all threads,
 * with the kernels OpenBLAS runs (cli_init picks SkylakeX on AVX-512 CPUs;
 * sgemm_haswell.sh runs this again with OpenBLAS's own 0.3.21 choice).
 * Then, on one thread, the reference ViT's block products (4160 rows: the
 * rows one of two threads gets at batch 128) cut into calls of m rows, as
 * gemm_chunks does: each call packs the weight operand again, which is
 * what sets GEMM_CHUNK (nn.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>
#include <omp.h>

#include "cli.h"

/* GFLOP/s of C[M][N] = A[M][K] op(W) in calls of m rows, best of 5. */
static void
chunks(const float *a, const float *w, float *c)
{
	/* K, N, W transposed: qkv, proj, fc1, fc2; fc2's, fc1's, qkv's dx */
	static const int shape[][3] = { { 192, 576, 0 }, { 192, 192, 0 },
	    { 192, 768, 0 }, { 768, 192, 0 }, { 192, 768, 1 }, { 768, 192, 1 },
	    { 576, 192, 1 } };
	static const int rows[] = { 256, 512, 1024, 2048, 4160 };
	enum { M = 4160 };

	cli_threads(1);
	printf("block products, %d rows in calls of m rows, 1 thread, GFLOP/s\n"
	    "    K    N  W^T     m=256   m=512  m=1024  m=2048  m=4160\n", M);
	for (size_t s = 0; s < sizeof shape / sizeof *shape; s++) {
		int K = shape[s][0], N = shape[s][1], tw = shape[s][2];
		printf("%5d %4d %4s", K, N, tw ? "yes" : "no");
		for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
			double best = 1e30;
			for (int r = 0; r < 5; r++) {
				double t0 = now_seconds();
				for (int r0 = 0; r0 < M; r0 += rows[i]) {
					int m = M - r0 < rows[i] ? M - r0 : rows[i];
					cblas_sgemm(CblasRowMajor, CblasNoTrans,
					    tw ? CblasTrans : CblasNoTrans, m, N, K, 1.0f,
					    a + (size_t)r0 * K, K, w, tw ? K : N, 0.0f,
					    c + (size_t)r0 * N, N);
				}
				if (now_seconds() - t0 < best)
					best = now_seconds() - t0;
			}
			printf("  %6.1f", 2.0 * M * N * K / best / 1e9);
		}
		printf("\n");
	}
}

int
main(int argc, char *argv[])
{
	enum { N = 2048, REPS = 5 };
	float *a, *b, *c;

	cli_init(argc, argv);
	a = aligned_alloc(64, sizeof(float) * N * N);
	b = aligned_alloc(64, sizeof(float) * N * N);
	c = aligned_alloc(64, sizeof(float) * N * N);
	if (!a || !b || !c)
		die("out of memory");
	for (long i = 0; i < (long)N * N; i++) {
		a[i] = (float)(i % 7) * 0.1f;
		b[i] = (float)(i % 5) * 0.1f;
	}
	for (int t = 1; t <= omp_get_num_procs(); t *= 2) {
		double best = 1e30;
		cli_threads(t);
		for (int r = 0; r <= REPS; r++) {	/* the first run warms up */
			double t0 = now_seconds();
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N,
			    1.0f, a, N, b, N, 0.0f, c, N);
			if (r > 0 && now_seconds() - t0 < best)
				best = now_seconds() - t0;
		}
		printf("sgemm %d^3  kernels %-10s %d thread%s  %6.1f GFLOP/s\n", N,
		    openblas_get_corename(), t, t > 1 ? "s" : " ", 2.0 * N * N * N / best / 1e9);
	}
	chunks(a, b, c);
	free(a);
	free(b);
	free(c);
	return 0;
}
