/* fuzz_safetensors.c - a safetensors header, the import planned from it
 * (timm's names, shapes, vitpipe's metadata) and, when it maps, the
 * weights read into the model. */
#include "fuzz.h"
#include "safetensors.h"
#include "timm.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path(data, size);
	struct timm_opts o = { .seed = 1, .heads = size & 1 ? 2 : 0 };
	struct timm_plan p;
	struct st s;
	char err[512];
	FILE *fp;

	if (path == NULL || (fp = fopen(path, "rb")) == NULL)
		return 0;
	if (st_read_header(&s, fp, "fuzz", size) == 0) {
		if (timm_plan(&p, &s, &o, err, sizeof err) == 0 && p.nbad == 0)
			timm_load(&p, &s, err, sizeof err);
		timm_plan_free(&p);
	}
	st_free(&s);
	fclose(fp);
	return 0;
}
