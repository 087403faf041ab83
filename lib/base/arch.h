/*
 * arch.h - what the kernels assume of the machine, in one place: their
 * vector types, prefetch and streaming stores, the compiler's tuning of
 * kernel files, and the constants that depend on caches and registers.
 *
 * The kernels (lib/math/expm*, lib/pe/pe_apply.c, pe_rot.c, pe_scaled.c)
 * are C on GCC's vector types, so they are correct on any target:
 * `make test PORTABLE=1` builds and tests them without -march=native.
 * They are sized for AVX-512, where a 64-byte vector is one of 32
 * registers.  AVX2 holds one in two of its 16 registers, so the larger
 * register tiles spill there: slower, with the same results.  The
 * exponentials' products, where that cost most, take smaller tiles there
 * (ARCH_VREGS_HERE).
 */
#ifndef ARCH_H
#define ARCH_H

#include <stdint.h>

#define ARCH_VREGS	32	/* 64-byte vector registers the tiles are sized for */
/* ... and those this target has (AVX2's 16 32-byte registers hold 8),
 * for a kernel whose tile would spill on every step otherwise. */
#ifdef __AVX512F__
#define ARCH_VREGS_HERE	32
#else
#define ARCH_VREGS_HERE	8
#endif

/* A register kernel of n live 64-byte vectors, checked where it is
 * compiled: a tile that outgrows the budget spills on every target. */
#define ARCH_TILE_FITS(n, what) \
	_Static_assert((n) <= ARCH_VREGS, what ": more live vectors than ARCH_VREGS")

/* Vectors of 16 and 8 floats, 8 and 4 doubles and 16 and 8 ints, at
 * their element's alignment; v16a at a 64-byte boundary. */
typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef float v16a __attribute__((vector_size(64), aligned(64)));
typedef double v8d __attribute__((vector_size(64), aligned(8)));
typedef double v4d __attribute__((vector_size(32), aligned(8)));
typedef int v16i __attribute__((vector_size(64)));
typedef int v8i __attribute__((vector_size(32)));

/* Kernel files: fused multiply-adds where C writes a * b + c (their
 * tests allow for the rounding), and GCC's dynamic cost model, which
 * vectorizes the short loops over a block that its default leaves. */
#define ARCH_CONTRACT	_Pragma("GCC optimize(\"fp-contract=fast\")")
#define ARCH_VECTORIZE	_Pragma("GCC optimize(\"vect-cost-model=dynamic\")")

/* Prefetch distances: how far ahead of its work a loop fetches, in its
 * own units, about a memory latency's worth. */
#define ARCH_AHEAD_TILES	2	/* pe_apply.c: tiles of images */
#define ARCH_AHEAD_TOKENS	6	/* pe_scaled.c: tokens' blocks */
#define ARCH_AHEAD_RAYS		16	/* pe_rot.c: rays of blocks */
#define ARCH_L1_FLOATS		4096	/* 16 KB: half a 32 KB L1 data cache */

/* Prefetch the cache line at p, to read or (rw 1) to write; rw a
 * constant.  A macro: clang wants __builtin_prefetch's constant before
 * inlining (make fuzz, make CC=clang), GCC after. */
#define arch_prefetch(p, rw)	__builtin_prefetch((p), (rw), 3)

/* Prefetch the n floats at p, to read or (rw 1) to write.  As asm: GCC
 * 12 deletes a loop of __builtin_prefetch alone as a loop without
 * effects, so other CPUs get no prefetch (a hint: the results are the
 * same). */
static inline void
arch_prefetch_floats(const float *p, int64_t n, int rw)
{
#if defined(__x86_64__)
	const char *a = (const char *)p;

	for (int64_t o = 0; o < n * (int64_t)sizeof(float); o += 64) {
		if (rw)
			__asm__ volatile("prefetchw %0" : : "m"(a[o]));
		else
			__asm__ volatile("prefetcht0 %0" : : "m"(a[o]));
	}
#else
	(void)p, (void)n, (void)rw;
#endif
}

/* *p = u past the caches where the target has 64-byte streaming stores
 * (p 64-byte aligned; the caller fences), else a plain store. */
#ifdef __AVX512F__
#include <immintrin.h>
#define ARCH_STREAMS	1
static inline __attribute__((always_inline)) void
arch_stream(float *p, v16 u)
{
	_mm512_stream_ps(p, (__m512)u);
}
/* Order the streaming stores before whatever follows. */
static inline void
arch_stream_fence(void)
{
	_mm_sfence();
}
#else
#define ARCH_STREAMS	0
static inline __attribute__((always_inline)) void
arch_stream(float *p, v16 u)
{
	*(v16 *)p = u;
}
static inline void
arch_stream_fence(void)
{
}
#endif

#endif
