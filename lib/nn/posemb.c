/*
 * posemb.c - additive position tables (learned "abs" and fixed "sincos")
 * and their interpolation to another token grid.
 */
#include <math.h>
#include <string.h>

#include "nn.h"

void
posemb_grid(int *idx /* [T][K] */, float *w /* [T][K] */, const int *G,
    const int *g, int A)
{
	int K = 1 << A, T = 1;
	for (int a = 0; a < A; a++)
		T *= g[a];
	for (int t = 0; t < T; t++) {
		int lo[8], rem = t;
		float fr[8];
		/* token coordinates, last axis fastest */
		for (int a = A - 1; a >= 0; a--) {
			int i = rem % g[a];
			rem /= g[a];
			float c = (i + 0.5f) * G[a] / g[a] - 0.5f;
			c = c < 0 ? 0 : c > G[a] - 1 ? G[a] - 1 : c;
			lo[a] = (int)floorf(c);
			if (lo[a] > G[a] - 2)
				lo[a] = G[a] > 1 ? G[a] - 2 : 0;
			fr[a] = G[a] > 1 ? c - lo[a] : 0;
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
			idx[(size_t)t * K + k] = 1 + row;
			w[(size_t)t * K + k] = wt;
		}
	}
}

void
posemb_forward(float *h /* [B][1+T][D] */, const float *tab /* [1+G][D] */,
    const int *idx /* [T][K] */, const float *w /* [T][K] */,
    int B, int T, int K, int D)
{
	#pragma omp parallel for
	for (int bt = 0; bt < B * (T + 1); bt++) {
		int t = bt % (T + 1) - 1;
		float *r = h + (size_t)bt * D;
		if (t < 0) {
			for (int i = 0; i < D; i++)
				r[i] += tab[i];
			continue;
		}
		for (int k = 0; k < K; k++) {
			float wt = w[(size_t)t * K + k];
			const float *e = tab + (size_t)idx[(size_t)t * K + k] * D;
			if (wt != 0)
				for (int i = 0; i < D; i++)
					r[i] += wt * e[i];
		}
	}
}

void
posemb_backward(float *dtab /* [1+G][D] += */, const float *dh /* [B][1+T][D] */,
    const int *idx /* [T][K] */, const float *w /* [T][K] */,
    int B, int T, int K, int D)
{
	/* column blocks in parallel, tokens and records in order */
	#pragma omp parallel for
	for (int i0 = 0; i0 < D; i0 += 16) {
		int i1 = i0 + 16 < D ? i0 + 16 : D;
		for (int b = 0; b < B; b++)
			for (int t = -1; t < T; t++) {
				const float *r = dh + ((size_t)b * (T + 1) + t + 1) * D;
				if (t < 0) {
					for (int i = i0; i < i1; i++)
						dtab[i] += r[i];
					continue;
				}
				for (int k = 0; k < K; k++) {
					float wt = w[(size_t)t * K + k];
					float *e = dtab + (size_t)idx[(size_t)t * K + k] * D;
					if (wt != 0)
						for (int i = i0; i < i1; i++)
							e[i] += wt * r[i];
				}
			}
	}
}

void
posemb_sincos(float *tab /* [1+G][D] */, const int *G, int A, int D)
{
	int T = 1, half = D / (2 * A);
	for (int a = 0; a < A; a++)
		T *= G[a];
	memset(tab, 0, sizeof(float) * (size_t)(T + 1) * D);
	for (int t = 0; t < T; t++) {
		float *r = tab + (size_t)(t + 1) * D;
		int rem = t;
		for (int a = A - 1; a >= 0; a--) {
			int c = rem % G[a];
			rem /= G[a];
			float *blk = r + (size_t)a * 2 * half;
			for (int k = 0; k < half; k++) {
				double om = pow(10000.0, -(double)k / half);
				blk[k] = (float)sin(c * om);
				blk[half + k] = (float)cos(c * om);
			}
		}
	}
}
