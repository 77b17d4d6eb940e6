/*
 * perf_peerput.c - the write rows of `dlmdb bench peers` as a C program, for
 * instruction and cache-miss counts of exactly the same puts on either
 * engine: the same keys, values, order and transaction size as
 * crates/dlmdb-bench (data.rs, workload.rs).
 *
 *   build/perf/perf_peerput DIR N KEYSIZE VALSIZE rand|seq|cursor
 *   build/perf/perf_peerput-stock ...                  (Debian's liblmdb)
 *
 * Record i has id 2i; its key is the id as 8 big-endian bytes followed by
 * SplitMix64 filler seeded from the id, its value likewise with another
 * salt.  rand: mdb_put in the harness's Fisher-Yates order (seed
 * 0x5EED0000 + N); seq: mdb_put ascending; cursor: mdb_cursor_put
 * (flags 0) ascending, one cursor per transaction.  A commit every 10,000
 * puts, env flags 0, 4 GiB map, as the harness.  The puts and commits run in
 * run_puts, so `--toggle-collect=run_puts` counts just them.
 *
 *   build/perf/perf_peerput DIR N KEYSIZE VALSIZE MODE ARMS ROUNDS
 *
 * runs ROUNDS rounds in one process, each opening, filling and closing one
 * fresh env per letter of ARMS in turn, as the benchmark opens a fresh env
 * per row and round: arm 'k' as it is, arm 'd' (ours only) first unmapping
 * the overflow region a closed env left waiting (dl_ov_spare_drop), so
 * "kkd" is an A/A/B rotation.  Per env it prints the ns per put and the
 * CPU time and minor page faults (getrusage) of the puts, the faults of
 * open to close and the resident set after the close; then per arm the median ns and CPU time, and the mean
 * faults of the rounds after the first (which fills the process's heap).
 */
#include "perf.h"

#include <stdint.h>
#include <sys/resource.h>
#include <string.h>

#define BATCH 10000

/* The id big-endian in the first (up to) 8 bytes, then filler. */
static void fill(uint64_t id, uint64_t salt, unsigned char *out, size_t len)
{
	size_t n = len < 8 ? len : 8;
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)(id >> (56 - 8 * i));
	uint64_t s = id ^ salt;
	for (size_t off = n; off < len; off += 8) {
		uint64_t w = perf_splitmix(&s);
		size_t c = len - off < 8 ? len - off : 8;
		for (size_t b = 0; b < c; b++)
			out[off + b] = (unsigned char)(w >> (8 * b));
	}
}

enum { M_RAND, M_SEQ, M_CURSOR };

static __attribute__((noinline)) void run_puts(MDB_env *env, MDB_dbi dbi, size_t n,
	const unsigned char *keys, size_t ks, const unsigned char *vals, size_t vs,
	const uint32_t *perm, int mode)
{
	for (size_t i = 0; i < n; ) {
		size_t end = i + BATCH < n ? i + BATCH : n;
		MDB_txn *txn;
		MDB_cursor *mc = NULL;
		PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		if (mode == M_CURSOR)
			PERF_CHECK(mdb_cursor_open(txn, dbi, &mc));
		for (size_t j = i; j < end; j++) {
			size_t r = mode == M_RAND ? perm[j] : j;
			MDB_val k = { ks, (void *)(keys + r * ks) }, v = { vs, (void *)(vals + r * vs) };
			if (mc)
				PERF_CHECK(mdb_cursor_put(mc, &k, &v, 0));
			else
				PERF_CHECK(mdb_put(txn, dbi, &k, &v, 0));
		}
		if (mc)
			mdb_cursor_close(mc);
		PERF_CHECK(mdb_txn_commit(txn));
		i = end;
	}
}

#ifndef STOCK_LMDB
void dl_ov_spare_drop(void);
#endif

/* Minor faults so far; *cpu_us gets the user + system CPU time. */
static long minflt(double *cpu_us)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
	return ru.ru_minflt;
}

/* Resident set in KiB (/proc/self/statm), -1 where unknown. */
static long rss_kb(void)
{
	long pages = -1, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: %s DIR N KEYSIZE VALSIZE rand|seq|cursor [ARMS ROUNDS]\n",
		    argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	size_t n = strtoull(argv[2], NULL, 10), ks = strtoull(argv[3], NULL, 10),
	    vs = strtoull(argv[4], NULL, 10);
	int mode = !strcmp(argv[5], "rand") ? M_RAND : !strcmp(argv[5], "seq") ? M_SEQ : M_CURSOR;
	const char *arms = argc > 6 ? argv[6] : NULL;
	size_t rounds = argc > 7 ? strtoull(argv[7], NULL, 10) : 1;
	size_t narms = arms ? strlen(arms) : 1;
	if (ks < 8 || !n || n > UINT32_MAX || !rounds || !narms || narms > 8) {
		fprintf(stderr, "KEYSIZE must be at least 8, N in 1..2^32-1, 1-8 ARMS\n");
		return 2;
	}
	unsigned char *keys = malloc(n * ks), *vals = malloc(n * vs);
	uint32_t *perm = malloc(n * sizeof(uint32_t));
	double *ns = malloc(rounds * narms * sizeof(double));
	double *cpu = malloc(rounds * narms * sizeof(double));
	if (!keys || !vals || !perm || !ns || !cpu)
		return 1;
	for (size_t i = 0; i < n; i++) {
		fill(2 * (uint64_t)i, 0x6B65795F66696C6Cull, keys + i * ks, ks);
		fill(2 * (uint64_t)i, 0x76616C5F66696C6Cull, vals + i * vs, vs);
		perm[i] = (uint32_t)i;
	}
	uint64_t s = 0x5EED0000ull + n;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(perf_splitmix(&s) % (i + 1));
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	long flt_puts[8] = { 0 }, flt_env[8] = { 0 };
	for (size_t r = 0; r < rounds; r++) {
		for (size_t a = 0; a < narms; a++) {
#ifndef STOCK_LMDB
			if (arms && arms[a] == 'd')
				dl_ov_spare_drop();
#endif
			perf_fresh_env_dir(dir);
			double c0, c1, c2, c3;
			long f0 = minflt(&c0);
			MDB_env *env;
			MDB_txn *txn;
			MDB_dbi dbi;
			PERF_CHECK(mdb_env_create(&env));
			PERF_CHECK(mdb_env_set_mapsize(env, (size_t)4 << 30));
			PERF_CHECK(mdb_env_open(env, dir, 0, 0644));
			PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
			PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
			PERF_CHECK(mdb_txn_commit(txn));

			long f1 = minflt(&c1);
			double t0 = perf_now_ns();
			run_puts(env, dbi, n, keys, ks, vals, vs, perm, mode);
			double t1 = perf_now_ns();
			long f2 = minflt(&c2);

			MDB_stat st;
			PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
			PERF_CHECK(mdb_stat(txn, dbi, &st));
			mdb_txn_abort(txn);
			if (st.ms_entries != n) {
				fprintf(stderr, "%zu entries, expected %zu\n", (size_t)st.ms_entries, n);
				return 1;
			}
			mdb_env_close(env);
			long f3 = minflt(&c3);
			ns[a * rounds + r] = (t1 - t0) / n;
			cpu[a * rounds + r] = (c2 - c1) * 1e3 / n;
			/* Round 0 fills the process's heap: the means leave it out. */
			if (r || rounds == 1) {
				flt_puts[a] += f2 - f1;
				flt_env[a] += f3 - f0;
			}
			printf("engine=%s n=%zu k=%zu v=%zu mode=%s",
#ifdef STOCK_LMDB
			    "lmdb",
#else
			    "dlmdb",
#endif
			    n, ks, vs, argv[5]);
			if (arms)
				printf(" arm=%c round=%zu", arms[a], r);
			printf(" ns_per_put=%.1f cpu_ns_per_put=%.0f minflt_puts=%ld minflt_env=%ld"
			    " rss_kb_closed=%ld depth=%u leaves=%zu branches=%zu\n",
			    (t1 - t0) / n, (c2 - c1) * 1e3 / n, f2 - f1, f3 - f0, rss_kb(), st.ms_depth,
			    (size_t)st.ms_leaf_pages, (size_t)st.ms_branch_pages);
		}
	}
	for (size_t a = 0; arms && a < narms; a++) {
		qsort(ns + a * rounds, rounds, sizeof(double), cmp_double);
		qsort(cpu + a * rounds, rounds, sizeof(double), cmp_double);
		size_t m = rounds > 1 ? rounds - 1 : 1;
		printf("arm %zu (%c): median ns_per_put=%.1f cpu_ns_per_put=%.0f"
		    " mean minflt_puts=%.1f minflt_env=%.1f (rounds after the first)\n",
		    a, arms[a], ns[a * rounds + rounds / 2], cpu[a * rounds + rounds / 2],
		    (double)flt_puts[a] / m, (double)flt_env[a] / m);
	}
	free(ns);
	free(cpu);
	free(keys);
	free(vals);
	free(perm);
	return 0;
}
