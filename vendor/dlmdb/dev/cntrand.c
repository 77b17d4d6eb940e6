/* dev/cntrand.c - random writes to COUNTED DBs (plain and DUPSORT), then
 * every rank/count answer is checked against a full cursor walk. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static uint64_t rs;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static void check(MDB_txn *txn, MDB_dbi dbi, int dup)
{
	MDB_cursor *c; MDB_val k, d; uint64_t r = 0, n = 0;
	CHECK(mdb_cursor_open(txn, dbi, &c));
	int rc = mdb_cursor_get(c, &k, &d, MDB_FIRST);
	MDB_val prevk = { 0, NULL }; uint64_t keystart = 0;
	while (rc == 0) {
		if (!prevk.mv_data || k.mv_size != prevk.mv_size || memcmp(k.mv_data, prevk.mv_data, k.mv_size)) { keystart = r; prevk = k; }
		if (r % 7 == 0) {
			MDB_val k2, d2;
			CHECK(mdb_get_rank(txn, dbi, r, &k2, &d2));
			if (k2.mv_size != k.mv_size || memcmp(k2.mv_data, k.mv_data, k.mv_size) || d2.mv_size != d.mv_size || memcmp(d2.mv_data, d.mv_data, d.mv_size)) { fprintf(stderr, "get_rank %lu mismatch\n", (unsigned long)r); exit(1); }
			uint64_t kr;
			CHECK(mdb_get_key_rank(txn, dbi, &k, dup ? &d : NULL, &kr));
			if (kr != (dup ? r : r)) { fprintf(stderr, "key_rank %lu != %lu\n", (unsigned long)kr, (unsigned long)r); exit(1); }
			CHECK(mdb_get_key_rank(txn, dbi, &k, NULL, &kr));
			if (kr != keystart) { fprintf(stderr, "key_rank(NULL) %lu != %lu\n", (unsigned long)kr, (unsigned long)keystart); exit(1); }
			uint64_t cnt;
			if (!dup) { CHECK(mdb_count_range(txn, dbi, &k, NULL, MDB_COUNT_LOWER_INCL, &cnt)); }
			else { CHECK(mdb_range_count_values(txn, dbi, NULL, &k, 0, &cnt)); if (cnt != keystart) { fprintf(stderr, "range_count_values %lu != %lu\n", (unsigned long)cnt, (unsigned long)keystart); exit(1); } }
			uint64_t all; CHECK(mdb_count_all(txn, dbi, 0, &all));
			if (!dup && cnt != all - r) { fprintf(stderr, "count_range %lu != %lu\n", (unsigned long)cnt, (unsigned long)(all - r)); exit(1); }
		}
		r++; n++;
		rc = mdb_cursor_get(c, &k, &d, MDB_NEXT);
	}
	mdb_cursor_close(c);
	uint64_t all; CHECK(mdb_count_all(txn, dbi, 0, &all));
	if (all != n) { fprintf(stderr, "count_all %lu != %lu\n", (unsigned long)all, (unsigned long)n); exit(1); }
	MDB_val k2, d2;
	if (mdb_get_rank(txn, dbi, n, &k2, &d2) != MDB_NOTFOUND) { fprintf(stderr, "rank n should be NOTFOUND\n"); exit(1); }
}
int main(int argc, char **argv)
{
	(void)argc; MDB_env *env; MDB_txn *txn; MDB_dbi a, b; char kb[128], vb[64];
	rs = (uint64_t)atol(argv[3]) * 2654435761u + 11; long ops = atol(argv[2]);
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 1ul << 30)); CHECK(mdb_env_set_maxdbs(env, 4));
	CHECK(mdb_env_open(env, argv[1], argc > 4 ? MDB_FORMAT_DLMDB_V1 : 0, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, "plain", MDB_CREATE | MDB_COUNTED, &a));
	CHECK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_COUNTED | MDB_DUPSORT, &b));
	for (long op = 0; op < ops; op++) {
		int key = (int)(rnd() % 40000);
		MDB_val k = { (size_t)sprintf(kb, "key-%06d-%.*s", key, key % 60, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), kb };
		MDB_val d = { (size_t)sprintf(vb, "v%05d", (int)(rnd() % 3000)), vb };
		unsigned r = rnd() % 100; int rc;
		MDB_dbi db = (rnd() % 2) ? a : b;
		if (db == b) k.mv_size = (size_t)sprintf(kb, "k%03d", key % 300);
		if (r < 65) CHECK(mdb_put(txn, db, &k, &d, 0));
		else if (r < 95) { rc = mdb_del(txn, db, &k, (db == b && rnd() % 2) ? &d : NULL); if (rc && rc != MDB_NOTFOUND) CHECK(rc); }
		else { check(txn, a, 0); check(txn, b, 1); }
		if (rnd() % 500 == 0) {
			CHECK(mdb_txn_commit(txn));
			MDB_txn *rt; CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt)); check(rt, a, 0); check(rt, b, 1); mdb_txn_abort(rt);
			CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		}
	}
	CHECK(mdb_txn_commit(txn));
	MDB_txn *rt; CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt)); check(rt, a, 0); check(rt, b, 1);
	MDB_stat s1, s2; mdb_stat(rt, a, &s1); mdb_stat(rt, b, &s2); mdb_txn_abort(rt);
	printf("counted ok: plain %zu entries depth %u, dups %zu entries depth %u\n", (size_t)s1.ms_entries, s1.ms_depth, (size_t)s2.ms_entries, s2.ms_depth);
	mdb_env_close(env);
	return 0;
}
