/*
 * source.c - records of a data set, in memory or decoded from files
 * (see source.h); the format readers live in dataset_*.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "video.h"

/* Bytes in the valid UTF-8 sequence at p that is not a control
 * character, or 0. */
static int
utf8_char(const unsigned char *p)
{
	unsigned c = p[0];
	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x80)
		return 1;
	/* The lowest second byte that is not overlong, the highest that is
	 * not a surrogate or past U+10FFFF. */
	int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
	    c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	if (n == 0 || p[1] < lo || p[1] > hi)
		return 0;
	for (int k = 2; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

void
source_name(char *name, const char *path, const char *suffix)
{
	const unsigned char *p = (const unsigned char *)path;
	size_t room = SOURCE_NAMELEN - 1 - strlen(suffix), len = 0;
	while (*p) {
		int n = utf8_char(p);
		if (len + (n ? (size_t)n : 1) > room)
			break;
		if (n == 0)
			name[len++] = '?', p++;
		else
			for (; n > 0; n--)
				name[len++] = (char)*p++;
	}
	snprintf(name + len, SOURCE_NAMELEN - len, "%s", suffix);
}

/* Record k of file f of s, a SOURCE_MEM source read from its files, into
 * px [t][h][w][c]. */
static int
read_record(const struct source *s, int f, int64_t k, uint8_t *px, struct err *e)
{
	size_t bytes = (size_t)s->t * s->h * s->w * s->c, plane = bytes / s->c;
	uint8_t *buf = s->planar ? malloc(bytes) : px, *p = buf;
	off_t at = (off_t)(s->off[f] + k * s->pitch + s->skip);
	if (!buf) {
		err_set(e, "out of memory");
		return -1;
	}
	for (size_t left = bytes; left > 0; ) {
		ssize_t got = pread(s->fd[f], p, left, at);
		if (got <= 0) {
			err_set(e, "%s: item %lld: %s", s->file[f], (long long)k,
			    got < 0 ? strerror(errno) : "truncated (the file shrank)");
			if (s->planar)
				free(buf);
			return -1;
		}
		p += got, at += got, left -= (size_t)got;
	}
	if (s->planar) {
		for (size_t q = 0; q < plane; q++)
			for (int c = 0; c < s->c; c++)
				px[q * s->c + c] = buf[c * plane + q];
		free(buf);
	}
	return 0;
}

int
source_get(const struct source *s, int64_t i, struct image *im, char *name, struct err *e)
{
	char suffix[64];
	if (s->kind == SOURCE_MEM) {
		if (image_alloc(im, s->t, s->h, s->w, s->c) < 0) {
			err_set(e, "out of memory");
			return -1;
		}
		size_t bytes = (size_t)s->t * s->h * s->w * s->c;
		int f = s->nfile - 1;
		while (f > 0 && s->first[f] > i)
			f--;
		if (s->data)
			memcpy(im->px, s->data + (size_t)i * bytes, bytes);
		else if (read_record(s, f, i - s->first[f], im->px, e) < 0)
			return -1;
		if (name) {
			snprintf(suffix, sizeof suffix, ":%lld", (long long)(i - s->first[f]));
			source_name(name, s->file[f], suffix);
		}
		return 0;
	}
	if (s->temporal && image_file_kind(s->path[i]) == IMAGE_NONE) {
		int64_t range[2];
		if (video_load(s->path[i], s->frames, s->stride, im, range, e) < 0)
			return -1;
		if (name) {
			snprintf(suffix, sizeof suffix, ":frames %lld-%lld",
			    (long long)range[0], (long long)range[1]);
			source_name(name, s->path[i], suffix);
		}
		return 0;
	}
	if (name)
		source_name(name, s->path[i], "");
	return image_load(s->path[i], im, e);
}

int
source_add_memfile(struct source *s, const char *path, int64_t first)
{
	char **f = realloc(s->file, (size_t)(s->nfile + 1) * sizeof *f);
	int64_t *k = realloc(s->first, (size_t)(s->nfile + 1) * sizeof *k);
	if (f)
		s->file = f;
	if (k)
		s->first = k;
	if (!f || !k || !(f[s->nfile] = strdup(path)))
		return -1;
	k[s->nfile++] = first;
	return 0;
}

int
source_add_recfile(struct source *s, const char *path, int64_t first, int fd,
    int64_t off)
{
	int *d = realloc(s->fd, (size_t)(s->nfile + 1) * sizeof *d);
	int64_t *o = d ? realloc(s->off, (size_t)(s->nfile + 1) * sizeof *o) : NULL;
	if (d)
		s->fd = d;
	if (o)
		s->off = o;
	if (!d || !o || source_add_memfile(s, path, first) < 0) {
		close(fd);
		return -1;
	}
	s->fd[s->nfile - 1] = fd;
	s->off[s->nfile - 1] = off;
	return 0;
}

int
source_files_temporal(const struct source *s)
{
	for (int64_t i = 0; i < s->n; i++) {
		int k = image_file_kind(s->path[i]);
		if (k == IMAGE_PNG || k == IMAGE_JPEG)
			return 0;
		if (k == IMAGE_NONE && video_probe(s->path[i]))
			return 1;
	}
	return 0;
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

/* Records labelled by their folder's name (s->classname, the folders in
 * order) relabelled by that name's line in the list (names, n), as
 * torchvision's class_to_idx does: a folder absent from the list is an
 * error, never a silent shift of every label after it. */
static int
relabel(struct source *s, char **names, int n, const char *path, struct err *e)
{
	int *to = malloc((size_t)s->nclass * sizeof *to);

	if (to == NULL) {
		err_set(e, "%s: out of memory", path);
		return -1;
	}
	for (int c = 0; c < s->nclass; c++) {
		to[c] = -1;
		for (int k = 0; k < n && to[c] < 0; k++)
			if (strcmp(s->classname[c], names[k]) == 0)
				to[c] = k;
		if (to[c] < 0) {
			err_set(e, "class folder '%.200s' is not in %s", s->classname[c],
			    path);
			free(to);
			return -1;
		}
	}
	for (int64_t i = 0; i < s->n; i++)
		if (s->label[i] >= 0)
			s->label[i] = to[s->label[i]];
	free(to);
	return 0;
}

int
source_read_classes(struct source *s, const char *path, struct err *e)
{
	FILE *fp = fopen(path, "r");
	struct source names = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (!fp) {
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, fp)) > 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
		    line[len - 1] == ' '))
			line[--len] = 0;
		if (len == 0)
			continue;
		if (len > 1000 || source_add_class(&names, line) < 0) {
			err_set(e, "%s: class name too long, or out of memory", path);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(fp)) {
		err_set(e, "%s: read error", path);
		rc = -1;
	}
	free(line);
	fclose(fp);
	if (rc == 0 && s->by_name)
		rc = relabel(s, names.classname, names.nclass, path, e);
	if (rc == 0) {
		free_classes(s);
		s->classname = names.classname;
		s->nclass = names.nclass;
	} else
		free_classes(&names);
	return rc;
}

int
source_check_labels(struct source *s, const char *name, struct err *e)
{
	int32_t max = -1;
	for (int64_t i = 0; i < s->n; i++) {
		int32_t l = s->label[i];
		if (l < -1 || (s->nclass > 0 && l >= s->nclass)) {
			err_set(e, "%s: record %lld: label %d out of range "
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
	for (int i = 0; i < s->nfile; i++) {
		free(s->file[i]);
		if (s->fd)
			close(s->fd[i]);
	}
	free(s->file);
	free(s->first);
	free(s->fd);
	free(s->off);
	free(s->label);
	free_classes(s);
	memset(s, 0, sizeof *s);
}
