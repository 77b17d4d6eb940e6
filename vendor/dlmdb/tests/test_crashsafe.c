/* Crash safety by construction: committing transaction T writes only meta
 * page T mod 2, and must not overwrite any page of snapshot T-1 (its pages
 * freed by T are not reused before T+2; lmdb-format.md §10.5, §12.3).  So if
 * the write of meta T were lost, the file must still read exactly as
 * snapshot T-1.  After every commit we copy the data file, make meta T look
 * older than meta T-1 (txnid 0), open the copy and compare it with the model
 * of T-1. */
#include "t.h"

#define NK 400
#define PSIZE 4096

static size_t vlen(int k, int ver)
{
	if ((k * 7 + ver) % 29 == 0)
		return 2500 + (size_t)((k * 131 + ver * 17) % 9000); /* overflow pages */
	return (size_t)((k * 31 + ver * 17) % 180);
}

static void vfill(unsigned char *p, int k, int ver, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(k * 3 + ver * 5 + (int)i);
}

static void kname(char *b, size_t n, int k)
{
	snprintf(b, n, "key-%d%s", k, k % 3 ? "" : "-odd");
}

/* The whole main DB equals the model ver[] (0 = absent). */
static void compare(MDB_env *env, const int *ver, const char *what, int t)
{
	MDB_txn *txn;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0) {
		T_FAIL("%s txn %d: begin", what, t);
		return;
	}
	static unsigned char buf[12000];
	int present = 0, bad = 0;
	for (int k = 0; k < NK; k++) {
		char kb[32];
		kname(kb, sizeof kb, k);
		MDB_val key = t_val(kb), v;
		int rc = mdb_get(txn, 1, &key, &v);
		if (!ver[k]) {
			if (rc != MDB_NOTFOUND && bad++ < 3)
				T_FAIL("%s txn %d: %s should be absent (rc %d)", what, t, kb, rc);
			continue;
		}
		present++;
		size_t n = vlen(k, ver[k]);
		vfill(buf, k, ver[k], n);
		if ((rc != 0 || v.mv_size != n || memcmp(v.mv_data, buf, n)) && bad++ < 3)
			T_FAIL("%s txn %d: %s differs (rc %d, %zu bytes, want version %d, %zu bytes)",
			       what, t, kb, rc, rc ? 0 : v.mv_size, ver[k], n);
	}
	MDB_stat st;
	if (mdb_stat(txn, 1, &st) == 0 && st.ms_entries != (size_t)present && bad++ < 3)
		T_FAIL("%s txn %d: %zu entries, want %d", what, t, (size_t)st.ms_entries, present);
	/* and a full cursor walk must work */
	MDB_cursor *cur;
	if (mdb_cursor_open(txn, 1, &cur) == 0) {
		MDB_val k, v;
		int n = 0, rc;
		while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0)
			n++;
		if ((rc != MDB_NOTFOUND || n != present) && bad++ < 3)
			T_FAIL("%s txn %d: walk saw %d items (rc %d), want %d", what, t, n, rc, present);
		mdb_cursor_close(cur);
	}
	mdb_txn_abort(txn);
}

static MDB_env *open_copy(const char *path, unsigned flags)
{
	MDB_env *env;
	if (mdb_env_create(&env))
		return NULL;
	int rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | flags, 0644);
	if (rc == 0) { /* main DB handle set up once (stock LMDB needs it) */
		MDB_txn *txn;
		MDB_dbi dbi;
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
		if (rc == 0) {
			rc = mdb_dbi_open(txn, NULL, 0, &dbi);
			mdb_txn_commit(txn);
		}
	}
	if (rc) {
		T_FAIL("open %s: %d (%s)", path, rc, mdb_strerror(rc));
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

static void run(unsigned flags, unsigned reopen_flags)
{
	char path[512], cp[512], lock[512];
	snprintf(path, sizeof path, "%s", t_path("db"));
	snprintf(cp, sizeof cp, "%s", t_path("copy"));
	snprintf(lock, sizeof lock, "%s", t_path("copy-lock"));
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | flags, 2u << 20, 0);
	REQUIRE(env);
	int ver[NK] = { 0 }, prev[NK] = { 0 };
	static unsigned char buf[12000];
	const char *se = getenv("DLMDB_SEED"); /* for soak runs */
	uint64_t s = se && strtoull(se, NULL, 0) ? strtoull(se, NULL, 0) : 2024;
	for (int t = 1; t <= 80 && t_failures == 0; t++) {
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		memcpy(prev, ver, sizeof ver);
		int n = 1 + (int)(t_rand(&s) % 150);
		for (int i = 0; i < n; i++) {
			int k = (int)(t_rand(&s) % NK);
			char kb[32];
			kname(kb, sizeof kb, k);
			MDB_val key = t_val(kb);
			if (ver[k] && t_rand(&s) % 4 == 0) {
				OK(mdb_del(txn, 1, &key, NULL));
				ver[k] = 0;
			} else {
				int nv = t;
				size_t len = vlen(k, nv);
				vfill(buf, k, nv, len);
				MDB_val v = t_mem(buf, len);
				OK(mdb_put(txn, 1, &key, &v, 0));
				ver[k] = nv;
			}
		}
		REQUIRE_OK(mdb_txn_commit(txn));
		MDB_envinfo info;
		OK(mdb_env_info(env, &info));
		REQUIRE(info.me_last_txnid == (size_t)t); /* every txn wrote something */

		/* Lose meta t: make it look older than meta t-1. */
		unlink(cp);
		unlink(lock);
		REQUIRE_OK(t_copy_file(path, cp));
		uint64_t zero = 0;
		REQUIRE_OK(t_patch_file(cp, (long long)(t % 2) * PSIZE + 144, &zero, 8));
		MDB_env *c = open_copy(cp, reopen_flags);
		if (c) {
			MDB_envinfo ci;
			OK(mdb_env_info(c, &ci));
			CHECK_EQ(ci.me_last_txnid, (size_t)t - 1);
			compare(c, prev, "previous snapshot", t);
			mdb_env_close(c);
		}
		if (t % 10 == 0) {
			unlink(cp);
			unlink(lock);
			REQUIRE_OK(t_copy_file(path, cp));
			c = open_copy(cp, reopen_flags);
			if (c) {
				compare(c, ver, "newest snapshot", t);
				mdb_env_close(c);
			}
		}
	}
	mdb_env_close(env);
}

static void test_previous_snapshot_survives(void) { run(0, 0); }
static void test_previous_snapshot_survives_writemap(void) { run(MDB_WRITEMAP, 0); }
#ifndef STOCK_LMDB
static void test_previous_snapshot_survives_lmdb_format(void) { run(MDB_FORMAT_LMDB, 0); }
static void test_previous_snapshot_survives_v1(void)
{
	run(MDB_FORMAT_DLMDB_V1, MDB_FORMAT_DLMDB_V1);
}
#endif

int main(void)
{
	RUN(test_previous_snapshot_survives);
	RUN(test_previous_snapshot_survives_writemap);
#ifndef STOCK_LMDB
	RUN(test_previous_snapshot_survives_lmdb_format);
	RUN(test_previous_snapshot_survives_v1);
#endif
	T_DONE();
}
