/* mdb_page_walk (a dlmdb addition) and the page accounting invariant of
 * lmdb-format.md §12.2: every page 2..last_pgno is reachable from exactly
 * one tree exactly once, or listed free exactly once in FREE_DBI. */
#include "t.h"

struct walk_acc {
	size_t branch, leaf, overflow;     /* the DB's own tree (pi_subtree 0) */
	size_t sub_pages;                  /* pages of dup sub-databases */
	size_t sub_branch, sub_leaf, sub_overflow;
	size_t leaf_entries;               /* items on own-tree leaves */
	size_t calls;
	int bad;                           /* structural complaints */
	unsigned char *seen;               /* page bitmap shared across walks */
	size_t last_pgno;
	const char *what;
	int stop_after;                    /* for the early-stop test */
};

static void mark(struct walk_acc *a, size_t pgno, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t p = pgno + i;
		if (p < 2 || p > a->last_pgno) {
			if (a->bad++ < 5)
				fprintf(stderr, "  %s: page %zu outside 2..%zu\n", a->what, p,
					a->last_pgno);
			continue;
		}
		if (a->seen[p]) {
			if (a->bad++ < 5)
				fprintf(stderr, "  %s: page %zu seen twice\n", a->what, p);
		}
		a->seen[p] = 1;
	}
}

static int walk_cb(void *ctx, const MDB_pageinfo *pi)
{
	struct walk_acc *a = ctx;
	a->calls++;
	if (a->stop_after && (int)a->calls == a->stop_after)
		return 4242;
	if (pi->pi_type & MDB_PAGE_SUBPAGE)
		return 0; /* lives inside a leaf page: no page number of its own */
	size_t n = pi->pi_type & MDB_PAGE_OVERFLOW ? pi->pi_pages : 1;
	if (a->seen)
		mark(a, (size_t)pi->pi_pgno, n);
	if (pi->pi_level == 0 && pi->pi_subtree == 0 && pi->pi_parent != (mdb_size_t)-1)
		a->bad++;
	if (pi->pi_subtree) {
		a->sub_pages += n;
		if (pi->pi_type & MDB_PAGE_OVERFLOW)
			a->sub_overflow += n;
		else if (pi->pi_type & MDB_PAGE_BRANCH)
			a->sub_branch++;
		else
			a->sub_leaf++;
		return 0;
	}
	if (pi->pi_type & MDB_PAGE_OVERFLOW)
		a->overflow += n;
	else if (pi->pi_type & MDB_PAGE_BRANCH)
		a->branch++;
	else if (pi->pi_type & MDB_PAGE_LEAF) {
		a->leaf++;
		a->leaf_entries += pi->pi_entries;
	} else
		a->bad++;
	return 0;
}

/* Data format version of an open env, from meta page 0 (offset 20). */
static unsigned data_version(MDB_env *env)
{
	const char *path = NULL;
	unsigned flags = 0;
	char file[1024];
	uint32_t v = 0;
	if (mdb_env_get_path(env, &path) || !path || mdb_env_get_flags(env, &flags))
		return 0;
	snprintf(file, sizeof file, "%s%s", path, flags & MDB_NOSUBDIR ? "" : "/data.mdb");
	int fd = open(file, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &v, 4, 20) != 4)
		v = 0;
	close(fd);
	return v;
}

/* Walk one DB, compare with mdb_stat.  Page counters of a DUPSORT DB cover
 * only its own tree in version 1, its tree plus its dup sub-databases in
 * version 2 (dlmdb-extensions.md N.7). */
static void walk_and_compare(MDB_txn *txn, MDB_dbi dbi, const char *name, unsigned char *seen,
			     size_t last_pgno, size_t *total_pages, unsigned version)
{
	struct walk_acc a;
	memset(&a, 0, sizeof a);
	a.seen = seen;
	a.last_pgno = last_pgno;
	a.what = name;
	int rc = mdb_page_walk(txn, dbi, walk_cb, &a);
	if (rc) {
		T_FAIL("walk %s: %d (%s)", name, rc, mdb_strerror(rc));
		return;
	}
	MDB_stat st;
	OK(mdb_stat(txn, dbi, &st));
	unsigned fl = 0;
	if (dbi != 0)
		mdb_dbi_flags(txn, dbi, &fl);
	size_t branch = a.branch, leaf = a.leaf, overflow = a.overflow;
	if ((fl & MDB_DUPSORT) && version == 2) {
		branch += a.sub_branch;
		leaf += a.sub_leaf;
		overflow += a.sub_overflow;
	}
	if (branch != st.ms_branch_pages || leaf != st.ms_leaf_pages ||
	    overflow != st.ms_overflow_pages)
		T_FAIL("walk %s (v%u): branch/leaf/overflow %zu/%zu/%zu, mdb_stat %zu/%zu/%zu",
		       name, version, branch, leaf, overflow, (size_t)st.ms_branch_pages,
		       (size_t)st.ms_leaf_pages, (size_t)st.ms_overflow_pages);
	if (!(fl & MDB_DUPSORT) && a.leaf_entries != st.ms_entries)
		T_FAIL("walk %s: %zu entries on leaves, ms_entries %zu", name, a.leaf_entries,
		       (size_t)st.ms_entries);
	if (a.bad)
		T_FAIL("walk %s: %d structural problems", name, a.bad);
	*total_pages += a.branch + a.leaf + a.overflow + a.sub_pages;
}

/* Check the accounting invariant for the newest snapshot of env.  `names`
 * lists the named DBs (NULL-terminated); maxdbs must allow them. */
static void check_accounting(MDB_env *env, const char *const *names, const char *label)
{
	MDB_txn *txn;
	MDB_envinfo info;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0) {
		T_FAIL("%s: txn_begin", label);
		return;
	}
	OK(mdb_env_info(env, &info));
	size_t last = (size_t)info.me_last_pgno;
	unsigned char *seen = calloc(last + 1, 1);
	size_t total = 0;
	unsigned version = data_version(env);
	walk_and_compare(txn, 0, "FREE_DBI", seen, last, &total, version);
	walk_and_compare(txn, 1, "MAIN_DBI", seen, last, &total, version);
	for (int i = 0; names && names[i]; i++) {
		MDB_dbi dbi;
		int rc = mdb_dbi_open(txn, names[i], 0, &dbi);
		if (rc) {
			T_FAIL("%s: open %s: %d", label, names[i], rc);
			continue;
		}
		walk_and_compare(txn, dbi, names[i], seen, last, &total, version);
	}
	/* Free pages from FREE_DBI records: data = [n, pgno...] */
	size_t nfree = 0, dup_free = 0;
	MDB_cursor *cur;
	if (mdb_cursor_open(txn, 0, &cur) == 0) {
		MDB_val k, v;
		int rc;
		while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
			uint64_t n, p;
			if (k.mv_size != 8 || v.mv_size < 8) {
				T_FAIL("%s: odd FREE_DBI record %zu/%zu", label, k.mv_size, v.mv_size);
				break;
			}
			memcpy(&n, v.mv_data, 8);
			if ((n + 1) * 8 > v.mv_size) {
				T_FAIL("%s: FREE_DBI count %llu does not fit %zu bytes", label,
				       (unsigned long long)n, v.mv_size);
				break;
			}
			uint64_t prev = UINT64_MAX;
			for (uint64_t i = 0; i < n; i++) {
				memcpy(&p, (char *)v.mv_data + 8 * (i + 1), 8);
				if (p >= prev)
					T_FAIL("%s: FREE_DBI list not descending", label);
				prev = p;
				if (p < 2 || p > last)
					T_FAIL("%s: free page %llu out of range", label,
					       (unsigned long long)p);
				else if (seen[p]++)
					dup_free++;
			}
			nfree += n;
		}
		if (rc != MDB_NOTFOUND)
			T_FAIL("%s: FREE_DBI walk: %d", label, rc);
		mdb_cursor_close(cur);
	} else {
		T_FAIL("%s: cannot open a cursor on FREE_DBI", label);
	}
	if (dup_free)
		T_FAIL("%s: %zu free pages are also in use or listed twice", label, dup_free);
	if (2 + total + nfree != last + 1)
		T_FAIL("%s: 2 + %zu tree pages + %zu free = %zu, last_pgno + 1 = %zu", label, total,
		       nfree, 2 + total + nfree, last + 1);
	free(seen);
	mdb_txn_abort(txn);
}

static const char *const churn_names[] = { "alpha", "b", "int", NULL };

static void churn(unsigned create_flags, const char *label)
{
	MDB_env *env = t_env_open(t_dir, create_flags, 32u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi d[3];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "alpha", MDB_CREATE, &d[0]));
	REQUIRE_OK(mdb_dbi_open(txn, "b", MDB_CREATE | MDB_REVERSEKEY, &d[1]));
	REQUIRE_OK(mdb_dbi_open(txn, "int", MDB_CREATE | MDB_INTEGERKEY, &d[2]));
	REQUIRE_OK(mdb_txn_commit(txn));
	check_accounting(env, churn_names, label);

	uint64_t s = 77;
	static unsigned char big[20000];
	memset(big, 'x', sizeof big);
	for (int round = 0; round < 40; round++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		int n = 50 + (int)(t_rand(&s) % 400);
		for (int i = 0; i < n; i++) {
			int which = (int)(t_rand(&s) % 4);
			unsigned id = (unsigned)(t_rand(&s) % 3000);
			char kb[32];
			snprintf(kb, sizeof kb, "key-%u-%s", id, id % 2 ? "odd" : "even!");
			MDB_val k = t_val(kb), v;
			MDB_dbi dbi = which == 3 ? 1 : d[which];
			if (which == 2)
				k = t_mem(&id, sizeof id);
			int r = (int)(t_rand(&s) % 10);
			if (r < 6) {
				size_t len = t_rand(&s) % 20 == 0 ? 2000 + t_rand(&s) % 15000
								  : t_rand(&s) % 200;
				v = t_mem(big, len);
				OK(mdb_put(txn, dbi, &k, &v, 0));
			} else {
				int rc = mdb_del(txn, dbi, &k, NULL);
				if (rc != MDB_NOTFOUND)
					OK(rc);
			}
		}
		if (round % 13 == 12)
			OK(mdb_drop(txn, d[1], 0));
		if (t_rand(&s) % 8 == 0)
			mdb_txn_abort(txn);
		else
			OK(mdb_txn_commit(txn));
		if (round % 5 == 4)
			check_accounting(env, churn_names, label);
	}
	check_accounting(env, churn_names, label);
	mdb_env_close(env);
}

static void test_walk_accounting_default(void) { churn(0, "v2"); }
static void test_walk_accounting_lmdb(void) { churn(MDB_FORMAT_LMDB, "lmdb"); }
static void test_walk_accounting_v1(void) { churn(MDB_FORMAT_DLMDB_V1, "dlmdb-v1"); }

static void test_walk_basics(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	/* Empty env: nothing to walk, invariant holds with 2 metas only. */
	check_accounting(env, NULL, "empty");
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	struct walk_acc a;
	memset(&a, 0, sizeof a);
	OK(mdb_page_walk(txn, 1, walk_cb, &a));
	CHECK_EQ(a.calls, 0);
	CHECK_RC(mdb_page_walk(txn, 99, walk_cb, &a), EINVAL);
	mdb_txn_abort(txn);

	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 2000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "%06d", i);
		MDB_val k = t_val(kb), v = t_val("some value bytes");
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	check_accounting(env, NULL, "filled");
	/* A non-zero callback result stops the walk and is returned. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	memset(&a, 0, sizeof a);
	a.stop_after = 3;
	CHECK_RC(mdb_page_walk(txn, 1, walk_cb, &a), 4242);
	CHECK_EQ(a.calls, 3);
	mdb_txn_abort(txn);
	/* Works inside a write txn on uncommitted pages too. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("zzz"), v = t_val("v");
	OK(mdb_put(txn, 1, &k, &v, 0));
	memset(&a, 0, sizeof a);
	OK(mdb_page_walk(txn, 1, walk_cb, &a));
	MDB_stat st;
	OK(mdb_stat(txn, 1, &st));
	CHECK_EQ(a.leaf, st.ms_leaf_pages);
	CHECK_EQ(a.leaf_entries, 2001);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static MDB_env *open_fixture(const char *name, unsigned flags)
{
	const char *src = t_fixture(name);
	if (!src)
		return NULL;
	const char *dst = t_path("fixture.mdb");
	if (t_copy_file(src, dst) != 0) {
		T_FAIL("copy %s", src);
		return NULL;
	}
	MDB_env *env = NULL;
	int rc = mdb_env_create(&env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(env, 16);
	if (rc == 0)
		rc = mdb_env_open(env, dst, flags | MDB_NOSUBDIR | MDB_RDONLY, 0644);
	if (rc) {
		T_FAIL("open %s: %d (%s)", name, rc, mdb_strerror(rc));
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

static const char *const plain_names[] = { "kv", "big", "intkey32", "intkey64", "revkey",
					   "binary", "empty", NULL };

static void test_walk_fixture_plain(void)
{
	MDB_env *env = open_fixture("plain.mdb", MDB_FORMAT_DLMDB_V1);
	if (env) {
		check_accounting(env, plain_names, "plain.mdb");
		mdb_env_close(env);
		unlink(t_path("fixture.mdb-lock"));
	}
	env = open_fixture("v2/plain.mdb", 0);
	if (env) {
		check_accounting(env, plain_names, "v2/plain.mdb");
		mdb_env_close(env);
		unlink(t_path("fixture.mdb-lock"));
	}
	env = open_fixture("plain.stock.mdb", 0);
	if (env) {
		check_accounting(env, plain_names, "plain.stock.mdb");
		mdb_env_close(env);
	}
}

static void test_walk_fixture_stock_dupsort(void)
{
	static const char *const names[] = { "accounts", "seq", "tags", NULL };
	MDB_env *env = open_fixture("stock.mdb", 0);
	if (env) {
		check_accounting(env, names, "stock.mdb");
		mdb_env_close(env);
	}
}

static void test_walk_fixture_dupsort_counted_prefix(void)
{
	static const char *const dnames[] = { "dups", "dupfixed", "intdup", "revdup", NULL };
	static const char *const cnames[] = { "counted", "counted_dups", "counted_int",
					      "counted_dupfixed", NULL };
	static const char *const pnames[] = { "prefix", "prefix_dups", "prefix_counted",
					      "prefix_counted_dups", NULL };
	static const struct { const char *file; unsigned flags; const char *const *names; } f[] = {
		{ "dupsort.mdb", MDB_FORMAT_DLMDB_V1, dnames },
		{ "v2/dupsort.mdb", 0, dnames },
		{ "dupsort.stock.mdb", 0, dnames },
		{ "counted.mdb", MDB_FORMAT_DLMDB_V1, cnames },
		{ "v2/counted.mdb", 0, cnames },
		{ "prefix.mdb", MDB_FORMAT_DLMDB_V1, pnames },
		{ "v2/prefix.mdb", 0, pnames },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		MDB_env *env = open_fixture(f[i].file, f[i].flags);
		if (!env)
			continue;
		check_accounting(env, f[i].names, f[i].file);
		mdb_env_close(env);
		unlink(t_path("fixture.mdb-lock"));
	}
}

/* DUPSORT churn: sub-pages and sub-databases appear and disappear. */
static void dupsort_churn_x(unsigned create_flags, unsigned extra);
static void dupsort_churn(unsigned create_flags) { dupsort_churn_x(create_flags, 0); }
static void dupsort_churn_x(unsigned create_flags, unsigned extra)
{
	static const char *const names[] = { "dups", "fixed", NULL };
	MDB_env *env = t_env_open(t_dir, create_flags, 32u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi d[2];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT | extra, &d[0]));
	REQUIRE_OK(mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED | extra,
				&d[1]));
	REQUIRE_OK(mdb_txn_commit(txn));
	uint64_t s = 5;
	for (int round = 0; round < 30 && t_failures == 0; round++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (int i = 0; i < 300; i++) {
			unsigned k = (unsigned)(t_rand(&s) % 40), x = (unsigned)(t_rand(&s) % 3000);
			if (k < 4)
				x = (unsigned)(t_rand(&s) % 3000); /* big sets */
			else
				x %= 1 + k;
			char kb[16], vb[32];
			snprintf(kb, sizeof kb, "k%02u", k);
			snprintf(vb, sizeof vb, "%08u", x);
			int w = (int)(t_rand(&s) % 2);
			MDB_val key = t_val(kb), val = t_val(vb);
			int rc = t_rand(&s) % 4 == 0 ? mdb_del(txn, d[w], &key, &val)
						      : mdb_put(txn, d[w], &key, &val, 0);
			if (rc && rc != MDB_NOTFOUND) {
				CHECK_RC(rc, 0);
				break;
			}
		}
		OK(mdb_txn_commit(txn));
		if (round % 5 == 4)
			check_accounting(env, names, "dupsort churn");
	}
	mdb_env_close(env);
}

static void test_walk_accounting_dupsort(void) { dupsort_churn(0); }
static void test_walk_accounting_dupsort_lmdb(void) { dupsort_churn(MDB_FORMAT_LMDB); }
static void test_walk_accounting_dupsort_v1(void) { dupsort_churn(MDB_FORMAT_DLMDB_V1); }
static void test_walk_accounting_prefix(void)
{
	dupsort_churn_x(0, MDB_PREFIX_COMPRESSION);
}
static void test_walk_accounting_prefix_counted(void)
{
	dupsort_churn_x(0, MDB_PREFIX_COMPRESSION | MDB_COUNTED);
}

int main(void)
{
	RUN(test_walk_basics);
	RUN(test_walk_accounting_default);
	RUN(test_walk_accounting_lmdb);
	RUN(test_walk_accounting_v1);
	RUN(test_walk_fixture_plain);
	RUN(test_walk_fixture_stock_dupsort);
	RUN(test_walk_fixture_dupsort_counted_prefix);
	RUN(test_walk_accounting_dupsort);
	RUN(test_walk_accounting_dupsort_lmdb);
	RUN(test_walk_accounting_dupsort_v1);
	RUN(test_walk_accounting_prefix);
	RUN(test_walk_accounting_prefix_counted);
	T_DONE();
}
