/* test_rng.c - the random generator: determinism, streams, distributions. */
#include <stdlib.h>

#include "rng.h"
#include "test.h"

int
main(void)
{
	struct rng a, b, c;
	int same = 1, differ = 0, inrange = 1, perm_ok = 1;
	double sum = 0, sq = 0, usum = 0;
	int64_t hist[10] = { 0 }, perm[100];
	int n = 200000;

	rng_seed(&a, 42, 7);
	rng_seed(&b, 42, 7);
	rng_seed(&c, 42, 8);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = rng_u64(&a);
		same &= x == rng_u64(&b);
		differ += x != rng_u64(&c);
	}
	CHECK(same, "same seed and stream, same numbers");
	CHECK(differ == 1000, "another stream, other numbers");
	rng_seed(&a, 7, 42);
	rng_seed(&b, 42, 7);
	CHECK(rng_u64(&a) != rng_u64(&b), "(seed, stream) and (stream, seed) differ");
	rng_seed(&a, 1, 0);
	for (int i = 0; i < n; i++) {
		double g = rng_normal(&a), u = rng_uniform(&a);
		uint64_t k = rng_below(&a, 10);
		sum += g;
		sq += g * g;
		usum += u;
		inrange &= u >= 0 && u < 1 && k < 10;
		hist[k]++;
	}
	CHECK(inrange, "uniform in [0,1), below(10) in [0,10)");
	CHECK_CLOSE(sum / n, 0.0, 0.01, "normal mean ~ 0 (%g)", sum / n);
	CHECK_CLOSE(sq / n, 1.0, 0.01, "normal variance ~ 1 (%g)", sq / n);
	CHECK_CLOSE(usum / n, 0.5, 0.005, "uniform mean ~ 1/2 (%g)", usum / n);
	for (int k = 0; k < 10; k++)
		inrange &= llabs(hist[k] - n / 10) < n / 100;
	CHECK(inrange, "below(10) is flat to 1%%");
	for (int i = 0; i < 100; i++)
		perm[i] = i;
	rng_shuffle(&a, perm, 100);
	{
		int seen[100] = { 0 }, moved = 0;
		for (int i = 0; i < 100; i++) {
			perm_ok &= perm[i] >= 0 && perm[i] < 100 && !seen[perm[i]]++;
			moved += perm[i] != i;
		}
		CHECK(perm_ok && moved > 80, "shuffle is a permutation that moves most items");
	}
	rng_seed(&a, 3, 0);
	rng_split(&a, 1, &b);
	rng_split(&a, 2, &c);
	CHECK(rng_u64(&b) != rng_u64(&c), "split children differ");
	return test_done();
}
