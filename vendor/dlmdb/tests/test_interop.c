/* Interoperability with the stock LMDB 0.9.24 command-line tools (Debian
 * lmdb-utils: mdb_dump, mdb_load, mdb_stat): stores created with
 * MDB_FORMAT_LMDB must be readable and writable by stock LMDB, and stock
 * files by us.  Default (DLMDB v2) stores must be refused by stock tools
 * rather than misread.  Skipped when the tools are not installed. */
#include <stdarg.h>

#include "t.h"
#include "dump.h"

static int have_tools(void)
{
	if (access("/usr/bin/mdb_dump", X_OK) || access("/usr/bin/mdb_load", X_OK) ||
	    access("/usr/bin/mdb_stat", X_OK)) {
		fprintf(stderr, "  SKIP: stock mdb_dump/mdb_load/mdb_stat not installed\n");
		return 0;
	}
	return 1;
}

/* Run a shell command; returns its exit status (or -1). */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	int st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Fill a store with a bit of everything; `flags` are the env flags used to
 * create it. */
static T_UNUSED int build_store(const char *path, unsigned flags)
{
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR | flags, 8u << 20, 8);
	if (!env)
		return -1;
	static unsigned char big[30000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7);
	uint64_t s = 3;
	int rc = 0;
	for (int round = 0; round < 6 && rc == 0; round++) {
		MDB_txn *txn;
		MDB_dbi odd, even, intk, rev;
		rc = mdb_txn_begin(env, NULL, 0, &txn);
		if (rc)
			break;
		rc = mdb_dbi_open(txn, "odd", MDB_CREATE, &odd);
		if (!rc)
			rc = mdb_dbi_open(txn, "even", MDB_CREATE, &even);
		if (!rc)
			rc = mdb_dbi_open(txn, "intk", MDB_CREATE | MDB_INTEGERKEY, &intk);
		if (!rc)
			rc = mdb_dbi_open(txn, "rev", MDB_CREATE | MDB_REVERSEKEY, &rev);
		MDB_dbi dups, fixed;
		if (!rc)
			rc = mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dups);
		if (!rc)
			rc = mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &fixed);
		/* duplicates: a few keys with big sets (sub-databases), many with
		 * small ones (sub-pages), odd and even lengths */
		for (int i = 0; rc == 0 && i < 600; i++) {
			unsigned kid = (unsigned)(t_rand(&s) % 60), item = (unsigned)(t_rand(&s) % 2000);
			if (kid >= 3)
				item %= 1 + kid % 9;
			char kb[32], vb[48];
			snprintf(kb, sizeof kb, "dk%u%s", kid, kid % 2 ? "x" : "");
			int vl = snprintf(vb, sizeof vb, "item-%05u%s", item, item % 3 ? "" : "-odd");
			MDB_val k = t_val(kb), v = t_mem(vb, (size_t)vl);
			if (t_rand(&s) % 6 == 0) {
				rc = mdb_del(txn, dups, &k, &v);
				if (rc == MDB_NOTFOUND)
					rc = 0;
			} else {
				rc = mdb_put(txn, dups, &k, &v, 0);
			}
			uint64_t fx = item * 2654435761ull;
			MDB_val fv = t_mem(&fx, 8);
			k = t_val(kb);
			if (rc == 0)
				rc = mdb_put(txn, fixed, &k, &fv, 0);
		}
		for (int i = 0; rc == 0 && i < 400; i++) {
			unsigned id = (unsigned)(t_rand(&s) % 1500);
			char kb[64];
			/* odd and even key lengths, 1..40 bytes */
			int kl = snprintf(kb, sizeof kb, "%u", id);
			int pad = (int)(id % 37);
			memset(kb + kl, 'k', (size_t)pad);
			kl += pad;
			size_t vl = t_rand(&s) % 25 == 0 ? 2000 + t_rand(&s) % 25000 : t_rand(&s) % 90;
			MDB_val k = t_mem(kb, (size_t)kl), v = t_mem(big + id % 100, vl);
			MDB_dbi dbi = (MDB_dbi[]){ odd, even, rev, 1 }[i % 4];
			if (t_rand(&s) % 5 == 0) {
				rc = mdb_del(txn, dbi, &k, NULL);
				if (rc == MDB_NOTFOUND)
					rc = 0;
			} else {
				rc = mdb_put(txn, dbi, &k, &v, 0);
			}
			if (rc == 0) {
				uint64_t ik = id * 1000003ull;
				k = t_mem(&ik, 8);
				rc = mdb_put(txn, intk, &k, &v, 0);
			}
		}
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return rc;
}

static T_UNUSED MDB_env *open_ro(const char *path, unsigned flags)
{
	MDB_env *env = NULL;
	int rc = mdb_env_create(&env);
	if (rc == 0)
		rc = mdb_env_set_maxdbs(env, 8);
	if (rc == 0)
		rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | flags, 0644);
	if (rc) {
		T_FAIL("open %s: %d (%s)", path, rc, mdb_strerror(rc));
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

static void compare_stat_tool_n(MDB_env *env, const char *statfile, int want_blocks);

/* The stores made by build_store: freelist, main and 6 named DBs. */
static T_UNUSED void compare_stat_tool(MDB_env *env, const char *statfile)
{
	compare_stat_tool_n(env, statfile, 8); /* freelist, main, 6 named */
}

/* Compare `mdb_stat -e -f -a` output with our own numbers. */
static void compare_stat_tool_n(MDB_env *env, const char *statfile, int want_blocks)
{
	FILE *f = fopen(statfile, "r");
	if (!f) {
		T_FAIL("no %s", statfile);
		return;
	}
	MDB_txn *txn;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0) {
		fclose(f);
		T_FAIL("txn");
		return;
	}
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	char line[1024], section[1024] = "";
	unsigned long long val;
	MDB_stat st;
	int have = 0, blocks = 0;
	size_t nfree = 0;
	MDB_cursor *cur;
	if (mdb_cursor_open(txn, 0, &cur) == 0) {
		MDB_val k, v;
		while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
			uint64_t n;
			memcpy(&n, v.mv_data, 8);
			nfree += n;
		}
		mdb_cursor_close(cur);
	}
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "Status of ", 10) == 0 || strcmp(line, "Freelist Status") == 0) {
			snprintf(section, sizeof section, "%s", line);
			MDB_dbi dbi = 0;
			int rc = 0;
			if (strcmp(line, "Status of Main DB") == 0)
				dbi = 1;
			else if (strncmp(line, "Status of ", 10) == 0)
				rc = mdb_dbi_open(txn, line + 10, 0, &dbi);
			if (rc == 0)
				rc = mdb_stat(txn, dbi, &st);
			have = rc == 0;
			if (rc)
				T_FAIL("%s: %d (%s)", line, rc, mdb_strerror(rc));
			blocks++;
			continue;
		}
		if (sscanf(line, "  Number of pages used: %llu", &val) == 1)
			CHECK_EQ(val, info.me_last_pgno + 1);
		else if (sscanf(line, "  Last transaction ID: %llu", &val) == 1)
			CHECK_EQ(val, info.me_last_txnid);
		else if (sscanf(line, "  Free pages: %llu", &val) == 1)
			CHECK_EQ(val, nfree);
		else if (!have)
			continue;
		else if (sscanf(line, "  Tree depth: %llu", &val) == 1 && val != st.ms_depth)
			T_FAIL("%s: depth %llu (tool) vs %u", section, val, st.ms_depth);
		else if (sscanf(line, "  Branch pages: %llu", &val) == 1 && val != st.ms_branch_pages)
			T_FAIL("%s: branch %llu (tool) vs %zu", section, val, (size_t)st.ms_branch_pages);
		else if (sscanf(line, "  Leaf pages: %llu", &val) == 1 && val != st.ms_leaf_pages)
			T_FAIL("%s: leaf %llu (tool) vs %zu", section, val, (size_t)st.ms_leaf_pages);
		else if (sscanf(line, "  Overflow pages: %llu", &val) == 1 &&
			 val != st.ms_overflow_pages)
			T_FAIL("%s: overflow %llu (tool) vs %zu", section, val,
			       (size_t)st.ms_overflow_pages);
		else if (sscanf(line, "  Entries: %llu", &val) == 1 && val != st.ms_entries)
			T_FAIL("%s: entries %llu (tool) vs %zu", section, val, (size_t)st.ms_entries);
	}
	CHECK_EQ(blocks, want_blocks);
	mdb_txn_abort(txn);
	fclose(f);
}

#ifndef STOCK_LMDB
/* Our MDB_FORMAT_LMDB store, read by stock tools. */
static void test_stock_tools_read_our_store(void)
{
	if (!have_tools())
		return;
	const char *db = t_path("ours.mdb");
	REQUIRE_OK(build_store(db, MDB_FORMAT_LMDB));
	CHECK_RC(sh("mdb_dump -n -a %s > %s", db, t_path("all.txt")), 0);
	CHECK_RC(sh("mdb_dump -n %s > %s", db, t_path("main.txt")), 0);
	CHECK_RC(sh("mdb_stat -n -e -f -a %s > %s", db, t_path("stat.txt")), 0);
	MDB_env *env = open_ro(db, 0);
	REQUIRE(env);
	CHECK_EQ(compare_dump_path(env, t_path("all.txt"), NULL, NULL), 6);
	CHECK_EQ(compare_dump_path(env, t_path("main.txt"), NULL, NULL), 1);
	compare_stat_tool(env, t_path("stat.txt"));
	mdb_env_close(env);
}

/* Stock mdb_load writes into our store; we read the result; then we write
 * and stock reads again. */
static void test_stock_writes_our_store(void)
{
	if (!have_tools())
		return;
	const char *db = t_path("ours.mdb");
	REQUIRE_OK(build_store(db, MDB_FORMAT_LMDB));
	/* a new DB and new keys in an existing one, in mdb_load's text format */
	FILE *f = fopen(t_path("in.txt"), "w");
	REQUIRE(f);
	fprintf(f, "VERSION=3\nformat=print\ndatabase=added\ntype=btree\nHEADER=END\n");
	for (int i = 0; i < 300; i++)
		fprintf(f, " stock-key-%d\n stock-value-%d\n", i, i * i);
	fprintf(f, "DATA=END\n");
	fprintf(f, "VERSION=3\nformat=print\ndatabase=odd\ntype=btree\nHEADER=END\n");
	for (int i = 0; i < 100; i++)
		fprintf(f, " zz-from-stock-%03d\n v\n", i);
	fprintf(f, "DATA=END\n");
	/* stock adds duplicates to our DUPSORT DB: to a big set, a small set, a new key */
	fprintf(f, "VERSION=3\nformat=print\ndatabase=dups\ntype=btree\ndupsort=1\nHEADER=END\n");
	for (int i = 0; i < 300; i++)
		fprintf(f, " %s\n stock-item-%04d\n", i % 3 == 0 ? "dk0" : i % 3 == 1 ? "dk7x" : "dk-new",
			i);
	fprintf(f, "DATA=END\n");
	fclose(f);
	CHECK_RC(sh("mdb_load -n -f %s %s 2>/dev/null", t_path("in.txt"), db), 0);

	MDB_env *env = t_env_open(db, MDB_NOSUBDIR, 0, 8);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi added, odd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "added", 0, &added));
	REQUIRE_OK(mdb_dbi_open(txn, "odd", 0, &odd));
	MDB_stat st;
	OK(mdb_stat(txn, added, &st));
	CHECK_EQ(st.ms_entries, 300);
	MDB_val k = t_val("stock-key-17"), v;
	OK(mdb_get(txn, added, &k, &v));
	CHECK_STR(v, "stock-value-289");
	k = t_val("zz-from-stock-042");
	OK(mdb_get(txn, odd, &k, &v));
	CHECK_STR(v, "v");
	MDB_dbi dups;
	REQUIRE_OK(mdb_dbi_open(txn, "dups", 0, &dups));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dups, &c));
	k = t_val("dk-new");
	v = t_val("stock-item-0002");
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH));
	size_t cnt = 0;
	OK(mdb_cursor_count(c, &cnt));
	CHECK_EQ(cnt, 100);
	k = t_val("dk7x");
	v = t_val("stock-item-0298");
	OK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH));
	/* and we delete a few of stock's items */
	OK(mdb_cursor_del(c, 0));
	k = t_val("dk-new");
	OK(mdb_del(txn, dups, &k, NULL));
	mdb_cursor_close(c);
	/* and we write on top */
	for (int i = 0; i < 300; i += 3) {
		char kb[32];
		snprintf(kb, sizeof kb, "stock-key-%d", i);
		k = t_val(kb);
		OK(mdb_del(txn, added, &k, NULL));
	}
	k = t_val("ours-again");
	v = t_val("x");
	OK(mdb_put(txn, added, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	CHECK_RC(sh("mdb_dump -n -a %s > %s", db, t_path("all.txt")), 0);
	CHECK_RC(sh("mdb_stat -n -e -f -a %s > %s", db, t_path("stat.txt")), 0);
	env = open_ro(db, 0);
	REQUIRE(env);
	CHECK_EQ(compare_dump_path(env, t_path("all.txt"), NULL, NULL), 7);
	mdb_env_close(env);
	/* stat has one more named DB now: count blocks loosely */
}

/* Default stores are DLMDB v2: stock tools must refuse them. */
static void test_stock_tools_refuse_v2(void)
{
	if (!have_tools())
		return;
	const char *db = t_path("v2.mdb");
	REQUIRE_OK(build_store(db, 0));
	CHECK(sh("mdb_stat -n %s > /dev/null 2>&1", db) != 0);
	CHECK(sh("mdb_dump -n -a %s > /dev/null 2>&1", db) != 0);
	/* and the file is still fine for us afterwards */
	MDB_env *env = open_ro(db, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_dbi_open(txn, "intk", 0, &dbi));
	mdb_txn_abort(txn);
	mdb_env_close(env);
}
#endif

/* A store written by stock mdb_load, read by us. */
static void test_we_read_stock_load(void)
{
	if (!have_tools())
		return;
	FILE *f = fopen(t_path("in.txt"), "w");
	REQUIRE(f);
	for (int db = 0; db < 3; db++) {
		fprintf(f, "VERSION=3\nformat=bytevalue\ndatabase=%s\ntype=btree\n%sHEADER=END\n",
			db == 0 ? "a" : db == 1 ? "bb" : "ccc", db == 2 ? "reversekey=1\n" : "");
		for (int i = 0; i < 700; i++) {
			/* key: i in decimal with an odd/even number of trailing bytes */
			char kb[64];
			int kl = snprintf(kb, sizeof kb, "%d", i * 13 + db);
			memset(kb + kl, 'q', (size_t)(i % 5));
			kl += i % 5;
			fputc(' ', f);
			for (int j = 0; j < kl; j++)
				fprintf(f, "%02x", (unsigned char)kb[j]);
			fputs("\n ", f);
			int vl = i % 50 == 0 ? 3000 + i : i % 40;
			for (int j = 0; j < vl; j++)
				fprintf(f, "%02x", (unsigned char)(j + i));
			fputc('\n', f);
		}
		fprintf(f, "DATA=END\n");
	}
	/* and a DUPSORT database: small sets (sub-pages) and one big set */
	fprintf(f, "VERSION=3\nformat=print\ndatabase=dd\ntype=btree\ndupsort=1\nHEADER=END\n");
	for (int i = 0; i < 1200; i++)
		fprintf(f, " %s%d\n dup-%05d%s\n", i < 800 ? "big" : "s", i < 800 ? 0 : i % 37, i,
			i % 2 ? "x" : "");
	fprintf(f, "DATA=END\n");
	fclose(f);
	char db[512];
	snprintf(db, sizeof db, "%s", t_path("stock.mdb"));
	CHECK_RC(sh("mdb_load -n -f %s %s 2>/dev/null", t_path("in.txt"), db), 0);
	CHECK_RC(sh("mdb_dump -n -a %s > %s", db, t_path("all.txt")), 0);
	CHECK_RC(sh("mdb_stat -n -e -f -a %s > %s", db, t_path("stat.txt")), 0);
	MDB_env *env = open_ro(db, 0);
	REQUIRE(env);
	CHECK_EQ(compare_dump_path(env, t_path("all.txt"), NULL, NULL), 4);
	mdb_env_close(env);

	/* We write into the stock-made store (plain and DUPSORT), stock reads it. */
	env = t_env_open(db, MDB_NOSUBDIR, 0, 8);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi a, dd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "a", 0, &a));
	REQUIRE_OK(mdb_dbi_open(txn, "dd", 0, &dd));
	uint64_t s = 8;
	static unsigned char big[6000];
	memset(big, 'w', sizeof big);
	for (int i = 0; i < 1500; i++) {
		char kb[32], vb[32];
		int r = (int)(t_rand(&s) % 6);
		if (r < 2) {
			snprintf(kb, sizeof kb, "%d", (int)(t_rand(&s) % 9000));
			MDB_val k = t_val(kb), v = t_mem(big, t_rand(&s) % 15 ? t_rand(&s) % 60 : 5000);
			OK(mdb_put(txn, a, &k, &v, 0));
		} else if (r < 3) {
			snprintf(kb, sizeof kb, "%d", (int)(t_rand(&s) % 9000));
			MDB_val k = t_val(kb);
			int rc = mdb_del(txn, a, &k, NULL);
			if (rc != MDB_NOTFOUND)
				OK(rc);
		} else {
			int kk = (int)(t_rand(&s) % 40);
			snprintf(kb, sizeof kb, "%s%d", kk == 39 ? "big" : "s", kk == 39 ? 0 : kk);
			snprintf(vb, sizeof vb, "dup-%05d%s", (int)(t_rand(&s) % 1300), r == 5 ? "x" : "");
			MDB_val k = t_val(kb), v = t_val(vb);
			int rc = r == 3 ? mdb_del(txn, dd, &k, &v) : mdb_put(txn, dd, &k, &v, 0);
			if (rc != MDB_NOTFOUND)
				OK(rc);
		}
	}
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
	CHECK_RC(sh("mdb_dump -n -a %s > %s", db, t_path("all2.txt")), 0);
	CHECK_RC(sh("mdb_stat -n -e -f -a %s > %s", db, t_path("stat2.txt")), 0);
	env = open_ro(db, 0);
	REQUIRE(env);
	CHECK_EQ(compare_dump_path(env, t_path("all2.txt"), NULL, NULL), 4);
	mdb_env_close(env);
	/* stock's page accounting agrees with ours: pages used = last_pgno + 1 etc. */
	env = open_ro(db, 0);
	REQUIRE(env);
	compare_stat_tool_n(env, t_path("stat2.txt"), 6);
	mdb_env_close(env);
}

int main(void)
{
#ifndef STOCK_LMDB
	RUN(test_stock_tools_read_our_store);
	RUN(test_stock_writes_our_store);
	RUN(test_stock_tools_refuse_v2);
#endif
	RUN(test_we_read_stock_load);
	T_DONE();
}
