/*
 * expm.c - exp of skew-symmetric blocks and its adjoint Frechet
 * derivative in double: scaling and squaring around the Bader-Blanes-Casas
 * degree-18 Taylor polynomial (see expm.h; the algorithm is expm_impl.h).
 *
 * The blocks are small (n <= head_dim, typically 8 .. 64) and there are
 * thousands of them per call, each done by one thread, so the products
 * run in register-blocked kernels rather than in BLAS (a BLAS call inside
 * the callers' OpenMP loops would oversubscribe the cores, and for n = 64
 * these kernels are as fast).
 */
/* Fused multiply-add in the kernels; vectorize the short loops of unknown
 * trip count that -O2's cheap cost model leaves scalar. */
#include "arch.h"
ARCH_CONTRACT
ARCH_VECTORIZE
#include "expm.h"

#define REAL	double
#define VEC	v8d
#define HVEC	v4d
#define VL	8
#define THETA	2.5	/* T18 error 3e-10: R exact to float rounding */
#define HALF	0
#define NAME(x)	x
#include "expm_impl.h"
