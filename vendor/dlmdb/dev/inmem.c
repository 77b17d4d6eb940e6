/* dev/inmem.c - MDB_INMEMORY smoke test: writes, reads, commits, reuse. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
int main(void)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; char kb[32], vb[300];
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 64 << 20)); CHECK(mdb_env_set_maxdbs(env, 2));
	CHECK(mdb_env_open(env, NULL, MDB_INMEMORY, 0));
	for (int t = 0; t < 50; t++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, "x", MDB_CREATE, &dbi));
		for (int i = 0; i < 2000; i++) { MDB_val k = { (size_t)sprintf(kb, "k%06d", (i * 7 + t) % 5000), kb }, d = { 100 + (size_t)(i % 200), vb }; memset(vb, 'a' + t % 26, sizeof vb); CHECK(mdb_put(txn, dbi, &k, &d, 0)); }
		CHECK(mdb_txn_commit(txn));
	}
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_stat st; CHECK(mdb_stat(txn, dbi, &st));
	MDB_val k = { 7, "k000049" }, d; CHECK(mdb_get(txn, dbi, &k, &d));
	printf("inmem ok: %zu entries, value %zu bytes '%c'\n", (size_t)st.ms_entries, d.mv_size, ((char *)d.mv_data)[0]);
	mdb_txn_abort(txn);
	MDB_envinfo info; mdb_env_info(env, &info); printf("last_pg %zu txn %zu\n", (size_t)info.me_last_pgno, (size_t)info.me_last_txnid);
	mdb_env_close(env);
	return 0;
}
