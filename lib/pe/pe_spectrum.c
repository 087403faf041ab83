/*
 * pe_spectrum.c - the rotation frequencies of a set's generators: block j
 * of A_i is skew, with eigenvalues +-i omega (and a 0 when b is odd), and
 * exp(p_i A_i) turns each of its planes by p_i omega.  The eigenvalues
 * come from pe_scaled.c's decomposition, i A Hermitian, by LAPACK.
 */
#include <math.h>
#include <stdlib.h>

#include "pe.h"
#include "pe_impl.h"

int
pe_nfreq(const struct pe *pe)
{
	return pe->nblock * (pe->block / 2);
}

static int
ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int
pe_frequencies(struct pe *pe, const float *params, double *freq)
{
	int N = pe->axes, nb = pe->nblock, b = pe->block, nf = pe_nfreq(pe);
	int64_t bb = (int64_t)b * b, ng = N * nb * bb;
	double *G = malloc(sizeof *G * (size_t)(ng + scaled_scratch(b) + b));

	if (G == NULL)
		return err_set(&pe->err, "out of memory");
	double *ws = G + ng, *mu = ws + scaled_scratch(b);
	pe_generators(pe, params, G);
	for (int i = 0; i < N; i++) {
		double *f = freq + (int64_t)i * nf;
		for (int j = 0; j < nb; j++) {
			if (scaled_eig(b, G + (i * nb + j) * bb, ws, mu) != 0) {
				free(G);
				return err_set(&pe->err, "block %d of generator %d: no "
				    "eigenvalues (not finite?)", j, i);
			}
			/* mu ascending, -omega .. omega: the top b/2 */
			for (int k = 0; k < b / 2; k++)
				f[j * (b / 2) + k] = fabs(mu[b - 1 - k]);
		}
		qsort(f, (size_t)nf, sizeof *f, ascending);
	}
	free(G);
	return 0;
}
