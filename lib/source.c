/*
 * source.c - records of a data set, in memory or decoded from files
 * (see source.h); the format readers live in dataset_*.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "video.h"

static int
is_still_image(const char *path)
{
	unsigned char m[4] = { 0 };
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return 1;	/* let image_load say why */
	size_t got = fread(m, 1, sizeof m, fp);
	fclose(fp);
	return (got >= 4 && memcmp(m, "\x89PNG", 4) == 0) ||
	    (got >= 3 && memcmp(m, "\xff\xd8\xff", 3) == 0);
}

int
source_get(const struct source *s, int64_t i, struct image *im, char *err)
{
	if (s->kind == SOURCE_MEM) {
		if (image_alloc(im, s->t, s->h, s->w, s->c) < 0) {
			snprintf(err, IMAGE_ERRLEN, "out of memory");
			return -1;
		}
		size_t bytes = (size_t)s->t * s->h * s->w * s->c;
		memcpy(im->px, s->data + (size_t)i * bytes, bytes);
		return 0;
	}
	if (s->temporal && !is_still_image(s->path[i]))
		return video_load(s->path[i], s->frames, s->stride, im, err);
	return image_load(s->path[i], im, err);
}

int
source_add_file(struct source *s, const char *path, int32_t label)
{
	if (s->n >= SOURCE_MAXN)
		return -1;
	if ((s->n & (s->n - 1)) == 0) {		/* grow at powers of two */
		size_t cap = s->n ? (size_t)s->n * 2 : 1;
		char **p = realloc(s->path, cap * sizeof *p);
		int32_t *l = realloc(s->label, cap * sizeof *l);
		if (p)
			s->path = p;
		if (l)
			s->label = l;
		if (!p || !l)
			return -1;
	}
	if (!(s->path[s->n] = strdup(path)))
		return -1;
	s->label[s->n++] = label;
	s->kind = SOURCE_FILES;
	return 0;
}

int
source_add_class(struct source *s, const char *name)
{
	char **p = realloc(s->classname, (size_t)(s->nclass + 1) * sizeof *p);
	if (!p)
		return -1;
	s->classname = p;
	if (!(p[s->nclass] = strdup(name)))
		return -1;
	s->nclass++;
	return 0;
}

static void
free_classes(struct source *s)
{
	for (int i = 0; i < s->nclass && s->classname; i++)
		free(s->classname[i]);
	free(s->classname);
	s->classname = NULL;
	s->nclass = 0;
}

int
source_read_classes(struct source *s, const char *path, char *err)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(err, IMAGE_ERRLEN, "%s: %s", path, strerror(errno));
		return -1;
	}
	free_classes(s);
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	while ((len = getline(&line, &cap, fp)) > 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
		    line[len - 1] == ' '))
			line[--len] = 0;
		if (len == 0)
			continue;
		if (len > 1000 || source_add_class(s, line) < 0) {
			snprintf(err, IMAGE_ERRLEN, "%s: class name too long, or out of memory", path);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(fp)) {
		snprintf(err, IMAGE_ERRLEN, "%s: read error", path);
		rc = -1;
	}
	free(line);
	fclose(fp);
	return rc;
}

int
source_check_labels(struct source *s, const char *name, char *err)
{
	int32_t max = -1;
	for (int64_t i = 0; i < s->n; i++) {
		int32_t l = s->label[i];
		if (l < -1 || (s->nclass > 0 && l >= s->nclass)) {
			snprintf(err, IMAGE_ERRLEN, "%s: record %lld: label %d out of range "
			    "(%d classes)", name, (long long)i, (int)l, s->nclass);
			return -1;
		}
		max = l > max ? l : max;
	}
	if (s->nclass == 0)
		s->nclass = max + 1;
	return 0;
}

void
source_free(struct source *s)
{
	free(s->data);
	for (int64_t i = 0; s->path && i < s->n; i++)
		free(s->path[i]);
	free(s->path);
	free(s->label);
	free_classes(s);
	memset(s, 0, sizeof *s);
}
