/* riemann.c - RiemannFormer (Ji et al. 2025): pair j turns by p_g angle[j]
 * (g = pe_pair_axis), or reflects (option reflect), scaled by
 * s^(sum_i p_i / 2), s = e^w / (e^w + alpha); angle[head_dim/2] then w,
 * the angles at first the rope-axial frequencies, w 0.  Not orthogonal,
 * and the scale breaks R(x)^T R(y) = R(y - x).  Its R is a closed form
 * per token. */
#include <math.h>

#include "pe.h"
#include "pe_conv.h"
#include "pe_init.h"
#include "pe_method.h"

/* theta: the frequency base of the initial angles (default 100); alpha:
 * the scale's constant (default 0.1); reflect: reflection pairs. */
struct riemann {
	double	 theta, alpha;
	int	 reflect;
};

static const struct pe_option options[] = {
	PE_OPTION_THETA(struct riemann),
	{ "alpha", PE_OPT_POSITIVE, 0.1, offsetof(struct riemann, alpha) },
	{ "reflect", PE_OPT_FLAG, 0, offsetof(struct riemann, reflect) },
	{ 0 },
};

static const struct riemann *
opt(const struct pe *pe)
{
	return pe_opts(pe);
}

static int64_t
set_params(const struct pe *pe)
{
	return pe->head_dim / 2 + 1;
}

static void
init(const struct pe *pe, const struct pe_init *ini, struct rng *r, float *p)
{
	int npair = pe->head_dim / 2;

	if (ini->kind == PE_INIT_DEFAULT)
		for (int j = 0; j < npair; j++)
			p[j] = (float)-pe_pair_freq(pe, j, ini->theta > 0 ? ini->theta : opt(pe)->theta);
	else
		pe_fill(ini, r, p, npair);
	p[npair] = 0;		/* w: s = 1 / (1 + alpha) */
}

/* The rotation part (pe_generators: no scale). */
static void
generator(const struct pe *pe, const float *par, int i, int j, double *g)
{
	if (pe_pair_axis(pe, j) == i) {
		g[1] = par[j];
		g[2] = -par[j];
	}
}

/* RiemannFormer's log s = log(e^w / (e^w + alpha)), stable for any w. */
static double
log_s(const struct pe *pe, double w)
{
	return -log1p(opt(pe)->alpha * exp(-w));
}

/* One token's matrix: [npair][2][2]. */
static void
token(const struct pe *pe, const float *par, const double *p, float *R)
{
	int npair = pe->head_dim / 2;
	double sigma = 0;

	for (int i = 0; i < pe->axes; i++)
		sigma += p[i];
	/* sigma 0 gives 1 even when log s is -inf (w far below -700) */
	double c = sigma == 0 ? 1 : exp(0.5 * sigma * log_s(pe, par[npair]));
	for (int j = 0; j < npair; j++) {
		double phi = p[pe_pair_axis(pe, j)] * par[j];
		float *r = R + 4 * j;
		if (opt(pe)->reflect) {
			double c2 = cos(2 * phi), s2 = sin(2 * phi);
			r[0] = (float)(c * c2); r[1] = (float)(c * s2);
			r[2] = (float)(c * s2); r[3] = (float)(-c * c2);
		} else {
			double co = cos(phi), si = sin(phi);
			r[0] = (float)(c * co); r[1] = (float)(c * si);
			r[2] = (float)(-c * si); r[3] = (float)(c * co);
		}
	}
}

static void
token_backward(const struct pe *pe, const float *par, const double *p,
    const float *d, double *dg)
{
	int npair = pe->head_dim / 2;
	double sigma = 0;

	for (int i = 0; i < pe->axes; i++)
		sigma += p[i];
	double ls = log_s(pe, par[npair]);
	double c = sigma == 0 ? 1 : exp(0.5 * sigma * ls), dc = 0;
	for (int j = 0; j < npair; j++, d += 4) {
		int a = pe_pair_axis(pe, j);
		double phi = p[a] * par[j], dphi;
		if (opt(pe)->reflect) {
			double c2 = cos(2 * phi), s2 = sin(2 * phi);
			dc += c2 * d[0] + s2 * d[1] + s2 * d[2] - c2 * d[3];
			dphi = 2 * c * (-s2 * d[0] + c2 * d[1] + c2 * d[2] + s2 * d[3]);
		} else {
			double co = cos(phi), si = sin(phi);
			dc += co * d[0] + si * d[1] - si * d[2] + co * d[3];
			dphi = c * (-si * d[0] + co * d[1] - co * d[2] - si * d[3]);
		}
		dg[j] += p[a] * dphi;
	}
	/* dc/dw = c sigma/2 dlog(s)/dw, dlog(s)/dw = 1 - s */
	dg[npair] += dc * c * 0.5 * sigma * (1 - exp(ls));
}

/* an angle and 4 scalings per pair, and sum_i p_i */
static double
angle_macs(const struct pe *pe)
{
	return 5 * (double)pe->nblock + pe->axes;
}

const struct pe_method pe_riemann = {
	.name = "riemann", .synopsis = "riemann[,alpha=A][,reflect]",
	.flops_all = "riemann",
	.flags = PEM_PAIRS | PEM_NOT_ORTHOGONAL, .options = options,
	.conv = PE_CONV_INTEGER,	/* T_i = s^(-i/2) exp(i X), i a token's index */
	.set_params = set_params, .init = init, .generator = generator,
	.token = token, .token_backward = token_backward, .angle_macs = angle_macs,
};
