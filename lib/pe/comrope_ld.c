/* comrope_ld.c - ComRoPE-LD (Yu et al. 2025): A_i block j = scale[i][j]
 * U_j, U[nblock][b(b-1)/2] then scale[axes][nblock], at first as the
 * official code draws them: U by pe_fill_comrope, the scales normal(0, 1)
 * (other inits: 1, or as ini->multipliers says); option tied shares a
 * layer's scales among its heads (pe_tied), as the official code's one
 * multiplier tensor per attention layer; in closed form (pe_scaled.c). */
#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"
#include "rng.h"
#include "skew.h"

/* tied: a layer's sets share their scales. */
struct comrope_ld {
	int	 tied;
};

static const struct pe_option options[] = {
	{ "tied", PE_OPT_FLAG, 0, offsetof(struct comrope_ld, tied) },
	{ 0 },
};

/* Tied: the scales [axes][nblock], after the U. */
static int64_t
tied(const struct pe *pe, int64_t *off)
{
	const struct comrope_ld *o = pe_opts(pe);

	*off = pe->nblock * tri(pe->block);
	return o->tied ? (int64_t)pe->axes * pe->nblock : 0;
}

static int64_t
set_params(const struct pe *pe)
{
	return pe->nblock * tri(pe->block) + (int64_t)pe->axes * pe->nblock;
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	int64_t n = pe->nblock * tri(pe->block);
	int normal = ini->multipliers == PE_MULT_NORMAL ||
	    (ini->multipliers == PE_MULT_DEFAULT && ini->kind == PE_INIT_DEFAULT);

	pe_fill_comrope(ini, r, p, n);
	for (int64_t i = 0; i < (int64_t)pe->axes * pe->nblock; i++)
		p[n + i] = normal ? (float)rng_normal(r) : 1;
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
	.name = "comrope-ld", .synopsis = "comrope-ld:B[,tied]", .flops_all = "comrope-ld:8",
	.flags = PEM_BLOCK | PEM_SCALED | PEM_SCALES | PEM_COMMUTES,
	.options = options, .tied = tied,
	.conv = PE_CONV_CENTRE,	/* model.py get_positions: (i + 0.5) / n */
	.set_params = set_params, .init = init, .generator = generator,
	.backward = backward, .angle_macs = angle_macs,
};
