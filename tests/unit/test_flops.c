/* test_flops.c - lib/model/flops.c against the LieRE paper's tables and a
 * configuration counted by hand. */
#include <string.h>

#include "flops.h"
#include "pe.h"
#include "test.h"

/* The LieRE paper's CIFAR-100 setting: 32x32x3 images, 4x4 patches, so 64
 * patch tokens of 48 values, 2 axes, 100 classes. */
static struct vit_config
cifar100(const char *preset, const char *pe)
{
	struct vit_config c;

	vit_config_init(&c);
	vit_preset(&c, preset);
	c.classes = 100;
	c.P = 48;
	c.axes = 2;
	c.grid[0] = c.grid[1] = 8;
	c.pool = VIT_POOL_CLS;
	snprintf(c.pe, sizeof c.pe, "%s", pe);
	return c;
}

static double
gmacs(const struct vit_config *c, int count)
{
	struct flops f;
	struct err e;

	if (flops_model(c, 64, 1, count, &f, &e) < 0) {
		printf("# %s\n", e.msg);
		return -1;
	}
	return f.macs_total / 1e9;
}

/* liere-iclr2025-submission.txt, Table 5 (lines 525-532), columns
 * ViT-Base (85M) and ViT-Large (302M), inference GFLOP, to within 0.2%. */
static void
test_table5(void)
{
	static const struct {
		const char *pe, *row;
		double base, large;
	} t[] = {
		{ "abs", "Abs. Pos. E. (line 528)", 5.607, 19.856 },
		{ "rope-axial", "VisionLlaMA RoPE (line 529)", 5.607, 19.856 },
		{ "rope-mixed", "RoPE-Mixed (line 530)", 5.609, 19.863 },
		{ "liere:8", "LieRE_8 (line 531)", 5.617, 19.882 },
		{ "liere:64", "LieRE_64 (line 532)", 5.684, 20.061 },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct vit_config b = cifar100("base", t[i].pe), l = cifar100("large", t[i].pe);

		CHECK_CLOSE(gmacs(&b, FLOPS_PAPER), t[i].base, 0.002, "Table 5 ViT-B %s", t[i].row);
		CHECK_CLOSE(gmacs(&l, FLOPS_PAPER), t[i].large, 0.002, "Table 5 ViT-L %s", t[i].row);
	}
}

/* Table 2 (lines 308-314): ViT-B LieRE with generators shared across
 * heads costs 5.613G, per head (shared across layers or not) 5.684G. */
static void
test_table2(void)
{
	struct vit_config c = cifar100("base", "liere:64");

	c.share = PE_SHARE_HEADS;
	CHECK_CLOSE(gmacs(&c, FLOPS_PAPER), 5.613, 0.002, "Table 2: shared across heads 5.613G");
	c.share = PE_SHARE_ALL;
	CHECK_CLOSE(gmacs(&c, FLOPS_PAPER), 5.613, 0.002, "Table 2: all shared 5.613G");
	c.share = PE_SHARE_LAYERS;
	CHECK_CLOSE(gmacs(&c, FLOPS_PAPER), 5.684, 0.002, "Table 2: shared across layers 5.684G");
}

/* Section 5.3.2 (line 318): LieRE adds 580k parameters to ViT-B. */
static void
test_liere_params(void)
{
	struct vit_config c = cifar100("base", "liere:64"), n = cifar100("base", "none");
	struct flops f, g;
	struct err e;

	CHECK(flops_model(&c, 64, 1, FLOPS_FULL, &f, &e) == 0, "liere:64 counts");
	CHECK(flops_model(&n, 64, 1, FLOPS_FULL, &g, &e) == 0, "none counts");
	CHECK_CLOSE((f.params_total - g.params_total) / 1e3, 580, 0.005,
	    "LieRE_64 adds 580k parameters to ViT-B (line 318)");
	CHECK(f.pe_params == f.params_total - g.params_total, "pe_params is the difference");
}

/* comrope-ld:8,tied: a layer's heads share one set of multipliers (2 axes
 * x 8 blocks of 8 on heads of 64), counted once: 2 copies of 16 a layer
 * fewer than untied, on ViT-B's 12 heads and 12 layers 12 x 11 x 16. */
static void
test_tied_params(void)
{
	struct vit_config c = cifar100("base", "comrope-ld:8,tied");
	struct vit_config u = cifar100("base", "comrope-ld:8");
	struct flops f, g;
	struct err e;

	CHECK(flops_model(&c, 64, 1, FLOPS_FULL, &f, &e) == 0 &&
	    flops_model(&u, 64, 1, FLOPS_FULL, &g, &e) == 0,
	    "comrope-ld:8 tied and untied count");
	CHECK(g.pe_params - f.pe_params == 12 * 11 * 16, "tied multipliers "
	    "counted once: %.0f fewer parameters than untied (want %d)",
	    g.pe_params - f.pe_params, 12 * 11 * 16);
}

/* D 8, H 2 (head 4), L 1, M 16, C 3, P 12, T 4 (N 5 rows with CLS), 2 axes,
 * liere:4 (one 4x4 block per head, 6 free entries per axis), mean pooling
 * (every row runs through the block), counted by hand from the rules in
 * flops(1); then CLS pooling, where the engine finishes the last block on
 * the CLS row alone. */
static void
test_by_hand(void)
{
	struct vit_config c;
	struct flops f;
	struct err e;

	vit_config_init(&c);
	c.dim = 8, c.heads = 2, c.depth = 1, c.mlp = 16, c.classes = 3, c.P = 12, c.axes = 2;
	c.grid[0] = c.grid[1] = 2;
	c.pool = VIT_POOL_MEAN;
	snprintf(c.pe, sizeof c.pe, "liere:4");
	CHECK(flops_model(&c, 4, 1, FLOPS_FULL, &f, &e) == 0, "tiny model counts");
	CHECK(f.macs[FLOPS_PATCH] == 4 * 12 * 8 && f.params[FLOPS_PATCH] == 12 * 8 + 8, "patch 384 MACs, 104 params");
	CHECK(f.params[FLOPS_EMBED] == 8, "CLS token only: 8 params");
	CHECK(f.macs[FLOPS_NORM] == 5 * 8 * (2 * 5 + 5) && f.params[FLOPS_NORM] == 3 * 16, "norms 600 MACs, 48 params");
	CHECK(f.macs[FLOPS_QKV] == 5 * 8 * 24 && f.params[FLOPS_QKV] == 8 * 24 + 24, "qkv 960 MACs, 216 params");
	CHECK(f.macs[FLOPS_SCORES] == 2 * 5 * 5 * 4 && f.macs[FLOPS_WEIGHTING] == 200, "scores and weighting 200 each");
	CHECK(f.macs[FLOPS_PROJ] == 5 * 64 && f.params[FLOPS_PROJ] == 72, "proj 320 MACs, 72 params");
	CHECK(f.macs[FLOPS_MLP] == 5 * 8 * 16 * 2 && f.params[FLOPS_MLP] == 280, "mlp 1280 MACs, 280 params");
	CHECK(f.macs[FLOPS_HEAD] == 24 && f.params[FLOPS_HEAD] == 27, "head 24 MACs, 27 params");
	/* 2 sets (layer x head) x 2 axes x 6 free entries; per token and set
	 * sum_i p_i G_i over the dense 4x4 block: 2 axes x 16. */
	CHECK(f.params[FLOPS_PE_ANGLES] == 24 && f.macs[FLOPS_PE_ANGLES] == 2 * 4 * 32, "generators 24 params, 256 MACs");
	CHECK(f.macs[FLOPS_PE_EXP] == 2 * 4 * FLOPS_EXPM_PRODUCTS * 64, "one 4x4 exponential per token and set");
	CHECK(f.macs[FLOPS_PE_ROTATE] == 2 * 2 * 4 * 4 * 4, "rotation of q and k of 4 tokens: 256 MACs");
	CHECK(f.params_total == 779, "params total 779 (%.0f)", f.params_total);
	CHECK(f.macs_total == 3968 + 256 + 2 * 4 * FLOPS_EXPM_PRODUCTS * 64 + 256, "MACs total (%.0f)", f.macs_total);

	/* CLS pooling: after q, k, v of the 5 rows, one row. */
	c.pool = VIT_POOL_CLS;
	CHECK(flops_model(&c, 4, 1, FLOPS_FULL, &f, &e) == 0, "CLS pooling");
	CHECK(f.macs[FLOPS_QKV] == 960 && f.macs[FLOPS_SCORES] == 1 * 5 * 8 &&
	    f.macs[FLOPS_WEIGHTING] == 40 && f.macs[FLOPS_PROJ] == 64 && f.macs[FLOPS_MLP] == 256,
	    "CLS pooling: qkv of 5 rows, attention, projection and MLP of 1");
	CHECK(f.macs[FLOPS_NORM] == 5 * 8 * (5 + 1 + 1), "CLS pooling: norms of 5, 1 and 1 rows");
	CHECK(f.macs[FLOPS_PE_ROTATE] == 256, "CLS pooling: q and k still rotated on every row");

	/* The same model under the paper's counting: only the products, every
	 * row (as the reference code), the rotation on CLS too. */
	CHECK(flops_model(&c, 4, 1, FLOPS_PAPER, &f, &e) == 0, "paper counting");
	CHECK(f.macs[FLOPS_SCORES] == 200 && f.macs[FLOPS_MLP] == 1280, "paper: every row through the block");
	CHECK(f.macs[FLOPS_PE_EXP] == 0 && f.macs[FLOPS_PE_ANGLES] == 0 &&
	    f.macs[FLOPS_PE_ROTATE] == 2 * 2 * 5 * 4 * 4, "paper: rotation of 5 rows only");
	CHECK(f.macs[FLOPS_NORM] == 5 * 8 * (2 * 5 + 1), "paper: the final norm on the CLS row only");

	/* A batch sharing positions pays the exponentials once. */
	CHECK(flops_model(&c, 4, 4, FLOPS_FULL, &f, &e) == 0, "batch 4");
	CHECK(f.macs[FLOPS_PE_EXP] == 2 * FLOPS_EXPM_PRODUCTS * 64, "batch 4: a quarter of the exponentials");

	/* ComRoPE's closed form: per set and 4x4 block an eigendecomposition,
	 * per token two products; LD's s one MAC per axis, AP's none. */
	snprintf(c.pe, sizeof c.pe, "comrope-ld:4");
	CHECK(flops_model(&c, 4, 1, FLOPS_FULL, &f, &e) == 0, "comrope-ld:4");
	CHECK(f.macs[FLOPS_PE_EXP] == 2 * (FLOPS_EIG_PRODUCTS + 4 * FLOPS_COMROPE_PRODUCTS) * 64 &&
	    f.macs[FLOPS_PE_ANGLES] == 2 * 4 * 2, "comrope-ld:4: eigendecompositions, 2 products and 2 MACs a token");
	snprintf(c.pe, sizeof c.pe, "comrope-ap:4");
	CHECK(flops_model(&c, 4, 1, FLOPS_FULL, &f, &e) == 0 &&
	    f.macs[FLOPS_PE_ANGLES] == 0, "comrope-ap:4: s is a coordinate, no MACs");
	snprintf(c.pe, sizeof c.pe, "liere:4");

	/* A basis (head 4, 2 sets): rope-mixed's angles and pair rotations,
	 * then per set a Gauss-Jordan inverse of 1.5 * 4^3 MACs (string) or
	 * an exponential of 10 * 4^3 (rope-nd), and P^T on q and k of every
	 * row, 5 rows x 2 heads x 2 x 4 x 4, in both counts. */
	c.pool = VIT_POOL_CLS;
	snprintf(c.pe, sizeof c.pe, "string");
	CHECK(flops_model(&c, 4, 1, FLOPS_FULL, &f, &e) == 0, "string");
	CHECK(f.params[FLOPS_PE_ANGLES] == 2 * (2 * 2 + 6) && f.macs[FLOPS_PE_ANGLES] == 2 * 4 * 2 * 2 &&
	    f.macs[FLOPS_PE_EXP] == 2 * 1.5 * 64 && f.macs[FLOPS_PE_ROTATE] == 2 * 2 * 4 * 4 * 2 + 5 * 2 * 2 * 16,
	    "string: 20 params, 32 MACs of angles, 192 of the bases, 448 of rotations (%.0f %.0f %.0f %.0f)",
	    f.params[FLOPS_PE_ANGLES], f.macs[FLOPS_PE_ANGLES], f.macs[FLOPS_PE_EXP], f.macs[FLOPS_PE_ROTATE]);
	snprintf(c.pe, sizeof c.pe, "rope-nd");
	CHECK(flops_model(&c, 4, 4, FLOPS_FULL, &f, &e) == 0 && f.params[FLOPS_PE_ANGLES] == 12 &&
	    f.macs[FLOPS_PE_EXP] == 2 * 10 * 64 / 4.0, "rope-nd, batch 4: 6 params a set, a quarter of 2 exponentials");
	CHECK(flops_model(&c, 4, 1, FLOPS_PAPER, &f, &e) == 0 &&
	    f.macs[FLOPS_PE_ROTATE] == 2 * 2 * 5 * 4 * 2 + 5 * 2 * 2 * 16 && f.macs[FLOPS_PE_EXP] == 0,
	    "rope-nd, paper: 2 x 2 blocks on every row per head, and P^T (%.0f)", f.macs[FLOPS_PE_ROTATE]);
	snprintf(c.pe, sizeof c.pe, "liere:4");

	/* Locality: distances of the 5 x 5 rows once (2 axes), then scale and
	 * product per head (mean pooling: every query row). */
	snprintf(c.pe, sizeof c.pe, "none");
	c.locality = 1;
	c.pool = VIT_POOL_MEAN;
	CHECK(flops_model(&c, 4, 1, FLOPS_FULL, &f, &e) == 0, "locality");
	CHECK(f.macs[FLOPS_PE_LOCALITY] == 25 * 2 + 2 * 2 * 25 && f.params[FLOPS_PE_LOCALITY] == 2,
	    "locality 150 MACs, one sigma per head");
}

static void
test_sharing_and_specs(void)
{
	struct vit_config c = cifar100("base", "liere:8");
	struct flops f, g;
	struct err e;

	flops_model(&c, 64, 1, FLOPS_FULL, &f, &e);
	c.share = PE_SHARE_ALL;
	flops_model(&c, 64, 1, FLOPS_FULL, &g, &e);
	CHECK(f.pe_params == 144 * g.pe_params, "share all: 1/144 of the generators");
	CHECK(f.macs[FLOPS_PE_ROTATE] == g.macs[FLOPS_PE_ROTATE], "sharing does not spare rotations");
	c = cifar100("base", "rope-axial");
	flops_model(&c, 64, 1, FLOPS_FULL, &f, &e);
	CHECK(f.pe_params == 0 && f.macs[FLOPS_PE_EXP] == 0, "rope-axial: no parameters, no exponentials");

	static const char *const bad[] = { "liere:8,foo=1", "liere:3", "liere:128", "liere:x", "foo",
	    "rope-axial:4", "abs:2", "comrope-ap", "", "liere:,8" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		c = cifar100("base", bad[i]);
		e.msg[0] = 0;
		CHECK(flops_model(&c, 64, 1, FLOPS_FULL, &f, &e) == -1 && strstr(e.msg, "pe '"),
		    "bad spec '%s' refused: %s", bad[i], e.msg);
	}
	c = cifar100("base", "abs");
	c.heads = 7;
	CHECK(flops_model(&c, 64, 1, FLOPS_FULL, &f, &e) == -1, "dim not divisible by heads refused");
	c = cifar100("base", "rope-axial,theta=10000");
	CHECK(flops_model(&c, 64, 1, FLOPS_FULL, &f, &e) == 0, "options after a comma accepted");
	c = cifar100("base", "riemann,alpha=0.2,reflect");
	CHECK(flops_model(&c, 64, 1, FLOPS_FULL, &g, &e) == 0, "riemann with options accepted");
}

/* The parameter count is the engine's: the tensors vit_create lays out,
 * for every encoding, sharing and locality. */
static void
test_engine_params(void)
{
	static const char *const pes[] = { "none", "abs", "sincos", "ape", "zeros", "rope-axial",
	    "rope-mixed", "liere:4", "liere:8", "comrope-ap:4", "comrope-ld:2", "riemann" };

	for (size_t i = 0; i < sizeof pes / sizeof pes[0]; i++)
		for (int loc = 0; loc < 2 * 4; loc++) {
			struct vit_config c;
			struct flops f;
			struct vit *m;
			struct err e;
			double n = 0;

			vit_config_init(&c);
			c.dim = 24, c.depth = 2, c.heads = 3, c.mlp = 40, c.classes = 7, c.P = 12;
			c.grid[0] = 3, c.grid[1] = 5;
			c.dim = 48;	/* head 16 */
			c.locality = loc % 2;
			c.share = loc / 2;
			snprintf(c.pe, sizeof c.pe, "%s", pes[i]);
			m = vit_create(&c, 1, 15, 1, &e);
			CHECK(m != NULL, "vit_create %s share %d%s: %s", pes[i], c.share,
			    c.locality ? " locality" : "", m ? "" : e.msg);
			if (m == NULL)
				continue;
			for (int t = 0; t < m->ntensor; t++)
				n += m->tensor[t].n;
			flops_model(&c, 15, 1, FLOPS_FULL, &f, &e);
			CHECK(f.params_total == n, "%s share %d%s: %.0f parameters, the engine has %.0f",
			    pes[i], c.share, c.locality ? " locality" : "", f.params_total, n);
			vit_destroy(m);
		}
}

/* The matrix products are those vit_flops (lib/model/vit.c, written apart) says
 * the engine runs: FLOPs = 2 MACs. */
static void
test_vit_flops(void)
{
	for (int depth = 1; depth <= 3; depth += 2)
		for (int pool = 0; pool < 2; pool++) {
			struct vit_config c = cifar100("small", "liere:8");
			struct flops f;
			struct err e;
			double mm;

			c.depth = depth;
			c.pool = pool ? VIT_POOL_MEAN : VIT_POOL_CLS;
			flops_model(&c, 49, 1, FLOPS_FULL, &f, &e);
			mm = f.macs[FLOPS_PATCH] + f.macs[FLOPS_QKV] + f.macs[FLOPS_SCORES] +
			    f.macs[FLOPS_WEIGHTING] + f.macs[FLOPS_PROJ] + f.macs[FLOPS_MLP] +
			    f.macs[FLOPS_HEAD];
			CHECK(2 * mm == vit_flops(&c, 1, 49), "depth %d, %s pooling: 2 x %.0f MACs = "
			    "vit_flops %.0f", depth, pool ? "mean" : "CLS", mm, vit_flops(&c, 1, 49));
		}
}

int
main(void)
{
	test_table5();
	test_table2();
	test_liere_params();
	test_tied_params();
	test_by_hand();
	test_sharing_and_specs();
	test_engine_params();
	test_vit_flops();
	return test_done();
}
