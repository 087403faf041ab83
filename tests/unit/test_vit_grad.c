/*
 * test_vit_grad.c - whole-model gradients against finite differences for
 * every non-rotary position encoding, both poolings, locality focusing,
 * dropout, 2 and 3 axes, tied parameters, mapped positions; dL/dx; and
 * determinism over thread counts.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck.h"
#include "pe.h"

struct batch {
	float	*x, *pos, *target, *logits;
	int	 B, T;
};

/* A random batch for config c over grid c->grid, one-hot-ish soft targets. */
static void
make_batch(struct batch *d, const struct vit_config *c, int B, int shared)
{
	int T = 1;
	for (int a = 0; a < c->axes; a++)
		T *= c->grid[a];
	d->B = B;
	d->T = T;
	d->x = malloc(sizeof(float) * B * T * c->P);
	d->pos = malloc(sizeof(float) * B * T * c->axes);
	d->target = calloc((size_t)B * c->classes, sizeof(float));
	d->logits = malloc(sizeof(float) * B * c->classes);
	gc_randn(d->x, (size_t)B * T * c->P, 1.0f, 5);
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			int rem = t;
			for (int a = c->axes - 1; a >= 0; a--) {
				float v = (float)(rem % c->grid[a]);
				rem /= c->grid[a];
				d->pos[((size_t)b * T + t) * c->axes + a] =
				    v * 0.7f + (shared ? 0 : 0.1f * b);
			}
		}
	for (int b = 0; b < B; b++) {
		d->target[(size_t)b * c->classes + b % c->classes] = 0.9f;
		d->target[(size_t)b * c->classes + (b + 1) % c->classes] += 0.1f;
	}
}

static void
free_batch(struct batch *d)
{
	free(d->x);
	free(d->pos);
	free(d->target);
	free(d->logits);
}

static void
small(struct vit_config *c, const char *pe, int axes)
{
	vit_config_init(c);
	c->dim = 16;
	c->depth = 2;
	c->heads = 2;
	c->mlp = 24;
	c->classes = 5;
	c->P = 6;
	c->axes = axes;
	for (int a = 0; a < axes; a++)
		c->grid[a] = a == 0 && axes == 3 ? 2 : 3 - (a == axes - 1);
	snprintf(c->pe, sizeof c->pe, "%s", pe);
}

static void
check(const struct vit_config *c, int training, int shared, const char *label)
{
	struct err e;
	struct batch d;
	make_batch(&d, c, 3, shared);
	struct vit *m = vit_create(c, 4, d.T, 7, &e);
	CHECK(m != NULL, "%s: create (%s)", label, m ? "" : e.msg);
	if (m == NULL)
		return;
	/* move parameters away from their init so every path carries signal */
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *t = &m->tensor[i];
		float *noise = malloc(sizeof(float) * t->n);
		gc_randn(noise, t->n, t->rank >= 2 ? 0.3f : 0.2f, 50 + i);
		for (size_t j = 0; j < t->n; j++)
			m->param[t->off + j] += noise[j];
		size_t first;	/* tied copies stay equal, as training keeps them */
		for (size_t j = 0; j < t->n && strcmp(t->name, "pe.params") == 0; j++)
			if (gc_copy(m, j, &first))
				m->param[t->off + j] = m->param[t->off + first];
		free(noise);
	}
	struct gc_batch b = { d.x, d.pos, d.target, d.B, d.T, training, 99, d.logits };
	gc_model(m, &b, label);

	/* dL/dx along a random direction */
	vit_zero_grad(m);
	gc_loss(m, &b);
	vit_backward(m);
	size_t nx = (size_t)d.B * d.T * c->P;
	float *dir = malloc(sizeof(float) * nx), *xs = malloc(sizeof(float) * nx);
	gc_randn(dir, nx, 1.0f / sqrtf((float)nx), 9);
	double an = 0;
	for (size_t i = 0; i < nx; i++)
		an += (double)vit_dx(m)[i] * dir[i];
	memcpy(xs, d.x, sizeof(float) * nx);
	for (size_t i = 0; i < nx; i++)
		d.x[i] = xs[i] + 1e-2f * dir[i];
	double lp = gc_loss(m, &b);
	for (size_t i = 0; i < nx; i++)
		d.x[i] = xs[i] - 1e-2f * dir[i];
	double lm = gc_loss(m, &b);
	memcpy(d.x, xs, sizeof(float) * nx);
	double fd = (lp - lm) / 2e-2;
	CHECK(fabs(fd - an) <= 2e-2 * fmax(fabs(fd), 1e-2),
	    "%s: dL/dx analytic %.6g, differences %.6g", label, an, fd);
	/* the norm --clip takes counts each tied parameter once */
	const struct vit_tensor *pt = vit_find_tensor(m, "pe.params");
	double want = 0, all = 0;
	for (size_t i = 0; i < m->nparam; i++) {
		size_t first;
		double g2 = (double)m->grad[i] * m->grad[i];
		all += g2;
		if (pt == NULL || i < pt->off || i >= pt->off + pt->n ||
		    !gc_copy(m, i - pt->off, &first))
			want += g2;
	}
	CHECK(fabs(vit_grad_sumsq(m) - want) <= 1e-9 * want, "%s: the gradient's "
	    "squared norm %.9g, each tied parameter once (%.9g; with the copies "
	    "%.9g)", label, vit_grad_sumsq(m), want, all);
	free(dir);
	free(xs);
	vit_destroy(m);
	free_batch(&d);
}

/* Same bytes out for 1 and 2 threads, with dropout; pe with share, and
 * positions per record (rotary: per_record) or not. */
static void
determinism(const char *pe, int share, int per_record)
{
	struct vit_config c;
	struct err e;
	small(&c, pe, 2);
	c.share = share;
	c.pos_per_record = per_record;
	c.dropout = 0.2f;
	c.emb_dropout = 0.1f;
	c.locality = 1;
	struct batch d;
	make_batch(&d, &c, 3, 0);
	float *g[2], l[2];
	for (int k = 0; k < 2; k++) {
		omp_set_num_threads(k + 1);
		struct vit *m = vit_create(&c, 3, d.T, 3, &e);
		vit_zero_grad(m);
		l[k] = vit_forward(m, d.x, d.pos, d.B, d.T, d.target, d.logits, 1, 5);
		vit_backward(m);
		g[k] = malloc(sizeof(float) * m->nparam);
		memcpy(g[k], m->grad, sizeof(float) * m->nparam);
		if (k == 1)
			CHECK(memcmp(g[0], g[1], sizeof(float) * m->nparam) == 0,
			    "%s share %s: gradients identical with 1 and 2 threads", pe,
			    pe_share_name(share));
		vit_destroy(m);
	}
	CHECK(l[0] == l[1], "%s: loss identical with 1 and 2 threads (%g %g)", pe, l[0], l[1]);
	free(g[0]);
	free(g[1]);
	free_batch(&d);
	omp_set_num_threads(1);
}

/* Weight decay falls on the matrices of the products alone (patch, qkv,
 * proj, fc1, fc2, head: the rank-2 ".w" tensors), never on norms, biases,
 * CLS, position tables, log sigma or generators. */
static void
decay_flags(const char *pe)
{
	struct vit_config c;
	struct err e = { "" };
	int bad = 0, on = 0;

	small(&c, pe, 2);
	c.locality = 1;
	struct vit *m = vit_create(&c, 2, 6, 1, &e);
	for (int t = 0; m != NULL && t < m->ntensor; t++) {
		const struct vit_tensor *w = &m->tensor[t];
		size_t n = strlen(w->name);
		int matrix = w->rank == 2 && n > 2 && strcmp(w->name + n - 2, ".w") == 0;
		on += w->decay;
		if (w->decay != matrix) {
			printf("# %s: decay %d\n", w->name, w->decay);
			bad++;
		}
	}
	CHECK(m != NULL && bad == 0 && on == 2 + 4 * c.depth,
	    "%s: weight decay on the %d matrices alone (%s)", pe, on, e.msg);
	vit_destroy(m);
}

/* Locality's CLS row: with cls_rotate, CLS is at cls_pos, so moving it
 * changes the distances and the logits; without, its distances are 0
 * wherever cls_pos says (finite differences cannot see which: both are
 * consistent). */
static void
cls_distance(void)
{
	struct vit_config c;
	struct batch d;
	struct err e;
	float lg[2][3 * 5];

	small(&c, "none", 2);
	c.locality = 1;
	make_batch(&d, &c, 3, 1);
	for (int rot = 0; rot < 2; rot++) {
		c.cls_rotate = rot;
		for (int k = 0; k < 2; k++) {
			c.cls_pos[0] = c.cls_pos[1] = k ? 3.0f : 0.5f;
			struct vit *m = vit_create(&c, 3, d.T, 3, &e);
			vit_forward(m, d.x, d.pos, d.B, d.T, NULL, lg[k], 0, 0);
			vit_destroy(m);
		}
		int same = memcmp(lg[0], lg[1], sizeof lg[0]) == 0;
		CHECK(rot ? !same : same, "locality, CLS %s: moving cls_pos %s the logits",
		    rot ? "positioned" : "unpositioned", rot ? "changes" : "leaves");
	}
	free_batch(&d);
}

/* ape's table starts as ComRoPE's code draws it, normal(0, 1) (vit-train(1)). */
static void
ape_init(void)
{
	struct vit_config c;
	struct err e;
	small(&c, "ape", 2);
	c.dim = 64;
	c.grid[0] = c.grid[1] = 8;
	struct vit *m = vit_create(&c, 1, 64, 3, &e);
	const struct vit_tensor *t = vit_find_tensor(m, "pos_table");
	double s = 0, s2 = 0;
	for (size_t i = 0; t != NULL && i < t->n; i++) {
		s += m->param[t->off + i];
		s2 += (double)m->param[t->off + i] * m->param[t->off + i];
	}
	size_t n = t ? t->n : 1;
	double mean = s / n, sd = sqrt(s2 / n - mean * mean);
	CHECK(t != NULL && t->n == 64 * 64 && fabs(mean) < 0.05 && fabs(sd - 1) < 0.05,
	    "ape: pos_table [64][64] starts normal(0, 1): mean %.3f, sd %.3f", mean, sd);
	vit_destroy(m);
}

/* ape,official reads its table as ComRoPE's code does: in 3D as ape reads
 * it with the t and x coordinates swapped, in 2D with x at the middle. */
static void
ape_official(int axes)
{
	struct vit_config c, o;
	struct err e;
	float lg[2][3 * 5];
	small(&c, "ape", axes);
	c.grid[0] = c.grid[axes - 1] = 3;	/* a table as wide in t as in x */
	o = c;
	snprintf(o.pe, sizeof o.pe, "ape,official");
	struct batch d;
	make_batch(&d, &c, 3, 0);
	struct vit *m = vit_create(&o, 3, d.T, 7, &e);
	vit_forward(m, d.x, d.pos, d.B, d.T, NULL, lg[0], 0, 0);
	vit_destroy(m);
	for (int i = 0; i < d.B * d.T; i++) {
		float *p = d.pos + (size_t)i * axes, t = p[0];
		if (axes == 2)
			p[1] = 0.5f;
		else {
			p[0] = p[2];
			p[2] = t;
		}
	}
	m = vit_create(&c, 3, d.T, 7, &e);
	vit_forward(m, d.x, d.pos, d.B, d.T, NULL, lg[1], 0, 0);
	CHECK(memcmp(lg[0], lg[1], sizeof(float) * d.B * c.classes) == 0,
	    "ape,official in %dD: ape's logits at the coordinates ComRoPE's code reads", axes);
	vit_destroy(m);
	free_batch(&d);
	small(&o, "ape,official", axes);
	check(&o, 0, 0, axes == 2 ? "ape,official 2D" : "ape,official 3D");
}

/* abs and sincos at another grid than the training one: the tables are
 * interpolated, gradients flow back to the table, a 3x2 model accepts
 * 4x3 tokens only after vit_set_grid.  ape reads its table at the
 * positions: it takes them as they are. */
static void
other_grid(const char *pe)
{
	struct vit_config c, run;
	struct err e;
	char label[64];
	small(&c, pe, 2);		/* grid 2x... from small(): 3x2 */
	run = c;
	run.grid[0] = 4;
	run.grid[1] = 3;
	struct batch d;
	make_batch(&d, &run, 3, 1);
	struct vit *m = vit_create(&c, 3, d.T, 7, &e);
	float l = vit_forward(m, d.x, d.pos, d.B, d.T, d.target, d.logits, 0, 0);
	if (vit_has_table(m)) {
		CHECK(isnan(l), "%s: 12 tokens refused at the 3x2 training grid (%s)", pe, m->err.msg);
		CHECK(vit_set_grid(m, run.grid) == 0, "%s: vit_set_grid 4x3", pe);
	} else
		CHECK(!isnan(l), "%s: 12 tokens taken at the 3x2 training grid (%s)", pe, m->err.msg);
	struct gc_batch b = { d.x, d.pos, d.target, d.B, d.T, 0, 1, d.logits };
	snprintf(label, sizeof label, "%s interpolated 3x2 -> 4x3", pe);
	gc_model(m, &b, label);
	vit_destroy(m);
	free_batch(&d);
}

/* Differing positions in a batch without pos_per_record: NaN and a reason. */
/* A model's position map (pos_scale, pos_shift: vit-train's --positions)
 * is the model given the mapped positions, CLS's included, for rotations
 * and locality alike; and its gradient is right. */
static void
mapped_positions(const char *pe, int per_record)
{
	static const float scale[2] = { 6, 0.125f }, shift[2] = { 0.5f, -1 };
	struct vit_config c, c2;
	struct err why;
	char label[96];
	struct batch d;
	float l[2];

	small(&c, pe, 2);
	c.locality = 1;
	c.cls_rotate = 1;
	c.cls_pos[0] = 0.25f, c.cls_pos[1] = 2;
	c.pos_per_record = per_record;
	c2 = c;
	make_batch(&d, &c, 3, !per_record);
	size_t np = (size_t)d.B * d.T * 2;
	float *mapped = malloc(sizeof(float) * np), *logits = malloc(sizeof(float) * 3 * 5);
	for (size_t i = 0; i < np; i++)
		mapped[i] = (float)((double)scale[i % 2] * d.pos[i] + shift[i % 2]);
	for (int a = 0; a < 2; a++) {
		c.pos_scale[a] = scale[a];
		c.pos_shift[a] = shift[a];
		c2.cls_pos[a] = (float)((double)scale[a] * c.cls_pos[a] + shift[a]);
	}
	struct vit *m = vit_create(&c, 4, d.T, 3, &why);
	struct vit *m2 = vit_create(&c2, 4, d.T, 3, &why);
	l[0] = vit_forward(m, d.x, d.pos, d.B, d.T, d.target, d.logits, 0, 0);
	l[1] = vit_forward(m2, d.x, mapped, d.B, d.T, d.target, logits, 0, 0);
	double e = 0;
	for (int i = 0; i < 3 * 5; i++)
		e = maxn(e, fabs(d.logits[i] - logits[i]));
	CHECK(fabs(l[0] - l[1]) < 1e-5 && e < 1e-5, "%s%s: mapped positions are the "
	    "mapped model's (loss %.7g and %.7g, logits %.2g apart)", pe,
	    per_record ? " per record" : "", l[0], l[1], e);
	vit_destroy(m);
	vit_destroy(m2);
	snprintf(label, sizeof label, "%s mapped positions, locality, CLS%s", pe,
	    per_record ? ", per record" : "");
	check(&c, 0, !per_record, label);
	free(mapped);
	free(logits);
	free_batch(&d);
}

static void
refuses_mixed_positions(void)
{
	struct vit_config c;
	struct err e;
	small(&c, "liere:4", 2);
	struct batch d;
	make_batch(&d, &c, 3, 0);
	struct vit *m = vit_create(&c, 3, d.T, 3, &e);
	float l = vit_forward(m, d.x, d.pos, d.B, d.T, d.target, d.logits, 0, 0);
	CHECK(isnan(l) && strstr(m->err.msg, "pos_per_record") != NULL,
	    "per-record positions refused without pos_per_record (%s)", m->err.msg);
	vit_destroy(m);
	free_batch(&d);
}

int
main(void)
{
	struct vit_config c;
	const char *pes[] = { "none", "abs", "sincos", "ape" };
	omp_set_num_threads(1);	/* tiny models: threads only add overhead */
	for (int i = 0; i < 4; i++) {
		small(&c, pes[i], 2);
		check(&c, 0, 1, pes[i]);
	}
	small(&c, "abs", 2);
	c.pool = VIT_POOL_MEAN;
	check(&c, 0, 1, "abs pool mean");
	small(&c, "none", 2);
	c.locality = 1;
	check(&c, 0, 1, "locality shared positions");
	c.cls_rotate = 1;
	c.cls_pos[0] = c.cls_pos[1] = 0.5f;
	check(&c, 0, 0, "locality per-record positions, CLS positioned");
	cls_distance();
	decay_flags("abs");
	decay_flags("liere:4");
	small(&c, "abs", 2);
	c.dropout = 0.25f;
	c.emb_dropout = 0.1f;
	check(&c, 1, 1, "abs dropout");
	small(&c, "sincos", 3);
	c.locality = 1;
	check(&c, 0, 1, "sincos 3 axes locality");
	small(&c, "ape", 3);
	c.cls_rotate = 1;
	c.cls_pos[0] = c.cls_pos[1] = c.cls_pos[2] = 0.5f;
	check(&c, 1, 0, "ape 3 axes, per-record positions, CLS positioned, dropout");

	/* rotary encodings, the matrix-exponential path included (b > 2) */
	const char *rot[] = { "rope-axial", "rope-mixed", "liere:2", "liere:4",
	    "liere:8", "comrope-ap:4", "comrope-ld:4", "riemann",
	    "riemann,reflect", "zeros", "string", "rope-nd" };
	for (size_t i = 0; i < sizeof rot / sizeof rot[0]; i++) {
		small(&c, rot[i], 2);
		check(&c, 0, 1, rot[i]);
	}
	small(&c, "liere:4", 2);
	c.cls_rotate = 1;
	c.cls_pos[0] = c.cls_pos[1] = 0.5f;
	c.locality = 1;
	check(&c, 0, 1, "liere:4 CLS rotated, locality");
	c.pos_per_record = 1;
	check(&c, 0, 0, "liere:4 per-record positions");
	small(&c, "comrope-ld:8", 3);
	c.share = PE_SHARE_HEADS;
	check(&c, 0, 1, "comrope-ld:8 3 axes, shared across heads");
	/* the multipliers tied within a layer: one parameter, copies in step */
	small(&c, "comrope-ld:4,tied", 2);
	check(&c, 0, 1, "comrope-ld:4,tied");
	small(&c, "comrope-ld:4,tied", 3);
	c.share = PE_SHARE_LAYERS;
	check(&c, 0, 1, "comrope-ld:4,tied 3 axes, shared across layers");
	small(&c, "liere:8", 2);
	c.share = PE_SHARE_LAYERS;
	c.pool = VIT_POOL_MEAN;
	c.dropout = 0.2f;
	check(&c, 1, 1, "liere:8 shared across layers, pool mean, dropout");
	/* head_dim 16: blocks of 16 take pe_apply_batch's vector kernels */
	small(&c, "liere:16", 2);
	c.dim = 32;
	check(&c, 0, 1, "liere:16 (vector kernels)");
	c.cls_rotate = 1;
	c.share = PE_SHARE_HEADS;
	check(&c, 0, 1, "liere:16 CLS rotated, shared across heads");
	/* head_dim 24: blocks of 12, 16 at a time through expm_lanes.c */
	small(&c, "liere:12", 2);
	c.dim = 48;
	c.pos_per_record = 1;
	check(&c, 0, 0, "liere:12 per-record positions (16 exponentials at once)");
	small(&c, "rope-mixed", 2);
	c.share = PE_SHARE_ALL;
	check(&c, 0, 1, "rope-mixed shared by all");
	/* VideoRoPE: t's pairs and the diagonal, 3 axes, CLS positioned */
	small(&c, "videorope", 3);
	c.cls_rotate = 1;
	c.cls_pos[0] = c.cls_pos[1] = c.cls_pos[2] = 1;
	check(&c, 0, 1, "videorope 3 axes, CLS rotated");
	/* Circulant-STRING: a fixed Fourier basis, the spectrum learned */
	small(&c, "circulant-string", 2);
	check(&c, 0, 1, "circulant-string");
	small(&c, "circulant-string", 3);
	c.share = PE_SHARE_HEADS;
	check(&c, 0, 1, "circulant-string 3 axes, shared across heads");
	/* a basis per set: P^T as a product per head, its gradient per head
	 * (own sets) or in head order (shared) */
	small(&c, "string", 3);
	c.cls_rotate = 1;
	c.share = PE_SHARE_HEADS;
	check(&c, 0, 1, "string 3 axes CLS rotated, shared across heads");
	c.pos_per_record = 1;
	check(&c, 0, 0, "string per-record positions");
	small(&c, "rope-nd", 2);
	c.share = PE_SHARE_LAYERS;
	c.pool = VIT_POOL_MEAN;
	c.dropout = 0.2f;
	check(&c, 1, 1, "rope-nd shared across layers, pool mean, dropout");
	small(&c, "string", 2);
	c.share = PE_SHARE_ALL;
	c.dim = 32;
	check(&c, 0, 1, "string shared by all, head 16");
	refuses_mixed_positions();
	mapped_positions("rope-axial", 0);
	mapped_positions("liere:4", 1);
	mapped_positions("comrope-ld:4", 0);
	other_grid("abs");
	other_grid("sincos");
	other_grid("ape");
	ape_init();
	ape_official(2);
	ape_official(3);
	determinism("abs", PE_SHARE_NONE, 0);
	determinism("string", PE_SHARE_NONE, 1);
	determinism("string", PE_SHARE_HEADS, 1);
	return test_done();
}
