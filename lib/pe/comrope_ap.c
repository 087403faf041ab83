/* comrope_ap.c - ComRoPE-AP (Yu et al. 2025): block j driven by axis
 * j mod axes alone, U[nblock][b(b-1)/2], at first as the official code
 * draws them (pe_fill_comrope); in closed form (pe_scaled.c). */
#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"
#include "skew.h"

static int64_t
set_params(const struct pe *pe)
{
	return pe->nblock * tri(pe->block);
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	pe_fill_comrope(ini, r, p, set_params(pe));
}

static void
generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	if (j % pe->axes == i)
		skew_from_upper(pe->block, par + j * tri(pe->block), 1, g);
}

static void
backward(const struct pe *pe, const float *par, const double *dg, float *dpar)
{
	int N = pe->axes, nb = pe->nblock;
	int64_t k = tri(pe->block);

	for (int j = 0; j < nb; j++)
		for (int64_t q = 0; q < k; q++)
			dpar[j * k + q] += (float)dg[((int64_t)(j % N) * nb + j) * k + q];
}

/* s = p_(j mod axes): nothing to sum; 2 x 2 blocks take the angle sums */
static double
angle_macs(const struct pe *pe)
{
	return pe->block > 2 ? 0 : (double)pe->axes * pe->nblock;
}

const struct pe_method pe_comrope_ap = {
	.name = "comrope-ap", .synopsis = "comrope-ap:B", .flops_all = "comrope-ap:8",
	.flags = PEM_BLOCK | PEM_SCALED | PEM_COMMUTES,
	.conv = PE_CONV_CENTRE,	/* model.py get_positions: (i + 0.5) / n */
	.set_params = set_params, .init = init, .generator = generator,
	.backward = backward, .angle_macs = angle_macs,
};
