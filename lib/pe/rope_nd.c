/*
 * rope_nd.c - axial RoPE in a learned orthogonal basis (Liu et al. 2025,
 * "Rethinking RoPE: a mathematical blueprint for N-dimensional positional
 * encoding", arXiv 2504.06308): a valid N-D RoPE is exp(sum_i x_i B_i)
 * with the B_i a basis of a maximal abelian subalgebra of so(d); the
 * axis-aligned block-diagonal RoPE is the maximal torus, and interactions
 * between the axes are a change of basis, R(x) = Q exp(sum_i x_i B_i) Q^T
 * with Q orthogonal and learned.  Of the parameterizations of Q the paper
 * discusses (Cayley, exponential, Givens) this takes Q = exp(A) of a
 * learned skew A, one per set, around rope-axial's fixed torus (theta=).
 * It is string's form with the other two choices: exp(A) for the Cayley
 * transform, and the axial frequencies fixed where string learns a
 * frequency per axis and pair.
 *
 * Layout: A's upper triangle [d(d-1)/2], A = A_up - A_up^T.  Default init
 * A = 0: Q = I, rope-axial, from which the basis is learned.
 */
#include <string.h>

#include "expm.h"
#include "pe.h"
#include "pe_conv.h"
#include "pe_impl.h"
#include "pe_init.h"
#include "pe_method.h"
#include "rope_axial.h"
#include "skew.h"

static const struct pe_option options[] = {
	PE_OPTION_THETA(struct pe_theta),	/* rope-axial's: B is its */
	{ 0 },
};

static int64_t
set_params(const struct pe *pe)
{
	return tri(pe->head_dim);
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	if (ini->kind == PE_INIT_DEFAULT)
		memset(p, 0, sizeof *p * set_params(pe));
	else
		pe_fill(ini, r, p, set_params(pe));
}

/* The torus is fixed: its gradient trains nothing. */
static void
backward(const struct pe *pe, const float *par, const double *dg, float *dpar)
{
}

static void
basis(const struct pe *pe, const float *par, double *Q, double *ws)
{
	int d = pe->head_dim;

	skew_from_upper(d, par, 1, ws);		/* A, then expm's aligned scratch */
	expm_skew(d, ws, Q, ws + round8((int64_t)d * d));
}

/* dL/dA = L(A^T, G), the adjoint of exp's Frechet derivative; A's upper
 * entry (i, j) is +A_ij and -A_ji. */
static void
basis_backward(const struct pe *pe, const float *par, const double *G,
    float *dpar, double *ws)
{
	int d = pe->head_dim;
	int64_t dd = round8((int64_t)d * d);
	double *dA = ws + dd;

	skew_from_upper(d, par, 1, ws);
	expm_skew_adjoint(d, ws, G, dA, NULL, ws + 2 * dd);
	for (int i = 0, q = 0; i < d; i++)
		for (int j = i + 1; j < d; j++, q++)
			dpar[q] += (float)(dA[i * d + j] - dA[j * d + i]);
}

static int64_t
basis_scratch(const struct pe *pe)
{
	return 2 * round8((int64_t)pe->head_dim * pe->head_dim) + expm_scratch(pe->head_dim);
}

/* one d x d exponential, charged as flops.h charges one: 10 products */
static double
basis_macs(const struct pe *pe)
{
	double d = pe->head_dim;
	return 10 * d * d * d;
}

const struct pe_method pe_rope_nd = {
	.name = "rope-nd", .synopsis = "rope-nd[,theta=T]", .flops_all = "rope-nd",
	.flags = PEM_PAIRS | PEM_COMMUTES, .options = options,
	.conv = PE_CONV_INTEGER,	/* axial RoPE's integer grid */
	.set_params = set_params, .init = init, .generator = pe_axial_generator,
	.backward = backward,
	.basis = basis, .basis_backward = basis_backward,
	.basis_scratch = basis_scratch, .basis_macs = basis_macs,
};
