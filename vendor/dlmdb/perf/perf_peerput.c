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
 */
#include "perf.h"

#include <stdint.h>
#include <string.h>

#define BATCH 10000

static uint64_t sm64(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The id big-endian in the first (up to) 8 bytes, then filler. */
static void fill(uint64_t id, uint64_t salt, unsigned char *out, size_t len)
{
	size_t n = len < 8 ? len : 8;
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)(id >> (56 - 8 * i));
	uint64_t s = id ^ salt;
	for (size_t off = n; off < len; off += 8) {
		uint64_t w = sm64(&s);
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

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: %s DIR N KEYSIZE VALSIZE rand|seq|cursor\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	size_t n = strtoull(argv[2], NULL, 10), ks = strtoull(argv[3], NULL, 10),
	    vs = strtoull(argv[4], NULL, 10);
	int mode = !strcmp(argv[5], "rand") ? M_RAND : !strcmp(argv[5], "seq") ? M_SEQ : M_CURSOR;
	if (ks < 8 || !n || n > UINT32_MAX) {
		fprintf(stderr, "KEYSIZE must be at least 8, N in 1..2^32-1\n");
		return 2;
	}
	unsigned char *keys = malloc(n * ks), *vals = malloc(n * vs);
	uint32_t *perm = malloc(n * sizeof(uint32_t));
	if (!keys || !vals || !perm)
		return 1;
	for (size_t i = 0; i < n; i++) {
		fill(2 * (uint64_t)i, 0x6B65795F66696C6Cull, keys + i * ks, ks);
		fill(2 * (uint64_t)i, 0x76616C5F66696C6Cull, vals + i * vs, vs);
		perm[i] = (uint32_t)i;
	}
	uint64_t s = 0x5EED0000ull + n;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(sm64(&s) % (i + 1));
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	perf_fresh_env_dir(dir);
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, (size_t)4 << 30));
	PERF_CHECK(mdb_env_open(env, dir, 0, 0644));
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	PERF_CHECK(mdb_txn_commit(txn));

	double t0 = perf_now_ns();
	run_puts(env, dbi, n, keys, ks, vals, vs, perm, mode);
	double t1 = perf_now_ns();

	MDB_stat st;
	PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	PERF_CHECK(mdb_stat(txn, dbi, &st));
	mdb_txn_abort(txn);
	if (st.ms_entries != n) {
		fprintf(stderr, "%zu entries, expected %zu\n", (size_t)st.ms_entries, n);
		return 1;
	}
	printf("engine=%s n=%zu k=%zu v=%zu mode=%s ns_per_put=%.1f depth=%u leaves=%zu branches=%zu\n",
#ifdef STOCK_LMDB
	    "lmdb",
#else
	    "dlmdb",
#endif
	    n, ks, vs, argv[5], (t1 - t0) / n, st.ms_depth, (size_t)st.ms_leaf_pages,
	    (size_t)st.ms_branch_pages);
	mdb_env_close(env);
	free(keys);
	free(vals);
	free(perm);
	return 0;
}
