/*
 * fastmath.h - exp and erf in plain float arithmetic, so that loops under
 * "#pragma omp simd" vectorize (libm's expf/erff are scalar calls here).
 * fast_expf: relative error about 1e-7 on [-87, 88]; fast_erff: absolute
 * error below 1.5e-7 (Abramowitz & Stegun 7.1.26), the size of float
 * rounding near 1, so GELU matches erf-based PyTorch to float precision.
 */
#ifndef FASTMATH_H
#define FASTMATH_H

#include <stdint.h>
#include <string.h>

/* e^x for x in [-87, 88] (clamped outside), about 1 ulp. */
static inline float
fast_expf(float x)
{
	x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
	/* x = n ln2 + r, |r| <= ln2/2; n rounded with the 1.5*2^23 trick */
	float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
	float r = x - n * 0.693145752f;
	r = r - n * 1.42860677e-6f;
	float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.166666672f +
	    r * (0.0416664891f + r * (0.00833336823f + r * 0.00139304355f)))));
	int32_t e = ((int32_t)n + 127) << 23;
	float s;
	memcpy(&s, &e, sizeof s);
	return p * s;
}

/* erf(x), Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7. */
static inline float
fast_erff(float x)
{
	float a = x < 0 ? -x : x;
	float t = 1.0f / (1.0f + 0.3275911f * a);
	float y = 1.0f - t * (0.254829592f + t * (-0.284496736f +
	    t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f)))) *
	    fast_expf(-a * a);
	return x < 0 ? -y : y;
}

#endif
