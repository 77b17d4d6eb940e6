/* Nested write transactions (lmdb-api.md §3.6); confirmed with stock LMDB. */
#include "t.h"

static void test_nested_commit_abort(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	OK(t_put1(env, 1, "base", "0"));
	MDB_txn *parent, *child, *grand;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &parent));
	MDB_val k = t_val("p"), v = t_val("parent");
	OK(mdb_put(parent, 1, &k, &v, 0));
	REQUIRE_OK(mdb_txn_begin(env, parent, 0, &child));
	CHECK_EQ(mdb_txn_id(child), mdb_txn_id(parent));
	/* the child sees the parent's changes */
	k = t_val("p");
	OK(mdb_get(child, 1, &k, &v));
	CHECK_STR(v, "parent");
	/* while a child is active the parent can do nothing */
	k = t_val("x");
	v = t_val("1");
	CHECK_RC(mdb_put(parent, 1, &k, &v, 0), MDB_BAD_TXN);
	/* a second child of the same parent: refused */
	MDB_txn *second = NULL;
	CHECK_RC(mdb_txn_begin(env, parent, 0, &second), MDB_BAD_TXN);
	k = t_val("c1");
	v = t_val("child-aborted");
	OK(mdb_put(child, 1, &k, &v, 0));
	mdb_txn_abort(child);
	k = t_val("c1");
	CHECK_RC(mdb_get(parent, 1, &k, &v), MDB_NOTFOUND);

	/* child commit merges into the parent; grandchild too */
	REQUIRE_OK(mdb_txn_begin(env, parent, 0, &child));
	k = t_val("c2");
	v = t_val("child-committed");
	OK(mdb_put(child, 1, &k, &v, 0));
	k = t_val("base");
	OK(mdb_del(child, 1, &k, NULL));
	REQUIRE_OK(mdb_txn_begin(env, child, 0, &grand));
	MDB_dbi dbi;
	OK(mdb_dbi_open(grand, "sub", MDB_CREATE, &dbi));
	k = t_val("g");
	v = t_val("grand");
	OK(mdb_put(grand, dbi, &k, &v, 0));
	OK(mdb_txn_commit(grand));
	OK(mdb_txn_commit(child));
	k = t_val("c2");
	OK(mdb_get(parent, 1, &k, &v));
	CHECK_STR(v, "child-committed");
	k = t_val("g");
	OK(mdb_get(parent, dbi, &k, &v));
	CHECK_STR(v, "grand");
	OK(mdb_txn_commit(parent));
	CHECK(t_get_is(env, 1, "c2", "child-committed"));
	CHECK(t_get_is(env, 1, "base", NULL));
	CHECK(t_get_is(env, 1, "p", "parent"));
	CHECK(t_get_is(env, 1, "c1", NULL));

	/* parent abort discards a committed child */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &parent));
	REQUIRE_OK(mdb_txn_begin(env, parent, 0, &child));
	k = t_val("lost");
	v = t_val("1");
	OK(mdb_put(child, 1, &k, &v, 0));
	OK(mdb_txn_commit(child));
	mdb_txn_abort(parent);
	CHECK(t_get_is(env, 1, "lost", NULL));

	/* committing the parent commits an active child */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &parent));
	REQUIRE_OK(mdb_txn_begin(env, parent, 0, &child));
	k = t_val("kept");
	v = t_val("1");
	OK(mdb_put(child, 1, &k, &v, 0));
	OK(mdb_txn_commit(parent));
	CHECK(t_get_is(env, 1, "kept", "1"));
	mdb_env_close(env);
}

static void test_nested_refused(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *rd, *child = NULL;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_RC(mdb_txn_begin(env, rd, 0, &child), EINVAL);
	mdb_txn_abort(rd);
	mdb_env_close(env);
	env = t_env_open(t_path("wm"), MDB_NOSUBDIR | MDB_WRITEMAP, 0, 0);
	REQUIRE(env);
	MDB_txn *w;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	/* (stock: EINVAL for a read-only parent, MDB_BAD_TXN for WRITEMAP) */
	CHECK_RC(mdb_txn_begin(env, w, 0, &child), MDB_BAD_TXN);
	mdb_txn_abort(w);
	mdb_env_close(env);
}

/*
 * A read-only child of a write txn is refused, and the parent is not hurt:
 * it can still write and commit.  Our answer is EINVAL (what bindings test
 * for); Debian's liblmdb 0.9.24 answers MDB_BAD_TXN, while mdb.master
 * (lmdb-master-sys) runs read-only children.  Before, the flag was ignored
 * and the caller got a child that could write.
 */
static void test_nested_rdonly_child(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *w, *child = NULL;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	REQUIRE_OK(mdb_dbi_open(w, NULL, 0, &dbi));
#ifdef STOCK_LMDB
	CHECK_RC(mdb_txn_begin(env, w, MDB_RDONLY, &child), MDB_BAD_TXN);
#else
	CHECK_RC(mdb_txn_begin(env, w, MDB_RDONLY, &child), EINVAL);
#endif
	CHECK(child == NULL);
	MDB_val k = t_val("k"), v = t_val("v");
	OK(mdb_put(w, dbi, &k, &v, 0));
	OK(mdb_txn_commit(w));
	CHECK(t_get_is(env, dbi, "k", "v"));
	mdb_env_close(env);
}

/* Many small children, each committed or aborted, with big values and
 * deletes: the parent's page bookkeeping must come out exact. */
static void test_nested_churn(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 32u << 20, 0);
	REQUIRE(env);
	static char want[500][16];
	static unsigned char big[9000];
	memset(want, 0, sizeof want);
	memset(big, 'n', sizeof big);
	uint64_t s = 4;
	MDB_txn *parent;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &parent));
	for (int c = 0; c < 60; c++) {
		MDB_txn *child;
		REQUIRE_OK(mdb_txn_begin(env, parent, 0, &child));
		static char saved[500][16];
		memcpy(saved, want, sizeof want);
		for (int i = 0; i < 50; i++) {
			int k = (int)(t_rand(&s) % 500);
			char kb[16];
			snprintf(kb, sizeof kb, "key%03d", k);
			MDB_val key = t_val(kb);
			if (t_rand(&s) % 3 == 0) {
				int rc = mdb_del(child, 1, &key, NULL);
				if (rc != (want[k][0] ? 0 : MDB_NOTFOUND))
					CHECK_RC(rc, want[k][0] ? 0 : MDB_NOTFOUND);
				want[k][0] = 0;
			} else {
				snprintf(want[k], sizeof want[k], "%d", c);
				size_t len = k % 10 == 0 ? 3000 + (size_t)c * 50 : 10;
				memcpy(big, want[k], strlen(want[k]));
				MDB_val v = t_mem(big, len);
				OK(mdb_put(child, 1, &key, &v, 0));
			}
		}
		if (c % 3 == 2) {
			mdb_txn_abort(child);
			memcpy(want, saved, sizeof want);
		} else {
			OK(mdb_txn_commit(child));
		}
	}
	OK(mdb_txn_commit(parent));
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	int bad = 0;
	for (int k = 0; k < 500; k++) {
		char kb[16];
		snprintf(kb, sizeof kb, "key%03d", k);
		MDB_val key = t_val(kb), v;
		int rc = mdb_get(rd, 1, &key, &v);
		if (want[k][0] ? (rc != 0 || memcmp(v.mv_data, want[k], strlen(want[k])))
			       : rc != MDB_NOTFOUND)
			bad++;
	}
	CHECK_EQ(bad, 0);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

/*
 * Deep chains of children that commit or abort, each freeing pages its
 * ancestors had dirty: a page freed by a grandchild that its parent had
 * copied from an older ancestor must not become reusable while that
 * ancestor still holds its old copy (the top commit then failed with
 * MDB_CORRUPTED in the free list).  The content is checked against a model
 * after every top-level commit.
 */
#define DN_KEYS 1500
static int dn_val[DN_KEYS];	/* value version per key, 0 = absent */

/* n random puts and deletes; burst: delete a run of n keys instead (the
 * merges free pages). */
static void dn_mutate(MDB_txn *txn, MDB_dbi dbi, uint64_t *s, int tag, int n, int burst)
{
	int base = (int)(t_rand(s) % DN_KEYS);
	for (int i = 0; i < n && !t_failures; i++) {
		int k = burst ? (base + i) % DN_KEYS : (int)(t_rand(s) % DN_KEYS);
		char kb[16], vb[64];
		snprintf(kb, sizeof kb, "c%05d", k);
		MDB_val key = t_val(kb);
		if (burst || t_rand(s) % 3 == 0) {
			int rc = mdb_del(txn, dbi, &key, NULL);
			if (rc != (dn_val[k] ? 0 : MDB_NOTFOUND))
				T_FAIL("del %s rc %d", kb, rc);
			dn_val[k] = 0;
		} else {
			snprintf(vb, sizeof vb, "value-%d-%d-%040d", k, tag, 0);
			MDB_val v = t_val(vb);
			if (mdb_put(txn, dbi, &key, &v, 0))
				T_FAIL("put %s", kb);
			dn_val[k] = tag;
		}
	}
}

static void dn_level(MDB_txn *parent, MDB_dbi dbi, uint64_t *s, int depth, int *tag)
{
	static int saved[4][DN_KEYS];
	for (int round = 0; round < 2 && !t_failures; round++) {
		MDB_txn *child;
		memcpy(saved[depth], dn_val, sizeof dn_val);
		if (mdb_txn_begin(mdb_txn_env(parent), parent, 0, &child)) {
			T_FAIL("child begin at depth %d", depth);
			return;
		}
		int kind = (int)(t_rand(s) % 4);
		dn_mutate(child, dbi, s, ++*tag, kind == 0 ? 0 : kind == 1 ? 5 : 300, kind == 3);
		if (depth < 3)
			dn_level(child, dbi, s, depth + 1, tag);
		if (t_rand(s) % 3 == 0) {
			mdb_txn_abort(child);
			memcpy(dn_val, saved[depth], sizeof dn_val);
		} else if (mdb_txn_commit(child)) {
			T_FAIL("child commit at depth %d", depth);
		}
	}
}

static void test_nested_deep_freed_pages(void)
{
	for (uint64_t seed = 1; seed <= 12 && !t_failures; seed++) {
		char dir[64];
		snprintf(dir, sizeof dir, "s%llu", (unsigned long long)seed);
		const char *path = t_path(dir);
		mkdir(path, 0755);
		memset(dn_val, 0, sizeof dn_val);
		MDB_env *env = t_env_open(path, 0, 64u << 20, 0);
		REQUIRE(env);
		MDB_dbi dbi;
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, NULL, 0, &dbi));
		REQUIRE_OK(mdb_txn_commit(txn));
		uint64_t s = seed;
		int tag = 0;
		for (int t = 0; t < 5 && !t_failures; t++) {
			REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
			dn_mutate(txn, dbi, &s, ++tag, t == 0 ? 1200 : 150, t % 3 == 2);
			dn_level(txn, dbi, &s, 0, &tag);
			int rc = mdb_txn_commit(txn);
			if (rc) {
				T_FAIL("seed %llu: top commit %d: rc %d (%s)", (unsigned long long)seed,
				       t, rc, mdb_strerror(rc));
				break;
			}
			/* the committed content is the model's */
			REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
			for (int k = 0; k < DN_KEYS && !t_failures; k++) {
				char kb[16], vb[64];
				snprintf(kb, sizeof kb, "c%05d", k);
				snprintf(vb, sizeof vb, "value-%d-%d-%040d", k, dn_val[k], 0);
				MDB_val key = t_val(kb), v;
				int g = mdb_get(txn, dbi, &key, &v);
				if (dn_val[k] ? g != 0 || v.mv_size != strlen(vb) ||
				    memcmp(v.mv_data, vb, v.mv_size) : g != MDB_NOTFOUND)
					T_FAIL("seed %llu: key %s after commit %d", (unsigned long long)seed,
					       kb, t);
			}
			mdb_txn_abort(txn);
		}
		mdb_env_close(env);
	}
}

int main(void)
{
	RUN(test_nested_commit_abort);
	RUN(test_nested_refused);
	RUN(test_nested_rdonly_child);
	RUN(test_nested_churn);
	RUN(test_nested_deep_freed_pages);
	T_DONE();
}
