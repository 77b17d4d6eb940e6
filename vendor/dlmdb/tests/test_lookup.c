/*
 * test_lookup.c - lookups by key (mdb_get, and MDB_SET, MDB_SET_KEY and
 * MDB_SET_RANGE) in every state the engine reads pages in: a read txn, a
 * write txn before and after it dirtied pages, a nested txn over a parent
 * with changes of its own; on plain, DUPSORT, INTEGERKEY, COUNTED and
 * prefix-compressed DBs, with in-page and overflow values, against a model.
 * And the answers of the argument, handle and txn checks, in their order.
 */
#include "t.h"

#define NK 6000		/* 3-level trees with 100-byte values */

/* Record i (0 <= i < NK) has key 2i, so 2i + 1 is absent: big-endian in
 * the first min(klen, 8) bytes (native 8 bytes for INTEGERKEY), then
 * bytes derived from i up to klen. */
static void key_of(unsigned i, int intkey, size_t klen, unsigned char *kb)
{
	uint64_t v = 2 * (uint64_t)i;
	if (intkey) {
		memcpy(kb, &v, 8);
		return;
	}
	size_t w = klen < 8 ? klen : 8;
	for (size_t b = 0; b < w; b++)
		kb[b] = (unsigned char)(v >> (8 * (w - 1 - b)));
	for (size_t b = 8; b < klen; b++)
		kb[b] = (unsigned char)(i * 13 + b);
}

/* The byte of key_of's number whose low bit makes 2i into 2i + 1. */
static size_t low_byte(size_t klen)
{
	return (klen < 8 ? klen : 8) - 1;
}

/* Every 50th value is an overflow value (not in DUPSORT DBs, whose values
 * are at most a key's size). */
static size_t vsize_of(unsigned i, unsigned gen, unsigned flags)
{
	return (i % 50 == 7 && !(flags & MDB_DUPSORT) ? 5000 : 100) + gen;
}

static void val_of(unsigned i, unsigned gen, unsigned char *vb, size_t n)
{
	for (size_t j = 0; j < n; j++)
		vb[j] = (unsigned char)(i * 7 + j + gen * 29);
}

struct lk_db {
	const char *name;
	unsigned flags;
	size_t klen;
	MDB_dbi dbi;
	unsigned gen[NK];	/* value generation of each record; ~0u = absent */
};

static int lk_intkey(const struct lk_db *d)
{
	return (d->flags & MDB_INTEGERKEY) != 0;
}

static int lk_put(MDB_txn *txn, struct lk_db *d, unsigned i, unsigned gen)
{
	static unsigned char vb[8192];
	unsigned char kb[64];
	key_of(i, lk_intkey(d), d->klen, kb);
	size_t n = vsize_of(i, gen, d->flags);
	val_of(i, gen, vb, n);
	MDB_val k = { lk_intkey(d) ? 8 : d->klen, kb }, v = { n, vb };
	int rc = mdb_put(txn, d->dbi, &k, &v, 0);
	if (rc == 0 && (d->flags & MDB_DUPSORT)) {
		/* A second duplicate, after the first (one byte longer): a
		 * lookup answers with the first. */
		vb[n] = 0;
		v.mv_size = n + 1;
		rc = mdb_put(txn, d->dbi, &k, &v, 0);
	}
	if (rc == 0)
		d->gen[i] = gen;
	return rc;
}

/* The first record at or after index i, or NK. */
static unsigned lk_next(const struct lk_db *d, unsigned i)
{
	while (i < NK && d->gen[i] == ~0u)
		i++;
	return i;
}

/* Every record and every gap looked up in txn with mdb_get and the SET ops
 * of one cursor; returns the number of wrong answers. */
static int lk_check(MDB_txn *txn, const struct lk_db *d)
{
	static unsigned char vb[8192];
	unsigned char kb[64];
	MDB_cursor *cur;
	int bad = 0, intkey = lk_intkey(d);
	size_t ks = intkey ? 8 : d->klen;
	if (mdb_cursor_open(txn, d->dbi, &cur))
		return 1;
	for (unsigned i = 0; i < NK; i++) {
		MDB_val k, v;
		unsigned have = d->gen[i] != ~0u;
		key_of(i, intkey, d->klen, kb);
		if (have)
			val_of(i, d->gen[i], vb, vsize_of(i, d->gen[i], d->flags));
		size_t vn = have ? vsize_of(i, d->gen[i], d->flags) : 0;
		/* mdb_get of the record's key */
		k.mv_size = ks;
		k.mv_data = kb;
		int rc = mdb_get(txn, d->dbi, &k, &v);
		if (have ? rc || v.mv_size != vn || memcmp(v.mv_data, vb, vn) : rc != MDB_NOTFOUND)
			bad++;
		/* MDB_SET: the value, the key left as given */
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET);
		if (have ? rc || k.mv_data != kb || v.mv_size != vn || memcmp(v.mv_data, vb, vn) :
		    rc != MDB_NOTFOUND)
			bad++;
		/* MDB_SET_KEY: the stored key too */
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
		if (have ? rc || k.mv_size != ks || memcmp(k.mv_data, kb, ks) || v.mv_size != vn ||
		    memcmp(v.mv_data, vb, vn) : rc != MDB_NOTFOUND)
			bad++;
		/* MDB_SET_RANGE from just above the record: the next one */
		if (!intkey) {
			unsigned char gb[64];
			memcpy(gb, kb, ks);
			gb[low_byte(ks)] |= 1;	/* key 2i + 1, absent */
			MDB_val g = { ks, gb };
			unsigned j = lk_next(d, i + 1);
			rc = mdb_get(txn, d->dbi, &g, &v);
			if (rc != MDB_NOTFOUND)
				bad++;
			rc = mdb_cursor_get(cur, &g, &v, MDB_SET_RANGE);
			if (j == NK) {
				if (rc != MDB_NOTFOUND)
					bad++;
			} else {
				unsigned char jb[64];
				size_t jn = vsize_of(j, d->gen[j], d->flags);
				key_of(j, 0, d->klen, jb);
				val_of(j, d->gen[j], vb, jn);
				if (rc || g.mv_size != ks || memcmp(g.mv_data, jb, ks) ||
				    v.mv_size != jn || memcmp(v.mv_data, vb, jn))
					bad++;
			}
		}
	}
	mdb_cursor_close(cur);
	return bad;
}

static void lk_run(unsigned flags, size_t klen)
{
	MDB_env *env = t_env_open(t_dir, 0, 1ul << 30, 4);
	REQUIRE(env);
	static struct lk_db d;
	MDB_txn *txn, *child;
	d.name = "db";
	d.flags = flags;
	d.klen = klen;
	for (unsigned i = 0; i < NK; i++)
		d.gen[i] = ~0u;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, d.name, flags | MDB_CREATE, &d.dbi));
	/* Every other record, so that later puts land between them. */
	for (unsigned i = 0; i < NK; i += 2)
		REQUIRE_OK(lk_put(txn, &d, i, 0));
	REQUIRE_OK(mdb_txn_commit(txn));

	/* Read txn: pages from the map. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_EQ(lk_check(txn, &d), 0);
	mdb_txn_abort(txn);

	/* Write txn: nothing dirty yet, then dirty pages (and dirty
	 * overflow runs) mixed with clean ones. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_EQ(lk_check(txn, &d), 0);
	for (unsigned i = 1; i < NK / 3; i += 2)
		REQUIRE_OK(lk_put(txn, &d, i, 1));
	CHECK_EQ(lk_check(txn, &d), 0);

	/* Nested: the child reads its own pages, its parent's and the map's;
	 * the parent is refused while the child is open. */
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	CHECK_EQ(lk_check(child, &d), 0);
	for (unsigned i = NK / 3 + 1; i < NK / 2; i += 2)
		REQUIRE_OK(lk_put(child, &d, i, 2));
	CHECK_EQ(lk_check(child, &d), 0);
	{
		unsigned char kb[64];
		key_of(0, lk_intkey(&d), klen, kb);
		MDB_val k = { lk_intkey(&d) ? 8 : klen, kb }, v;
		CHECK_RC(mdb_get(txn, d.dbi, &k, &v), MDB_BAD_TXN);
	}
	REQUIRE_OK(mdb_txn_commit(child));
	CHECK_EQ(lk_check(txn, &d), 0);
	REQUIRE_OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_EQ(lk_check(txn, &d), 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_lookup_plain(void) { lk_run(0, 8); }
static void test_lookup_plain_k20(void) { lk_run(0, 20); }
static void test_lookup_plain_k64(void) { lk_run(0, 64); }
static void test_lookup_plain_k5(void) { lk_run(0, 5); }
static void test_lookup_intkey(void) { lk_run(MDB_INTEGERKEY, 8); }
static void test_lookup_dupsort(void) { lk_run(MDB_DUPSORT, 8); }
#ifndef STOCK_LMDB
static void test_lookup_counted(void) { lk_run(MDB_COUNTED, 8); }
static void test_lookup_prefix(void) { lk_run(MDB_PREFIX_COMPRESSION, 20); }
static void test_lookup_prefix_counted(void) { lk_run(MDB_PREFIX_COMPRESSION | MDB_COUNTED, 64); }
static void test_lookup_dupsort_counted(void) { lk_run(MDB_DUPSORT | MDB_COUNTED, 8); }
#endif

/* The checks before a lookup, in their order: arguments, handle, txn,
 * key. */
static void test_lookup_refusals(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn, *child;
	MDB_dbi dbi, other;
	MDB_cursor *cur;
	MDB_val k = t_val("k"), v = t_val("v"), empty = { 0, (void *)"" }, out;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "a", MDB_CREATE, &dbi));
	REQUIRE_OK(mdb_dbi_open(txn, "b", MDB_CREATE, &other));
	REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	REQUIRE_OK(mdb_put(txn, 1, &k, &v, 0));
	REQUIRE_OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_RC(mdb_get(NULL, dbi, &k, &out), EINVAL);
	CHECK_RC(mdb_get(txn, dbi, NULL, &out), EINVAL);
	CHECK_RC(mdb_get(txn, dbi, &k, NULL), EINVAL);
	CHECK_RC(mdb_get(txn, 0, &k, &out), EINVAL);	/* FREE_DBI */
	CHECK_RC(mdb_get(txn, 4, &k, &out), EINVAL);	/* a slot never opened */
	CHECK_RC(mdb_get(txn, 6, &k, &out), EINVAL);	/* past the handle table */
	CHECK_RC(mdb_get(txn, 1000, &k, &out), EINVAL);
	CHECK_RC(mdb_get(txn, ~0u, &k, &out), EINVAL);
	CHECK_RC(mdb_get(txn, dbi, &empty, &out), MDB_BAD_VALSIZE);
	/* A handle of this env used for the first time in this txn. */
	CHECK_RC(mdb_get(txn, other, &k, &out), MDB_NOTFOUND);
	OK(mdb_get(txn, dbi, &k, &out));
	CHECK_STR(out, "v");
	OK(mdb_get(txn, 1, &k, &out));
	CHECK_STR(out, "v");
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &cur));
	CHECK_RC(mdb_cursor_get(cur, NULL, &out, MDB_SET), EINVAL);
	CHECK_RC(mdb_cursor_get(cur, &empty, &out, MDB_SET_RANGE), MDB_BAD_VALSIZE);
	OK(mdb_cursor_get(cur, &k, &out, MDB_SET_RANGE));
	/* A reset txn: the txn is refused before the key is looked at
	 * (stock LMDB refuses the handle first, EINVAL). */
	mdb_txn_reset(txn);
#ifndef STOCK_LMDB
	CHECK_RC(mdb_get(txn, dbi, &k, &out), MDB_BAD_TXN);
	CHECK_RC(mdb_get(txn, dbi, &empty, &out), MDB_BAD_TXN);
#endif
	CHECK_RC(mdb_cursor_get(cur, &k, &out, MDB_SET), MDB_BAD_TXN);
	CHECK_RC(mdb_get(txn, 0, &k, &out), EINVAL);	/* the handle first */
	REQUIRE_OK(mdb_txn_renew(txn));
	REQUIRE_OK(mdb_cursor_renew(txn, cur));
	OK(mdb_cursor_get(cur, &k, &out, MDB_SET_KEY));
	CHECK_STR(out, "v");
	OK(mdb_get(txn, dbi, &k, &out));
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);

	/* A parent with an open child refuses lookups; its child answers,
	 * also through the parent's cursor, which is the child's until the
	 * child ends. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &cur));
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	CHECK_RC(mdb_get(txn, dbi, &k, &out), MDB_BAD_TXN);
	CHECK_RC(mdb_get(txn, dbi, &empty, &out), MDB_BAD_TXN);
	OK(mdb_cursor_get(cur, &k, &out, MDB_SET));
	OK(mdb_get(child, dbi, &k, &out));
	CHECK_STR(out, "v");
	mdb_txn_abort(child);
	OK(mdb_get(txn, dbi, &k, &out));
	OK(mdb_cursor_get(cur, &k, &out, MDB_SET));
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);

#ifndef STOCK_LMDB
	/* A closed handle: refused in a new txn; in a txn that used it
	 * before, once its slot holds another DB, stale. */
	MDB_txn *old;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &old));
	OK(mdb_get(old, dbi, &k, &out));
	mdb_dbi_close(env, dbi);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_RC(mdb_get(txn, dbi, &k, &out), EINVAL);
	mdb_txn_abort(txn);
	MDB_dbi again;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "c", MDB_CREATE, &again));
	REQUIRE_OK(mdb_txn_commit(txn));
	CHECK_EQ(again, dbi);
	CHECK_RC(mdb_get(old, dbi, &k, &out), MDB_BAD_DBI);
	mdb_txn_abort(old);
#endif
	mdb_env_close(env);
}

/*
 * Page searches over every count of nodes: the halving of a page search
 * probes nodes that depend on the page's node count, and so do its last
 * step and its prefetches (powers of two and the counts next to them take
 * different paths).  Each key and each absent key between two keys
 * (2i + 1, so the search never meets an equal node) is looked up with
 * mdb_get, MDB_SET, MDB_SET_KEY and MDB_SET_RANGE.
 */
/* Value sizes of pl_mixed's records (vlen 0 below): about one in three
 * of 1500 to 1899 bytes, the others of 4 to 203, so that leaves hold from
 * one or two nodes to a few dozen. */
static size_t pl_mix(unsigned i)
{
	uint32_t h = i * 2654435761u;
	return (h >> 28) % 3 == 0 ? 1500 + (h >> 8) % 400 : 4 + (h >> 8) % 200;
}

static unsigned pl_check(MDB_txn *txn, MDB_dbi dbi, unsigned n, int intkey, size_t klen,
	size_t vlen0)
{
	MDB_cursor *cur;
	unsigned bad = 0;
	unsigned char kb[64], nb[64];
	size_t ks = intkey ? 8 : klen;
	if (mdb_cursor_open(txn, dbi, &cur))
		return 1;
	for (unsigned i = 0; i < n; i++) {
		MDB_val k = { ks, kb }, v, d;
		size_t vlen = vlen0 ? vlen0 : pl_mix(i);
		key_of(i, intkey, klen, kb);
		if (mdb_get(txn, dbi, &k, &v) || v.mv_size != vlen || memcmp(v.mv_data, &i, 4))
			bad++;
		MDB_val kk = k;
		if (mdb_cursor_get(cur, &kk, &d, MDB_SET_KEY) || kk.mv_size != ks ||
		    memcmp(kk.mv_data, kb, ks) || memcmp(d.mv_data, &i, 4))
			bad++;
		/* 2i + 1: absent, between records i and i + 1. */
		memcpy(nb, kb, ks);
		if (intkey) {
			uint64_t x;
			memcpy(&x, nb, 8);
			x++;
			memcpy(nb, &x, 8);
		} else {
			nb[low_byte(klen)] |= 1;
		}
		MDB_val a = { ks, nb };
		if (mdb_get(txn, dbi, &a, &v) != MDB_NOTFOUND)
			bad++;
		MDB_val a2 = a;
		if (mdb_cursor_get(cur, &a2, &d, MDB_SET) != MDB_NOTFOUND)
			bad++;
		a2 = a;
		int rc = mdb_cursor_get(cur, &a2, &d, MDB_SET_RANGE);
		if (i + 1 == n) {
			if (rc != MDB_NOTFOUND)
				bad++;
			continue;
		}
		unsigned j = i + 1;
		vlen = vlen0 ? vlen0 : pl_mix(j);
		key_of(j, intkey, klen, kb);
		if (rc || a2.mv_size != ks || memcmp(a2.mv_data, kb, ks) || d.mv_size != vlen ||
		    memcmp(d.mv_data, &j, 4))
			bad++;
	}
	/* Below the first key: lands on record 0 (not for INTEGERKEY, whose
	 * first key 0 has nothing below it). */
	if (n && !intkey) {
		memset(nb, 0, ks);
		MDB_val a = { ks, nb }, d;
		unsigned z = 0;
		if (mdb_cursor_get(cur, &a, &d, MDB_SET_RANGE) || memcmp(d.mv_data, &z, 4))
			bad++;
	}
	mdb_cursor_close(cur);
	return bad;
}

static int pl_put(MDB_txn *txn, MDB_dbi dbi, unsigned i, int intkey, size_t klen, size_t vlen)
{
	static unsigned char vb[2048];
	unsigned char kb[64];
	key_of(i, intkey, klen, kb);
	memcpy(vb, &i, 4);
	MDB_val k = { intkey ? 8 : klen, kb }, v = { vlen ? vlen : pl_mix(i), vb };
	return mdb_put(txn, dbi, &k, &v, 0);
}

/* Stores of 1 to max records, each loaded in a write txn, checked there
 * and again in a read txn (pl_check: every key and every gap); the
 * largest has a tree of the given depth. */
static void pl_counts(unsigned flags, size_t klen, size_t vlen, unsigned max, unsigned depth)
{
	MDB_env *env = t_env_open(t_dir, 0, 1ul << 30, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	int intkey = (flags & MDB_INTEGERKEY) != 0;
	for (unsigned n = 1; n <= max; n++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, "db", flags | MDB_CREATE, &dbi));
		REQUIRE_OK(mdb_drop(txn, dbi, 0));
		for (unsigned i = 0; i < n; i++)
			REQUIRE_OK(pl_put(txn, dbi, i, intkey, klen, vlen));
		CHECK_EQ(pl_check(txn, dbi, n, intkey, klen, vlen), 0);
		REQUIRE_OK(mdb_txn_commit(txn));
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		CHECK_EQ(pl_check(txn, dbi, n, intkey, klen, vlen), 0);
#ifndef STOCK_LMDB
		/* The depth follows this engine's splits; stock LMDB's leave
		 * 20-byte keys with 1,500-byte values a level deeper. */
		if (n == max) {
			MDB_stat st;
			REQUIRE_OK(mdb_stat(txn, dbi, &st));
			CHECK_EQ(st.ms_depth, depth);
		}
#else
		(void)depth;
#endif
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

/* Every count of nodes in one leaf (a tree too small to prefetch), then
 * two leaves and a branch. */
static void test_lookup_page_counts(void) { pl_counts(0, 8, 4, 260, 2); }

/* The same for the other specialised kinds: 20-byte keys (LEXW), 64-byte
 * keys (LEXL), INTEGERKEY (INT8). */
static void test_lookup_page_counts_k20(void) { pl_counts(0, 20, 4, 200, 2); }
static void test_lookup_page_counts_k64(void) { pl_counts(0, 64, 4, 130, 2); }
static void test_lookup_page_counts_intkey(void) { pl_counts(MDB_INTEGERKEY, 8, 4, 260, 2); }

/* Values of 1,500 bytes, two records a leaf: the root branch holds every
 * count of children from 2 up (to a full branch and past it, a depth of
 * three, for 64-byte keys), and every key and gap puts a branch search's
 * answer at every position of it. */
static void test_lookup_branch_counts_k8(void) { pl_counts(0, 8, 1500, 200, 2); }
static void test_lookup_branch_counts_k20(void) { pl_counts(0, 20, 1500, 200, 2); }
static void test_lookup_branch_counts_k64(void) { pl_counts(0, 64, 1500, 150, 3); }
static void test_lookup_branch_counts_intkey(void) { pl_counts(MDB_INTEGERKEY, 8, 1500, 200, 2); }

/* Trees of more than 64 pages (the searches that prefetch) loaded in a
 * random order, so that their leaves and branches hold many counts of
 * nodes, for each specialised kind of key: 8-byte, 20-byte, 64-byte and
 * INTEGERKEY. */
static void pl_big(unsigned flags, size_t klen, size_t vlen)
{
	enum { N = 24000 };
	MDB_env *env = t_env_open(t_dir, 0, 1ul << 30, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	static unsigned order[N];
	int intkey = (flags & MDB_INTEGERKEY) != 0;
	for (unsigned i = 0; i < N; i++)
		order[i] = i;
	uint64_t r = 12345;
	for (unsigned i = N - 1; i > 0; i--) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		unsigned j = (unsigned)((r >> 33) % (i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "db", flags | MDB_CREATE, &dbi));
	for (unsigned i = 0; i < N; i++)
		REQUIRE_OK(pl_put(txn, dbi, order[i], intkey, klen, vlen));
	REQUIRE_OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_stat st;
	REQUIRE_OK(mdb_stat(txn, dbi, &st));
	CHECK(st.ms_branch_pages + st.ms_leaf_pages > 64);
	CHECK(st.ms_depth >= 3);
	CHECK_EQ(pl_check(txn, dbi, N, intkey, klen, vlen), 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_lookup_big_k8(void) { pl_big(0, 8, 100); }
static void test_lookup_big_k20(void) { pl_big(0, 20, 100); }
static void test_lookup_big_k64(void) { pl_big(0, 64, 100); }
static void test_lookup_big_intkey(void) { pl_big(MDB_INTEGERKEY, 8, 100); }

/* Large trees whose pages hold from one node to a few dozen (pl_mix's
 * value sizes): the searches that prefetch end their halving on every
 * range size (DL_SEARCH_TAIL and below, from pages of one to eight nodes
 * up), and each key and gap puts the answer at every position of it. */
static void test_lookup_big_mixed_k8(void) { pl_big(0, 8, 0); }
static void test_lookup_big_mixed_k20(void) { pl_big(0, 20, 0); }
static void test_lookup_big_mixed_k64(void) { pl_big(0, 64, 0); }
static void test_lookup_big_mixed_intkey(void) { pl_big(MDB_INTEGERKEY, 8, 0); }

int main(void)
{
	RUN(test_lookup_plain);
	RUN(test_lookup_plain_k20);
	RUN(test_lookup_plain_k64);
	RUN(test_lookup_plain_k5);
	RUN(test_lookup_intkey);
	RUN(test_lookup_dupsort);
#ifndef STOCK_LMDB
	RUN(test_lookup_counted);
	RUN(test_lookup_prefix);
	RUN(test_lookup_prefix_counted);
	RUN(test_lookup_dupsort_counted);
#endif
	RUN(test_lookup_refusals);
	RUN(test_lookup_page_counts);
	RUN(test_lookup_page_counts_k20);
	RUN(test_lookup_page_counts_k64);
	RUN(test_lookup_page_counts_intkey);
	RUN(test_lookup_branch_counts_k8);
	RUN(test_lookup_branch_counts_k20);
	RUN(test_lookup_branch_counts_k64);
	RUN(test_lookup_branch_counts_intkey);
	RUN(test_lookup_big_k8);
	RUN(test_lookup_big_k20);
	RUN(test_lookup_big_k64);
	RUN(test_lookup_big_intkey);
	RUN(test_lookup_big_mixed_k8);
	RUN(test_lookup_big_mixed_k20);
	RUN(test_lookup_big_mixed_k64);
	RUN(test_lookup_big_mixed_intkey);
	T_DONE();
}
