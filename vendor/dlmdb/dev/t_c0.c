#include "../lmdb.h"
#include <stdio.h>
#include <string.h>
static void p(const char *w, int rc, MDB_val *k) { printf("%s rc=%d %.*s\n", w, rc, rc ? 0 : (int)k->mv_size, rc ? "" : (char *)k->mv_data); }
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c0, *c2; MDB_val k, d = { 3, "abc" };
	mdb_env_create(&env); mdb_env_open(env, argv[1], 0, 0644);
	mdb_txn_begin(env, NULL, 0, &txn); mdb_dbi_open(txn, NULL, 0, &dbi);
	const char *keys[] = { "key00016", "key0017", "key0207", "key030", "key31" };
	for (int i = 0; i < 5; i++) { k.mv_size = strlen(keys[i]); k.mv_data = (void *)keys[i]; mdb_put(txn, dbi, &k, &d, 0); }
	mdb_cursor_open(txn, dbi, &c0); mdb_cursor_open(txn, dbi, &c2);
	int rc = mdb_cursor_get(c0, &k, &d, MDB_FIRST); p("first", rc, &k);
	rc = mdb_cursor_get(c0, &k, &d, MDB_PREV); p("prev", rc, &k);
	rc = mdb_cursor_del(c0, 0); p("del", rc, &k);
	rc = mdb_cursor_get(c0, &k, &d, MDB_PREV); p("prev", rc, &k);
	rc = mdb_cursor_get(c0, &k, &d, MDB_PREV); p("prev", rc, &k);
	k.mv_data = "key000239"; k.mv_size = 9; rc = mdb_cursor_put(c2, &k, &d, 0); p("cput2", rc, &k);
	k.mv_data = "key000311"; k.mv_size = 9; rc = mdb_put(txn, dbi, &k, &d, 0); p("put", rc, &k);
	rc = mdb_cursor_get(c0, &k, &d, MDB_GET_CURRENT); p("cur", rc, &k);
	rc = mdb_cursor_get(c0, &k, &d, MDB_NEXT); p("next", rc, &k);
	mdb_txn_abort(txn); mdb_env_close(env);
	return 0;
}
