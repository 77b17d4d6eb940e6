/* a6_seq.c - replay a small op script on one DB with two cursors and print
 * every result, to diff stock LMDB against ours.  Args: db flags (decimal),
 * then ops:  P,k,d[,fl] (mdb_put)  D,k[,d] (mdb_del)  p<slot>,k,d[,fl]
 * (cursor put)  g<slot>,op[,k[,d]] (cursor get)  x<slot>[,fl] (cursor del)
 * n<slot> (count)  C (commit + reopen cursors unpositioned). */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "lmdb.h"
static MDB_val v(char *s) { MDB_val r = {s ? strlen(s) : 0, s}; return r; }
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *t; MDB_dbi dbi; MDB_cursor *c[2];
	system("rm -rf /tmp/a6/sq && mkdir -p /tmp/a6/sq");
	mdb_env_create(&env); mdb_env_set_maxdbs(env, 4);
	#ifdef MDB_FORMAT_LMDB
	mdb_env_open(env, "/tmp/a6/sq", MDB_FORMAT_LMDB, 0644);
#else
	mdb_env_open(env, "/tmp/a6/sq", 0, 0644);
#endif
	mdb_txn_begin(env, NULL, 0, &t);
	mdb_dbi_open(t, "x", MDB_CREATE | atoi(argv[1]), &dbi);
	mdb_cursor_open(t, dbi, &c[0]); mdb_cursor_open(t, dbi, &c[1]);
	for (int i = 2; i < argc; i++) {
		char *a[5] = {0}; int n = 0; char *s = strdup(argv[i]);
		for (char *p = strtok(s, ","); p && n < 5; p = strtok(NULL, ",")) a[n++] = p;
		int slot = a[0][1] ? a[0][1] - '0' : 0, rc = 0;
		MDB_val k = v(a[1]), d = v(a[2]);
		switch (a[0][0]) {
		case 'P': rc = mdb_put(t, dbi, &k, &d, a[3] ? atoi(a[3]) : 0); break;
		case 'D': rc = mdb_del(t, dbi, &k, a[2] ? &d : NULL); break;
		case 'p': rc = mdb_cursor_put(c[slot], &k, &d, a[3] ? atoi(a[3]) : 0); break;
		case 'x': rc = mdb_cursor_del(c[slot], a[1] ? atoi(a[1]) : 0); break;
		case 'n': { size_t m = 0; rc = mdb_cursor_count(c[slot], &m); printf("%-14s rc=%d n=%zu\n", argv[i], rc, m); continue; }
		case 'C': mdb_cursor_close(c[0]); mdb_cursor_close(c[1]); rc = mdb_txn_commit(t);
			{ int r1 = mdb_txn_begin(env, NULL, 0, &t), r2 = mdb_cursor_open(t, dbi, &c[0]), r3 = mdb_cursor_open(t, dbi, &c[1]); if (r1 || r2 || r3) printf("reopen %d %d %d\n", r1, r2, r3); } break;
		case 'g': {
			k = v(a[2]); d = v(a[3]);
			rc = mdb_cursor_get(c[slot], &k, &d, atoi(a[1]));
			if (!rc) { printf("%-14s %.*s/%.*s\n", argv[i], (int)k.mv_size, (char *)k.mv_data, (int)d.mv_size, (char *)d.mv_data); continue; }
		}
		}
		printf("%-14s rc=%d\n", argv[i], rc);
	}
	return 0;
}
