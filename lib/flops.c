/* flops.c - parameter and multiply-accumulate counts of the ViT (flops(1)). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flops.h"

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

/* The encoding is a learned absolute table (with options or not). */
static int
is_abs(const char *spec)
{
	return strncmp(spec, "abs", 3) == 0 && (spec[3] == '\0' || spec[3] == ',');
}

/* What one encoding costs, per rotation set and token (see flops(1)). */
struct pecost {
	int	 rotary;	/* acts on q and k */
	int	 block;		/* B: rotation block size */
	int	 fixed;		/* same rotations for every head and layer */
	double	 params;	/* learnable numbers per rotation set */
	double	 angles;	/* MACs per token and set: angles / generator sums */
	double	 exps;		/* BxB exponentials per token and set */
	double	 scale;		/* extra MACs per rotated element (RiemannFormer s^p) */
};

static int
pe_cost(const struct vit_config *c, struct pecost *pc, char *err, size_t errlen)
{
	/* Options after a comma (theta=, alpha=, reflect) change no count. */
	const char *spec = c->pe, *comma = strchr(spec, ','), *colon = strchr(spec, ':');
	size_t n, len = comma ? (size_t)(comma - spec) : strlen(spec);
	char bstr[16];
	int hd = c->dim / c->heads, A = c->axes, B = 2;
	double nb, skew;

	memset(pc, 0, sizeof *pc);
	if (colon && colon > spec + len)
		colon = NULL;
	n = colon ? (size_t)(colon - spec) : len;
	if (colon) {
		char *end;
		long b;

		snprintf(bstr, sizeof bstr, "%.*s", (int)(spec + len - colon - 1), colon + 1);
		b = strtol(bstr, &end, 10);
		if (end == bstr || *end || b < 2 || b > hd || hd % b) {
			snprintf(err, errlen, "pe '%s': block size must be 2..%d and divide the head dimension %d",
			    spec, hd, hd);
			return -1;
		}
		B = (int)b;
	}
#define IS(s) (n == strlen(s) && strncmp(spec, s, n) == 0)
	if ((IS("none") || IS("abs") || IS("sincos") || IS("zeros")) && !colon)
		return 0;
	if ((IS("rope-axial") || IS("rope-mixed") || IS("riemann")) && colon) {
		snprintf(err, errlen, "pe '%s': this encoding takes no block size", spec);
		return -1;
	}
	if (!(IS("rope-axial") || IS("rope-mixed") || IS("riemann") || IS("liere") ||
	    IS("comrope-ap") || IS("comrope-ld"))) {
		snprintf(err, errlen, "pe '%s': unknown encoding", spec);
		return -1;
	}
	if ((IS("liere") || IS("comrope-ap") || IS("comrope-ld")) && !colon) {
		snprintf(err, errlen, "pe '%s': needs a block size, e.g. %.*s:8", spec, (int)n, spec);
		return -1;
	}
	if (hd % 2) {
		snprintf(err, errlen, "pe '%s': head dimension %d is odd", spec, hd);
		return -1;
	}
	pc->rotary = 1;
	pc->block = B;
	nb = hd / B;			/* blocks per head */
	skew = B * (B - 1) / 2.0;	/* free entries of a BxB skew block */
	if (IS("rope-axial")) {		/* fixed frequencies, hd/2 angles p_axis * theta */
		pc->fixed = 1;
		pc->angles = hd / 2.0;
	} else if (IS("rope-mixed")) {	/* learned frequencies per axis and pair */
		pc->params = A * hd / 2.0;
		pc->angles = A * hd / 2.0;
	} else if (IS("riemann")) {	/* learned pair angles and scale s^(sum p/2) */
		pc->params = hd / 2.0 + 1;
		pc->angles = hd / 2.0 + 1;
		pc->scale = 1;
	} else if (IS("liere")) {	/* a skew generator per axis and block */
		pc->params = A * nb * skew;
		pc->angles = A * nb * skew;
		pc->exps = nb;
	} else if (IS("comrope-ap")) {	/* each block follows one axis */
		pc->params = nb * skew;
		pc->angles = nb * skew;
		pc->exps = nb;
	} else {			/* comrope-ld: theta_i (P - P^T) per block */
		pc->params = nb * (skew + A);
		pc->angles = nb * (A + skew);
		pc->exps = nb;
	}
#undef IS
	return 0;
}

int
flops_model(const struct vit_config *c, int T, int batch, int count,
    struct flops *f, char *err, size_t errlen)
{
	double D = c->dim, L = c->depth, H = c->heads, M = c->mlp, C = c->classes;
	double P = c->P, N = T + 1.0, hd, grid = 1, sets, Nrot, rowsets;
	struct pecost pc;
	int i;

	memset(f, 0, sizeof *f);
	if (vit_config_check(c, err, errlen) < 0)
		return -1;
	if (T < 1 || batch < 1) {
		snprintf(err, errlen, "need at least one token and one record");
		return -1;
	}
	if (pe_cost(c, &pc, err, errlen) < 0)
		return -1;
	hd = D / H;
	for (i = 0; i < c->axes; i++)
		grid *= c->grid[i] > 0 ? c->grid[i] : 1;

	f->params[FLOPS_PATCH] = P * D + D;
	f->macs[FLOPS_PATCH] = T * P * D;
	f->params[FLOPS_EMBED] = D + (is_abs(c->pe) ? (grid + 1) * D : 0);
	/* Two norms per block on every row, the final one on the pooled rows. */
	f->params[FLOPS_NORM] = (2 * L + 1) * 2 * D;
	f->macs[FLOPS_NORM] = 5 * D * (2 * L * N + (c->pool == VIT_POOL_MEAN ? N : 1));
	f->params[FLOPS_QKV] = L * (3 * D * D + 3 * D);
	f->macs[FLOPS_QKV] = L * N * 3 * D * D;
	f->macs[FLOPS_SCORES] = L * N * N * D;
	f->macs[FLOPS_WEIGHTING] = L * N * N * D;
	f->params[FLOPS_PROJ] = L * (D * D + D);
	f->macs[FLOPS_PROJ] = L * N * D * D;
	f->params[FLOPS_MLP] = L * (2 * D * M + M + D);
	f->macs[FLOPS_MLP] = L * N * 2 * D * M;
	f->params[FLOPS_HEAD] = D * C + C;
	f->macs[FLOPS_HEAD] = D * C;

	/* Rotation sets: one per layer and head unless shared (or fixed). */
	switch (c->share) {
	case VIT_SHARE_HEADS:	sets = L; break;
	case VIT_SHARE_LAYERS:	sets = H; break;
	case VIT_SHARE_ALL:	sets = 1; break;
	default:		sets = L * H; break;
	}
	if (pc.rotary) {
		f->params[FLOPS_PE_ANGLES] = sets * pc.params;
		if (count == FLOPS_PAPER) {
			/* fvcore counts a product broadcast over heads once. */
			int perhead = !pc.fixed && c->share != VIT_SHARE_HEADS &&
			    c->share != VIT_SHARE_ALL;
			f->macs[FLOPS_PE_ROTATE] = L * (perhead ? H : 1) * 2 * N * hd * pc.block;
		} else {
			Nrot = T + (c->cls_rotate ? 1 : 0);
			rowsets = (pc.fixed ? 1 : sets) / batch;
			f->macs[FLOPS_PE_ANGLES] = rowsets * Nrot * pc.angles;
			if (pc.block > 2)
				f->macs[FLOPS_PE_EXP] = rowsets * Nrot * pc.exps *
				    FLOPS_EXPM_PRODUCTS * (double)pc.block * pc.block * pc.block;
			f->macs[FLOPS_PE_ROTATE] = L * H * 2 * Nrot * hd * (pc.block + pc.scale);
		}
	}
	if (c->locality) {
		double Np = T + (c->cls_rotate ? 1 : 0);	/* rows with a position */

		f->params[FLOPS_PE_LOCALITY] = L * H;
		/* Squared distances once; per layer and head the exponent's
		 * scaling and the product with the softmax weights. */
		if (count == FLOPS_FULL)
			f->macs[FLOPS_PE_LOCALITY] = Np * Np * c->axes / batch + L * H * 2 * Np * Np;
	}
	for (i = 0; i < FLOPS_NPART; i++) {
		f->params_total += f->params[i];
		f->macs_total += f->macs[i];
		if (i >= FLOPS_PE_FIRST) {
			f->pe_params += f->params[i];
			f->pe_macs += f->macs[i];
		}
	}
	if (is_abs(c->pe))
		f->pe_params += grid * D + D;
	return 0;
}
