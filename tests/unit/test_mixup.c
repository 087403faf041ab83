/*
 * test_mixup.c - Beta deviates and pairwise mixup of inputs and targets.
 */
#include "mixup.h"
#include "test.h"

/* The documented blend: a pair (i, j) becomes (l x_i + (1-l) x_j,
 * l x_j + (1-l) x_i), and the targets the same with the same l, so record
 * i keeps weight l on its own class.  Records start one-hot in distinct
 * classes (class i for record i), so a mixed target names the partner. */
static void
pairs(struct rng *r)
{
	enum { B = 7, NX = 3, C = 8 };
	float x0[B][NX], x[B][NX], t[B][C];
	int64_t perm[B];
	double xerr = 0, terr = 0, dmin = 1;
	int paired = 0, alone = 0, bad = 0;

	for (int rep = 0; rep < 4; rep++) {
		for (int i = 0; i < B; i++) {
			for (int k = 0; k < NX; k++)
				x0[i][k] = x[i][k] = 10 * i + k * k;
			for (int c = 0; c < C; c++)
				t[i][c] = c == i;
		}
		float l = (float)mixup_batch(r, 1.0, &x[0][0], NX, &t[0][0], C, B, perm);
		dmin = minn(dmin, fabs(l - 0.5));
		for (int i = 0; i < B; i++) {
			int j = -1, others = 0;
			for (int c = 0; c < C; c++)
				if (c != i && t[i][c] != 0)
					j = c, others++;
			if (others > 1) {
				bad++;
				continue;
			}
			if (j < 0) {	/* the odd one out: untouched */
				alone++;
				for (int k = 0; k < NX; k++)
					xerr = maxn(xerr, fabs(x[i][k] - x0[i][k]));
				terr = maxn(terr, fabs(t[i][i] - 1));
				continue;
			}
			paired++;
			for (int k = 0; k < NX; k++)
				xerr = maxn(xerr, fabs(x[i][k] -
				    (l * x0[i][k] + (1 - l) * x0[j][k])));
			terr = maxn(terr, fabs(t[i][i] - l));
			terr = maxn(terr, fabs(t[i][j] - (1 - l)));
		}
	}
	/* swapped weights are off by |2l - 1| in the targets and 10 times
	 * that or more in the inputs: at least 0.1 and 1 with l this far
	 * from 1/2 */
	CHECK(dmin > 0.05, "every lambda at least %.3f from 1/2 (the checks "
	    "below can fail)", dmin);
	CHECK(bad == 0 && paired == 4 * (B - 1) && alone == 4,
	    "each record mixed with one partner, one left alone per batch");
	CHECK(xerr < 1e-4, "record i's input is l x_i + (1-l) x_j, its partner's "
	    "l x_j + (1-l) x_i (worst error %.2g)", xerr);
	CHECK(terr < 1e-6, "record i's target is l on its class, 1-l on its "
	    "partner's: the inputs' weight (worst error %.2g)", terr);
}

int
main(void)
{
	struct rng r;
	double s = 0, s2 = 0;
	int n = 20000;

	rng_seed(&r, 1, 0);
	for (int i = 0; i < n; i++) {
		double b = rng_beta(&r, 0.4, 0.4);
		s += b;
		s2 += b * b;
	}
	/* Beta(a, a): mean 1/2, variance 1 / (4 (2a + 1)). */
	CHECK_CLOSE(s / n, 0.5, 0.01, "Beta(0.4, 0.4) mean");
	CHECK_CLOSE(s2 / n - (s / n) * (s / n), 1 / (4 * 1.8), 0.01, "Beta(0.4, 0.4) variance");
	/* Beta(2, 6): mean a/(a+b) = 1/4, sd 0.144; over 100000 draws the
	 * mean's sd is 0.00046, so 0.003 is over 6 sd (a sampler off by
	 * 0.01, as with Marsaglia-Tsang's d = shape - 1/2, fails). */
	int nb = 100000;
	s = 0;
	for (int i = 0; i < nb; i++)
		s += rng_beta(&r, 2, 6);
	CHECK_CLOSE(s / nb, 0.25, 0.003, "Beta(2, 6) mean");
	/* Gamma(2, 1): mean 2, variance 2; the mean's sd over 100000 draws
	 * is 0.0045, the tolerance 0.03. */
	s = s2 = 0;
	for (int i = 0; i < nb; i++) {
		double g = rng_gamma(&r, 2);
		s += g;
		s2 += g * g;
	}
	CHECK_CLOSE(s / nb, 2, 0.015, "Gamma(2) mean");
	CHECK_CLOSE(s2 / nb - (s / nb) * (s / nb), 2, 0.05, "Gamma(2) variance");

	enum { B = 5, NX = 3, C = 4 };
	float x[B][NX], t[B][C];
	int64_t perm[B];
	for (int i = 0; i < B; i++) {
		for (int k = 0; k < NX; k++)
			x[i][k] = 10 * i + k;
		for (int c = 0; c < C; c++)
			t[i][c] = c == i % C;
	}
	double l = mixup_batch(&r, 1.0, &x[0][0], NX, &t[0][0], C, B, perm);
	CHECK(l > 0 && l < 1, "lambda %.3f in (0, 1)", l);
	int sums = 1, same = 0, lin = 1;
	for (int i = 0; i < B; i++) {
		double ts = 0;
		for (int c = 0; c < C; c++)
			ts += t[i][c];
		sums &= fabs(ts - 1) < 1e-6;
		same += x[i][0] == 10 * i;
		/* A blend of records keeps x[i][1] - x[i][0] = 1. */
		lin &= fabs(x[i][1] - x[i][0] - 1) < 1e-4;
	}
	CHECK(sums, "mixed targets still sum to 1");
	CHECK(same == 1, "odd batch: exactly one record left as it is");
	CHECK(lin, "inputs are convex blends");
	pairs(&r);
	return test_done();
}
