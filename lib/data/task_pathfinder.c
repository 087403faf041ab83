/*
 * task_pathfinder.c - the Pathfinder task of Linsley et al. (NeurIPS
 * 2018), as the Long Range Arena (Tay et al., ICLR 2021) uses it, written
 * from the papers' description (the data is ours, not theirs): curved
 * paths of dashes on a blank canvas and two dots; the label is 1 when the
 * dots are the two ends of one path, 0 when they end two different paths.
 * Every record has the same number of paths and dots, so nothing but
 * following a path from one dot tells the label: the dashes' gaps make
 * that a chain of short hops across the image.
 *
 * A path starts at a random point in a random direction; each dash is a
 * straight line of --dash pixels, then --gap pixels are skipped, and the
 * direction turns by a uniform angle in [-turn, turn] before the next.
 * A path is redrawn while it would leave the canvas or come within 3
 * pixels of a path already drawn, so paths never touch or cross and the
 * dots (3 x 3) never touch another path; the whole record is drawn again
 * when a path finds no room.
 *
 * With --cell C a dot is instead the whole C x C cell of a grid of step C
 * (the patches' grid) that holds the path's end: a patch then holds all
 * of a dot or none.  3 x 3 dots straddle up to four patches, pieces as
 * thin as a dash, and at the pilot's budget no model found them (a model
 * learnt the cell dots in a few hundred steps: pilot NOTES.md).  A record
 * whose two dot cells coincide or touch, or where a dot cell would touch
 * another path, is drawn again.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

#define STEP	0.25	/* pixels between the points drawn along a dash */
#define APART	3	/* least distance (Chebyshev) between two paths */
/* Paths are grey, dots white: cut by a grid of 4-pixel patches, a 3 x 3
 * dot is pieces as thin as a dash's, and with both white no model
 * (abs or rotary, 20k images, 4 epochs) left chance, even on paths of two
 * dashes; a patch holding any part of a dot shows it by its value. */
#define PATH	128
#define DOT	255
#define PATH_TRIES 200	/* draws of one path before the record starts again */

struct path {
	double	 y0, x0, dir;
	double	 turn[TASK_MAXDASH];	/* after each dash */
	int	 end[2][2];		/* its first and last pixels (y, x) */
};

/* Walk path p: with px NULL, whether every pixel lies inside the canvas,
 * off its border, and on no taken cell of occ; else draw it into px and
 * note its ends. */
static int
walk(const struct task *t, struct path *p, const uint8_t *occ, uint8_t *px)
{
	int S = t->canvas, n = (int)(t->dash / STEP);
	double y = p->y0, x = p->x0, dir = p->dir;
	for (int d = 0; d < t->dashes; d++) {
		double dy = sin(dir) * STEP, dx = cos(dir) * STEP;
		for (int k = 0; k <= n; k++) {
			int yi = (int)lrint(y + k * dy), xi = (int)lrint(x + k * dx);
			if (px) {
				px[yi * S + xi] = PATH;
				if (d == 0 && k == 0)
					p->end[0][0] = yi, p->end[0][1] = xi;
				p->end[1][0] = yi, p->end[1][1] = xi;
			} else if (yi < 1 || xi < 1 || yi > S - 2 || xi > S - 2 || occ[yi * S + xi])
				return 0;
		}
		/* the dash's end, then the gap, in the same direction */
		y += (n * STEP + t->gap) * sin(dir);
		x += (n * STEP + t->gap) * cos(dir);
		dir += p->turn[d];
	}
	return 1;
}

/* Mark the cells within APART of path p's pixels (drawn in mine) taken. */
static void
take(int S, const uint8_t *mine, uint8_t *occ)
{
	for (int y = 0; y < S; y++)
		for (int x = 0; x < S; x++) {
			if (!mine[y * S + x])
				continue;
			for (int v = y - APART; v <= y + APART; v++)
				for (int u = x - APART; u <= x + APART; u++)
					if (v >= 0 && u >= 0 && v < S && u < S)
						occ[v * S + u] = 1;
		}
}

/* The dot at end yx: its top-left corner and side. */
static void
dot_box(const struct task *t, const int *yx, int *y0, int *x0, int *side)
{
	int c = t->cell;

	if (c == 0)
		*y0 = yx[0] - 1, *x0 = yx[1] - 1, *side = 3;
	else
		*y0 = yx[0] / c * c, *x0 = yx[1] / c * c, *side = c;
}

/* Whether the dot at end yx, grown by a pixel, meets a pixel of a path
 * other than path k (own: each pixel's path + 1, or 0). */
static int
dot_touches(const struct task *t, const int *yx, const uint16_t *own, int k)
{
	int S = t->canvas, y0, x0, side;

	dot_box(t, yx, &y0, &x0, &side);
	for (int v = y0 - 1; v <= y0 + side; v++)
		for (int u = x0 - 1; u <= x0 + side; u++)
			if (v >= 0 && u >= 0 && v < S && u < S && own[v * S + u] &&
			    own[v * S + u] != k + 1)
				return 1;
	return 0;
}

/* Whether the cells of ends a and b coincide or touch. */
static int
cells_touch(const struct task *t, const int *a, const int *b)
{
	int c = t->cell;

	return abs(a[0] / c - b[0] / c) < 2 && abs(a[1] / c - b[1] / c) < 2;
}

/* The dot at end yx (which lies off the border). */
static void
dot(const struct task *t, const int *yx, uint8_t *px)
{
	int S = t->canvas, y0, x0, side;

	dot_box(t, yx, &y0, &x0, &side);
	for (int v = y0; v < y0 + side; v++)
		memset(px + v * S + x0, DOT, side);
}

int
task_pathfinder(const struct task *t, struct rng *r, uint8_t *px, int32_t *label,
    struct task_layout *lay)
{
	int S = t->canvas, rc = -1, draws = 0;
	uint8_t *occ = calloc(2, (size_t)S * S), *mine = occ + (size_t)S * S;
	uint16_t *own = calloc((size_t)S * S, sizeof *own);
	struct path *p = malloc(sizeof *p * (size_t)t->paths);

	if (!occ || !own || !p)
		goto out;
again:
	if (++draws > TASK_TRIES)
		goto out;
	memset(occ, 0, (size_t)S * S);
	memset(own, 0, sizeof *own * (size_t)S * S);
	memset(px, 0, (size_t)S * S);
	/* A path that finds no room in PATH_TRIES draws starts the record
	 * again: the paths before it may be what leaves none. */
	for (int tries = 0, k = 0; k < t->paths; tries++) {
		if (tries == TASK_TRIES)
			goto out;
		if (tries % PATH_TRIES == 0 && k > 0) {
			memset(occ, 0, (size_t)S * S);
			memset(own, 0, sizeof *own * (size_t)S * S);
			memset(px, 0, (size_t)S * S);
			k = 0;
		}
		p[k].y0 = 1 + rng_uniform(r) * (S - 3);
		p[k].x0 = 1 + rng_uniform(r) * (S - 3);
		p[k].dir = 2 * M_PI * rng_uniform(r);
		for (int d = 0; d < t->dashes; d++)
			p[k].turn[d] = (2 * rng_uniform(r) - 1) * t->turn;
		if (!walk(t, &p[k], occ, NULL))
			continue;
		memset(mine, 0, (size_t)S * S);
		walk(t, &p[k], NULL, mine);
		take(S, mine, occ);
		for (size_t c = 0; c < (size_t)S * S; c++)
			if (mine[c]) {
				px[c] = mine[c];
				own[c] = (uint16_t)(k + 1);
			}
		k++;
	}
	/* Positive: both ends of path 0.  Negative: an end of path 0 and an
	 * end of path 1, each end drawn at random, so that a dot's end (first
	 * or last dash) says nothing either. */
	*label = (int32_t)rng_below(r, 2);
	int e0 = (int)rng_below(r, 2), e1 = (int)rng_below(r, 2);
	int other = *label ? 0 : 1;
	int *a = p[0].end[e0], *b = p[other].end[*label ? !e0 : e1];
	if (t->cell > 0 && (cells_touch(t, a, b) || dot_touches(t, a, own, 0) ||
	    dot_touches(t, b, own, other)))
		goto again;
	dot(t, a, px);
	dot(t, b, px);
	lay->n = 2;
	lay->obj[0].y = a[0], lay->obj[0].x = a[1], lay->obj[0].a = 0, lay->obj[0].b = e0;
	lay->obj[1].y = b[0], lay->obj[1].x = b[1], lay->obj[1].a = other;
	lay->obj[1].b = *label ? !e0 : e1;
	rc = 0;
out:
	free(occ);
	free(own);
	free(p);
	return rc;
}
