/*
 * task_relation.c - two Fashion-MNIST items at random places on a blank
 * canvas, apart: a garment (the anchor) and a shoe or bag; the label is
 * where the anchor lies relative to the other: 2 [anchor left of the
 * other] + [anchor above the other].  Each item alone, and the set of
 * patches without their places, says nothing of the label: the two places
 * must be compared.  The two kinds of item are told apart at a glance
 * (telling a shirt from a T-shirt, which a rule on the classes' order
 * needed, kept models at half the labels long after they had the
 * geometry), so that what is learnt is the relation.  Items never
 * overlap, and their offsets are at least the margin on both axes, so
 * that left and above are never a matter of a pixel.
 */
#include <stdlib.h>
#include <string.h>

#include "task.h"

/* Copy item k of the items into the canvas with its top-left corner at
 * (y, x). */
static void
paste(const struct task *t, int64_t k, int y, int x, uint8_t *px)
{
	int s = t->items->side;
	for (int r = 0; r < s; r++)
		memcpy(px + (size_t)(y + r) * t->canvas + x, t->items->px + ((size_t)k * s + r) * s, s);
}

int
task_relation(const struct task *t, struct rng *r, uint8_t *px, int32_t *label,
    struct task_layout *lay)
{
	const struct task_items *it = t->items;
	uint64_t room = (uint64_t)(t->canvas - t->item + 1);	/* corners per axis */
	int64_t a = task_draw(it, r, 1), b = task_draw(it, r, 0);
	int ya, xa, yb, xb, tries;

	if (a < 0 || b < 0)
		return -1;
	for (tries = 0; tries < TASK_TRIES; tries++) {
		ya = (int)rng_below(r, room), xa = (int)rng_below(r, room);
		yb = (int)rng_below(r, room), xb = (int)rng_below(r, room);
		int dy = abs(yb - ya), dx = abs(xb - xa);
		if (dy >= t->margin && dx >= t->margin && (dy >= t->item || dx >= t->item))
			break;
	}
	if (tries == TASK_TRIES)
		return -1;
	paste(t, a, ya, xa, px);
	paste(t, b, yb, xb, px);
	*label = 2 * (xa < xb) + (ya < yb);
	lay->n = 2;
	lay->obj[0].y = ya, lay->obj[0].x = xa, lay->obj[0].a = a, lay->obj[0].b = it->label[a];
	lay->obj[1].y = yb, lay->obj[1].x = xb, lay->obj[1].a = b, lay->obj[1].b = it->label[b];
	return 0;
}
