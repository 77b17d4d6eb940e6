/* Cursors on plain (non-DUPSORT) databases: every op at the edges, positions
 * after failures and deletes, cursor put/del/renew/count (lmdb-api.md §3.5,
 * §4.6, §5). */
#include "t.h"

/* A DB in the main handle with keys k000 .. k(n-1)*, values v<i>. */
static void put_keys(MDB_env *env, int n, int step)
{
	MDB_txn *txn;
	if (mdb_txn_begin(env, NULL, 0, &txn) != 0) {
		T_FAIL("txn_begin");
		return;
	}
	for (int i = 0; i < n; i += step) {
		char kb[16], vb[16];
		snprintf(kb, sizeof kb, "k%04d", i);
		snprintf(vb, sizeof vb, "v%d", i);
		MDB_val k = t_val(kb), v = t_val(vb);
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
}

static void test_empty_db_ops(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k = t_val("x"), v = t_val("y");
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT), EINVAL);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_FIRST), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_LAST), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT_NODUP), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV_NODUP), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV_DUP), MDB_NOTFOUND);
	k = t_val("x");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET), MDB_NOTFOUND);
	k = t_val("x");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY), MDB_NOTFOUND);
	k = t_val("x");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), MDB_NOTFOUND);
	size_t count;
	CHECK_RC(mdb_cursor_count(cur, &count), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)99), EINVAL);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);

	/* Same in a write transaction, plus del on an unpositioned cursor. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_FIRST), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_LAST), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_del(cur, 0), EINVAL);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_dup_ops_on_plain_db(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 10, 1);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	/* NEXT_DUP/PREV_DUP/NEXT_NODUP/PREV_NODUP behave like NEXT/PREV. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP));
	CHECK_STR(k, "k0000");
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT_DUP));
	CHECK_STR(k, "k0001");
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT_NODUP));
	CHECK_STR(k, "k0002");
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV_DUP));
	CHECK_STR(k, "k0001");
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV_NODUP));
	CHECK_STR(k, "k0000");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV_NODUP), MDB_NOTFOUND);
	/* The DUP-only ops are MDB_INCOMPATIBLE. */
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_FIRST_DUP), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_LAST_DUP), MDB_INCOMPATIBLE);
	k = t_val("k0003");
	v = t_val("v3");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_GET_BOTH_RANGE), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_GET_MULTIPLE), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT_MULTIPLE), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV_MULTIPLE), MDB_INCOMPATIBLE);
	size_t count = 0;
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_RC(mdb_cursor_count(cur, &count), MDB_INCOMPATIBLE);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_both_ends(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 3000, 1); /* several leaf pages */
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	/* Unpositioned PREV = LAST, unpositioned NEXT = FIRST. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
	CHECK_STR(k, "k2999");
	CHECK_STR(v, "v2999");
	mdb_cursor_close(cur);
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0000");

	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_STR(k, "k0000");
	CHECK_STR(v, "v0");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV), MDB_NOTFOUND);
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0000");
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0001");

	OK(mdb_cursor_get(cur, &k, &v, MDB_LAST));
	CHECK_STR(k, "k2999");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT), MDB_NOTFOUND);
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k2999");
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
	CHECK_STR(k, "k2998");

	/* Full scans both ways cross every page boundary. */
	int n = 0, bad = 0;
	char kb[16];
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		snprintf(kb, sizeof kb, "k%04d", n++);
		if (k.mv_size != 5 || memcmp(k.mv_data, kb, 5))
			bad++;
	}
	CHECK_EQ(n, 3000);
	CHECK_EQ(bad, 0);
	n = 3000;
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_LAST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_PREV)) {
		snprintf(kb, sizeof kb, "k%04d", --n);
		if (k.mv_size != 5 || memcmp(k.mv_data, kb, 5))
			bad++;
	}
	CHECK_EQ(n, 0);
	CHECK_EQ(bad, 0);
	/* Pure movement with NULL key and data. */
	OK(mdb_cursor_get(cur, NULL, NULL, MDB_FIRST));
	OK(mdb_cursor_get(cur, NULL, NULL, MDB_NEXT));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0001");
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_set_ops(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 2000, 2); /* only even numbers: k0000, k0002, ... k1998 */
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	char buf[16];
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));

	/* MDB_SET leaves the key alone, MDB_SET_KEY returns the stored key. */
	strcpy(buf, "k0500");
	k = t_val(buf);
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET));
	CHECK(k.mv_data == buf);
	CHECK_STR(v, "v500");
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0500");
	k = t_val(buf);
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY));
	CHECK_STR(k, "k0500");
	CHECK(k.mv_data != buf);
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0502");

	/* Absent keys. */
	k = t_val("k0501");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET), MDB_NOTFOUND);
	k = t_val("k0501");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY), MDB_NOTFOUND);
	k = t_val("a");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET), MDB_NOTFOUND);
	k = t_val("z");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET), MDB_NOTFOUND);
	/* After a failed SET the cursor can be repositioned normally. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_STR(k, "k0000");

	/* SET_RANGE: exact, between, before all, after all. */
	k = t_val("k0500");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "k0500");
	k = t_val("k0501");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "k0502");
	CHECK_STR(v, "v502");
	k = t_val("k05015"); /* longer probe, sorts between k0501 and k0502 */
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "k0502");
	k = t_val("k");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "k0000");
	k = t_val("a");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "k0000");
	k = t_val("k1999");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), MDB_NOTFOUND);
	/* Past the end: GET_CURRENT and NEXT fail, PREV gives the last item. */
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT), MDB_NOTFOUND);
	k = t_val("zzz");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), MDB_NOTFOUND);
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
	CHECK_STR(k, "k1998");

	/* Every key in the middle of a page boundary region. */
	int bad = 0;
	for (int i = 0; i < 2000; i++) {
		char probe[16], want[16];
		snprintf(probe, sizeof probe, "k%04d", i);
		snprintf(want, sizeof want, "k%04d", i + (i & 1));
		k = t_val(probe);
		int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (i == 1999) {
			if (rc != MDB_NOTFOUND)
				bad++;
		} else if (rc != 0 || k.mv_size != 5 || memcmp(k.mv_data, want, 5)) {
			bad++;
		}
	}
	CHECK_EQ(bad, 0);

	/* Bad arguments. */
	k = t_mem("", 0);
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET), MDB_BAD_VALSIZE);
	CHECK_RC(mdb_cursor_get(cur, NULL, &v, MDB_SET), EINVAL);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_delete_positions(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 10, 1);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	k = t_val("k0004");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET));
	OK(mdb_cursor_del(cur, 0));
	/* GET_CURRENT now shows the following item; NEXT does not skip it. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0005");
	CHECK_STR(v, "v5");
	OK(mdb_cursor_del(cur, 0)); /* deletes k0005 */
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0006");
	/* PREV after a delete gives the item before the deleted one. */
	OK(mdb_cursor_del(cur, 0)); /* deletes k0006 */
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
	CHECK_STR(k, "k0003");
	/* Deleting the last item leaves the cursor at the end. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_LAST));
	CHECK_STR(k, "k0009");
	OK(mdb_cursor_del(cur, 0));
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_NEXT), MDB_NOTFOUND);
	OK(mdb_cursor_get(cur, &k, &v, MDB_LAST));
	CHECK_STR(k, "k0008");
	/* Deleting the first item: PREV finds nothing, NEXT the follower. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	OK(mdb_cursor_del(cur, 0));
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_PREV), MDB_NOTFOUND);
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_STR(k, "k0001");
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0001");
	/* Delete everything through the cursor, from the front. */
	int n = 0;
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	while (mdb_cursor_del(cur, 0) == 0) {
		n++;
		if (mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT) != 0)
			break;
	}
	CHECK_EQ(n, 5); /* k0001 k0002 k0003 k0007 k0008 */
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_FIRST), MDB_NOTFOUND);
	OK(mdb_txn_commit(txn));
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 0);
	mdb_env_close(env);
}

static void test_delete_positions_multipage(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 3000, 1);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	/* Delete every other key walking forward: del, NEXT (= the survivor),
	 * NEXT (= the next victim). Pages merge along the way. */
	int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST), bad = 0, i = 0;
	while (rc == 0) {
		char want[16];
		snprintf(want, sizeof want, "k%04d", i);
		if (k.mv_size != 5 || memcmp(k.mv_data, want, 5))
			bad++;
		OK(mdb_cursor_del(cur, 0));
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT); /* survivor i+1 */
		if (rc)
			break;
		snprintf(want, sizeof want, "k%04d", i + 1);
		if (k.mv_size != 5 || memcmp(k.mv_data, want, 5))
			bad++;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		i += 2;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(i, 3000);
	/* Walk backwards deleting everything. */
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	int n = 0;
	while (rc == 0) {
		OK(mdb_cursor_del(cur, 0));
		n++;
		rc = mdb_cursor_get(cur, &k, &v, MDB_PREV);
	}
	CHECK_EQ(n, 1500);
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 0);
	CHECK_EQ(st.ms_depth, 0);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_cursor_put(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 100, 2);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	CHECK(mdb_cursor_txn(cur) == txn);
	CHECK_EQ(mdb_cursor_dbi(cur), 1);
	CHECK(mdb_cursor_txn(NULL) == NULL);
	/* A put positions the cursor on the new item. */
	k = t_val("k0051");
	v = t_val("new");
	OK(mdb_cursor_put(cur, &k, &v, 0));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0051");
	CHECK_STR(v, "new");
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0052");
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
	OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
	CHECK_STR(k, "k0050");
	/* Overwrite through cursor put without flags. */
	k = t_val("k0050");
	v = t_val("over");
	OK(mdb_cursor_put(cur, &k, &v, 0));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(v, "over");
	k = t_val("k0050");
	v = t_val("x");
	CHECK_RC(mdb_cursor_put(cur, &k, &v, MDB_NOOVERWRITE), MDB_KEYEXIST);
	CHECK_STR(v, "over");
	k = t_mem("", 0);
	v = t_val("x");
	CHECK_RC(mdb_cursor_put(cur, &k, &v, 0), MDB_BAD_VALSIZE);
	/* Append through the cursor. */
	k = t_val("k9999");
	v = t_val("end");
	OK(mdb_cursor_put(cur, &k, &v, MDB_APPEND));
	k = t_val("k9998");
	CHECK_RC(mdb_cursor_put(cur, &k, &v, MDB_APPEND), MDB_KEYEXIST);
	/* Many inserts through one cursor with GET_CURRENT checks. */
	int bad = 0;
	for (int i = 1; i < 100; i += 2) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%04d", i);
		k = t_val(kb);
		v = t_val(kb);
		OK(mdb_cursor_put(cur, &k, &v, 0));
		if (mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT) != 0 || k.mv_size != 5 ||
		    memcmp(k.mv_data, kb, 5))
			bad++;
	}
	CHECK_EQ(bad, 0);
	OK(mdb_txn_commit(txn)); /* write cursors are freed by the commit */
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 101);
	mdb_env_close(env);
}

static void test_other_cursors_fixed_up(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 8u << 20, 0);
	REQUIRE(env);
	put_keys(env, 1000, 2);
	MDB_txn *txn;
	MDB_cursor *a, *b, *c;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &a));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &b));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &c));
	k = t_val("k0500");
	OK(mdb_cursor_get(b, &k, &v, MDB_SET));
	k = t_val("k0900");
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	/* Inserts through another cursor and through mdb_put split pages. */
	for (int i = 1; i < 1000; i += 2) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%04d", i);
		k = t_val(kb);
		v = t_val("a-much-longer-value-to-force-page-splits-quickly");
		if (i % 4 == 1)
			OK(mdb_cursor_put(a, &k, &v, 0));
		else
			OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_cursor_get(b, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0500");
	OK(mdb_cursor_get(b, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0501");
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0900");
	/* Deleting the item another cursor is on puts that cursor in the
	 * "just deleted" state: its NEXT returns the following item. */
	k = t_val("k0900");
	OK(mdb_cursor_get(a, &k, &v, MDB_SET));
	OK(mdb_cursor_del(a, 0));
	OK(mdb_cursor_get(c, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k0901");
	/* Deletes elsewhere (merges) keep b on its item. */
	for (int i = 0; i < 400; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%04d", i);
		k = t_val(kb);
		OK(mdb_del(txn, 1, &k, NULL));
	}
	OK(mdb_cursor_get(b, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0501");
	OK(mdb_cursor_get(b, &k, &v, MDB_PREV));
	CHECK_STR(k, "k0500");
	mdb_cursor_close(a);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_read_cursor_lifetime_and_renew(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 10, 1);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	OK(mdb_cursor_get(cur, &k, &v, MDB_LAST));
	CHECK_STR(k, "k0009");
	mdb_txn_abort(txn);
	/* A read cursor outlives its txn and can be renewed into another. */
	put_keys(env, 12, 1);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_cursor_renew(txn, cur));
	CHECK(mdb_cursor_txn(cur) == txn);
	OK(mdb_cursor_get(cur, &k, &v, MDB_LAST));
	CHECK_STR(k, "k0011");
	mdb_txn_reset(txn);
	OK(mdb_txn_renew(txn));
	OK(mdb_cursor_renew(txn, cur));
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_STR(k, "k0000");
	mdb_txn_abort(txn);
	mdb_cursor_close(cur); /* closing after the txn ended is fine */
	mdb_cursor_close(NULL);

	/* Write cursors and write txns cannot be renewed into. */
	MDB_txn *wr, *rd;
	MDB_cursor *wc;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &wr));
	REQUIRE_OK(mdb_cursor_open(wr, 1, &wc));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_RC(mdb_cursor_renew(rd, wc), EINVAL);
	REQUIRE_OK(mdb_cursor_open(rd, 1, &cur));
	CHECK_RC(mdb_cursor_renew(wr, cur), EINVAL);
	mdb_cursor_close(cur);
	mdb_txn_abort(rd);
	mdb_cursor_close(wc);
	mdb_txn_abort(wr);

	/* FREE_DBI (handle 0) can be read through a read-only cursor. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	OK(mdb_cursor_open(rd, 0, &cur));
	mdb_cursor_close(cur);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

static void test_cursor_del_flags_and_errors(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	put_keys(env, 5, 1);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	CHECK_RC(mdb_cursor_del(cur, 0), EINVAL);
	size_t count;
	CHECK_RC(mdb_cursor_count(cur, &count), MDB_INCOMPATIBLE);
	/* NODUPDATA on a plain DB deletes the current item like flags 0. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	OK(mdb_cursor_del(cur, MDB_NODUPDATA));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k0001");
	/* Past the end after a failed SET_RANGE: del says NOTFOUND. */
	k = t_val("zzzz");
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE), MDB_NOTFOUND);
	CHECK_RC(mdb_cursor_del(cur, 0), MDB_NOTFOUND);
	OK(mdb_txn_commit(txn));
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 4);
	mdb_env_close(env);
}

int main(void)
{
	RUN(test_empty_db_ops);
	RUN(test_dup_ops_on_plain_db);
	RUN(test_both_ends);
	RUN(test_set_ops);
	RUN(test_delete_positions);
	RUN(test_delete_positions_multipage);
	RUN(test_cursor_put);
	RUN(test_other_cursors_fixed_up);
	RUN(test_read_cursor_lifetime_and_renew);
	RUN(test_cursor_del_flags_and_errors);
	T_DONE();
}
