/* sincos.c - fixed sine-cosine absolute embeddings (Vaswani et al.; MAE's
 * layout per axis), a table the model adds to the tokens, read by token
 * index (lib/nn/posemb.c); nothing rotates, nothing is learned. */
#include <math.h>
#include <string.h>

#include "pe.h"
#include "pe_method.h"
#include "posemb.h"

/* tab[1+G][D]: per axis a block of 2 floor(D / 2A) channels, sin then cos
 * of the integer cell coordinate times 10000^(-k / half); the CLS row and
 * leftover channels zero. */
static void
fill(const struct pe *pe, float *tab, const int *G, int D)
{
	int A = pe->axes, T = 1, half = D / (2 * A);
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

static const struct pe_table table = {
	.rows = posemb_grid_rows, .fill = fill, .grid = posemb_grid,
	.min_width = 2,
};

const struct pe_method pe_sincos = {
	.name = "sincos", .synopsis = "sincos", .flops_all = "sincos",
	.flags = PEM_COMMUTES, .table = &table,
};
