/* liere.c - LieRE_b (Ostmeier et al.): a free skew block per axis and
 * block, U[axes][nblock][b(b-1)/2], uniform in [0, 2 pi) (the LieRE
 * reference README); one full block without a subscript. */
#include "liere.h"
#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"
#include "skew.h"

void
pe_free_generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	skew_from_upper(pe->block, par + ((int64_t)i * pe->nblock + j) * tri(pe->block), 1, g);
}

static int64_t
set_params(const struct pe *pe)
{
	return pe->axes * pe->nblock * tri(pe->block);
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	pe_fill(ini, r, p, set_params(pe));
}

const struct pe_method pe_liere = {
	.name = "liere", .synopsis = "liere:B", .flops_all = "liere:8,liere:64",
	/* commuting only with 2 x 2 blocks (or a single axis) */
	.flags = PEM_BLOCK | PEM_BLOCK_FULL | PEM_COMMUTES_2X2,
	.conv = PE_CONV_LINSPACE,	/* the reference code's linspace(0, n/n0, n) */
	.set_params = set_params, .init = init, .generator = pe_free_generator,
};
