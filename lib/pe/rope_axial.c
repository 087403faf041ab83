/* rope_axial.c - axial RoPE (RoPE-ViT, VisionLlama): fixed frequencies,
 * the pairs cut into a group per axis (pe_pair_axis), no parameters. */
#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"
#include "rope_axial.h"

static const struct pe_option options[] = {
	PE_OPTION_THETA(struct pe_theta),
	{ 0 },
};

/* Pair j turns by -f p_a, f its group's RoPE frequency, a its axis. */
void
pe_axial_generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	if (pe_pair_axis(pe, j) == i) {
		const struct pe_theta *o = pe_opts(pe);
		double f = pe_pair_freq(pe, j, o->theta);
		g[1] = -f;
		g[2] = f;
	}
}

const struct pe_method pe_rope_axial = {
	.name = "rope-axial", .synopsis = "rope-axial[,theta=T]",
	.flops_all = "rope-axial",
	.flags = PEM_PAIRS | PEM_COMMUTES, .options = options,
	.conv = PE_CONV_INTEGER,	/* RoPE-ViT's init_t_xy */
	.generator = pe_axial_generator,
};
