/*
 * test_adamw.c - AdamW against a hand computation, over an arena of
 * stretches in one pass (the same bits as stretch by stretch, on any
 * thread count; a step past a float said), global-norm clipping, and the
 * warmup + cosine learning-rate schedule.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include "adamw.h"
#include "test.h"

/* adamw_step of one weight, decayed */
static void
update1(const struct adamw *o, float *p, const float *g, float *m, float *v,
    double lr, double wd, int64_t t)
{
	struct adamw_seg one = { 0, 1, 1 };

	CHECK(adamw_step(o, p, g, m, v, &one, 1, 1.0, lr, wd, t) == 0,
	    "a finite step says so");
}

/* Two AdamW steps of one weight, written out from the paper's equations
 * (decoupled decay on the old weight, bias-corrected moments). */
static void
hand_steps(void)
{
	struct adamw o;
	float p = 1, m = 0, v = 0, g;
	double lr = 0.1, wd = 0.01;

	adamw_defaults(&o);
	g = 0.5f;
	update1(&o, &p, &g, &m, &v, lr, wd, 1);
	/* m = 0.05, v = 0.00025, m^ = 0.5, v^ = 0.25: step 0.5/0.5 = 1. */
	CHECK_CLOSE(m, 0.05, 1e-6, "step 1: first moment");
	CHECK_CLOSE(v, 0.00025, 1e-6, "step 1: second moment");
	CHECK_CLOSE(p, 1 * (1 - lr * wd) - lr * 0.5 / (0.5 + 1e-8), 1e-6,
	    "step 1: weight 0.899");
	g = -0.25f;
	update1(&o, &p, &g, &m, &v, lr, wd, 2);
	double m2 = 0.9 * 0.05 + 0.1 * -0.25, v2 = 0.999 * 0.00025 + 0.001 * 0.0625;
	double mh = m2 / (1 - 0.81), vh = v2 / (1 - 0.998001);
	double p2 = 0.899 * (1 - lr * wd) - lr * mh / (sqrt(vh) + 1e-8);
	CHECK_CLOSE(p, p2, 1e-6, "step 2: weight %.6f", p2);
	/* No decay: the same gradient history without the shrink term. */
	float q = 1, mq = 0, vq = 0;
	g = 0.5f;
	update1(&o, &q, &g, &mq, &vq, lr, 0, 1);
	CHECK_CLOSE(q, 0.9, 1e-6, "step 1 without weight decay: 0.9");
	/* A gradient of 1e-7, near eps: step 1 has m^ = g and sqrt(v^) = |g|,
	 * so p = 1 - lr g / (|g| + eps) = 1 - 0.1/1.1 with the documented
	 * eps 1e-8 (1e-6 would give 1 - 0.1/11). */
	float r = 1, mr = 0, vr = 0;
	g = 1e-7f;
	update1(&o, &r, &g, &mr, &vr, lr, 0, 1);
	CHECK_CLOSE(r, 1 - lr * 1e-7 / (1e-7 + 1e-8), 1e-6,
	    "step 1 with a gradient of 1e-7: eps is the default 1e-8 (%.6f)", r);
}

static void
clipping(void)
{
	int64_t n = 1000;
	float *g = malloc(n * sizeof *g);
	for (int64_t i = 0; i < n; i++)
		g[i] = (i % 2 ? 3 : -4) / 10.0f;	/* sumsq = 500*0.09 + 500*0.16 */
	double ss = grad_sumsq(g, n);
	CHECK_CLOSE(ss, 125, 1e-6, "sum of squares 125");
	CHECK(grad_clip_scale(sqrt(ss), 100) == 1, "norm under the limit: untouched");
	CHECK(grad_clip_scale(sqrt(ss), 0) == 1, "no limit: untouched");
	double s = grad_clip_scale(sqrt(ss), 1);
	for (int64_t i = 0; i < n; i++)
		g[i] *= (float)s;
	CHECK_CLOSE(sqrt(grad_sumsq(g, n)), 1, 1e-5, "clipped to norm 1 (scale %.4g)", s);
	CHECK(s == (float)s, "the scale is a float's value, as applied");
	free(g);

	/* a length no chunk or vector divides: the sum against long double,
	 * and the same bits on 1 and 2 threads */
	n = 100003;
	g = malloc(n * sizeof *g);
	long double ref = 0;
	for (int64_t i = 0; i < n; i++) {
		g[i] = (float)sin(0.37 * (double)i) * (float)(1 + i % 7);
		ref += (long double)g[i] * g[i];
	}
	omp_set_num_threads(1);
	double s1 = grad_sumsq(g, n);
	omp_set_num_threads(2);
	double s2 = grad_sumsq(g, n);
	CHECK(fabs(s1 - (double)ref) < 1e-12 * (double)ref && s1 == s2,
	    "sum of squares of %lld: %.17g (long double %.17Lg), the same on 2 threads",
	    (long long)n, s2, ref);
	free(g);
}

/* The arena in one pass: stretches of odd lengths, some decayed, the
 * gradient clipped; the same bits as each stretch alone and as the scaled
 * gradient, on 1 and 2 threads; an update past a float is said. */
static void
arena(void)
{
	enum { N = 1000 };
	static const struct adamw_seg seg[] = { { 0, 3, 1 }, { 3, 1, 0 },
		{ 4, 517, 1 }, { 521, 64, 0 }, { 585, 415, 1 } };
	int nseg = sizeof seg / sizeof seg[0];
	static float p[3][N], m[3][N], v[3][N], g[N], gs[N];
	struct adamw o;
	float scale = 0.37f;
	int same = 1;

	adamw_defaults(&o);
	for (int i = 0; i < N; i++) {
		g[i] = (float)sin(0.7 * i) * (1 + i % 5);
		gs[i] = g[i] * scale;
		for (int k = 0; k < 3; k++)
			p[k][i] = (float)cos(0.3 * i), m[k][i] = 0.01f * (i % 3), v[k][i] = 1e-4f * (i % 4);
	}
	for (int t = 1; t <= 3; t++) {
		omp_set_num_threads(1);
		CHECK(adamw_step(&o, p[0], g, m[0], v[0], seg, nseg, scale, 1e-3, 0.05, t) == 0,
		    "step %d: finite", t);
		omp_set_num_threads(2);
		adamw_step(&o, p[1], g, m[1], v[1], seg, nseg, scale, 1e-3, 0.05, t);
		for (int s = 0; s < nseg; s++) {
			struct adamw_seg one = { 0, seg[s].n, seg[s].decay };
			int64_t at = seg[s].off;
			adamw_step(&o, p[2] + at, gs + at, m[2] + at, v[2] + at, &one, 1,
			    1.0, 1e-3, 0.05, t);
		}
	}
	for (int i = 0; i < N; i++)
		for (int k = 1; k < 3; k++)
			same &= p[0][i] == p[k][i] && m[0][i] == m[k][i] && v[0][i] == v[k][i];
	CHECK(same, "the arena in one pass: the bits of each stretch alone with "
	    "the gradient scaled first, on 1 and 2 threads");
	/* weight decay only where a stretch takes it: with g = 0 and m = v = 0
	 * a weight moves by decay alone */
	float q[2] = { 1, 1 }, z[2] = { 0, 0 }, mq[2] = { 0, 0 }, vq[2] = { 0, 0 };
	struct adamw_seg two[] = { { 0, 1, 1 }, { 1, 1, 0 } };
	adamw_step(&o, q, z, mq, vq, two, 2, 1.0, 0.1, 0.5, 1);
	CHECK(q[0] == (float)(1 - 0.1 * 0.5) && q[1] == 1, "decay where asked (%g), "
	    "none elsewhere (%g)", q[0], q[1]);
	/* a step past a float: 1e38 moved by a learning rate of 1e38 */
	float big = 1e38f, gb = -1, mb = 0, vb = 0;
	struct adamw_seg one = { 0, 1, 0 };
	CHECK(adamw_step(&o, &big, &gb, &mb, &vb, &one, 1, 1.0, 1e38, 0, 1) == -1 &&
	    isinf(big), "a step that leaves the floats says so (the weight %g)", big);
	float nan_g = NAN, pn = 0, mn = 0, vn = 0;
	CHECK(adamw_step(&o, &pn, &nan_g, &mn, &vn, &one, 1, 1.0, 1e-3, 0, 1) == -1,
	    "... and so does a NaN gradient");
}

static void
schedule(void)
{
	double lr = 1e-3;
	CHECK_CLOSE(lr_schedule(0, 100, 10, lr, 0), lr / 10, 1e-12, "warmup step 0: lr/10");
	CHECK_CLOSE(lr_schedule(4, 100, 10, lr, 0), lr / 2, 1e-12, "warmup step 4: lr/2");
	CHECK_CLOSE(lr_schedule(10, 100, 10, lr, 0), lr, 1e-12, "peak after warmup");
	CHECK_CLOSE(lr_schedule(55, 100, 10, lr, 0), lr / 2, 1e-12, "half-way down the cosine: lr/2");
	/* A quarter of the way down (step 35 of a decay from 10 to 110) the
	 * cosine stands at (1 + cos(pi/4))/2 = 0.854 of its height above
	 * lr_min; a straight line would give 0.75. */
	double lmin = 1e-5, q = lmin + (lr - lmin) * (1 + cos(M_PI / 4)) / 2;
	CHECK_CLOSE(lr_schedule(35, 110, 10, lr, lmin), q, 1e-12,
	    "a quarter down the cosine: lr_min + (lr - lr_min)(1 + cos(pi/4))/2");
	/* Step s (0-based) of the warmup takes lr (s + 1)/warmup: the first
	 * step already learns, the last reaches lr. */
	int warm = 1;
	for (int t = 0; t < 10; t++)
		warm &= fabs(lr_schedule(t, 100, 10, lr, 0) - lr * (t + 1) / 10) <= 1e-15;
	CHECK(warm, "warmup step s: lr (s + 1) / 10, every step");
	CHECK_CLOSE(lr_schedule(100, 100, 10, lr, 1e-5), 1e-5, 1e-12, "end: lr_min");
	CHECK_CLOSE(lr_schedule(150, 100, 10, lr, 1e-5), 1e-5, 1e-12, "past the end: lr_min");
	int mono = 1;
	for (int t = 11; t < 100; t++)
		mono &= lr_schedule(t, 100, 10, lr, 0) < lr_schedule(t - 1, 100, 10, lr, 0);
	CHECK(mono, "decreasing after the warmup");
	CHECK_CLOSE(lr_schedule(0, 10, 0, lr, 0), lr, 1e-12, "no warmup: starts at lr");
}

int
main(void)
{
	hand_steps();
	clipping();
	arena();
	schedule();
	return test_done();
}
