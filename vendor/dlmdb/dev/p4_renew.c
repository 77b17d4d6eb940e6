/* dev/p4_renew.c - loop mdb_txn_reset + mdb_txn_renew on one read txn (the
 * bench's ro_reset_renew row), for callgrind; build against our engine or
 * (-DSTOCK) liblmdb.  Usage: p4_renew DIR [N] [ba]; with "ba" it loops
 * mdb_txn_begin(RDONLY) + mdb_txn_abort instead (ro_begin_abort). */
#ifdef STOCK
#include <lmdb.h>
#else
#include "../lmdb.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi;
	long N = argc > 2 ? atol(argv[2]) : 1000000;
	CHECK(mdb_env_create(&env));
	CHECK(mdb_env_set_maxdbs(env, 4));
	CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	CHECK(mdb_env_open(env, argv[1], 0, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, "t", MDB_CREATE, &dbi));
	MDB_val k = { 1, "a" }, d = { 1, "b" };
	CHECK(mdb_put(txn, dbi, &k, &d, 0));
	CHECK(mdb_txn_commit(txn));
	int ba = argc > 3 && !strcmp(argv[3], "ba");
	double t0 = now();
	if (ba) {
		for (long i = 0; i < N; i++) {
			CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
			mdb_txn_abort(txn);
		}
	}
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	for (long i = 0; !ba && i < N; i++) {
		mdb_txn_reset(txn);
		CHECK(mdb_txn_renew(txn));
	}
	double t1 = now();
	CHECK(mdb_get(txn, dbi, &k, &d));
	mdb_txn_abort(txn);
	mdb_env_close(env);
	printf("%s %.2f ns/op\n", ba ? "begin+abort" : "reset+renew", (t1 - t0) * 1e9 / N);
	return 0;
}
