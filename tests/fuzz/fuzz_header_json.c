/* fuzz_header_json.c - header.json as vtool from-npy reads it (fields,
 * keys, ALIGN), then written as a stream header, as from-npy writes its
 * output's. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "vtjson.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	FILE *out = fopen("/dev/null", "wb");
	struct vt h;

	if (text != NULL && out != NULL) {
		memcpy(text, data, size);
		text[size] = '\0';
		if (vt_json_read(&h, text, size) == 0 && h.nfield > 0) {
			h.align = h.align ? h.align : VT_ALIGN;
			vt_write_header(&h, out, "fuzz");
		}
		vt_free(&h);
	}
	if (out != NULL)
		fclose(out);
	free(text);
	return 0;
}
