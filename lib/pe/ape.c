/* ape.c - ComRoPE's absolute position embeddings: a learned table over
 * the training grid that the model reads at each token's position, by
 * multilinear interpolation (lib/nn/posemb.c), so that perturbed or
 * offset positions and other resolutions read it too; nothing rotates.
 * Positions as ComRoPE's code: (i + 0.5) / n, the CLS at 0.5 when it has
 * a position.  The table is read as grid_sample reads it with
 * align_corners True and border padding: 0 and 1 are the first and last
 * rows of each axis, positions outside read the border.  Option official
 * reads the table as that code does: its grid_sample takes the
 * coordinates in reverse order, and in 2D a zero first, so a 2D token
 * reads the middle column of its row and a 3D one the table's frame axis
 * at its x and its x axis at its frame.  Option centres moves the corner
 * rule to grid_sample's align_corners False: row i holds the cell centre
 * (i + 0.5) / n, so that the patch centres of the training grid, the
 * positions ComRoPE feeds, read their own rows exactly; outside the
 * centres, the border rows.  Initialised as that code's:
 * normal(0, 1). */
#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"
#include "posemb.h"
#include "rng.h"

/* official: read as ComRoPE's code reads it; centres: rows at the cell
 * centres. */
struct ape {
	int	 official;
	int	 centres;
};

static const struct pe_option options[] = {
	{ "official", PE_OPT_FLAG, 0, offsetof(struct ape, official) },
	{ "centres", PE_OPT_FLAG, 0, offsetof(struct ape, centres) },
	{ 0 },
};

static int
check(struct pe *pe)
{
	const struct ape *o = pe_opts(pe);

	if (o->official && pe->axes == 1)
		return err_set(&pe->err, "ape,official: ComRoPE's code reads "
		    "2 or 3 axes, not 1");
	return 0;
}

/* One row per cell of the grid, no CLS row. */
static int64_t
rows(const int *G, int A)
{
	return posemb_grid_rows(G, A) - 1;
}

static void
init(float *tab, size_t n, struct rng *r)
{
	for (size_t j = 0; j < n; j++)
		tab[j] = (float)rng_normal(r);
}

static void
sample(const struct pe *pe, int *idx, float *w, float *pos, int N, const int *G)
{
	const struct ape *o = pe_opts(pe);
	int A = pe->axes, K = 1 << A;

	for (int n = 0; n < N; n++) {
		float *p = pos + (size_t)n * A, c[3];
		if (o->official) {
			float t = p[0];
			if (A == 2)
				p[1] = 0.5f;
			else {
				p[0] = p[2];
				p[2] = t;
			}
		}
		for (int a = 0; a < A; a++)
			c[a] = o->centres ? p[a] * G[a] - 0.5f : p[a] * (G[a] - 1);
		posemb_corners(c, G, A, 0, idx + (size_t)n * K, w + (size_t)n * K);
	}
}

static const struct pe_table table = {
	.tensor = "pos_table", .rows = rows, .init = init, .sample = sample,
	.backward = posemb_backward,
};

const struct pe_method pe_ape = {
	.name = "ape", .synopsis = "ape[,official][,centres]", .flops_all = "ape",
	.flags = PEM_COMMUTES, .table = &table, .options = options, .check = check,
	.conv = PE_CONV_CENTRE,
};
