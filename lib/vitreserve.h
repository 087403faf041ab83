/*
 * vitreserve.h - grow a model's activation capacity when a batch larger
 * (more records or tokens) than it was built for arrives: multi-resolution
 * evaluation, a validation stream of another grid size.
 */
#ifndef VITRESERVE_H
#define VITRESERVE_H

#include <stddef.h>

#include "vit.h"

/* Make *m take batches of B records of T tokens, rebuilding it with the
 * same config, parameters, gradients and moments when it is too small.
 * 0, or -1 with err (*m unchanged). */
int	 vit_reserve(struct vit **m, int B, int T, char *err, size_t errlen);

#endif
