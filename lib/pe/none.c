/* none.c - no position encoding: R = I, no parameters. */
#include "pe.h"
#include "pe_method.h"

const struct pe_method pe_none = {
	.name = "none", .synopsis = "none", .flops_all = "none",
	.flags = PEM_IDENTITY | PEM_COMMUTES,
};
