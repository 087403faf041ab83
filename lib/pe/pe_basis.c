/*
 * pe_basis.c - the orthogonal basis of an encoding whose rotation is
 * R(p) = P B(p) P^T (see pe.h): P per set from its descriptor's basis
 * hook, the gradient through it, and the dense R where a caller needs the
 * matrices themselves.  One basis per set and step, in double, parallel
 * over the sets; each set is one thread's, so the bits do not depend on
 * the thread count.
 */
#include <omp.h>

#include "pe.h"
#include "pe_impl.h"

int64_t
basis_doubles(const struct pe *pe)
{
	int64_t dd = (int64_t)pe->head_dim * pe->head_dim;

	if (!pe->basis)
		return 0;
	return 2 * round8(dd) + round8(pe->method->basis_scratch(pe));
}

/* Thread t's scratch: two head_dim^2 matrices, then the hook's. */
static double *
thread_ws(const struct pe_work *w, int t)
{
	return w->scratch + (int64_t)t * w->thread_doubles;
}

void
pe_bases(const struct pe *pe, struct pe_work *w, const float *params, float *P)
{
	int64_t dd = (int64_t)pe->head_dim * pe->head_dim;

#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int s = 0; s < pe->nset; s++) {
		double *Pd = thread_ws(w, omp_get_thread_num());
		pe->method->basis(pe, params + s * pe->set_params, Pd, Pd + 2 * round8(dd));
		for (int64_t e = 0; e < dd; e++)
			P[s * dd + e] = (float)Pd[e];
	}
}

void
pe_bases_backward(const struct pe *pe, struct pe_work *w, const float *params,
    const float *dP, float *dparams)
{
	int64_t dd = (int64_t)pe->head_dim * pe->head_dim;

#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int s = 0; s < pe->nset; s++) {
		double *G = thread_ws(w, omp_get_thread_num());
		for (int64_t e = 0; e < dd; e++)
			G[e] = dP[s * dd + e];
		pe->method->basis_backward(pe, params + s * pe->set_params, G,
		    dparams + s * pe->set_params, G + 2 * round8(dd));
	}
}

void
pe_compose(const struct pe *pe, struct pe_work *w, int T, const float *P,
    const float *B, float *R)
{
	int d = pe->head_dim, b = pe->block;
	int64_t dd = (int64_t)d * d, items = (int64_t)pe->nset * T;

#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 4)
	for (int64_t it = 0; it < items; it++) {
		const float *Ps = P + it / T * dd, *Bt = B + it * pe->rsize;
		double *PB = thread_ws(w, omp_get_thread_num());
		float *out = R + it * dd;
		/* P B: B block-diagonal, block j on rows and columns j b ... */
		for (int r = 0; r < d; r++)
			for (int c = 0; c < d; c++) {
				int j = c / b;
				const float *blk = Bt + (int64_t)j * b * b;
				double v = 0;
				for (int m = 0; m < b; m++)
					v += (double)Ps[(int64_t)r * d + j * b + m] * blk[m * b + c % b];
				PB[(int64_t)r * d + c] = v;
			}
		for (int r = 0; r < d; r++)	/* ... then (P B) P^T */
			for (int c = 0; c < d; c++) {
				double v = 0;
				for (int k = 0; k < d; k++)
					v += PB[(int64_t)r * d + k] * Ps[(int64_t)c * d + k];
				out[(int64_t)r * d + c] = (float)v;
			}
	}
}
