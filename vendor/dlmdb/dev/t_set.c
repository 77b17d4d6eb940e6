#include "../lmdb.h"
#include <stdio.h>
#include <string.h>
static MDB_cursor *c;
static void op(const char *w, MDB_cursor_op o, const char *key) { MDB_val k = { key ? strlen(key) + 1 : 0, (void *)key }, d; int rc = mdb_cursor_get(c, &k, &d, o); printf(" %s=%s", w, rc ? (rc == MDB_NOTFOUND ? "NF" : "ERR") : (char *)k.mv_data); }
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_val k, d = { 3, "abc" };
	mdb_env_create(&env); mdb_env_open(env, argv[1], 0, 0644);
	mdb_txn_begin(env, NULL, 0, &txn); mdb_dbi_open(txn, NULL, 0, &dbi);
	mdb_cursor_open(txn, dbi, &c);
	const char *keys[] = { "a", "c", "e" };
	for (int i = 0; i < 3; i++) { k.mv_size = 2; k.mv_data = (void *)keys[i]; mdb_put(txn, dbi, &k, &d, 0); }
	const char *after[] = { "cur", "next", "prev" };
	MDB_cursor_op ao[] = { MDB_GET_CURRENT, MDB_NEXT, MDB_PREV };
	const char *probes[] = { "b", "0", "f" };
	MDB_cursor_op so[] = { MDB_SET, MDB_SET_KEY, MDB_SET_RANGE };
	for (int p = 0; p < 3; p++) for (int s = 0; s < 3; s++) for (int a = 0; a < 3; a++) {
		printf("%s/%d/%s:", probes[p], s, after[a]);
		op("set", so[s], probes[p]);
		op(after[a], ao[a], NULL);
		op("next", MDB_NEXT, NULL);
		printf("\n");
	}
	mdb_txn_abort(txn); mdb_env_close(env);
	return 0;
}
