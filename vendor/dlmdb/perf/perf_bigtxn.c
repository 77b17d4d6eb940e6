/*
 * perf_bigtxn.c - one write transaction of N puts (8-byte big-endian keys,
 * 100-byte values) into a fresh store, then commit: the workload of a bulk
 * load larger than the dirty-page limit.  Prints the time of the puts, of
 * the commit, the process's CPU time (user, system: less disturbed than
 * wall time on a shared machine) and its peak RSS (getrusage ru_maxrss), so the
 * bounded dirty set of both engines can be compared.
 *
 *   build/perf/perf_bigtxn DIR N [seq|rand [B]]        (ours)
 *   build/perf/perf_bigtxn-stock DIR N [seq|rand [B]]  (Debian's liblmdb)
 *
 * seq puts keys in ascending order; rand in a pseudo-random order (a
 * multiplicative permutation of 0..N-1).  B > 0 commits every B puts
 * instead (the small-txn loads of bench peers, which use 10000).  DIR must be on a real disk: the
 * data file reaches about 1.5 GB for N = 12M.
 */
#include "perf.h"

#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

/* x -> x * A mod N is a permutation of 0..N-1 when gcd(A, N) = 1. */
static uint64_t perm_mult(uint64_t n)
{
	uint64_t a = 2654435761u % n;
	if (a < 2)
		a = 1;
	for (;;) {
		uint64_t x = a, y = n;
		while (y) {
			uint64_t t = x % y;
			x = y;
			y = t;
		}
		if (x == 1)
			return a;
		a++;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR N [seq|rand [B]]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	int rnd = argc > 3 && !strcmp(argv[3], "rand");
	uint64_t mult = rnd && n > 1 ? perm_mult(n) : 1;
	uint64_t batch = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
	perf_fresh_env_dir(dir);

	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, (size_t)(n * 260 + (64u << 20))));
	PERF_CHECK(mdb_env_open(env, dir, 0, 0644));

	unsigned char kb[8], vb[100];
	MDB_val k = { sizeof kb, kb }, v = { sizeof vb, vb };
	for (size_t i = 0; i < sizeof vb; i++)
		vb[i] = (unsigned char)(i * 7 + 1);

	double t0 = perf_now_ns();
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t x = __builtin_bswap64(rnd ? (i * mult) % n : i);
		memcpy(kb, &x, 8);
		memcpy(vb, &x, 8);
		PERF_CHECK(mdb_put(txn, dbi, &k, &v, 0));
		if (batch && (i + 1) % batch == 0 && i + 1 < n) {
			PERF_CHECK(mdb_txn_commit(txn));
			PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		}
	}
	double t1 = perf_now_ns();
	/* Resident memory split before commit: heap (the dirty pages) and
	 * file pages mapped in (spilled pages read back through the map). */
	char line[256];
	FILE *st = fopen("/proc/self/status", "r");
	while (st && fgets(line, sizeof line, st))
		if (!strncmp(line, "RssAnon:", 8) || !strncmp(line, "RssFile:", 8))
			fprintf(stderr, "before commit: %s", line);
	if (st)
		fclose(st);
	PERF_CHECK(mdb_txn_commit(txn));
	double t2 = perf_now_ns();

	/* Spot check: a few keys read back after commit. */
	PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	for (uint64_t i = 0; i < n; i += n / 7 + 1) {
		for (int b = 0; b < 8; b++)
			kb[b] = (unsigned char)(i >> (56 - 8 * b));
		MDB_val got;
		PERF_CHECK(mdb_get(txn, dbi, &k, &got));
		if (got.mv_size != 100 || memcmp(got.mv_data, kb, 8)) {
			fprintf(stderr, "wrong value for key %llu\n", (unsigned long long)i);
			return 1;
		}
	}
	mdb_txn_abort(txn);

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("engine=%s n=%llu order=%s puts_s=%.2f commit_s=%.2f total_s=%.2f "
	    "user_s=%.2f sys_s=%.2f maxrss_mb=%.0f\n",
#ifdef STOCK_LMDB
	    "lmdb",
#else
	    "dlmdb",
#endif
	    (unsigned long long)n, rnd ? "rand" : "seq", (t1 - t0) / 1e9, (t2 - t1) / 1e9,
	    (t2 - t0) / 1e9, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss / 1024.0);
	mdb_env_close(env);
	return 0;
}
