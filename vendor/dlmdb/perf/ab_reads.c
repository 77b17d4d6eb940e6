/*
 * ab_reads - random gets and seeks timed on several engine builds in one
 * process (built by ab_reads.sh), so that a loaded machine slows every
 * build alike.  Each build opens its store (MDB_RDONLY | MDB_NOLOCK) and
 * walks it once; then each round draws BATCH random records for gets and
 * BATCH others for seeks (perf_reads' keys: be64(2i) then bytes from i;
 * seeks be64(2i - 1) then 0xff bytes, absent, landing on record i) and
 * runs them on every build in turn, the order rotated per round, timed in
 * thread CPU time (time spent descheduled does not count).  Prints per
 * build the median ns per get and per seek, the median of the per-round
 * seek - get difference, and the medians (quartiles in brackets) of the
 * per-round ratios to the first build; a second copy of one build is the
 * A/A control that shows what the method cannot resolve.
 *
 * usage: ab_reads DIR[,DIR...] ENTRIES KEYSIZE ROUNDS BATCH
 *   (one store per build, or one for all; stores made by perf_reads)
 */
#include "perf.h"
#include "ab_reads_ops.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

AB_DECLS
static const struct ab_ops *ops[] = { AB_LIST };
static const char *names[] = { AB_NAMES };
#define NB (sizeof ops / sizeof ops[0])

static unsigned keysize;

static double cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* perf_reads' key of record i, or its seek key (seek != 0). */
static void make_key(uint64_t i, unsigned char *k, int seek)
{
	uint64_t v = 2 * i - (seek ? 1 : 0);
	for (int b = 0; b < 8; b++)
		k[b] = (unsigned char)(v >> (8 * (7 - b)));
	for (unsigned b = 8; b < keysize; b++)
		k[b] = seek ? 0xff : (unsigned char)(i * 131 + b * 7);
}

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "ab_reads: %s: error %d\n", what, rc);
		exit(1);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (sorts v). */
static double quantile(double *v, int n, double q)
{
	qsort(v, n, sizeof *v, cmp_double);
	return v[(int)(q * (n - 1))];
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s DIR[,DIR...] ENTRIES KEYSIZE ROUNDS BATCH\n", argv[0]);
		return 2;
	}
	char *dirs[NB];
	int nd = 0;
	for (char *p = strtok(argv[1], ","); p && nd < (int)NB; p = strtok(NULL, ","))
		dirs[nd++] = p;
	uint64_t n = strtoull(argv[2], NULL, 10);
	keysize = (unsigned)atoi(argv[3]);
	int rounds = atoi(argv[4]), batch = atoi(argv[5]);
	if (n < 2 || keysize < 8 || keysize > 64 || rounds < 1 || batch < 1 || !nd)
		return 2;
	MDB_txn *txn[NB];
	MDB_cursor *cur[NB];
	MDB_dbi dbi[NB];
	for (unsigned b = 0; b < NB; b++) {
		MDB_env *env;
		MDB_val k, d;
		uint64_t seen = 0;
		check(ops[b]->env_create(&env), "env_create");
		check(ops[b]->env_set_mapsize(env, 4ul << 30), "mapsize");
		check(ops[b]->env_open(env, dirs[b < (unsigned)nd ? b : (unsigned)nd - 1],
		    MDB_RDONLY | MDB_NOLOCK, 0644), "env_open");
		check(ops[b]->txn_begin(env, NULL, MDB_RDONLY, &txn[b]), "txn_begin");
		check(ops[b]->dbi_open(txn[b], NULL, 0, &dbi[b]), "dbi_open");
		check(ops[b]->cursor_open(txn[b], dbi[b], &cur[b]), "cursor_open");
		int rc = ops[b]->cursor_get(cur[b], &k, &d, MDB_FIRST);
		while (!rc) {
			seen++;
			rc = ops[b]->cursor_get(cur[b], &k, &d, MDB_NEXT);
		}
		if (seen != n) {
			fprintf(stderr, "ab_reads: %s: %llu records, not %llu\n", names[b],
			    (unsigned long long)seen, (unsigned long long)n);
			return 1;
		}
	}
	double *tg = malloc(sizeof(double) * NB * rounds);
	double *ts = malloc(sizeof(double) * NB * rounds);
	double *x = malloc(sizeof(double) * rounds);
	uint64_t *gi = malloc(sizeof(uint64_t) * batch), *si = malloc(sizeof(uint64_t) * batch);
	uint64_t seed = 7;
	unsigned char kb[64];
	if (!tg || !ts || !x || !gi || !si)
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int j = 0; j < batch; j++) {
			gi[j] = 1 + perf_splitmix(&seed) % (n - 1);
			si[j] = 1 + perf_splitmix(&seed) % (n - 1);
		}
		for (unsigned q = 0; q < NB; q++) {
			unsigned b = (q + (unsigned)r) % NB;
			double t0 = cpu_ns();
			for (int j = 0; j < batch; j++) {
				MDB_val k = { keysize, kb }, d;
				make_key(gi[j], kb, 0);
				if (ops[b]->get(txn[b], dbi[b], &k, &d) ||
				    ((unsigned char *)d.mv_data)[0] != (unsigned char)gi[j])
					check(1, "get");
			}
			double t1 = cpu_ns();
			for (int j = 0; j < batch; j++) {
				MDB_val k = { keysize, kb }, d;
				make_key(si[j], kb, 1);
				if (ops[b]->cursor_get(cur[b], &k, &d, MDB_SET_RANGE) ||
				    ((unsigned char *)d.mv_data)[0] != (unsigned char)si[j])
					check(1, "seek");
			}
			double t2 = cpu_ns();
			tg[b * rounds + r] = (t1 - t0) / batch;
			ts[b * rounds + r] = (t2 - t1) / batch;
		}
	}
	for (unsigned b = 0; b < NB; b++) {
		double *g = tg + b * rounds, *s = ts + b * rounds, gm, sm, gap, r[6];
		for (int i = 0; i < rounds; i++)
			x[i] = g[i];
		gm = quantile(x, rounds, 0.5);
		for (int i = 0; i < rounds; i++)
			x[i] = s[i];
		sm = quantile(x, rounds, 0.5);
		for (int i = 0; i < rounds; i++)
			x[i] = s[i] - g[i];
		gap = quantile(x, rounds, 0.5);
		for (int i = 0; i < rounds; i++)
			x[i] = g[i] / tg[i];
		r[0] = quantile(x, rounds, 0.5), r[1] = quantile(x, rounds, 0.25);
		r[2] = quantile(x, rounds, 0.75);
		for (int i = 0; i < rounds; i++)
			x[i] = s[i] / ts[i];
		r[3] = quantile(x, rounds, 0.5), r[4] = quantile(x, rounds, 0.25);
		r[5] = quantile(x, rounds, 0.75);
		printf("%-8s get %7.1f seek %7.1f seek-get %6.1f | /%s get %.3f [%.3f-%.3f] "
		    "seek %.3f [%.3f-%.3f]\n", names[b], gm, sm, gap, names[0], r[0], r[1], r[2],
		    r[3], r[4], r[5]);
	}
	return 0;
}
