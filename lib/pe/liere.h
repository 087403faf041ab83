/*
 * liere.h - LieRE's generator layout, shared by the encodings that learn
 * one free skew block per axis and block (liere.c).
 */
#ifndef LIERE_H
#define LIERE_H

struct pe;

/* liere's and rope-mixed's layout U[axes][nblock][b(b-1)/2]: block j of
 * A_i is U[i][j] - U[i][j]^T. */
void	 pe_free_generator(const struct pe *pe, const float *par, int i, int j,
	    double *g);

#endif
