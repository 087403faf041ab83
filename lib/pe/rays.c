/* rays.c - tokens at exact multiples of another token's position (rays.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rays.h"

int
rays_init(struct rays *r, int maxT)
{
	memset(r, 0, sizeof *r);
	r->maxT = maxT;
	r->hcap = 16;
	while (r->hcap < 2 * maxT)
		r->hcap *= 2;
	r->start = malloc(sizeof(int) * (maxT + 1));
	r->tok = malloc(sizeof(int) * maxT);
	r->mult = malloc(sizeof(int) * maxT);
	r->base = malloc(sizeof(int) * maxT);
	r->ray = malloc(sizeof(int) * maxT);
	r->hash = malloc(sizeof(int) * r->hcap);
	if (!r->start || !r->tok || !r->mult || !r->base || !r->ray || !r->hash) {
		rays_free(r);
		return -1;
	}
	return 0;
}

void
rays_free(struct rays *r)
{
	free(r->start);
	free(r->tok);
	free(r->mult);
	free(r->base);
	free(r->ray);
	free(r->hash);
	r->start = r->tok = r->mult = r->base = r->ray = r->hash = NULL;
}

static uint32_t
hash_pos(int axes, const float *p)
{
	uint32_t h = 2166136261u;

	for (int a = 0; a < axes; a++) {
		float v = p[a] + 0.0f;		/* -0 and 0 alike */
		uint32_t bits;
		memcpy(&bits, &v, sizeof bits);
		h = (h ^ bits) * 16777619u;
	}
	return h ^ (h >> 15);
}

/* A token at position p, or -1. */
static int
lookup(const struct rays *r, int axes, const float *pos, const float *p)
{
	for (uint32_t h = hash_pos(axes, p) & (r->hcap - 1);; h = (h + 1) & (r->hcap - 1)) {
		int t = r->hash[h], same = 1;
		if (t < 0)
			return -1;
		for (int a = 0; a < axes; a++)
			same &= pos[(int64_t)t * axes + a] == p[a];
		if (same)
			return t;
	}
}

/* The largest m with pos_t = m pos_u exactly for a token u; 1 if none. */
static int
divisor(const struct rays *r, int axes, const float *pos, int t, int *u)
{
	const float *pt = pos + (int64_t)t * axes;
	int zero = 1;

	for (int a = 0; a < axes; a++)
		zero &= pt[a] == 0;
	*u = t;
	if (zero)
		return 1;
	for (int m = RAYS_MAXMULT; m >= 2; m--) {
		float c[3];
		int exact = 1;
		for (int a = 0; a < axes; a++) {
			c[a] = (float)((double)pt[a] / m);
			exact &= (double)c[a] * m == (double)pt[a];
		}
		int v = exact ? lookup(r, axes, pos, c) : -1;
		if (v >= 0 && v != t) {
			*u = v;
			return m;
		}
	}
	return 1;
}

void
rays_plan(struct rays *r, int T, int axes, const float *pos)
{
	int *base = r->base, *ray = r->ray, *cursor = r->hash;

	for (int h = 0; h < r->hcap; h++)
		r->hash[h] = -1;
	for (int t = 0; t < T; t++) {
		if (lookup(r, axes, pos, pos + (int64_t)t * axes) >= 0)
			continue;	/* a repeated position: the first stands */
		uint32_t h = hash_pos(axes, pos + (int64_t)t * axes) & (r->hcap - 1);
		while (r->hash[h] >= 0)
			h = (h + 1) & (r->hcap - 1);
		r->hash[h] = t;
	}
	/* The largest divisor; a token whose base is itself a multiple (m
	 * times k beyond RAYS_MAXMULT) becomes a base, so that rays never
	 * depend on one another.  A repeated position follows the first
	 * token there (ray[] marks them for now). */
	for (int t = 0; t < T; t++) {
		int u = lookup(r, axes, pos, pos + (int64_t)t * axes);
		ray[t] = u != t ? u : -1;
		r->mult[t] = u != t ? 0 : divisor(r, axes, pos, t, &base[t]);
	}
	for (int t = 0; t < T; t++)
		if (ray[t] < 0 && r->mult[base[t]] != 1) {
			base[t] = t;
			r->mult[t] = 1;
		}
	for (int t = 0; t < T; t++)
		if (ray[t] >= 0) {
			base[t] = base[ray[t]];
			r->mult[t] = r->mult[ray[t]];
		}
	/* rays numbered by their bases in token order, members by multiple */
	r->nray = 0;
	for (int t = 0; t < T; t++)
		if (base[t] == t)
			ray[t] = r->nray++;
	memset(r->start, 0, sizeof(int) * (r->nray + 1));
	for (int t = 0; t < T; t++)
		r->start[ray[base[t]] + 1]++;
	for (int k = 0; k < r->nray; k++) {
		r->start[k + 1] += r->start[k];
		cursor[k] = r->start[k];	/* the hash table is done with */
	}
	for (int t = 0; t < T; t++)
		r->tok[cursor[ray[base[t]]]++] = t;
	for (int k = 0; k < r->nray; k++)	/* insertion sort by m */
		for (int q = r->start[k] + 1; q < r->start[k + 1]; q++) {
			int t = r->tok[q], p = q;
			for (; p > r->start[k] && r->mult[r->tok[p - 1]] > r->mult[t]; p--)
				r->tok[p] = r->tok[p - 1];
			r->tok[p] = t;
		}
}
