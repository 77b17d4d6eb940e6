/* dlmdb_pfxops - callgrind probe for one prefix-compressed insert and
 * one get: N compress_bench-style keys ('p' x 16 + 16 hex digits, 64-byte
 * values) put in random order into a PREFIX_COMPRESSION|COUNTED main DB in
 * one txn, then N random mdb_get in a read txn.  argv: dir [N] [plain].
 * Read mdb_put / mdb_get inclusive counts with callgrind_annotate. */
#include "perf.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(r_)); exit(1); } } while (0)
static uint64_t sm(uint64_t *s) { uint64_t z = (*s += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000;
	unsigned fl = MDB_CREATE | MDB_COUNTED | (argc > 3 ? 0 : MDB_PREFIX_COMPRESSION);
	perf_fresh_env_dir(argv[1]);
	uint32_t *p = malloc(n * 4); uint64_t s = 7;
	for (long i = 0; i < n; i++) p[i] = (uint32_t)i;
	for (long i = n - 1; i > 0; i--) { long j = (long)(sm(&s) % (uint64_t)(i + 1)); uint32_t t = p[i]; p[i] = p[j]; p[j] = t; }
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	CHECK(mdb_env_open(env, argv[1], MDB_NOLOCK, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, NULL, fl, &dbi)); CHECK(mdb_txn_commit(txn));
	char kb[40]; unsigned char vb[64]; MDB_val k = { 32, kb }, v = { 64, vb };
	memset(kb, 'p', 16);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	for (long i = 0; i < n; i++) {
		sprintf(kb + 16, "%016llx", (unsigned long long)p[i]);
		for (int j = 0; j < 64; j++) vb[j] = (unsigned char)(p[i] + j);
		CHECK(mdb_put(txn, dbi, &k, &v, 0));
	}
	CHECK(mdb_txn_commit(txn));
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	s = 1;
	for (long i = 0; i < n; i++) {
		sprintf(kb + 16, "%016llx", (unsigned long long)(sm(&s) % (uint64_t)n));
		CHECK(mdb_get(txn, dbi, &k, &v));
	}
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return 0;
}
