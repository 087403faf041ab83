/*
 * bootstrap.h - percentile bootstrap confidence intervals for a mean (the
 * "95% CI" of the LieRE tables): resample the per-record values with
 * replacement, take the mean of each resample, read the interval off the
 * sorted means.
 */
#ifndef BOOTSTRAP_H
#define BOOTSTRAP_H

#include <stdint.h>

/* Interval [lo, hi] holding level (0.95) of the means of resamples draws of
 * x[n] with replacement; resample r draws from rng stream (seed, r), so the
 * result depends only on the arguments.  0, or -1 when n or resamples < 1
 * or memory runs out. */
int	 bootstrap_mean_ci(const float *x, int64_t n, int resamples,
	    double level, uint64_t seed, double *lo, double *hi);

#endif
