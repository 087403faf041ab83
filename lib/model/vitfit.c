/*
 * vitfit.c - fit a model to a batch: capacity and token grid.
 */
#include <stdio.h>
#include <string.h>

#include "vitfit.h"

int
vit_reserve(struct vit **m, int B, int T, int varied, struct err *e)
{
	struct vit *old = *m, *new;
	struct vit_config c = old->c;

	if (B <= old->maxB && T <= old->maxT && (!varied || c.pos_per_record))
		return 0;
	c.pos_per_record |= varied;
	B = B > old->maxB ? B : old->maxB;
	T = T > old->maxT ? T : old->maxT;
	new = old->infer ? vit_create_infer(&c, B, T, e) :
	    vit_create(&c, B, T, 0, e);
	if (new == NULL)
		return -1;
	if (old->probe != NULL && vit_set_probe(new, old->probe, old->probe_arg, e) < 0) {
		vit_destroy(new);
		return -1;
	}
	size_t bytes = old->nparam * sizeof(float);
	vit_grad_complete(old);		/* a deferred share is in old alone */
	memcpy(new->param, old->param, bytes);
	if (!old->infer) {
		memcpy(new->grad, old->grad, bytes);
		memcpy(new->adam_m, old->adam_m, bytes);
		memcpy(new->adam_v, old->adam_v, bytes);
	}
	new->first_record = old->first_record;
	new->grad_ready = old->grad_ready;
	new->grad_arg = old->grad_arg;
	vit_destroy(old);
	*m = new;
	return 0;
}

int
vit_fit(struct vit **m, struct batch *b, struct err *e)
{
	int grid[VIT_MAXAXES];

	int varied = !vit_shared_positions(b->pos, b->n, b->T, b->A) ||
	    (b->cls != NULL && !vit_shared_positions(b->cls, b->n, 1, b->A));
	if (vit_reserve(m, b->n, b->T, varied, e) < 0)
		return -1;
	vit_set_cls_positions(*m, b->cls);
	if (batch_grid(b, grid) == 0 && vit_set_grid(*m, grid) == 0)
		return 0;
	if (!vit_has_table(*m))
		return 0;	/* rotations and locality take any positions */
	const struct vit_config *c = &(*m)->c;
	if (vit_grid_size(c->grid, c->axes) == b->T && vit_set_grid(*m, c->grid) == 0)
		return 0;	/* augmented positions of the training grid */
	err_set(e, "record %lld: the positions of its %d tokens are "
	    "not a grid the model's position table can take", (long long)b->first + 1, b->T);
	return -1;
}

void
vit_scale_grad(struct vit *m, float s)
{
	vit_grad_complete(m);
	#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < m->nparam; i++)
		m->grad[i] *= s;
}
