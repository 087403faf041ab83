/* fuzz_train_keys.c - a checkpoint's keys as vit-train --resume reads
 * them (train_keys_read), each line of the input a "KEY value" header
 * line; keys that are read are written back (train_keys_write) and must
 * read back the same. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trainopt.h"

/* The keys of text's "KEY value" lines into s. */
static void
keys(struct vt *s, char *text)
{
	char *save, *val;

	for (char *line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if ((val = strchr(line, ' ')) != NULL) {
			*val++ = '\0';
			if (vt_meta_add(s, line, val) < 0)
				return;
		}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct err e;
	struct train_keys k, back;
	struct vt s, t;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	vt_init(&s);
	vt_init(&t);
	keys(&s, text);
	train_defaults(&k);
	if (train_keys_read(&s, "fuzz", &k, &e) == 0) {
		train_defaults(&back);
		if (train_keys_write(&t, &k, TRAIN_OPTS) < 0 ||
		    train_keys_write(&t, &k, TRAIN_STATE) < 0 ||
		    vt_meta_set(&t, "TRAIN_THREADS", "1") < 0 ||
		    train_keys_read(&t, "fuzz", &back, &e) < 0 ||
		    memcmp(&back.o, &k.o, sizeof k.o) != 0 ||
		    memcmp(&back.st, &k.st, sizeof k.st) != 0)
			abort();
	}
	vt_free(&s);
	vt_free(&t);
	free(text);
	return 0;
}
