/*
 * rotgen - the rotations R(p) of a position encoding for every token of a
 * positions stream (field rot), or with --check the numbers that say
 * whether they are rotations and whether they encode relative positions;
 * see rotgen(1).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "pe.h"
#include "pe_conv.h"
#include "rng.h"
#include "vt.h"
#include "vtcopy.h"

struct opts {
	const char	*gen;		/* --generators FILE */
	int		 check;		/* --check */
	int64_t		 pairs;		/* --pairs: token pairs of the relative check */
};

/* What --check gathers over all records. */
struct stats {
	double	 orth;		/* max |R^T R - I| */
	double	 detlo, dethi;
	double	 rel;		/* max |R(x)^T R(y) - R(y - x)| */
	int64_t	 npairs, tokens, records;
};

enum { OPT_PAIRS = CLI_OPT_LONG };

static const struct cli_opt options[] = {
	{ "generators", 'g', "FILE", "generator file (skewgen) or checkpoint" },
	{ "check", 'c', NULL, "print max |R^T R - I|, the determinant range and\n"
	    "max |R(x)^T R(y) - R(y - x)| instead of writing R" },
	{ "pairs", OPT_PAIRS, "N", "token pairs of the relative check: all when there\n"
	    "are at most N, else N seeded at random (default 256)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"--generators FILE [--check] [--pairs N] [POSITIONS]",
	"Write R(p) = exp(sum_i p_i A_i) for every token of a positions stream\n"
	"(field pos) and every generator set (field rot), or check them.",
	options, NULL
};

/* Determinant of a b x b block by elimination with partial pivoting. */
static double
det(int b, const float *R, double *A)
{
	double d = 1;

	for (int e = 0; e < b * b; e++)
		A[e] = R[e];
	for (int c = 0; c < b; c++) {
		int p = c;
		for (int i = c + 1; i < b; i++)
			if (fabs(A[i * b + c]) > fabs(A[p * b + c]))
				p = i;
		if (A[p * b + c] == 0)
			return 0;
		if (p != c) {
			for (int j = 0; j < b; j++) {
				double t = A[c * b + j];
				A[c * b + j] = A[p * b + j];
				A[p * b + j] = t;
			}
			d = -d;
		}
		d *= A[c * b + c];
		for (int i = c + 1; i < b; i++) {
			double f = A[i * b + c] / A[c * b + c];
			for (int j = c; j < b; j++)
				A[i * b + j] -= f * A[c * b + j];
		}
	}
	return d;
}

/* max |X^T Y - Z| over the blocks of one token (Z NULL: the identity). */
static double
defect(const struct pe *pe, const float *X, const float *Y, const float *Z, double *acc)
{
	int b = pe->block;
	double e = 0;

	for (int j = 0; j < pe->nblock; j++) {
		int64_t o = (int64_t)j * b * b;
		for (int r = 0; r < b; r++) {
			for (int s = 0; s < b; s++)
				acc[s] = 0;
			for (int k = 0; k < b; k++) {
				double x = X[o + k * b + r];
				for (int s = 0; s < b; s++)
					acc[s] += x * Y[o + k * b + s];
			}
			for (int s = 0; s < b; s++)
				e = fmax(e, fabs(acc[s] - (Z ? Z[o + r * b + s] : r == s)));
		}
	}
	return e;
}

/* Orthogonality and determinants of R[nset][T]; relative defect over the
 * token pairs whose differences dpos gave Rd[nset][np]. */
static void
check(const struct pe *pe, int64_t T, const float *R, int64_t np, const int64_t *pair,
    const float *Rd, struct stats *st)
{
	int b = pe->block;
	double orth = 0, lo = INFINITY, hi = -INFINITY, rel = 0;
	int64_t items = (int64_t)pe->nset * T, pitems = (int64_t)pe->nset * np;

#pragma omp parallel reduction(max:orth, hi, rel) reduction(min:lo)
	{
		double *A = malloc(sizeof *A * (b * b + b));
		if (!A)
			die("out of memory");
#pragma omp for schedule(dynamic, 4)
		for (int64_t it = 0; it < items; it++) {
			const float *r = R + it * pe->rsize;
			orth = fmax(orth, defect(pe, r, r, NULL, A));
			double d = 1;
			for (int j = 0; j < pe->nblock; j++)
				d *= det(b, r + (int64_t)j * b * b, A);
			lo = fmin(lo, d);
			hi = fmax(hi, d);
		}
#pragma omp for schedule(dynamic, 4)
		for (int64_t it = 0; it < pitems; it++) {
			int64_t set = it / np, q = it % np;
			const float *Rs = R + set * T * pe->rsize;
			rel = fmax(rel, defect(pe, Rs + pair[2 * q] * pe->rsize,
			    Rs + pair[2 * q + 1] * pe->rsize, Rd + it * pe->rsize, A));
		}
		free(A);
	}
	st->orth = fmax(st->orth, orth);
	st->detlo = fmin(st->detlo, lo);
	st->dethi = fmax(st->dethi, hi);
	st->rel = fmax(st->rel, rel);
	st->npairs += np;
	st->tokens += T;
	st->records++;
}

/* Token pairs (x, y) of the relative check and their position differences. */
static int64_t
choose_pairs(const struct opts *o, int64_t T, int axes, const float *pos, int64_t rec,
    int64_t *pair, float *dpos)
{
	int64_t np = T * T <= o->pairs ? T * T : o->pairs;
	struct rng r;

	rng_seed(&r, 1, (uint64_t)rec);
	for (int64_t q = 0; q < np; q++) {
		int64_t x = np == T * T ? q / T : (int64_t)rng_below(&r, (uint64_t)T);
		int64_t y = np == T * T ? q % T : (int64_t)rng_below(&r, (uint64_t)T);
		pair[2 * q] = x;
		pair[2 * q + 1] = y;
		for (int a = 0; a < axes; a++)
			dpos[q * axes + a] = pos[y * axes + a] - pos[x * axes + a];
	}
	return np;
}

/* What rotgen needs besides its output: the workspace, the relative
 * check's pairs, and with a basis (pe.h) B and P to compose R from. */
struct work {
	struct pe_work	 w;
	float		*dbuf, *dpos, *B, *P;
	int64_t		*pair;
};

/* Make room for T tokens and npairs pairs in the workspace and the pair
 * buffers (all sized for the larger of the two); shape is the R written. */
static void
reserve(const struct pe *pe, const struct pe *shape, struct work *k, int64_t T,
    int64_t npairs)
{
	int64_t n = T > npairs ? T : npairs;

	if (k->w.maxT >= n)
		return;
	pe_work_free(&k->w);
	if (n > (1 << 24) || pe_work_init(&k->w, pe, (int)n) == -1)
		die("%lld tokens: %s", (long long)n, k->w.err.msg[0] ? k->w.err.msg : "too many");
	free(k->dbuf);
	free(k->pair);
	free(k->dpos);
	free(k->B);
	k->dbuf = malloc(sizeof *k->dbuf * pe->nset * n * shape->rsize);
	k->pair = malloc(sizeof *k->pair * 2 * n);
	k->dpos = malloc(sizeof *k->dpos * n * pe->axes);
	k->B = pe->basis ? malloc(sizeof *k->B * pe->nset * n * pe->rsize) : NULL;
	if (!k->dbuf || !k->pair || !k->dpos || (pe->basis && !k->B))
		die("out of memory for %lld rotations", (long long)(pe->nset * npairs));
}

/* R of T tokens: pe_rotations', or with a basis P B P^T, dense. */
static void
rotations(const struct pe *pe, struct work *k, const float *params, int T,
    const float *pos, float *R)
{
	if (!pe->basis) {
		pe_rotations(pe, &k->w, params, T, pos, R);
		return;
	}
	pe_rotations(pe, &k->w, params, T, pos, k->B);
	pe_compose(pe, &k->w, T, k->P, k->B, R);
}

int
main(int argc, char *argv[])
{
	struct opts o = { .pairs = 256 };
	struct stats st = { .detlo = INFINITY, .dethi = -INFINITY };
	struct vt gen, in, out;
	struct pe pe, shape;
	struct work k = { .w = { .maxT = 0 } };
	const float *params;
	const char *name;
	float cls[3];
	int c, r, ipos, irot = -1, icls = -1, hascls;

	cli_init(argc, argv);
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case 'g': o.gen = optarg; break;
		case 'c': o.check = 1; break;
		case OPT_PAIRS: o.pairs = cli_int("--pairs", optarg, 1, 1 << 20); break;
		}
	}
	if (!o.gen)
		usage_error("say --generators FILE (from skewgen, or a checkpoint)");
	if (argc - optind > 1)
		usage_error("one positions FILE at most");
	if (vt_load_with(&gen, o.gen, pe_generators_only, NULL) == -1)
		die("%s", gen.err.msg);
	if ((params = pe_load_params(&pe, &gen)) == NULL)
		die("%s", pe.err.msg);
	shape = pe;	/* R as written: with a basis one dense block */
	if (pe.basis) {
		shape.block = pe.head_dim;
		shape.nblock = 1;
		shape.rsize = (int64_t)pe.head_dim * pe.head_dim;
		reserve(&pe, &shape, &k, 1, 1);
		if (!(k.P = malloc(sizeof *k.P * pe.nset * shape.rsize)))
			die("out of memory for %d bases", pe.nset);
		pe_bases(&pe, &k.w, params, k.P);
	}

	FILE *fp = cli_open_in(optind < argc ? argv[optind] : NULL, &name);
	vt_init(&in);
	if (vt_read_header(&in, fp, name) == -1)
		die("%s", in.err.msg);
	if ((ipos = vt_find(&in, "pos")) < 0)
		die("%s: no pos field: make positions with posgen", name);
	struct vt_field *fpos = &in.field[ipos];
	if (fpos->dtype != VT_F32 || fpos->rank != 2 || fpos->dim[1] != pe.axes)
		die("%s: pos is %s with %d dims of which the last is %lld; the generators (%s) "
		    "need f32 [T][%d]", name, vt_dtype_name(fpos->dtype), fpos->rank,
		    fpos->rank ? (long long)fpos->dim[fpos->rank - 1] : 0LL, o.gen, pe.axes);
	struct err e;
	if ((hascls = pe_conv_cls(vt_meta(&in, "CLSPOS"), pe.axes, cls, &e)) < 0)
		die("%s: %s", name, e.msg);
	int iclspos = vt_find(&in, "clspos");	/* per record: posgen --offset */
	if (iclspos >= 0 && (!hascls || in.field[iclspos].dtype != VT_F32 ||
	    in.field[iclspos].rank != 1 || in.field[iclspos].dim[0] != pe.axes))
		die("%s: clspos must be f32 [%d], with CLSPOS coordinates", name, pe.axes);

	if (!o.check) {
		cli_binary_stdout(0);
		vt_init(&out);
		if (vt_copy_header(&out, &in) == -1 || vt_find(&in, "rot") >= 0 ||
		    (irot = vt_add_field(&out, "rot", VT_F32, 5, (int64_t[]){ pe.nset, fpos->dim[0],
		    shape.nblock, shape.block, shape.block })) < 0 ||
		    (hascls && (icls = vt_add_field(&out, "rot_cls", VT_F32, 4, (int64_t[]){ pe.nset,
		    shape.nblock, shape.block, shape.block })) < 0) ||
		    pe_meta_write(&pe, &out) == -1 || vt_history(&out, argc, argv) == -1 ||
		    vt_write_header(&out, stdout, "stdout") == -1)
			die("%s", vt_find(&in, "rot") >= 0 ? "input already has a rot field" : out.err.msg);
	}
	while ((r = vt_read_record(&in)) == 1) {
		int64_t T = fpos->shape[0];
		const float *pos = fpos->data;
		for (int64_t k = 0; k < T * pe.axes; k++)
			if (!isfinite(pos[k]))
				die("%s: record %lld: position %lld is not finite", name,
				    (long long)in.recno, (long long)(k / pe.axes));
		if (T == 0)
			die("%s: record %lld: no tokens", name, (long long)in.recno);
		for (int a = 0; iclspos >= 0 && a < pe.axes; a++)
			if (!isfinite(((const float *)in.field[iclspos].data)[a]))
				die("%s: record %lld: clspos is not finite", name,
				    (long long)in.recno);
		if (o.check) {
			int64_t np = T * T <= o.pairs ? T * T : o.pairs;
			reserve(&pe, &shape, &k, T, np);
			float *R = malloc(sizeof *R * pe.nset * T * shape.rsize);
			if (!R)
				die("out of memory for %lld rotations", (long long)(pe.nset * T));
			rotations(&pe, &k, params, (int)T, pos, R);
			np = choose_pairs(&o, T, pe.axes, pos, in.recno, k.pair, k.dpos);
			rotations(&pe, &k, params, (int)np, k.dpos, k.dbuf);
			check(&shape, T, R, np, k.pair, k.dbuf, &st);
			free(R);
			continue;
		}
		reserve(&pe, &shape, &k, T, 1);
		if (vt_copy_record(&out, &in) == -1 ||
		    vt_set_shape(&out, irot, (int64_t[]){ pe.nset, T, shape.nblock, shape.block,
		    shape.block }) == -1)
			die("%s", out.err.msg);
		rotations(&pe, &k, params, (int)T, pos, out.field[irot].data);
		if (icls >= 0)
			rotations(&pe, &k, params, 1, iclspos >= 0 ? in.field[iclspos].data : cls,
			    out.field[icls].data);
		if (vt_write_record(&out) == -1)
			die("%s", out.err.msg);
	}
	if (r == -1)
		die("%s", in.err.msg);
	if (o.check) {
		if (st.records == 0)
			die("%s: no records", name);
		printf("pe %s\nshare %s\nsets %d\ntokens %lld\nrecords %lld\n", pe.spec,
		    pe_share_name(pe.share), pe.nset, (long long)st.tokens, (long long)st.records);
		printf("orthogonality %.3g\ndet_min %.9g\ndet_max %.9g\nrelative %.3g\npairs %lld\n",
		    st.orth, st.detlo, st.dethi, st.rel, (long long)st.npairs);
	} else {
		vt_free(&out);
	}
	cli_close_out(stdout, "stdout");
	if (fp != stdin)
		fclose(fp);
	pe_work_free(&k.w);
	free(k.dbuf); free(k.pair); free(k.dpos); free(k.B); free(k.P);
	vt_free(&in);
	vt_free(&gen);
	return 0;
}
