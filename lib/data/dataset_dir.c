/*
 * dataset_dir.c - the class-per-subfolder layout of ImageNet and UCF101:
 * root/<class>/<file>.  Names are sorted bytewise (not by locale) so class
 * numbers and record order are the same on every machine.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source.h"

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
visible(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Sorted visible entries of path that are directories (want_dir) or
 * regular files, into *names; their count, or -1 with err. */
static int
entries(const char *path, int want_dir, char ***names, struct err *e)
{
	struct dirent **list;
	int n = scandir(path, &list, visible, by_name), k = 0;
	if (n < 0) {
		err_set(e, "%s: %s", path, strerror(errno));
		return -1;
	}
	*names = calloc((size_t)n + 1, sizeof **names);
	for (int i = 0; i < n; i++) {
		char full[4096];
		struct stat st;
		snprintf(full, sizeof full, "%s/%s", path, list[i]->d_name);
		if (*names && stat(full, &st) == 0 &&
		    (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			(*names)[k++] = strdup(list[i]->d_name);
		free(list[i]);
	}
	free(list);
	if (!*names) {
		err_set(e, "%s: out of memory", path);
		return -1;
	}
	return k;
}

static void
free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int
dir_load(struct source *s, const char *root, struct err *e)
{
	char **classes, **files;
	int nc = entries(root, 1, &classes, e), rc = 0;
	s->kind = SOURCE_FILES;
	s->by_name = 1;
	snprintf(s->what, sizeof s->what, "dir");
	if (nc < 0)
		return -1;
	if (nc == 0) {
		err_set(e, "%s: no class subdirectories", root);
		free_names(classes, nc);
		return -1;
	}
	for (int c = 0; c < nc && rc == 0; c++) {
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", root, classes[c]);
		if (!classes[c] || source_add_class(s, classes[c]) < 0) {
			err_set(e, "%s: out of memory", root);
			rc = -1;
			break;
		}
		int nf = entries(sub, 0, &files, e);
		if (nf < 0) {
			rc = -1;
			break;
		}
		for (int f = 0; f < nf && rc == 0; f++) {
			char path[8192];
			snprintf(path, sizeof path, "%s/%s", sub, files[f] ? files[f] : "");
			if (!files[f] || source_add_file(s, path, c) < 0) {
				err_set(e, "%s: out of memory", root);
				rc = -1;
			}
		}
		free_names(files, nf);
	}
	free_names(classes, nc);
	if (rc == 0 && s->n == 0) {
		err_set(e, "%s: no files in the class subdirectories", root);
		rc = -1;
	}
	return rc;
}
