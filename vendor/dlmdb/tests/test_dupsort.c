/* Sorted duplicates (MDB_DUPSORT and friends; lmdb-api.md §5, §6).
 * Every expectation passes against stock liblmdb 0.9.24 (make stock-check). */
#include "t.h"

static MDB_env *open_dup_env(MDB_dbi *dbi, const char *name, unsigned flags)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	if (!env)
		return NULL;
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc == 0) {
		rc = mdb_dbi_open(txn, name, MDB_CREATE | flags, dbi);
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	if (rc) {
		T_FAIL("open dup db %s: %d (%s)", name, rc, mdb_strerror(rc));
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

static int put2(MDB_txn *txn, MDB_dbi dbi, const char *k, const char *v, unsigned fl)
{
	MDB_val key = t_val(k), data = t_val(v);
	return mdb_put(txn, dbi, &key, &data, fl);
}

/* The verified trace of lmdb-api.md §5.1. */
static void test_dup_trace(void)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "d", MDB_DUPSORT);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	static const char *pairs[][2] = { { "a", "1" }, { "a", "2" }, { "a", "3" }, { "b", "5" },
					  { "c", "7" }, { "c", "8" }, { "d", "1" }, { "d", "2" } };
	for (int i = 7; i >= 0; i--)
		OK(put2(txn, dbi, pairs[i][0], pairs[i][1], 0));
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k, v;
	OK(mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP));
	CHECK_STR(k, "a");
	CHECK_STR(v, "1");
	OK(mdb_cursor_get(c, &k, &v, MDB_NEXT));
	CHECK_STR(v, "2");
	OK(mdb_cursor_get(c, &k, &v, MDB_NEXT));
	CHECK_STR(v, "3");
	CHECK_RC(mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP), MDB_NOTFOUND);
	OK(mdb_cursor_get(c, &k, &v, MDB_NEXT_NODUP));
	CHECK_STR(k, "b");
	CHECK_STR(v, "5");
	OK(mdb_cursor_get(c, &k, &v, MDB_PREV_NODUP));
	CHECK_STR(k, "a");
	CHECK_STR(v, "3");
	OK(mdb_cursor_get(c, &k, &v, MDB_PREV_DUP));
	CHECK_STR(v, "2");
	MDB_val k0 = t_val("unchanged");
	OK(mdb_cursor_get(c, &k0, &v, MDB_FIRST_DUP));
	CHECK_STR(v, "1");
	CHECK_STR(k0, "unchanged"); /* key not set when the key has several items */
	size_t count = 0;
	OK(mdb_cursor_count(c, &count));
	CHECK_EQ(count, 3);
	k = t_val("bb");
	OK(mdb_cursor_get(c, &k, &v, MDB_SET_RANGE));
	CHECK_STR(k, "c");
	CHECK_STR(v, "7");
	k = t_val("a");
	v = t_val("25");
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH_RANGE));
	CHECK_STR(v, "3");
	k = t_val("b");
	v = t_val("6");
	CHECK_RC(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH_RANGE), MDB_NOTFOUND);
	k = t_val("c");
	v = t_val("8");
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH));
	CHECK_STR(v, "8");
	k = t_val("zz");
	CHECK_RC(mdb_cursor_get(c, &k, &v, MDB_SET_RANGE), MDB_NOTFOUND);
	OK(mdb_cursor_get(c, &k, &v, MDB_PREV));
	CHECK_STR(k, "d");
	CHECK_STR(v, "2");
	OK(mdb_cursor_get(c, &k, &v, MDB_LAST));
	CHECK_STR(v, "2");
	CHECK_RC(mdb_cursor_get(c, &k, &v, MDB_NEXT), MDB_NOTFOUND);
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "d");
	CHECK_STR(v, "2");
	OK(mdb_cursor_get(c, &k, &v, MDB_PREV));
	CHECK_STR(v, "1");
	OK(mdb_cursor_get(c, &k, &v, MDB_FIRST));
	CHECK_STR(k, "a");
	CHECK_STR(v, "1");
	CHECK_RC(mdb_cursor_get(c, &k, &v, MDB_PREV), MDB_NOTFOUND);
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(v, "1");
	OK(mdb_cursor_get(c, &k, &v, MDB_LAST_DUP));
	CHECK_STR(v, "3");
	/* mdb_get returns the first item. */
	k = t_val("c");
	OK(mdb_get(txn, dbi, &k, &v));
	CHECK_STR(v, "7");
	MDB_stat st;
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 8);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_dup_write_flags(void)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "d", MDB_DUPSORT);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(put2(txn, dbi, "a", "2", 0));
	OK(put2(txn, dbi, "a", "1", 0));
	OK(put2(txn, dbi, "a", "2", 0)); /* exact pair again: success, no change */
	MDB_stat st;
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 2);
	CHECK_RC(put2(txn, dbi, "a", "2", MDB_NODUPDATA), MDB_KEYEXIST);
	OK(put2(txn, dbi, "a", "3", MDB_NODUPDATA));
	MDB_val k = t_val("a"), v = t_val("9");
	CHECK_RC(mdb_put(txn, dbi, &k, &v, MDB_NOOVERWRITE), MDB_KEYEXIST);
	CHECK_STR(v, "1"); /* the key's first item */
	/* APPEND / APPENDDUP (§6.3 examples) */
	OK(put2(txn, dbi, "c", "x", 0));
	CHECK_RC(put2(txn, dbi, "c", "y", MDB_APPEND), MDB_KEYEXIST);
	OK(put2(txn, dbi, "d", "1", MDB_APPEND));
	CHECK_RC(put2(txn, dbi, "d", "0", MDB_APPENDDUP), MDB_KEYEXIST);
	OK(put2(txn, dbi, "d", "2", MDB_APPENDDUP));
	CHECK_RC(put2(txn, dbi, "d", "2", MDB_APPENDDUP), MDB_KEYEXIST);
	/* deletes: one pair, a missing pair, a whole key */
	k = t_val("a");
	v = t_val("2");
	OK(mdb_del(txn, dbi, &k, &v));
	CHECK_RC(mdb_del(txn, dbi, &k, &v), MDB_NOTFOUND);
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 5); /* a:{1,3} c:{x} d:{1,2} */
	OK(mdb_del(txn, dbi, &k, NULL));
	k = t_val("a");
	CHECK_RC(mdb_get(txn, dbi, &k, &v), MDB_NOTFOUND);
	/* deleting the last item of a key removes the key */
	k = t_val("c");
	v = t_val("x");
	OK(mdb_del(txn, dbi, &k, &v));
	CHECK_RC(mdb_get(txn, dbi, &k, &v), MDB_NOTFOUND);
	/* DUPSORT items are limited to 511 bytes */
	char big[512];
	memset(big, 'v', sizeof big);
	k = t_val("e");
	v = t_mem(big, 512);
	CHECK_RC(mdb_put(txn, dbi, &k, &v, 0), MDB_BAD_VALSIZE);
	v = t_mem(big, 511);
	OK(mdb_put(txn, dbi, &k, &v, 0));
	OK(mdb_txn_commit(txn));

	/* cursor_del with NODUPDATA removes every item of the key */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	k = t_val("d");
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	size_t count = 0;
	OK(mdb_cursor_count(c, &count));
	CHECK_EQ(count, 2);
	OK(mdb_cursor_del(c, MDB_NODUPDATA));
	k = t_val("d");
	CHECK_RC(mdb_get(txn, dbi, &k, &v), MDB_NOTFOUND);
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 1);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

/* A key with thousands of items (a sub-database), then shrunk again. */
static void test_dup_large_sets(void)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "d", MDB_DUPSORT);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 3000; i++) {
		char v[32];
		snprintf(v, sizeof v, "item-%05d", (i * 7) % 3000);
		OK(put2(txn, dbi, "hot", v, 0));
		if (i % 10 == 0) {
			char k[16];
			snprintf(k, sizeof k, "k%04d", i);
			OK(put2(txn, dbi, k, v, 0));
			OK(put2(txn, dbi, k, "second", 0));
		}
	}
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k = t_val("hot"), v;
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	size_t count = 0;
	OK(mdb_cursor_count(c, &count));
	CHECK_EQ(count, 3000);
	int n = 0, bad = 0, rc;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST_DUP); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP)) {
		char want[32];
		snprintf(want, sizeof want, "item-%05d", n++);
		if (v.mv_size != strlen(want) || memcmp(v.mv_data, want, v.mv_size))
			bad++;
	}
	CHECK_EQ(n, 3000);
	CHECK_EQ(bad, 0);
	/* backwards through the set */
	n = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_LAST_DUP); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_PREV_DUP))
		n++;
	CHECK_EQ(n, 3000);
	k = t_val("hot");
	v = t_val("item-01500x");
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH_RANGE));
	CHECK_STR(v, "item-01501");
	MDB_stat st;
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 3000 + 600);
	/* whole-DB walk counts every pair */
	n = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))
		n++;
	CHECK_EQ(n, 3600);
	n = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_NODUP))
		n++;
	CHECK_EQ(n, 301);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);

	/* delete most of the big set: from the front through a cursor, then
	 * from the back with mdb_del (mixing both in one loop leaves stock
	 * LMDB's cursor with a stale item count) */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	k = t_val("hot");
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	for (int i = 0; i < 1495; i++) {
		OK(mdb_cursor_del(c, 0));
		if (i == 0) {
			OK(mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT));
			CHECK_STR(v, "item-00001");
		}
	}
	mdb_cursor_close(c);
	for (int i = 0; i < 1495; i++) {
		char vb[32];
		snprintf(vb, sizeof vb, "item-%05d", 2999 - i);
		MDB_val kk = t_val("hot"), vv = t_val(vb);
		OK(mdb_del(txn, dbi, &kk, &vv));
	}
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	k = t_val("hot");
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	OK(mdb_cursor_count(c, &count));
	CHECK_EQ(count, 10);
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 610);
	mdb_cursor_close(c);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

/* Run one MDB_MULTIPLE put of u32 items under key "k" (after pre[] stored
 * under it) and return its rc; *count gets the reported item count and
 * out[] the key's duplicates afterwards (*nout of them, 0 = key absent). */
static int multi_case(MDB_env *env, MDB_dbi dbi, const uint32_t *pre, int npre,
	const uint32_t *items, int n, unsigned flags, size_t *count, uint32_t *out, int *nout)
{
	MDB_txn *txn;
	MDB_cursor *c;
	int rc;
	*nout = 0;
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
		return rc;
	MDB_val k = t_val("k"), v;
	for (int i = 0; i < npre; i++) {
		v = t_mem(&pre[i], 4);
		if ((rc = mdb_put(txn, dbi, &k, &v, 0)))
			goto out;
	}
	if ((rc = mdb_cursor_open(txn, dbi, &c)))
		goto out;
	MDB_val mv[2] = { { 4, (void *)items }, { (size_t)n, NULL } };
	rc = mdb_cursor_put(c, &k, mv, flags | MDB_MULTIPLE);
	*count = mv[1].mv_size;
	k = t_val("k");
	if (!mdb_cursor_get(c, &k, &v, MDB_SET)) {
		do
			memcpy(&out[(*nout)++], v.mv_data, 4);
		while (*nout < 16 && !mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP));
	}
	mdb_cursor_close(c);
out:
	mdb_txn_abort(txn);
	return rc;
}

/*
 * MDB_MULTIPLE refusals.  Stock LMDB keeps the items stored before the one
 * it refuses; we check the whole run first and store nothing (as the newest
 * DLMDB).  Key-level flags (NOOVERWRITE, APPEND) apply to the first lookup
 * only, as in stock: the rest of the run then goes in under that key.
 */
static void test_multiple_all_or_nothing(void)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "f", MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP);
	REQUIRE(env);
	static const struct {
		const char *name;
		uint32_t pre[2];
		int npre;
		uint32_t items[4];
		int n;
		unsigned flags;
		int rc;
		int nout;
		uint32_t out[4];
	} cases[] = {
		{ "new key, APPENDDUP descending", {0}, 0, {1, 0}, 2, MDB_APPENDDUP, MDB_KEYEXIST, 0, {0} },
		{ "new key, APPENDDUP repeat", {0}, 0, {1, 2, 2}, 3, MDB_APPENDDUP, MDB_KEYEXIST, 0, {0} },
		{ "APPENDDUP below last", {5}, 1, {6, 4}, 2, MDB_APPENDDUP, MDB_KEYEXIST, 1, {5} },
		{ "APPENDDUP equal to last", {5}, 1, {5, 6}, 2, MDB_APPENDDUP, MDB_KEYEXIST, 1, {5} },
		{ "NODUPDATA item stored", {5}, 1, {1, 5, 7}, 3, MDB_NODUPDATA, MDB_KEYEXIST, 1, {5} },
		{ "NODUPDATA item twice", {0}, 0, {3, 1, 3}, 3, MDB_NODUPDATA, MDB_KEYEXIST, 0, {0} },
		{ "APPENDDUP ascending", {5}, 1, {6, 7}, 2, MDB_APPENDDUP, 0, 3, {5, 6, 7} },
		{ "NODUPDATA all new", {5}, 1, {7, 1}, 2, MDB_NODUPDATA, 0, 3, {1, 5, 7} },
		{ "NOOVERWRITE new key", {0}, 0, {1, 2, 3}, 3, MDB_NOOVERWRITE, 0, 3, {1, 2, 3} },
		{ "NOOVERWRITE key exists", {5}, 1, {1, 2}, 2, MDB_NOOVERWRITE, MDB_KEYEXIST, 1, {5} },
		{ "APPEND new last key", {0}, 0, {1, 2}, 2, MDB_APPEND, 0, 2, {1, 2} },
		{ "no flags, one stored", {5}, 1, {3, 5, 6}, 3, 0, 0, 3, {3, 5, 6} },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t count = 99;
		uint32_t out[16];
		int nout;
		int rc = multi_case(env, dbi, cases[i].pre, cases[i].npre, cases[i].items,
				    cases[i].n, cases[i].flags, &count, out, &nout);
#ifdef STOCK_LMDB
		if (rc && rc == cases[i].rc)
			continue;	/* stock keeps part of a refused run */
#endif
		if (rc != cases[i].rc)
			T_FAIL("%s: rc %d, want %d", cases[i].name, rc, cases[i].rc);
		if (count != (rc ? 0 : (size_t)cases[i].n))
			T_FAIL("%s: count %zu", cases[i].name, count);
		if (nout != cases[i].nout || memcmp(out, cases[i].out, 4 * (size_t)nout))
			T_FAIL("%s: %d items after, want %d", cases[i].name, nout, cases[i].nout);
	}
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
/* A run that fills the map midway: the put fails, the txn with it, and
 * nothing of the run reaches the file. */
static void test_multiple_map_full(void)
{
	MDB_env *env;
	MDB_dbi dbi;
	MDB_txn *txn;
	MDB_cursor *c;
	REQUIRE_OK(mdb_env_create(&env));
	OK(mdb_env_set_mapsize(env, 64 * 4096));
	OK(mdb_env_set_maxdbs(env, 2));
	REQUIRE_OK(mdb_env_open(env, t_dir, 0, 0664));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "f", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &dbi));
	MDB_val k = t_val("before"), v = t_val("1234");
	OK(mdb_put(txn, dbi, &k, &v, 0));
	REQUIRE_OK(mdb_txn_commit(txn));
	enum { N = 200000 };
	uint32_t *items = malloc(N * 4);
	REQUIRE(items);
	for (uint32_t i = 0; i < N; i++)
		items[i] = __builtin_bswap32(i);	/* ascending as bytes */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	k = t_val("k");
	MDB_val mv[2] = { { 4, items }, { N, NULL } };
	CHECK_RC(mdb_cursor_put(c, &k, mv, MDB_MULTIPLE | MDB_APPENDDUP), MDB_MAP_FULL);
	CHECK(mv[1].mv_size < N);
	CHECK(mdb_txn_commit(txn) != 0);
	free(items);
	CHECK(t_get_is(env, dbi, "k", NULL));
	CHECK(t_get_is(env, dbi, "before", "1234"));
	mdb_env_close(env);
}
#endif

static void test_dupfixed_multiple(void)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "f", MDB_DUPSORT | MDB_DUPFIXED);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	/* MDB_MULTIPLE: 5 unsorted 4-byte items in one call (§6.4) */
	uint32_t items[5] = { 50, 10, 40, 20, 30 };
	MDB_val k = t_val("m"), mv[2];
	mv[0].mv_size = 4;
	mv[0].mv_data = items;
	mv[1].mv_size = 5;
	mv[1].mv_data = NULL;
	OK(mdb_cursor_put(c, &k, mv, MDB_MULTIPLE));
	CHECK_EQ(mv[1].mv_size, 5);
	/* and 2000 more, so the set spans several pages */
	for (uint32_t i = 0; i < 2000; i++) {
		uint32_t x = 1000 + i;
		MDB_val kk = t_val("m"), vv = t_mem(&x, 4);
		OK(mdb_put(txn, dbi, &kk, &vv, 0));
	}
	mdb_cursor_close(c);
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	k = t_val("m");
	MDB_val v;
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	size_t total = 0;
	int rc = mdb_cursor_get(c, &k, &v, MDB_GET_MULTIPLE);
	unsigned char prev[4] = { 0 };
	int sorted = 1;
	while (rc == 0) {
		CHECK_EQ(v.mv_size % 4, 0);
		for (size_t i = 0; i < v.mv_size / 4; i++) {
			/* no INTEGERDUP: items sort as bytes (memcmp) */
			const unsigned char *x = (const unsigned char *)v.mv_data + 4 * i;
			if (total && memcmp(x, prev, 4) <= 0)
				sorted = 0;
			memcpy(prev, x, 4);
			total++;
		}
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_MULTIPLE);
	}
	CHECK_RC(rc, MDB_NOTFOUND);
	CHECK_EQ(total, 2005);
	CHECK(sorted);
	size_t count;
	OK(mdb_cursor_count(c, &count));
	CHECK_EQ(count, 2005);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_integerdup_reversedup(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi idup, rdup;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "i", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP, &idup));
	OK(mdb_dbi_open(txn, "r", MDB_CREATE | MDB_DUPSORT | MDB_REVERSEDUP, &rdup));
	static const uint32_t nums[] = { 256, 1, 65536, 0, 255, 0xFFFFFFFFu, 2 };
	for (size_t i = 0; i < 7; i++) {
		MDB_val k = t_val("k"), v = t_mem(&nums[i], 4);
		OK(mdb_put(txn, idup, &k, &v, 0));
	}
	static const char *words[] = { "ab", "ba", "ca", "zz1", "a" };
	for (int i = 0; i < 5; i++)
		OK(put2(txn, rdup, "k", words[i], 0));
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, idup, &c));
	static const uint32_t want[] = { 0, 1, 2, 255, 256, 65536, 0xFFFFFFFFu };
	MDB_val k, v;
	int i = 0;
	for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), i++)
		if (i < 7)
			CHECK(v.mv_size == 4 && memcmp(v.mv_data, &want[i], 4) == 0);
	CHECK_EQ(i, 7);
	mdb_cursor_close(c);
	REQUIRE_OK(mdb_cursor_open(txn, rdup, &c));
	static const char *rwant[] = { "zz1", "a", "ba", "ca", "ab" };
	i = 0;
	for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), i++)
		if (i < 5)
			CHECK_STR(v, rwant[i]);
	CHECK_EQ(i, 5);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Randomized: many keys with 1..N items, against a bitmap model. */
#define DK 60
#define DV 120
static void dup_random_model(unsigned flags)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "rnd", MDB_DUPSORT | flags);
	REQUIRE(env);
	static unsigned char has[DK][DV];
	memset(has, 0, sizeof has);
	const char *se = getenv("DLMDB_SEED");
	uint64_t s = se ? strtoull(se, NULL, 0) : 99;
	if (!s)
		s = 99;
	for (int t = 0; t < 150; t++) {
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (int i = 0; i < 200; i++) {
			int k = (int)(t_rand(&s) % DK), d = (int)(t_rand(&s) % DV);
			/* skewed: a few keys get big sets */
			if (k < 3)
				d = (int)(t_rand(&s) % DV);
			else
				d %= 1 + k % 17;
			char kb[16], vb[64];
			snprintf(kb, sizeof kb, "key%02d", k);
			snprintf(vb, sizeof vb, "val-%03d-%.*s", d, d % 40, "................................................");
			MDB_val key = t_val(kb), val = t_val(vb);
			int r = (int)(t_rand(&s) % 10);
			int rc;
			if (r < 6) {
				rc = mdb_put(txn, dbi, &key, &val, MDB_NODUPDATA);
				if (has[k][d] ? rc != MDB_KEYEXIST : rc != 0)
					T_FAIL("put %s/%s: %d", kb, vb, rc);
				has[k][d] = 1;
			} else if (r < 9) {
				rc = mdb_del(txn, dbi, &key, &val);
				if (has[k][d] ? rc != 0 : rc != MDB_NOTFOUND)
					T_FAIL("del %s/%s: %d", kb, vb, rc);
				has[k][d] = 0;
			} else {
				rc = mdb_del(txn, dbi, &key, NULL);
				int any = 0;
				for (int j = 0; j < DV; j++)
					any |= has[k][j];
				if (any ? rc != 0 : rc != MDB_NOTFOUND)
					T_FAIL("del key %s: %d", kb, rc);
				memset(has[k], 0, DV);
			}
		}
		REQUIRE_OK(mdb_txn_commit(txn));
		if (t_failures)
			break;
		if (t % 10 != 9)
			continue;
		/* full comparison: walk every pair in order */
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		MDB_cursor *c;
		REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
		MDB_val key, val;
		int rc = mdb_cursor_get(c, &key, &val, MDB_FIRST);
		size_t total = 0;
		for (int k = 0; k < DK && t_failures == 0; k++) {
			char vbs[DV][64];
			int nd = 0;
			for (int d = 0; d < DV; d++)
				if (has[k][d])
					snprintf(vbs[nd++], 64, "val-%03d-%.*s", d, d % 40,
						 "................................................");
			/* sorted order of the strings = order of d (fixed-width prefix) */
			for (int j = 0; j < nd; j++) {
				char kb[16];
				snprintf(kb, sizeof kb, "key%02d", k);
				if (rc != 0 || key.mv_size != strlen(kb) ||
				    memcmp(key.mv_data, kb, key.mv_size) ||
				    val.mv_size != strlen(vbs[j]) ||
				    memcmp(val.mv_data, vbs[j], val.mv_size)) {
					T_FAIL("txn %d: walk at %s/%s: rc %d", t, kb, vbs[j], rc);
					break;
				}
				if (j == 0) {
					size_t cnt = 0;
					OK(mdb_cursor_count(c, &cnt));
					CHECK_EQ(cnt, nd);
					/* mdb_get gives the first item (uses a temporary
					 * cursor: the result must outlive it) */
					MDB_val gk = t_val(kb), gv;
					if (mdb_get(txn, dbi, &gk, &gv) != 0 ||
					    gv.mv_size != strlen(vbs[0]) ||
					    memcmp(gv.mv_data, vbs[0], gv.mv_size))
						T_FAIL("txn %d: mdb_get %s differs", t, kb);
				}
				total++;
				rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
			}
		}
		if (t_failures == 0)
			CHECK_RC(rc, MDB_NOTFOUND);
		MDB_stat st;
		OK(mdb_stat(txn, dbi, &st));
		CHECK_EQ(st.ms_entries, total);
		mdb_cursor_close(c);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

static void test_dup_random_model(void) { dup_random_model(0); }
#ifndef STOCK_LMDB
/* DLMDB: the same with prefix compression (keys and dup values) and counts. */
static void test_dup_random_model_prefix(void) { dup_random_model(MDB_PREFIX_COMPRESSION); }
static void test_dup_random_model_prefix_counted(void)
{
	dup_random_model(MDB_PREFIX_COMPRESSION | MDB_COUNTED);
}
#endif

#ifndef STOCK_LMDB
/* DLMDB mdb_cursor_list_dup (dlmdb-extensions.md §2.4.8 and N.5: the newest
 * DLMDB also lists sets kept in sub-databases). */
static void list_dup_case(MDB_env *env, const char *name, unsigned flags)
{
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, name, MDB_CREATE | flags, &dbi));
	char vb[32];
	for (int i = 0; i < 3; i++) {
		snprintf(vb, sizeof vb, "common-prefix-%03d", i);
		OK(put2(txn, dbi, "small", vb, 0));
	}
	OK(put2(txn, dbi, "single", "common-prefix-000", 0));
	for (int i = 0; i < 1000; i++) {
		snprintf(vb, sizeof vb, "common-prefix-%03d", i);
		OK(put2(txn, dbi, "big", vb, 0));
	}
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	const MDB_val *vals = NULL;
	mdb_size_t n = 0;
	CHECK_RC(mdb_cursor_list_dup(c, &vals, &n), MDB_NOTFOUND); /* unpositioned */
	CHECK_RC(mdb_cursor_list_dup(c, NULL, &n), EINVAL);
	MDB_val k = t_val("single"), v;
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	CHECK_RC(mdb_cursor_list_dup(c, &vals, &n), MDB_NOTFOUND);
	static const struct { const char *key; int n; } sets[] = { { "small", 3 }, { "big", 1000 } };
	for (int s = 0; s < 2; s++) {
		k = t_val(sets[s].key);
		OK(mdb_cursor_get(c, &k, &v, MDB_SET));
		int rc = mdb_cursor_list_dup(c, &vals, &n);
		if (rc) {
			T_FAIL("%s: list_dup(%s) rc %d (%s)", name, sets[s].key, rc, mdb_strerror(rc));
			continue;
		}
		CHECK_EQ(n, sets[s].n);
		int bad = 0;
		for (mdb_size_t i = 0; i < n && i < (mdb_size_t)sets[s].n; i++) {
			snprintf(vb, sizeof vb, "common-prefix-%03d", (int)i);
			if (vals[i].mv_size != strlen(vb) || memcmp(vals[i].mv_data, vb, vals[i].mv_size))
				bad++;
		}
		CHECK_EQ(bad, 0);
		/* the cursor did not move */
		OK(mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP));
		CHECK_STR(v, "common-prefix-001");
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
}

static void test_list_dup(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 4);
	REQUIRE(env);
	list_dup_case(env, "plain-dups", MDB_DUPSORT);
	list_dup_case(env, "prefix-dups", MDB_DUPSORT | MDB_PREFIX_COMPRESSION);
	/* not DUPSORT: incompatible */
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *c;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "nodup", MDB_CREATE, &dbi));
	OK(put2(txn, dbi, "k", "v", 0));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k, v;
	OK(mdb_cursor_get(c, &k, &v, MDB_FIRST));
	const MDB_val *vals;
	mdb_size_t n;
	CHECK_RC(mdb_cursor_list_dup(c, &vals, &n), MDB_INCOMPATIBLE);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}
#endif

/* DUPFIXED items of odd size (1, 3, 5, 7 bytes) under odd and even key
 * lengths: LEAF2 items are packed with no padding (lmdb-format.md §7) while
 * node keys are padded in the DLMDB layouts (dlmdb-extensions.md §3.2), so
 * the sub-page sizes must be computed the same way by writer and reader.
 * Covers inline sub-pages (few items) and promotion to a sub-database. */
static void odd_item(unsigned char *out, size_t isz, unsigned i)
{
	/* a distinct big-endian value per i, spread so insertion is unsorted */
	unsigned x = (i * 2654435761u) % (isz == 1 ? 256u : 1000003u);
	for (size_t b = 0; b < isz; b++)
		out[isz - 1 - b] = b < 4 ? (unsigned char)(x >> (8 * b)) : (unsigned char)0xA5;
}

static int odd_cmp_sz;
static int odd_cmp(const void *a, const void *b)
{
	return memcmp(a, b, (size_t)odd_cmp_sz);
}

static void odd_verify(MDB_env *env, MDB_dbi dbi, const char *key, size_t isz,
		       const unsigned char *want, size_t n, const char *what)
{
	MDB_txn *txn;
	MDB_cursor *c;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k = t_val(key), v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET);
	if (rc) {
		T_FAIL("%s: MDB_SET: %d (%s)", what, rc, mdb_strerror(rc));
		goto out;
	}
	size_t cnt = 0;
	OK(mdb_cursor_count(c, &cnt));
	CHECK_EQ(cnt, n);
	/* GET_MULTIPLE / NEXT_MULTIPLE walk */
	size_t got = 0;
	rc = mdb_cursor_get(c, &k, &v, MDB_GET_MULTIPLE);
	while (rc == 0) {
		CHECK_EQ(v.mv_size % isz, 0);
		if (got + v.mv_size / isz > n ||
		    memcmp(v.mv_data, want + got * isz, v.mv_size) != 0) {
			T_FAIL("%s: GET_MULTIPLE chunk at %zu differs", what, got);
			goto out;
		}
		got += v.mv_size / isz;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_MULTIPLE);
	}
	CHECK_RC(rc, MDB_NOTFOUND);
	if (got != n)
		T_FAIL("%s: GET_MULTIPLE saw %zu items, want %zu", what, got, n);
	/* FIRST_DUP / NEXT_DUP walk */
	got = 0;
	k = t_val(key);
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	rc = mdb_cursor_get(c, &k, &v, MDB_FIRST_DUP);
	while (rc == 0) {
		if (got >= n || v.mv_size != isz || memcmp(v.mv_data, want + got * isz, isz)) {
			T_FAIL("%s: NEXT_DUP item %zu differs", what, got);
			goto out;
		}
		got++;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP);
	}
	CHECK_RC(rc, MDB_NOTFOUND);
	if (got != n)
		T_FAIL("%s: NEXT_DUP saw %zu items, want %zu", what, got, n);
out:
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
}

static void test_dupfixed_odd_sizes(void)
{
#ifdef STOCK_LMDB
	static const unsigned layouts[] = { 0 };
	static const unsigned counted[] = { 0 };
#else
	static const unsigned layouts[] = { 0, MDB_FORMAT_DLMDB_V1, MDB_FORMAT_LMDB };
	static const unsigned counted[] = { 0, MDB_COUNTED };
#endif
	static const size_t isizes[] = { 1, 3, 5, 7, 2, 4 };
	static const char *keys[] = { "k", "kk", "kkk", "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk" };
	static const size_t counts[] = { 2, 40, 250, 1500 };
	unsigned char *vals = malloc(1500 * 8), *want = malloc(1500 * 8);
	REQUIRE(vals && want);
	unsigned file = 0;
	for (size_t li = 0; li < sizeof layouts / sizeof *layouts; li++)
	for (size_t ci = 0; ci < sizeof counted / sizeof *counted; ci++) {
#ifndef STOCK_LMDB
		if (counted[ci] && layouts[li] == MDB_FORMAT_LMDB)
			continue;	/* stock format has no COUNTED databases */
#endif
		char fname[32];
		snprintf(fname, sizeof fname, "odd%u.db", file++);
		MDB_env *env = t_env_open(t_path(fname), MDB_NOSUBDIR | layouts[li], 64u << 20, 128);
		REQUIRE(env);
		for (size_t si = 0; si < sizeof isizes / sizeof *isizes; si++)
		for (size_t ki = 0; ki < sizeof keys / sizeof *keys; ki++)
		for (size_t ni = 0; ni < sizeof counts / sizeof *counts; ni++) {
			size_t isz = isizes[si], n = counts[ni];
			if (isz == 1 && n > 256)
				n = 256;
			char dname[32], what[96];
			snprintf(dname, sizeof dname, "d%zu_%zu_%zu", isz, ki, ni);
			snprintf(what, sizeof what, "layout 0x%x counted 0x%x size %zu key %zu n %zu",
				 layouts[li], counted[ci], isz, strlen(keys[ki]), n);
			MDB_txn *txn;
			MDB_dbi dbi;
			REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
			REQUIRE_OK(mdb_dbi_open(txn, dname, MDB_CREATE | MDB_DUPSORT |
						MDB_DUPFIXED | counted[ci], &dbi));
			/* neighbours on both sides so the dup node sits mid-page */
			OK(put2(txn, dbi, "a", "bcdefgh" + 7 - isz, 0));
			OK(put2(txn, dbi, "z", "bcdefgh" + 7 - isz, 0));
			int rc = 0;
			for (size_t i = 0; i < n && !rc; i++) {
				odd_item(vals + i * isz, isz, (unsigned)i);
				MDB_val k = t_val(keys[ki]), v = t_mem(vals + i * isz, isz);
				rc = mdb_put(txn, dbi, &k, &v, 0);
				if (rc)
					T_FAIL("%s: put #%zu: %d (%s)", what, i, rc, mdb_strerror(rc));
				/* commit midway so later puts work on a committed set */
				if (!rc && i == n / 2) {
					rc = mdb_txn_commit(txn);
					if (!rc)
						rc = mdb_txn_begin(env, NULL, 0, &txn);
					if (rc)
						T_FAIL("%s: commit: %d", what, rc);
				}
			}
			if (rc) {
				mdb_txn_abort(txn);
				continue;
			}
			REQUIRE_OK(mdb_txn_commit(txn));
			memcpy(want, vals, n * isz);
			odd_cmp_sz = (int)isz;
			qsort(want, n, isz, odd_cmp);
			odd_verify(env, dbi, keys[ki], isz, want, n, what);
			/* delete every third item, verify, then the neighbours still read */
			REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
			size_t m = 0;
			for (size_t i = 0; i < n; i++) {
				MDB_val k = t_val(keys[ki]), v = t_mem(want + i * isz, isz);
				if (i % 3 == 1)
					OK(mdb_del(txn, dbi, &k, &v));
				else
					memmove(want + m++ * isz, want + i * isz, isz);
			}
			REQUIRE_OK(mdb_txn_commit(txn));
			odd_verify(env, dbi, keys[ki], isz, want, m, what);
			REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
			MDB_val k = t_val("z"), v;
			OK(mdb_get(txn, dbi, &k, &v));
			CHECK_VAL(v, "bcdefgh" + 7 - isz, isz);
			mdb_txn_abort(txn);
		}
		mdb_env_close(env);
	}
	free(vals);
	free(want);
}

#ifndef STOCK_LMDB
/*
 * Find the one leaf node of key klen/kp with F_DUPDATA (an inline sub-page)
 * in the data file and copy the node (header, key, sub-page) to out.
 * Returns the node's byte length, 0 when not found exactly once.
 */
static size_t find_dup_node(const char *dir, unsigned psize, const void *kp, size_t klen,
	int pad, unsigned char *out, size_t cap)
{
	char path[700];
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	unsigned char *pg = malloc(psize);
	size_t got = 0, found = 0;
	while (pg && fread(pg, 1, psize, f) == psize) {
		uint16_t flags, lower;
		memcpy(&flags, pg + 10, 2);
		memcpy(&lower, pg + 12, 2);
		if ((flags & 0x7f) != 0x02 || lower < 16 || lower > psize)
			continue;
		for (unsigned j = 0; j < (lower - 16u) / 2; j++) {
			uint16_t off, lo, hi, nf, ks;
			memcpy(&off, pg + 16 + 2 * j, 2);
			if (off + 8u > psize)
				break;
			memcpy(&lo, pg + off, 2);
			memcpy(&hi, pg + off + 2, 2);
			memcpy(&nf, pg + off + 4, 2);
			memcpy(&ks, pg + off + 6, 2);
			size_t len = 8u + ks + (ks & pad) + ((size_t)hi << 16 | lo);
			if (nf != 0x04 || ks != klen || off + len > psize ||
			    memcmp(pg + off + 8, kp, klen))
				continue;
			found++;
			if (len <= cap) {
				memcpy(out, pg + off, len);
				got = len;
			}
		}
	}
	free(pg);
	fclose(f);
	return found == 1 ? got : 0;
}

/*
 * Items added one at a time to an inline sub-page (grown in place) give the
 * same node bytes as the rebuild a delete does, in both node layouts and
 * with odd and even key and item lengths; neighbouring keys stay intact.
 */
static void test_subpage_grow_layout(void)
{
	static const unsigned fmts[] = { 0, MDB_FORMAT_LMDB };
	uint64_t seed = 0x5EB9A6E;
	unsigned char items[24][40], na[4096], nb[4096];
	size_t isz[24];
	for (unsigned fi = 0; fi < 2; fi++) {
		for (unsigned round = 0; round < 12; round++) {
			unsigned m = 2 + (unsigned)(t_rand(&seed) % 23);
			size_t klen = 1 + round % 5;
			char key[8] = "kkkkkkk";
			key[0] = (char)('c' + round % 2);
			for (unsigned i = 0; i < m; i++) {
				isz[i] = 1 + (size_t)(t_rand(&seed) % 40);
				for (size_t b = 0; b < isz[i]; b++)
					items[i][b] = (unsigned char)('0' + t_rand(&seed) % 4);
			}
			size_t len[2] = { 0, 0 };
			char dir[2][320];
			for (int side = 0; side < 2; side++) {
				snprintf(dir[side], sizeof dir[side], "%s/g%u_%u_%d", t_dir, fi,
					 round, side);
				REQUIRE(mkdir(dir[side], 0755) == 0);
				MDB_env *env = t_env_open(dir[side], fmts[fi], 16u << 20, 4);
				REQUIRE(env);
				MDB_txn *txn;
				MDB_dbi dbi;
				REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
				REQUIRE_OK(mdb_dbi_open(txn, "d", MDB_CREATE | MDB_DUPSORT, &dbi));
				/* Neighbours on both sides (below and above in the page). */
				OK(put2(txn, dbi, "a", "first", 0));
				OK(put2(txn, dbi, "b", "second", 0));
				OK(put2(txn, dbi, "e", "after", 0));
				OK(put2(txn, dbi, "f", "last", 0));
				MDB_val k = t_mem(key, klen);
				for (unsigned i = 0; i < m; i++) {
					MDB_val v = t_mem(items[i], isz[i]);
					OK(mdb_put(txn, dbi, &k, &v, 0));
					OK(mdb_put(txn, dbi, &k, &v, 0));	/* exists: no-op */
				}
				if (side == 1) {
					/* One more item, deleted again: the delete
					 * rebuilds the sub-page from scratch. */
					MDB_val x = t_mem("~extra~", 7);
					OK(mdb_put(txn, dbi, &k, &x, 0));
					OK(mdb_del(txn, dbi, &k, &x));
				}
				OK(mdb_txn_commit(txn));
				MDB_stat st;
				REQUIRE_OK(mdb_env_stat(env, &st));
				len[side] = find_dup_node(dir[side], st.ms_psize, key, klen,
							  fmts[fi] ? 0 : 1, side ? nb : na,
							  sizeof na);
				/* Contents: neighbours and the sorted set. */
				REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
				MDB_val kk = t_val("a"), v;
				OK(mdb_get(txn, dbi, &kk, &v));
				CHECK_STR(v, "first");
				kk = t_val("b");
				OK(mdb_get(txn, dbi, &kk, &v));
				CHECK_STR(v, "second");
				kk = t_val("e");
				OK(mdb_get(txn, dbi, &kk, &v));
				CHECK_STR(v, "after");
				kk = t_val("f");
				OK(mdb_get(txn, dbi, &kk, &v));
				CHECK_STR(v, "last");
				MDB_cursor *c;
				REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
				kk = k;
				OK(mdb_cursor_get(c, &kk, &v, MDB_SET_KEY));
				size_t cnt = 0;
				OK(mdb_cursor_count(c, &cnt));
				MDB_val prev = { 0, NULL };
				unsigned seen = 0;
				do {
					if (prev.mv_data) {
						size_t n = prev.mv_size < v.mv_size ? prev.mv_size :
							   v.mv_size;
						int r = memcmp(prev.mv_data, v.mv_data, n);
						CHECK(r < 0 || (r == 0 && prev.mv_size < v.mv_size));
					}
					prev = v;
					seen++;
				} while (mdb_cursor_get(c, &kk, &v, MDB_NEXT_DUP) == 0);
				CHECK(seen == cnt);
				for (unsigned i = 0; i < m; i++) {
					MDB_val want = t_mem(items[i], isz[i]);
					kk = k;
					OK(mdb_cursor_get(c, &kk, &want, MDB_GET_BOTH));
				}
				mdb_cursor_close(c);
				mdb_txn_abort(txn);
				mdb_env_close(env);
			}
			CHECK(len[0] > 0 && len[0] == len[1]);
			if (len[0] && len[0] == len[1] && memcmp(na, nb, len[0])) {
				size_t d = 0;
				while (na[d] == nb[d])
					d++;
				T_FAIL("fmt %u round %u: node bytes differ at %zu of %zu", fi,
				       round, d, len[0]);
			}
		}
	}
}
#endif

/* Order of the default duplicate compare: bytes, then the shorter first. */
static int lex_cmp(const unsigned char *a, size_t al, const unsigned char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/* One value of the sub-page search cases: mostly 'a' bytes with a few
 * varied ones (the last 8 bytes usually), lengths around 32 when mixed. */
static size_t word_val(unsigned char *v, uint64_t *s, int mixed)
{
	static const size_t lens[] = { 9, 15, 16, 24, 31, 32, 32, 32, 33, 40 };
	static const unsigned char alpha[] = { 0x00, 'a', 'b', 0xff };
	size_t len = mixed ? lens[t_rand(s) % 10] : 32;
	memset(v, 'a', len);
	v[len - 1] = alpha[t_rand(s) % 4];
	v[len - 2] = alpha[t_rand(s) % 4];
	if (t_rand(s) % 4 == 0)
		v[len - 1 - t_rand(s) % 8] = alpha[t_rand(s) % 4];
	if (t_rand(s) % 16 == 0)	/* a difference before the last 8 bytes */
		v[t_rand(s) % len] = alpha[t_rand(s) % 4];
	return len;
}

/* GET_BOTH, GET_BOTH_RANGE and mdb_del(key, value) on uncompressed sub-pages
 * whose values share all but their last bytes (the word compares of the
 * sub-page search) or have mixed lengths (its general way), against a
 * sorted model of each key's set. */
static void test_subpage_word_search(void)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, "ws", MDB_DUPSORT);
	REQUIRE(env);
	enum { NV = 24 };
	uint64_t s = 7;
	for (int mixed = 0; mixed < 2 && !t_failures; mixed++) {
		unsigned char set[NV][40], v[40];
		size_t sl[NV], n = 0;
		char kb[16];
		snprintf(kb, sizeof kb, "k%d", mixed);
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		MDB_val key = t_val(kb);
		while (n < NV) {
			size_t len = word_val(v, &s, mixed), at = 0;
			while (at < n && lex_cmp(set[at], sl[at], v, len) < 0)
				at++;
			if (at < n && !lex_cmp(set[at], sl[at], v, len))
				continue;
			memmove(set[at + 1], set[at], sizeof set[0] * (n - at));
			memmove(sl + at + 1, sl + at, sizeof sl[0] * (n - at));
			memcpy(set[at], v, len);
			sl[at] = len;
			n++;
			MDB_val d = { len, v };
			OK(mdb_put(txn, dbi, &key, &d, MDB_NODUPDATA));
		}
		MDB_cursor *c;
		REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
		for (int q = 0; q < 3000 && !t_failures; q++) {
			size_t len = word_val(v, &s, mixed), at = 0;
			while (at < n && lex_cmp(set[at], sl[at], v, len) < 0)
				at++;
			int found = at < n && !lex_cmp(set[at], sl[at], v, len);
			MDB_val k = key, d = { len, v };
			int rc = mdb_cursor_get(c, &k, &d, MDB_GET_BOTH);
			if (found ? rc != 0 : rc != MDB_NOTFOUND)
				T_FAIL("mixed %d probe %d: GET_BOTH %d, expected found %d", mixed, q,
				       rc, found);
			k = key;
			d.mv_size = len;
			d.mv_data = v;
			rc = mdb_cursor_get(c, &k, &d, MDB_GET_BOTH_RANGE);
			if (at == n ? rc != MDB_NOTFOUND :
			    rc != 0 || lex_cmp(d.mv_data, d.mv_size, set[at], sl[at]))
				T_FAIL("mixed %d probe %d: GET_BOTH_RANGE %d, expected item %zu of %zu",
				       mixed, q, rc, at, n);
			if (found && n > 2 && q % 3 == 0) {
				d.mv_size = len;
				d.mv_data = v;
				OK(mdb_del(txn, dbi, &key, &d));
				memmove(set[at], set[at + 1], sizeof set[0] * (n - at - 1));
				memmove(sl + at, sl + at + 1, sizeof sl[0] * (n - at - 1));
				n--;
			} else if (!found && n < NV && q % 3 == 1) {
				memmove(set[at + 1], set[at], sizeof set[0] * (n - at));
				memmove(sl + at + 1, sl + at, sizeof sl[0] * (n - at));
				memcpy(set[at], v, len);
				sl[at] = len;
				n++;
				d.mv_size = len;
				d.mv_data = v;
				OK(mdb_put(txn, dbi, &key, &d, MDB_NODUPDATA));
			}
		}
		/* The set in order, as the model holds it. */
		MDB_val k = key, d;
		int rc = mdb_cursor_get(c, &k, &d, MDB_SET_KEY);
		for (size_t j = 0; j < n && !t_failures; j++) {
			if (rc || lex_cmp(d.mv_data, d.mv_size, set[j], sl[j]))
				T_FAIL("mixed %d: item %zu of %zu differs (rc %d)", mixed, j, n, rc);
			rc = mdb_cursor_get(c, &k, &d, MDB_NEXT_DUP);
		}
		if (!t_failures)
			CHECK_RC(rc, MDB_NOTFOUND);
		mdb_cursor_close(c);
		REQUIRE_OK(mdb_txn_commit(txn));
	}
	mdb_env_close(env);
}

/*
 * mdb_del(key, value) on inline sub-pages of every size from one cache line
 * to many, at line-aligned and unaligned starts (the key lengths vary):
 * each key's values go in a scrambled order, half in one txn and half in
 * the next (so both a page read from the map and one this txn copied are
 * edited), and after every delete the key's remaining values, its count
 * and its neighbours and the DB's entry count are checked against the model.
 */
static void dup_delete_by_value_sizes(const char *name, unsigned flags)
{
	MDB_dbi dbi;
	MDB_env *env = open_dup_env(&dbi, name, MDB_DUPSORT | flags);
	REQUIRE(env);
	size_t total = 0;
	static const size_t vsz[] = { 1, 7, 24, 64, 130 };
	enum { NK = 3, NV = 24 };
	for (size_t z = 0; z < sizeof vsz / sizeof vsz[0] && !t_failures; z++) {
		for (int nv = 1; nv <= NV && !t_failures; nv += 5) {
			char keys[NK][64];
			unsigned char vals[NV][130];
			int left[NV], order[NV];
			MDB_txn *txn;
			REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
			for (int k = 0; k < NK; k++) {
				snprintf(keys[k], sizeof keys[k], "%c%.*s%zu-%d", 'a' + k,
				    (int)z * 3 + k, "000000000000000000", z, nv);
				for (int i = 0; i < nv; i++) {
					memset(vals[i], 'a' + k, vsz[z]);
					vals[i][vsz[z] - 1] = (unsigned char)(i * 7 + 1);
					MDB_val key = t_val(keys[k]), d = { vsz[z], vals[i] };
					OK(mdb_put(txn, dbi, &key, &d, 0));
				}
			}
			total += NK * (size_t)nv;
			REQUIRE_OK(mdb_txn_commit(txn));
			/* The middle key's values go, in a scrambled order. */
			uint64_t r = 0x9E3779B97F4A7C15ull * (z * NV + (size_t)nv);
			for (int i = 0; i < nv; i++) {
				memset(vals[i], 'a' + 1, vsz[z]);
				vals[i][vsz[z] - 1] = (unsigned char)(i * 7 + 1);
				left[i] = 1;
				order[i] = i;
			}
			for (int i = nv - 1; i > 0; i--) {
				r = r * 6364136223846793005ull + 1442695040888963407ull;
				int j = (int)((r >> 33) % (uint64_t)(i + 1)), t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
			MDB_val mid = t_val(keys[1]);
			for (int half = 0; half < 2 && !t_failures; half++) {
				REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
				MDB_cursor *c;
				REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
				int from = half ? nv / 2 : 0, to = half ? nv : nv / 2;
				for (int j = from; j < to && !t_failures; j++) {
					int i = order[j];
					MDB_val d = { vsz[z], vals[i] };
					OK(mdb_del(txn, dbi, &mid, &d));
					left[i] = 0;
					MDB_stat st;
					total--;
					if (mdb_stat(txn, dbi, &st) || st.ms_entries != total)
						T_FAIL("size %zu n %d: %zu entries, expected %zu", vsz[z],
						       nv, (size_t)st.ms_entries, total);
					int remain = 0;
					for (int q = 0; q < nv; q++) {
						MDB_val k = mid, e = { vsz[z], vals[q] };
						int rc = mdb_cursor_get(c, &k, &e, MDB_GET_BOTH);
						if (rc != (left[q] ? 0 : MDB_NOTFOUND))
							T_FAIL("size %zu n %d: value %d after %d deletes: %d",
							       vsz[z], nv, q, j + 1, rc);
						remain += left[q];
					}
					MDB_val k = mid, e;
					int rc = mdb_cursor_get(c, &k, &e, MDB_SET);
					if (remain) {
						size_t cnt = 0;
						if (rc || mdb_cursor_count(c, &cnt) || cnt != (size_t)remain)
							T_FAIL("size %zu n %d: count %zu, expected %d (rc %d)",
							       vsz[z], nv, (size_t)cnt, remain, rc);
					} else if (rc != MDB_NOTFOUND) {
						T_FAIL("size %zu n %d: key still there (%d)", vsz[z], nv, rc);
					}
					for (int nb = 0; nb < NK; nb += 2) {
						MDB_val nk = t_val(keys[nb]), ne;
						size_t cnt = 0;
						if (mdb_cursor_get(c, &nk, &ne, MDB_SET) ||
						    mdb_cursor_count(c, &cnt) || cnt != (size_t)nv ||
						    ne.mv_size != vsz[z] ||
						    (vsz[z] > 1 && ((unsigned char *)ne.mv_data)[0] != 'a' + nb))
							T_FAIL("size %zu n %d: neighbour %d changed", vsz[z], nv, nb);
					}
				}
				mdb_cursor_close(c);
				REQUIRE_OK(mdb_txn_commit(txn));
			}
		}
	}
	mdb_env_close(env);
}

static void test_dup_delete_by_value_sizes(void)
{
	dup_delete_by_value_sizes("dv", 0);
}

#ifndef STOCK_LMDB
static void test_dup_delete_by_value_sizes_counted(void)
{
	dup_delete_by_value_sizes("dvc", MDB_COUNTED);
}
#endif

int main(void)
{
	RUN(test_dup_trace);
	RUN(test_dup_write_flags);
	RUN(test_dup_large_sets);
	RUN(test_dupfixed_multiple);
	RUN(test_multiple_all_or_nothing);
#ifndef STOCK_LMDB
	RUN(test_multiple_map_full);
#endif
	RUN(test_dupfixed_odd_sizes);
	RUN(test_integerdup_reversedup);
	RUN(test_subpage_word_search);
	RUN(test_dup_delete_by_value_sizes);
#ifndef STOCK_LMDB
	RUN(test_dup_delete_by_value_sizes_counted);
#endif
	RUN(test_dup_random_model);
#ifndef STOCK_LMDB
	RUN(test_dup_random_model_prefix);
	RUN(test_dup_random_model_prefix_counted);
	RUN(test_list_dup);
	RUN(test_subpage_grow_layout);
#endif
	T_DONE();
}
