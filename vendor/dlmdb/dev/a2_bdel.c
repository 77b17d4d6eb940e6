/* dev/a2_bdel.c - bench_dup with the delete loop and its commit timed apart. */
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
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(_r)); exit(1); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
int main(int argc, char **argv)
{
	(void)argc; MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c; char kb[32], vb[32];
	long N = 400000; int fixed = argc > 2;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 2ul << 30));
	CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, NULL, MDB_DUPSORT | (fixed ? MDB_DUPFIXED : 0), &dbi));
	double t0 = now();
	for (long i = 0; i < N; i++) {
		MDB_val k = { (size_t)sprintf(kb, "key%05d", (int)(rnd() % 2000)), kb };
		MDB_val d = { (size_t)sprintf(vb, "%012lu", (unsigned long)(rnd() % 100000000)), vb };
		CHECK(mdb_put(txn, dbi, &k, &d, 0));
		if (i % 20000 == 19999) { CHECK(mdb_txn_commit(txn)); CHECK(mdb_txn_begin(env, NULL, 0, &txn)); }
	}
	CHECK(mdb_txn_commit(txn));
	double t1 = now();
	printf("dup_put  %6.0f ns/op\n", (t1 - t0) * 1e9 / N);
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)); CHECK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k, d; long n = 0; t0 = now();
	while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) n++;
	t1 = now();
	printf("dup_scan %6.0f ns/op (%ld)\n", (t1 - t0) * 1e9 / n, n);
	t0 = now(); long f = 0;
	for (long i = 0; i < 200000; i++) { MDB_val kk = { (size_t)sprintf(kb, "key%05d", (int)(rnd() % 2000)), kb }, dd = { (size_t)sprintf(vb, "%012lu", (unsigned long)(rnd() % 100000000)), vb }; if (mdb_cursor_get(c, &kk, &dd, MDB_GET_BOTH_RANGE) == 0) f++; }
	t1 = now();
	printf("dup_range %5.0f ns/op (%ld)\n", (t1 - t0) * 1e9 / 200000, f);
	mdb_cursor_close(c); mdb_txn_abort(txn);
	t0 = now();
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); long dl = 0;
	for (long i = 0; i < 200000; i++) { MDB_val kk = { (size_t)sprintf(kb, "key%05d", (int)(rnd() % 2000)), kb }; MDB_cursor *cc; CHECK(mdb_cursor_open(txn, dbi, &cc)); MDB_val dd; if (mdb_cursor_get(cc, &kk, &dd, MDB_SET) == 0 && mdb_cursor_del(cc, 0) == 0) dl++; mdb_cursor_close(cc); }
	double tm = now();
	CHECK(mdb_txn_commit(txn)); t1 = now();
	printf("dup_del  %6.0f ns/op (%ld), loop %.3fs commit %.3fs\n", (t1 - t0) * 1e9 / 200000, dl, tm - t0, t1 - tm);
	MDB_envinfo info; mdb_env_info(env, &info); printf("last_pg %zu\n", (size_t)info.me_last_pgno);
	mdb_env_close(env); return 0;
}
