/* gzin.c - a FILE that decompresses gzip's bytes, or passes others (gzin.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzin.h"

struct gzin {
	FILE		*fp;
	const char	*name;
	struct err	*e;
	int		 gz;		/* gzip's magic seen: inflate */
	int		 end;		/* the last member ended with the input */
	unsigned char	 head[2];	/* the bytes read to look for the magic */
	size_t		 nhead, given;
	unsigned long long nin, nout;	/* compressed bytes read, bytes given */
	z_stream	 z;
	unsigned char	 in[1 << 16];
};

static ssize_t
fail(struct gzin *g, const char *why)
{
	err_set(g->e, "%s: %s", g->name, why);
	errno = EIO;
	return -1;
}

/* Fill g->in from the file when it is used up; 0 at the file's end. */
static size_t
refill(struct gzin *g)
{
	if (g->z.avail_in == 0) {
		size_t n = fread(g->in, 1, sizeof g->in, g->fp);
		g->nin += n;
		g->z.next_in = g->in;
		g->z.avail_in = (uInt)n;
	}
	return g->z.avail_in;
}

static ssize_t
inflate_some(struct gzin *g, char *buf, size_t size)
{
	if (size > 1u << 30)
		size = 1u << 30;
	g->z.next_out = (unsigned char *)buf;
	g->z.avail_out = (uInt)size;
	while (g->z.avail_out == size && !g->end) {
		int more = refill(g) > 0;
		if (!more && ferror(g->fp))
			return fail(g, strerror(errno));
		int rc = inflate(&g->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {	/* another member may follow */
			if (refill(g) == 0)
				g->end = 1;
			else if (inflateReset(&g->z) != Z_OK)
				return fail(g, "gzip: cannot read on");
		} else if (rc == Z_BUF_ERROR && !more)
			return fail(g, "gzip: truncated (unexpected end of file)");
		else if (rc != Z_OK && rc != Z_BUF_ERROR)
			return fail(g, g->z.msg ? g->z.msg : "gzip: corrupt data");
	}
	g->nout += size - g->z.avail_out;
	if (g->nout > (unsigned long long)GZIN_RATIO * g->nin + GZIN_SLACK) {
		err_set(g->e, "%s: gzip: expands more than %d times: not a log", g->name, GZIN_RATIO);
		errno = EIO;
		return -1;
	}
	return (ssize_t)(size - g->z.avail_out);
}

static ssize_t
gzin_read(void *cookie, char *buf, size_t size)
{
	struct gzin *g = cookie;

	if (g->gz)
		return inflate_some(g, buf, size);
	if (g->given < g->nhead) {
		size_t n = g->nhead - g->given < size ? g->nhead - g->given : size;
		memcpy(buf, g->head + g->given, n);
		g->given += n;
		return (ssize_t)n;
	}
	size_t n = fread(buf, 1, size, g->fp);
	if (n == 0 && ferror(g->fp))
		return fail(g, strerror(errno));
	return (ssize_t)n;
}

static int
gzin_close(void *cookie)
{
	struct gzin *g = cookie;

	if (g->gz)
		inflateEnd(&g->z);
	free(g);
	return 0;
}

FILE *
gzin_open(FILE *fp, const char *name, struct err *e)
{
	static const cookie_io_functions_t io = { .read = gzin_read, .close = gzin_close };
	struct gzin *g = calloc(1, sizeof *g);
	FILE *f;

	if (g == NULL) {
		err_set(e, "%s: %s", name, strerror(errno));
		return NULL;
	}
	g->fp = fp, g->name = name, g->e = e;
	g->nhead = fread(g->head, 1, sizeof g->head, fp);
	if (g->nhead == 2 && g->head[0] == 0x1f && g->head[1] == 0x8b) {
		g->gz = 1;
		g->z.next_in = g->in;
		memcpy(g->in, g->head, 2);
		g->z.avail_in = 2;
		g->nin = 2;
		if (inflateInit2(&g->z, 16 + MAX_WBITS) != Z_OK) {
			err_set(e, "%s: gzip: cannot start", name);
			free(g);
			return NULL;
		}
	}
	if ((f = fopencookie(g, "r", io)) == NULL) {
		err_set(e, "%s: %s", name, strerror(errno));
		if (g->gz)
			inflateEnd(&g->z);
		free(g);
	}
	return f;
}
