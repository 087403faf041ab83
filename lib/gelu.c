/*
 * gelu.c - GELU(x) = x Phi(x) with the exact erf (PyTorch's default
 * approximate='none'), vectorized through fastmath.h.
 */
#include "fastmath.h"
#include "nn.h"

#define SQRT1_2	0.70710678118654752f
#define INV_SQRT_2PI 0.39894228040143268f

void
gelu_forward(float *y /* [n] */, const float *x /* [n] */, size_t n)
{
	#pragma omp parallel for simd schedule(static)
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		y[i] = 0.5f * v * (1.0f + fast_erff(v * SQRT1_2));
	}
}

void
gelu_backward(float *dx /* [n] */, const float *dy /* [n] */,
    const float *x /* [n] */, size_t n)
{
	#pragma omp parallel for simd schedule(static)
	for (size_t i = 0; i < n; i++) {
		float v = x[i], u = v * SQRT1_2, e = fast_expf(-u * u);
		float cdf = 0.5f * (1.0f + fast_erff_exp(u, e));
		float pdf = INV_SQRT_2PI * e;	/* the same exponential */
		dx[i] = dy[i] * (cdf + v * pdf);
	}
}
