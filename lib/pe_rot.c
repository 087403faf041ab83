/*
 * pe_rot.c - rotations R(p) = exp(sum_i p_i A_i) for every generator set
 * and token, and the gradient of the parameters from dL/dR (see pe.h).
 *
 * 2 x 2 blocks take the closed form (cos, sin), and so do comrope-ap and
 * comrope-ld's blocks of any size (pe_comrope.c); other blocks go through
 * expm.c, one exponential per ray of tokens (rays.h): a token at m times
 * another's position is R^m of that one's.  The forward pass works in
 * double (R is exact to float rounding: rotgen, the tests of the
 * defining properties) or, with w->f32 (the engine) and blocks of 16 or
 * more, in float like float32 autograd, in half the time; it is parallel
 * over (set, ray).
 * The backward pass works in float (expm_f32.c, twice the lanes; its
 * gradients are within a few float ulps x 2^squarings of the double
 * ones, like any float32 autograd) and reads the powers along each ray
 * from the forward's R; it sums over tokens, so it is parallel over
 * (set, block) with the rays in order inside, which makes it
 * deterministic for any thread count.
 */
#pragma GCC optimize("vect-cost-model=dynamic")	/* the short loops over a block */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expm.h"
#include "pe.h"
#include "pe_impl.h"
#include "rays.h"

static int64_t
round16(int64_t n)
{
	return (n + 15) / 16 * 16;
}

/* Doubles of dgen per set: the generator gradient, or riemann's angles. */
static int64_t
dgen_per_set(const struct pe *pe)
{
	int64_t n = (int64_t)pe->axes * pe->nblock * tri(pe->block);
	return n > pe->set_params ? n : pe->set_params;
}

/* Scratch slots of b x b elements in a thread's workspace: double for the
 * double forward pass, float (fslot) for the float one and the backward;
 * expm's scratch follows them. */
enum { S_X, S_P, S_PT, S_BBAR, S_PBAR, S_TMP, S_T1, S_DX, S_POW, S_END = S_POW + RAYS_MAXMULT };

static double *
slot(const struct pe *pe, double *ws, int k)
{
	return ws + k * round8((int64_t)pe->block * pe->block);
}

/* The float slots (the backward pass, the float forward) follow D_SLOTS
 * double ones: X, and the backward's sums of p_i dX, one per axis. */
enum { D_SLOTS = 4 };

static float *
fslot(const struct pe *pe, double *ws, int k)
{
	int64_t bb = (int64_t)pe->block * pe->block;
	return (float *)(ws + D_SLOTS * round8(bb)) + k * round16(bb);
}

int
pe_work_init(struct pe_work *w, const struct pe *pe, int maxT)
{
	int b = pe->block;
	int64_t gen = (int64_t)pe->nset * pe->axes * pe->nblock * b * b;
	int64_t dgen = pe->nset * dgen_per_set(pe);

	memset(w, 0, sizeof *w);
	if (maxT < 1 || maxT > (1 << 24)) {
		snprintf(w->err, sizeof w->err, "%d tokens: want 1 .. %d", maxT, 1 << 24);
		return -1;
	}
	w->maxT = maxT;
	w->nthread = omp_get_max_threads();
	/* forward: S_END double slots and expm's scratch; backward: D_SLOTS
	 * double slots, then S_END float slots and expm_f32's scratch */
	int64_t fwd = S_END * round8((int64_t)b * b) + round8(expm_scratch(b));
	int64_t bwd = D_SLOTS * round8((int64_t)b * b) + (S_END * round16((int64_t)b * b) +
	    round16(expm_scratch_f32(b)) + 1) / 2;
	if (comrope_closed(pe) && comrope_scratch(b) > fwd)
		fwd = comrope_scratch(b);
	w->thread_doubles = round8(fwd > bwd ? fwd : bwd);
	w->scratch = aligned_alloc(64, sizeof(double) * w->nthread * w->thread_doubles);
	w->gen = aligned_alloc(64, sizeof(double) * round8(gen + 1));
	w->dgen = aligned_alloc(64, sizeof(double) * round8(dgen + 1));
	w->rays = malloc(sizeof *w->rays);
	if (w->rays && rays_init(w->rays, maxT) == -1) {
		free(w->rays);
		w->rays = NULL;
	}
	if (!w->scratch || !w->gen || !w->dgen || !w->rays) {
		pe_work_free(w);
		snprintf(w->err, sizeof w->err, "out of memory for the rotation workspace");
		return -1;
	}
	return 0;
}

void
pe_work_free(struct pe_work *w)
{
	free(w->scratch);
	free(w->gen);
	free(w->dgen);
	if (w->rays)
		rays_free(w->rays);
	free(w->rays);
	w->scratch = w->gen = w->dgen = NULL;
	w->rays = NULL;
}

void
skew_from_upper(int b, const float *U, double s, double *G)
{
	int64_t k = 0;

	for (int i = 0; i < b; i++) {
		G[i * b + i] = 0;
		for (int j = i + 1; j < b; j++, k++) {
			G[i * b + j] = s * U[k];
			G[j * b + i] = -s * U[k];
		}
	}
}

void
pe_generators(const struct pe *pe, const float *p, double *G)
{
	int N = pe->axes, nb = pe->nblock, b = pe->block;
	int64_t bb = (int64_t)b * b, k = tri(b);

	memset(G, 0, sizeof *G * N * nb * bb);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < nb; j++) {
			double *g = G + ((int64_t)i * nb + j) * bb;
			switch (pe->kind) {
			case PE_LIERE:
			case PE_ROPE_MIXED:
				skew_from_upper(b, p + ((int64_t)i * nb + j) * k, 1, g);
				break;
			case PE_COMROPE_AP:
				if (j % N == i)
					skew_from_upper(b, p + j * k, 1, g);
				break;
			case PE_COMROPE_LD:
				skew_from_upper(b, p + j * k, p[nb * k + (int64_t)i * nb + j], g);
				break;
			case PE_ROPE_AXIAL:
				if (pe_pair_axis(pe, j) == i) {
					double f = pe_pair_freq(pe, j, pe->theta);
					g[1] = -f;
					g[2] = f;
				}
				break;
			case PE_RIEMANN:
				if (pe_pair_axis(pe, j) == i) {
					g[1] = p[j];
					g[2] = -p[j];
				}
				break;
			}
		}
}

static void
build_all(const struct pe *pe, struct pe_work *w, const float *params)
{
	int64_t per = (int64_t)pe->axes * pe->nblock * pe->block * pe->block;

	if (pe->identity || pe->kind == PE_RIEMANN)
		return;
#pragma omp parallel for num_threads(w->nthread) schedule(static)
	for (int s = 0; s < pe->nset; s++)
		pe_generators(pe, params + s * pe->set_params, w->gen + s * per);
}

/* X = sum_i p_i G_i for block j of one set. */
static void
position_generator(const struct pe *pe, const double *G, int j, const double *p, double *X)
{
	int64_t bb = (int64_t)pe->block * pe->block;

	memset(X, 0, sizeof *X * bb);
	for (int i = 0; i < pe->axes; i++) {	/* axis by axis: runs of bb */
		const double *g = G + ((int64_t)i * pe->nblock + j) * bb;
		for (int64_t e = 0; e < bb; e++)
			X[e] += p[i] * g[e];
	}
}

/* RiemannFormer's log s = log(e^w / (e^w + alpha)), stable for any w. */
static double
riemann_log_s(const struct pe *pe, double w)
{
	return -log1p(pe->alpha * exp(-w));
}

/* One token's riemann matrix: [npair][2][2]. */
static void
riemann_token(const struct pe *pe, const float *par, const double *p, float *R)
{
	int npair = pe->head_dim / 2;
	double sigma = 0;

	for (int i = 0; i < pe->axes; i++)
		sigma += p[i];
	/* sigma 0 gives 1 even when log s is -inf (w far below -700) */
	double c = sigma == 0 ? 1 : exp(0.5 * sigma * riemann_log_s(pe, par[npair]));
	for (int j = 0; j < npair; j++) {
		double phi = p[pe_pair_axis(pe, j)] * par[j];
		float *r = R + 4 * j;
		if (pe->reflect) {
			double c2 = cos(2 * phi), s2 = sin(2 * phi);
			r[0] = (float)(c * c2); r[1] = (float)(c * s2);
			r[2] = (float)(c * s2); r[3] = (float)(-c * c2);
		} else {
			double co = cos(phi), si = sin(phi);
			r[0] = (float)(c * co); r[1] = (float)(c * si);
			r[2] = (float)(-c * si); r[3] = (float)(c * co);
		}
	}
}

/* R of block j for every token of ray r from X = the base's generator,
 * in double (f64) or in float (f32): the base's exponential P, then its
 * powers in token order, in slot's or fslot's layout of the workspace. */
#define RAY_POWERS(name, REAL, SLOT, EXPM, MUL, XR)			\
static void								\
name(const struct pe *pe, const struct rays *ry, int r, int j,		\
    const double *X, float *Rs, double *ws)				\
{									\
	int b = pe->block;						\
	int64_t bb = (int64_t)b * b;					\
	REAL *P = SLOT(pe, ws, S_P), *cur = SLOT(pe, ws, S_TMP);	\
	REAL *tmp = SLOT(pe, ws, S_T1);					\
									\
	XR;								\
	EXPM(b, Xr, P, (REAL *)SLOT(pe, ws, S_END));			\
	memcpy(cur, P, sizeof *P * bb);					\
	for (int q = ry->start[r], k = 1; q < ry->start[r + 1]; q++) {	\
		int t = ry->tok[q];					\
		for (; k < ry->mult[t]; k++) {				\
			REAL *sw;					\
			MUL(b, cur, P, tmp, 0);				\
			sw = cur; cur = tmp; tmp = sw;			\
		}							\
		float *out = Rs + (int64_t)t * pe->rsize + j * bb;	\
		for (int64_t e = 0; e < bb; e++)			\
			out[e] = (float)cur[e];				\
	}								\
}
RAY_POWERS(ray_powers_f64, double, slot, expm_skew, expm_mul,
    const double *Xr = X)
RAY_POWERS(ray_powers_f32, float, fslot, expm_skew_f32, expm_mul_f32,
    float *Xr = fslot(pe, ws, S_X); for (int64_t e = 0; e < bb; e++)
	Xr[e] = (float)X[e])
#undef RAY_POWERS

/* One ray's rotations in one set: R(m p) = R(p)^m, block by block, in
 * double or (f32) in float. */
static void
ray_forward(const struct pe *pe, const double *G, const struct rays *ry, int r,
    const float *pos, float *Rs /* [T][rsize] */, double *ws, int f32)
{
	int N = pe->axes;
	double *X = slot(pe, ws, S_X), p[3];
	int base = ry->tok[ry->start[r]];

	for (int i = 0; i < N; i++)
		p[i] = pos[(int64_t)base * N + i];
	for (int j = 0; j < pe->nblock; j++) {
		position_generator(pe, G, j, p, X);
		if (f32)
			ray_powers_f32(pe, ry, r, j, X, Rs, ws);
		else
			ray_powers_f64(pe, ry, r, j, X, Rs, ws);
	}
}

void
pe_rotations(const struct pe *pe, struct pe_work *w, const float *params,
    int T, const float *pos, float *R)
{
	int b = pe->block, nb = pe->nblock, N = pe->axes;
	int64_t bb = (int64_t)b * b, per = N * nb * bb;
	int general = !pe->identity && pe->kind != PE_RIEMANN && b > 2;
	/* float pays where its vectors hold twice double's lanes: blocks of
	 * 16 and more (b = 8 runs 8-lane kernels either way, measured 10%
	 * slower in float) */
	int f32 = w->f32 && b % 16 == 0;
	int64_t items;

	if (comrope_closed(pe)) {
		comrope_rotations(pe, w, params, T, pos, R);
		return;
	}
	build_all(pe, w, params);
	if (general)
		rays_plan(w->rays, T, N, pos);
	items = (int64_t)pe->nset * (general ? w->rays->nray : T);
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int64_t it = 0; it < items; it++) {
		double *ws = w->scratch + omp_get_thread_num() * w->thread_doubles;
		if (general) {
			int set = (int)(it / w->rays->nray);
			ray_forward(pe, w->gen + set * per, w->rays, (int)(it % w->rays->nray), pos,
			    R + (int64_t)set * T * pe->rsize, ws, f32);
			continue;
		}
		int set = (int)(it / T), t = (int)(it % T);
		double p[3];
		float *out = R + it * pe->rsize;
		const double *G = w->gen + set * per;

		for (int i = 0; i < N; i++)
			p[i] = pos[(int64_t)t * N + i];
		if (pe->identity) {
			for (int j = 0; j < nb; j++)
				for (int64_t e = 0; e < bb; e++)
					out[j * bb + e] = e % (b + 1) == 0;
		} else if (pe->kind == PE_RIEMANN) {
			riemann_token(pe, params + set * pe->set_params, p, out);
		} else {		/* 2 x 2 blocks */
			for (int j = 0; j < nb; j++) {
				double u = 0;
				for (int i = 0; i < N; i++)
					u += p[i] * G[((int64_t)i * nb + j) * 4 + 1];
				double c = cos(u), s = sin(u);
				out[4 * j] = (float)c; out[4 * j + 1] = (float)s;
				out[4 * j + 2] = (float)-s; out[4 * j + 3] = (float)c;
			}
		}
	}
}

/* Backward of the pairwise methods for one set, tokens in order:
 * dgen[axes][npair] (rope) or dgen[npair + 1] (riemann). */
static void
pairs_backward(const struct pe *pe, const double *G, const float *par, int T,
    const float *pos, const float *dR, double *dg)
{
	int N = pe->axes, npair = pe->head_dim / 2;

	for (int t = 0; t < T; t++) {
		const float *d = dR + (int64_t)t * pe->rsize;
		double p[3], sigma = 0;
		for (int i = 0; i < N; i++) {
			p[i] = pos[(int64_t)t * N + i];
			sigma += p[i];
		}
		if (pe->kind == PE_RIEMANN) {
			double ls = riemann_log_s(pe, par[npair]);
			double c = sigma == 0 ? 1 : exp(0.5 * sigma * ls), dc = 0;
			for (int j = 0; j < npair; j++, d += 4) {
				int a = pe_pair_axis(pe, j);
				double phi = p[a] * par[j], dphi;
				if (pe->reflect) {
					double c2 = cos(2 * phi), s2 = sin(2 * phi);
					dc += c2 * d[0] + s2 * d[1] + s2 * d[2] - c2 * d[3];
					dphi = 2 * c * (-s2 * d[0] + c2 * d[1] + c2 * d[2] + s2 * d[3]);
				} else {
					double co = cos(phi), si = sin(phi);
					dc += co * d[0] + si * d[1] - si * d[2] + co * d[3];
					dphi = c * (-si * d[0] + co * d[1] - co * d[2] - si * d[3]);
				}
				dg[j] += p[a] * dphi;
			}
			/* dc/dw = c sigma/2 dlog(s)/dw, dlog(s)/dw = 1 - s */
			dg[npair] += dc * c * 0.5 * sigma * (1 - exp(ls));
			continue;
		}
		for (int j = 0; j < npair; j++, d += 4) {
			double u = 0;
			for (int i = 0; i < N; i++)
				u += p[i] * G[((int64_t)i * npair + j) * 4 + 1];
			double c = cos(u), s = sin(u);
			double du = -s * d[0] + c * d[1] - c * d[2] - s * d[3];
			for (int i = 0; i < N; i++)
				dg[(int64_t)i * npair + j] += p[i] * du;
		}
	}
}

static void
transpose(int b, const float *A, float *AT)
{
	for (int i = 0; i < b; i++)
		for (int j = 0; j < b; j++)
			AT[j * b + i] = A[i * b + j];
}

/* acc += the block dR of token t, block j. */
static void
add_block(const struct pe *pe, const float *dR, int t, int j, float *acc)
{
	int64_t bb = (int64_t)pe->block * pe->block;
	const float *d = dR + (int64_t)t * pe->rsize + j * bb;

	for (int64_t e = 0; e < bb; e++)
		acc[e] += d[e];
}

/*
 * Backward of block j of one set through expm, ray by ray in order, in
 * float: dg[axes][nblock][b(b-1)/2] for this j.  Along a ray B_k = R(k p)
 * = B_(k-1) P with P = R(p), so the adjoints run down it (Bbar_(k-1) =
 * Bbar_k P^T + dR of the token at k-1, Pbar += B_(k-1)^T Bbar_k) and one
 * adjoint Frechet derivative at the base finishes the ray.  The B_k are
 * the forward's R of the ray's tokens; a multiple with no token on it is
 * made by a product.
 */
static void
block_backward(const struct pe *pe, const double *G, int j, const struct rays *ry,
    const float *pos, const float *R, const float *dR, double *dg, double *ws)
{
	int b = pe->block, N = pe->axes, nb = pe->nblock;
	int64_t bb = (int64_t)b * b, k3 = tri(b);
	double *Xd = slot(pe, ws, 0), *acc[3];	/* acc[i] = sum over rays of p_i dX */
	float *X = fslot(pe, ws, S_X), *PT = fslot(pe, ws, S_PT);
	float *Bbar = fslot(pe, ws, S_BBAR), *Pbar = fslot(pe, ws, S_PBAR);
	float *tmp = fslot(pe, ws, S_TMP), *T1 = fslot(pe, ws, S_T1), *dX = fslot(pe, ws, S_DX);
	float *ews = fslot(pe, ws, S_END);
	const float *B[RAYS_MAXMULT + 1];	/* B[k] = R(k p), k < M */

	for (int i = 0; i < N; i++) {
		acc[i] = slot(pe, ws, 1 + i);
		memset(acc[i], 0, sizeof(double) * bb);
	}

	for (int r = 0; r < ry->nray; r++) {
		int first = ry->start[r], last = ry->start[r + 1] - 1, base = ry->tok[first];
		int M = ry->mult[ry->tok[last]];
		double p[3];

		for (int i = 0; i < N; i++)
			p[i] = pos[(int64_t)base * N + i];
		position_generator(pe, G, j, p, Xd);
		for (int64_t e = 0; e < bb; e++)
			X[e] = (float)Xd[e];
		memset(Pbar, 0, sizeof *Pbar * bb);
		if (M > 1) {
			const float *P = R + (int64_t)base * pe->rsize + j * bb;
			B[1] = P;
			for (int k = 2, q = first + 1; k < M; k++) {
				while (ry->mult[ry->tok[q]] < k)
					q++;
				if (ry->mult[ry->tok[q]] == k) {
					B[k] = R + (int64_t)ry->tok[q] * pe->rsize + j * bb;
				} else {
					float *o = fslot(pe, ws, S_POW + k - 2);
					expm_mul_f32(b, B[k - 1], P, o, 0);
					B[k] = o;
				}
			}
			transpose(b, P, PT);
			memset(Bbar, 0, sizeof *Bbar * bb);
			for (int k = M, q = last; k >= 1; k--) {
				for (; q >= first && ry->mult[ry->tok[q]] == k; q--)
					add_block(pe, dR, ry->tok[q], j, Bbar);
				if (k == 1)
					break;
				transpose(b, B[k - 1], T1);
				expm_mul_f32(b, T1, Bbar, Pbar, 1);
				expm_mul_f32(b, Bbar, PT, tmp, 0);
				float *sw = Bbar; Bbar = tmp; tmp = sw;
			}
			for (int64_t e = 0; e < bb; e++)
				Pbar[e] += Bbar[e];
		} else {
			for (int q = first; q <= last; q++)
				add_block(pe, dR, ry->tok[q], j, Pbar);
		}
		expm_skew_adjoint_f32(b, X, Pbar, dX, NULL, ews);
		for (int i = 0; i < N; i++)	/* whole rows: vectorized */
			for (int64_t e = 0; e < bb; e++)
				acc[i][e] += p[i] * dX[e];
	}
	/* the generators' upper entries: d/dU_rc of A = U - U^T */
	for (int i = 0; i < N; i++) {
		double *g = dg + ((int64_t)i * nb + j) * k3;
		for (int rr = 0, q = 0; rr < b; rr++)
			for (int c = rr + 1; c < b; c++, q++)
				g[q] += acc[i][rr * b + c] - acc[i][c * b + rr];
	}
}

/* dparams of one set from its generator gradient. */
static void
to_params(const struct pe *pe, const float *par, const double *dg, float *dpar)
{
	int N = pe->axes, nb = pe->nblock;
	int64_t k = tri(pe->block);

	switch (pe->kind) {
	case PE_LIERE:
	case PE_ROPE_MIXED:
	case PE_RIEMANN:
		for (int64_t e = 0; e < pe->set_params; e++)
			dpar[e] += (float)dg[e];
		break;
	case PE_COMROPE_AP:
		for (int j = 0; j < nb; j++)
			for (int64_t q = 0; q < k; q++)
				dpar[j * k + q] += (float)dg[((int64_t)(j % N) * nb + j) * k + q];
		break;
	case PE_COMROPE_LD:
		for (int j = 0; j < nb; j++)
			for (int i = 0; i < N; i++) {
				const double *g = dg + ((int64_t)i * nb + j) * k;
				double scale = par[nb * k + (int64_t)i * nb + j], ds = 0;
				for (int64_t q = 0; q < k; q++) {
					dpar[j * k + q] += (float)(scale * g[q]);
					ds += g[q] * par[j * k + q];
				}
				dpar[nb * k + (int64_t)i * nb + j] += (float)ds;
			}
		break;
	default:
		break;
	}
}

void
pe_rotations_backward(const struct pe *pe, struct pe_work *w,
    const float *params, int T, const float *pos, const float *R,
    const float *dR, float *dparams)
{
	int b = pe->block, nb = pe->nblock, N = pe->axes;
	int64_t per = (int64_t)N * nb * b * b, dper = dgen_per_set(pe);
	int pairwise = b == 2 || pe->kind == PE_RIEMANN;
	int64_t items = (int64_t)pe->nset * (pairwise ? 1 : nb);

	if (pe->identity || pe->nparam == 0)
		return;
	if (comrope_closed(pe)) {
		comrope_backward(pe, w, params, T, pos, R, dR, dparams);
		return;
	}
	build_all(pe, w, params);
	if (!pairwise)
		rays_plan(w->rays, T, N, pos);
	memset(w->dgen, 0, sizeof(double) * pe->nset * dper);
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int64_t it = 0; it < items; it++) {
		int set = (int)(pairwise ? it : it / nb);
		const float *Rs = R + (int64_t)set * T * pe->rsize;
		const float *dRs = dR + (int64_t)set * T * pe->rsize;
		double *ws = w->scratch + omp_get_thread_num() * w->thread_doubles;
		if (pairwise)
			pairs_backward(pe, w->gen + set * per, params + set * pe->set_params,
			    T, pos, dRs, w->dgen + set * dper);
		else
			block_backward(pe, w->gen + set * per, (int)(it % nb), w->rays, pos, Rs,
			    dRs, w->dgen + set * dper, ws);
	}
#pragma omp parallel for num_threads(w->nthread) schedule(static)
	for (int s = 0; s < pe->nset; s++)
		to_params(pe, params + s * pe->set_params, w->dgen + s * dper,
		    dparams + s * pe->set_params);
}
