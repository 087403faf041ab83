/*
 * evaluate.c - score a model on a stream.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "evaluate.h"
#include "vitfit.h"

/* Room for n records in out. */
static int
eval_grow(struct eval_out *o, int64_t n)
{
	if (n <= o->cap)
		return 0;
	int64_t cap = o->cap ? o->cap : 256;
	while (cap < n)
		cap *= 2;
	void *p;
#define GROW(a) if ((p = realloc(o->a, (size_t)cap * sizeof *o->a)) == NULL) return -1; o->a = p
	GROW(label); GROW(pred); GROW(prob); GROW(loss); GROW(top5);
#undef GROW
	o->cap = cap;
	return 0;
}

/* Score logits z[C] against label (-1: none) into record i of o: 0, or -1
 * with why when they are not finite, or their loss is not as a float (a
 * model that diverged, or whose positions overflow its encoding): no
 * result is made of a NaN. */
static int
score(struct eval_out *o, int64_t i, const float *z, int C, int label,
    struct err *why)
{
	int best = 0;
	for (int c = 0; c < C; c++)
		if (!isfinite(z[c]))
			return err_set(why, "the model's logit of class %d is %g", c,
			    isnan(z[c]) ? NAN : z[c]);
	for (int c = 1; c < C; c++)
		if (z[c] > z[best])
			best = c;
	double sum = 0;
	for (int c = 0; c < C; c++)
		sum += exp((double)z[c] - z[best]);
	double lse = z[best] + log(sum);
	o->label[i] = label;
	o->pred[i] = best;
	o->prob[i] = (float)(1 / sum);
	o->loss[i] = label >= 0 ? (float)(lse - z[label]) : 0;
	if (!isfinite(o->loss[i]))
		return err_set(why, "its loss overflows (logits of %g and %g)", z[best],
		    z[label]);
	int above = 0;
	for (int c = 0; label >= 0 && c < C; c++)
		above += z[c] > z[label];
	o->top5[i] = label >= 0 && above < 5;
	return 0;
}

int
evaluate(struct vit **m, struct batch_reader *br, int maxB,
    const struct eval_hooks *hooks, struct eval_out *out, struct err *e)
{
	struct batch b;
	int C = (*m)->c.classes, rc = -1;

	if (batch_alloc(&b, br, maxB) < 0)
		goto oom;
	out->classes = C;
	if (out->logits == NULL &&
	    (out->logits = malloc((size_t)maxB * C * sizeof *out->logits)) == NULL)
		goto oom;
	for (;;) {
		int n = batch_next(br, &b, maxB);
		if (n < 0) {
			err_set(e, "%s", br->s->err.msg);
			goto out;
		}
		if (n == 0)
			break;
		if (vit_fit(m, &b, e) < 0)
			goto out;
		if (hooks != NULL && hooks->before != NULL)
			hooks->before(hooks->ctx, &b);
		float f = vit_forward(*m, b.x, b.pos, n, b.T, NULL, out->logits, 0, 0);
		if (gemm_failed(e) < 0)		/* the products' NaN: say why */
			goto out;
		if (isnan(f)) {	/* vit_forward says why in (*m)->err */
			err_set(e, "%s: %s", br->s->name, (*m)->err.msg);
			goto out;
		}
		if (eval_grow(out, out->n + n) < 0)
			goto oom;
		for (int i = 0; i < n; i++) {
			struct err why;
			if (score(out, out->n + i, out->logits + (int64_t)i * C, C, b.label[i],
			    &why) < 0) {
				err_set(e, "%s: record %lld: %s", br->s->name,
				    (long long)(out->n + i + 1), why.msg);
				goto out;
			}
		}
		out->n += n;
		if (hooks != NULL && hooks->after != NULL)
			hooks->after(hooks->ctx, out, out->n - n, &b);
	}
	rc = 0;
	goto out;
oom:
	err_set(e, "out of memory");
out:
	batch_free(&b);
	return rc;
}

void
eval_free(struct eval_out *o)
{
	free(o->label);
	free(o->pred);
	free(o->prob);
	free(o->loss);
	free(o->top5);
	free(o->logits);
	memset(o, 0, sizeof *o);
}

/* Mean of v[n] and its bootstrap interval. */
static void
stat(const float *v, int64_t n, int resamples, double level, uint64_t seed,
    struct eval_stat *s)
{
	double sum = 0;
	for (int64_t i = 0; i < n; i++)
		sum += v[i];
	s->mean = s->lo = s->hi = sum / n;
	if (resamples > 0)
		bootstrap_mean_ci(v, n, resamples, level, seed, &s->lo, &s->hi);
}

int
eval_summarize(const struct eval_out *o, int resamples, double level,
    uint64_t seed, struct eval_summary *s)
{
	int64_t n = 0;
	float *v = malloc((size_t)(o->n > 0 ? o->n : 1) * 3 * sizeof *v);

	if (v == NULL)
		return -1;
	float *top1 = v, *top5 = v + o->n, *loss = v + 2 * o->n;
	for (int64_t i = 0; i < o->n; i++) {
		if (o->label[i] < 0)
			continue;
		top1[n] = o->pred[i] == o->label[i];
		top5[n] = o->top5[i];
		loss[n] = o->loss[i];
		n++;
	}
	s->n = n;
	if (n > 0) {
		/* The same resampled records for all three: same seed. */
		stat(top1, n, resamples, level, seed, &s->top1);
		stat(top5, n, resamples, level, seed, &s->top5);
		stat(loss, n, resamples, level, seed, &s->loss);
	}
	free(v);
	return n > 0 ? 0 : -1;
}

void
eval_class(const struct eval_out *o, int c, int64_t *n, int64_t *hit)
{
	*n = *hit = 0;
	for (int64_t i = 0; i < o->n; i++)
		if (o->label[i] == c) {
			++*n;
			*hit += o->pred[i] == c;
		}
}

int64_t *
eval_confusion(const struct eval_out *o)
{
	int64_t *m = calloc((size_t)o->classes * o->classes, sizeof *m);

	for (int64_t i = 0; m != NULL && i < o->n; i++)
		if (o->label[i] >= 0)
			m[(int64_t)o->label[i] * o->classes + o->pred[i]]++;
	return m;
}
