/*
 * fastmath.h - exp and erf in plain float arithmetic, so that loops under
 * "#pragma omp simd" vectorize (libm's expf/erff are scalar calls here).
 * fast_expf: relative error below 1e-7 on [-87, 88]; fast_erff: absolute
 * error below 5e-7 (Abramowitz & Stegun 7.1.26 is 1.5e-7 exactly; float
 * rounding adds the rest, most where its polynomial cancels, near 0), so
 * GELU matches erf-based PyTorch to float precision.
 * tests/unit/test_fastmath.c holds both bounds.  Every multiply-add is an
 * explicit fmaf: the same bits whether or not the including file lets the
 * compiler contract.
 */
#ifndef FASTMATH_H
#define FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* e^x for x in [-87, 88] (clamped outside), within 2 ulp; NaN stays NaN. */
static inline float
fast_expf(float x)
{
	/* NaN fails both tests and becomes -87 here, so the float-to-int
	 * conversion below is defined; it is given back at the end. */
	float c = x > -87.0f ? (x < 88.0f ? x : 88.0f) : -87.0f;
	/* c = n ln2 + r, |r| <= ln2/2; n rounded with the 1.5*2^23 trick */
	float n = fmaf(c, 1.44269504f, 12582912.0f) - 12582912.0f;
	float r = fmaf(-n, 0.693145752f, c);
	r = fmaf(-n, 1.42860677e-6f, r);
	/* e^r = 1 + r q(r): q fitted for least relative error on
	 * |r| <= ln2/2 (Lawson's iteration), 1.7e-8 with these floats */
	float p = fmaf(r, 0.00138436537f, 0.00837415550f);
	p = fmaf(r, p, 0.0416680016f);
	p = fmaf(r, p, 0.166664317f);
	p = fmaf(r, p, 0.499999940f);
	p = fmaf(r, p, 1.0f);
	p = fmaf(r, p, 1.0f);
	uint32_t e = (uint32_t)((int32_t)n + 127) << 23;
	float s;
	memcpy(&s, &e, sizeof s);
	return x == x ? p * s : x;
}

/* 1/d for finite d >= 1: a first guess from the bits (5% off), then
 * three Newton steps (3e-3, 7e-6, 4e-11), in plain arithmetic so that
 * it vectorizes: vdivps takes longer than all that.  The step as
 * t + t (1 - d t), the residual by an FMA, rounds to within an ulp. */
static inline float
fast_rcpf(float d)
{
	uint32_t b;
	float t;

	memcpy(&b, &d, sizeof b);
	b = 0x7EF311C7u - b;
	memcpy(&t, &b, sizeof t);
	t = fmaf(t, fmaf(-d, t, 1.0f), t);	/* no loop: GCC would not */
	t = fmaf(t, fmaf(-d, t, 1.0f), t);	/* vectorize the caller's */
	return fmaf(t, fmaf(-d, t, 1.0f), t);
}

/* erf(x) given e = exp(-x * x), for callers that need that exponential
 * too (GELU's derivative). */
static inline float
fast_erff_exp(float x, float e)
{
	float a = x < 0 ? -x : x;
	float t = fast_rcpf(fmaf(0.3275911f, a, 1.0f));
	float p = fmaf(t, 1.061405429f, -1.453152027f);
	p = fmaf(t, p, 1.421413741f);
	p = fmaf(t, p, -0.284496736f);
	p = fmaf(t, p, 0.254829592f);
	float y = fmaf(-t * p, e, 1.0f);
	return x < 0 ? -y : y;
}

/* erf(x), Abramowitz & Stegun 7.1.26, absolute error < 5e-7 in float. */
static inline float
fast_erff(float x)
{
	return fast_erff_exp(x, fast_expf(-x * x));
}

#endif
