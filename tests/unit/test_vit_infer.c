/*
 * test_vit_infer.c - a model for forward passes alone (vit_create_infer),
 * whose blocks share one block's activations: the same logits and loss as
 * the training model's, bit for bit, for every kind of block input
 * (position tables, rotations shared and per record, locality, 3D, mean
 * pooling, a config trained with dropout), at full and smaller batches,
 * after vit_reserve grows it; and no training on it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vit.h"
#include "vitfit.h"

enum { B = 4, C = 5, P = 6, MAXT = 27 };

struct cfg {
	const char *pe;
	int	 axes, pool, locality, per_record;
	float	 dropout;
};

static void
config(struct vit_config *c, const struct cfg *f)
{
	vit_config_init(c);
	c->dim = 16;
	c->depth = 3;
	c->heads = 2;
	c->mlp = 24;
	c->classes = C;
	c->P = P;
	c->axes = f->axes;
	for (int a = 0; a < f->axes; a++)
		c->grid[a] = 3;
	c->pool = f->pool;
	c->locality = f->locality;
	c->pos_per_record = f->per_record;
	c->dropout = c->emb_dropout = f->dropout;
	snprintf(c->pe, sizeof c->pe, "%s", f->pe);
}

/* x[nb][T][P], pos[nb][T][A] on a 3^A grid (perturbed per record when
 * jitter), one-hot targets. */
static void
data(int nb, int T, int A, int jitter, float *x, float *pos, float *target)
{
	unsigned s = 4242;
	for (int i = 0; i < nb * T * P; i++) {
		s = s * 1103515245u + 12345u;
		x[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1;
	}
	for (int b = 0; b < nb; b++)
		for (int t = 0; t < T; t++)
			for (int a = 0; a < A; a++) {
				int k = t;
				for (int q = A - 1; q > a; q--)
					k /= 3;
				pos[(b * T + t) * A + a] = (float)(k % 3) / 3 +
				    (jitter ? 0.01f * (float)((b + 1) * (t + a + 1) % 7) : 0);
			}
	memset(target, 0, sizeof(float) * nb * C);
	for (int b = 0; b < nb; b++)
		target[b * C + b % C] = 1;
}

static void
same_forward(const struct cfg *f)
{
	struct vit_config c;
	struct err e;
	char name[96];
	int A = f->axes, T = A == 3 ? 27 : 9;
	float x[B * MAXT * P], pos[B * MAXT * 3], target[B * C];
	float l1[B * C], l2[B * C];

	snprintf(name, sizeof name, "%s %dD%s%s%s%s", f->pe, A,
	    f->pool == VIT_POOL_MEAN ? " mean" : "", f->locality ? " locality" : "",
	    f->per_record ? " per record" : "", f->dropout > 0 ? " dropout" : "");
	config(&c, f);
	struct vit *m = vit_create(&c, B, T, 11, &e);
	struct vit *n = vit_create_infer(&c, B, T, &e);
	if (m == NULL || n == NULL) {
		CHECK(0, "%s: %s", name, e.msg);
		vit_destroy(m);
		vit_destroy(n);
		return;
	}
	/* weights of 0.3: blocks whose outputs differ visibly */
	unsigned r = 99;
	for (size_t i = 0; i < m->nparam; i++) {
		r = r * 1103515245u + 12345u;
		m->param[i] += 0.3f * ((float)((r >> 8) & 0xffff) / 32768.0f - 1);
	}
	memcpy(n->param, m->param, sizeof(float) * m->nparam);
	CHECK(n->grad == NULL && n->adam_m == NULL && n->adam_v == NULL,
	    "%s: no gradient or optimizer memory", name);

	data(B, T, A, f->per_record, x, pos, target);
	for (int nb = B; nb >= 1; nb -= 3) {
		float e1 = vit_forward(m, x, pos, nb, T, target, l1, 0, 0);
		float e2 = vit_forward(n, x, pos, nb, T, target, l2, 0, 0);
		CHECK(isfinite(e1) && memcmp(&e1, &e2, sizeof e1) == 0 &&
		    memcmp(l1, l2, sizeof(float) * nb * C) == 0,
		    "%s, batch %d: logits and loss bit for bit (%.9g %.9g)",
		    name, nb, e1, e2);
	}
	/* grown by vit_fit for a larger batch: still forward-only, the same
	 * parameters */
	vit_reserve(&n, 2 * B, T, 0, &e);
	CHECK(n->infer && n->maxB == 2 * B && n->grad == NULL,
	    "%s: vit_reserve keeps a forward-only model", name);
	float e2 = vit_forward(n, x, pos, B, T, target, l2, 0, 0);
	float e1 = vit_forward(m, x, pos, B, T, target, l1, 0, 0);
	CHECK(memcmp(&e1, &e2, sizeof e1) == 0 && memcmp(l1, l2, sizeof l1) == 0,
	    "%s: ... and its logits", name);

	CHECK(isnan(vit_forward(n, x, pos, B, T, target, l2, 1, 0)) &&
	    strstr(n->err.msg, "alone") != NULL, "%s: no training forward: %s",
	    name, n->err.msg);
	vit_destroy(m);
	vit_destroy(n);
}

/* Dropout acts in training forwards only: a training model (vit_create)
 * of a config with dropout and emb_dropout gives, with training 0, the
 * logits and loss of the same weights in a config without dropout, bit for
 * bit.  Run first and flushed, so that its verdict shows even if a later
 * forward crashes. */
static void
dropout_off_at_inference(void)
{
	static const struct cfg on = { "abs", 2, VIT_POOL_CLS, 0, 0, 0.3f },
	    off = { "abs", 2, VIT_POOL_CLS, 0, 0, 0 };
	struct vit_config c, c0;
	struct err e;
	int T = 9;
	float x[B * MAXT * P], pos[B * MAXT * 3], target[B * C];
	float l1[B * C], l2[B * C], l3[B * C];

	config(&c, &on);
	config(&c0, &off);
	struct vit *m = vit_create(&c, B, T, 11, &e);
	struct vit *n = vit_create(&c0, B, T, 11, &e);
	if (m == NULL || n == NULL || m->nparam != n->nparam) {
		CHECK(0, "dropout at inference: %s", e.msg);
		vit_destroy(m);
		vit_destroy(n);
		fflush(stdout);
		return;
	}
	unsigned r = 77;
	for (size_t i = 0; i < m->nparam; i++) {
		r = r * 1103515245u + 12345u;
		m->param[i] += 0.3f * ((float)((r >> 8) & 0xffff) / 32768.0f - 1);
	}
	memcpy(n->param, m->param, sizeof(float) * m->nparam);
	data(B, T, 2, 0, x, pos, target);
	float e1 = vit_forward(m, x, pos, B, T, target, l1, 0, 5);
	float e2 = vit_forward(n, x, pos, B, T, target, l2, 0, 5);
	CHECK(isfinite(e1) && memcmp(&e1, &e2, sizeof e1) == 0 &&
	    memcmp(l1, l2, sizeof l1) == 0, "dropout 0.3 in a training model, "
	    "forward with training 0: the logits and loss of dropout 0 "
	    "(%.9g %.9g)", e1, e2);
	/* and the dropout is real: a training forward differs */
	float e3 = vit_forward(m, x, pos, B, T, target, l3, 1, 5);
	CHECK(isfinite(e3) && memcmp(l1, l3, sizeof l1) != 0,
	    "... while a training forward drops (loss %.9g)", e3);
	vit_destroy(m);
	vit_destroy(n);
	fflush(stdout);
}

int
main(void)
{
	static const struct cfg cfgs[] = {
		{ "abs", 2, VIT_POOL_CLS, 0, 0, 0 },
		{ "sincos", 2, VIT_POOL_MEAN, 0, 0, 0 },
		{ "liere:8", 2, VIT_POOL_CLS, 0, 0, 0 },
		{ "liere:8", 2, VIT_POOL_MEAN, 1, 1, 0 },
		{ "rope-mixed", 3, VIT_POOL_CLS, 0, 0, 0.1f },
		{ "comrope-ld:4", 2, VIT_POOL_CLS, 1, 0, 0 },
		{ "string", 3, VIT_POOL_CLS, 0, 0, 0 },
		{ "rope-nd", 2, VIT_POOL_MEAN, 1, 0, 0 },
		{ "none", 2, VIT_POOL_MEAN, 0, 0, 0.2f },
	};

	dropout_off_at_inference();
	for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++)
		same_forward(&cfgs[i]);
	return test_done();
}
