/*
 * pe_impl.h - inside lib/: what the rotation code's two files share.
 * pe_rot.c computes rotations by exponentials; ComRoPE's blocks, which are
 * exp(s U_j) with one skew generator U_j and a scalar s of the position,
 * take a closed form in pe_comrope.c, one eigendecomposition per block and
 * call for every token.
 */
#ifndef PE_IMPL_H
#define PE_IMPL_H

#include <stdint.h>

struct pe;
struct pe_work;

/* n rounded up to a multiple of 8 (doubles of a 64-byte line). */
static inline int64_t
round8(int64_t n)
{
	return (n + 7) / 8 * 8;
}

/* Prefetch the n floats at p, to read or (rw 1) to write: a token's
 * blocks lie rsize floats apart, kilobytes, a stride hardware prefetch
 * does not follow.  As asm: GCC 12 deletes a loop of __builtin_prefetch
 * alone as a loop without effects, so other CPUs get no prefetch (a hint:
 * the results are the same). */
static inline void
prefetch_floats(const float *p, int64_t n, int rw)
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

/* Upper-triangle entries of a b x b block: b(b-1)/2. */
static inline int64_t
tri(int b)
{
	return (int64_t)b * (b - 1) / 2;
}

/* 1 when pe's rotations are comrope_rotations' (comrope-ap, comrope-ld
 * with blocks wider than 2). */
int	 comrope_closed(const struct pe *pe);
/* Doubles of one thread's scratch that the two calls below need. */
int64_t	 comrope_scratch(int b);
/* pe_rotations for comrope_closed(pe), in double. */
void	 comrope_rotations(const struct pe *pe, struct pe_work *w,
	    const float *params, int T, const float *pos, float *R);
/* pe_rotations_backward for comrope_closed(pe). */
void	 comrope_backward(const struct pe *pe, struct pe_work *w,
	    const float *params, int T, const float *pos, const float *R,
	    const float *dR, float *dparams);
/* G = s (U - U^T) for upper entries U[b(b-1)/2] (pe_rot.c). */
void	 skew_from_upper(int b, const float *U, double s, double *G);

#endif
