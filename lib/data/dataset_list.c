/*
 * dataset_list.c - list files of "path label" lines.  The label is the
 * last field of the line, so paths may hold spaces.  Labels are either all
 * integers or all class names (sorted bytewise into classes 0..n-1).
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
is_integer(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s || strlen(s) > 9)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* Turn the names stored in place of labels (as indices into names[]) into
 * class numbers of the sorted, unique names. */
static int
number_classes(struct source *s, char **names, int64_t n, struct err *e)
{
	char **sorted = malloc((size_t)n * sizeof *sorted);
	if (!sorted)
		return -1;
	s->by_name = 1;
	memcpy(sorted, names, (size_t)n * sizeof *sorted);
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_str);
	for (int64_t i = 0; i < n; i++)
		if ((i == 0 || strcmp(sorted[i], sorted[i - 1])) &&
		    source_add_class(s, sorted[i]) < 0) {
			free(sorted);
			return -1;
		}
	free(sorted);
	for (int64_t i = 0; i < n; i++) {
		char **hit = bsearch(&names[i], s->classname, (size_t)s->nclass,
		    sizeof *s->classname, cmp_str);
		s->label[i] = (int32_t)(hit - s->classname);
	}
	return 0;
}

int
list_load(struct source *s, const char *list, struct err *e)
{
	FILE *fp = fopen(list, "r");
	char *line = NULL, *dup = strdup(list), **names = NULL;
	size_t cap = 0;
	ssize_t len;
	int64_t lineno = 0, nint = 0;
	int rc = -1;
	s->kind = SOURCE_FILES;
	snprintf(s->what, sizeof s->what, "list");
	if (!fp || !dup) {
		err_set(e, "%s: %s", list, strerror(errno));
		goto out;
	}
	const char *dir = dirname(dup);
	while ((len = getline(&line, &cap, fp)) > 0) {
		lineno++;
		while (len > 0 && isspace((unsigned char)line[len - 1]))
			line[--len] = 0;
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == 0 || *p == '#')
			continue;
		char *sp = p + strlen(p);
		while (sp > p && !isspace((unsigned char)sp[-1]))
			sp--;
		if (sp == p) {
			err_set(e, "%s: line %lld: want 'path label'",
			    list, (long long)lineno);
			goto out;
		}
		char *label = sp;
		while (sp > p && isspace((unsigned char)sp[-1]))
			*--sp = 0;
		char path[8192];
		snprintf(path, sizeof path, "%s%s%s", p[0] == '/' ? "" : dir,
		    p[0] == '/' ? "" : "/", p);
		int num = is_integer(label);
		nint += num;
		if (num && atoi(label) < 0) {
			err_set(e, "%s: line %lld: negative label %s",
			    list, (long long)lineno, label);
			goto out;
		}
		if (source_add_file(s, path, num ? atoi(label) : 0) < 0)
			goto oom;
		char **nn = realloc(names, (size_t)s->n * sizeof *nn);
		if (!nn)
			goto oom;
		names = nn;
		if (!(names[s->n - 1] = strdup(label)))
			goto oom;
	}
	if (ferror(fp)) {
		err_set(e, "%s: read error", list);
		goto out;
	}
	if (s->n == 0) {
		err_set(e, "%s: no 'path label' lines", list);
		goto out;
	}
	if (nint != 0 && nint != s->n) {
		err_set(e, "%s: labels mix integers and class names", list);
		goto out;
	}
	if (nint == 0 && number_classes(s, names, s->n, e) < 0)
		goto oom;
	rc = source_check_labels(s, list, e);
	goto out;
oom:
	err_set(e, "%s: out of memory", list);
out:
	for (int64_t i = 0; names && i < s->n; i++)
		free(names[i]);
	free(names);
	free(line);
	free(dup);
	if (fp)
		fclose(fp);
	return rc;
}
