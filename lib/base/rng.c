/* rng.c - xoshiro256** seeded through splitmix64 (see rng.h). */
#include <math.h>
#include <string.h>

#include "rng.h"

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void
rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	/* Hash seed and stream separately so that (a, b) and (b, a) differ. */
	uint64_t a = seed, b = stream ^ 0x6a09e667f3bcc909ULL;
	uint64_t z = splitmix64(&a) ^ rotl(splitmix64(&b), 23);

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&z);
}

void
rng_split(const struct rng *r, uint64_t n, struct rng *child)
{
	rng_seed(child, r->s[0] ^ rotl(r->s[1], 13) ^ rotl(r->s[2], 29) ^ r->s[3], n);
}

uint64_t
rng_u64(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

uint64_t
rng_below(struct rng *r, uint64_t n)
{
	/* Lemire's nearly divisionless method: unbiased, one multiply usually. */
	unsigned __int128 m = (unsigned __int128)rng_u64(r) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t t = -n % n;
		while (lo < t) {
			m = (unsigned __int128)rng_u64(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double
rng_uniform(struct rng *r)
{
	return (rng_u64(r) >> 11) * 0x1.0p-53;
}

double
rng_normal(struct rng *r)
{
	double u, v, rad;

	if (r->has_spare) {
		r->has_spare = 0;
		return r->spare;
	}
	do
		u = rng_uniform(r);
	while (u == 0.0);
	v = rng_uniform(r);
	rad = sqrt(-2.0 * log(u));
	r->spare = rad * sin(2 * M_PI * v);
	r->has_spare = 1;
	return rad * cos(2 * M_PI * v);
}

void
rng_shuffle(struct rng *r, int64_t *perm, int64_t n)
{
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)rng_below(r, (uint64_t)i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

void
rng_trunc_normal(struct rng *r, float *p, size_t n, float std)
{
	for (size_t i = 0; i < n; i++) {
		double z;
		do
			z = rng_normal(r);
		while (z < -2 || z > 2);
		p[i] = (float)(z * std);
	}
}
