/*
 * rng.h - the one random generator of vitpipe: xoshiro256** keyed by
 * (seed, stream).  Streams are independent, so work split across threads
 * draws from rng_seed(seed, item) per item and the output does not depend
 * on the thread count.
 */
#ifndef RNG_H
#define RNG_H

#include <stddef.h>
#include <stdint.h>

struct rng {
	uint64_t s[4];
	double	 spare;		/* second Box-Muller deviate */
	int	 has_spare;
};

/* Key r by seed and stream number; every (seed, stream) pair differs. */
void	 rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
/* A child generator for stream n, derived from r's current state. */
void	 rng_split(const struct rng *r, uint64_t n, struct rng *child);
/* Uniform 64-bit integer. */
uint64_t rng_u64(struct rng *r);
/* Uniform integer in [0, n), without modulo bias; n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Uniform double in [0, 1) with 53 random bits. */
double	 rng_uniform(struct rng *r);
/* Standard normal deviate (Box-Muller, both halves used). */
double	 rng_normal(struct rng *r);
/* p[n] = std times normal deviates truncated to [-2, 2] (redrawn outside,
 * as timm's trunc_normal_), as floats. */
void	 rng_trunc_normal(struct rng *r, float *p, size_t n, float std);
/* Shuffle perm[n] in place (Fisher-Yates). */
void	 rng_shuffle(struct rng *r, int64_t *perm, int64_t n);

#endif
