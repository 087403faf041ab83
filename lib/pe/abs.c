/* abs.c - learned absolute position embeddings (DeiT): a table of a CLS
 * row and a row per cell of the training grid, added to the tokens and
 * read by token index (interpolated on another grid, lib/nn/posemb.c);
 * nothing rotates.  Initialised as timm's: truncated normal, std 0.02. */
#include "pe.h"
#include "pe_method.h"
#include "posemb.h"
#include "rng.h"

static void
init(float *tab, size_t n, struct rng *r)
{
	rng_trunc_normal(r, tab, n, 0.02f);
}

static const struct pe_table table = {
	.tensor = "pos_embed", .rows = posemb_grid_rows, .init = init,
	.grid = posemb_grid, .backward = posemb_backward,
};

const struct pe_method pe_abs = {
	.name = "abs", .synopsis = "abs", .flops_all = "abs",
	.flags = PEM_COMMUTES | PEM_BASELINE, .table = &table, .timm = "pos_embed",
};
