/*
 * posemb.c - additive position tables (posemb.h): the multilinear
 * interpolation every table encoding reads its table by, the reading by
 * token index on another grid, and the tables' forward and backward.
 */
#include <math.h>
#include <string.h>

#include "posemb.h"

void
posemb_corners(const float *c, const int *G, int A, int base, int *idx, float *w)
{
	int lo[8], K = 1 << A;
	float fr[8];

	for (int a = 0; a < A; a++) {
		float x = c[a] > 0 ? c[a] : 0;	/* NaN (inf * 0 on a 1-cell axis): 0 */
		if (x > G[a] - 1)
			x = G[a] - 1;
		lo[a] = (int)floorf(x);
		if (lo[a] > G[a] - 2)
			lo[a] = G[a] > 1 ? G[a] - 2 : 0;
		fr[a] = G[a] > 1 ? x - lo[a] : 0;
	}
	for (int k = 0; k < K; k++) {
		int row = 0;
		float wt = 1;
		for (int a = 0; a < A; a++) {
			int up = k >> (A - 1 - a) & 1;
			int i = lo[a] + (G[a] > 1 ? up : 0);
			row = row * G[a] + i;
			wt *= up ? fr[a] : 1 - fr[a];
		}
		idx[k] = base + row;
		w[k] = wt;
	}
}

void
posemb_grid(int *idx /* [1+T][K] */, float *w /* [1+T][K] */, const int *G,
    const int *g, int A)
{
	int K = 1 << A, T = 1;
	for (int a = 0; a < A; a++)
		T *= g[a];
	memset(idx, 0, sizeof(int) * K);	/* CLS: row 0 alone */
	memset(w, 0, sizeof(float) * K);
	w[0] = 1;
	for (int t = 0; t < T; t++) {
		int rem = t;
		float c[8];
		/* token coordinates, last axis fastest */
		for (int a = A - 1; a >= 0; a--) {
			int i = rem % g[a];
			rem /= g[a];
			c[a] = (i + 0.5f) * G[a] / g[a] - 0.5f;
		}
		posemb_corners(c, G, A, 1, idx + (size_t)(t + 1) * K, w + (size_t)(t + 1) * K);
	}
}

int64_t
posemb_grid_rows(const int *G, int A)
{
	int64_t n = 1;
	for (int a = 0; a < A; a++)
		n *= G[a];
	return 1 + n;
}

void
posemb_forward(float *h /* [B][R][D] */, const float *tab,
    const int *idx /* [B or 1][R][K] */, const float *w, int per_record,
    int B, int R, int K, int D)
{
	#pragma omp parallel for
	for (int br = 0; br < B * R; br++) {
		size_t e0 = (size_t)(per_record ? br : br % R) * K;	/* its pairs */
		float *r = h + (size_t)br * D;
		for (int k = 0; k < K; k++) {
			float wt = w[e0 + k];
			const float *e = tab + (size_t)idx[e0 + k] * D;
			if (wt != 0)
				for (int i = 0; i < D; i++)
					r[i] += wt * e[i];
		}
	}
}

void
posemb_backward(float *dtab /* += */, const float *dh /* [B][R][D] */,
    const int *idx /* [B or 1][R][K] */, const float *w, int per_record,
    int B, int R, int K, int D)
{
	/* column blocks in parallel, rows and records in order */
	#pragma omp parallel for
	for (int i0 = 0; i0 < D; i0 += 16) {
		int i1 = i0 + 16 < D ? i0 + 16 : D;
		for (int b = 0; b < B; b++)
			for (int t = 0; t < R; t++) {
				int br = b * R + t;
				const float *r = dh + (size_t)br * D;
				size_t e0 = (size_t)(per_record ? br : t) * K;
				for (int k = 0; k < K; k++) {
					float wt = w[e0 + k];
					float *e = dtab + (size_t)idx[e0 + k] * D;
					if (wt == 0)
						continue;
					/* e (the table) and r (dh) never overlap */
					#pragma omp simd
					for (int i = i0; i < i1; i++)
						e[i] += wt * r[i];
				}
			}
	}
}
