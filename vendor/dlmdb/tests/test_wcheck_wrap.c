/*
 * test_wcheck_wrap.c - the write path's cache of checked pages across the
 * wrap of its tag.  A write txn skips the node-area and key-order check of
 * a map page the cache holds for the current tag; each time another writer
 * has committed in between, the cache moves to the next tag (16 bits), and
 * when the tag runs out the slots are emptied before it starts again at 1.
 * A slot written under tag 1 must not come back to life when the tag
 * returns to 1.
 *
 * Two handles on one file (MDB_NOLOCK, the test serialises them): A writes
 * a leaf, which its cache records; the leaf is then damaged on disk (two
 * keys swapped: each node sound, the order not).  While A's snapshot is
 * unchanged the damage goes unseen (the slot is current).  Then B commits
 * and A tries a write, over and over, for more rounds than the tag has
 * values: every one of A's writes must check the leaf again and refuse it.
 */
#include "t.h"

#ifndef STOCK_LMDB

/* More write txns of the other handle than the tag has values (65535). */
#define ROUNDS 66000u

static int first_leaf(void *ctx, const MDB_pageinfo *pi)
{
	mdb_size_t *pg = ctx;
	if ((pi->pi_type & MDB_PAGE_LEAF) && !(pi->pi_type & MDB_PAGE_SUBPAGE) && !*pg)
		*pg = pi->pi_pgno;
	return 0;
}

/* A write into DB "a" of env: its result (the txn is aborted). */
static int write_a(MDB_env *env, MDB_dbi dbi)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	MDB_val k = t_val("key-05x"), v = t_val("new");
	rc = mdb_put(txn, dbi, &k, &v, 0);
	mdb_txn_abort(txn);
	return rc;
}

/* A committed write into DB "b" of env. */
static int commit_b(MDB_env *env, MDB_dbi dbi, unsigned i)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	MDB_val k = t_val("counter"), v = t_mem(&i, sizeof(i));
	if ((rc = mdb_put(txn, dbi, &k, &v, 0))) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

static void test_stale_slots_after_tag_wrap(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *a = t_env_open_nolock(path, 16u << 20), *b = NULL;
	MDB_txn *txn;
	MDB_dbi da, db;
	char kb[16];
	REQUIRE(a);
	REQUIRE_OK(mdb_txn_begin(a, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "a", MDB_CREATE, &da));
	REQUIRE_OK(mdb_dbi_open(txn, "b", MDB_CREATE, &db));
	for (unsigned i = 0; i < 20; i++) {
		snprintf(kb, sizeof(kb), "key-%02u", i);
		MDB_val k = t_val(kb), v = t_val("value");
		REQUIRE_OK(mdb_put(txn, da, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	/* "a" is one leaf, written by A's commit and so in A's cache. */
	mdb_size_t leaf = 0;
	REQUIRE_OK(mdb_txn_begin(a, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_page_walk(txn, da, first_leaf, &leaf));
	mdb_txn_abort(txn);
	REQUIRE(leaf >= 2);
	REQUIRE_OK(t_swap_node_ptrs(path, leaf, 3, 4));
	/* Same snapshot: the slot is current, the leaf is taken as checked.
	 * (Without this the rounds below would prove nothing about slots.) */
	REQUIRE_OK(write_a(a, da));

	REQUIRE((b = t_env_open_nolock(path, 16u << 20)) != NULL);
	MDB_dbi bb;
	REQUIRE_OK(mdb_txn_begin(b, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "b", 0, &bb));
	REQUIRE_OK(mdb_txn_commit(txn));
	unsigned trusted = 0, first = 0;
	for (unsigned i = 1; i <= ROUNDS; i++) {
		int rc = commit_b(b, bb, i);
		if (rc) {
			T_FAIL("round %u: commit of the other handle -> %s", i, mdb_strerror(rc));
			break;
		}
		if ((rc = write_a(a, da)) != MDB_CORRUPTED && !trusted++)
			first = i;
	}
	if (trusted)
		T_FAIL("the damaged leaf was taken as checked in %u rounds, first round %u",
		       trusted, first);
	mdb_env_close(b);
	mdb_env_close(a);
}

#endif /* STOCK_LMDB */

int main(void)
{
#ifndef STOCK_LMDB
	RUN(test_stale_slots_after_tag_wrap);
#endif
	T_DONE();
}
