#include "../lmdb.h"
#include <stdio.h>
#include <string.h>
static MDB_cursor *c;
static void op(const char *w, MDB_cursor_op o) { MDB_val k, d; int rc = mdb_cursor_get(c, &k, &d, o); printf(" %s=%s", w, rc ? "NF" : (char *)k.mv_data); }
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_val k, d = { 3, "abc" };
	mdb_env_create(&env); mdb_env_open(env, argv[1], 0, 0644);
	mdb_txn_begin(env, NULL, 0, &txn); mdb_dbi_open(txn, NULL, 0, &dbi);
	mdb_cursor_open(txn, dbi, &c);
	const char *seqs[][4] = { {"cur","next",0}, {"nextdup","nextdup","next",0}, {"prevdup","next",0}, {"nextdup","cur","next",0}, {"prev","next",0}, {"next","next",0}, {"nodup","next",0}, {"prevnodup","next",0}, {"cur","cur","prev",0} };
	for (unsigned s = 0; s < sizeof seqs / sizeof seqs[0]; s++) {
		const char *keys[] = { "a", "b", "c", "d", "e" };
		for (int i = 0; i < 5; i++) { k.mv_size = 2; k.mv_data = (void *)keys[i]; mdb_put(txn, dbi, &k, &d, 0); }
		k.mv_data = "c"; k.mv_size = 2; mdb_cursor_get(c, &k, &d, MDB_SET);
		mdb_cursor_del(c, 0);
		printf("seq%u:", s);
		for (int j = 0; j < 4 && seqs[s][j]; j++) {
			const char *w = seqs[s][j];
			MDB_cursor_op o = !strcmp(w,"cur") ? MDB_GET_CURRENT : !strcmp(w,"next") ? MDB_NEXT : !strcmp(w,"nextdup") ? MDB_NEXT_DUP : !strcmp(w,"prevdup") ? MDB_PREV_DUP : !strcmp(w,"prev") ? MDB_PREV : !strcmp(w,"nodup") ? MDB_NEXT_NODUP : MDB_PREV_NODUP;
			op(w, o);
		}
		printf("\n");
	}
	/* delete last item */
	k.mv_data = "e"; k.mv_size = 2; mdb_cursor_get(c, &k, &d, MDB_SET); mdb_cursor_del(c, 0);
	printf("last:"); op("cur", MDB_GET_CURRENT); op("next", MDB_NEXT); op("nextdup", MDB_NEXT_DUP); op("prev", MDB_PREV); printf("\n");
	k.mv_data = "d"; k.mv_size = 2; mdb_cursor_get(c, &k, &d, MDB_SET); mdb_cursor_del(c, 0);
	printf("last2:"); op("nextdup", MDB_NEXT_DUP); op("prev", MDB_PREV); printf("\n");
	k.mv_data = "a"; k.mv_size = 2; mdb_cursor_get(c, &k, &d, MDB_SET); mdb_cursor_del(c, 0);
	printf("first:"); op("prev", MDB_PREV); op("cur", MDB_GET_CURRENT); op("next", MDB_NEXT); printf("\n");
	mdb_txn_abort(txn); mdb_env_close(env);
	return 0;
}
