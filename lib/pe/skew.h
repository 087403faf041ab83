/*
 * skew.h - skew-symmetric blocks from their upper triangles, the layout of
 * every learned generator (pe.h): U[b(b-1)/2], row-major over i < j.
 */
#ifndef SKEW_H
#define SKEW_H

#include <stdint.h>

/* G = s (U - U^T) for upper entries U[b(b-1)/2]. */
static inline void
skew_from_upper(int b, const float *U, double s, double *G)
{
	int64_t k = 0;

	for (int i = 0; i < b; i++) {
		G[i * b + i] = 0;
		for (int j = i + 1; j < b; j++, k++) {
			G[i * b + j] = s * U[k];
			G[j * b + i] = -s * U[k];
		}
	}
}
/* Upper-triangle entries of a b x b block: b(b-1)/2. */
static inline int64_t
tri(int b)
{
	return (int64_t)b * (b - 1) / 2;
}

#endif
