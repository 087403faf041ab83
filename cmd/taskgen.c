/*
 * taskgen - position-sensitive tasks for comparing position encodings,
 * made from Fashion-MNIST items (relation, motion) or drawn (pathfinder),
 * as a .npy array of images or clips and one of labels, for patchify's
 * npy source; see taskgen(1) and lib/data/task.h.
 *
 * Records are made in chunks, in parallel; record i draws from its own
 * generator rng_seed(seed, i), so the bytes do not depend on the thread
 * count.
 */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "cli.h"
#include "cliopt.h"
#include "npy.h"
#include "source.h"
#include "task.h"
#include "vt.h"

#define CHUNK_BYTES	(16 << 20)	/* images made between two writes */

static const char *const kinds[] = { "relation", "pathfinder", "motion" };

enum { O_LABELS = CLI_OPT_LONG, O_LAYOUT, O_IDX, O_ITEM_LABELS, O_CANVAS, O_ITEM,
	O_MARGIN, O_FRAMES, O_HOLD, O_PATHS, O_DASHES, O_DASH, O_GAP, O_TURN, O_CELL, O_THREADS };

static const struct cli_opt options[] = {
	CLI_OPT_SECTION("Output:"),
	{ "output", 'o', "FILE", "the images (.npy) into FILE, atomically (default stdout)" },
	{ "labels", O_LABELS, "FILE", "the labels (.npy, i32) into FILE (required)" },
	{ "layout", O_LAYOUT, "FILE", "each record's objects as text lines into FILE" },
	{ "count", 'n', "N", "records (default 60000)" },
	{ "seed", 's', "N", "seed (default 1)" },
	{ "threads", O_THREADS, "N", "threads (default: all cores)" },
	CLI_OPT_SECTION("Items (relation, motion):"),
	{ "idx", O_IDX, "FILE", "IDX images the items are taken from (required)" },
	{ "item-labels", O_ITEM_LABELS, "FILE", "their labels (default: the labels-idx1 file beside)" },
	{ "item", O_ITEM, "N", "an item's side, pixels (default 14)" },
	{ "canvas", O_CANVAS, "N", "the canvas's side (default: relation 56, others 32)" },
	{ "margin", O_MARGIN, "N", "relation: least offset of the items on each axis (default 4)" },
	{ "frames", O_FRAMES, "T", "motion: frames per clip (default 8)" },
	{ "hold", O_HOLD, "H", "motion: the items move every H frames, H frames' worth (default 1)" },
	CLI_OPT_SECTION("Pathfinder:"),
	{ "paths", O_PATHS, "N", "paths, the two with dots included (default 3)" },
	{ "dashes", O_DASHES, "N", "dashes per path (default 5)" },
	{ "dash", O_DASH, "N", "a dash's length, pixels (default 3)" },
	{ "gap", O_GAP, "N", "the gap after a dash, pixels (default 3; 0: solid paths)" },
	{ "turn", O_TURN, "DEG", "most a path turns between dashes (default 30)" },
	{ "cell", O_CELL, "C", "dots fill the C x C cell of a C-pixel grid holding each end, 1-4 (default 0: 3 x 3 dots on the ends)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] --labels FILE relation|pathfinder|motion",
	"Make a position-sensitive task: images or clips (.npy, u8) on stdout or\n"
	"into -o FILE, their labels into --labels FILE, for patchify --labels.",
	options, NULL
};

struct opts {
	struct task	 t;
	int64_t		 count;
	uint64_t	 seed;
	int		 threads;
	const char	*out, *labels, *layout, *idx, *item_labels;
};

static void
parse(int argc, char *argv[], struct opts *o)
{
	int c, canvas = 0, frames = 0, hold = 0;

	*o = (struct opts){ .t = { .item = 14, .margin = 4, .paths = 3, .dashes = 5, .dash = 3,
	    .gap = 3, .turn = 30 * M_PI / 180 }, .count = 60000, .seed = 1 };
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case O_LABELS: o->labels = optarg; break;
		case O_LAYOUT: o->layout = optarg; break;
		case 'n': o->count = cli_int("--count", optarg, 1, SOURCE_MAXN); break;
		case 's': o->seed = cli_opt_seed(optarg); break;
		case O_THREADS: o->threads = cli_opt_threads(optarg); break;
		case O_IDX: o->idx = optarg; break;
		case O_ITEM_LABELS: o->item_labels = optarg; break;
		case O_ITEM: o->t.item = (int)cli_int("--item", optarg, 1, 4096); break;
		case O_CANVAS: canvas = (int)cli_int("--canvas", optarg, 4, 4096); break;
		case O_MARGIN: o->t.margin = (int)cli_int("--margin", optarg, 1, 4096); break;
		case O_FRAMES: frames = (int)cli_int("--frames", optarg, 2, 4096); break;
		case O_HOLD: hold = (int)cli_int("--hold", optarg, 1, 4096); break;
		case O_PATHS: o->t.paths = (int)cli_int("--paths", optarg, 2, 1000); break;
		case O_DASHES: o->t.dashes = (int)cli_int("--dashes", optarg, 1, TASK_MAXDASH); break;
		case O_DASH: o->t.dash = (int)cli_int("--dash", optarg, 1, 4096); break;
		case O_GAP: o->t.gap = (int)cli_int("--gap", optarg, 0, 4096); break;
		case O_TURN: o->t.turn = cli_num("--turn", optarg, 0, 180) * M_PI / 180; break;
		case O_CELL: o->t.cell = (int)cli_int("--cell", optarg, 0, 4); break;
		}
	}
	if (optind != argc - 1)
		usage_error(optind == argc ? "name a task: relation, pathfinder or motion" :
		    "one task, not '%s' too", argv[optind + 1]);
	int k = 0;
	while (k < 3 && strcmp(argv[optind], kinds[k]) != 0)
		k++;
	if (k == 3)
		usage_error("unknown task '%s': want relation, pathfinder or motion", argv[optind]);
	o->t.kind = k;
	if (!o->labels)
		usage_error("say where the labels go: --labels FILE");
	if (k != TASK_PATHFINDER && !o->idx)
		usage_error("%s places Fashion-MNIST items: give --idx FILE", kinds[k]);
	if (k == TASK_PATHFINDER && o->idx)
		usage_error("pathfinder draws its images: no --idx");
	if (frames && k != TASK_MOTION)
		usage_error("--frames is motion's");
	if (hold && k != TASK_MOTION)
		usage_error("--hold is motion's");
	o->t.hold = hold ? hold : 1;
	o->t.canvas = canvas ? canvas : k == TASK_RELATION ? 56 : 32;
	o->t.frames = frames ? frames : k == TASK_MOTION ? 8 : 1;
	struct err e;
	if (task_check(&o->t, &e) < 0)
		usage_error("%s", e.msg);
}

/* One chunk's layout lines, record first .. first + n - 1. */
static void
write_layout(FILE *fp, const char *name, int64_t first, int n, const int32_t *label,
    const struct task_layout *lay)
{
	for (int i = 0; i < n; i++) {
		fprintf(fp, "%lld %d", (long long)(first + i), label[i]);
		for (int k = 0; k < lay[i].n; k++)
			fprintf(fp, " %d %d %lld %lld", lay[i].obj[k].y, lay[i].obj[k].x,
			    (long long)lay[i].obj[k].a, (long long)lay[i].obj[k].b);
		fputc('\n', fp);
	}
	if (ferror(fp))
		die_errno("%s: write error", name);
}

/* Open path atomically, or die. */
static FILE *
open_out(struct atomicfile *a, const char *path)
{
	if (atomic_open(a, path) < 0)
		die_errno("%s", path);
	return a->fp;
}

static void
commit(struct atomicfile *a, const char *path)
{
	if (atomic_commit(a) < 0)
		die_errno("%s", path);
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct task_items items = { 0 };
	struct atomicfile img, lay;
	struct err e;
	FILE *out = stdout, *layfp = NULL;
	const char *outname = "stdout";

	cli_init(argc, argv);
	parse(argc, argv, &o);
	cli_threads(o.threads);
	if (o.t.kind != TASK_PATHFINDER) {
		if (task_items_load(&items, o.idx, o.item_labels, o.t.item, &e) < 0)
			die("%s", e.msg);
		o.t.items = &items;
	}
	size_t recbytes = (size_t)o.t.frames * o.t.canvas * o.t.canvas;
	int64_t chunk = CHUNK_BYTES / (int64_t)recbytes;
	chunk = chunk < 1 ? 1 : chunk > o.count ? o.count : chunk;
	uint8_t *px = malloc(recbytes * (size_t)chunk);
	int32_t *label = malloc(sizeof *label * (size_t)o.count);
	struct task_layout *where = malloc(sizeof *where * (size_t)chunk);
	int *bad = malloc(sizeof *bad * (size_t)chunk);
	if (!px || !label || !where || !bad)
		die("out of memory for %lld records of %zu bytes", (long long)chunk, recbytes);

	if (o.out)
		out = open_out(&img, outname = o.out);
	else
		cli_binary_stdout(0);
	if (o.layout)
		layfp = open_out(&lay, o.layout);
	int64_t shape[4] = { o.count, o.t.frames, o.t.canvas, o.t.canvas };
	int rank = o.t.frames > 1 ? 4 : 3;
	if (rank == 3)
		shape[1] = shape[2] = o.t.canvas;
	if (npy_write_header(out, VT_U8, rank, shape) < 0)
		die_errno("%s: write error", outname);

	struct progress pg;
	progress_start(&pg, o.count);
	for (int64_t first = 0; first < o.count; first += chunk) {
		int n = (int)(o.count - first < chunk ? o.count - first : chunk);
		#pragma omp parallel for schedule(dynamic, 16)
		for (int i = 0; i < n; i++) {
			struct err one;
			bad[i] = task_make(&o.t, o.seed, first + i, px + recbytes * (size_t)i,
			    &label[first + i], &where[i], &one) < 0;
		}
		/* The first failure again, alone, for its message. */
		for (int i = 0; i < n; i++)
			if (bad[i] && task_make(&o.t, o.seed, first + i, px, label, NULL, &e) < 0)
				die("%s", e.msg);
		if (fwrite(px, recbytes, (size_t)n, out) != (size_t)n)
			cli_close_out(out, outname);	/* dies, quietly on a closed pipe */
		if (layfp)
			write_layout(layfp, o.layout, first, n, label + first, where);
		progress_show(&pg, first + n, "records");
	}
	progress_end(&pg);
	if (o.out)
		commit(&img, o.out);
	else
		cli_close_out(stdout, "stdout");
	if (npy_save(o.labels, VT_I32, 1, (int64_t[]){ o.count }, label, &e) < 0)
		die("%s", e.msg);
	if (layfp)
		commit(&lay, o.layout);
	task_items_free(&items);
	free(px);
	free(label);
	free(where);
	free(bad);
	return 0;
}
