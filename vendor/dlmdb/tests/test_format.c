/*
 * Data formats of new and foreign stores: which format mdb_env_open creates
 * (flags, the DLMDB_CREATE_FORMAT environment variable, the build-time
 * default -DDLMDB_DEFAULT_FORMAT_LMDB), and the refusal of LMDB 1.x stores
 * (data format 3).  dlmdb-only (not built for stock-check).
 */
#include "t.h"

#define MAIN_DBI 1	/* handle of the main database, as in LMDB */

/* Data version in meta page 0 of a store created at dir (0 on error). */
static unsigned data_version(const char *dir)
{
	char p[512];
	unsigned char head[24];
	snprintf(p, sizeof p, "%s/data.mdb", dir);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, head, sizeof head, 0);
	close(fd);
	if (n != (ssize_t)sizeof head)
		return 0;
	uint32_t v;
	memcpy(&v, head + 20, 4);
	return v;
}

/* Create a store in dir with flags, holding one odd-length key (so the two
 * version-1 layouts differ); returns the mdb_env_open result. */
static int create_store(const char *dir, unsigned flags)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;
	mkdir(dir, 0755);
	if ((rc = mdb_env_create(&env)))
		return rc;
	if ((rc = mdb_env_open(env, dir, flags, 0664))) {
		mdb_env_close(env);
		return rc;
	}
	MDB_val k = t_val("odd"), v = t_val("value");
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)) == 0) {
		if ((rc = mdb_dbi_open(txn, NULL, 0, &dbi)) == 0 &&
		    (rc = mdb_put(txn, dbi, &k, &v, 0)) == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return rc;
}

/* Whether Debian's stock mdb_dump reads the store at dir and finds the key
 * "odd" (hex 6f6464) with its value; -1 when the tool is not installed. */
static int stock_dump_finds_key(const char *dir)
{
	if (access("/usr/bin/mdb_dump", X_OK) != 0)
		return -1;
	char cmd[700];
	snprintf(cmd, sizeof cmd,
		 "/usr/bin/mdb_dump '%s' 2>/dev/null | grep -q '^ 6f6464$'", dir);
	return system(cmd) == 0;
}

static void test_create_default(void)
{
	unsetenv("DLMDB_CREATE_FORMAT");
	REQUIRE_OK(create_store(t_dir, 0));
#ifdef DLMDB_DEFAULT_FORMAT_LMDB
	CHECK_EQ(data_version(t_dir), 1);
	CHECK(stock_dump_finds_key(t_dir) != 0);
#else
	CHECK_EQ(data_version(t_dir), 2);
#endif
}

static void test_create_env_lmdb(void)
{
	setenv("DLMDB_CREATE_FORMAT", "lmdb", 1);
	REQUIRE_OK(create_store(t_dir, 0));
	CHECK_EQ(data_version(t_dir), 1);
	/* stock layout: stock LMDB reads it */
	CHECK(stock_dump_finds_key(t_dir) != 0);
	/* and so do we, reopening it without any flag */
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	CHECK(t_get_is(env, MAIN_DBI, "odd", "value"));
	mdb_env_close(env);
	/* a stock store cannot get DLMDB-only databases */
	env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_ERR(mdb_dbi_open(txn, "c", MDB_CREATE | MDB_COUNTED, &dbi));
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_create_env_dlmdb(void)
{
	/* overrides a stock-format build default too */
	setenv("DLMDB_CREATE_FORMAT", "dlmdb", 1);
	REQUIRE_OK(create_store(t_dir, 0));
	CHECK_EQ(data_version(t_dir), 2);
}

static void test_create_flags_win(void)
{
	char a[300], b[300];
	snprintf(a, sizeof a, "%s/a", t_dir);
	snprintf(b, sizeof b, "%s/b", t_dir);
	setenv("DLMDB_CREATE_FORMAT", "lmdb", 1);
	REQUIRE_OK(create_store(a, MDB_FORMAT_DLMDB_V1));
	CHECK_EQ(data_version(a), 1);
	setenv("DLMDB_CREATE_FORMAT", "dlmdb", 1);
	REQUIRE_OK(create_store(b, MDB_FORMAT_LMDB));
	CHECK_EQ(data_version(b), 1);
	CHECK(stock_dump_finds_key(b) != 0);
}

static void test_create_env_bad_value(void)
{
	setenv("DLMDB_CREATE_FORMAT", "LMDB", 1);
	CHECK_RC(create_store(t_dir, 0), EINVAL);
	/* an existing store still opens: the variable only decides creation */
	setenv("DLMDB_CREATE_FORMAT", "dlmdb", 1);
	REQUIRE_OK(create_store(t_dir, 0));
	setenv("DLMDB_CREATE_FORMAT", "LMDB", 1);
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	CHECK(env != NULL);
	mdb_env_close(env);
}

static void test_existing_keeps_format(void)
{
	setenv("DLMDB_CREATE_FORMAT", "dlmdb", 1);
	REQUIRE_OK(create_store(t_dir, 0));
	setenv("DLMDB_CREATE_FORMAT", "lmdb", 1);
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	CHECK(t_get_is(env, MAIN_DBI, "odd", "value"));
	OK(t_put1(env, MAIN_DBI, "more", "x"));
	mdb_env_close(env);
	CHECK_EQ(data_version(t_dir), 2);
}

/*
 * A hand-built LMDB 1.x data file: two meta pages with data format 3, in
 * the 24-byte page header layout (txnid after the page number, flags at 18,
 * magic at 24, version at 28) or, with narrow, the 16-byte one.
 */
static void write_format3(const char *path, int narrow)
{
	enum { PS = 4096 };
	static unsigned char buf[2 * PS];
	memset(buf, 0, sizeof buf);
	for (int i = 0; i < 2; i++) {
		unsigned char *p = buf + i * PS;
		uint64_t pgno = (uint64_t)i, mapsize = 1 << 20, last = 1, txnid = 0;
		uint32_t magic = 0xBEEFC0DEu, version = 3, psize = PS;
		uint16_t flags = 0x08;
		unsigned h = narrow ? 16 : 24;
		memcpy(p, &pgno, 8);
		memcpy(p + h - 6, &flags, 2);
		memcpy(p + h, &magic, 4);
		memcpy(p + h + 4, &version, 4);
		memcpy(p + h + 16, &mapsize, 8);
		memcpy(p + h + 24, &psize, 4);			/* FREE_DBI md_pad */
		uint64_t inval = ~(uint64_t)0;
		memcpy(p + h + 24 + 40, &inval, 8);		/* FREE_DBI root */
		memcpy(p + h + 72 + 40, &inval, 8);		/* MAIN_DBI root */
		memcpy(p + h + 120, &last, 8);
		memcpy(p + h + 128, &txnid, 8);
	}
	if (t_write_file(path, buf, sizeof buf))
		T_FAIL("cannot write %s", path);
}

static void format3_case(int narrow)
{
	const char *path = t_path("v3.mdb");
	write_format3(path, narrow);
	long long size = t_file_size(path);
	MDB_env *env;
	REQUIRE_OK(mdb_env_create(&env));
	CHECK_RC(mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY, 0664), MDB_VERSION_MISMATCH);
	mdb_env_close(env);
	REQUIRE_OK(mdb_env_create(&env));
	CHECK_RC(mdb_env_open(env, path, MDB_NOSUBDIR, 0664), MDB_VERSION_MISMATCH);
	mdb_env_close(env);
	/* refused before anything was written */
	CHECK_EQ(t_file_size(path), size);
}

static void test_lmdb1x_format3_wide_header(void) { format3_case(0); }
static void test_lmdb1x_format3_narrow_header(void) { format3_case(1); }

int main(void)
{
#ifdef STOCK_LMDB
	T_DONE(); /* dlmdb-only */
#else
	RUN(test_create_default);
	RUN(test_create_env_lmdb);
	RUN(test_create_env_dlmdb);
	RUN(test_create_flags_win);
	RUN(test_create_env_bad_value);
	RUN(test_existing_keeps_format);
	RUN(test_lmdb1x_format3_wide_header);
	RUN(test_lmdb1x_format3_narrow_header);
	T_DONE();
#endif
}
