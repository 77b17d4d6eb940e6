/* dev/rand.c - random put/del/overwrite against an in-memory model, with
 * periodic commits, reopen, cursor-walk checks and the page accounting
 * invariant.  usage: rand <dir> <ops> <seed> [lmdb|v1] */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#define NK 20000
static int vlen[NK];	/* -1 = absent */
static unsigned vver[NK];
static uint64_t rs;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)

static int mkkey(int i, char *buf) { return sprintf(buf, "k%0*d", 3 + i % 7, i); }
static void mkval(int i, unsigned ver, int len, unsigned char *buf)
{
	for (int j = 0; j < len; j++)
		buf[j] = (unsigned char)(i * 31 + ver * 7 + j);
}
static int keycmp(const void *a, const void *b)
{
	char ka[32], kb[32];
	int la = mkkey(*(const int *)a, ka), lb = mkkey(*(const int *)b, kb);
	int r = memcmp(ka, kb, la < lb ? la : lb);
	return r ? r : la - lb;
}

static uint64_t pages;
static int cnt_pages(void *ctx, const MDB_pageinfo *pi) { (void)ctx; pages += pi->pi_pages; return 0; }

static void verify(MDB_env *env, MDB_dbi dbi, int *order, int n)
{
	MDB_txn *txn; MDB_cursor *c; MDB_val k, d;
	static unsigned char vb[200000];
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK(mdb_cursor_open(txn, dbi, &c));
	int j = 0, rc;
	while ((rc = mdb_cursor_get(c, &k, &d, MDB_NEXT)) == 0) {
		while (j < n && vlen[order[j]] < 0) j++;
		if (j >= n) { fprintf(stderr, "extra key\n"); exit(1); }
		char kb[32]; int kl = mkkey(order[j], kb);
		if (k.mv_size != (size_t)kl || memcmp(k.mv_data, kb, kl)) { fprintf(stderr, "key mismatch at %d: %.*s vs %s\n", j, (int)k.mv_size, (char*)k.mv_data, kb); exit(1); }
		mkval(order[j], vver[order[j]], vlen[order[j]], vb);
		if (d.mv_size != (size_t)vlen[order[j]] || memcmp(d.mv_data, vb, d.mv_size)) { fprintf(stderr, "val mismatch %s\n", kb); exit(1); }
		j++;
	}
	if (rc != MDB_NOTFOUND) CHECK(rc);
	while (j < n && vlen[order[j]] < 0) j++;
	if (j != n) { fprintf(stderr, "missing keys from %d\n", j); exit(1); }
	mdb_cursor_close(c);
	/* accounting: 2 + tree pages + free pages == last_pg + 1 */
	MDB_envinfo info; mdb_env_info(env, &info);
	pages = 0;
	CHECK(mdb_page_walk(txn, 0, cnt_pages, NULL));
	CHECK(mdb_page_walk(txn, 1, cnt_pages, NULL));
	if (dbi != 1) CHECK(mdb_page_walk(txn, dbi, cnt_pages, NULL));
	uint64_t freep = 0;
	CHECK(mdb_cursor_open(txn, 0, &c));
	while ((rc = mdb_cursor_get(c, &k, &d, MDB_NEXT)) == 0) { uint64_t m; memcpy(&m, d.mv_data, 8); freep += m; }
	mdb_cursor_close(c);
	if (2 + pages + freep != info.me_last_pgno + 1) { fprintf(stderr, "accounting: 2 + %lu + %lu != %zu + 1\n", (unsigned long)pages, (unsigned long)freep, (size_t)info.me_last_pgno); exit(1); }
	/* stat consistency */
	MDB_stat st; mdb_stat(txn, dbi, &st);
	size_t live = 0; for (int i = 0; i < n; i++) if (vlen[order[i]] >= 0) live++;
	if (st.ms_entries != live) { fprintf(stderr, "entries %zu != %zu\n", (size_t)st.ms_entries, live); exit(1); }
	mdb_txn_abort(txn);
}

int main(int argc, char **argv)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi;
	static unsigned char vb[200000];
	if (argc < 4) return 2;
	long ops = atol(argv[2]);
	rs = (uint64_t)atol(argv[3]) * 2654435761u + 1;
	unsigned fl = 0;
	if (argc > 4 && !strcmp(argv[4], "lmdb")) fl = MDB_FORMAT_LMDB;
	if (argc > 4 && !strcmp(argv[4], "v1")) fl = MDB_FORMAT_DLMDB_V1;
	int nk = 2000 + (int)(rnd() % (NK - 2000));
	int *order = malloc(sizeof(int) * nk);
	for (int i = 0; i < nk; i++) { order[i] = i; vlen[i] = -1; }
	qsort(order, nk, sizeof(int), keycmp);
	CHECK(mdb_env_create(&env));
	CHECK(mdb_env_set_mapsize(env, 1ul << 30));
	CHECK(mdb_env_set_maxdbs(env, 4));
	CHECK(mdb_env_open(env, argv[1], fl, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK(mdb_dbi_open(txn, "t", MDB_CREATE | (argc > 5 ? MDB_PREFIX_COMPRESSION : 0) | (argc > 6 ? MDB_COUNTED : 0), &dbi));
	CHECK(mdb_txn_commit(txn));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	int bigmode = (int)(rnd() % 3);
	for (long op = 0; op < ops; op++) {
		int i = (int)(rnd() % nk);
		char kb[32]; int kl = mkkey(i, kb);
		MDB_val k = { kl, kb }, d;
		unsigned r = rnd() % 100;
		if (r < 60) {
			int len = (int)(rnd() % 100);
			if (bigmode && rnd() % 50 == 0) len = (int)(rnd() % (bigmode == 2 ? 150000 : 9000));
			unsigned ver = vver[i] + 1;
			mkval(i, ver, len, vb);
			d.mv_size = len; d.mv_data = vb;
			unsigned pf = (rnd() % 5 == 0) ? MDB_NOOVERWRITE : 0;
			int rc = mdb_put(txn, dbi, &k, &d, pf);
			if (pf && vlen[i] >= 0) { if (rc != MDB_KEYEXIST) { fprintf(stderr, "expected KEYEXIST\n"); return 1; } }
			else { CHECK(rc); vlen[i] = len; vver[i] = ver; }
		} else if (r < 90) {
			int rc = mdb_del(txn, dbi, &k, NULL);
			if (vlen[i] < 0) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "del expected NOTFOUND got %d\n", rc); return 1; } }
			else { CHECK(rc); vlen[i] = -1; }
		} else {
			int rc = mdb_get(txn, dbi, &k, &d);
			if (vlen[i] < 0) { if (rc != MDB_NOTFOUND) { fprintf(stderr, "get expected NOTFOUND\n"); return 1; } }
			else { CHECK(rc); mkval(i, vver[i], vlen[i], vb); if (d.mv_size != (size_t)vlen[i] || memcmp(d.mv_data, vb, d.mv_size)) { fprintf(stderr, "get mismatch\n"); return 1; } }
		}
		if (rnd() % 1000 == 0) {
			CHECK(mdb_txn_commit(txn));
			verify(env, dbi, order, nk);
			if (rnd() % 4 == 0) {
				mdb_env_close(env);
				CHECK(mdb_env_create(&env));
				CHECK(mdb_env_set_mapsize(env, 1ul << 30));
				CHECK(mdb_env_set_maxdbs(env, 4));
				CHECK(mdb_env_open(env, argv[1], fl, 0644));
				CHECK(mdb_txn_begin(env, NULL, 0, &txn));
				CHECK(mdb_dbi_open(txn, "t", 0, &dbi));
				CHECK(mdb_txn_commit(txn));
			}
			CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		}
	}
	CHECK(mdb_txn_commit(txn));
	verify(env, dbi, order, nk);
	/* delete everything through a cursor, check emptiness and accounting */
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_cursor *c; MDB_val k, d; int rc;
	CHECK(mdb_cursor_open(txn, dbi, &c));
	long n = 0;
	while ((rc = mdb_cursor_get(c, &k, &d, n ? MDB_GET_CURRENT : MDB_FIRST)) == 0) { CHECK(mdb_cursor_del(c, 0)); n++; }
	CHECK(mdb_txn_commit(txn));
	for (int i = 0; i < nk; i++) vlen[i] = -1;
	verify(env, dbi, order, nk);
	MDB_envinfo info; mdb_env_info(env, &info);
	printf("ok: %ld ops, %ld cursor-deleted, last_pg %zu, txn %zu\n", ops, n, (size_t)info.me_last_pgno, (size_t)info.me_last_txnid);
	mdb_env_close(env);
	return 0;
}
