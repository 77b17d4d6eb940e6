/*
 * t.h - a tiny test harness for the dlmdb C API tests.
 *
 * Each test program defines test functions `static void test_x(void)` and a
 * main() that calls RUN(test_x) for each and ends with T_DONE().  RUN forks,
 * so a crash, an abort or a hang (alarm) in one test is reported as that
 * test's failure and the others still run; every test gets a fresh temporary
 * directory (t_dir) that is removed afterwards.
 *
 * Checks never stop a test (CHECK, CHECK_RC, OK, CHECK_EQ, CHECK_VAL);
 * REQUIRE* variants return from the test function, for when going on would
 * only dereference garbage.  Failures print file:line and, for return codes,
 * the mdb_strerror() text of both the value seen and the value wanted.
 *
 * The closing line of each program is "N passed, M failed" (tests, not
 * checks); tests/run.sh adds them up.  XRUN(test_x) marks a test of a
 * feature that is not there yet: its failure prints "xfail" and is not
 * counted; when it starts passing it prints "XPASS" (then make it RUN).
 *
 * Environment: DLMDB_TEST=<substring> runs only matching tests,
 * DLMDB_KEEP=1 keeps temporary directories, DLMDB_FIXTURES=<dir> points at
 * the reference fixtures (set by the Makefile).
 * With -DSTOCK_LMDB the programs are built against stock liblmdb to confirm
 * expectations; code using dlmdb-only features is wrapped in #ifndef STOCK_LMDB.
 */
#ifndef DLMDB_TEST_T_H
#define DLMDB_TEST_T_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lmdb.h"

#define T_UNUSED __attribute__((unused))

/* Seconds one test may run before it is killed and counted as failed. */
#ifndef T_TIMEOUT
#define T_TIMEOUT 120
#endif

static int t_failures;          /* failed checks in the running test */
static char t_dir[256];         /* this test's scratch directory */
static int t_npass, t_nfail;    /* tests, for the closing line */
static int t_expect_fail;       /* running an XRUN test */

/* Only the first T_MAX_SHOWN failures of a test are printed (only the
 * first one for an XRUN test). */
#define T_MAX_SHOWN (t_expect_fail ? 1 : 25)
#define T_FAIL(...) do { \
	if (++t_failures <= T_MAX_SHOWN) { \
		fprintf(stderr, "  FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} \
} while (0)

#define CHECK(cond) do { if (!(cond)) T_FAIL("%s", #cond); } while (0)
#define REQUIRE(cond) do { if (!(cond)) { T_FAIL("%s (fatal)", #cond); return; } } while (0)

#define CHECK_RC(expr, want) do { \
	int got_ = (expr), want_ = (want); \
	if (got_ != want_) \
		T_FAIL("%s -> %d (%s), want %d (%s)", #expr, got_, \
		       mdb_strerror(got_), want_, mdb_strerror(want_)); \
} while (0)
#define REQUIRE_RC(expr, want) do { \
	int got_ = (expr), want_ = (want); \
	if (got_ != want_) { \
		T_FAIL("%s -> %d (%s), want %d (%s) (fatal)", #expr, got_, \
		       mdb_strerror(got_), want_, mdb_strerror(want_)); \
		return; \
	} \
} while (0)
#define OK(expr) CHECK_RC(expr, 0)
#define REQUIRE_OK(expr) REQUIRE_RC(expr, 0)

/* Fails unless the call returned something other than success; for inputs
 * where several error codes are defensible but success is not. */
#define CHECK_ERR(expr) do { \
	int got_ = (expr); \
	if (got_ == 0) T_FAIL("%s succeeded, want an error", #expr); \
} while (0)

#define CHECK_EQ(a, b) do { \
	unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b); \
	if (a_ != b_) T_FAIL("%s == %s: %llu != %llu", #a, #b, a_, b_); \
} while (0)

/* An MDB_val equals the given bytes. */
#define CHECK_VAL(val, ptr, len) do { \
	const MDB_val *v_ = &(val); \
	size_t l_ = (len); \
	if (v_->mv_size != l_ || (l_ && memcmp(v_->mv_data, (ptr), l_) != 0)) \
		T_FAIL("%s: got %zu bytes \"%.*s\", want %zu bytes \"%.*s\"", #val, \
		       v_->mv_size, (int)(v_->mv_size > 40 ? 40 : v_->mv_size), \
		       v_->mv_data ? (const char *)v_->mv_data : "", l_, \
		       (int)(l_ > 40 ? 40 : l_), (const char *)(ptr)); \
} while (0)
#define CHECK_STR(val, s) CHECK_VAL(val, s, strlen(s))

/* ---- small helpers ---------------------------------------------------- */

static T_UNUSED MDB_val t_val(const char *s)
{
	MDB_val v;
	v.mv_size = strlen(s);
	v.mv_data = (void *)s;
	return v;
}

static T_UNUSED MDB_val t_mem(const void *p, size_t n)
{
	MDB_val v;
	v.mv_size = n;
	v.mv_data = (void *)p;
	return v;
}

/* A path inside this test's directory.  The result lives in a ring of 64
 * buffers: fine for a few paths at once, but copy it if a test keeps it
 * across many other t_path() calls. */
static T_UNUSED const char *t_path(const char *name)
{
	static char ring[64][512];
	static int next;
	char *buf = ring[next++ & 63];
	snprintf(buf, sizeof ring[0], "%s/%s", t_dir, name);
	return buf;
}

static T_UNUSED long long t_file_size(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	return (long long)st.st_size;
}

static T_UNUSED int t_copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;
	if (in < 0)
		return errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return errno;
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(out);
	return n < 0 ? EIO : 0;
}

/* Overwrite `len` bytes at `off` of a file. */
static T_UNUSED int t_patch_file(const char *path, long long off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	if (fd < 0)
		return errno;
	n = pwrite(fd, bytes, len, (off_t)off);
	close(fd);
	return n == (ssize_t)len ? 0 : EIO;
}

/* An environment on the single file path without a lock file (MDB_NOLOCK,
 * MDB_NOSYNC; 4 named DBs): two of them on one file stand for two
 * processes, which the test itself keeps from writing at once.  NULL when
 * it cannot be opened. */
static T_UNUSED MDB_env *t_env_open_nolock(const char *path, size_t mapsize)
{
	MDB_env *env = NULL;
	if (mdb_env_create(&env))
		return NULL;
	mdb_env_set_maxdbs(env, 4);
	mdb_env_set_mapsize(env, mapsize);
	if (mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC, 0644)) {
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

/* Swap node pointers i and j of page pg (4 KiB pages) of the file at path:
 * each node stays sound, the order of the page's keys does not. */
static T_UNUSED int t_swap_node_ptrs(const char *path, uint64_t pg, unsigned i, unsigned j)
{
	enum { psize = 4096, ptrs = 16 };
	unsigned char b[psize];
	uint16_t pi, pj;
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return errno;
	int rc = pread(fd, b, psize, (off_t)pg * psize) == psize ? 0 : EIO;
	if (!rc) {
		memcpy(&pi, b + ptrs + 2 * i, 2);
		memcpy(&pj, b + ptrs + 2 * j, 2);
		memcpy(b + ptrs + 2 * i, &pj, 2);
		memcpy(b + ptrs + 2 * j, &pi, 2);
		rc = pwrite(fd, b, psize, (off_t)pg * psize) == psize ? 0 : EIO;
	}
	close(fd);
	return rc;
}

static T_UNUSED int t_write_file(const char *path, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;
	if (fd < 0)
		return errno;
	n = len ? write(fd, bytes, len) : 0;
	close(fd);
	return n == (ssize_t)len ? 0 : EIO;
}

/* Path of a reference fixture (copy it before opening!), or NULL with a
 * SKIP note when the fixture directory is not available. */
static T_UNUSED const char *t_fixture(const char *name)
{
	static char ring[8][1024];	/* a few results may be used at once */
	static int next;
	char *buf = ring[next++ & 7];
	const char *dir = getenv("DLMDB_FIXTURES");
	if (!dir || !*dir)	/* the repository's copy, seen from vendor/dlmdb */
		dir = "../../tests/fixtures";
	snprintf(buf, sizeof ring[0], "%s/%s", dir, name);
	if (access(buf, R_OK) != 0) {
		fprintf(stderr, "  SKIP: fixture %s not found\n", buf);
		return NULL;
	}
	return buf;
}

/* Deterministic PRNG (xorshift64*), so failures reproduce from the seed. */
static T_UNUSED uint64_t t_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Create + open an environment; on failure records it and returns NULL.
 * mapsize 0 = leave the default, maxdbs as given. */
static T_UNUSED MDB_env *t_env_open_rc(const char *path, unsigned flags, size_t mapsize,
				       unsigned maxdbs, int *rcp)
{
	MDB_env *env = NULL;
	int rc = mdb_env_create(&env);
	if (rc == 0 && mapsize)
		rc = mdb_env_set_mapsize(env, mapsize);
	if (rc == 0 && maxdbs)
		rc = mdb_env_set_maxdbs(env, maxdbs);
	if (rc == 0)
		rc = mdb_env_open(env, path, flags, 0644);
	if (rc == 0) {
		/* LMDB users must open the main DB handle once before using
		 * handle 1 (stock LMDB installs its comparator there); do it
		 * here for every test.  An empty write txn commits nothing. */
		MDB_txn *txn;
		MDB_dbi dbi;
		rc = mdb_txn_begin(env, NULL, flags & MDB_RDONLY, &txn);
		if (rc == 0) {
			rc = mdb_dbi_open(txn, NULL, 0, &dbi);
			if (rc == 0)
				rc = mdb_txn_commit(txn);
			else
				mdb_txn_abort(txn);
		}
	}
	if (rcp)
		*rcp = rc;
	if (rc != 0) {
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

#define t_env_open(path, flags, mapsize, maxdbs) \
	t_env_open_at(__FILE__, __LINE__, path, flags, mapsize, maxdbs)
static T_UNUSED MDB_env *t_env_open_at(const char *file, int line, const char *path,
				       unsigned flags, size_t mapsize, unsigned maxdbs)
{
	int rc;
	MDB_env *env = t_env_open_rc(path, flags, mapsize, maxdbs, &rc);
	if (!env && ++t_failures <= T_MAX_SHOWN)
		fprintf(stderr, "  FAIL %s:%d: open %s flags 0x%x: %d (%s)\n", file, line,
			path, flags, rc, mdb_strerror(rc));
	return env;
}

/* One-shot helpers that run a single write in its own transaction. */
static T_UNUSED int t_put1(MDB_env *env, MDB_dbi dbi, const char *k, const char *v)
{
	MDB_txn *txn;
	MDB_val key = t_val(k), data = t_val(v);
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	rc = mdb_put(txn, dbi, &key, &data, 0);
	if (rc) {
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/* Look a key up in a fresh read transaction and compare with `want`
 * (NULL = must be absent).  Returns 1 if as expected. */
static T_UNUSED int t_get_is(MDB_env *env, MDB_dbi dbi, const char *k, const char *want)
{
	MDB_txn *txn;
	MDB_val key = t_val(k), data;
	int rc, ok;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn) != 0)
		return 0;
	rc = mdb_get(txn, dbi, &key, &data);
	if (want == NULL)
		ok = rc == MDB_NOTFOUND;
	else
		ok = rc == 0 && data.mv_size == strlen(want) &&
		     memcmp(data.mv_data, want, data.mv_size) == 0;
	mdb_txn_abort(txn);
	return ok;
}

/* ---- runner ----------------------------------------------------------- */

static int t_rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb; (void)type; (void)ftw;
	return remove(path);
}

static T_UNUSED void t_rm_rf(const char *dir)
{
	nftw(dir, t_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int t_nxfail;   /* expected failures (XRUN) */

static T_UNUSED void t_run(const char *name, void (*fn)(void))
{
	const char *filter = getenv("DLMDB_TEST");
	const char *tmp = getenv("TMPDIR");
	struct timespec t0, t1;
	int status = 0;
	pid_t pid;

	if (filter && *filter && !strstr(name, filter))
		return;
	snprintf(t_dir, sizeof t_dir, "%s/dlmdb-t-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(t_dir)) {
		fprintf(stderr, "FAIL %s: mkdtemp: %s\n", name, strerror(errno));
		t_nfail++;
		return;
	}
	fflush(stdout);
	fflush(stderr);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		alarm(T_TIMEOUT);
		t_failures = 0;
		fn();
		if (t_failures > T_MAX_SHOWN)
			fprintf(stderr, "  ... %d more failures not shown\n",
				t_failures - T_MAX_SHOWN);
		fflush(stderr);
		/* A failed test often returned early (REQUIRE) and left handles
		 * open: skip the leak check then.  A passing test ends with
		 * exit(), so LeakSanitizer checks it. */
		if (t_failures)
			_exit(1);
		exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!getenv("DLMDB_KEEP"))
		t_rm_rf(t_dir);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (t_expect_fail) {
		/* a feature not implemented yet: shown, not counted as failed */
		if (status == 0) {
			t_npass++;
			printf("XPASS %s (%.2fs): now works, change XRUN to RUN\n", name, secs);
		} else {
			t_nxfail++;
			printf("xfail %s (expected for now)\n", name);
		}
	} else if (status == 0) {
		t_npass++;
		printf("ok   %s (%.2fs)\n", name, secs);
	} else {
		t_nfail++;
		if (status != -1 && WIFSIGNALED(status))
			printf("FAIL %s: killed by signal %d%s\n", name, WTERMSIG(status),
			       WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		else
			printf("FAIL %s (exit status %d)\n", name,
			       status == -1 ? -1 : WEXITSTATUS(status));
	}
	fflush(stdout);
}

#define RUN(fn) (t_expect_fail = 0, t_run(#fn, fn))
/* A test of something not implemented yet: its failure is reported as
 * "xfail" and does not fail the run. */
#ifdef STOCK_LMDB
#define XRUN(fn) RUN(fn) /* stock LMDB has every feature: be strict */
#else
#define XRUN(fn) (t_expect_fail = 1, t_run(#fn, fn), t_expect_fail = 0)
#endif
#define T_DONE() do { \
	if (t_nxfail) \
		printf("%d expected failure%s (xfail)\n", t_nxfail, t_nxfail > 1 ? "s" : ""); \
	printf("%d passed, %d failed\n", t_npass, t_nfail); \
	return t_nfail ? 1 : 0; \
} while (0)

#endif
