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
/* A stretch of the arena that adamw_step updates, decayed or not. */
struct adamw_seg {
	int64_t	 off, n;
	int	 decay;
};
/* One AdamW update (decoupled decay p *= 1 - lr*wd first) at step t
 * (1-based) of an arena's nseg stretches seg[] of p, from g times gscale
 * (grad_clip_scale's), the moments m and v updated in place, wd only where
 * a stretch's decay is set: one parallel pass.  Returns 0, or -1 if a new
 * p, m or v is not finite. */
int	 adamw_step(const struct adamw *o, float *p, const float *g, float *m,
	    float *v, const struct adamw_seg *seg, int nseg, double gscale,
	    double lr, double wd, int64_t t);
/* Sum of squares of g[n] in double, the same for any thread count. */
double	 grad_sumsq(const float *g, int64_t n);
/* The factor that brings a gradient of L2 norm norm to at most maxnorm
 * (0: no clipping), a float's value; 1 when not clipped. */
double	 grad_clip_scale(double norm, double maxnorm);

/* Learning rate for step (0-based) of total: rises linearly to lr over the
 * first warmup steps, then falls along a cosine to lr_min at step total;
 * steps past total stay at lr_min. */
double	 lr_schedule(int64_t step, int64_t total, int64_t warmup, double lr,
	    double lr_min);

#endif
