/* A2: parent cursors while a child txn is active (compare with stock). */
#include "lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#define E(x) do { int rc_ = (x); if (rc_) { printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(rc_)); exit(1); } } while (0)
static void show(const char *w, int rc, MDB_val *k, MDB_val *d)
{
	if (rc) printf("%-28s rc=%d (%s)\n", w, rc, mdb_strerror(rc));
	else printf("%-28s ok %.*s=%.*s\n", w, (int)k->mv_size, (char *)k->mv_data, (int)d->mv_size, (char *)d->mv_data);
}
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *p, *c; MDB_dbi dbi; MDB_cursor *pc, *cc;
	char cmd[256]; snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", argv[1], argv[1]); system(cmd);
	E(mdb_env_create(&env)); E(mdb_env_open(env, argv[1], 0, 0644));
	E(mdb_txn_begin(env, NULL, 0, &p)); E(mdb_dbi_open(p, NULL, 0, &dbi));
	MDB_val a = {1, "a"}, b = {1, "b"}, x = {1, "x"}, y = {1, "y"}, k, d;
	E(mdb_put(p, dbi, &a, &x, 0)); E(mdb_put(p, dbi, &b, &x, 0));
	E(mdb_cursor_open(p, dbi, &pc));
	show("parent FIRST", mdb_cursor_get(pc, &k, &d, MDB_FIRST), &k, &d);
	E(mdb_txn_begin(env, p, 0, &c));
	printf("cursor_txn(pc)==child: %d\n", mdb_cursor_txn(pc) == c);
	show("pc GET_CURRENT in child", mdb_cursor_get(pc, &k, &d, MDB_GET_CURRENT), &k, &d);
	show("pc NEXT in child", mdb_cursor_get(pc, &k, &d, MDB_NEXT), &k, &d);
	int rc = mdb_cursor_put(pc, &a, &y, 0); printf("pc put a=y in child rc=%d\n", rc);
	rc = mdb_get(p, dbi, &a, &d); printf("mdb_get(parent) rc=%d\n", rc);
	rc = mdb_put(p, dbi, &a, &y, 0); printf("mdb_put(parent) rc=%d\n", rc);
	rc = mdb_cursor_open(p, dbi, &cc); printf("cursor_open(parent) rc=%d\n", rc);
	E(mdb_cursor_open(c, dbi, &cc));
	show("child cursor FIRST", mdb_cursor_get(cc, &k, &d, MDB_FIRST), &k, &d);
	mdb_cursor_close(cc);
	if (argc > 2) { E(mdb_txn_commit(c)); printf("child committed\n"); } else { mdb_txn_abort(c); printf("child aborted\n"); }
	printf("cursor_txn(pc)==parent: %d\n", mdb_cursor_txn(pc) == p);
	show("pc GET_CURRENT after", mdb_cursor_get(pc, &k, &d, MDB_GET_CURRENT), &k, &d);
	show("pc FIRST after", mdb_cursor_get(pc, &k, &d, MDB_FIRST), &k, &d);
	mdb_cursor_close(pc); mdb_txn_abort(p); mdb_env_close(env);
	return 0;
}
