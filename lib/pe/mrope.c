/*
 * mrope.c - M-RoPE (Qwen2-VL, Wang et al. 2024), the video encoding of
 * vision-language models: the head's pairs cut into a section per axis,
 * each an ordinary 1D RoPE.  Unlike rope-axial's groups the sections cut
 * one ladder of frequencies, theta^(-j / npair) for pair j of the head,
 * which they do not restart.  In 3D t takes the first quarter of the
 * pairs (at least one) and y and x halves of the rest, Qwen2-VL's
 * [16, 24, 24] of 64; in 2D y and x take halves.  No parameters.
 */
#include <math.h>

#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"

static const struct pe_option options[] = {
	PE_OPTION_THETA(struct pe_theta),
	{ 0 },
};

/* The axis that drives pair j: its section's. */
static int
section(const struct pe *pe, int j)
{
	int npair = pe->head_dim / 2, N = pe->axes, t = 0;

	if (N == 1)
		return 0;
	if (N == 3) {
		t = npair / 4 > 0 ? npair / 4 : 1;
		if (j < t)
			return 0;
	}
	return N - 2 + (j >= t + (npair - t) / 2);	/* y, then x */
}

static void
generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	if (section(pe, j) == i) {
		const struct pe_theta *o = pe_opts(pe);
		double f = pow(o->theta, -(double)j / (pe->head_dim / 2));
		g[1] = -f;
		g[2] = f;
	}
}

const struct pe_method pe_mrope = {
	.name = "mrope", .synopsis = "mrope[,theta=T]", .flops_all = "mrope",
	.flags = PEM_PAIRS | PEM_COMMUTES, .options = options,
	.conv = PE_CONV_INTEGER,	/* Qwen2-VL's position ids */
	.generator = generator,
};
