/*
 * test_mixup.c - Beta deviates and pairwise mixup of inputs and targets.
 */
#include "mixup.h"
#include "test.h"

int
main(void)
{
	struct rng r;
	double s = 0, s2 = 0;
	int n = 20000;

	rng_seed(&r, 1, 0);
	for (int i = 0; i < n; i++) {
		double b = rng_beta(&r, 0.4, 0.4);
		s += b;
		s2 += b * b;
	}
	/* Beta(a, a): mean 1/2, variance 1 / (4 (2a + 1)). */
	CHECK_CLOSE(s / n, 0.5, 0.01, "Beta(0.4, 0.4) mean");
	CHECK_CLOSE(s2 / n - (s / n) * (s / n), 1 / (4 * 1.8), 0.01, "Beta(0.4, 0.4) variance");
	s = 0;
	for (int i = 0; i < n; i++)
		s += rng_beta(&r, 2, 6);
	CHECK_CLOSE(s / n, 0.25, 0.01, "Beta(2, 6) mean");

	enum { B = 5, NX = 3, C = 4 };
	float x[B][NX], t[B][C];
	int64_t perm[B];
	for (int i = 0; i < B; i++) {
		for (int k = 0; k < NX; k++)
			x[i][k] = 10 * i + k;
		for (int c = 0; c < C; c++)
			t[i][c] = c == i % C;
	}
	double l = mixup_batch(&r, 1.0, &x[0][0], NX, &t[0][0], C, B, perm);
	CHECK(l > 0 && l < 1, "lambda %.3f in (0, 1)", l);
	int sums = 1, same = 0, lin = 1;
	for (int i = 0; i < B; i++) {
		double ts = 0;
		for (int c = 0; c < C; c++)
			ts += t[i][c];
		sums &= fabs(ts - 1) < 1e-6;
		same += x[i][0] == 10 * i;
		/* A blend of records keeps x[i][1] - x[i][0] = 1. */
		lin &= fabs(x[i][1] - x[i][0] - 1) < 1e-4;
	}
	CHECK(sums, "mixed targets still sum to 1");
	CHECK(same == 1, "odd batch: exactly one record left as it is");
	CHECK(lin, "inputs are convex blends");
	return test_done();
}
