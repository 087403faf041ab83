/* zeros.c - R = I and no parameters: ComRoPE's starting point, named as
 * its fine-tuning runs name it. */
#include "pe.h"
#include "pe_method.h"

const struct pe_method pe_zeros = {
	.name = "zeros", .synopsis = "zeros",
	.flags = PEM_IDENTITY | PEM_COMMUTES,
};
