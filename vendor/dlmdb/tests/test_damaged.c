/*
 * Damaged stores on the read path: page flags that do not fit the page's
 * role, counts that disagree with the tree, an untrusted entry count in a
 * duplicate sub-database record.  Each must give MDB_CORRUPTED, never a
 * crash, a pointer past a page, a huge allocation or a copy that carries
 * the damage on.  dlmdb-only (stock LMDB crashes on several of them).
 */
#include "t.h"

#define PS 4096
#define F_LEAF 0x02
#define F_BRANCH 0x01
#define F_LEAF2 0x20
#define F_COUNTED 0x80

/* Build a NOSUBDIR store at path with nkeys keys "k%06d" in a DB named
 * "d" opened with dbflags (plus, for DUPSORT, ndups values under "big"). */
static int build(const char *path, unsigned dbflags, int nkeys, int ndups)
{
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 16u << 20, 2);
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;
	if (!env)
		return -1;
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
		goto out;
	if ((rc = mdb_dbi_open(txn, "d", MDB_CREATE | dbflags, &dbi)))
		goto abort;
	for (int i = 0; i < nkeys; i++) {
		char kb[16], vb[40];
		snprintf(kb, sizeof kb, "k%06d", i);
		snprintf(vb, sizeof vb, "value-%d", i);
		MDB_val k = t_val(kb), v = t_val(vb);
		if ((rc = mdb_put(txn, dbi, &k, &v, 0)))
			goto abort;
	}
	for (int i = 0; i < ndups; i++) {
		char vb[16];
		snprintf(vb, sizeof vb, "dup%06d", i);
		MDB_val k = t_val("big"), v = t_val(vb);
		if ((rc = mdb_put(txn, dbi, &k, &v, 0)))
			goto abort;
	}
	rc = mdb_txn_commit(txn);
	goto out;
abort:
	mdb_txn_abort(txn);
out:
	mdb_env_close(env);
	return rc;
}

/* The whole data file, read into a malloc'ed buffer. */
static unsigned char *slurp(const char *path, long long *size)
{
	*size = t_file_size(path);
	unsigned char *b = malloc((size_t)*size);
	int fd = open(path, O_RDONLY);
	if (!b || fd < 0 || read(fd, b, (size_t)*size) != *size) {
		free(b);
		b = NULL;
	}
	if (fd >= 0)
		close(fd);
	return b;
}

static uint16_t flags_of(const unsigned char *page)
{
	uint16_t f;
	memcpy(&f, page + 10, 2);
	return f;
}

/* First page (from 2 on) whose flags word equals want; -1 if none. */
static long find_page(const unsigned char *file, long long size, uint16_t want)
{
	for (long pg = 2; (pg + 1) * PS <= size; pg++)
		if (flags_of(file + pg * PS) == want)
			return pg;
	return -1;
}

/* Open the store read-only with the DB "d"; REQUIRE-style helper. */
static MDB_env *open_ro(const char *path, MDB_txn **txn, MDB_dbi *dbi)
{
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	if (!env)
		return NULL;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, txn) || mdb_dbi_open(*txn, "d", 0, dbi)) {
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

/*
 * Read every entry forward; returns the first error (0 if all read).  Every
 * key and value handed out must lie inside the map: a misread page would
 * hand out pointers past its end.
 */
static int read_all(MDB_env *env, MDB_txn *txn, MDB_dbi dbi)
{
	void *map;
	size_t msize;
	MDB_cursor *c;
	MDB_val k, v;
	int rc;
	if ((rc = mdb_env_get_map(env, &map, &msize)) || (rc = mdb_cursor_open(txn, dbi, &c)))
		return rc;
	const char *lo = map, *hi = lo + msize;
	while (!(rc = mdb_cursor_get(c, &k, &v, MDB_NEXT))) {
		if ((const char *)k.mv_data < lo || (const char *)k.mv_data + k.mv_size > hi ||
		    (const char *)v.mv_data < lo || (const char *)v.mv_data + v.mv_size > hi) {
			rc = -1;	/* handed out memory outside the map */
			break;
		}
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Set flag bits on the first page whose flags equal match, then read. */
static void flag_damage_case(unsigned dbflags, uint16_t match, uint16_t add)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, dbflags, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	long pg = find_page(file, size, match);
	free(file);
	REQUIRE(pg >= 2);
	uint16_t f = (uint16_t)(match | add);
	REQUIRE_OK(t_patch_file(path, pg * PS + 10, &f, 2));
	/* The damaged page may be the main DB's leaf holding the record of
	 * "d" (opening it fails) or a page of "d" (reading fails). */
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	int rc = mdb_dbi_open(txn, "d", 0, &dbi);
	if (!rc)
		rc = read_all(env, txn, dbi);
	CHECK_RC(rc, MDB_CORRUPTED);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* A leaf with P_COUNTED would have its keys read 8 bytes too far. */
static void test_leaf_with_counted_flag(void) { flag_damage_case(0, F_LEAF, F_COUNTED); }
static void test_counted_db_leaf_with_counted_flag(void)
{
	flag_damage_case(MDB_COUNTED, F_LEAF, F_COUNTED);
}
/* A branch with P_LEAF2 is not a page of packed items. */
static void test_branch_with_leaf2_flag(void) { flag_damage_case(0, F_BRANCH, F_LEAF2); }
static void test_counted_branch_with_leaf2_flag(void)
{
	flag_damage_case(MDB_COUNTED, F_BRANCH | F_COUNTED, F_LEAF2);
}

/* Offset in file of the first occurrence of pat, or -1. */
static long long find_bytes(const unsigned char *file, long long size, const void *pat, size_t n)
{
	for (long long i = 0; i + (long long)n <= size; i++)
		if (!memcmp(file + i, pat, n))
			return i;
	return -1;
}

/*
 * A duplicate sub-database record whose entry count says 2^40: listing
 * the key's values must not size a buffer from it (that asked for 16 TiB),
 * and the walk finding 2000 items says the record is wrong.
 */
static void test_list_dup_untrusted_entries(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, MDB_DUPSORT, 10, 2000));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	/* leaf node of "big": data size 48, F_SUBDATA|F_DUPDATA, key size 3 */
	static const unsigned char node[] = { 48, 0, 0, 0, 6, 0, 3, 0, 'b', 'i', 'g' };
	long long off = find_bytes(file, size, node, sizeof node);
	REQUIRE(off > 0);
	long long rec = off + 8 + 4;	/* padded layout: key + 1 pad byte */
	uint64_t entries;
	memcpy(&entries, file + rec + 32, 8);
	free(file);
	REQUIRE(entries == 2000);
	uint64_t huge = 1ull << 40;
	REQUIRE_OK(t_patch_file(path, rec + 32, &huge, 8));
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_env *env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k = t_val("big"), v;
	const MDB_val *list = NULL;
	mdb_size_t n = 0;
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	CHECK_RC(mdb_cursor_list_dup(c, &list, &n), MDB_CORRUPTED);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* The same listing on a sound store still returns every value. */
static void test_list_dup_sound(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, MDB_DUPSORT, 10, 5000));
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_env *env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k = t_val("big"), v;
	const MDB_val *list = NULL;
	mdb_size_t n = 0;
	OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	OK(mdb_cursor_list_dup(c, &list, &n));
	CHECK_EQ(n, 5000);
	if (n == 5000) {
		CHECK_STR(list[0], "dup000000");
		CHECK_STR(list[4999], "dup004999");
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Counted DB with 3000 keys: add delta to the count of node 0 of the first
 * counted branch page.  Returns that page number (or -1). */
static long damage_count(const char *path, int64_t delta)
{
	if (build(path, MDB_COUNTED, 3000, 0))
		return -1;
	long long size;
	unsigned char *file = slurp(path, &size);
	if (!file)
		return -1;
	long pg = find_page(file, size, F_BRANCH | F_COUNTED);
	if (pg < 0) {
		free(file);
		return -1;
	}
	uint16_t ptr0;
	memcpy(&ptr0, file + pg * PS + 16, 2);
	uint64_t cnt;
	memcpy(&cnt, file + pg * PS + ptr0 + 8, 8);
	free(file);
	cnt += (uint64_t)delta;
	return t_patch_file(path, pg * PS + ptr0 + 8, &cnt, 8) ? -1 : pg;
}

/* Counts above what the tree holds: a rank that lands in the phantom part
 * is corruption, not "no such rank". */
static void test_get_rank_counts_disagree(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE(damage_count(path, 1000) >= 2);
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_env *env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	MDB_val k, v;
	int corrupted = 0, other = 0;
	/* Some rank below the total descends into the inflated child and runs
	 * out of entries there. */
	for (uint64_t r = 0; r < 3000; r += 7) {
		int rc = mdb_get_rank(txn, dbi, r, &k, &v);
		if (rc == MDB_CORRUPTED)
			corrupted++;
		else if (rc)
			other++;
	}
	CHECK(corrupted > 0);
	CHECK_EQ(other, 0);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* A counted branch page whose last node pointer lies past the page: the
 * rank and range-count functions read the counts of the nodes before the
 * one they descend into, so each must be checked before its count is
 * read (a read past the page faulted here). */
static void test_rank_with_branch_pointer_past_page(void)
{
	const char *path = t_path("s.mdb");
	/* 400 keys: a root branch over a few leaves, in a file of under 16
	 * pages, so 64 KiB past any page is past the end of the file. */
	REQUIRE_OK(build(path, MDB_COUNTED, 400, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	REQUIRE(size < 16 * PS);
	long pg = find_page(file, size, F_BRANCH | F_COUNTED);
	REQUIRE(pg >= 2);
	uint16_t lower;
	memcpy(&lower, file + pg * PS + 12, 2);
	free(file);
	unsigned last = (lower - 16) / 2 - 1;
	REQUIRE(last >= 2);
	uint16_t past = 65534;	/* past the end of the file: a read there faults */
	REQUIRE_OK(t_patch_file(path, pg * PS + 16 + 2 * last, &past, 2));
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_env *env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	MDB_val k, v;
	CHECK_RC(mdb_get_rank(txn, dbi, 399, &k, &v), MDB_CORRUPTED);
	char kb[16];
	snprintf(kb, sizeof kb, "k%06d", 399);
	MDB_val key = t_val(kb);
	uint64_t r;
	int rc = mdb_get_key_rank(txn, dbi, &key, NULL, &r);
	CHECK(rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/*
 * A plain leaf of "d" given P_LEAF2 and an item size: only a DUPFIXED
 * duplicate sub-tree has packed leaves, so a scan, a seek and a rank
 * descent that reach it must report MDB_CORRUPTED instead of handing out
 * slices of its nodes as items.  countflags: MDB_COUNTED for the rank.
 */
static void leaf2_on_plain_leaf_case(unsigned countflags)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, countflags, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	/* Past the first two leaves (the main DB's, and "d"'s first). */
	long pg = -1;
	for (long p = 2, seen = 0; (p + 1) * PS <= size; p++)
		if (flags_of(file + p * PS) == F_LEAF && ++seen == 3) {
			pg = p;
			break;
		}
	REQUIRE(pg >= 2);
	/* Its first key, to seek to. */
	uint16_t ptr0, ks;
	memcpy(&ptr0, file + pg * PS + 16, 2);
	memcpy(&ks, file + pg * PS + ptr0 + 6, 2);
	REQUIRE(ks == 7);
	char first[8] = { 0 };
	memcpy(first, file + pg * PS + ptr0 + 8, 7);
	free(file);
	uint16_t pad = 8, f = F_LEAF | F_LEAF2;
	REQUIRE_OK(t_patch_file(path, pg * PS + 8, &pad, 2));
	REQUIRE_OK(t_patch_file(path, pg * PS + 10, &f, 2));
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_env *env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	CHECK_RC(read_all(env, txn, dbi), MDB_CORRUPTED);
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k = t_val(first), v;
	CHECK_RC(mdb_cursor_get(c, &k, &v, MDB_SET_RANGE), MDB_CORRUPTED);
	mdb_cursor_close(c);
	if (countflags) {
		int n = atoi(first + 1);
		CHECK_RC(mdb_get_rank(txn, dbi, (uint64_t)n, &k, &v), MDB_CORRUPTED);
	}
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_plain_leaf_with_leaf2_flag(void) { leaf2_on_plain_leaf_case(0); }
static void test_counted_leaf_with_leaf2_flag(void) { leaf2_on_plain_leaf_case(MDB_COUNTED); }

/* 48-byte key i: "k%06d" and 'x' bytes, so keys differ in their first 8. */
static MDB_val long_key(char *kb, int i)
{
	memset(kb, 'x', 48);
	char head[8];
	snprintf(head, sizeof head, "k%06d", i);
	memcpy(kb, head, 7);
	return (MDB_val){ 48, kb };
}

/*
 * A branch node whose key size runs past its page, in a tree of 48-byte
 * keys: the search compares only the first 8 key bytes of the nodes it
 * probes, so a lookup that settles on that node without a tie must still
 * find the key's end outside the page and report MDB_CORRUPTED.
 */
static void test_branch_key_past_page_long_keys(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 16u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	char kb[48];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "d", MDB_CREATE, &dbi));
	for (int i = 0; i < 400; i++) {
		MDB_val k = long_key(kb, i), v = t_val("value");
		REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	long pg = find_page(file, size, F_BRANCH);
	REQUIRE(pg >= 2);
	uint16_t lower, off;
	memcpy(&lower, file + pg * PS + 12, 2);
	REQUIRE((lower - 16) / 2 > 3);
	memcpy(&off, file + pg * PS + 16 + 2 * 2, 2);
	free(file);
	uint16_t ksize = PS;	/* node 2's key size: past the page */
	REQUIRE_OK(t_patch_file(path, pg * PS + off + 6, &ksize, 2));

	env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	int bad = 0;
	for (int i = 0; i < 400; i++) {
		MDB_val k = long_key(kb, i), v;
		int rc = mdb_get(txn, dbi, &k, &v);
		if (rc == MDB_CORRUPTED)
			bad++;
		else
			CHECK(rc == 0);
	}
	/* Every key of node 2's child; more than the one equal to its key,
	 * which the search compares in full. */
	CHECK(bad > 1);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

struct walk_seen {
	long damaged;	/* page number that must not be reported */
	int reported;
};

static int walk_visit(void *ctx, const MDB_pageinfo *pi)
{
	struct walk_seen *w = ctx;
	if ((long)pi->pi_pgno == w->damaged && !(pi->pi_type & MDB_PAGE_SUBPAGE))
		w->reported = 1;
	return 0;
}

/* A counted branch page with a node pointer near its end: the walk must
 * check the nodes before it sums their counts (it read past the page). */
static void test_page_walk_damaged_counted_branch(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, MDB_COUNTED, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	long pg = find_page(file, size, F_BRANCH | F_COUNTED);
	free(file);
	REQUIRE(pg >= 2);
	uint16_t bad = PS - 4;
	REQUIRE_OK(t_patch_file(path, pg * PS + 16, &bad, 2));
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_env *env = open_ro(path, &txn, &dbi);
	REQUIRE(env);
	struct walk_seen w = { pg, 0 };
	CHECK_RC(mdb_page_walk(txn, dbi, walk_visit, &w), MDB_CORRUPTED);
	CHECK(!w.reported);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* A compacting copy walks every page: counts that disagree with the tree
 * make it fail instead of writing a copy that carries them. */
static void test_compact_copy_refuses_bad_counts(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE(damage_count(path, 1) >= 2);
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	REQUIRE(env);
	CHECK_RC(mdb_env_copy2(env, t_path("copy.mdb"), MDB_CP_COMPACT), MDB_CORRUPTED);
	/* the plain copy copies pages as they are */
	OK(mdb_env_copy2(env, t_path("plain.mdb"), 0));
	mdb_env_close(env);
}

/* Record counters that disagree with the tree: refused too. */
static void test_compact_copy_refuses_bad_record(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, 0, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	/* the record of "d" in the main DB: node with data size 48, flags
	 * F_SUBDATA, key "d" (padded: one pad byte) */
	static const unsigned char node[] = { 48, 0, 0, 0, 2, 0, 1, 0, 'd' };
	long long off = find_bytes(file, size, node, sizeof node);
	free(file);
	REQUIRE(off > 0);
	long long rec = off + 8 + 2;
	uint64_t entries = 2999;
	REQUIRE_OK(t_patch_file(path, rec + 32, &entries, 8));
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	REQUIRE(env);
	CHECK_RC(mdb_env_copy2(env, t_path("copy.mdb"), MDB_CP_COMPACT), MDB_CORRUPTED);
	mdb_env_close(env);
}

/* A leaf node with flag bits no node carries: refused too. */
static void test_compact_copy_refuses_bad_node_flags(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, 0, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	/* the first leaf of "d": a leaf page whose node 0 is a plain item */
	long pg = -1;
	for (long p = 2; (p + 1) * PS <= size && pg < 0; p++) {
		uint16_t ptr0, nf;
		if (flags_of(file + p * PS) != F_LEAF)
			continue;
		memcpy(&ptr0, file + p * PS + 16, 2);
		memcpy(&nf, file + p * PS + ptr0 + 4, 2);
		if (nf == 0 && ptr0 < PS - 8)
			pg = p;
	}
	REQUIRE(pg >= 2);
	uint16_t ptr0;
	memcpy(&ptr0, file + pg * PS + 16, 2);
	free(file);
	uint16_t bad = 0x4500;
	REQUIRE_OK(t_patch_file(path, pg * PS + ptr0 + 4, &bad, 2));
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	REQUIRE(env);
	CHECK_RC(mdb_env_copy2(env, t_path("copy.mdb"), MDB_CP_COMPACT), MDB_CORRUPTED);
	mdb_env_close(env);
}

/* A node pointer into the free space between lower and upper (zeros there
 * read as an empty node): the copy would zero that space, so it refuses. */
static void test_compact_copy_refuses_node_below_upper(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, 0, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	long pg = -1;
	uint16_t lower = 0, upper = 0;
	for (long p = 2; (p + 1) * PS <= size && pg < 0; p++) {
		memcpy(&lower, file + p * PS + 12, 2);
		memcpy(&upper, file + p * PS + 14, 2);
		if (flags_of(file + p * PS) == F_LEAF && upper - lower >= 64)
			pg = p;
	}
	free(file);
	REQUIRE(pg >= 2);
	uint16_t into_free = (uint16_t)((lower + 16) & ~1);
	REQUIRE_OK(t_patch_file(path, pg * PS + 16, &into_free, 2));
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	REQUIRE(env);
	CHECK_RC(mdb_env_copy2(env, t_path("copy.mdb"), MDB_CP_COMPACT), MDB_CORRUPTED);
	mdb_env_close(env);
}

/* Leaf page pg of the file at path: swap the pointers of nodes i and j. */
static int swap_ptrs(const char *path, long pg, unsigned i, unsigned j)
{
	long long size;
	unsigned char *file = slurp(path, &size);
	if (!file)
		return -1;
	uint16_t a, b;
	memcpy(&a, file + pg * PS + 16 + 2 * i, 2);
	memcpy(&b, file + pg * PS + 16 + 2 * j, 2);
	free(file);
	return t_patch_file(path, pg * PS + 16 + 2 * i, &b, 2) ||
		t_patch_file(path, pg * PS + 16 + 2 * j, &a, 2) ? -1 : 0;
}

static int compact_copy_rc(const char *path)
{
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
	if (!env)
		return -1;
	unlink(t_path("copy.mdb"));
	int rc = mdb_env_copy2(env, t_path("copy.mdb"), MDB_CP_COMPACT);
	mdb_env_close(env);
	return rc;
}

/* Two keys of one leaf swapped: each page is sound, the order is not. */
static void test_compact_copy_refuses_leaf_order(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, 0, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	long pg = -1;	/* a leaf of "d": more than 8 keys */
	for (long p = 2; (p + 1) * PS <= size && pg < 0; p++) {
		uint16_t lower;
		memcpy(&lower, file + p * PS + 12, 2);
		if (flags_of(file + p * PS) == F_LEAF && lower > 16 + 2 * 8)
			pg = p;
	}
	free(file);
	REQUIRE(pg >= 2);
	REQUIRE_OK(swap_ptrs(path, pg, 3, 4));
	CHECK_RC(compact_copy_rc(path), MDB_CORRUPTED);
}

/* Two children of a branch swapped: every leaf is in order inside, but
 * the keys under each link lie outside its separators' range. */
static void test_compact_copy_refuses_child_order(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, 0, 3000, 0));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	long pg = find_page(file, size, F_BRANCH);
	REQUIRE(pg >= 2);
	unsigned char *b = file + pg * PS;
	uint16_t p1, p3;
	memcpy(&p1, b + 16 + 2, 2);
	memcpy(&p3, b + 16 + 6, 2);
	unsigned char c1[6], c3[6];	/* the child page numbers (48 bits) */
	memcpy(c1, b + p1, 6);
	memcpy(c3, b + p3, 6);
	free(file);
	REQUIRE_OK(t_patch_file(path, pg * PS + p1, c3, 6));
	REQUIRE_OK(t_patch_file(path, pg * PS + p3, c1, 6));
	CHECK_RC(compact_copy_rc(path), MDB_CORRUPTED);
}

/* The inline duplicates of one key (a sub-page) out of order. */
static void test_compact_copy_refuses_dup_order(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 16u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "d", MDB_CREATE | MDB_DUPSORT, &dbi));
	static const char *vals[] = { "alpha", "bravo", "charlie", "delta" };
	for (int i = 0; i < 4; i++) {
		MDB_val k = t_val("x"), v = t_val(vals[i]);
		REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	REQUIRE_OK(compact_copy_rc(path));	/* sound: copies */
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	/* node: data size (2+2), flags F_DUPDATA, key size 1, key "x", one
	 * pad byte, then the sub-page: 16-byte header and item pointers */
	static const unsigned char node[] = { 4, 0, 1, 0, 'x' };
	long long off = find_bytes(file, size, node, sizeof node);
	REQUIRE(off > 4);
	long long sp = off - 4 + 8 + 2;
	uint16_t a, b;
	memcpy(&a, file + sp + 16, 2);
	memcpy(&b, file + sp + 18, 2);
	free(file);
	REQUIRE_OK(t_patch_file(path, sp + 16, &b, 2));
	REQUIRE_OK(t_patch_file(path, sp + 18, &a, 2));
	CHECK_RC(compact_copy_rc(path), MDB_CORRUPTED);
}

/* Byte-reversed lexicographic order of the keys "k%06d" is not the stock
 * one: keys ordered by their last byte first. */
static int cmp_last_byte_first(const MDB_val *a, const MDB_val *b)
{
	const unsigned char *x = a->mv_data, *y = b->mv_data;
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	for (size_t i = 1; i <= n; i++)
		if (x[a->mv_size - i] != y[b->mv_size - i])
			return x[a->mv_size - i] < y[b->mv_size - i] ? -1 : 1;
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

/* A DB with a custom comparator: the copy holds its keys to the order of
 * the handle open in the environment; without that handle it only knows
 * the stock order, which these keys break, and refuses. */
static void test_compact_copy_uses_the_db_comparator(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 16u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "d", MDB_CREATE, &dbi));
	REQUIRE_OK(mdb_set_compare(txn, dbi, cmp_last_byte_first));
	for (int i = 0; i < 3000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%06d", i);
		MDB_val k = t_val(kb), v = t_val("value");
		REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	OK(mdb_env_copy2(env, t_path("custom.mdb"), MDB_CP_COMPACT));
	mdb_env_close(env);
	CHECK_RC(compact_copy_rc(path), MDB_CORRUPTED);
}

/* Sound stores of every kind still copy compactly. */
static void test_compact_copy_sound(void)
{
	static const unsigned kinds[] = { 0, MDB_COUNTED, MDB_DUPSORT, MDB_DUPSORT | MDB_COUNTED,
		MDB_PREFIX_COMPRESSION, MDB_DUPSORT | MDB_DUPFIXED };
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		char src[32], dst[32];
		snprintf(src, sizeof src, "s%zu.mdb", i);
		snprintf(dst, sizeof dst, "c%zu.mdb", i);
		REQUIRE_OK(build(t_path(src), kinds[i], 3000, 3000));
		MDB_env *env = t_env_open(t_path(src), MDB_NOSUBDIR | MDB_RDONLY, 0, 2);
		REQUIRE(env);
		int rc = mdb_env_copy2(env, t_path(dst), MDB_CP_COMPACT);
		if (rc)
			T_FAIL("kind %#x: compact copy rc %d (%s)", kinds[i], rc, mdb_strerror(rc));
		mdb_env_close(env);
	}
}

/* The store at path read into a malloc'ed buffer, and in *pg a leaf of
 * "d" (node 0's key starts with 'k') of at least 8 nodes, the first such
 * page at or below the middle of the file; NULL if either fails. */
static unsigned char *read_mid_leaf(const char *path, long *pg)
{
	long long size;
	unsigned char *file = slurp(path, &size);
	for (long q = size / PS / 2; file && q >= 2; q--) {
		const unsigned char *page = file + q * PS;
		uint16_t lower, off0;
		memcpy(&lower, page + 12, 2);
		memcpy(&off0, page + 16, 2);
		if (flags_of(page) == F_LEAF && lower >= 16 + 2 * 8 && off0 + 9 < PS &&
		    page[off0 + 8] == 'k') {
			*pg = q;
			return file;
		}
	}
	free(file);
	return NULL;
}

/*
 * A prefix-compressed DB large enough (more than 64 pages) for its leaf
 * searches to prefetch nodes ahead of their probes: a leaf whose pointer
 * to the first probe's node, or to a node a later probe may read, is past
 * the page, odd or inside the pointer array must give MDB_CORRUPTED for the
 * lookups that probe it, and every other lookup its stored value.
 */
static void test_prefix_large_leaf_bad_node_pointer(void)
{
	static const uint16_t bad[] = { 0xfffe, 0x7ff1, 16 };
	enum { NKEYS = 20000 };
	const char *path = t_path("p.mdb");
	for (unsigned at = 0; at < 2; at++)
		for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
			unlink(path);
			unlink(t_path("p.mdb-lock"));
			REQUIRE_OK(build(path, MDB_PREFIX_COMPRESSION, NKEYS, 0));
			/* Its trunk (node 0) stores a whole key "k...". */
			long pg;
			unsigned char *file = read_mid_leaf(path, &pg);
			REQUIRE(file);
			const unsigned char *page = file + pg * PS;
			uint16_t lower, off0;
			memcpy(&lower, page + 12, 2);
			memcpy(&off0, page + 16, 2);
			unsigned n = (lower - 16u) / 2, m0 = (n - 1) / 2;
			/* Node m0 is every search's first probe, the middle of
			 * 0..m0-1 the second for a key below node m0 (such as
			 * the trunk's). */
			unsigned idx = at ? (m0 - 1) / 2 : m0;
			char first[8];
			memcpy(first, page + off0 + 8, 7);
			first[7] = 0;
			free(file);
			REQUIRE_OK(t_patch_file(path, pg * PS + 16 + 2 * idx, &bad[b], 2));

			MDB_txn *txn;
			MDB_dbi dbi;
			MDB_env *env = open_ro(path, &txn, &dbi);
			REQUIRE(env);
			MDB_stat st;
			REQUIRE_OK(mdb_stat(txn, dbi, &st));
			if (st.ms_branch_pages + st.ms_leaf_pages <= 64)
				T_FAIL("%zu pages, too few to prefetch",
				    st.ms_branch_pages + st.ms_leaf_pages);
			void *map;
			size_t msize;
			REQUIRE_OK(mdb_env_get_map(env, &map, &msize));
			unsigned corrupt = 0, wrong = 0;
			int first_rc = -1;
			for (int i = 0; i < NKEYS; i++) {
				char kb[16], vb[40];
				snprintf(kb, sizeof kb, "k%06d", i);
				snprintf(vb, sizeof vb, "value-%d", i);
				MDB_val k = t_val(kb), v;
				int rc = mdb_get(txn, dbi, &k, &v);
				if (!strcmp(kb, first))
					first_rc = rc;
				if (rc == MDB_CORRUPTED)
					corrupt++;
				else if (rc || v.mv_size != strlen(vb) ||
				    (const char *)v.mv_data < (const char *)map ||
				    (const char *)v.mv_data + v.mv_size > (const char *)map + msize ||
				    memcmp(v.mv_data, vb, v.mv_size))
					wrong++;
			}
			CHECK_RC(first_rc, MDB_CORRUPTED);
			if (!corrupt || wrong || corrupt > n)
				T_FAIL("pointer %u of %u set to %#x: %u lookups corrupt, %u wrong",
				    idx, n, bad[b], corrupt, wrong);
			mdb_txn_abort(txn);
			mdb_env_close(env);
		}
}

/* Key and 100-byte value of record i of bad_tail_case's store: keys are
 * 'k' and the decimal number 2i in klen - 1 digits, so 2i + 1 is absent. */
static void tail_key(unsigned long i, size_t klen, char *kb)
{
	char t[32];
	snprintf(t, sizeof t, "k%0*lu", (int)klen - 1, i);
	memcpy(kb, t, klen);
}

static void tail_val(unsigned i, unsigned char *vb)
{
	memset(vb, (int)(i & 0xff), 100);
	memcpy(vb, &i, 4);
}

/* Make a NOSUBDIR store at path with records 0..nkeys-1 (key(2i) of klen
 * bytes, tail_val(i)) in the DB "d"; 0 or the first error. */
typedef void tail_key_fn(unsigned long i, size_t klen, char *kb);
static int tail_store(const char *path, unsigned nkeys, size_t klen, tail_key_fn *key)
{
	unlink(path);
	unlink(t_path("t.mdb-lock"));
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 64u << 20, 2);
	MDB_txn *txn;
	MDB_dbi dbi;
	if (!env)
		return -1;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (!rc && (rc = mdb_dbi_open(txn, "d", MDB_CREATE, &dbi)) == 0) {
		char kb[64];
		unsigned char vb[100];
		MDB_val k = { klen, kb }, v = { 100, vb };
		for (unsigned i = 0; i < nkeys && !rc; i++) {
			key(2ul * i, klen, kb);
			tail_val(i, vb);
			rc = mdb_put(txn, dbi, &k, &v, 0);
		}
		if (rc)
			mdb_txn_abort(txn);
	}
	if (!rc)
		rc = mdb_txn_commit(txn);
	mdb_env_close(env);
	return rc;
}

/*
 * A leaf with one node pointer damaged, each node of the leaf in turn, to
 * an odd offset, one past the page and one inside the pointer array.
 * Every lookup of the leaf's keys and of the gaps between them either
 * answers right or gives MDB_CORRUPTED, and the damaged node's own key
 * always gives MDB_CORRUPTED.  large: a tree of more than 64 pages (the
 * searches that prefetch, whose halving ends in one pass over the last
 * few nodes: DL_SEARCH_TAIL); else one of fewer.  Both load the next
 * probe's node pointer early (DL_SEARCH_PTRNEXT).
 */
static void bad_tail_case(size_t klen, int large)
{
	const unsigned nkeys = large ? 20000 : 1000;
	const char *path = t_path("t.mdb");
	REQUIRE_OK(tail_store(path, nkeys, klen, tail_key));
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	long pg;
	unsigned char *file = read_mid_leaf(path, &pg);
	REQUIRE(file);
	const unsigned char *page = file + pg * PS;
	uint16_t lower, ptr[PS / 2];
	memcpy(&lower, page + 12, 2);
	unsigned n = (lower - 16u) / 2;
	memcpy(ptr, page + 16, 2 * n);
	/* The record number of the leaf's first key. */
	char kb[32] = { 0 };
	memcpy(kb, page + ptr[0] + 8, klen);
	unsigned first = (unsigned)(strtoul(kb + 1, NULL, 10) / 2);
	free(file);

	for (unsigned idx = 0; idx < n; idx++) {
		const uint16_t bad[] = { (uint16_t)(ptr[idx] | 1), 0xfffe, 16 };
		for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
			REQUIRE_OK(t_patch_file(path, pg * PS + 16 + 2 * idx, &bad[b], 2));
			env = open_ro(path, &txn, &dbi);
			REQUIRE(env);
			MDB_stat st;
			REQUIRE_OK(mdb_stat(txn, dbi, &st));
			REQUIRE((st.ms_branch_pages + st.ms_leaf_pages > 64) == large);
			MDB_cursor *c;
			REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
			unsigned wrong = 0;
			for (unsigned j = 0; j < n; j++) {
				unsigned i = first + j;
				unsigned char vb[100];
				tail_key(2ul * i, klen, kb);
				MDB_val k = { klen, kb }, v;
				int rc = mdb_get(txn, dbi, &k, &v);
				tail_val(i, vb);
				if (j == idx ? rc != MDB_CORRUPTED :
				    rc != MDB_CORRUPTED && (rc || v.mv_size != 100 ||
				    memcmp(v.mv_data, vb, 100)))
					wrong++;
				/* The gap after record i: lands on record i + 1. */
				tail_key(2ul * i + 1, klen, kb);
				k.mv_data = kb;
				k.mv_size = klen;
				rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
				tail_val(i + 1, vb);
				char want[32];
				tail_key(2ul * (i + 1), klen, want);
				if (rc != MDB_CORRUPTED && (rc || k.mv_size != klen ||
				    memcmp(k.mv_data, want, klen) || v.mv_size != 100 ||
				    memcmp(v.mv_data, vb, 100)))
					wrong++;
			}
			if (wrong)
				T_FAIL("%zu-byte keys, pointer %u of %u set to %#x: %u lookups wrong",
				    klen, idx, n, bad[b], wrong);
			mdb_cursor_close(c);
			mdb_txn_abort(txn);
			mdb_env_close(env);
			REQUIRE_OK(t_patch_file(path, pg * PS + 16 + 2 * idx, &ptr[idx], 2));
		}
	}
}

static void test_large_leaf_bad_node_pointer_k8(void) { bad_tail_case(8, 1); }
static void test_large_leaf_bad_node_pointer_k20(void) { bad_tail_case(20, 1); }
static void test_small_leaf_bad_node_pointer_k8(void) { bad_tail_case(8, 0); }
static void test_small_leaf_bad_node_pointer_k20(void) { bad_tail_case(20, 0); }

/* Key of record i (2i, 2i + 1 for the gaps) of bad_branch_case's store:
 * tail_key's, padded past 20 bytes with 'z'. */
static void branch_key(unsigned long i, size_t klen, char *kb)
{
	if (klen <= 20) {
		tail_key(i, klen, kb);
		return;
	}
	memset(kb, 'z', klen);
	tail_key(i, 20, kb);
}

/*
 * A branch page just above the leaves of a tree of more than 64 pages
 * (the searches that prefetch) whose leaves take more than 4 MiB (twice
 * a second-level cache of up to 2 MiB: the lookups that prefetch the
 * whole leaf from the page number they read here), with one node
 * damaged in turn: its child page number set past the file, to a meta
 * page (1) and to 0xffffffffffff, or its node pointer set odd, past the
 * page or into the pointer array.
 * In a read txn every lookup of every key and of the gap after it either
 * answers right or is refused (MDB_CORRUPTED, or MDB_PAGE_NOTFOUND for a
 * child past the file), and some are refused.
 */
static void bad_branch_case(size_t klen)
{
	const unsigned nkeys = 40000;
	const char *path = t_path("t.mdb");
	REQUIRE_OK(tail_store(path, nkeys, klen, branch_key));
	long long size;
	unsigned char *file = slurp(path, &size);
	REQUIRE(file);
	/* One commit of 40,000 records: nearly every page but the two
	 * metas is a tree page, and nearly all of those are leaves. */
	REQUIRE(size / PS > 2 + 4 * 64 && size > (9ll << 20) / 2);
	/* A branch whose children are leaves: its node 0's child page is
	 * a leaf. */
	long pg = -1;
	for (long q = 2; pg < 0 && (q + 1) * PS <= size; q++) {
		const unsigned char *b = file + q * PS;
		uint16_t p0;
		uint64_t c = 0;
		memcpy(&p0, b + 16, 2);
		memcpy(&c, b + p0, 6);
		if (flags_of(b) == F_BRANCH && c >= 2 && (long long)(c + 1) * PS <= size &&
		    flags_of(file + c * PS) == F_LEAF)
			pg = q;
	}
	REQUIRE(pg >= 2);
	const unsigned char *page = file + pg * PS;
	uint16_t lower, ptr[PS / 2];
	memcpy(&lower, page + 12, 2);
	unsigned n = (lower - 16u) / 2;
	REQUIRE(n >= 8);
	memcpy(ptr, page + 16, 2 * n);
	const unsigned idxs[] = { 0, 1, 2, 3, n / 2, n - 2, n - 1 };
	uint64_t past = (uint64_t)(size / PS) + 5;
	for (size_t x = 0; x < sizeof idxs / sizeof idxs[0]; x++) {
		unsigned idx = idxs[x];
		unsigned char hdr[6];
		memcpy(hdr, page + ptr[idx], 6);
		/* 0-2: the child page number; 3-5: the node pointer. */
		for (int b = 0; b < 6; b++) {
			uint64_t cpg = b == 0 ? past : b == 1 ? 1 : 0xffffffffffffull;
			const uint16_t bad[] = { (uint16_t)(ptr[idx] | 1), 0xfffe, 16 };
			if (b < 3) {
				unsigned char h[6];
				for (int i = 0; i < 6; i++)
					h[i] = (unsigned char)(cpg >> (8 * i));
				REQUIRE_OK(t_patch_file(path, pg * PS + ptr[idx], h, 6));
			} else {
				REQUIRE_OK(t_patch_file(path, pg * PS + 16 + 2 * idx, &bad[b - 3], 2));
			}
			MDB_txn *txn;
			MDB_dbi dbi;
			MDB_env *env = open_ro(path, &txn, &dbi);
			REQUIRE(env);
			MDB_cursor *c;
			REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
			unsigned wrong = 0, corrupt = 0;
			char kb[64], want[64];
			unsigned char vb[100];
			for (unsigned i = 0; i < nkeys; i++) {
				branch_key(2ul * i, klen, kb);
				MDB_val k = { klen, kb }, v;
				int rc = mdb_get(txn, dbi, &k, &v);
				tail_val(i, vb);
				corrupt += rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND;
				if (rc != MDB_CORRUPTED && rc != MDB_PAGE_NOTFOUND && (rc || v.mv_size != 100 ||
				    memcmp(v.mv_data, vb, 100)))
					wrong++;
				branch_key(2ul * i + 1, klen, kb);
				k.mv_data = kb;
				k.mv_size = klen;
				rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
				corrupt += rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND;
				if (i + 1 == nkeys) {
					if (rc != MDB_CORRUPTED && rc != MDB_PAGE_NOTFOUND && rc != MDB_NOTFOUND)
						wrong++;
					continue;
				}
				tail_val(i + 1, vb);
				branch_key(2ul * (i + 1), klen, want);
				if (rc != MDB_CORRUPTED && rc != MDB_PAGE_NOTFOUND && (rc || k.mv_size != klen ||
				    memcmp(k.mv_data, want, klen) || v.mv_size != 100 ||
				    memcmp(v.mv_data, vb, 100)))
					wrong++;
			}
			if (wrong || !corrupt)
				T_FAIL("%zu-byte keys, branch node %u of %u, damage %d: %u lookups "
				    "wrong, %u refused", klen, idx, n, b, wrong, corrupt);
			mdb_cursor_close(c);
			mdb_txn_abort(txn);
			mdb_env_close(env);
			if (b < 3)
				REQUIRE_OK(t_patch_file(path, pg * PS + ptr[idx], hdr, 6));
			else
				REQUIRE_OK(t_patch_file(path, pg * PS + 16 + 2 * idx, &ptr[idx], 2));
		}
	}
	free(file);
}

static void test_large_branch_bad_child_k8(void) { bad_branch_case(8); }
static void test_large_branch_bad_child_k20(void) { bad_branch_case(20); }
static void test_large_branch_bad_child_k64(void) { bad_branch_case(64); }

int main(void)
{
#ifdef STOCK_LMDB
	T_DONE(); /* dlmdb-only */
#else
	RUN(test_leaf_with_counted_flag);
	RUN(test_counted_db_leaf_with_counted_flag);
	RUN(test_branch_with_leaf2_flag);
	RUN(test_counted_branch_with_leaf2_flag);
	RUN(test_list_dup_untrusted_entries);
	RUN(test_list_dup_sound);
	RUN(test_get_rank_counts_disagree);
	RUN(test_rank_with_branch_pointer_past_page);
	RUN(test_branch_key_past_page_long_keys);
	RUN(test_page_walk_damaged_counted_branch);
	RUN(test_compact_copy_refuses_bad_counts);
	RUN(test_compact_copy_refuses_bad_record);
	RUN(test_compact_copy_refuses_bad_node_flags);
	RUN(test_compact_copy_refuses_node_below_upper);
	RUN(test_compact_copy_refuses_leaf_order);
	RUN(test_compact_copy_refuses_child_order);
	RUN(test_compact_copy_refuses_dup_order);
	RUN(test_compact_copy_uses_the_db_comparator);
	RUN(test_compact_copy_sound);
	RUN(test_prefix_large_leaf_bad_node_pointer);
	RUN(test_large_leaf_bad_node_pointer_k8);
	RUN(test_large_leaf_bad_node_pointer_k20);
	RUN(test_small_leaf_bad_node_pointer_k8);
	RUN(test_small_leaf_bad_node_pointer_k20);
	RUN(test_large_branch_bad_child_k8);
	RUN(test_large_branch_bad_child_k20);
	RUN(test_large_branch_bad_child_k64);
	RUN(test_plain_leaf_with_leaf2_flag);
	RUN(test_counted_leaf_with_leaf2_flag);
	T_DONE();
#endif
}
