/*
 * adamw.h - the AdamW optimizer (Loshchilov & Hutter) on flat float
 * arrays, global-norm gradient clipping, and the learning-rate schedule
 * (linear warmup, then cosine decay).  Everything is elementwise or summed
 * in fixed chunks, so results do not depend on the thread count.
 */
#ifndef ADAMW_H
#define ADAMW_H

#include <stdint.h>

struct adamw {
	double	 beta1, beta2;	/* moment decay rates: 0.9, 0.999 */
	double	 eps;		/* added to sqrt(v hat): 1e-8 */
};

/* The defaults of the papers: betas 0.9/0.999, eps 1e-8. */
void	 adamw_defaults(struct adamw *o);
/* One AdamW update of p[n] from g[n] at step t (1-based), moments m[n] and
 * v[n] updated in place; decoupled decay p *= 1 - lr*wd first (wd 0: none). */
void	 adamw_update(const struct adamw *o, float *p, const float *g, float *m,
	    float *v, int64_t n, double lr, double wd, int64_t t);
/* Sum of squares of g[n] in double, the same for any thread count. */
double	 grad_sumsq(const float *g, int64_t n);
/* Scale g[n] so that its L2 norm is at most maxnorm (0: no clipping) given its
 * norm; returns the scale applied (1 when not clipped). */
double	 grad_clip(float *g, int64_t n, double norm, double maxnorm);

/* Learning rate for step (0-based) of total: rises linearly to lr over the
 * first warmup steps, then falls along a cosine to lr_min at step total;
 * steps past total stay at lr_min. */
double	 lr_schedule(int64_t step, int64_t total, int64_t warmup, double lr,
	    double lr_min);

#endif
