/*
 * flops.h - parameters and multiply-accumulates (MACs) of one forward pass
 * of the ViT of vit.h for one record, split by component, under one of two
 * counting conventions (flops(1) documents both in full):
 *
 *   FLOPS_FULL   every multiply-accumulate our engine does: matrix products,
 *                and the position encoding's own arithmetic (angles and
 *                generator sums, matrix exponentials, rotation of q and k,
 *                locality weights).
 *   FLOPS_PAPER  the counting behind the LieRE paper's Table 5 (fvcore over
 *                the reference PyTorch code): matrix products only, the
 *                rotation as a product with dense BxB blocks on every token
 *                including CLS, counted once per layer when the rotation is
 *                shared by all heads; elementwise work and matrix
 *                exponentials are not counted.
 *
 * Both count a LayerNorm as 5 operations per element (fvcore's convention,
 * which the paper's totals include) and no bias additions, residuals,
 * softmax or GELU.
 */
#ifndef FLOPS_H
#define FLOPS_H

#include "vit.h"

enum flops_count { FLOPS_FULL, FLOPS_PAPER };

enum flops_part {
	FLOPS_PATCH,		/* patch embedding x W + b */
	FLOPS_EMBED,		/* CLS token, absolute position table */
	FLOPS_NORM,		/* LayerNorms */
	FLOPS_QKV,		/* q, k, v projections */
	FLOPS_SCORES,		/* q k^T */
	FLOPS_WEIGHTING,	/* softmax(.) v */
	FLOPS_PROJ,		/* attention output projection */
	FLOPS_MLP,		/* fc1 and fc2 */
	FLOPS_HEAD,		/* classifier */
	FLOPS_PE_ANGLES,	/* angles or sum_i p_i A_i per token */
	FLOPS_PE_EXP,		/* matrix exponentials (ComRoPE's closed form) */
	FLOPS_PE_ROTATE,	/* q' = R q, k' = R k */
	FLOPS_PE_LOCALITY,	/* locality weights and their product */
	FLOPS_NPART
};
#define FLOPS_PE_FIRST	FLOPS_PE_ANGLES	/* parts from here on are the encoding's own */

struct flops {
	double	 params[FLOPS_NPART];
	double	 macs[FLOPS_NPART];
	double	 params_total, macs_total;
	double	 pe_params, pe_macs;	/* the encoding's own share (incl. abs table) */
};

/* MACs charged for one BxB matrix exponential (B > 2) in FLOPS_FULL:
 * FLOPS_EXPM_PRODUCTS BxB matrix products, the 5 of lib/math/expm.c's degree-18
 * Taylor polynomial and 5 squarings (their number depends on the norm of
 * the generator sum); 2x2 blocks are a cosine and a sine, no MACs. */
#define FLOPS_EXPM_PRODUCTS	10
/* comrope-ap and comrope-ld (lib/pe/pe_scaled.c): per token and block two
 * BxB products, R = Re(V diag(e^(-i s mu)) V^H); per block and batch an
 * eigendecomposition, charged as 18 products (LAPACK zheev's ~9 B^3
 * complex operations with vectors). */
#define FLOPS_COMROPE_PRODUCTS	2
#define FLOPS_EIG_PRODUCTS	18

/* Short name of part ("qkv", "pe-rotate"). */
const char *flops_part_name(int part);
/* Human name of part ("QKV projections"). */
const char *flops_part_title(int part);

/* Count c for one record of T patch tokens (plus CLS) under convention
 * count, the position-dependent work (angles, exponentials, distances)
 * shared by a batch of batch records with the same positions.  0, or -1
 * with a reason in e (a config vit_config_check refuses, a bad encoding
 * spec, a block that does not divide the head). */
int	 flops_model(const struct vit_config *c, int T, int batch, int count,
	    struct flops *f, struct err *e);

#endif
