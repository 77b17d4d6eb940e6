/* dev/mk.c - write a store with several named DBs (odd keys, big values,
 * deletes) for cross-checking with stock tools.  usage: mk <dir> [lmdb|v1] */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi a, b, c;
	unsigned fl = 0;
	if (argc > 2 && !strcmp(argv[2], "lmdb")) fl = MDB_FORMAT_LMDB;
	if (argc > 2 && !strcmp(argv[2], "v1")) fl = MDB_FORMAT_DLMDB_V1;
	CHECK(mdb_env_create(&env));
	CHECK(mdb_env_set_mapsize(env, 64 << 20));
	CHECK(mdb_env_set_maxdbs(env, 8));
	CHECK(mdb_env_open(env, argv[1], fl, 0644));
	static char vb[100000];
	for (int t = 0; t < 6; t++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		CHECK(mdb_dbi_open(txn, "abc", MDB_CREATE, &a));
		CHECK(mdb_dbi_open(txn, "bigvals", MDB_CREATE, &b));
		CHECK(mdb_dbi_open(txn, "ints", MDB_CREATE | MDB_INTEGERKEY, &c));
		for (int i = 0; i < 3000; i++) {
			char kb[40]; int kl = sprintf(kb, "key-%d-%.*s", (i * 7919) % 3001, i % 5, "xxxxx");
			int vl = (i * 13 + t) % 300;
			memset(vb, 'a' + (i + t) % 26, vl);
			MDB_val k = { kl, kb }, d = { vl, vb };
			CHECK(mdb_put(txn, a, &k, &d, 0));
			if (i % 3 == t % 3) CHECK(mdb_del(txn, a, &k, NULL));
			if (i % 50 == 0) {
				MDB_val d2 = { (size_t)(i * 37 + t * 1000) % 90000, vb };
				CHECK(mdb_put(txn, b, &k, &d2, 0));
			}
			size_t ik = (size_t)i * 1000003u;
			MDB_val k3 = { sizeof(ik), &ik }, d3 = { 5, "hello" };
			if (t < 2) CHECK(mdb_put(txn, c, &k3, &d3, 0));
			else if (i % 4 == t % 4) { int r = mdb_del(txn, c, &k3, NULL); if (r && r != MDB_NOTFOUND) CHECK(r); }
		}
		char mk[16]; sprintf(mk, "m%d", t);
		MDB_val k = { strlen(mk), mk }, d = { 3, "val" };
		CHECK(mdb_put(txn, 1, &k, &d, 0));
		CHECK(mdb_txn_commit(txn));
	}
	mdb_env_close(env);
	return 0;
}
