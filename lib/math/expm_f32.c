/*
 * expm_f32.c - expm.h's algorithm in float (expm_impl.h with 16-lane
 * vectors): what the engine's rotations use, forward (pe_work.f32) and
 * backward, needed to float precision only, whose products then run at
 * twice the lanes per instruction.
 */
#include "arch.h"
ARCH_CONTRACT
ARCH_VECTORIZE
#include "expm.h"
#include "expm_t18.h"

#define REAL	float
#define VEC	v16
#define HVEC	v8
#define VL	16
#define THETA	EXPM_THETA_F32
#define HALF	1
#define NAME(x)	x##_f32
#include "expm_impl.h"
