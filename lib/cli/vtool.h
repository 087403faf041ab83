/*
 * vtool.h - vtool(1)'s subcommands, one file each (lib/cli/vtool_*.c), and
 * what they share.  cmd/vtool.c declares the options and calls the one
 * the command line names; each prints its errors and exits as a command
 * does (cli.h).
 */
#ifndef VTOOL_H
#define VTOOL_H

#include <stdint.h>

#include "timm.h"
#include "vt.h"

#define VTOOL_MAXIN	1024		/* streams for cat, arrays for from-npy */
#define VTOOL_HEADER_JSON "header.json"	/* to-npy's sidecar in DIR (vtjson.h) */

/* The options of every subcommand, and its operands. */
struct vtool_opts {
	long long	 lines;		/* head: records to keep */
	int		 align;		/* from-npy: ALIGN of the stream */
	int		 ragged;	/* to-npy: '*' fields flat + shapes */
	int		 force;		/* binary output to a terminal */
	const char	*meta[VTOOL_MAXIN];	/* from-npy: KEY=VALUE */
	int		 nmeta;
	const char	*shapes[VTOOL_MAXIN];	/* from-npy: NAME=SHAPES.npy */
	int		 nshapes;
	const char	*header;	/* from-npy: --header FILE */
	int		 no_header;	/* from-npy: --no-header */
	int		 set_align;
	struct timm_opts timm;		/* from-safetensors: the import's options */
	int		 list;		/* from-safetensors: print the mapping */
	char		**args;		/* operands after the subcommand */
	int		 nargs;
};

/* The subcommands; argv is the command line as typed, for HISTORY. */
void	 vtool_info(const struct vtool_opts *o, int argc, char *argv[]);
void	 vtool_head(const struct vtool_opts *o, int argc, char *argv[]);
void	 vtool_cat(const struct vtool_opts *o, int argc, char *argv[]);
void	 vtool_to_npy(const struct vtool_opts *o, int argc, char *argv[]);
void	 vtool_from_npy(const struct vtool_opts *o, int argc, char *argv[]);
void	 vtool_to_safetensors(const struct vtool_opts *o, int argc, char *argv[]);
void	 vtool_from_safetensors(const struct vtool_opts *o, int argc, char *argv[]);

/* Open path (NULL, "-": stdin) and read its header into s; dies on error. */
void	 vtool_open(struct vt *s, const char *path);
/* Read s's next record: 1, or 0 at the end; dies on error. */
int	 vtool_next(struct vt *s);
/* Close s's file and free s. */
void	 vtool_close(struct vt *s);
/* Write the record just read into s to o (same fields); dies on error. */
void	 vtool_write_record(struct vt *o, struct vt *s);
/* Write o's header, this command in its HISTORY, to stdout (not a
 * terminal, unless force); dies on error. */
void	 vtool_begin_output(struct vt *o, int argc, char *argv[], int force);
/* Text from the input to stdout, its control characters escaped. */
void	 vtool_put_text(const char *s);
/* Whether a field of this dtype and dims is text: bytes of one '*' dim. */
int	 vtool_is_text(int dtype, int rank, const int64_t *dim);
/* The --meta lines into out: the first KEY=... of a key replaces the lines
 * out had of it (header.json's, the checkpoint's), the others add to it. */
void	 vtool_add_meta(const struct vtool_opts *o, struct vt *out);

#endif
