/* hash.h - FNV-1a, the toolkit's hash of bytes for keys and fingerprints. */
#ifndef HASH_H
#define HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_INIT	0xcbf29ce484222325ULL	/* FNV-1a's 64-bit offset basis */

/* FNV-1a over the n bytes at p, continuing from h (FNV1A_INIT to start). */
uint64_t fnv1a(uint64_t h, const void *p, size_t n);

#endif
