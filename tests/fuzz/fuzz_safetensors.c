/* fuzz_safetensors.c - vtool from-safetensors end to end: a safetensors
 * header, the import planned from it (timm's names, shapes, vitpipe's
 * metadata), the model built and its weights read when it maps, and the
 * checkpoint written (to /dev/null). */
#include "checkpoint.h"
#include "fuzz.h"
#include "safetensors.h"
#include "timm.h"

/* The checkpoint of plan p, as vtool writes it. */
static void
write_checkpoint(const struct timm_plan *p)
{
	FILE *out = fopen("/dev/null", "wb");
	struct vt v;
	struct err e;

	vt_init(&v);
	if (out != NULL && ckpt_describe(&v, p->m, &p->keys, 0, &e) == 0) {
		v.records = 1;
		if (vt_write_header(&v, out, "fuzz") == 0)
			vt_write_record(&v);
	}
	vt_free(&v);
	if (out != NULL)
		fclose(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct timm_opts o = { .seed = 1, .heads = size & 1 ? 2 : 0 };
	struct timm_plan p;
	struct st s;
	struct err e;
	FILE *fp;

	if (path == NULL || (fp = fopen(path, "rb")) == NULL)
		return 0;
	if (st_read_header(&s, fp, "fuzz", size) == 0) {
		if (timm_plan(&p, &s, &o, &e) == 0 && p.nbad == 0 &&
		    timm_load(&p, &s, &e) == 0)
			write_checkpoint(&p);
		timm_plan_free(&p);
	}
	st_free(&s);
	fclose(fp);
	return 0;
}
