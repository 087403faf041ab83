/*
 * test_checkpoint.c - a model through ckpt_save and ckpt_load: config,
 * every tensor and the AdamW moments come back bit for bit; the skewgen
 * keys are there; generator files must match the model; a model for
 * forward passes reads its parameters alone.  Every field must have the
 * exact dtype and shape of vit_layout's tensor, checked before the model
 * is built, and vit_layout is vit_create's layout.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "test.h"

/* Write the checkpoint in to out with field name declared as
 * dtype[rank] dims (its payload the same bytes, or as many as fit). */
static void
reshape(struct vt *in, const char *out, const char *name, int dtype, int rank,
    const int64_t *dims)
{
	struct vt o;
	int ok = 1;

	vt_init(&o);
	for (int i = 0; i < in->nmeta; i++)
		ok &= vt_meta_add(&o, in->meta[i].key, in->meta[i].val) == 0;
	for (int i = 0; i < in->nfield && ok; i++) {
		struct vt_field *f = &in->field[i];
		int same = strcmp(f->name, name) != 0;
		int j = vt_add_field(&o, f->name, same ? f->dtype : dtype,
		    same ? f->rank : rank, same ? f->dim : dims);
		if ((ok = j >= 0) && o.field[j].nbytes <= f->nbytes)
			vt_lend(&o, j, f->data);
	}
	CHECK(ok && vt_save(&o, out) == 0, "%s as %s[%d dims] (%s)", name,
	    vt_dtype_name(dtype), rank, o.err.msg);
	vt_free(&o);
}

/* The bytes of the file at path, malloc'd, into *n. */
static char *
slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;

	*n = 0;
	if (fp != NULL && fseek(fp, 0, SEEK_END) == 0 && (*n = (size_t)ftell(fp)) > 0 &&
	    (buf = malloc(*n)) != NULL && (fseek(fp, 0, SEEK_SET) != 0 ||
	    fread(buf, 1, *n, fp) != *n))
		*n = 0;
	if (fp != NULL)
		fclose(fp);
	return buf;
}

/* No checkpoint holds a weight or moment that is not finite (issue 39: a
 * NaN step overwrote the last good one): ckpt_save refuses one, naming
 * it, and leaves the file as it was; ckpt_load refuses a file with one. */
static void
check_nonfinite(struct vit *m, const char *path)
{
	const struct vit_tensor *w = vit_find_tensor(m, "head.w");
	size_t n0, n1, k = w->off + 3;
	struct err e = { "" };
	char *before, *after, other[64];
	struct vt s;
	float keep = m->param[k];

	CHECK(ckpt_save(path, m, NULL, 1, &e) == 0, "save: %s", e.msg);
	before = slurp(path, &n0);
	m->param[k] = NAN;
	CHECK(ckpt_save(path, m, NULL, 1, &e) < 0 &&
	    strstr(e.msg, ": not written: tensor 'head.w' holds nan (element 3 of 80)"),
	    "a NaN weight is not written: %s", e.msg);
	m->param[k] = keep;
	keep = m->adam_v[k];
	m->adam_v[k] = INFINITY;
	CHECK(ckpt_save(path, m, NULL, 1, &e) < 0 &&
	    strstr(e.msg, "tensor 'head.w' (its AdamW v) holds inf (element 3 of 80)"),
	    "... nor an infinite moment: %s", e.msg);
	after = slurp(path, &n1);
	CHECK(n0 > 0 && n0 == n1 && memcmp(before, after, n0) == 0,
	    "the file keeps the last good checkpoint");
	snprintf(other, sizeof other, "%s.inf", path);
	CHECK(ckpt_save(other, m, NULL, 0, &e) == 0,
	    "a model without its moments is written: %s", e.msg);
	m->adam_v[k] = keep;

	/* the same NaN put into a file by hand */
	CHECK(vt_load(&s, path) == 0, "read back: %s", s.err.msg);
	((float *)vt_get(&s, "head.w")->data)[3] = NAN;
	((float *)vt_get(&s, "pe.params")->data)[1] = -INFINITY;
	CHECK(vt_save(&s, other) == 0, "a file with a NaN weight: %s", s.err.msg);
	vt_free(&s);
	CHECK(ckpt_load(other, &s, 2, 0, 0, &e) == NULL &&
	    strstr(e.msg, "tensor 'head.w' holds nan (element 3 of 80)"),
	    "ckpt_load refuses it: %s", e.msg);
	vt_free(&s);
	const struct vit_tensor *pe = vit_find_tensor(m, "pe.params");
	float *was = malloc(pe->n * sizeof *was);
	memcpy(was, m->param + pe->off, pe->n * sizeof *was);
	CHECK(ckpt_load_generators(m, other, &e) < 0 &&
	    strstr(e.msg, "tensor 'pe.params' holds -inf (element 1 of "),
	    "... and as a generator file (skewgen's): %s", e.msg);
	memcpy(m->param + pe->off, was, pe->n * sizeof *was);
	free(was);
	unlink(other);
	free(before);
	free(after);
}

/* A field of the model's element count but another shape or dtype, or
 * moments of another size, is refused naming both shapes. */
static void
check_exact(const char *path)
{
	struct vt raw, s;
	struct err e = { "" };
	char other[64];
	const int64_t patch[2] = { 12, 16 }, cls[2] = { 1, 16 }, moments[1] = { 7 };
	const int64_t same[2] = { 16, 12 };

	snprintf(other, sizeof other, "%s.exact", path);
	CHECK(vt_load(&raw, path) == 0, "load %s (%s)", path, raw.err.msg);
	reshape(&raw, other, "patch.w", VT_F32, 2, patch);
	CHECK(ckpt_load(other, &s, 2, 0, 0, &e) == NULL &&
	    strstr(e.msg, "field 'patch.w' is f32[12,16], the model wants f32[16,12]"),
	    "patch.w transposed, of the same size: %s", e.msg);
	vt_free(&s);
	reshape(&raw, other, "cls", VT_F32, 2, cls);
	CHECK(ckpt_load(other, &s, 2, 0, 0, &e) == NULL &&
	    strstr(e.msg, "field 'cls' is f32[1,16], the model wants f32[16]"),
	    "cls of another rank: %s", e.msg);
	vt_free(&s);
	reshape(&raw, other, "patch.w", VT_I32, 2, same);
	CHECK(ckpt_load(other, &s, 2, 0, 0, &e) == NULL &&
	    strstr(e.msg, "field 'patch.w' is i32[16,12], the model wants f32[16,12]"),
	    "patch.w of another dtype: %s", e.msg);
	vt_free(&s);
	reshape(&raw, other, CKPT_ADAM_V, VT_F32, 1, moments);
	CHECK(ckpt_load(other, &s, 2, 0, 1, &e) == NULL &&
	    strstr(e.msg, "field 'adam.v' is f32[7], the model wants f32["),
	    "resume: moments of another size: %s", e.msg);
	vt_free(&s);
	struct vit *n = ckpt_load(other, &s, 2, 0, 0, &e);
	CHECK(n != NULL, "forward-only: the moments are not read (%s)", e.msg);
	vit_destroy(n);
	vt_free(&s);
	vt_free(&raw);
	unlink(other);
}

/* The tensors vit_layout passes, to compare with a model's table. */
struct seen {
	const struct vit *m;
	int	 n, bad, stop;
};

static int
see(void *arg, const struct vit_tensor *t)
{
	struct seen *S = arg;
	const struct vit_tensor *w = S->n < S->m->ntensor ? &S->m->tensor[S->n] : NULL;

	S->bad += w == NULL || memcmp(w, t, sizeof *t) != 0;
	return ++S->n == S->stop ? 42 : 0;
}

/* vit_layout gives vit_create's tensor table, in order, and its arena
 * size, for models of each kind of tensor; a visitor's non-zero stops it. */
static void
check_layout(void)
{
	const char *pes[] = { "abs", "liere:4", "sincos", "comrope-ld:4", "ape" };
	struct err e = { "" };

	for (int i = 0; i < 5; i++) {
		struct vit_config c;
		vit_config_init(&c);
		c.dim = 16, c.depth = 2, c.heads = 2, c.mlp = 24, c.classes = 3, c.P = 5;
		c.locality = i & 1;
		c.grid[0] = 3, c.grid[1] = 5;
		strcpy(c.pe, pes[i]);
		struct vit *m = vit_create_infer(&c, 1, 15, &e);
		struct seen S = { m, 0, 0, 0 };
		size_t np = 0;
		CHECK(m && vit_layout(&c, see, &S, &np, &e) == 0 &&
		    S.n == m->ntensor && S.bad == 0 && np == m->nparam,
		    "vit_layout, pe %s%s: %d tensors as vit_create's, %zu floats (%s)",
		    pes[i], c.locality ? ", locality" : "", S.n, np, e.msg);
		S = (struct seen){ m, 0, 0, 3 };
		CHECK(m && vit_layout(&c, see, &S, &np, &e) == 42 && S.n == 3,
		    "the visitor's 42 at the third tensor stops it (%d seen)", S.n);
		vit_destroy(m);
	}
	struct vit_config c;
	vit_config_init(&c);
	c.heads = 5;
	CHECK(vit_layout(&c, see, NULL, &(size_t){ 0 }, &e) == -1 &&
	    strstr(e.msg, "not a multiple of heads"), "a bad config: %s", e.msg);
}

/* A model for forward passes reads the parameters alone, straight into
 * its arena: the moments are read past; fields it does not know are read
 * past; a field of another size, or a missing one, is an error. */
static void
check_forward_only(const struct vit *m, const char *path)
{
	struct vt s, raw;
	struct vit *n;
	struct err e = { "" };
	char other[64];
	int64_t four = 4;

	n = ckpt_load(path, &s, 2, 0, 0, &e);
	CHECK(n != NULL && memcmp(n->param, m->param, m->nparam * 4) == 0,
	    "forward-only: parameters bit for bit (%s)", e.msg);
	struct vt_field *f = vt_get(&s, CKPT_ADAM_M);
	CHECK(f && f->skip && f->data == NULL, "forward-only: the moments read past");
	CHECK(n && vt_get(&s, "head.w")->data == n->param + vit_find_tensor(n, "head.w")->off,
	    "forward-only: read straight into the model");
	vit_destroy(n);
	vt_free(&s);

	snprintf(other, sizeof other, "%s.other", path);
	CHECK(vt_load(&raw, path) == 0 && vt_add_field(&raw, "notes", VT_F32, 1, &four) >= 0 &&
	    vt_save(&raw, other) == 0, "a checkpoint with a field of its own (%s)", raw.err.msg);
	n = ckpt_load(other, &s, 2, 0, 1, &e);
	CHECK(n && memcmp(n->adam_v, m->adam_v, m->nparam * 4) == 0 &&
	    vt_get(&s, "notes")->skip, "a field the model does not know is read past (%s)", e.msg);
	vit_destroy(n);
	vt_free(&s);
	vt_meta_set(&raw, "VIT_MLP", "32");
	CHECK(vt_save(&raw, other) == 0, "VIT_MLP changed");
	CHECK(ckpt_load(other, &s, 2, 0, 0, &e) == NULL &&
	    strstr(e.msg, "field 'blocks.0.mlp.fc1.w' is f32[24,16], the model wants f32[32,16]"),
	    "a field of another size: %s", e.msg);
	vt_free(&s);
	vt_free(&raw);

	e.msg[0] = '\0';
	CHECK(ckpt_save(other, m, NULL, 0, &e) == 0, "save without moments: %s", e.msg);
	n = ckpt_load(other, &s, 2, 0, 0, &e);
	CHECK(n != NULL, "forward-only without moments: %s", e.msg);
	vit_destroy(n);
	vt_free(&s);
	CHECK(ckpt_load(other, &s, 2, 0, 1, &e) == NULL &&
	    strstr(e.msg, "no field 'adam.m'"), "resume without moments: %s", e.msg);
	vt_free(&s);
	unlink(other);
}

/* Integer keys are read whole and in range, never wrapped (issue 39):
 * VIT_DIM 4294967328 is 2^32 + 32, which (int)strtol read as 32. */
static void
int_keys(const struct vit_config *c)
{
	static const char *const bad[][2] = {
		{ "VIT_DIM", "4294967312" }, { "VIT_DEPTH", "4294967298" },
		{ "VIT_GRID", "4294967299,3" }, { "VIT_GRID", "3,-4294967293" },
		{ "VIT_HEADS", "" }, { "VIT_MLP", "24x" },
	};
	struct vit_config back;
	struct vt s;
	struct err e;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		vt_init(&s);
		vit_config_save(c, &s);
		vt_meta_set(&s, bad[i][0], bad[i][1]);
		CHECK(vit_config_load(&back, &s, &e) == -1 && strstr(e.msg, "bad value"),
		    "%s '%s' refused: %s", bad[i][0], bad[i][1], e.msg);
		vt_free(&s);
	}
}

int
main(void)
{
	struct vit_config c;
	struct vt s, extra;
	struct vit *m, *n;
	struct err e = { "" };
	char path[] = "/tmp/test_checkpoint_XXXXXX";
	int fd = mkstemp(path);

	close(fd);
	vit_config_init(&c);
	c.dim = 16, c.depth = 2, c.heads = 2, c.mlp = 24, c.classes = 5, c.P = 12;
	strcpy(c.pe, "liere:4");
	c.locality = 1;
	c.pos_scale[0] = 6, c.pos_scale[1] = 1.0f / 7, c.pos_shift[1] = -0.5f;
	int_keys(&c);
	/* sincos's table, which no file carries (issue 39): a 32-wide model
	 * on a 512x512 grid is refused by every builder, reader and writer
	 * alike, before it is built */
	struct vit_config sc = c;
	strcpy(sc.pe, "sincos");
	sc.locality = 0;
	sc.dim = 32, sc.heads = 2, sc.grid[0] = sc.grid[1] = 512;
	m = vit_create_infer(&sc, 1, 1, &e);
	CHECK(m == NULL && strstr(e.msg, "sincos table of 262144 tokens"), "%s", e.msg);
	sc.grid[0] = sc.grid[1] = 16;
	m = vit_create_infer(&sc, 1, 1, &e);
	CHECK(m != NULL, "... a 16x16 grid is not: %s", m ? "" : e.msg);
	vit_destroy(m);
	e.msg[0] = '\0';
	m = vit_create(&c, 4, 9, 7, &e);
	CHECK(m != NULL, "model: %s", e.msg);
	for (size_t i = 0; i < m->nparam; i++) {
		m->adam_m[i] = (float)i / 3;
		m->adam_v[i] = (float)i / 7;
	}
	vt_init(&extra);
	vt_meta_set(&extra, "STEP", "42");
	CHECK(ckpt_save(path, m, &extra, 1, &e) == 0, "save: %s", e.msg);
	n = ckpt_load(path, &s, 2, 0, 1, &e);
	CHECK(n != NULL, "load: %s", e.msg);
	CHECK(n->nparam == m->nparam && memcmp(n->param, m->param, m->nparam * 4) == 0,
	    "%zu parameters bit for bit", m->nparam);
	CHECK(memcmp(n->adam_m, m->adam_m, m->nparam * 4) == 0 &&
	    memcmp(n->adam_v, m->adam_v, m->nparam * 4) == 0, "moments bit for bit");
	CHECK(n->c.locality == 1 && strcmp(n->c.pe, "liere:4") == 0 && n->c.P == 12,
	    "config back");
	CHECK(memcmp(n->c.pos_scale, c.pos_scale, sizeof c.pos_scale) == 0 &&
	    memcmp(n->c.pos_shift, c.pos_shift, sizeof c.pos_shift) == 0,
	    "the position map back bit for bit (VIT_POS_SCALE %s, VIT_POS_SHIFT %s)",
	    vt_meta(&s, "VIT_POS_SCALE"), vt_meta(&s, "VIT_POS_SHIFT"));
	CHECK(n->maxT == 64, "maxT 0: the training grid's 8x8 tokens (%d)", n->maxT);
	CHECK(strcmp(vt_meta(&s, "STEP"), "42") == 0, "extra keys kept");
	const char *keys[][2] = { { "PE", "liere:4" }, { "SHARE", "none" },
	    { "HEAD_DIM", "8" }, { "AXES", "2" }, { "HEADS", "2" }, { "LAYERS", "2" } };
	for (int i = 0; i < 6; i++)
		CHECK(vt_meta(&s, keys[i][0]) && strcmp(vt_meta(&s, keys[i][0]), keys[i][1]) == 0,
		    "skewgen key %s %s", keys[i][0], keys[i][1]);
	CHECK(vt_get(&s, "pe.params") != NULL, "field pe.params");
	vt_free(&s);

	/* A checkpoint is a generator file for a model of the same shape. */
	memset(n->param, 0, n->nparam * 4);
	CHECK(ckpt_load_generators(n, path, &e) == 0, "generators: %s", e.msg);
	const struct vit_tensor *t = vit_find_tensor(m, "pe.params");
	CHECK(t && memcmp(n->param + t->off, m->param + t->off, t->n * 4) == 0,
	    "pe.params set from it");
	vit_destroy(n);
	c.depth = 3;
	n = vit_create(&c, 4, 9, 7, &e);
	CHECK(ckpt_load_generators(n, path, &e) == -1 &&
	    strstr(e.msg, "LAYERS is 2, the model's is 3"), "another depth refused: %s", e.msg);
	vit_destroy(n);
	check_forward_only(m, path);
	check_exact(path);
	check_layout();
	check_nonfinite(m, path);

	/* Damaged files. */
	CHECK(truncate(path, 3000) == 0, "cut the file");
	CHECK(ckpt_load(path, &s, 2, 0, 1, &e) == NULL, "a cut file: %s", e.msg);
	vt_free(&s);
	CHECK(ckpt_load("/nonexistent/x.vt", &s, 2, 0, 1, &e) == NULL,
	    "no file: %s", e.msg);
	vt_free(&s);
	unlink(path);
	vit_destroy(m);
	vt_free(&extra);
	return test_done();
}
