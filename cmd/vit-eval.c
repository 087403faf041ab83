/*
 * vit-eval - score a trained model on a stream: top-1 and top-5 accuracy
 * and mean loss with bootstrap confidence intervals, per-class accuracy,
 * or one prediction per record.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "checkpoint.h"
#include "cli.h"
#include "evaluate.h"
#include "vit.h"
#include "vt.h"

struct opts {
	int	 batch;
	int	 threads;
	int	 json;
	int	 per_class;
	int	 predict;
	int	 resamples;
	uint64_t seed;
	const char *model;
	const char *input;
};

/* What the --predict hook needs. */
struct printer {
	const struct opts *o;
	char	**names;	/* [classes], NULL entries when unknown */
};

static void
usage(void)
{
	printf("usage: %s [options] MODEL [STREAM]\n"
	    "Evaluate MODEL (a vit-train checkpoint) on a stream of patch, pos and\n"
	    "label records: top-1 and top-5 accuracy and mean loss with 95%% bootstrap\n"
	    "confidence intervals.\n"
	    "  -b, --batch N       records per forward pass (64)\n"
	    "      --per-class     also the accuracy of every class\n"
	    "      --predict       one line per record: predicted class and probability\n"
	    "      --json          JSON output\n"
	    "      --resamples N   bootstrap resamples (1000; 0: no intervals)\n"
	    "      --seed N        bootstrap seed (1)\n"
	    "      --threads N     threads (0: all cores)\n"
	    "  -h, --help          this help\n"
	    "  -V, --version       version\n", progname);
	exit(0);
}

static void
parse(int argc, char *argv[], struct opts *o)
{
	enum { PER_CLASS = 256, PREDICT, JSON, RESAMPLES, SEED, THREADS };
	static const struct option lo[] = {
		{ "batch", required_argument, NULL, 'b' },
		{ "per-class", no_argument, NULL, PER_CLASS },
		{ "predict", no_argument, NULL, PREDICT },
		{ "json", no_argument, NULL, JSON },
		{ "resamples", required_argument, NULL, RESAMPLES },
		{ "seed", required_argument, NULL, SEED },
		{ "threads", required_argument, NULL, THREADS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct opts){ .batch = 64, .resamples = 1000, .seed = 1 };
	while ((c = getopt_long(argc, argv, "b:hV", lo, NULL)) != -1)
		switch (c) {
		case 'b': o->batch = (int)cli_int("--batch", optarg, 1, 1 << 16); break;
		case PER_CLASS: o->per_class = 1; break;
		case PREDICT: o->predict = 1; break;
		case JSON: o->json = 1; break;
		case RESAMPLES: o->resamples = (int)cli_int("--resamples", optarg, 0, 1000000); break;
		case SEED: o->seed = (uint64_t)cli_int("--seed", optarg, 0, INT64_MAX); break;
		case THREADS: o->threads = (int)cli_int("--threads", optarg, 0, 1024); break;
		case 'h': usage(); break;
		case 'V': cli_version(); break;
		default: usage_error("unknown option");
		}
	if (optind >= argc)
		usage_error("no MODEL");
	if (argc - optind > 2)
		usage_error("too many operands");
	o->model = argv[optind];
	o->input = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (o->predict && o->per_class)
		usage_error("--predict and --per-class do not go together");
}

/* Class names from the "CLASS i name" lines of s into names[classes]
 * (entries already set are kept). */
static void
class_names(const struct vt *s, char **names, int classes)
{
	for (int i = 0; i < s->nmeta; i++) {
		int c, at;
		if (strcmp(s->meta[i].key, "CLASS") != 0 ||
		    sscanf(s->meta[i].val, "%d %n", &c, &at) != 1 ||
		    c < 0 || c >= classes || names[c] != NULL)
			continue;
		if ((names[c] = strdup(s->meta[i].val + at)) == NULL)
			die("out of memory");
	}
}

/* s as a JSON string. */
static void
json_string(const char *s)
{
	putchar('"');
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	putchar('"');
}

/* --predict: print records first .. first+n-1 as they come. */
static void
print_predictions(void *ctx, const struct eval_out *out, int64_t first, int n)
{
	struct printer *p = ctx;

	for (int64_t i = first; i < first + n; i++) {
		const char *name = p->names[out->pred[i]];
		if (p->o->json) {
			printf("{\"record\":%lld,\"class\":%d,\"name\":", (long long)i,
			    out->pred[i]);
			if (name)
				json_string(name);
			else
				printf("null");
			printf(",\"prob\":%.6f}\n", out->prob[i]);
		} else if (name)
			printf("%s %.6f\n", name, out->prob[i]);
		else
			printf("%d %.6f\n", out->pred[i], out->prob[i]);
	}
	cli_close_out(stdout, "stdout");
}

/* The figures printed, in order. */
#define NSTAT 3
static const char *const stat_name[NSTAT] = { "top1", "top5", "loss" };

static const struct eval_stat *
stat(const struct eval_summary *s, int i)
{
	return i == 0 ? &s->top1 : i == 1 ? &s->top5 : &s->loss;
}

static void
print_text(const struct eval_summary *s, const struct eval_out *out,
    char **names, const struct opts *o)
{
	printf("records %lld\n", (long long)s->n);
	for (int i = 0; i < NSTAT; i++) {
		const struct eval_stat *st = stat(s, i);
		if (o->resamples > 0)
			printf("%s %.4f 95%% CI %.4f %.4f\n", stat_name[i], st->mean,
			    st->lo, st->hi);
		else
			printf("%s %.4f\n", stat_name[i], st->mean);
	}
	for (int c = 0; o->per_class && c < out->classes; c++) {
		int64_t n, hit;
		eval_class(out, c, &n, &hit);
		printf("class %d %s %.4f %lld/%lld\n", c, names[c] ? names[c] : "-",
		    n ? (double)hit / n : 0.0, (long long)hit, (long long)n);
	}
}

static void
print_json(const struct eval_summary *s, const struct eval_out *out,
    char **names, const struct opts *o)
{
	printf("{\"records\":%lld", (long long)s->n);
	for (int i = 0; i < NSTAT; i++) {
		const struct eval_stat *st = stat(s, i);
		printf(",\"%s\":%.6f", stat_name[i], st->mean);
		if (o->resamples > 0)
			printf(",\"%s_ci\":[%.6f,%.6f]", stat_name[i], st->lo, st->hi);
	}
	if (o->per_class) {
		printf(",\"per_class\":[");
		for (int c = 0; c < out->classes; c++) {
			int64_t n, hit;
			eval_class(out, c, &n, &hit);
			printf("%s{\"class\":%d,\"name\":", c ? "," : "", c);
			if (names[c])
				json_string(names[c]);
			else
				printf("null");
			printf(",\"records\":%lld,\"top1\":%.6f}", (long long)n,
			    n ? (double)hit / n : 0.0);
		}
		printf("]");
	}
	printf("}\n");
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct vt ms, s;
	struct vit *m;
	struct batch_reader br;
	struct eval_out out = { 0 };
	struct eval_summary sum;
	char err[512];
	const char *name;

	cli_init(argc, argv);
	parse(argc, argv, &o);
	cli_threads(o.threads);

	if ((m = ckpt_load(o.model, &ms, o.batch, 0, 0, err, sizeof err)) == NULL)
		die("%s", err);
	vt_init(&s);
	FILE *fp = cli_open_in(o.input, &name);
	if (vt_read_header(&s, fp, name) < 0)
		die("%s", s.err);
	if (!o.predict && vt_find(&s, "label") < 0)
		die("%s: no field 'label' to score (--predict needs none)", name);
	if (batch_open(&br, &s, m->c.P, m->c.axes, m->c.classes, 0) < 0)
		die("%s", s.err);
	const char *keys[] = { "MEAN", "STD" };
	for (int i = 0; i < 2; i++) {
		const char *a = vt_meta(&ms, keys[i]), *b = vt_meta(&s, keys[i]);
		if ((a || b) && (!a || !b || strcmp(a, b) != 0))
			warnx("%s: %s %s differs from the training stream's %s", name,
			    keys[i], b ? b : "(none)", a ? a : "(none)");
	}

	char **names = calloc((size_t)m->c.classes, sizeof *names);
	if (names == NULL)
		die("out of memory");
	class_names(&s, names, m->c.classes);
	class_names(&ms, names, m->c.classes);
	struct printer pr = { &o, names };
	struct eval_hooks hooks = { NULL, print_predictions, &pr };
	if (evaluate(&m, &br, o.batch, o.predict ? &hooks : NULL, &out, err,
	    sizeof err) < 0)
		die("%s", err);
	if (!o.predict) {
		if (eval_summarize(&out, o.resamples, 0.95, o.seed, &sum) < 0)
			die("%s: no labelled records", name);
		(o.json ? print_json : print_text)(&sum, &out, names, &o);
	}
	cli_close_out(stdout, "stdout");
	for (int c = 0; c < m->c.classes; c++)
		free(names[c]);
	free(names);
	eval_free(&out);
	vit_destroy(m);
	vt_free(&s);
	vt_free(&ms);
	if (fp != stdin)
		fclose(fp);
	return 0;
}
