/*
 * perf_wcheck_put - put workloads for instruction counts of the write
 * path's page validation (every page a write txn copies is checked once).
 *   small: 20,000 txns of 5 random overwrites each into a 200K-key store
 *          (each txn copies a fresh root-to-leaf path: validation's worst case)
 *   bulk:  one txn of 200,000 random overwrites (validation amortised)
 * usage: perf_wcheck_put PATH small|bulk
 */
#include "perf.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(r_)); exit(1); } } while (0)
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; long N = 200000; char kb[32], vb[128];
	if (argc < 3)
		return 2;
	int small = !strcmp(argv[2], "small");
	memset(vb, 'v', sizeof vb);
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC | MDB_NOSUBDIR, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	for (long i = 0; i < N; i++) {
		MDB_val k = { (size_t)sprintf(kb, "%016ld", i), kb }, d = { 100, vb };
		CHECK(mdb_put(txn, dbi, &k, &d, MDB_APPEND));
	}
	CHECK(mdb_txn_commit(txn));
	long txns = small ? 20000 : 1, per = small ? 5 : N;
	for (long t = 0; t < txns; t++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		for (long i = 0; i < per; i++) {
			MDB_val k = { (size_t)sprintf(kb, "%016ld", (long)(rnd() % N)), kb };
			MDB_val d = { 60 + rnd() % 80, vb };	/* new size: node moves */
			CHECK(mdb_put(txn, dbi, &k, &d, 0));
		}
		CHECK(mdb_txn_commit(txn));
	}
	mdb_env_close(env);
	return 0;
}
