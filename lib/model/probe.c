/*
 * probe.c - attention distance and position-similarity maps over a
 * stream, from the engine's probe.
 *
 * Each head's sums run over the records in their order, one thread a
 * head, so the figures do not depend on the thread count.  A batch's
 * scores are remade from the rows the hook is shown, a product per
 * record and head, as attention made them.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "probe.h"

void
probe_init(struct probe *p, const struct vit_config *c, int maxB, int what)
{
	*p = (struct probe){ .what = what, .layers = c->depth, .heads = c->heads,
	    .axes = c->axes, .maxB = maxB, .nthr = omp_get_max_threads() };
}

static int
ascending(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* The distinct coordinates of each axis of pos[T][A], ascending, into
 * p->scratch[A][T] (axis a's first grid[a]); 0 when their grid has T
 * cells, else -1. */
static int
axes_of(struct probe *p, const float *pos, int T, int *grid)
{
	int64_t cells = 1;

	for (int a = 0; a < p->axes; a++) {
		float *u = p->scratch + (size_t)a * T;
		int n = 0;
		for (int t = 0; t < T; t++)
			u[t] = pos[(size_t)t * p->axes + a];
		qsort(u, (size_t)T, sizeof *u, ascending);
		for (int t = 0; t < T; t++)
			if (t == 0 || u[t] != u[n - 1])
				u[n++] = u[t];
		grid[a] = n;
		if ((cells *= n) > T)
			return -1;
	}
	return cells == T ? 0 : -1;
}

/* The index of x among u[n] ascending, or -1. */
static int
find(const float *u, int n, float x)
{
	int lo = 0, hi = n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (u[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && u[lo] == x ? lo : -1;
}

/* cell[T] of a record's pos[T][A] on p's grid, its distinct coordinates
 * in p->scratch (axes_of); 0, or -1 when two tokens share a cell. */
static int
cells_of(struct probe *p, const float *pos, int T, int *cell)
{
	unsigned char *seen = (unsigned char *)(p->scratch + (size_t)p->axes * T);

	memset(seen, 0, (size_t)T);
	for (int t = 0; t < T; t++) {
		int lin = 0, key = 0;
		for (int a = 0; a < p->axes; a++) {
			int c = find(p->scratch + (size_t)a * T, p->grid[a],
			    pos[(size_t)t * p->axes + a]);
			if (c < 0)
				return -1;
			lin = lin * p->grid[a] + c;
			key = key * p->span[a] + c;
		}
		if (seen[lin]++)
			return -1;
		cell[t] = key;
	}
	return 0;
}

/* What depends on the grid, sized for p->grid, of T tokens. */
static int
size_maps(struct probe *p, int T)
{
	int L = p->layers, H = p->heads, A = p->axes;

	p->noff = 1;
	for (int a = 0; a < A; a++)
		p->noff *= p->span[a] = 2 * p->grid[a] - 1;
	p->len = malloc(sizeof(double) * p->noff);
	p->dist = calloc((size_t)L * H, sizeof(double));
	p->queries = calloc((size_t)L * H, sizeof(int64_t));
	if (p->what & PROBE_SIMILARITY) {
		p->score = calloc((size_t)L * H * p->noff, sizeof(double));
		p->S = malloc(sizeof(float) * p->nthr * T * T);
	}
	if (p->len == NULL || p->dist == NULL || p->queries == NULL ||
	    ((p->what & PROBE_SIMILARITY) && (p->score == NULL || p->S == NULL)))
		return -1;
	for (int o = 0; o < p->noff; o++) {
		int d[VIT_MAXAXES];
		double s = 0;
		probe_offset(p, o, d);
		for (int a = 0; a < A; a++)
			s += (double)d[a] * d[a];
		p->len[o] = sqrt(s);
	}
	p->T = T;
	return 0;
}

/* "8x8" of grid[A] into buf[len]. */
static const char *
grid_name(const int *grid, int A, char *buf, size_t len)
{
	int n = 0;

	for (int a = 0; a < A && (size_t)n < len; a++)
		n += snprintf(buf + n, len - (size_t)n, "%s%d", a ? "x" : "", grid[a]);
	return buf;
}

int
probe_batch(struct probe *p, const float *pos, int B, int T, int64_t first,
    struct err *e)
{
	int A = p->axes, grid[VIT_MAXAXES];
	char had[64], got[64];

	if (B > p->maxB)
		return err_set(e, "a batch of %d records: the probe holds %d", B, p->maxB);
	if (p->T == 0) {	/* the first batch: its first record's grid */
		p->scratch = malloc(sizeof(float) * (size_t)A * T + (size_t)T);
		p->cell = malloc(sizeof(int) * (size_t)p->maxB * T);
		if (p->scratch == NULL || p->cell == NULL)
			return err_set(e, "out of memory");
		if (axes_of(p, pos, T, p->grid) < 0)
			return err_set(e, "record %lld: its %d tokens fill no grid",
			    (long long)first + 1, T);
		if (size_maps(p, T) < 0)
			return err_set(e, "out of memory");
	}
	for (int b = 0; b < B; b++) {
		const float *pb = pos + (size_t)b * T * A;
		long long r = first + b + 1;
		if (T != p->T)
			return err_set(e, "record %lld: %d tokens, the first record's %d: one "
			    "map takes one grid", r, T, p->T);
		if (axes_of(p, pb, T, grid) < 0)
			return err_set(e, "record %lld: its %d tokens fill no grid", r, T);
		if (memcmp(grid, p->grid, sizeof(int) * A) != 0)
			return err_set(e, "record %lld: grid %s, the first record's %s: one map "
			    "takes one grid", r, grid_name(grid, A, got, sizeof got),
			    grid_name(p->grid, A, had, sizeof had));
		if (cells_of(p, pb, T, p->cell + (size_t)b * T) < 0)
			return err_set(e, "record %lld: two of its tokens share a cell of its "
			    "%s grid", r, grid_name(grid, A, got, sizeof got));
	}
	p->B = B;
	p->records += B;
	return 0;
}

/* Add head h of the block v shows to p's sums. */
static void
head(struct probe *p, const struct vit_probe *v, int h)
{
	int T = p->T, T1 = T + 1, lh = v->layer * p->heads + h, centre = p->noff / 2;
	float *S = p->S != NULL ? p->S + (size_t)omp_get_thread_num() * T * T : NULL;
	double *sc = p->score != NULL ? p->score + (size_t)lh * p->noff : NULL;

	for (int b = 0; b < v->B; b++) {
		const int *cell = p->cell + (size_t)b * T;
		const float *W = v->w + ((size_t)b * v->H + h) * T1 * T1;
		size_t row1 = ((size_t)b * T1 + 1) * v->ld + (size_t)h * v->hd;
		/* the patch rows' scores, as attention_forward made them */
		if (sc != NULL)
			gemm_one(GEMM_FP32, 0, 1, T, T, v->hd, 1.0f / sqrtf((float)v->hd),
			    v->q + row1, v->ld, v->k + row1, v->ld, 0.0f, S, T);
		for (int m = 0; m < T; m++) {
			const float *w = W + (size_t)(m + 1) * T1 + 1;
			int base = centre - cell[m];
			double ws = 0, wd = 0;
			for (int n = 0; n < T; n++) {
				ws += w[n];
				wd += w[n] * p->len[base + cell[n]];
			}
			for (int n = 0; sc != NULL && n < T; n++)
				sc[base + cell[n]] += S[(size_t)m * T + n];
			if (ws > 0) {	/* else every patch weight underflowed */
				p->dist[lh] += wd / ws;
				p->queries[lh]++;
			}
		}
	}
}

void
probe_hook(void *arg, const struct vit_probe *v)
{
	struct probe *p = arg;

	if (p->err.msg[0])
		return;
	if (v->B != p->B || v->T1 != p->T + 1 || v->H != p->heads) {
		err_set(&p->err, "a forward of %d records of %d tokens, not the %d of %d that "
		    "probe_batch was given", v->B, v->T1 - 1, p->B, p->T);
		return;
	}
	int blas = gemm_solo_begin();
	#pragma omp parallel for num_threads(p->nthr) schedule(dynamic, 1)
	for (int h = 0; h < v->H; h++)
		head(p, v, h);
	gemm_solo_end(blas);
}

double
probe_distance(const struct probe *p, int l, int h)
{
	int lh = l * p->heads + h;
	return p->queries != NULL && p->queries[lh] > 0 ?
	    p->dist[lh] / (double)p->queries[lh] : NAN;
}

double
probe_similarity(const struct probe *p, int l, int h, int o)
{
	int d[VIT_MAXAXES];
	double pairs = (double)p->records;

	/* every record's grid holds prod (grid - |d|) pairs at offset d */
	probe_offset(p, o, d);
	for (int a = 0; a < p->axes; a++)
		pairs *= p->grid[a] - abs(d[a]);
	return p->score[((size_t)l * p->heads + h) * p->noff + o] / pairs;
}

void
probe_offset(const struct probe *p, int o, int *d)
{
	for (int a = p->axes - 1; a >= 0; a--) {
		d[a] = o % p->span[a] - (p->grid[a] - 1);
		o /= p->span[a];
	}
}

void
probe_free(struct probe *p)
{
	free(p->cell);
	free(p->len);
	free(p->dist);
	free(p->queries);
	free(p->score);
	free(p->S);
	free(p->scratch);
	memset(p, 0, sizeof *p);
}
