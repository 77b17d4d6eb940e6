/* a6_ins.c - cursor state after a foreign delete then a foreign insert
 * (plain and DUPSORT), printed so stock and ours can be diffed. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "lmdb.h"
#define V(s) (MDB_val){strlen(s), (void *)(s)}
static void show(const char *tag, MDB_cursor *c, MDB_cursor_op op)
{
	MDB_val k = {0, 0}, d = {0, 0};
	int rc = mdb_cursor_get(c, &k, &d, op);
	if (rc) printf("  %s rc=%d\n", tag, rc);
	else printf("  %s %.*s/%.*s\n", tag, (int)k.mv_size, (char *)k.mv_data, (int)d.mv_size, (char *)d.mv_data);
}
static void run(const char *ins, unsigned dflags, int how, MDB_cursor_op op, const char *on)
{
	MDB_env *env; MDB_txn *t; MDB_dbi dbi; MDB_cursor *c1;
	system("rm -rf /tmp/a6/db && mkdir -p /tmp/a6/db");
	mdb_env_create(&env); mdb_env_set_maxdbs(env, 4);
	mdb_env_open(env, "/tmp/a6/db", 0, 0644);
	mdb_txn_begin(env, NULL, 0, &t);
	mdb_dbi_open(t, "x", MDB_CREATE | dflags, &dbi);
	const char *ks[] = {"a", "b", "c", "d"};
	for (int i = 0; i < 4; i++) { MDB_val k = V(ks[i]), d = V("1"); mdb_put(t, dbi, &k, &d, 0); }
	mdb_cursor_open(t, dbi, &c1);
	MDB_val k = V("b"), d;
	mdb_cursor_get(c1, &k, &d, MDB_SET);
	if (how == 0) { k = V("b"); mdb_del(t, dbi, &k, NULL); }
	else mdb_cursor_del(c1, 0);
	if (ins) { MDB_val k2 = V(ins), d2 = V("9"); mdb_put(t, dbi, &k2, &d2, 0); }
	printf("%s ins=%s dup=%d:", how ? "cdel" : "del", ins ? ins : "-", !!dflags);
	show(on, c1, op);
	mdb_cursor_close(c1); mdb_txn_abort(t); mdb_env_close(env);
}
int main(void)
{
	const char *ins[] = {NULL, "0", "a", "bb", "c", "cc", "z"};
	for (int how = 0; how < 2; how++)
	for (unsigned df = 0; df <= MDB_DUPSORT; df += MDB_DUPSORT)
	for (int i = 0; i < 7; i++) {
		run(ins[i], df, how, MDB_NEXT, "NEXT");
		run(ins[i], df, how, MDB_PREV, "PREV");
		run(ins[i], df, how, MDB_GET_CURRENT, "CUR");
		run(ins[i], df, how, MDB_NEXT_NODUP, "NEXT_NODUP");
	}
	return 0;
}
