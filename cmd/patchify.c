/*
 * patchify - images, videos and volumes in, a vitpipe stream of patch
 * tokens out: the data stage of every pipeline (see patchify(1)).
 *
 * Records are processed in batches, in parallel over records; each record
 * draws its augmentation from its own generator rng_seed(seed, epoch * N +
 * index), index its place in the source, and results are written in a
 * fixed order, so the bytes out do not depend on the thread count.
 */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "augment.h"
#include "cli.h"
#include "cliopt.h"
#include "normalize.h"
#include "patch.h"
#include "randaugment.h"
#include "resize.h"
#include "rng.h"
#include "source.h"
#include "vt.h"

/* Records per parallel batch: enough that the fork and join of a batch cost
 * little even when the cores are shared (a descheduled thread holds up the
 * join), few enough to keep a batch's buffers near BATCH_BYTES. */
#define BATCH_BYTES	(32 << 20)
#define BATCH_MIN	16
#define BATCH_MAX	4096
#define SUBSET_STREAM	(1ULL << 62)	/* + class + 1: --subset's draws */
#define SHUFFLE_STREAM	(1ULL << 63)	/* + epoch: the epoch's order */

enum { O_FORMAT = CLI_OPT_LONG, O_IDX, O_LABELS, O_CLASSES, O_COARSE, O_VOLUME,
	O_RAW, O_FRAMES, O_TAIL, O_STRIDE, O_LABEL, O_CHANNELS, O_RESIZE, O_CROP,
	O_PATCH, O_CROPPAD, O_RRC, O_FLIP, O_RA, O_ERASE, O_F32, O_NOSOURCE, O_NORM,
	O_MEAN, O_STD, O_EPOCHS, O_SHUFFLE, O_SEED, O_SUBSET, O_SHARD, O_SKIPBAD,
	O_STATS, O_THREADS };

static const struct cli_opt options[] = {
	CLI_OPT_SECTION("Source:"),
	{ "format", O_FORMAT, "F", "auto image dir list cifar10 cifar100 idx npy video" },
	{ "idx", O_IDX, "FILE", "the same as --format idx FILE" },
	{ "labels", O_LABELS, "FILE", "labels of IDX or .npy data" },
	{ "classes", O_CLASSES, "FILE", "class names, one per line" },
	{ "coarse", O_COARSE, NULL, "CIFAR-100 coarse labels (default fine)" },
	{ "volume", O_VOLUME, NULL, "rank-4 .npy arrays are volumes (N,D,H,W)" },
	{ "raw", O_RAW, "HxWxC", "raw u8 frames on stdin (ffmpeg -s takes WxH)" },
	{ "frames", O_FRAMES, "T", "frames per clip (videos: default 8)" },
	{ "tail", O_TAIL, "T", "--raw: frames short of a clip at the end: drop\n"
	    "(default), pad (repeat the last) or error" },
	{ "stride", O_STRIDE, "S", "videos: every S-th frame (default: spread uniformly)" },
	{ "label", O_LABEL, "N", "label of records that have none (default -1)" },
	CLI_OPT_SECTION("Geometry:"),
	{ "channels", O_CHANNELS, "C", "1 (grey) or 3 (RGB) (default: the source's)" },
	{ "resize", O_RESIZE, "S|HxW", "shorter side to S, or exactly H x W" },
	{ "crop", O_CROP, "S|HxW", "centre crop (zero padding when larger)" },
	{ "patch", O_PATCH, "P|PHxPW|PTxPHxPW", "patch or tubelet size (default 16)" },
	CLI_OPT_SECTION("Augmentation:"),
	{ "crop-pad", O_CROPPAD, "P", "random crop after zero padding by P" },
	{ "rrc", O_RRC, "[=LO,HI]", "RandomResizedCrop, area fraction LO..HI (0.08,1)" },
	{ "flip", O_FLIP, NULL, "random horizontal flip" },
	{ "randaugment", O_RA, "N,M", "RandAugment with N ops at magnitude M (0..30)" },
	{ "erase", O_ERASE, "P", "random erasing with probability P" },
	CLI_OPT_SECTION("Output:"),
	{ "f32", O_F32, NULL, "normalized f32 values (default u8 0..255)" },
	{ "no-source", O_NOSOURCE, NULL, "no per-record source field" },
	{ "norm", O_NORM, "PRESET",
	    "imagenet cifar10 cifar100 mnist fashion-mnist\nkinetics half none" },
	{ "mean", O_MEAN, "LIST", "per-channel means (0..1 scale)" },
	{ "std", O_STD, "LIST", "per-channel standard deviations" },
	{ "epochs", O_EPOCHS, "N", "stream N epochs (default 1)" },
	{ "shuffle", O_SHUFFLE, NULL, "a fresh order every epoch" },
	{ "seed", O_SEED, "S", "seed of order, subset and augmentation (default 0)" },
	{ "subset", O_SUBSET, "F", "keep a seeded fraction F of every class" },
	{ "shard", O_SHARD, "I/N", "keep every N-th record from the I-th (0-based)" },
	{ "skip-bad", O_SKIPBAD, NULL, "skip unreadable records with a warning" },
	{ "stats", O_STATS, NULL, "print records/s on stderr" },
	{ "threads", O_THREADS, "N", "threads (default: all cores)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] [file ...]",
	"Read images, videos, volumes or data set files; write patch tokens.",
	options, NULL
};

/* --tail: what becomes of whole frames short of a clip at the end of --raw
 * input (stray bytes short of a frame are never a record); not given, they
 * are dropped. */
enum tail { TAIL_UNSET, TAIL_DROP, TAIL_PAD, TAIL_ERROR };

struct opts {
	const char *format, *idx, *labels, *classes;
	int	 coarse, volume, frames, stride, label, channels;
	int	 raw_h, raw_w, raw_c;		/* --raw; raw_w 0 when off */
	int	 tail;				/* enum tail */
	int	 no_source;
	int	 rs_short, rs_h, rs_w;		/* --resize */
	int	 crop_h, crop_w;		/* --crop */
	int	 pt, ph, pw;			/* --patch */
	int	 pad, rrc, flip, ra_n, ra_m;
	double	 rrc_lo, rrc_hi, erase;
	int	 f32, epochs, shuffle, skip_bad, stats, threads;
	const char *norm, *mean, *std;
	uint64_t seed;
	double	 subset;
	int	 shard_i, shard_n;
};

/* What processing one record needs; read-only in the parallel loop. */
struct plan {
	int	 t, c, oh, ow;			/* output clip shape */
	const struct opts *o;
	struct norm norm;
	int	 has_norm;
	uint8_t	 fill[NORM_MAXC];		/* erasing value: the mean */
	float	 lut[NORM_MAXC][256];
	int64_t	 tokens, values;
	size_t	 recbytes;			/* patch payload bytes */
};

struct scratch {
	struct image a, b, tmp;
};

/* "S" or "HxW" into h, w (short: S alone). */
static void
parse_size(const char *opt, const char *arg, int *s, int *h, int *w)
{
	int64_t d[2];
	int n = vt_parse_dims(arg, d, 2);
	if (n < 1 || d[0] < 1 || d[0] > IMAGE_MAXSIDE || (n == 2 && (d[1] < 1 || d[1] > IMAGE_MAXSIDE)))
		usage_error("%s: want S or HxW, got '%s'", opt, arg);
	if (n == 1 && s)
		*s = (int)d[0];
	else
		*h = (int)d[0], *w = (int)(n == 2 ? d[1] : d[0]);
}

static void
parse_patch(const char *arg, struct opts *o)
{
	int64_t d[3];
	int n = vt_parse_dims(arg, d, 3);
	for (int i = 0; i < n; i++)
		if (d[i] < 1 || d[i] > 4096)
			n = -1;
	if (n < 1)
		usage_error("--patch: want P, PHxPW or PTxPHxPW, got '%s'", arg);
	o->pt = n == 3 ? (int)d[0] : 1;
	o->ph = (int)d[n == 3 ? 1 : 0];
	o->pw = (int)d[n - 1];
}

static void
parse_opts(int argc, char **argv, struct opts *o)
{
	int ch;
	int64_t d[3];
	char *end;

	*o = (struct opts){ .format = "auto", .label = -1, .pt = 1, .ph = 16,
	    .pw = 16, .rrc_lo = 0.08, .rrc_hi = 1, .epochs = 1, .shard_n = 1 };
	while ((ch = cli_getopt(argc, argv, &command)) != -1)
		switch (ch) {
		case O_FORMAT: o->format = optarg; break;
		case O_IDX: o->format = "idx", o->idx = optarg; break;
		case O_LABELS: o->labels = optarg; break;
		case O_CLASSES: o->classes = optarg; break;
		case O_COARSE: o->coarse = 1; break;
		case O_VOLUME: o->volume = 1; break;
		case O_RAW:
			if (vt_parse_dims(optarg, d, 3) != 3 || d[0] < 1 || d[1] < 1 ||
			    d[0] > IMAGE_MAXSIDE || d[1] > IMAGE_MAXSIDE || (d[2] != 1 && d[2] != 3))
				usage_error("--raw: want HxWxC (height first) with C 1 or 3, got '%s'", optarg);
			o->raw_h = (int)d[0], o->raw_w = (int)d[1], o->raw_c = (int)d[2];
			break;
		case O_TAIL:
			o->tail = !strcmp(optarg, "drop") ? TAIL_DROP : !strcmp(optarg, "pad") ?
			    TAIL_PAD : !strcmp(optarg, "error") ? TAIL_ERROR : -1;
			if (o->tail < 0)
				usage_error("--tail: want drop, pad or error, got '%s'", optarg);
			break;
		case O_NOSOURCE: o->no_source = 1; break;
		case O_FRAMES: o->frames = (int)cli_int("--frames", optarg, 1, 4096); break;
		case O_STRIDE: o->stride = (int)cli_int("--stride", optarg, 1, 1 << 20); break;
		case O_LABEL: o->label = (int)cli_int("--label", optarg, -1, INT32_MAX); break;
		case O_CHANNELS:
			o->channels = (int)cli_int("--channels", optarg, 1, 3);
			if (o->channels == 2)
				usage_error("--channels: want 1 or 3");
			break;
		case O_RESIZE: parse_size("--resize", optarg, &o->rs_short, &o->rs_h, &o->rs_w); break;
		case O_CROP: parse_size("--crop", optarg, NULL, &o->crop_h, &o->crop_w); break;
		case O_PATCH: parse_patch(optarg, o); break;
		case O_CROPPAD: o->pad = (int)cli_int("--crop-pad", optarg, 0, 4096); break;
		case O_RRC:
			o->rrc = 1;
			if (optarg && (sscanf(optarg, "%lf,%lf", &o->rrc_lo, &o->rrc_hi) != 2 ||
			    !(o->rrc_lo > 0 && o->rrc_lo <= o->rrc_hi && o->rrc_hi <= 1)))
				usage_error("--rrc: want LO,HI with 0 < LO <= HI <= 1, got '%s'", optarg);
			break;
		case O_FLIP: o->flip = 1; break;
		case O_RA:
			if (sscanf(optarg, "%d,%d", &o->ra_n, &o->ra_m) != 2 || o->ra_n < 0 ||
			    o->ra_n > 16 || o->ra_m < 0 || o->ra_m >= RA_BINS)
				usage_error("--randaugment: want N,M with N 0..16 and M 0..30, got '%s'", optarg);
			break;
		case O_ERASE: o->erase = cli_num("--erase", optarg, 0, 1); break;
		case O_F32: o->f32 = 1; break;
		case O_NORM: o->norm = optarg; break;
		case O_MEAN: o->mean = optarg; break;
		case O_STD: o->std = optarg; break;
		case O_EPOCHS: o->epochs = (int)cli_int("--epochs", optarg, 1, 1 << 20); break;
		case O_SHUFFLE: o->shuffle = 1; break;
		case O_SEED: o->seed = cli_opt_seed(optarg); break;
		case O_SUBSET: o->subset = cli_num("--subset", optarg, 1e-9, 1); break;
		case O_SHARD:
			o->shard_i = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end != '/' || (o->shard_n = (int)strtol(end + 1, &end, 10)) < 1 ||
			    *end || o->shard_i < 0 || o->shard_i >= o->shard_n)
				usage_error("--shard: want I/N with 0 <= I < N, got '%s'", optarg);
			break;
		case O_SKIPBAD: o->skip_bad = 1; break;
		case O_STATS: o->stats = 1; break;
		case O_THREADS: o->threads = cli_opt_threads(optarg); break;
		}
	if ((o->raw_w || o->idx) && optind < argc)
		usage_error("%s: no file operands", o->idx ? "--idx FILE" : "--raw reads stdin");
	if (!o->raw_w && !o->idx && optind == argc)
		usage_error("no input (give files, or --raw for frames on stdin)");
	if (o->tail && !o->raw_w)
		usage_error("--tail is for --raw input");
	if (o->raw_w && (o->epochs > 1 || o->shuffle || o->subset))
		usage_error("--raw streams stdin once: no --epochs, --shuffle or --subset");
	if ((o->mean == NULL) != (o->std == NULL))
		usage_error("--mean and --std go together");
	if (o->norm && o->mean)
		usage_error("--norm or --mean/--std, not both");
	if (o->rrc && o->rs_short)
		usage_error("--rrc replaces resizing: give its size with --crop (or --resize HxW)");
}

/* How the operands are read: the format named, or guessed from them. */
static const char *
guess_format(const char *path)
{
	struct stat st;
	unsigned char m[8] = { 0 };
	if (stat(path, &st) < 0)
		die_errno("%s", path);
	if (S_ISDIR(st.st_mode))
		return "dir";
	FILE *fp = fopen(path, "rb");
	if (!fp)
		die_errno("%s", path);
	size_t got = fread(m, 1, sizeof m, fp);
	fclose(fp);
	const char *dot = strrchr(path, '.');
	if (image_magic(m, got) != IMAGE_NONE)
		return "image";
	if (got >= 6 && !memcmp(m, "\x93NUMPY", 6))
		return "npy";
	if (got >= 4 && ((m[0] == 0x1f && m[1] == 0x8b) || (!m[0] && !m[1] && m[2] == 0x08)))
		return "idx";
	if (dot && (!strcmp(dot, ".txt") || !strcmp(dot, ".lst") || !strcmp(dot, ".list")))
		return "list";
	if (dot && !strcmp(dot, ".bin"))
		return st.st_size % 3073 == 0 ? "cifar10" : st.st_size % 3074 == 0 ?
		    "cifar100" : "cifar10";	/* cifar_load names the problem */
	return "video";
}

/* A class folder without files still makes a class, which no record has:
 * usually a mistake (a copy that failed), so say it. */
static void
warn_empty_classes(const struct source *s, const char *root)
{
	int64_t *count = calloc((size_t)s->nclass, sizeof *count);

	if (count == NULL)
		die("out of memory");
	for (int64_t i = 0; i < s->n; i++)
		count[s->label[i]]++;
	for (int c = 0; c < s->nclass; c++)
		if (count[c] == 0)
			cli_warn("%s/%s: an empty class folder; it is class %d, with no records",
			    root, s->classname[c], c);
	free(count);
}

static void
load_source(struct source *s, const struct opts *o, int argc, char **argv)
{
	struct err e;
	const char *f = strcmp(o->format, "auto") ? o->format : guess_format(argv[0]);
	int rc = 0, nfiles = argc;
	if (strcmp(f, "cifar10") == 0 || strcmp(f, "cifar100") == 0)
		rc = cifar_load(s, argv, argc, strcmp(f, "cifar100") == 0, o->coarse, &e);
	else if (strcmp(f, "idx") == 0 || strcmp(f, "npy") == 0) {
		if (argc != 1)
			usage_error("%s: one data file (labels with --labels)", f);
		rc = f[0] == 'i' ? idx_load(s, argv[0], o->labels, &e) :
		    npy_source_load(s, argv[0], o->labels, o->volume, &e);
	} else if (strcmp(f, "dir") == 0 || strcmp(f, "list") == 0) {
		if (argc != 1)
			usage_error("%s: one operand", f);
		rc = f[0] == 'd' ? dir_load(s, argv[0], &e) : list_load(s, argv[0], &e);
	} else if (strcmp(f, "image") == 0 || strcmp(f, "video") == 0) {
		for (int i = 0; i < nfiles; i++)
			if (source_add_file(s, argv[i], -1) < 0)
				die("out of memory");
		snprintf(s->what, sizeof s->what, "%s", f);
		s->temporal = f[0] == 'v';
	} else
		usage_error("--format: unknown format '%s'", f);
	if (rc < 0)
		die("%s", e.msg);
	if (s->kind == SOURCE_FILES) {
		if (strcmp(f, "dir") == 0 || strcmp(f, "list") == 0)
			s->temporal = source_files_temporal(s);
		s->frames = o->frames ? o->frames : 8;
		s->stride = o->stride;
	}
	if (strcmp(f, "dir") == 0)
		warn_empty_classes(s, argv[0]);
	/* PyTorch's layout (N,C,H,W) reads as volumes of C slices */
	if (strcmp(s->what, "npy") == 0 && s->temporal && !o->volume && s->c == 1 &&
	    (s->t == 1 || s->t == 3 || s->t == 4) && s->w != 1 && s->w != 3 && s->w != 4)
		cli_warn("%s: read as volumes of %d slices of %dx%d; if it is PyTorch's (N,C,H,W), "
		    "images want (N,H,W,C): numpy's transpose(0, 2, 3, 1)", argv[0], s->t, s->h,
		    s->w);
	if (o->classes && (source_read_classes(s, o->classes, &e) < 0 ||
	    source_check_labels(s, o->classes, &e) < 0))
		die("%s", e.msg);
	if (o->label >= 0)
		for (int64_t i = 0; i < s->n; i++)
			if (s->label[i] < 0)
				s->label[i] = o->label;
}

/* Geometry and augmentation of one record, from im (in w->a) to patches
 * at out.  0, or -1 with err. */
static int
transform(const struct plan *p, struct scratch *w, struct rng *r, void *out, struct err *err)
{
	const struct opts *o = p->o;
	struct image t;
#define SWAP() (t = w->a, w->a = w->b, w->b = t)
	if (image_set_channels(&w->a, p->c) < 0)
		return err_set(err, "cannot convert %d to %d channels", w->a.c, p->c);
	if (o->rrc) {
		if (aug_rrc(&w->a, &w->b, p->oh, p->ow, o->rrc_lo, o->rrc_hi, r) < 0)
			goto oom;
		SWAP();
	} else {
		int rh = o->rs_h, rw = o->rs_w;
		if (o->rs_short)
			resize_shorter(w->a.h, w->a.w, o->rs_short, &rh, &rw);
		if (rh && (rh != w->a.h || rw != w->a.w)) {
			if (image_resize(&w->a, 0, 0, w->a.h, w->a.w, &w->b, rh, rw) < 0)
				goto oom;
			SWAP();
		}
		if (o->crop_h && (o->crop_h != w->a.h || o->crop_w != w->a.w)) {
			if (image_crop(&w->a, (w->a.h - o->crop_h) / 2, (w->a.w - o->crop_w) / 2,
			    &w->b, o->crop_h, o->crop_w) < 0)
				goto oom;
			SWAP();
		}
	}
	if (w->a.t != p->t || w->a.h != p->oh || w->a.w != p->ow)
		return err_set(err, "size %dx%d (height x width), %d frame%s, "
		    "differs from the first record's %dx%d, %d frame%s (use --resize or --crop)",
		    w->a.h, w->a.w, w->a.t, w->a.t == 1 ? "" : "s", p->oh, p->ow, p->t,
		    p->t == 1 ? "" : "s");
	if (o->pad) {
		if (aug_crop_pad(&w->a, &w->b, p->oh, p->ow, o->pad, r) < 0)
			goto oom;
		SWAP();
	}
	if (o->flip)
		aug_hflip(&w->a, r);
	if (o->ra_n && randaugment(&w->a, &w->tmp, o->ra_n, o->ra_m, r) < 0)
		goto oom;
	if (o->erase > 0)
		aug_erase(&w->a, o->erase, p->fill, r);
	if (p->o->f32)
		patch_f32(&w->a, o->pt, o->ph, o->pw, (const float (*)[256])p->lut, out);
	else
		patch_u8(&w->a, o->pt, o->ph, o->pw, out);
	return 0;
#undef SWAP
oom:
	return err_set(err, "out of memory");
}

/* "TxHxW" (d3) or "HxW" into buf[64]; buf. */
static char *
dims(char *buf, int d3, int t, int h, int w)
{
	if (d3)
		snprintf(buf, 64, "%dx%dx%d", t, h, w);
	else
		snprintf(buf, 64, "%dx%d", h, w);
	return buf;
}

/* Output shape from the options and the first good record of the input
 * named name. */
static void
make_plan(struct plan *p, const struct opts *o, const struct source *s, const char *name)
{
	char pd[64], rd[64];
	struct image im = { 0 };
	struct err e;
	int64_t first = 0;
	memset(p, 0, sizeof *p);
	p->o = o;
	if (o->raw_w) {
		if (image_alloc(&im, o->frames ? o->frames : 1, o->raw_h, o->raw_w, o->raw_c) < 0)
			usage_error("--raw %dx%dx%d --frames %d: clips too large", o->raw_h,
			    o->raw_w, o->raw_c, o->frames);
	} else {
		while (source_get(s, first, &im, NULL, &e) < 0) {
			if (!o->skip_bad || ++first == s->n)
				die("%s", e.msg);
		}
	}
	p->t = im.t;
	p->c = o->channels ? o->channels : im.c;
	p->has_norm = o->norm || o->mean || o->f32;
	if (o->norm && norm_preset(&p->norm, o->norm, p->c) < 0)
		usage_error("--norm: unknown preset '%s' (%s)", o->norm, norm_presets());
	if (o->mean) {
		p->norm.c = p->c;
		if (norm_parse(o->mean, p->norm.mean, p->c) < 0 ||
		    norm_parse(o->std, p->norm.std, p->c) < 0)
			usage_error("--mean/--std: want 1 or %d comma-separated numbers", p->c);
	}
	if (!o->norm && !o->mean)
		norm_preset(&p->norm, "none", p->c);
	for (int k = 0; k < p->c; k++) {
		if (!(p->norm.std[k] > 0))
			usage_error("--std: values must be positive");
		double v = p->norm.mean[k] * 255;
		p->fill[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
	}
	norm_lut(&p->norm, p->lut);
	if (o->crop_h)
		p->oh = o->crop_h, p->ow = o->crop_w;
	else if (o->rs_h)
		p->oh = o->rs_h, p->ow = o->rs_w;
	else if (o->rs_short)
		resize_shorter(im.h, im.w, o->rs_short, &p->oh, &p->ow);
	else
		p->oh = im.h, p->ow = im.w;
	image_free(&im);
	struct image shape = { .t = p->t, .h = p->oh, .w = p->ow, .c = p->c };
	int d3 = s->temporal;
	if (!d3 && o->pt > 1)
		die("%s: patch %dx%dx%d is a tubelet, but the records are %s images",
		    name, o->pt, o->ph, o->pw, dims(rd, 0, 1, p->oh, p->ow));
	if (!patch_fits(&shape, o->pt, o->ph, o->pw))
		die("%s: patch %s does not divide the %s records (see --resize, --crop%s)",
		    name, dims(pd, d3, o->pt, o->ph, o->pw), dims(rd, d3, p->t, p->oh, p->ow),
		    d3 ? ", --frames" : "");
	p->tokens = (int64_t)(p->t / o->pt) * (p->oh / o->ph) * (p->ow / o->pw);
	p->values = patch_values(&shape, o->pt, o->ph, o->pw);
	p->recbytes = (size_t)(p->tokens * p->values) * (o->f32 ? 4 : 1);

}

/* Records of one epoch before sharding: the kept indices. */
static int64_t *
keep_subset(const struct source *s, const struct opts *o, int64_t *nkept)
{
	int64_t *keep = malloc(sizeof *keep * (size_t)s->n);
	char *mark = calloc((size_t)s->n, 1);
	if (!keep || !mark)
		die("out of memory");
	if (!o->subset) {
		for (int64_t i = 0; i < s->n; i++)
			keep[i] = i;
		*nkept = s->n;
		free(mark);
		return keep;
	}
	/* Per class (unlabelled records form class -1): a seeded shuffle of
	 * its records, of which the first round(F n) are kept. */
	for (int32_t c = -1; c < s->nclass; c++) {
		int64_t n = 0;
		for (int64_t i = 0; i < s->n; i++)
			if (s->label[i] == c)
				keep[n++] = i;
		struct rng r;
		rng_seed(&r, o->seed, SUBSET_STREAM + (uint64_t)(c + 1));
		rng_shuffle(&r, keep, n);
		int64_t k = (int64_t)(o->subset * n + 0.5);
		for (int64_t i = 0; i < k; i++)
			mark[keep[i]] = 1;
	}
	int64_t n = 0;
	for (int64_t i = 0; i < s->n; i++)
		if (mark[i])
			keep[n++] = i;
	free(mark);
	*nkept = n;
	return keep;
}

/* Header key "TxHxW" (video) or "HxW" (image): 0, or -1. */
static int
meta_dims(struct vt *out, const char *key, int d3, int t, int h, int w)
{
	char buf[64];
	return vt_meta_set(out, key, dims(buf, d3, t, h, w));
}

static void
write_header(struct vt *out, const struct plan *p, const struct source *s,
    int64_t epoch_records, int argc, char **argv)
{
	const struct opts *o = p->o;
	char buf[256], m[128], sd[128];
	int rc = 0;
	vt_init(out);
	if (vt_add_field(out, "patch", o->f32 ? VT_F32 : VT_U8, 2,
	    (int64_t[]){ p->tokens, p->values }) < 0 ||
	    vt_add_field(out, "label", VT_I32, 0, NULL) < 0 ||
	    (!o->no_source && vt_add_field(out, "source", VT_U8, 1, (int64_t[]){ VT_ANY }) < 0))
		die("%s", out->err.msg);
	int d3 = s->temporal;
	rc |= meta_dims(out, "GRID", d3, p->t / o->pt, p->oh / o->ph, p->ow / o->pw);
	rc |= meta_dims(out, "PATCH", d3, o->pt, o->ph, o->pw);
	snprintf(buf, sizeof buf, "%d", p->c);
	rc |= vt_meta_set(out, "CHANNELS", buf);
	rc |= meta_dims(out, "SIZE", d3, p->t, p->oh, p->ow);
	rc |= vt_meta_set(out, "SOURCE", s->what);
	if (s->nclass > 0) {
		snprintf(buf, sizeof buf, "%d", s->nclass);
		rc |= vt_meta_set(out, "CLASSES", buf);
		for (int i = 0; s->classname && i < s->nclass; i++) {
			char line[VT_MAXLINE - 16];
			snprintf(line, sizeof line, "%d %s", i, s->classname[i]);
			rc |= vt_meta_add(out, "CLASS", line);
		}
	}
	if (p->has_norm) {
		norm_format(p->norm.mean, p->c, m, sizeof m);
		norm_format(p->norm.std, p->c, sd, sizeof sd);
		rc |= vt_meta_set(out, "MEAN", m);
		rc |= vt_meta_set(out, "STD", sd);
	}
	if (epoch_records >= 0) {
		snprintf(buf, sizeof buf, "%lld", (long long)epoch_records);
		rc |= vt_meta_set(out, "EPOCH_RECORDS", buf);
		out->records = epoch_records * o->epochs;
	}
	rc |= vt_history(out, argc, argv);
	if (rc < 0 || vt_write_header(out, stdout, "stdout") < 0)
		die("%s", out->err.msg);
}

struct run {
	const struct plan *p;
	struct vt *out;
	struct scratch *w;		/* [threads] */
	int	 batch;			/* records per batch */
	uint8_t	*buf;			/* [batch][recbytes] */
	int32_t	*label;			/* [batch] */
	int64_t	*idx;			/* [batch] record numbers */
	struct err *err;	/* [batch]; "" when good */
	char	(*src)[SOURCE_NAMELEN];	/* [batch] source texts; NULL: --no-source */
	int64_t	 written, skipped;
	int64_t	 tail_frames, tail_bytes;	/* --raw: left after the last clip */
	struct progress pg;
};

/* Write the good records of a batch in order; handle the bad ones. */
static void
flush_batch(struct run *u, int n, const int64_t *idx, char *bad)
{
	for (int k = 0; k < n; k++) {
		if (u->err[k].msg[0]) {
			if (!u->p->o->skip_bad)
				die("%s", u->err[k].msg);
			cli_warn("skipping: %s", u->err[k].msg);
			u->skipped++;
			if (bad && idx)
				bad[idx[k]] = 1;
			continue;
		}
		memcpy(u->out->field[0].data, u->buf + (size_t)k * u->p->recbytes, u->p->recbytes);
		*(int32_t *)u->out->field[1].data = u->label[k];
		if (u->src) {
			int64_t len = (int64_t)strlen(u->src[k]);
			if (vt_set_shape(u->out, 2, &len) < 0)
				die("%s", u->out->err.msg);
			memcpy(u->out->field[2].data, u->src[k], (size_t)len);
		}
		if (vt_write_record(u->out) < 0)
			die("%s", u->out->err.msg);
		u->written++;
	}
	progress_show(&u->pg, u->written, "records");
}

/* Stream epochs of a source held in memory or in files. */
static void
run_source(struct run *u, const struct source *s, const int64_t *keep, int64_t nkept)
{
	const struct opts *o = u->p->o;
	int64_t *order = malloc(sizeof *order * (size_t)(nkept ? nkept : 1));
	int64_t *idx = u->idx;
	char *bad = calloc((size_t)s->n, 1);
	if (!order || !bad)
		die("out of memory");
	for (int e = 0; e < o->epochs; e++) {
		memcpy(order, keep, sizeof *order * (size_t)nkept);
		if (o->shuffle) {
			struct rng r;
			rng_seed(&r, o->seed, SHUFFLE_STREAM + (uint64_t)e);
			rng_shuffle(&r, order, nkept);
		}
		int64_t pos = o->shard_i;
		while (pos < nkept) {
			int n = 0;
			for (; n < u->batch && pos < nkept; pos += o->shard_n)
				if (!bad[order[pos]])
					idx[n++] = order[pos];
			#pragma omp parallel for schedule(dynamic)
			for (int k = 0; k < n; k++) {
				struct scratch *w = &u->w[omp_get_thread_num()];
				struct rng r;
				struct err *err = &u->err[k];
				err->msg[0] = 0;
				rng_seed(&r, o->seed, (uint64_t)e * (uint64_t)s->n + (uint64_t)idx[k]);
				u->label[k] = s->label[idx[k]];
				struct err why;
				if (source_get(s, idx[k], &w->a, u->src ? u->src[k] : NULL, err) == 0 &&
				    transform(u->p, w, &r, u->buf + (size_t)k * u->p->recbytes, &why) < 0) {
					if (s->kind == SOURCE_FILES)
						err_set(err, "%.300s: %.200s", s->path[idx[k]], why.msg);
					else
						err_set(err, "record %lld: %.400s", (long long)idx[k], why.msg);
				}
			}
			flush_batch(u, n, idx, bad);
		}
	}
	free(order);
	free(bad);
}

/* Stream clips of raw frames from stdin, in order.  Whole frames short of
 * a clip at the end make one more clip with --tail pad (the last frame
 * repeated); otherwise they, and any stray bytes short of a frame, are
 * left in u->tail_* for report_tail, once every complete clip is out. */
static void
run_raw(struct run *u)
{
	const struct plan *p = u->p;
	const struct opts *o = p->o;
	size_t frame = (size_t)o->raw_h * o->raw_w * o->raw_c, clip = (size_t)p->t * frame;
	uint8_t *in = malloc(clip * (size_t)u->batch);
	int64_t clipno = 0, *idx = u->idx, nlast = p->t;	/* real frames of the last clip */
	int eof = 0;
	if (!in)
		die("out of memory for %d raw clips", u->batch);
	while (!eof) {
		int n = 0;
		while (n < u->batch && !eof) {
			uint8_t *c = in + (size_t)n * clip;
			size_t got = fread(c, 1, clip, stdin);
			if (got < clip) {
				if (ferror(stdin))
					die_errno("stdin");
				eof = 1;
				u->tail_frames = (int64_t)(got / frame);
				u->tail_bytes = (int64_t)(got % frame);
				if (o->tail != TAIL_PAD || u->tail_frames == 0)
					break;
				for (int64_t f = u->tail_frames; f < p->t; f++)
					memcpy(c + f * frame, c + (u->tail_frames - 1) * frame, frame);
				nlast = u->tail_frames;
				u->tail_frames = 0;
			}
			if (clipno % o->shard_n == o->shard_i)
				idx[n++] = clipno;
			clipno++;
		}
		#pragma omp parallel for schedule(dynamic)
		for (int k = 0; k < n; k++) {
			struct scratch *w = &u->w[omp_get_thread_num()];
			struct rng r;
			u->err[k].msg[0] = 0;
			u->label[k] = o->label;
			if (u->src) {
				char range[64];
				int64_t a = idx[k] * p->t;
				snprintf(range, sizeof range, ":frames %lld-%lld", (long long)a,
				    (long long)(a + (idx[k] == clipno - 1 && eof ? nlast : p->t) - 1));
				source_name(u->src[k], "stdin", range);
			}
			rng_seed(&r, o->seed, (uint64_t)idx[k]);
			if (image_alloc(&w->a, p->t, o->raw_h, o->raw_w, o->raw_c) < 0)
				err_set(&u->err[k], "out of memory");
			else {
				memcpy(w->a.px, in + (size_t)k * clip, clip);
				transform(p, w, &r, u->buf + (size_t)k * p->recbytes, &u->err[k]);
			}
		}
		flush_batch(u, n, NULL, NULL);
	}
	free(in);
}

/* Say what was left after the last clip of --raw input: dropped with a
 * warning, or (--tail error) an error, the complete records being out. */
static void
report_tail(const struct run *u)
{
	const struct opts *o = u->p->o;
	char what[256], fr[96] = "", by[128] = "";
	if (!u->tail_frames && !u->tail_bytes)
		return;
	if (u->tail_frames)
		snprintf(fr, sizeof fr, "%lld whole frame%s (fewer than a clip of %d)",
		    (long long)u->tail_frames, u->tail_frames == 1 ? "" : "s", u->p->t);
	if (u->tail_bytes)
		snprintf(by, sizeof by, "%lld stray byte%s (fewer than a %dx%dx%d frame of "
		    "%d bytes)", (long long)u->tail_bytes, u->tail_bytes == 1 ? "" : "s",
		    o->raw_h, o->raw_w, o->raw_c, o->raw_h * o->raw_w * o->raw_c);
	snprintf(what, sizeof what, "%s%s%s", fr, *fr && *by ? " and " : "", by);
	if (o->tail == TAIL_ERROR)
		die("stdin: the input ends in %s (%lld records written)", what,
		    (long long)u->written);
	cli_warn("stdin: dropped the input's last %s", what);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct source s = { 0 };
	struct plan *p = malloc(sizeof *p);
	struct vt out;
	int64_t nkept = 0, *keep = NULL, epoch_records = -1;
	const char *name = "stdin";

	cli_init(argc, argv);
	parse_opts(argc, argv, &o);
	int threads = cli_threads(o.threads);
	if (!p)
		die("out of memory");
	if (!o.raw_w) {
		char **in = o.idx ? (char **)&o.idx : argv + optind;
		name = in[0];
		load_source(&s, &o, o.idx ? 1 : argc - optind, in);
		if (s.n == 0)
			die("%s: no records", in[0]);
	} else {
		s.temporal = o.frames > 0;
		snprintf(s.what, sizeof s.what, "raw");
	}
	make_plan(p, &o, &s, name);
	if (!o.raw_w) {
		keep = keep_subset(&s, &o, &nkept);
		/* Known unless bad files may yet be skipped. */
		if (!(o.skip_bad && s.kind == SOURCE_FILES))
			epoch_records = nkept > o.shard_i ? (nkept - o.shard_i + o.shard_n - 1) / o.shard_n : 0;
	}
	cli_binary_stdout(0);
	write_header(&out, p, &s, epoch_records, argc, argv);

	struct run u = { .p = p, .out = &out };
	u.w = calloc((size_t)threads, sizeof *u.w);
	size_t in = o.raw_w ? (size_t)p->t * o.raw_h * o.raw_w * o.raw_c : 0;
	size_t src = o.no_source ? 0 : SOURCE_NAMELEN;
	int64_t b = BATCH_BYTES / (int64_t)(p->recbytes + in + sizeof(struct err) + src);
	u.batch = (int)(b < BATCH_MIN ? BATCH_MIN : b > BATCH_MAX ? BATCH_MAX : b);
	u.buf = aligned_alloc(64, ((size_t)u.batch * p->recbytes + 63) / 64 * 64);
	u.label = malloc(sizeof *u.label * (size_t)u.batch);
	u.idx = malloc(sizeof *u.idx * (size_t)u.batch);
	u.err = malloc(sizeof *u.err * (size_t)u.batch);
	u.src = src ? malloc(src * (size_t)u.batch) : NULL;
	if (!u.w || !u.buf || !u.label || !u.idx || !u.err || (src && !u.src))
		die("out of memory for a batch of %d records of %zu bytes", u.batch, p->recbytes);
	progress_start(&u.pg, epoch_records >= 0 ? epoch_records * o.epochs : 0);
	double t0 = now_seconds();
	if (o.raw_w)
		run_raw(&u);
	else
		run_source(&u, &s, keep, nkept);
	double dt = now_seconds() - t0;
	progress_end(&u.pg);
	cli_close_out(stdout, "stdout");
	report_tail(&u);
	if (u.skipped)
		cli_warn("skipped %lld bad records", (long long)u.skipped);
	if (o.stats)
		fprintf(stderr, "%s: %lld records in %.3f s: %.0f records/s (%d threads)\n",
		    progname, (long long)u.written, dt, dt > 0 ? u.written / dt : 0.0, threads);
	for (int i = 0; i < threads; i++) {
		image_free(&u.w[i].a);
		image_free(&u.w[i].b);
		image_free(&u.w[i].tmp);
	}
	free(u.w);
	free(u.buf);
	free(u.label);
	free(u.idx);
	free(u.err);
	free(u.src);
	free(keep);
	free(p);
	source_free(&s);
	vt_free(&out);
	return 0;
}
