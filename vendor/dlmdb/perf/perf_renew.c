/*
 * perf_renew - the txns suite's read-transaction rows as one C loop:
 * mdb_txn_reset + mdb_txn_renew on one read txn (default), or
 * mdb_txn_begin(MDB_RDONLY) + mdb_txn_abort with "begin-abort".
 *
 * usage: perf_renew DIR [ITERATIONS] [begin-abort]
 */
#include "perf.h"
#include <string.h>

static void seed_store(MDB_env *env, MDB_dbi *dbi)
{
	MDB_txn *txn;
	MDB_val k = { 1, "a" }, v = { 1, "b" };
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_dbi_open(txn, "t", MDB_CREATE, dbi));
	PERF_CHECK(mdb_put(txn, *dbi, &k, &v, 0));
	PERF_CHECK(mdb_txn_commit(txn));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [ITERATIONS] [begin-abort]\n", argv[0]);
		return 2;
	}
	long iterations = argc > 2 ? atol(argv[2]) : 1000000;
	int begin_abort = argc > 3 && !strcmp(argv[3], "begin-abort");
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_maxdbs(env, 4));
	PERF_CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	PERF_CHECK(mdb_env_open(env, argv[1], 0, 0644));
	seed_store(env, &dbi);

	double start = perf_now_ns();
	if (begin_abort) {
		for (long i = 0; i < iterations; i++) {
			PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
			mdb_txn_abort(txn);
		}
	} else {
		PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		for (long i = 0; i < iterations; i++) {
			mdb_txn_reset(txn);
			PERF_CHECK(mdb_txn_renew(txn));
		}
		mdb_txn_abort(txn);
	}
	double elapsed = perf_now_ns() - start;
	mdb_env_close(env);
	printf("%s %.2f ns/op\n", begin_abort ? "begin+abort" : "reset+renew",
	    elapsed / iterations);
	return 0;
}
