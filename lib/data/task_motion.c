/*
 * task_motion.c - clips of one item moving in a straight line at a
 * constant speed on a torus (what leaves on one side comes back on the
 * other, so a clip of any length keeps the whole item in view and the
 * speed constant): right, left, down or up, at 1 or 2 pixels a frame.
 * The label is 4 (speed - 1) + direction, 8 classes.  A frame alone says
 * nothing of it, nor do the frames without their order: the label is in
 * how far the item moves from a frame to the next, and which way.  Trained
 * on clips of 8 frames and tested on 16, it asks for time positions past
 * the training range, as the canvases of relation do in space.
 */
#include "task.h"

static const int step[4][2] = { { 0, 1 }, { 0, -1 }, { 1, 0 }, { -1, 0 } };	/* (dy, dx) */

int
task_motion(const struct task *t, struct rng *r, uint8_t *px, int32_t *label,
    struct task_layout *lay)
{
	const struct task_items *it = t->items;
	int S = t->canvas, s = it->side;
	int64_t k = (int64_t)rng_below(r, (uint64_t)it->n);
	int dir = (int)rng_below(r, 4), speed = 1 + (int)rng_below(r, 2);
	int y0 = (int)rng_below(r, (uint64_t)S), x0 = (int)rng_below(r, (uint64_t)S);
	int vy = speed * step[dir][0], vx = speed * step[dir][1];

	for (int f = 0; f < t->frames; f++) {
		uint8_t *frame = px + (size_t)f * S * S;
		const uint8_t *item = it->px + (size_t)k * s * s;
		/* the corner, as a residue in [0, S) */
		int y = ((y0 + f * vy) % S + S) % S, x = ((x0 + f * vx) % S + S) % S;
		for (int i = 0; i < s; i++)
			for (int j = 0; j < s; j++)
				frame[(y + i) % S * S + (x + j) % S] = item[i * s + j];
	}
	*label = 4 * (speed - 1) + dir;
	lay->n = 2;
	lay->obj[0].y = y0, lay->obj[0].x = x0, lay->obj[0].a = k, lay->obj[0].b = it->label[k];
	lay->obj[1].y = vy, lay->obj[1].x = vx, lay->obj[1].a = dir, lay->obj[1].b = speed;
	return 0;
}
