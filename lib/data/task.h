/*
 * task.h - synthetic tasks whose label depends on where things are, for
 * comparing position encodings (taskgen(1)): each record is made from its
 * own generator rng_seed(seed, index), so records can be made in parallel
 * and the same seed gives the same bytes.
 *
 *   relation    two Fashion-MNIST items on a blank canvas, a garment and
 *               a shoe or bag; the label says where the garment lies
 *               relative to the other (left/right, above/below)
 *   pathfinder  dashed curved paths and two dots (Linsley et al. 2018):
 *               whether the dots are the two ends of one path
 *   motion      clips of two Fashion-MNIST items moving in straight lines,
 *               a garment and a shoe or bag: the label is the garment's
 *               direction and speed
 *
 * A function that fails returns -1 with a message in its struct err
 * (err.h).
 */
#ifndef TASK_H
#define TASK_H

#include <stdint.h>

#include "err.h"

#include "image.h"
#include "rng.h"

enum task_kind { TASK_RELATION, TASK_PATHFINDER, TASK_MOTION };

/* Draws of a placement before a record gives up (task_make's error). */
#define TASK_TRIES	100000
/* Most dashes in a path (pathfinder). */
#define TASK_MAXDASH	256

/* Fashion-MNIST items resampled once to side x side, with their classes. */
struct task_items {
	int64_t	 n;
	int	 side;
	uint8_t	*px;		/* [n][side][side] */
	int32_t	*label;		/* [n] */
};

struct task {
	int	 kind;		/* enum task_kind */
	int	 canvas;	/* side of the square canvas, pixels */
	int	 frames;	/* motion: frames per clip; 1 otherwise */
	int	 hold;		/* motion: frames each position is held (1: moves every frame) */
	/* relation, motion */
	int	 item;		/* side an item is resampled to */
	int	 margin;	/* relation: least |dx| and |dy| between items */
	const struct task_items *items;
	/* pathfinder */
	int	 paths;		/* paths drawn, the two the dots may sit on included */
	int	 dashes;	/* dashes per path */
	int	 dash, gap;	/* a dash's length and the gap after it, pixels */
	double	 turn;		/* most a path turns between dashes, radians */
	int	 cell;		/* dots: 0, 3 x 3 centred on the ends; else
				 * the cell x cell square of a grid of that
				 * step that holds each end (1 .. 4) */
};

/* What a record shows, for checking labels (taskgen --layout): n objects,
 * each a point (y, x) and two numbers: relation, the item's source index
 * and class at its top-left corner; pathfinder, the dots with the path
 * each ends and which end; motion, each item's first top-left corner,
 * its source and its motion's code (as the label), the garment first. */
#define TASK_MAXOBJ	2
struct task_layout {
	int	 n;
	struct { int y, x; int64_t a, b; } obj[TASK_MAXOBJ];
};

/* Number of classes of the task's labels. */
int	 task_classes(const struct task *t);
/* Check t's sizes against each other; 0, or -1 with e naming the option
 * (as taskgen(1) spells it) that does not fit. */
int	 task_check(const struct task *t, struct err *e);
/* Record i into px (frames x canvas x canvas bytes) and *label; the
 * layout, unless lay is NULL.  0, or -1 with e when no placement was
 * found (a canvas too crowded for the paths). */
int	 task_make(const struct task *t, uint64_t seed, int64_t i, uint8_t *px,
	    int32_t *label, struct task_layout *lay, struct err *e);

/* Load IDX images and their labels (source.h's idx_load: labels NULL, the
 * labels-idx1 file beside them) and resample each to side x side; 0, or
 * -1 with e. */
int	 task_items_load(struct task_items *it, const char *idx, const char *labels,
	    int side, struct err *e);
void	 task_items_free(struct task_items *it);

/* An item drawn at random whose kind is want: 1 a garment (Fashion-MNIST
 * classes 0-4 and 6), 0 a shoe or bag (5, 7-9); -1 when none turns up in
 * TASK_TRIES draws. */
int64_t	 task_draw(const struct task_items *it, struct rng *r, int want);

/* The kinds' record makers, called by task_make. */
int	 task_relation(const struct task *t, struct rng *r, uint8_t *px, int32_t *label,
	    struct task_layout *lay);
int	 task_pathfinder(const struct task *t, struct rng *r, uint8_t *px, int32_t *label,
	    struct task_layout *lay);
int	 task_motion(const struct task *t, struct rng *r, uint8_t *px, int32_t *label,
	    struct task_layout *lay);

#endif
