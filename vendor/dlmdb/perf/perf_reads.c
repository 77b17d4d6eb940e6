/*
 * perf_reads - the read rows of `bench peers` as plain C loops, for
 * instruction counts per operation under callgrind, ours against stock:
 *   get   mdb_get of every key, in a fixed random order
 *   seek  MDB_SET_RANGE on an absent key just below every key but the
 *         first (the inexact path), same order
 *   next  MDB_FIRST, then MDB_NEXT over every record
 * Record i has the key be64(2i), followed for KEYSIZE > 8 by bytes derived
 * from i, and a VALSIZE-byte value (100 unless given; values above about
 * 2 KiB go to overflow pages); the store is loaded in key order.  Each
 * phase is its own function (phase_get, phase_seek, phase_next), so
 *
 *   valgrind --tool=callgrind --toggle-collect=phase_get build/perf/perf_reads DIR 10000
 *
 * counts one phase alone; divide by ENTRIES.  Every result is checked.
 *
 * PHASES (default gsn) names the phases to run, in order: g get, s seek,
 * n next; so "s" counts a seek phase that runs on caches no get phase
 * warmed, and "sg" the get after it.  A leading '=' opens the store
 * already in DIR (made by an earlier run with the same ENTRIES, KEYSIZE
 * and VALSIZE) instead of loading a new one: under callgrind the load is
 * most of the run time.
 *
 * usage: perf_reads DIR [ENTRIES] [KEYSIZE 8..64] [VALSIZE 1..65536] [PHASES]
 */
#include "perf.h"
#include <stdint.h>
#include <string.h>

static unsigned keysize = 8, vsize = 100;

static void make_key(uint64_t i, unsigned char *k)
{
	uint64_t v = 2 * i;
	for (int b = 0; b < 8; b++)
		k[b] = (unsigned char)(v >> (8 * (7 - b)));
	for (unsigned b = 8; b < keysize; b++)
		k[b] = (unsigned char)(i * 131 + b * 7);
}

static void make_val(uint64_t i, unsigned char *v)
{
	for (unsigned b = 0; b < vsize; b++)
		v[b] = (unsigned char)(i + b);
}

static void load(MDB_env *env, MDB_dbi *dbi, uint64_t n)
{
	MDB_txn *txn = NULL;
	unsigned char kb[64], *vb = malloc(vsize);
	if (!vb)
		exit(1);
	for (uint64_t i = 0; i < n; i++) {
		if (!txn) {
			PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
			PERF_CHECK(mdb_dbi_open(txn, NULL, 0, dbi));
		}
		make_key(i, kb);
		make_val(i, vb);
		MDB_val k = { keysize, kb }, v = { vsize, vb };
		PERF_CHECK(mdb_put(txn, *dbi, &k, &v, 0));
		if ((i + 1) % 10000 == 0 || i + 1 == n) {
			PERF_CHECK(mdb_txn_commit(txn));
			txn = NULL;
		}
	}
	free(vb);
}

static void bad(const char *what, uint64_t i)
{
	fprintf(stderr, "perf_reads: %s: wrong result for record %llu\n", what,
	    (unsigned long long)i);
	exit(1);
}

__attribute__((noinline)) static void phase_get(MDB_txn *txn, MDB_dbi dbi,
	const uint64_t *order, uint64_t n)
{
	unsigned char kb[64];
	for (uint64_t j = 0; j < n; j++) {
		uint64_t i = order[j];
		make_key(i, kb);
		MDB_val k = { keysize, kb }, v;
		if (mdb_get(txn, dbi, &k, &v) || v.mv_size != vsize ||
		    ((unsigned char *)v.mv_data)[0] != (unsigned char)i)
			bad("get", i);
	}
}

__attribute__((noinline)) static void phase_seek(MDB_cursor *cur, const uint64_t *order,
	uint64_t n)
{
	unsigned char kb[64];
	for (uint64_t j = 0; j < n; j++) {
		uint64_t i = order[j];
		if (!i)
			continue;
		/* be64(2i - 1) followed by 0xff bytes: absent, just below key i. */
		uint64_t v = 2 * i - 1;
		for (int b = 0; b < 8; b++)
			kb[b] = (unsigned char)(v >> (8 * (7 - b)));
		memset(kb + 8, 0xff, keysize - 8);
		MDB_val k = { keysize, kb }, d;
		if (mdb_cursor_get(cur, &k, &d, MDB_SET_RANGE) ||
		    ((unsigned char *)d.mv_data)[0] != (unsigned char)i)
			bad("seek", i);
	}
}

__attribute__((noinline)) static void phase_next(MDB_cursor *cur, uint64_t n)
{
	MDB_val k, d;
	uint64_t seen = 0;
	int rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST);
	while (rc == 0) {
		if (((unsigned char *)d.mv_data)[0] != (unsigned char)seen)
			bad("next", seen);
		seen++;
		rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT);
	}
	if (rc != MDB_NOTFOUND || seen != n)
		bad("next (count)", seen);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [ENTRIES] [KEYSIZE 8..64] [VALSIZE 1..65536] "
		    "[PHASES]\n",
		    argv[0]);
		return 2;
	}
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000;
	if (argc > 3)
		keysize = (unsigned)atoi(argv[3]);
	if (argc > 4)
		vsize = (unsigned)atoi(argv[4]);
	const char *phases = argc > 5 ? argv[5] : "gsn";
	int reuse = phases[0] == '=';
	phases += reuse;
	if (n < 2 || keysize < 8 || keysize > 64 || vsize < 1 || vsize > 65536) {
		fprintf(stderr, "perf_reads: ENTRIES >= 2, KEYSIZE 8..64, VALSIZE 1..65536\n");
		return 2;
	}
	if (!reuse)
		perf_fresh_env_dir(argv[1]);
	MDB_env *env;
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_dbi dbi;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, 4ul << 30));
	PERF_CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	if (reuse) {
		PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
		mdb_txn_abort(txn);
	} else {
		load(env, &dbi, n);
	}

	uint64_t *order = perf_shuffled(n, 42);

	PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	PERF_CHECK(mdb_cursor_open(txn, dbi, &cur));
	double tg = 0, ts = 0, tn = 0;
	for (const char *p = phases; *p; p++) {
		double t0 = perf_now_ns();
		if (*p == 'g')
			phase_get(txn, dbi, order, n);
		else if (*p == 's')
			phase_seek(cur, order, n);
		else if (*p == 'n')
			phase_next(cur, n);
		else {
			fprintf(stderr, "perf_reads: phases are g, s and n\n");
			return 2;
		}
		double t = perf_now_ns() - t0;
		*(*p == 'g' ? &tg : *p == 's' ? &ts : &tn) = t;
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	free(order);
	printf("get %.1f ns/op, seek %.1f ns/op, next %.1f ns/op (%llu entries, %u-byte keys, "
	    "%u-byte values)\n", tg / n, ts / n, tn / n,
	    (unsigned long long)n, keysize, vsize);
	return 0;
}
