/*
 * lmdb_peer.c - a stock LMDB process driven line by line, for the live-store
 * tests (tests/tests/live_*.rs).  Built at test time against the system's
 * liblmdb (Debian's LMDB 0.9: lock file version 1).
 *
 * Commands on stdin, one per line; each gets exactly one answer line on
 * stdout, "@@ ok ..." or "@@ err <rc> <message>", flushed at once, so an
 * answer the parent has read describes something that already happened.
 *
 *   open <path> <mapsize>     open the single-file environment (MDB_NOSUBDIR)
 *   rbegin                    start the read txn this peer holds; ok <txnid>
 *   rend                      end it
 *   wbegin                    start the write txn (waits for the writer mutex)
 *   put <hexkey> <hexval>     in the write txn
 *   del <hexkey>              in the write txn; ok 1 if deleted, ok 0 if absent
 *   commit | abort            end the write txn; commit answers ok <txnid>
 *   get <hexkey>              from the held read txn, else a fresh one;
 *                             ok <hexval> or ok -
 *   digest                    of the main DB as the held read txn (else a
 *                             fresh one) sees it: ok <entries> <fnv64 hex>
 *   readercheck               mdb_reader_check: ok <dead slots cleared>
 *   info                      ok <last txnid> <numreaders>
 *   quit                      close and exit
 *
 * The digest is FNV-1a 64 over: field(""), u64 entry count, then for each
 * pair in key order field(key), field(value), where field(b) is b's length
 * as u64 little-endian followed by b (the same as the tests' digest).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MDB_env *env;
static MDB_txn *rtxn, *wtxn;
static MDB_dbi dbi;
static int have_dbi;

static void answer_err(int rc)
{
	printf("@@ err %d %s\n", rc, mdb_strerror(rc));
	fflush(stdout);
}

static void answer_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void answer_ok(const char *fmt, ...)
{
	va_list ap;
	fputs("@@ ok", stdout);
	if (fmt && *fmt) {
		putchar(' ');
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	putchar('\n');
	fflush(stdout);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode hex text s into a malloc'd buffer; "-" is the empty string. */
static int unhex(const char *s, MDB_val *out)
{
	size_t n = strlen(s);
	if (!strcmp(s, "-"))
		n = 0;
	if (n % 2)
		return EINVAL;
	unsigned char *b = malloc(n / 2 + 1);
	if (!b)
		return ENOMEM;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(b);
			return EINVAL;
		}
		b[i] = (unsigned char)(hi * 16 + lo);
	}
	out->mv_data = b;
	out->mv_size = n / 2;
	return 0;
}

static void print_hex(const MDB_val *v)
{
	const unsigned char *p = v->mv_data;
	if (!v->mv_size)
		putchar('-');
	for (size_t i = 0; i < v->mv_size; i++)
		printf("%02x", p[i]);
}

typedef struct { uint64_t h; } fnv;

static void fnv_bytes(fnv *f, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		f->h ^= b[i];
		f->h *= 0x100000001b3ull;
	}
}

static void fnv_u64(fnv *f, uint64_t x)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(x >> (8 * i));
	fnv_bytes(f, b, 8);
}

static void fnv_field(fnv *f, const MDB_val *v)
{
	fnv_u64(f, v->mv_size);
	fnv_bytes(f, v->mv_data, v->mv_size);
}

static int ensure_dbi(MDB_txn *txn)
{
	if (have_dbi)
		return 0;
	int rc = mdb_dbi_open(txn, NULL, 0, &dbi);
	if (!rc)
		have_dbi = 1;
	return rc;
}

/* The held read txn, else a fresh one (*fresh = 1: the caller aborts it). */
static int reader(MDB_txn **txn, int *fresh)
{
	*fresh = 0;
	if (rtxn) {
		*txn = rtxn;
		return 0;
	}
	int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, txn);
	if (!rc)
		*fresh = 1;
	return rc;
}

static void cmd_digest(void)
{
	MDB_txn *txn;
	MDB_cursor *c;
	MDB_val k, v, empty = { 0, NULL };
	MDB_stat st;
	int fresh, rc;
	fnv f = { 0xcbf29ce484222325ull };

	if ((rc = reader(&txn, &fresh)))
		return answer_err(rc);
	if ((rc = ensure_dbi(txn)) || (rc = mdb_stat(txn, dbi, &st)) ||
	    (rc = mdb_cursor_open(txn, dbi, &c))) {
		if (fresh)
			mdb_txn_abort(txn);
		return answer_err(rc);
	}
	fnv_field(&f, &empty);
	fnv_u64(&f, st.ms_entries);
	uint64_t n = 0;
	while ((rc = mdb_cursor_get(c, &k, &v, n ? MDB_NEXT : MDB_FIRST)) == 0) {
		fnv_field(&f, &k);
		fnv_field(&f, &v);
		n++;
	}
	mdb_cursor_close(c);
	if (fresh)
		mdb_txn_abort(txn);
	if (rc != MDB_NOTFOUND)
		return answer_err(rc);
	if (n != st.ms_entries)
		return answer_err(MDB_CORRUPTED);
	answer_ok("%" PRIu64 " %016" PRIx64, n, f.h);
}

static void cmd_get(const char *hk)
{
	MDB_txn *txn;
	MDB_val k, v;
	int fresh, rc;
	if ((rc = unhex(hk, &k)))
		return answer_err(rc);
	if ((rc = reader(&txn, &fresh))) {
		free(k.mv_data);
		return answer_err(rc);
	}
	if (!(rc = ensure_dbi(txn)))
		rc = mdb_get(txn, dbi, &k, &v);
	free(k.mv_data);
	if (rc == MDB_NOTFOUND) {
		answer_ok("-");
	} else if (rc) {
		answer_err(rc);
	} else {
		fputs("@@ ok ", stdout);
		if (!v.mv_size)
			fputs("=", stdout);	/* present, empty */
		else
			print_hex(&v);
		putchar('\n');
		fflush(stdout);
	}
	if (fresh)
		mdb_txn_abort(txn);
}

static void cmd_open(const char *path, const char *mapsize)
{
	int rc;
	if ((rc = mdb_env_create(&env)) ||
	    (rc = mdb_env_set_mapsize(env, strtoull(mapsize, NULL, 10))) ||
	    (rc = mdb_env_open(env, path, MDB_NOSUBDIR, 0644))) {
		if (env)
			mdb_env_close(env);
		env = NULL;
		return answer_err(rc);
	}
	answer_ok("%d.%d.%d", MDB_VERSION_MAJOR, MDB_VERSION_MINOR, MDB_VERSION_PATCH);
}

int main(void)
{
	char line[1 << 16];
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		char *argv[4] = { 0 };
		int argc = 0;
		for (char *t = strtok(line, " \r\n"); t && argc < 4; t = strtok(NULL, " \r\n"))
			argv[argc++] = t;
		if (!argc)
			continue;
		const char *cmd = argv[0];
		int rc;
		if (!strcmp(cmd, "quit")) {
			break;
		} else if (!strcmp(cmd, "open") && argc == 3) {
			cmd_open(argv[1], argv[2]);
		} else if (!env) {
			answer_err(EINVAL);
		} else if (!strcmp(cmd, "rbegin")) {
			if (rtxn)
				answer_err(EINVAL);
			else if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &rtxn)))
				rtxn = NULL, answer_err(rc);
			else
				answer_ok("%zu", (size_t)mdb_txn_id(rtxn));
		} else if (!strcmp(cmd, "rend")) {
			if (rtxn)
				mdb_txn_abort(rtxn);
			rtxn = NULL;
			answer_ok(NULL);
		} else if (!strcmp(cmd, "wbegin")) {
			if (wtxn)
				answer_err(EINVAL);
			else if ((rc = mdb_txn_begin(env, NULL, 0, &wtxn)) || (rc = ensure_dbi(wtxn)))
				answer_err(rc);
			else
				answer_ok("%zu", (size_t)mdb_txn_id(wtxn));
		} else if (!strcmp(cmd, "put") && argc == 3 && wtxn) {
			MDB_val k, v;
			if ((rc = unhex(argv[1], &k)))
				answer_err(rc);
			else if ((rc = unhex(argv[2], &v)))
				free(k.mv_data), answer_err(rc);
			else {
				rc = mdb_put(wtxn, dbi, &k, &v, 0);
				free(k.mv_data);
				free(v.mv_data);
				rc ? answer_err(rc) : answer_ok(NULL);
			}
		} else if (!strcmp(cmd, "del") && argc == 2 && wtxn) {
			MDB_val k;
			if ((rc = unhex(argv[1], &k))) {
				answer_err(rc);
			} else {
				rc = mdb_del(wtxn, dbi, &k, NULL);
				free(k.mv_data);
				if (rc == MDB_NOTFOUND)
					answer_ok("0");
				else
					rc ? answer_err(rc) : answer_ok("1");
			}
		} else if (!strcmp(cmd, "commit") && wtxn) {
			size_t id = (size_t)mdb_txn_id(wtxn);
			rc = mdb_txn_commit(wtxn);
			wtxn = NULL;
			rc ? answer_err(rc) : answer_ok("%zu", id);
		} else if (!strcmp(cmd, "abort") && wtxn) {
			mdb_txn_abort(wtxn);
			wtxn = NULL;
			answer_ok(NULL);
		} else if (!strcmp(cmd, "get") && argc == 2) {
			cmd_get(argv[1]);
		} else if (!strcmp(cmd, "digest")) {
			cmd_digest();
		} else if (!strcmp(cmd, "readercheck")) {
			int dead = -1;
			rc = mdb_reader_check(env, &dead);
			rc ? answer_err(rc) : answer_ok("%d", dead);
		} else if (!strcmp(cmd, "info")) {
			MDB_envinfo ei;
			rc = mdb_env_info(env, &ei);
			rc ? answer_err(rc) : answer_ok("%zu %u", (size_t)ei.me_last_txnid, ei.me_numreaders);
		} else {
			answer_err(EINVAL);
		}
	}
	if (wtxn)
		mdb_txn_abort(wtxn);
	if (rtxn)
		mdb_txn_abort(rtxn);
	if (env)
		mdb_env_close(env);
	return 0;
}
