/*
 * bootstrap.c - percentile bootstrap of a mean.
 */
#include <stdlib.h>

#include "bootstrap.h"
#include "rng.h"

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Quantile q of sorted v[n], interpolating between neighbours. */
static double
quantile(const double *v, int n, double q)
{
	double h = q * (n - 1);
	int i = (int)h;
	if (i >= n - 1)
		return v[n - 1];
	return v[i] + (h - i) * (v[i + 1] - v[i]);
}

int
bootstrap_mean_ci(const float *x, int64_t n, int resamples, double level,
    uint64_t seed, double *lo, double *hi)
{
	if (n < 1 || resamples < 1)
		return -1;
	double *mean = malloc((size_t)resamples * sizeof *mean);
	if (mean == NULL)
		return -1;
	#pragma omp parallel for schedule(static)
	for (int r = 0; r < resamples; r++) {
		struct rng g;
		rng_seed(&g, seed, (uint64_t)r);
		double s = 0;
		for (int64_t i = 0; i < n; i++)
			s += x[rng_below(&g, (uint64_t)n)];
		mean[r] = s / (double)n;
	}
	qsort(mean, (size_t)resamples, sizeof *mean, cmp_double);
	*lo = quantile(mean, resamples, (1 - level) / 2);
	*hi = quantile(mean, resamples, (1 + level) / 2);
	free(mean);
	return 0;
}
