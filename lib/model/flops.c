/* flops.c - parameter and multiply-accumulate counts of the ViT (flops(1)). */
#include <stdlib.h>
#include <string.h>

#include "flops.h"
#include "pe.h"
#include "pe_impl.h"
#include "pe_method.h"

static const struct {
	const char *name, *title;
} parts[FLOPS_NPART] = {
	[FLOPS_PATCH] = { "patch", "patch embedding" },
	[FLOPS_EMBED] = { "embed", "CLS token and position table" },
	[FLOPS_NORM] = { "norm", "layer norms" },
	[FLOPS_QKV] = { "qkv", "QKV projections" },
	[FLOPS_SCORES] = { "scores", "attention scores" },
	[FLOPS_WEIGHTING] = { "weighting", "attention weighting" },
	[FLOPS_PROJ] = { "proj", "output projection" },
	[FLOPS_MLP] = { "mlp", "MLP" },
	[FLOPS_HEAD] = { "head", "classifier head" },
	[FLOPS_PE_ANGLES] = { "pe-angles", "PE angles / generator sums" },
	[FLOPS_PE_EXP] = { "pe-exp", "PE matrix exponentials" },
	[FLOPS_PE_ROTATE] = { "pe-rotate", "PE rotation of q and k" },
	[FLOPS_PE_LOCALITY] = { "pe-locality", "PE locality weights" },
};

const char *
flops_part_name(int part)
{
	return part >= 0 && part < FLOPS_NPART ? parts[part].name : "?";
}

const char *
flops_part_title(int part)
{
	return part >= 0 && part < FLOPS_NPART ? parts[part].title : "?";
}

/*
 * The encoding's own work for one token of one generator set, as lib/pe/pe.c
 * does it: 2x2 blocks take an angle sum_i p_i g_i per block (then a cosine
 * and a sine), larger blocks the dense sum_i p_i G_i over every entry (then
 * an exponential); an encoding that does otherwise says so in its
 * descriptor (riemann, comrope's closed form).
 */
static double
angle_macs(const struct pe *pe)
{
	double N = pe->axes, nb = pe->nblock, b = pe->block;

	if (pe->method->angle_macs)
		return pe->method->angle_macs(pe);
	return b == 2 ? N * nb : N * nb * b * b;
}

int
flops_model(const struct vit_config *c, int T, int batch, int count,
    struct flops *f, struct err *e)
{
	double D = c->dim, L = c->depth, H = c->heads, M = c->mlp, C = c->classes;
	double P = c->P, N = T + 1.0, hd, table, Nrot, sets, Nq, rows;
	struct pe pe;
	int i;

	memset(f, 0, sizeof *f);
	if (vit_config_check(c, e) < 0)
		return -1;
	if (T < 1 || batch < 1)
		return err_set(e, "need at least one token and one record");
	if (pe_parse(&pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) < 0)
		return err_set(e, "pe '%s': %s", c->pe, pe.err.msg);
	hd = D / H;

	f->params[FLOPS_PATCH] = P * D + D;
	f->macs[FLOPS_PATCH] = T * P * D;
	/* a learned table: abs's with a CLS row, ape's without */
	const char *tname;
	table = (double)pe_table_rows(&pe, c->grid, &tname) * D;
	f->params[FLOPS_EMBED] = D + table;
	/* Nq: the rows of the last block after its q, k, v.  Under CLS pooling
	 * the engine carries on with the CLS row only (the head reads nothing
	 * else); the reference code the paper counted runs every row and
	 * normalizes only the pooled one at the end. */
	Nq = count == FLOPS_FULL && c->pool == VIT_POOL_CLS ? 1 : N;
	rows = (L - 1) * N + Nq;	/* rows through attention output and MLP */
	f->params[FLOPS_NORM] = (2 * L + 1) * 2 * D;
	f->macs[FLOPS_NORM] = 5 * D * (L * N + rows + (count == FLOPS_PAPER &&
	    c->pool == VIT_POOL_CLS ? 1 : Nq));
	f->params[FLOPS_QKV] = L * (3 * D * D + 3 * D);
	f->macs[FLOPS_QKV] = L * N * 3 * D * D;
	f->macs[FLOPS_SCORES] = rows * N * D;
	f->macs[FLOPS_WEIGHTING] = rows * N * D;
	f->params[FLOPS_PROJ] = L * (D * D + D);
	f->macs[FLOPS_PROJ] = rows * D * D;
	f->params[FLOPS_MLP] = L * (2 * D * M + M + D);
	f->macs[FLOPS_MLP] = rows * 2 * D * M;
	f->params[FLOPS_HEAD] = D * C + C;
	f->macs[FLOPS_HEAD] = D * C;

	f->params[FLOPS_PE_ANGLES] = (double)(pe.nparam - pe_tied_copies(&pe));
	if (!pe.identity && count == FLOPS_PAPER) {
		/* fvcore counts a product broadcast over the heads once: rotations
		 * shared by the heads, and those without parameters (rope-axial's),
		 * the same for all. */
		int perhead = pe.set_params != 0 && pe.share != PE_SHARE_HEADS &&
		    pe.share != PE_SHARE_ALL;
		f->macs[FLOPS_PE_ROTATE] = L * (perhead ? H : 1) * 2 * N * hd * pe.block;
	} else if (!pe.identity) {
		/* Every set's rotations for the positioned rows, once per batch. */
		Nrot = T + (c->cls_rotate ? 1 : 0);
		sets = (double)pe.nset / batch;
		f->macs[FLOPS_PE_ANGLES] = sets * Nrot * angle_macs(&pe);
		double b3 = (double)pe.block * pe.block * pe.block;
		if (scaled_closed(&pe))	/* per block an eigendecomposition */
			f->macs[FLOPS_PE_EXP] = sets * pe.nblock * (FLOPS_EIG_PRODUCTS +
			    Nrot * FLOPS_COMROPE_PRODUCTS) * b3;
		else if (pe.block > 2)
			f->macs[FLOPS_PE_EXP] = sets * Nrot * pe.nblock * FLOPS_EXPM_PRODUCTS * b3;
		f->macs[FLOPS_PE_ROTATE] = L * H * 2 * Nrot * hd * pe.block;
		if (pe.basis)	/* every set's basis, once per batch */
			f->macs[FLOPS_PE_EXP] += sets * pe.method->basis_macs(&pe);
	}
	/* With a basis, in both counts: P^T on q and k, a product per head
	 * over every row (CLS's too, and the last block's every query: the
	 * same bits as the other blocks'). */
	if (pe.basis)
		f->macs[FLOPS_PE_ROTATE] += L * H * 2 * N * hd * hd;
	if (c->locality) {
		f->params[FLOPS_PE_LOCALITY] = L * H;
		/* Squared distances of the N x N rows once per batch; per head
		 * and query row the weights exp(-d^2 c) and their product with
		 * the softmax weights. */
		if (count == FLOPS_FULL)
			f->macs[FLOPS_PE_LOCALITY] = N * N * c->axes / batch + H * 2 * rows * N;
	}
	for (i = 0; i < FLOPS_NPART; i++) {
		f->params_total += f->params[i];
		f->macs_total += f->macs[i];
		if (i >= FLOPS_PE_FIRST) {
			f->pe_params += f->params[i];
			f->pe_macs += f->macs[i];
		}
	}
	f->pe_params += table;
	return 0;
}
