/*
 * pe_method.h - one position encoding's descriptor.  Each encoding lives
 * in one file, lib/pe/NAME.c, that defines one const struct pe_method;
 * lib/pe/all.c lists them, and everything that names the encodings (the
 * --pe grammar, usage lists, error texts, flops --pe all, the man-page
 * test) reads that list.  The engine (pe_rot.c, pe_comrope.c, pe_apply.c,
 * pe_basis.c) knows structures, not names: generators per (axis, block), a
 * rotation per token in closed form, or one generator per block times a
 * scalar of the position (comrope's closed form); and, around any of them,
 * an orthogonal basis per set (R = P B(x) P^T).
 */
#ifndef PE_METHOD_H
#define PE_METHOD_H

#include <stdint.h>

struct pe;
struct pe_init;
struct rng;

enum {
	PEM_BLOCK	= 1 << 0,	/* takes a block size, NAME:B */
	PEM_BLOCK_FULL	= 1 << 1,	/* ... which defaults to head_dim */
	PEM_PAIRS	= 1 << 2,	/* 2 x 2 blocks: an even head_dim, a pair per axis */
	PEM_THETA	= 1 << 3,	/* option theta= (frequency base) */
	PEM_ALPHA	= 1 << 4,	/* options alpha= and reflect */
	PEM_NOT_ROTARY	= 1 << 5,	/* a position table: the engine's business */
	PEM_IDENTITY	= 1 << 6,	/* R = I */
	PEM_SCALED	= 1 << 7,	/* R = exp(s U_j) per block, U[nblock][b(b-1)/2]
					   first in a set: pe_comrope.c's closed form
					   (blocks wider than 2); s = p_(j mod axes) */
	PEM_COMMUTES	= 1 << 8,	/* R(x)^T R(y) = R(y - x) */
	PEM_COMMUTES_2X2 = 1 << 9,	/* ... with 2 x 2 blocks or a single axis */
	PEM_NOT_ORTHOGONAL = 1 << 10,	/* R^T R != I */
	PEM_SCALES	= 1 << 11,	/* PEM_SCALED with s = sum_i scale[i][j] p_i,
					   the scales [axes][nblock] after the U */
	PEM_OFFICIAL	= 1 << 12,	/* option official (ape, 2 or 3 axes) */
};

struct pe_method {
	const char	*name;		/* "liere" */
	const char	*synopsis;	/* "liere:B", "rope-axial[,theta=T]" */
	const char	*flops_all;	/* specs flops --pe all shows, or NULL */
	int		 flags;		/* PEM_* */
	int		 table;		/* enum pe_table */
	int		 conv;		/* enum pe_conv_kind (pe_conv.h): the positions
					   its paper's code feeds it; 0: reads none */
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

/* liere's and rope-mixed's layout U[axes][nblock][b(b-1)/2]: block j of
 * A_i is U[i][j] - U[i][j]^T (lib/pe/liere.c). */
void	 pe_free_generator(const struct pe *pe, const float *par, int i, int j,
	    double *g);
/* rope-axial's fixed generators (lib/pe/rope_axial.c). */
void	 pe_axial_generator(const struct pe *pe, const float *par, int i, int j,
	    double *g);
/* rope-mixed's initialisation of its U[axes][head_dim/2][1]
 * (lib/pe/rope_mixed.c). */
void	 pe_mixed_init(const struct pe *pe, const struct pe_init *ini,
	    struct rng *r, float *p);
/* n generator entries of p as ini says: uniform in [0, scale) (DEFAULT and
 * UNIFORM), normal(0, std) or zeros (pe_init.c). */
void	 pe_fill(const struct pe_init *ini, struct rng *r, float *p, int64_t n);
/* comrope's n generator entries as ini says: for DEFAULT the official
 * code's, the upper entries of P - P^T for P of normal(0, 1) entries;
 * else as pe_fill (pe_init.c). */
void	 pe_fill_comrope(const struct pe_init *ini, struct rng *r, float *p,
	    int64_t n);
/* G = s (U - U^T) for upper entries U[b(b-1)/2]. */
static inline void
skew_from_upper(int b, const float *U, double s, double *G)
{
	int64_t k = 0;

	for (int i = 0; i < b; i++) {
		G[i * b + i] = 0;
		for (int j = i + 1; j < b; j++, k++) {
			G[i * b + j] = s * U[k];
			G[j * b + i] = -s * U[k];
		}
	}
}
/* Upper-triangle entries of a b x b block: b(b-1)/2. */
static inline int64_t
tri(int b)
{
	return (int64_t)b * (b - 1) / 2;
}

#endif
