/*
 * perf_dupdel - wall-clock time of compress_bench's delete phase alone, plain
 * against plain-dups, in one process.
 *
 * Each store is built as compress_bench builds it: N entries put in a random
 * order (keys 'p' x 16 + 16 hex digits, 64-byte values), then U updates; the
 * plain-dups store has N / 20 keys of 20 values each (62 bytes of the key
 * index, then the value's version, then its index among the key's values).
 * Then D deletes of a random permutation run in one write txn (mdb_del with
 * the value for the dups store, without for the plain one), and only that loop
 * is timed. A round builds and deletes both stores, alternating which goes
 * first; the report gives per-round times, medians, spreads and the ratio
 * dups / plain of each round.
 *
 * usage: perf_dupdel DIR [ROUNDS [N [D [U [COUNTED [WHICH]]]]]]
 *   ROUNDS 9, N 200000, D 100000, U 100000, COUNTED 1 (ignored by stock
 *   LMDB), WHICH 3 (1 plain only, 2 dups only, 3 both)
 *
 * Under callgrind, count the delete loop alone with
 *   --collect-atstart=no --toggle-collect=dupdel_delete_loop
 */
#include "perf.h"
#include <stdint.h>
#include <string.h>

#define KEY_PREFIX 16
#define VALUE_SIZE 64
#define DUPS 20
#define MAX_ROUNDS 64

struct gen {
	unsigned dups;	/* 0 for the plain store */
	uint64_t n;
	char key[KEY_PREFIX + 16];
	unsigned char val[VALUE_SIZE];
};

static MDB_val gen_key(struct gen *g, uint64_t idx)
{
	uint64_t ki = g->dups ? idx / g->dups : idx;
	static const char hex[] = "0123456789abcdef";
	for (int i = KEY_PREFIX + 15; i >= KEY_PREFIX; i--, ki >>= 4)
		g->key[i] = hex[ki & 15];
	return (MDB_val){ sizeof g->key, g->key };
}

static MDB_val gen_val(struct gen *g, uint64_t idx, uint64_t ver)
{
	if (g->dups) {
		memset(g->val, (int)(uint8_t)(idx / g->dups), VALUE_SIZE);
		g->val[VALUE_SIZE - 2] = (unsigned char)ver;
		g->val[VALUE_SIZE - 1] = (unsigned char)(idx % g->dups);
	} else {
		uint64_t base = idx + ver * g->n;
		for (int i = 0; i < VALUE_SIZE; i++)
			g->val[i] = (unsigned char)(base + i);
	}
	return (MDB_val){ VALUE_SIZE, g->val };
}

/* The timed loop, out of line so callgrind can count it alone. */
__attribute__((noinline)) void dupdel_delete_loop(MDB_txn *txn, MDB_dbi dbi,
    struct gen *g, const uint64_t *perm, uint64_t d, uint32_t *versions)
{
	for (uint64_t i = 0; i < d; i++) {
		uint64_t idx = perm[i];
		MDB_val k = gen_key(g, idx);
		if (g->dups) {
			MDB_val v = gen_val(g, idx, versions[idx]);
			PERF_CHECK(mdb_del(txn, dbi, &k, &v));
			versions[idx] = 0;
		} else {
			PERF_CHECK(mdb_del(txn, dbi, &k, NULL));
		}
	}
}

/* Build one store in dir and time its delete phase; ns per delete. */
static double one_store(const char *dir, unsigned dups, uint64_t n, uint64_t d,
    uint64_t u, int counted)
{
	struct gen g = { .dups = dups, .n = n };
	memset(g.key, 'p', KEY_PREFIX);
	uint32_t *versions = calloc(n, sizeof *versions);
	MDB_env *env;
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_dbi dbi;
	unsigned flags = MDB_CREATE | (dups ? MDB_DUPSORT : 0);
#ifndef STOCK_LMDB
	if (counted)
		flags |= MDB_COUNTED;
#else
	(void)counted;
#endif
	perf_fresh_env_dir(dir);
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, 4096ul << 20));
	PERF_CHECK(mdb_env_open(env, dir, MDB_NOLOCK, 0644));
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_dbi_open(txn, NULL, flags, &dbi));
	PERF_CHECK(mdb_txn_commit(txn));

	uint64_t *perm = perf_shuffled(n, 1 ^ 0xC6BC279692B5CC83ull);
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	for (uint64_t i = 0; i < n; i++) {
		MDB_val k = gen_key(&g, perm[i]), v = gen_val(&g, perm[i], 0);
		PERF_CHECK(mdb_put(txn, dbi, &k, &v, 0));
	}
	PERF_CHECK(mdb_txn_commit(txn));
	free(perm);

	uint64_t rng = 1 ^ 0xD1B54A32D192ED03ull;
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_cursor_open(txn, dbi, &cur));
	for (uint64_t i = 0; i < u; i++) {
		uint64_t idx = perf_splitmix(&rng) % n;
		MDB_val k = gen_key(&g, idx), v;
		if (dups) {
			v = gen_val(&g, idx, versions[idx]);
			PERF_CHECK(mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH));
			PERF_CHECK(mdb_cursor_del(cur, 0));
			k = gen_key(&g, idx);	/* GET_BOTH may have pointed k into the page */
			v = gen_val(&g, idx, ++versions[idx]);
		} else {
			v = gen_val(&g, idx, 1);
		}
		PERF_CHECK(mdb_put(txn, dbi, &k, &v, 0));
	}
	mdb_cursor_close(cur);
	PERF_CHECK(mdb_txn_commit(txn));

	perm = perf_shuffled(n, 1 ^ 0x9E3779B97F4A7C15ull);
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	double t0 = perf_now_ns();
	dupdel_delete_loop(txn, dbi, &g, perm, d, versions);
	double ns = (perf_now_ns() - t0) / (double)d;
	PERF_CHECK(mdb_txn_commit(txn));
	free(perm);
	free(versions);
	mdb_env_close(env);
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *xs, int n)
{
	double s[MAX_ROUNDS];
	memcpy(s, xs, n * sizeof *xs);
	qsort(s, n, sizeof *s, cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void summary(const char *name, const double *xs, int n, int prec)
{
	double lo = xs[0], hi = xs[0], m = median(xs, n);
	for (int i = 1; i < n; i++) {
		lo = xs[i] < lo ? xs[i] : lo;
		hi = xs[i] > hi ? xs[i] : hi;
	}
	printf("%-12s median %9.*f  min %9.*f  max %9.*f  spread %5.1f%%\n",
	    name, prec, m, prec, lo, prec, hi, 100 * (hi - lo) / m);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [ROUNDS [N [D [U [COUNTED [WHICH]]]]]]\n",
		    argv[0]);
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 9;
	uint64_t n = argc > 3 ? strtoull(argv[3], NULL, 10) : 200000;
	uint64_t d = argc > 4 ? strtoull(argv[4], NULL, 10) : 100000;
	uint64_t u = argc > 5 ? strtoull(argv[5], NULL, 10) : 100000;
	int counted = argc > 6 ? atoi(argv[6]) : 1;
	int which = argc > 7 ? atoi(argv[7]) : 3;
	if (rounds < 1 || rounds > MAX_ROUNDS || n < DUPS || n % DUPS || d > n ||
	    which < 1 || which > 3) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	double plain[MAX_ROUNDS], dups[MAX_ROUNDS], ratio[MAX_ROUNDS];
	for (int r = 0; r < rounds; r++) {
		/* Alternate which store goes first. */
		for (int half = 0; half < 2; half++) {
			int want_dups = (half + r) % 2;
			if (!(which & (want_dups ? 2 : 1)))
				continue;
			double ns = one_store(argv[1], want_dups ? DUPS : 0, n, d, u, counted);
			if (want_dups)
				dups[r] = ns;
			else
				plain[r] = ns;
		}
		if (which == 3) {
			ratio[r] = dups[r] / plain[r];
			printf("round %2d  plain %8.1f  dups %8.1f ns/delete  dups/plain %.3f\n",
			    r + 1, plain[r], dups[r], ratio[r]);
		}
		fflush(stdout);
	}
	if (which & 1)
		summary("plain", plain, rounds, 1);
	if (which & 2)
		summary("plain-dups", dups, rounds, 1);
	if (which == 3) {
		summary("dups/plain", ratio, rounds, 3);
		printf("ratio of medians %.3f\n", median(dups, rounds) / median(plain, rounds));
	}
	return 0;
}
