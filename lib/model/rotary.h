/*
 * rotary.h - the rotary kernels of the position stage (rotary.c): a
 * layer's rotations applied to the queries and keys of a batch.
 */
#ifndef ROTARY_H
#define ROTARY_H

struct pe;

/*
 * Rotary encodings on a batch's q and k (lib/pe/pe.h): q' = R q, k' = R k per
 * record and head, with the rotations of layer l's heads from R[nset][Tr]
 * [rsize].  The last Tn of each record's T1 rows are rotated; a leading
 * CLS row when Tn = T1 - 1 passes unrotated.  qkv is [B][T1][3D] (q, k, v),
 * qkr [B][T1][2D] (q', k').
 */
struct rot {
	const struct pe *pe;
	int	 B, T1, H, hd;
	int	 Tn;		/* rotated rows per record */
	int	 Tr;		/* rows of R per set: Tn, or B * Tn */
	int	 per_record;	/* record b's rotations at row b * Tn of a set */
	int	 qcls;		/* only the CLS rows' queries are read (the last
				   block under CLS pooling): the others are not
				   rotated, and their gradient in dqkv is left
				   to the caller (zero) */
	const float *P;		/* [nset][hd][hd] bases (pe->basis, pe_bases), */
	float	*dP;		/* their gradient (+=), or NULL */
};
/* qkr = rotated q, k of qkv for layer l; with a basis B P^T q and B P^T k,
 * CLS rows unrotated by B too: what attention's dot products read of
 * P B P^T q and P B P^T k. */
void	 rotary_forward(const struct rot *r, int l, const float *R, float *qkr,
	    const float *qkv);
/* q, k columns of dqkv = R^T dqkr; dR += dqkr (q, k)^T, with each row of
 * dR summed by one thread in record order (the same bits for any thread
 * count); with a basis also dP (heads that share a set add in head
 * order), and dqkr and qkr (rotary_forward's) are overwritten. */
void	 rotary_backward(const struct rot *r, int l, const float *R, float *dR,
	    float *dqkv, float *dqkr, float *qkr, const float *qkv);

#endif
