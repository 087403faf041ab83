/* ape.c - ComRoPE's absolute position embeddings: a learned table over
 * the training grid that the engine reads at each token's position, by
 * multilinear interpolation (lib/nn/posemb.c), so that perturbed or
 * offset positions and other resolutions read it too; nothing rotates.
 * Positions as ComRoPE's code: (i + 0.5) / n, the CLS at 0.5 when it has
 * a position.  Option official reads the table as that code does: its
 * grid_sample takes the coordinates in reverse order, and in 2D a zero
 * first, so a 2D token reads the middle column of its row and a 3D one
 * the table's frame axis at its x and its x axis at its frame (vit.c). */
#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"

const struct pe_method pe_ape = {
	.name = "ape", .synopsis = "ape[,official]", .flops_all = "ape",
	.flags = PEM_NOT_ROTARY | PEM_COMMUTES | PEM_OFFICIAL,
	.table = PE_TABLE_SAMPLED,
	.conv = PE_CONV_CENTRE,
};
