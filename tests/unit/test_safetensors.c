/*
 * test_safetensors.c - safetensors written and read back (shapes, offsets,
 * metadata, the header's 8-byte padding); F16 and BF16 values, subnormals,
 * infinities and NaN included, read as float; a header that lies about its
 * sizes refused before anything is read; timm_resample: the same grid
 * gives the table back, a constant stays constant, and 2 -> 4 upsampling
 * has PIL's bicubic weights (a = -0.5, antialiased, rows renormalized at
 * the border).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "safetensors.h"
#include "test.h"
#include "timm.h"

/* A file holding the 8-byte length of json, json and data[n]. */
static FILE *
file_of(const char *json, const void *data, size_t n, uint64_t *size)
{
	FILE *fp = tmpfile();
	uint64_t len = strlen(json);

	fwrite(&len, 8, 1, fp);
	fputs(json, fp);
	if (n > 0)	/* data may be NULL then, which fwrite's contract forbids */
		fwrite(data, 1, n, fp);
	*size = 8 + len + n;
	rewind(fp);
	return fp;
}

/* Metadata keys (issue 39): 80 000 distinct ones read in well under a
 * second (a pairwise check took 8 s), a repeated one refused among them;
 * __metadata__ twice refused, an empty first one too. */
static void
metadata_keys(void)
{
	enum { N = 80000 };
	char *json = malloc(32 * N), *p = json;
	uint64_t size;
	struct st r;
	FILE *fp;

	p += sprintf(p, "{\"__metadata__\":{");
	for (int i = 0; i < N; i++)
		p += sprintf(p, "%s\"k%d\":\"v\"", i ? "," : "", i == N - 1 ? 7 : i);
	strcpy(p, "}}");
	fp = file_of(json, NULL, 0, &size);
	CHECK(st_read_header(&r, fp, "dup", size) == -1 && strstr(r.err.msg, "'k7' twice"),
	    "a key repeated among %d: %s", N, r.err.msg);
	st_free(&r);
	fclose(fp);
	sprintf(strstr(json, "\"k7\":\"v\"}}"), "\"k%d\":\"v\"}}", N - 1);
	fp = file_of(json, NULL, 0, &size);
	double t0 = (double)clock() / CLOCKS_PER_SEC;
	int rc = st_read_header(&r, fp, "many", size);
	double t = (double)clock() / CLOCKS_PER_SEC - t0;
	CHECK(rc == 0 && r.nmeta == N && t < 1, "%d distinct keys read in %.3f s: %s", N, t,
	    rc ? r.err.msg : "");
	st_free(&r);
	fclose(fp);
	for (int k = 0; k < 2; k++) {
		fp = file_of(k ? "{\"__metadata__\":{},\"__metadata__\":{\"a\":\"b\"}}" :
		    "{\"__metadata__\":{\"a\":\"b\"},\"__metadata__\":{}}", NULL, 0, &size);
		CHECK(st_read_header(&r, fp, "twice", size) == -1 && strstr(r.err.msg, "twice"),
		    "__metadata__ twice, the %s empty: %s", k ? "first" : "second", r.err.msg);
		st_free(&r);
		fclose(fp);
	}
	free(json);
}

int
main(void)
{
	struct st w, r;
	float a[6] = { 1, -2, 3.5f, 0, 1e-30f, 7 }, b[1] = { 42 }, back[6];
	int64_t sa[2] = { 2, 3 }, sb[1] = { 1 };
	FILE *fp = tmpfile();
	uint64_t size;

	st_init(&w);
	st_init(&r);
	CHECK(st_meta_add(&w, "MEAN", "0.5") == 0 && st_meta_add(&w, "HISTORY", "a\nb") == 0 &&
	    st_meta_add(&r, "MEAN", "0.1") == 0 && st_meta_add(&r, "MEAN", "0.5") == 0 &&
	    st_write(&r, fp, "tmp") == -1 && strstr(r.err.msg, "'MEAN' twice") && ftell(fp) == 0,
	    "metadata keys are unique: %s", r.err.msg);
	st_free(&r);
	CHECK(st_add_f32(&w, "x.weight", 2, sa, a, 0) == 0 && st_add_f32(&w, "b", 1, sb, b, 0) == 0 &&
	    st_add_f32(&w, "b", 1, sb, b, 0) == -1, "tensor names are unique");
	CHECK(st_write(&w, fp, "tmp") == 0, "written");
	size = (uint64_t)ftell(fp);
	rewind(fp);
	CHECK(st_read_header(&r, fp, "tmp", size) == 0, "read back: %s", r.err.msg);
	const struct st_tensor *t = st_find(&r, "x.weight");
	CHECK(r.ntensor == 2 && t != NULL && t->rank == 2 && t->shape[0] == 2 && t->shape[1] == 3 &&
	    t->dtype == ST_F32 && t->begin == 0 && t->end == 24, "names, shapes, offsets");
	CHECK(r.data_at % 8 == 0, "the header padded to 8 bytes (data at %llu)",
	    (unsigned long long)r.data_at);
	CHECK(st_meta(&r, "HISTORY") && strcmp(st_meta(&r, "HISTORY"), "a\nb") == 0 &&
	    strcmp(st_meta(&r, "MEAN"), "0.5") == 0, "metadata, a newline in a value");
	CHECK(st_read_f32(&r, t, back) == 0 && memcmp(back, a, sizeof a) == 0,
	    "values bit for bit");
	st_free(&r);
	st_free(&w);
	fclose(fp);

	/* F16: 1, -2, the smallest subnormal, the largest normal; BF16: 1.5,
	 * -0; then F16's inf and NaN, which no weight is (issue 39: NaN
	 * weights made NaN logits): refused, naming the tensor and element. */
	uint16_t h[4] = { 0x3c00, 0xc000, 0x0001, 0x7bff }, bf[2] = { 0x3fc0, 0x8000 };
	uint16_t bad[3] = { 0x7c00, 0x3c00, 0x7e00 };
	unsigned char data[18];
	memcpy(data, h, 8);
	memcpy(data + 8, bf, 4);
	memcpy(data + 12, bad, 6);
	fp = file_of("{\"h\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
	    "\"bf\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]},"
	    "\"inf\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[12,14]},"
	    "\"nan\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[14,18]}}",
	    data, 18, &size);
	CHECK(st_read_header(&r, fp, "half", size) == 0, "F16 and BF16 header: %s", r.err.msg);
	float f[4], g[2];
	CHECK(st_read_f32(&r, st_find(&r, "h"), f) == 0 && f[0] == 1 && f[1] == -2 &&
	    f[2] == ldexpf(1, -24) && f[3] == 65504,
	    "F16 to float: %g %g %g %g", f[0], f[1], f[2], f[3]);
	CHECK(st_read_f32(&r, st_find(&r, "bf"), g) == 0 && g[0] == 1.5f && g[1] == 0 &&
	    signbit(g[1]), "BF16 to float: %g %g", g[0], g[1]);
	CHECK(st_read_f32(&r, st_find(&r, "inf"), f) == -1 &&
	    strcmp(r.err.msg, "half: tensor 'inf': element 0 is inf") == 0, "F16 inf refused: %s", r.err.msg);
	CHECK(st_read_f32(&r, st_find(&r, "nan"), f) == -1 &&
	    strcmp(r.err.msg, "half: tensor 'nan': element 1 is nan") == 0, "F16 NaN refused: %s", r.err.msg);
	st_free(&r);
	fclose(fp);

	/* A length past the file, and shapes past the data: refused. */
	fp = file_of("{\"h\":{\"dtype\":\"F32\",\"shape\":[100000000000],"
	    "\"data_offsets\":[0,400000000000]}}", data, 4, &size);
	CHECK(st_read_header(&r, fp, "big", size) == -1 && strstr(r.err.msg, "more bytes than"),
	    "a shape larger than the file: %s", r.err.msg);
	st_free(&r);
	fclose(fp);
	fp = file_of("{}", NULL, 0, &size);
	CHECK(st_read_header(&r, fp, "lie", size + 1000) == -1, "bytes that no tensor "
	    "covers: %s", r.err.msg);
	st_free(&r);
	fclose(fp);

	metadata_keys();

	/* timm_resample */
	enum { D = 3 };
	float tab[(1 + 4) * D], out[(1 + 16) * D];
	int g2[2] = { 2, 2 }, g4[2] = { 4, 4 };
	for (int i = 0; i < (1 + 4) * D; i++)
		tab[i] = (float)(i * 0.25 - 1);
	CHECK(timm_resample(tab, g2, g2, 2, D, out) == 0 && memcmp(out, tab, sizeof tab) == 0,
	    "the same grid: the table itself");
	for (int i = D; i < (1 + 4) * D; i++)
		tab[i] = 0.75f;
	timm_resample(tab, g2, g4, 2, D, out);
	double worst = 0;
	for (int i = D; i < (1 + 16) * D; i++)
		worst = maxn(worst, fabs(out[i] - 0.75));
	CHECK(worst < 1e-6 && memcmp(out, tab, D * sizeof *out) == 0,
	    "a constant grid stays constant (%.2g), the CLS row is copied", worst);
	/* 1-d 2 -> 4 along y (x of 1): output 0, centred at 0.25, takes the
	 * inputs centred at 0.5 and 1.5, at distances 0.25 and 1.25 (the
	 * others fall outside the grid): PIL's cubic w(0.25) = 0.8671875,
	 * w(1.25) = -0.0703125, renormalized. */
	int a2[2] = { 2, 1 }, a4[2] = { 4, 1 };
	float col[3] = { 0, 1, 5 }, res[5];
	timm_resample(col, a2, a4, 2, 1, res);
	double w0 = 0.8671875, w1 = -0.0703125;
	CHECK_CLOSE(res[1], (w0 * 1 + w1 * 5) / (w0 + w1), 1e-6, "2 -> 4: PIL's bicubic "
	    "weights at the border, renormalized (%.6f)", res[1]);
	CHECK_CLOSE(res[4], (w0 * 5 + w1 * 1) / (w0 + w1), 1e-6, "... and symmetric at the "
	    "other end (%.6f)", res[4]);
	return test_done();
}
