/*
 * gradcheck.h - finite-difference checks of a ViT's gradients: for each
 * parameter tensor, the directional derivative along a random unit
 * direction, central differences in float at two steps combined by
 * Richardson extrapolation, against grad . direction.  The gradient comes
 * from the engine as it trains (float rotations); the differences from
 * the exact forward (double rotations): the float exponential's rounding,
 * grown by its squarings to ~1e-6, is noise that differences at these
 * steps amplify past the tolerance (1.8% seen on liere:4 per record).
 * Tied parameters (pe_tied) move together along the direction, and their
 * gradient, which every copy holds, counts once.
 */
#ifndef GRADCHECK_H
#define GRADCHECK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "rng.h"
#include "test.h"
#include "vit.h"

struct gc_batch {
	const float *x, *pos, *target;
	int	 B, T, training;
	uint64_t seed;
	float	*logits;
};

static double
gc_loss(struct vit *m, const struct gc_batch *b)
{
	return vit_forward(m, b->x, b->pos, b->B, b->T, b->target, b->logits,
	    b->training, b->seed);
}

/* Fill p[n] with standard normals scaled by s. */
static void
gc_randn(float *p, size_t n, float s, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed, 77);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)rng_normal(&r) * s;
}

/* Whether entry j of m's pe.params is a copy of a tied parameter that its
 * group's first set holds: then *first is that set's entry. */
static int
gc_copy(const struct vit *m, size_t j, size_t *first)
{
	struct pe pe;
	int64_t off;

	if (pe_parse(&pe, m->c.pe, m->c.dim / m->c.heads, m->c.axes, m->c.heads,
	    m->c.depth, pe_share_name(m->c.share)) < 0 || pe_tied(&pe, &off) == 0)
		return 0;
	int64_t set = (int64_t)j / pe.set_params, in = (int64_t)j % pe.set_params;
	int f = pe_tie_first(&pe, (int)set);
	*first = (size_t)(f * pe.set_params + in);
	return in >= off && in < off + pe_tied(&pe, &off) && f != set;
}

/* Check every tensor of m (and dL/dx) on batch b; label prefixes messages.
 * Returns the worst relative error seen. */
static double
gc_model(struct vit *m, const struct gc_batch *b, const char *label)
{
	const double eps = 1e-2;
	double worst = 0;
	vit_zero_grad(m);
	gc_loss(m, b);
	vit_backward(m);
	vit_exact_rotations(m, 1);
	float *dir = malloc(sizeof(float) * m->nparam);
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *t = &m->tensor[i];
		float *p = m->param + t->off, *g = m->grad + t->off;
		gc_randn(dir, t->n, 1.0f, 1000 + i);
		int pe = strcmp(t->name, "pe.params") == 0;
		size_t first;
		for (size_t j = 0; j < t->n && pe; j++)
			if (gc_copy(m, j, &first))
				dir[j] = dir[first];
		double nrm = 0, an = 0;
		for (size_t j = 0; j < t->n; j++)
			nrm += (double)dir[j] * dir[j];
		nrm = sqrt(nrm);
		for (size_t j = 0; j < t->n; j++) {
			dir[j] /= nrm;
			if (!pe || !gc_copy(m, j, &first))
				an += (double)g[j] * dir[j];
		}
		float *save = malloc(sizeof(float) * t->n);
		memcpy(save, p, sizeof(float) * t->n);
		double fd[2];
		for (int k = 0; k < 2; k++) {	/* steps eps and eps / 2 */
			double e = eps / (1 + k), l[2];
			for (int sgn = 0; sgn < 2; sgn++) {
				for (size_t j = 0; j < t->n; j++)
					p[j] = save[j] + (sgn ? -e : e) * dir[j];
				l[sgn] = gc_loss(m, b);
			}
			fd[k] = (l[0] - l[1]) / (2 * e);
		}
		memcpy(p, save, sizeof(float) * t->n);
		free(save);
		/* Richardson: cancels the eps^2 term of central differences */
		double fdr = (4 * fd[1] - fd[0]) / 3;
		double err = fabs(fdr - an) / fmax(fabs(fdr), 2e-2);
		worst = maxn(worst, err);
		CHECK(err < 1e-2, "%s: d/d %s: analytic %.6g, differences %.6g",
		    label, t->name, an, fdr);
	}
	free(dir);
	vit_exact_rotations(m, 0);
	return worst;
}

#endif
