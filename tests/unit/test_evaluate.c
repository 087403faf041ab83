/*
 * test_evaluate.c - scoring a model over a stream: a model whose logits are
 * known for any input (every parameter zero but the head bias, b[c] = c),
 * records of every label, and the per-record prediction, probability, loss
 * and top-5 hit, the accuracies and mean loss, the per-class counts and
 * the confusion matrix worked out from the softmax by hand; the after hook
 * sees each record with its source text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "evaluate.h"
#include "test.h"
#include "vit.h"
#include "vt.h"

enum { C = 10, N = 11, P = 4, T = 4, MAXB = 4 };

/* N records of T tokens on a 2x2 grid, patch values that vary, labels
 * 0..9 and one record without a label (-1) last, source "img/R.png" (R
 * the record's index). */
static char *
stream(size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct vt st, *s = &st;

	vt_init(s);
	vt_add_field(s, "patch", VT_F32, 2, (int64_t[]){ VT_ANY, P });
	vt_add_field(s, "pos", VT_F32, 2, (int64_t[]){ VT_ANY, 2 });
	vt_add_field(s, "label", VT_I32, 0, NULL);
	vt_add_field(s, "source", VT_U8, 1, (int64_t[]){ VT_ANY });
	vt_meta_set(s, "CLASSES", "10");
	vt_write_header(s, fp, "mem");
	for (int r = 0; r < N; r++) {
		vt_set_shape(s, 0, (int64_t[]){ T, P });
		vt_set_shape(s, 1, (int64_t[]){ T, 2 });
		float *p = s->field[0].data, *q = s->field[1].data;
		for (int i = 0; i < T * P; i++)
			p[i] = (float)((r * 7 + i * 3) % 11) - 5;
		for (int t = 0; t < T; t++) {
			q[2 * t] = (float)(t / 2);
			q[2 * t + 1] = (float)(t % 2);
		}
		*(int32_t *)s->field[2].data = r < C ? r : -1;
		char src[32];
		int n = snprintf(src, sizeof src, "img/%d.png", r);
		vt_set_shape(s, 3, (int64_t[]){ n });
		memcpy(s->field[3].data, src, (size_t)n);
		vt_write_record(s);
	}
	fclose(fp);
	vt_free(s);
	return buf;
}

/* Count the calls of the after hook, the records they cover and those
 * whose source is theirs. */
struct seen {
	int	 calls;
	int64_t	 records, sources;
};

static void
after(void *ctx, const struct eval_out *out, int64_t first, const struct batch *b)
{
	struct seen *s = ctx;
	char want[32];

	s->calls++;
	if (first == s->records)
		s->records += b->n;
	for (int k = 0; k < b->n; k++) {
		snprintf(want, sizeof want, "img/%lld.png", (long long)(first + k));
		s->sources += batch_source(b, k) && strcmp(batch_source(b, k), want) == 0;
	}
}

int
main(void)
{
	struct vit_config c;
	struct err e;
	size_t len;

	vit_config_init(&c);
	c.dim = 8;
	c.depth = 1;
	c.heads = 2;
	c.mlp = 8;
	c.classes = C;
	c.P = P;
	c.axes = 2;
	snprintf(c.pe, sizeof c.pe, "none");
	/* parameters zero, LayerNorm gains included: the final norm gives 0
	 * for any input, so the logits are the head bias, z_c = c */
	struct vit *m = vit_create_infer(&c, MAXB, T, &e);
	if (m == NULL) {
		CHECK(0, "model: %s", e.msg);
		return test_done();
	}
	const struct vit_tensor *hb = vit_find_tensor(m, "head.b");
	CHECK(hb != NULL && hb->n == C, "the model has a head bias of %d", C);
	if (hb == NULL)
		return test_done();
	for (int k = 0; k < C; k++)
		m->param[hb->off + k] = (float)k;

	char *buf = stream(&len);
	FILE *fp = fmemopen(buf, len, "rb");
	struct vt s;
	struct batch_reader br;
	struct eval_out out;
	struct seen seen = { 0, 0, 0 };
	struct eval_hooks hooks = { NULL, after, &seen };

	vt_init(&s);
	memset(&out, 0, sizeof out);
	int rc = vt_read_header(&s, fp, "mem");
	if (rc == 0)
		rc = batch_open(&br, &s, c.P, c.axes, c.classes, 0);
	if (rc == 0)
		rc = evaluate(&m, &br, MAXB, &hooks, &out, &e);
	CHECK(rc == 0 && out.n == N && out.classes == C,
	    "evaluate: %lld records of %d classes%s%s", (long long)out.n,
	    out.classes, rc ? ": " : "", rc ? e.msg : "");
	CHECK(seen.calls == (N + MAXB - 1) / MAXB && seen.records == N,
	    "the after hook: %d batches of up to %d, records in order",
	    seen.calls, MAXB);
	CHECK(seen.sources == N, "the after hook: %lld of %d records with their "
	    "source", (long long)seen.sources, N);
	if (rc != 0 || out.n != N)
		goto done;

	/* softmax of z_c = c: p_9 = 1 / sum_c e^(c-9); the loss of label y is
	 * logsumexp(0..9) - y; y is in the top 5 when at most 4 logits
	 * exceed it, that is y >= 5 */
	double sum = 0;
	for (int k = 0; k < C; k++)
		sum += exp(k - 9.0);
	double lse = 9 + log(sum), p9 = 1 / sum;
	double loss_err = 0, prob_err = 0;
	int pred = 1, top5 = 1, label = 1;
	for (int i = 0; i < N; i++) {
		int y = i < C ? i : -1;
		label &= out.label[i] == y;
		pred &= out.pred[i] == C - 1;
		prob_err = maxn(prob_err, fabs(out.prob[i] - p9));
		loss_err = maxn(loss_err, fabs(out.loss[i] - (y >= 0 ? lse - y : 0)));
		top5 &= out.top5[i] == (y >= 5);
	}
	CHECK(label, "labels 0..9 and -1 (none) in stream order");
	CHECK(pred, "every record predicts class 9, the largest logit");
	CHECK(prob_err < 1e-6, "its probability 1/sum_c e^(c-9) = %.6f (worst "
	    "error %.2g)", p9, prob_err);
	CHECK(loss_err < 1e-5, "loss of label y: logsumexp(0..9) - y = %.4f - y, "
	    "0 without a label (worst error %.2g)", lse, loss_err);
	CHECK(top5, "top-5 hit exactly for labels 5..9 (4 logits above 5, 5 "
	    "above 4), never without a label");

	/* over the 10 labelled records: top-1 1/10, top-5 5/10, mean loss
	 * lse - mean(0..9) = lse - 4.5; no resampling: lo = hi = mean */
	struct eval_summary sm;
	rc = eval_summarize(&out, 0, 0.95, 1, &sm);
	CHECK(rc == 0 && sm.n == C, "summary over the %d labelled records", C);
	CHECK_CLOSE(sm.top1.mean, 0.1, 1e-12, "top-1 accuracy 1/10 (only label 9)");
	CHECK_CLOSE(sm.top5.mean, 0.5, 1e-12, "top-5 accuracy 5/10 (labels 5..9)");
	CHECK_CLOSE(sm.loss.mean, lse - 4.5, 1e-6, "mean loss logsumexp - 4.5 = %.4f",
	    lse - 4.5);
	CHECK(sm.loss.lo == sm.loss.mean && sm.loss.hi == sm.loss.mean,
	    "no resamples: a point interval");
	/* with resampling the interval holds the mean */
	rc = eval_summarize(&out, 200, 0.95, 1, &sm);
	CHECK(rc == 0 && sm.top5.lo <= 0.5 && sm.top5.hi >= 0.5 &&
	    sm.top5.lo < sm.top5.hi, "top-5 interval [%.2f, %.2f] around 0.5",
	    sm.top5.lo, sm.top5.hi);
	int64_t n9, h9, n3, h3;
	eval_class(&out, 9, &n9, &h9);
	eval_class(&out, 3, &n3, &h3);
	CHECK(n9 == 1 && h9 == 1 && n3 == 1 && h3 == 0,
	    "per class: class 9 right, class 3 wrong");
	/* every labelled record in column 9 of its label's row; the record
	 * without a label nowhere */
	int64_t *cm = eval_confusion(&out);
	int cells = cm != NULL;
	for (int y = 0; cm && y < C; y++)
		for (int p = 0; p < C; p++)
			cells &= cm[y * C + p] == (p == C - 1);
	CHECK(cells, "confusion: counts[y][9] = 1 for every label y, 0 elsewhere");
	free(cm);
done:
	eval_free(&out);
	vt_free(&s);
	fclose(fp);
	free(buf);
	vit_destroy(m);
	return test_done();
}
