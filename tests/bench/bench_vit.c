/*
 * bench_vit.c - training throughput of the ViT engine on the reference
 * config of issue 4: 32x32x3 images, patch 4 (64 tokens + CLS, P = 48),
 * dim 192, depth 6, heads 3, mlp 768, 100 classes, batch 128; one step =
 * forward + backward + an AdamW update over the arena.  Prints images/s,
 * achieved GFLOP/s (matrix products counted by vit_flops, x3 for a
 * training step), the fraction of this machine's sgemm peak measured here
 * with a large product, and peak RSS.
 *
 * usage: bench_vit [--pe SPEC] [--steps N] [--threads N] [--peak]
 */
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"
#include "rng.h"
#include "vit.h"

/* sgemm GFLOP/s on 2048^3, the best of a second of runs. */
static double
sgemm_peak(void)
{
	int n = 2048;
	float *a = aligned_alloc(64, sizeof(float) * n * n);
	float *b = aligned_alloc(64, sizeof(float) * n * n);
	float *c = aligned_alloc(64, sizeof(float) * n * n);
	for (size_t i = 0; i < (size_t)n * n; i++) {
		a[i] = (float)(i % 7) * 1e-3f;
		b[i] = (float)(i % 5) * 1e-3f;
	}
	double best = 0, t0 = now_seconds();
	while (now_seconds() - t0 < 1.5) {
		double t = now_seconds();
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n,
		    1.0f, a, n, b, n, 0.0f, c, n);
		t = now_seconds() - t;
		best = fmax(best, 2.0 * n * n * n / t / 1e9);
	}
	free(a);
	free(b);
	free(c);
	return best;
}

/* The plain AdamW of a training step (lr 1e-4, wd 0.05 on decay tensors). */
static void
adamw(struct vit *m, int step)
{
	const float lr = 1e-4f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.05f;
	float c1 = 1 - powf(b1, step), c2 = 1 - powf(b2, step);
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *t = &m->tensor[i];
		float *p = m->param + t->off, *g = m->grad + t->off;
		float *mm = m->adam_m + t->off, *v = m->adam_v + t->off;
		float dec = t->decay ? lr * wd : 0;
		#pragma omp parallel for simd
		for (size_t j = 0; j < t->n; j++) {
			mm[j] = b1 * mm[j] + (1 - b1) * g[j];
			v[j] = b2 * v[j] + (1 - b2) * g[j] * g[j];
			p[j] -= dec * p[j] + lr * (mm[j] / c1) / (sqrtf(v[j] / c2) + eps);
		}
	}
}

int
main(int argc, char *argv[])
{
	const char *pe = "abs";
	int steps = 5, threads = 2, peak_only = 0;
	static const struct option lo[] = {
		{ "pe", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "peak", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	cli_blas_coretype(argv);
	cli_init(argc, argv);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1)
		switch (ch) {
		case 'p': pe = optarg; break;
		case 's': steps = (int)cli_int("--steps", optarg, 1, 1000); break;
		case 't': threads = (int)cli_int("--threads", optarg, 1, 256); break;
		case 'k': peak_only = 1; break;
		default: usage_error("unknown option");
		}
	cli_threads(threads);
	if (peak_only) {
		printf("sgemm peak %.1f GFLOP/s (2048^3, %d threads)\n",
		    sgemm_peak(), threads);
		return 0;
	}

	double peak = sgemm_peak();	/* first: profilers can skip it */
	struct vit_config c;
	vit_config_init(&c);
	c.dim = 192;
	c.depth = 6;
	c.heads = 3;
	c.mlp = 768;
	c.classes = 100;
	c.P = 48;
	c.axes = 2;
	c.grid[0] = c.grid[1] = 8;
	snprintf(c.pe, sizeof c.pe, "%s", pe);
	int B = 128, T = 64;
	char err[256];
	struct vit *m = vit_create(&c, B, T, 1, err, sizeof err);
	if (m == NULL)
		die("%s: %s", pe, err);

	float *x = malloc(sizeof(float) * B * T * c.P);
	float *pos = malloc(sizeof(float) * B * T * 2);
	float *target = calloc((size_t)B * c.classes, sizeof(float));
	float *logits = malloc(sizeof(float) * B * c.classes);
	struct rng r;
	rng_seed(&r, 1, 0);
	for (size_t i = 0; i < (size_t)B * T * c.P; i++)
		x[i] = (float)rng_normal(&r);
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			pos[(b * T + t) * 2] = (t / 8) / 8.0f;
			pos[(b * T + t) * 2 + 1] = (t % 8) / 8.0f;
		}
		target[b * c.classes + rng_below(&r, c.classes)] = 1;
	}

	double t0 = 0;
	float loss = 0;
	for (int s = 0; s <= steps; s++) {
		if (s == 1)
			t0 = now_seconds();	/* step 0 warms up */
		vit_zero_grad(m);
		loss = vit_forward(m, x, pos, B, T, target, logits, 1, s);
		vit_backward(m);
		adamw(m, s + 1);
	}
	double dt = (now_seconds() - t0) / steps;
	double gf = 3 * vit_flops(&c, B, T) / dt / 1e9;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double load[3];
	getloadavg(load, 3);
	printf("vit   %-14s %8.1f img/s  %7.0f ms/step  %6.1f GFLOP/s  "
	    "%.2f of sgemm peak %.0f  peak RSS %.0f MB  (loss %.3f, %d threads, "
	    "load %.2f)\n", pe, B / dt, dt * 1000, gf, gf / peak, peak,
	    ru.ru_maxrss / 1024.0, loss, threads, load[0]);
	vit_destroy(m);
	free(x);
	free(pos);
	free(target);
	free(logits);
	return 0;
}
