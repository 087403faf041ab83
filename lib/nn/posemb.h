/*
 * posemb.h - position tables added to the tokens h[B][R][D] (R = 1 + T
 * rows, CLS first), each row of h reading K = 2^A (table row, weight)
 * pairs of the multilinear interpolation around a point of the table's
 * grid G[A].  The encodings that own a table (lib/pe/abs.c, sincos.c,
 * ape.c) say where a token reads it; this is the interpolation they share.
 */
#ifndef POSEMB_H
#define POSEMB_H

#include <stddef.h>
#include <stdint.h>

/* The K = 2^A corners around table coordinates c[A] (clamped to the
 * table G[A]; NaN reads 0) into idx[K] (base + row) and w[K], the last
 * axis fastest. */
void	 posemb_corners(const float *c, const int *G, int A, int base, int *idx,
	    float *w);
/* Rows of a table read by token index on grid G[A]: a CLS row, then one
 * per cell. */
int64_t	 posemb_grid_rows(const int *G, int A);
/* idx[1+T][K] and w[1+T][K] of a table read by token index on grid G for
 * tokens on grid g (T cells): CLS reads row 0, token t row 1 + its cell,
 * at its cell centre mapped into G (PyTorch interpolate, align_corners
 * False; equal grids read rows exactly). */
void	 posemb_grid(int *idx, float *w, const int *G, const int *g, int A);
/* h[b][r] += sum_k w[e][k] tab[idx[e][k]], e = r, or b R + r when
 * per_record (idx and w [B][R][K]). */
void	 posemb_forward(float *h, const float *tab, const int *idx,
	    const float *w, int per_record, int B, int R, int K, int D);
/* dtab += the transpose of posemb_forward applied to dh[B][R][D]. */
void	 posemb_backward(float *dtab, const float *dh, const int *idx,
	    const float *w, int per_record, int B, int R, int K, int D);

#endif
