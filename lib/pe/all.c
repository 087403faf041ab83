/* all.c - the registered position encodings, one descriptor each
 * (pe_method.h), in the order usage lists and flops --pe all show them. */
#include <stddef.h>

#include "pe_method.h"

extern const struct pe_method pe_none, pe_zeros, pe_abs, pe_sincos, pe_ape,
    pe_rope_axial, pe_rope_mixed, pe_liere, pe_comrope_ap, pe_comrope_ld,
    pe_riemann, pe_mrope, pe_string, pe_rope_nd, pe_videorope,
    pe_circulant_string;

const struct pe_method *const pe_methods[] = {
	&pe_none, &pe_zeros, &pe_abs, &pe_sincos, &pe_ape, &pe_rope_axial,
	&pe_rope_mixed, &pe_liere, &pe_comrope_ap, &pe_comrope_ld,
	&pe_riemann, &pe_mrope, &pe_string, &pe_rope_nd, &pe_videorope,
	&pe_circulant_string, NULL
};
