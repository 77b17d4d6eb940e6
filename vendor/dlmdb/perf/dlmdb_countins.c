/* dlmdb_countins - count_bench's insert builds (dlmdb-extensions §5.1:
 * keys k%06zu, values v%06zu or D values val%08zu, FY/XS64 shuffle, one
 * write txn, commit timed) with and without MDB_PREFIX_COMPRESSION and
 * MDB_COUNTED, interleaved; prints the median ns per put of each variant.
 * usage: dlmdb_countins DIR [entries] [dups] [rounds] [variant 0-3 only] [asc]
 * asc 1: keys in ascending order (bench count's default) instead of shuffled */
#include "perf.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define CHECK(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(r_)); exit(1); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static double build(const char *dir, size_t n, unsigned D, unsigned flags, const size_t *ord)
{
	perf_fresh_env_dir(dir);
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_maxdbs(env, 4)); CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	CHECK(mdb_env_open(env, dir, MDB_NOLOCK, 0664));
	char kb[32], vb[32];
	double t0 = now();
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, D ? "bench_dup" : "bench", MDB_CREATE | flags | (D ? MDB_DUPSORT : 0), &dbi));
	for (size_t i = 0; i < n; i++) {
		MDB_val k = { (size_t)sprintf(kb, "k%06zu", ord[i]), kb }, v;
		if (!D) {
			v.mv_size = (size_t)sprintf(vb, "v%06zu", ord[i]); v.mv_data = vb;
			CHECK(mdb_put(txn, dbi, &k, &v, 0));
		} else for (unsigned d = 0; d < D; d++) {
			v.mv_size = (size_t)sprintf(vb, "val%08u", d); v.mv_data = vb;
			CHECK(mdb_put(txn, dbi, &k, &v, 0));
		}
	}
	CHECK(mdb_txn_commit(txn));
	double t = now() - t0;
	mdb_env_close(env);
	return t / (double)(n * (D ? D : 1));
}
int main(int argc, char **argv)
{
	size_t n = argc > 2 ? strtoul(argv[2], 0, 10) : 100000;
	unsigned D = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
	int rounds = argc > 4 ? atoi(argv[4]) : 7;
	int only = argc > 5 ? atoi(argv[5]) : -1;
	size_t *ord = malloc(n * sizeof *ord);
	uint64_t s = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < n; i++) ord[i] = i;
	int asc = argc > 6 && atoi(argv[6]);
	for (size_t i = n - 1; !asc && i > 0; i--) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; size_t j = (size_t)(s % (i + 1)); size_t t = ord[i]; ord[i] = ord[j]; ord[j] = t; }
	static const unsigned fl[4] = { MDB_PREFIX_COMPRESSION, MDB_PREFIX_COMPRESSION | MDB_COUNTED, 0, MDB_COUNTED };
	static const char *nm[4] = { "prefix", "prefix+counted", "none", "counted" };
	double *t[4];
	for (int v = 0; v < 4; v++) t[v] = malloc(rounds * sizeof(double));
	for (int r = 0; r < rounds; r++)
		for (int v = 0; v < 4; v++) { int vv = (r & 1) ? 3 - v : v; t[vv][r] = (only < 0 || only == vv) ? build(argv[1], n, D, fl[vv], ord) : 1; }
	double med[4];
	for (int v = 0; v < 4; v++) { qsort(t[v], rounds, sizeof(double), cmpd); med[v] = t[v][rounds / 2];
		printf("%-15s median %.1f ns/put (min %.1f, max %.1f)\n", nm[v], med[v], t[v][0], t[v][rounds - 1]); }
	printf("counted overhead (prefix DBs): %+.1f%%\n", (med[1] / med[0] - 1) * 100);
	printf("prefix / no prefix: %.3f (uncounted), %.3f (counted)\n", med[0] / med[2], med[1] / med[3]);
	return 0;
}
