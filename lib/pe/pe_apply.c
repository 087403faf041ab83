/*
 * pe_apply.c - rotate query/key rows by their tokens' block-diagonal R,
 * and the backward pass (see pe.h).  Serial: the engine calls these from
 * its own parallel loops over images and heads.
 *
 * One image's rows read each R once, so a lone image is bound by memory
 * (a 64 x 64 block is 16 KB per token); a batch of images applies each
 * block to every image while it sits in L1.  Blocks of 8, 16, 32 and 64
 * run in register kernels (GCC vector types, one 8- or 16-float vector
 * per 8 or 16 columns): a tile of images (6 to 16) is packed side by side
 * and its outputs stay in registers, so each row of R loaded serves the
 * whole tile and the FMAs of different images overlap; the backward pass
 * keeps a few rows of dR in registers while the tile's images stream by.
 * Blocks of 2 take whole rows of 16-float vectors (pairs_fwd); other
 * widths plain loops.
 *
 * The images of a batch are far apart (the engine's records are ~150 KB
 * apart), which hardware prefetch cannot follow and which leaves the
 * kernels waiting on memory, so they prefetch a later tile's rows as
 * they go, and the next token's R (and dR) over a token (struct ahead;
 * with few images per token, as in bench_expm, R and dR are most of the
 * memory traffic).
 *
 * The rotated rows (y forward, dx backward) are read again only by the
 * next stage.  When the rows of a call lie across more than twice a
 * core's L2 cache, they have left it by then, so where they are whole
 * 64-byte lines they are written with streaming stores: an ordinary store
 * first reads its line from memory.  (Blocks of 8 write half lines, which
 * streaming stores turn into slow partial writes to memory; their tiles
 * gather whole rows in L1 first, for heads up to STAGE.)  Below twice L2
 * what the rotary would save the next stages would lose, reading the
 * rows back from memory (doc/performance.md).
 *
 * Sums run in one order whatever the tiling: y[c] over k in order, and
 * dR[t] over the images in order (each element's partial sum is stored
 * and reloaded exactly between groups of images).
 */
#include "arch.h"
ARCH_CONTRACT
ARCH_VECTORIZE
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pe.h"
#include "pe_impl.h"

#define KMAX	64	/* widest block of the register kernels */
#define QTMAX	ARCH_L1_FLOATS	/* floats of transposed R held at a time */
#define STAGE	128	/* widest head whose rows blocks of 8 gather to stream */

#define LD(p)		(*(const v16 *)(p))
#define ST(p, v)	(*(v16 *)(p) = (v))
#define LD8(p)		(*(const v8 *)(p))
#define ST8(p, v)	(*(v8 *)(p) = (v))

/*
 * Prefetch.  The kernels call ahead_step often (per k, per image); every
 * so many calls it fetches a line of each array of the rows that a tile
 * of images ARCH_AHEAD_TILES later will read or write, spread evenly over the
 * calls that the current tile makes: a burst of fetches would wait on
 * the core's few line fill buffers, stalling the arithmetic, and then
 * leave memory idle for the rest of the tile.
 */
struct ahead {
	const float *p[3];	/* the arrays' rows: p + t ld + i s */
	int64_t	 s[3];
	int	 ld[3];
	int	 w[3];		/* the array will be written */
	int	 na;		/* arrays */
	int	 nimg, T, lines;	/* images, tokens, lines per row */
	int	 calls;		/* ahead_step calls a tile makes */
	int64_t	 o[3];		/* walk: rows of image i at p + o */
	int	 n, img, line;	/* images to walk, where it is */
	int	 acc;		/* calls * lines fetched - n * lines * calls made */
	/* and, over the calls of a token, the next token's R and dR */
	const float *r;		/* NULL: none */
	float	*dr;		/* NULL: none */
	int	 rcalls;	/* ahead_step calls a token makes */
	int	 rlines, rline, racc;
};

/* Start a over the rows of images i .. i+n-1 of token t (running on into
 * token t+1's first ones, none after the last token). */
static inline __attribute__((always_inline)) void
ahead_at(struct ahead *a, int t, int i, int n)
{
	t += i / a->nimg;
	i %= a->nimg;
	a->n = t < a->T ? (a->nimg - i < n ? a->nimg - i : n) : 0;
	a->img = a->line = a->acc = 0;
#pragma GCC unroll 3
	for (int j = 0; j < a->na; j++)
		a->o[j] = (int64_t)t * a->ld[j] + i * a->s[j];
}

/* Start a over the rsize floats of r and dr (either may be NULL). */
static inline __attribute__((always_inline)) void
ahead_token(struct ahead *a, const float *r, float *dr, int64_t rsize)
{
	a->r = r;
	a->dr = dr;
	a->rlines = r || dr ? (int)((rsize + 15) / 16) : 0;
	a->rline = a->racc = 0;
}

static inline __attribute__((always_inline)) void
ahead_step(struct ahead *a)
{
	if (a->rline < a->rlines && (a->racc += a->rlines) >= a->rcalls) {
		a->racc -= a->rcalls;
		if (a->r)
			arch_prefetch(a->r + a->rline * 16, 0);
		if (a->dr)
			arch_prefetch(a->dr + a->rline * 16, 1);
		a->rline++;
	}
	if (a->img >= a->n || (a->acc += a->n * a->lines) < a->calls)
		return;
	a->acc -= a->calls;
#pragma GCC unroll 3
	for (int j = 0; j < a->na; j++) {
		const float *p = a->p[j] + a->o[j] + a->img * a->s[j] + a->line * 16;
		if (a->w[j])
			arch_prefetch(p, 1);
		else
			arch_prefetch(p, 0);
	}
	if (++a->line == a->lines) {
		a->line = 0;
		a->img++;
	}
}

/* Images per tile of the 16-column kernels, V vectors wide: about 24
 * accumulators, the most arch.h's registers leave room for. */
#define TILE(V)	((V) == 1 ? 16 : (V) == 2 ? 12 : 6)
ARCH_TILE_FITS(TILE(1) * 1 + 1, "pe_apply.c's tiles of 1 vector");	/* + the row u */
ARCH_TILE_FITS(TILE(2) * 2 + 2, "pe_apply.c's tiles of 2 vectors");
ARCH_TILE_FITS(TILE(4) * 4 + 4, "pe_apply.c's tiles of 4 vectors");

/* acc[i][v] += s[i ss] u[v] for the i < n rows of a register tile of
 * V-vector rows: a rank-1 update, what both directions are made of. */
static inline __attribute__((always_inline)) void
rank1(int V, int n, v16 acc[][4], const float *s, int ss, const v16 *u)
{
#pragma GCC unroll 16
	for (int i = 0; i < n; i++) {
		float c = s[i * ss];
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			acc[i][v] += c * u[v];
	}
}

/* Rows i < n of a register tile to p + i ps (st = 1) or from there. */
static inline __attribute__((always_inline)) void
move_tile(int V, int n, v16 acc[][4], float *p, int64_t ps, int st)
{
#pragma GCC unroll 16
	for (int i = 0; i < n; i++)
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			if (st)
				ST(p + i * ps + 16 * v, acc[i][v]);
			else
				acc[i][v] = LD(p + i * ps + 16 * v);
}

/* *p = u, by a streaming store with nt (p 64-byte aligned; the caller
 * fences). */
static inline __attribute__((always_inline)) void
put(float *p, v16 u, int nt)
{
	if (ARCH_STREAMS && nt)
		arch_stream(p, u);
	else
		ST(p, u);
}

/* Rows r < m of w floats (whole vectors) from src (row stride w) to
 * dst + r ds by streaming stores: blocks of 8 write half lines, so their
 * kernels gather whole rows in L1 first. */
static void
stream_rows(int m, int w, const float *src, float *dst, int64_t ds)
{
	for (int r = 0; r < m; r++)
		for (int v = 0; v < w; v += 16)
			put(dst + r * ds + v, LD(src + r * w + v), 1);
}

/* Write the rotated rows at y + t ldy + i ys, t < T, i < nimg, by
 * streaming stores: a kernel of whole lines takes pe's blocks (vectors
 * of 16; blocks of 8 gather rows of up to STAGE floats, which fit one
 * pass of fwd_tiles over QTMAX floats of R), the rows are whole aligned
 * lines, and they span more than twice a core's L2. */
static int
streamed(const struct pe *pe, const float *y, int64_t ys, int ldy, int nimg,
    int T)
{
	static _Atomic int64_t l2;	/* bytes, asked once */
	int b = pe->block, hd = pe->head_dim;
	int kernel = !pe->identity && hd % 16 == 0 &&
	    (b == 2 || b == 16 || b == 32 || b == 64 || (b == 8 && hd <= STAGE));

	if (!ARCH_STREAMS || !kernel || (uintptr_t)y % 64 || ys % 16 || ldy % 16)
		return 0;
	int64_t c = atomic_load_explicit(&l2, memory_order_relaxed);
	if (c == 0) {
		c = sysconf(_SC_LEVEL2_CACHE_SIZE);
		c = c > 0 ? c : 2 << 20;
		atomic_store_explicit(&l2, c, memory_order_relaxed);
	}
	return (int64_t)sizeof(float) * ((nimg - 1) * ys + (int64_t)T * ldy) > 2 * c;
}

/* out_i = M^T in_i for n images (n <= TILE(V)), M[B][B] row-major,
 * B = 16 V, in[n][B]: each row of M loaded once serves the n images;
 * nt: out by streaming stores. */
static inline __attribute__((always_inline)) void
mtv_tile(int V, int n, const float *M, const float *in, float *out, int64_t os,
    struct ahead *a, int nt)
{
	const int B = 16 * V;
	v16 acc[16][4] = { 0 };

	for (int k = 0; k < B; k++) {
		ahead_step(a);
		v16 m[4];
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			m[v] = LD(M + k * B + 16 * v);
		rank1(V, n, acc, in + k, B, m);
	}
#pragma GCC unroll 16
	for (int i = 0; i < n; i++)
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			put(out + i * os + 16 * v, acc[i][v], nt);
}

/* mtv_tile for any m images: full tiles, then tiles of 8, 4, 2, 1 (sizes
 * fixed at compile time keep the accumulators in registers). */
static inline __attribute__((always_inline)) void
mtv(int V, int m, const float *M, const float *in, float *out, int64_t os,
    struct ahead *a, int nt)
{
	const int B = 16 * V, n = TILE(V);

	for (; m >= n; m -= n, in += n * B, out += n * os)
		mtv_tile(V, n, M, in, out, os, a, nt);
	for (int r = 8; r; r /= 2)
		if (r < n && m & r) {
			mtv_tile(V, r, M, in, out, os, a, nt);
			in += r * B;
			out += r * os;
		}
}

/* G[RT][B] += sum_i dy_i[0 .. RT) x_i^T for n images, x[n][B] and rows of
 * dy B floats apart: RT rows of a block's gradient (row stride B = 16 V)
 * stay in registers.  Each element sums the images in order. */
static inline __attribute__((always_inline)) void
outer_tile(int V, int RT, int n, const float *x, const float *dy, float *G,
    struct ahead *a)
{
	const int B = 16 * V;
	v16 g[16][4];

	move_tile(V, RT, g, G, B, 0);
	for (int i = 0; i < n; i++) {
		v16 xv[4];
		ahead_step(a);
#pragma GCC unroll 4
		for (int v = 0; v < V; v++)
			xv[v] = LD(x + i * B + 16 * v);
		rank1(V, RT, g, dy + i * B, 1, xv);
	}
	move_tile(V, RT, g, G, B, 1);
}

/* The same for 8-wide blocks (8-float vectors): out_i = M^T in_i for
 * n <= 8 images, in[n][8], M[8][8] in registers. */
static inline __attribute__((always_inline)) void
mtv8_tile(int n, const float *M, const float *in, float *out, int64_t os,
    struct ahead *a)
{
	v8 m[8], acc[8] = { 0 };

#pragma GCC unroll 8
	for (int k = 0; k < 8; k++)
		m[k] = LD8(M + 8 * k);
#pragma GCC unroll 8
	for (int k = 0; k < 8; k++) {
		ahead_step(a);
#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			acc[i] += in[i * 8 + k] * m[k];
	}
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		ST8(out + i * os, acc[i]);
}

static inline __attribute__((always_inline)) void
mtv8(int m, const float *M, const float *in, float *out, int64_t os,
    struct ahead *a)
{
	for (; m >= 8; m -= 8, in += 64, out += 8 * os)
		mtv8_tile(8, M, in, out, os, a);
	for (int r = 4; r; r /= 2)
		if (m & r) {
			mtv8_tile(r, M, in, out, os, a);
			in += 8 * r;
			out += r * os;
		}
}

/* G[8][8] += sum_i dy_i x_i^T for n images, x[n][8], dy[n][8]. */
static inline __attribute__((always_inline)) void
outer8(int n, const float *x, const float *dy, float *G, struct ahead *a)
{
	v8 g[8];

#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		g[r] = LD8(G + 8 * r);
	for (int i = 0; i < n; i++) {
		const float *di = dy + i * 8;
		v8 xv = LD8(x + i * 8);
		ahead_step(a);
#pragma GCC unroll 8
		for (int r = 0; r < 8; r++)
			g[r] += di[r] * xv;
	}
#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		ST8(G + 8 * r, g[r]);
}

/* The b floats at x + i xs for n images, side by side in buf[n][b]: the
 * kernels then address every image from one pointer (n image pointers
 * would not fit in registers). */
static inline __attribute__((always_inline)) void
pack(int b, int n, const float *x, int64_t xs, float *buf)
{
	for (int i = 0; i < n; i++)
		memcpy(buf + i * b, x + i * xs, sizeof(float) * b);
}

/* dst[W][W] (row stride ds) = src[W][W]^T (row stride ss), a row per
 * W-float vector. */
#define TRANSPOSE(name, W, vec, regs)					\
static void								\
name(const float *src, int ss, float *dst, int ds)			\
{									\
	vec r[W];							\
									\
	_Pragma("GCC unroll 16")					\
	for (int i = 0; i < W; i++)					\
		r[i] = *(const vec *)(src + i * ss);			\
	regs(r);							\
	_Pragma("GCC unroll 16")					\
	for (int i = 0; i < W; i++)					\
		*(vec *)(dst + i * ds) = r[i];				\
}
TRANSPOSE(transpose16, 16, v16, transpose16_regs)
TRANSPOSE(transpose8, 8, v8, transpose8_regs)
#undef TRANSPOSE

/* nj consecutive b x b blocks of R, each transposed into qt: the forward
 * kernels read R^T's rows. */
static void
transpose_blocks(int b, int nj, const float *q, float *qt)
{
	for (int j = 0; j < nj; j++, q += b * b, qt += b * b) {
		if (b % 16 == 0) {
			for (int r = 0; r < b; r += 16)
				for (int c = 0; c < b; c += 16)
					transpose16(q + r * b + c, b, qt + c * b + r, b);
			continue;
		}
		if (b == 8) {
			transpose8(q, 8, qt, 8);
			continue;
		}
		for (int k = 0; k < b; k++)
			for (int c = 0; c < b; c++)
				qt[k * b + c] = q[c * b + k];
	}
}

/* pe_apply_batch for blocks of B = 16 V (V = 1, 2, 4) or 8 (V = 0): per
 * token, the images in tiles, each tile packed and taken through every
 * block while a later tile's rows are fetched. */
static inline __attribute__((always_inline)) void
fwd_tiles(int V, const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, float *y, int64_t ys, int ldy, int nt)
{
	const int b = V ? 16 * V : 8, n = V ? TILE(V) : 8, bb = b * b;
	const int nb = pe->nblock, jn = QTMAX / bb;
	/* nt: y streamed, not fetched; blocks of 8 gather whole rows in st */
	float QT[QTMAX], in[16 * KMAX], st[8 * STAGE];
	struct ahead a = { .p = { x, y }, .s = { xs, ys }, .ld = { ldx, ldy },
	    .w = { 0, 1 }, .na = nt ? 1 : 2, .nimg = nimg, .T = T,
	    .lines = (pe->head_dim + 15) / 16, .calls = (jn < nb ? jn : nb) * b,
	    .rcalls = (nimg + n - 1) / n * nb * b };

	for (int t = 0; t < T; t++)
		for (int j0 = 0; j0 < nb; j0 += jn) {
			int nj = nb - j0 < jn ? nb - j0 : jn;
			if (j0 == 0)
				ahead_token(&a, t + 1 < T ? R + (t + 1) * pe->rsize : NULL,
				    NULL, pe->rsize);
			transpose_blocks(b, nj, R + t * pe->rsize + (int64_t)j0 * bb, QT);
			for (int i = 0; i < nimg; i += n) {
				int m = nimg - i < n ? nimg - i : n;
				const float *xi = x + (int64_t)t * ldx + i * xs + j0 * b;
				float *yi = y + (int64_t)t * ldy + i * ys + j0 * b;
				ahead_at(&a, t, i + ARCH_AHEAD_TILES * n, n);
				for (int j = 0; j < nj; j++) {
					pack(b, m, xi + j * b, xs, in);
					if (V)
						mtv(V, m, QT + j * bb, in, yi + j * b, ys, &a, nt);
					else if (nt)
						mtv8(m, QT + j * bb, in, st + j * b, pe->head_dim, &a);
					else
						mtv8(m, QT + j * bb, in, yi + j * b, ys, &a);
				}
				if (!V && nt)
					stream_rows(m, pe->head_dim, st, yi, ys);
			}
		}
}

/* pe_apply_batch_backward for the same block sizes: per token, groups of
 * two tiles of images, packed (their rows stay in L1), pass over each
 * block of dR in tiles of rows, then take dx, while a later group's rows
 * are fetched. */
static inline __attribute__((always_inline)) void
bwd_tiles(int V, const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, const float *dy, int64_t dys, int lddy,
    float *dx, int64_t dxs, int lddx, float *dR, int nt)
{
	const int b = V ? 16 * V : 8, bb = b * b, grp = 2 * (V ? TILE(V) : 8);
	const int RT = V ? 16 / V : 8, nb = pe->nblock;
	/* nt: dx streamed, not fetched; blocks of 8 gather whole rows in st */
	float xp[32 * KMAX], dp[32 * KMAX], st[16 * STAGE];
	struct ahead a = { .p = { x, dy, dx }, .s = { xs, dys, dxs },
	    .ld = { ldx, lddy, lddx }, .w = { 0, 0, 1 }, .na = nt ? 2 : 3,
	    .nimg = nimg, .T = T, .lines = (pe->head_dim + 15) / 16,
	    .calls = nb * ((V ? b / RT : 1) * grp + 2 * b) };
	a.rcalls = (nimg + grp - 1) / grp * a.calls;

	for (int t = 0; t < T; t++) {
		const float *q = R + t * pe->rsize;
		float *G = dR + t * pe->rsize;
		if (t + 1 < T)
			ahead_token(&a, q + pe->rsize, G + pe->rsize, pe->rsize);
		else
			ahead_token(&a, NULL, NULL, 0);
		for (int i0 = 0; i0 < nimg; i0 += grp) {
			int m = nimg - i0 < grp ? nimg - i0 : grp;
			const float *xi = x + (int64_t)t * ldx + i0 * xs;
			const float *di = dy + (int64_t)t * lddy + i0 * dys;
			float *oi = dx + (int64_t)t * lddx + i0 * dxs;
			ahead_at(&a, t, i0 + grp, grp);
			for (int j = 0; j < nb; j++) {
				pack(b, m, xi + j * b, xs, xp);
				pack(b, m, di + j * b, dys, dp);
				/* dR first: dx may be dy */
				if (V) {
					for (int r0 = 0; r0 < b; r0 += RT)
						outer_tile(V, RT, m, xp, dp + r0, G + j * bb + r0 * b, &a);
					mtv(V, m, q + j * bb, dp, oi + j * b, dxs, &a, nt);
				} else {
					outer8(m, xp, dp, G + j * bb, &a);
					if (nt)
						mtv8(m, q + j * bb, dp, st + j * b, pe->head_dim, &a);
					else
						mtv8(m, q + j * bb, dp, oi + j * b, dxs, &a);
				}
			}
			if (!V && nt)
				stream_rows(m, pe->head_dim, st, oi, dxs);
		}
	}
}

/*
 * Blocks of 2 (rope-mixed, rope-axial, riemann), heads of whole vectors:
 * per token, y = a x + c swap(x) with swap exchanging each pair's two
 * entries, a[2j] = r[4j], a[2j+1] = r[4j+3], c[2j] = r[4j+1], c[2j+1] =
 * r[4j+2]; backward dx = a dy + swap(c) swap(dy).  With little arithmetic
 * per row, these wait on memory: the rows of the image PF later are
 * fetched ahead (hardware prefetch does not follow images ~100 KB apart;
 * doc/performance.md).
 */
#define PF	8
static const v16i swap16 = {
	1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14
};

/* a, c (above) from the [hd/2][2][2] pairs r: the diagonal entries
 * and the others. */
static void
pair_gather(int nv, const float *r, v16 *a, v16 *c)
{
	for (int v = 0; v < nv; v++)
		for (int l = 0; l < 16; l += 2) {
			const float *q = r + 4 * (8 * v + l / 2);
			a[v][l] = q[0]; a[v][l + 1] = q[3];
			c[v][l] = q[1]; c[v][l + 1] = q[2];
		}
}

/* The inverse of pair_gather. */
static void
pair_scatter(int nv, const v16 *a, const v16 *c, float *r)
{
	for (int v = 0; v < nv; v++)
		for (int l = 0; l < 16; l += 2) {
			float *q = r + 4 * (8 * v + l / 2);
			q[0] = a[v][l]; q[3] = a[v][l + 1];
			q[1] = c[v][l]; q[2] = c[v][l + 1];
		}
}

static void
fetch_row(const float *p, int nv)
{
	for (int v = 0; v < nv; v++)
		arch_prefetch(p + 16 * v, 0);
}

/* The rows of one token: y_i = R x_i, i < nimg; nt: streaming stores. */
static void
pairs_fwd(int hd, const float *r, int nimg, const float *x, int64_t xs,
    float *y, int64_t ys, int nt)
{
	v16 a[PE_MAXDIM / 16], c[PE_MAXDIM / 16];
	int nv = hd / 16;

	pair_gather(nv, r, a, c);
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs;
		float *yi = y + i * ys;
		if (i + PF < nimg)
			fetch_row(xi + PF * xs, nv);
		for (int v = 0; v < nv; v++) {
			v16 u = LD(xi + 16 * v);
			put(yi + 16 * v, a[v] * u + c[v] * pe_shuffle1(u, swap16), nt);
		}
	}
}

/* The backward for one token: dx_i = R^T dy_i, and g (the token's dR,
 * [hd/2][2][2]) += sum_i dy_i x_i^T pair by pair, the images in order:
 * its diagonal entries sum dy x, the others dy swap(x). */
static void
pairs_bwd(int hd, const float *r, int nimg, const float *x, int64_t xs,
    const float *dy, int64_t dys, float *dx, int64_t dxs, float *g, int nt)
{
	v16 a[PE_MAXDIM / 16], c[PE_MAXDIM / 16];
	v16 gd[PE_MAXDIM / 16], gs[PE_MAXDIM / 16];
	int nv = hd / 16;

	pair_gather(nv, r, a, c);
	for (int v = 0; v < nv; v++)
		c[v] = pe_shuffle1(c[v], swap16);
	pair_gather(nv, g, gd, gs);
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs, *di = dy + i * dys;
		float *o = dx + i * dxs;
		if (i + PF < nimg) {
			fetch_row(xi + PF * xs, nv);
			fetch_row(di + PF * dys, nv);
		}
		for (int v = 0; v < nv; v++) {
			v16 u = LD(xi + 16 * v), d = LD(di + 16 * v);
			gd[v] += d * u;
			gs[v] += d * pe_shuffle1(u, swap16);
			put(o + 16 * v, a[v] * d + c[v] * pe_shuffle1(d, swap16), nt);
		}
	}
	pair_scatter(nv, gd, gs, g);
}

/* y_i = Q x_i for the images of one token and block: Q^T is QT[B][B]. */
static inline __attribute__((always_inline)) void
fwd_block(int B, const float *QT, int nimg, const float *x, int64_t xs,
    float *y, int64_t ys)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs;
		float acc[KMAX] = { 0 };
		for (int k = 0; k < B; k++) {
			float xk = xi[k];
			for (int r = 0; r < B; r++)
				acc[r] += xk * QT[k * B + r];
		}
		memcpy(y + i * ys, acc, sizeof(float) * B);
	}
}

/* dx_i = Q^T dy_i and G += sum_i dy_i x_i^T for one token and block. */
static inline __attribute__((always_inline)) void
bwd_block(int B, const float *Q, int nimg, const float *x, int64_t xs,
    const float *dy, int64_t dys, float *dx, int64_t dxs, float *G)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs, *di = dy + i * dys;
		float acc[KMAX] = { 0 };
		for (int r = 0; r < B; r++) {
			float d = di[r];
			for (int c = 0; c < B; c++) {
				acc[c] += d * Q[r * B + c];
				G[r * B + c] += d * xi[c];
			}
		}
		memcpy(dx + i * dxs, acc, sizeof(float) * B);
	}
}

/* The same for any width, with a row scratch (blocks wider than KMAX). */
static void
fwd_wide(int B, const float *Q, int nimg, const float *x, int64_t xs, float *y,
    int64_t ys, float *tmp)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs;
		for (int r = 0; r < B; r++) {
			float s = 0;
#pragma omp simd reduction(+:s)
			for (int k = 0; k < B; k++)
				s += Q[(int64_t)r * B + k] * xi[k];
			tmp[r] = s;
		}
		memcpy(y + i * ys, tmp, sizeof(float) * B);
	}
}

static void
bwd_wide(int B, const float *Q, int nimg, const float *x, int64_t xs,
    const float *dy, int64_t dys, float *dx, int64_t dxs, float *G, float *tmp)
{
	for (int i = 0; i < nimg; i++) {
		const float *xi = x + i * xs, *di = dy + i * dys;
		memset(tmp, 0, sizeof(float) * B);
		for (int r = 0; r < B; r++)
			for (int c = 0; c < B; c++) {
				tmp[c] += di[r] * Q[(int64_t)r * B + c];
				G[(int64_t)r * B + c] += di[r] * xi[c];
			}
		memcpy(dx + i * dxs, tmp, sizeof(float) * B);
	}
}

/* pe_apply_batch for the blocks without a tile kernel (and none). */
static void
fwd_rows(const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, float *y, int64_t ys, int ldy, int nt)
{
	int b = pe->block, nb = pe->nblock;
	float QT[KMAX * KMAX], tmp[PE_MAXDIM];

	for (int t = 0; t < T; t++) {
		const float *xt = x + (int64_t)t * ldx, *r = R + t * pe->rsize;
		float *yt = y + (int64_t)t * ldy;

		if (pe->identity) {
			for (int i = 0; i < nimg; i++)
				if (yt + i * ys != xt + i * xs)
					memmove(yt + i * ys, xt + i * xs, sizeof(float) * pe->head_dim);
			continue;
		}
		if (b == 2 && pe->head_dim % 16 == 0) {
			pairs_fwd(pe->head_dim, r, nimg, xt, xs, yt, ys, nt);
			continue;
		}
		if (b == 2) {		/* pairs: a whole row at a time */
			for (int i = 0; i < nimg; i++) {
				const float *xi = xt + i * xs;
				float *yi = yt + i * ys;
				for (int j = 0; j < nb; j++) {
					float x0 = xi[2 * j], x1 = xi[2 * j + 1];
					yi[2 * j] = r[4 * j] * x0 + r[4 * j + 1] * x1;
					yi[2 * j + 1] = r[4 * j + 2] * x0 + r[4 * j + 3] * x1;
				}
			}
			continue;
		}
		for (int j = 0; j < nb; j++) {
			const float *q = r + (int64_t)j * b * b, *xb = xt + j * b;
			float *yb = yt + j * b;
			if (b > KMAX) {
				fwd_wide(b, q, nimg, xb, xs, yb, ys, tmp);
				continue;
			}
			transpose_blocks(b, 1, q, QT);
			if (b == 4)
				fwd_block(4, QT, nimg, xb, xs, yb, ys);
			else
				fwd_block(b, QT, nimg, xb, xs, yb, ys);
		}
	}
}

void
pe_apply_batch(const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, float *y, int64_t ys, int ldy)
{
	int nt = streamed(pe, y, ys, ldy, nimg, T);

	switch (pe->identity ? 0 : pe->block) {
	case 8:  fwd_tiles(0, pe, nimg, T, R, x, xs, ldx, y, ys, ldy, nt); break;
	case 16: fwd_tiles(1, pe, nimg, T, R, x, xs, ldx, y, ys, ldy, nt); break;
	case 32: fwd_tiles(2, pe, nimg, T, R, x, xs, ldx, y, ys, ldy, nt); break;
	case 64: fwd_tiles(4, pe, nimg, T, R, x, xs, ldx, y, ys, ldy, nt); break;
	default: fwd_rows(pe, nimg, T, R, x, xs, ldx, y, ys, ldy, nt); break;
	}
	if (nt)		/* streamed rows in memory before the caller reads them */
		arch_stream_fence();
}

/* pe_apply_batch_backward for the blocks without a tile kernel. */
static void
bwd_rows(const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, const float *dy, int64_t dys, int lddy,
    float *dx, int64_t dxs, int lddx, float *dR, int nt)
{
	int b = pe->block, nb = pe->nblock;
	float tmp[PE_MAXDIM];

	for (int t = 0; t < T; t++) {
		const float *xt = x + (int64_t)t * ldx, *r = R + t * pe->rsize;
		const float *dyt = dy + (int64_t)t * lddy;
		float *dxt = dx + (int64_t)t * lddx, *g = dR + t * pe->rsize;

		if (b == 2 && pe->head_dim % 16 == 0) {
			pairs_bwd(pe->head_dim, r, nimg, xt, xs, dyt, dys, dxt, dxs, g, nt);
			continue;
		}
		if (b == 2) {		/* pairs: a whole row at a time */
			for (int i = 0; i < nimg; i++) {
				const float *xi = xt + i * xs, *di = dyt + i * dys;
				float *o = dxt + i * dxs;
				for (int j = 0; j < nb; j++) {
					float x0 = xi[2 * j], x1 = xi[2 * j + 1];
					float d0 = di[2 * j], d1 = di[2 * j + 1];
					g[4 * j] += d0 * x0; g[4 * j + 1] += d0 * x1;
					g[4 * j + 2] += d1 * x0; g[4 * j + 3] += d1 * x1;
					o[2 * j] = r[4 * j] * d0 + r[4 * j + 2] * d1;
					o[2 * j + 1] = r[4 * j + 1] * d0 + r[4 * j + 3] * d1;
				}
			}
			continue;
		}
		for (int j = 0; j < nb; j++) {
			const float *q = r + (int64_t)j * b * b, *xb = xt + j * b, *db = dyt + j * b;
			float *dxb = dxt + j * b, *gb = g + (int64_t)j * b * b;
			switch (b) {
			case 1:  bwd_block(1, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			case 4:  bwd_block(4, q, nimg, xb, xs, db, dys, dxb, dxs, gb); break;
			default:
				if (b <= KMAX)
					bwd_block(b, q, nimg, xb, xs, db, dys, dxb, dxs, gb);
				else
					bwd_wide(b, q, nimg, xb, xs, db, dys, dxb, dxs, gb, tmp);
				break;
			}
		}
	}
}

void
pe_apply_batch_backward(const struct pe *pe, int nimg, int T, const float *R,
    const float *x, int64_t xs, int ldx, const float *dy, int64_t dys, int lddy,
    float *dx, int64_t dxs, int lddx, float *dR)
{
	int nt = streamed(pe, dx, dxs, lddx, nimg, T);

	switch (pe->block) {
	case 8:  bwd_tiles(0, pe, nimg, T, R, x, xs, ldx, dy, dys, lddy, dx, dxs, lddx, dR, nt); break;
	case 16: bwd_tiles(1, pe, nimg, T, R, x, xs, ldx, dy, dys, lddy, dx, dxs, lddx, dR, nt); break;
	case 32: bwd_tiles(2, pe, nimg, T, R, x, xs, ldx, dy, dys, lddy, dx, dxs, lddx, dR, nt); break;
	case 64: bwd_tiles(4, pe, nimg, T, R, x, xs, ldx, dy, dys, lddy, dx, dxs, lddx, dR, nt); break;
	default: bwd_rows(pe, nimg, T, R, x, xs, ldx, dy, dys, lddy, dx, dxs, lddx, dR, nt); break;
	}
	if (nt)
		arch_stream_fence();
}

void
pe_apply(const struct pe *pe, int T, const float *R, const float *x, int ldx,
    float *y, int ldy)
{
	pe_apply_batch(pe, 1, T, R, x, 0, ldx, y, 0, ldy);
}

void
pe_apply_backward(const struct pe *pe, int T, const float *R, const float *x,
    int ldx, const float *dy, int lddy, float *dx, int lddx, float *dR)
{
	pe_apply_batch_backward(pe, 1, T, R, x, 0, ldx, dy, 0, lddy, dx, 0, lddx, dR);
}
