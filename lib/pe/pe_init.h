/*
 * pe_init.h - filling generator entries as a struct pe_init says
 * (pe_init.c), for the encodings' own initialisations.
 */
#ifndef PE_INIT_H
#define PE_INIT_H

#include <stdint.h>

struct pe_init;
struct rng;

/* n generator entries of p as ini says: uniform in [0, scale) (DEFAULT and
 * UNIFORM), normal(0, std) or zeros. */
void	 pe_fill(const struct pe_init *ini, struct rng *r, float *p, int64_t n);
/* comrope's n generator entries as ini says: for DEFAULT the official
 * code's, the upper entries of P - P^T for P of normal(0, 1) entries;
 * else as pe_fill. */
void	 pe_fill_comrope(const struct pe_init *ini, struct rng *r, float *p,
	    int64_t n);

#endif
