/* abs.c - learned absolute position embeddings (DeiT): a table the engine
 * adds to the tokens (lib/nn/posemb.c); nothing rotates. */
#include "pe.h"
#include "pe_method.h"

const struct pe_method pe_abs = {
	.name = "abs", .synopsis = "abs", .flops_all = "abs",
	.flags = PEM_NOT_ROTARY | PEM_COMMUTES, .table = PE_TABLE_LEARNED,
};
