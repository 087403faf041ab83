/*
 * test_vit_ref.c - the engine against an independent PyTorch model
 * (tests/ref/make_fixtures.py, float64): same weights and inputs, then
 * logits, loss and every parameter gradient must agree to 1e-4 relative
 * (per tensor: max |c - ref| <= 1e-4 max |ref|).  The fixtures also carry
 * the config as header keys, so vit_config_load is exercised too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vit.h"
#include "vt.h"

/* max |a - b| / max |b| over n values. */
static double
relerr(const float *a, const float *b, size_t n)
{
	double d = 0, s = 0;
	for (size_t i = 0; i < n; i++) {
		d = maxn(d, fabs((double)a[i] - b[i]));
		s = maxn(s, fabs((double)b[i]));
	}
	return d / fmax(s, 1e-30);
}

static const float *
field(struct vt *s, const char *name, size_t n)
{
	struct vt_field *f = vt_get(s, name);
	if (f == NULL || f->dtype != VT_F32 || (size_t)f->count != n)
		return NULL;
	return f->data;
}

static void
run(const char *name)
{
	char path[256], what[160];
	struct err why;
	struct vt s;
	struct vit_config c;
	snprintf(path, sizeof path, "%s/data/vit_ref_%s.vt",
	    getenv("TOP") ? getenv("TOP") : ".", name);
	vt_init(&s);
	if (vt_load(&s, path) == -1) {
		CHECK(0, "%s: load %s: %s", name, path, s.err.msg);
		return;
	}
	if (vit_config_load(&c, &s, &why) == -1) {
		CHECK(0, "%s: config: %s", name, why.msg);
		vt_free(&s);
		return;
	}
	struct vt_field *fx = vt_get(&s, "x");
	int B = (int)fx->shape[0], T = (int)fx->shape[1], A = c.axes;
	struct vit *m = vit_create(&c, B, T, 1, &why);
	CHECK(m != NULL, "%s: create %s", name, m ? c.pe : why.msg);
	if (m == NULL) {
		vt_free(&s);
		return;
	}
	int loaded = 1;
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *t = &m->tensor[i];
		snprintf(what, sizeof what, "p:%s", t->name);
		const float *p = field(&s, what, t->n);
		if (p == NULL) {
			CHECK(0, "%s: fixture lacks %s [%zu]", name, what, t->n);
			loaded = 0;
			continue;
		}
		memcpy(m->param + t->off, p, sizeof(float) * t->n);
	}
	const float *pos1 = field(&s, "pos", (size_t)T * A);
	const float *target = field(&s, "target", (size_t)B * c.classes);
	const float *logref = field(&s, "logits", (size_t)B * c.classes);
	const float *lossref = field(&s, "loss", 1);
	CHECK(loaded && pos1 && target && logref && lossref, "%s: fixture complete", name);
	if (!(loaded && pos1 && target && logref && lossref))
		goto out;
	float *pos = malloc(sizeof(float) * B * T * A);
	float *logits = malloc(sizeof(float) * B * c.classes);
	for (int b = 0; b < B; b++)
		memcpy(pos + (size_t)b * T * A, pos1, sizeof(float) * T * A);
	vit_zero_grad(m);
	float loss = vit_forward(m, fx->data, pos, B, T, target, logits, 0, 0);
	vit_backward(m);
	CHECK(fabs(loss - *lossref) <= 1e-4 * fabs(*lossref),
	    "%s: loss %.7g, PyTorch %.7g", name, loss, *lossref);
	double e = relerr(logits, logref, (size_t)B * c.classes);
	CHECK(e <= 1e-4, "%s: logits rel. error %.2e", name, e);
	double worst = 0;
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *t = &m->tensor[i];
		snprintf(what, sizeof what, "g:%s", t->name);
		const float *g = field(&s, what, t->n);
		e = g ? relerr(m->grad + t->off, g, t->n) : INFINITY;
		worst = maxn(worst, e);
		CHECK(e <= 1e-4, "%s: grad %s rel. error %.2e", name, t->name, e);
	}
	printf("# %s: worst gradient rel. error %.2e\n", name, worst);
	free(pos);
	free(logits);
out:
	vit_destroy(m);
	vt_free(&s);
}

int
main(void)
{
	run("abs");
	run("liere8");
	run("ropemixed");
	run("comropeld8");
	run("ape");
	run("apeofficial");
	run("apeofficial3d");
	return test_done();
}
