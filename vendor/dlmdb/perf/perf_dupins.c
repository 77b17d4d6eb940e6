/*
 * perf_dupins - the dups suite's insert row as one C loop: KEYS keys x 20
 * 16-byte values put in a shuffled (key, value) order, 100,000 puts per
 * write txn, into a DUPSORT database.
 *
 * usage: perf_dupins DIR [KEYS]
 */
#include "perf.h"
#include <stdint.h>

#define VALUES_PER_KEY 20
#define PUTS_PER_TXN 100000

static uint64_t xorshift_state = 0x0D095EED;

static uint64_t xorshift(void)
{
	xorshift_state ^= xorshift_state << 13;
	xorshift_state ^= xorshift_state >> 7;
	xorshift_state ^= xorshift_state << 17;
	return xorshift_state;
}

static uint32_t *shuffled_order(long n)
{
	uint32_t *order = malloc(n * sizeof *order);
	if (!order)
		exit(1);
	for (long i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (long i = n - 1; i > 0; i--) {
		long j = (long)(xorshift() % (uint64_t)(i + 1));
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	return order;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [KEYS]\n", argv[0]);
		return 2;
	}
	long keys = argc > 2 ? atol(argv[2]) : 50000;
	long n = keys * VALUES_PER_KEY;
	uint32_t *order = shuffled_order(n);
	MDB_env *env;
	MDB_txn *txn = NULL;
	MDB_dbi dbi;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, 4ul << 30));
	PERF_CHECK(mdb_env_set_maxdbs(env, 4));
	PERF_CHECK(mdb_env_open(env, argv[1], 0, 0644));
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dbi));
	PERF_CHECK(mdb_txn_commit(txn));

	char kbuf[32], vbuf[32];
	double start = perf_now_ns();
	for (long i = 0; i < n; i++) {
		if (i % PUTS_PER_TXN == 0)
			PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		long key = order[i] / VALUES_PER_KEY, dup = order[i] % VALUES_PER_KEY;
		MDB_val k = { (size_t)snprintf(kbuf, sizeof kbuf, "key-%012ld", key), kbuf };
		MDB_val v = { (size_t)snprintf(vbuf, sizeof vbuf, "%04ld-%011ld", dup, key), vbuf };
		PERF_CHECK(mdb_put(txn, dbi, &k, &v, 0));
		if (i % PUTS_PER_TXN == PUTS_PER_TXN - 1 || i == n - 1)
			PERF_CHECK(mdb_txn_commit(txn));
	}
	double elapsed = perf_now_ns() - start;
	mdb_env_close(env);
	free(order);
	printf("dup_insert %.0f ns/value\n", elapsed / n);
	return 0;
}
