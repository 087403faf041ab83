/* test_fastmath.c - fast_expf and fast_erff against libm, and NaN kept. */
#include <math.h>

#include "fastmath.h"
#include "test.h"

int
main(void)
{
	double worst = 0, worst_erf = 0;

	for (float x = -87.0f; x <= 88.0f; x += 0.001953125f) {
		double rel = fabs(fast_expf(x) - exp(x)) / exp(x);
		worst = maxn(worst, rel);
	}
	CHECK(worst < 1e-7, "fast_expf within 1e-7 relative on [-87, 88] (%.2g)", worst);
	for (float x = -6.0f; x <= 6.0f; x += 0.0009765625f) {
		double d = fabs(fast_erff(x) - erf(x));
		worst_erf = maxn(worst_erf, d);
	}
	CHECK(worst_erf < 5e-7, "fast_erff within 5e-7 on [-6, 6] (%.2g)", worst_erf);
	CHECK(isnan(fast_expf(NAN)) && isnan(fast_erff(NAN)), "NaN in, NaN out");
	CHECK(fast_expf(-1000.0f) > 0 && fast_expf(1000.0f) < INFINITY &&
	    fast_expf(-INFINITY) >= 0, "clamped outside [-87, 88], never inf or negative");
	return test_done();
}
