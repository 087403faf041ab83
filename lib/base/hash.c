/* hash.c - FNV-1a. */
#include "hash.h"

uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *c = p; n-- > 0; c++)
		h = (h ^ *c) * 0x100000001b3ULL;
	return h;
}
