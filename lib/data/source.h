/*
 * source.h - a data set as patchify reads it: n records, each a clip (or
 * image, t = 1) with an i32 label, either held in memory (CIFAR, IDX, .npy)
 * or decoded on demand from files (PNG, JPEG, videos) named by a directory
 * or list.  source_get is safe to call from many threads at once.
 *
 * A function that fails returns -1 with a message naming the file in its
 * struct err (err.h).
 */
#ifndef SOURCE_H
#define SOURCE_H

#include <stdint.h>

#include "err.h"

#include "image.h"

#define SOURCE_MAXN	(1LL << 31)	/* most records in one source */
#define SOURCE_NAMELEN	4097		/* a record's source text, NUL included */

enum source_kind { SOURCE_MEM, SOURCE_FILES };

struct source {
	int	 kind;			/* enum source_kind */
	char	 what[32];		/* SOURCE header value: "cifar10", "idx", ... */
	int64_t	 n;			/* records */
	int	 t, h, w, c;		/* SOURCE_MEM: every record's shape */
	int	 temporal;		/* records are clips or volumes (3D tokens) */
	uint8_t	*data;			/* SOURCE_MEM: [n][t][h][w][c], or NULL
					   when the records are read from the
					   files as they are needed (fd) */
	int	*fd;			/* then: [nfile] each file, open */
	int64_t	*off;			/* [nfile] where its record 0 starts */
	int64_t	 pitch;			/* bytes from a record to the next */
	int	 skip;			/* bytes before the pixels in a record */
	int	 planar;		/* pixels stored as c planes of h x w */
	char	**path;			/* SOURCE_FILES: [n] */
	int	 frames, stride;	/* SOURCE_FILES videos: sampling (video.h) */
	char	**file;			/* SOURCE_MEM: [nfile] the files read */
	int64_t	*first;			/* SOURCE_MEM: [nfile] each one's first record */
	int	 nfile;
	int32_t	*label;			/* [n]; -1 when unlabelled */
	int	 nclass;		/* 0 when unknown */
	char	**classname;		/* [nclass] names, or NULL */
	int	 by_name;		/* labels were given as names (class
					   folders, a list's names), so that
					   source_read_classes maps by name */
};

/* Record i as a clip in im (SOURCE_FILES: PNG or JPEG by magic bytes,
 * anything else through video_load) and, unless name is NULL, where it
 * came from as vitpipe(5) words it: "PATH", "PATH:N" (item N of a data set
 * file) or "PATH:frames A-B", in name[SOURCE_NAMELEN].  0, or -1 with e. */
int	 source_get(const struct source *s, int64_t i, struct image *im, char *name,
	    struct err *e);
/* Into name[SOURCE_NAMELEN]: path as valid UTF-8 without control
 * characters (each offending byte becomes '?'), shortened at a character
 * boundary so that suffix still fits, then suffix. */
void	 source_name(char *name, const char *path, const char *suffix);
/* Note that SOURCE_MEM records from number first on come from path (for
 * source_get's names).  0, or -1 when memory is short. */
int	 source_add_memfile(struct source *s, const char *path, int64_t first);
/* Note that SOURCE_MEM records from number first on are read, each when
 * it is needed (pread), from fd (which s now owns), its record k at
 * off + k * s->pitch + s->skip, so that memory does not grow with the
 * file.  0, or -1 when memory is short (fd closed). */
int	 source_add_recfile(struct source *s, const char *path, int64_t first,
	    int fd, int64_t off);
/* Whether the files of a SOURCE_FILES source are videos: the first file
 * that is a PNG or JPEG says no, the first that FFmpeg reads as a video
 * says yes; files that are neither decide nothing (source_get names them
 * when they are read).  0 when no file decides. */
int	 source_files_temporal(const struct source *s);
/* Append a file record with label to a SOURCE_FILES source.  0, or -1. */
int	 source_add_file(struct source *s, const char *path, int32_t label);
/* Append class name (copied) as class number s->nclass.  0, or -1. */
int	 source_add_class(struct source *s, const char *name);
/* Read class names, one per line, from path; replaces any names there,
 * relabelling records by name when their labels were names (by_name): a
 * name missing from path is an error.  0, or -1 with e. */
int	 source_read_classes(struct source *s, const char *path, struct err *e);
/* Check every label is -1 or, when nclass is known (> 0), below it;
 * otherwise nclass becomes the largest label + 1.  0, or -1 with e
 * naming the first bad record of file name. */
int	 source_check_labels(struct source *s, const char *name, struct err *e);
/* Free everything s owns and zero it. */
void	 source_free(struct source *s);

/* CIFAR-10 (hundred 0) or CIFAR-100 binary files, concatenated; CIFAR-100
 * labels fine or (coarse 1) coarse.  Class names from batches.meta.txt or
 * {fine,coarse}_label_names.txt beside the first file, when present. */
int	 cifar_load(struct source *s, char *const *paths, int npaths, int hundred,
	    int coarse, struct err *e);
/* IDX images (N,H,W or N,H,W,C; u8; gzip or plain) and labels (N; NULL:
 * the sibling file named with "labels-idx1" for "images-idx3", if any). */
int	 idx_load(struct source *s, const char *images, const char *labels, struct err *e);
/* .npy images (N,H,W), (N,H,W,C) with C 1 or 3, or (volume 1 or rank 4
 * with a last dim other than 1 and 3) volumes (N,D,H,W[,C]); labels (N,)
 * integers or NULL.  u8 data is taken as is, floats in [0, 1] are scaled
 * by 255, other integers must lie in 0..255. */
int	 npy_source_load(struct source *s, const char *data, const char *labels,
	    int volume, struct err *e);
/* A directory with one subdirectory per class (sorted names are classes
 * 0..n-1) holding image or video files (sorted, dot files skipped). */
int	 dir_load(struct source *s, const char *root, struct err *e);
/* A list file of "path label" lines (label: an integer, or a class name,
 * names sorted into classes 0..n-1); relative paths are relative to the
 * list file's directory; blank lines and '#' comments are skipped. */
int	 list_load(struct source *s, const char *list, struct err *e);

#endif
