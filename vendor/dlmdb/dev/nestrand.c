/* dev/nestrand.c - random nested txns (depth up to 3) with puts/dels/big
 * values against a model; checks contents and page accounting. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static uint64_t rs;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
#define NK 3000
static int model[4][NK];	/* value length per level; -1 absent; values derived from (key, len) */
static uint64_t pages;
static int cnt_pages(void *ctx, const MDB_pageinfo *pi) { (void)ctx; pages += pi->pi_pages; return 0; }
static void mkval(int k, int len, unsigned char *b) { for (int i = 0; i < len; i++) b[i] = (unsigned char)(k * 7 + len + i); }
static void verify(MDB_env *env, MDB_txn *txn, MDB_dbi dbi, int lvl, int acct)
{
	static unsigned char vb[70000];
	for (int k = 0; k < NK; k++) {
		char kb[16]; MDB_val key = { (size_t)sprintf(kb, "k%05d", k), kb }, d;
		int rc = mdb_get(txn, dbi, &key, &d);
		if (model[lvl][k] < 0) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "key %d should be absent (lvl %d)\n", k, lvl); exit(1); } continue; }
		CHECK(rc);
		mkval(k, model[lvl][k], vb);
		if (d.mv_size != (size_t)model[lvl][k] || memcmp(d.mv_data, vb, d.mv_size)) { fprintf(stderr, "bad value key %d lvl %d\n", k, lvl); exit(1); }
	}
	if (!acct) return;
	MDB_envinfo info; mdb_env_info(env, &info);
	pages = 0; MDB_cursor *c; MDB_val k, d;
	CHECK(mdb_page_walk(txn, 0, cnt_pages, NULL)); CHECK(mdb_page_walk(txn, 1, cnt_pages, NULL));
	uint64_t fr = 0; CHECK(mdb_cursor_open(txn, 0, &c));
	while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) { uint64_t m; memcpy(&m, d.mv_data, 8); fr += m; }
	mdb_cursor_close(c);
	if (2 + pages + fr != info.me_last_pgno + 1) { fprintf(stderr, "accounting 2+%lu+%lu != %zu+1\n", (unsigned long)pages, (unsigned long)fr, (size_t)info.me_last_pgno); exit(1); }
}
int main(int argc, char **argv)
{
	(void)argc; MDB_env *env; MDB_txn *t[4]; MDB_dbi dbi = 1;
	static unsigned char vb[70000];
	rs = (uint64_t)atol(argv[3]) * 2654435761u + 9; long ops = atol(argv[2]);
	for (int i = 0; i < NK; i++) model[0][i] = -1;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	int lvl = 0;
	for (long op = 0; op < ops; op++) {
		unsigned r = rnd() % 1000;
		if (lvl == 0) { CHECK(mdb_txn_begin(env, NULL, 0, &t[1])); lvl = 1; memcpy(model[1], model[0], sizeof model[0]); continue; }
		if (r < 15 && lvl < 3) { CHECK(mdb_txn_begin(env, t[lvl], 0, &t[lvl + 1])); memcpy(model[lvl + 1], model[lvl], sizeof model[0]); lvl++; continue; }
		if (r < 25) { /* commit innermost */ CHECK(mdb_txn_commit(t[lvl])); memcpy(model[lvl - 1], model[lvl], sizeof model[0]); lvl--; if (lvl == 0) { MDB_txn *rt; CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt)); verify(env, rt, dbi, 0, 1); mdb_txn_abort(rt); } continue; }
		if (r < 32) { /* abort innermost */ mdb_txn_abort(t[lvl]); lvl--; continue; }
		if (r < 36 && lvl >= 2) { verify(env, t[lvl], dbi, lvl, 0); continue; }
		int k = (int)(rnd() % NK); char kb[16]; MDB_val key = { (size_t)sprintf(kb, "k%05d", k), kb };
		if (r < 700) {
			int len = (int)(rnd() % 200); if (rnd() % 30 == 0) len = (int)(rnd() % 60000);
			mkval(k, len, vb); MDB_val d = { (size_t)len, vb };
			CHECK(mdb_put(t[lvl], dbi, &key, &d, 0)); model[lvl][k] = len;
		} else {
			int rc = mdb_del(t[lvl], dbi, &key, NULL);
			if (model[lvl][k] < 0) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "del absent rc %d\n", rc); return 1; } }
			else { CHECK(rc); model[lvl][k] = -1; }
		}
	}
	while (lvl > 0) { CHECK(mdb_txn_commit(t[lvl])); memcpy(model[lvl - 1], model[lvl], sizeof model[0]); lvl--; }
	MDB_txn *rt; CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt)); verify(env, rt, dbi, 0, 1); mdb_txn_abort(rt);
	MDB_envinfo info; mdb_env_info(env, &info);
	printf("nested ok: last_pg %zu txn %zu\n", (size_t)info.me_last_pgno, (size_t)info.me_last_txnid);
	mdb_env_close(env);
	return 0;
}
