/*
 * bench_expm.c - rotations per second of pe_rotations (forward) and
 * pe_rotations_backward for liere:2, liere:8 and liere:64 on a ViT-B batch:
 * 65 tokens (an 8 x 8 grid on linspace(0, 1) plus a CLS token at the
 * centre) x 12 heads x 12 layers, head dimension 64, LieRE's init.  A
 * rotation is one token's 64 x 64 R for one (layer, head).  Also the
 * largest error against the long-double reference on a sample, and the
 * orthogonality error, for the double forward (rotgen) and the float one
 * (the engine's).  expm_torch.py times torch.matrix_exp on the same
 * batch.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../unit/refexpm.h"
#include "cli.h"
#include "pe.h"

#define T	65

static void
grid_positions(float *pos)
{
	pos[0] = pos[1] = 0.5f;		/* CLS */
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++) {
			pos[2 * (1 + 8 * i + j)] = i / 7.0f;
			pos[2 * (1 + 8 * i + j) + 1] = j / 7.0f;
		}
}

/* Seconds per call of the forward (back = 0) or backward pass. */
static double
timeit(const struct pe *pe, struct pe_work *w, const float *params,
    const float *pos, float *R, float *dparams, int back)
{
	int reps = 0;
	double t0 = now_seconds(), t;

	do {
		if (back)	/* R itself as dL/dR: any values time the same */
			pe_rotations_backward(pe, w, params, T, pos, R, R, dparams);
		else
			pe_rotations(pe, w, params, T, pos, R);
		reps++;
		t = now_seconds() - t0;
	} while (t < 1.0 || reps < 2);
	return t / reps;
}

/* Largest error of R against the long-double reference and |R^T R - I|
 * on a sample of rotations. */
static void
accuracy(const struct pe *pe, const float *params, const float *pos, const float *R,
    double *err, double *orth)
{
	int b = pe->block, k = b * (b - 1) / 2;
	double *X = malloc(sizeof(double) * b * b);
	double *Rr = malloc(sizeof(double) * b * b), *Rf = malloc(sizeof(double) * b * b);

	*err = *orth = 0;
	for (int s = 0; s < pe->nset; s += 37)
		for (int t = 0; t < T; t += 16) {
			const float *U = params + s * pe->set_params;
			for (int q = 0, r = 0; r < b; r++) {
				X[r * b + r] = 0;
				for (int c = r + 1; c < b; c++, q++) {
					X[r * b + c] = pos[2 * t] * (double)U[q] +
					    pos[2 * t + 1] * (double)U[pe->nblock * k + q];
					X[c * b + r] = -X[r * b + c];
				}
			}
			ref_expm(b, X, Rr);
			const float *blk = R + ((int64_t)s * T + t) * pe->rsize;
			for (int e = 0; e < b * b; e++) {
				*err = fmax(*err, fabs(blk[e] - Rr[e]));
				Rf[e] = blk[e];
			}
			*orth = fmax(*orth, orth_err(b, Rf));
		}
	free(X);
	free(Rr);
	free(Rf);
}

int
main(int argc, char *argv[])
{
	static const char *specs[] = { "liere:2", "liere:8", "liere:64" };
	float pos[2 * T];

	cli_init(argc, argv);
	grid_positions(pos);
	printf("pe_rotations: %d tokens x 12 heads x 12 layers, head dim 64, 2 axes, %d threads\n",
	    T, omp_get_max_threads());
	for (int i = 0; i < 3; i++) {
		struct pe pe;
		struct pe_work w;
		struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 1 };

		if (pe_parse(&pe, specs[i], 64, 2, 12, 12, "none") < 0 || pe_work_init(&w, &pe, T) < 0)
			die("%s: %s%s", specs[i], pe.err.msg, w.err.msg);
		float *params = malloc(sizeof(float) * pe.nparam);
		float *R = malloc(sizeof(float) * pe.nset * T * pe.rsize);
		float *dp = calloc(pe.nparam, sizeof(float));
		if (!params || !R || !dp)
			die("out of memory");
		pe_init_params(&pe, &ini, params);
		double tf = timeit(&pe, &w, params, pos, R, dp, 0);

		double err, orth, err32, orth32;
		accuracy(&pe, params, pos, R, &err, &orth);
		w.f32 = 1;	/* the engine's forward */
		double tf32 = timeit(&pe, &w, params, pos, R, dp, 0);
		accuracy(&pe, params, pos, R, &err32, &orth32);
		w.f32 = 0;
		double tb = timeit(&pe, &w, params, pos, R, dp, 1);
		double nrot = (double)pe.nset * T;
		printf("liere b=%-2d  forward %10.0f rotations/s (%.4f s)  backward %10.0f rotations/s (%.4f s)"
		    "  max err vs long double %.1e  |R^T R - I| %.1e\n"
		    "            forward in float (the engine's) %10.0f rotations/s (%.4f s)"
		    "  max err vs long double %.1e  |R^T R - I| %.1e\n",
		    pe.block, nrot / tf, tf, nrot / tb, tb, err, orth, nrot / tf32, tf32, err32, orth32);

		/* apply to q of a batch of 32 images, [32][T][768], every
		 * (layer, head); one thread, as inside the engine's loops */
		enum { NIMG = 32, DIM = 12 * 64 };
		int64_t xs = (int64_t)T * DIM;
		float *q = calloc(NIMG * xs, sizeof(float)), *dq = calloc(NIMG * xs, sizeof(float));
		float *dR = calloc((size_t)pe.nset * T * pe.rsize, sizeof(float));
		if (!q || !dq || !dR)
			die("out of memory");
		pe_rotations(&pe, &w, params, T, pos, R);
		double t0 = now_seconds(), ta, tab;
		int reps = 0;
		do {
			for (int s = 0; s < pe.nset; s++)
				pe_apply_batch(&pe, NIMG, T, pe_R(&pe, R, s, T), q + (s % 12) * 64, xs, DIM,
				    q + (s % 12) * 64, xs, DIM);
			reps++;
		} while ((ta = now_seconds() - t0) < 0.5);
		ta /= reps * NIMG;
		reps = 0;
		t0 = now_seconds();
		do {
			for (int s = 0; s < pe.nset; s++)
				pe_apply_batch_backward(&pe, NIMG, T, pe_R(&pe, R, s, T), q + (s % 12) * 64, xs, DIM,
				    dq + (s % 12) * 64, xs, DIM, dq + (s % 12) * 64, xs, DIM, pe_R(&pe, dR, s, T));
			reps++;
		} while ((tab = now_seconds() - t0) < 0.5);
		tab /= reps * NIMG;
		printf("            apply, batches of %d, one thread: %.0f us per image for q of 12 layers x 12 heads"
		    " (%.1f GFLOP/s); backward %.0f us (%.1f GFLOP/s)\n", NIMG, ta * 1e6,
		    2.0 * T * pe.rsize * pe.nset / ta * 1e-9, tab * 1e6, 4.0 * T * pe.rsize * pe.nset / tab * 1e-9);
		free(q); free(dq); free(dR);
		free(params); free(R); free(dp);
		pe_work_free(&w);
	}
	return 0;
}
