/*
 * task.c - what the tasks share: their label counts, the checks of their
 * sizes, and the making of record i from its own generator.
 */
#include <stdio.h>
#include <string.h>

#include "task.h"

/* Fashion-MNIST's garments: T-shirt, trouser, pullover, dress, coat,
 * shirt; the others (sandal, sneaker, bag, ankle boot) are not. */
static int
garment(int32_t class)
{
	return class <= 4 || class == 6;
}

int64_t
task_draw(const struct task_items *it, struct rng *r, int want)
{
	for (int tries = 0; tries < TASK_TRIES; tries++) {
		int64_t k = (int64_t)rng_below(r, (uint64_t)it->n);
		if (garment(it->label[k]) == want)
			return k;
	}
	return -1;
}

int
task_classes(const struct task *t)
{
	switch (t->kind) {
	case TASK_RELATION: return 4;
	case TASK_PATHFINDER: return 2;
	default: return 8;
	}
}

int
task_check(const struct task *t, struct err *e)
{
	const char *bad = NULL;
	switch (t->kind) {
	case TASK_RELATION:
		/* Two items side by side, and a margin's room to move. */
		if (t->canvas < 2 * t->item)
			bad = "--canvas must be at least twice --item";
		else if (t->margin > t->canvas - t->item)
			bad = "--margin must be at most --canvas minus --item";
		break;
	case TASK_PATHFINDER:
		/* A path of one dash must fit inside, off the border. */
		if (t->dash + 4 > t->canvas)
			bad = "--dash must be at least 4 less than --canvas";
		break;
	case TASK_MOTION:
		if (t->item > t->canvas)
			bad = "--item must be at most --canvas";
		break;
	}
	if (bad)
		err_set(e, "%s", bad);
	return bad ? -1 : 0;
}

int
task_make(const struct task *t, uint64_t seed, int64_t i, uint8_t *px, int32_t *label,
    struct task_layout *lay, struct err *e)
{
	struct task_layout mine;
	struct rng r;
	int rc;

	rng_seed(&r, seed, (uint64_t)i);
	memset(px, 0, (size_t)t->frames * t->canvas * t->canvas);
	lay = lay ? lay : &mine;
	switch (t->kind) {
	case TASK_RELATION: rc = task_relation(t, &r, px, label, lay); break;
	case TASK_PATHFINDER: rc = task_pathfinder(t, &r, px, label, lay); break;
	default: rc = task_motion(t, &r, px, label, lay); break;
	}
	if (rc < 0)
		err_set(e, "record %lld: no placement found in %d tries; %s",
		    (long long)i, TASK_TRIES, t->kind == TASK_PATHFINDER ?
		    "make the canvas larger or the paths fewer or shorter" :
		    "the items must hold a garment and a shoe or bag");
	return rc;
}
