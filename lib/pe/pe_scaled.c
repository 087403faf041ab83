/*
 * pe_scaled.c - the engine of the encodings of commuting scaled
 * generators (PEM_SCALED: comrope-ap, comrope-ld), their rotations and
 * gradient in closed form by one eigendecomposition per block.
 *
 * Block j of such a set turns a token at p by exp(s U_j): one skew
 * generator U_j and a scalar s of the position, p_(j mod axes) (ComRoPE-AP)
 * or sum_i scale_ij p_i (PEM_SCALES: ComRoPE-LD).  The Hermitian i U_j = V diag(mu) V^H
 * (LAPACK's zheev, in double, once per block and call) gives every token
 *   R(s) = V diag(e^(-i s mu)) V^H = Re(V diag(e^(-i s mu)) V^H),
 * two real products instead of an exponential's dozens.  Positions that
 * differ from record to record (posgen --perturb, ComRoPE's training) so
 * cost no more than a grid's, and R is exact to double rounding.
 *
 * Backward: dL/dU = sum_t s_t L*(s_t U, G_t), G_t = dL/dR_t and L* the
 * adjoint Frechet derivative, which in V's basis is a Hadamard product
 * (Daleckii-Krein).  Its sum over tokens collapses: with d_kl = mu_k - mu_l,
 *   (V^H dL/dU V)_kl = (V^H Delta V)_kl / (i d_kl),
 *   Delta = sum_t (R_t^T G_t - G_t R_t^T),
 * and where |d_kl| max|s| < SERIES (equal or near eigenvalues, where that
 * quotient would cancel; always on the diagonal) the series
 *   sum_m (i d_kl)^m / (m+1)! (V^H C_(m+1) V)_kl,  C_m = sum_t s_t^m G_t R_t^T.
 * A token then costs two real products and sums of b x b matrices, and
 * V's basis is entered and left once per block.  LD's scales:
 * dL/dscale_ij = sum_t p_ti <G_t R_t^T, U_j>.
 */
#include "arch.h"
ARCH_CONTRACT
ARCH_VECTORIZE
#include <cblas.h>
#include <complex.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "expm.h"
#include "pe.h"
#include "pe_impl.h"
#include "skew.h"

#define SERIES	0.1	/* below it the series: 0.1^NMOM / (NMOM+1)! = 3e-14 */
enum { NMOM = 8 };
/* Tokens' blocks are rsize floats apart, a stride hardware prefetch
 * does not follow: fetch the one this many tokens ahead. */
enum { AHEAD = ARCH_AHEAD_TOKENS };

/* LAPACK (OpenBLAS carries it), with gfortran's hidden string lengths. */
void	zheev_(const char *jobz, const char *uplo, const int *n,
	    double complex *a, const int *lda, double *w, double complex *work,
	    const int *lwork, double *rwork, int *info, size_t ljobz, size_t luplo);

int
scaled_closed(const struct pe *pe)
{
	return (pe->method->flags & PEM_SCALED) && pe->block > 2;
}

/* One thread's slots: 8 b-vectors, then b x b matrices; the complex ones
 * take two. */
enum { M_U, M_A, M_VRE = M_A + 2, M_VIM, M_VRET, M_VIMT, M_WRE, M_WIM, M_R,
	M_G, M_P, M_Q, M_DELTA, M_T1, M_Y = M_T1 + 2, M_S = M_Y + 2, M_KT = M_S + 2,
	M_AX = M_KT + 2, M_C = M_AX + 3, M_END = M_C + NMOM };

int64_t
scaled_scratch(int b)
{
	return 8 * round8(b) + M_END * round8((int64_t)b * b);
}

static double *
mslot(int b, double *ws, int k)
{
	return ws + 8 * round8(b) + k * round8((int64_t)b * b);
}

int
scaled_eig(int b, const double *U, double *ws, double *mu)
{
	int64_t bb = (int64_t)b * b;
	double complex *A = (double complex *)mslot(b, ws, M_A);
	double complex *work = (double complex *)ws;	/* 2b: vectors 0 .. 3 */
	double *rwork = ws + 4 * round8(b);		/* 3b: vectors 4 .. 6 */
	double *Vre = mslot(b, ws, M_VRE), *Vim = mslot(b, ws, M_VIM);
	double *VreT = mslot(b, ws, M_VRET), *VimT = mslot(b, ws, M_VIMT);
	int n = b, lwork = 2 * b, info;

	for (int r = 0; r < b; r++)		/* column-major */
		for (int c = 0; c < b; c++)
			A[(int64_t)c * b + r] = I * U[(int64_t)r * b + c];
	zheev_("V", "U", &n, A, &n, mu, work, &lwork, rwork, &info, 1, 1);
	for (int r = 0; r < b; r++)
		for (int k = 0; k < b; k++) {
			double complex v = A[(int64_t)k * b + r];
			Vre[r * b + k] = VreT[k * b + r] = creal(v);
			Vim[r * b + k] = VimT[k * b + r] = cimag(v);
		}
	for (int64_t e = 0; e < bb && info == 0; e++)	/* NaN generators */
		if (!isfinite(Vre[e]) || !isfinite(Vim[e]) || !isfinite(mu[e % b]))
			info = -100;
	return info;
}

/* (i d)^m / (m+1)!, term m of the series. */
static double complex
series_coef(double d, int m)
{
	double complex c = 1;
	for (int q = 1; q <= m; q++)
		c *= I * d / (q + 1);
	return c;
}

/* s of block j for a token at p. */
static double
token_s(const struct pe *pe, const float *par, const float *p, int j)
{
	int N = pe->axes, nb = pe->nblock;
	int64_t k = tri(pe->block);
	double s = 0;

	if (!(pe->method->flags & PEM_SCALES))
		return p[j % N];
	for (int i = 0; i < N; i++)
		s += (double)p[i] * par[nb * k + (int64_t)i * nb + j];
	return s;
}

/* R = Re(V diag(e^(-i s mu)) V^H) into slot M_R. */
static void
rotation_at(int b, double s, const double *mu, double *ws)
{
	double *Vre = mslot(b, ws, M_VRE), *Vim = mslot(b, ws, M_VIM);
	double *Wre = mslot(b, ws, M_WRE), *Wim = mslot(b, ws, M_WIM);

	/* a real skew matrix's mu come in pairs mu_k = -mu_(b-1-k) (ascending
	 * from zheev): one sincos a pair */
	double sn[PE_MAXDIM], cs[PE_MAXDIM];
	for (int k = 0; k < (b + 1) / 2; k++) {
		sincos(s * 0.5 * (mu[k] - mu[b - 1 - k]), &sn[k], &cs[k]);
		sn[b - 1 - k] = -sn[k];
		cs[b - 1 - k] = cs[k];
	}
	for (int r = 0; r < b; r++)
		for (int k = 0; k < b; k++) {
			double vr = Vre[r * b + k], vi = Vim[r * b + k];
			Wre[r * b + k] = vr * cs[k] + vi * sn[k];
			Wim[r * b + k] = vi * cs[k] - vr * sn[k];
		}
	double *R = mslot(b, ws, M_R);
	expm_mul(b, Wre, mslot(b, ws, M_VRET), R, 0);
	expm_mul(b, Wim, mslot(b, ws, M_VIMT), R, 1);
}

/* Y = V^H M V for real M: Y's real part in slot y, its imaginary in y+1. */
static void
to_eigen(int b, double *ws, const double *M, int y)
{
	double *Vre = mslot(b, ws, M_VRE), *Vim = mslot(b, ws, M_VIM);
	double *VreT = mslot(b, ws, M_VRET), *VimT = mslot(b, ws, M_VIMT);
	double *Tre = mslot(b, ws, M_T1), *Tim = mslot(b, ws, M_T1 + 1);
	double *Yre = mslot(b, ws, y), *Yim = mslot(b, ws, y + 1);

	expm_mul(b, M, Vre, Tre, 0);		/* T = M V */
	expm_mul(b, M, Vim, Tim, 0);
	expm_mul(b, VreT, Tre, Yre, 0);	/* Y = (Vre^T - i Vim^T)(Tre + i Tim) */
	expm_mul(b, VimT, Tim, Yre, 1);
	expm_mul(b, VreT, Tim, Yim, 0);
	for (int64_t e = 0; e < (int64_t)b * b; e++)
		Tim[e] = -Tre[e];
	expm_mul(b, VimT, Tim, Yim, 1);
}

/* R of block j of one set for every token. */
static void
forward_block(const struct pe *pe, const float *par, int j, int T,
    const float *pos, float *Rs /* [T][rsize] */, double *ws)
{
	int b = pe->block;
	int64_t bb = (int64_t)b * b, k = tri(b);
	double *U = mslot(b, ws, M_U), *R = mslot(b, ws, M_R), mu[PE_MAXDIM];

	skew_from_upper(b, par + j * k, 1, U);
	int bad = scaled_eig(b, U, ws, mu) != 0;
	for (int t = 0; t < T; t++) {
		float *out = Rs + (int64_t)t * pe->rsize + j * bb;
		if (t + AHEAD < T)
			arch_prefetch_floats(out + AHEAD * pe->rsize, bb, 1);
		if (bad) {	/* NaN or Inf generators: R says so */
			for (int64_t e = 0; e < bb; e++)
				out[e] = NAN;
			continue;
		}
		rotation_at(b, token_s(pe, par, pos + (int64_t)t * pe->axes, j), mu, ws);
		for (int64_t e = 0; e < bb; e++)
			out[e] = (float)R[e];
	}
}

void
scaled_rotations(const struct pe *pe, struct pe_work *w, const float *params,
    int T, const float *pos, float *R)
{
	int64_t items = (int64_t)pe->nset * pe->nblock;
	int blas = openblas_get_num_threads();

	openblas_set_num_threads(1);	/* zheev inside the threads' loop */
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int64_t it = 0; it < items; it++) {
		int set = (int)(it / pe->nblock);
		forward_block(pe, params + set * pe->set_params, (int)(it % pe->nblock),
		    T, pos, R + (int64_t)set * T * pe->rsize,
		    w->scratch + omp_get_thread_num() * w->thread_doubles);
	}
	openblas_set_num_threads(blas);
}

/* dparams of block j of one set (its own entries: no other item writes
 * them). */
static void
backward_block(const struct pe *pe, const float *par, int j, int T,
    const float *pos, const float *Rs, const float *dRs, float *dpar, double *ws)
{
	int b = pe->block, N = pe->axes, nb = pe->nblock, ld = (pe->method->flags & PEM_SCALES) != 0;
	int64_t bb = (int64_t)b * b, k = tri(b);
	double *U = mslot(b, ws, M_U), *G = mslot(b, ws, M_G), *RT = mslot(b, ws, M_R);
	double *P = mslot(b, ws, M_P), *Q = mslot(b, ws, M_Q), *D = mslot(b, ws, M_DELTA);
	double *E = mslot(b, ws, M_AX), *C = mslot(b, ws, M_C), mu[PE_MAXDIM];

	skew_from_upper(b, par + j * k, 1, U);
	if (scaled_eig(b, U, ws, mu) != 0) {
		for (int64_t q = 0; q < k; q++)
			dpar[j * k + q] = NAN;
		return;
	}
	/* the series' moments only where some pair of eigenvalues needs them
	 * (the diagonal needs the first) */
	double smax = 0;
	for (int t = 0; t < T; t++) {
		double s = fabs(token_s(pe, par, pos + (int64_t)t * N, j));
		smax = s > smax ? s : smax;
	}
	int nm = 1;
	for (int a = 0; a < b && nm == 1; a++)
		for (int c = 0; c < b; c++)
			if (c != a && fabs(mu[a] - mu[c]) * smax < SERIES)
				nm = NMOM;
	memset(D, 0, sizeof *D * bb);
	memset(E, 0, sizeof *E * 3 * round8(bb));
	memset(C, 0, sizeof *C * NMOM * round8(bb));
	for (int t = 0; t < T; t++) {
		const float *g = dRs + (int64_t)t * pe->rsize + j * bb;
		const float *r = Rs + (int64_t)t * pe->rsize + j * bb;
		if (t + AHEAD < T) {
			arch_prefetch_floats(g + AHEAD * pe->rsize, bb, 0);
			arch_prefetch_floats(r + AHEAD * pe->rsize, bb, 0);
		}
		for (int a = 0; a < b; a++)
			for (int c = 0; c < b; c++) {
				G[a * b + c] = g[a * b + c];
				RT[c * b + a] = r[a * b + c];
			}
		expm_mul(b, RT, G, P, 0);	/* R^T G */
		expm_mul(b, G, RT, Q, 0);	/* G R^T */
		for (int64_t e = 0; e < bb; e++)
			D[e] += P[e] - Q[e];
		double s = token_s(pe, par, pos + (int64_t)t * N, j), sm = s;
		for (int m = 0; m < nm; m++, sm *= s) {
			double *Cm = C + m * round8(bb);
			for (int64_t e = 0; e < bb; e++)
				Cm[e] += sm * Q[e];
		}
		for (int i = 0; ld && i < N; i++) {
			double *Ei = E + i * round8(bb), pi = pos[(int64_t)t * N + i];
			for (int64_t e = 0; e < bb; e++)
				Ei[e] += pi * Q[e];
		}
	}

	/* Kt = V^H dL/dU V: the quotient, or the series near equal mu */
	double *Ktre = mslot(b, ws, M_KT), *Ktim = mslot(b, ws, M_KT + 1);
	double *Yre = mslot(b, ws, M_Y), *Yim = mslot(b, ws, M_Y + 1);
	double *Sre = mslot(b, ws, M_S), *Sim = mslot(b, ws, M_S + 1);
	to_eigen(b, ws, D, M_Y);
	for (int a = 0; a < b; a++)
		for (int c = 0; c < b; c++) {
			double d = mu[a] - mu[c];
			int near = a == c || fabs(d) * smax < SERIES;
			Ktre[a * b + c] = near ? 0 : Yim[a * b + c] / d;	/* -i Y / d */
			Ktim[a * b + c] = near ? 0 : -Yre[a * b + c] / d;
		}
	for (int m = 0; m < nm; m++) {
		to_eigen(b, ws, C + m * round8(bb), M_S);	/* V^H C_(m+1) V */
		for (int a = 0; a < b; a++)
			for (int c = 0; c < b; c++) {
				double d = mu[a] - mu[c];
				if (a != c && !(fabs(d) * smax < SERIES))
					continue;
				double complex z = series_coef(d, m) *
				    (Sre[a * b + c] + I * Sim[a * b + c]);
				Ktre[a * b + c] += creal(z);
				Ktim[a * b + c] += cimag(z);
			}
	}

	/* dL/dU = Re(V Kt V^H), then the upper entries of U - U^T */
	double *Vre = mslot(b, ws, M_VRE), *Vim = mslot(b, ws, M_VIM);
	double *K = mslot(b, ws, M_P);
	expm_mul(b, Vre, Ktre, Sre, 0);	/* S = V Kt */
	for (int64_t e = 0; e < bb; e++)
		Yre[e] = -Vim[e];
	expm_mul(b, Yre, Ktim, Sre, 1);
	expm_mul(b, Vre, Ktim, Sim, 0);
	expm_mul(b, Vim, Ktre, Sim, 1);
	expm_mul(b, Sre, mslot(b, ws, M_VRET), K, 0);	/* Re(S V^H) */
	expm_mul(b, Sim, mslot(b, ws, M_VIMT), K, 1);
	for (int r = 0, q = 0; r < b; r++)
		for (int c = r + 1; c < b; c++, q++)
			dpar[j * k + q] += (float)(K[r * b + c] - K[c * b + r]);
	for (int i = 0; ld && i < N; i++) {
		const double *Ei = E + i * round8(bb);
		double ds = 0;
		for (int64_t e = 0; e < bb; e++)
			ds += Ei[e] * U[e];
		dpar[nb * k + (int64_t)i * nb + j] += (float)ds;
	}
}

void
scaled_backward(const struct pe *pe, struct pe_work *w, const float *params,
    int T, const float *pos, const float *R, const float *dR, float *dparams)
{
	int64_t items = (int64_t)pe->nset * pe->nblock;
	int blas = openblas_get_num_threads();

	openblas_set_num_threads(1);
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int64_t it = 0; it < items; it++) {
		int set = (int)(it / pe->nblock);
		int64_t o = (int64_t)set * T * pe->rsize;
		backward_block(pe, params + set * pe->set_params, (int)(it % pe->nblock),
		    T, pos, R + o, dR + o, dparams + set * pe->set_params,
		    w->scratch + omp_get_thread_num() * w->thread_doubles);
	}
	openblas_set_num_threads(blas);
}
