/*
 * bench_stream.c - the memory bandwidth the elementwise passes of a
 * training step live within: copy, triad (a = b + s c) and a read-only
 * dot product over arrays far larger than the caches, on the OpenMP
 * threads (OMP_NUM_THREADS), best of 10.  GB/s count the bytes each loop
 * names (a store's write-allocate read is not counted).  The figure
 * behind doc/performance.md's bf16 traffic arithmetic.
 */
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

enum { N = 1 << 24, REPS = 10 };	/* 128 MB an array */

int
main(void)
{
	double *a = malloc(sizeof *a * N), *b = malloc(sizeof *b * N);
	double *c = malloc(sizeof *c * N);
	double best[3] = { 1e9, 1e9, 1e9 }, sum = 0;

	if (a == NULL || b == NULL || c == NULL) {
		fprintf(stderr, "bench_stream: out of memory\n");
		return 1;
	}
	#pragma omp parallel for schedule(static)
	for (long i = 0; i < N; i++) {
		a[i] = 0;
		b[i] = 1;
		c[i] = 2;
	}
	for (int k = 0; k < REPS; k++) {
		double t[4], s = 0;

		t[0] = omp_get_wtime();
		#pragma omp parallel for schedule(static)
		for (long i = 0; i < N; i++)
			a[i] = b[i];
		t[1] = omp_get_wtime();
		#pragma omp parallel for schedule(static)
		for (long i = 0; i < N; i++)
			a[i] = b[i] + 3.0 * c[i];
		t[2] = omp_get_wtime();
		#pragma omp parallel for schedule(static) reduction(+:s)
		for (long i = 0; i < N; i++)
			s += a[i] * c[i];
		t[3] = omp_get_wtime();
		sum += s;
		for (int j = 0; j < 3; j++)
			if (t[j + 1] - t[j] < best[j])
				best[j] = t[j + 1] - t[j];
	}
	printf("memory bandwidth, %d threads, %d MB arrays: copy %.1f GB/s, "
	    "triad %.1f GB/s, read %.1f GB/s (checksum %.0f)\n",
	    omp_get_max_threads(), (int)(sizeof *a * N >> 20),
	    2.0 * sizeof *a * N / best[0] / 1e9,
	    3.0 * sizeof *a * N / best[1] / 1e9,
	    2.0 * sizeof *a * N / best[2] / 1e9, sum);
	free(a);
	free(b);
	free(c);
	return 0;
}
