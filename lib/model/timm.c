/*
 * timm.c - weights under timm's names and layouts, out and in (timm.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pe.h"
#include "pe_method.h"
#include "resize.h"
#include "timm.h"

/* How a tensor goes between the two layouts. */
enum how {
	H_COPY,		/* same values, same order (shapes may differ by 1s) */
	H_CLS,		/* [1, 1, D] <-> [D] */
	H_POS,		/* [1, 1+G, D] <-> [1+G][D]; resampled to another grid */
	H_PATCH,	/* conv [D, C, s...] <-> rows [D][s... C] */
	H_FREQS,	/* rope.freqs <-> rope-mixed's pe.params */
	H_PE,		/* pe.params [nset, set_params] <-> [nparam] */
	H_HEAD,		/* copied, or replaced by a new head */
	H_SCALE,	/* layer scale: folded into a projection (import only) */
};

/* The names, one line per tensor; block rules name the part after
 * "blocks.L.", and their vitpipe name of an H_SCALE is the projection it
 * scales (its .w and .b). */
static const struct rule {
	const char *timm, *vit;
	int	 block;
	enum how how;
} rules[] = {
	{ "cls_token", "cls", 0, H_CLS },
	{ "pos_embed", "pos_embed", 0, H_POS },
	{ "patch_embed.proj.weight", "patch.w", 0, H_PATCH },
	{ "patch_embed.proj.bias", "patch.b", 0, H_COPY },
	{ "norm1.weight", "ln1.w", 1, H_COPY },
	{ "norm1.bias", "ln1.b", 1, H_COPY },
	{ "attn.qkv.weight", "attn.qkv.w", 1, H_COPY },
	{ "attn.qkv.bias", "attn.qkv.b", 1, H_COPY },
	{ "attn.proj.weight", "attn.proj.w", 1, H_COPY },
	{ "attn.proj.bias", "attn.proj.b", 1, H_COPY },
	{ "attn.log_sigma", "attn.log_sigma", 1, H_COPY },
	{ "norm2.weight", "ln2.w", 1, H_COPY },
	{ "norm2.bias", "ln2.b", 1, H_COPY },
	{ "mlp.fc1.weight", "mlp.fc1.w", 1, H_COPY },
	{ "mlp.fc1.bias", "mlp.fc1.b", 1, H_COPY },
	{ "mlp.fc2.weight", "mlp.fc2.w", 1, H_COPY },
	{ "mlp.fc2.bias", "mlp.fc2.b", 1, H_COPY },
	{ "ls1.gamma", "attn.proj", 1, H_SCALE },
	{ "gamma_1", "attn.proj", 1, H_SCALE },
	{ "ls2.gamma", "mlp.fc2", 1, H_SCALE },
	{ "gamma_2", "mlp.fc2", 1, H_SCALE },
	{ "norm.weight", "norm.w", 0, H_COPY },
	{ "norm.bias", "norm.b", 0, H_COPY },
	{ "head.weight", "head.w", 0, H_HEAD },
	{ "head.bias", "head.b", 0, H_HEAD },
	{ "rope.freqs", PE_FIELD, 0, H_FREQS },
	{ PE_FIELD, PE_FIELD, 0, H_PE },
};
#define NRULES	(sizeof rules / sizeof rules[0])

/* Weights of timm's models that vitpipe's ViT has no place for, and why:
 * a name that starts with prefix (after "blocks.L." when block). */
static const struct {
	const char *prefix;
	int	 block;
	const char *why;
} unsupported[] = {
	{ "fc_norm.", 0, "a norm of the pooled features (timm's avg pooling): vitpipe "
	    "normalizes every token, before pooling" },
	{ "dist_token", 0, "DeiT's distillation token: vitpipe's ViT has one CLS token" },
	{ "head_dist.", 0, "DeiT's distillation head: vitpipe's ViT has one head" },
	{ "reg_token", 0, "register tokens: vitpipe's ViT has none" },
	{ "norm_pre.", 0, "a norm before the blocks: vitpipe's ViT has none" },
	{ "attn_pool.", 0, "attention pooling: vitpipe pools by CLS or mean" },
	{ "mask_token", 0, "a masked-image-modelling token, of pre-training" },
	{ "patch_embed.norm.", 0, "a norm after the patch embedding: vitpipe's ViT has none" },
	{ "attn.q_norm.", 1, "query norm: vitpipe's attention has none" },
	{ "attn.k_norm.", 1, "key norm: vitpipe's attention has none" },
	{ "attn.norm.", 1, "a norm inside attention: vitpipe's has none" },
	{ "attn.q_bias", 1, "EVA's separate query bias: vitpipe's qkv has one fused bias" },
	{ "attn.v_bias", 1, "EVA's separate value bias: vitpipe's qkv has one fused bias" },
	{ "attn.q_proj.", 1, "separate q, k, v projections: vitpipe's are fused (qkv)" },
	{ "attn.k_proj.", 1, "separate q, k, v projections: vitpipe's are fused (qkv)" },
	{ "attn.v_proj.", 1, "separate q, k, v projections: vitpipe's are fused (qkv)" },
	{ "mlp.norm.", 1, "a norm inside the MLP: vitpipe's has none" },
	{ "mlp.fc1_", 1, "a gated (SwiGLU) MLP: vitpipe's MLP is GELU" },
	{ "mlp.w", 1, "a gated (SwiGLU) MLP: vitpipe's MLP is GELU" },
};

/* timm skips these when it loads a checkpoint (eva.py): computed from the
 * grid, not learned; vitpipe computes them from the stream's positions. */
static const char rope_buffer[] = "a buffer of timm's rotary embedding, computed, "
    "not learned (timm's own loader drops it): vitpipe takes positions from the "
    "stream";

/* The block of a "blocks.L.rest" name (rest in *rest), or -1. */
static int
block_of(const char *name, const char **rest)
{
	const char *p = name + 7;
	long l = 0;

	if (strncmp(name, "blocks.", 7) != 0 || *p < '0' || *p > '9' ||
	    (*p == '0' && p[1] != '.'))
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((l = l * 10 + (*p - '0')) > 1 << 20)
			return -1;
	if (*p != '.')
		return -1;
	*rest = p + 1;
	return (int)l;
}

/* The pe of config c (parsed; c was checked). */
static void
parse_pe(const struct vit_config *c, struct pe *pe)
{
	pe_parse(pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share));
}

/* Whether m's encoding has timm's rope.freqs layout: the encoding timm
 * keeps there (rope-mixed), 2 axes, a set per layer and head. */
static int
freqs_layout(const struct vit_config *c)
{
	struct pe pe;

	parse_pe(c, &pe);
	return pe.method && pe.method->timm && strcmp(pe.method->timm, "rope.freqs") == 0 &&
	    c->axes == 2 && c->share == PE_SHARE_NONE;
}

/* pe.params [depth][heads][axes (y, x)][pairs] <-> rope.freqs [axes (x,
 * y)][depth][heads][pairs], negated (timm turns pair j by +f, vitpipe's
 * upper entry is u = -f: pe.h).  to_timm: the direction. */
static void
convert_freqs(const struct vit_config *c, const float *src, float *dst, int to_timm)
{
	int L = c->depth, H = c->heads, J = c->dim / c->heads / 2;

	for (int l = 0; l < L; l++)
		for (int h = 0; h < H; h++)
			for (int a = 0; a < 2; a++)
				for (int j = 0; j < J; j++) {
					size_t v = (((size_t)l * H + h) * 2 + a) * J + j;
					size_t t = (((size_t)(1 - a) * L + l) * H + h) * J + j;
					if (to_timm)
						dst[t] = -src[v];
					else
						dst[v] = -src[t];
				}
}

/* Rows [D][S][C] (vitpipe's patch values, channels last) <-> conv
 * weights [D][C][S]. */
static void
convert_patch(const float *src, float *dst, int D, int C, int64_t S, int to_timm)
{
	for (int d = 0; d < D; d++)
		for (int64_t s = 0; s < S; s++)
			for (int c = 0; c < C; c++) {
				size_t row = ((size_t)d * S + s) * C + c;
				size_t conv = ((size_t)d * C + c) * S + s;
				if (to_timm)
					dst[conv] = src[row];
				else
					dst[row] = src[conv];
			}
}

/* The patch geometry of a checkpoint: channels *C and the patch's sides
 * s[*ns] from its CHANNELS and PATCH keys when they make P values, else
 * one 1x1 "patch" of P channels. */
static void
patch_geometry(const struct vit_config *c, const struct vt *keys, int *C, int64_t *s,
    int *ns)
{
	const char *ch = vt_meta(keys, "CHANNELS"), *pk = vt_meta(keys, "PATCH");
	int64_t n = 0, prod = 1;

	if (ch != NULL && pk != NULL && vt_parse_int(ch, NULL, 1, c->P, &n) == 0 &&
	    (*ns = vt_parse_dims(pk, s, VIT_MAXAXES)) == c->axes) {
		for (int k = 0; k < *ns; k++)
			prod *= s[k];
		if (prod * n == c->P) {
			*C = (int)n;
			return;
		}
	}
	*C = c->P;
	*ns = 2;
	s[0] = s[1] = 1;
}

/* A header line of a checkpoint, and its place in the header. */
struct kline {
	const char *key, *val;
	int	 at;
};

/* By key, then by place. */
static int
by_key(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Pointers to lines, by place. */
static int
by_at(const void *a, const void *b)
{
	const struct kline *x = *(const struct kline *const *)a,
	    *y = *(const struct kline *const *)b;

	return (x->at > y->at) - (x->at < y->at);
}

/* One key's lines, from first, joined by newlines into out. */
static int
join_key(const struct kline *first, const struct kline *end, struct st *out, struct err *e)
{
	char *val = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&val, &len);
	int rc;

	if (m == NULL)
		return err_set(e, "out of memory");
	for (const struct kline *k = first; k < end && strcmp(k->key, first->key) == 0; k++)
		fprintf(m, "%s%s", k > first ? "\n" : "", k->val);
	if (fclose(m) != 0)
		return err_set(e, "out of memory");
	rc = st_meta_add(out, first->key, val);
	free(val);
	return rc < 0 ? err_set(e, "%s", out->err.msg) : 0;
}

/* Metadata from the keys of ckpt in the order of their first lines, a
 * repeated key's values joined by newlines (the keys' values hold none):
 * the lines grouped by sorting, not by a scan per line, for a header may
 * hold millions. */
static int
export_meta(const struct vt *ckpt, struct st *out, struct err *e)
{
	int n = ckpt->nmeta, nhead = 0, rc = 0;
	struct kline *l = malloc(sizeof *l * (n + 1)), **head = malloc(sizeof *head * (n + 1));

	if (l == NULL || head == NULL || st_meta_add(out, "format", "pt") < 0 ||
	    st_meta_add(out, TIMM_MARK, VITPIPE_VERSION) < 0) {
		free(l);
		free(head);
		return err_set(e, "out of memory");
	}
	for (int i = 0; i < n; i++)
		l[i] = (struct kline){ ckpt->meta[i].key, ckpt->meta[i].val, i };
	qsort(l, n, sizeof *l, by_key);
	for (int i = 0; i < n; i++)
		if (i == 0 || strcmp(l[i - 1].key, l[i].key) != 0)
			head[nhead++] = &l[i];
	qsort(head, nhead, sizeof *head, by_at);
	for (int h = 0; h < nhead && rc == 0; h++)
		rc = join_key(head[h], l + n, out, e);
	free(l);
	free(head);
	return rc;
}

int
timm_export(const struct vit *m, const struct vt *ckpt, struct st *out, struct err *e)
{
	const struct vit_config *c = &m->c;

	if (export_meta(ckpt, out, e) < 0)
		return -1;
	for (int i = 0; i < m->ntensor; i++) {
		const struct vit_tensor *w = &m->tensor[i];
		const char *rest = w->name;
		int l = block_of(w->name, &rest), rank = w->rank;
		const struct rule *r = NULL;
		float *src = m->param + w->off, *copy = NULL;
		int64_t shape[ST_MAXRANK];
		char name[VIT_MAXNAME + 32];

		for (size_t k = 0; k < NRULES && r == NULL; k++)
			if (rules[k].how != H_SCALE && rules[k].block == (l >= 0) &&
			    strcmp(rules[k].vit, rest) == 0)
				r = &rules[k];
		if (r != NULL && r->how == H_FREQS && !freqs_layout(c))
			r++;	/* pe.params as such */
		if (r == NULL)
			return err_set(e, "tensor '%s' has no timm name", w->name);
		if (l >= 0)
			snprintf(name, sizeof name, "blocks.%d.%s", l, r->timm);
		else
			snprintf(name, sizeof name, "%s", r->timm);
		for (int k = 0; k < rank; k++)
			shape[k] = w->shape[k];
		switch (r->how) {
		case H_CLS:
			rank = 3;
			shape[0] = shape[1] = 1;
			shape[2] = w->shape[0];
			break;
		case H_POS:
			rank = 3;
			shape[0] = 1;
			shape[1] = w->shape[0];
			shape[2] = w->shape[1];
			break;
		case H_PATCH: {
			int C, ns;
			int64_t s[VIT_MAXAXES], S = 1;
			patch_geometry(c, ckpt, &C, s, &ns);
			rank = 2 + ns;
			shape[1] = C;
			for (int k = 0; k < ns; k++) {
				shape[2 + k] = s[k];
				S *= s[k];
			}
			if ((copy = malloc(w->n * sizeof *copy)) == NULL)
				return err_set(e, "out of memory");
			convert_patch(src, copy, c->dim, C, S, 1);
			break;
		}
		case H_FREQS:
			rank = 4;
			shape[0] = 2;
			shape[1] = c->depth;
			shape[2] = c->heads;
			shape[3] = c->dim / c->heads / 2;
			if ((copy = malloc(w->n * sizeof *copy)) == NULL)
				return err_set(e, "out of memory");
			convert_freqs(c, src, copy, 1);
			break;
		case H_PE: {
			struct pe pe;
			parse_pe(c, &pe);
			rank = 2;
			shape[0] = pe.nset;
			shape[1] = pe.set_params;
			break;
		}
		default:
			break;
		}
		if (st_add_f32(out, name, rank, shape, copy ? copy : src, copy != NULL) < 0) {
			free(copy);
			return err_set(e, "%s", out->err.msg);
		}
	}
	return 0;
}

/* ---- import ---- */

/* Tensors a file may hold: a ViT of 1024 blocks has under 16 500. */
#define TIMM_MAXTENSORS	(1 << 16)

/* Whether t has exactly the shape dims[rank]. */
static int
has_shape(const struct st_tensor *t, int rank, const int64_t *dims)
{
	if (t->rank != rank)
		return 0;
	for (int k = 0; k < rank; k++)
		if (t->shape[k] != dims[k])
			return 0;
	return 1;
}

/* The metadata of a vitpipe export back into header keys (a joined key
 * split into its lines), but for the format's own. */
static int
import_keys(const struct st *s, struct vt *keys, struct err *e)
{
	for (int i = 0; i < s->nmeta; i++) {
		const char *key = s->meta[i].key;
		char *val, *line, *save;

		if (strcmp(key, "format") == 0 || strcmp(key, TIMM_MARK) == 0)
			continue;
		if ((val = strdup(s->meta[i].val)) == NULL)
			return err_set(e, "out of memory");
		for (line = strtok_r(val, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save))
			if (vt_meta_add(keys, key, line) < 0) {
				free(val);
				return err_set(e, "%s: %s", ST_METADATA, keys->err.msg);
			}
		free(val);
	}
	return 0;
}

/* Tokens of grid g[axes]. */
static int64_t
tokens(const int *g, int axes)
{
	int64_t n = 1;

	for (int a = 0; a < axes; a++)
		n *= g[a];
	return n;
}

/* The side of a cube of n cells in axes dimensions, or 0. */
static int
cube_side(int64_t n, int axes)
{
	int side = (int)llround(pow((double)n, 1.0 / axes));

	for (int s = side > 1 ? side - 1 : 1; s <= side + 1; s++) {
		int64_t p = 1;
		for (int a = 0; a < axes; a++)
			p *= s;
		if (p == n)
			return s;
	}
	return 0;
}

/* Config c of the weights of a file without vitpipe's metadata, from the
 * shapes of its tensors, and the keys its checkpoint carries. */
static int
infer_config(const struct st *s, const struct timm_opts *o, struct vit_config *c,
    struct timm_plan *p, struct err *e)
{
	const struct st_tensor *cls = st_find(s, "cls_token"),
	    *patch = st_find(s, "patch_embed.proj.weight"),
	    *fc1 = st_find(s, "blocks.0.mlp.fc1.weight"), *head = st_find(s, "head.weight"),
	    *pos = st_find(s, "pos_embed"), *freqs = st_find(s, "rope.freqs");
	char buf[128];
	int64_t S = 1;
	int n = 0;

	vit_config_init(c);
	if (cls == NULL || cls->rank != 3 || cls->shape[0] != 1 || cls->shape[1] != 1 ||
	    cls->shape[2] < 1 || cls->shape[2] > 65536)
		return err_set(e, "no cls_token [1, 1, dim]: vitpipe's ViT classifies "
		    "from a CLS token (timm's class_token=True)");
	c->dim = (int)cls->shape[2];
	if (patch == NULL || (patch->rank != 4 && patch->rank != 5) ||
	    patch->shape[0] != c->dim)
		return err_set(e, "no patch_embed.proj.weight [%d, channels, ph, pw] "
		    "(or [.., pt, ph, pw])", c->dim);
	c->axes = patch->rank - 2;
	for (int k = 2; k < patch->rank; k++) {
		if (patch->shape[k] < 1 || patch->shape[k] > 4096)
			return err_set(e, "patch_embed.proj.weight: bad shape %s",
			    vt_shape_str(patch->shape, patch->rank, buf, sizeof buf));
		S *= patch->shape[k];
	}
	if (patch->shape[1] < 1 || patch->shape[1] > 4096 || S * patch->shape[1] > 1 << 24)
		return err_set(e, "patch_embed.proj.weight: bad shape %s",
		    vt_shape_str(patch->shape, patch->rank, buf, sizeof buf));
	c->P = (int)(S * patch->shape[1]);
	for (int i = 0; i < s->ntensor; i++) {
		const char *rest;
		int l = block_of(s->tensor[i].name, &rest);
		if (l >= n && l < 1024)
			n = l + 1;
	}
	if (n == 0)
		return err_set(e, "no blocks.0. tensors: not a ViT");
	c->depth = n;
	if (fc1 == NULL || fc1->rank != 2 || fc1->shape[1] != c->dim || fc1->shape[0] < 1 ||
	    fc1->shape[0] > 1 << 18)
		return err_set(e, "no blocks.0.mlp.fc1.weight [mlp, %d]", c->dim);
	c->mlp = (int)fc1->shape[0];
	c->heads = o->heads ? o->heads : c->dim % 64 == 0 ? c->dim / 64 : 0;
	if (c->heads == 0)
		return err_set(e, "dim %d is no multiple of timm's head size 64: give "
		    "--heads", c->dim);
	if (o->classes == 0 && (head == NULL || head->rank != 2 || head->shape[0] < 1 ||
	    head->shape[0] > 1 << 20))
		return err_set(e, "no head.weight [classes, %d]: give --classes for a "
		    "new head", c->dim);
	c->classes = head != NULL && head->rank == 2 && head->shape[0] >= 1 &&
	    head->shape[0] <= 1 << 20 ? (int)head->shape[0] : o->classes;
	c->locality = st_find(s, "blocks.0.attn.log_sigma") != NULL;
	if (pos != NULL && freqs != NULL)
		return err_set(e, "both pos_embed and rope.freqs: vitpipe's models have "
		    "one position encoding");
	const char *pe = pos ? pe_by_timm("pos_embed") : freqs ? pe_by_timm("rope.freqs") : NULL;
	snprintf(c->pe, sizeof c->pe, "%s", pe ? pe : "none");
	int side = 0;
	if (pos != NULL && pos->rank == 3 && pos->shape[1] >= 2)
		side = cube_side(pos->shape[1] - 1, c->axes);
	if (side > 0)
		for (int a = 0; a < c->axes; a++)
			c->grid[a] = side;
	else if (!o->ngrid)
		/* No table (or one of no square grid, which then does not fit):
		 * the grid of timm's default input, 224 pixels a side. */
		for (int a = 0; a < c->axes; a++) {
			int64_t ps = patch->shape[2 + a];
			if (224 % ps != 0)
				return err_set(e, "no square pos_embed, and %lld pixel patches "
				    "do not tile 224: give --grid", (long long)ps);
			c->grid[a] = (int)(224 / ps);
		}
	/* The stream keys a checkpoint keeps: its patch and channels. */
	buf[0] = '\0';
	for (int k = 2, at = 0; k < patch->rank; k++)
		at += snprintf(buf + at, sizeof buf - at, "%s%lld", k > 2 ? "x" : "",
		    (long long)patch->shape[k]);
	if (vt_meta_set(&p->keys, "PATCH", buf) < 0)
		return err_set(e, "%s", p->keys.err.msg);
	snprintf(buf, sizeof buf, "%lld", (long long)patch->shape[1]);
	if (vt_meta_set(&p->keys, "CHANNELS", buf) < 0 ||
	    (freqs != NULL && vt_meta_set(&p->keys, "POS", "integer") < 0))
		return err_set(e, "%s", p->keys.err.msg);
	return 0;
}

/* The shape file tensor t must have to fill model tensor w by rule r, into
 * dims; its rank. */
static int
wanted(const struct timm_plan *p, const struct rule *r, const struct vit_tensor *w,
    const struct st_tensor *t, int64_t *dims)
{
	const struct vit_config *c = &p->m->c;
	int rank = w->rank;

	for (int k = 0; k < rank; k++)
		dims[k] = w->shape[k];
	switch (r->how) {
	case H_CLS:
		dims[0] = dims[1] = 1;
		dims[2] = c->dim;
		return 3;
	case H_POS:
		dims[0] = 1;
		dims[1] = 1 + tokens(p->src_grid, c->axes);
		dims[2] = c->dim;
		return 3;
	case H_PATCH: {
		/* [D, C, sides...] with C sides = P; C and sides as the file has them */
		int64_t prod = 1;
		if (t->rank < 3 || t->rank > 2 + VIT_MAXAXES)
			return -1;
		for (int k = 1; k < t->rank && prod <= c->P; k++)
			prod *= t->shape[k] <= c->P ? t->shape[k] : c->P + 1;
		if (prod != c->P)
			return -1;
		dims[0] = c->dim;
		for (int k = 1; k < t->rank; k++)
			dims[k] = t->shape[k];
		return t->rank;
	}
	case H_FREQS:
		if (!freqs_layout(c))
			return -1;
		dims[0] = 2;
		dims[1] = c->depth;
		dims[2] = c->heads;
		dims[3] = c->dim / c->heads / 2;
		return 4;
	case H_PE: {
		struct pe pe;
		parse_pe(c, &pe);
		dims[0] = pe.nset;
		dims[1] = pe.set_params;
		return 2;
	}
	case H_SCALE:
		dims[0] = c->dim;
		return 1;
	default:
		return rank;
	}
}

/* Decide the fate of file tensor t. */
static void
map_tensor(struct timm_plan *p, struct timm_entry *e)
{
	const struct st_tensor *t = e->t;
	const char *rest = t->name;
	int l = block_of(t->name, &rest), rank;
	const struct rule *r = NULL;
	const struct vit_tensor *w;
	int64_t dims[ST_MAXRANK];
	char a[96], b[96], vit[VIT_MAXNAME];

	e->fate = TIMM_UNKNOWN;
	for (size_t k = 0; k < NRULES && r == NULL; k++)
		if (rules[k].block == (l >= 0) && strcmp(rules[k].timm, rest) == 0)
			r = &rules[k];
	if (r == NULL) {
		if (strncmp(t->name, "rope.", 5) == 0) {
			e->fate = TIMM_SKIPPED;
			snprintf(e->why, sizeof e->why, "%s", rope_buffer);
			return;
		}
		snprintf(e->why, sizeof e->why, "not a weight of timm's VisionTransformer "
		    "that vitpipe knows");
		for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++)
			if (unsupported[k].block == (l >= 0) && strncmp(rest,
			    unsupported[k].prefix, strlen(unsupported[k].prefix)) == 0)
				snprintf(e->why, sizeof e->why, "%s", unsupported[k].why);
		return;
	}
	if (l >= p->m->c.depth) {
		snprintf(e->why, sizeof e->why, "block %d of a model of %d", l, p->m->c.depth);
		return;
	}
	if (r->how == H_PE && !p->vitpipe) {
		snprintf(e->why, sizeof e->why, "vitpipe's own rotary parameters, whose "
		    "encoding only the metadata of vitpipe's exports name");
		return;
	}
	if (r->how == H_HEAD && p->new_head) {
		e->fate = TIMM_SKIPPED;
		snprintf(e->why, sizeof e->why, "replaced by a new head of %d classes "
		    "(--classes)", p->m->c.classes);
		return;
	}
	e->how = r->how;
	if (l >= 0)
		snprintf(vit, sizeof vit, "blocks.%d.%s%s", l, r->vit,
		    r->how == H_SCALE ? ".w" : "");
	else
		snprintf(vit, sizeof vit, "%s", r->vit);
	if ((w = vit_find_tensor(p->m, vit)) == NULL) {
		snprintf(e->why, sizeof e->why, "the model (pe %s%s) has no %s", p->m->c.pe,
		    p->m->c.locality ? ", locality" : "", vit);
		e->fate = TIMM_MISFIT;
		return;
	}
	snprintf(e->dst, sizeof e->dst, "%s", r->how == H_SCALE ? vit : w->name);
	if (r->how == H_SCALE)
		e->dst[strlen(e->dst) - 2] = '\0';
	rank = wanted(p, r, w, t, dims);
	if (rank < 0 || !has_shape(t, rank, dims)) {
		e->fate = TIMM_MISFIT;
		if (rank < 0)
			snprintf(e->why, sizeof e->why, "shape %s does not fit %s of the model "
			    "(pe %s, %d values a patch)", vt_shape_str(t->shape, t->rank, a, sizeof a),
			    w->name, p->m->c.pe, p->m->c.P);
		else
			snprintf(e->why, sizeof e->why, "shape %s, the model's %s wants %s",
			    vt_shape_str(t->shape, t->rank, a, sizeof a), w->name,
			    vt_shape_str(dims, rank, b, sizeof b));
		return;
	}
	e->fate = TIMM_MAPPED;
	switch (r->how) {
	case H_POS:
		if (tokens(p->src_grid, p->m->c.axes) == tokens(p->m->c.grid, p->m->c.axes) &&
		    memcmp(p->src_grid, p->m->c.grid, sizeof(int) * p->m->c.axes) == 0)
			snprintf(e->why, sizeof e->why, "as is");
		else {
			size_t n = 0;
			for (int k = 0; k < p->m->c.axes; k++)
				n += snprintf(a + n, sizeof a - n, "%s%d", k ? "x" : "", p->src_grid[k]);
			n = 0;
			for (int k = 0; k < p->m->c.axes; k++)
				n += snprintf(b + n, sizeof b - n, "%s%d", k ? "x" : "", p->m->c.grid[k]);
			snprintf(e->why, sizeof e->why, "grid %s resampled to %s (bicubic, "
			    "antialiased, as timm's resample_abs_pos_embed)", a, b);
		}
		break;
	case H_CLS:
		snprintf(e->why, sizeof e->why, "[1,1,D] to [D]");
		break;
	case H_PATCH:
		snprintf(e->why, sizeof e->why, "conv [D,C,...] to rows [D][... C], "
		    "channels last");
		break;
	case H_FREQS:
		snprintf(e->why, sizeof e->why, "[x,y][layer][head][pair] to "
		    "[layer][head][y,x][pair], negated");
		break;
	case H_SCALE:
		snprintf(e->why, sizeof e->why, "layer scale folded into the rows of %s.w "
		    "and %s.b", e->dst, e->dst);
		break;
	case H_PE:
		snprintf(e->why, sizeof e->why, "[nset,set_params] to [nparam]");
		break;
	default:
		snprintf(e->why, sizeof e->why, "as is");
	}
}

/* The slot of entry e's model tensor (mapped, or misfit with one) in an
 * owner table: two per tensor, one for what fills it, one for a layer
 * scale of it. */
static int
slot(const struct timm_plan *p, const struct timm_entry *e)
{
	char name[VIT_MAXNAME + 2];

	snprintf(name, sizeof name, "%s%s", e->dst, e->how == H_SCALE ? ".w" : "");
	return 2 * (int)(vit_find_tensor(p->m, name) - p->m->tensor) + (e->how == H_SCALE);
}

/* Build p's model (described, its every tensor mapped) with room for one
 * token: it is only filled and written here. */
static int
build(struct timm_plan *p, const struct timm_opts *o, struct err *e)
{
	const struct vit_config *c = &p->m->c;
	struct vit *m;

	if ((m = p->new_head ? vit_create(c, 1, 1, o->seed, e) :
	    vit_create_infer(c, 1, 1, e)) == NULL)
		return err_prefix(e, "the model");
	vit_destroy(p->m);
	p->m = m;
	return 0;
}

int
timm_plan(struct timm_plan *p, const struct st *s, const struct timm_opts *o, struct err *e)
{
	struct vit_config c;
	int file_classes;

	memset(p, 0, sizeof *p);
	vt_init(&p->keys);
	if (s->ntensor > TIMM_MAXTENSORS)
		return err_set(e, "%d tensors: more than a ViT has (%d at most)",
		    s->ntensor, TIMM_MAXTENSORS);
	p->vitpipe = st_meta(s, TIMM_MARK) != NULL;
	if (p->vitpipe) {
		if (import_keys(s, &p->keys, e) < 0)
			return -1;
		if (vit_config_load(&c, &p->keys, e) < 0)
			return err_prefix(e, "%s", ST_METADATA);
		if (o->heads && o->heads != c.heads)
			return err_set(e, "--heads %d: the model has %d", o->heads, c.heads);
	} else if (infer_config(s, o, &c, p, e) < 0)
		return -1;
	memcpy(p->src_grid, c.grid, sizeof c.grid);
	if (o->ngrid && o->ngrid != c.axes)
		return err_set(e, "--grid: %d sides for a model of %d axes", o->ngrid,
		    c.axes);
	if (o->ngrid)
		memcpy(c.grid, o->grid, sizeof(int) * c.axes);
	file_classes = c.classes;
	if (o->classes && (o->classes != c.classes || st_find(s, "head.weight") == NULL)) {
		c.classes = o->classes;
		p->new_head = 1;
	}
	if (vit_config_check(&c, e) < 0)
		return err_prefix(e, "the model");
	/* The keys that no longer hold: the old classes' names, the grid. */
	if (p->new_head && c.classes != file_classes &&
	    (vt_meta_set(&p->keys, "CLASSES", NULL) < 0 || vt_meta_set(&p->keys, "CLASS",
	    NULL) < 0))
		return err_set(e, "%s", p->keys.err.msg);
	if (!p->vitpipe || o->ngrid) {
		char grid[64];
		size_t n = 0;
		for (int a = 0; a < c.axes; a++)
			n += snprintf(grid + n, sizeof grid - n, "%s%d", a ? "x" : "", c.grid[a]);
		if (vt_meta_set(&p->keys, "GRID", grid) < 0 || vt_meta_set(&p->keys, "SIZE",
		    NULL) < 0)
			return err_set(e, "%s", p->keys.err.msg);
	}
	/* Planned on the model's tensor table alone, and built only once each
	 * of its tensors has a tensor of the file of exactly its shape (but a
	 * new head), as ckpt_load checks a checkpoint's fields: names and
	 * metadata are input like any other, and a model many times the
	 * file's size is refused before it is built. */
	if ((p->m = vit_describe(&c, e)) == NULL)
		return err_prefix(e, "the model");
	int nt = p->m->ntensor, *own = calloc(2 * (size_t)nt, sizeof *own);
	p->e = calloc((size_t)s->ntensor + nt, sizeof *p->e);
	if (own == NULL || p->e == NULL) {
		free(own);
		return err_set(e, "out of memory");
	}
	for (int i = 0; i < s->ntensor; i++) {
		struct timm_entry *e = &p->e[p->n++];
		e->t = &s->tensor[i];
		map_tensor(p, e);
		if (e->dst[0] && (e->fate == TIMM_MAPPED || e->fate == TIMM_MISFIT)) {
			int k = slot(p, e);
			if (own[k] && e->fate == TIMM_MAPPED) {
				e->fate = TIMM_MISFIT;
				snprintf(e->why, sizeof e->why, "%s too goes to %s",
				    p->e[own[k] - 1].t->name, e->dst);
			} else if (!own[k])
				own[k] = i + 1;
		}
		p->nbad += e->fate == TIMM_MISFIT || (e->fate == TIMM_UNKNOWN &&
		    !o->ignore_unknown);
	}
	for (int i = 0; i < nt; i++) {
		const struct vit_tensor *w = &p->m->tensor[i];
		struct timm_entry *e;
		if (own[2 * i] || (p->new_head && (strcmp(w->name, "head.w") == 0 ||
		    strcmp(w->name, "head.b") == 0)))
			continue;
		e = &p->e[p->n++];
		e->fate = TIMM_MISSING;
		snprintf(e->dst, sizeof e->dst, "%s", w->name);
		snprintf(e->why, sizeof e->why, "no tensor of the file fills it");
		p->nbad++;
	}
	free(own);
	return p->nbad ? 0 : build(p, o, e);
}

/* ---- resampling ---- */

int
timm_resample(const float *tab, const int *from, const int *to, int axes, int D,
    float *out)
{
	int cur[VIT_MAXAXES];
	size_t n = (size_t)tokens(from, axes), most = n;
	double *a, *b;

	memcpy(cur, from, sizeof(int) * axes);
	for (int k = 0; k < axes; k++) {
		cur[k] = to[k];
		most = (size_t)tokens(cur, axes) > most ? (size_t)tokens(cur, axes) : most;
	}
	memcpy(cur, from, sizeof(int) * axes);
	a = malloc(most * D * sizeof *a);
	b = malloc(most * D * sizeof *b);
	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return -1;
	}
	for (size_t i = 0; i < n * D; i++)
		a[i] = tab[D + i];
	for (int k = 0; k < axes; k++) {
		size_t outer = 1, inner = D;
		double *t;
		for (int j = 0; j < k; j++)
			outer *= cur[j];
		for (int j = k + 1; j < axes; j++)
			inner *= cur[j];
		if (resample_axis(a, b, cur[k], to[k], outer, inner, RESAMPLE_BICUBIC) < 0) {
			free(a);
			free(b);
			return -1;
		}
		cur[k] = to[k];
		t = a, a = b, b = t;
	}
	memcpy(out, tab, D * sizeof *out);
	for (size_t i = 0; i < (size_t)tokens(to, axes) * D; i++)
		out[D + i] = (float)a[i];
	free(a);
	free(b);
	return 0;
}

/* ---- loading ---- */

int
timm_load(struct timm_plan *p, struct st *s, struct err *er)
{
	struct vit *m = p->m;
	const struct vit_config *c = &m->c;

	if (p->nbad)
		return err_set(er, "%s: %d tensors cannot be mapped", s->name, p->nbad);
	/* Everything but the layer scales first: they scale what is read. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < p->n; i++) {
			const struct timm_entry *e = &p->e[i];
			const struct vit_tensor *w;
			float *dst, *tmp;

			if (e->fate != TIMM_MAPPED || (e->how == H_SCALE) != pass)
				continue;
			if (e->how == H_COPY || e->how == H_CLS || e->how == H_HEAD ||
			    e->how == H_PE) {
				w = vit_find_tensor(m, e->dst);
				if (st_read_f32(s, e->t, m->param + w->off) < 0)
					return err_set(er, "%s", s->err.msg);
				continue;
			}
			if ((tmp = malloc((size_t)e->t->count * sizeof *tmp)) == NULL)
				return err_set(er, "%s: out of memory", s->name);
			if (st_read_f32(s, e->t, tmp) < 0) {
				free(tmp);
				return err_set(er, "%s", s->err.msg);
			}
			w = vit_find_tensor(m, e->dst);
			dst = w != NULL ? m->param + w->off : NULL;
			switch (e->how) {
			case H_POS:
				if (timm_resample(tmp, p->src_grid, c->grid, c->axes, c->dim,
				    dst) < 0) {
					free(tmp);
					return err_set(er, "%s: out of memory", s->name);
				}
				break;
			case H_PATCH: {
				int64_t S = 1;
				for (int k = 2; k < e->t->rank; k++)
					S *= e->t->shape[k];
				convert_patch(tmp, dst, c->dim, (int)e->t->shape[1], S, 0);
				break;
			}
			case H_FREQS:
				convert_freqs(c, tmp, dst, 0);
				break;
			default: {	/* H_SCALE: rows of dst.w and dst.b times gamma */
				char name[VIT_MAXNAME + 2];
				snprintf(name, sizeof name, "%s.w", e->dst);
				const struct vit_tensor *pw = vit_find_tensor(m, name);
				snprintf(name, sizeof name, "%s.b", e->dst);
				const struct vit_tensor *pb = vit_find_tensor(m, name);
				int in = pw->shape[1];
				for (int r = 0; r < c->dim; r++) {
					for (int k = 0; k < in; k++)
						m->param[pw->off + (size_t)r * in + k] *= tmp[r];
					m->param[pb->off + r] *= tmp[r];
				}
			}
			}
			free(tmp);
		}
	return 0;
}

void
timm_plan_free(struct timm_plan *p)
{
	vit_destroy(p->m);
	vt_free(&p->keys);
	free(p->e);
	memset(p, 0, sizeof *p);
}
