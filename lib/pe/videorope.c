/*
 * videorope.c - VideoRoPE (Wei et al. 2025, arXiv 2502.05173), a RoPE
 * for video built from three choices the paper makes against M-RoPE:
 *
 * - low-frequency temporal allocation: one ladder of frequencies
 *   theta^(-j / npair) over the head's pairs, of which t takes the lowest,
 *   the last quarter (at least one pair: M-RoPE's share, at the other
 *   end), so that t's angles do not wrap around within a clip;
 * - a diagonal layout: the spatial pairs interleave y and x (y on even
 *   pairs, x on odd), and a token at (t, y, x) sits at y + delta t and
 *   x + delta t, so that frames advance along the diagonal and keep the
 *   spatial neighbours of each token symmetric;
 * - adjustable temporal spacing: t itself at delta t (option delta=,
 *   default 2, the spacing the paper settles on).
 *
 * The paper also centres the spatial indices (w - W/2, h - H/2): a
 * constant rotation C on every token, which commutes with R and cancels
 * in (C R(x) q)^T (C R(y) k), so it is left out.  In 2D the pairs
 * interleave y and x and nothing is diagonal; in 1D it is RoPE.  So
 * R = exp(sum_i p_i A_i) with 2 x 2 blocks: pair j of A_t turns by
 * delta f_j (every pair, through t and the diagonal), of A_y and A_x by
 * f_j on their pairs.  No parameters.
 */
#include <math.h>
#include <stddef.h>

#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"

struct videorope {
	double	 theta;		/* frequency base, default 100 */
	double	 delta;		/* temporal spacing, default 2 */
};

static const struct pe_option options[] = {
	PE_OPTION_THETA(struct videorope),
	{ "delta", PE_OPT_POSITIVE, 2, offsetof(struct videorope, delta) },
	{ 0 },
};

/* The spatial axis of pair j (1D: 0; 2D: 0 y, 1 x; 3D: 1 y, 2 x), or -1
 * for a temporal pair (3D, the lowest frequencies). */
static int
spatial_axis(const struct pe *pe, int j)
{
	int npair = pe->head_dim / 2, N = pe->axes, nt;

	if (N == 1)
		return 0;
	nt = N == 3 ? (npair / 4 > 0 ? npair / 4 : 1) : 0;
	if (j >= npair - nt)
		return -1;
	return N - 2 + j % 2;
}

static void
generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	const struct videorope *o = pe_opts(pe);
	double f = pow(o->theta, -(double)j / (pe->head_dim / 2)), u = 0;

	if (pe->axes == 3 && i == 0)
		u = o->delta * f;	/* t, and the diagonal of y and x */
	else if (spatial_axis(pe, j) == i)
		u = f;
	g[1] = -u;
	g[2] = u;
}

const struct pe_method pe_videorope = {
	.name = "videorope", .synopsis = "videorope[,theta=T][,delta=D]",
	.flops_all = "videorope",
	.flags = PEM_PAIRS | PEM_COMMUTES, .options = options,
	.conv = PE_CONV_INTEGER,	/* the frame and patch indices */
	.generator = generator,
};
