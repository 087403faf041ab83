/*
 * pe_impl.h - inside lib/: what the rotation code's files share.
 * pe_rot.c computes rotations by exponentials; the blocks of scaled
 * generators (PEM_SCALED), exp(s U_j) with one skew generator U_j and a
 * scalar s of the position, take a closed form in pe_scaled.c, one
 * eigendecomposition per block and call for every token; pe_apply.c applies them; pe_basis.c makes the
 * bases of the encodings that rotate in one (pe.h).
 */
#ifndef PE_IMPL_H
#define PE_IMPL_H

#include <stdint.h>

#include "arch.h"
#include "pe_method.h"

struct pe;
struct pe_work;

/* n rounded up to a multiple of 8 (doubles of a 64-byte line). */
static inline int64_t
round8(int64_t n)
{
	return (n + 7) / 8 * 8;
}

/* r[j] = (a, b)[m[j]]: GCC's __builtin_shuffle, which clang lacks (its
 * __builtin_shufflevector takes literal indices only); there, lane by
 * lane, which its optimizer turns into shuffles for the constant masks
 * these are.  pe_shuffle1: the same within a. */
#ifdef __clang__
#define pe_shuffle(a, b, m) ({						\
	__typeof__(a) r_;						\
	const int n_ = (int)(sizeof r_ / sizeof r_[0]);			\
	for (int j_ = 0; j_ < n_; j_++)					\
		r_[j_] = (m)[j_] < n_ ? (a)[(m)[j_]] : (b)[(m)[j_] - n_]; \
	r_;								\
})
#define pe_shuffle1(a, m)	pe_shuffle(a, a, m)
#else
#define pe_shuffle	__builtin_shuffle
#define pe_shuffle1	__builtin_shuffle
#endif

/* r[i][c] becomes r[c][i] for W x W floats held a row per W-float vector
 * (W = 16, 8), in registers: 2 x 2 blocks of d x d entries swap their
 * off-diagonal blocks for d = 1, 2, 4 .. W/2, two-input shuffles of
 * whole rows (a scalar copy costs as much as applying a 64 x 64 block to
 * a dozen images, or an 8 x 8 block to 4 images). */
#define PE_TRANSPOSE_REGS(name, W, vec, veci, ...)			\
static inline __attribute__((always_inline)) void			\
name(vec r[W])								\
{									\
	static const veci lo[] = { __VA_ARGS__ };			\
									\
	_Pragma("GCC unroll 4")						\
	for (int s = 0, d = 1; d < W; s++, d *= 2)			\
		_Pragma("GCC unroll 16")				\
		for (int i = 0; i < W; i++)				\
			if (!(i & d)) {					\
				vec a = r[i], b = r[i + d];		\
				/* hi: the indices lo leaves out */	\
				veci h = lo[s] + d;			\
				r[i] = pe_shuffle(a, b, lo[s]);		\
				r[i + d] = pe_shuffle(a, b, h);		\
			}						\
}
PE_TRANSPOSE_REGS(transpose16_regs, 16, v16, v16i,
	{ 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30 },
	{ 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29 },
	{ 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27 },
	{ 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23 })
PE_TRANSPOSE_REGS(transpose8_regs, 8, v8, v8i,
	{ 0, 8, 2, 10, 4, 12, 6, 14 },
	{ 0, 1, 8, 9, 4, 5, 12, 13 },
	{ 0, 1, 2, 3, 8, 9, 10, 11 })
#undef PE_TRANSPOSE_REGS

/* Doubles of one thread's scratch that pe_basis.c needs (0 without a
 * basis). */
int64_t	 basis_doubles(const struct pe *pe);
/* 1 when pe's rotations are scaled_rotations' (comrope-ap, comrope-ld
 * with blocks wider than 2). */
int	 scaled_closed(const struct pe *pe);
/* Doubles of one thread's scratch that the two calls below need. */
int64_t	 scaled_scratch(int b);
/* The eigendecomposition i U = V diag(mu) V^H of a skew U[b][b], in
 * double, by LAPACK: mu[b] ascending, V in ws (scaled_scratch(b) doubles)
 * as its real and imaginary parts [r][k] and their transposes.  LAPACK's
 * info: 0, or not (-100: U not finite). */
int	 scaled_eig(int b, const double *U, double *ws, double *mu);
/* pe_rotations for scaled_closed(pe), in double. */
void	 scaled_rotations(const struct pe *pe, struct pe_work *w,
	    const float *params, int T, const float *pos, float *R);
/* pe_rotations_backward for scaled_closed(pe). */
void	 scaled_backward(const struct pe *pe, struct pe_work *w,
	    const float *params, int T, const float *pos, const float *R,
	    const float *dR, float *dparams);

#endif
