/* atomicfile.c - temporary file beside the target, fsync, rename. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

/* Whether the temporary name (in directory dirfd) of base is stale: its
 * maker's process is gone (no such PID here) and nothing holds its lock
 * (a live maker on another host sharing the directory holds it). */
static int
stale(int dirfd, const char *base, const char *name)
{
	size_t n = strlen(base);
	char *end;
	long pid;
	int fd, dead;

	if (strncmp(name, base, n) != 0 || strncmp(name + n, ".tmp.", 5) != 0)
		return 0;
	errno = 0;
	pid = strtol(name + n + 5, &end, 10);
	if (errno || pid <= 0 || end == name + n + 5 || *end != '.' || strlen(end) != 7)
		return 0;
	if (pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) == -1)
		return 0;
	dead = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return dead;
}

/* Remove the stale temporaries of path (left by a process killed while it
 * wrote), never a live one. */
static void
sweep(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) :
	    strdup(".");
	const char *base = slash ? slash + 1 : path;
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL)
		if (stale(dirfd(d), base, e->d_name))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d != NULL)
		closedir(d);
	free(dir);
}

int
atomic_open(struct atomicfile *a, const char *path)
{
	size_t n = strlen(path);
	mode_t mask;
	int fd, e = errno;

	memset(a, 0, sizeof(*a));
	sweep(path);
	errno = e;
	if ((a->path = strdup(path)) == NULL || (a->tmp = malloc(n + 40)) == NULL)
		goto fail;
	snprintf(a->tmp, n + 40, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
	if ((fd = mkstemp(a->tmp)) == -1)
		goto fail;
	/* Held until the file is closed or the process dies: sweep's proof
	 * of life for makers it cannot see. */
	flock(fd, LOCK_EX);
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
