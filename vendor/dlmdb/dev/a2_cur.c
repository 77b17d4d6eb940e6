/* A2: MDB_CURRENT on a one-item duplicate set must keep it a duplicate set. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define E(x) do { int rc_ = (x); if (rc_) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(rc_)); exit(1); } } while (0)
int main(void)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c;
	system("rm -rf /tmp/a2/cur && mkdir -p /tmp/a2/cur");
	E(mdb_env_create(&env)); E(mdb_env_set_maxdbs(env, 4));
	E(mdb_env_open(env, "/tmp/a2/cur", 0, 0644));
	E(mdb_txn_begin(env, NULL, 0, &txn));
	E(mdb_dbi_open(txn, "d", MDB_CREATE | MDB_DUPSORT, &dbi));
	MDB_val k = {1, "a"}, v1 = {2, "10"}, v2 = {2, "20"}, v3 = {2, "15"};
	E(mdb_put(txn, dbi, &k, &v1, 0)); E(mdb_put(txn, dbi, &k, &v2, 0));
	E(mdb_del(txn, dbi, &k, &v2));
	E(mdb_cursor_open(txn, dbi, &c));
	MDB_val kk = k, dd;
	E(mdb_cursor_get(c, &kk, &dd, MDB_SET));
	E(mdb_cursor_put(c, &k, &v3, MDB_CURRENT));
	MDB_val k0 = {0, NULL}, d0 = {0, NULL};
	E(mdb_cursor_get(c, &k0, &d0, MDB_LAST_DUP));
	printf("after CURRENT: key size %zu (0 = still a dup set) data %.*s\n", k0.mv_size, (int)d0.mv_size, (char *)d0.mv_data);
	mdb_cursor_close(c); mdb_txn_abort(txn); mdb_env_close(env);
	return 0;
}
