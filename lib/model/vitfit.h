/*
 * vitfit.h - make a model ready for a batch: room for its records and
 * tokens (multi-resolution streams, a validation stream of another grid
 * size) and the token grid its positions describe (vit_set_grid); and
 * the gradient's scale between the micro-batches of a step.
 */
#ifndef VITFIT_H
#define VITFIT_H

#include <stddef.h>

#include "batch.h"
#include "err.h"
#include "vit.h"

/* Make *m take batches of B records of T tokens (and of positions that
 * differ between records when varied is 1), rebuilding it with the same
 * config, parameters, gradients and moments when it is too small (or
 * keeps one set of rotations for all records).  0, or -1 with e (*m
 * unchanged). */
int	 vit_reserve(struct vit **m, int B, int T, int varied, struct err *e);
/* vit_reserve for b, then set the grid of b's positions (batch_grid) and
 * its records' CLS positions (vit_set_cls_positions).  A
 * batch whose positions are no full grid (augmented, or of any layout)
 * suits every encoding; a position table (abs, sincos) then takes the
 * training grid, which must hold the batch's tokens.  0, or -1 with e. */
int	 vit_fit(struct vit **m, struct batch *b, struct err *e);
/* m->grad *= s, a deferred rotation share included. */
void	 vit_scale_grad(struct vit *m, float s);

#endif
