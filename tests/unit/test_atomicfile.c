/* test_atomicfile.c - a replaced file is either old or new, never partial. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "test.h"

static int
content_is(const char *path, const char *want)
{
	char buf[64] = "";
	FILE *fp = fopen(path, "r");

	if (!fp)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strcmp(buf, want) == 0;
}

/* Entries of dir whose names hold ".tmp." (atomic_open's temporaries). */
static int
temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += strstr(e->d_name, ".tmp.") != NULL;
	closedir(d);
	return n;
}

int
main(void)
{
	char dir[] = "/tmp/atomic-XXXXXX", path[64], cmd[96];
	struct atomicfile a;
	struct stat st;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f", dir);
	CHECK(atomic_open(&a, path) == 0, "open");
	fputs("old", a.fp);
	CHECK(atomic_commit(&a) == 0 && content_is(path, "old"), "first commit");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0444) == 0444, "mode is not mkstemp's 0600");
	CHECK(atomic_open(&a, path) == 0, "open again");
	fputs("new, half written", a.fp);
	fflush(a.fp);
	CHECK(content_is(path, "old"), "until commit, readers see the old file");
	atomic_abort(&a);
	CHECK(content_is(path, "old"), "abort keeps the old file");
	snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 1", dir);
	CHECK(system(cmd) == 0, "abort leaves no temporary behind");
	atomic_open(&a, path);
	fputs("new", a.fp);
	CHECK(atomic_commit(&a) == 0 && content_is(path, "new"), "commit replaces");
	/* A commit whose rename fails (the target is a directory) reports
	 * the error and removes its temporary, as atomicfile.h promises. */
	snprintf(path, sizeof(path), "%s/d", dir);
	CHECK(mkdir(path, 0777) == 0 && atomic_open(&a, path) == 0 &&
	    temporaries(dir) == 1, "open beside a directory: one temporary");
	fputs("lost", a.fp);
	errno = 0;
	int rc = atomic_commit(&a);
	CHECK(rc == -1 && errno != 0, "commit over a directory fails (%s)",
	    strerror(errno));
	CHECK(temporaries(dir) == 0, "a failed commit leaves no temporary behind");
	snprintf(path, sizeof(path), "%s/missing/f", dir);
	CHECK(atomic_open(&a, path) == -1, "a missing directory is an error");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || test_done();
}
