/* dev/duptrace.c - random read-only cursor ops on a DUPSORT fixture; built
 * for our engine and (-DSTOCK) liblmdb, outputs must match.
 * usage: duptrace <file> <ops> <seed> */
#ifdef STOCK
#include <lmdb.h>
#else
#include "../lmdb.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
static uint64_t rs;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static void hex(const char *t, MDB_val *v) { printf(" %s=", t); if (!v->mv_data) { printf("(null)"); return; } for (size_t i = 0; i < v->mv_size && i < 24; i++) printf("%02x", ((unsigned char *)v->mv_data)[i]); printf("/%zu", v->mv_size); }
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_cursor *c;
	rs = (uint64_t)atol(argv[3]) * 2654435761u + 3;
	long ops = atol(argv[2]);
	mdb_env_create(&env); mdb_env_set_maxdbs(env, 16);
#ifdef STOCK
	unsigned fl = MDB_RDONLY | MDB_NOSUBDIR;
#else
	unsigned fl = MDB_RDONLY | MDB_NOSUBDIR | (argc > 4 ? MDB_FORMAT_DLMDB_V1 : 0);
#endif
	int rc = mdb_env_open(env, argv[1], fl, 0644);
	if (rc) { printf("open %d\n", rc); return 1; }
	mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	const char *names[] = { "dups", "dupfixed", "intdup", "revdup", "tags" };
	for (int di = 0; di < 5; di++) {
		MDB_dbi dbi;
		if (mdb_dbi_open(txn, names[di], 0, &dbi)) continue;
		printf("== %s\n", names[di]);
		/* collect keys and some values */
		static MDB_val ks[20000], vs[20000]; int nk = 0, nv = 0;
		mdb_cursor_open(txn, dbi, &c);
		MDB_val k, d;
		while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) { if (nk < 20000 && (nk == 0 || k.mv_data != ks[nk-1].mv_data)) ks[nk++] = k; if (nv < 20000) vs[nv++] = d; }
		for (long op = 0; op < ops; op++) {
			static const MDB_cursor_op all[] = { MDB_FIRST, MDB_FIRST_DUP, MDB_GET_BOTH, MDB_GET_BOTH_RANGE, MDB_GET_CURRENT, MDB_GET_MULTIPLE, MDB_LAST, MDB_LAST_DUP, MDB_NEXT, MDB_NEXT_DUP, MDB_NEXT_MULTIPLE, MDB_NEXT_NODUP, MDB_PREV, MDB_PREV_DUP, MDB_PREV_NODUP, MDB_SET, MDB_SET_KEY, MDB_SET_RANGE, MDB_PREV_MULTIPLE };
			MDB_cursor_op o = all[rnd() % 19];
			if (rnd() % 3) o = (MDB_cursor_op)(rnd() % 2 ? MDB_NEXT : MDB_PREV);
			MDB_val kk = ks[rnd() % nk], dd = vs[rnd() % nv];
			if (rnd() % 4 == 0 && kk.mv_size > 1) kk.mv_size--;
			rc = mdb_cursor_get(c, &kk, &dd, o);
			printf("op%d rc=%d", (int)o, rc);
			if (!rc) { hex("k", &kk); hex("d", &dd); }
			if (o == MDB_SET || o == MDB_SET_KEY || o == MDB_GET_BOTH || o == MDB_GET_BOTH_RANGE) if (rc == MDB_NOTFOUND) mdb_cursor_get(c, &k, &d, MDB_FIRST);
			if (rnd() % 5 == 0) { size_t cnt = 0; rc = mdb_cursor_count(c, &cnt); printf(" count rc=%d n=%zu", rc, (size_t)cnt); }
			printf("\n");
		}
		for (int i = 0; i < 200; i++) { MDB_val kk = ks[rnd() % nk], dd; rc = mdb_get(txn, dbi, &kk, &dd); printf("get rc=%d", rc); if (!rc) hex("d", &dd); printf("\n"); }
		mdb_cursor_close(c);
	}
	mdb_txn_abort(txn); mdb_env_close(env);
	return 0;
}
