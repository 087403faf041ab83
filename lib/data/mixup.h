/*
 * mixup.h - mixup (Zhang et al. 2018) on a batch of patch tensors and soft
 * targets: pairs of records are blended with one weight lambda ~ Beta(a, a)
 * per batch.  The LieRE paper's 3D recipe.
 */
#ifndef MIXUP_H
#define MIXUP_H

#include <stdint.h>

#include "rng.h"

/* A Gamma(shape, 1) deviate, shape > 0 (Marsaglia-Tsang). */
double	 rng_gamma(struct rng *r, double shape);
/* A Beta(a, b) deviate, a, b > 0. */
double	 rng_beta(struct rng *r, double a, double b);
/* Blend the B records of x[B][nx] and target[B][classes] in random pairs,
 * in place: (x_i, x_j) -> (l x_i + (1-l) x_j, l x_j + (1-l) x_i) with
 * l ~ Beta(alpha, alpha) drawn from r; with B odd one record stays as it
 * is.  perm[B] is scratch.  Returns l. */
double	 mixup_batch(struct rng *r, double alpha, float *x, int64_t nx,
	    float *target, int classes, int B, int64_t *perm);

#endif
