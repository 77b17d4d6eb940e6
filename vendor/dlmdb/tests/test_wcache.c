/*
 * test_wcache.c - the size of the write path's cache of checked pages, and
 * what survives when the table is made larger.  A write txn skips the
 * node-area and key-order check of a map page the cache holds for the
 * current tag.  The table is made for the store's size when an env first
 * writes (eight slots per page, 2^10 to 2^18 slots); a write txn that
 * finds the store grown past half the slots moves the current entries to a
 * larger table.  A page the cache does not hold must always be checked.
 *
 * The cache is seen from outside as in test_wcheck_wrap.c: a leaf written
 * by this handle's own commit is cached; damaged on disk afterwards (two
 * node pointers swapped: each node sound, the key order not), a write into
 * it still succeeds while no other handle has committed (the check is
 * skipped), and is refused with MDB_CORRUPTED once one has (the tag moved
 * on).  Two handles on one file, MDB_NOLOCK, serialised by the test.
 */
#include "t.h"

#ifndef STOCK_LMDB

#define PS 4096

/* The leaves of one tree in key order (the walk goes left to right): page
 * number, entries and the index of the first key among all keys of the
 * tree. */
typedef struct leaves {
	mdb_size_t pg[8192];
	unsigned first[8192], entries[8192];
	unsigned n, keys;
} leaves;

static int add_leaf(void *ctx, const MDB_pageinfo *pi)
{
	leaves *l = ctx;
	if (!(pi->pi_type & MDB_PAGE_LEAF) || (pi->pi_type & MDB_PAGE_SUBPAGE))
		return 0;
	if (l->n == sizeof(l->pg) / sizeof(l->pg[0]))
		return MDB_CORRUPTED;	/* not a tree this test builds */
	l->pg[l->n] = pi->pi_pgno;
	l->entries[l->n] = pi->pi_entries;
	l->first[l->n++] = l->keys;
	l->keys += pi->pi_entries;
	return 0;
}

static int walk_leaves(MDB_env *env, MDB_dbi dbi, leaves *l)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	l->n = l->keys = 0;
	rc = mdb_page_walk(txn, dbi, add_leaf, l);
	mdb_txn_abort(txn);
	return rc;
}

static const char *key_of(unsigned i)
{
	static char kb[16];
	snprintf(kb, sizeof(kb), "k%07u", i);
	return kb;
}

/* A write of key number i in env's DB dbi: its result (the txn is
 * aborted, so the store stays as damaged as it was). */
static int probe(MDB_env *env, MDB_dbi dbi, unsigned i)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	MDB_val k = t_val(key_of(i)), v = t_val("new");
	rc = mdb_put(txn, dbi, &k, &v, 0);
	mdb_txn_abort(txn);
	return rc;
}

/* Keep (in order) the leaves of l that hold only keys lo..hi-1 and at
 * least five keys, so that swapping pointers 3 and 4 damages them. */
static void select_leaves(leaves *l, unsigned lo, unsigned hi)
{
	unsigned m = 0;
	for (unsigned j = 0; j < l->n; j++)
		if (l->first[j] >= lo && l->first[j] + l->entries[j] <= hi && l->entries[j] >= 5) {
			l->pg[m] = l->pg[j];
			l->first[m] = l->first[j];
			l->entries[m++] = l->entries[j];
		}
	l->n = m;
}

/* A write into each leaf of l (key number first + 1, which lies inside
 * it): how many were refused with MDB_CORRUPTED.  Other errors fail. */
static unsigned probe_leaves(MDB_env *env, MDB_dbi dbi, const leaves *l)
{
	unsigned refused = 0;
	for (unsigned j = 0; j < l->n; j++) {
		int rc = probe(env, dbi, l->first[j] + 1);
		if (rc == MDB_CORRUPTED)
			refused++;
		else if (rc)
			T_FAIL("leaf %u (page %llu): write -> %s", j,
			       (unsigned long long)l->pg[j], mdb_strerror(rc));
	}
	return refused;
}

/* Commit value v (len bytes) under key k into env's DB dbi. */
static int commit_put(MDB_env *env, MDB_dbi dbi, const char *k, const void *v, size_t len)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	MDB_val key = t_val(k), data = t_mem(v, len);
	if ((rc = mdb_put(txn, dbi, &key, &data, 0))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/* Open DB name of env in a txn of its own. */
static int open_db(MDB_env *env, const char *name, unsigned flags, MDB_dbi *dbi)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_dbi_open(txn, name, flags, dbi))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/* A commit by another handle on the file: the writer's cache no longer
 * vouches for any page (its tag moves on at the next write txn). */
static int other_handle_commits(const char *path)
{
	MDB_env *b = t_env_open_nolock(path, 64u << 20);
	MDB_dbi bb;
	if (!b)
		return EIO;
	int rc = open_db(b, "b", 0, &bb);
	if (!rc)
		rc = commit_put(b, bb, "x", "1", 1);
	mdb_env_close(b);
	return rc;
}

static size_t store_pages(MDB_env *env)
{
	MDB_envinfo ei;
	return mdb_env_info(env, &ei) ? 0 : (size_t)ei.me_last_pgno + 1;
}

/* Keys lo..lo+n-1 of DB dbi, each value vlen bytes of ch, in one commit of
 * env. */
static int put_range(MDB_env *env, MDB_dbi dbi, unsigned lo, unsigned n, size_t vlen, int ch)
{
	static char val[256];
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	memset(val, ch, sizeof(val));
	for (unsigned i = lo; i < lo + n; i++) {
		MDB_val k = t_val(key_of(i)), v = t_mem(val, vlen);
		if ((rc = mdb_put(txn, dbi, &k, &v, 0))) {
			mdb_txn_abort(txn);
			return rc;
		}
	}
	return mdb_txn_commit(txn);
}

/* Keys 0..n-1 of DB "a" (values of vlen bytes) and an empty DB "b". */
static int fill(MDB_env *env, unsigned n, size_t vlen, MDB_dbi *da, MDB_dbi *db)
{
	int rc = open_db(env, "a", MDB_CREATE, da);
	if (!rc)
		rc = open_db(env, "b", MDB_CREATE, db);
	return rc ? rc : put_range(env, *da, 0, n, vlen, 'v');
}

/* The store grows by appending one value big enough to take it to at least
 * `pages` pages.  The value lies on overflow pages, which the cache never
 * holds, so the growth puts only a few single pages into the table and
 * cannot push the damaged leaf's entry out by itself: what the test sees
 * is what the move to a larger table keeps. */
static int grow_to(MDB_env *env, MDB_dbi dbi, const char *key, size_t pages)
{
	size_t have = store_pages(env);
	size_t len = pages > have ? (pages - have + 8) * PS : PS;
	char *big = calloc(1, len);
	if (!big)
		return ENOMEM;
	int rc = commit_put(env, dbi, key, big, len);
	free(big);
	return rc;
}

/* A few leaves (keys 0..199 of DB "a", "b" empty) in a store of a few
 * pages, written by env's own commit, so the table env makes has the
 * smallest size; the first leaf (in l->pg[0], key 1 inside it) then
 * damaged on disk.  A write into it must still succeed: its entry is
 * current.  0, or why the setup failed (EINVAL: the store did not come
 * out as planned). */
static int small_store_damaged_leaf(MDB_env *env, const char *path, MDB_dbi *da, MDB_dbi *db,
	leaves *l)
{
	int rc = fill(env, 200, 100, da, db);
	if (!rc && store_pages(env) >= 64)
		rc = EINVAL;
	if (!rc)
		rc = walk_leaves(env, *da, l);
	if (!rc && (l->n < 3 || l->entries[0] < 5))
		rc = EINVAL;
	if (!rc)
		rc = t_swap_node_ptrs(path, l->pg[0], 3, 4);
	return rc ? rc : probe(env, *da, 1);
}

/*
 * A leaf cached by A, damaged, then the store grown by A's own commits past
 * two regrow points (a 2^10 table is replaced past 512 pages, the 2^13 one
 * it moves to past 4096, by one of 2^16 slots) with keys above all others:
 * the entry moves along each time, so writes into the leaf still skip its
 * check.  The table did grow: a commit of A that then writes some 4600
 * leaves keeps them all (a table still at 2^10 slots could hold at most
 * 1024).  After another handle commits, every such write is refused.
 */
static void test_entries_move_to_larger_table(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *a = t_env_open_nolock(path, 64u << 20);
	MDB_dbi da, db;
	leaves *l = calloc(1, sizeof(*l)), *more = calloc(1, sizeof(*more));
	REQUIRE(a && l && more);
	REQUIRE_OK(small_store_damaged_leaf(a, path, &da, &db, l));
	/* All keys added below go after the last. */

	REQUIRE_OK(grow_to(a, da, "zz-1", 700));
	CHECK(store_pages(a) > 512 && store_pages(a) < 1024);
	OK(probe(a, da, 1));	/* this write txn moved the entries */
	REQUIRE_OK(grow_to(a, da, "zz-2", 4500));
	CHECK(store_pages(a) > 4096 && store_pages(a) < 8192);
	OK(probe(a, da, 1));

	REQUIRE_OK(put_range(a, da, 200, 120000, 60, 'w'));
	REQUIRE_OK(walk_leaves(a, da, more));
	select_leaves(more, 200, 120200);
	CHECK(more->n > 2 * 1024);
	for (unsigned j = 0; j < more->n; j++)
		REQUIRE_OK(t_swap_node_ptrs(path, more->pg[j], 3, 4));
	OK(probe(a, da, 1));
	unsigned refused = probe_leaves(a, da, more);
	if (refused)
		T_FAIL("%u of %u leaves A's commit wrote were checked again", refused, more->n);

	/* The damage is there and is found once the cache no longer holds
	 * the leaves. */
	REQUIRE_OK(other_handle_commits(path));
	CHECK_RC(probe(a, da, 1), MDB_CORRUPTED);
	CHECK_EQ(probe_leaves(a, da, more), more->n);
	mdb_env_close(a);
	free(more);
	free(l);
}

/* The move to a larger table happens in the same write txn in which the
 * tag moves on (the other handle both committed and grew the store): the
 * entries of the old tag must not come back as current. */
static void test_stale_entries_not_moved(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *a = t_env_open_nolock(path, 64u << 20), *b = NULL;
	MDB_dbi da, db, bb;
	leaves *l = calloc(1, sizeof(*l));
	REQUIRE(a && l);
	REQUIRE_OK(small_store_damaged_leaf(a, path, &da, &db, l));

	REQUIRE((b = t_env_open_nolock(path, 64u << 20)) != NULL);
	REQUIRE_OK(open_db(b, "b", 0, &bb));
	REQUIRE_OK(grow_to(b, bb, "zz-1", 700));
	CHECK(store_pages(a) > 512);
	CHECK_RC(probe(a, da, 1), MDB_CORRUPTED);
	CHECK_RC(probe(a, da, 1), MDB_CORRUPTED);
	mdb_env_close(b);
	mdb_env_close(a);
	free(l);
}

/*
 * A store of about 2300 pages (120000 keys), made by one handle and reopened
 * by a fresh one, A.  A's first write txn rewrites every key, so its commit
 * writes every leaf (some 2300) and all of them go into A's cache.  The
 * table made for a store of 2049..4096 pages has 2^15 slots; the store
 * grows to some 4700 pages, and the multiplicative hash gives each of the
 * page numbers 0..17714 a slot of its own in 2^15, so every leaf stays
 * cached.  A table of 2^10 slots could hold at most 1024 of them, so more
 * than half of the leaves would be checked again.  Each leaf is then
 * damaged and written into: every write must succeed.  After another
 * handle commits, every one must be refused.
 */
static void test_table_sized_for_large_store(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *a, *b;
	MDB_dbi da, db;
	const unsigned nkeys = 120000;
	leaves *l = calloc(1, sizeof(*l));
	REQUIRE(l);
	REQUIRE((b = t_env_open_nolock(path, 64u << 20)) != NULL);
	REQUIRE_OK(fill(b, nkeys, 60, &da, &db));
	mdb_env_close(b);

	REQUIRE((a = t_env_open_nolock(path, 64u << 20)) != NULL);
	REQUIRE_OK(open_db(a, "a", 0, &da));
	size_t before = store_pages(a);
	CHECK(before > 2048 && before <= 4096);
	REQUIRE_OK(put_range(a, da, 0, nkeys, 60, 'w'));
	REQUIRE_OK(walk_leaves(a, da, l));
	REQUIRE(l->keys == nkeys);
	unsigned all = l->n;
	select_leaves(l, 0, nkeys);
	CHECK_EQ(l->n, all);
	CHECK(l->n > 2 * 1024);
	/* Under half of A's eight or more slots per page of `before`: no
	 * write txn has replaced the table made at the first write. */
	CHECK(store_pages(a) <= 4 * before);

	for (unsigned j = 0; j < l->n; j++)
		REQUIRE_OK(t_swap_node_ptrs(path, l->pg[j], 3, 4));
	unsigned refused = probe_leaves(a, da, l);
	if (refused)
		T_FAIL("%u of %u leaves A's commit wrote were checked again", refused, l->n);

	REQUIRE_OK(other_handle_commits(path));
	CHECK_EQ(probe_leaves(a, da, l), l->n);
	mdb_env_close(a);
	free(l);
}

#endif /* STOCK_LMDB */

int main(void)
{
#ifndef STOCK_LMDB
	RUN(test_entries_move_to_larger_table);
	RUN(test_stale_entries_not_moved);
	RUN(test_table_sized_for_large_store);
#endif
	T_DONE();
}
