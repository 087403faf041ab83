/*
 * adamw.c - AdamW, gradient clipping and the learning-rate schedule.
 */
#include <math.h>

#include "adamw.h"

/* grad_sumsq splits its input into at most this many chunks whose bounds
 * depend only on n; each is summed by one thread (in vector lanes, then
 * across them) and the partial sums are added in order, so the result does
 * not depend on how threads share the work. */
#define SUMSQ_CHUNKS	256

void
adamw_defaults(struct adamw *o)
{
	o->beta1 = 0.9;
	o->beta2 = 0.999;
	o->eps = 1e-8;
}

int
adamw_step(const struct adamw *o, float *p, const float *g, float *m, float *v,
    const struct adamw_seg *seg, int nseg, double gscale, double lr, double wd,
    int64_t t)
{
	double bc1 = 1.0 - pow(o->beta1, (double)t);
	double bc2 = 1.0 - pow(o->beta2, (double)t);
	float b1 = (float)o->beta1, b2 = (float)o->beta2, gs = (float)gscale;
	float step = (float)(lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2));
	float eps = (float)o->eps, decay = (float)(1.0 - lr * wd);
	float z = 0;

	/* one region, a loop a stretch without the barriers between them; x * 0
	 * is 0 for a finite x and NaN for the rest (z: 0 or NaN in any order) */
	#pragma omp parallel
	for (int s = 0; s < nseg; s++) {
		float d = seg[s].decay ? decay : 1.0f;
		int64_t lo = seg[s].off, hi = lo + seg[s].n;
		#pragma omp for simd schedule(static) nowait reduction(+:z)
		for (int64_t i = lo; i < hi; i++) {
			float gi = g[i] * gs;	/* exact when not clipped */
			m[i] = b1 * m[i] + (1 - b1) * gi;
			v[i] = b2 * v[i] + (1 - b2) * gi * gi;
			p[i] = p[i] * d - step * m[i] / (sqrtf(v[i]) * rbc2 + eps);
			z += p[i] * 0.0f + m[i] * 0.0f + v[i] * 0.0f;
		}
	}
	return z == 0 ? 0 : -1;
}

double
grad_sumsq(const float *g, int64_t n)
{
	double part[SUMSQ_CHUNKS] = { 0 };
	int64_t chunk = (n + SUMSQ_CHUNKS - 1) / SUMSQ_CHUNKS;

	#pragma omp parallel for schedule(static)
	for (int c = 0; c < SUMSQ_CHUNKS; c++) {
		int64_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
		double s = 0;
		#pragma omp simd reduction(+:s)	/* lanes in a fixed order */
		for (int64_t i = lo; i < hi; i++)
			s += (double)g[i] * g[i];
		part[c] = s;
	}
	double s = 0;
	for (int c = 0; c < SUMSQ_CHUNKS; c++)
		s += part[c];
	return s;
}

double
grad_clip_scale(double norm, double maxnorm)
{
	if (maxnorm <= 0 || !(norm > maxnorm))
		return 1.0;
	/* The small guard is PyTorch's clip_grad_norm_ convention; the factor
	 * is applied in float, as g *= scale would. */
	return (float)(maxnorm / (norm + 1e-6));
}

double
lr_schedule(int64_t step, int64_t total, int64_t warmup, double lr,
    double lr_min)
{
	if (step < warmup)
		return lr * (double)(step + 1) / (double)warmup;
	if (step >= total)
		return lr_min;
	double span = (double)(total - warmup);
	double progress = span > 0 ? (double)(step - warmup) / span : 1.0;
	return lr_min + 0.5 * (lr - lr_min) * (1.0 + cos(M_PI * progress));
}
