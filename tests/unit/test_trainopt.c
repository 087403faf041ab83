/*
 * test_trainopt.c - a vit-train run's keys: what train_keys_write writes,
 * train_keys_read reads back the same; every key is read by its option's
 * rule (issue 39: TRAIN_ACCUM 0, STEP -100 and TRAIN_MIXUP nan resumed);
 * an option refuses a checkpoint's own defaults (--epochs 0), a key takes
 * them.
 */
#include <math.h>
#include <string.h>

#include "test.h"
#include "trainopt.h"

/* A checkpoint's keys: k's options and state, and TRAIN_THREADS. */
static void
keys_of(struct vt *s, const struct train_keys *k)
{
	vt_init(s);
	if (train_keys_write(s, k, TRAIN_OPTS) < 0 || train_keys_write(s, k, TRAIN_STATE) < 0 ||
	    vt_meta_set(s, "TRAIN_THREADS", "2") < 0)
		printf("not ok - writing keys: %s\n", s->err.msg);
}

/* What reading s with key set to val says: "" when read. */
static const char *
read_with(struct vt *s, const char *key, const char *val, struct train_keys *k)
{
	static struct err e;

	train_defaults(k);
	e.msg[0] = '\0';
	if (vt_meta_set(s, key, val) < 0 || train_keys_read(s, "m.vt", k, &e) == 0)
		e.msg[0] = '\0';
	return e.msg;
}

int
main(void)
{
	struct train_keys k, back;
	struct vt s;
	struct err e;

	train_defaults(&k);
	k.o.wd = 0.1 + 0.2;	/* 0.30000000000000004: 17 digits */
	k.o.epochs = 0;
	k.o.shuffle = -1;
	k.st.step = 7;
	k.st.total = 12;
	keys_of(&s, &k);
	train_defaults(&back);
	CHECK(train_keys_read(&s, "m.vt", &back, &e) == 0 &&
	    memcmp(&back.o, &k.o, sizeof k.o) == 0 && memcmp(&back.st, &k.st, sizeof k.st) == 0 &&
	    back.past.threads == 2, "written keys read back the same (%s)", e.msg);
	CHECK(strcmp(vt_meta(&s, "TRAIN_LR"), "0.001") == 0 && strcmp(vt_meta(&s, "TRAIN_EPS"),
	    "1e-08") == 0, "in the fewest digits: TRAIN_LR %s, TRAIN_EPS %s",
	    vt_meta(&s, "TRAIN_LR"), vt_meta(&s, "TRAIN_EPS"));

	static const struct { const char *key, *val, *want; } bad[] = {
		{ "TRAIN_ACCUM", "0", "m.vt: TRAIN_ACCUM 0: not a whole number in [1, 1048576], as --accum takes" },
		{ "TRAIN_ACCUM", "1099511627776", "TRAIN_ACCUM 1099511627776: not a whole" },
		{ "TRAIN_EPS", "-1", "TRAIN_EPS -1: not a number in [1e-30, 1], as --eps takes" },
		{ "TRAIN_BETA1", "5", "as --beta1 takes" },
		{ "TRAIN_CLIP", "-1", "as --clip takes" },
		{ "TRAIN_MIXUP", "nan", "TRAIN_MIXUP nan: not a number" },
		{ "TRAIN_LR", "1e300", "as --lr takes" },
		{ "PASS_RECORDS", "-5", "PASS_RECORDS -5: not a whole number in [0, " },
		{ "STEP", "-100", "STEP -100: not a whole number in [0, " },
		{ "STEP", "9223372036854775808", "STEP 9223372036854775808: not a whole" },
		{ "TRAIN_BATCH", "2147483649", "TRAIN_BATCH 2147483649: not a whole number in [1, 65536]" },
		{ "TRAIN_BATCH", "0", "as --batch takes" },
		{ "TRAIN_BATCH", "12x", "TRAIN_BATCH 12x: not a whole" },
		{ "TRAIN_PRECISION", "junk", "TRAIN_PRECISION junk: not fp32 or bf16, as --precision takes" },
		{ "DONE", "2", "DONE 2: not a whole number in [0, 1]" },
		{ "TRAIN_LOSS", "inf", "TRAIN_LOSS inf: not a number" },
		{ "TRAIN_THREADS", "4294967297", "as --threads takes" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		vt_free(&s);
		keys_of(&s, &k);
		const char *got = read_with(&s, bad[i].key, bad[i].val, &back);
		CHECK(strstr(got, bad[i].want) != NULL, "%s %s refused: '%s'", bad[i].key,
		    bad[i].val, got);
	}
	vt_free(&s);
	keys_of(&s, &k);
	CHECK(*read_with(&s, "TRAIN_SHUFFLE", "0", &back) == '\0' && back.o.shuffle == 0 &&
	    *read_with(&s, "TRAIN_STEPS", "0", &back) == '\0' && back.o.steps == 0,
	    "a checkpoint's TRAIN_SHUFFLE 0 and TRAIN_STEPS 0 (the options' defaults) are read");
	vt_meta_set(&s, "TRAIN_STEPS", NULL);
	CHECK(strstr(read_with(&s, "STEP", "1", &back), "m.vt: no TRAIN_STEPS key") != NULL,
	    "a missing key is named");

	const struct train_key *ke = train_key_of("epochs");
	train_defaults(&back);
	CHECK(ke != NULL && train_key_parse(ke, "0", 1, &back, &e) < 0 &&
	    strcmp(e.msg, "not a whole number in [1, 4611686018427387903]") == 0 &&
	    train_key_parse(ke, "3", 1, &back, &e) == 0 && back.o.epochs == 3,
	    "--epochs 0 is refused, --epochs 3 taken");
	CHECK(train_key_of("threads") == NULL && train_key_of("nothing") == NULL,
	    "train_key_of knows the options a checkpoint keeps, alone");
	vt_free(&s);
	return test_done();
}
