/* rope_mixed.c - RoPE-Mixed (Heo et al. 2024): learnable frequencies per
 * axis and pair, liere:2's layout U[axes][head_dim/2][1] with its own
 * initialisation. */
#include <math.h>

#include "liere.h"
#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"
#include "rng.h"
#include "rope_mixed.h"

static int64_t
set_params(const struct pe *pe)
{
	return (int64_t)pe->axes * (pe->head_dim / 2);
}

/*
 * Group g of the pairs turns along unit direction u_g of a random
 * orthonormal frame of position space, pair k of K with frequency
 * theta^(-k/K).  In 2D the frame is Heo's (cos a, sin a) in (x, y) and its
 * perpendicular.  Stored as upper entries -f.
 */
static void
frame_init(const struct pe *pe, double theta, struct rng *r, float *p)
{
	int N = pe->axes, npair = pe->head_dim / 2;
	double u[3][3] = { { 0 } };

	if (N == 1) {
		u[0][0] = 1;
	} else if (N == 2) {
		double a = 2 * M_PI * rng_uniform(r);
		/* axes are (y, x) */
		u[0][0] = sin(a); u[0][1] = cos(a);
		u[1][0] = cos(a); u[1][1] = -sin(a);
	} else {	/* Gram-Schmidt on normal vectors: a uniform frame */
		for (int g = 0; g < N; g++) {
			double norm;
			do {
				for (int i = 0; i < N; i++)
					u[g][i] = rng_normal(r);
				for (int h = 0; h < g; h++) {
					double d = 0;
					for (int i = 0; i < N; i++)
						d += u[g][i] * u[h][i];
					for (int i = 0; i < N; i++)
						u[g][i] -= d * u[h][i];
				}
				norm = 0;
				for (int i = 0; i < N; i++)
					norm += u[g][i] * u[g][i];
			} while (norm < 1e-12);
			for (int i = 0; i < N; i++)
				u[g][i] /= sqrt(norm);
		}
	}
	for (int j = 0; j < npair; j++) {
		int g = pe_pair_group(pe, j);
		double f = pe_pair_freq(pe, j, theta);
		for (int i = 0; i < N; i++)
			p[(int64_t)i * npair + j] = (float)(-f * u[g][i]);
	}
}

void
pe_mixed_init(const struct pe *pe, const struct pe_init *ini, struct rng *r,
    float *p)
{
	if (ini->kind == PE_INIT_DEFAULT)
		frame_init(pe, ini->theta > 0 ? ini->theta : 10, r, p);
	else
		pe_fill(ini, r, p, set_params(pe));
}

const struct pe_method pe_rope_mixed = {
	.name = "rope-mixed", .synopsis = "rope-mixed", .flops_all = "rope-mixed",
	.timm = "rope.freqs",
	.flags = PEM_PAIRS | PEM_COMMUTES,
	.conv = PE_CONV_INTEGER,	/* RoPE-ViT's init_t_xy */
	.set_params = set_params, .init = pe_mixed_init,
	.generator = pe_free_generator,
};
