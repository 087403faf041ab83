/*
 * fastmath.h - exp and erf in plain float arithmetic, so that loops under
 * "#pragma omp simd" vectorize (libm's expf/erff are scalar calls here).
 * fast_expf: relative error below 3e-7 on [-87, 88]; fast_erff: absolute
 * error below 4e-7 (Abramowitz & Stegun 7.1.26 is 1.5e-7 exactly, float
 * rounding adds the rest), so GELU matches erf-based PyTorch to float
 * precision.  tests/unit/test_fastmath.c holds both bounds.
 */
#ifndef FASTMATH_H
#define FASTMATH_H

#include <stdint.h>
#include <string.h>

/* e^x for x in [-87, 88] (clamped outside), a few ulp; NaN stays NaN. */
static inline float
fast_expf(float x)
{
	/* NaN fails both tests and becomes -87 here, so the float-to-int
	 * conversion below is defined; it is given back at the end. */
	float c = x > -87.0f ? (x < 88.0f ? x : 88.0f) : -87.0f;
	/* c = n ln2 + r, |r| <= ln2/2; n rounded with the 1.5*2^23 trick */
	float n = (c * 1.44269504f + 12582912.0f) - 12582912.0f;
	float r = c - n * 0.693145752f;
	r = r - n * 1.42860677e-6f;
	float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f +
	    r * (0.0416664891f + r * (0.00833336823f + r * 0.00139304355f)))));
	uint32_t e = (uint32_t)((int32_t)n + 127) << 23;
	float s;
	memcpy(&s, &e, sizeof s);
	return x == x ? p * s : x;
}

/* erf(x) given e = exp(-x * x), for callers that need that exponential
 * too (GELU's derivative). */
static inline float
fast_erff_exp(float x, float e)
{
	float a = x < 0 ? -x : x;
	float t = 1.0f / (1.0f + 0.3275911f * a);
	float y = 1.0f - t * (0.254829592f + t * (-0.284496736f +
	    t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f)))) * e;
	return x < 0 ? -y : y;
}

/* erf(x), Abramowitz & Stegun 7.1.26, absolute error < 4e-7 in float. */
static inline float
fast_erff(float x)
{
	return fast_erff_exp(x, fast_expf(-x * x));
}

#endif
