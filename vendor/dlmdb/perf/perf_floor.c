/*
 * perf_floor - how close the read rows of `bench peers` run to the memory
 * floor: each engine's scan and random gets timed against a walk that
 * touches the same bytes through an array of pointers, with no engine.
 *
 * Each engine builds its own store in DIR/<name> as the bench does: record
 * i has the key be64(2i) and a VALSIZE-byte value that starts with be64(2i),
 * put in ascending key order, committed every 10,000 puts.  One read txn
 * per engine stays open; a cursor walk collects every record's key and
 * value pointers (untimed).  Then every round runs, for each engine in
 * turn (the order rotated per round), the loops below, each PASSES times,
 * timed in thread CPU time (time spent descheduled does not count) unless
 * told otherwise; a timed pass repeats its loop until it has covered at
 * least 10,000 records.  Every loop folds each record's key length, value
 * length, key's last byte and value's first byte as `bench peers` does:
 *
 *   walk  the pointer array in key order (the floor of seq_read)
 *   scan  MDB_FIRST / MDB_NEXT
 *   rwalk the pointer array in the bench's random order (the floor of
 *         rand_get; the key comes from a table of keys, as in the bench)
 *   get   mdb_get in that order
 *   seek  MDB_SET_RANGE in that order on one cursor, with the bench's seek
 *         keys (be64(2i - 1), strictly between records i - 1 and i; record
 *         0's own key): it lands on the record the get of the same turn
 *         reads
 *   bwalk (BALLAST > 0 only) the walk with BALLAST rounds of register-only
 *         work per record (four independent shift-xor-add chains, about
 *         20 instructions a round), that no load waits for: how fast a
 *         loop of an engine step's length could go over the same misses
 *
 * Printed per engine and loop: the median over rounds of the median pass
 * (ns per record) and the median and quartiles of its per-round ratio to
 * the walk of the same order over the same engine's store (stores made at
 * different times can differ: the walk is the floor of that store); for
 * every engine after the first, a second line with the per-round ratios
 * of each loop to the first engine's same loop.  Checksums must agree.
 *
 * usage: perf_floor DIR ENTRIES VALSIZE ROUNDS PASSES [cpu|wall] [BALLAST]
 * (wall: time on CLOCK_MONOTONIC instead of the thread's CPU time)
 *
 * `make perf` builds it against one engine (build/perf/perf_floor, and
 * perf_floor-stock on Debian's liblmdb); ab_reads.sh builds it against
 * several in one program (AB_PROG=perf_floor; see BENCHMARKS.md).
 */
#include "perf.h"
#include "ab_reads_ops.h"
#include <stdint.h>
#include <string.h>

#ifdef AB_LIST
AB_DECLS
static const struct ab_ops *ops[] = { AB_LIST };
static const char *names[] = { AB_NAMES };
#else
static const struct ab_ops one_ops = { mdb_env_create, mdb_env_set_mapsize, mdb_env_open,
	mdb_txn_begin, mdb_dbi_open, mdb_get, mdb_cursor_open, mdb_cursor_get, mdb_put,
	mdb_txn_commit };
static const struct ab_ops *ops[] = { &one_ops };
#ifdef STOCK_LMDB
static const char *names[] = { "liblmdb" };
#else
static const char *names[] = { "ours" };
#endif
#endif
#define NB (sizeof ops / sizeof ops[0])
#define LOAD_BATCH 10000
#define MIN_RECORDS 10000
enum { WALK, SCAN, RWALK, GET, SEEK, BWALK, NLOOP };
static const char *loop_names[NLOOP] = { "walk", "scan", "rwalk", "get", "seek", "bwalk" };

/* The walk that folds the same bytes as loop l, in the same order. */
static int loop_ref(int l)
{
	return l == BWALK || l == SCAN ? WALK : l == GET || l == SEEK ? RWALK : l;
}

struct rec {
	const unsigned char *k, *v;
	size_t ks, vs;
};

struct engine {
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_dbi dbi;
	struct rec *recs;
};

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "perf_floor: %s: error %d\n", what, rc);
		exit(1);
	}
}

static clockid_t clock_id = CLOCK_THREAD_CPUTIME_ID;

static double clock_ns(void)
{
	struct timespec t;
	clock_gettime(clock_id, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline uint64_t fold(uint64_t acc, const unsigned char *k, size_t ks,
    const unsigned char *v, size_t vs)
{
	uint64_t kb = ks ? k[ks - 1] : 0, vb = vs ? v[0] : 0;
	return acc * 31 + (ks ^ (vs << 20) ^ (kb << 8) ^ vb);
}

static uint64_t n;
static unsigned ballast;
static volatile uint64_t ballast_sink;
static unsigned char *keys; /* n keys of 8 bytes, in key order */
static unsigned char *skeys; /* the seek key of each record, in key order */
static uint64_t *perm;      /* the bench's random order */

__attribute__((noinline)) static uint64_t run_loop(const struct ab_ops *o, struct engine *e,
    int loop)
{
	uint64_t acc = 0, seen = 0;
	MDB_val k, d;
	int rc;
	switch (loop) {
	case WALK:
		for (uint64_t i = 0; i < n; i++) {
			const struct rec *r = &e->recs[i];
			acc = fold(acc, r->k, r->ks, r->v, r->vs);
		}
		return acc;
	case SCAN:
		rc = o->cursor_get(e->cur, &k, &d, MDB_FIRST);
		while (rc == 0) {
			acc = fold(acc, k.mv_data, k.mv_size, d.mv_data, d.mv_size);
			seen++;
			rc = o->cursor_get(e->cur, &k, &d, MDB_NEXT);
		}
		if (rc != MDB_NOTFOUND || seen != n)
			check(rc ? rc : -1, "scan");
		return acc;
	case BWALK: {
		uint64_t a = 1, b = 2, c = 3, f = 4;
		for (uint64_t i = 0; i < n; i++) {
			const struct rec *r = &e->recs[i];
			acc = fold(acc, r->k, r->ks, r->v, r->vs);
			for (unsigned j = 0; j < ballast; j++) {
				a = (a ^ (a << 7)) + j;
				b = (b ^ (b >> 9)) + j;
				c = (c ^ (c << 5)) + j;
				f = (f ^ (f >> 3)) + j;
				__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(f));
			}
		}
		ballast_sink = a ^ b ^ c ^ f;
		return acc;
	}
	case RWALK:
		for (uint64_t i = 0; i < n; i++) {
			const struct rec *r = &e->recs[perm[i]];
			acc = fold(acc, keys + 8 * (size_t)perm[i], 8, r->v, r->vs);
		}
		return acc;
	case SEEK:
		for (uint64_t i = 0; i < n; i++) {
			k.mv_size = 8;
			k.mv_data = skeys + 8 * (size_t)perm[i];
			check(o->cursor_get(e->cur, &k, &d, MDB_SET_RANGE), "seek");
			acc = fold(acc, k.mv_data, k.mv_size, d.mv_data, d.mv_size);
		}
		return acc;
	default:
		for (uint64_t i = 0; i < n; i++) {
			k.mv_size = 8;
			k.mv_data = keys + 8 * (size_t)perm[i];
			check(o->get(e->txn, e->dbi, &k, &d), "get");
			acc = fold(acc, k.mv_data, 8, d.mv_data, d.mv_size);
		}
		return acc;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..m) (sorts v). */
static double quantile(double *v, int m, double q)
{
	qsort(v, (size_t)m, sizeof *v, cmp_double);
	return v[(int)(q * (m - 1))];
}

static void build(unsigned b, const char *root, unsigned vsize, struct engine *e)
{
	const struct ab_ops *o = ops[b];
	char dir[2048];
	MDB_env *env;
	MDB_txn *txn;
	unsigned char *vb = calloc(1, vsize);
	if (!vb)
		exit(1);
	snprintf(dir, sizeof dir, "%s/%s", root, names[b]);
	perf_fresh_env_dir(dir);
	check(o->env_create(&env), "env_create");
	check(o->env_set_mapsize(env, 4ul << 30), "mapsize");
	check(o->env_open(env, dir, 0, 0644), "env_open");
	for (uint64_t i = 0; i < n; i += LOAD_BATCH) {
		check(o->txn_begin(env, NULL, 0, &txn), "txn_begin");
		check(o->dbi_open(txn, NULL, 0, &e->dbi), "dbi_open");
		for (uint64_t j = i; j < n && j < i + LOAD_BATCH; j++) {
			uint64_t s = 2 * j;
			for (unsigned c = 0; c < vsize; c++)
				vb[c] = c < 8 ? (unsigned char)(2 * j >> (8 * (7 - c)))
					      : (unsigned char)perf_splitmix(&s);
			MDB_val k = { 8, keys + 8 * j }, v = { vsize, vb };
			check(o->put(txn, e->dbi, &k, &v, 0), "put");
		}
		check(o->txn_commit(txn), "commit");
	}
	free(vb);
	check(o->txn_begin(env, NULL, MDB_RDONLY, &e->txn), "txn_begin");
	check(o->dbi_open(e->txn, NULL, 0, &e->dbi), "dbi_open");
	check(o->cursor_open(e->txn, e->dbi, &e->cur), "cursor_open");
	e->recs = malloc(n * sizeof *e->recs);
	if (!e->recs)
		exit(1);
	MDB_val k, d;
	uint64_t i = 0;
	int rc = o->cursor_get(e->cur, &k, &d, MDB_FIRST);
	for (; rc == 0 && i < n; i++) {
		if (k.mv_size != 8 || memcmp(k.mv_data, keys + 8 * i, 8) || d.mv_size != vsize)
			check(-1, "record");
		e->recs[i] = (struct rec){ k.mv_data, d.mv_data, k.mv_size, d.mv_size };
		rc = o->cursor_get(e->cur, &k, &d, MDB_NEXT);
	}
	if (rc != MDB_NOTFOUND || i != n)
		check(rc ? rc : -1, "collect");
}

int main(int argc, char **argv)
{
	if (argc < 6 || argc > 8) {
		fprintf(stderr, "usage: %s DIR ENTRIES VALSIZE ROUNDS PASSES [cpu|wall] [BALLAST]\n",
		    argv[0]);
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	unsigned vsize = (unsigned)atoi(argv[3]);
	int rounds = atoi(argv[4]), passes = atoi(argv[5]);
	if (argc > 6 && !strcmp(argv[6], "wall"))
		clock_id = CLOCK_MONOTONIC;
	ballast = argc > 7 ? (unsigned)atoi(argv[7]) : 0;
	int nloop = ballast ? NLOOP : BWALK;
	if (n < 1 || n > UINT32_MAX || vsize < 8 || vsize > (1u << 20) || rounds < 1 ||
	    passes < 1)
		return 2;
	if (mkdir(argv[1], 0755) && errno != EEXIST) {
		perror(argv[1]);
		return 1;
	}
	keys = malloc(8 * n);
	skeys = malloc(8 * n);
	/* the bench's shuffle, seed 0x5EED0000 + n */
	perm = perf_shuffled(n, 0x5EED0000ull + n);
	struct engine *eng = calloc(NB, sizeof *eng);
	double *t = malloc(sizeof(double) * NB * NLOOP * rounds);
	double *pass_t = malloc(sizeof(double) * passes);
	double *x = malloc(sizeof(double) * rounds);
	if (!keys || !skeys || !perm || !eng || !t || !pass_t || !x)
		return 1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t sk = i ? 2 * i - 1 : 0;
		for (int c = 0; c < 8; c++) {
			keys[8 * i + c] = (unsigned char)(2 * i >> (8 * (7 - c)));
			skeys[8 * i + c] = (unsigned char)(sk >> (8 * (7 - c)));
		}
	}
	for (unsigned b = 0; b < NB; b++)
		build(b, argv[1], vsize, &eng[b]);
	uint64_t reps = (MIN_RECORDS + n - 1) / n, sums[NLOOP] = { 0 };
	for (int r = 0; r < rounds; r++) {
		for (unsigned q = 0; q < NB; q++) {
			unsigned b = (q + (unsigned)r) % NB;
			for (int l = 0; l < nloop; l++) {
				uint64_t acc = 0;
				for (int p = 0; p < passes; p++) {
					double t0 = clock_ns();
					for (uint64_t j = 0; j < reps; j++)
						acc += run_loop(ops[b], &eng[b], l);
					pass_t[p] = (clock_ns() - t0) / (double)(reps * n);
				}
				t[(b * NLOOP + l) * rounds + r] = quantile(pass_t, passes, 0.5);
				/* the walk and its engine loop fold the same bytes */
				int ref = loop_ref(l);
				if (l == ref && q == 0 && r == 0)
					sums[ref] = acc;
				else if (acc != sums[ref]) {
					fprintf(stderr, "perf_floor: %s %s: checksum differs\n",
					    names[b], loop_names[l]);
					return 1;
				}
			}
		}
	}
	printf("%llu records x %u B, %d rounds x %d passes of %llu records; ns per record, "
	    "medians; ratio to the engine's own walk of the same order [quartiles]\n",
	    (unsigned long long)n, vsize, rounds, passes, (unsigned long long)(reps * n));
	for (unsigned b = 0; b < NB; b++) {
		printf("%-10s", names[b]);
		for (int l = 0; l < nloop; l++) {
			double *v = t + (b * NLOOP + l) * rounds;
			double *base = t + (b * NLOOP + loop_ref(l)) * rounds;
			double rq[3], med;
			for (int i = 0; i < rounds; i++)
				x[i] = v[i];
			med = quantile(x, rounds, 0.5);
			for (int i = 0; i < rounds; i++)
				x[i] = v[i] / base[i];
			rq[0] = quantile(x, rounds, 0.5);
			rq[1] = quantile(x, rounds, 0.25);
			rq[2] = quantile(x, rounds, 0.75);
			printf(" | %s %7.2f %.3f [%.3f-%.3f]", loop_names[l], med, rq[0], rq[1],
			    rq[2]);
		}
		printf("\n");
		if (b == 0)
			continue;
		/* the same loops against the first engine's, round by round */
		printf("%-10s", "");
		for (int l = 0; l < nloop; l++) {
			double *v = t + (b * NLOOP + l) * rounds, *base = t + l * rounds;
			for (int i = 0; i < rounds; i++)
				x[i] = v[i] / base[i];
			double m = quantile(x, rounds, 0.5);
			printf(" | %s/%s %.3f [%.3f-%.3f]", loop_names[l], names[0], m,
			    quantile(x, rounds, 0.25), quantile(x, rounds, 0.75));
		}
		printf("\n");
	}
	return 0;
}
