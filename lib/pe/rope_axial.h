/*
 * rope_axial.h - axial RoPE's fixed generators (rope_axial.c), the torus
 * of the encodings built on it (rope-nd).
 */
#ifndef ROPE_AXIAL_H
#define ROPE_AXIAL_H

struct pe;

/* Pair j turns by -f p_a, f its group's RoPE frequency (option theta of
 * a struct pe_theta), a its axis. */
void	 pe_axial_generator(const struct pe *pe, const float *par, int i, int j,
	    double *g);

#endif
