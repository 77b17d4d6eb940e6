/*
 * test_dbtable.c - a txn's per-handle table in an env with a large maxdbs:
 * handles opened after the txn began, slots freed and taken again, nested
 * txns that open handles, drop and reopen.  A txn sets up only the entries
 * of the handles in use, so each test reaches entries the txn set up late
 * (debug builds fill the rest with a poison byte).
 */
#include "t.h"

#include <sys/resource.h>

#define BIG_MAXDBS 32000

/* Named DBs "a".."<last>" with one key "k" = "v<name>" each, written and
 * closed again, so that a fresh env starts with no handle open. */
static int t_make_dbs(const char *names)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, BIG_MAXDBS);
	if (!env)
		return -1;
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	for (const char *n = names; !rc && *n; n++) {
		char name[2] = { *n, 0 }, val[3] = { 'v', *n, 0 };
		MDB_dbi dbi;
		MDB_val k = t_val("k"), v = t_val(val);
		rc = mdb_dbi_open(txn, name, MDB_CREATE, &dbi);
		if (!rc)
			rc = mdb_put(txn, dbi, &k, &v, 0);
	}
	if (!rc)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	mdb_env_close(env);
	return rc;
}

/* Key "k" of dbi in txn reads as want. */
static int t_k_is(MDB_txn *txn, MDB_dbi dbi, const char *want)
{
	MDB_val k = t_val("k"), v;
	int rc = mdb_get(txn, dbi, &k, &v);
	if (rc)
		return rc;
	return v.mv_size == strlen(want) && !memcmp(v.mv_data, want, v.mv_size) ? 0 : -1;
}

static void test_handles_opened_while_a_reader_runs(void)
{
	REQUIRE_OK(t_make_dbs("abcd"));
	MDB_env *env = t_env_open(t_dir, MDB_NOTLS, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *old, *r2, *fresh;
	MDB_dbi a, b, c, d;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &old));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r2));
	OK(mdb_dbi_open(r2, "a", 0, &a));
	OK(mdb_dbi_open(r2, "b", 0, &b));
	OK(mdb_dbi_open(r2, "c", 0, &c));
	OK(t_k_is(r2, c, "vc"));
	OK(mdb_txn_commit(r2));
#ifndef STOCK_LMDB
	/* The older txn takes up handles opened after it began; the highest
	 * first, so the entries below it are ones it never saw. */
	OK(t_k_is(old, c, "vc"));
	OK(t_k_is(old, a, "va"));
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(old, b, &cur));
	MDB_val k, v;
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_STR(v, "vb");
	mdb_cursor_close(cur);
	MDB_stat st;
	OK(mdb_stat(old, b, &st));
	CHECK_EQ(st.ms_entries, 1);
#endif
	/* Reset, a handle opened meanwhile, renew: the table is rebuilt. */
	mdb_txn_reset(old);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r2));
	OK(mdb_dbi_open(r2, "d", 0, &d));
	OK(mdb_txn_commit(r2));
	REQUIRE_OK(mdb_txn_renew(old));
	OK(t_k_is(old, d, "vd"));
	OK(t_k_is(old, a, "va"));
	OK(t_k_is(old, b, "vb"));
	mdb_txn_abort(old);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &fresh));
	OK(t_k_is(fresh, a, "va"));
	OK(t_k_is(fresh, b, "vb"));
	OK(t_k_is(fresh, c, "vc"));
	OK(t_k_is(fresh, d, "vd"));
	/* A slot never opened stays invalid, even far below maxdbs. */
	MDB_val kk = t_val("k"), vv;
	CHECK_RC(mdb_get(fresh, d + 1, &kk, &vv), EINVAL);
	CHECK_RC(mdb_get(fresh, BIG_MAXDBS - 1, &kk, &vv), EINVAL);
	mdb_txn_abort(fresh);
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
/* (Stock LMDB looks for a free slot only among the handles the txn knows,
 * and so gives n the slot of a.) */
static void test_write_txn_opens_beyond_its_table(void)
{
	REQUIRE_OK(t_make_dbs("ab"));
	MDB_env *env = t_env_open(t_dir, MDB_NOTLS, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *w, *r;
	MDB_dbi a, b, n;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(mdb_dbi_open(r, "a", 0, &a));
	OK(mdb_dbi_open(r, "b", 0, &b));
	OK(mdb_txn_commit(r));
	/* The new slot lies past a and b, which w has not seen yet. */
	OK(mdb_dbi_open(w, "n", MDB_CREATE, &n));
	CHECK(n != a && n != b);
	MDB_val k = t_val("k"), v = t_val("vn");
	OK(mdb_put(w, n, &k, &v, 0));
	MDB_val v2 = t_val("va2");
	OK(mdb_put(w, a, &k, &v2, 0));
	OK(t_k_is(w, b, "vb"));
	OK(mdb_txn_commit(w));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(t_k_is(r, n, "vn"));
	OK(t_k_is(r, a, "va2"));
	OK(t_k_is(r, b, "vb"));
	mdb_txn_abort(r);
	mdb_env_close(env);
}
#endif

static void test_nested_txns_open_handles(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *w, *c;
	MDB_dbi x, y, z, y2;
	MDB_val k = t_val("k"), v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	/* Opened in a child that commits: the parent's table grows. */
	REQUIRE_OK(mdb_txn_begin(env, w, 0, &c));
	OK(mdb_dbi_open(c, "x", MDB_CREATE, &x));
	v = t_val("vx");
	OK(mdb_put(c, x, &k, &v, 0));
	OK(mdb_txn_commit(c));
	OK(t_k_is(w, x, "vx"));
	MDB_cursor *pc;
	REQUIRE_OK(mdb_cursor_open(w, x, &pc));
	/* Opened in a child that aborts: gone, the parent's cursor intact. */
	REQUIRE_OK(mdb_txn_begin(env, w, 0, &c));
	OK(mdb_dbi_open(c, "y", MDB_CREATE, &y));
	v = t_val("vy");
	OK(mdb_put(c, y, &k, &v, 0));
	MDB_cursor *cc;
	REQUIRE_OK(mdb_cursor_open(c, y, &cc));
	mdb_txn_abort(c);
	MDB_val ck, cv;
	OK(mdb_cursor_get(pc, &ck, &cv, MDB_FIRST));
	CHECK_STR(cv, "vx");
	CHECK_RC(mdb_dbi_open(w, "y", 0, &y2), MDB_NOTFOUND);
	/* Two levels down, with the parent's cursor moved through both. */
	MDB_txn *g;
	REQUIRE_OK(mdb_txn_begin(env, w, 0, &c));
	OK(mdb_dbi_open(c, "z", MDB_CREATE, &z));
	REQUIRE_OK(mdb_txn_begin(env, c, 0, &g));
	MDB_dbi deep;
	OK(mdb_dbi_open(g, "deep", MDB_CREATE, &deep));
	v = t_val("vdeep");
	OK(mdb_put(g, deep, &k, &v, 0));
	OK(mdb_cursor_get(pc, &ck, &cv, MDB_FIRST));
	OK(mdb_txn_commit(g));
	v = t_val("vz");
	OK(mdb_put(c, z, &k, &v, 0));
	OK(mdb_txn_commit(c));
	OK(mdb_cursor_get(pc, &ck, &cv, MDB_FIRST));
	CHECK_STR(cv, "vx");
	OK(t_k_is(w, z, "vz"));
	OK(t_k_is(w, deep, "vdeep"));
	OK(mdb_txn_commit(w));
	MDB_txn *r;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(t_k_is(r, x, "vx"));
	OK(t_k_is(r, z, "vz"));
	OK(t_k_is(r, deep, "vdeep"));
	CHECK_RC(mdb_dbi_open(r, "y", 0, &y2), MDB_NOTFOUND);
	mdb_txn_abort(r);
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
/* The parent takes up a handle while its child runs (every use of it is
 * refused, but the handle is checked first); the child's table is then
 * smaller than the parent's when it commits. */
static void test_parent_table_grows_while_child_runs(void)
{
	REQUIRE_OK(t_make_dbs("pq"));
	MDB_env *env = t_env_open(t_dir, MDB_NOTLS, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *w, *c, *r;
	MDB_dbi p, q, n;
	MDB_val k = t_val("k"), v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	REQUIRE_OK(mdb_txn_begin(env, w, 0, &c));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(mdb_dbi_open(r, "p", 0, &p));
	OK(mdb_dbi_open(r, "q", 0, &q));
	OK(mdb_txn_commit(r));
	CHECK_RC(mdb_get(w, q, &k, &v), MDB_BAD_TXN);
	OK(mdb_dbi_open(c, "n", MDB_CREATE, &n));
	v = t_val("vn");
	OK(mdb_put(c, n, &k, &v, 0));
	OK(mdb_txn_commit(c));
	OK(t_k_is(w, p, "vp"));
	OK(t_k_is(w, q, "vq"));
	OK(t_k_is(w, n, "vn"));
	v = t_val("vq2");
	OK(mdb_put(w, q, &k, &v, 0));
	OK(mdb_txn_commit(w));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(t_k_is(r, q, "vq2"));
	OK(t_k_is(r, n, "vn"));
	mdb_txn_abort(r);
	mdb_env_close(env);
}
#endif

static void test_closed_slots_taken_again(void)
{
	REQUIRE_OK(t_make_dbs("abc"));
	MDB_env *env = t_env_open(t_dir, MDB_NOTLS, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *old, *w, *r;
	MDB_dbi a, b, c, c2, d, b2;
	MDB_val k = t_val("k"), v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &old));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	OK(mdb_dbi_open(w, "a", 0, &a));
	OK(mdb_dbi_open(w, "b", 0, &b));
	OK(mdb_dbi_open(w, "c", 0, &c));
	OK(mdb_txn_commit(w));
	mdb_dbi_close(env, b);
	mdb_dbi_close(env, c);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	OK(mdb_dbi_open(w, "c", 0, &c2));
	CHECK_EQ(c2, b);	/* the lowest free slot */
	OK(t_k_is(w, c2, "vc"));
	OK(mdb_dbi_open(w, "d", MDB_CREATE, &d));
	CHECK_EQ(d, c);
	v = t_val("vd");
	OK(mdb_put(w, d, &k, &v, 0));
	OK(mdb_txn_commit(w));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	OK(mdb_dbi_open(w, "b", 0, &b2));
	CHECK(b2 > d);
	OK(t_k_is(w, b2, "vb"));
	OK(t_k_is(w, d, "vd"));
	mdb_txn_abort(w);
#ifndef STOCK_LMDB
	/* The reader from before any of it sees its own snapshot through the
	 * handles as they are now ("d" did not exist then). */
	OK(t_k_is(old, c2, "vc"));
	OK(t_k_is(old, a, "va"));
#endif
	mdb_txn_abort(old);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(t_k_is(r, a, "va"));
	OK(t_k_is(r, c2, "vc"));
	OK(t_k_is(r, d, "vd"));
	mdb_txn_abort(r);
	mdb_env_close(env);
}

static void test_drop_delete_then_reopen(void)
{
	REQUIRE_OK(t_make_dbs("ab"));
	MDB_env *env = t_env_open(t_dir, MDB_NOTLS, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *w, *r, *c;
	MDB_dbi a, b, b2, b3;
	MDB_val k = t_val("k"), k2 = t_val("k2"), v;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(mdb_dbi_open(r, "a", 0, &a));
	OK(mdb_dbi_open(r, "b", 0, &b));
	OK(mdb_txn_commit(r));
#ifndef STOCK_LMDB
	/* w began before the handles were opened: it takes b up, drops it,
	 * then takes up a, which lies below b. */
	OK(mdb_drop(w, b, 1));
	OK(t_k_is(w, a, "va"));
	CHECK_RC(mdb_get(w, b, &k, &v), EINVAL);
	OK(mdb_dbi_open(w, "b", MDB_CREATE, &b2));
	CHECK_EQ(b2, b);
	CHECK_RC(mdb_get(w, b2, &k, &v), MDB_NOTFOUND);
	v = t_val("new");
	OK(mdb_put(w, b2, &k2, &v, 0));
	OK(mdb_txn_commit(w));
#else
	mdb_txn_abort(w);
#endif
	/* A child drops and reopens, then aborts: the parent keeps b's data
	 * (the handle went with the child's, as in LMDB: open it again). */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	OK(mdb_dbi_open(w, "b", 0, &b2));
	REQUIRE_OK(mdb_txn_begin(env, w, 0, &c));
	OK(mdb_drop(c, b2, 1));
	OK(mdb_dbi_open(c, "b", MDB_CREATE, &b3));
	mdb_txn_abort(c);
	OK(mdb_dbi_open(w, "b", 0, &b2));
#ifndef STOCK_LMDB
	OK(mdb_get(w, b2, &k2, &v));
	CHECK_STR(v, "new");
#else
	OK(t_k_is(w, b2, "vb"));
#endif
	/* The same in a child that commits: the parent sees the new b. */
	REQUIRE_OK(mdb_txn_begin(env, w, 0, &c));
	OK(mdb_drop(c, b2, 1));
	OK(mdb_dbi_open(c, "b", MDB_CREATE, &b3));
	v = t_val("child");
	OK(mdb_put(c, b3, &k, &v, 0));
	OK(mdb_txn_commit(c));
	OK(t_k_is(w, b3, "child"));
	OK(mdb_txn_commit(w));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &r));
	OK(mdb_dbi_open(r, "b", 0, &b3));
	OK(t_k_is(r, b3, "child"));
	CHECK_RC(mdb_get(r, b3, &k2, &v), MDB_NOTFOUND);
	OK(t_k_is(r, a, "va"));
	mdb_txn_abort(r);
	mdb_env_close(env);
}

/* The handle is open in the env but this txn has not loaded its record
 * when the first call on it checks the DB's flags. */
static void test_flags_checked_before_first_load(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, BIG_MAXDBS);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &dbi));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	/* A new env: the handle is opened by a read txn, so the first write
	 * txn starts with the record not loaded. */
	env = t_env_open(t_dir, 0, 0, BIG_MAXDBS);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_dbi_open(txn, "fixed", 0, &dbi));
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	size_t n;
	CHECK_RC(mdb_cursor_count(c, &n), EINVAL);	/* unpositioned */
	uint32_t items[3] = { 3, 1, 2 };
	MDB_val k = t_val("m"), mv[2] = { { 4, items }, { 3, NULL } };
	OK(mdb_cursor_put(c, &k, mv, MDB_MULTIPLE));
	CHECK_EQ(mv[1].mv_size, 3);
	OK(mdb_cursor_count(c, &n));
	CHECK_EQ(n, 3);
	mdb_cursor_close(c);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
/* Closing an env reads only the handle slots it used: with the most slots
 * an env takes (a 2 MiB table, which calloc maps untouched), reading them
 * all would fault in some 500 pages. */
static void test_close_reads_only_used_slots(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 32767);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "named", MDB_CREATE, &dbi));
	OK(mdb_txn_commit(txn));
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	mdb_env_close(env);
	getrusage(RUSAGE_SELF, &after);
	/* A plain build faults no page here, an ASan build about 150 (its
	 * allocator's own). */
	CHECK(after.ru_minflt - before.ru_minflt < 300);
}
#endif

int main(void)
{
	RUN(test_handles_opened_while_a_reader_runs);
#ifndef STOCK_LMDB
	RUN(test_write_txn_opens_beyond_its_table);
#endif
	RUN(test_nested_txns_open_handles);
#ifndef STOCK_LMDB
	RUN(test_parent_table_grows_while_child_runs);
#endif
	RUN(test_closed_slots_taken_again);
	RUN(test_drop_delete_then_reopen);
	RUN(test_flags_checked_before_first_load);
#ifndef STOCK_LMDB
	RUN(test_close_reads_only_used_slots);
#endif
	T_DONE();
}
