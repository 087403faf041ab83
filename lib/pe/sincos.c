/* sincos.c - fixed sine-cosine absolute embeddings (Vaswani et al.), a
 * table the engine adds to the tokens (lib/nn/posemb.c); nothing rotates. */
#include "pe.h"
#include "pe_method.h"

const struct pe_method pe_sincos = {
	.name = "sincos", .synopsis = "sincos", .flops_all = "sincos",
	.flags = PEM_NOT_ROTARY | PEM_COMMUTES, .table = PE_TABLE_SINCOS,
};
