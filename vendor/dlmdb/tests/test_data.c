/* Data access: get/put/del, write flags, value and key sizes, overflow
 * pages, map full, freed-page reuse (lmdb-api.md §4.5, §6, §8; lmdb-format.md
 * §6, §12, §14). */
#include "t.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 8)) & 0xff);
}

static void test_get_put_del(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_val k, v, d;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	k = t_val("apple");
	v = t_val("red");
	OK(mdb_put(txn, 1, &k, &v, 0));
	k = t_val("banana");
	v = t_val("yellow");
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_STR(d, "yellow");
	/* Replace with a value of another size. */
	v = t_val("yellowish-green");
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_STR(d, "yellowish-green");
	/* Non-DUPSORT: the data argument of mdb_del is ignored. */
	MDB_val other = t_val("whatever");
	OK(mdb_del(txn, 1, &k, &other));
	CHECK_RC(mdb_get(txn, 1, &k, &d), MDB_NOTFOUND);
	CHECK_RC(mdb_del(txn, 1, &k, NULL), MDB_NOTFOUND);
	OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, 1, "apple", "red"));
	CHECK(t_get_is(env, 1, "banana", NULL));

	/* Forbidden mdb_put flags. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	k = t_val("apple");
	CHECK_RC(mdb_put(txn, 1, &k, &v, MDB_CURRENT), EINVAL);
	CHECK_RC(mdb_put(txn, 1, &k, &v, MDB_MULTIPLE), EINVAL);
	/* NODUPDATA means nothing on a plain DB: the value is replaced. */
	v = t_val("green");
	OK(mdb_put(txn, 1, &k, &v, MDB_NODUPDATA));
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_STR(d, "green");
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_nooverwrite(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	static char big[5000];
	memset(big, 'q', sizeof big);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("key"), v = t_val("original");
	OK(mdb_put(txn, 1, &k, &v, MDB_NOOVERWRITE));
	MDB_val nv = t_val("replacement");
	CHECK_RC(mdb_put(txn, 1, &k, &nv, MDB_NOOVERWRITE), MDB_KEYEXIST);
	CHECK_STR(nv, "original"); /* data now shows the existing value */
	/* Same for a value in overflow pages. */
	MDB_val bk = t_val("bigkey"), bv = t_mem(big, sizeof big);
	OK(mdb_put(txn, 1, &bk, &bv, 0));
	nv = t_val("small");
	CHECK_RC(mdb_put(txn, 1, &bk, &nv, MDB_NOOVERWRITE), MDB_KEYEXIST);
	CHECK_VAL(nv, big, sizeof big);
	OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, 1, "key", "original"));
	mdb_env_close(env);
}

static void test_reserve(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 4u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	static const size_t sizes[] = { 0, 1, 100, 2000, 2100, 4096, 70000 };
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "r%zu", i);
		MDB_val k = t_val(kb), v = { sizes[i], NULL };
		OK(mdb_put(txn, 1, &k, &v, MDB_RESERVE));
		CHECK_EQ(v.mv_size, sizes[i]);
		CHECK(sizes[i] == 0 || v.mv_data != NULL);
		if (v.mv_data)
			fill(v.mv_data, sizes[i], (unsigned)i);
	}
	/* Reserve over an existing value. */
	MDB_val k = t_val("r2"), v = { 300, NULL };
	OK(mdb_put(txn, 1, &k, &v, MDB_RESERVE));
	REQUIRE(v.mv_data != NULL);
	fill(v.mv_data, 300, 99);
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char kb[16];
		size_t n = i == 2 ? 300 : sizes[i];
		unsigned char *want = malloc(n + 1);
		fill(want, n, i == 2 ? 99 : (unsigned)i);
		snprintf(kb, sizeof kb, "r%zu", i);
		MDB_val key = t_val(kb), d;
		OK(mdb_get(txn, 1, &key, &d));
		CHECK_VAL(d, want, n);
		free(want);
	}
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_append(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi app, ins;
	char kb[16], vb[16];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "app", MDB_CREATE, &app));
	OK(mdb_dbi_open(txn, "ins", MDB_CREATE, &ins));
	for (int i = 0; i < 10000; i++) {
		snprintf(kb, sizeof kb, "%08d", i);
		snprintf(vb, sizeof vb, "v%07d", i);
		MDB_val k = t_val(kb), v = t_val(vb);
		OK(mdb_put(txn, app, &k, &v, MDB_APPEND));
		k = t_val(kb);
		v = t_val(vb);
		OK(mdb_put(txn, ins, &k, &v, 0));
	}
	/* Out of order and equal keys are refused without harming the txn. */
	MDB_val k = t_val("00005000"), v = t_val("x");
	CHECK_RC(mdb_put(txn, app, &k, &v, MDB_APPEND), MDB_KEYEXIST);
	k = t_val("00009999");
	CHECK_RC(mdb_put(txn, app, &k, &v, MDB_APPEND), MDB_KEYEXIST);
	k = t_val("0");
	CHECK_RC(mdb_put(txn, app, &k, &v, MDB_APPEND), MDB_KEYEXIST);
	k = t_val("99999999");
	OK(mdb_put(txn, app, &k, &v, MDB_APPEND));
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_stat sa, si;
	OK(mdb_stat(txn, app, &sa));
	OK(mdb_stat(txn, ins, &si));
	CHECK_EQ(sa.ms_entries, 10001);
	CHECK_EQ(si.ms_entries, 10000);
	/* Appended pages are packed full: 24+2 bytes per item -> about 156 items
	 * per 4 KiB page, so about 65 leaves. */
	CHECK(sa.ms_leaf_pages <= si.ms_leaf_pages);
	if (sa.ms_psize == 4096 && sa.ms_leaf_pages > 70)
		T_FAIL("MDB_APPEND left %zu leaf pages, want <= 70", (size_t)sa.ms_leaf_pages);
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(txn, app, &cur));
	int n = 0, bad = 0;
	MDB_val d;
	while (mdb_cursor_get(cur, &k, &d, MDB_NEXT) == 0) {
		if (n < 10000) {
			snprintf(kb, sizeof kb, "%08d", n);
			snprintf(vb, sizeof vb, "v%07d", n);
			if (k.mv_size != 8 || memcmp(k.mv_data, kb, 8) || d.mv_size != 8 ||
			    memcmp(d.mv_data, vb, 8))
				bad++;
		}
		n++;
	}
	CHECK_EQ(n, 10001);
	CHECK_EQ(bad, 0);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);

	/* Appending to an empty DB in a fresh txn, and after reopen. */
	mdb_env_close(env);
	env = t_env_open(t_dir, 0, 16u << 20, 2);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "app", 0, &app));
	k = t_val("99999998");
	CHECK_RC(mdb_put(txn, app, &k, &v, MDB_APPEND), MDB_KEYEXIST);
	k = t_val("a");
	OK(mdb_put(txn, app, &k, &v, MDB_APPEND));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_cursor_put_current(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 4u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_cursor *cur;
	static unsigned char big[9000];
	fill(big, sizeof big, 5);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 50; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%02d", i);
		MDB_val k = t_val(kb), v = t_val("0123456789");
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	MDB_val k, v;
	/* Unpositioned cursor: EINVAL. */
	k = t_val("k10");
	v = t_val("x");
	CHECK_RC(mdb_cursor_put(cur, &k, &v, MDB_CURRENT), EINVAL);
	k = t_val("k10");
	OK(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY));
	/* Same size (in place), smaller, larger, overflow, and back. */
	MDB_val nv = t_val("abcdefghij");
	k = t_val("k10");
	OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(k, "k10");
	CHECK_STR(v, "abcdefghij");
	nv = t_val("ab");
	k = t_val("k10");
	OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(v, "ab");
	nv = t_val("a considerably longer value than before");
	k = t_val("k10");
	OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_STR(v, "a considerably longer value than before");
	nv = t_mem(big, sizeof big);
	k = t_val("k10");
	OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_VAL(v, big, sizeof big);
	nv = t_mem(big, 5000); /* still overflow, fewer pages */
	k = t_val("k10");
	OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
	OK(mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT));
	CHECK_VAL(v, big, 5000);
	nv = t_val("tiny");
	k = t_val("k10");
	OK(mdb_cursor_put(cur, &k, &nv, MDB_CURRENT));
	/* The cursor still walks on from there. */
	OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
	CHECK_STR(k, "k11");
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 50);
	mdb_txn_abort(txn);
	CHECK(t_get_is(env, 1, "k10", "tiny"));
	CHECK(t_get_is(env, 1, "k11", "0123456789"));
	mdb_env_close(env);
}

/* Round-trip values of many sizes, through commit and reopen. */
static void test_value_sizes(void)
{
	static const size_t sizes[] = { 0, 1, 2, 7, 8, 100, 1000, 2020, 2021, 2022, 2023, 2024,
					2026, 2027, 2028, 2029, 2030, 2031, 2032, 2040, 2100,
					4079, 4080, 4081, 4096, 8160, 8161, 100 * 1024 };
	const size_t n = sizeof sizes / sizeof sizes[0];
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	unsigned char *buf = malloc(100 * 1024);
	REQUIRE(buf);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (size_t i = 0; i < n; i++) {
		/* 1-byte and 2-byte keys: odd and even key lengths */
		char k1[2] = { (char)('A' + i), 0 }, k2[3] = { 'b', (char)('A' + i), 0 };
		fill(buf, sizes[i], (unsigned)i);
		MDB_val k = t_val(k1), v = t_mem(buf, sizes[i]);
		OK(mdb_put(txn, 1, &k, &v, 0));
		k = t_val(k2);
		v = t_mem(buf, sizes[i]);
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	env = t_env_open(t_dir, MDB_RDONLY, 0, 0);
	if (!env) {
		free(buf);
		return;
	}
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	for (size_t i = 0; i < n; i++) {
		char k1[2] = { (char)('A' + i), 0 }, k2[3] = { 'b', (char)('A' + i), 0 };
		MDB_val k = t_val(k1), d;
		fill(buf, sizes[i], (unsigned)i);
		OK(mdb_get(txn, 1, &k, &d));
		CHECK_VAL(d, buf, sizes[i]);
		k = t_val(k2);
		OK(mdb_get(txn, 1, &k, &d));
		CHECK_VAL(d, buf, sizes[i]);
	}
	mdb_txn_abort(txn);
	mdb_env_close(env);
	free(buf);
}

/* lmdb-format.md §14: a value moves to overflow pages when
 * 8 + ksize + dsize > 2038 (4 KiB pages); a 2-byte key is laid out the same
 * in every format.  §6: an overflow run is ceil((16 + dsize) / psize) pages. */
static void test_overflow_boundary(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	if (st.ms_psize != 4096) {
		fprintf(stderr, "  SKIP: page size %u\n", st.ms_psize);
		mdb_env_close(env);
		return;
	}
	static const struct { size_t size; size_t pages; } cases[] = {
		{ 2028, 0 }, { 2029, 1 }, { 4080, 1 }, { 4081, 2 }, { 8176, 2 }, { 8177, 3 },
		{ 100 * 1024, 26 },
	};
	static unsigned char buf[100 * 1024];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		OK(mdb_drop(txn, 1, 0));
		fill(buf, cases[i].size, 1);
		MDB_val k = t_val("kk"), v = t_mem(buf, cases[i].size);
		OK(mdb_put(txn, 1, &k, &v, 0));
		OK(mdb_stat(txn, 1, &st));
		if (st.ms_overflow_pages != cases[i].pages)
			T_FAIL("value of %zu bytes: %zu overflow pages, want %zu", cases[i].size,
			       (size_t)st.ms_overflow_pages, cases[i].pages);
		OK(mdb_txn_commit(txn));
	}
	mdb_env_close(env);
}

static void test_huge_value(void)
{
	const size_t n = 5u << 20;
	MDB_env *env = t_env_open(t_dir, 0, 32u << 20, 0);
	REQUIRE(env);
	unsigned char *buf = malloc(n);
	REQUIRE(buf);
	fill(buf, n, 42);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("huge"), v = t_mem(buf, n);
	OK(mdb_put(txn, 1, &k, &v, 0));
	MDB_val k2 = t_val("after"), v2 = t_val("small");
	OK(mdb_put(txn, 1, &k2, &v2, 0));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	env = t_env_open(t_dir, 0, 32u << 20, 0);
	if (!env) {
		free(buf);
		return;
	}
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_val d;
	k = t_val("huge");
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_VAL(d, buf, n);
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_overflow_pages, (n + 16 + st.ms_psize - 1) / st.ms_psize);
	mdb_txn_abort(txn);

	/* Shrink it, delete it, write it again under another key.  (Stock LMDB
	 * does not reliably place a 1281-page run into freed pages, so file
	 * growth is not checked here; test_freed_page_reuse covers reuse.) */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	v = t_mem(buf, 1000);
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, 1, "after", "small"));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_VAL(d, buf, 1000);
	OK(mdb_del(txn, 1, &k, NULL));
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	k = t_val("again");
	v = t_mem(buf, n);
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_VAL(d, buf, n);
	k = t_val("huge");
	CHECK_RC(mdb_get(txn, 1, &k, &d), MDB_NOTFOUND);
	mdb_txn_abort(txn);
	CHECK(t_get_is(env, 1, "after", "small"));
	mdb_env_close(env);
	free(buf);
}

/*
 * A txn holding megabytes of overflow runs takes them from a reused region
 * rather than malloc (page.c): runs released mid-txn (overwritten, deleted,
 * a child's abort) are handed out again, and the region is rewound after a
 * commit and after an abort.  Every value must still read back intact.
 */
#define MO_KEYS 1800
static size_t mo_size[MO_KEYS];
static unsigned mo_seed[MO_KEYS];

static void mo_put(MDB_txn *txn, unsigned i, size_t size, unsigned seed, unsigned char *buf)
{
	char kb[16];
	snprintf(kb, sizeof(kb), "k%05u", i);
	fill(buf, size, seed);
	MDB_val k = t_val(kb), v = t_mem(buf, size);
	OK(mdb_put(txn, 1, &k, &v, 0));
}

static void mo_check(MDB_txn *txn, const size_t *size, const unsigned *seed, unsigned char *buf)
{
	for (unsigned i = 0; i < MO_KEYS; i++) {
		char kb[16];
		snprintf(kb, sizeof(kb), "k%05u", i);
		MDB_val k = t_val(kb), d;
		if (!size[i]) {
			CHECK_RC(mdb_get(txn, 1, &k, &d), MDB_NOTFOUND);
			continue;
		}
		if (mdb_get(txn, 1, &k, &d)) {
			T_FAIL("key %u missing", i);
			return;
		}
		fill(buf, size[i], seed[i]);
		CHECK_VAL(d, buf, size[i]);
	}
}

/*
 * Overflow runs across envs of one process: a closed env's run region may
 * be handed to the next env that writes big values (page.c), so runs must
 * never be shared by two live envs, and data written through a region an
 * earlier env used (or a txn aborted) must read back intact.  Values are
 * written with MDB_RESERVE, whose pointer is the dirty run itself, so the
 * runs two envs hold at once can be compared directly.
 */
#define RE_KEYS 1100
#define RE_SIZE 8192

struct re_run {
	uintptr_t lo, hi;
	int env;
};
static struct re_run re_runs[2 * RE_KEYS];
static size_t re_nruns;

/* Reserve and fill value i of the set seeded by seed; note its run. */
static void re_put(MDB_txn *txn, int envno, unsigned i, unsigned seed)
{
	char kb[16];
	snprintf(kb, sizeof(kb), "r%05u", i);
	MDB_val k = t_val(kb), v = { RE_SIZE, NULL };
	if (mdb_put(txn, 1, &k, &v, MDB_RESERVE)) {
		T_FAIL("reserve %u failed", i);
		return;
	}
	fill(v.mv_data, RE_SIZE, seed + i);
	if (re_nruns < 2 * RE_KEYS)
		re_runs[re_nruns++] = (struct re_run){ (uintptr_t)v.mv_data,
			(uintptr_t)v.mv_data + RE_SIZE, envno };
}

static void re_fill_txn(MDB_env *env, int envno, unsigned seed, int commit)
{
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < RE_KEYS; i++)
		re_put(txn, envno, i, seed);
	if (commit)
		OK(mdb_txn_commit(txn));
	else
		mdb_txn_abort(txn);
}

/* Keys "<tag>00000" .. n - 1 of env hold size-byte values, key i the
 * bytes fill() makes from seed + i. */
static int seeded_values_ok(MDB_env *env, char tag, unsigned n, size_t size, unsigned seed)
{
	unsigned char *want = malloc(size);
	MDB_txn *txn = NULL;
	int bad = !want || mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	for (unsigned i = 0; !bad && i < n; i++) {
		char kb[16];
		snprintf(kb, sizeof(kb), "%c%05u", tag, i);
		MDB_val k = t_val(kb), d;
		fill(want, size, seed + i);
		bad = mdb_get(txn, 1, &k, &d) || d.mv_size != size ||
		    memcmp(d.mv_data, want, size);
	}
	if (txn)
		mdb_txn_abort(txn);
	free(want);
	return !bad;
}

/* Every value of env is the set seeded by seed. */
static int re_check(MDB_env *env, unsigned seed)
{
	return seeded_values_ok(env, 'r', RE_KEYS, RE_SIZE, seed);
}

static int re_cmp(const void *a, const void *b)
{
	const struct re_run *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* No run of one env overlaps a run of the other. */
static int re_disjoint(void)
{
	qsort(re_runs, re_nruns, sizeof(re_runs[0]), re_cmp);
	for (size_t i = 1; i < re_nruns; i++)
		if (re_runs[i].lo < re_runs[i - 1].hi && re_runs[i].env != re_runs[i - 1].env)
			return 0;
	return 1;
}

static void test_overflow_runs_across_envs(void)
{
	const char *name[6] = { "a.db", "b.db", "c.db", "d.db", "e.db", "f.db" };
	MDB_env *env[6];

	/* Envs one after another, one of them with an aborted big txn. */
	for (int e = 0; e < 2; e++) {
		env[e] = t_env_open(t_path(name[e]), MDB_NOSUBDIR, 64u << 20, 0);
		REQUIRE(env[e]);
		if (e == 1)
			re_fill_txn(env[e], e, 500, 0);
		re_fill_txn(env[e], e, 100 * (e + 1), 1);
		CHECK(re_check(env[e], 100 * (e + 1)));
		mdb_env_close(env[e]);
	}

	/* An env closes while another holds a read txn on its big values;
	 * the next env writes big values, and the reader still sees its own. */
	env[2] = t_env_open(t_path(name[2]), MDB_NOSUBDIR, 64u << 20, 0);
	env[3] = t_env_open(t_path(name[3]), MDB_NOSUBDIR, 64u << 20, 0);
	REQUIRE(env[2] && env[3]);
	re_fill_txn(env[2], 2, 300, 1);
	re_fill_txn(env[3], 3, 400, 1);
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env[3], NULL, MDB_RDONLY, &rd));
	MDB_val k = t_val("r00007"), held;
	REQUIRE_OK(mdb_get(rd, 1, &k, &held));
	mdb_env_close(env[2]);
	env[4] = t_env_open(t_path(name[4]), MDB_NOSUBDIR, 64u << 20, 0);
	REQUIRE(env[4]);
	re_fill_txn(env[4], 4, 700, 1);
	unsigned char *want = malloc(RE_SIZE);
	REQUIRE(want);
	fill(want, RE_SIZE, 400 + 7);
	CHECK_VAL(held, want, RE_SIZE);
	mdb_txn_abort(rd);
	CHECK(re_check(env[3], 400));
	CHECK(re_check(env[4], 700));

	/* Two envs with big write txns open at once, puts interleaved: their
	 * runs must not overlap, and neither may see the other's bytes. */
	mdb_env_close(env[3]);
	env[5] = t_env_open(t_path(name[5]), MDB_NOSUBDIR, 64u << 20, 0);
	REQUIRE(env[5]);
	MDB_txn *t4, *t5;
	REQUIRE_OK(mdb_txn_begin(env[4], NULL, 0, &t4));
	REQUIRE_OK(mdb_txn_begin(env[5], NULL, 0, &t5));
	re_nruns = 0;
	for (unsigned i = 0; i < RE_KEYS; i++) {
		re_put(t4, 4, i, 800);
		re_put(t5, 5, i, 900);
	}
	CHECK(re_disjoint());
	OK(mdb_txn_commit(t5));
	OK(mdb_txn_commit(t4));
	CHECK(re_check(env[4], 800));
	CHECK(re_check(env[5], 900));
	mdb_env_close(env[4]);
	mdb_env_close(env[5]);

	/* Everything committed reads back after reopening. */
	const unsigned seed[6] = { 100, 200, 300, 400, 800, 900 };
	for (int e = 0; e < 6; e++) {
		MDB_env *r = t_env_open(t_path(name[e]), MDB_NOSUBDIR | MDB_RDONLY, 64u << 20, 0);
		REQUIRE(r);
		CHECK(re_check(r, seed[e]));
		mdb_env_close(r);
	}
	free(want);
}

/*
 * How much of the overflow-run region stays faulted in between txns follows
 * what the txns used (page.c, dl_ov_trim): a txn of 12 MB of runs leaves
 * them resident for the next one of that size, a bigger txn leaves no more
 * than 32 MiB, and smaller txns after it give the rest back, half at each.
 * The region is the 1 GiB anonymous map holding a reserved value; its
 * resident size comes from /proc/self/smaps.  Builds without the region
 * (sanitizers, 32-bit) only check the values.
 */
#define KR_SIZE 8192

/* Resident bytes of the mapping holding p, if it is a 1 GiB one; else -1. */
static long long kr_region_rss(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0;
	long long rss = -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi && hi - lo == (1ul << 30);
			continue;
		}
		long long kb;
		if (in && sscanf(line, "Rss: %lld kB", &kb) == 1) {
			rss = kb * 1024;
			break;
		}
	}
	fclose(f);
	return rss;
}

/* One txn reserving n values (seeded by seed) from key 0; returns the
 * region's resident size after the commit (-1: no region). */
static long long kr_txn(MDB_env *env, unsigned n, unsigned seed)
{
	MDB_txn *txn;
	void *last = NULL;
	if (mdb_txn_begin(env, NULL, 0, &txn)) {
		T_FAIL("begin");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		char kb[16];
		snprintf(kb, sizeof(kb), "q%05u", i);
		MDB_val k = t_val(kb), v = { KR_SIZE, NULL };
		if (mdb_put(txn, 1, &k, &v, MDB_RESERVE)) {
			T_FAIL("reserve %u", i);
			mdb_txn_abort(txn);
			return -1;
		}
		fill(v.mv_data, KR_SIZE, seed + i);
		last = v.mv_data;
	}
	OK(mdb_txn_commit(txn));
	return kr_region_rss(last);
}

/* Keys 0 .. n - 1 hold the values seeded by seed. */
static int kr_check(MDB_env *env, unsigned n, unsigned seed)
{
	return seeded_values_ok(env, 'q', n, KR_SIZE, seed);
}

static void test_overflow_region_keeps_recent_use(void)
{
	const long long MiB = 1 << 20;
	MDB_env *env = t_env_open(t_path("keep.db"), MDB_NOSUBDIR, 512u << 20, 0);
	REQUIRE(env);

	/* 48 MB of runs: at most 32 MiB stays resident. */
	long long rss = kr_txn(env, 4000, 10);
	CHECK(kr_check(env, 4000, 10));
	int region = rss >= 0;
	if (region)
		CHECK(rss <= 32 * MiB);

	/* Txns of 12 MB: the first keeps half of the 32 MiB, then each keeps
	 * what it used, all of it still resident for the next. */
	for (unsigned r = 0; r < 3; r++) {
		rss = kr_txn(env, 1000, 20 + r);
		CHECK(kr_check(env, 1000, 20 + r));
		if (region)
			CHECK(rss <= (r ? 12 : 16) * MiB && rss >= 11 * MiB);
	}

	/* Small txns hand the rest back, half at a time. */
	for (unsigned r = 0; r < 4; r++) {
		rss = kr_txn(env, 10, 30 + r);
		CHECK(kr_check(env, 10, 30 + r));
	}
	if (region)
		CHECK(rss <= 4 * MiB);

	/* Back to 12 MB txns: the first faults them in again, the values of
	 * both sizes read back, and a reopened env still reads them. */
	rss = kr_txn(env, 1000, 40);
	CHECK(kr_check(env, 1000, 40));
	if (region)
		CHECK(rss >= 11 * MiB && rss <= 12 * MiB);
	mdb_env_close(env);
	env = t_env_open(t_path("keep.db"), MDB_NOSUBDIR, 512u << 20, 0);
	REQUIRE(env);
	CHECK(kr_check(env, 1000, 40));
	rss = kr_txn(env, 1000, 50);
	CHECK(kr_check(env, 1000, 50));
	mdb_env_close(env);
}

/*
 * The bytes after a value in its overflow run's last page reach the file as
 * zeros (the write takes them from a zero buffer; the run's memory there
 * is not cleared and may hold an earlier txn's bytes) and the run's header
 * as the engine left it (mp_pad 0).  A txn first fills whole runs, so the
 * memory the next txn's runs reuse is not zero; the next writes shorter
 * values, plain and with MDB_RESERVE, rewrites some in place (longer,
 * within the run, and shorter: the longest value's end counts), in a
 * child txn too.  Checked through the map after the commit.  This engine's
 * promise: stock LMDB leaves earlier bytes after some rewritten values.
 */
#ifndef STOCK_LMDB
#define ZT_KEYS 1000

/* Value i's run in the committed store ends with zeros after byte end
 * (counted from the run's start) and has a zero mp_pad. */
static int zt_run_ok(const MDB_val *d, size_t psize, size_t end)
{
	const unsigned char *run = (const unsigned char *)d->mv_data - 16;
	uint16_t pad;
	uint32_t pages;
	memcpy(&pad, run + 8, sizeof(pad));
	memcpy(&pages, run + 12, sizeof(pages));
	size_t len = (size_t)pages * psize;
	if (pad || len < end)
		return 0;
	for (size_t i = end; i < len; i++)
		if (run[i])
			return 0;
	return 1;
}

static void zt_put(MDB_txn *txn, unsigned i, size_t size, unsigned seed, unsigned flags)
{
	static unsigned char buf[3 * 4096];
	char kb[16];
	snprintf(kb, sizeof(kb), "z%05u", i);
	MDB_val k = t_val(kb), v = { size, buf };
	if (flags & MDB_RESERVE) {
		v.mv_data = NULL;
		if (mdb_put(txn, 1, &k, &v, MDB_RESERVE)) {
			T_FAIL("reserve %u", i);
			return;
		}
		fill(v.mv_data, size, seed);
		return;
	}
	fill(buf, size, seed);
	OK(mdb_put(txn, 1, &k, &v, 0));
}

static void test_overflow_slack_written_as_zeros(void)
{
	MDB_env *env = t_env_open(t_path("slack.db"), MDB_NOSUBDIR, 256u << 20, 0);
	REQUIRE(env);
	MDB_stat st;
	REQUIRE_OK(mdb_env_stat(env, &st));
	REQUIRE(st.ms_psize == 4096);
	const size_t full = 3 * 4096 - 16, small = 8200;
	size_t size[ZT_KEYS], end[ZT_KEYS];
	unsigned seed[ZT_KEYS];
	MDB_txn *txn, *child;

	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < ZT_KEYS; i++)
		zt_put(txn, i, full, 1000 + i, 0);
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < ZT_KEYS; i++) {
		size[i] = small + i % 64;
		seed[i] = 2000 + i;
		zt_put(txn, i, size[i], seed[i], i % 3 ? 0 : MDB_RESERVE);
		end[i] = 16 + size[i];
	}
	for (unsigned i = 0; i < ZT_KEYS; i += 7) {
		/* Longer, same run. */
		size[i] = small + 2000;
		seed[i] = 3000 + i;
		zt_put(txn, i, size[i], seed[i], i % 2 ? 0 : MDB_RESERVE);
		end[i] = 16 + size[i];
	}
	for (unsigned i = 3; i < ZT_KEYS; i += 11) {
		/* Shorter: the bytes up to the old end stay as they were. */
		size[i] = small - 100;
		seed[i] = 4000 + i;
		zt_put(txn, i, size[i], seed[i], i % 2 ? 0 : MDB_RESERVE);
	}
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	for (unsigned i = 5; i < ZT_KEYS; i += 13) {
		size[i] = small + 1000;
		seed[i] = 5000 + i;
		zt_put(child, i, size[i], seed[i], i % 2 ? 0 : MDB_RESERVE);
		end[i] = 16 + size[i];
	}
	OK(mdb_txn_commit(child));
	OK(mdb_txn_commit(txn));

	unsigned char *want = malloc(full);
	REQUIRE(want);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	unsigned bad = 0;
	for (unsigned i = 0; i < ZT_KEYS; i++) {
		char kb[16];
		snprintf(kb, sizeof(kb), "z%05u", i);
		MDB_val k = t_val(kb), d;
		if (mdb_get(txn, 1, &k, &d) || d.mv_size != size[i] ||
		    !zt_run_ok(&d, st.ms_psize, end[i])) {
			bad++;
			continue;
		}
		fill(want, size[i], seed[i]);
		bad += memcmp(d.mv_data, want, size[i]) != 0;
	}
	CHECK(bad == 0);
	mdb_txn_abort(txn);
	free(want);
	mdb_env_close(env);
}
#endif

static void test_many_overflow_runs(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 0);
	REQUIRE(env);
	unsigned char *buf = malloc(20000);
	REQUIRE(buf);
	MDB_txn *txn, *child;

	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < 1200; i++) {
		mo_put(txn, i, 8192, i, buf);
		mo_size[i] = 8192, mo_seed[i] = i;
	}
	for (unsigned i = 0; i < 1200; i += 3) {	/* 3-page runs become 2-page */
		mo_put(txn, i, 5000, i + 1, buf);
		mo_size[i] = 5000, mo_seed[i] = i + 1;
	}
	for (unsigned i = 1200; i < 1500; i++) {	/* into the released runs */
		mo_put(txn, i, 8192, i, buf);
		mo_size[i] = 8192, mo_seed[i] = i;
	}
	for (unsigned i = 0; i < 1500; i += 5) {
		char kb[16];
		snprintf(kb, sizeof(kb), "k%05u", i);
		MDB_val k = t_val(kb);
		OK(mdb_del(txn, 1, &k, NULL));
		mo_size[i] = 0;
	}
	mo_check(txn, mo_size, mo_seed, buf);
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	for (unsigned i = 1500; i < MO_KEYS; i++)
		mo_put(child, i, 12000, i, buf);
	for (unsigned i = 1; i < 1500; i += 4)
		mo_put(child, i, 20000, i + 2, buf);
	mdb_txn_abort(child);
	mo_check(txn, mo_size, mo_seed, buf);
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	for (unsigned i = 2; i < 1500; i += 7) {
		mo_put(child, i, 20000, i + 3, buf);
		mo_size[i] = 20000, mo_seed[i] = i + 3;
	}
	OK(mdb_txn_commit(child));
	mo_check(txn, mo_size, mo_seed, buf);
	OK(mdb_txn_commit(txn));

	/* A big txn that aborts leaves the data as committed. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < MO_KEYS; i++)
		mo_put(txn, i, 8192 + i % 5, i + 9, buf);
	mdb_txn_abort(txn);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	mo_check(txn, mo_size, mo_seed, buf);
	mdb_txn_abort(txn);

	/* One more big txn, committed, read after the env is reopened. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < MO_KEYS; i++) {
		size_t n = i % 2 ? 8192 : 12000;
		mo_put(txn, i, n, i + 11, buf);
		mo_size[i] = n, mo_seed[i] = i + 11;
	}
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	env = t_env_open(t_dir, 0, 256u << 20, 0);
	if (env) {
		if (!mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) {
			mo_check(txn, mo_size, mo_seed, buf);
			mdb_txn_abort(txn);
		}
		mdb_env_close(env);
	}
	free(buf);
}

static void test_key_sizes(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	char key[600];
	memset(key, 'K', sizeof key);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_mem(key, 0), v = t_val("v"), d;
	CHECK_RC(mdb_put(txn, 1, &k, &v, 0), MDB_BAD_VALSIZE);
	CHECK_RC(mdb_get(txn, 1, &k, &d), MDB_BAD_VALSIZE);
	CHECK_RC(mdb_del(txn, 1, &k, NULL), MDB_BAD_VALSIZE);
	k = t_mem(key, 512);
	CHECK_RC(mdb_put(txn, 1, &k, &v, 0), MDB_BAD_VALSIZE);
	k = t_mem(key, 600);
	CHECK_RC(mdb_put(txn, 1, &k, &v, 0), MDB_BAD_VALSIZE);
	k = t_mem(key, 511);
	OK(mdb_put(txn, 1, &k, &v, 0));
	k = t_mem(key, 510);
	OK(mdb_put(txn, 1, &k, &v, 0));
	k = t_mem(key, 1);
	OK(mdb_put(txn, 1, &k, &v, 0));
	/* 511-byte keys with big values: many of them force splits. */
	for (int i = 0; i < 200; i++) {
		char kb[512];
		memset(kb, 'a' + i % 26, 511);
		snprintf(kb, 16, "%05d", i);
		kb[5] = '-';
		MDB_val kk = t_mem(kb, 511), vv = t_mem(kb, 511);
		OK(mdb_put(txn, 1, &kk, &vv, 0));
	}
	OK(mdb_txn_commit(txn));

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	k = t_mem(key, 511);
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_STR(d, "v");
	k = t_mem(key, 1);
	OK(mdb_get(txn, 1, &k, &d));
	k = t_mem(key, 512); /* over-long keys are simply not found */
	CHECK_RC(mdb_get(txn, 1, &k, &d), MDB_NOTFOUND);
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(st.ms_entries, 203);
	CHECK(st.ms_depth >= 2);
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	int n = 0;
	while (mdb_cursor_get(cur, &k, &d, MDB_NEXT) == 0) {
		if (k.mv_size == 511 && k.mv_data && ((char *)k.mv_data)[5] == '-')
			CHECK(d.mv_size == 511 && memcmp(k.mv_data, d.mv_data, 511) == 0);
		n++;
	}
	CHECK_EQ(n, 203);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_map_full_then_recover(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 256 * 1024, 0);
	REQUIRE(env);
	static unsigned char buf[300 * 1024];
	fill(buf, sizeof buf, 3);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("too-big"), v = t_mem(buf, sizeof buf);
	CHECK_RC(mdb_put(txn, 1, &k, &v, 0), MDB_MAP_FULL);
	mdb_txn_abort(txn);
	OK(t_put1(env, 1, "small", "ok"));
	CHECK(t_get_is(env, 1, "small", "ok"));

	/* Grow the map while open, then the value fits. */
	OK(mdb_env_set_mapsize(env, 4u << 20));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	k = t_val("too-big");
	v = t_mem(buf, sizeof buf);
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	env = t_env_open(t_dir, MDB_RDONLY, 0, 0);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_val d;
	OK(mdb_get(txn, 1, &k, &d));
	CHECK_VAL(d, buf, sizeof buf);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Overwriting the same keys again and again must reach a steady state:
 * freed pages are recycled through FREE_DBI. */
static void test_freed_page_reuse(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 0);
	REQUIRE(env);
	MDB_envinfo info;
	size_t last_at_50 = 0;
	long long size_at_50 = 0;
	char vb[200];
	for (int round = 0; round < 200; round++) {
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (int i = 0; i < 1000; i++) {
			char kb[16];
			snprintf(kb, sizeof kb, "key%05d", (i * 37) % 1000);
			int len = 20 + (i + round) % 100;
			memset(vb, 'a' + round % 26, (size_t)len);
			MDB_val k = t_val(kb), v = t_mem(vb, (size_t)len);
			int rc = mdb_put(txn, 1, &k, &v, 0);
			if (rc) {
				CHECK_RC(rc, 0);
				break;
			}
		}
		/* and one overflow value changing size */
		static char big[12000];
		memset(big, 'B', sizeof big);
		MDB_val bk = t_val("big"), bv = t_mem(big, 5000 + (size_t)(round % 3) * 3000);
		OK(mdb_put(txn, 1, &bk, &bv, 0));
		REQUIRE_OK(mdb_txn_commit(txn));
		if (round == 49) {
			OK(mdb_env_info(env, &info));
			last_at_50 = info.me_last_pgno;
			size_at_50 = t_file_size(t_path("data.mdb"));
		}
	}
	OK(mdb_env_info(env, &info));
	if (info.me_last_pgno > last_at_50 + 2)
		T_FAIL("last_pgno grew from %zu (txn 50) to %zu (txn 200)", last_at_50,
		       (size_t)info.me_last_pgno);
	long long size = t_file_size(t_path("data.mdb"));
	if (size > size_at_50 + 2 * 4096)
		T_FAIL("file grew from %lld (txn 50) to %lld (txn 200)", size_at_50, size);
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 1001);
	mdb_env_close(env);
}

static void test_delete_everything(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 5000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "%07d", i);
		MDB_val k = t_val(kb), v = t_val(kb);
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	/* Delete in an interleaved order over two txns so merges happen
	 * everywhere, then check the tree collapses back to nothing. */
	for (int pass = 0; pass < 2; pass++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (int i = pass; i < 5000; i += 2) {
			char kb[16];
			snprintf(kb, sizeof kb, "%07d", (i * 7) % 5000);
			MDB_val k = t_val(kb);
			int rc = mdb_del(txn, 1, &k, NULL);
			if (rc != 0 && rc != MDB_NOTFOUND)
				CHECK_RC(rc, 0);
		}
		OK(mdb_txn_commit(txn));
	}
	MDB_stat st;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_stat(txn, 1, &st));
	/* (i*7)%5000 over even i then odd i covers every key */
	CHECK_EQ(st.ms_entries, 0);
	CHECK_EQ(st.ms_depth, 0);
	CHECK_EQ(st.ms_leaf_pages + st.ms_branch_pages, 0);
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_FIRST), MDB_NOTFOUND);
	k = t_val("again");
	v = t_val("1");
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, 1, "again", "1"));
	mdb_env_close(env);
}

/* One big write transaction (about 10k dirty pages) commits and reads back. */
static void test_large_txn(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	static unsigned char buf[2000];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 20000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "%08d", (int)((i * 7919u) % 20000));
		fill(buf, sizeof buf, (unsigned)i);
		MDB_val k = t_val(kb), v = t_mem(buf, 1000 + (size_t)(i % 1000));
		int rc = mdb_put(txn, 1, &k, &v, 0);
		if (rc) {
			CHECK_RC(rc, 0);
			break;
		}
	}
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	env = t_env_open(t_dir, MDB_RDONLY, 0, 0);
	REQUIRE(env);
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 20000);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	int bad = 0;
	for (int i = 0; i < 20000; i += 97) {
		char kb[16];
		snprintf(kb, sizeof kb, "%08d", (int)((i * 7919u) % 20000));
		fill(buf, sizeof buf, (unsigned)i);
		MDB_val k = t_val(kb), v;
		if (mdb_get(txn, 1, &k, &v) || v.mv_size != 1000 + (size_t)(i % 1000) ||
		    memcmp(v.mv_data, buf, v.mv_size))
			bad++;
	}
	CHECK_EQ(bad, 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

int main(void)
{
	RUN(test_get_put_del);
	RUN(test_nooverwrite);
	RUN(test_reserve);
	RUN(test_append);
	RUN(test_cursor_put_current);
	RUN(test_value_sizes);
	RUN(test_overflow_boundary);
	RUN(test_overflow_runs_across_envs);
	RUN(test_overflow_region_keeps_recent_use);
#ifndef STOCK_LMDB
	RUN(test_overflow_slack_written_as_zeros);
#endif
	RUN(test_huge_value);
	RUN(test_many_overflow_runs);
	RUN(test_key_sizes);
	RUN(test_map_full_then_recover);
	RUN(test_freed_page_reuse);
	RUN(test_delete_everything);
	RUN(test_large_txn);
	T_DONE();
}
