/* fileio.c - input and output the commands' way (fileio.h). */
#include <sys/stat.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

FILE *
open_in(const char *path, const char **name, struct err *e)
{
	struct stat st;
	FILE *fp;

	if (path == NULL || strcmp(path, "-") == 0) {
		/* as binary output to one is refused: else it waits forever */
		if (isatty(STDIN_FILENO)) {
			err_set(e, "stdin: refusing to read binary data from a terminal; "
			    "give a file or a pipe");
			return NULL;
		}
		*name = "stdin";
		return stdin;
	}
	if ((fp = fopen(path, "rb")) == NULL) {
		err_set(e, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(fp);
		err_set(e, "%s: is a directory, not a vitpipe stream", path);
		return NULL;
	}
	*name = path;
	return fp;
}

int
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
