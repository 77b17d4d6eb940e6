/* dev/bench.c - microbenchmark; build against our engine or (-DSTOCK) liblmdb. */
#ifdef STOCK
#include <lmdb.h>
#else
#include "../lmdb.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c;
	long N = argc > 2 ? atol(argv[2]) : 1000000;
	char kb[32], vb[128];
	memset(vb, 'v', sizeof vb);
	CHECK(mdb_env_create(&env));
	CHECK(mdb_env_set_mapsize(env, 4ul << 30));
	CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	double t0 = now();
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	for (long i = 0; i < N; i++) {
		MDB_val k = { (size_t)sprintf(kb, "%016ld", i), kb }, d = { 100, vb };
		CHECK(mdb_put(txn, dbi, &k, &d, 0));
		if (i % 10000 == 9999) { CHECK(mdb_txn_commit(txn)); CHECK(mdb_txn_begin(env, NULL, 0, &txn)); }
	}
	CHECK(mdb_txn_commit(txn));
	double t1 = now();
	printf("seq_put      %8.0f ns/op\n", (t1 - t0) * 1e9 / N);
	t0 = now();
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	long found = 0;
	for (long i = 0; i < N; i++) {
		MDB_val k = { (size_t)sprintf(kb, "%016ld", (long)(rnd() % N)), kb }, d;
		if (mdb_get(txn, dbi, &k, &d) == 0) found++;
	}
	mdb_txn_abort(txn);
	t1 = now();
	printf("rand_get     %8.0f ns/op (%ld)\n", (t1 - t0) * 1e9 / N, found);
	t0 = now();
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k, d; long n = 0; size_t sum = 0;
	while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) { n++; sum += d.mv_size; }
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	t1 = now();
	printf("scan         %8.0f ns/op (%ld)\n", (t1 - t0) * 1e9 / n, n);
	t0 = now();
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	for (long i = 0; i < N; i++) {
		MDB_val k2 = { (size_t)sprintf(kb, "%016ld", (long)(rnd() % N)), kb }, d2 = { 100, vb };
		CHECK(mdb_put(txn, dbi, &k2, &d2, 0));
		if (i % 10000 == 9999) { CHECK(mdb_txn_commit(txn)); CHECK(mdb_txn_begin(env, NULL, 0, &txn)); }
	}
	CHECK(mdb_txn_commit(txn));
	t1 = now();
	printf("rand_update  %8.0f ns/op\n", (t1 - t0) * 1e9 / N);
	t0 = now();
	for (long i = 0; i < N / 100; i++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		for (int j = 0; j < 10; j++) {
			MDB_val k2 = { (size_t)sprintf(kb, "x%015ld", (long)(rnd() % N)), kb }, d2 = { 50, vb };
			CHECK(mdb_put(txn, dbi, &k2, &d2, 0));
		}
		CHECK(mdb_txn_commit(txn));
	}
	t1 = now();
	printf("small_txn    %8.0f ns/txn\n", (t1 - t0) * 1e9 / (N / 100));
	t0 = now();
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	long dels = 0;
	for (long i = 0; i < N; i++) {
		MDB_val k2 = { (size_t)sprintf(kb, "%016ld", (long)(rnd() % N)), kb };
		if (mdb_del(txn, dbi, &k2, NULL) == 0) dels++;
		if (i % 10000 == 9999) { CHECK(mdb_txn_commit(txn)); CHECK(mdb_txn_begin(env, NULL, 0, &txn)); }
	}
	CHECK(mdb_txn_commit(txn));
	t1 = now();
	printf("rand_del     %8.0f ns/op (%ld)\n", (t1 - t0) * 1e9 / N, dels);
	t0 = now();
	for (long i = 0; i < N; i++) {
		CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		mdb_txn_abort(txn);
	}
	t1 = now();
	printf("rtxn         %8.0f ns/op\n", (t1 - t0) * 1e9 / N);
	MDB_envinfo info; mdb_env_info(env, &info);
	printf("last_pg      %zu\n", (size_t)info.me_last_pgno);
	mdb_env_close(env);
	return 0;
}
