/* dev/duptrace2.c - DUPSORT variant of trace.c (generated from it): random op trace (cursor ops, puts, dels, several cursors);
 * built against our engine and against stock liblmdb (-DSTOCK): the two
 * outputs must be identical.  usage: trace <dir> <ops> <seed> */
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
static void pr(const char *what, int rc, MDB_val *k, MDB_val *d)
{
	printf("%s rc=%d", what, rc);
	if (rc == 0 && k && k->mv_data) printf(" k=%.*s", (int)k->mv_size, (char *)k->mv_data);
	if (rc == 0 && d && d->mv_data) printf(" d=%zu:%02x", d->mv_size, d->mv_size ? ((unsigned char *)d->mv_data)[0] : 0);
	printf("\n");
}
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c[3];
	long ops = atol(argv[2]);
	rs = (uint64_t)atol(argv[3]) * 2654435761u + 7;
	static unsigned char vb[20000];
	mdb_env_create(&env);
	mdb_env_set_mapsize(env, 256 << 20);
	if (mdb_env_open(env, argv[1], MDB_NOSYNC, 0644)) return 1;
	int nkeys = 5 + (int)(rnd() % 60);
	mdb_txn_begin(env, NULL, 0, &txn);
	mdb_dbi_open(txn, NULL, MDB_DUPSORT, &dbi);
	for (int i = 0; i < 3; i++) mdb_cursor_open(txn, dbi, &c[i]);
	static const MDB_cursor_op mops[] = { MDB_FIRST, MDB_LAST, MDB_NEXT, MDB_PREV, MDB_GET_CURRENT, MDB_SET, MDB_SET_KEY, MDB_SET_RANGE, MDB_NEXT_NODUP, MDB_PREV_NODUP, MDB_NEXT_DUP, MDB_PREV_DUP, MDB_FIRST_DUP, MDB_LAST_DUP, MDB_GET_BOTH, MDB_GET_BOTH_RANGE };
	int tst = getenv("TRACE_STATE") != NULL;
	for (long op = 0; op < ops; op++) {
		if (tst) for (int i = 0; i < 3; i++) { MDB_val kc, dc; int r2 = mdb_cursor_get(c[i], &kc, &dc, MDB_GET_CURRENT); printf("   s%d", i); pr("", r2, &kc, NULL); }
		char kb[64]; int ki = (int)(rnd() % nkeys);
		MDB_val k = { (size_t)sprintf(kb, "key%0*d", 1 + ki % 6, ki), kb }, d;
		int ci = (int)(rnd() % 3);
		unsigned r = rnd() % 100;
		int rc;
		char w[128];
		if (r < 30) {
			size_t len = 1 + rnd() % 12; memset(vb, 'a' + (int)(rnd() % 6), len); vb[0] = (unsigned char)('0' + rnd() % 10);
			d.mv_size = len; d.mv_data = vb;
			unsigned fl = (rnd() % 6 == 0) ? MDB_NOOVERWRITE : (rnd() % 5 == 0) ? MDB_NODUPDATA : 0;
			if (rnd() % 3 == 0) {
				rc = mdb_cursor_put(c[ci], &k, &d, fl);
				sprintf(w, "cput%d %s", ci, kb);
				pr(w, rc, NULL, fl ? &d : NULL);
				MDB_val k2, d2; rc = mdb_cursor_get(c[ci], &k2, &d2, MDB_GET_CURRENT);
				pr(" cur", rc, &k2, &d2);
			} else {
				rc = mdb_put(txn, dbi, &k, &d, fl);
				sprintf(w, "put %s", kb);
				pr(w, rc, NULL, NULL);
			}
		} else if (r < 45) {
			if (rnd() % 2) { size_t len = 1 + rnd() % 12; memset(vb, 'a' + (int)(rnd() % 6), len); vb[0] = (unsigned char)('0' + rnd() % 10); MDB_val dv = { len, vb }; rc = mdb_del(txn, dbi, &k, rnd() % 4 ? &dv : NULL); sprintf(w, "del %s", kb); pr(w, rc, NULL, NULL); }
			else { MDB_val kc, dc; rc = mdb_cursor_get(c[ci], &kc, &dc, MDB_GET_CURRENT); pr(" pre", rc, &kc, NULL);
				rc = mdb_cursor_del(c[ci], 0); sprintf(w, "cdel%d", ci); pr(w, rc, NULL, NULL); }
		} else if (r < 97) {
			MDB_cursor_op o = mops[rnd() % (sizeof mops / sizeof mops[0])];
			MDB_val kk = k;
			{ size_t len = 1 + rnd() % 12; memset(vb, 'a' + (int)(rnd() % 6), len); vb[0] = (unsigned char)('0' + rnd() % 10); d.mv_size = len; d.mv_data = vb; }
			rc = mdb_cursor_get(c[ci], &kk, &d, o);
			if (rc == 0 && (o == MDB_FIRST_DUP || o == MDB_LAST_DUP || o == MDB_GET_BOTH || o == MDB_GET_BOTH_RANGE || o == MDB_SET)) kk.mv_data = NULL;
			/* Where a failed exact lookup leaves the cursor depends on page
			 * boundaries, which differ between engines: normalise. */
			if (rc == MDB_NOTFOUND && (o == MDB_SET || o == MDB_SET_KEY || o == MDB_GET_BOTH || o == MDB_GET_BOTH_RANGE)) { MDB_val k3, d3; mdb_cursor_get(c[ci], &k3, &d3, MDB_FIRST); }
			sprintf(w, "get%d op%d %s", ci, (int)o, (o == MDB_SET || o == MDB_SET_KEY || o == MDB_SET_RANGE) ? kb : "");
			pr(w, rc, &kk, &d);
		} else {
			for (int i = 0; i < 3; i++) mdb_cursor_close(c[i]);
			rc = mdb_txn_commit(txn); pr("commit", rc, NULL, NULL);
			mdb_txn_begin(env, NULL, 0, &txn);
			for (int i = 0; i < 3; i++) mdb_cursor_open(txn, dbi, &c[i]);
		}
	}
	MDB_stat st; mdb_stat(txn, dbi, &st);
	printf("entries %zu depth %u\n", (size_t)st.ms_entries, st.ms_depth);
	mdb_txn_commit(txn);
	mdb_env_close(env);
	return 0;
}
