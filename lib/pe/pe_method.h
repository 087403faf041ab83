/*
 * pe_method.h - one position encoding's descriptor.  Each encoding lives
 * in one file, lib/pe/NAME.c, that defines one const struct pe_method;
 * lib/pe/all.c lists them, and everything that names the encodings (the
 * --pe grammar, usage lists, error texts, flops --pe all, the man-page
 * test) reads that list.  The engine (pe_rot.c, pe_scaled.c, pe_apply.c,
 * pe_basis.c) knows structures, not names: generators per (axis, block), a
 * rotation per token in closed form, or one generator per block times a
 * scalar of the position (comrope's closed form); and, around any of them,
 * an orthogonal basis per set (R = P B(x) P^T).
 */
#ifndef PE_METHOD_H
#define PE_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "pe.h"

struct pe;
struct pe_init;
struct rng;

enum {
	PEM_BLOCK	= 1 << 0,	/* takes a block size, NAME:B */
	PEM_BLOCK_FULL	= 1 << 1,	/* ... which defaults to head_dim */
	PEM_PAIRS	= 1 << 2,	/* 2 x 2 blocks: an even head_dim, a pair per axis */
	PEM_BASELINE	= 1 << 5,	/* the model flops compares the others with */
	PEM_IDENTITY	= 1 << 6,	/* R = I */
	PEM_SCALED	= 1 << 7,	/* R = exp(s U_j) per block, U[nblock][b(b-1)/2]
					   first in a set: pe_scaled.c's closed form
					   (blocks wider than 2); s = p_(j mod axes) */
	PEM_COMMUTES	= 1 << 8,	/* R(x)^T R(y) = R(y - x) */
	PEM_COMMUTES_2X2 = 1 << 9,	/* ... with 2 x 2 blocks or a single axis */
	PEM_NOT_ORTHOGONAL = 1 << 10,	/* R^T R != I */
	PEM_SCALES	= 1 << 11,	/* PEM_SCALED with s = sum_i scale[i][j] p_i,
					   the scales [axes][nblock] after the U */
};

/*
 * An option of an encoding, after its name in a spec: "riemann,alpha=0.5,
 * reflect".  Each encoding keeps its options in a struct of its own inside
 * struct pe (pe->opt, at most PE_OPTBYTES); its descriptor lists them, and
 * pe.c parses, checks and prints them from that list alone (as
 * libavcodec's AVOption).  The canonical spec names, in the list's order,
 * the words given and the numbers that differ from their defaults.
 */
enum pe_opt_kind {
	PE_OPT_FLAG,		/* a word, "reflect": int, 1 when given */
	PE_OPT_POSITIVE,	/* "alpha=0.5": a double, positive and finite */
};
struct pe_option {
	const char	*name;
	int		 kind;		/* enum pe_opt_kind */
	double		 def;		/* PE_OPT_POSITIVE's default */
	size_t		 offset;	/* in the encoding's option struct */
};
/* The encoding's option struct inside pe. */
static inline const void *
pe_opts(const struct pe *pe)
{
	return pe->opt.bytes;
}
/* The options of the encodings with a frequency base alone (rope-axial,
 * rope-nd, mrope): theta=, default 100. */
struct pe_theta {
	double	 theta;
};
#define PE_OPTION_THETA(type) \
	{ "theta", PE_OPT_POSITIVE, 100, offsetof(type, theta) }

/*
 * A position table the model adds to the tokens instead of rotating q and
 * k (abs, sincos, ape): rows of D floats, a token reading K = 2^A (row,
 * weight) pairs of a multilinear interpolation (lib/nn/posemb.h), either by
 * its index on the token grid (grid) or at its position (sample).
 */
struct pe_table {
	const char	*tensor;	/* the learned table's name in checkpoints
					   ("pos_embed"); NULL: a fixed table */
	/* Rows of the table for the training grid G[A]. */
	int64_t		(*rows)(const int *G, int A);
	/* Seeded initialisation of a learned table tab[n] (r: its stream). */
	void		(*init)(float *tab, size_t n, struct rng *r);
	/* A fixed table tab[rows][D] for the grid G (pe->axes axes). */
	void		(*fill)(const struct pe *pe, float *tab, const int *G, int D);
	/* Read by token index: idx, w [1+T][K] for tokens on grid g[A] of a
	 * table made for G[A] (CLS first); or NULL. */
	void		(*grid)(int *idx, float *w, const int *G, const int *g, int A);
	/* Read at positions: idx, w [N][K] for positions pos[N][pe->axes] (the
	 * CLS's first; pos is scratch, the hook may change it) on a table of
	 * grid G; or NULL. */
	void		(*sample)(const struct pe *pe, int *idx, float *w, float *pos,
			    int N, const int *G);
	/* dtab += the gradient of the rows read (posemb_backward); NULL: a
	 * fixed table. */
	void		(*backward)(float *dtab, const float *dh, const int *idx,
			    const float *w, int per_record, int B, int R, int K, int D);
	int		 min_width;	/* the model's width D at least this times
					   its axes (sincos: a sine and a cosine
					   per axis), or 0 */
};

struct pe_method {
	const char	*name;		/* "liere" */
	const char	*synopsis;	/* "liere:B", "rope-axial[,theta=T]" */
	const char	*flops_all;	/* specs flops --pe all shows, or NULL */
	int		 flags;		/* PEM_* */
	const struct pe_table *table;	/* a position table, not a rotation; or NULL */
	const char	*timm;		/* the timm tensor that holds it ("pos_embed",
					   "rope.freqs"), or NULL */
	int		 conv;		/* enum pe_conv_kind (pe_conv.h): the positions
					   its paper's code feeds it; 0: reads none */
	/* Its options, ended by a NULL name; NULL: none. */
	const struct pe_option *options;
	/* Checks of a parsed pe against the model's shape beyond the
	 * generic ones: 0, or -1 with pe->err; NULL: none. */
	int		(*check)(struct pe *pe);
	/* Tied parameters (pe_tied): their count per set and their first
	 * float in *off; NULL: none. */
	int64_t		(*tied)(const struct pe *pe, int64_t *off);
	/* Learnable floats per generator set (pe's shape fields are set);
	 * NULL: none. */
	int64_t		(*set_params)(const struct pe *pe);
	/* Seeded initialisation of one set's p[set_params] by ini (r: the
	 * set's stream); NULL: no parameters. */
	void		(*init)(const struct pe *pe, const struct pe_init *ini,
			    struct rng *r, float *p);
	/* Block j of generator A_i of one set into g[b][b] (zeroed): R is
	 * exp(sum_i p_i A_i).  NULL: R = I. */
	void		(*generator)(const struct pe *pe, const float *par, int i,
			    int j, double *g);
	/* dpar[set_params] += dL/dpar of one set from dg[axes][nblock][b(b-1)/2]
	 * = dL/d(upper entries of the A_i); NULL: dg is dL/dpar itself. */
	void		(*backward)(const struct pe *pe, const float *par,
			    const double *dg, float *dpar);
	/* R of one token in closed form, [nblock][b][b], and its backward
	 * (dg[set_params] += dL/dpar given dR); NULL: exp of the generators. */
	void		(*token)(const struct pe *pe, const float *par,
			    const double *p, float *R);
	void		(*token_backward)(const struct pe *pe, const float *par,
			    const double *p, const float *dR, double *dg);
	/* Multiply-accumulates per token and set before the rotation (angles,
	 * generator sums), for flops; NULL: the generic count. */
	double		(*angle_macs)(const struct pe *pe);
	/* R = P B(x) P^T: B(x) the rotation above, P an orthogonal basis
	 * [head_dim][head_dim] per set that basis makes from the set's
	 * parameters once a step (ws: basis_scratch doubles); basis_backward
	 * adds dL/dpar given dP = dL/dP.  basis_macs: basis's
	 * multiply-accumulates per set, for flops.  NULL: no basis (P = I). */
	void		(*basis)(const struct pe *pe, const float *par, double *P,
			    double *ws);
	void		(*basis_backward)(const struct pe *pe, const float *par,
			    const double *dP, float *dpar, double *ws);
	int64_t		(*basis_scratch)(const struct pe *pe);
	double		(*basis_macs)(const struct pe *pe);
};

/* The registered encodings, NULL-terminated (lib/pe/all.c). */
extern const struct pe_method *const pe_methods[];

#endif
