/* dev/duprand.c - random DUPSORT put/del against a model, with cursor-scan,
 * count and page-accounting checks.  usage: duprand <dir> <ops> <seed> [fixed] [lmdb|v1] */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static uint64_t rs;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
#define NK 60
#define ND 1200
static unsigned char have[NK][ND];
static int fixed;
static int mkkey(int i, char *b) { return sprintf(b, "key%0*d", 1 + i % 4, i); }
static int mkitem(int j, char *b) { if (fixed) { uint64_t v = (uint64_t)j * 2654435761u; for (int x = 0; x < 8; x++) b[x] = (char)(v >> (56 - 8 * x)); return 8; } return sprintf(b, "item-%0*d%.*s", 4, j, j % 23, "abcdefghijklmnopqrstuvwxyz"); }
static int cmpitem(const void *a, const void *b) { char x[64], y[64]; int lx = mkitem(*(const int *)a, x), ly = mkitem(*(const int *)b, y); int r = memcmp(x, y, lx < ly ? lx : ly); return r ? r : lx - ly; }
static int cmpkey(const void *a, const void *b) { char x[64], y[64]; int lx = mkkey(*(const int *)a, x), ly = mkkey(*(const int *)b, y); int r = memcmp(x, y, lx < ly ? lx : ly); return r ? r : lx - ly; }
static int korder[NK], iorder[ND];
static uint64_t pages;
static int cnt_pages(void *ctx, const MDB_pageinfo *pi) { (void)ctx; pages += pi->pi_pages; return 0; }
static void verify(MDB_env *env, MDB_dbi dbi)
{
	MDB_txn *txn; MDB_cursor *c; MDB_val k, d; int rc;
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK(mdb_cursor_open(txn, dbi, &c));
	int ki = 0, ii = 0; long total = 0;
	rc = mdb_cursor_get(c, &k, &d, MDB_FIRST);
	for (ki = 0; ki < NK; ki++) {
		int key = korder[ki]; char kb[64]; int kl = mkkey(key, kb);
		long n = 0;
		for (ii = 0; ii < ND; ii++) {
			int it = iorder[ii]; if (!have[key][it]) continue;
			char ib[64]; int il = mkitem(it, ib);
			if (rc) { fprintf(stderr, "scan ended early (%d) at %s/%d\n", rc, kb, it); exit(1); }
			if (k.mv_size != (size_t)kl || memcmp(k.mv_data, kb, kl) || d.mv_size != (size_t)il || memcmp(d.mv_data, ib, il)) { fprintf(stderr, "mismatch at %s item %d: got %.*s / %.*s\n", kb, it, (int)k.mv_size, (char *)k.mv_data, (int)d.mv_size, (char *)d.mv_data); exit(1); }
			if (n == 0) { size_t cnt; CHECK(mdb_cursor_count(c, &cnt)); long want = 0; for (int j = 0; j < ND; j++) want += have[key][j]; if ((long)cnt != want) { fprintf(stderr, "count %s %zu != %ld\n", kb, cnt, want); exit(1); } }
			n++; total++;
			rc = mdb_cursor_get(c, &k, &d, MDB_NEXT);
		}
	}
	if (rc != MDB_NOTFOUND) { fprintf(stderr, "extra data at end rc=%d\n", rc); exit(1); }
	mdb_cursor_close(c);
	MDB_stat st; CHECK(mdb_stat(txn, dbi, &st));
	if ((long)st.ms_entries != total) { fprintf(stderr, "entries %zu != %ld\n", (size_t)st.ms_entries, total); exit(1); }
	MDB_envinfo info; mdb_env_info(env, &info);
	pages = 0;
	CHECK(mdb_page_walk(txn, 0, cnt_pages, NULL)); CHECK(mdb_page_walk(txn, 1, cnt_pages, NULL)); CHECK(mdb_page_walk(txn, dbi, cnt_pages, NULL));
	uint64_t freep = 0;
	CHECK(mdb_cursor_open(txn, 0, &c));
	while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) { uint64_t m; memcpy(&m, d.mv_data, 8); freep += m; }
	mdb_cursor_close(c);
	if (2 + pages + freep != info.me_last_pgno + 1) { fprintf(stderr, "accounting: 2 + %lu + %lu != %zu + 1\n", (unsigned long)pages, (unsigned long)freep, (size_t)info.me_last_pgno); exit(1); }
	mdb_txn_abort(txn);
}
int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *cur;
	long ops = atol(argv[2]); rs = (uint64_t)atol(argv[3]) * 2654435761u + 5;
	fixed = argc > 4 && !strcmp(argv[4], "fixed");
	unsigned fl = 0;
	if (argc > 5 && !strcmp(argv[5], "lmdb")) fl = MDB_FORMAT_LMDB;
	if (argc > 5 && !strcmp(argv[5], "v1")) fl = MDB_FORMAT_DLMDB_V1;
	for (int i = 0; i < NK; i++) korder[i] = i;
	for (int i = 0; i < ND; i++) iorder[i] = i;
	qsort(korder, NK, sizeof(int), cmpkey); qsort(iorder, ND, sizeof(int), cmpitem);
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 1ul << 30)); CHECK(mdb_env_set_maxdbs(env, 4));
	CHECK(mdb_env_open(env, argv[1], fl, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, "d", MDB_CREATE | MDB_DUPSORT | (fixed ? MDB_DUPFIXED : 0) | (argc > 6 ? MDB_PREFIX_COMPRESSION : 0) | (argc > 7 ? MDB_COUNTED : 0), &dbi));
	CHECK(mdb_cursor_open(txn, dbi, &cur));
	for (long op = 0; op < ops; op++) {
		int key = (int)(rnd() % NK); if (rnd() % 3) key = (int)(rnd() % 6);
		int it = (int)(rnd() % ND);
		char kb[64], ib[64]; MDB_val k = { (size_t)mkkey(key, kb), kb }, d = { (size_t)mkitem(it, ib), ib };
		unsigned r = rnd() % 100; int rc;
		if (r < 55) {
			unsigned f = rnd() % 5 == 0 ? MDB_NODUPDATA : 0;
			if (rnd() % 2) rc = mdb_put(txn, dbi, &k, &d, f); else rc = mdb_cursor_put(cur, &k, &d, f);
			if (f && have[key][it]) { if (rc != MDB_KEYEXIST) { fprintf(stderr, "want KEYEXIST got %d\n", rc); return 1; } }
			else { CHECK(rc); have[key][it] = 1; }
		} else if (r < 80) {
			rc = mdb_del(txn, dbi, &k, &d);
			if (!have[key][it]) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "del want NOTFOUND got %d\n", rc); return 1; } }
			else { CHECK(rc); have[key][it] = 0; }
		} else if (r < 83) {
			rc = mdb_del(txn, dbi, &k, NULL);
			int any = 0; for (int j = 0; j < ND; j++) any |= have[key][j];
			if (!any) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "delall want NOTFOUND got %d\n", rc); return 1; } }
			else { CHECK(rc); memset(have[key], 0, ND); }
		} else if (r < 90) {
			/* cursor delete of the item the cursor is on */
			MDB_val k2 = k, d2 = d;
			rc = mdb_cursor_get(cur, &k2, &d2, MDB_GET_BOTH);
			if (!have[key][it]) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "get_both want NOTFOUND got %d\n", rc); return 1; } }
			else { CHECK(rc); rc = mdb_cursor_del(cur, 0); if (rc) { MDB_val a, b; int r2 = mdb_cursor_get(cur, &a, &b, MDB_GET_CURRENT); fprintf(stderr, "op %ld cdel %s/%d rc=%d; cur rc=%d %.*s/%.*s\n", op, kb, it, rc, r2, r2 ? 0 : (int)a.mv_size, r2 ? "" : (char *)a.mv_data, r2 ? 0 : (int)b.mv_size, r2 ? "" : (char *)b.mv_data); return 1; } have[key][it] = 0; }
		} else {
			MDB_val d2;
			rc = mdb_get(txn, dbi, &k, &d2);
			int any = 0; for (int j = 0; j < ND; j++) any |= have[key][j];
			if (any != (rc == 0)) { fprintf(stderr, "get mismatch rc=%d any=%d\n", rc, any); return 1; }
		}
		if (rnd() % 400 == 0) {
			CHECK(mdb_txn_commit(txn));
			verify(env, dbi);
			CHECK(mdb_txn_begin(env, NULL, 0, &txn));
			CHECK(mdb_cursor_open(txn, dbi, &cur));
		}
	}
	CHECK(mdb_txn_commit(txn));
	verify(env, dbi);
	MDB_envinfo info; mdb_env_info(env, &info);
	printf("ok: %ld ops, last_pg %zu\n", ops, (size_t)info.me_last_pgno);
	mdb_env_close(env);
	return 0;
}
