/*
 * test_pe.c - position encodings: spec parsing, parameter layouts (checked
 * by an independent construction of every method from the documented
 * layout), orthogonality, agreement with the long-double reference, the
 * relative-position identity and its failure for LieRE, gradients against
 * central differences in double, apply and its backward, determinism.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expm.h"
#include "pe.h"
#include "pe_conv.h"
#include "pe_method.h"
#include "refexpm.h"
#include "rng.h"
#include "test.h"
#include "vt.h"

#define HD	16		/* head dimension of the method tests */

/* pe is the encoding named name. */
static int
is(const struct pe *pe, const char *name)
{
	return strcmp(pe->method->name, name) == 0;
}

/* The documented meaning of params, built here without the library:
 * R of block j of one set at position p, in double. */
static void
ref_block(const struct pe *pe, const float *par, const double *p, int j, double *R)
{
	int b = pe->block, N = pe->axes, nb = pe->nblock, npair = HD / 2;
	int k = b * (b - 1) / 2;
	double X[HD * HD] = { 0 };

	if (is(pe, "riemann")) {
		double sig = 0, s = exp(par[npair]) / (exp(par[npair]) + pe_option(pe, "alpha"));
		for (int i = 0; i < N; i++)
			sig += p[i];
		int g = 0;
		while (g + 1 < N && j >= (g + 1) * npair / N)
			g++;
		double phi = p[N - 1 - g] * par[j], c = pow(s, sig / 2);
		if (pe_option(pe, "reflect")) {
			R[0] = c * cos(2 * phi); R[1] = c * sin(2 * phi);
			R[2] = c * sin(2 * phi); R[3] = -c * cos(2 * phi);
		} else {
			R[0] = c * cos(phi); R[1] = c * sin(phi);
			R[2] = -c * sin(phi); R[3] = c * cos(phi);
		}
		return;
	}
	for (int i = 0; i < N; i++) {
		const float *U = NULL;
		double w = p[i];
		/* string's and rope-nd's B: rope-mixed's and rope-axial's */
		if (is(pe, "liere") || is(pe, "rope-mixed") || is(pe, "string")) {
			U = par + (i * nb + j) * k;
		} else if (is(pe, "comrope-ap")) {
			U = j % N == i ? par + j * k : NULL;
		} else if (is(pe, "comrope-ld")) {
			U = par + j * k;
			w *= par[nb * k + i * nb + j];
		} else if (is(pe, "mrope")) {
			/* sections t (3D: a quarter, at least 1), y, x of the
			 * pairs, one frequency ladder across them */
			int size[3] = { npair, 0, 0 }, end = 0, a = 0;
			if (N == 2) {
				size[0] = npair / 2; size[1] = npair - npair / 2;
			} else if (N == 3) {
				size[0] = npair / 4 ? npair / 4 : 1;
				size[1] = (npair - size[0]) / 2;
				size[2] = npair - size[0] - size[1];
			}
			while (j >= end + size[a])
				end += size[a++];
			if (a == i) {
				double f = pow(pe_option(pe, "theta"), -(double)j / npair);
				X[1] -= w * f;
				X[2] += w * f;
			}
		} else if (is(pe, "videorope") && i == 0) {
			/* the whole angle at once: VideoRoPE's layout places (t, y,
			 * x) at t' = delta t, y' = y + delta t, x' = x + delta t; t'
			 * turns the lowest quarter of the frequencies (at least
			 * one pair), y' and x' alternate on the rest; 2D: y, x
			 * alternate on all; 1D: RoPE */
			double dl = pe_option(pe, "delta"), q[3] = { p[0], 0, 0 };
			double f = pow(pe_option(pe, "theta"), -(double)j / npair);
			int nt = N == 3 ? (npair / 4 ? npair / 4 : 1) : 0;
			if (N == 3) {
				q[0] = dl * p[0];
				q[1] = p[1] + dl * p[0];
				q[2] = p[2] + dl * p[0];
			} else if (N == 2) {
				q[0] = p[0];
				q[1] = p[1];
			}
			double ang = N == 1 ? q[0] : j >= npair - nt ? q[0] :
			    q[N - 2 + j % 2];
			X[1] -= f * ang;
			X[2] += f * ang;
		} else if (is(pe, "rope-axial") || is(pe, "rope-nd")) {
			int start = 0, size = 0;
			for (int g = 0; g < N; g++) {
				start = g * npair / N;
				size = (g + 1) * npair / N - start;
				if (j < start + size) {
					if (N - 1 - g == i) {
						double f = pow(pe_option(pe, "theta"), -(double)(j - start) / size);
						X[1] -= w * f;
						X[2] += w * f;
					}
					break;
				}
			}
		}
		if (!U)
			continue;
		for (int r = 0, q = 0; r < b; r++)
			for (int c = r + 1; c < b; c++, q++) {
				X[r * b + c] += w * U[q];
				X[c * b + r] -= w * U[q];
			}
	}
	if (pe->identity) {
		for (int e = 0; e < b * b; e++)
			R[e] = e % (b + 1) == 0;
		return;
	}
	ref_expm(b, X, R);
}

/* sum of W o R over the sets marked in use, every token and block, R
 * from the reference.  A parameter moves only its own set (or its tie
 * group): the other sets cancel in a central difference. */
static double
ref_loss(const struct pe *pe, const float *params, int T, const float *pos, const float *W, const char *use)
{
	double L = 0, R[HD * HD], p[3];
	int bb = pe->block * pe->block;

	for (int s = 0; s < pe->nset; s++)
		for (int t = 0; use[s] && t < T; t++) {
			for (int i = 0; i < pe->axes; i++)
				p[i] = pos[t * pe->axes + i];
			for (int j = 0; j < pe->nblock; j++) {
				ref_block(pe, params + s * pe->set_params, p, j, R);
				const float *w = W + ((int64_t)s * T + t) * pe->rsize + j * bb;
				for (int e = 0; e < bb; e++)
					L += w[e] * R[e];
			}
		}
	return L;
}

/* max over blocks of |A^T B - C| for one token's R (float). */
static double
rel_defect(const struct pe *pe, const float *A, const float *B, const float *C)
{
	int b = pe->block;
	double e = 0;

	for (int j = 0; j < pe->nblock; j++) {
		const float *a = A + j * b * b, *bq = B + j * b * b, *c = C + j * b * b;
		for (int r = 0; r < b; r++)
			for (int s = 0; s < b; s++) {
				double v = 0;
				for (int k = 0; k < b; k++)
					v += (double)a[k * b + r] * bq[k * b + s];
				e = maxn(e, fabs(v - c[r * b + s]));
			}
	}
	return e;
}

static void
test_parse(void)
{
	struct pe pe;
	static const struct { const char *spec; int hd, axes; const char *canon; int64_t set_params; } ok[] = {
		{ "liere:8", 64, 2, "liere:8", 2 * 8 * 28 },
		{ "liere", 16, 3, "liere:16", 3 * 120 },
		{ "rope-mixed", 64, 2, "rope-mixed", 2 * 32 },
		{ "rope-axial", 64, 3, "rope-axial", 0 },
		{ "rope-axial,theta=10000", 64, 2, "rope-axial,theta=10000", 0 },
		{ "mrope", 64, 3, "mrope", 0 },
		{ "mrope,theta=1e6", 6, 3, "mrope,theta=1000000", 0 },
		{ "comrope-ap:4", 64, 2, "comrope-ap:4", 16 * 6 },
		{ "comrope-ld:8", 64, 2, "comrope-ld:8", 8 * 28 + 2 * 8 },
		{ "comrope-ld:8,tied", 64, 2, "comrope-ld:8,tied", 8 * 28 + 2 * 8 },
		{ "riemann", 64, 2, "riemann", 33 },
		{ "riemann,reflect,alpha=0.5", 64, 2, "riemann,alpha=0.5,reflect", 33 },
		{ "none", 64, 2, "none", 0 },
		{ "zeros", 63, 2, "zeros", 0 },
		{ "string", 64, 2, "string", 2 * 32 + 64 * 63 / 2 },
		{ "rope-nd", 64, 3, "rope-nd", 64 * 63 / 2 },
		{ "rope-nd,theta=1e4", 16, 2, "rope-nd,theta=10000", 120 },
		{ "abs", 64, 2, "abs", 0 },
		{ "ape,official", 64, 3, "ape,official", 0 },
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		int r = pe_parse(&pe, ok[i].spec, ok[i].hd, ok[i].axes, 12, 12, "none");
		CHECK(r == 0 && strcmp(pe.spec, ok[i].canon) == 0 && pe.set_params == ok[i].set_params &&
		    pe.nset == 144 && pe.nparam == 144 * ok[i].set_params,
		    "parse '%s' -> '%s', %lld params per set (%s)", ok[i].spec, pe.spec,
		    (long long)pe.set_params, r ? pe.err.msg : "ok");
	}
	static const char *bad[] = { "lire:8", "liere:7", "liere:0", "liere:x", "comrope-ap",
	    "rope-mixed:2", "rope-axial,theta=-1", "liere:8,theta=3", "riemann,reflect=1",
	    "riemann,alpha=", "", "liere:8,", "none:2", "string:2", "string,theta=10",
	    "rope-nd:4", "comrope-ap:4,tied", "liere:8,tied", "comrope-ld:4,tied=1",
	    "abs,official", "ape:2", "ape,official=1" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int r = pe_parse(&pe, bad[i], 64, 2, 12, 12, "none");
		CHECK(r == -1 && pe.err.msg[0], "parse rejects '%s' (%s)", bad[i], pe.err.msg);
	}
	CHECK(pe_parse(&pe, "rope-mixed", 15, 2, 1, 1, NULL) == -1, "rope-mixed needs an even head dim: %s", pe.err.msg);
	CHECK(pe_parse(&pe, "rope-axial", 4, 3, 1, 1, NULL) == -1, "rope-axial needs a pair per axis: %s", pe.err.msg);
	CHECK(pe_parse(&pe, "liere:8", 64, 4, 1, 1, NULL) == -1, "4 axes rejected: %s", pe.err.msg);
	CHECK(pe_parse(&pe, "ape,official", 64, 1, 1, 1, NULL) == -1, "ape,official on 1 axis rejected: %s", pe.err.msg);
	CHECK(pe_parse(&pe, "liere:8", 64, 2, 1, 1, "some") == -1, "unknown sharing rejected: %s", pe.err.msg);

	static const struct { const char *share; int nset, s_l1h2; } sh[] = {
		{ "none", 12 * 3, 1 * 3 + 2 }, { "heads", 12, 1 }, { "layers", 3, 2 }, { "all", 1, 0 } };
	for (int i = 0; i < 4; i++) {
		pe_parse(&pe, "liere:8", 64, 2, 3, 12, sh[i].share);
		CHECK(pe.nset == sh[i].nset && pe_set(&pe, 1, 2) == sh[i].s_l1h2 &&
		    strcmp(pe_share_name(pe.share), sh[i].share) == 0,
		    "share %s: %d sets, layer 1 head 2 -> set %d", sh[i].share, pe.nset, pe_set(&pe, 1, 2));
	}
	pe_parse(&pe, "liere:8", 64, 2, 1, 1, NULL);
	CHECK(!pe.commutes && pe.orthogonal, "liere:8 neither commutes nor is it non-orthogonal");
	pe_parse(&pe, "liere:2", 64, 2, 1, 1, NULL);
	CHECK(pe.commutes, "liere:2 commutes");
	pe_parse(&pe, "riemann", 64, 2, 1, 1, NULL);
	CHECK(!pe.orthogonal && !pe.commutes, "riemann is flagged neither orthogonal nor relative");
	pe_parse(&pe, "comrope-ld:8", 64, 3, 1, 1, NULL);
	CHECK(pe.commutes && pe.orthogonal, "comrope-ld commutes");
	pe_parse(&pe, "string", 64, 3, 1, 1, NULL);
	CHECK(pe.commutes && pe.orthogonal && pe.basis && pe.block == 2, "string: pairs in a basis, commuting");
	pe_parse(&pe, "rope-mixed", 64, 3, 1, 1, NULL);
	CHECK(!pe.basis, "rope-mixed has no basis");
	pe_parse(&pe, "rope-axial", 64, 2, 1, 1, NULL);
	CHECK(pe_pair_axis(&pe, 0) == 1 && pe_pair_axis(&pe, 15) == 1 && pe_pair_axis(&pe, 16) == 0,
	    "rope-axial: first half of the pairs follows x, second y");
	CHECK_CLOSE(pe_pair_freq(&pe, 1, 100), pow(100, -4.0 / 64), 1e-12, "rope-axial frequency 1/theta^(4k/d)");

	/* header keys round trip */
	struct vt s;
	struct pe back;
	vt_init(&s);
	pe_parse(&pe, "riemann,alpha=0.25", 32, 3, 4, 6, "layers");
	CHECK(pe_meta_write(&pe, &s) == 0 && pe_meta_read(&back, &s) == 0 &&
	    strcmp(back.spec, pe.spec) == 0 && back.share == pe.share && back.head_dim == 32 &&
	    back.axes == 3 && back.heads == 4 && back.layers == 6, "header keys round trip (%s)", back.spec);
	vt_free(&s);
	vt_init(&s);
	CHECK(pe_meta_read(&back, &s) == -1 && strstr(back.err.msg, "no PE key"), "no PE key: %s", back.err.msg);
	vt_free(&s);
}

/* Mean and standard deviation of p[n] at stride st (first of each st). */
static void
moments(const float *p, int64_t n, int64_t first, int64_t count, int64_t st,
    double *mean, double *sd)
{
	double s1 = 0, s2 = 0;
	int64_t m = 0;

	for (int64_t b = 0; b + count <= n; b += st)
		for (int64_t i = first; i < first + count; i++, m++) {
			s1 += p[b + i];
			s2 += (double)p[b + i] * p[b + i];
		}
	*mean = s1 / m;
	*sd = sqrt(s2 / m - *mean * *mean);
}

/* The groups of tied scales, by their documented rule: the sets of a
 * layer (share none: layer = set / heads); with share heads a set is its
 * layer's; with share layers or all every set serves every layer. */
static int
tie_group(const struct pe *pe, int set)
{
	return pe->share == PE_SHARE_NONE ? set / pe->heads :
	    pe->share == PE_SHARE_HEADS ? set : 0;
}

/*
 * ComRoPE's defaults as the official code (Longin-Yu/ComRoPE, model.py):
 * the generator's upper entries are P_ij - P_ji of P with normal(0, 1)
 * entries, so normal(0, 2); comrope-ld's multipliers normal(0, 1).  The
 * former default, uniform in [0, 2 pi) with multipliers 1, is --init
 * uniform; the multipliers can be chosen either way; option tied gives
 * the sets of a layer one copy of the multipliers.
 */
static void
test_comrope_init(void)
{
	struct pe pe;
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 9 };
	double mean, sd;

	pe_parse(&pe, "comrope-ap:8", 64, 2, 4, 4, NULL);
	float *a = malloc(sizeof *a * pe.nparam);
	pe_init_params(&pe, &ini, a);
	moments(a, pe.nparam, 0, pe.nparam, pe.nparam, &mean, &sd);
	CHECK(fabs(mean) < 0.05 && fabs(sd - sqrt(2)) < 0.05, "comrope-ap default: entries of "
	    "P - P^T, normal(0, 2) (mean %.3f, sd %.3f of %lld)", mean, sd, (long long)pe.nparam);
	free(a);

	pe_parse(&pe, "comrope-ld:8", 64, 2, 4, 4, NULL);
	int64_t nu = pe.nblock * 28, ns = 2 * pe.nblock;
	a = malloc(sizeof *a * pe.nparam);
	float *b = malloc(sizeof *b * pe.nparam);
	pe_init_params(&pe, &ini, a);
	moments(a, pe.nparam, 0, nu, pe.set_params, &mean, &sd);
	CHECK(fabs(mean) < 0.05 && fabs(sd - sqrt(2)) < 0.05, "comrope-ld default: generator "
	    "entries normal(0, 2) (mean %.3f, sd %.3f)", mean, sd);
	moments(a, pe.nparam, nu, ns, pe.set_params, &mean, &sd);
	CHECK(fabs(mean) < 0.2 && fabs(sd - 1) < 0.15, "comrope-ld default: multipliers "
	    "normal(0, 1) (mean %.3f, sd %.3f of %lld)", mean, sd, (long long)(16 * ns));
	CHECK(memcmp(a + nu, a + pe.set_params + nu, sizeof *a * ns) != 0,
	    "comrope-ld default: each head its own multipliers");

	/* the former default: --init uniform */
	ini.kind = PE_INIT_UNIFORM;
	pe_init_params(&pe, &ini, b);
	int in = 1, ones = 1;
	for (int s = 0; s < pe.nset; s++) {
		for (int64_t i = 0; i < nu; i++)
			in &= b[s * pe.set_params + i] >= 0 && b[s * pe.set_params + i] < 2 * M_PI;
		for (int64_t i = nu; i < nu + ns; i++)
			ones &= b[s * pe.set_params + i] == 1;
	}
	CHECK(in && ones, "comrope-ld --init uniform: entries in [0, 2 pi), multipliers 1");
	ini.multipliers = PE_MULT_NORMAL;
	pe_init_params(&pe, &ini, a);
	moments(a, pe.nparam, nu, ns, pe.set_params, &mean, &sd);
	CHECK(memcmp(a, b, sizeof *a * nu) == 0 && fabs(sd - 1) < 0.15,
	    "uniform with multipliers normal: the same entries, multipliers sd %.3f", sd);
	ini = (struct pe_init){ .kind = PE_INIT_DEFAULT, .seed = 9, .multipliers = PE_MULT_ONES };
	pe_init_params(&pe, &ini, b);
	ones = 1;
	for (int s = 0; s < pe.nset; s++)
		for (int64_t i = nu; i < nu + ns; i++)
			ones &= b[s * pe.set_params + i] == 1;
	CHECK(ones, "default with multipliers ones");
	pe_parse(&pe, "comrope-ap:8", 64, 2, 4, 4, NULL);
	CHECK(pe_init_params(&pe, &ini, a) == -1, "multipliers refused for comrope-ap: %s", pe.err.msg);
	free(a);
	free(b);

	/* tied: one copy per group, the first set's; groups differ */
	static const char *const shares[] = { "none", "heads", "layers", "all" };
	for (int k = 0; k < 4; k++) {
		pe_parse(&pe, "comrope-ld:8,tied", 64, 3, 3, 2, shares[k]);
		int64_t off, n = pe_tied(&pe, &off);
		a = malloc(sizeof *a * pe.nparam);
		ini = (struct pe_init){ .kind = PE_INIT_DEFAULT, .seed = 4 };
		pe_init_params(&pe, &ini, a);
		int same = 1, differ = 1;
		for (int s = 0; s < pe.nset; s++)
			for (int t = 0; t < pe.nset; t++) {
				int eq = memcmp(a + s * pe.set_params + off, a + t * pe.set_params + off,
				    sizeof *a * n) == 0;
				if (tie_group(&pe, s) == tie_group(&pe, t))
					same &= eq;
				else
					differ &= !eq;
			}
		/* a second set's generators differ from the first's, when there
		 * is a second set */
		CHECK(n == 3 * pe.nblock && off == pe.nblock * 28 && same && differ &&
		    (pe.nset == 1 || memcmp(a, a + pe.set_params, sizeof *a * off) != 0),
		    "comrope-ld:8,tied share %s: the multipliers one per layer, the generators "
		    "each set's (%d sets)", shares[k], pe.nset);
		free(a);
	}
}

/*
 * Position conventions (pe_conv.h): each encoding's own, by its paper's
 * code; POS text and back; and the map from any convention into any
 * other, exact at every patch of the grid, whatever n0, range or grid.
 */
static void
test_conv(void)
{
	static const struct { const char *spec; int kind; } own[] = {
		{ "liere:8", PE_CONV_LINSPACE }, { "rope-axial", PE_CONV_INTEGER },
		{ "rope-mixed", PE_CONV_INTEGER }, { "riemann", PE_CONV_INTEGER },
		{ "mrope", PE_CONV_INTEGER }, { "string", PE_CONV_INTEGER },
		{ "rope-nd", PE_CONV_INTEGER }, { "comrope-ap:8", PE_CONV_CENTRE },
		{ "comrope-ld:8", PE_CONV_CENTRE }, { "none", PE_CONV_NONE },
		{ "zeros", PE_CONV_NONE }, { "abs", PE_CONV_NONE }, { "sincos", PE_CONV_NONE },
	};
	struct pe pe;
	struct pe_conv c;
	char buf[256];
	struct err e;

	for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
		pe_parse(&pe, own[i].spec, 64, 2, 1, 1, NULL);
		CHECK(pe_conv_native(&pe) == own[i].kind, "%s takes %s positions", own[i].spec,
		    pe_conv_name(pe_conv_native(&pe)));
	}
	for (const struct pe_method *const *m = pe_methods; *m; m++) {
		pe_parse(&pe, (*m)->flags & PEM_BLOCK ? "liere:8" : (*m)->name, 64, 2, 1, 1, NULL);
		pe.method = *m;
		CHECK(pe_conv_native(&pe) != PE_CONV_NONE || (*m)->table || ((*m)->flags & PEM_IDENTITY),
		    "%s: a rotary encoding names the positions it takes (%s)", (*m)->name,
		    pe_conv_name(pe_conv_native(&pe)));
	}
	CHECK(pe_conv_parse_name("center") == PE_CONV_CENTRE && pe_conv_parse_name("grid") == -1 &&
	    pe_conv_parse_name("none") == -1, "convention names");

	/* the documented positions of a 5-patch axis and a 1-patch one */
	c = (struct pe_conv){ .kind = PE_CONV_LINSPACE, .axes = 2, .grid = { 5, 1 },
	    .n0 = { 3, 1 } };
	CHECK(pe_conv_coord(&c, 0, 4) == 4 * (5 / 3.0) / 4 && pe_conv_step(&c, 0) == (5 / 3.0) / 4 &&
	    pe_conv_coord(&c, 1, 0) == 0, "linspace: i (n/n0)/(n-1)");
	c.kind = PE_CONV_CENTRE;
	CHECK(pe_conv_coord(&c, 0, 2) == 0.5 && pe_conv_step(&c, 0) == 0.2 &&
	    pe_conv_coord(&c, 1, 0) == 0.5, "centre: (i + 0.5)/n");
	c.kind = PE_CONV_FIXED, c.lo = -1, c.hi = 3;
	CHECK(pe_conv_coord(&c, 0, 3) == 2 && pe_conv_step(&c, 0) == 1 &&
	    pe_conv_coord(&c, 1, 0) == -1, "fixed: lo + (hi - lo) i/(n-1)");
	c.kind = PE_CONV_INTEGER;
	CHECK(pe_conv_coord(&c, 0, 3) == 3 && pe_conv_step(&c, 0) == 1, "integer: i");

	/* POS text round trip; posgen's augmentations read past */
	static const char *const pos[] = { "integer grid=7x7", "linspace n0=7x7 grid=14x14",
	    "centre grid=4x7x7", "fixed range=-1,2.5 grid=3x5", "linspace n0=2x4x4 grid=3x5x5" };
	for (size_t i = 0; i < sizeof pos / sizeof *pos; i++) {
		snprintf(buf, sizeof buf, "%s perturb=1 offset=0.1 seed=3", pos[i]);
		int r = pe_conv_parse(&c, buf, NULL, &e);
		pe_conv_format(&c, buf, sizeof buf);
		CHECK(r == 0 && strcmp(buf, pos[i]) == 0, "POS '%s' read and written back: '%s' %s",
		    pos[i], buf, r ? e.msg : "");
	}
	CHECK(pe_conv_parse(&c, "linspace n0=7x7", "7x7", &e) == 0 && c.axes == 2 &&
	    c.grid[1] == 7 && c.n0[0] == 7, "a POS without grid= takes the GRID key's");
	static const char *const bad[][2] = { { "grid", "7x7" }, { "linspace n0=7x7", NULL },
	    { "linspace n0=7x7x7 grid=7x7", NULL }, { "fixed range=2,1 grid=3", NULL },
	    { "fixed range=0 grid=3", NULL }, { "centre grid=0x3", NULL }, { NULL, "7x7" } };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		CHECK(pe_conv_parse(&c, bad[i][0], bad[i][1], &e) == -1 && e.msg[0],
		    "POS '%s' GRID '%s' refused: %s", bad[i][0] ? bad[i][0] : "(none)",
		    bad[i][1] ? bad[i][1] : "(none)", e.msg);

	/* the map: native(i) = scale * from(i) + shift on every patch */
	double worst = 0;
	int maps = 0;
	for (size_t i = 0; i < sizeof pos / sizeof *pos; i++)
		for (int to = PE_CONV_INTEGER; to <= PE_CONV_CENTRE; to++) {
			double scale[3], shift[3];
			pe_conv_parse(&c, pos[i], NULL, &e);
			pe_conv_map(&c, to, NULL, scale, shift);
			struct pe_conv n = c;
			n.kind = to;
			for (int a = 0; a < c.axes; a++) {
				n.n0[a] = (double)c.grid[a];
				for (int64_t k = 0; k < c.grid[a]; k++)
					worst = maxn(worst, fabs(scale[a] * pe_conv_coord(&c, a, k) +
					    shift[a] - pe_conv_coord(&n, a, k)));
			}
			maps++;
		}
	CHECK(worst < 1e-12, "%d maps exact on every patch (%.2g)", maps, worst);
	c = (struct pe_conv){ .kind = PE_CONV_LINSPACE, .axes = 1, .grid = { 7 }, .n0 = { 7 } };
	double sc, sh;
	pe_conv_map(&c, PE_CONV_LINSPACE, NULL, &sc, &sh);
	CHECK(sc == 1 && sh == 0, "linspace 0 .. 1 is LieRE's own: the identity");
	pe_conv_map(&c, PE_CONV_INTEGER, NULL, &sc, &sh);
	CHECK(sc == 6 && sh == 0, "linspace on 7 patches into integer: 6 p");
	/* at another resolution: 9 patches of a model trained on 7 */
	c = (struct pe_conv){ .kind = PE_CONV_LINSPACE, .axes = 1, .grid = { 9 }, .n0 = { 7 } };
	int n0[1] = { 7 };
	double wi = 0, wc = 0, wl = 0;
	for (int k = 0; k < 9; k++) {
		double p = pe_conv_coord(&c, 0, k);
		pe_conv_map(&c, PE_CONV_INTEGER, n0, &sc, &sh);
		wi = maxn(wi, fabs(sc * p + sh - k));
		pe_conv_map(&c, PE_CONV_CENTRE, n0, &sc, &sh);
		wc = maxn(wc, fabs(sc * p + sh - (k + 0.5) / 9));
		pe_conv_map(&c, PE_CONV_LINSPACE, n0, &sc, &sh);
		wl = maxn(wl, fabs(sc * p + sh - p));
	}
	CHECK(wi < 1e-12 && wc < 1e-12 && wl < 1e-12, "9 patches, trained on 7: "
	    "integer i, centre (i + 0.5)/9, linspace as given (%.2g %.2g %.2g)",
	    wi, wc, wl);

	CHECK(pe_conv_check("linspace n0=7x7", "linspace n0=7x7 grid=14x14", &e) == 0 &&
	    pe_conv_check("grid", "integer", &e) == 0 &&
	    pe_conv_check("centre grid=7x7", NULL, &e) == 0,
	    "a stream of the training convention or of an unknown one suits a model");
	CHECK(pe_conv_check("linspace n0=7x7", "integer grid=7x7", &e) == -1 &&
	    strstr(e.msg, "integer") && strstr(e.msg, "as if they were linspace ones (posgen -c "
	    "linspace makes those)"), "another convention does not, and the message says what "
	    "the model takes: %s", e.msg);
}

static void
test_init(void)
{
	struct pe pe;
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 7 };

	pe_parse(&pe, "liere:8", 64, 2, 2, 2, NULL);
	float *a = malloc(sizeof *a * pe.nparam), *b = malloc(sizeof *b * pe.nparam);
	pe_init_params(&pe, &ini, a);
	int in = 1;
	for (int64_t i = 0; i < pe.nparam; i++)
		in &= a[i] >= 0 && a[i] < 2 * M_PI;
	CHECK(in, "liere default init: entries in [0, 2 pi)");
	pe_init_params(&pe, &ini, b);
	CHECK(memcmp(a, b, sizeof *a * pe.nparam) == 0, "init is reproducible");
	ini.seed = 8;
	pe_init_params(&pe, &ini, b);
	CHECK(memcmp(a, b, sizeof *a * pe.nparam) != 0, "another seed, other values");
	CHECK(memcmp(a, a + pe.set_params, sizeof *a * pe.set_params) != 0, "sets differ");
	ini = (struct pe_init){ .kind = PE_INIT_NORMAL, .std = 0.5, .seed = 1 };
	pe_init_params(&pe, &ini, a);
	double m2 = 0;
	for (int64_t i = 0; i < pe.nparam; i++)
		m2 += a[i] * a[i];
	CHECK_CLOSE(sqrt(m2 / pe.nparam), 0.5, 0.1, "normal init: std 0.5 (%.3f)", sqrt(m2 / pe.nparam));
	ini.std = 0;
	CHECK(pe_init_params(&pe, &ini, a) == -1, "normal init without std rejected: %s", pe.err.msg);
	free(a);
	free(b);

	/* RoPE-Mixed: |f| = 10^(-k/K) per pair along orthonormal directions */
	for (int N = 2; N <= 3; N++) {
		pe_parse(&pe, "rope-mixed", 64, N, 1, 2, NULL);
		a = malloc(sizeof *a * pe.nparam);
		ini = (struct pe_init){ .kind = PE_INIT_DEFAULT, .seed = 3 };
		pe_init_params(&pe, &ini, a);
		double emag = 0, eorth = 0;
		for (int j = 0; j < 32; j++) {
			double m = 0;
			for (int i = 0; i < N; i++)
				m += a[i * 32 + j] * a[i * 32 + j];
			emag = maxn(emag, fabs(sqrt(m) - pe_pair_freq(&pe, j, 10)));
			for (int j2 = 0; j2 < 32; j2++) {
				if (pe_pair_group(&pe, j2) == pe_pair_group(&pe, j))
					continue;
				double d = 0;
				for (int i = 0; i < N; i++)
					d += a[i * 32 + j] * a[i * 32 + j2];
				eorth = maxn(eorth, fabs(d));
			}
		}
		CHECK(emag < 1e-6 && eorth < 1e-6, "rope-mixed %dD init: magnitudes 10^(-k/K), groups orthogonal (%.2g, %.2g)",
		    N, emag, eorth);
		CHECK(memcmp(a, a + pe.set_params, sizeof *a * pe.set_params) != 0, "rope-mixed %dD: each set its own direction", N);
		free(a);
	}
	test_comrope_init();
}

/* What test_method measures of R[nset][3T] for tokens x, y, y - x: the
 * largest error against the long-double reference, |R^T R - I|, the
 * range of det R, and the relative-position defect over the pairs. */
struct props {
	double	 eref, eorth, detlo, dethi, defect;
};

static struct props
props(const struct pe *pe, const float *params, int T, int axes, const float *pos,
    const float *R)
{
	struct props pr = { 0, 0, 1e9, -1e9, 0 };
	int b = pe->block, bb = b * b;
	double Rd[HD * HD], p[3];

	for (int s = 0; s < pe->nset; s++)
		for (int t = 0; t < 3 * T; t++) {
			for (int i = 0; i < axes; i++)
				p[i] = pos[t * axes + i];
			for (int j = 0; j < pe->nblock; j++) {
				const float *q = R + ((int64_t)s * 3 * T + t) * pe->rsize + j * bb;
				double blk[HD * HD];
				ref_block(pe, params + s * pe->set_params, p, j, Rd);
				for (int e = 0; e < bb; e++) {
					pr.eref = maxn(pr.eref, fabs(q[e] - Rd[e]));
					blk[e] = q[e];
				}
				pr.eorth = maxn(pr.eorth, orth_err(b, blk));
				double d = det(b, blk);
				pr.detlo = minn(pr.detlo, d);
				pr.dethi = maxn(pr.dethi, d);
			}
		}
	/* relative position: R(x)^T R(y) = R(y - x) */
	for (int s = 0; s < pe->nset; s++)
		for (int t = 0; t < T; t++) {
			const float *Rs = R + (int64_t)s * 3 * T * pe->rsize;
			pr.defect = maxn(pr.defect, rel_defect(pe, Rs + t * pe->rsize,
			    Rs + (T + t) * pe->rsize, Rs + (2 * T + t) * pe->rsize));
		}
	return pr;
}

/* Standard deviation of PE_INIT_NORMAL in test_method: small values make
 * near-equal eigenvalues (ComRoPE's closed form takes its series there). */
static double init_std = 0.7;
/* test_method's T: 3 T tokens at x, y and y - x */
static int ntok = 5;

/* One method: forward against the reference, orthogonality, relative
 * position identity, gradient against central differences, determinism. */
static void
test_method(const char *spec, int axes, const char *share, int init, int grid)
{
	struct pe pe;
	struct pe_work w;
	struct rng r;
	const int T = ntok;

	if (pe_parse(&pe, spec, HD, axes, 2, 2, share) < 0) {
		CHECK(0, "%s: %s", spec, pe.err.msg);
		return;
	}
	CHECK(pe_work_init(&w, &pe, 3 * T) == 0, "%s: workspace", spec);
	int64_t nR = pe.nset * 3 * T * pe.rsize;
	float *params = malloc(sizeof(float) * (pe.nparam + 1)), *pos = malloc(sizeof(float) * 3 * T * axes);
	float *R = malloc(sizeof(float) * nR), *R2 = malloc(sizeof(float) * nR);
	float *W = malloc(sizeof(float) * nR), *dp = calloc(pe.nparam + 1, sizeof(float));
	float *dp2 = calloc(pe.nparam + 1, sizeof(float));
	struct pe_init ini = { .kind = init, .std = init_std, .seed = 11 };

	CHECK(pe_init_params(&pe, &ini, params) == 0, "%s: init", spec);
	rng_seed(&r, 5, 0);
	/* tokens x (0 .. T-1), y (T .. 2T-1), y - x (2T .. 3T-1) */
	for (int t = 0; t < T; t++)
		for (int i = 0; i < axes; i++) {
			float x = (float)(2 * rng_uniform(&r) - 0.5), y = (float)(2 * rng_uniform(&r) - 0.5);
			if (grid) {	/* exact multiples and repeats: rays */
				x = 0.375f * (float)rng_below(&r, 4);
				y = 0.375f * (float)rng_below(&r, 4);
			}
			pos[t * axes + i] = x;
			pos[(T + t) * axes + i] = y;
			pos[(2 * T + t) * axes + i] = y - x;
		}
	pe_rotations(&pe, &w, params, 3 * T, pos, R);
	struct props pr = props(&pe, params, T, axes, pos, R);
	CHECK(pr.eref < 1e-6, "%s %dD share %s%s: R agrees with the long-double reference (%.2g)", spec, axes, share,
	    grid ? " on a grid" : "", pr.eref);
	if (pe.orthogonal) {
		CHECK(pr.eorth < 1e-6, "%s %dD: |R^T R - I| = %.2g", spec, axes, pr.eorth);
		CHECK(fabs(pr.detlo - 1) < 1e-5 && fabs(pr.dethi - 1) < 1e-5, "%s %dD: det in [%.7f, %.7f]", spec, axes, pr.detlo, pr.dethi);
	}
	if (pe.commutes)
		CHECK(pr.defect < 1e-5, "%s %dD: R(x)^T R(y) = R(y - x) (defect %.2g)", spec, axes, pr.defect);
	else if (init != PE_INIT_ZEROS)
		CHECK(pr.defect > 1e-2, "%s %dD: R(x)^T R(y) != R(y - x) (defect %.2g)", spec, axes, pr.defect);

	/* gradient: L = sum W o R; dL/dparams against central differences
	 * of the double reference.  LieRE's blocks wider than 2 run the
	 * backward in float: 1e-4 relative leaves room for float rounding
	 * summed over 3T tokens (measured up to 1.3e-5) and none for a wrong
	 * term; ComRoPE's closed form is double (measured up to 1.9e-6). */
	for (int64_t e = 0; e < nR; e++)
		W[e] = (float)(2 * rng_uniform(&r) - 1);
	pe_rotations_backward(&pe, &w, params, 3 * T, pos, R, W, dp);
	double gerr = 0, gmax = 0;
	int64_t toff, ntied = pe_tied(&pe, &toff);
	/* tied: every parameter, the copies of one moved together, each
	 * copy's gradient the group's */
	int64_t nsample = pe.nparam < 24 || ntied ? pe.nparam : 24;
	char *use = malloc(pe.nset);
	for (int64_t q = 0; q < nsample; q++) {
		int64_t e = q * pe.nparam / nsample + (q * 7) % (pe.nparam / nsample);
		int64_t in = e % pe.set_params;
		int tied = ntied && in >= toff && in < toff + ntied;
		float save = params[e];
		for (int s = 0; s < pe.nset; s++)
			use[s] = tied ? tie_group(&pe, s) == tie_group(&pe, (int)(e / pe.set_params)) : s == e / pe.set_params;
		double h = 1e-6 * fmax(1, fabs(save)), fp, fm;
		/* the steps actually taken in float */
		float *pp = params;
		double x0 = save;
		pp[e] = (float)(x0 + h); double hp = (double)pp[e] - x0;
		for (int s = 0; tied && s < pe.nset; s++)
			if (tie_group(&pe, s) == tie_group(&pe, (int)(e / pe.set_params)))
				pp[s * pe.set_params + in] = pp[e];
		fp = ref_loss(&pe, params, 3 * T, pos, W, use);
		pp[e] = (float)(x0 - h); double hm = x0 - (double)pp[e];
		for (int s = 0; tied && s < pe.nset; s++)
			if (tie_group(&pe, s) == tie_group(&pe, (int)(e / pe.set_params)))
				pp[s * pe.set_params + in] = pp[e];
		fm = ref_loss(&pe, params, 3 * T, pos, W, use);
		pp[e] = save;
		for (int s = 0; tied && s < pe.nset; s++)
			if (tie_group(&pe, s) == tie_group(&pe, (int)(e / pe.set_params)))
				pp[s * pe.set_params + in] = save;
		double fd = (fp - fm) / (hp + hm);
		gerr = maxn(gerr, fabs(fd - dp[e]) / fmax(1, fabs(fd)));
		gmax = maxn(gmax, fabs(fd));
	}
	free(use);
	if (pe.nparam)
		CHECK(gerr < (pe.block > 2 && is(&pe, "liere") ? 1e-4 : 1e-5), "%s %dD share %s%s: gradient (%lld params, %lld sampled) matches central differences (rel %.2g, max |g| %.3g)",
		    spec, axes, share, grid ? " on a grid" : "", (long long)pe.nparam, (long long)nsample, gerr, gmax);

	/* determinism: one thread and two give the same bytes */
	struct pe_work w1;
	int nt = omp_get_max_threads();
	omp_set_num_threads(1);
	pe_work_init(&w1, &pe, 3 * T);
	pe_rotations(&pe, &w1, params, 3 * T, pos, R2);
	pe_rotations_backward(&pe, &w1, params, 3 * T, pos, R2, W, dp2);
	omp_set_num_threads(nt);
	CHECK(memcmp(R, R2, sizeof(float) * nR) == 0 && memcmp(dp, dp2, sizeof(float) * pe.nparam) == 0,
	    "%s %dD: same bytes on 1 and %d threads", spec, axes, nt);
	if (ntied) {	/* a second call adds to the first: copies stay equal */
		pe_rotations_backward(&pe, &w1, params, 3 * T, pos, R2, W, dp2);
		int eq = 1;
		for (int s = 0; s < pe.nset; s++)
			for (int64_t e = toff; e < toff + ntied; e++) {
				int f = 0;
				while (tie_group(&pe, f) != tie_group(&pe, s))
					f++;
				eq &= dp2[s * pe.set_params + e] == dp2[f * pe.set_params + e] &&
				    fabs(dp2[s * pe.set_params + e] - 2 * dp[s * pe.set_params + e]) <=
				    1e-6 * fmax(1, fabs(dp[s * pe.set_params + e]));
			}
		CHECK(eq, "%s %dD share %s: the tied copies' gradients equal, and accumulate",
		    spec, axes, share);
	}
	pe_work_free(&w1);

	/* the engine's float forward (w.f32: blocks of 16 and more, and of
	 * 4 to 16 through 16 lanes at once; others stay double): the same
	 * properties within float rounding grown by the squarings (measured
	 * up to 6.5e-6 at LieRE's init), and the same gradient from its R
	 * (read along rays: on grids) */
	if ((pe.block % 16 == 0 || (pe.block % 4 == 0 && pe.block < 16)) &&
	    !is(&pe, "riemann") && pe.nparam) {
		w.f32 = 1;
		for (int64_t e = 0; e < nR; e++)	/* every R written anew */
			R2[e] = NAN;
		pe_rotations(&pe, &w, params, 3 * T, pos, R2);
		struct props pf = props(&pe, params, T, axes, pos, R2);
		CHECK(pf.eref < 3e-5, "%s %dD share %s%s, float: R agrees with the long-double reference (%.2g)",
		    spec, axes, share, grid ? " on a grid" : "", pf.eref);
		if (pe.orthogonal) {
			CHECK(pf.eorth < 3e-5, "%s %dD, float: |R^T R - I| = %.2g", spec, axes, pf.eorth);
			CHECK(fabs(pf.detlo - 1) < 1e-4 && fabs(pf.dethi - 1) < 1e-4, "%s %dD, float: det in [%.7f, %.7f]",
			    spec, axes, pf.detlo, pf.dethi);
		}
		if (pe.commutes)
			CHECK(pf.defect < 3e-5, "%s %dD, float: R(x)^T R(y) = R(y - x) (defect %.2g)", spec, axes, pf.defect);
		memset(dp2, 0, sizeof(float) * pe.nparam);
		pe_rotations_backward(&pe, &w, params, 3 * T, pos, R2, W, dp2);
		double derr = 0;
		for (int64_t e = 0; e < pe.nparam; e++)
			derr = maxn(derr, fabs(dp2[e] - dp[e]) / fmax(1, fabs(dp[e])));
		CHECK(derr < 1e-4, "%s %dD%s, float: gradient from its R as from the exact one (rel %.2g)",
		    spec, axes, grid ? " on a grid" : "", derr);
	}
	pe_work_free(&w1);
	pe_work_free(&w);
	free(params); free(pos); free(R); free(R2); free(W); free(dp); free(dp2);
}

/*
 * An encoding with a basis (string, rope-nd), whole: R = P B P^T as
 * pe_compose makes it from pe_rotations' B and pe_bases' P, against its
 * definition exp(sum_i p_i A_i) with A_i = P L_i P^T, all built here in
 * long double from the documented layout (P = (I - S)(I + S)^-1 by
 * elimination, or exp(A)); orthogonality; R(x)^T R(y) = R(y - x); the
 * gradient of sum W o R through pe_rotations_backward (dB = P^T W P) and
 * pe_bases_backward (dP = sum_t W P B^T + W^T P B) against central
 * differences of the reference; the same bytes on 1 and 2 threads.
 */
static void
ref_generators(const struct pe *pe, const float *par, double *A /* [axes][HD][HD] */)
{
	int d = HD, N = pe->axes, npair = HD / 2, string = is(pe, "string");
	const float *up = par + (string ? N * npair : 0);
	double S[HD * HD] = { 0 }, P[HD * HD], L[HD * HD];

	if (is(pe, "circulant-string")) {
		/* A_i = C_i - C_i^T, C_i the circulant of first row (0, a_1 ..
		 * a_{d/2-1}, 0 ...): entry (r, c) reads the row at c - r mod d */
		for (int i = 0; i < N; i++)
			for (int r = 0; r < d; r++)
				for (int c = 0; c < d; c++) {
					int n = ((c - r) % d + d) % d;
					double v = 0;
					if (n >= 1 && n < npair)
						v = par[i * (npair - 1) + n - 1];
					else if (n > npair)
						v = -par[i * (npair - 1) + d - n - 1];
					A[(i * d + r) * d + c] = v;
				}
		return;
	}

	for (int i = 0, q = 0; i < d; i++)
		for (int j = i + 1; j < d; j++, q++) {
			S[i * d + j] = up[q];
			S[j * d + i] = -up[q];
		}
	if (string) {	/* solve (I + S) P = I - S, Gauss-Jordan on [I + S | I - S] */
		long double M[HD][2 * HD];
		for (int i = 0; i < d; i++)
			for (int j = 0; j < d; j++) {
				M[i][j] = (i == j) + S[i * d + j];
				M[i][d + j] = (i == j) - S[i * d + j];
			}
		for (int c = 0; c < d; c++) {
			int p = c;
			for (int i = c + 1; i < d; i++)
				if (fabsl(M[i][c]) > fabsl(M[p][c]))
					p = i;
			for (int j = 0; j < 2 * d; j++) {
				long double t = M[c][j];
				M[c][j] = M[p][j];
				M[p][j] = t;
			}
			for (int i = 0; i < d; i++) {
				long double f = M[i][c] / M[c][c];
				for (int j = 0; j < 2 * d && i != c; j++)
					M[i][j] -= f * M[c][j];
			}
		}
		for (int i = 0; i < d; i++)
			for (int j = 0; j < d; j++)
				P[i * d + j] = (double)(M[i][d + j] / M[i][i]);
	} else {
		ref_expm(d, S, P);
	}
	for (int i = 0; i < N; i++) {
		memset(L, 0, sizeof L);
		for (int j = 0; j < npair; j++) {
			double u = 0;
			if (string) {
				u = par[i * npair + j];
			} else {	/* rope-axial: groups x, y, t of the pairs */
				int g = 0;
				while (g + 1 < N && j >= (g + 1) * npair / N)
					g++;
				int start = g * npair / N, size = (g + 1) * npair / N - start;
				if (N - 1 - g == i)
					u = -pow(pe_option(pe, "theta"), -(double)(j - start) / size);
			}
			L[2 * j * d + 2 * j + 1] = u;
			L[(2 * j + 1) * d + 2 * j] = -u;
		}
		for (int r = 0; r < d; r++)	/* A_i = P L P^T */
			for (int c = 0; c < d; c++) {
				double v = 0;
				for (int k = 0; k < d; k++)
					for (int m = 0; m < d; m++)
						v += P[r * d + k] * L[k * d + m] * P[c * d + m];
				A[(i * d + r) * d + c] = v;
			}
	}
}

/* sum over sets and tokens of W o R, R = exp(sum_i p_i A_i) of the
 * reference. */
static double
ref_basis_loss(const struct pe *pe, const float *params, int T, const float *pos, const float *W)
{
	double A[3 * HD * HD], X[HD * HD], R[HD * HD], L = 0;

	for (int s = 0; s < pe->nset; s++) {
		ref_generators(pe, params + s * pe->set_params, A);
		for (int t = 0; t < T; t++) {
			for (int e = 0; e < HD * HD; e++) {
				X[e] = 0;
				for (int i = 0; i < pe->axes; i++)
					X[e] += pos[t * pe->axes + i] * A[i * HD * HD + e];
			}
			ref_expm(HD, X, R);
			for (int e = 0; e < HD * HD; e++)
				L += W[((int64_t)s * T + t) * HD * HD + e] * R[e];
		}
	}
	return L;
}

/* dparams of sum W o (P B P^T) as the engine's pieces give it. */
static void
basis_grad(const struct pe *pe, struct pe_work *w, const float *params, int T,
    const float *pos, const float *B, const float *P, const float *W, float *dp)
{
	enum { D = HD };
	int64_t nb = (int64_t)pe->nset * T * pe->rsize;
	float *dB = calloc(nb, sizeof(float)), *dP = calloc(pe->nset * D * D, sizeof(float));

	for (int s = 0; s < pe->nset; s++)
		for (int t = 0; t < T; t++) {
			const float *Ps = P + s * D * D, *Bt = B + ((int64_t)s * T + t) * pe->rsize;
			const float *Wt = W + ((int64_t)s * T + t) * D * D;
			double WP[D * D] = { 0 }, WtP[D * D] = { 0 };
			for (int r = 0; r < D; r++)
				for (int c = 0; c < D; c++)
					for (int k = 0; k < D; k++) {
						WP[r * D + c] += Wt[r * D + k] * Ps[k * D + c];
						WtP[r * D + c] += Wt[k * D + r] * Ps[k * D + c];
					}
			for (int j = 0; j < D / 2; j++)	/* dB_j = (P^T W P) block j */
				for (int a = 0; a < 2; a++)
					for (int b = 0; b < 2; b++) {
						double v = 0;
						for (int k = 0; k < D; k++)
							v += Ps[k * D + 2 * j + a] * WP[k * D + 2 * j + b];
						dB[((int64_t)s * T + t) * pe->rsize + 4 * j + 2 * a + b] = (float)v;
					}
			for (int r = 0; r < D; r++)	/* dP += W P B^T + W^T P B */
				for (int c = 0; c < D; c++) {
					int j = c / 2;
					double v = 0;
					for (int m = 0; m < 2; m++) {
						int k = 2 * j + m;
						v += WP[r * D + k] * Bt[4 * j + (c % 2) * 2 + m] +
						    WtP[r * D + k] * Bt[4 * j + m * 2 + c % 2];
					}
					dP[s * D * D + r * D + c] += (float)v;
				}
		}
	pe_rotations_backward(pe, w, params, T, pos, B, dB, dp);
	pe_bases_backward(pe, w, params, dP, dp);
	free(dB);
	free(dP);
}

static void
test_basis(const char *spec, int axes, const char *share, int init)
{
	struct pe pe;
	struct pe_work w, w1;
	struct rng r;
	const int T = 4, D = HD;

	if (pe_parse(&pe, spec, HD, axes, 2, 1, share) < 0) {
		CHECK(0, "%s: %s", spec, pe.err.msg);
		return;
	}
	pe_work_init(&w, &pe, 3 * T);
	int64_t nB = pe.nset * 3 * T * pe.rsize, nR = pe.nset * 3 * T * D * D;
	float *params = malloc(sizeof(float) * pe.nparam), *pos = malloc(sizeof(float) * 3 * T * axes);
	float *B = malloc(sizeof(float) * nB), *P = malloc(sizeof(float) * pe.nset * D * D);
	float *R = malloc(sizeof(float) * nR), *W = malloc(sizeof(float) * nR);
	float *dp = calloc(pe.nparam, sizeof(float)), *dp1 = calloc(pe.nparam, sizeof(float));
	float *P1 = malloc(sizeof(float) * pe.nset * D * D);
	struct pe_init ini = { .kind = init, .std = 0.3, .seed = 5 };
	double A[3 * HD * HD], X[HD * HD], Rr[HD * HD];

	pe_init_params(&pe, &ini, params);
	rng_seed(&r, 6, 0);
	for (int t = 0; t < T; t++)	/* tokens x, y, y - x */
		for (int i = 0; i < axes; i++) {
			float x = (float)(3 * rng_uniform(&r) - 1), y = (float)(3 * rng_uniform(&r) - 1);
			pos[t * axes + i] = x;
			pos[(T + t) * axes + i] = y;
			pos[(2 * T + t) * axes + i] = y - x;
		}
	pe_rotations(&pe, &w, params, 3 * T, pos, B);
	pe_bases(&pe, &w, params, P);
	pe_compose(&pe, &w, 3 * T, P, B, R);

	double eref = 0, eorth = 0, eP = 0, dlo = 1e9, dhi = -1e9, rel = 0;
	for (int s = 0; s < pe.nset; s++) {
		const float *Ps = P + s * D * D;
		for (int i = 0; i < D; i++)
			for (int j = 0; j < D; j++) {
				double v = 0;
				for (int k = 0; k < D; k++)
					v += (double)Ps[k * D + i] * Ps[k * D + j];
				eP = maxn(eP, fabs(v - (i == j)));
			}
		ref_generators(&pe, params + s * pe.set_params, A);
		for (int t = 0; t < 3 * T; t++) {
			const float *Rt = R + ((int64_t)s * 3 * T + t) * D * D;
			double blk[HD * HD];
			for (int e = 0; e < D * D; e++) {
				X[e] = 0;
				for (int i = 0; i < axes; i++)
					X[e] += pos[t * axes + i] * A[i * D * D + e];
			}
			ref_expm(D, X, Rr);
			for (int e = 0; e < D * D; e++) {
				eref = maxn(eref, fabs(Rt[e] - Rr[e]));
				blk[e] = Rt[e];
			}
			eorth = maxn(eorth, orth_err(D, blk));
			double dt = det(D, blk);
			dlo = minn(dlo, dt);
			dhi = maxn(dhi, dt);
		}
		for (int t = 0; t < T; t++) {
			const float *Rs = R + (int64_t)s * 3 * T * D * D;
			for (int i = 0; i < D; i++)
				for (int j = 0; j < D; j++) {
					double v = 0;
					for (int k = 0; k < D; k++)
						v += (double)Rs[t * D * D + k * D + i] * Rs[(T + t) * D * D + k * D + j];
					rel = maxn(rel, fabs(v - Rs[(2 * T + t) * D * D + i * D + j]));
				}
		}
	}
	CHECK(eP < 1e-6, "%s %dD share %s: P^T P = I (%.2g)", spec, axes, share, eP);
	CHECK(eref < 2e-6, "%s %dD share %s: P B P^T equals exp(sum_i p_i P L_i P^T) of the "
	    "long-double reference (%.2g)", spec, axes, share, eref);
	CHECK(eorth < 2e-6 && fabs(dlo - 1) < 1e-5 && fabs(dhi - 1) < 1e-5,
	    "%s %dD: R orthogonal (%.2g), det in [%.7f, %.7f]", spec, axes, eorth, dlo, dhi);
	CHECK(rel < 2e-6, "%s %dD: R(x)^T R(y) = R(y - x) (defect %.2g)", spec, axes, rel);

	for (int64_t e = 0; e < nR; e++)
		W[e] = (float)(2 * rng_uniform(&r) - 1);
	basis_grad(&pe, &w, params, 3 * T, pos, B, P, W, dp);
	double gerr = 0, gmax = 0, gS = 0;
	int64_t nfreq = is(&pe, "string") ? axes * D / 2 : 0;
	for (int q = 0; q < 24; q++) {
		int s = q % pe.nset;
		/* frequencies and basis entries both */
		int64_t e = s * pe.set_params + (q % 3 == 0 && nfreq ? (q * 5) % nfreq :
		    nfreq + (q * 37) % (pe.set_params - nfreq));
		float x0 = params[e];
		double h = 1e-4;
		params[e] = (float)(x0 + h);
		double hp = params[e] - (double)x0, fp = ref_basis_loss(&pe, params, 3 * T, pos, W);
		params[e] = (float)(x0 - h);
		double hm = x0 - (double)params[e], fm = ref_basis_loss(&pe, params, 3 * T, pos, W);
		params[e] = x0;
		double fd = (fp - fm) / (hp + hm);
		gerr = maxn(gerr, fabs(fd - dp[e]) / fmax(1, fabs(fd)));
		gmax = maxn(gmax, fabs(fd));
		if (e % pe.set_params >= nfreq)
			gS = maxn(gS, fabs(fd));
	}
	CHECK(gerr < 1e-4 && gS > 1e-3, "%s %dD share %s: gradient through B and P (24 sampled, "
	    "the basis's among them: max |g| %.3g) matches central differences (rel %.2g, max |g| %.3g)",
	    spec, axes, share, gS, gerr, gmax);

	int nt = omp_get_max_threads();
	omp_set_num_threads(1);
	pe_work_init(&w1, &pe, 3 * T);
	pe_bases(&pe, &w1, params, P1);
	pe_bases_backward(&pe, &w1, params, W, dp1);
	omp_set_num_threads(nt);
	memset(dp, 0, sizeof(float) * pe.nparam);
	pe_bases_backward(&pe, &w, params, W, dp);
	CHECK(!memcmp(P, P1, sizeof(float) * pe.nset * D * D) && !memcmp(dp, dp1, sizeof(float) * pe.nparam),
	    "%s %dD: bases and their gradient, the same bytes on 1 and %d threads", spec, axes, nt);
	pe_work_free(&w1);
	pe_work_free(&w);
	free(params); free(pos); free(B); free(P); free(P1); free(R); free(W); free(dp); free(dp1);
}

/* Circulant-STRING's own: every R(p) is circulant (entry (r, c) depends on
 * c - r mod d alone), as exp of a sum of circulants must be; and its
 * default init has RoPE-Mixed's spectrum: B's pair j turns as rope-mixed's
 * pair j from the same seed, but for the last pair, which stays still. */
static void
test_circulant(void)
{
	struct pe pe, mix;
	struct pe_work w, wm;
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 4 };
	enum { D = HD, T = 3 };
	float pos[T * 2] = { 0.5f, -1, 2, 1.5f, -0.25f, 3 };

	pe_parse(&pe, "circulant-string", D, 2, 1, 1, "none");
	pe_parse(&mix, "rope-mixed", D, 2, 1, 1, "none");
	pe_work_init(&w, &pe, T);
	pe_work_init(&wm, &mix, T);
	float *p = malloc(sizeof(float) * pe.nparam), *pm = malloc(sizeof(float) * mix.nparam);
	float *B = malloc(sizeof(float) * T * pe.rsize), *Bm = malloc(sizeof(float) * T * mix.rsize);
	float P[D * D], *R = malloc(sizeof(float) * T * D * D);
	pe_init_params(&pe, &ini, p);
	pe_init_params(&mix, &ini, pm);
	pe_rotations(&pe, &w, p, T, pos, B);
	pe_rotations(&mix, &wm, pm, T, pos, Bm);
	pe_bases(&pe, &w, p, P);
	pe_compose(&pe, &w, T, P, B, R);
	double circ = 0, spec = 0, last = 0, big = 0;
	for (int t = 0; t < T; t++)
		for (int r = 0; r < D; r++)
			for (int c = 0; c < D; c++) {
				float v = R[(t * D + r) * D + c];
				circ = maxn(circ, fabs(v - R[(t * D + (r + 1) % D) * D + (c + 1) % D]));
				big = maxn(big, fabs(v - (r == c)));
			}
	for (int t = 0; t < T; t++) {
		for (int e = 0; e < 4 * (D / 2 - 1); e++)
			spec = maxn(spec, fabs(B[t * pe.rsize + e] - Bm[t * mix.rsize + e]));
		for (int e = 0; e < 4; e++)
			last = maxn(last, fabs(B[t * pe.rsize + 4 * (D / 2 - 1) + e] - (e == 0 || e == 3)));
	}
	CHECK(circ < 1e-6 && big > 0.1, "circulant-string: R(p) is circulant (%.2g), and no identity (%.2g)",
	    circ, big);
	CHECK(spec < 1e-5 && last == 0, "circulant-string: default init turns B's pairs as rope-mixed's "
	    "(%.2g), the last pair still", spec);
	pe_work_free(&w);
	pe_work_free(&wm);
	free(p); free(pm); free(B); free(Bm); free(R);
}

/* Default init: string is rope-mixed with P = I, rope-nd rope-axial with
 * Q = I, bit for bit; and the pieces of q' k' = (B P^T q)^T B P^T k. */
static void
test_basis_init(void)
{
	static const char *pair[][2] = { { "string", "rope-mixed" }, { "rope-nd", "rope-axial" } };
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 9 };
	float pos[3 * 3] = { 0.5f, -1, 2, 1.5f, 0.25f, -0.5f, 3, 1, 0 };

	for (int k = 0; k < 2; k++) {
		struct pe pe, base;
		struct pe_work w, wb;
		pe_parse(&pe, pair[k][0], 32, 3, 2, 2, "none");
		pe_parse(&base, pair[k][1], 32, 3, 2, 2, "none");
		pe_work_init(&w, &pe, 3);
		pe_work_init(&wb, &base, 3);
		float *p = malloc(sizeof(float) * pe.nparam), *pb = malloc(sizeof(float) * (base.nparam + 1));
		float *B = malloc(sizeof(float) * pe.nset * 3 * pe.rsize), *Bb = malloc(sizeof(float) * pe.nset * 3 * pe.rsize);
		float *P = malloc(sizeof(float) * pe.nset * 32 * 32);
		pe_init_params(&pe, &ini, p);
		pe_init_params(&base, &ini, pb);
		pe_rotations(&pe, &w, p, 3, pos, B);
		pe_rotations(&base, &wb, pb, 3, pos, Bb);
		pe_bases(&pe, &w, p, P);
		int id = 1;
		for (int s = 0; s < pe.nset; s++)
			for (int e = 0; e < 32 * 32; e++)
				id &= P[s * 32 * 32 + e] == (e % 33 == 0);
		CHECK(id && !memcmp(B, Bb, sizeof(float) * pe.nset * 3 * pe.rsize),
		    "%s's default init: P = I and B %s's, bit for bit", pair[k][0], pair[k][1]);
		pe_work_free(&w);
		pe_work_free(&wb);
		free(p); free(pb); free(B); free(Bb); free(P);
	}
}

/* A NaN generator in ComRoPE's closed form: its block's R is NaN (so the
 * loss says so), the other blocks' are not, and its gradient is NaN. */
static void
test_comrope_nan(void)
{
	struct pe pe;
	struct pe_work w;
	float params[256], pos[2] = { 0.5f, 0.25f }, R[64 * 8], dR[64 * 8], dp[256] = { 0 };
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 3 };

	pe_parse(&pe, "comrope-ld:8", 16, 2, 1, 1, NULL);
	pe_work_init(&w, &pe, 1);
	pe_init_params(&pe, &ini, params);
	params[28 + 5] = NAN;		/* block 1's generator */
	pe_rotations(&pe, &w, params, 1, pos, R);
	int nan0 = 0, nan1 = 1;
	for (int e = 0; e < 64; e++) {
		nan0 |= isnan(R[e]);
		nan1 &= isnan(R[64 + e]);
	}
	CHECK(!nan0 && nan1, "comrope-ld:8 with a NaN generator: that block's R is NaN, the other's not");
	for (int e = 0; e < 128; e++)
		dR[e] = 1;
	pe_rotations_backward(&pe, &w, params, 1, pos, R, dR, dp);
	CHECK(isnan(dp[28]) && !isnan(dp[0]), "... and its gradient NaN");
	pe_work_free(&w);
}

/* The 2 x 2 closed form equals the general exp path. */
static void
test_closed_form(void)
{
	struct pe pe;
	struct pe_work w;
	double ws[4096], X[4], Rg[4];
	float params[2 * 8], pos[2] = { 0.3f, -1.7f }, R[8 * 4];
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 2 };

	pe_parse(&pe, "liere:2", 16, 2, 1, 1, NULL);
	pe_work_init(&w, &pe, 1);
	pe_init_params(&pe, &ini, params);
	pe_rotations(&pe, &w, params, 1, pos, R);
	double e = 0;
	for (int j = 0; j < 8; j++) {
		double u = pos[0] * (double)params[j] + pos[1] * (double)params[8 + j];
		X[0] = X[3] = 0; X[1] = u; X[2] = -u;
		expm_skew(2, X, Rg, ws);
		for (int k = 0; k < 4; k++)
			e = maxn(e, fabs(R[4 * j + k] - Rg[k]));
	}
	CHECK(e < 2e-7, "2x2 closed form equals the general exp path (%.2g)", e);
	pe_work_free(&w);
}

/* apply and its backward against direct products, strided and in place. */
static void
test_apply(const char *spec)
{
	struct pe pe;
	struct pe_work w;
	struct rng r;
	const int T = 4, dim = 3 * HD, h = 1;

	pe_parse(&pe, spec, HD, 2, 3, 1, NULL);
	pe_work_init(&w, &pe, T);
	float *params = malloc(sizeof(float) * (pe.nparam + 1)), pos[2 * 4];
	float *R = malloc(sizeof(float) * pe.nset * T * pe.rsize);
	float x[4 * 3 * HD], y[4 * 3 * HD], dy[4 * 3 * HD], dx[4 * 3 * HD];
	float *dR = calloc(T * pe.rsize, sizeof(float));
	struct pe_init ini = { .kind = PE_INIT_DEFAULT, .seed = 4 };

	pe_init_params(&pe, &ini, params);
	rng_seed(&r, 9, 0);
	for (int i = 0; i < 2 * T; i++)
		pos[i] = (float)rng_uniform(&r);
	for (int i = 0; i < T * dim; i++) {
		x[i] = (float)rng_normal(&r);
		dy[i] = (float)rng_normal(&r);
	}
	pe_rotations(&pe, &w, params, T, pos, R);
	const float *Rs = pe_R(&pe, R, pe_set(&pe, 0, h), T);
	pe_apply(&pe, T, Rs, x + h * HD, dim, y + h * HD, dim);
	memcpy(dx, dy, sizeof dx);
	pe_apply_backward(&pe, T, Rs, x + h * HD, dim, dx + h * HD, dim, dx + h * HD, dim, dR);
	double ey = 0, edx = 0, edR = 0;
	int b = pe.block;
	for (int t = 0; t < T; t++)
		for (int j = 0; j < pe.nblock; j++) {
			const float *q = Rs + t * pe.rsize + j * b * b;
			const float *xb = x + t * dim + h * HD + j * b, *db = dy + t * dim + h * HD + j * b;
			for (int i = 0; i < b; i++) {
				double v = 0, g = 0;
				for (int k = 0; k < b; k++) {
					v += (double)q[i * b + k] * xb[k];
					g += (double)q[k * b + i] * db[k];
					edR = maxn(edR, fabs(dR[t * pe.rsize + j * b * b + i * b + k] - (double)db[i] * xb[k]));
				}
				ey = maxn(ey, fabs(y[t * dim + h * HD + j * b + i] - v));
				edx = maxn(edx, fabs(dx[t * dim + h * HD + j * b + i] - g));
			}
		}
	CHECK(ey < 1e-5 && edx < 1e-5 && edR < 1e-6,
	    "%s: apply y = R x, dx = R^T dy (in place), dR += dy x^T on a strided head (%.2g %.2g %.2g)",
	    spec, ey, edx, edR);
	memcpy(y, x, sizeof y);
	pe_apply(&pe, T, Rs, y + h * HD, dim, y + h * HD, dim);
	double ein = 0;
	for (int t = 0; t < T; t++)
		for (int i = 0; i < dim; i++) {
			int inhead = i >= h * HD && i < (h + 1) * HD;
			if (!inhead)
				ein = maxn(ein, fabs(y[t * dim + i] - x[t * dim + i]));
		}
	CHECK(ein == 0, "%s: apply leaves the other heads alone", spec);

	/* a batch of 3 images [3][T][dim] equals one image at a time */
	float xb[3 * 4 * 3 * HD], yb[3 * 4 * 3 * HD], y1[3 * 4 * 3 * HD], db[3 * 4 * 3 * HD];
	float dx1[3 * 4 * 3 * HD], dxb[3 * 4 * 3 * HD];
	float *dR1 = calloc(T * pe.rsize, sizeof(float)), *dRb = calloc(T * pe.rsize, sizeof(float));
	for (int i = 0; i < 3 * T * dim; i++) {
		xb[i] = (float)rng_normal(&r);
		db[i] = (float)rng_normal(&r);
	}
	memcpy(yb, xb, sizeof yb);
	memcpy(y1, xb, sizeof y1);
	memcpy(dxb, db, sizeof dxb);
	memcpy(dx1, db, sizeof dx1);
	pe_apply_batch(&pe, 3, T, Rs, xb + h * HD, T * dim, dim, yb + h * HD, T * dim, dim);
	pe_apply_batch_backward(&pe, 3, T, Rs, xb + h * HD, T * dim, dim, db + h * HD, T * dim, dim,
	    dxb + h * HD, T * dim, dim, dRb);
	for (int i = 0; i < 3; i++) {
		pe_apply(&pe, T, Rs, xb + i * T * dim + h * HD, dim, y1 + i * T * dim + h * HD, dim);
		pe_apply_backward(&pe, T, Rs, xb + i * T * dim + h * HD, dim, db + i * T * dim + h * HD, dim,
		    dx1 + i * T * dim + h * HD, dim, dR1);
	}
	double eb = 0;
	for (int i = 0; i < 3 * T * dim; i++)
		eb = maxn(eb, maxn(fabs(yb[i] - y1[i]), fabs(dxb[i] - dx1[i])));
	for (int i = 0; i < T * pe.rsize; i++)
		eb = maxn(eb, fabs(dRb[i] - dR1[i]) / 4);
	CHECK(eb < 1e-5, "%s: a batch of 3 images equals one image at a time (%.2g)", spec, eb);
	free(dR1);
	free(dRb);
	pe_work_free(&w);
	free(params); free(R); free(dR);
}

/* pe_apply_batch and its backward on many images of several tokens, rows
 * with gaps between them: every kernel's full tiles, remainders and
 * groups, heads of several blocks.  Against double sums; in place; and
 * bit for bit against one image at a time, since the sums must run in
 * one order however the images are tiled.  lines: rows of whole aligned
 * 64-byte lines, images spread across more than twice a core's L2: the
 * case that blocks of 16 and more write by streaming stores (pe_apply.c),
 * the engine's at large batches. */
static void
test_apply_batch(const char *spec, int hd, int nimg, int lines)
{
	struct pe pe;
	struct pe_work w;
	struct rng r;
	/* rows [nimg][T][ld] is floats apart, gaps untouched */
	const int T = 3, ld = lines ? hd + 16 : hd + 5;
	int64_t is = (int64_t)T * ld;
	if (lines && nimg > 1) {
		long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
		int64_t span = 2 * (l2 > 0 ? l2 : 2 << 20) / sizeof(float) + T * ld;
		is = (span / (nimg - 1) + 16) / 16 * 16;
	}
	const size_t n = (size_t)nimg * is;
	const size_t bytes = (sizeof(float) * n + 63) / 64 * 64;
	struct pe_init ini = { .kind = PE_INIT_NORMAL, .std = 0.5, .seed = 7 };
	float pos[2 * 3] = { 0.3f, -1.2f, 2.0f, 0.5f, -0.7f, 1.1f };

	if (pe_parse(&pe, spec, hd, 2, 1, 1, NULL) == -1) {
		CHECK(0, "pe_parse %s: %s", spec, pe.err.msg);
		return;
	}
	pe_work_init(&w, &pe, T);
	int64_t nr = T * pe.rsize;
	float *params = malloc(sizeof(float) * (pe.nparam + 1));
	float *R = malloc(sizeof(float) * nr);
	float *dR = calloc(nr, sizeof(float)), *dR1 = calloc(nr, sizeof(float));
	float *x = aligned_alloc(64, bytes), *dy = aligned_alloc(64, bytes);
	float *y = aligned_alloc(64, bytes), *yin = aligned_alloc(64, bytes);
	float *dx = aligned_alloc(64, bytes), *y1 = aligned_alloc(64, bytes);
	float *dx1 = aligned_alloc(64, bytes);
	double *gref = calloc(nr, sizeof(double));
	pe_init_params(&pe, &ini, params);
	pe_rotations(&pe, &w, params, T, pos, R);
	rng_seed(&r, 11, 0);
	for (size_t i = 0; i < n; i++) {
		x[i] = (float)rng_normal(&r);
		dy[i] = (float)rng_normal(&r);
	}
	memcpy(y, x, sizeof(float) * n);	/* gaps: x's values, dy's in dx */
	memcpy(yin, x, sizeof(float) * n);
	memcpy(dx, dy, sizeof(float) * n);
	memcpy(y1, y, sizeof(float) * n);
	memcpy(dx1, dy, sizeof(float) * n);
	pe_apply_batch(&pe, nimg, T, R, x, is, ld, y, is, ld);
	pe_apply_batch(&pe, nimg, T, R, yin, is, ld, yin, is, ld);
	pe_apply_batch_backward(&pe, nimg, T, R, x, is, ld, dx, is, ld, dx, is, ld, dR);
	for (int i = 0; i < nimg; i++) {
		pe_apply(&pe, T, R, x + i * is, ld, y1 + i * is, ld);
		pe_apply_backward(&pe, T, R, x + i * is, ld, dy + i * is, ld,
		    dx1 + i * is, ld, dR1);
	}

	double ey = 0, edx = 0, eg = 0;
	int b = pe.block, gaps = 1;
	for (int i = 0; i < nimg; i++)
		for (int t = 0; t < T; t++) {
			const float *xr = x + i * is + t * ld, *dr = dy + i * is + t * ld;
			for (int c = hd; c < ld; c++)
				gaps &= y[i * is + t * ld + c] == xr[c] && dx[i * is + t * ld + c] == dr[c];
			for (int j = 0; j < pe.nblock; j++) {
				const float *q = R + t * pe.rsize + (int64_t)j * b * b;
				double *g = gref + t * pe.rsize + (int64_t)j * b * b;
				for (int u = 0; u < b; u++) {
					double v = 0, e = 0;
					for (int k = 0; k < b; k++) {
						v += (double)q[u * b + k] * xr[j * b + k];
						e += (double)q[k * b + u] * dr[j * b + k];
						g[u * b + k] += (double)dr[j * b + u] * xr[j * b + k];
					}
					ey = maxn(ey, fabs(y[i * is + t * ld + j * b + u] - v));
					edx = maxn(edx, fabs(dx[i * is + t * ld + j * b + u] - e));
				}
			}
		}
	for (int64_t e = 0; e < nr; e++)
		eg = maxn(eg, fabs(dR[e] - gref[e]) / sqrt(nimg));
	const char *rows = lines ? "whole lines" : "odd rows";
	CHECK(ey < 1e-5 && edx < 1e-5 && eg < 1e-5 && gaps,
	    "%s, head %d, %d images, %s: batch apply and backward equal double "
	    "sums (%.2g %.2g %.2g), gaps untouched", spec, hd, nimg, rows, ey, edx, eg);
	CHECK(!memcmp(y, yin, sizeof(float) * n),
	    "%s, head %d, %d images, %s: batch apply in place", spec, hd, nimg, rows);
	CHECK(!memcmp(y, y1, sizeof(float) * n) && !memcmp(dx, dx1, sizeof(float) * n) &&
	    !memcmp(dR, dR1, sizeof(float) * nr),
	    "%s, head %d, %d images, %s: batch equals one image at a time, bit "
	    "for bit", spec, hd, nimg, rows);
	pe_work_free(&w);
	free(params); free(R); free(dR); free(dR1); free(x); free(dy); free(y);
	free(yin); free(dx); free(y1); free(dx1); free(gref);
}

/* blocks wider than the register kernels (b = 80) */
static void
test_apply_wide(void)
{
	struct pe pe;
	struct pe_work w;
	struct rng r;
	enum { D = 80, T = 2 };
	static float R[T * D * D], x[T * D], y[T * D], dy[T * D], dx[T * D], dR[T * D * D];
	float pos[2 * T] = { 0.1f, 0.7f, -0.4f, 0.2f }, *params;
	struct pe_init ini = { .kind = PE_INIT_NORMAL, .std = 0.1, .seed = 1 };

	pe_parse(&pe, "liere", D, 2, 1, 1, NULL);
	pe_work_init(&w, &pe, T);
	params = malloc(sizeof(float) * pe.nparam);
	pe_init_params(&pe, &ini, params);
	pe_rotations(&pe, &w, params, T, pos, R);
	rng_seed(&r, 3, 0);
	for (int i = 0; i < T * D; i++) {
		x[i] = (float)rng_normal(&r);
		dy[i] = (float)rng_normal(&r);
	}
	pe_apply(&pe, T, R, x, D, y, D);
	pe_apply_backward(&pe, T, R, x, D, dy, D, dx, D, dR);
	double e = 0;
	for (int t = 0; t < T; t++)
		for (int i = 0; i < D; i++) {
			double v = 0, g = 0;
			for (int k = 0; k < D; k++) {
				v += (double)R[t * D * D + i * D + k] * x[t * D + k];
				g += (double)R[t * D * D + k * D + i] * dy[t * D + k];
				e = maxn(e, fabs(dR[t * D * D + i * D + k] - (double)dy[t * D + i] * x[t * D + k]));
			}
			e = maxn(e, maxn(fabs(y[t * D + i] - v), fabs(dx[t * D + i] - g)));
		}
	CHECK(pe.block == D && e < 1e-5, "apply and backward with 80-wide blocks (%.2g)", e);
	pe_work_free(&w);
	free(params);
}

int
main(void)
{
	static const struct { const char *spec; int init; } methods[] = {
		{ "liere:4", PE_INIT_NORMAL }, { "liere:8", PE_INIT_DEFAULT }, { "liere:16", PE_INIT_NORMAL },
		{ "liere:2", PE_INIT_DEFAULT }, { "rope-mixed", PE_INIT_DEFAULT },
		{ "rope-axial", PE_INIT_DEFAULT }, { "rope-axial,theta=10000", PE_INIT_DEFAULT },
		{ "comrope-ap:4", PE_INIT_NORMAL }, { "comrope-ap:2", PE_INIT_DEFAULT },
		{ "comrope-ld:8", PE_INIT_NORMAL }, { "riemann", PE_INIT_DEFAULT },
		{ "riemann,reflect,alpha=0.3", PE_INIT_NORMAL }, { "none", PE_INIT_DEFAULT },
		{ "zeros", PE_INIT_DEFAULT }, { "mrope", PE_INIT_DEFAULT },
		{ "mrope,theta=10000", PE_INIT_DEFAULT }, { "string", PE_INIT_NORMAL },
		{ "rope-nd", PE_INIT_NORMAL }, { "videorope", PE_INIT_DEFAULT },
		{ "videorope,theta=10000,delta=0.5", PE_INIT_DEFAULT },
	};

	test_parse();
	test_conv();
	test_init();
	for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
		for (int axes = 2; axes <= 3; axes++)
			test_method(methods[i].spec, axes, axes == 2 ? "none" : "heads", methods[i].init, 0);
	test_method("liere:8", 2, "layers", PE_INIT_ZEROS, 0);
	test_method("comrope-ld:4", 2, "all", PE_INIT_DEFAULT, 0);
	/* the multipliers tied within a layer: closed form and 2 x 2 blocks */
	test_method("comrope-ld:4,tied", 2, "none", PE_INIT_DEFAULT, 0);
	test_method("comrope-ld:8,tied", 3, "layers", PE_INIT_NORMAL, 0);
	test_method("comrope-ld:2,tied", 2, "none", PE_INIT_DEFAULT, 0);
	/* grid positions: tokens at multiples of others share an exponential */
	test_method("liere:8", 2, "none", PE_INIT_DEFAULT, 1);
	test_method("liere:16", 3, "heads", PE_INIT_NORMAL, 1);
	/* blocks of 16: the engine's float forward, at LieRE's init too */
	test_method("liere:16", 2, "none", PE_INIT_DEFAULT, 1);
	test_method("comrope-ld:16", 2, "none", PE_INIT_DEFAULT, 1);
	test_method("comrope-ld:4", 2, "none", PE_INIT_NORMAL, 1);
	test_method("comrope-ap:8", 3, "none", PE_INIT_DEFAULT, 1);
	/* a window and more of rays through the lanes (256): full batches of
	 * 16 in order of norm, and a last one part full */
	ntok = 100;
	test_method("liere:8", 2, "none", PE_INIT_DEFAULT, 0);
	test_method("liere:4", 3, "none", PE_INIT_NORMAL, 0);
	ntok = 5;
	/* ComRoPE's closed form where eigenvalues coincide (generators 0) or
	 * nearly do (the series, and the series next to the quotient) */
	test_method("comrope-ld:4", 2, "none", PE_INIT_ZEROS, 0);
	test_method("comrope-ap:8", 2, "none", PE_INIT_ZEROS, 1);
	for (int k = 0; k < 2; k++) {
		init_std = k == 0 ? 1e-4 : 0.03;
		test_method("comrope-ld:8", 2, "none", PE_INIT_NORMAL, 0);
		test_method("comrope-ap:16", 3, "none", PE_INIT_NORMAL, 0);
	}
	init_std = 0.7;
	test_basis("string", 2, "none", PE_INIT_NORMAL);
	test_basis("string", 3, "heads", PE_INIT_NORMAL);
	test_basis("rope-nd", 2, "none", PE_INIT_NORMAL);
	test_basis("rope-nd", 3, "all", PE_INIT_UNIFORM);
	test_basis("circulant-string", 2, "none", PE_INIT_NORMAL);
	test_basis("circulant-string", 3, "heads", PE_INIT_DEFAULT);
	test_basis_init();
	test_circulant();
	test_closed_form();
	test_comrope_nan();
	test_apply("liere:8");
	test_apply("liere:16");
	test_apply("liere:4");
	test_apply("rope-mixed");
	test_apply("riemann");
	test_apply("none");
	test_apply_wide();
	/* tiles: 16 images at b = 16, 12 at 32, 6 at 64, 8 at 8; groups twice that */
	static const struct { const char *spec; int hd, nimg; } batches[] = {
		{ "liere:8", 64, 37 }, { "liere:8", 24, 9 }, { "comrope-ld:8", 64, 16 },
		{ "liere:16", 64, 37 }, { "liere:16", 64, 1 }, { "liere:32", 64, 29 },
		{ "liere:64", 64, 13 },
		{ "liere:64", 128, 7 }, { "liere:4", 16, 9 }, { "liere:3", 12, 5 },
		{ "liere:48", 96, 5 }, { "riemann", 64, 9 }, { "rope-mixed", 64, 21 },
		{ "rope-mixed", 12, 5 }, { "none", 64, 3 },
	};
	for (size_t i = 0; i < sizeof batches / sizeof *batches; i++)
		for (int lines = 0; lines < 2; lines++)
			test_apply_batch(batches[i].spec, batches[i].hd, batches[i].nimg, lines);
	return test_done();
}
