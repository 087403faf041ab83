/*
 * carve.h - the model's activation block handed out in pieces: one pass
 * with no block counts the bytes, a second hands out the same pieces.
 */
#ifndef CARVE_H
#define CARVE_H

#include <stddef.h>

/* n floats, 64-byte aligned, from *cur (NULL: counted in *total only). */
static inline float *
carve(char **cur, size_t n, size_t *total)
{
	size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
	*total += bytes;
	if (*cur == NULL)
		return NULL;
	float *p = (float *)*cur;
	*cur += bytes;
	return p;
}

#endif
