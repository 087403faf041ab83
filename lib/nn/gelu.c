/*
 * gelu.c - GELU(x) = x Phi(x) with the exact erf (PyTorch's default
 * approximate='none'), vectorized through fastmath.h.  The forward leaves
 * GELU'(x) behind for the backward: it costs the forward a few FMAs on
 * the exponential it has anyway, and spares the backward a second exp and
 * erf (which had made it the dearer of the two).
 */
#include "fastmath.h"
#include "nn.h"

#define SQRT1_2	0.70710678118654752f
#define INV_SQRT_2PI 0.39894228040143268f

void
gelu_forward(float *y /* [n] */, float *g /* [n] or NULL */,
    const float *x /* [n] */, size_t n)
{
	if (g == NULL) {
		#pragma omp parallel for simd schedule(static)
		for (size_t i = 0; i < n; i++) {
			float v = x[i];
			y[i] = 0.5f * v * (1.0f + fast_erff(v * SQRT1_2));
		}
		return;
	}
	#pragma omp parallel for simd schedule(static)
	for (size_t i = 0; i < n; i++) {
		float v = x[i], u = v * SQRT1_2, e = fast_expf(-u * u);
		float cdf = 0.5f * (1.0f + fast_erff_exp(u, e));
		y[i] = v * cdf;
		g[i] = cdf + v * INV_SQRT_2PI * e;	/* Phi + x phi */
	}
}

void
gelu_backward(float *dx /* [n] */, const float *dy /* [n] */,
    const float *g /* [n] */, size_t n)
{
	#pragma omp parallel for simd schedule(static)
	for (size_t i = 0; i < n; i++)
		dx[i] = dy[i] * g[i];
}
