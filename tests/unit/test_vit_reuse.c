/*
 * test_vit_reuse.c - the engine's rotations made once and used again:
 * a forward reuses the last one's R only while the position-encoding
 * parameters and the positions are unchanged (the logits then match a
 * fresh model's bit for bit), and a deferred rotation gradient summed over
 * micro-batches equals the one taken after each, whatever comes between
 * (other positions, zeroing, a model grown by vit_reserve).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vit.h"
#include "vitfit.h"

enum { B = 3, G = 3, T = G * G };

struct data {
	float	 x[3][B * T * 6];	/* three batches of patches */
	float	 pos[2][B * T * 2];	/* two position sets, shared by the records */
	float	 target[B * 5];
};

static void
make_data(struct data *d)
{
	unsigned s = 12345;
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < B * T * 6; i++) {
			s = s * 1103515245u + 12345u;
			d->x[k][i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1;
		}
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++)
			for (int a = 0; a < 2; a++) {
				float v = (float)(a == 0 ? t / G : t % G);
				d->pos[0][(b * T + t) * 2 + a] = 0.6f * v;
				d->pos[1][(b * T + t) * 2 + a] = 0.45f * v + 0.1f;
			}
	memset(d->target, 0, sizeof d->target);
	for (int b = 0; b < B; b++)
		d->target[b * 5 + b] = 1;
}

static struct vit *
model(const char *pe, int dim)
{
	struct vit_config c;
	struct err e;
	vit_config_init(&c);
	c.dim = dim;
	c.depth = 2;
	c.heads = 2;
	c.mlp = 24;
	c.classes = 5;
	c.P = 6;
	c.grid[0] = c.grid[1] = G;
	snprintf(c.pe, sizeof c.pe, "%s", pe);
	struct vit *m = vit_create(&c, B, T, 7, &e);
	if (m == NULL) {
		fprintf(stderr, "test_vit_reuse: %s: %s\n", pe, e.msg);
		exit(1);
	}
	/* weights of 0.3, not the init's 0.02: attention that depends on
	 * position, so the generators' gradient is not lost in the others' */
	unsigned r = 777;
	for (size_t i = 0; i < m->nparam; i++) {
		r = r * 1103515245u + 12345u;
		m->param[i] += 0.3f * ((float)((r >> 8) & 0xffff) / 32768.0f - 1);
	}
	return m;
}

static float *
pe_view(struct vit *m, float *arena, size_t *n)
{
	const struct vit_tensor *t = vit_find_tensor(m, "pe.params");
	*n = t->n;
	return arena + t->off;
}

/* Logits of a fresh model with m's parameters on (x, pos). */
static int
fresh_equal(struct vit *m, const char *pe, int dim, const float *x,
    const float *pos, const float *logits)
{
	float l2[B * 5];
	struct vit *f = model(pe, dim);
	memcpy(f->param, m->param, sizeof(float) * m->nparam);
	vit_forward(f, x, pos, B, T, NULL, l2, 0, 0);
	vit_destroy(f);
	return memcmp(l2, logits, sizeof l2) == 0;
}

static void
forward_reuse(const char *pe, int dim)
{
	struct data d;
	float lg[B * 5];
	size_t np;
	make_data(&d);
	struct vit *m = model(pe, dim);

	vit_forward(m, d.x[0], d.pos[0], B, T, NULL, lg, 0, 0);
	vit_forward(m, d.x[1], d.pos[0], B, T, NULL, lg, 0, 0);
	CHECK(m->rotations_made == 1, "%s: a second batch at the same positions "
	    "reuses R (%lld made)", pe, (long long)m->rotations_made);
	CHECK(fresh_equal(m, pe, dim, d.x[1], d.pos[0], lg),
	    "%s: ... its logits are a fresh model's, bit for bit", pe);

	vit_forward(m, d.x[1], d.pos[1], B, T, NULL, lg, 0, 0);
	CHECK(m->rotations_made == 2, "%s: other positions: R made again", pe);
	CHECK(fresh_equal(m, pe, dim, d.x[1], d.pos[1], lg),
	    "%s: ... logits of the new positions", pe);

	float *p = pe_view(m, m->param, &np);
	p[np / 2] += 0.25f;		/* as an optimizer step would */
	vit_forward(m, d.x[1], d.pos[1], B, T, NULL, lg, 0, 0);
	CHECK(m->rotations_made == 3, "%s: a changed generator: R made again", pe);
	CHECK(fresh_equal(m, pe, dim, d.x[1], d.pos[1], lg),
	    "%s: ... logits of the new parameters", pe);

	vit_exact_rotations(m, 1);
	vit_forward(m, d.x[1], d.pos[1], B, T, NULL, lg, 0, 0);
	CHECK(m->rotations_made == 4, "%s: exact rotations: R made again", pe);
	vit_destroy(m);
}

/* The largest |a - b| over the generators' gradient, against the largest
 * |b| there (the other parameters' gradients are vit_backward's either
 * way: checked whole only for equality). */
static double
grad_diff(struct vit *a, struct vit *b, double *scale)
{
	size_t n;
	const float *ga = pe_view(a, a->grad, &n), *gb = pe_view(b, b->grad, &n);
	double d = 0, s = 0;
	for (size_t i = 0; i < n; i++) {
		d = maxn(d, fabs((double)ga[i] - gb[i]));
		s = maxn(s, fabs((double)gb[i]));
	}
	*scale = s;
	return d;
}

/* One micro-batch: forward with a target, backward. */
static void
micro(struct vit *m, const struct data *d, int x, int pos)
{
	float lg[B * 5];
	vit_forward(m, d->x[x], d->pos[pos], B, T, d->target, lg, 1, 3);
	vit_backward(m);
}

static void
deferred(const char *pe, int dim)
{
	struct data d;
	double scale, diff;
	size_t np;
	make_data(&d);
	struct vit *ref = model(pe, dim), *def = model(pe, dim);
	vit_defer_rotation_grad(def, 1);

	/* two micro-batches at shared positions, then a third elsewhere */
	vit_zero_grad(ref);
	vit_zero_grad(def);
	micro(ref, &d, 0, 0);
	micro(def, &d, 0, 0);
	micro(ref, &d, 1, 0);
	micro(def, &d, 1, 0);
	float *gr = pe_view(ref, ref->grad, &np), *gd = pe_view(def, def->grad, &np);
	double held = 0;
	for (size_t i = 0; i < np; i++)
		held = maxn(held, fabs((double)gr[i] - gd[i]));
	CHECK(held > 0, "%s: deferred: the generators' gradient waits (%.3g held back)",
	    pe, held);
	micro(ref, &d, 2, 1);
	micro(def, &d, 2, 1);
	vit_grad_complete(def);
	diff = grad_diff(def, ref, &scale);
	CHECK(scale > 0 && diff <= 1e-5 * scale, "%s: deferred over micro-batches "
	    "and a change of positions = taken at once (%.3g of %.3g)", pe, diff, scale);

	/* zeroing drops what was deferred */
	micro(def, &d, 0, 0);
	vit_zero_grad(ref);
	vit_zero_grad(def);
	micro(ref, &d, 1, 0);
	micro(def, &d, 1, 0);
	vit_grad_complete(def);
	diff = grad_diff(def, ref, &scale);
	CHECK(diff <= 1e-5 * scale, "%s: vit_zero_grad drops a deferred share "
	    "(%.3g of %.3g)", pe, diff, scale);

	/* a model grown by vit_reserve carries the deferred share */
	micro(def, &d, 2, 1);
	micro(ref, &d, 2, 1);
	CHECK(vit_reserve(&def, B + 2, T, 0, &(struct err){ "" }) == 0 && def->maxB == B + 2,
	    "%s: vit_reserve grows the model", pe);
	diff = grad_diff(def, ref, &scale);
	CHECK(diff <= 1e-5 * scale, "%s: ... with the deferred share in its "
	    "gradient (%.3g of %.3g)", pe, diff, scale);
	vit_destroy(ref);
	vit_destroy(def);
}

int
main(void)
{
	omp_set_num_threads(1);
	forward_reuse("liere:8", 16);		/* expm in double */
	forward_reuse("liere:16", 32);		/* expm in float */
	forward_reuse("rope-mixed", 16);
	forward_reuse("string", 16);		/* the bases too */
	deferred("liere:8", 16);
	deferred("liere:16", 32);
	deferred("comrope-ld:4", 16);
	deferred("rope-mixed", 16);
	deferred("string", 16);
	deferred("rope-nd", 16);
	return test_done();
}
