/* comrope_ld.c - ComRoPE-LD (Yu et al. 2025): A_i block j = scale[i][j]
 * U_j, U[nblock][b(b-1)/2] then scale[axes][nblock], the scales 1 at
 * first; in closed form (pe_comrope.c). */
#include "pe.h"
#include "pe_method.h"

static int64_t
set_params(const struct pe *pe)
{
	return pe->nblock * tri(pe->block) + (int64_t)pe->axes * pe->nblock;
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	int64_t n = pe->nblock * tri(pe->block);

	pe_fill(ini, r, p, n);
	for (int64_t i = 0; i < (int64_t)pe->axes * pe->nblock; i++)
		p[n + i] = 1;
}

static void
generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	int64_t k = tri(pe->block);

	skew_from_upper(pe->block, par + j * k, par[pe->nblock * k + (int64_t)i * pe->nblock + j], g);
}

static void
backward(const struct pe *pe, const float *par, const double *dg, float *dpar)
{
	int N = pe->axes, nb = pe->nblock;
	int64_t k = tri(pe->block);

	for (int j = 0; j < nb; j++)
		for (int i = 0; i < N; i++) {
			const double *g = dg + ((int64_t)i * nb + j) * k;
			double scale = par[nb * k + (int64_t)i * nb + j], ds = 0;
			for (int64_t q = 0; q < k; q++) {
				dpar[j * k + q] += (float)(scale * g[q]);
				ds += g[q] * par[j * k + q];
			}
			dpar[nb * k + (int64_t)i * nb + j] += (float)ds;
		}
}

/* s = sum_i scale[i][j] p_i per block (2 x 2 blocks: the angle sums) */
static double
angle_macs(const struct pe *pe)
{
	return (double)pe->axes * pe->nblock;
}

const struct pe_method pe_comrope_ld = {
	.name = "comrope-ld", .synopsis = "comrope-ld:B", .flops_all = "comrope-ld:8",
	.flags = PEM_BLOCK | PEM_SCALED | PEM_SCALES | PEM_COMMUTES,
	.set_params = set_params, .init = init, .generator = generator,
	.backward = backward, .angle_macs = angle_macs,
};
