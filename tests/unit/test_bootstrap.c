/*
 * test_bootstrap.c - the bootstrap interval of a mean against the normal
 * approximation, and its determinism.
 */
#include <stdlib.h>

#include "bootstrap.h"
#include "test.h"

int
main(void)
{
	int n = 400;
	float *x = malloc(n * sizeof *x);
	double lo, hi, lo2, hi2;

	for (int i = 0; i < n; i++)
		x[i] = i % 4 == 0;	/* mean 0.25 */
	CHECK(bootstrap_mean_ci(x, n, 2000, 0.95, 7, &lo, &hi) == 0, "bootstrap runs");
	double se = sqrt(0.25 * 0.75 / n);	/* 0.0217 */
	CHECK(lo < 0.25 && hi > 0.25, "interval [%.4f, %.4f] holds the mean", lo, hi);
	CHECK_CLOSE(hi - lo, 2 * 1.96 * se, 0.012, "width %.4f near 2*1.96*se", hi - lo);
	CHECK_CLOSE((lo + hi) / 2, 0.25, 0.01, "centred on the mean");
	/* A 50% interval spans the quartiles of the resampled means: about
	 * mean -/+ 0.674 se (0.0146), one on each side.  Their spread over
	 * 2000 resamples is about 0.03 se, the means' grid 1/400. */
	bootstrap_mean_ci(x, n, 2000, 0.5, 7, &lo2, &hi2);
	CHECK_CLOSE(lo2, 0.25 - 0.674 * se, 0.3 * se,
	    "50%% interval: lower end %.4f at the first quartile", lo2);
	CHECK_CLOSE(hi2, 0.25 + 0.674 * se, 0.3 * se,
	    "50%% interval: upper end %.4f at the third quartile", hi2);
	bootstrap_mean_ci(x, n, 2000, 0.95, 7, &lo2, &hi2);
	CHECK(lo == lo2 && hi == hi2, "same seed, same interval");
	bootstrap_mean_ci(x, n, 2000, 0.95, 8, &lo2, &hi2);
	CHECK(lo != lo2 || hi != hi2, "another seed, another interval");
	for (int i = 0; i < n; i++)
		x[i] = 1.5f;
	bootstrap_mean_ci(x, n, 100, 0.95, 7, &lo, &hi);
	CHECK(lo == 1.5 && hi == 1.5, "constant values: a point");
	CHECK(bootstrap_mean_ci(x, 0, 100, 0.95, 7, &lo, &hi) == -1, "no values: error");
	free(x);
	return test_done();
}
