/*
 * test_nn.c - every layer of nn.h on its own: backward against central
 * finite differences of L = sum(r * y) for a fixed random r, element by
 * element (every element of small inputs), plus the properties that
 * differences cannot see (dropout rate and determinism, table
 * interpolation at equal and other grids, sgemm row split).
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "pe.h"
#include "pe_method.h"
#include "posemb.h"
#include "rotary.h"
#include "rng.h"
#include "test.h"

static struct rng R;

static float *
randv(size_t n, float s)
{
	float *p = malloc(sizeof(float) * n);
	for (size_t i = 0; i < n; i++)
		p[i] = (float)rng_normal(&R) * s;
	return p;
}

/* A layer under test: forward() recomputes y from the inputs. */
struct layer {
	void	(*forward)(struct layer *);
	float	*y;
	size_t	 ny;
	float	*r;		/* [ny] weights of the loss */
	void	*ctx;
};

static double
loss(struct layer *L)
{
	L->forward(L);
	double s = 0;
	for (size_t i = 0; i < L->ny; i++)
		s += (double)L->r[i] * L->y[i];
	return s;
}

/* Compare analytic g[n] with differences of the loss in x[n] (every
 * element, or an evenly spread 250 of them in large arrays). */
static void
fd(struct layer *L, float *x, const float *g, size_t n, const char *what)
{
	double worst = 0;
	size_t step = n / 250 + 1;
	for (size_t i = 0; i < n; i += step) {
		float x0 = x[i], e = 1e-2f * fmaxf(1.0f, fabsf(x0));
		x[i] = x0 + e;
		double lp = loss(L);
		x[i] = x0 - e;
		double lm = loss(L);
		x[i] = x0 + e / 2;
		double lp2 = loss(L);
		x[i] = x0 - e / 2;
		double lm2 = loss(L);
		x[i] = x0;
		double d1 = (lp - lm) / (2 * e), d2 = (lp2 - lm2) / e;
		double d = (4 * d2 - d1) / 3;	/* Richardson */
		worst = maxn(worst, fabs(d - g[i]) / (1e-2 + fabs(d)));
	}
	loss(L);
	CHECK(worst < 5e-3, "%s: backward matches differences (worst %.2e)", what, worst);
}

/* ---- linear ---- */
struct lin { float *x, *w, *b; int N, I, O; };
static void
lin_fwd(struct layer *L)
{
	struct lin *c = L->ctx;
	linear_forward(GEMM_FP32, L->y, c->x, c->w, c->b, c->N, c->I, c->O);
}

static void
test_linear(void)
{
	struct lin c = { randv(7 * 5, 1), randv(3 * 5, 1), randv(3, 1), 7, 5, 3 };
	struct layer L = { lin_fwd, malloc(sizeof(float) * 21), 21, randv(21, 1), &c };
	float *dx = malloc(sizeof(float) * 35), *dw = calloc(15, sizeof(float));
	float *db = calloc(3, sizeof(float));
	loss(&L);
	linear_backward(GEMM_FP32, dx, dw, db, L.r, c.x, c.w, c.N, c.I, c.O);
	fd(&L, c.x, dx, 35, "linear dx");
	fd(&L, c.w, dw, 15, "linear dw");
	fd(&L, c.b, db, 3, "linear db");
	free(c.x); free(c.w); free(c.b); free(L.y); free(L.r); free(dx); free(dw); free(db);
}

/* gemm_rows splits rows across threads: same result as one sgemm, same
 * bits on any thread count (blocks not multiples of any kernel's unroll). */
static void
test_gemm_rows(void)
{
	static const int shape[][2] = { { 301, 37 }, { 37, 301 }, { 1000, 130 } };
	for (int s = 0; s < 3; s++) {
		int M = shape[s][0], N = shape[s][1], K = 29;
		float *a = randv((size_t)K * M, 1), *b = randv((size_t)K * N, 1);
		float *c1 = calloc((size_t)M * N, sizeof(float)), *c2 = calloc((size_t)M * N, sizeof(float));
		double err = 0;
		omp_set_num_threads(2);
		gemm_rows(GEMM_FP32, 1, 0, M, N, K, 1.0f, a, M, b, N, 0.0f, c1, N);	/* A^T B */
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double t = 0;
				for (int k = 0; k < K; k++)
					t += (double)a[k * M + i] * b[k * N + j];
				err = maxn(err, fabs(t - c1[i * N + j]));
			}
		CHECK(err < 1e-4, "gemm_rows %d x %d: transposed A matches a double product (%.1e)", M, N, err);
		omp_set_num_threads(1);
		gemm_rows(GEMM_FP32, 1, 0, M, N, K, 1.0f, a, M, b, N, 0.0f, c2, N);
		CHECK(memcmp(c1, c2, sizeof(float) * M * N) == 0, "gemm_rows %d x %d: same bits on 1 and 2 threads", M, N);
		free(a); free(b); free(c1); free(c2);
	}
}

/* colsum_add: each column summed over the rows in row order, added to
 * acc: the bits of a plain float loop, for widths that take every
 * register block and the scalar tail, on 1 and 2 threads. */
static void
test_colsum(void)
{
	static const int widths[] = { 3, 16, 24, 96, 192, 200, 576, 768, 1000 };
	for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
		int D = widths[w], N = 37, bad = 0;
		float *x = randv((size_t)N * D, 1), *acc = randv(D, 1);
		float *want = malloc(sizeof(float) * D), *got = malloc(sizeof(float) * D);
		for (int j = 0; j < D; j++) {
			float t = 0;
			for (int n = 0; n < N; n++)
				t += x[(size_t)n * D + j];
			want[j] = acc[j] + t;
		}
		for (int thr = 1; thr <= 2; thr++) {
			omp_set_num_threads(thr);
			memcpy(got, acc, sizeof(float) * D);
			colsum_add(got, x, N, D);
			bad += memcmp(got, want, sizeof(float) * D) != 0;
		}
		omp_set_num_threads(1);
		CHECK(bad == 0, "colsum_add, %d columns: the row-order sums bit for bit on 1 and 2 threads", D);
		free(x); free(acc); free(want); free(got);
	}
}

/* ---- layernorm ---- */
struct ln { float *x, *g, *b, *mean, *rstd; int N, D; };
static void
ln_fwd(struct layer *L)
{
	struct ln *c = L->ctx;
	layernorm_forward(L->y, c->mean, c->rstd, c->x, c->g, c->b, c->N, c->D);
}

static void
test_layernorm(void)
{
	int N = 4, D = 9;
	struct ln c = { randv(N * D, 2), randv(D, 1), randv(D, 1),
	    malloc(sizeof(float) * N), malloc(sizeof(float) * N), N, D };
	struct layer L = { ln_fwd, malloc(sizeof(float) * N * D), (size_t)N * D,
	    randv(N * D, 1), &c };
	float *dx = calloc(N * D, sizeof(float)), *dg = calloc(D, sizeof(float));
	float *db = calloc(D, sizeof(float));
	loss(&L);
	layernorm_backward(dx, dg, db, L.r, c.x, c.mean, c.rstd, c.g, N, D);
	fd(&L, c.x, dx, N * D, "layernorm dx");
	fd(&L, c.g, dg, D, "layernorm dgain");
	fd(&L, c.b, db, D, "layernorm dbias");
	free(c.x); free(c.g); free(c.b); free(c.mean); free(c.rstd);
	free(L.y); free(L.r); free(dx); free(dg); free(db);
}

/* ---- gelu ---- */
static float *gelu_x;
static void
gelu_fwd(struct layer *L)
{
	gelu_forward(L->y, NULL, gelu_x, L->ny);
}

static void
test_gelu(void)
{
	size_t n = 41;
	gelu_x = malloc(sizeof(float) * n);
	for (size_t i = 0; i < n; i++)
		gelu_x[i] = -6.0f + 0.3f * i;
	struct layer L = { gelu_fwd, malloc(sizeof(float) * n), n, randv(n, 1), NULL };
	float *dx = malloc(sizeof(float) * n);
	loss(&L);
	double err = 0;
	for (size_t i = 0; i < n; i++) {	/* exact erf GELU */
		double v = gelu_x[i];
		err = maxn(err, fabs(L.y[i] - 0.5 * v * (1 + erf(v / sqrt(2)))));
	}
	CHECK(err < 1e-6, "gelu equals x Phi(x) with the exact erf (%.1e)", err);
	/* GELU' as the forward leaves it, beside y and over x itself */
	float *y = malloc(sizeof(float) * n), *g = malloc(sizeof(float) * n);
	float *gx = malloc(sizeof(float) * n);
	memcpy(gx, gelu_x, sizeof(float) * n);
	gelu_forward(y, g, gelu_x, n);
	gelu_forward(y, gx, gx, n);
	CHECK(memcmp(y, L.y, sizeof(float) * n) == 0 &&
	    memcmp(g, gx, sizeof(float) * n) == 0,
	    "gelu: the same y with GELU' made, and the same GELU' in place");
	gelu_backward(dx, L.r, g, n);
	fd(&L, gelu_x, dx, n, "gelu dx");
	free(gelu_x); free(L.y); free(L.r); free(dx); free(y); free(g); free(gx);
}

/* ---- attention ---- */
struct at { struct attn a; float *q, *k, *v, *P, *ls; };
static void
at_fwd(struct layer *L)
{
	struct at *c = L->ctx;
	attention_forward(&c->a, L->y, c->P, c->q, c->k, c->v, c->ls);
}

static void
test_attention(int locality, int per_record, int Tq)
{
	int B = 2, T = 5, H = 2, hd = 3, D = H * hd, ld = 3 * D;
	int nd = per_record ? B : 1;
	float *qkv = randv((size_t)B * T * ld, 1), *d2 = malloc(sizeof(float) * nd * T * T);
	for (int b = 0; b < nd; b++)
		for (int m = 0; m < T; m++)
			for (int n = 0; n < T; n++)
				d2[(b * T + m) * T + n] = (float)((m - n) * (m - n)) * (0.3f + b);
	struct at c = { { .B = B, .T = T, .Tq = Tq, .H = H, .hd = hd, .ldqk = ld,
	    .ldv = ld, .dist2 = d2, .dist_per_record = per_record, .nthr = 2,
	    .scratch = malloc(sizeof(float) * 2 * 2 * T * T) },
	    qkv, qkv + D, qkv + 2 * D, malloc(sizeof(float) * B * H * Tq * T),
	    locality ? randv(H, 0.3f) : NULL };
	struct layer L = { at_fwd, malloc(sizeof(float) * B * Tq * D),
	    (size_t)B * Tq * D, randv((size_t)B * Tq * D, 1), &c };
	float *dqkv = calloc((size_t)B * T * ld, sizeof(float)), dls[2] = { 0, 0 };
	float partial[4];
	loss(&L);
	attention_backward(&c.a, dqkv, dqkv + D, dqkv + 2 * D, dls, partial, L.r,
	    c.P, c.q, c.k, c.v, c.ls);
	char what[96];
	snprintf(what, sizeof what, "attention%s%s%s dq, dk, dv",
	    locality ? " with locality" : "", per_record ? " per record" : "",
	    Tq < T ? " CLS query only" : "");
	/* rows past Tq: their q is unused, so its gradient is zero */
	for (int b = 0; b < B; b++)
		for (int t = Tq; t < T; t++)
			memset(dqkv + ((size_t)b * T + t) * ld, 0, sizeof(float) * D);
	fd(&L, qkv, dqkv, (size_t)B * T * ld, what);
	if (locality) {
		snprintf(what, sizeof what, "attention locality dlog_sigma%s",
		    per_record ? " per record" : "");
		fd(&L, c.ls, dls, H, what);
	}
	free(qkv); free(d2); free(c.a.scratch); free(c.P); free(c.ls);
	free(L.y); free(L.r); free(dqkv);
}

/* ---- cross-entropy ---- */
struct xe { float *logits, *target; int B, C; };
static void
xe_fwd(struct layer *L)
{
	struct xe *c = L->ctx;
	L->y[0] = xent_forward(L->y + 1, c->logits, c->target, c->B, c->C);
}

static void
test_xent(void)
{
	int B = 3, C = 4;
	struct xe c = { randv(B * C, 2), malloc(sizeof(float) * B * C), B, C };
	for (int i = 0; i < B * C; i++)
		c.target[i] = (float)(i % 3) / 4.0f;	/* soft, rows not summing to 1 */
	float r[1 + 12] = { 1 };
	struct layer L = { xe_fwd, malloc(sizeof(float) * (1 + B * C)), 1, r, &c };
	float *dl = malloc(sizeof(float) * B * C);
	loss(&L);
	xent_backward(dl, L.y + 1, c.target, B, C);
	fd(&L, c.logits, dl, B * C, "cross-entropy dlogits (soft targets)");
	free(c.logits); free(c.target); free(L.y); free(dl);
}

/* ---- position tables ---- */
struct pt { float *tab; int *idx; float *w; int per_record, B, R, K, D; };
static void
pt_fwd(struct layer *L)
{
	struct pt *c = L->ctx;
	memset(L->y, 0, sizeof(float) * L->ny);
	posemb_forward(L->y, c->tab, c->idx, c->w, c->per_record, c->B, c->R, c->K,
	    c->D);
}

/* dtable of posemb_backward against finite differences of posemb_forward
 * for a table of n rows. */
static void
pt_fd(struct pt *c, int n, const char *what)
{
	size_t ny = (size_t)c->B * c->R * c->D;
	struct layer L = { pt_fwd, malloc(sizeof(float) * ny), ny, randv(ny, 1), c };
	float *dt = calloc((size_t)n * c->D, sizeof(float));
	loss(&L);
	posemb_backward(dt, L.r, c->idx, c->w, c->per_record, c->B, c->R, c->K, c->D);
	fd(&L, c->tab, dt, (size_t)n * c->D, what);
	free(L.y); free(L.r); free(dt);
}

static void
test_posemb(void)
{
	int G[3] = { 2, 3, 4 }, g[3] = { 3, 2, 5 }, A = 3, K = 8, D = 4, B = 2;
	int nG = 24, T = 30;
	int *idx = malloc(sizeof(int) * (1 + T) * K);
	float *w = malloc(sizeof(float) * (1 + T) * K);
	posemb_grid(idx, w, G, G, A);
	int exact = idx[0] == 0 && w[0] == 1;
	for (int t = 1; t <= nG; t++)
		for (int k = 0; k < K; k++)
			if (w[t * K + k] != 0)
				exact &= idx[t * K + k] == t && w[t * K + k] == 1;
	CHECK(exact, "position table at its own grid reads rows exactly, CLS row 0");
	posemb_grid(idx, w, G, g, A);
	double wsum = 0;
	for (int t = 0; t <= T; t++) {
		double s = 0;
		for (int k = 0; k < K; k++)
			s += w[t * K + k];
		wsum = maxn(wsum, fabs(s - 1));
	}
	CHECK(wsum < 1e-6, "trilinear weights sum to 1 at another grid");
	struct pt c = { randv((size_t)(1 + nG) * D, 1), idx, w, 0, B, 1 + T, K, D };
	pt_fd(&c, 1 + nG, "position table (3D, interpolated) dtable");
	/* a linear function of the cell index is reproduced by interpolation
	 * on a finer grid along one axis: centre (i+0.5)*G/g-0.5, clamped to
	 * [0, G-1] as PyTorch's interpolate (align_corners False) does, so the
	 * edge tokens 0 and 7 (centres -0.25 and 3.25) read the edge rows */
	int G1[1] = { 4 }, g1[1] = { 8 };
	int idx1[9 * 2];
	float w1[9 * 2], tab1[5] = { 0, 10, 20, 30, 40 }, err = 0, edge = 0;
	posemb_grid(idx1, w1, G1, g1, 1);
	for (int t = 0; t < 8; t++) {
		const int *i1 = idx1 + 2 * (t + 1);
		const float *v1 = w1 + 2 * (t + 1);
		float v = v1[0] * tab1[i1[0]] + v1[1] * tab1[i1[1]];
		float c = (t + 0.5f) * 4 / 8 - 0.5f;
		c = c < 0 ? 0 : c > 3 ? 3 : c;
		float want = 10 * (1 + c);
		if (t == 0 || t == 7)
			edge = maxn(edge, fabsf(v - want));
		else
			err = maxn(err, fabsf(v - want));
	}
	CHECK(err < 1e-4, "linear interpolation reproduces a linear table (%.1e)", err);
	CHECK(edge < 1e-4, "edge tokens 0 and 7 read the first and last rows, "
	    "centres clamped to the grid (%.1e)", edge);
	/* the same clamp on a coarser-to-finer 2D grid: the corner tokens of a
	 * 5x5 run on a 3x3 table read the corner rows exactly */
	int G2[2] = { 3, 3 }, g2[2] = { 5, 5 }, idx2[26 * 4];
	float w2[26 * 4];
	int corners = 1;
	posemb_grid(idx2, w2, G2, g2, 2);
	static const int tc[4] = { 0, 4, 20, 24 }, rc[4] = { 0, 2, 6, 8 };
	for (int q = 0; q < 4; q++)
		for (int k = 0; k < 4; k++) {
			float wt = w2[(1 + tc[q]) * 4 + k];
			corners &= wt == 0 || (wt == 1 && idx2[(1 + tc[q]) * 4 + k] == 1 + rc[q]);
		}
	CHECK(corners, "2D corner tokens read the corner rows with weight 1");
	free(idx); free(w); free(c.tab);
}

/* ape's table read at positions (its descriptor's sample, lib/pe/ape.c),
 * positions pos[N][A] kept; spec: "ape" or with its options. */
static void
ape_sample(const char *spec, int *idx, float *w, const float *pos, int N,
    const int *G, int A)
{
	struct pe pe;
	float *p = malloc(sizeof(float) * N * A);

	memcpy(p, pos, sizeof(float) * N * A);
	pe_parse(&pe, spec, 64, A, 1, 1, NULL);
	pe.method->table->sample(&pe, idx, w, p, N, G);
	free(p);
}

static void
posemb_sample(int *idx, float *w, const float *pos, int N, const int *G, int A)
{
	ape_sample("ape", idx, w, pos, N, G, A);
}

/* ape,centres: the cell centres (i + 0.5) / n read row i exactly, a
 * linear table is reproduced between them, the border outside. */
static void
test_ape_centres(void)
{
	int G[2] = { 3, 4 }, A = 2, K = 4, idx[12 * 4], exact = 1;
	float pos[12 * 2], w[12 * 4], tab[12], err = 0;

	for (int r = 0; r < 12; r++) {
		pos[2 * r] = (r / 4 + 0.5f) / 3;
		pos[2 * r + 1] = (r % 4 + 0.5f) / 4;
		tab[r] = 10.0f * (r / 4) + r % 4;
	}
	ape_sample("ape,centres", idx, w, pos, 12, G, A);
	for (int r = 0; r < 12; r++)
		for (int k = 0; k < K; k++)
			exact &= idx[r * K + k] == r ? fabsf(w[r * K + k] - 1) < 1e-6f :
			    fabsf(w[r * K + k]) < 1e-6f;
	CHECK(exact, "ape,centres: the cell centres (i + 0.5) / n read their rows (to float rounding)");
	for (int r = 0; r < 12; r++) {
		float y = -0.2f + 1.4f * (float)((r * 5) % 12) / 11, x = -0.1f + 1.2f * (float)((r * 7) % 12) / 11;
		pos[2 * r] = y;
		pos[2 * r + 1] = x;
	}
	ape_sample("ape,centres", idx, w, pos, 12, G, A);
	for (int r = 0; r < 12; r++) {
		float v = 0, cy = pos[2 * r] * 3 - 0.5f, cx = pos[2 * r + 1] * 4 - 0.5f;
		cy = cy < 0 ? 0 : cy > 2 ? 2 : cy;
		cx = cx < 0 ? 0 : cx > 3 ? 3 : cx;
		for (int k = 0; k < K; k++)
			v += w[r * K + k] * tab[idx[r * K + k]];
		err = maxn(err, fabsf(v - (10 * cy + cx)));
	}
	CHECK(err < 1e-4, "ape,centres: bilinear between the centres, border outside (%.1e)", err);
	/* ... where the default rule reads other rows: the same centres */
	float c[2] = { 0.5f / 3, 0.5f / 4 };
	ape_sample("ape", idx, w, c, 1, G, A);
	CHECK(idx[0] == 0 && w[0] < 1, "ape: the first centre between rows by default (w %.3f)", w[0]);
}

/* ape's table read at positions: grid_sample with align_corners and border
 * padding, position 0 and 1 the first and last rows of each axis. */
static void
test_posemb_sample(void)
{
	int G[3] = { 2, 3, 4 }, A = 3, K = 8, D = 3, B = 2, R = 5, N = B * R, nG = 24;
	float pos[10 * 3];
	int idx[10 * 8];
	float w[10 * 8];
	/* nodes i / (G - 1) read row (i0 G1 + i1) G2 + i2 exactly */
	int exact = 1;
	for (int r = 0; r < nG; r++) {
		float p[3] = { (float)(r / 12), (float)(r / 4 % 3) / 2, (float)(r % 4) / 3 };
		posemb_sample(idx, w, p, 1, G, A);
		for (int k = 0; k < K; k++)
			exact &= w[k] == 0 || (idx[k] == r && fabsf(w[k] - 1) < 1e-6f);
	}
	CHECK(exact, "ape: the grid's nodes i / (n - 1) read their rows exactly");
	/* a table linear in each coordinate is reproduced inside, clamped
	 * outside (border padding) */
	float tab[24], err = 0;
	for (int r = 0; r < nG; r++)
		tab[r] = 100.0f * (r / 12) + 10.0f * (r / 4 % 3) + (r % 4);
	for (int n = 0; n < N; n++)
		for (int a = 0; a < A; a++)
			pos[n * A + a] = -0.3f + 1.6f * (float)((n * 7 + a * 3) % 11) / 10;
	posemb_sample(idx, w, pos, N, G, A);
	for (int n = 0; n < N; n++) {
		float v = 0, want = 0, scale[3] = { 100, 10, 1 };
		for (int k = 0; k < K; k++)
			v += w[n * K + k] * tab[idx[n * K + k]];
		for (int a = 0; a < A; a++) {
			float x = pos[n * A + a] * (G[a] - 1);
			want += scale[a] * (x < 0 ? 0 : x > G[a] - 1 ? G[a] - 1 : x);
		}
		err = maxn(err, fabsf(v - want));
	}
	CHECK(err < 1e-3, "ape: multilinear inside the table, border outside (%.1e)", err);
	/* positions the map can make of finite input (overflow to inf; inf * 0
	 * on an axis of one cell is NaN) read rows inside the table */
	int G1[2] = { 1, 3 }, inside = 1;
	float far[8] = { INFINITY, 0.5f, -INFINITY, 2e38f, NAN, -1e30f, 0, NAN };
	posemb_sample(idx, w, far, 4, G1, 2);
	for (int n = 0; n < 4; n++) {
		double s = 0;
		for (int k = 0; k < 4; k++) {
			inside &= idx[n * 4 + k] >= 0 && idx[n * 4 + k] < 3;
			s += w[n * 4 + k];
		}
		inside &= fabs(s - 1) < 1e-6;
	}
	CHECK(inside, "ape: infinite and NaN coordinates read rows of the table, weights summing to 1");
	struct pt c = { randv((size_t)nG * D, 1), idx, w, 1, B, R, K, D };
	posemb_sample(idx, w, pos, N, G, A);
	pt_fd(&c, nG, "ape table per record (3D, perturbed) dtable");
	free(c.tab);
}

/* ---- dropout ---- */
static void
test_dropout(void)
{
	int Rn = 4;
	size_t len = 5000, n = Rn * len;
	float *x = randv(n, 1), *y = malloc(sizeof(float) * n), *m = malloc(sizeof(float) * n);
	float *y2 = malloc(sizeof(float) * n), *m2 = malloc(sizeof(float) * n);
	omp_set_num_threads(2);
	dropout_forward(y, m, x, 0.3f, Rn, len, 11, 5, 0);
	size_t kept = 0;
	int ok = 1;
	for (size_t i = 0; i < n; i++) {
		kept += m[i] != 0;
		ok &= m[i] == 0 || fabsf(m[i] - 1 / 0.7f) < 1e-6f;
		ok &= y[i] == x[i] * m[i];
	}
	CHECK(ok, "dropout keeps x / (1 - p) or zero");
	CHECK(fabs((double)kept / n - 0.7) < 0.02, "dropout keeps 70%% (%.3f)", (double)kept / n);
	omp_set_num_threads(1);
	dropout_forward(y2, m2, x, 0.3f, Rn, len, 11, 5, 0);
	CHECK(memcmp(m, m2, sizeof(float) * n) == 0, "dropout masks do not depend on threads");
	/* record r's mask depends on (seed, record, site) only */
	dropout_forward(y2, m2, x + len, 0.3f, 1, len, 11, 5, 0);
	CHECK(memcmp(m, m2, sizeof(float) * len) == 0, "dropout mask of record 0 is the same in a smaller batch");
	dropout_forward(y2, m2, x + len, 0.3f, Rn - 1, len, 11, 5, 1);
	CHECK(memcmp(m + len, m2, sizeof(float) * (n - len)) == 0, "records 1.. drawn alone (first 1) get the masks they get in the batch");
	dropout_forward(y2, m2, x, 0.3f, Rn, len, 11, 6, 0);
	CHECK(memcmp(m, m2, sizeof(float) * n) != 0, "another site draws another mask");
	dropout_backward(y2, x, m, 0.3f, n);
	ok = 1;
	for (size_t i = 0; i < n; i++)
		ok &= y2[i] == x[i] * m[i];
	CHECK(ok, "dropout backward applies the mask");
	free(x); free(y); free(m); free(y2); free(m2);
}

/* ---- rotary (q, k through lib/pe/pe.h) ---- */
struct ro { struct rot r; float *R, *qkv; };
static void
ro_fwd(struct layer *L)
{
	struct ro *c = L->ctx;
	rotary_forward(&c->r, 0, c->R, L->y, c->qkv);
}

/* With a basis: attention's scores from rotary_forward's rows, qkr,
 * equal those of the dense R = P B P^T (pe_compose) on q and k, R = I on
 * an unrotated CLS row. */
static void
dot_products(const struct rot *r, const char *spec, struct pe_work *w,
    const float *R, float *qkr, const float *qkv)
{
	int hd = r->hd, D = r->H * hd, skip = r->T1 - r->Tn;
	const struct pe *pe = r->pe;
	float *dense = malloc(sizeof(float) * pe->nset * r->Tr * hd * hd);
	double err = 0;

	rotary_forward(r, 0, R, qkr, qkv);
	pe_compose(pe, w, r->Tr, r->P, R, dense);
	for (int b = 0; b < r->B; b++)
		for (int h = 0; h < r->H; h++)
			for (int t = 0; t < r->T1; t++)
				for (int u = 0; u < r->T1; u++) {
					double dq[64], dk[64], ref = 0, got = 0;
					for (int k = 0; k < 2; k++) {	/* R q_t, R k_u */
						int row = k ? u : t;
						const float *x = qkv + ((size_t)b * r->T1 + row) * 3 * D + k * D + h * hd;
						int tr = (r->per_record ? b * r->Tn : 0) + row - skip;
						const float *Rt = dense + ((size_t)pe_set(pe, 0, h) * r->Tr + tr) * hd * hd;
						double *o = k ? dk : dq;
						for (int i = 0; i < hd; i++) {
							o[i] = row < skip ? x[i] : 0;
							for (int j = 0; j < hd && row >= skip; j++)
								o[i] += (double)Rt[i * hd + j] * x[j];
						}
					}
					const float *q = qkr + ((size_t)b * r->T1 + t) * 2 * D + h * hd;
					const float *kk = qkr + ((size_t)b * r->T1 + u) * 2 * D + D + h * hd;
					for (int i = 0; i < hd; i++) {
						ref += dq[i] * dk[i];
						got += (double)q[i] * kk[i];
					}
					err = maxn(err, fabs(got - ref) / (1 + fabs(ref)));
				}
	CHECK(err < 1e-5, "rotary %s%s%s: q' k' of B P^T q, B P^T k are those of P B P^T q, "
	    "P B P^T k (%.2g)", spec, skip ? "" : " CLS rotated", r->per_record ? " per record" : "", err);
	free(dense);
}

/* qcls: the last block's case, only CLS queries read (rotated when cls).
 * An encoding with a basis (string, rope-nd) rotates by B P^T: its
 * forward, and dP, are checked too. */
static void
test_rotary(const char *spec, int cls, int per_record, int qcls)
{
	struct pe pe;
	int B = 3, T1 = 5, H = 2, hd = 16, D = H * hd, Tn = T1 - !cls;
	if (pe_parse(&pe, spec, hd, 2, H, 1, "none") == -1) {
		CHECK(0, "pe_parse %s: %s", spec, pe.err.msg);
		return;
	}
	int Tr = per_record ? B * Tn : Tn;
	float *params = randv(pe.nparam, 1);
	float *pos = randv((size_t)Tr * 2, 1);
	float *R = malloc(sizeof(float) * pe.nset * Tr * pe.rsize);
	float *dR = calloc((size_t)pe.nset * Tr * pe.rsize, sizeof(float));
	struct pe_work w;
	pe_work_init(&w, &pe, Tr);
	pe_rotations(&pe, &w, params, Tr, pos, R);
	size_t nP = pe.basis ? (size_t)pe.nset * hd * hd : 0;
	float *P = malloc(sizeof(float) * (nP + 1)), *dP = calloc(nP + 1, sizeof(float));
	if (pe.basis)
		pe_bases(&pe, &w, params, P);
	struct ro c = { { &pe, B, T1, H, hd, Tn, Tr, per_record, qcls,
	    pe.basis ? P : NULL, pe.basis ? dP : NULL }, R,
	    randv((size_t)B * T1 * 3 * D, 1) };
	size_t ny = (size_t)B * T1 * 2 * D;
	struct layer L = { ro_fwd, calloc(ny, sizeof(float)), ny, randv(ny, 1), &c };
	if (qcls)	/* the loss reads no query but CLS's */
		for (size_t i = 0; i < (size_t)B * T1; i++)
			if (i % T1 != 0)
				memset(L.r + i * 2 * D, 0, sizeof(float) * D);
	float *dqkv = calloc((size_t)B * T1 * 3 * D, sizeof(float));
	if (pe.basis && !qcls)
		dot_products(&c.r, spec, &w, R, L.y, c.qkv);
	if (qcls) {	/* the rows it writes are the full forward's */
		struct rot all = c.r;
		float *y = malloc(sizeof(float) * ny);
		int same = 1;
		all.qcls = 0;
		rotary_forward(&all, 0, R, y, c.qkv);
		rotary_forward(&c.r, 0, R, L.y, c.qkv);
		for (size_t i = 0; i < (size_t)B * T1; i++)
			for (int j = i % T1 ? D : 0; j < 2 * D; j++)
				same &= y[i * 2 * D + j] == L.y[i * 2 * D + j];
		CHECK(same, "rotary %s%s%s CLS query only: its q and k rows are the "
		    "full forward's", spec, cls ? " CLS rotated" : "",
		    per_record ? " per record" : "");
		free(y);
	}
	loss(&L);
	float *dy = malloc(sizeof(float) * ny);	/* the backward may take it */
	memcpy(dy, L.r, sizeof(float) * ny);
	rotary_backward(&c.r, 0, R, dR, dqkv, dy, L.y, c.qkv);
	char what[96];
	snprintf(what, sizeof what, "rotary %s%s%s%s dq, dk", spec,
	    cls ? " CLS rotated" : "", per_record ? " per record" : "",
	    qcls ? " CLS query only" : "");
	/* v columns are not rotary's: compare q, k columns only */
	for (size_t i = 0; i < (size_t)B * T1; i++)
		for (int j = 2 * D; j < 3 * D; j++)
			dqkv[i * 3 * D + j] = 0;
	fd(&L, c.qkv, dqkv, (size_t)B * T1 * 3 * D, what);
	snprintf(what, sizeof what, "rotary %s%s%s%s dR", spec,
	    cls ? " CLS rotated" : "", per_record ? " per record" : "",
	    qcls ? " CLS query only" : "");
	fd(&L, R, dR, (size_t)pe.nset * Tr * pe.rsize, what);
	if (pe.basis) {
		snprintf(what, sizeof what, "rotary %s%s%s%s dP", spec,
		    cls ? " CLS rotated" : "", per_record ? " per record" : "",
		    qcls ? " CLS query only" : "");
		fd(&L, P, dP, nP, what);
	}
	pe_work_free(&w);
	free(params); free(pos); free(R); free(dR); free(c.qkv); free(L.y);
	free(L.r); free(dqkv); free(dy); free(P); free(dP);
}

int
main(void)
{
	rng_seed(&R, 42, 0);
	omp_set_num_threads(1);	/* tiny layers: threads only add overhead */
	test_linear();
	test_gemm_rows();
	test_layernorm();
	test_gelu();
	test_attention(0, 0, 5);
	test_attention(1, 0, 5);
	test_attention(1, 1, 5);
	test_attention(1, 0, 1);
	test_xent();
	test_posemb();
	test_posemb_sample();
	test_ape_centres();
	test_dropout();
	test_rotary("liere:4", 0, 0, 0);
	test_rotary("liere:16", 1, 0, 0);	/* pe_apply_batch vector kernels */
	test_rotary("liere:16", 0, 1, 0);	/* per record: pe_apply */
	test_rotary("riemann", 1, 0, 0);
	test_rotary("liere:16", 1, 0, 1);	/* the last block */
	test_rotary("liere:4", 0, 0, 1);
	test_rotary("liere:16", 1, 1, 1);
	test_rotary("liere:4", 0, 1, 1);
	test_rotary("string", 0, 0, 0);		/* P^T, then B: a basis */
	test_rotary("string", 1, 0, 0);
	test_rotary("string", 0, 1, 0);
	test_rotary("string", 0, 0, 1);
	test_rotary("string", 1, 1, 1);
	test_rotary("rope-nd", 0, 0, 1);
	test_rotary("rope-nd", 1, 1, 0);
	test_colsum();	/* last: the others' draws as before */
	return test_done();
}
