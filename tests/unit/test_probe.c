/*
 * test_probe.c - lib/model/probe.h and pe_frequencies against answers
 * made here another way: with zero queries and keys attention is uniform,
 * so the mean attention distance is the mean grid distance over all patch
 * pairs (under locality, its Gaussian-weighted mean), whatever the token
 * order and position convention, in a training model and in a
 * forward-only one; the similarity map of a random model is the mean of
 * scores recomputed from its layer-0 queries and keys, rotated by
 * pe_apply; rope-axial's frequencies are pe_pair_freq's, liere:4's the
 * roots of a 4 x 4 skew block's characteristic polynomial.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "probe.h"
#include "test.h"
#include "vit.h"

enum { GY = 3, GX = 4, T = GY * GX, NB = 3, P = 4, D = 8, H = 2, HD = D / H };

/* Token t of every record sits at cell (perm[t] / GX, perm[t] % GX): a
 * shuffled order, so that the probe's cells come from the positions. */
static const int perm[T] = { 5, 0, 11, 2, 7, 9, 1, 4, 10, 3, 8, 6 };

static void
config(struct vit_config *c, const char *pe, int locality)
{
	vit_config_init(c);
	c->dim = D;
	c->depth = 2;
	c->heads = H;
	c->mlp = 8;
	c->classes = 3;
	c->P = P;
	c->axes = 2;
	c->grid[0] = GY;
	c->grid[1] = GX;
	c->locality = locality;
	c->sigma = 1.5f;
	snprintf(c->pe, sizeof c->pe, "%s", pe);
}

/* pos[NB][T][2] of each token's cell (y, x), scaled by sy, sx (a
 * convention: integer cells at 1, linspace at 1/(G-1)); x[NB][T][P]. */
static void
data(float sy, float sx, float *pos, float *x)
{
	unsigned s = 7;
	for (int b = 0; b < NB; b++)
		for (int t = 0; t < T; t++) {
			pos[(b * T + t) * 2] = sy * (float)(perm[t] / GX);
			pos[(b * T + t) * 2 + 1] = sx * (float)(perm[t] % GX);
		}
	for (int i = 0; i < NB * T * P; i++) {
		s = s * 1103515245u + 12345u;
		x[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1;
	}
}

/* The mean over query cells of the weighted mean distance to every key
 * cell, weights exp(-d^2 / (2 sigma^2)) (sigma 0: uniform). */
static double
grid_distance(double sigma)
{
	double sum = 0;
	for (int m = 0; m < T; m++) {
		double wd = 0, ws = 0;
		for (int n = 0; n < T; n++) {
			double dy = n / GX - m / GX, dx = n % GX - m % GX, d = hypot(dy, dx);
			double w = sigma > 0 ? exp(-d * d / (2 * sigma * sigma)) : 1;
			wd += w * d;
			ws += w;
		}
		sum += wd / ws;
	}
	return sum / T;
}

/* Run the probe over the NB records on m; 0, or -1 (said). */
static int
probe_run(struct vit *m, struct probe *p, int what, const float *pos, const float *x)
{
	struct err e;
	float logits[NB * 3];

	probe_init(p, &m->c, NB, what);
	if (vit_set_probe(m, probe_hook, p, &e) < 0 ||
	    probe_batch(p, pos, NB, T, 0, &e) < 0) {
		CHECK(0, "probe set up: %s", e.msg);
		return -1;
	}
	if (isnan(vit_forward(m, x, pos, NB, T, NULL, logits, 0, 0)) || p->err.msg[0]) {
		CHECK(0, "probe forward: %s %s", m->err.msg, p->err.msg);
		return -1;
	}
	return 0;
}

/* Zero q, k (and v): uniform attention, or locality's Gaussian alone. */
static void
uniform_distance(const char *pe, int locality, int infer, float sy, float sx)
{
	struct vit_config c;
	struct err e;
	struct probe p;
	float pos[NB * T * 2], x[NB * T * P];
	char name[96];
	double want = grid_distance(locality ? 1.5 : 0), worst = 0;

	snprintf(name, sizeof name, "%s%s%s, positions %g %g", pe, locality ? " locality" : "",
	    infer ? " forward-only" : "", sy, sx);
	config(&c, pe, locality);
	struct vit *m = infer ? vit_create_infer(&c, NB, T, &e) : vit_create(&c, NB, T, 3, &e);
	if (m == NULL) {
		CHECK(0, "%s: %s", name, e.msg);
		return;
	}
	for (int l = 0; l < c.depth; l++) {
		char t[64];
		snprintf(t, sizeof t, "blocks.%d.attn.qkv.w", l);
		const struct vit_tensor *w = vit_find_tensor(m, t);
		memset(m->param + w->off, 0, sizeof(float) * w->n);
		snprintf(t, sizeof t, "blocks.%d.attn.log_sigma", l);
		if ((w = vit_find_tensor(m, t)) != NULL)
			for (size_t i = 0; i < w->n; i++)
				m->param[w->off + i] = logf(1.5f);
	}
	data(sy, sx, pos, x);
	if (probe_run(m, &p, PROBE_DISTANCE, pos, x) == 0) {
		for (int l = 0; l < c.depth; l++)
			for (int h = 0; h < H; h++)
				worst = maxn(worst, fabs(probe_distance(&p, l, h) - want));
		CHECK(worst < 1e-5 && p.grid[0] == GY && p.grid[1] == GX,
		    "%s: mean distance %.6f cells in every layer and head (off by %.2g; grid %dx%d)",
		    name, want, worst, p.grid[0], p.grid[1]);
	}
	probe_free(&p);
	vit_destroy(m);
}

/* x W^T + b for rows x[n][in] into y[n][out]. */
static void
affine(const float *x, const float *W, const float *b, int n, int in, int out, float *y)
{
	for (int r = 0; r < n; r++)
		for (int o = 0; o < out; o++) {
			double s = b[o];
			for (int i = 0; i < in; i++)
				s += (double)x[r * in + i] * W[o * in + i];
			y[r * out + o] = (float)s;
		}
}

static const float *
tensor(const struct vit *m, const char *name)
{
	return m->param + vit_find_tensor(m, name)->off;
}

/* The similarity map of a random liere:4 model at layer 0, head 1, offset
 * (dy, dx) against scores recomputed here: patch embedding, LayerNorm,
 * q and k, rotated by pe_apply with the model's generators. */
static void
similarity(int dy, int dx)
{
	struct vit_config c;
	struct err e;
	struct probe p;
	struct pe pe;
	struct pe_work w = { 0 };
	float pos[NB * T * 2], x[NB * T * P], h0[T * D], qkv[T * 3 * D];
	float q[T * HD], k[T * HD], *R = NULL;
	int head = 1;

	config(&c, "liere:4", 0);
	struct vit *m = vit_create(&c, NB, T, 5, &e);
	if (m == NULL) {
		CHECK(0, "similarity: %s", e.msg);
		return;
	}
	/* weights of 0.3: scores that differ visibly between offsets */
	unsigned r = 17;
	for (size_t i = 0; i < m->nparam; i++) {
		r = r * 1103515245u + 12345u;
		m->param[i] += 0.3f * ((float)((r >> 8) & 0xffff) / 32768.0f - 1);
	}
	data(1, 1, pos, x);
	if (probe_run(m, &p, PROBE_DISTANCE | PROBE_SIMILARITY, pos, x) < 0)
		goto out;
	if (pe_parse(&pe, c.pe, HD, 2, H, c.depth, "none") < 0 ||
	    pe_work_init(&w, &pe, T) < 0 ||
	    (R = malloc(sizeof(float) * pe.nset * T * pe.rsize)) == NULL) {
		CHECK(0, "similarity: pe set up: %s", pe.err.msg);
		goto out;
	}
	pe_rotations(&pe, &w, tensor(m, PE_FIELD), T, pos, R);
	const float *Rs = pe_R(&pe, R, pe_set(&pe, 0, head), T);
	double sum = 0;
	int pairs = 0;
	for (int b = 0; b < NB; b++) {
		/* layer 0's input rows of the patches (CLS plays no part) */
		affine(x + b * T * P, tensor(m, "patch.w"), tensor(m, "patch.b"), T, P, D, h0);
		const float *g = tensor(m, "blocks.0.ln1.w"), *be = tensor(m, "blocks.0.ln1.b");
		for (int t = 0; t < T; t++) {
			double mu = 0, var = 0;
			for (int i = 0; i < D; i++)
				mu += h0[t * D + i] / D;
			for (int i = 0; i < D; i++)
				var += (h0[t * D + i] - mu) * (h0[t * D + i] - mu) / D;
			for (int i = 0; i < D; i++)
				h0[t * D + i] = (float)((h0[t * D + i] - mu) / sqrt(var + 1e-6)) * g[i] + be[i];
		}
		affine(h0, tensor(m, "blocks.0.attn.qkv.w"), tensor(m, "blocks.0.attn.qkv.b"),
		    T, D, 3 * D, qkv);
		pe_apply(&pe, T, Rs, qkv + head * HD, 3 * D, q, HD);
		pe_apply(&pe, T, Rs, qkv + D + head * HD, 3 * D, k, HD);
		for (int i = 0; i < T; i++)
			for (int j = 0; j < T; j++) {
				if (perm[j] / GX - perm[i] / GX != dy || perm[j] % GX - perm[i] % GX != dx)
					continue;
				double s = 0;
				for (int d = 0; d < HD; d++)
					s += (double)q[i * HD + d] * k[j * HD + d];
				sum += s / sqrt(HD);
				pairs++;
			}
	}
	int o = ((dy + GY - 1) * (2 * GX - 1)) + dx + GX - 1, d[2];
	probe_offset(&p, o, d);
	CHECK(d[0] == dy && d[1] == dx, "offset %d is (%d, %d), want (%d, %d)", o, d[0], d[1], dy, dx);
	CHECK(pairs == NB * (GY - abs(dy)) * (GX - abs(dx)), "%d pairs at (%d, %d)", pairs, dy, dx);
	CHECK_CLOSE(probe_similarity(&p, 0, head, o), sum / pairs, 1e-4,
	    "layer 0 head %d, offset (%d, %d): the mean score %.6f of %d pairs, recomputed",
	    head, dy, dx, sum / pairs, pairs);
	/* a random model's map is not flat: the check above can fail */
	int o2 = o == 0 ? 1 : 0;
	CHECK(fabs(probe_similarity(&p, 0, head, o2) - probe_similarity(&p, 0, head, o)) > 1e-3,
	    "... and differs from offset %d's (%.6f)", o2, probe_similarity(&p, 0, head, o2));
out:
	free(R);
	pe_work_free(&w);
	probe_free(&p);
	vit_destroy(m);
}

/* probe_batch refuses what is no grid, or not the first record's, and
 * names the record. */
static void
grid_errors(void)
{
	struct vit_config c;
	struct probe p;
	struct err e = { "" };
	float pos[NB * T * 2], x[NB * T * P], wide[NB * 9 * 2];

	config(&c, "none", 0);
	probe_init(&p, &c, NB, PROBE_DISTANCE);
	data(1, 1, pos, x);
	CHECK(probe_batch(&p, pos, NB, T, 0, &e) == 0, "a 3x4 grid: %s", e.msg);
	for (int i = 0; i < NB * 9 * 2; i++)
		wide[i] = (float)(i / 2 % 3);
	CHECK(probe_batch(&p, wide, 1, 9, 3, &e) < 0 &&
	    strcmp(e.msg, "record 4: 9 tokens, the first record's 12: one map takes one grid") == 0,
	    "another token count: %s", e.msg);
	for (int t = 0; t < T; t++) {	/* 2 x 6 */
		pos[T * 2 + t * 2] = (float)(t / 6);
		pos[T * 2 + t * 2 + 1] = (float)(t % 6);
	}
	CHECK(probe_batch(&p, pos, NB, T, 10, &e) < 0 &&
	    strcmp(e.msg, "record 12: grid 2x6, the first record's 3x4: one map takes one grid") == 0,
	    "another grid of as many tokens: %s", e.msg);
	data(1, 1, pos, x);
	pos[(2 * T + 1) * 2] += 0.5f;	/* a fourth y coordinate */
	CHECK(probe_batch(&p, pos, NB, T, 0, &e) < 0 &&
	    strcmp(e.msg, "record 3: its 12 tokens fill no grid") == 0, "no grid: %s", e.msg);
	data(1, 1, pos, x);
	pos[T * 2 + 2] = pos[T * 2];	/* token 1 in token 0's cell, one x left empty */
	pos[T * 2 + 3] = pos[T * 2 + 1];
	CHECK(probe_batch(&p, pos, NB, T, 0, &e) < 0, "two tokens in a cell: %s", e.msg);
	probe_free(&p);
}

static int
ascending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* rope-axial: per axis, its pairs' pe_pair_freq and zeros for the rest. */
static void
spectrum_rope(void)
{
	struct pe pe;
	double f[2 * 8], want[2 * 8] = { 0 };
	float none[1] = { 0 };

	if (pe_parse(&pe, "rope-axial", 16, 2, 1, 1, "none") < 0 || pe_nfreq(&pe) != 8 ||
	    pe_frequencies(&pe, none, f) < 0) {
		CHECK(0, "rope-axial's frequencies: %s", pe.err.msg);
		return;
	}
	for (int j = 0; j < 8; j++)
		want[pe_pair_axis(&pe, j) * 8 + j] = pe_pair_freq(&pe, j, pe_option(&pe, "theta"));
	double worst = 0;
	for (int a = 0; a < 2; a++) {
		qsort(want + a * 8, 8, sizeof *want, ascending);
		for (int k = 0; k < 8; k++)
			worst = maxn(worst, fabs(f[a * 8 + k] - want[a * 8 + k]));
	}
	CHECK(worst < 1e-12 && want[15] == 1 && want[0] == 0,
	    "rope-axial: each axis's frequencies are its pairs' pe_pair_freq (off by %.2g)", worst);
}

/* liere:4: block j of A_i, upper entries a12 a13 a14 a23 a24 a34, has
 * omega^2 the roots of w^2 - (sum of squares) w + Pf^2, Pf = a12 a34 -
 * a13 a24 + a14 a23. */
static void
spectrum_liere(void)
{
	struct pe pe;
	struct pe_init ini = { .seed = 3 };
	double f[2 * 8], want[2 * 8];
	float *U = NULL;

	if (pe_parse(&pe, "liere:4", 16, 2, 2, 1, "none") < 0 ||
	    (U = malloc(sizeof(float) * pe.nparam)) == NULL ||
	    pe_init_params(&pe, &ini, U) < 0 ||
	    pe_frequencies(&pe, U + pe.set_params, f) < 0) {	/* the second set */
		CHECK(0, "liere:4's frequencies: %s", pe.err.msg);
		free(U);
		return;
	}
	const float *u = U + pe.set_params;
	for (int a = 0; a < 2; a++) {
		for (int j = 0; j < 4; j++, u += 6) {
			double s = 0, pf = (double)u[0] * u[5] - (double)u[1] * u[4] +
			    (double)u[2] * u[3];
			for (int i = 0; i < 6; i++)
				s += (double)u[i] * u[i];
			double disc = sqrt(fmax(s * s - 4 * pf * pf, 0));
			want[a * 8 + 2 * j] = sqrt((s - disc) / 2);
			want[a * 8 + 2 * j + 1] = sqrt((s + disc) / 2);
		}
		qsort(want + a * 8, 8, sizeof *want, ascending);
	}
	double worst = 0;
	for (int i = 0; i < 16; i++)
		worst = maxn(worst, fabs(f[i] - want[i]) / want[i]);
	CHECK(worst < 1e-9, "liere:4: frequencies the closed form's roots (relative error %.2g)",
	    worst);
	free(U);
}

int
main(void)
{
	uniform_distance("none", 0, 0, 1, 1);
	uniform_distance("liere:4", 0, 0, 0.5f, 1.0f / 3);	/* linspace-like */
	uniform_distance("rope-axial", 0, 1, 1, 1);
	uniform_distance("abs", 0, 1, 1, 1);
	uniform_distance("rope-axial", 1, 0, 1, 1);
	uniform_distance("rope-axial", 1, 1, 1, 1);
	similarity(1, -2);
	similarity(0, 0);
	grid_errors();
	spectrum_rope();
	spectrum_liere();
	return test_done();
}
