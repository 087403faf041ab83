/*
 * rays.h - group tokens whose positions are exact integer multiples of
 * another token's: since R(m p) = exp(m X(p)) = R(p)^m for any generators
 * (commuting or not), a token at m p costs one product per step of m
 * instead of a matrix exponential.  On an 8 x 8 grid about a third of the
 * tokens are such multiples.
 *
 * A ray is a base token (whose position is no small multiple of another
 * token's) and the tokens at exactly m times its position, m = 2 ..
 * RAYS_MAXMULT, compared in exact arithmetic, so perturbed positions
 * simply make every token its own base.  Tokens at the same position
 * join the first one's ray with its multiple.
 */
#ifndef RAYS_H
#define RAYS_H

#define RAYS_MAXMULT	16

struct rays {
	int	 maxT;
	int	 nray;
	int	*start;		/* [maxT + 1]: ray r is tok[start[r] .. start[r+1]) */
	int	*tok;		/* [maxT]: tokens, each ray's base first, then by m */
	int	*mult;		/* [maxT]: mult[t], token t's multiple of its base */
	int	*base;		/* [maxT]: scratch: each token's base */
	int	*ray;		/* [maxT]: scratch: each base's ray */
	int	*hash;		/* [hcap]: token indices by position, -1 empty */
	int	 hcap;
};

/* Room for up to maxT tokens: 0, or -1 when out of memory. */
int	 rays_init(struct rays *r, int maxT);
/* Free what rays_init allocated; safe on a zeroed or freed r. */
void	 rays_free(struct rays *r);
/* Group the T <= maxT tokens of pos[T][axes] into rays. */
void	 rays_plan(struct rays *r, int T, int axes, const float *pos /* [T][axes] */);

#endif
