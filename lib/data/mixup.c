/*
 * mixup.c - Beta deviates and in-place pairwise mixup.
 */
#include <math.h>

#include "mixup.h"

double
rng_gamma(struct rng *r, double shape)
{
	/* Below 1 use Gamma(a) = Gamma(a + 1) U^(1/a). */
	if (shape < 1) {
		double u = rng_uniform(r);
		return rng_gamma(r, shape + 1) * pow(u, 1 / shape);
	}
	double d = shape - 1.0 / 3, c = 1 / sqrt(9 * d);
	for (;;) {
		double z = rng_normal(r), v = 1 + c * z;
		if (v <= 0)
			continue;
		v = v * v * v;
		double u = rng_uniform(r);
		if (u < 1 - 0.0331 * z * z * z * z ||
		    log(u) < 0.5 * z * z + d * (1 - v + log(v)))
			return d * v;
	}
}

double
rng_beta(struct rng *r, double a, double b)
{
	double x = rng_gamma(r, a), y = rng_gamma(r, b);
	return x + y > 0 ? x / (x + y) : 0.5;
}

/* a, b <- l a + (1 - l) b, l b + (1 - l) a over n values. */
static void
blend(float *a, float *b, int64_t n, float l)
{
	for (int64_t k = 0; k < n; k++) {
		float u = a[k], w = b[k];
		a[k] = l * u + (1 - l) * w;
		b[k] = l * w + (1 - l) * u;
	}
}

double
mixup_batch(struct rng *r, double alpha, float *x, int64_t nx, float *target,
    int classes, int B, int64_t *perm)
{
	double l = rng_beta(r, alpha, alpha);
	for (int i = 0; i < B; i++)
		perm[i] = i;
	rng_shuffle(r, perm, B);
	#pragma omp parallel for schedule(static)
	for (int k = 0; k < B / 2; k++) {
		int64_t i = perm[2 * k], j = perm[2 * k + 1];
		blend(x + i * nx, x + j * nx, nx, (float)l);
		blend(target + i * classes, target + j * classes, classes, (float)l);
	}
	return l;
}
