/*
 * expm_f32.c - expm.h's algorithm in float (expm_impl.h with 16-lane
 * vectors): what the rotations' backward pass uses, whose gradients are
 * needed to float precision only and whose products then run at twice
 * the lanes per instruction.
 */
#pragma GCC optimize("fp-contract=fast", "vect-cost-model=dynamic")
#include "expm.h"

#define REAL	float
#define VL	16
#define THETA	3.3	/* T18 error 6e-8, a float ulp */
#define HALF	1
#define NAME(x)	x##_f32
#include "expm_impl.h"
