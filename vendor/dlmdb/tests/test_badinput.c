/* Damaged and foreign files must give an error, never a crash or a misread
 * (lmdb-format.md §10.2, dlmdb-extensions.md N.2/N.4, lmdb-api.md §4.2).
 * Each test runs in its own process, so a crash shows up as that test
 * failing with a signal. */
#include "t.h"

#define PSIZE 4096

/* Make a small NOSUBDIR environment with a few pages of data; returns 0 on
 * success. */
static int make_env_file(const char *path, int nkeys)
{
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 4u << 20, 0);
	if (!env)
		return -1;
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	for (int i = 0; rc == 0 && i < nkeys; i++) {
		char kb[32], vb[120];
		snprintf(kb, sizeof kb, "key-%06d", i);
		memset(vb, 'a' + i % 26, sizeof vb);
		MDB_val k = t_val(kb), v = t_mem(vb, 20 + (size_t)(i % 100));
		rc = mdb_put(txn, 1, &k, &v, 0);
	}
	if (rc == 0)
		rc = mdb_txn_commit(txn);
	else
		mdb_txn_abort(txn);
	mdb_env_close(env);
	unlink(t_path("x-lock")); /* keep only the data file around */
	return rc;
}

/* Open a file; if the open succeeds, read everything.  Returns the first
 * error seen (0 if the whole thing read fine). */
static int open_and_read(const char *path, unsigned flags)
{
	MDB_env *env;
	int rc = mdb_env_create(&env);
	if (rc)
		return rc;
	rc = mdb_env_open(env, path, flags | MDB_NOSUBDIR, 0644);
	if (rc) {
		mdb_env_close(env);
		return rc;
	}
	MDB_txn *txn;
	rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc == 0) {
		MDB_dbi dbi;
		rc = mdb_dbi_open(txn, NULL, 0, &dbi);
		MDB_cursor *cur = NULL;
		if (rc == 0)
			rc = mdb_cursor_open(txn, dbi, &cur);
		MDB_val k, v;
		while (rc == 0)
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		if (rc == MDB_NOTFOUND)
			rc = 0;
		int rc2 = 0;
		while (rc2 == 0 && cur)
			rc2 = mdb_cursor_get(cur, &k, &v, MDB_PREV);
		if (rc == 0 && rc2 != MDB_NOTFOUND)
			rc = rc2;
		MDB_val probe = t_val("key-000500");
		rc2 = mdb_get(txn, dbi, &probe, &v);
		if (rc == 0 && rc2 != 0 && rc2 != MDB_NOTFOUND)
			rc = rc2;
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
	return rc;
}

static int is_bad_file_error(int rc)
{
	return rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == MDB_CORRUPTED ||
	       rc == MDB_PAGE_NOTFOUND || rc == ENOENT || rc == EINVAL || rc == EIO;
}

static void test_random_bytes(void)
{
	const char *path = t_path("x");
	static unsigned char buf[4 * PSIZE];
	uint64_t s = 99;
	for (int round = 0; round < 8; round++) {
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (unsigned char)t_rand(&s);
		REQUIRE_OK(t_write_file(path, buf, sizeof buf));
		int rc = open_and_read(path, MDB_RDONLY);
		CHECK_RC(rc, MDB_INVALID);
		rc = open_and_read(path, 0);
		CHECK_RC(rc, MDB_INVALID);
		unlink(t_path("x-lock"));
	}
}

static void test_zero_length_file(void)
{
	const char *path = t_path("x");
	REQUIRE_OK(t_write_file(path, "", 0));
	int rc = open_and_read(path, MDB_RDONLY);
	/* Stock 0.9.24 says EBADF (it tries to write the metas through the
	 * read-only descriptor); ENOENT or MDB_INVALID are as good. */
	if (rc != ENOENT && rc != EBADF && rc != MDB_INVALID && rc != EACCES)
		T_FAIL("empty file, read-only: got %d (%s)", rc, mdb_strerror(rc));
	CHECK_EQ(t_file_size(path), 0); /* read-only open must not initialise it */
	/* Read-write on an empty file creates a new environment. */
	MDB_env *env = t_env_open(path, MDB_NOSUBDIR, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "a", "b"));
	mdb_env_close(env);
	CHECK(t_file_size(path) >= 2 * PSIZE);
}

static void test_truncated_100_bytes(void)
{
	const char *path = t_path("x");
	REQUIRE_OK(make_env_file(path, 1000));
	int fd = open(path, O_RDWR);
	REQUIRE(fd >= 0);
	CHECK(ftruncate(fd, 100) == 0);
	close(fd);
	CHECK_RC(open_and_read(path, MDB_RDONLY), MDB_INVALID);
	CHECK_RC(open_and_read(path, 0), MDB_INVALID);
	CHECK_EQ(t_file_size(path), 100); /* not "repaired" into a new env */
}

static void test_truncated_one_page(void)
{
	const char *path = t_path("x");
	REQUIRE_OK(make_env_file(path, 1000));
	int fd = open(path, O_RDWR);
	REQUIRE(fd >= 0);
	CHECK(ftruncate(fd, PSIZE) == 0); /* meta 0 only */
	close(fd);
	int rc = open_and_read(path, MDB_RDONLY);
	if (!is_bad_file_error(rc))
		T_FAIL("one-page file: got %d (%s)", rc, mdb_strerror(rc));
}

#ifndef STOCK_LMDB
/* Stock LMDB maps past the end of a truncated file and dies with SIGBUS;
 * ours must notice. */
static void test_truncated_tree(void)
{
	char path[512];
	snprintf(path, sizeof path, "%s", t_path("x"));
	REQUIRE_OK(make_env_file(path, 3000));
	long long size = t_file_size(path);
	REQUIRE(size > 8 * PSIZE);
	for (long long cut = 3 * PSIZE; cut < size; cut += 7 * PSIZE) {
		char cp[64];
		snprintf(cp, sizeof cp, "cut%lld", cut);
		REQUIRE_OK(t_copy_file(path, t_path(cp)));
		int fd = open(t_path(cp), O_RDWR);
		REQUIRE(fd >= 0);
		CHECK(ftruncate(fd, (off_t)cut) == 0);
		close(fd);
		int rc = open_and_read(t_path(cp), MDB_RDONLY);
		if (!is_bad_file_error(rc))
			T_FAIL("file cut to %lld of %lld bytes: got %d (%s)", cut, size, rc,
			       mdb_strerror(rc));
	}
}
#endif

static void put_u32(unsigned char *p, uint32_t x)
{
	memcpy(p, &x, 4);
}

static void test_bad_magic(void)
{
	const char *path = t_path("x");
	REQUIRE_OK(make_env_file(path, 100));
	unsigned char junk[4];
	put_u32(junk, 0xDEADBEEFu);
	/* One meta damaged: still refused (both are validated). */
	REQUIRE_OK(t_patch_file(path, 16, junk, 4));
	int rc = open_and_read(path, MDB_RDONLY);
	CHECK(rc != 0);
	/* Both damaged. */
	REQUIRE_OK(t_patch_file(path, PSIZE + 16, junk, 4));
	CHECK_RC(open_and_read(path, MDB_RDONLY), MDB_INVALID);
	CHECK_RC(open_and_read(path, 0), MDB_INVALID);
}

static void test_meta_flag_missing(void)
{
	const char *path = t_path("x");
	REQUIRE_OK(make_env_file(path, 100));
	unsigned char zero[2] = { 0, 0 };
	REQUIRE_OK(t_patch_file(path, 10, zero, 2)); /* P_META flag gone */
	REQUIRE_OK(t_patch_file(path, PSIZE + 10, zero, 2));
	CHECK_RC(open_and_read(path, MDB_RDONLY), MDB_INVALID);
}

static void test_wrong_version(void)
{
	const char *path = t_path("x");
	static const uint32_t versions[] = { 3, 0, 999, 0x01000000u };
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		REQUIRE_OK(make_env_file(path, 100));
		unsigned char v[4];
		put_u32(v, versions[i]);
		REQUIRE_OK(t_patch_file(path, 20, v, 4));
		REQUIRE_OK(t_patch_file(path, PSIZE + 20, v, 4));
		int rc = open_and_read(path, MDB_RDONLY);
		if (rc != MDB_VERSION_MISMATCH)
			T_FAIL("version %u: got %d (%s), want MDB_VERSION_MISMATCH", versions[i],
			       rc, mdb_strerror(rc));
		unlink(path);
	}
}

#ifndef STOCK_LMDB
/* An LMDB 1.0 (mdb.master3) file: version 2 but a 24-byte page header, so
 * the magic sits at offset 24 (dlmdb-extensions.md N.2) -> MDB_INVALID. */
static void test_master3_style_meta(void)
{
	const char *path = t_path("x");
	static unsigned char page[2 * PSIZE];
	memset(page, 0, sizeof page);
	for (int m = 0; m < 2; m++) {
		unsigned char *p = page + m * PSIZE;
		uint64_t pgno = (uint64_t)m;
		memcpy(p, &pgno, 8);        /* pgno */
		/* 8..15: txnid (0); 16: pad; 18: flags */
		p[18] = 0x08;               /* P_META at offset 18 in that layout */
		put_u32(p + 24, 0xBEEFC0DEu);
		put_u32(p + 28, 2);
		uint32_t ps = PSIZE;
		memcpy(p + 48, &ps, 4);
	}
	REQUIRE_OK(t_write_file(path, page, sizeof page));
	CHECK_RC(open_and_read(path, MDB_RDONLY), MDB_INVALID);
}

/* Garbage inside data pages (not the metas): reading may fail, but must not
 * crash, hang or trip the sanitizers. */
static void test_corrupted_pages_fuzz(void)
{
	const char *path = t_path("x");
	REQUIRE_OK(make_env_file(path, 3000));
	long long size = t_file_size(path);
	int npages = (int)(size / PSIZE);
	REQUIRE(npages > 4);
	unsigned char *orig = malloc((size_t)size), *buf = malloc((size_t)size);
	REQUIRE(orig && buf);
	int fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE(read(fd, orig, (size_t)size) == size);
	close(fd);
	uint64_t s = 7;
	int errors = 0, clean = 0;
	for (int round = 0; round < 60; round++) {
		memcpy(buf, orig, (size_t)size);
		int pg = 2 + (int)(t_rand(&s) % (uint64_t)(npages - 2));
		unsigned char *p = buf + (size_t)pg * PSIZE;
		switch (round % 4) {
		case 0: /* whole page random */
			for (int i = 0; i < PSIZE; i++)
				p[i] = (unsigned char)t_rand(&s);
			break;
		case 1: /* a few random bytes in the header / pointer area */
			for (int i = 0; i < 6; i++)
				p[t_rand(&s) % 64] = (unsigned char)t_rand(&s);
			break;
		case 2: /* random bytes anywhere in the page */
			for (int i = 0; i < 20; i++)
				p[t_rand(&s) % PSIZE] = (unsigned char)t_rand(&s);
			break;
		default: /* page number field / lower / upper set to extremes */
			memset(p + 12, 0xff, 4);
			break;
		}
		char cp[32];
		snprintf(cp, sizeof cp, "f%d", round);
		REQUIRE_OK(t_write_file(t_path(cp), buf, (size_t)size));
		int rc = open_and_read(t_path(cp), MDB_RDONLY);
		if (rc)
			errors++;
		else
			clean++;
		unlink(t_path(cp));
		snprintf(cp, sizeof cp, "f%d-lock", round);
		unlink(t_path(cp));
	}
	free(orig);
	free(buf);
	fprintf(stderr, "  fuzz: %d rounds gave an error, %d read through\n", errors, clean);
	/* A page overwritten with random bytes cannot be read as a valid page
	 * in most rounds; if nothing ever fails, no validation is happening. */
	CHECK(errors > 0);
}

static void test_format_flags_on_open(void)
{
	/* Both format flags together: EINVAL. */
	int rc;
	MDB_env *env = t_env_open_rc(t_dir, MDB_FORMAT_LMDB | MDB_FORMAT_DLMDB_V1, 0, 0, &rc);
	CHECK(env == NULL);
	CHECK_RC(rc, EINVAL);
	mdb_env_close(env);
	/* A new default store is version 2 (offset 20 of meta 0). */
	env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "abc", "value"));
	mdb_env_close(env);
	unsigned char hdr[24];
	int fd = open(t_path("data.mdb"), O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK(read(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr);
	close(fd);
	uint32_t magic, version;
	memcpy(&magic, hdr + 16, 4);
	memcpy(&version, hdr + 20, 4);
	CHECK_EQ(magic, 0xBEEFC0DEu);
	CHECK_EQ(version, 2);
	/* Opening a version-2 store with MDB_FORMAT_LMDB: MDB_INCOMPATIBLE. */
	env = t_env_open_rc(t_dir, MDB_FORMAT_LMDB, 0, 0, &rc);
	CHECK(env == NULL);
	CHECK_RC(rc, MDB_INCOMPATIBLE);
	mdb_env_close(env);

	/* A store created with MDB_FORMAT_LMDB is version 1 and reopens
	 * without any flag. */
	const char *p1 = t_path("lmdb.db");
	env = t_env_open(p1, MDB_NOSUBDIR | MDB_FORMAT_LMDB, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "abc", "value"));
	mdb_env_close(env);
	fd = open(p1, O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK(read(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr);
	close(fd);
	memcpy(&version, hdr + 20, 4);
	CHECK_EQ(version, 1);
	env = t_env_open(p1, MDB_NOSUBDIR | MDB_RDONLY, 0, 0);
	REQUIRE(env);
	CHECK(t_get_is(env, 1, "abc", "value"));
	unsigned int fl = 0;
	OK(mdb_env_get_flags(env, &fl));
	CHECK((fl & (MDB_FORMAT_LMDB | MDB_FORMAT_DLMDB_V1)) == 0);
	mdb_env_close(env);

	/* MDB_FORMAT_DLMDB_V1 creates a padded version-1 store. */
	const char *p2 = t_path("v1.db");
	env = t_env_open(p2, MDB_NOSUBDIR | MDB_FORMAT_DLMDB_V1, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "abc", "value"));
	mdb_env_close(env);
	fd = open(p2, O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK(read(fd, hdr, sizeof hdr) == (ssize_t)sizeof hdr);
	close(fd);
	memcpy(&version, hdr + 20, 4);
	CHECK_EQ(version, 1);
	env = t_env_open(p2, MDB_NOSUBDIR | MDB_RDONLY | MDB_FORMAT_DLMDB_V1, 0, 0);
	REQUIRE(env);
	CHECK(t_get_is(env, 1, "abc", "value"));
	mdb_env_close(env);
}
#endif

int main(void)
{
	RUN(test_random_bytes);
	RUN(test_zero_length_file);
	RUN(test_truncated_100_bytes);
	RUN(test_truncated_one_page);
#ifndef STOCK_LMDB
	RUN(test_truncated_tree);
#endif
	RUN(test_bad_magic);
	RUN(test_meta_flag_missing);
	RUN(test_wrong_version);
#ifndef STOCK_LMDB
	RUN(test_master3_style_meta);
	RUN(test_corrupted_pages_fuzz);
	RUN(test_format_flags_on_open);
#endif
	T_DONE();
}
