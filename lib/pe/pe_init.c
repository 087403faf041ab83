/*
 * pe_init.c - seeded initialisation of position-encoding parameters
 * (layouts in pe.h): the checks, and each generator set's own RNG stream
 * for its encoding's init (lib/pe/NAME.c).
 */
#include <math.h>
#include <string.h>

#include "pe.h"
#include "pe_init.h"
#include "pe_method.h"
#include "rng.h"

void
pe_fill(const struct pe_init *ini, struct rng *r, float *p, int64_t n)
{
	double scale = ini->scale > 0 ? ini->scale : 2 * M_PI;

	for (int64_t i = 0; i < n; i++)
		p[i] = ini->kind == PE_INIT_NORMAL ? (float)(ini->std * rng_normal(r)) :
		    ini->kind == PE_INIT_ZEROS ? 0.0f : (float)(scale * rng_uniform(r));
}

void
pe_fill_comrope(const struct pe_init *ini, struct rng *r, float *p, int64_t n)
{
	if (ini->kind != PE_INIT_DEFAULT) {
		pe_fill(ini, r, p, n);
		return;
	}
	/* the official code draws P, normal(0, 1) entries, and takes the
	 * block P - P^T: its upper entry P_ij - P_ji is this difference */
	for (int64_t i = 0; i < n; i++) {
		double a = rng_normal(r);
		p[i] = (float)(a - rng_normal(r));
	}
}

int
pe_init_params(struct pe *pe, const struct pe_init *ini, float *params)
{
	if (ini->kind < PE_INIT_DEFAULT || ini->kind > PE_INIT_ZEROS)
		return err_set(&pe->err, "unknown initialisation %d", ini->kind);
	if (ini->kind == PE_INIT_NORMAL && !(ini->std > 0 && isfinite(ini->std)))
		return err_set(&pe->err, "normal initialisation needs a positive std");
	if (!(ini->scale >= 0 && isfinite(ini->scale)) || !(ini->theta >= 0 && isfinite(ini->theta)))
		return err_set(&pe->err, "initialisation scale and theta must be finite and >= 0");
	if (ini->multipliers < PE_MULT_DEFAULT || ini->multipliers > PE_MULT_NORMAL ||
	    (ini->multipliers != PE_MULT_DEFAULT && !(pe->method->flags & PEM_SCALES)))
		return err_set(&pe->err, "multipliers apply to comrope-ld, not %s",
		    pe->method->name);
	for (int set = 0; set < pe->nset; set++) {
		float *p = params + (int64_t)set * pe->set_params;
		struct rng r;

		rng_seed(&r, ini->seed, (uint64_t)set);
		if (pe->method->init)
			pe->method->init(pe, ini, &r, p);
	}
	int64_t off, n = pe_tied(pe, &off);
	for (int set = 0; n > 0 && set < pe->nset; set++) {
		int first = pe_tie_first(pe, set);
		if (first != set)
			memcpy(params + set * pe->set_params + off,
			    params + first * pe->set_params + off, sizeof(float) * n);
	}
	return 0;
}
