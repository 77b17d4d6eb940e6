/* Databases: main and named, flags, stat, close, drop, key orders,
 * custom comparators (lmdb-api.md §2.2, §3.4, §4.4, §6.6, §7.1). */
#include "t.h"

static void test_named_create_and_notfound(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi a, a2, b, main_dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, NULL, 0, &main_dbi));
	CHECK_EQ(main_dbi, 1);
	CHECK_RC(mdb_dbi_open(txn, "alpha", 0, &a), MDB_NOTFOUND);
	OK(mdb_dbi_open(txn, "alpha", MDB_CREATE, &a));
	CHECK(a >= 2);
	OK(mdb_dbi_open(txn, "alpha", 0, &a2));
	CHECK_EQ(a2, a); /* same name, same handle */
	OK(mdb_dbi_open(txn, "beta", MDB_CREATE, &b));
	CHECK(b >= 2 && b != a);
	MDB_val k = t_val("key"), v = t_val("in-alpha"), d;
	OK(mdb_put(txn, a, &k, &v, 0));
	v = t_val("in-beta");
	OK(mdb_put(txn, b, &k, &v, 0));
	v = t_val("in-main");
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));

	/* Handles stay valid after commit. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_get(txn, a, &k, &d));
	CHECK_STR(d, "in-alpha");
	OK(mdb_get(txn, b, &k, &d));
	CHECK_STR(d, "in-beta");
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_STR(d, "in-main");
	/* The main DB lists the named DBs as keys; their values are the 48-byte records. */
	MDB_val name = t_val("alpha");
	OK(mdb_get(txn, 1, &name, &d));
	CHECK_EQ(d.mv_size, 48);
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 3);
	mdb_txn_abort(txn);
	mdb_env_close(env);

	/* After reopening, the names are found without MDB_CREATE. */
	env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_dbi_open(txn, "beta", 0, &b));
	OK(mdb_get(txn, b, &k, &d));
	CHECK_STR(d, "in-beta");
	CHECK_RC(mdb_dbi_open(txn, "gamma", 0, &a), MDB_NOTFOUND);
	/* Creating in a read-only txn is refused. */
	CHECK_RC(mdb_dbi_open(txn, "gamma", MDB_CREATE, &a), EACCES);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_dbs_full(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_RC(mdb_dbi_open(txn, "x", MDB_CREATE, &dbi), MDB_DBS_FULL);
	OK(mdb_dbi_open(txn, NULL, 0, &dbi));
	mdb_txn_abort(txn);
	mdb_env_close(env);

	env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "one", MDB_CREATE, &dbi));
	OK(mdb_dbi_open(txn, "two", MDB_CREATE, &dbi));
	CHECK_RC(mdb_dbi_open(txn, "three", MDB_CREATE, &dbi), MDB_DBS_FULL);
	/* The failure does not poison the transaction. */
	MDB_val k = t_val("k"), v = t_val("v");
	OK(mdb_put(txn, dbi, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_dbi_flags_and_stored_flags_win(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi ik, rk, plain;
	unsigned int fl = 99;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_flags(txn, 1, &fl));
	CHECK_EQ(fl, 0);
	OK(mdb_dbi_open(txn, "ik", MDB_CREATE | MDB_INTEGERKEY, &ik));
	OK(mdb_dbi_open(txn, "rk", MDB_CREATE | MDB_REVERSEKEY, &rk));
	OK(mdb_dbi_open(txn, "plain", MDB_CREATE, &plain));
	OK(mdb_dbi_flags(txn, ik, &fl));
	CHECK_EQ(fl, MDB_INTEGERKEY);
	OK(mdb_dbi_flags(txn, rk, &fl));
	CHECK_EQ(fl, MDB_REVERSEKEY);
	OK(mdb_dbi_flags(txn, plain, &fl));
	CHECK_EQ(fl, 0);
	/* Unknown flag bits are rejected. */
	MDB_dbi bad;
	CHECK_RC(mdb_dbi_open(txn, "bad", MDB_CREATE | 0x1, &bad), EINVAL);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	/* Passed flags are ignored for an existing DB; the stored ones apply. */
	OK(mdb_dbi_open(txn, "ik", MDB_REVERSEKEY, &ik));
	OK(mdb_dbi_flags(txn, ik, &fl));
	CHECK_EQ(fl, MDB_INTEGERKEY);
	OK(mdb_dbi_open(txn, "plain", MDB_CREATE | MDB_REVERSEKEY, &plain));
	OK(mdb_dbi_flags(txn, plain, &fl));
	CHECK_EQ(fl, 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_name_rules(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	/* An ordinary main-DB key is not a database. */
	MDB_val k = t_val("plainkey"), v = t_val("v");
	OK(mdb_put(txn, 1, &k, &v, 0));
	CHECK_RC(mdb_dbi_open(txn, "plainkey", 0, &dbi), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_dbi_open(txn, "plainkey", MDB_CREATE, &dbi), MDB_INCOMPATIBLE);
	/* Odd and even length names, and a 511-byte name. */
	char longname[512];
	memset(longname, 'n', 511);
	longname[511] = 0;
	OK(mdb_dbi_open(txn, "odd", MDB_CREATE, &dbi));
	OK(mdb_dbi_open(txn, "even", MDB_CREATE, &dbi));
	OK(mdb_dbi_open(txn, longname, MDB_CREATE, &dbi));
	/* Writing over a named DB's record through the main DB is refused
	 * (and does not poison the transaction). */
	MDB_val name = t_val("odd");
	CHECK_RC(mdb_put(txn, 1, &name, &v, 0), MDB_INCOMPATIBLE);
	OK(mdb_put(txn, dbi, &k, &v, 0));
	OK(mdb_txn_commit(txn));

	/* Deleting a named DB record through mdb_del is refused and poisons. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	name = t_val("even");
	CHECK_RC(mdb_del(txn, 1, &name, NULL), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_put(txn, 1, &k, &v, 0), MDB_BAD_TXN);
	mdb_txn_abort(txn);

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_dbi_open(txn, "odd", 0, &dbi));
	OK(mdb_dbi_open(txn, "even", 0, &dbi));
	OK(mdb_dbi_open(txn, longname, 0, &dbi));
	OK(mdb_get(txn, dbi, &k, &v));
	CHECK_STR(v, "v");
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_stat_counts(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 8u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_stat st;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "s", MDB_CREATE, &dbi));
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_depth, 0);
	CHECK_EQ(st.ms_entries, 0);
	CHECK_EQ(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages, 0);
	MDB_val k = t_val("one"), v = t_val("1");
	OK(mdb_put(txn, dbi, &k, &v, 0));
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_depth, 1);
	CHECK_EQ(st.ms_leaf_pages, 1);
	CHECK_EQ(st.ms_entries, 1);
	for (int i = 0; i < 2000; i++) {
		char kb[32], vb[64];
		snprintf(kb, sizeof kb, "key-%06d", i);
		snprintf(vb, sizeof vb, "value %d padded to some length ....", i);
		MDB_val key = t_val(kb), data = t_val(vb);
		OK(mdb_put(txn, dbi, &key, &data, 0));
	}
	/* Big values live in overflow pages: 3 x 10000 bytes = 3 x 3 pages at 4 KiB. */
	static char big[10000];
	memset(big, 'B', sizeof big);
	for (int i = 0; i < 3; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "big%d", i);
		MDB_val key = t_val(kb), data = t_mem(big, sizeof big);
		OK(mdb_put(txn, dbi, &key, &data, 0));
	}
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 2004);
	CHECK_EQ(st.ms_depth, 2);
	CHECK_EQ(st.ms_branch_pages, 1);
	CHECK(st.ms_leaf_pages > 10);
	if (st.ms_psize == 4096)
		CHECK_EQ(st.ms_overflow_pages, 9);
	OK(mdb_txn_commit(txn));

	/* Same numbers from a read txn after commit, and the main DB counts
	 * the record as one entry. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_stat st2;
	OK(mdb_stat(txn, dbi, &st2));
	CHECK(memcmp(&st, &st2, sizeof st) == 0);
	OK(mdb_stat(txn, 1, &st2));
	CHECK_EQ(st2.ms_entries, 1);
	CHECK_EQ(st2.ms_depth, 1);
	/* FREE_DBI stats are available through handle 0. */
	OK(mdb_stat(txn, 0, &st2));
	CHECK_EQ(st2.ms_psize, st.ms_psize);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_dbi_close_and_reopen(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 3);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi a, b, c;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "a", MDB_CREATE, &a));
	OK(mdb_dbi_open(txn, "b", MDB_CREATE, &b));
	MDB_val k = t_val("k"), v = t_val("va");
	OK(mdb_put(txn, a, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	mdb_dbi_close(env, a);
	mdb_dbi_close(env, a); /* twice is harmless */
	mdb_dbi_close(env, 0); /* ignored */
	mdb_dbi_close(env, 1); /* ignored */
	mdb_dbi_close(env, 12345); /* out of range: ignored */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "c", MDB_CREATE, &c));
	CHECK_EQ(c, a); /* the lowest closed slot is reused */
	OK(mdb_dbi_open(txn, "a", 0, &a));
	OK(mdb_get(txn, a, &k, &v));
	CHECK_STR(v, "va");
	OK(mdb_txn_commit(txn));
	/* The main DB handle always works. */
	OK(t_put1(env, 1, "m", "1"));
	mdb_env_close(env);
}

static void test_aborted_open_closes_handle(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi a, a2;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "a", MDB_CREATE, &a));
	mdb_txn_abort(txn);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_RC(mdb_dbi_open(txn, "a", 0, &a2), MDB_NOTFOUND);
	OK(mdb_dbi_open(txn, "a", MDB_CREATE, &a2));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_drop_empty_and_delete(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 8u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi a, b;
	MDB_stat st;
	static char big[20000];
	memset(big, 'z', sizeof big);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "a", MDB_CREATE | MDB_REVERSEKEY, &a));
	OK(mdb_dbi_open(txn, "b", MDB_CREATE, &b));
	for (int i = 0; i < 1500; i++) {
		char kb[32];
		snprintf(kb, sizeof kb, "k%05d", i);
		MDB_val key = t_val(kb), data = t_val(kb);
		OK(mdb_put(txn, a, &key, &data, 0));
		OK(mdb_put(txn, b, &key, &data, 0));
	}
	MDB_val key = t_val("big"), data = t_mem(big, sizeof big);
	OK(mdb_put(txn, a, &key, &data, 0));
	OK(mdb_txn_commit(txn));
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	size_t last_before = info.me_last_pgno;

	/* drop(0): empty but keep the DB, its flags and its handle. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_drop(txn, a, 0));
	OK(mdb_stat(txn, a, &st));
	CHECK_EQ(st.ms_entries, 0);
	CHECK_EQ(st.ms_depth, 0);
	CHECK_EQ(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages, 0);
	key = t_val("k00001");
	CHECK_RC(mdb_get(txn, a, &key, &data), MDB_NOTFOUND);
	data = t_val("again");
	OK(mdb_put(txn, a, &key, &data, 0));
	CHECK_RC(mdb_drop(txn, a, 2), EINVAL);
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	unsigned fl;
	OK(mdb_dbi_flags(txn, a, &fl));
	CHECK_EQ(fl, MDB_REVERSEKEY);
	OK(mdb_stat(txn, a, &st));
	CHECK_EQ(st.ms_entries, 1);
	OK(mdb_get(txn, a, &key, &data));
	CHECK_STR(data, "again");
	mdb_txn_abort(txn);

	/* drop(1): delete b entirely. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_drop(txn, b, 1));
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_RC(mdb_dbi_open(txn, "b", 0, &b), MDB_NOTFOUND);
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 1); /* only "a" left in the main DB */
	mdb_txn_abort(txn);
	/* One more commit, so the pages freed by the drop become reusable (pages
	 * freed by the previous txn are kept for its snapshot). */
	OK(t_put1(env, a, "tick", "1"));

	/* The freed pages are reused: refilling b does not grow the file much. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "b", MDB_CREATE, &b));
	for (int i = 0; i < 1500; i++) {
		char kb[32];
		snprintf(kb, sizeof kb, "k%05d", i);
		key = t_val(kb);
		data = t_val(kb);
		OK(mdb_put(txn, b, &key, &data, 0));
	}
	OK(mdb_stat(txn, b, &st));
	OK(mdb_txn_commit(txn));
	OK(mdb_env_info(env, &info));
	/* Without reuse the file would grow by all of b's pages. */
	if (info.me_last_pgno >= last_before + st.ms_leaf_pages + st.ms_branch_pages)
		T_FAIL("no reuse: last_pgno %zu, was %zu, b has %zu pages",
		       (size_t)info.me_last_pgno, last_before,
		       (size_t)(st.ms_leaf_pages + st.ms_branch_pages));

	/* Dropping the main DB (del=1) only empties it. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_drop(txn, b, 1));
	OK(mdb_drop(txn, a, 1));
	key = t_val("mk");
	data = t_val("mv");
	OK(mdb_put(txn, 1, &key, &data, 0));
	OK(mdb_drop(txn, 1, 1));
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 0);
	OK(mdb_put(txn, 1, &key, &data, 0));
	OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, 1, "mk", "mv"));
	mdb_env_close(env);
}

static void test_invalid_handles(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("k"), v = t_val("v");
	CHECK_RC(mdb_put(txn, 77, &k, &v, 0), EINVAL);
	CHECK_RC(mdb_get(txn, 77, &k, &v), EINVAL);
	CHECK_RC(mdb_put(txn, 0, &k, &v, 0), EINVAL); /* FREE_DBI is internal */
	CHECK_RC(mdb_get(txn, 0, &k, &v), EINVAL);
	MDB_cursor *cur;
	CHECK_RC(mdb_cursor_open(txn, 77, &cur), EINVAL);
	CHECK_RC(mdb_cursor_open(txn, 0, &cur), EINVAL); /* write txn */
	MDB_stat st;
	CHECK_RC(mdb_stat(txn, 77, &st), EINVAL);
	CHECK_RC(mdb_drop(txn, 77, 0), EINVAL);
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

/* ---- key orders ---------------------------------------------------------- */

static void test_integerkey_order(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi d32, d64;
	static const unsigned int k32[] = { 256, 0, 0xFFFFFFFFu, 1, 65536, 2, 0x01000000, 255, 0x80000000u };
	static const uint64_t k64[] = { 1ull << 32, 0, ~0ull, 1, 255, 256, (1ull << 32) - 1,
					1ull << 63, 2, 0x0100000000000000ull };
	const size_t n32 = sizeof k32 / sizeof k32[0], n64 = sizeof k64 / sizeof k64[0];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "i32", MDB_CREATE | MDB_INTEGERKEY, &d32));
	OK(mdb_dbi_open(txn, "i64", MDB_CREATE | MDB_INTEGERKEY, &d64));
	for (size_t i = 0; i < n32; i++) {
		MDB_val k = t_mem(&k32[i], 4), v = t_mem(&k32[i], 4);
		OK(mdb_put(txn, d32, &k, &v, 0));
	}
	for (size_t i = 0; i < n64; i++) {
		MDB_val k = t_mem(&k64[i], 8), v = t_mem(&k64[i], 8);
		OK(mdb_put(txn, d64, &k, &v, 0));
	}
	/* Many sequential keys too, so the tree gets branch pages. */
	for (unsigned int i = 1000; i < 4000; i++) {
		MDB_val k = t_mem(&i, 4), v = t_mem(&i, 4);
		OK(mdb_put(txn, d32, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_cursor_open(txn, d32, &cur));
	unsigned int prev = 0;
	int n = 0, sorted = 1;
	while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
		unsigned int x;
		CHECK_EQ(k.mv_size, 4);
		memcpy(&x, k.mv_data, 4);
		if (n && x <= prev)
			sorted = 0;
		prev = x;
		n++;
	}
	CHECK(sorted);
	CHECK_EQ(n, n32 + 3000);
	CHECK_EQ(prev, 0xFFFFFFFFu);
	unsigned int want = 65536;
	k = t_mem(&want, 4);
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET));
	CHECK(v.mv_size == 4 && memcmp(v.mv_data, &want, 4) == 0);
	unsigned int probe = 4000; /* next key >= 4000 is 65536 */
	k = t_mem(&probe, 4);
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK(k.mv_size == 4 && memcmp(k.mv_data, &want, 4) == 0);
	mdb_cursor_close(cur);

	REQUIRE_OK(mdb_cursor_open(txn, d64, &cur));
	uint64_t prev64 = 0;
	n = 0;
	sorted = 1;
	while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
		uint64_t x;
		CHECK_EQ(k.mv_size, 8);
		memcpy(&x, k.mv_data, 8);
		if (n && x <= prev64)
			sorted = 0;
		prev64 = x;
		n++;
	}
	CHECK(sorted);
	CHECK_EQ(n, n64);
	CHECK(prev64 == ~0ull);
	mdb_cursor_close(cur);
	/* mdb_cmp uses the database's comparator. */
	unsigned int one = 1, big = 256;
	MDB_val a = t_mem(&one, 4), b = t_mem(&big, 4);
	CHECK(mdb_cmp(txn, d32, &a, &b) < 0);
	CHECK(mdb_cmp(txn, d32, &b, &a) > 0);
	CHECK(mdb_cmp(txn, d32, &a, &a) == 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_reversekey_order(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	static const char *keys[] = { "ab", "ba", "ca", "zz1", "a", "www.example.com",
				      "mail.example.com", "example.org", "b" };
	/* Compared from the last byte backwards; a shorter key that is a suffix
	 * of a longer one sorts first. */
	static const char *want[] = { "zz1", "a", "ba", "ca", "b", "ab", "example.org",
				      "mail.example.com", "www.example.com" };
	const int n = sizeof keys / sizeof keys[0];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "rev", MDB_CREATE | MDB_REVERSEKEY, &dbi));
	for (int i = 0; i < n; i++) {
		MDB_val k = t_val(keys[i]), v = t_val(keys[i]);
		OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "rev", 0, &dbi));
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &cur));
	int i = 0;
	while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
		if (i < n)
			CHECK_STR(k, want[i]);
		i++;
	}
	CHECK_EQ(i, n);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Descending byte order; shorter first on a common prefix. */
static int cmp_desc(const MDB_val *a, const MDB_val *b)
{
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	int c = memcmp(b->mv_data, a->mv_data, n);
	if (c)
		return c;
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

static void test_custom_compare(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "desc", MDB_CREATE, &dbi));
	OK(mdb_set_compare(txn, dbi, cmp_desc));
	for (int i = 0; i < 3000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "%06d", (i * 7919) % 3000);
		MDB_val k = t_val(kb), v = t_val(kb);
		OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	CHECK_RC(mdb_set_compare(txn, 77, cmp_desc), EINVAL);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "desc", 0, &dbi));
	OK(mdb_set_compare(txn, dbi, cmp_desc));
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &cur));
	int i = 2999, bad = 0, n = 0;
	while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
		char kb[16];
		snprintf(kb, sizeof kb, "%06d", i--);
		if (k.mv_size != 6 || memcmp(k.mv_data, kb, 6) != 0)
			bad++;
		n++;
	}
	CHECK_EQ(n, 3000);
	CHECK_EQ(bad, 0);
	/* Lookups use the comparator too. */
	k = t_val("001234");
	OK(mdb_get(txn, dbi, &k, &v));
	CHECK_STR(v, "001234");
	/* "00123" sorts after "001240" and before "001239" (a prefix goes first). */
	k = t_val("00123");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "001239");
	MDB_val a = t_val("1"), b = t_val("2");
	CHECK(mdb_cmp(txn, dbi, &a, &b) > 0);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
/* Newest DLMDB rule (dlmdb-extensions.md N.5): dropping the main DB fails
 * with MDB_DBIS_BUSY while another handle is open; with none open it deletes
 * every named DB first, so no pages leak. */
static void test_drop_main_dlmdb_rule(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi x, y;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "x", MDB_CREATE, &x));
	OK(mdb_dbi_open(txn, "y", MDB_CREATE, &y));
	for (int i = 0; i < 500; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "%05d", i);
		MDB_val k = t_val(kb), v = t_val(kb);
		OK(mdb_put(txn, x, &k, &v, 0));
		OK(mdb_put(txn, y, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_RC(mdb_drop(txn, 1, 0), MDB_DBIS_BUSY);
	CHECK_RC(mdb_drop(txn, 1, 1), MDB_DBIS_BUSY);
	mdb_txn_abort(txn);
	mdb_env_close(env);

	/* Fresh env handle: no named handle open. */
	env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_drop(txn, 1, 0));
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 0);
	CHECK_RC(mdb_dbi_open(txn, "x", 0, &x), MDB_NOTFOUND);
	OK(mdb_txn_commit(txn));
	/* Everything but the metas is free now (nothing leaked). */
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *cur;
	size_t nfree = 0;
	OK(mdb_stat(txn, 0, &st));
	size_t freedb_pages = st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
	if (mdb_cursor_open(txn, 0, &cur) == 0) {
		MDB_val k, v;
		while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
			uint64_t n;
			memcpy(&n, v.mv_data, 8);
			nfree += n;
		}
		mdb_cursor_close(cur);
	}
	CHECK_EQ(2 + freedb_pages + nfree, info.me_last_pgno + 1);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}
#endif

int main(void)
{
	RUN(test_named_create_and_notfound);
	RUN(test_dbs_full);
	RUN(test_dbi_flags_and_stored_flags_win);
	RUN(test_name_rules);
	RUN(test_stat_counts);
	RUN(test_dbi_close_and_reopen);
	RUN(test_aborted_open_closes_handle);
	RUN(test_drop_empty_and_delete);
#ifndef STOCK_LMDB
	RUN(test_drop_main_dlmdb_rule);
#endif
	RUN(test_invalid_handles);
	RUN(test_integerkey_order);
	RUN(test_reversekey_order);
	RUN(test_custom_compare);
	T_DONE();
}
