#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(_r)); exit(1); } } while (0)
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; long N = 500000; char kb[32], vb[128];
	memset(vb, 'v', sizeof vb);
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 4ul << 30));
	CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	for (long i = 0; i < N; i++) { MDB_val k = { (size_t)sprintf(kb, "%016ld", i), kb }, d = { 100, vb }; CHECK(mdb_put(txn, dbi, &k, &d, MDB_APPEND)); }
	CHECK(mdb_txn_commit(txn));
	for (int r = 0; r < 3; r++) {
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	for (long i = 0; i < N; i++) {
		MDB_val k2 = { (size_t)sprintf(kb, "%016ld", (long)(rnd() % N)), kb }, d2 = { 100, vb };
		CHECK(mdb_put(txn, dbi, &k2, &d2, 0));
		if (i % 10000 == 9999) { CHECK(mdb_txn_commit(txn)); CHECK(mdb_txn_begin(env, NULL, 0, &txn)); }
	}
	CHECK(mdb_txn_commit(txn));
	}
	mdb_env_close(env);
	return 0;
}
