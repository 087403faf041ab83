/*
 * probe.h - what a model's attention does with positions, summed over a
 * stream through the engine's probe (vit_set_probe), per layer and head:
 * the mean attention distance (the ViT paper's Figure 7) and the mean
 * score as a function of the offset from query to key (the position-
 * similarity map q(x)^T R(x)^T R(y) k(y) / sqrt(hd)).
 *
 *	probe_init(&p, &m->c, maxB, PROBE_DISTANCE | PROBE_SIMILARITY);
 *	vit_set_probe(m, probe_hook, &p, &e);
 *	per batch:  probe_batch(&p, pos, B, T, first, &e);  vit_forward(m, ...);
 *	then probe_distance(&p, l, h), probe_similarity(&p, l, h, o)
 *
 * Positions are grid cells: the tokens of a record must fill a grid, the
 * distinct coordinates of an axis in order its cells 0, 1, ..., whatever
 * the convention; every record the first's grid.  A distance is Euclidean
 * over the axes, in cells.  The CLS token has no cell: it is neither a
 * query nor a key of either figure, and a patch query's weights are taken
 * over the patch keys, renormalised to sum to 1.
 */
#ifndef PROBE_H
#define PROBE_H

#include <stdint.h>

#include "err.h"
#include "vit.h"

enum { PROBE_DISTANCE = 1, PROBE_SIMILARITY = 2 };

struct probe {
	int	 what;		/* PROBE_* bits: the figures summed */
	int	 layers, heads, axes, maxB;
	int	 T;		/* tokens of the grid; 0 before the first batch */
	int	 grid[VIT_MAXAXES];	/* the first record's */
	int	 span[VIT_MAXAXES];	/* offsets per axis, 2 grid - 1 */
	int	 noff;		/* offsets: the product of span */
	int	 B;		/* records of the batch probe_batch set */
	int64_t	 records;	/* records summed */
	/* [maxB][T]: a token's cell as an index into the offsets, sum over
	 * axes of cell * (span stride): key minus query, plus the centre, is
	 * their offset's index */
	int	*cell;
	double	*len;		/* [noff]: an offset's length, cells */
	double	*dist;		/* [layers][heads]: summed mean distances */
	int64_t	*queries;	/* [layers][heads]: the queries summed there */
	double	*score;		/* [layers][heads][noff]: summed scores */
	int	 nthr;
	float	*S;		/* [nthr][T][T]: a head's scores */
	float	*scratch;	/* [T]: an axis's coordinates */
	struct err err;		/* probe_hook's failure, or "" */
};

/* Set p up for the layers and heads of a model of c, batches of up to
 * maxB records, summing the figures what asks (PROBE_* bits); the rest
 * is sized by the first batch. */
void	 probe_init(struct probe *p, const struct vit_config *c, int maxB, int what);
/* The cells of the tokens of the records that the next forward takes:
 * pos[B][T][axes], record 0 the stream's record first + 1 (for
 * messages).  0, or -1 with e: positions that are no grid, or not the
 * first record's grid, or no memory (allocated here once); p is then
 * good for probe_free alone. */
int	 probe_batch(struct probe *p, const float *pos, int B, int T, int64_t first,
	    struct err *e);
/* The probe to give vit_set_probe, arg p: adds what a block's attention
 * shows to p's sums. */
void	 probe_hook(void *arg, const struct vit_probe *v);
/* The mean attention distance of layer l, head h, in cells (NaN before
 * any record). */
double	 probe_distance(const struct probe *p, int l, int h);
/* The mean score at offset o (0 .. noff-1) of layer l, head h, over all
 * patch pairs at that offset. */
double	 probe_similarity(const struct probe *p, int l, int h, int o);
/* Offset o as d[axes], key cell minus query cell per axis. */
void	 probe_offset(const struct probe *p, int o, int *d);
void	 probe_free(struct probe *p);

#endif
