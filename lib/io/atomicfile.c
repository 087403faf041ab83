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

/* The file that writing path means: symbolic links followed to their
 * last target, which need not exist yet (a link's relative target is read
 * from the link's directory).  NULL with errno set (ELOOP past 40 links). */
static char *
resolve(const char *path)
{
	char *p = strdup(path), *t, *q;
	struct stat st;
	ssize_t n;

	for (int hop = 0; p != NULL; hop++) {
		if (lstat(p, &st) == -1 || !S_ISLNK(st.st_mode))
			return p;
		if (hop == 40 || (t = malloc((size_t)st.st_size + 1)) == NULL) {
			free(p);
			errno = ELOOP;
			return NULL;
		}
		if ((n = readlink(p, t, (size_t)st.st_size + 1)) < 0 || n > st.st_size) {
			free(p);
			free(t);
			errno = n < 0 ? errno : ELOOP;	/* the link changed under us */
			return NULL;
		}
		t[n] = '\0';
		if (t[0] != '/' && (q = strrchr(p, '/')) != NULL) {
			char *j;

			if (asprintf(&j, "%.*s/%s", (int)(q - p), p, t) < 0)
				j = NULL;
			free(t);
			t = j;
		}
		free(p);
		p = t;
	}
	return NULL;
}

/* Write straight into an existing FIFO or device: it cannot be replaced,
 * and a rename over it would destroy it.  A directory fails to open. */
static int
open_direct(struct atomicfile *a)
{
	int fd = open(a->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd == -1)
		return -1;
	if ((a->fp = fdopen(fd, "wb")) == NULL) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return 0;
}

int
atomic_open(struct atomicfile *a, const char *path)
{
	struct stat st;
	mode_t mode;
	size_t n;
	int fd, e;

	memset(a, 0, sizeof(*a));
	if ((a->path = resolve(path)) == NULL)
		goto fail;
	if (stat(a->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			goto fail;
		}
		if (open_direct(a) == -1)
			goto fail;
		return 0;
	}
	e = errno;
	sweep(a->path);
	errno = e;
	n = strlen(a->path);
	if ((a->tmp = malloc(n + 40)) == NULL)
		goto fail;
	snprintf(a->tmp, n + 40, "%s.tmp.%ld.XXXXXX", a->path, (long)getpid());
	if ((fd = mkstemp(a->tmp)) == -1)
		goto fail;
	/* Held until the file is closed or the process dies: sweep's proof
	 * of life for makers it cannot see. */
	flock(fd, LOCK_EX);
	/* mkstemp makes 0600: keep the mode of the file replaced, or give
	 * the one a plain creat would. */
	if (stat(a->path, &st) == 0)
		mode = st.st_mode & 07777;
	else {
		mode_t mask = umask(0);

		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) == -1 || (a->fp = fdopen(fd, "wb")) == NULL) {
		int e = errno;
		close(fd);
		unlink(a->tmp);
		errno = e;
		goto fail;
	}
	return 0;
fail:
	e = errno;
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
	errno = e;
	return -1;
}

int
atomic_commit(struct atomicfile *a)
{
	int rc = 0, e = 0;

	/* A FIFO or device has nothing to sync: its writes are checked. */
	if (fflush(a->fp) == EOF || ferror(a->fp) ||
	    (a->tmp != NULL && fsync(fileno(a->fp)) == -1))
		rc = -1, e = errno ? errno : EIO;
	if (fclose(a->fp) == EOF && rc == 0)
		rc = -1, e = errno;
	if (a->tmp != NULL && rc == 0 && rename(a->tmp, a->path) == -1)
		rc = -1, e = errno;
	if (a->tmp != NULL && rc == -1)
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
		if (a->tmp != NULL)
			unlink(a->tmp);
	}
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
}
