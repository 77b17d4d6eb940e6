/* Environment API: create/open/close, setters and getters, stat/info, flags,
 * sync, error strings and version (lmdb-api.md §2.1, §2.6, §4.1, §4.2, §7, §8). */
#include "t.h"

#include <sys/mman.h>

static void test_open_dir_and_files(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	CHECK(t_file_size(t_path("data.mdb")) >= 0);
	CHECK(t_file_size(t_path("lock.mdb")) >= 0);
	/* A fresh environment holds just the two meta pages. */
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(t_file_size(t_path("data.mdb")), 2 * (long long)st.ms_psize);
	mdb_env_close(env);
	/* Reopening an existing environment works and sees the same thing. */
	env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	mdb_env_close(env);
}

static void test_open_nosubdir(void)
{
	const char *path = t_path("single.db");
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "k", "v"));
	mdb_env_close(env);
	CHECK(t_file_size(path) > 0);
	CHECK(t_file_size(t_path("single.db-lock")) >= 0);
	CHECK(t_file_size(t_path("data.mdb")) == -1);
	env = t_env_open(path, MDB_NOSUBDIR | MDB_RDONLY, 0, 0);
	REQUIRE(env);
	CHECK(t_get_is(env, 1, "k", "v"));
	mdb_env_close(env);
}

static void test_open_missing_dir(void)
{
	int rc;
	MDB_env *env = t_env_open_rc(t_path("no/such/dir"), 0, 0, 0, &rc);
	CHECK(env == NULL);
	CHECK_RC(rc, ENOENT);
	mdb_env_close(env);
}

static void test_rdonly_missing_file(void)
{
	int rc;
	MDB_env *env = t_env_open_rc(t_dir, MDB_RDONLY, 0, 0, &rc);
	CHECK(env == NULL);
	CHECK_RC(rc, ENOENT);
	env = t_env_open_rc(t_path("absent.db"), MDB_RDONLY | MDB_NOSUBDIR, 0, 0, &rc);
	CHECK(env == NULL);
	CHECK_RC(rc, ENOENT);
	/* Read-only never creates the data file. */
	CHECK(t_file_size(t_path("absent.db")) == -1);
	CHECK(t_file_size(t_path("data.mdb")) == -1);
}

static void test_rdonly_write_txn_eacces(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "a", "1"));
	mdb_env_close(env);

	env = t_env_open(t_dir, MDB_RDONLY, 0, 0);
	REQUIRE(env);
	MDB_txn *txn = (MDB_txn *)0x1;
	CHECK_RC(mdb_txn_begin(env, NULL, 0, &txn), EACCES);
	CHECK(txn == (MDB_txn *)0x1); /* *txn is only written on success */
	CHECK(t_get_is(env, 1, "a", "1"));
	/* Creating a named DB in a read-only txn is refused too. */
	mdb_env_close(env);

	env = NULL;
	OK(mdb_env_create(&env));
	OK(mdb_env_set_maxdbs(env, 2));
	OK(mdb_env_open(env, t_dir, MDB_RDONLY, 0644));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_dbi dbi;
	CHECK_RC(mdb_dbi_open(txn, "newdb", MDB_CREATE, &dbi), EACCES);
	mdb_txn_abort(txn);
	CHECK_RC(mdb_env_sync(env, 1), EACCES);
	mdb_env_close(env);
}

static void test_setters_before_open(void)
{
	MDB_env *env;
	unsigned int n = 0;
	REQUIRE_OK(mdb_env_create(&env));
	OK(mdb_env_get_maxreaders(env, &n));
	CHECK_EQ(n, 126);
	CHECK_RC(mdb_env_set_maxreaders(env, 0), EINVAL);
	OK(mdb_env_set_maxreaders(env, 50));
	OK(mdb_env_get_maxreaders(env, &n));
	CHECK_EQ(n, 50);
	OK(mdb_env_set_maxdbs(env, 3));
	OK(mdb_env_set_mapsize(env, 8u << 20));

	const char *path = (const char *)0x1;
	OK(mdb_env_get_path(env, &path));
	CHECK(path == NULL);
	int fd = 0;
	OK(mdb_env_get_fd(env, &fd));
	CHECK_EQ(fd, (unsigned long long)-1);

	REQUIRE_OK(mdb_env_open(env, t_dir, 0, 0644));
	OK(mdb_env_get_maxreaders(env, &n));
	CHECK_EQ(n, 50);
	/* maxreaders and maxdbs are fixed once open. */
	CHECK_RC(mdb_env_set_maxreaders(env, 10), EINVAL);
	CHECK_RC(mdb_env_set_maxdbs(env, 10), EINVAL);
	/* A second open of the same handle is refused. */
	CHECK_RC(mdb_env_open(env, t_dir, 0, 0644), EINVAL);

	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, 8u << 20);
	CHECK_EQ(info.me_maxreaders, 50);

	/* maxdbs 3 -> three named DBs fit, the fourth does not. */
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "a", MDB_CREATE, &dbi));
	OK(mdb_dbi_open(txn, "b", MDB_CREATE, &dbi));
	OK(mdb_dbi_open(txn, "c", MDB_CREATE, &dbi));
	CHECK_RC(mdb_dbi_open(txn, "d", MDB_CREATE, &dbi), MDB_DBS_FULL);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void test_getters(void)
{
	MDB_env *env = t_env_open(t_dir, MDB_NOSYNC, 0, 0);
	REQUIRE(env);
	const char *path = NULL;
	OK(mdb_env_get_path(env, &path));
	CHECK(path && strcmp(path, t_dir) == 0);
	int fd = -1;
	OK(mdb_env_get_fd(env, &fd));
	CHECK(fd >= 0);
	struct stat a, b;
	CHECK(fd >= 0 && fstat(fd, &a) == 0 && stat(t_path("data.mdb"), &b) == 0 &&
	      a.st_ino == b.st_ino);
	CHECK_EQ(mdb_env_get_maxkeysize(env), 511);

	unsigned int flags = 0;
	OK(mdb_env_get_flags(env, &flags));
	CHECK_EQ(flags, MDB_NOSYNC);
	OK(mdb_env_set_flags(env, MDB_NOMETASYNC | MDB_NOMEMINIT, 1));
	OK(mdb_env_get_flags(env, &flags));
	CHECK_EQ(flags, MDB_NOSYNC | MDB_NOMETASYNC | MDB_NOMEMINIT);
	OK(mdb_env_set_flags(env, MDB_NOSYNC | MDB_NOMEMINIT, 0));
	OK(mdb_env_get_flags(env, &flags));
	CHECK_EQ(flags, MDB_NOMETASYNC);
	OK(mdb_env_set_flags(env, MDB_MAPASYNC, 1));
	OK(mdb_env_get_flags(env, &flags));
	CHECK_EQ(flags, MDB_NOMETASYNC | MDB_MAPASYNC);
	/* Only the changeable flags may be toggled. */
	CHECK_RC(mdb_env_set_flags(env, MDB_RDONLY, 1), EINVAL);
	CHECK_RC(mdb_env_set_flags(env, MDB_NOSUBDIR, 0), EINVAL);
	CHECK_RC(mdb_env_set_flags(env, MDB_WRITEMAP, 1), EINVAL);
	OK(mdb_env_get_flags(env, &flags));
	CHECK_EQ(flags, MDB_NOMETASYNC | MDB_MAPASYNC);

	int ctx = 42;
	CHECK(mdb_env_get_userctx(env) == NULL);
	OK(mdb_env_set_userctx(env, &ctx));
	CHECK(mdb_env_get_userctx(env) == &ctx);
	CHECK_RC(mdb_env_set_userctx(NULL, &ctx), EINVAL);
	CHECK(mdb_env_get_userctx(NULL) == NULL);
	mdb_env_close(env);

	/* NOSUBDIR shows up in the flags too. */
	env = t_env_open(t_path("f.db"), MDB_NOSUBDIR, 0, 0);
	REQUIRE(env);
	OK(mdb_env_get_flags(env, &flags));
	CHECK_EQ(flags, MDB_NOSUBDIR);
	mdb_env_close(env);
}

static void test_unknown_env_flag(void)
{
	int rc;
	MDB_env *env = t_env_open_rc(t_dir, 0x8, 0, 0, &rc); /* 0x8 is not an env flag */
	CHECK(env == NULL);
	CHECK_RC(rc, EINVAL);
	mdb_env_close(env);
}

/*
 * MDB_FIXEDMAP as stock LMDB does it (checked against Debian's liblmdb
 * 0.9.24 and lmdb-master-sys): a store created with it records its map
 * address; reopening with the flag maps there, or fails with EBUSY while
 * that range is taken; without the flag the address is ignored; a store
 * created without it opens with the flag anywhere.
 */
static int fixedmap_open(const char *dir, unsigned flags, MDB_env **out)
{
	int rc = mdb_env_create(out);
	if (rc)
		return rc;
	rc = mdb_env_open(*out, dir, flags, 0664);
	if (rc) {
		mdb_env_close(*out);
		*out = NULL;
	}
	return rc;
}

/* The main DB's handle, opened once per env as stock LMDB requires. */
static MDB_dbi fixedmap_main(MDB_env *env)
{
	MDB_txn *txn;
	MDB_dbi dbi = 1;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) == 0) {
		if (mdb_dbi_open(txn, NULL, 0, &dbi))
			T_FAIL("cannot open the main DB");
		mdb_txn_commit(txn);
	}
	return dbi;
}

static void test_fixedmap(void)
{
	MDB_env *env;
	MDB_envinfo info;
	REQUIRE_OK(fixedmap_open(t_dir, MDB_FIXEDMAP, &env));
	OK(mdb_env_info(env, &info));
	void *addr = info.me_mapaddr;
	size_t size = info.me_mapsize;
	CHECK(addr != NULL);
	unsigned fl = 0;
	OK(mdb_env_get_flags(env, &fl));
	CHECK(fl & MDB_FIXEDMAP);
#ifndef STOCK_LMDB
	void *map;
	size_t msize;
	OK(mdb_env_get_map(env, &map, &msize));
	CHECK(map == addr);
#endif
	OK(t_put1(env, fixedmap_main(env), "k", "v"));
	mdb_env_close(env);

	/* the address is taken: EBUSY with the flag, fine without */
	void *blk = mmap(addr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
	REQUIRE(blk == addr);
	CHECK_RC(fixedmap_open(t_dir, MDB_FIXEDMAP, &env), EBUSY);
	CHECK_RC(fixedmap_open(t_dir, MDB_FIXEDMAP | MDB_RDONLY, &env), EBUSY);
	REQUIRE_OK(fixedmap_open(t_dir, 0, &env));
	CHECK(t_get_is(env, fixedmap_main(env), "k", "v"));
	OK(mdb_env_info(env, &info));
	CHECK(info.me_mapaddr == addr);	/* what the file records */
	mdb_env_close(env);
	munmap(blk, size);

	/* free again: mapped at the recorded address */
	REQUIRE_OK(fixedmap_open(t_dir, MDB_FIXEDMAP, &env));
	CHECK(t_get_is(env, fixedmap_main(env), "k", "v"));
	OK(t_put1(env, fixedmap_main(env), "k2", "v2"));
#ifndef STOCK_LMDB
	OK(mdb_env_get_map(env, &map, &msize));
	CHECK(map == addr);
#endif
	mdb_env_close(env);

	/* a store created without the flag records no address */
	const char *other = t_path("plain");
	mkdir(other, 0755);
	REQUIRE_OK(fixedmap_open(other, 0, &env));
	mdb_env_close(env);
	REQUIRE_OK(fixedmap_open(other, MDB_FIXEDMAP, &env));
	OK(mdb_env_info(env, &info));
	CHECK(info.me_mapaddr == NULL);
	OK(t_put1(env, fixedmap_main(env), "a", "b"));
	mdb_env_close(env);
}

static void test_stat_and_info(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_envinfo info;
	MDB_stat st;
	OK(mdb_env_info(env, &info));
	CHECK(info.me_mapaddr == NULL);
	CHECK_EQ(info.me_mapsize, 1048576);
	CHECK_EQ(info.me_last_pgno, 1);
	CHECK_EQ(info.me_last_txnid, 0);
	CHECK_EQ(info.me_maxreaders, 126);
	CHECK_EQ(info.me_numreaders, 0);
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_psize, (unsigned)sysconf(_SC_PAGESIZE));
	CHECK_EQ(st.ms_depth, 0);
	CHECK_EQ(st.ms_entries, 0);
	CHECK_EQ(st.ms_leaf_pages + st.ms_branch_pages + st.ms_overflow_pages, 0);

	OK(t_put1(env, 1, "hello", "world"));
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_last_txnid, 1);
	CHECK_EQ(info.me_last_pgno, 2); /* one leaf page after the two metas */
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_depth, 1);
	CHECK_EQ(st.ms_leaf_pages, 1);
	CHECK_EQ(st.ms_entries, 1);
	/* The writer and the read in t_get_is each used a reader slot? Only the
	 * read: write transactions do not take reader slots. */
	CHECK(t_get_is(env, 1, "hello", "world"));
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_numreaders, 1);

	/* Empty write transactions commit without consuming a txn id. */
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_txn_commit(txn));
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_last_txnid, 1);

	for (int i = 0; i < 5; i++) {
		char k[16];
		snprintf(k, sizeof k, "key%d", i);
		OK(t_put1(env, 1, k, "v"));
	}
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_last_txnid, 6);
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 6);
	mdb_env_close(env);

	/* The numbers survive a reopen. */
	env = t_env_open(t_dir, MDB_RDONLY, 0, 0);
	REQUIRE(env);
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_last_txnid, 6);
	OK(mdb_env_stat(env, &st));
	CHECK_EQ(st.ms_entries, 6);
	mdb_env_close(env);
}

static void test_mapsize_rules(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 4u << 20, 0);
	REQUIRE(env);
	MDB_envinfo info;
	OK(t_put1(env, 1, "a", "b"));
	mdb_env_close(env);
	/* The map size is persisted and adopted when none is set. */
	env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, 4u << 20);
	/* It can grow while open (no write txn active)... */
	OK(mdb_env_set_mapsize(env, 16u << 20));
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, 16u << 20);
	/* ...but not while this process has a write transaction. */
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_RC(mdb_env_set_mapsize(env, 32u << 20), EINVAL);
	mdb_txn_abort(txn);
	OK(t_put1(env, 1, "c", "d"));
	mdb_env_close(env);
	env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, 16u << 20);
	CHECK(t_get_is(env, 1, "a", "b"));
	CHECK(t_get_is(env, 1, "c", "d"));
	/* Too small a size is silently raised to the used size. */
	OK(mdb_env_set_mapsize(env, 4096));
	OK(mdb_env_info(env, &info));
	CHECK(info.me_mapsize >= (info.me_last_pgno + 1) * 4096);
	CHECK(t_get_is(env, 1, "c", "d"));
	/* 0 adopts the size stored in the file. */
	OK(mdb_env_set_mapsize(env, 0));
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, 16u << 20);
	mdb_env_close(env);
}

/*
 * A map size that is not a whole number of pages stays as set, as in stock
 * LMDB: reported, recorded in the meta page (a later open without a size
 * adopts it), and only the whole pages below it are used, the last of them
 * never (MDB_MAP_FULL first).  With MDB_WRITEMAP the file is extended to
 * exactly that size.
 */
static void mapsize_not_whole_pages(unsigned flags)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	size_t size = 64 * ps + ps / 2 + 1;
	MDB_env *env = t_env_open(t_dir, flags, size, 0);
	REQUIRE(env);
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, size);
	char val[1000];
	memset(val, 'v', sizeof val);
	int rc = 0, n;
	for (n = 0; n < 1000 && !rc; n++) {
		MDB_txn *txn;
		char k[16];
		snprintf(k, sizeof k, "k%05d", n);
		MDB_val key = t_val(k), data = { sizeof val, val };
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		rc = mdb_put(txn, 1, &key, &data, 0);
		if (rc)
			mdb_txn_abort(txn);
		else
			rc = mdb_txn_commit(txn);
	}
	CHECK_RC(rc, MDB_MAP_FULL);
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, size);
	CHECK(info.me_last_pgno + 2 <= size / ps);
	CHECK(info.me_last_pgno + 8 >= size / ps);
	mdb_env_close(env);
	if (flags & MDB_WRITEMAP)
		CHECK_EQ(t_file_size(t_path("data.mdb")), (long long)size);
	env = t_env_open(t_dir, flags, 0, 0);
	REQUIRE(env);
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, size);
	mdb_env_close(env);
}

static void test_mapsize_not_whole_pages(void)
{
	mapsize_not_whole_pages(0);
}

static void test_mapsize_not_whole_pages_writemap(void)
{
	mapsize_not_whole_pages(MDB_WRITEMAP);
}

/* Write, close, reopen with the same flags, read back, and write again. */
static void flag_cycle(unsigned flags)
{
	int nosub = (flags & MDB_NOSUBDIR) != 0;
	const char *path = nosub ? t_path("flag.db") : t_dir;
	char k[32], v[64];
	MDB_env *env = t_env_open(path, flags, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "named", MDB_CREATE, &dbi));
	for (int i = 0; i < 300; i++) {
		snprintf(k, sizeof k, "key-%05d", i);
		snprintf(v, sizeof v, "value-%d-%x", i, i * 7919);
		MDB_val key = t_val(k), data = t_val(v);
		OK(mdb_put(txn, dbi, &key, &data, 0));
		OK(mdb_put(txn, 1, &key, &data, 0));
	}
	OK(mdb_txn_commit(txn));
	OK(mdb_env_sync(env, 1));
	OK(mdb_env_sync(env, 0));
	mdb_env_close(env);

	if (flags & MDB_NOLOCK) {
		CHECK(t_file_size(t_path("lock.mdb")) == -1);
		CHECK(t_file_size(t_path("flag.db-lock")) == -1);
	}

	env = t_env_open(path, flags, 0, 2);
	REQUIRE(env);
	unsigned got = 0;
	OK(mdb_env_get_flags(env, &got));
	CHECK_EQ(got, flags);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "named", 0, &dbi));
	for (int i = 0; i < 300; i++) {
		MDB_val data;
		snprintf(k, sizeof k, "key-%05d", i);
		snprintf(v, sizeof v, "value-%d-%x", i, i * 7919);
		MDB_val key = t_val(k);
		OK(mdb_get(txn, dbi, &key, &data));
		CHECK_STR(data, v);
		OK(mdb_get(txn, 1, &key, &data));
		CHECK_STR(data, v);
	}
	OK(mdb_txn_commit(txn)); /* read-only commit keeps the handle */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val key = t_val("key-00007");
	OK(mdb_del(txn, dbi, &key, NULL));
	OK(mdb_txn_commit(txn));
	OK(mdb_env_sync(env, 1));
	mdb_env_close(env);

	env = t_env_open(path, flags | MDB_RDONLY, 0, 2);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "named", 0, &dbi));
	MDB_stat st;
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, 299);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_flag_none(void) { flag_cycle(0); }
static void test_flag_nosubdir(void) { flag_cycle(MDB_NOSUBDIR); }
static void test_flag_nolock(void) { flag_cycle(MDB_NOLOCK); }
static void test_flag_nolock_nosubdir(void) { flag_cycle(MDB_NOLOCK | MDB_NOSUBDIR); }
static void test_flag_notls(void) { flag_cycle(MDB_NOTLS); }
static void test_flag_writemap(void) { flag_cycle(MDB_WRITEMAP); }
static void test_flag_writemap_mapasync(void) { flag_cycle(MDB_WRITEMAP | MDB_MAPASYNC); }
static void test_flag_mapasync(void) { flag_cycle(MDB_MAPASYNC); }
static void test_flag_nosync(void) { flag_cycle(MDB_NOSYNC); }
static void test_flag_nometasync(void) { flag_cycle(MDB_NOMETASYNC); }
static void test_flag_nordahead(void) { flag_cycle(MDB_NORDAHEAD); }
static void test_flag_nomeminit(void) { flag_cycle(MDB_NOMEMINIT); }
static void test_flag_many(void)
{
	flag_cycle(MDB_NOSUBDIR | MDB_NOTLS | MDB_NOSYNC | MDB_NORDAHEAD | MDB_NOMEMINIT);
}

static void test_writemap_extends_file(void)
{
	MDB_env *env = t_env_open(t_dir, MDB_WRITEMAP, 2u << 20, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "a", "b"));
	/* lmdb-api.md §8: with WRITEMAP the file is extended to the map size. */
	CHECK_EQ(t_file_size(t_path("data.mdb")), 2u << 20);
	mdb_env_close(env);
}

static void test_nomeminit_reserve(void)
{
	/* NOMEMINIT is only about not zeroing buffers; RESERVE + fill must work. */
	MDB_env *env = t_env_open(t_dir, MDB_NOMEMINIT, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val key = t_val("r"), data = { 3000, NULL };
	REQUIRE_OK(mdb_put(txn, 1, &key, &data, MDB_RESERVE));
	REQUIRE(data.mv_data != NULL);
	memset(data.mv_data, 'x', 3000);
	OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_get(txn, 1, &key, &data));
	CHECK_EQ(data.mv_size, 3000);
	CHECK(data.mv_size == 3000 && ((char *)data.mv_data)[0] == 'x' &&
	      ((char *)data.mv_data)[2999] == 'x');
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_strerror(void)
{
	static const struct { int code; const char *name; } codes[] = {
		{ MDB_KEYEXIST, "MDB_KEYEXIST" },
		{ MDB_NOTFOUND, "MDB_NOTFOUND" },
		{ MDB_PAGE_NOTFOUND, "MDB_PAGE_NOTFOUND" },
		{ MDB_CORRUPTED, "MDB_CORRUPTED" },
		{ MDB_PANIC, "MDB_PANIC" },
		{ MDB_VERSION_MISMATCH, "MDB_VERSION_MISMATCH" },
		{ MDB_INVALID, "MDB_INVALID" },
		{ MDB_MAP_FULL, "MDB_MAP_FULL" },
		{ MDB_DBS_FULL, "MDB_DBS_FULL" },
		{ MDB_READERS_FULL, "MDB_READERS_FULL" },
		{ MDB_TLS_FULL, "MDB_TLS_FULL" },
		{ MDB_TXN_FULL, "MDB_TXN_FULL" },
		{ MDB_CURSOR_FULL, "MDB_CURSOR_FULL" },
		{ MDB_PAGE_FULL, "MDB_PAGE_FULL" },
		{ MDB_MAP_RESIZED, "MDB_MAP_RESIZED" },
		{ MDB_INCOMPATIBLE, "MDB_INCOMPATIBLE" },
		{ MDB_BAD_RSLOT, "MDB_BAD_RSLOT" },
		{ MDB_BAD_TXN, "MDB_BAD_TXN" },
		{ MDB_BAD_VALSIZE, "MDB_BAD_VALSIZE" },
		{ MDB_BAD_DBI, "MDB_BAD_DBI" },
#ifdef MDB_PROBLEM
		{ MDB_PROBLEM, "MDB_PROBLEM" },
#endif
#ifdef MDB_DBIS_BUSY
		{ MDB_DBIS_BUSY, "MDB_DBIS_BUSY" },
#endif
	};
	CHECK_EQ(MDB_KEYEXIST, -30799);
	CHECK_EQ(MDB_BAD_DBI, -30780);
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		const char *s = mdb_strerror(codes[i].code);
		size_t n = strlen(codes[i].name);
		if (!s || strncmp(s, codes[i].name, n) != 0 || strncmp(s + n, ": ", 2) != 0 ||
		    strlen(s) <= n + 2)
			T_FAIL("mdb_strerror(%d) = \"%s\", want \"%s: ...\"", codes[i].code,
			       s ? s : "(null)", codes[i].name);
	}
	const char *ok = mdb_strerror(0);
	CHECK(ok != NULL && *ok);
	CHECK(strcmp(mdb_strerror(ENOENT), strerror(ENOENT)) == 0);
	CHECK(strcmp(mdb_strerror(EACCES), strerror(EACCES)) == 0);
	CHECK(strcmp(mdb_strerror(EINVAL), strerror(EINVAL)) == 0);
	/* Out-of-range negative codes all get one fixed message (0.9.25+ and
	 * the 1.0 line; Debian's 0.9.24 passes them to strerror()).  Copy the
	 * texts: strerror() may reuse its buffer. */
	char bad1[256], bad2[256], bad3[256];
	snprintf(bad1, sizeof bad1, "%s", mdb_strerror(-1));
	snprintf(bad2, sizeof bad2, "%s", mdb_strerror(-30800));
	snprintf(bad3, sizeof bad3, "%s", mdb_strerror(-40000));
	CHECK(bad1[0] && bad2[0] && bad3[0]);
	CHECK(strstr(bad1, "MDB_NOTFOUND") == NULL);
#ifndef STOCK_LMDB
	CHECK(strcmp(bad1, bad2) == 0);
	CHECK(strcmp(bad1, bad3) == 0);
#endif
}

static void test_version(void)
{
	int major = -1, minor = -1, patch = -1;
	char *s = mdb_version(&major, &minor, &patch);
	CHECK(s != NULL);
	CHECK(s && strcmp(s, MDB_VERSION_STRING) == 0);
	CHECK_EQ(major, MDB_VERSION_MAJOR);
	CHECK_EQ(minor, MDB_VERSION_MINOR);
	CHECK_EQ(patch, MDB_VERSION_PATCH);
	CHECK(mdb_version(NULL, NULL, NULL) == s);
	CHECK_EQ(MDB_VERSION_FULL,
		 MDB_VERINT(MDB_VERSION_MAJOR, MDB_VERSION_MINOR, MDB_VERSION_PATCH));
	CHECK_EQ(MDB_VERINT(1, 2, 3), (1u << 24) | (2u << 16) | 3u);
}

static void test_env_close_null_and_unopened(void)
{
	mdb_env_close(NULL);
	MDB_env *env;
	REQUIRE_OK(mdb_env_create(&env));
	mdb_env_close(env); /* never opened */
	/* A failed open still needs (and allows) mdb_env_close. */
	REQUIRE_OK(mdb_env_create(&env));
	CHECK_ERR(mdb_env_open(env, t_path("missing-dir/x"), 0, 0644));
	mdb_env_close(env);
}

struct lines {
	char buf[4096];
	int n;
};

static int collect(const char *msg, void *ctx)
{
	struct lines *l = ctx;
	size_t used = strlen(l->buf);
	snprintf(l->buf + used, sizeof l->buf - used, "%s", msg);
	l->n++;
	return 0;
}

static void test_reader_list(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	CHECK_EQ(mdb_reader_list(NULL, NULL, NULL), (unsigned long long)-1);
	int dead = -1;
	OK(mdb_reader_check(env, &dead));
	CHECK_EQ(dead, 0);
	/* Format (lmdb-api.md §4.7). No reader yet. */
	struct lines l;
	memset(&l, 0, sizeof l);
	mdb_reader_list(env, collect, &l);
	CHECK(strcmp(l.buf, "(no active readers)\n") == 0);
	/* An active reader: header + one line with pid, thread and txnid. */
	OK(t_put1(env, 1, "a", "b"));
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	memset(&l, 0, sizeof l);
	mdb_reader_list(env, collect, &l);
	char want[128];
	snprintf(want, sizeof want, "    pid     thread     txnid\n%10d ", (int)getpid());
	if (strncmp(l.buf, want, strlen(want)) != 0)
		T_FAIL("reader list:\n%s", l.buf);
	size_t len = strlen(l.buf);
	CHECK(len > 3 && strcmp(l.buf + len - 3, " 1\n") == 0);
	mdb_txn_abort(rd);
	/* The slot stays with the thread, now without a txn: "-". */
	memset(&l, 0, sizeof l);
	mdb_reader_list(env, collect, &l);
	len = strlen(l.buf);
	CHECK(len > 3 && strcmp(l.buf + len - 3, " -\n") == 0);
	mdb_env_close(env);

	/* No lock file at all. */
	env = t_env_open(t_dir, MDB_NOLOCK, 0, 0);
	REQUIRE(env);
	memset(&l, 0, sizeof l);
	mdb_reader_list(env, collect, &l);
	CHECK(strcmp(l.buf, "(no reader locks)\n") == 0);
	dead = -1;
	OK(mdb_reader_check(env, &dead));
	CHECK_EQ(dead, 0);
	mdb_env_close(env);
}

#ifdef MDB_INMEMORY
/* DLMDB v2 in-memory environments (dlmdb-extensions.md N.5). */
static void test_inmemory(void)
{
	MDB_env *env;
	REQUIRE_OK(mdb_env_create(&env));
	CHECK_RC(mdb_env_open(env, NULL, MDB_INMEMORY | MDB_RDONLY, 0644), EINVAL);
	mdb_env_close(env);

	REQUIRE_OK(mdb_env_create(&env));
	OK(mdb_env_set_maxdbs(env, 2));
	OK(mdb_env_set_mapsize(env, 8u << 20));
	/* the path is ignored: nothing may appear in the directory */
	REQUIRE_OK(mdb_env_open(env, t_path("ignored"), MDB_INMEMORY, 0644));
	unsigned fl = 0;
	OK(mdb_env_get_flags(env, &fl));
	CHECK((fl & (MDB_INMEMORY | MDB_WRITEMAP | MDB_NOSYNC | MDB_NOMETASYNC)) ==
	      (MDB_INMEMORY | MDB_WRITEMAP | MDB_NOSYNC | MDB_NOMETASYNC));
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "named", MDB_CREATE, &dbi));
	static char big[20000];
	memset(big, 'm', sizeof big);
	for (int i = 0; i < 2000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%05d", i);
		MDB_val k = t_val(kb), v = t_mem(big, i % 100 == 0 ? sizeof big : 40);
		OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	/* a snapshot stays stable across a later commit */
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("k00001"), v;
	OK(mdb_del(txn, dbi, &k, NULL));
	OK(mdb_txn_commit(txn));
	OK(mdb_get(rd, dbi, &k, &v));
	CHECK_EQ(v.mv_size, 40);
	MDB_stat st;
	OK(mdb_stat(rd, dbi, &st));
	CHECK_EQ(st.ms_entries, 2000);
	mdb_txn_abort(rd);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_RC(mdb_get(rd, dbi, &k, &v), MDB_NOTFOUND);
	k = t_val("k00100");
	OK(mdb_get(rd, dbi, &k, &v));
	CHECK_EQ(v.mv_size, sizeof big);
	mdb_txn_abort(rd);
	mdb_env_close(env);
	CHECK(t_file_size(t_path("ignored")) == -1);
	CHECK(t_file_size(t_path("ignored/data.mdb")) == -1);
	CHECK(t_file_size(t_path("ignored-lock")) == -1);

	/* data is gone after close */
	REQUIRE_OK(mdb_env_create(&env));
	OK(mdb_env_set_maxdbs(env, 2));
	REQUIRE_OK(mdb_env_open(env, NULL, MDB_INMEMORY, 0644));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_RC(mdb_dbi_open(rd, "named", 0, &dbi), MDB_NOTFOUND);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}
#endif

int main(void)
{
	RUN(test_open_dir_and_files);
	RUN(test_open_nosubdir);
	RUN(test_open_missing_dir);
	RUN(test_rdonly_missing_file);
	RUN(test_rdonly_write_txn_eacces);
	RUN(test_setters_before_open);
	RUN(test_getters);
	RUN(test_unknown_env_flag);
	RUN(test_fixedmap);
	RUN(test_stat_and_info);
	RUN(test_mapsize_rules);
	RUN(test_mapsize_not_whole_pages);
	RUN(test_mapsize_not_whole_pages_writemap);
	RUN(test_flag_none);
	RUN(test_flag_nosubdir);
	RUN(test_flag_nolock);
	RUN(test_flag_nolock_nosubdir);
	RUN(test_flag_notls);
	RUN(test_flag_writemap);
	RUN(test_flag_writemap_mapasync);
	RUN(test_flag_mapasync);
	RUN(test_flag_nosync);
	RUN(test_flag_nometasync);
	RUN(test_flag_nordahead);
	RUN(test_flag_nomeminit);
	RUN(test_flag_many);
	RUN(test_writemap_extends_file);
	RUN(test_nomeminit_reserve);
	RUN(test_strerror);
	RUN(test_version);
	RUN(test_env_close_null_and_unopened);
	RUN(test_reader_list);
#ifdef MDB_INMEMORY
	RUN(test_inmemory);
#endif
	T_DONE();
}
