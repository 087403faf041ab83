/*
 * test_expm.c - exp of skew blocks against a long-double Taylor reference,
 * orthogonality, det +1, and the adjoint Frechet derivative against
 * central differences.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expm.h"
#include "refexpm.h"
#include "rng.h"
#include "test.h"

static void
rand_skew(struct rng *r, int n, double scale, double *X)
{
	for (int i = 0; i < n; i++) {
		X[i * n + i] = 0;
		for (int j = i + 1; j < n; j++) {
			double v = scale * (2 * rng_uniform(r) - 1);
			X[i * n + j] = v;
			X[j * n + i] = -v;
		}
	}
}

static double
dot(int64_t nn, const double *a, const double *b)
{
	double s = 0;
	for (int64_t k = 0; k < nn; k++)
		s += a[k] * b[k];
	return s;
}

/*
 * 16 blocks at once (expm_lanes.c), each lane against the one-block
 * double results: lanes of norms 1e-3 .. 40 (so the largest s serves
 * them all, and its rounding bounds them all), a lane of zeros (the
 * padding: I and G), and a NaN lane that leaves the others alone.
 */
static void
test_lanes(struct rng *r)
{
	enum { L = EXPM_LANES };
	static const int sizes[] = { 4, 8, 12, 16 };
	for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
		int n = sizes[a], nn = n * n;
		float *X = aligned_alloc(64, sizeof(float) * nn * L), *G = aligned_alloc(64, sizeof(float) * nn * L);
		float *R = aligned_alloc(64, sizeof(float) * nn * L), *dX = aligned_alloc(64, sizeof(float) * nn * L);
		float *ws = aligned_alloc(64, sizeof(float) * expm_lanes_scratch(n));
		double *Xd = malloc(sizeof(double) * nn * L), *Gd = malloc(sizeof(double) * nn * L);
		double *ref = malloc(sizeof(double) * nn), *dref = malloc(sizeof(double) * nn);
		double *wsd = aligned_alloc(64, sizeof(double) * ((expm_scratch(n) + 7) / 8 * 8));
		for (int pass = 0; pass < 2; pass++) {	/* 1: lane 5 NaN */
			for (int l = 0; l < L; l++) {
				double scale = l == 3 ? 0 : 1e-3 * pow(40e3, l / (L - 1.0)) / sqrt(n);
				rand_skew(r, n, scale, Xd + l * nn);
				for (int k = 0; k < nn; k++)
					Gd[l * nn + k] = 2 * rng_uniform(r) - 1;
			}
			for (int l = 0; l < L; l++)
				for (int k = 0; k < nn; k++) {
					X[k * L + l] = (float)Xd[l * nn + k];
					G[k * L + l] = (float)Gd[l * nn + k];
				}
			if (pass)
				X[1 * L + 5] = NAN;
			expm_skew_lanes(n, X, R, ws);
			expm_skew_adjoint_lanes(n, X, G, dX, ws);
			double eR = 0, eG = 0;
			int nan = 1, smax = 0;
			for (int l = 0; l < L; l++) {
				const double *x = Xd + l * nn, *g = Gd + l * nn;
				if (pass && l == 5) {
					for (int k = 0; k < nn; k++)
						nan &= isnan(R[k * L + l]) || isnan(dX[k * L + l]);
					continue;
				}
				int sq = expm_squarings(n, x, wsd);
				smax = sq > smax ? sq : smax;
				ref_expm(n, x, ref);
				expm_skew_adjoint(n, x, g, dref, NULL, wsd);
				double gmax = 0;
				for (int k = 0; k < nn; k++)
					gmax = maxn(gmax, fabs(dref[k]));
				for (int k = 0; k < nn; k++) {
					eR = maxn(eR, fabs(R[k * L + l] - ref[k]));
					eG = maxn(eG, fabs(dX[k * L + l] - dref[k]) / fmax(1, gmax));
				}
			}
			const char *what = pass ? " beside a NaN lane" : "";
			CHECK(eR < 2e-6 * (1 << smax), "n=%d, 16 lanes%s: exp agrees with the long-double reference (%.2g)", n, what, eR);
			CHECK(eG < 2e-6 * (1 << smax), "n=%d, 16 lanes%s: adjoint agrees with double (rel %.2g)", n, what, eG);
			if (pass)
				CHECK(nan, "n=%d, 16 lanes: the NaN lane's results are NaN", n);
		}
		free(X); free(G); free(R); free(dX); free(ws); free(Xd); free(Gd); free(ref); free(dref); free(wsd);
	}
}

int
main(void)
{
	static const int sizes[] = { 2, 3, 5, 8, 16, 24, 40, 64 };
	static const double scales[] = { 1e-3, 0.7, 5, 40 };
	struct rng r;

	rng_seed(&r, 42, 0);
	for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
		int n = sizes[a];
		int64_t nn = (int64_t)n * n;
		double *ws = aligned_alloc(64, sizeof(double) * ((expm_scratch(n) + 7) / 8 * 8));
		double *X = malloc(sizeof *X * nn), *R = malloc(sizeof *R * nn);
		double *Rf = malloc(sizeof *Rf * nn), *ref = malloc(sizeof *ref * nn);
		double *G = malloc(sizeof *G * nn), *dX = malloc(sizeof *dX * nn);
		double *D = malloc(sizeof *D * nn), *Xh = malloc(sizeof *Xh * nn);
		float *wsf = aligned_alloc(64, sizeof(float) * ((expm_scratch_f32(n) + 15) / 16 * 16));
		float *Xf = malloc(sizeof *Xf * nn), *Gf = malloc(sizeof *Gf * nn);
		float *dXf = malloc(sizeof *dXf * nn), *Rff = malloc(sizeof *Rff * nn);

		for (size_t b = 0; b < sizeof scales / sizeof *scales; b++) {
			/* entries up to scale: 2-norm up to about scale * n / 2 */
			double scale = scales[b] / (n > 2 ? sqrt(n) : 1);
			rand_skew(&r, n, scale, X);
			expm_skew(n, X, R, ws);
			ref_expm(n, X, ref);
			double e = 0;
			for (int64_t k = 0; k < nn; k++)
				e = maxn(e, fabs(R[k] - ref[k]));
			CHECK(e < 1e-9, "n=%d scale %g (s=%d): exp agrees with the long-double reference (%.2g)",
			    n, scales[b], expm_squarings(n, X, ws), e);
			CHECK(orth_err(n, R) < 1e-10, "n=%d scale %g: |R^T R - I| = %.2g", n, scales[b], orth_err(n, R));
			CHECK_CLOSE(det(n, R), 1.0, 1e-9, "n=%d scale %g: det R = +1", n, scales[b]);

			/* adjoint: <dX, D> = d/dh <G, exp(X + h D)> for skew D */
			for (int64_t k = 0; k < nn; k++)
				G[k] = 2 * rng_uniform(&r) - 1;
			expm_skew_adjoint(n, X, G, dX, Rf, ws);
			double e2 = 0;
			for (int64_t k = 0; k < nn; k++)
				e2 = maxn(e2, fabs(Rf[k] - R[k]));
			CHECK(e2 < 1e-12, "n=%d scale %g: the backward pass's R equals the forward's (%.2g)", n, scales[b], e2);
			/* without R the last squaring is left out: same dX */
			expm_skew_adjoint(n, X, G, Xh, NULL, ws);
			CHECK(memcmp(Xh, dX, sizeof *dX * nn) == 0,
			    "n=%d scale %g: the adjoint without R is the same, bit for bit", n, scales[b]);
			rand_skew(&r, n, 1, D);
			double h = 1e-5 / fmax(1, scales[b] / 5), fp, fm;
			for (int64_t k = 0; k < nn; k++)
				Xh[k] = X[k] + h * D[k];
			expm_skew(n, Xh, Rf, ws);
			fp = dot(nn, G, Rf);
			for (int64_t k = 0; k < nn; k++)
				Xh[k] = X[k] - h * D[k];
			expm_skew(n, Xh, Rf, ws);
			fm = dot(nn, G, Rf);
			double fd = (fp - fm) / (2 * h), an = dot(nn, dX, D);
			CHECK_CLOSE(an, fd, 1e-6 * fmax(1, sqrt((double)nn)),
			    "n=%d scale %g: adjoint Frechet derivative matches central differences", n, scales[b]);

			/* float: what the rotations' backward pass uses, against
			 * the double results (errors grow with the squarings) */
			int sq = expm_squarings(n, X, ws);
			for (int64_t k = 0; k < nn; k++) {
				Xf[k] = (float)X[k];
				Gf[k] = (float)G[k];
			}
			/* theta 3.3 against 2.5: 2^0.4, at most one squaring less */
			int sqf = expm_squarings_f32(n, Xf, wsf);
			CHECK(sqf <= sq && sqf >= sq - 1, "n=%d scale %g: float scales by 2^%d, double by 2^%d",
			    n, scales[b], sqf, sq);
			expm_skew_adjoint_f32(n, Xf, Gf, dXf, Rff, wsf);
			double ef = 0, gf = 0, gmax = 0;
			for (int64_t k = 0; k < nn; k++) {
				ef = maxn(ef, fabs(Rff[k] - ref[k]));
				gf = maxn(gf, fabs(dXf[k] - dX[k]));
				gmax = maxn(gmax, fabs(dX[k]));
			}
			CHECK(ef < 2e-6 * (1 << sq), "n=%d scale %g (s=%d): float exp agrees with the long-double reference (%.2g)",
			    n, scales[b], sq, ef);
			CHECK(gf < 2e-6 * (1 << sq) * fmax(1, gmax), "n=%d scale %g: float adjoint agrees with double (%.2g of max %.3g)",
			    n, scales[b], gf, gmax);
			expm_skew_adjoint_f32(n, Xf, Gf, Rff, NULL, wsf);
			CHECK(memcmp(Rff, dXf, sizeof *dXf * nn) == 0,
			    "n=%d scale %g: float, without R: the same bits", n, scales[b]);
			expm_skew_f32(n, Xf, Rff, wsf);
			ef = 0;
			for (int64_t k = 0; k < nn; k++)
				ef = maxn(ef, fabs(Rff[k] - ref[k]));
			CHECK(ef < 2e-6 * (1 << sq), "n=%d scale %g: float exp alone agrees too (%.2g)", n, scales[b], ef);
		}
		/* determinism: the same input gives the same bits */
		rand_skew(&r, n, 3, X);
		expm_skew(n, X, R, ws);
		expm_skew(n, X, Rf, ws);
		CHECK(memcmp(R, Rf, sizeof *R * nn) == 0, "n=%d: exp is deterministic", n);
		free(wsf); free(Xf); free(Gf); free(dXf); free(Rff);
		free(ws); free(X); free(R); free(Rf); free(ref); free(G); free(dX); free(D); free(Xh);
	}
	/* the norm estimate at LieRE's scale (||X|| ~ 100 at n = 64, uniform
	 * [0, 2 pi) init), where power iteration's vectors left unscaled
	 * overflow float and its estimate with them */
	{
		int n = 64;
		double *X = malloc(sizeof *X * n * n);
		double *ws = aligned_alloc(64, sizeof(double) * ((expm_scratch(n) + 7) / 8 * 8));
		float *Xf = malloc(sizeof *Xf * n * n);
		float *wsf = aligned_alloc(64, sizeof(float) * ((expm_scratch_f32(n) + 15) / 16 * 16));
		for (int sc = 8; sc <= 24; sc += 4) {	/* ||X|| ~ 60 .. 200 */
			rand_skew(&r, n, sc, X);
			for (int k = 0; k < n * n; k++)
				Xf[k] = (float)X[k];
			int sq = expm_squarings(n, X, ws), sqf = expm_squarings_f32(n, Xf, wsf);
			CHECK(sq >= 5 && sqf <= sq && sqf >= sq - 1, "n=64 entries up to %d: float scales by 2^%d, "
			    "double by 2^%d", sc, sqf, sq);
		}
		free(X); free(ws); free(Xf); free(wsf);
	}
	test_lanes(&r);
	/* exp(0) = I exactly */
	{
		double X[64] = {0}, R[64], *ws = aligned_alloc(64, sizeof(double) * expm_scratch(8));
		expm_skew(8, X, R, ws);
		int id = 1;
		for (int k = 0; k < 64; k++)
			id &= R[k] == (k / 8 == k % 8);
		CHECK(id, "exp(0) = I exactly");
		free(ws);
	}
	return test_done();
}
