/*
 * test_rays.c - grouping tokens by exact multiples of a base position:
 * every token once, pos = m * base pos exactly, bases not multiples of
 * other tokens (within the limit), repeats together, perturbed positions
 * alone.
 */
#include <stdlib.h>
#include <string.h>

#include "rays.h"
#include "rng.h"
#include "test.h"

/* Check the plan r of pos[T][axes]; returns the number of rays. */
static int
check_plan(const char *what, const struct rays *r, int T, int axes, const float *pos)
{
	int *seen = calloc(T, sizeof(int)), ok = 1;

	for (int k = 0; k < r->nray; k++) {
		int b = r->tok[r->start[k]];
		ok &= r->mult[b] == 1 && r->start[k] < r->start[k + 1];
		for (int q = r->start[k]; q < r->start[k + 1]; q++) {
			int t = r->tok[q];
			seen[t]++;
			if (q > r->start[k])
				ok &= r->mult[t] >= r->mult[r->tok[q - 1]];
			for (int a = 0; a < axes; a++)
				ok &= (double)pos[t * axes + a] == (double)r->mult[t] * pos[b * axes + a];
		}
	}
	for (int t = 0; t < T; t++)
		ok &= seen[t] == 1;
	CHECK(ok && r->start[r->nray] == T, "%s: every token once, at m times its base (%d rays for %d tokens)",
	    what, r->nray, T);
	free(seen);
	return r->nray;
}

int
main(void)
{
	struct rays r;
	float pos[3 * 200];
	struct rng g;

	CHECK(rays_init(&r, 200) == 0, "rays_init");

	/* an 8 x 8 grid of linspace(0, 1) plus a CLS at the centre */
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++) {
			pos[2 * (8 * i + j)] = i / 7.0f;
			pos[2 * (8 * i + j) + 1] = j / 7.0f;
		}
	pos[128] = pos[129] = 0.5f;
	rays_plan(&r, 65, 2, pos);
	int n = check_plan("8x8 linspace grid", &r, 65, 2, pos);
	CHECK(n < 50, "8x8 grid: a fair share of the tokens are multiples (%d rays)", n);

	/* integer grid: (2,4) = 2 (1,2), (6,3) = 3 (2,1); (1,2) is a base */
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++) {
			pos[2 * (8 * i + j)] = (float)i;
			pos[2 * (8 * i + j) + 1] = (float)j;
		}
	rays_plan(&r, 64, 2, pos);
	n = check_plan("8x8 integer grid", &r, 64, 2, pos);
	int b24 = -1, b12 = -1;
	for (int k = 0; k < r.nray; k++)
		for (int q = r.start[k]; q < r.start[k + 1]; q++) {
			if (r.tok[q] == 8 * 2 + 4)
				b24 = r.tok[r.start[k]];
			if (r.tok[q] == 8 * 1 + 2)
				b12 = r.tok[r.start[k]];
		}
	CHECK(b24 == 8 * 1 + 2 && b12 == 8 * 1 + 2 && r.mult[8 * 2 + 4] == 2,
	    "(2,4) is twice (1,2), the base of its ray");
	/* 1 origin + 1 for each primitive direction: 39 with gcd 1 in 0..7 */
	int prim = 1;
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++) {
			int a = i, c = j;
			while (c) { int t = a % c; a = c; c = t; }
			prim += a == 1;
		}
	CHECK(n == prim, "integer grid: one ray per primitive direction and the origin (%d, want %d)", n, prim);

	/* repeated positions join the first one's ray; 3D */
	for (int t = 0; t < 20; t++)
		for (int a = 0; a < 3; a++)
			pos[3 * t + a] = (float)((t % 5) * (a + 1)) * 0.5f;
	rays_plan(&r, 20, 3, pos);
	n = check_plan("3D positions repeated four times", &r, 20, 3, pos);
	CHECK(n == 2, "3D: the origin and one ray (%d)", n);

	/* perturbed positions: every token its own base */
	rng_seed(&g, 1, 0);
	for (int t = 0; t < 100; t++)
		for (int a = 0; a < 2; a++)
			pos[2 * t + a] = (float)(rng_uniform(&g) * 3);
	rays_plan(&r, 100, 2, pos);
	n = check_plan("random positions", &r, 100, 2, pos);
	CHECK(n == 100, "random positions: no multiples (%d rays)", n);

	/* beyond the limit: 17 x (1, 0) is no multiple, 16 x is */
	for (int t = 0; t < 18; t++) {
		pos[2 * t] = (float)t;
		pos[2 * t + 1] = 0;
	}
	pos[2 * 17] = 17;
	rays_plan(&r, 18, 2, pos);
	check_plan("a line of 18", &r, 18, 2, pos);
	CHECK(r.mult[16] == 16 && r.mult[17] == 1, "multiples up to %d, not beyond", RAYS_MAXMULT);
	rays_free(&r);
	return test_done();
}
