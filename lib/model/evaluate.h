/*
 * evaluate.h - run a model over a stream and score it: per-record top-1
 * class and probability, loss and top-5 hit, then accuracies and mean loss
 * with bootstrap confidence intervals.  vit-eval, vit-train's --val and
 * shuffle-eval share it.
 */
#ifndef EVALUATE_H
#define EVALUATE_H

#include <stddef.h>
#include <stdint.h>

#include "batch.h"
#include "err.h"
#include "vit.h"

/* Per-record results, in stream order. */
struct eval_out {
	int64_t	 n, cap;
	int	 classes;
	int32_t	*label;		/* [n] true class, -1 when the stream has none */
	int32_t	*pred;		/* [n] most probable class */
	float	*prob;		/* [n] its softmax probability */
	float	*loss;		/* [n] cross-entropy of the label (0 without) */
	uint8_t	*top5;		/* [n] 1 when the label is among the 5 most probable */
	float	*logits;	/* [maxB][classes] scratch of the last batch */
};

/* Optional calls around each batch: before the forward (e.g. to permute
 * patches) and after its results were appended to out (records first ..
 * first+b->n-1 of out are b's, e.g. to print them as they come). */
struct eval_hooks {
	void	(*before)(void *ctx, struct batch *b);
	void	(*after)(void *ctx, const struct eval_out *out, int64_t first,
		    const struct batch *b);
	void	*ctx;
};

/* Run *m (fitted to each batch, see vit_fit) over every record of br in
 * batches of up to maxB, appending to out (zeroed before the first call).
 * 0, or -1 with e: a record whose logits, or loss, are not finite is no
 * result but an error naming the stream and the record. */
int	 evaluate(struct vit **m, struct batch_reader *br, int maxB,
	    const struct eval_hooks *hooks, struct eval_out *out, struct err *e);
void	 eval_free(struct eval_out *out);

/* A mean and its bootstrap interval. */
struct eval_stat {
	double	 mean, lo, hi;
};
struct eval_summary {
	int64_t	 n;
	struct eval_stat top1, top5, loss;
};
/* Accuracies and mean loss of the labelled records of out, with level
 * (0.95) intervals from resamples bootstrap draws (0: none, lo = hi =
 * mean) seeded by seed.  0, or -1 when no record has a label. */
int	 eval_summarize(const struct eval_out *out, int resamples, double level,
	    uint64_t seed, struct eval_summary *s);
/* The confusion matrix of out's labelled records, counts[true][predicted]
 * ([classes][classes], malloc'd), or NULL when out of memory. */
int64_t	*eval_confusion(const struct eval_out *out);
/* Top-1 accuracy of class c: records with label c in *n, correct in *hit. */
void	 eval_class(const struct eval_out *out, int c, int64_t *n, int64_t *hit);

#endif
