/*
 * test_vit_shift.c - ComRoPE's offset test in the engine: moving every
 * token of a record by one offset, its CLS included (vit_set_cls_positions,
 * posgen --offset's clspos), leaves a commuting encoding's logits as they
 * were, since R(x)^T R(y) = R(y - x); a non-commuting one (LieRE) changes
 * them, and so does a commuting one when the positioned CLS stays behind.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vit.h"

enum { B = 3, G = 3, T = G * G, P = 6, C = 5, A = 2 };

static struct vit *
model(const char *pe)
{
	struct vit_config c;
	struct err e;

	vit_config_init(&c);
	c.dim = 16;
	c.depth = 2;
	c.heads = 2;
	c.mlp = 24;
	c.classes = C;
	c.P = P;
	c.axes = A;
	c.grid[0] = c.grid[1] = G;
	c.cls_rotate = 1;
	c.cls_pos[0] = c.cls_pos[1] = 1;	/* the middle of 0 .. 2 */
	c.pos_per_record = 1;
	snprintf(c.pe, sizeof c.pe, "%s", pe);
	struct vit *m = vit_create(&c, B, T, 7, &e);
	if (m == NULL) {
		fprintf(stderr, "test_vit_shift: %s: %s\n", pe, e.msg);
		exit(1);
	}
	/* weights of 0.3 and generators of 1: attention that depends on
	 * position */
	unsigned r = 777;
	for (size_t i = 0; i < m->nparam; i++) {
		r = r * 1103515245u + 12345u;
		m->param[i] += 0.3f * ((float)((r >> 8) & 0xffff) / 32768.0f - 1);
	}
	const struct vit_tensor *t = vit_find_tensor(m, "pe.params");
	for (size_t i = 0; t != NULL && i < t->n; i++) {
		r = r * 1103515245u + 12345u;
		m->param[t->off + i] = (float)((r >> 8) & 0xffff) / 32768.0f - 1;
	}
	return m;
}

/* The largest logit difference between the records at their grid
 * positions and the same records moved by offsets (a different one each),
 * the CLS moved with them when move_cls. */
static double
shift_change(const char *pe, int move_cls)
{
	float x[B * T * P], pos[B * T * A], moved[B * T * A], cls[B * A];
	float l0[B * C], l1[B * C];
	unsigned r = 4242;
	struct vit *m = model(pe);

	for (int i = 0; i < B * T * P; i++) {
		r = r * 1103515245u + 12345u;
		x[i] = (float)((r >> 8) & 0xffff) / 32768.0f - 1;
	}
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			float off[A] = { 0.75f * (b + 1), -0.5f * b + 0.25f };
			for (int a = 0; a < A; a++) {
				float p = (float)(a == 0 ? t / G : t % G);
				pos[(b * T + t) * A + a] = p;
				moved[(b * T + t) * A + a] = p + off[a];
				cls[b * A + a] = m->c.cls_pos[a] + off[a];
			}
		}
	vit_forward(m, x, pos, B, T, NULL, l0, 0, 0);
	vit_set_cls_positions(m, move_cls ? cls : NULL);
	vit_forward(m, x, moved, B, T, NULL, l1, 0, 0);
	double worst = 0, size = 0;
	for (int i = 0; i < B * C; i++) {
		worst = maxn(worst, fabs(l1[i] - l0[i]));
		size = maxn(size, fabs(l0[i]));
	}
	vit_destroy(m);
	return worst / fmax(size, 1e-30);
}

int
main(void)
{
	static const char *const commuting[] = {
		"rope-axial", "rope-mixed", "comrope-ap:4", "comrope-ld:4"
	};

	for (size_t i = 0; i < sizeof commuting / sizeof *commuting; i++) {
		double moved = shift_change(commuting[i], 1), kept = shift_change(commuting[i], 0);
		CHECK(moved < 1e-4, "%s: an offset of every token, CLS included, "
		    "leaves the logits (relative change %.2g)", commuting[i], moved);
		CHECK(kept > 1e-3, "%s: ... but not with the CLS left where it was "
		    "(%.2g)", commuting[i], kept);
	}
	double liere = shift_change("liere:4", 1);
	CHECK(liere > 1e-3, "liere:4 (generators that do not commute): the offset "
	    "changes the logits (%.2g)", liere);
	return test_done();
}
