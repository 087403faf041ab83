/*
 * posenc.h - the position stage of the ViT: everything positional of a
 * model in one place.  It holds the encoding (lib/pe/pe.h), the positions
 * it sees (the config's map, the CLS token's), the rotations R of every
 * generator set and their gradient dR, the bases of an encoding that has
 * them, the keys by which R is reused, an additive table's rows and
 * weights, and the gradient deferred over micro-batches.  The model
 * (vit.c) calls:
 *
 *	posenc_settle_stale(p, pos, B, T, shared)   before a forward: a gradient
 *	                                            deferred for the R these
 *	                                            positions replace is taken
 *	                                            to the parameters
 *	posenc_prepare(p, pos, B, T, shared)        R and table weights for them
 *	posenc_add_table(p, h, B, T1)               the table into the tokens
 *	posenc_rotate(p, l, qcls, qkr, qkv)         q, k of layer l rotated
 *	posenc_backward_begin(p)                    ... then, per layer,
 *	posenc_rotate_backward(p, l, ...)
 *	posenc_backward_end(p, dh, B, T1)           the table's gradient, dR
 *	                                            taken to the parameters
 *	                                            unless deferred
 *
 * The forward pass reads R only; the only code that turns dR into the
 * parameters' gradient is posenc_settle, which the forward never calls.
 */
#ifndef POSENC_H
#define POSENC_H

#include <stddef.h>
#include <stdint.h>

#include "pe.h"
#include "vit.h"

struct err;
struct pe_table;
struct rng;

struct posenc {
	struct pe pe;		/* the encoding */
	const struct vit_config *c;	/* the model's: axes, grid, CLS, map */
	int	 rotary;	/* 1: q, k rotated by R */
	const struct pe_table *tab;	/* the encoding's table, or NULL */
	struct pe_work work;
	/* parameter views in the model's arena, and their gradients */
	float	*table, *dtable;	/* the learned table, or NULL */
	float	*params, *dparams;	/* pe.params [pe.nparam], or NULL */
	/* rotations (in the model's activation block) */
	float	*R, *dR;	/* [nset][Tr][rsize] rotations, their gradient */
	float	*basis, *dbasis;	/* [nset][hd][hd] bases (pe.basis), their
				   gradient */
	float	*posr;		/* [Tr][A] the positions of R */
	int	 Tn;		/* rotated rows per record: T (+1 with CLS) */
	int	 Tr;		/* rows of R per set: Tn, or B * Tn per record */
	int	 per_record;
	int	 B, T1;		/* the last forward's records and rows */
	/* R was made from keypar and keypos (keyTr rows) when rot_ok; a
	 * forward with the same ones reuses it.  dR_pending: dR (and dbasis)
	 * hold the backwards' sums for R not yet taken to the generators. */
	float	*keypar;	/* [pe.nparam] */
	float	*keypos;	/* [Tr][A] */
	int	 keyTr, rot_ok, defer, dR_pending;
	int64_t	 made;		/* forwards that computed R */
	/* tables */
	int	 grid[VIT_MAXAXES];	/* run grid */
	int	 K;		/* 2^A interpolation corners */
	int	*pidx;		/* [1+maxT][K]: the table rows a row of h reads */
	float	*pw;		/* ... and their weights; ape: [maxB][1+maxT][K] */
	float	*apos;		/* ape: [maxB][1+maxT][A] the positions read */
	int	 tab_per_record;	/* ape, last forward: pidx, pw per record */
	float	*fixed;		/* [1+G][D] fixed table (sincos), or NULL */
	const float *clsrec;	/* [B][A] the records' CLS positions, or NULL */
};

/* p's encoding from config c (kept: the stage reads c at every forward);
 * no memory yet.  0, or -1 with e. */
int	 posenc_init(struct posenc *p, const struct vit_config *c, struct err *e);
/* Rows of the learned table [rows][D] and its tensor name, or 0. */
int	 posenc_table_rows(const struct posenc *p, const char **name);
/* Floats of a fixed table no file carries (sincos's [1+G][D]), or 0. */
size_t	 posenc_fixed_floats(const struct posenc *p);
/* The views of the learned table and of pe.params in the model's arena
 * (either NULL when the model has none), and their gradients (NULL:
 * inference). */
void	 posenc_bind(struct posenc *p, float *table, float *dtable,
	    float *params, float *dparams);
/* Seeded initialisation of the learned table (tab[n], r: its stream)
 * and of pe.params (seed); 0, or -1 with e. */
void	 posenc_init_table(const struct posenc *p, float *tab, size_t n,
	    struct rng *r);
int	 posenc_init_params(struct posenc *p, uint64_t seed, struct err *e);
/* The stage's arrays that live with the activations, carved from block
 * (NULL: counted only) for maxB records of maxT tokens, train: with
 * gradients; the bytes they take, a multiple of 64. */
size_t	 posenc_carve(struct posenc *p, int maxB, int maxT, int train, char *block);
/* What the stage allocates for itself (tables' rows and weights, the
 * fixed table, the encoding's work space); 0, or -1 with e. */
int	 posenc_alloc(struct posenc *p, int maxB, int maxT, struct err *e);
/* Free what posenc_alloc allocated; safe on a zeroed p. */
void	 posenc_free(struct posenc *p);

/* 1 when the stage adds a table read by token index (abs, sincos), whose
 * tokens must fill a grid. */
int	 posenc_grid_table(const struct posenc *p);
/* 1 when a forward needs positions (rotations or a sampled table). */
int	 posenc_needs_positions(const struct posenc *p);
/* The grid [A] of the following forwards' tokens (tables read by index). */
void	 posenc_set_grid(struct posenc *p, const int *grid);
/* The records' CLS positions cls[B][A], or NULL: c->cls_pos. */
void	 posenc_set_cls(struct posenc *p, const float *cls);
/* Record b's CLS position [A]. */
const float *posenc_cls(const struct posenc *p, int b);

/* Take a deferred dR to the parameters' gradient if the rotations of
 * positions pos[B][T][A] (shared: one record's for all) are not those it
 * belongs to. */
void	 posenc_settle_stale(struct posenc *p, const float *pos, int B, int T,
	    int shared);
/* R (and bases) for positions pos[B][T][A] and the table's rows and
 * weights; R is reused when neither the positions nor the parameters
 * changed.  1 when R was made, else 0.  A deferred dR must be settled
 * (posenc_settle_stale). */
int	 posenc_prepare(struct posenc *p, const float *pos, int B, int T,
	    int shared);
/* h[B][T1][D] += the table's rows, for the tokens of the last prepare. */
void	 posenc_add_table(const struct posenc *p, float *h, int B, int T1);
/* qkr [B][T1][2D] = q, k of qkv [B][T1][3D] rotated for layer l; qcls:
 * only the CLS rows' queries are read (rotary.h: struct rot's qcls). */
void	 posenc_rotate(const struct posenc *p, int l, int qcls, float *qkr,
	    const float *qkv);
/* Before the layers' backward: dR zeroed unless a deferred sum waits. */
void	 posenc_backward_begin(struct posenc *p);
/* Layer l's backward of posenc_rotate (rotary_backward): dqkv's q, k
 * columns from dqkr, dR (and dbasis) summed. */
void	 posenc_rotate_backward(struct posenc *p, int l, int qcls, float *dqkv,
	    float *dqkr, float *qkr, const float *qkv);
/* After the layers' backward, dh[B][T1][D] the embedding's gradient: the
 * table's gradient, and dR taken to the parameters unless deferred. */
void	 posenc_backward_end(struct posenc *p, const float *dh, int B, int T1);
/* dparams += what a deferred dR gives, through the R it belongs to. */
void	 posenc_settle(struct posenc *p);
/* Defer dR over backwards until posenc_settle (on), or not (settles). */
void	 posenc_defer(struct posenc *p, int on);
/* Rotations in double, exact to float rounding (1), or as the engine (0). */
void	 posenc_exact(struct posenc *p, int exact);
/* Drop a deferred dR (the gradient is being zeroed). */
void	 posenc_zero_grad(struct posenc *p);
/* sum less the squares of the gradient's copies of tied parameters
 * (pe_tied), taken off one set at a time: a norm of the whole gradient
 * with each tied parameter once. */
double	 posenc_untied_sumsq(const struct posenc *p, double sum);
/* 1 when every record's positions pos[B][T][A] and CLS position equal
 * the first's. */
int	 posenc_shared(const struct posenc *p, const float *pos, int B, int T);

#endif
