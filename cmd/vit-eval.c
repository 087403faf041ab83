/*
 * vit-eval - score a trained model on a stream: top-1 and top-5 accuracy
 * and mean loss with bootstrap confidence intervals, per-class accuracy,
 * the confusion matrix, or one prediction per record.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "evalin.h"
#include "evaluate.h"
#include "json.h"
#include "text.h"

struct opts {
	int	 batch;
	int	 threads;
	enum gemm_prec prec;
	int	 json;
	int	 per_class;
	int	 confusion;
	int	 predict;
	int	 logits;		/* --predict: each record's logits too */
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

enum { OPT_PER_CLASS = CLI_OPT_LONG, OPT_CONFUSION, OPT_PREDICT, OPT_LOGITS,
	OPT_JSON, OPT_RESAMPLES, OPT_SEED, OPT_THREADS, OPT_PRECISION };

static const struct cli_opt options[] = {
	{ "batch", 'b', "N", "records per forward pass (64)" },
	{ "per-class", OPT_PER_CLASS, NULL, "also the accuracy of every class" },
	{ "confusion", OPT_CONFUSION, NULL,
	    "also the confusion matrix (rows true, columns predicted)" },
	{ "predict", OPT_PREDICT, NULL, "one line per record: predicted class,\n"
	    "probability, true class, right or wrong, and\nsource (when the stream has one)" },
	{ "logits", OPT_LOGITS, NULL,
	    "with --predict: the record's logits, before the source" },
	{ "json", OPT_JSON, NULL, "JSON output" },
	{ "resamples", OPT_RESAMPLES, "N", "bootstrap resamples (1000; 0: no intervals)" },
	{ "seed", OPT_SEED, "N", "bootstrap seed (1)" },
	{ "threads", OPT_THREADS, "N", "threads (0: all cores)" },
	{ "precision", OPT_PRECISION, "fp32|bf16",
	    "the products' precision (fp32; bf16: bf16 operands, fp32 sums)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] MODEL [STREAM]",
	"Evaluate MODEL (a vit-train checkpoint) on a stream of patch, pos and\n"
	"label records: top-1 and top-5 accuracy (top-5 with over 5 classes) and mean\n"
	"loss with 95% bootstrap confidence intervals.",
	options, NULL
};

static void
parse(int argc, char *argv[], struct opts *o)
{
	int c;

	*o = (struct opts){ .batch = 64, .resamples = 1000, .seed = 1 };
	while ((c = cli_getopt(argc, argv, &command)) != -1)
		switch (c) {
		case 'b': o->batch = (int)cli_int("--batch", optarg, 1, 1 << 16); break;
		case OPT_PER_CLASS: o->per_class = 1; break;
		case OPT_CONFUSION: o->confusion = 1; break;
		case OPT_PREDICT: o->predict = 1; break;
		case OPT_LOGITS: o->logits = 1; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_RESAMPLES: o->resamples = (int)cli_int("--resamples", optarg, 0, 1000000); break;
		case OPT_SEED: o->seed = cli_opt_seed(optarg); break;
		case OPT_THREADS: o->threads = cli_opt_threads(optarg); break;
		case OPT_PRECISION: o->prec = cli_opt_precision(optarg); break;
		}
	if (optind >= argc)
		usage_error("no MODEL");
	if (argc - optind > 2)
		usage_error("too many operands");
	o->model = argv[optind];
	o->input = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (o->predict && (o->per_class || o->confusion))
		usage_error("--predict does not go with --per-class or --confusion");
	if (o->logits && !o->predict)
		usage_error("--logits is for --predict");
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

/* The model's class names, the stream's where the model has none.  A
 * stream whose class c has another name than the model's class c was
 * labelled in another order (or for another task): scoring it would
 * report the wrong classes, so it is refused. */
static char **
model_class_names(const struct vt *ms, const struct vt *s, int classes, const char *model,
    const char *stream)
{
	char **names = calloc((size_t)classes, sizeof *names);
	char **theirs = calloc((size_t)classes, sizeof *theirs);

	if (names == NULL || theirs == NULL)
		die("out of memory");
	class_names(ms, names, classes);
	class_names(s, theirs, classes);
	for (int c = 0; c < classes; c++) {
		if (names[c] && theirs[c] && strcmp(names[c], theirs[c]) != 0)
			die("%s: class %d is '%.100s', but %s's class %d is '%.100s': the stream's "
			    "labels mean other classes (patchify --classes with the model's names, "
			    "as vtool info %s lists them, labels by name)", stream, c, theirs[c],
			    model, c, names[c], model);
		if (names[c] == NULL)
			names[c] = theirs[c];
		else
			free(theirs[c]);
	}
	free(theirs);
	return names;
}

/* name as a JSON string, or null. */
static void
json_name(const char *name)
{
	if (name)
		json_put_string(stdout, name);
	else
		printf("null");
}

/* Class c's name, or its index in buf. */
static const char *
label_of(char **names, int c, char *buf, size_t len)
{
	if (names[c])
		return names[c];
	snprintf(buf, len, "%d", c);
	return buf;
}

/* --predict: print b's records, first .. first+b->n-1 of out, as they
 * come; the record's source ends the line. */
static void
print_predictions(void *ctx, const struct eval_out *out, int64_t first,
    const struct batch *b)
{
	struct printer *p = ctx;

	for (int k = 0; k < b->n; k++) {
		int64_t i = first + k;
		const char *name = p->names[out->pred[i]], *src = batch_source(b, k);
		const float *z = out->logits + (int64_t)k * out->classes;
		int label = b->label[k];
		if (p->o->json) {
			printf("{\"record\":%lld,\"class\":%d,\"name\":", (long long)i,
			    out->pred[i]);
			json_name(name);
			printf(",\"prob\":%.6f", out->prob[i]);
			if (label >= 0) {
				printf(",\"label\":%d,\"label_name\":", label);
				json_name(p->names[label]);
				printf(",\"correct\":%s", label == out->pred[i] ? "true" : "false");
			}
			for (int c = 0; p->o->logits && c < out->classes; c++)
				printf("%s%.9g%s", c ? "," : ",\"logits\":[", z[c],
				    c == out->classes - 1 ? "]" : "");
			if (src) {
				printf(",\"source\":");
				json_put_string(stdout, src);
			}
			printf("}\n");
			continue;
		}
		/* names and sources are the data set's text: escaped (text.h) */
		char buf[32];
		const char *t = label_of(p->names, out->pred[i], buf, sizeof buf);
		text_put(stdout, t, strlen(t));
		printf(" %.6f", out->prob[i]);
		/* the true class and whether the prediction is it */
		if (label >= 0) {
			t = label_of(p->names, label, buf, sizeof buf);
			putchar(' ');
			text_put(stdout, t, strlen(t));
			printf(" %s", label == out->pred[i] ? "right" : "wrong");
		}
		for (int c = 0; p->o->logits && c < out->classes; c++)
			printf(" %.9g", z[c]);
		if (src) {
			putchar(' ');
			text_put(stdout, src, strlen(src));
		}
		putchar('\n');
	}
	cli_close_out(stdout, "stdout");
}

/* The figures printed, in order; top5 only with more than 5 classes (it is
 * 1 with fewer). */
#define NSTAT 3
static const char *const stat_name[NSTAT] = { "top1", "top5", "loss" };

static const struct eval_stat *
stat(const struct eval_summary *s, int i)
{
	return i == 0 ? &s->top1 : i == 1 ? &s->top5 : &s->loss;
}

static int
shown(const struct eval_out *out, int i)
{
	return i != 1 || out->classes > 5;
}

/* The confusion matrix as aligned text: a row per true class, a column per
 * predicted class, each headed by the class's name (or index). */
static void
print_confusion(const int64_t *cm, int C, char **names)
{
	char buf[32];
	int w = 1, lw = 0;	/* column width, row label width */

	for (int c = 0; c < C; c++) {
		int n = (int)strlen(label_of(names, c, buf, sizeof buf));
		w = n > w ? n : w;
		lw = n > lw ? n : lw;
		for (int p = 0; p < C; p++) {
			n = snprintf(buf, sizeof buf, "%lld", (long long)cm[(int64_t)c * C + p]);
			w = n > w ? n : w;
		}
	}
	printf("confusion (rows: true class, columns: predicted)\n%*s", lw, "");
	for (int p = 0; p < C; p++)
		printf(" %*s", w, label_of(names, p, buf, sizeof buf));
	putchar('\n');
	for (int c = 0; c < C; c++) {
		printf("%-*s", lw, label_of(names, c, buf, sizeof buf));
		for (int p = 0; p < C; p++)
			printf(" %*lld", w, (long long)cm[(int64_t)c * C + p]);
		putchar('\n');
	}
}

static void
print_text(const struct eval_summary *s, const struct eval_out *out,
    const int64_t *cm, char **names, const struct opts *o)
{
	printf("records %lld\n", (long long)s->n);
	for (int i = 0; i < NSTAT; i++) {
		const struct eval_stat *st = stat(s, i);
		if (!shown(out, i))
			continue;
		if (o->resamples > 0)
			printf("%s %.4f 95%% CI %.4f %.4f\n", stat_name[i], st->mean,
			    st->lo, st->hi);
		else
			printf("%s %.4f\n", stat_name[i], st->mean);
	}
	for (int c = 0; o->per_class && c < out->classes; c++) {
		int64_t n, hit;
		eval_class(out, c, &n, &hit);
		const char *t = names[c] ? names[c] : "-";
		printf("class %d ", c);
		text_put(stdout, t, strlen(t));
		printf(" %.4f %lld/%lld\n", n ? (double)hit / n : 0.0, (long long)hit, (long long)n);
	}
	if (cm)
		print_confusion(cm, out->classes, names);
}

static void
print_json(const struct eval_summary *s, const struct eval_out *out,
    const int64_t *cm, char **names, const struct opts *o)
{
	printf("{\"records\":%lld", (long long)s->n);
	for (int i = 0; i < NSTAT; i++) {
		const struct eval_stat *st = stat(s, i);
		if (!shown(out, i))
			continue;
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
			json_name(names[c]);
			printf(",\"records\":%lld,\"top1\":%.6f}", (long long)n,
			    n ? (double)hit / n : 0.0);
		}
		printf("]");
	}
	if (cm) {
		printf(",\"class_names\":[");
		for (int c = 0; c < out->classes; c++) {
			if (c)
				putchar(',');
			json_name(names[c]);
		}
		printf("],\"confusion\":[");
		for (int c = 0; c < out->classes; c++)
			for (int p = 0; p < out->classes; p++)
				printf("%s%lld%s", p ? "," : c ? ",[" : "[",
				    (long long)cm[(int64_t)c * out->classes + p],
				    p == out->classes - 1 ? "]" : "");
		printf("]");
	}
	printf("}\n");
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct eval_input in;
	struct eval_out out = { 0 };
	struct eval_summary sum;
	struct err e;

	cli_init(argc, argv);
	parse(argc, argv, &o);
	cli_threads(o.threads);

	eval_input_open(&in, o.model, o.input, o.batch);
	in.m->prec = o.prec;
	if (!o.predict && vt_find(&in.s, "label") < 0)
		die("%s: no field 'label' to score (--predict needs none)", in.name);
	int classes = in.m->c.classes;
	char **names = model_class_names(&in.ck, &in.s, classes, o.model, in.name);
	struct printer pr = { &o, names };
	struct eval_hooks hooks = { NULL, print_predictions, &pr };
	if (evaluate(&in.m, &in.br, o.batch, o.predict ? &hooks : NULL, &out, &e) < 0)
		die("%s", e.msg);
	if (!o.predict) {
		if (eval_summarize(&out, o.resamples, 0.95, o.seed, &sum) < 0)
			die("%s: no labelled records", in.name);
		int64_t *cm = NULL;
		if (o.confusion && (cm = eval_confusion(&out)) == NULL)
			die("out of memory");
		(o.json ? print_json : print_text)(&sum, &out, cm, names, &o);
		free(cm);
	}
	cli_close_out(stdout, "stdout");
	for (int c = 0; c < classes; c++)
		free(names[c]);
	free(names);
	eval_free(&out);
	eval_input_close(&in);
	return 0;
}
