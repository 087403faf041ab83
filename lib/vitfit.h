/*
 * vitfit.h - make a model ready for a batch: room for its records and
 * tokens (multi-resolution streams, a validation stream of another grid
 * size) and the token grid its positions describe (vit_set_grid).
 */
#ifndef VITFIT_H
#define VITFIT_H

#include <stddef.h>

#include "batch.h"
#include "vit.h"

/* Make *m take batches of B records of T tokens, rebuilding it with the
 * same config, parameters, gradients and moments when it is too small.
 * 0, or -1 with err (*m unchanged). */
int	 vit_reserve(struct vit **m, int B, int T, char *err, size_t errlen);
/* vit_reserve for b, then set the grid of b's positions (batch_grid); a
 * batch whose positions are no full grid keeps the model's grid, which must
 * then hold its tokens (pe none needs no grid).  0, or -1 with err. */
int	 vit_fit(struct vit **m, struct batch *b, char *err, size_t errlen);

#endif
