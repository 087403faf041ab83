/*
 * bench_eig.c - what the eigendecomposition route for liere:64 would cost,
 * beside what the exponential costs now, on one thread.
 *
 * A skew X = sum_i p_i A_i is Q B Q^T, B block-diagonal 2 x 2 (its real
 * Schur form); then exp(X) = Q exp(B) Q^T takes one product and the
 * adjoint four (Daleckii-Krein in Q's basis), where scaling and squaring
 * takes about 10 and 30.  Getting Q takes a tridiagonal reduction (timed
 * as LAPACK's ssytrd and sorgtr at n = 64: the skew one does the same
 * work) and the tridiagonal's eigenvectors (a zero-diagonal tridiagonal of
 * 64 is a 32 x 32 bidiagonal SVD: sbdsdc, or sstedc on the 64).  X is a
 * liere:64 generator set at LieRE's init, at position (4/7, 5/7) of the
 * reference grid.  This is the measurement behind issue 4's bar 2 note.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "expm.h"
#include "pe.h"

enum { N = 64, H = N / 2, LWORK = 8 * N * N, LIWORK = 8 * N + 16 };

/* LAPACK (OpenBLAS carries it), with gfortran's hidden string lengths. */
void	ssytrd_(const char *uplo, const int *n, float *a, const int *lda,
	    float *d, float *e, float *tau, float *work, const int *lwork,
	    int *info, size_t luplo);
void	sorgtr_(const char *uplo, const int *n, float *a, const int *lda,
	    const float *tau, float *work, const int *lwork, int *info,
	    size_t luplo);
void	sbdsdc_(const char *uplo, const char *compq, const int *n, float *d,
	    float *e, float *u, const int *ldu, float *vt, const int *ldvt,
	    float *q, int *iq, float *work, int *iwork, int *info, size_t luplo,
	    size_t lcompq);
void	sstedc_(const char *compz, const int *n, float *d, float *e, float *z,
	    const int *ldz, float *work, const int *lwork, int *iwork,
	    const int *liwork, int *info, size_t lcompz);

struct bufs {
	float	 X[N * N], S[N * N], A[N * N], R[N * N], G[N * N], dX[N * N];
	float	 d[N], e[N], tau[N], U[N * N], V[N * N];
	float	 off[N];		/* the reduction's off-diagonal */
	float	 work[LWORK], *ws;
	int	 iwork[LIWORK], info;
};

/* The pieces timed, each a function of the buffers. */
static void
run_forward(struct bufs *b)
{
	expm_skew_f32(N, b->X, b->R, b->ws);
}

static void
run_adjoint(struct bufs *b)
{
	expm_skew_adjoint_f32(N, b->X, b->G, b->dX, NULL, b->ws);
}

static void
run_product(struct bufs *b)
{
	expm_mul_f32(N, b->R, b->G, b->dX, 0);
}

static void
run_sytrd(struct bufs *b)
{
	int n = N, lw = LWORK;
	memcpy(b->A, b->S, sizeof b->A);
	ssytrd_("U", &n, b->A, &n, b->d, b->e, b->tau, b->work, &lw, &b->info, 1);
}

static void
run_orgtr(struct bufs *b)
{
	int n = N, lw = LWORK;
	run_sytrd(b);
	sorgtr_("U", &n, b->A, &n, b->tau, b->work, &lw, &b->info, 1);
}

/* The bidiagonal of the zero-diagonal tridiagonal with off-diagonal off:
 * diagonal off[0], off[2], ..., off-diagonal off[1], off[3], ... */
static void
run_bdsdc(struct bufs *b)
{
	int h = H;
	for (int i = 0; i < H; i++) {
		b->d[i] = b->off[2 * i];
		b->e[i] = i + 1 < H ? b->off[2 * i + 1] : 0;
	}
	sbdsdc_("L", "I", &h, b->d, b->e, b->U, &h, b->V, &h, NULL, NULL,
	    b->work, b->iwork, &b->info, 1, 1);
}

static void
run_stedc(struct bufs *b)
{
	int n = N, lw = LWORK, liw = LIWORK;
	memset(b->d, 0, sizeof b->d);
	memcpy(b->e, b->off, sizeof b->e);
	sstedc_("I", &n, b->d, b->e, b->U, &n, b->work, &lw, b->iwork, &liw,
	    &b->info, 1);
}

/* Microseconds a call, the best of batches over about a second. */
static double
micros(void (*fn)(struct bufs *), struct bufs *b)
{
	double best = 1e30, t0 = now_seconds();
	do {
		double t = now_seconds();
		for (int r = 0; r < 20; r++)
			fn(b);
		t = (now_seconds() - t) / 20;
		best = t < best ? t : best;
	} while (now_seconds() - t0 < 1.0);
	if (b->info != 0)
		die("LAPACK info %d", b->info);
	return best * 1e6;
}

int
main(int argc, char *argv[])
{
	static const struct {
		const char *name;
		void (*fn)(struct bufs *);
	} piece[] = {
		{ "exp, scaling and squaring (now)", run_forward },
		{ "its adjoint (now)", run_adjoint },
		{ "one 64 x 64 product", run_product },
		{ "ssytrd 64 (reduction)", run_sytrd },
		{ "ssytrd + sorgtr 64 (and Q)", run_orgtr },
		{ "sbdsdc 32, vectors", run_bdsdc },
		{ "sstedc 64, vectors", run_stedc },
	};
	struct pe pe;
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 1 };
	struct bufs *b = aligned_alloc(64, (sizeof *b + 63) & ~(size_t)63);

	cli_init(argc, argv);
	cli_threads(1);
	if (b == NULL || pe_parse(&pe, "liere:64", N, 2, 1, 1, "none") < 0)
		die("liere:64: %s", b ? pe.err.msg : "out of memory");
	float *params = malloc(sizeof(float) * pe.nparam);
	double *gen = malloc(sizeof(double) * 2 * N * N);
	b->ws = aligned_alloc(64, sizeof(float) * expm_scratch_f32(N));
	if (params == NULL || gen == NULL || b->ws == NULL)
		die("out of memory");
	pe_init_params(&pe, &ini, params);
	pe_generators(&pe, params, gen);
	for (int k = 0; k < N * N; k++) {
		b->X[k] = (float)(4.0 / 7 * gen[k] + 5.0 / 7 * gen[N * N + k]);
		b->G[k] = (float)(k % 7) - 3;
	}
	for (int i = 0; i < N; i++)	/* a symmetric stand-in of X's size */
		for (int j = 0; j < N; j++)
			b->S[i * N + j] = b->X[i * N + j] * (i < j ? 1 : -1);
	run_sytrd(b);		/* the tridiagonal the eigensolvers take */
	memcpy(b->off, b->e, sizeof b->off);
	b->off[N - 1] = 0;
	expm_skew_f32(N, b->X, b->R, b->ws);
	printf("liere:64 block at LieRE's init, %d squarings; one thread, microseconds a call\n",
	    expm_squarings_f32(N, b->X, b->ws));
	for (size_t i = 0; i < sizeof piece / sizeof piece[0]; i++)
		printf("  %-34s %8.1f\n", piece[i].name, micros(piece[i].fn, b));
	free(params);
	free(gen);
	free(b->ws);
	free(b);
	return 0;
}
