/*
 * pe_conv.h - position conventions: where patch i of an axis of n patches
 * sits (posgen(1) writes them and names them in the POS header key), each
 * encoding's own (the positions its paper's code feeds it), and the
 * affine map from one into another.  Every convention is affine in i, so a
 * stream made under one maps exactly into any other, augmentations
 * (perturbations in patch sizes, offsets) and CLS positions included.
 */
#ifndef PE_CONV_H
#define PE_CONV_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct pe;

enum pe_conv_kind {
	PE_CONV_NONE,		/* an encoding that reads no positions; or unknown */
	PE_CONV_INTEGER,	/* i: RoPE-ViT, VisionLlama, RiemannFormer, Qwen2-VL */
	PE_CONV_LINSPACE,	/* i (n / n0) / (n - 1): the LieRE reference code */
	PE_CONV_CENTRE,		/* (i + 0.5) / n: ComRoPE */
	PE_CONV_FIXED		/* lo + (hi - lo) i / (n - 1) */
};

/* A convention on a grid. */
struct pe_conv {
	int	 kind;		/* enum pe_conv_kind */
	int	 axes;		/* 1 .. 3 */
	int64_t	 grid[3];	/* patches per axis, (t,) y, x */
	double	 n0[3];		/* linspace: the training grid (default: grid) */
	double	 lo, hi;	/* fixed: the range, lo < hi */
};

/* "integer", "linspace", "centre", "fixed" ("none" for PE_CONV_NONE). */
const char *pe_conv_name(int kind);
/* enum pe_conv_kind of a name above (or "center"), or -1. */
int	 pe_conv_parse_name(const char *name);
/* Position of patch i on axis a, and the patch size there (the spacing;
 * for a single patch: 1, 1/n0, 1/n or hi - lo). */
double	 pe_conv_coord(const struct pe_conv *c, int a, int64_t i);
double	 pe_conv_step(const struct pe_conv *c, int a);
/* c as POS writes it: "integer grid=7x7", "linspace n0=7x7 grid=14x14",
 * "centre grid=7x7", "fixed range=0,1 grid=7x7"; the length, as
 * snprintf. */
int	 pe_conv_format(const struct pe_conv *c, char *buf, size_t len);
/* c from a POS value as pe_conv_format writes it (words after it, such as
 * posgen's perturb= or seed=, are read past: they do not change the map),
 * the grid from its grid= word, else from grid (a GRID key; may be NULL).
 * 0, or -1 with why in e: no convention posgen names, or no grid. */
int	 pe_conv_parse(struct pe_conv *c, const char *pos, const char *grid,
	    struct err *e);
/* The convention pe's paper and code give it; PE_CONV_NONE when it reads
 * no positions (none, zeros, abs, sincos). */
int	 pe_conv_native(const struct pe *pe);
/* scale[a] and shift[a] per axis of from such that the native
 * convention's position of every patch i of from's grid is scale * (from's
 * position of i) + shift: on from's grid, as the encoding's code places
 * patches at any resolution; a native linspace spans 0 .. 1 on n0[a] patches
 * (the training grid; NULL: from's grid). */
void	 pe_conv_map(const struct pe_conv *from, int native, const int *n0,
	    double *scale, double *shift);

/* A CLSPOS value (posgen's CLS position) into cls[axes]: 1 coordinates,
 * 0 "none" or NULL, -1 with e when it is neither. */
int	 pe_conv_cls(const char *clspos, int axes, float *cls, struct err *e);

/* Whether a stream of positions made as pos (a POS value) suits a model
 * trained on positions made as trained (its training stream's POS, which
 * its checkpoint keeps): 0 when both name the same convention (on any
 * grid, any n0: another resolution) or either names none of posgen's; -1
 * with why in e when they name two (the model reads them in its
 * training stream's units). */
int	 pe_conv_check(const char *trained, const char *pos, struct err *e);

#endif
