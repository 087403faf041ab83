/*
 * bench_sgemm.c - OpenBLAS sgemm GFLOP/s on 2048^3 at 1 and all threads,
 * with the kernels OpenBLAS runs (cli_init picks SkylakeX on AVX-512 CPUs;
 * sgemm_haswell.sh runs this again with OpenBLAS's own 0.3.21 choice).
 */
#include <stdio.h>
#include <stdlib.h>

#include <cblas.h>
#include <omp.h>

#include "cli.h"

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
	free(a);
	free(b);
	free(c);
	return 0;
}
