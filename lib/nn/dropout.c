/*
 * dropout.c - inverted dropout with masks drawn per record from
 * rng stream (seed, record << 8 | site): the same bits whatever the
 * thread count or the batch a record sits in.
 */
#include "nn.h"
#include "rng.h"

void
dropout_forward(float *y /* [R][len] */, float *mask /* [R][len] */,
    const float *x /* [R][len] */, float p, int R, size_t len,
    uint64_t seed, uint64_t site, int first)
{
	if (p <= 0.0f) {
		if (y != x)
			for (size_t i = 0; i < (size_t)R * len; i++)
				y[i] = x[i];
		return;
	}
	uint32_t keep = (uint32_t)((1.0 - p) * 4294967296.0 > 4294967295.0 ?
	    4294967295.0 : (1.0 - p) * 4294967296.0);
	float scale = 1.0f / (1.0f - p);
	#pragma omp parallel for
	for (int r = 0; r < R; r++) {
		struct rng g;
		rng_seed(&g, seed, (uint64_t)(first + r) << 8 | site);
		float *mr = mask + (size_t)r * len, *yr = y + (size_t)r * len;
		const float *xr = x + (size_t)r * len;
		for (size_t i = 0; i < len; i += 2) {
			uint64_t u = rng_u64(&g);
			mr[i] = (uint32_t)u < keep ? scale : 0.0f;
			if (i + 1 < len)
				mr[i + 1] = (uint32_t)(u >> 32) < keep ? scale : 0.0f;
		}
		for (size_t i = 0; i < len; i++)
			yr[i] = xr[i] * mr[i];
	}
}

void
dropout_backward(float *dx /* [n] */, const float *dy /* [n] */,
    const float *mask /* [n] */, float p, size_t n)
{
	if (p <= 0.0f) {
		if (dx != dy)
			for (size_t i = 0; i < n; i++)
				dx[i] = dy[i];
		return;
	}
	#pragma omp parallel for simd schedule(static)
	for (size_t i = 0; i < n; i++)
		dx[i] = dy[i] * mask[i];
}
