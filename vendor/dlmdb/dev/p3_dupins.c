/* dev/p3_dupins.c - the dups suite's insert row in C: 50K keys x 20 16-byte
 * values in a shuffled (key, dup) order, 100K puts per txn (ours, or -DSTOCK -llmdb). */
#include "lmdb.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define CHECK(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(r_)); exit(1); } } while (0)
static uint64_t rs = 0x0D095EED;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
int main(int argc, char **argv)
{
	long nk = argc > 2 ? atol(argv[2]) : 50000, nd = 20, n = nk * nd;
	uint32_t *ord = malloc(n * sizeof *ord);
	for (long i = 0; i < n; i++) ord[i] = (uint32_t)i;
	for (long i = n - 1; i > 0; i--) { long j = (long)(rnd() % (uint64_t)(i + 1)); uint32_t t = ord[i]; ord[i] = ord[j]; ord[j] = t; }
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 4ul << 30)); mdb_env_set_maxdbs(env, 4);
	CHECK(mdb_env_open(env, argv[1], 0, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dbi)); CHECK(mdb_txn_commit(txn));
	struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
	char kb[32], vb[32];
	for (long i = 0; i < n; i++) {
		if (i % 100000 == 0) CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		long key = ord[i] / nd, d = ord[i] % nd;
		MDB_val k = { (size_t)sprintf(kb, "key-%012ld", key), kb };
		MDB_val v = { (size_t)sprintf(vb, "%04ld-%011ld", d, key), vb };
		CHECK(mdb_put(txn, dbi, &k, &v, 0));
		if (i % 100000 == 99999 || i == n - 1) CHECK(mdb_txn_commit(txn));
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("dup_insert %.0f ns/value\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	mdb_env_close(env);
	return 0;
}
