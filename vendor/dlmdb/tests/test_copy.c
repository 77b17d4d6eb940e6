/* Backups: mdb_env_copy / copy2 (plain and MDB_CP_COMPACT) / copyfd
 * (lmdb-api.md §4.2, lmdb-format.md §17). */
#include "t.h"

#include <sys/resource.h>

static const char *const names[] = { "one", "three", "ints", NULL };

static int fill_env(MDB_env *env)
{
	static unsigned char big[12000];
	memset(big, 'B', sizeof big);
	uint64_t s = 11;
	int rc = 0;
	for (int round = 0; round < 8 && rc == 0; round++) {
		MDB_txn *txn;
		MDB_dbi d[3];
		if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
			break;
		for (int i = 0; rc == 0 && i < 3; i++)
			rc = mdb_dbi_open(txn, names[i], MDB_CREATE | (i == 2 ? MDB_INTEGERKEY : 0),
					  &d[i]);
		for (int i = 0; rc == 0 && i < 500; i++) {
			unsigned id = (unsigned)(t_rand(&s) % 2000);
			char kb[32];
			snprintf(kb, sizeof kb, "key%u%s", id, id & 1 ? "x" : "");
			int w = (int)(t_rand(&s) % 4);
			MDB_dbi dbi = w == 3 ? 1 : d[w];
			MDB_val k = w == 2 ? t_mem(&id, 4) : t_val(kb);
			MDB_val v = t_mem(big, t_rand(&s) % 30 == 0 ? 5000 + id : id % 100);
			if (t_rand(&s) % 4 == 0) {
				rc = mdb_del(txn, dbi, &k, NULL);
				if (rc == MDB_NOTFOUND)
					rc = 0;
			} else {
				rc = mdb_put(txn, dbi, &k, &v, 0);
			}
		}
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	return rc;
}

/* Every DB of `b` equals the same DB of `a`, item by item. */
static void compare_envs(MDB_env *a, MDB_env *b)
{
	MDB_txn *ta, *tb;
	if (mdb_txn_begin(a, NULL, MDB_RDONLY, &ta) != 0) {
		T_FAIL("txn a");
		return;
	}
	if (mdb_txn_begin(b, NULL, MDB_RDONLY, &tb) != 0) {
		mdb_txn_abort(ta);
		T_FAIL("txn b");
		return;
	}
	for (int i = -1; i < 3; i++) {
		const char *name = i < 0 ? NULL : names[i];
		MDB_dbi da, db;
		MDB_cursor *ca, *cb;
		if (mdb_dbi_open(ta, name, 0, &da) || mdb_dbi_open(tb, name, 0, &db)) {
			T_FAIL("open %s", name ? name : "main");
			continue;
		}
		if (mdb_cursor_open(ta, da, &ca) || mdb_cursor_open(tb, db, &cb)) {
			T_FAIL("cursor %s", name ? name : "main");
			continue;
		}
		MDB_val ka, va, kb, vb;
		int ra, rb, n = 0;
		for (;;) {
			ra = mdb_cursor_get(ca, &ka, &va, MDB_NEXT);
			rb = mdb_cursor_get(cb, &kb, &vb, MDB_NEXT);
			if (ra || rb)
				break;
			n++;
			/* main DB values of named DBs are records with page numbers:
			 * compare keys only there */
			if (ka.mv_size != kb.mv_size || memcmp(ka.mv_data, kb.mv_data, ka.mv_size) ||
			    (name && (va.mv_size != vb.mv_size ||
				      memcmp(va.mv_data, vb.mv_data, va.mv_size)))) {
				T_FAIL("db %s: item %d differs", name ? name : "main", n);
				break;
			}
		}
		if (ra != rb)
			T_FAIL("db %s: lengths differ after %d items (%d vs %d)", name ? name : "main", n,
			       ra, rb);
		MDB_stat sa, sb;
		mdb_stat(ta, da, &sa);
		mdb_stat(tb, db, &sb);
		CHECK_EQ(sa.ms_entries, sb.ms_entries);
		mdb_cursor_close(ca);
		mdb_cursor_close(cb);
	}
	mdb_txn_abort(ta);
	mdb_txn_abort(tb);
}

static MDB_env *open_copy(const char *path, unsigned flags)
{
	return t_env_open(path, flags | MDB_RDONLY, 0, 8);
}

static void test_plain_copy(void)
{
	MDB_env *env = t_env_open(t_path(""), 0, 16u << 20, 8);
	REQUIRE(env);
	REQUIRE_OK(fill_env(env));
	REQUIRE(mkdir(t_path("copy"), 0755) == 0);
	OK(mdb_env_copy(env, t_path("copy")));
	CHECK_RC(mdb_env_copy(env, t_path("copy")), EEXIST);
	CHECK(t_file_size(t_path("copy/lock.mdb")) == -1); /* no lock file written */
	MDB_envinfo src;
	OK(mdb_env_info(env, &src));
	MDB_env *c = open_copy(t_path("copy"), 0);
	REQUIRE(c);
	MDB_envinfo ci;
	OK(mdb_env_info(c, &ci));
	CHECK_EQ(ci.me_last_pgno, src.me_last_pgno);
	CHECK_EQ(ci.me_last_txnid, src.me_last_txnid);
	compare_envs(env, c);
	mdb_env_close(c);
	mdb_env_close(env);
}

static void test_compact_copy(void)
{
	MDB_env *env = t_env_open(t_path(""), 0, 16u << 20, 8);
	REQUIRE(env);
	REQUIRE_OK(fill_env(env));
	REQUIRE(mkdir(t_path("compact"), 0755) == 0);
	OK(mdb_env_copy2(env, t_path("compact"), MDB_CP_COMPACT));
	MDB_envinfo src;
	OK(mdb_env_info(env, &src));
	MDB_env *c = open_copy(t_path("compact"), 0);
	REQUIRE(c);
	compare_envs(env, c);
	/* No free pages; ids restart at 1; pages 2..last all used by trees. */
	MDB_envinfo ci;
	OK(mdb_env_info(c, &ci));
	CHECK_EQ(ci.me_last_txnid, 1);
	CHECK(ci.me_last_pgno <= src.me_last_pgno);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(c, NULL, MDB_RDONLY, &txn));
	MDB_stat st;
	OK(mdb_stat(txn, 0, &st));
	CHECK_EQ(st.ms_entries, 0);
	size_t pages = 0;
	for (int i = -1; i < 3; i++) {
		MDB_dbi dbi;
		if (mdb_dbi_open(txn, i < 0 ? NULL : names[i], 0, &dbi) == 0 &&
		    mdb_stat(txn, dbi, &st) == 0)
			pages += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
	}
	CHECK_EQ(pages + 2, ci.me_last_pgno + 1);
	CHECK_EQ(t_file_size(t_path("compact/data.mdb")), (ci.me_last_pgno + 1) * 4096);
	mdb_txn_abort(txn);
	mdb_env_close(c);

	/* The compact copy is a normal writable environment. */
	c = t_env_open(t_path("compact"), 0, 0, 8);
	REQUIRE(c);
	OK(t_put1(c, 1, "after-copy", "1"));
	CHECK(t_get_is(c, 1, "after-copy", "1"));
	mdb_env_close(c);
	mdb_env_close(env);
}

static void test_copy_nosubdir_and_fd(void)
{
	const char *src = t_path("src.db");
	MDB_env *env = t_env_open(src, MDB_NOSUBDIR, 16u << 20, 8);
	REQUIRE(env);
	REQUIRE_OK(fill_env(env));
	/* NOSUBDIR: the target path is the file itself. */
	OK(mdb_env_copy(env, t_path("copy.db")));
	OK(mdb_env_copy2(env, t_path("compact.db"), MDB_CP_COMPACT));
	int fd = open(t_path("fd.db"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd >= 0);
	OK(mdb_env_copyfd(env, fd));
	close(fd);
	fd = open(t_path("fdc.db"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd >= 0);
	OK(mdb_env_copyfd2(env, fd, MDB_CP_COMPACT));
	close(fd);
	static const char *const outs[] = { "copy.db", "compact.db", "fd.db", "fdc.db" };
	for (int i = 0; i < 4; i++) {
		MDB_env *c = open_copy(t_path(outs[i]), MDB_NOSUBDIR);
		if (!c)
			continue;
		compare_envs(env, c);
		mdb_env_close(c);
	}
	/* A copy while a read txn of this thread is active: MDB_BAD_RSLOT
	 * (the copy needs its own reader slot). */
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_RC(mdb_env_copy(env, t_path("busy.db")), MDB_BAD_RSLOT);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

/* A write that fails part way through a compacting copy fails the copy,
 * whether it is the first batch of pages or a later one: a file size
 * limit lets the metas through and stops the pages at a given offset. */
static void test_compact_copy_write_error(void)
{
	MDB_env *env = t_env_open(t_path("werr.db"), MDB_NOSUBDIR, 64u << 20, 8);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	static unsigned char v[1000];
	for (int i = 0; i < 4000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "k%05d", i);
		memset(v, i, sizeof v);
		MDB_val k = t_val(kb), d = t_mem(v, sizeof v);
		REQUIRE_OK(mdb_put(txn, 1, &k, &d, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	MDB_stat st;
	REQUIRE_OK(mdb_env_stat(env, &st));
	struct rlimit old, lim;
	REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	const rlim_t stops[] = { 3 * (rlim_t)st.ms_psize, ((rlim_t)3 << 20) + 2 * st.ms_psize };
	for (int i = 0; i < 2; i++) {
		int fd = open(t_path("werr-copy.db"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		REQUIRE(fd >= 0);
		lim = old;
		lim.rlim_cur = stops[i];
		REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		int rc = mdb_env_copyfd2(env, fd, MDB_CP_COMPACT);
		REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
		CHECK_RC(rc, EFBIG);
		close(fd);
	}
	/* Without the limit the same copy succeeds and holds every item. */
	int fd = open(t_path("werr-copy.db"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	REQUIRE(fd >= 0);
	OK(mdb_env_copyfd2(env, fd, MDB_CP_COMPACT));
	close(fd);
	signal(SIGXFSZ, prev);
	MDB_env *c = open_copy(t_path("werr-copy.db"), MDB_NOSUBDIR);
	if (c) {
		MDB_stat cs;
		OK(mdb_env_stat(c, &cs));
		CHECK_EQ(cs.ms_entries, 4000);
		mdb_env_close(c);
	}
	mdb_env_close(env);
}

int main(void)
{
	RUN(test_plain_copy);
	RUN(test_compact_copy);
	RUN(test_copy_nosubdir_and_fd);
	RUN(test_compact_copy_write_error);
	T_DONE();
}
