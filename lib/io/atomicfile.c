/* atomicfile.c - temporary file beside the target, fsync, rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

int
atomic_open(struct atomicfile *a, const char *path)
{
	size_t n = strlen(path);
	mode_t mask;
	int fd;

	memset(a, 0, sizeof(*a));
	if ((a->path = strdup(path)) == NULL || (a->tmp = malloc(n + 16)) == NULL)
		goto fail;
	memcpy(a->tmp, path, n);
	memcpy(a->tmp + n, ".tmp.XXXXXX", 12);
	if ((fd = mkstemp(a->tmp)) == -1)
		goto fail;
	/* mkstemp makes 0600; give the file the mode a plain creat would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) == -1 || (a->fp = fdopen(fd, "wb")) == NULL) {
		int e = errno;
		close(fd);
		unlink(a->tmp);
		errno = e;
		goto fail;
	}
	return 0;
fail:
	{
		int e = errno;
		free(a->path);
		free(a->tmp);
		memset(a, 0, sizeof(*a));
		errno = e;
	}
	return -1;
}

int
atomic_commit(struct atomicfile *a)
{
	int rc = 0, e = 0;

	if (fflush(a->fp) == EOF || ferror(a->fp) || fsync(fileno(a->fp)) == -1)
		rc = -1, e = errno;
	if (fclose(a->fp) == EOF && rc == 0)
		rc = -1, e = errno;
	if (rc == 0 && rename(a->tmp, a->path) == -1)
		rc = -1, e = errno;
	if (rc == -1)
		unlink(a->tmp);
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
	errno = e;
	return rc;
}

void
atomic_abort(struct atomicfile *a)
{
	if (a->fp) {
		fclose(a->fp);
		unlink(a->tmp);
	}
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
}
