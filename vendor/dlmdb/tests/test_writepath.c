/*
 * test_writepath.c - writes to damaged stores: every page a write
 * transaction changes is validated first, the change fails with
 * MDB_CORRUPTED (or MDB_INCOMPATIBLE for a node layout the writer cannot
 * keep consistent), and the transaction then refuses to commit.  Each store
 * is built with the engine, damaged at one page found with mdb_page_walk,
 * then written to.  Without the validation these writes move nodes with
 * sizes and offsets read from the damaged page (negative-size memmove,
 * overlapping copies, reads past the page).
 */
#include "t.h"

#ifndef STOCK_LMDB

#define PS 4096

static MDB_env *open_file(const char *path, unsigned flags)
{
	MDB_env *env = NULL;
	if (mdb_env_create(&env))
		return NULL;
	mdb_env_set_maxdbs(env, 8);
	mdb_env_set_mapsize(env, 16u << 20);
	if (mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | flags, 0644)) {
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

static void key_of(char *buf, size_t sz, unsigned i)
{
	snprintf(buf, sz, "key-%06u", i);
}

/* A builder's environment on path and write txn in it. */
static int build_begin(const char *path, MDB_env **env, MDB_txn **txn)
{
	int rc;
	if (!(*env = open_file(path, 0)))
		return EIO;
	if ((rc = mdb_txn_begin(*env, NULL, 0, txn)))
		mdb_env_close(*env);
	return rc;
}

/* The end of a builder's write txn begun on env: commit it if rc is 0,
 * else abort it; then close env. */
static int build_end(MDB_env *env, MDB_txn *txn, int rc)
{
	if (rc)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	mdb_env_close(env);
	return rc;
}

/* n keys with vsize-byte values (at most 6000) in DB name (NULL: main),
 * flags on create. */
static int build_sized(const char *path, const char *name, unsigned dbflags, unsigned n,
	size_t vsize)
{
	static char vb[6000];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	char kb[32];
	int rc;
	if (vsize > sizeof(vb))
		vsize = sizeof(vb);
	memset(vb, 'v', vsize);
	if ((rc = build_begin(path, &env, &txn)))
		return rc;
	rc = mdb_dbi_open(txn, name, MDB_CREATE | dbflags, &dbi);
	for (unsigned i = 0; i < n && !rc; i++) {
		key_of(kb, sizeof(kb), i);
		MDB_val k = t_val(kb), v = t_mem(vb, vsize);
		rc = mdb_put(txn, dbi, &k, &v, 0);
	}
	return build_end(env, txn, rc);
}

/* n keys with 40-byte values. */
static int build(const char *path, const char *name, unsigned dbflags, unsigned n)
{
	return build_sized(path, name, dbflags, n, 40);
}

typedef struct pick {
	unsigned want_type;	/* MDB_PAGE_* bits that must all be set */
	unsigned skip;		/* matching pages to pass over */
	mdb_size_t pgno;	/* result, 0: none */
} pick;

static int pick_page(void *ctx, const MDB_pageinfo *pi)
{
	pick *p = ctx;
	if ((pi->pi_type & p->want_type) == p->want_type && !(pi->pi_type & MDB_PAGE_SUBPAGE) &&
	    !p->pgno) {
		if (p->skip)
			p->skip--;
		else
			p->pgno = pi->pi_pgno;
	}
	return 0;
}

/* Page number of a page of DB name (dbi 0: the free DB) of the given type. */
static mdb_size_t find_page(const char *path, const char *name, int freedb, unsigned type,
	unsigned skip)
{
	MDB_env *env = open_file(path, MDB_RDONLY);
	MDB_txn *txn;
	MDB_dbi dbi = 0;
	pick p = { type, skip, 0 };
	if (!env)
		return 0;
	if (!mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)) {
		if (freedb || !mdb_dbi_open(txn, name, 0, &dbi))
			mdb_page_walk(txn, dbi, pick_page, &p);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return p.pgno;
}

static int page_io(const char *path, mdb_size_t pgno, unsigned char *buf, int write)
{
	int fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return errno;
	ssize_t r = write ? pwrite(fd, buf, PS, (off_t)pgno * PS) :
		pread(fd, buf, PS, (off_t)pgno * PS);
	close(fd);
	return r == PS ? 0 : EIO;
}

static uint16_t get16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

#define P_LOWER(b)	get16((b) + 12)
#define P_UPPER(b)	get16((b) + 14)
#define P_PTR(b, i)	get16((b) + 16 + 2 * (i))

/* The first error of a cursor-delete run over the whole DB. */
static int delete_all(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_cursor *c;
	MDB_val k, v;
	int rc = mdb_cursor_open(txn, dbi, &c);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); !rc;
	    rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		if ((rc = mdb_cursor_del(c, 0)))
			break;
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The first error of n inserts of new keys between the existing ones. */
static int insert_many(MDB_txn *txn, MDB_dbi dbi, unsigned n)
{
	char kb[40], vb[300];
	memset(vb, 'w', sizeof(vb));
	for (unsigned i = 0; i < n; i++) {
		snprintf(kb, sizeof(kb), "key-%06u-new", i % 400);
		MDB_val k = t_val(kb), v = t_mem(vb, 40 + i % 250);
		int rc = mdb_put(txn, dbi, &k, &v, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Open the damaged store read-write, run op, and check: the op fails with
 * want, the txn is failed (a later put answers MDB_BAD_TXN) and the commit
 * is refused; the file still opens afterwards.
 */
static void expect_write_refused(const char *path, const char *name,
	int (*op)(MDB_txn *, MDB_dbi), int want)
{
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, name, 0, &dbi));
	CHECK_RC(op(txn, dbi), want);
	MDB_val k = t_val("after"), v = t_val("x");
	CHECK_RC(mdb_put(txn, dbi, &k, &v, 0), MDB_BAD_TXN);
	CHECK(mdb_txn_commit(txn) != 0);
	mdb_env_close(env);
	env = open_file(path, MDB_RDONLY);
	CHECK(env != NULL);
	if (env)
		mdb_env_close(env);
}

static int op_delete_all(MDB_txn *txn, MDB_dbi dbi)
{
	return delete_all(txn, dbi);
}

static int op_insert_many(MDB_txn *txn, MDB_dbi dbi)
{
	return insert_many(txn, dbi, 600);
}

/* A node pointer below upper: deleting that node would memmove a negative
 * length (upper - pointer). */
static void test_pointer_below_upper(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 400));
	/* A leaf with free space between its pointers and its nodes. */
	mdb_size_t pg = 0;
	for (unsigned skip = 0; skip < 30; skip++) {
		pg = find_page(path, "kv", 0, MDB_PAGE_LEAF, skip);
		REQUIRE(pg);
		REQUIRE_OK(page_io(path, pg, b, 0));
		if (P_LOWER(b) + 4 < P_UPPER(b))
			break;
	}
	REQUIRE(P_LOWER(b) + 4 < P_UPPER(b));
	put16(b + 16 + 2 * 1, (uint16_t)(P_UPPER(b) - 2));
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_delete_all, MDB_CORRUPTED);
}

/* Two nodes sharing bytes: a split would copy overlapping node images. */
static void test_overlapping_nodes(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 400));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_LEAF, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	/* Node 3 starts 2 bytes into node 2 (even, above upper, in the page). */
	put16(b + 16 + 2 * 3, (uint16_t)(P_PTR(b, 2) + 2));
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* A node whose data size runs past the end of the page. */
static void test_node_past_page(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 400));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_LEAF, 2);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	/* The node nearest the page end: lowest address is upper; take the
	 * one at the highest pointer and give it a data size of 300. */
	unsigned n = (P_LOWER(b) - 16) / 2, hi = 0;
	for (unsigned i = 1; i < n; i++)
		if (P_PTR(b, i) > P_PTR(b, hi))
			hi = i;
	put16(b + P_PTR(b, hi), 300);
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* A branch page whose lower/upper leave no room for its pointers. */
static void test_branch_bounds(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	put16(b + 14, (uint16_t)(P_LOWER(b) - 2));	/* upper below lower */
	REQUIRE_OK(page_io(path, pg, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	CHECK_RC(insert_many(txn, dbi, 50), MDB_CORRUPTED);
	CHECK(mdb_txn_commit(txn) != 0);
	mdb_env_close(env);
}

/* A counted DB whose root branch page lost P_COUNTED: writing it would mix
 * counted and uncounted node layouts on one page. */
static void test_counted_branch_without_flag(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "cnt", MDB_COUNTED, 3000));
	mdb_size_t pg = find_page(path, "cnt", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE(get16(b + 10) & 0x80);
	put16(b + 10, (uint16_t)(get16(b + 10) & ~0x80));
	REQUIRE_OK(page_io(path, pg, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", 0, &dbi));
	int rc = insert_many(txn, dbi, 50);
	CHECK(rc == MDB_INCOMPATIBLE || rc == MDB_CORRUPTED);
	CHECK(mdb_txn_commit(txn) != 0);
	mdb_env_close(env);
}

/* Fixed-size duplicates: a LEAF2 page whose item size grew past the page.
 * Reads must not hand out items beyond it; writes must refuse. */
static void test_leaf2_item_size(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &dbi));
	MDB_val k = t_val("k");
	for (uint64_t i = 0; i < 2000; i++) {
		MDB_val v = t_mem(&i, 8);
		REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	mdb_size_t pg = find_page(path, "fixed", 0, MDB_PAGE_LEAF2, 1);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	put16(b + 8, 513);	/* mp_pad: the item size */
	REQUIRE_OK(page_io(path, pg, b, 1));

	env = open_file(path, MDB_RDONLY);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "fixed", 0, &dbi));
	MDB_cursor *c;
	MDB_val kk, v;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	int rc;
	unsigned pages = 0;
	REQUIRE_OK(mdb_cursor_get(c, &kk, &v, MDB_FIRST));
	for (rc = mdb_cursor_get(c, &kk, &v, MDB_GET_MULTIPLE); !rc && pages < 100;
	    rc = mdb_cursor_get(c, &kk, &v, MDB_NEXT_MULTIPLE), pages++)
		CHECK(v.mv_size <= PS);
	CHECK_RC(rc, MDB_CORRUPTED);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);

	env = open_file(path, 0);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "fixed", 0, &dbi));
	rc = 0;
	for (uint64_t i = 0; i < 2000 && !rc; i += 3) {
		MDB_val v8 = t_mem(&i, 8);
		rc = mdb_del(txn, dbi, &k, &v8);
	}
	CHECK_RC(rc, MDB_CORRUPTED);
	CHECK(mdb_txn_commit(txn) != 0);
	mdb_env_close(env);
}

/* The free DB's leaf: its first record's key size is damaged.  The next
 * commit drops consumed records from that leaf and must refuse, not read
 * a key past the page. */
static void test_freelist_leaf(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 2000));
	/* Three more commits with deletes leave free-list records. */
	for (unsigned round = 0; round < 3; round++) {
		MDB_env *env = open_file(path, 0);
		MDB_txn *txn;
		MDB_dbi dbi;
		REQUIRE(env);
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
		for (unsigned i = round; i < 2000; i += 4) {
			char kb[32];
			key_of(kb, sizeof(kb), i);
			MDB_val k = t_val(kb);
			mdb_del(txn, dbi, &k, NULL);
		}
		REQUIRE_OK(mdb_txn_commit(txn));
		mdb_env_close(env);
	}
	mdb_size_t pg = find_page(path, NULL, 1, MDB_PAGE_LEAF, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE(P_LOWER(b) > 16);
	put16(b + P_PTR(b, 0) + 6, 60000);	/* ksize of the first record */
	REQUIRE_OK(page_io(path, pg, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	int rc = insert_many(txn, dbi, 400);
	if (!rc)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	CHECK_RC(rc, MDB_CORRUPTED);
	mdb_env_close(env);
}

/* A leaf whose upper is odd: the next node would land at an odd offset,
 * which every later read refuses. */
static void test_odd_upper(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 400));
	mdb_size_t pg = 0;
	for (unsigned skip = 0; skip < 30; skip++) {
		pg = find_page(path, "kv", 0, MDB_PAGE_LEAF, skip);
		REQUIRE(pg);
		REQUIRE_OK(page_io(path, pg, b, 0));
		if (P_LOWER(b) + 4 < P_UPPER(b))
			break;
	}
	REQUIRE(P_LOWER(b) + 4 < P_UPPER(b));
	put16(b + 14, (uint16_t)(P_UPPER(b) - 1));
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* The newest meta's txn id is the largest there is: a write txn would
 * commit as txn 0 and lose to the other meta. */
static void test_meta_txnid_wraps(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 100));
	REQUIRE_OK(page_io(path, 0, b, 0));
	uint64_t top = ~(uint64_t)0;
	memcpy(b + 144, &top, 8);	/* mm_txnid */
	REQUIRE_OK(page_io(path, 0, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn = NULL;
	REQUIRE(env);
	CHECK_RC(mdb_txn_begin(env, NULL, 0, &txn), MDB_CORRUPTED);
	mdb_env_close(env);
}

/* The newest meta holds an odd txn id in page 0: the next commit would
 * overwrite it, the only meta holding the newest snapshot, and carry
 * page 1's stale fields forward.  Reads still see that snapshot; a write
 * txn is refused and the file stays as it was. */
static void test_meta_in_the_wrong_page(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 100));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn = NULL;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	MDB_val k = t_val("second-commit"), v = t_val("value");
	REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	REQUIRE_OK(mdb_txn_commit(txn));	/* txn 2, in page 0 */
	mdb_env_close(env);
	REQUIRE_OK(page_io(path, 0, b, 0));
	uint64_t id;
	memcpy(&id, b + 144, 8);	/* mm_txnid */
	REQUIRE(id == 2);
	id = 3;
	memcpy(b + 144, &id, 8);
	REQUIRE_OK(page_io(path, 0, b, 1));
	long long size = t_file_size(path);
	env = open_file(path, 0);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	REQUIRE_OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, dbi, "second-commit", "value"));
	CHECK_RC(mdb_txn_begin(env, NULL, 0, &txn), MDB_CORRUPTED);
	mdb_env_close(env);
	unsigned char after[PS];
	REQUIRE_OK(page_io(path, 0, after, 0));
	CHECK(memcmp(b, after, PS) == 0);
	CHECK_EQ(t_file_size(path), size);
}

/* Both metas claim a last page far past the file and any map size: a plain
 * copy refuses instead of writing gigabytes of zeros. */
static void test_copy_last_page_past_map(void)
{
	const char *path = t_path("s.mdb"), *dst = t_path("copy.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 100));
	for (mdb_size_t m = 0; m < 2; m++) {
		REQUIRE_OK(page_io(path, m, b, 0));
		uint64_t last = (uint64_t)1 << 24;	/* 64 GiB of 4 KiB pages */
		memcpy(b + 136, &last, 8);	/* mm_last_pg */
		REQUIRE_OK(page_io(path, m, b, 1));
	}
	MDB_env *env = open_file(path, MDB_RDONLY);
	REQUIRE(env);
	CHECK_RC(mdb_env_copy2(env, dst, 0), MDB_CORRUPTED);
	mdb_env_close(env);
	struct stat st;
	CHECK(stat(dst, &st) != 0 || st.st_size <= 2 * PS);
}

/* mdb_drop of a tree whose branch page has a pointer past the page: the
 * drop reads every child pointer, so it must check each node first. */
static void test_drop_branch_pointer(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE(P_LOWER(b) >= 16 + 2 * 3);
	put16(b + 16 + 2 * 2, 65535);	/* node 2's pointer */
	REQUIRE_OK(page_io(path, pg, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	CHECK_RC(mdb_drop(txn, dbi, 0), MDB_CORRUPTED);
	CHECK(mdb_txn_commit(txn) != 0);
	mdb_env_close(env);
}

/* Child page number of branch node i (page image b). */
static uint64_t child_of(const unsigned char *b, unsigned i)
{
	const unsigned char *n = b + P_PTR(b, i);
	return get16(n) | (uint64_t)get16(n + 2) << 16 | (uint64_t)get16(n + 4) << 32;
}

static void set_child(unsigned char *b, unsigned i, uint64_t pg)
{
	unsigned char *n = b + P_PTR(b, i);
	put16(n, (uint16_t)pg);
	put16(n + 2, (uint16_t)(pg >> 16));
	put16(n + 4, (uint16_t)(pg >> 32));
}

/* Two nodes of one branch page lead to the same child: a write through
 * both would copy the page twice and leave one link on a freed page.  The
 * branch page is refused when the write first copies it. */
static void test_duplicate_children(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE(P_LOWER(b) >= 16 + 2 * 8);
	set_child(b, 5, child_of(b, 2));
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* A branch page with its own number as a child: a cycle. */
static void test_child_is_its_parent(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	set_child(b, 1, pg);
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* Children 1 and 3 swapped: every page is sound and every child distinct,
 * but the keys under each link lie outside the range the separators give
 * it.  A write through such a link is refused before it copies the page
 * (the writes go to keys 0..399, which live under children 0..8). */
static void test_children_out_of_range(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE(P_LOWER(b) >= 16 + 2 * 8);
	uint64_t c1 = child_of(b, 1), c3 = child_of(b, 3);
	set_child(b, 1, c3);
	set_child(b, 3, c1);
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* The store of two DBs "a" and "b" with the same keys and values: their
 * pages hold the same key ranges. */
static int build_twins(const char *path)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi a, b;
	char kb[32], vb[40];
	int rc;
	memset(vb, 'v', sizeof(vb));
	if ((rc = build_begin(path, &env, &txn)))
		return rc;
	if (!(rc = mdb_dbi_open(txn, "a", MDB_CREATE, &a)))
		rc = mdb_dbi_open(txn, "b", MDB_CREATE, &b);
	for (unsigned i = 0; i < 3000 && !rc; i++) {
		key_of(kb, sizeof(kb), i);
		MDB_val k = t_val(kb), v = t_mem(vb, sizeof(vb));
		if (!(rc = mdb_put(txn, a, &k, &v, 0)))
			rc = mdb_put(txn, b, &k, &v, 0);
	}
	return build_end(env, txn, rc);
}

/* One leaf linked from two trees, inside the range both links allow: "a"'s
 * first child is replaced by "b"'s first leaf.  Nothing on a page tells,
 * but a write through both links copies (and frees) the page twice; the
 * commit finds the page freed twice and refuses with MDB_CORRUPTED rather
 * than write a free list that hands the page out twice. */
static void test_leaf_in_two_trees(void)
{
	const char *path = t_path("s.mdb");
	unsigned char ba[PS], bb[PS];
	REQUIRE_OK(build_twins(path));
	mdb_size_t pa = find_page(path, "a", 0, MDB_PAGE_BRANCH, 0);
	mdb_size_t pb = find_page(path, "b", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pa && pb && pa != pb);
	REQUIRE_OK(page_io(path, pa, ba, 0));
	REQUIRE_OK(page_io(path, pb, bb, 0));
	set_child(ba, 0, child_of(bb, 0));
	REQUIRE_OK(page_io(path, pa, ba, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi a, b;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "a", 0, &a));
	REQUIRE_OK(mdb_dbi_open(txn, "b", 0, &b));
	char kb[32];
	key_of(kb, sizeof(kb), 1);
	MDB_val k = t_val(kb);
	OK(mdb_del(txn, a, &k, NULL));
	OK(mdb_del(txn, b, &k, NULL));
	CHECK_RC(mdb_txn_commit(txn), MDB_CORRUPTED);
	mdb_env_close(env);
	/* The store as it was: both trees still read key 1. */
	env = open_file(path, MDB_RDONLY);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "b", 0, &b));
	MDB_val v;
	OK(mdb_get(txn, b, &k, &v));
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Two keys in the middle of a leaf swapped (its first and last keys, and
 * so its range, unchanged): the write's binary search would land in the
 * wrong place.  Refused when the write first copies the leaf. */
static void test_leaf_keys_out_of_order(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_LEAF, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE(P_LOWER(b) >= 16 + 2 * 8);
	uint16_t p3 = P_PTR(b, 3), p4 = P_PTR(b, 4);
	put16(b + 16 + 2 * 3, p4);
	put16(b + 16 + 2 * 4, p3);
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* Offset in the file of the entries counter of the record stored under
 * key name in the first leaf of tree (NULL: the main DB), or -1. */
static long long record_entries_in(const char *path, const char *tree, const char *name)
{
	mdb_size_t pg = find_page(path, tree, 0, MDB_PAGE_LEAF, 0);
	unsigned char b[PS];
	size_t nl = strlen(name);
	if (!pg || page_io(path, pg, b, 0))
		return -1;
	unsigned n = (P_LOWER(b) - 16) / 2;
	for (unsigned i = 0; i < n; i++) {
		unsigned off = P_PTR(b, i);
		if (get16(b + off + 6) == nl && !memcmp(b + off + 8, name, nl))
			return (long long)pg * PS + off + 8 + (long long)(nl + (nl & 1)) + 32;
	}
	return -1;
}

/* The same for named DB name's record in the main DB's (single) leaf. */
static long long record_entries_at(const char *path, const char *name)
{
	return record_entries_in(path, NULL, name);
}

/* The record of "kv" counts fewer entries than its tree holds: deleting
 * them all would take the counter below zero (it would wrap). */
static void test_entries_below_tree(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, "kv", 0, 400));
	long long at = record_entries_at(path, "kv");
	REQUIRE(at > 0);
	uint64_t e = 300;
	REQUIRE_OK(t_patch_file(path, at, &e, 8));
	expect_write_refused(path, "kv", op_delete_all, MDB_CORRUPTED);
}

/* The record counts more entries than the tree holds: the delete that
 * empties the tree finds entries still counted. */
static void test_entries_above_tree(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, "kv", 0, 400));
	long long at = record_entries_at(path, "kv");
	REQUIRE(at > 0);
	uint64_t e = 401;
	REQUIRE_OK(t_patch_file(path, at, &e, 8));
	expect_write_refused(path, "kv", op_delete_all, MDB_CORRUPTED);
}

/* DUPSORT DB "dup" holding n values under the one key "key". */
static int build_dups(const char *path, unsigned n)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = t_val("key");
	int rc;
	if ((rc = build_begin(path, &env, &txn)))
		return rc;
	rc = mdb_dbi_open(txn, "dup", MDB_CREATE | MDB_DUPSORT, &dbi);
	for (unsigned i = 0; i < n && !rc; i++) {
		char vb[16];
		snprintf(vb, sizeof(vb), "v%04u", i);
		MDB_val v = t_val(vb);
		rc = mdb_put(txn, dbi, &k, &v, 0);
	}
	return build_end(env, txn, rc);
}

/* A DUPSORT record counting fewer entries than one key's duplicates:
 * removing the key with all its duplicates would wrap the counter. */
static void test_dup_entries_below_key(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = t_val("key");
	REQUIRE_OK(build_dups(path, 50));
	long long at = record_entries_at(path, "dup");
	REQUIRE(at > 0);
	uint64_t e = 10;
	REQUIRE_OK(t_patch_file(path, at, &e, 8));
	env = open_file(path, 0);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "dup", 0, &dbi));
	CHECK_RC(mdb_del(txn, dbi, &k, NULL), MDB_CORRUPTED);
	CHECK(mdb_txn_commit(txn) != 0);
	mdb_env_close(env);
}

/* A counted branch whose count for an untouched child is off by one: the
 * commit sums the stored count with the recomputed ones, finds the total
 * disagrees with the record and refuses with MDB_CORRUPTED. */
static void test_counted_count_off(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "cnt", MDB_COUNTED, 3000));
	mdb_size_t pg = find_page(path, "cnt", 0, MDB_PAGE_BRANCH, 0);
	REQUIRE(pg);
	REQUIRE_OK(page_io(path, pg, b, 0));
	unsigned last = (P_LOWER(b) - 16) / 2 - 1;
	REQUIRE(last >= 5);
	unsigned char *cnt = b + P_PTR(b, last) + 8;
	uint64_t c;
	memcpy(&c, cnt, 8);
	c++;
	memcpy(cnt, &c, 8);
	REQUIRE_OK(page_io(path, pg, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", 0, &dbi));
	char kb[32];
	key_of(kb, sizeof(kb), 1);
	MDB_val k = t_val(kb);
	OK(mdb_del(txn, dbi, &k, NULL));	/* under child 0, far from the damage */
	CHECK_RC(mdb_txn_commit(txn), MDB_CORRUPTED);
	mdb_env_close(env);
}

/* The last page number of the newer meta page (the one with the larger
 * txnid). */
static uint64_t meta_last_pg(const char *path)
{
	unsigned char m0[PS], m1[PS];
	uint64_t l0, l1, t0, t1;
	if (page_io(path, 0, m0, 0) || page_io(path, 1, m1, 0))
		return 0;
	memcpy(&l0, m0 + 136, 8);
	memcpy(&l1, m1 + 136, 8);
	memcpy(&t0, m0 + 144, 8);
	memcpy(&t1, m1 + 144, 8);
	return t1 > t0 ? l1 : l0;
}

/* The same field set to last in both meta pages. */
static int set_last_pg(const char *path, uint64_t last)
{
	int rc = t_patch_file(path, 136, &last, 8);
	return rc ? rc : t_patch_file(path, PS + 136, &last, 8);
}

/* DBs "a" and "b", one key each, created in that order in one txn. */
static int build_pair(const char *path)
{
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi a, b;
	MDB_val k = t_val("k"), v = t_val("v");
	int rc;
	if (!env)
		return EIO;
	if (!(rc = mdb_txn_begin(env, NULL, 0, &txn))) {
		if ((rc = mdb_dbi_open(txn, "a", MDB_CREATE, &a)) ||
		    (rc = mdb_put(txn, a, &k, &v, 0)) ||
		    (rc = mdb_dbi_open(txn, "b", MDB_CREATE, &b)) ||
		    (rc = mdb_put(txn, b, &k, &v, 0)))
			mdb_txn_abort(txn);
		else
			rc = mdb_txn_commit(txn);
	}
	mdb_env_close(env);
	return rc;
}

/*
 * The meta's last page moved below the root of "b" (damage to the meta or
 * to the record).  A write txn allocates from that page count on, so its
 * first new page gets b's root number; opening "b" afterwards must not hand
 * that page (a copy of "a"'s leaf) to "b": the record is refused.
 */
static void test_record_root_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build_pair(path));
	mdb_size_t rb = find_page(path, "b", 0, MDB_PAGE_LEAF, 0);
	REQUIRE(rb && rb == meta_last_pg(path));
	REQUIRE_OK(set_last_pg(path, rb - 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi a, b;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "a", 0, &a));
	MDB_val k = t_val("k2"), v = t_val("v2");
	OK(mdb_put(txn, a, &k, &v, 0));
	CHECK_RC(mdb_dbi_open(txn, "b", 0, &b), MDB_CORRUPTED);
	CHECK(mdb_txn_commit(txn) != 0);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_RC(mdb_dbi_open(txn, "b", 0, &b), MDB_CORRUPTED);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* A branch's child numbered at the snapshot's page count: the page the
 * write txn allocates first (for its copy of that branch). */
static void test_child_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	uint64_t last = meta_last_pg(path);
	REQUIRE(pg && last);
	REQUIRE_OK(page_io(path, pg, b, 0));
	set_child(b, 1, last + 1);
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "kv", op_insert_many, MDB_CORRUPTED);
}

/* DB "big": 8 keys with 6000-byte values, each in an overflow run. */
static int build_big(const char *path)
{
	return build_sized(path, "big", 0, 8, 6000);
}

/* Where node 3 of big's leaf b keeps its run's page number: after its
 * header (F_BIGDATA) and its 10-byte key. */
static unsigned char *big_run_pgno(unsigned char *b)
{
	unsigned char *n = b + P_PTR(b, 3);
	if (!(get16(n + 4) & 1) || get16(n + 6) != 10)
		return NULL;
	return n + 8 + 10;
}

/* A leaf node's overflow page number at the snapshot's page count: a write
 * to the leaf would carry a link to a page the txn allocates for
 * something else (and free it with the node). */
static void test_overflow_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS], *at;
	REQUIRE_OK(build_big(path));
	mdb_size_t pg = find_page(path, "big", 0, MDB_PAGE_LEAF, 0);
	uint64_t last = meta_last_pg(path);
	REQUIRE(pg && last);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE((at = big_run_pgno(b)) != NULL);
	uint64_t past = last + 1;
	memcpy(at, &past, 8);
	REQUIRE_OK(page_io(path, pg, b, 1));
	expect_write_refused(path, "big", op_insert_many, MDB_CORRUPTED);
}

/*
 * The reads of a write txn on a store whose snapshot names a page past its
 * end (damage): the txn allocates exactly those numbers for pages of its
 * own, and a read must not hand one of them out for the damaged link.  It
 * gets the answer a read txn on the same store gets.  d: how far past the
 * snapshot's last page the damaged number lies; the txn first writes into
 * "other", allocating a leaf and an overflow run there.
 */
static int put_other(MDB_txn *txn)
{
	static unsigned char big[6000];
	MDB_dbi other;
	int rc;
	memset(big, 'C', sizeof(big));
	if ((rc = mdb_dbi_open(txn, "other", 0, &other)))
		return rc;
	MDB_val k = t_val("k"), v = t_mem(big, sizeof(big));
	return mdb_put(txn, other, &k, &v, 0);
}

/* Reads of key in name, in a read txn and in a write txn after put_other,
 * both failing with want; a scan of name in another such write txn too. */
static void expect_reads_refused(const char *path, const char *name, MDB_val key, int want)
{
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val v;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, name, 0, &dbi));
	CHECK_RC(mdb_get(txn, dbi, &key, &v), want);
	mdb_txn_abort(txn);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(put_other(txn));
	REQUIRE_OK(mdb_dbi_open(txn, name, 0, &dbi));
	CHECK_RC(mdb_get(txn, dbi, &key, &v), want);
	mdb_txn_abort(txn);	/* the failed read ended it */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(put_other(txn));
	REQUIRE_OK(mdb_dbi_open(txn, name, 0, &dbi));
	MDB_cursor *mc;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &mc));
	MDB_val k;
	int rc;
	while (!(rc = mdb_cursor_get(mc, &k, &v, MDB_NEXT)))
		;
	CHECK_RC(rc, want);
	mdb_cursor_close(mc);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* A store with DB name (dbflags, 3000 keys, so a branch page) and
 * "other" (one key): its first branch page, read into b, and the last page
 * number of the snapshot (*last); 0 when that fails. */
static mdb_size_t build_branch_and_other(const char *path, const char *name, unsigned dbflags,
	unsigned char *b, uint64_t *last)
{
	if (build(path, name, dbflags, 3000) || build(path, "other", 0, 1))
		return 0;
	mdb_size_t pg = find_page(path, name, 0, MDB_PAGE_BRANCH, 0);
	*last = meta_last_pg(path);
	if (!pg || !*last || page_io(path, pg, b, 0))
		return 0;
	return pg;
}

static void test_child_read_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	uint64_t last;
	mdb_size_t pg = build_branch_and_other(path, "kv", 0, b, &last);
	REQUIRE(pg);
	/* Node 1's key: the first key under that child. */
	unsigned char *n = b + P_PTR(b, 1);
	char sep[32];
	unsigned ks = get16(n + 6);
	REQUIRE(ks > 0 && ks < sizeof(sep));
	memcpy(sep, n + 8, ks);
	for (unsigned d = 1; d <= 3; d++) {
		set_child(b, 1, last + d);
		REQUIRE_OK(page_io(path, pg, b, 1));
		expect_reads_refused(path, "kv", t_mem(sep, ks), MDB_PAGE_NOTFOUND);
	}
}

static void test_overflow_read_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS], *at;
	REQUIRE_OK(build_big(path));
	REQUIRE_OK(build(path, "other", 0, 1));
	mdb_size_t pg = find_page(path, "big", 0, MDB_PAGE_LEAF, 0);
	uint64_t last = meta_last_pg(path);
	REQUIRE(pg && last);
	REQUIRE_OK(page_io(path, pg, b, 0));
	REQUIRE((at = big_run_pgno(b)) != NULL);
	char kb[32];
	key_of(kb, sizeof(kb), 3);
	for (unsigned d = 1; d <= 3; d++) {
		uint64_t past = last + d;
		memcpy(at, &past, 8);
		REQUIRE_OK(page_io(path, pg, b, 1));
		expect_reads_refused(path, "big", t_val(kb), MDB_PAGE_NOTFOUND);
	}
}

/* The rank descent of a counted tree, the same way. */
static void test_rank_child_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	uint64_t last;
	mdb_size_t pg = build_branch_and_other(path, "cnt", MDB_COUNTED, b, &last);
	REQUIRE(pg);
	/* Node 0's count: the rank of the first entry under child 1. */
	uint64_t first;
	memcpy(&first, b + P_PTR(b, 0) + 8, 8);
	REQUIRE(first > 0 && first < 3000);
	for (unsigned d = 1; d <= 3; d++) {
		set_child(b, 1, last + d);
		REQUIRE_OK(page_io(path, pg, b, 1));
		MDB_env *env = open_file(path, 0);
		REQUIRE(env);
		for (unsigned write = 0; write <= 1; write++) {
			MDB_txn *txn;
			MDB_dbi dbi;
			MDB_val k, v;
			REQUIRE_OK(mdb_txn_begin(env, NULL, write ? 0 : MDB_RDONLY, &txn));
			if (write)
				REQUIRE_OK(put_other(txn));
			REQUIRE_OK(mdb_dbi_open(txn, "cnt", 0, &dbi));
			CHECK_RC(mdb_get_rank(txn, dbi, first, &k, &v), MDB_PAGE_NOTFOUND);
			mdb_txn_abort(txn);
		}
		mdb_env_close(env);
	}
}

/* Dropping a tree whose branch names a page past the snapshot, after the
 * txn allocated that page for "other": the drop is refused, and "other"
 * keeps its page. */
static void test_drop_child_past_snapshot(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	uint64_t last;
	mdb_size_t pg = build_branch_and_other(path, "kv", 0, b, &last);
	REQUIRE(pg);
	for (unsigned d = 1; d <= 3; d++) {
		set_child(b, 1, last + d);
		REQUIRE_OK(page_io(path, pg, b, 1));
		MDB_env *env = open_file(path, 0);
		MDB_txn *txn;
		MDB_dbi kv;
		REQUIRE(env);
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(put_other(txn));
		REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &kv));
		CHECK_RC(mdb_drop(txn, kv, 0), MDB_PAGE_NOTFOUND);
		mdb_txn_abort(txn);
		mdb_env_close(env);
	}
}

/*
 * Damage that names a page free in the snapshot, which the write txn
 * then reuses for "other": a link of the snapshot's tree must not lead
 * into that page (a read would hand out other's entries, a write would
 * change or free other's page).  drop_scratch drops DB "scratch"
 * (add_scratch), so its pages are free; *freepg gets one of them (a leaf),
 * which fill_other's puts reuse.  Pages become reusable once a later
 * commit (here a put into "other") makes the drop's snapshot old.
 */
static int add_scratch(const char *path)
{
	return build_sized(path, "scratch", 0, 400, 100);
}

static int drop_scratch(const char *path, mdb_size_t *freepg)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;
	if (!(*freepg = find_page(path, "scratch", 0, MDB_PAGE_LEAF, 0)))
		return MDB_NOTFOUND;
	if ((rc = build_begin(path, &env, &txn)))
		return rc;
	if (!(rc = mdb_dbi_open(txn, "scratch", 0, &dbi)))
		rc = mdb_drop(txn, dbi, 1);
	if ((rc = build_end(env, txn, rc)))
		return rc;
	return build(path, "other", 0, 1);
}

/* 2,000 puts into "other": more pages than scratch freed. */
static int fill_other(MDB_txn *txn)
{
	static char vb[100];
	MDB_dbi other;
	int rc;
	memset(vb, 'o', sizeof(vb));
	if ((rc = mdb_dbi_open(txn, "other", 0, &other)))
		return rc;
	for (unsigned i = 0; i < 2000 && !rc; i++) {
		char kb[32];
		snprintf(kb, sizeof(kb), "o-%06u", i);
		MDB_val k = t_val(kb), v = t_mem(vb, sizeof(vb));
		rc = mdb_put(txn, other, &k, &v, 0);
	}
	return rc;
}

typedef struct page_seek {
	mdb_size_t pgno;
	int found;
} page_seek;

static int seek_page(void *ctx, const MDB_pageinfo *pi)
{
	page_seek *s = ctx;
	unsigned n = pi->pi_pages ? pi->pi_pages : 1;
	if (!(pi->pi_type & MDB_PAGE_SUBPAGE) && s->pgno >= pi->pi_pgno && s->pgno - pi->pi_pgno < n)
		s->found = 1;
	return 0;
}

/* Whether "other", as txn sees it, holds page pg. */
static int other_holds(MDB_txn *txn, mdb_size_t pg)
{
	MDB_dbi other;
	page_seek s = { pg, 0 };
	if (mdb_dbi_open(txn, "other", 0, &other) || mdb_page_walk(txn, other, seek_page, &s))
		return 0;
	return s.found;
}

/* A write txn that has filled "other" and reused page freepg for it. */
static int begin_reusing(MDB_env *env, mdb_size_t freepg, MDB_txn **txn)
{
	int rc = mdb_txn_begin(env, NULL, 0, txn);
	if (rc)
		return rc;
	if ((rc = fill_other(*txn)) || !other_holds(*txn, freepg)) {
		mdb_txn_abort(*txn);
		return rc ? rc : MDB_PROBLEM;
	}
	return 0;
}

/* A branch of "kv" names the reused page as a child. */
static void test_child_is_reused_page(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	uint64_t last;
	mdb_size_t pg = build_branch_and_other(path, "kv", 0, b, &last), freepg;
	REQUIRE(pg);
	REQUIRE_OK(add_scratch(path));
	REQUIRE_OK(drop_scratch(path, &freepg));
	/* Node 1's key: the first key under that child. */
	unsigned char *n = b + P_PTR(b, 1);
	char sep[32];
	unsigned ks = get16(n + 6);
	REQUIRE(ks > 0 && ks < sizeof(sep));
	memcpy(sep, n + 8, ks);
	set_child(b, 1, freepg);
	REQUIRE_OK(page_io(path, pg, b, 1));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi kv;
	MDB_cursor *mc;
	MDB_val k = t_mem(sep, ks), v;
	int rc;
	REQUIRE(env);
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &kv));
	CHECK_RC(mdb_get(txn, kv, &k, &v), MDB_CORRUPTED);
	CHECK_RC(mdb_txn_commit(txn), MDB_BAD_TXN);
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &kv));
	REQUIRE_OK(mdb_cursor_open(txn, kv, &mc));
	while (!(rc = mdb_cursor_get(mc, &k, &v, MDB_NEXT)))
		;
	CHECK_RC(rc, MDB_CORRUPTED);
	mdb_cursor_close(mc);
	mdb_txn_abort(txn);
	/* The drop would free other's page along with kv's. */
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &kv));
	CHECK_RC(mdb_drop(txn, kv, 0), MDB_CORRUPTED);
	CHECK_RC(mdb_txn_commit(txn), MDB_BAD_TXN);
	/* A nested txn: the page is its parent's. */
	MDB_txn *child;
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &kv));
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	k = t_mem(sep, ks);
	CHECK_RC(mdb_get(child, kv, &k, &v), MDB_CORRUPTED);
	mdb_txn_abort(child);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	/* A txn that spilled the reused page (its early pages go first):
	 * the read must not bring it back.  begin_reusing's walk would, so
	 * it runs afterwards, on the same writes. */
	setenv("DLMDB_DIRTY_LIMIT", "16", 1);
	env = open_file(path, 0);
	unsetenv("DLMDB_DIRTY_LIMIT");
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(fill_other(txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &kv));
	k = t_mem(sep, ks);
	CHECK_RC(mdb_get(txn, kv, &k, &v), MDB_CORRUPTED);
	mdb_txn_abort(txn);
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* The record of "kv" (in the main DB), or of "dup"'s duplicate
 * sub-database, names the reused page as its root. */
static void test_root_is_reused_page(void)
{
	for (int sub = 0; sub <= 1; sub++) {
		const char *path = t_path(sub ? "d.mdb" : "s.mdb");
		const char *name = sub ? "dup" : "kv";
		mdb_size_t freepg;
		if (sub)
			REQUIRE_OK(build_dups(path, 600));
		else
			REQUIRE_OK(build(path, "kv", 0, 3000));
		REQUIRE_OK(build(path, "other", 0, 1));
		REQUIRE_OK(add_scratch(path));
		REQUIRE_OK(drop_scratch(path, &freepg));
		long long at = sub ? record_entries_in(path, "dup", "key") :
			record_entries_at(path, "kv");
		REQUIRE(at > 0);
		/* A one-page tree, as the reused page is a leaf. */
		uint64_t root = freepg;
		uint16_t depth = 1;
		REQUIRE_OK(t_patch_file(path, at + 8, &root, 8));
		REQUIRE_OK(t_patch_file(path, at - 26, &depth, 2));
		MDB_env *env = open_file(path, 0);
		MDB_txn *txn;
		MDB_dbi dbi;
		MDB_val k = t_val("key"), v;
		REQUIRE(env);
		REQUIRE_OK(begin_reusing(env, freepg, &txn));
		if (sub) {
			REQUIRE_OK(mdb_dbi_open(txn, name, 0, &dbi));
			CHECK_RC(mdb_get(txn, dbi, &k, &v), MDB_CORRUPTED);
			v = t_val("v9999");
			CHECK_ERR(mdb_put(txn, dbi, &k, &v, 0));
		} else {
			CHECK_RC(mdb_dbi_open(txn, name, 0, &dbi), MDB_CORRUPTED);
		}
		CHECK_ERR(mdb_txn_commit(txn));
		mdb_env_close(env);
	}
}

/* DB "big" (build_big's), then "scratch", in one txn: the pages of
 * scratch follow big's last overflow run. */
static int build_big_then_scratch(const char *path)
{
	static char vb[6000];
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi big, scratch;
	char kb[32];
	int rc;
	if ((rc = build_begin(path, &env, &txn)))
		return rc;
	if (!(rc = mdb_dbi_open(txn, "big", MDB_CREATE, &big)))
		rc = mdb_dbi_open(txn, "scratch", MDB_CREATE, &scratch);
	for (unsigned i = 0; i < 8 + 400 && !rc; i++) {
		key_of(kb, sizeof(kb), i);
		MDB_val k = t_val(kb), v = t_mem(vb, i < 8 ? sizeof(vb) : 100);
		rc = mdb_put(txn, i < 8 ? big : scratch, &k, &v, 0);
	}
	return build_end(env, txn, rc);
}

typedef struct run_pick {
	mdb_size_t pgno, pages;
} run_pick;

static int last_run(void *ctx, const MDB_pageinfo *pi)
{
	run_pick *r = ctx;
	if ((pi->pi_type & MDB_PAGE_OVERFLOW) && pi->pi_pgno > r->pgno) {
		r->pgno = pi->pi_pgno;
		r->pages = pi->pi_pages;
	}
	return 0;
}

/*
 * The last overflow run of "big", its length damaged so that it reaches
 * over the first pages of scratch, which were free in the snapshot and
 * which the txn reuses for "other" (the smallest free pages go first).
 * Dropping big frees the run, which would list those pages free while
 * other holds them: the commit is refused.  A dry run finds how far
 * other's pages reach; the engine allocates the same way each time.
 */
static void test_run_over_reused_pages(void)
{
	const char *path = t_path("s.mdb");
	mdb_size_t freepg;
	REQUIRE_OK(build_big_then_scratch(path));
	REQUIRE_OK(build(path, "other", 0, 1));
	REQUIRE_OK(drop_scratch(path, &freepg));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi big;
	run_pick r = { 0, 0 };
	REQUIRE(env);
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "big", 0, &big));
	REQUIRE_OK(mdb_page_walk(txn, big, last_run, &r));
	mdb_size_t end = r.pgno + r.pages;
	while (other_holds(txn, end))
		end++;
	mdb_txn_abort(txn);
	mdb_env_close(env);
	REQUIRE(r.pgno && end > r.pgno + r.pages && end <= meta_last_pg(path));
	uint32_t pages = (uint32_t)(end - r.pgno);
	REQUIRE_OK(t_patch_file(path, (long long)r.pgno * PS + 12, &pages, 4));
	env = open_file(path, 0);
	REQUIRE(env);
	REQUIRE_OK(begin_reusing(env, freepg, &txn));
	REQUIRE(other_holds(txn, end - 1));
	REQUIRE_OK(mdb_dbi_open(txn, "big", 0, &big));
	OK(mdb_drop(txn, big, 0));
	CHECK_RC(mdb_txn_commit(txn), MDB_CORRUPTED);
	mdb_env_close(env);
}

/* Damage that a read in a write txn finds ends the txn, as a failed write
 * does: mdb_cursor_list_dup on a duplicate sub-database whose record
 * counts more values than its tree holds. */
static void test_list_dup_damage_ends_txn(void)
{
	const char *path = t_path("s.mdb");
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = t_val("key");
	REQUIRE_OK(build_dups(path, 600));
	long long at = record_entries_in(path, "dup", "key");
	REQUIRE(at > 0);
	uint64_t e = 605;
	REQUIRE_OK(t_patch_file(path, at, &e, 8));
	env = open_file(path, 0);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "dup", 0, &dbi));
	MDB_cursor *mc;
	MDB_val v;
	const MDB_val *vals;
	mdb_size_t n;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &mc));
	OK(mdb_cursor_get(mc, &k, &v, MDB_SET));
	CHECK_RC(mdb_cursor_list_dup(mc, &vals, &n), MDB_CORRUPTED);
	mdb_cursor_close(mc);
	CHECK_RC(mdb_txn_commit(txn), MDB_BAD_TXN);
	mdb_env_close(env);
}

static int count_pages(void *ctx, const MDB_pageinfo *info)
{
	(void)info;
	++*(unsigned *)ctx;
	return 0;
}

static int stop_at_once(void *ctx, const MDB_pageinfo *info)
{
	(void)ctx;
	(void)info;
	return MDB_CORRUPTED;
}

/* mdb_page_walk the same way; the visitor's own answer, which stops the
 * walk, leaves the txn as it was. */
static void test_page_walk_damage_ends_txn(void)
{
	const char *path = t_path("s.mdb");
	unsigned char b[PS];
	REQUIRE_OK(build(path, "kv", 0, 3000));
	mdb_size_t pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	uint64_t last = meta_last_pg(path);
	REQUIRE(pg && last);
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	unsigned pages = 0;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	CHECK_RC(mdb_page_walk(txn, dbi, stop_at_once, NULL), MDB_CORRUPTED);
	OK(mdb_page_walk(txn, dbi, count_pages, &pages));
	CHECK(pages > 2);
	MDB_val k = t_val("after"), v = t_val("x");
	OK(mdb_put(txn, dbi, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	pg = find_page(path, "kv", 0, MDB_PAGE_BRANCH, 0);
	last = meta_last_pg(path);
	REQUIRE(pg && last);
	REQUIRE_OK(page_io(path, pg, b, 0));
	set_child(b, 1, last + 1000);
	REQUIRE_OK(page_io(path, pg, b, 1));
	env = open_file(path, 0);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	CHECK_RC(mdb_page_walk(txn, dbi, count_pages, &pages), MDB_PAGE_NOTFOUND);
	CHECK_RC(mdb_txn_commit(txn), MDB_BAD_TXN);
	mdb_env_close(env);
}

/* The control: the same writes on undamaged stores commit. */
static void test_undamaged_writes_commit(void)
{
	const char *path = t_path("s.mdb");
	REQUIRE_OK(build(path, "kv", 0, 3000));
	MDB_env *env = open_file(path, 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "kv", 0, &dbi));
	OK(insert_many(txn, dbi, 600));
	OK(delete_all(txn, dbi));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

#endif /* STOCK_LMDB */

int main(void)
{
#ifndef STOCK_LMDB
	RUN(test_pointer_below_upper);
	RUN(test_overlapping_nodes);
	RUN(test_node_past_page);
	RUN(test_branch_bounds);
	RUN(test_counted_branch_without_flag);
	RUN(test_leaf2_item_size);
	RUN(test_freelist_leaf);
	RUN(test_odd_upper);
	RUN(test_meta_txnid_wraps);
	RUN(test_meta_in_the_wrong_page);
	RUN(test_copy_last_page_past_map);
	RUN(test_drop_branch_pointer);
	RUN(test_duplicate_children);
	RUN(test_child_is_its_parent);
	RUN(test_children_out_of_range);
	RUN(test_leaf_in_two_trees);
	RUN(test_leaf_keys_out_of_order);
	RUN(test_entries_below_tree);
	RUN(test_entries_above_tree);
	RUN(test_dup_entries_below_key);
	RUN(test_counted_count_off);
	RUN(test_record_root_past_snapshot);
	RUN(test_child_past_snapshot);
	RUN(test_overflow_past_snapshot);
	RUN(test_child_read_past_snapshot);
	RUN(test_overflow_read_past_snapshot);
	RUN(test_rank_child_past_snapshot);
	RUN(test_drop_child_past_snapshot);
	RUN(test_child_is_reused_page);
	RUN(test_root_is_reused_page);
	RUN(test_run_over_reused_pages);
	RUN(test_list_dup_damage_ends_txn);
	RUN(test_page_walk_damage_ends_txn);
	RUN(test_undamaged_writes_commit);
#endif
	T_DONE();
}
