/*
 * pe_init.c - seeded initialisation of position-encoding parameters
 * (layouts in pe.h).  Each generator set draws from its own RNG stream.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pe.h"
#include "rng.h"

/* n generator entries as the init kind says (DEFAULT: uniform). */
static void
fill(const struct pe_init *ini, struct rng *r, float *p, int64_t n)
{
	double scale = ini->scale > 0 ? ini->scale : 2 * M_PI;

	for (int64_t i = 0; i < n; i++)
		p[i] = ini->kind == PE_INIT_NORMAL ? (float)(ini->std * rng_normal(r)) :
		    ini->kind == PE_INIT_ZEROS ? 0.0f : (float)(scale * rng_uniform(r));
}

/*
 * RoPE-Mixed (Heo et al. 2024): group g of the pairs turns along unit
 * direction u_g of a random orthonormal frame of position space, pair k
 * of K with frequency theta^(-k/K).  In 2D the frame is Heo's (cos a,
 * sin a) in (x, y) and its perpendicular.  Stored as upper entries -f.
 */
static void
rope_mixed(const struct pe *pe, double theta, struct rng *r, float *p)
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

int
pe_init_params(struct pe *pe, const struct pe_init *ini, float *params)
{
	int nb = pe->nblock, npair = pe->head_dim / 2;
	int64_t k = (int64_t)pe->block * (pe->block - 1) / 2;

	if (ini->kind < PE_INIT_DEFAULT || ini->kind > PE_INIT_ZEROS) {
		snprintf(pe->err, sizeof pe->err, "unknown initialisation %d", ini->kind);
		return -1;
	}
	if (ini->kind == PE_INIT_NORMAL && !(ini->std > 0 && isfinite(ini->std))) {
		snprintf(pe->err, sizeof pe->err, "normal initialisation needs a positive std");
		return -1;
	}
	if (!(ini->scale >= 0 && isfinite(ini->scale)) || !(ini->theta >= 0 && isfinite(ini->theta))) {
		snprintf(pe->err, sizeof pe->err, "initialisation scale and theta must be finite and >= 0");
		return -1;
	}
	for (int set = 0; set < pe->nset; set++) {
		float *p = params + (int64_t)set * pe->set_params;
		struct rng r;

		rng_seed(&r, ini->seed, (uint64_t)set);
		switch (pe->kind) {
		case PE_LIERE:
			fill(ini, &r, p, pe->axes * nb * k);
			break;
		case PE_COMROPE_AP:
			fill(ini, &r, p, nb * k);
			break;
		case PE_COMROPE_LD:
			fill(ini, &r, p, nb * k);
			for (int64_t i = 0; i < (int64_t)pe->axes * nb; i++)
				p[nb * k + i] = 1;
			break;
		case PE_ROPE_MIXED:
			if (ini->kind == PE_INIT_DEFAULT)
				rope_mixed(pe, ini->theta > 0 ? ini->theta : 10, &r, p);
			else
				fill(ini, &r, p, (int64_t)pe->axes * npair);
			break;
		case PE_RIEMANN:
			if (ini->kind == PE_INIT_DEFAULT)
				for (int j = 0; j < npair; j++)
					p[j] = (float)-pe_pair_freq(pe, j, ini->theta > 0 ? ini->theta : pe->theta);
			else
				fill(ini, &r, p, npair);
			p[npair] = 0;		/* w: s = 1 / (1 + alpha) */
			break;
		default:
			break;
		}
	}
	return 0;
}
