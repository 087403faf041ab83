/*
 * expm.h - exponential of skew-symmetric matrices and the adjoint of its
 * Frechet derivative, in double (and in float: the _f32 names), for one
 * n x n block at a time (and in float for 16 at once: the _lanes names).
 *
 * Method: scaling and squaring around the degree-18 Taylor polynomial of
 * Bader, Blanes and Casas ("Computing the matrix exponential with an
 * optimized Taylor polynomial approximation", Mathematics 7, 2019), which
 * costs 5 products.  A skew X is normal, so ||X^k||_2 = ||X||_2^k and the
 * truncation error is set by the 2-norm: for n <= 16 bounded by
 * sqrt(||X^2||_F) from the X^2 the polynomial needs anyway, for larger n
 * estimated by power iteration and capped by the Frobenius norm; X / 2^s
 * is brought to 2-norm <= theta, where the polynomial's error is below the
 * type's rounding: 2.5 in double (3e-10: R is exact to float rounding),
 * 3.3 in float (6e-8, one float ulp; on average 0.4 squarings fewer).
 * The power iteration rescales its vector each step (||X||^2 a step
 * overflows float).
 * Symmetric and skew powers (X^2, X^3, X^6) are formed half-size.
 *
 * The backward pass uses exp([[X^T, E], [0, X^T]]) = [[e^X^T, L(X^T, E)],
 * [0, e^X^T]]: the same algorithm on pairs (A, B) with (A1, B1)(A2, B2) =
 * (A1 A2, A1 B2 + B1 A2), and L(X^T, E) is the adjoint of the Frechet
 * derivative L(X, .) applied to E.
 *
 * Blocks of any n >= 1; n a multiple of 8 takes the vectorized kernels.
 * Serial and allocation-free: the caller gives expm_scratch(n) doubles,
 * 64-byte aligned, per thread.
 */
#ifndef EXPM_H
#define EXPM_H

#include <stdint.h>


/* Doubles of scratch that expm_skew and expm_skew_adjoint need. */
int64_t	 expm_scratch(int n);
/* R = exp(X) for skew-symmetric X[n][n].  R may not alias X. */
void	 expm_skew(int n, const double *X /* [n][n] */,
	    double *R /* [n][n] */, double *ws);
/* dX = L(X^T, G), the gradient of <G, exp(X)> with respect to X, for
 * skew X.  Also R = exp(X) when R is not NULL. */
void	 expm_skew_adjoint(int n, const double *X /* [n][n] */,
	    const double *G /* [n][n]: dL/dR */, double *dX /* [n][n] */,
	    double *R /* [n][n] or NULL */, double *ws);
/* C = A B (acc 0) or C += A B (acc 1) for n x n row-major matrices, with
 * the kernels of expm_skew.  C may alias neither. */
void	 expm_mul(int n, const double *A, const double *B, double *C, int acc);
/* Squarings s that expm_skew uses for X (for tests and benchmarks). */
int	 expm_squarings(int n, const double *X /* [n][n] */, double *ws);

/* The same five in float (lib/math/expm_f32.c): scratch in floats, 64-byte
 * aligned; n a multiple of 8 takes the vectorized kernels; theta 3.3. */
int64_t	 expm_scratch_f32(int n);
void	 expm_skew_f32(int n, const float *X /* [n][n] */,
	    float *R /* [n][n] */, float *ws);
void	 expm_skew_adjoint_f32(int n, const float *X /* [n][n] */,
	    const float *G /* [n][n] */, float *dX /* [n][n] */,
	    float *R /* [n][n] or NULL */, float *ws);
void	 expm_mul_f32(int n, const float *A, const float *B, float *C, int acc);
int	 expm_squarings_f32(int n, const float *X /* [n][n] */, float *ws);

/* The float pair for EXPM_LANES blocks at once (lib/math/expm_lanes.c), one per
 * lane: element (i, j) of lane l at [(i * n + j) * EXPM_LANES + l]; n a
 * multiple of 4; arrays and scratch 64-byte aligned.  The squarings are
 * the lanes' largest, and their rounding with them: batch blocks of like
 * norm.  Lanes of zeros give I and G to rounding: a partly filled batch
 * pads with them. */
#define EXPM_LANES	16
/* Floats of scratch that the two below need. */
int64_t	 expm_lanes_scratch(int n);
void	 expm_skew_lanes(int n, const float *X /* [n][n][EXPM_LANES] */,
	    float *R /* [n][n][EXPM_LANES] */, float *ws);
/* dX = L(X^T, G) lane by lane, without R (the forward's). */
void	 expm_skew_adjoint_lanes(int n, const float *X, const float *G,
	    float *dX, float *ws);

#endif
