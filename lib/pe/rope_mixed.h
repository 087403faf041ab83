/*
 * rope_mixed.h - RoPE-Mixed's initialisation (rope_mixed.c), the start of
 * the encodings that learn its frequencies (string, circulant-string).
 */
#ifndef ROPE_MIXED_H
#define ROPE_MIXED_H

struct pe;
struct pe_init;
struct rng;

/* rope-mixed's initialisation of its U[axes][head_dim/2][1]. */
void	 pe_mixed_init(const struct pe *pe, const struct pe_init *ini,
	    struct rng *r, float *p);

#endif
