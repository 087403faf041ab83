/*
 * pe_rot.c - rotations R(p) = exp(sum_i p_i A_i) for every generator set
 * and token, and the gradient of the parameters from dL/dR (see pe.h).
 *
 * 2 x 2 blocks take the closed form (cos, sin), and so do comrope-ap and
 * comrope-ld's blocks of any size (pe_scaled.c); other blocks go through
 * expm.c, one exponential per ray of tokens (rays.h): a token at m times
 * another's position is R^m of that one's.  The forward pass works in
 * double (R is exact to float rounding: rotgen, the tests of the
 * defining properties) or, with w->f32 (the engine) and blocks of 32, 48,
 * 64 ..., in float like float32 autograd, in half the time; it is parallel
 * over (set, ray).  With w->f32, blocks of 4, 8, 12 and 16 go through
 * expm_lanes.c, 16 rays' exponentials at once, parallel over (set,
 * block, window of rays).
 * The backward pass works in float (expm_f32.c, twice the lanes, or
 * expm_lanes.c; its gradients are within a few float ulps x 2^squarings
 * of the double ones, like any float32 autograd) and reads the powers
 * along each ray from the forward's R; it sums over tokens, so it is
 * parallel over (set, block) with the rays in an order fixed by the
 * positions inside, which makes it deterministic for any thread count.
 */
#include "arch.h"
ARCH_VECTORIZE
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "expm.h"
#include "expm_t18.h"
#include "pe.h"
#include "pe_impl.h"
#include "pe_method.h"
#include "skew.h"
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
enum { S_X, S_P, S_PT, S_BBAR, S_TMP, S_T1, S_DX, S_POW, S_END = S_POW + RAYS_MAXMULT };

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

/* Blocks whose exponentials run EXPM_LANES at a time (expm_lanes.c): 4,
 * 8, 12 and 16; up to 12 they fill at most half a vector an instruction
 * one block at a time, at 16 the lanes spend less on bookkeeping
 * (doc/performance.md).  Rays go through them in windows of WIN,
 * in order of norm, so that the lanes of a batch need like squarings.
 * The lanes' operands are made in their own layout, straight from the
 * positions and from dR, blocks go in and out of it by 16 x 16
 * transposes in registers, and the backward's sums over rays stay in it
 * until a block's last ray: with a rotation per token (per-record
 * positions) copying blocks one element at a time, in and out, took
 * longer than the exponentials. */
enum { LANE_BB = 16 * 16 };	/* elements of the largest such block */

static int
lanes(const struct pe *pe)
{
	return pe->block % 4 == 0 && pe->block * pe->block <= LANE_BB;
}

enum { WIN = 256 };

_Static_assert(EXPM_LANES == 16, "the lanes' positions are two 8-double vectors");

/* A thread's state for the lanes: their operands, rays' blocks, the
 * backward's sums and a window's order by norm. */
struct win {
	float	*xl, *gl, *ol;	/* [b][b][EXPM_LANES] */
	float	*ews;		/* expm_lanes_scratch(b) */
	float	*blk;		/* [EXPM_LANES][b][b]: rays' base exp (forward),
				 * dL/dP (backward) */
	double	*accl;		/* [axes][b][b][EXPM_LANES]: sum of p_i dX by lane */
	int	*order;		/* [WIN] */
};

static int64_t
win_doubles(const struct pe *pe)
{
	int64_t bb = (int64_t)pe->block * pe->block;
	if (!lanes(pe))
		return 0;
	return round8(pe->axes * bb * EXPM_LANES + (4 * bb * EXPM_LANES +
	    expm_lanes_scratch(pe->block) + WIN + 1) / 2);
}

/* A thread's lanes: the last win_doubles of its workspace ws. */
static struct win
window(const struct pe *pe, const struct pe_work *w, double *ws)
{
	int64_t bb = (int64_t)pe->block * pe->block;
	double *d = ws + w->thread_doubles - win_doubles(pe);
	struct win v = { .accl = d };
	float *f = (float *)(d + pe->axes * bb * EXPM_LANES);

	v.xl = f; v.gl = f + bb * EXPM_LANES; v.ol = f + 2 * bb * EXPM_LANES;
	v.ews = f + 3 * bb * EXPM_LANES;
	v.blk = v.ews + expm_lanes_scratch(pe->block);
	v.order = (int *)(v.blk + bb * EXPM_LANES);
	return v;
}

int
pe_work_init(struct pe_work *w, const struct pe *pe, int maxT)
{
	int b = pe->block;
	int64_t gen = (int64_t)pe->nset * pe->axes * pe->nblock * b * b;
	int64_t dgen = pe->nset * dgen_per_set(pe);

	memset(w, 0, sizeof *w);
	if (maxT < 1 || maxT > (1 << 24))
		return err_set(&w->err, "%d tokens: want 1 .. %d", maxT, 1 << 24);
	w->maxT = maxT;
	w->nthread = omp_get_max_threads();
	/* forward: S_END double slots and expm's scratch; backward: D_SLOTS
	 * double slots, then S_END float slots and expm_f32's scratch */
	int64_t fwd = S_END * round8((int64_t)b * b) + round8(expm_scratch(b));
	int64_t bwd = D_SLOTS * round8((int64_t)b * b) + (S_END * round16((int64_t)b * b) +
	    round16(expm_scratch_f32(b)) + 1) / 2;
	if (scaled_closed(pe) && scaled_scratch(b) > fwd)
		fwd = scaled_scratch(b);
	if (basis_doubles(pe) > fwd)
		fwd = basis_doubles(pe);
	w->thread_doubles = round8(fwd > bwd ? fwd : bwd) + win_doubles(pe);
	w->scratch = aligned_alloc(64, sizeof(double) * w->nthread * w->thread_doubles);
	w->gen = aligned_alloc(64, sizeof(double) * round8(gen + 1));
	w->dgen = aligned_alloc(64, sizeof(double) * round8(dgen + 1));
	int64_t off;
	w->tied = malloc(sizeof(float) * (pe->nset * pe_tied(pe, &off) + 1));
	w->rays = malloc(sizeof *w->rays);
	if (w->rays && rays_init(w->rays, maxT) == -1) {
		free(w->rays);
		w->rays = NULL;
	}
	if (!w->scratch || !w->gen || !w->dgen || !w->tied || !w->rays) {
		pe_work_free(w);
		return err_set(&w->err, "out of memory for the rotation workspace");
	}
	return 0;
}

void
pe_work_free(struct pe_work *w)
{
	free(w->scratch);
	free(w->gen);
	free(w->dgen);
	free(w->tied);
	if (w->rays)
		rays_free(w->rays);
	free(w->rays);
	w->scratch = w->gen = w->dgen = NULL;
	w->tied = NULL;
	w->rays = NULL;
}

void
pe_generators(const struct pe *pe, const float *p, double *G)
{
	int N = pe->axes, nb = pe->nblock, b = pe->block;
	int64_t bb = (int64_t)b * b;

	memset(G, 0, sizeof *G * N * nb * bb);
	for (int i = 0; i < N && pe->method->generator; i++)
		for (int j = 0; j < nb; j++)
			pe->method->generator(pe, p, i, j, G + ((int64_t)i * nb + j) * bb);
}

static void
build_all(const struct pe *pe, struct pe_work *w, const float *params)
{
	int64_t per = (int64_t)pe->axes * pe->nblock * pe->block * pe->block;

	if (pe->identity || pe->method->token)
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

/* Offset of token t's block j in a [T][rsize] table (R, dR). */
static int64_t
block_at(const struct pe *pe, int t, int j)
{
	return (int64_t)t * pe->rsize + (int64_t)j * pe->block * pe->block;
}

/* Ray r's base token: its first. */
static int
ray_base(const struct rays *ry, int r)
{
	return ry->tok[ry->start[r]];
}

/* R of block j for every token of ray r from P, the base's: P, then its
 * powers in token order (cur and tmp two blocks of scratch). */
#define RAY_WALK(name, REAL, MUL)					\
static void								\
name(const struct pe *pe, const struct rays *ry, int r, int j,		\
    const REAL *P, float *Rs, REAL *cur, REAL *tmp)			\
{									\
	int b = pe->block;						\
	int64_t bb = (int64_t)b * b;					\
									\
	memcpy(cur, P, sizeof *P * bb);					\
	for (int q = ry->start[r], k = 1; q < ry->start[r + 1]; q++) {	\
		int t = ry->tok[q];					\
		for (; k < ry->mult[t]; k++) {				\
			REAL *sw;					\
			MUL(b, cur, P, tmp, 0);				\
			sw = cur; cur = tmp; tmp = sw;			\
		}							\
		float *out = Rs + block_at(pe, t, j);			\
		for (int64_t e = 0; e < bb; e++)			\
			out[e] = (float)cur[e];				\
	}								\
}
RAY_WALK(walk_f64, double, expm_mul)
RAY_WALK(walk_f32, float, expm_mul_f32)
#undef RAY_WALK

/* R of block j for every token of ray r from X = the base's generator,
 * in double (f64) or in float (f32): the base's exponential, then the
 * walk along the ray, in slot's or fslot's layout of the workspace. */
#define RAY_POWERS(name, REAL, SLOT, EXPM, WALK, XR)			\
static void								\
name(const struct pe *pe, const struct rays *ry, int r, int j,		\
    const double *X, float *Rs, double *ws)				\
{									\
	REAL *P = SLOT(pe, ws, S_P);					\
									\
	XR;								\
	EXPM(pe->block, Xr, P, (REAL *)SLOT(pe, ws, S_END));		\
	WALK(pe, ry, r, j, P, Rs, SLOT(pe, ws, S_TMP), SLOT(pe, ws, S_T1)); \
}
RAY_POWERS(ray_powers_f64, double, slot, expm_skew, walk_f64,
    const double *Xr = X)
RAY_POWERS(ray_powers_f32, float, fslot, expm_skew_f32, walk_f32,
    float *Xr = fslot(pe, ws, S_X);
    for (int64_t e = 0; e < (int64_t)pe->block * pe->block; e++)
	Xr[e] = (float)X[e])
#undef RAY_POWERS

/* Prefetch block j of ray r's tokens in A[T][rsize] (rw 1: to be
 * written): with per-record positions every block comes from memory. */
static void
prefetch_ray(const struct pe *pe, const struct rays *ry, int r, int j,
    const float *A, int rw)
{
	int64_t bb = (int64_t)pe->block * pe->block;

	if (r >= ry->nray)
		return;
	for (int q = ry->start[r]; q < ry->start[r + 1]; q++)
		arch_prefetch_floats(A + block_at(pe, ry->tok[q], j), bb, rw);
}

enum { AHEAD = ARCH_AHEAD_RAYS };	/* rays between a ray and the one it prefetches */

/* Block j's Gram matrix gram[i][k] = <G_i, G_k>: ||sum_i p_i G_i||_F^2
 * is p^T gram p. */
static void
gram_of(const struct pe *pe, const double *G, int j, double gram[3][3])
{
	int N = pe->axes;
	int64_t bb = (int64_t)pe->block * pe->block;

	for (int i = 0; i < N; i++)
		for (int k = 0; k <= i; k++) {
			const double *gi = G + ((int64_t)i * pe->nblock + j) * bb;
			const double *gk = G + ((int64_t)k * pe->nblock + j) * bb;
			double s = 0;
			for (int64_t e = 0; e < bb; e++)
				s += gi[e] * gk[e];
			gram[i][k] = gram[k][i] = s;
		}
}

/* A ray's base position. */
static const float *
base_pos(const struct rays *ry, int r, int N, const float *pos)
{
	return pos + (int64_t)ray_base(ry, r) * N;
}

/* order[0 .. n) = the rays r0 .. r0 + n by the squarings their X would
 * need by Frobenius norm (>= the 2-norm), stable; NaN last. */
static void
by_norm(const struct pe *pe, double gram[3][3], const struct rays *ry,
    int r0, int n, const float *pos, int *order)
{
	int N = pe->axes;
	unsigned char key[WIN];
	int count[33] = { 0 };

	for (int k = 0; k < n; k++) {
		const float *p = base_pos(ry, r0 + k, N, pos);
		double f = 0;
		for (int i = 0; i < N; i++)
			for (int q = 0; q < N; q++)
				f += (double)p[i] * p[q] * gram[i][q];
		/* ceil(log2(||X||_F / theta)) to within one, from f's exponent */
		int e2 = 0;
		double s = f > 0 && isfinite(f) ?
		    (frexp(f, &e2), 0.5 * e2 - log2(EXPM_THETA_F32)) : 0;
		key[k] = isnan(f) ? 31 : s <= 0 ? 0 : s >= 30 ? 30 : (int)ceil(s);
		count[key[k] + 1]++;
	}
	for (int i = 0; i < 32; i++)
		count[i + 1] += count[i];
	for (int k = 0; k < n; k++)
		order[count[key[k]]++] = k;
}

/* The lanes' X = sum_i p_i G_i (block j) for rays r0 + order[0 .. m),
 * summed in double as position_generator does, lanes past m zero; pl
 * the lanes' p_i. */
static void
lanes_x(const struct pe *pe, const double *G, int j, const struct rays *ry,
    int r0, const int *order, int m, const float *pos, v8d pl[3][2],
    float *xl)
{
	int N = pe->axes;
	int64_t bb = (int64_t)pe->block * pe->block;
	const double *g[3];

	for (int i = 0; i < N; i++) {
		g[i] = G + ((int64_t)i * pe->nblock + j) * bb;
		for (int l = 0; l < EXPM_LANES; l++)
			pl[i][l / 8][l % 8] = l < m ?
			    base_pos(ry, r0 + order[l], N, pos)[i] : 0;
	}
	for (int64_t e = 0; e < bb; e++) {
		v8d lo = { 0 }, hi = { 0 };
		for (int i = 0; i < N; i++) {
			lo += pl[i][0] * g[i][e];
			hi += pl[i][1] * g[i][e];
		}
		*(v8 *)(xl + e * EXPM_LANES) = __builtin_convertvector(lo, v8);
		*(v8 *)(xl + e * EXPM_LANES + 8) = __builtin_convertvector(hi, v8);
	}
}

/* The lanes' operand xl[b][b][16] from the blocks src[16][b][b]. */
static void
lanes_in(int b, const float *const src[EXPM_LANES], float *xl)
{
	for (int e0 = 0; e0 < b * b; e0 += 16) {
		v16 v[16];
#pragma GCC unroll 16
		for (int l = 0; l < EXPM_LANES; l++)
			v[l] = *(const v16 *)(src[l] + e0);
		transpose16_regs(v);
#pragma GCC unroll 16
		for (int k = 0; k < 16; k++)
			*(v16 *)(xl + (e0 + k) * EXPM_LANES) = v[k];
	}
}

/* The blocks dst[0 .. m) from the lanes' result ol[b][b][16]. */
static void
lanes_out(int b, const float *ol, int m, float *const dst[EXPM_LANES])
{
	for (int e0 = 0; e0 < b * b; e0 += 16) {
		v16 v[16];
#pragma GCC unroll 16
		for (int k = 0; k < 16; k++)
			v[k] = *(const v16 *)(ol + (e0 + k) * EXPM_LANES);
		transpose16_regs(v);
#pragma GCC unroll 16
		for (int l = 0; l < EXPM_LANES; l++)
			if (l < m)
				*(v16 *)(dst[l] + e0) = v[l];
	}
}

/* Rays of one token, which are most rays with per-record positions. */
static int
lone(const struct rays *ry, int r)
{
	return ry->start[r + 1] - ry->start[r] == 1;
}

/* The batch of up to 16 rays r0 + order[g ..] of nr: their X in the
 * lanes (xl, and their positions in pl), and block j of A[T][rsize] for
 * the next batch's rays prefetched (rw 1: to be written).  Returns the
 * batch's size. */
static int
lanes_batch(const struct pe *pe, const double *G, int j, const struct rays *ry,
    int r0, const int *order, int g, int nr, const float *pos,
    const float *A, int rw, v8d pl[3][2], float *xl)
{
	int m = nr - g < EXPM_LANES ? nr - g : EXPM_LANES;

	for (int l = g + m; l < nr && l < g + m + EXPM_LANES; l++)
		prefetch_ray(pe, ry, r0 + order[l], j, A, rw);
	lanes_x(pe, G, j, ry, r0, order + g, m, pos, pl, xl);
	return m;
}

/* Block j of one set for the rays of window r0 / WIN, in float through
 * the lanes: the bases' exponentials 16 at a time, then the walks along
 * the rays. */
static void
lanes_forward(const struct pe *pe, const struct pe_work *w, const double *G, int j,
    int r0, const float *pos, float *Rs /* [T][rsize] */, double *ws)
{
	const struct rays *ry = w->rays;
	struct win wn = window(pe, w, ws);
	int b = pe->block, nr = ry->nray - r0 < WIN ? ry->nray - r0 : WIN;
	int64_t bb = (int64_t)b * b;
	double gram[3][3];
	v8d pl[3][2];

	gram_of(pe, G, j, gram);
	by_norm(pe, gram, ry, r0, nr, pos, wn.order);
	for (int g = 0; g < nr; g += EXPM_LANES) {
		int m = lanes_batch(pe, G, j, ry, r0, wn.order, g, nr, pos, Rs, 1,
		    pl, wn.xl);
		expm_skew_lanes(b, wn.xl, wn.ol, wn.ews);
		float *dst[EXPM_LANES];	/* a lone token's R, or a walk's start */
		for (int l = 0; l < m; l++) {
			int r = r0 + wn.order[g + l];
			dst[l] = lone(ry, r) ? Rs + block_at(pe, ray_base(ry, r), j) :
			    wn.blk + l * bb;
		}
		lanes_out(b, wn.ol, m, dst);
		for (int l = 0; l < m; l++) {
			int r = r0 + wn.order[g + l];
			if (!lone(ry, r))
				walk_f32(pe, ry, r, j, dst[l], Rs, fslot(pe, ws, S_TMP),
				    fslot(pe, ws, S_T1));
		}
	}
}

/* One ray's rotations in one set: R(m p) = R(p)^m, block by block, in
 * double or (f32) in float. */
static void
ray_forward(const struct pe *pe, const double *G, const struct rays *ry, int r,
    const float *pos, float *Rs /* [T][rsize] */, double *ws, int f32)
{
	int N = pe->axes;
	double *X = slot(pe, ws, S_X), p[3];
	const float *pb = base_pos(ry, r, N, pos);

	for (int i = 0; i < N; i++)
		p[i] = pb[i];
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
	int general = !pe->identity && !pe->method->token && b > 2;
	/* float pays where its vectors hold twice double's lanes: blocks of
	 * 16 and more (b = 8 runs 8-lane kernels either way: slower in
	 * float), and blocks that go through the lanes */
	int f32 = w->f32 && b % 16 == 0, bylanes = general && w->f32 && lanes(pe);
	int64_t items;

	if (scaled_closed(pe)) {
		scaled_rotations(pe, w, params, T, pos, R);
		return;
	}
	build_all(pe, w, params);
	if (general)
		rays_plan(w->rays, T, N, pos);
	/* the lanes: an item a window of rays of one block and set */
	int nwin = general ? (w->rays->nray + WIN - 1) / WIN : 0;
	items = (int64_t)pe->nset * (bylanes ? nb * nwin : general ? w->rays->nray : T);
#pragma omp parallel for num_threads(w->nthread) schedule(dynamic, 1)
	for (int64_t it = 0; it < items; it++) {
		double *ws = w->scratch + omp_get_thread_num() * w->thread_doubles;
		if (bylanes) {
			int set = (int)(it / (nb * nwin)), j = (int)(it / nwin % nb);
			lanes_forward(pe, w, w->gen + set * per, j, (int)(it % nwin) * WIN,
			    pos, R + (int64_t)set * T * pe->rsize, ws);
			continue;
		}
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
		} else if (pe->method->token) {
			pe->method->token(pe, params + set * pe->set_params, p, out);
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
 * dgen[axes][npair] (rope), or the token_backward of an encoding whose R
 * is a closed form per token (riemann: dgen[npair + 1]). */
static void
pairs_backward(const struct pe *pe, const double *G, const float *par, int T,
    const float *pos, const float *dR, double *dg)
{
	int N = pe->axes, npair = pe->head_dim / 2;

	for (int t = 0; t < T; t++) {
		const float *d = dR + (int64_t)t * pe->rsize;
		double p[3];
		for (int i = 0; i < N; i++)
			p[i] = pos[(int64_t)t * N + i];
		if (pe->method->token_backward) {
			pe->method->token_backward(pe, par, p, d, dg);
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
	const float *d = dR + block_at(pe, t, j);

	for (int64_t e = 0; e < bb; e++)
		acc[e] += d[e];
}

/* dL/dP of ray r's base into Pbar: along the ray B_k = R(k p) = B_(k-1) P
 * with P = R(p), so the adjoints run down it (Bbar_(k-1) = Bbar_k P^T +
 * dR of the token at k-1, Pbar += B_(k-1)^T Bbar_k).  The B_k are the
 * forward's R of the ray's tokens; a multiple with no token on it is made
 * by a product. */
static void
ray_adjoint(const struct pe *pe, int j, const struct rays *ry, int r,
    const float *R, const float *dR, float *Pbar, double *ws)
{
	int b = pe->block, first = ry->start[r], last = ry->start[r + 1] - 1;
	int64_t bb = (int64_t)b * b;
	int M = ry->mult[ry->tok[last]], base = ray_base(ry, r);
	float *PT = fslot(pe, ws, S_PT), *Bbar = fslot(pe, ws, S_BBAR);
	float *tmp = fslot(pe, ws, S_TMP), *T1 = fslot(pe, ws, S_T1);
	const float *B[RAYS_MAXMULT + 1];	/* B[k] = R(k p), k < M */

	memset(Pbar, 0, sizeof *Pbar * bb);
	if (M == 1) {
		for (int q = first; q <= last; q++)
			add_block(pe, dR, ry->tok[q], j, Pbar);
		return;
	}
	const float *P = R + block_at(pe, base, j);
	B[1] = P;
	for (int k = 2, q = first + 1; k < M; k++) {
		while (ry->mult[ry->tok[q]] < k)
			q++;
		if (ry->mult[ry->tok[q]] == k) {
			B[k] = R + block_at(pe, ry->tok[q], j);
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
}

/* Back through block j's exponentials in the lanes, window by window of
 * rays in order of norm: acc[i] = sum over rays of p_i dX. */
static void
lanes_backward(const struct pe *pe, const struct pe_work *w, const double *G,
    int j, const float *pos, const float *R, const float *dR, double *acc[3],
    double *ws)
{
	const struct rays *ry = w->rays;
	struct win wn = window(pe, w, ws);
	int b = pe->block, N = pe->axes;
	int64_t bb = (int64_t)b * b;
	double gram[3][3];
	v8d pl[3][2], *accl = (v8d *)wn.accl;	/* [N][bb][2] */
	static const float zero[LANE_BB];	/* the lanes past a batch */

	gram_of(pe, G, j, gram);
	memset(wn.accl, 0, sizeof(double) * N * bb * EXPM_LANES);
	for (int r0 = 0; r0 < ry->nray; r0 += WIN) {
		int nr = ry->nray - r0 < WIN ? ry->nray - r0 : WIN;
		by_norm(pe, gram, ry, r0, nr, pos, wn.order);
		for (int g = 0; g < nr; g += EXPM_LANES) {
			int m = lanes_batch(pe, G, j, ry, r0, wn.order, g, nr, pos,
			    dR, 0, pl, wn.xl);
			const float *pbar[EXPM_LANES];	/* dL/dP of each base */
			for (int l = 0; l < EXPM_LANES; l++) {
				if (l >= m) {
					pbar[l] = zero;
					continue;
				}
				int r = r0 + wn.order[g + l];
				if (lone(ry, r)) {
					pbar[l] = dR + block_at(pe, ray_base(ry, r), j);
				} else {
					ray_adjoint(pe, j, ry, r, R, dR, wn.blk + l * bb, ws);
					pbar[l] = wn.blk + l * bb;
				}
			}
			lanes_in(b, pbar, wn.gl);
			expm_skew_adjoint_lanes(b, wn.xl, wn.gl, wn.ol, wn.ews);
			for (int64_t e = 0; e < bb; e++) {
				v8d lo = __builtin_convertvector(*(v8 *)(wn.ol + e * EXPM_LANES), v8d);
				v8d hi = __builtin_convertvector(*(v8 *)(wn.ol + e * EXPM_LANES + 8), v8d);
				for (int i = 0; i < N; i++) {
					accl[(i * bb + e) * 2] += pl[i][0] * lo;
					accl[(i * bb + e) * 2 + 1] += pl[i][1] * hi;
				}
			}
		}
	}
	for (int i = 0; i < N; i++)	/* the lanes' sums, in lane order */
		for (int64_t e = 0; e < bb; e++) {
			const double *a = wn.accl + (i * bb + e) * EXPM_LANES;
			double s = 0;
			for (int l = 0; l < EXPM_LANES; l++)
				s += a[l];
			acc[i][e] = s;
		}
}

/* Back through block j's exponentials one ray at a time (blocks that do
 * not take the lanes), rays in order: acc[i] = sum of p_i dX. */
static void
rays_backward(const struct pe *pe, const struct pe_work *w, const double *G,
    int j, const float *pos, const float *R, const float *dR, double *acc[3],
    double *ws)
{
	const struct rays *ry = w->rays;
	int b = pe->block, N = pe->axes;
	int64_t bb = (int64_t)b * b;
	double *Xd = slot(pe, ws, 0), p[3];
	float *X = fslot(pe, ws, S_X), *Pbar = fslot(pe, ws, S_P);
	float *dX = fslot(pe, ws, S_DX);

	for (int i = 0; i < N; i++)
		memset(acc[i], 0, sizeof(double) * bb);
	for (int r = 0; r < ry->nray; r++) {
		prefetch_ray(pe, ry, r + AHEAD, j, dR, 0);
		if (r + AHEAD < ry->nray && !lone(ry, r + AHEAD))	/* R: read along rays */
			prefetch_ray(pe, ry, r + AHEAD, j, R, 0);
		const float *pb = base_pos(ry, r, N, pos);
		for (int i = 0; i < N; i++)
			p[i] = pb[i];
		position_generator(pe, G, j, p, Xd);
		for (int64_t e = 0; e < bb; e++)
			X[e] = (float)Xd[e];
		ray_adjoint(pe, j, ry, r, R, dR, Pbar, ws);
		expm_skew_adjoint_f32(b, X, Pbar, dX, NULL, fslot(pe, ws, S_END));
		for (int i = 0; i < N; i++)	/* whole rows: vectorized */
			for (int64_t e = 0; e < bb; e++)
				acc[i][e] += p[i] * dX[e];
	}
}

/*
 * Backward of block j of one set through expm, in float:
 * dg[axes][nblock][b(b-1)/2] for this j.  Each ray's dL/dP at its base
 * (ray_adjoint), then one adjoint Frechet derivative per ray (through
 * the lanes, 16 at a time, in order of norm, or one by one), summed
 * over the rays in an order fixed by the positions alone.
 */
static void
block_backward(const struct pe *pe, const struct pe_work *w, const double *G, int j,
    const float *pos, const float *R, const float *dR, double *dg, double *ws)
{
	int b = pe->block, N = pe->axes, nb = pe->nblock;
	int64_t k3 = tri(b);
	double *acc[3];	/* acc[i] = sum over rays of p_i dX */

	for (int i = 0; i < N; i++)
		acc[i] = slot(pe, ws, 1 + i);
	if (lanes(pe))
		lanes_backward(pe, w, G, j, pos, R, dR, acc, ws);
	else
		rays_backward(pe, w, G, j, pos, R, dR, acc, ws);
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
	if (pe->method->backward) {
		pe->method->backward(pe, par, dg, dpar);
		return;
	}
	for (int64_t e = 0; e < pe->set_params; e++)
		dpar[e] += (float)dg[e];
}

/* Tied parameters (pe_tied): before the backward, their gradient so far
 * kept aside and zeroed, so that it accumulates this call's alone; after,
 * every copy gets what it had plus the sum of its group's, in set order. */
static void
tie_begin(const struct pe *pe, struct pe_work *w, float *dparams)
{
	int64_t off, n = pe_tied(pe, &off);

	for (int s = 0; s < pe->nset && n > 0; s++) {
		float *d = dparams + s * pe->set_params + off;
		memcpy(w->tied + s * n, d, sizeof(float) * n);
		memset(d, 0, sizeof(float) * n);
	}
}

static void
tie_end(const struct pe *pe, struct pe_work *w, float *dparams)
{
	int64_t off, n = pe_tied(pe, &off);

	for (int s = 0; s < pe->nset && n > 0; s++) {
		if (pe_tie_first(pe, s) != s)
			continue;
		for (int64_t e = 0; e < n; e++) {
			double sum = 0;
			for (int m = s; m < pe->nset; m++)
				if (pe_tie_first(pe, m) == s)
					sum += dparams[m * pe->set_params + off + e];
			for (int m = s; m < pe->nset; m++)
				if (pe_tie_first(pe, m) == s)
					dparams[m * pe->set_params + off + e] =
					    w->tied[m * n + e] + (float)sum;
		}
	}
}

static void
backward(const struct pe *pe, struct pe_work *w, const float *params, int T,
    const float *pos, const float *R, const float *dR, float *dparams)
{
	int b = pe->block, nb = pe->nblock, N = pe->axes;
	int64_t per = (int64_t)N * nb * b * b, dper = dgen_per_set(pe);
	int pairwise = b == 2 || pe->method->token;
	int64_t items = (int64_t)pe->nset * (pairwise ? 1 : nb);

	if (scaled_closed(pe)) {
		scaled_backward(pe, w, params, T, pos, R, dR, dparams);
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
			block_backward(pe, w, w->gen + set * per, (int)(it % nb), pos, Rs,
			    dRs, w->dgen + set * dper, ws);
	}
#pragma omp parallel for num_threads(w->nthread) schedule(static)
	for (int s = 0; s < pe->nset; s++)
		to_params(pe, params + s * pe->set_params, w->dgen + s * dper,
		    dparams + s * pe->set_params);
}

void
pe_rotations_backward(const struct pe *pe, struct pe_work *w,
    const float *params, int T, const float *pos, const float *R,
    const float *dR, float *dparams)
{
	if (pe->identity || pe->nparam == 0)
		return;
	tie_begin(pe, w, dparams);
	backward(pe, w, params, T, pos, R, dR, dparams);
	tie_end(pe, w, dparams);
}
