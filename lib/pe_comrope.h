/*
 * pe_comrope.h - inside lib/: ComRoPE's blocks in closed form
 * (pe_comrope.c), for pe_rot.c.  Block j of a comrope-ap or comrope-ld set
 * is exp(s U_j) with one skew generator U_j and a scalar s of the
 * position, so one eigendecomposition per block and call serves every
 * token.
 */
#ifndef PE_COMROPE_H
#define PE_COMROPE_H

#include <stdint.h>

struct pe;
struct pe_work;

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
