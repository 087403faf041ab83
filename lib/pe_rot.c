/*
 * pe_rot.c - rotations R(p) = exp(sum_i p_i A_i) for every generator set
 * and token, and the gradient of the parameters from dL/dR (see pe.h).
 *
 * 2 x 2 blocks take the closed form (cos, sin); larger blocks go through
 * expm.c in double.  The forward pass is parallel over (set, token); the
 * backward pass sums over tokens, so it is parallel over (set, block) with
 * the tokens in order inside, which makes it deterministic for any thread
 * count.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expm.h"
#include "pe.h"

static int64_t
round8(int64_t n)
{
	return (n + 7) / 8 * 8;
}

/* Upper-triangle entries of a b x b block: b(b-1)/2. */
static int64_t
tri(int b)
{
	return (int64_t)b * (b - 1) / 2;
}

/* Doubles of dgen per set: the generator gradient, or riemann's angles. */
static int64_t
dgen_per_set(const struct pe *pe)
{
	int64_t n = (int64_t)pe->axes * pe->nblock * tri(pe->block);
	return n > pe->set_params ? n : pe->set_params;
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
	w->thread_doubles = round8(expm_scratch(b)) + 3 * round8((int64_t)b * b);
	w->scratch = aligned_alloc(64, sizeof(double) * w->nthread * w->thread_doubles);
	w->gen = aligned_alloc(64, sizeof(double) * round8(gen + 1));
	w->dgen = aligned_alloc(64, sizeof(double) * round8(dgen + 1));
	if (!w->scratch || !w->gen || !w->dgen) {
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
	w->scratch = w->gen = w->dgen = NULL;
}

/* G = s (U - U^T) for upper entries U[b(b-1)/2]. */
static void
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

	for (int64_t e = 0; e < bb; e++) {
		double v = 0;
		for (int i = 0; i < pe->axes; i++)
			v += p[i] * G[((int64_t)i * pe->nblock + j) * bb + e];
		X[e] = v;
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
	double c = exp(0.5 * sigma * riemann_log_s(pe, par[npair]));
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

void
pe_rotations(const struct pe *pe, struct pe_work *w, const float *params,
    int T, const float *pos, float *R)
{
	int b = pe->block, nb = pe->nblock, N = pe->axes;
	int64_t bb = (int64_t)b * b, per = N * nb * bb, items = (int64_t)pe->nset * T;

	build_all(pe, w, params);
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 4)
	for (int64_t it = 0; it < items; it++) {
		int set = (int)(it / T), t = (int)(it % T);
		double *ws = w->scratch + omp_get_thread_num() * w->thread_doubles;
		double *X = ws, *Rd = ws + round8(bb), *ews = ws + 3 * round8(bb);
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
		} else if (b == 2) {
			for (int j = 0; j < nb; j++) {
				double u = 0;
				for (int i = 0; i < N; i++)
					u += p[i] * G[((int64_t)i * nb + j) * 4 + 1];
				double c = cos(u), s = sin(u);
				out[4 * j] = (float)c; out[4 * j + 1] = (float)s;
				out[4 * j + 2] = (float)-s; out[4 * j + 3] = (float)c;
			}
		} else {
			for (int j = 0; j < nb; j++) {
				position_generator(pe, G, j, p, X);
				expm_skew(b, X, Rd, ews);
				for (int64_t e = 0; e < bb; e++)
					out[j * bb + e] = (float)Rd[e];
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
			double c = exp(0.5 * sigma * ls), dc = 0;
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

/* Backward of block j of one set through expm, tokens in order:
 * dg[axes][nblock][b(b-1)/2] for this j. */
static void
block_backward(const struct pe *pe, const double *G, int j, int T,
    const float *pos, const float *dR, double *dg, double *ws)
{
	int b = pe->block, N = pe->axes, nb = pe->nblock;
	int64_t bb = (int64_t)b * b, k = tri(b);
	double *X = ws, *Gd = ws + round8(bb), *dX = ws + 2 * round8(bb);
	double *ews = ws + 3 * round8(bb);

	for (int t = 0; t < T; t++) {
		const float *d = dR + (int64_t)t * pe->rsize + j * bb;
		double p[3];
		for (int i = 0; i < N; i++)
			p[i] = pos[(int64_t)t * N + i];
		position_generator(pe, G, j, p, X);
		for (int64_t e = 0; e < bb; e++)
			Gd[e] = d[e];
		expm_skew_adjoint(b, X, Gd, dX, NULL, ews);
		int64_t q = 0;
		for (int r = 0; r < b; r++)
			for (int c = r + 1; c < b; c++, q++) {
				double g = dX[r * b + c] - dX[c * b + r];
				for (int i = 0; i < N; i++)
					dg[((int64_t)i * nb + j) * k + q] += p[i] * g;
			}
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
    const float *params, int T, const float *pos, const float *dR,
    float *dparams)
{
	int b = pe->block, nb = pe->nblock, N = pe->axes;
	int64_t per = (int64_t)N * nb * b * b, dper = dgen_per_set(pe);
	int pairwise = b == 2 || pe->kind == PE_RIEMANN;
	int64_t items = (int64_t)pe->nset * (pairwise ? 1 : nb);

	if (pe->identity || pe->nparam == 0)
		return;
	build_all(pe, w, params);
	memset(w->dgen, 0, sizeof(double) * pe->nset * dper);
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int64_t it = 0; it < items; it++) {
		int set = (int)(pairwise ? it : it / nb);
		const float *dRs = dR + (int64_t)set * T * pe->rsize;
		double *ws = w->scratch + omp_get_thread_num() * w->thread_doubles;
		if (pairwise)
			pairs_backward(pe, w->gen + set * per, params + set * pe->set_params,
			    T, pos, dRs, w->dgen + set * dper);
		else
			block_backward(pe, w->gen + set * per, (int)(it % nb), T, pos, dRs,
			    w->dgen + set * dper, ws);
	}
#pragma omp parallel for num_threads(w->nthread) schedule(static)
	for (int s = 0; s < pe->nset; s++)
		to_params(pe, params + s * pe->set_params, w->dgen + s * dper,
		    dparams + s * pe->set_params);
}
