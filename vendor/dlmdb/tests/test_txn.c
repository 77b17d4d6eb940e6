/* Transactions: snapshots, reset/renew, abort, ids, the single writer,
 * error states (lmdb-api.md §3.2, §3.3, §4.3). */
#include <pthread.h>
#include <stdatomic.h>

#include "t.h"

static void test_snapshot_stable_during_commit(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "k", "v1"));

	MDB_txn *rd, *wr;
	MDB_val key = t_val("k"), data;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_EQ(mdb_txn_id(rd), 1);
	OK(mdb_get(rd, 1, &key, &data));
	CHECK_STR(data, "v1");

	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &wr));
	CHECK_EQ(mdb_txn_id(wr), 2);
	MDB_val v2 = t_val("v2"), k2 = t_val("new"), nv = t_val("x");
	OK(mdb_put(wr, 1, &key, &v2, 0));
	OK(mdb_put(wr, 1, &k2, &nv, 0));
	/* The writer sees its own changes, the reader does not. */
	OK(mdb_get(wr, 1, &key, &data));
	CHECK_STR(data, "v2");
	OK(mdb_get(rd, 1, &key, &data));
	CHECK_STR(data, "v1");
	OK(mdb_txn_commit(wr));

	/* Still the old snapshot after the commit. */
	OK(mdb_get(rd, 1, &key, &data));
	CHECK_STR(data, "v1");
	CHECK_RC(mdb_get(rd, 1, &k2, &data), MDB_NOTFOUND);
	CHECK_EQ(mdb_txn_id(rd), 1);
	MDB_stat st;
	OK(mdb_stat(rd, 1, &st));
	CHECK_EQ(st.ms_entries, 1);

	/* Many more commits while the reader stays open: its pages must not be
	 * recycled under it. */
	for (int i = 0; i < 50; i++) {
		char k[16], v[600];
		snprintf(k, sizeof k, "k%03d", i);
		memset(v, 'a' + i % 26, sizeof v - 1);
		v[sizeof v - 1] = 0;
		OK(t_put1(env, 1, k, v));
		OK(t_put1(env, 1, "k", v));
	}
	OK(mdb_get(rd, 1, &key, &data));
	CHECK_STR(data, "v1");
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(rd, 1, &cur));
	int n = 0;
	while (mdb_cursor_get(cur, &key, &data, MDB_NEXT) == 0)
		n++;
	CHECK_EQ(n, 1);
	mdb_cursor_close(cur);
	mdb_txn_abort(rd);

	CHECK(t_get_is(env, 1, "new", "x"));
	mdb_env_close(env);
}

static void test_reset_renew(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "k", "v1"));
	MDB_txn *rd;
	MDB_val key = t_val("k"), data;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	OK(mdb_get(rd, 1, &key, &data));
	CHECK_STR(data, "v1");
	/* Renew is only for a reset handle. */
	CHECK_RC(mdb_txn_renew(rd), EINVAL);
	mdb_txn_reset(rd);
	OK(t_put1(env, 1, "k", "v2"));
	OK(mdb_txn_renew(rd));
	CHECK_EQ(mdb_txn_id(rd), 2);
	OK(mdb_get(rd, 1, &key, &data));
	CHECK_STR(data, "v2");
	/* Reset + renew several times; the cursor is renewed along. */
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(rd, 1, &cur));
	for (int i = 3; i < 8; i++) {
		char v[16];
		mdb_txn_reset(rd);
		snprintf(v, sizeof v, "v%d", i);
		OK(t_put1(env, 1, "k", v));
		OK(mdb_txn_renew(rd));
		OK(mdb_cursor_renew(rd, cur));
		OK(mdb_cursor_get(cur, &key, &data, MDB_FIRST));
		CHECK_STR(data, v);
		CHECK_EQ(mdb_txn_id(rd), (unsigned)i);
	}
	mdb_cursor_close(cur);
	/* A reset handle may be aborted without renewing it. */
	mdb_txn_reset(rd);
	mdb_txn_abort(rd);

	/* reset is ignored for write transactions; renew of a write txn: EINVAL. */
	MDB_txn *wr;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &wr));
	mdb_txn_reset(wr);
	CHECK_RC(mdb_txn_renew(wr), EINVAL);
	MDB_val k2 = t_val("w"), v = t_val("1");
	OK(mdb_put(wr, 1, &k2, &v, 0));
	OK(mdb_txn_commit(wr));
	CHECK(t_get_is(env, 1, "w", "1"));
	mdb_txn_reset(NULL);
	mdb_txn_abort(NULL);
	mdb_env_close(env);
}

static void test_abort_discards(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 2);
	REQUIRE(env);
	OK(t_put1(env, 1, "keep", "1"));
	MDB_envinfo before, after;
	OK(mdb_env_info(env, &before));

	MDB_txn *wr;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &wr));
	MDB_val k = t_val("gone"), v = t_val("2"), kk = t_val("keep");
	OK(mdb_put(wr, 1, &k, &v, 0));
	OK(mdb_del(wr, 1, &kk, NULL));
	OK(mdb_dbi_open(wr, "sub", MDB_CREATE, &dbi));
	OK(mdb_put(wr, dbi, &k, &v, 0));
	char big[10000];
	memset(big, 'b', sizeof big);
	MDB_val bv = t_mem(big, sizeof big);
	OK(mdb_put(wr, 1, &v, &bv, 0));
	mdb_txn_abort(wr);

	OK(mdb_env_info(env, &after));
	CHECK_EQ(after.me_last_txnid, before.me_last_txnid);
	CHECK_EQ(after.me_last_pgno, before.me_last_pgno);
	CHECK(t_get_is(env, 1, "keep", "1"));
	CHECK(t_get_is(env, 1, "gone", NULL));
	CHECK(t_get_is(env, 1, "2", NULL));
	/* The named DB created in the aborted txn does not exist. */
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	CHECK_RC(mdb_dbi_open(rd, "sub", 0, &dbi), MDB_NOTFOUND);
	mdb_txn_abort(rd);
	/* The next writer gets the same id the aborted one had. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &wr));
	CHECK_EQ(mdb_txn_id(wr), before.me_last_txnid + 1);
	mdb_txn_abort(wr);
	mdb_env_close(env);
}

static void test_txn_id_and_env(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	CHECK_EQ(mdb_txn_id(NULL), 0);
	CHECK(mdb_txn_env(NULL) == NULL);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_EQ(mdb_txn_id(txn), 0);
	CHECK(mdb_txn_env(txn) == env);
	mdb_txn_abort(txn);
	for (unsigned i = 1; i <= 3; i++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		CHECK_EQ(mdb_txn_id(txn), i);
		CHECK(mdb_txn_env(txn) == env);
		MDB_val k = t_val("k"), v = t_val("v");
		OK(mdb_put(txn, 1, &k, &v, 0));
		OK(mdb_txn_commit(txn));
	}
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_EQ(mdb_txn_id(txn), 3);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
static mdb_size_t last_committed(MDB_env *env)
{
	MDB_envinfo info;
	return mdb_env_info(env, &info) ? (mdb_size_t)-1 : info.me_last_txnid;
}

/* mdb_txn_changed answers whether a commit now would write a new meta page:
 * the id a caller reports for its commit hangs on it. */
static void test_changed_says_whether_commit_writes(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64 * 4096, 4);
	REQUIRE(env);
	CHECK_EQ(mdb_txn_changed(NULL), 0);
	OK(t_put1(env, 1, "a", "1"));
	mdb_size_t before = last_committed(env);
	MDB_txn *txn, *child;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	CHECK_EQ(mdb_txn_changed(txn), 0);
	mdb_txn_abort(txn);

	/* Nothing, or only refused writes: the commit leaves the store as is. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_EQ(mdb_txn_changed(txn), 0);
	MDB_val k = t_val("a"), v = t_val("2");
	CHECK_RC(mdb_put(txn, 1, &k, &v, MDB_NOOVERWRITE), MDB_KEYEXIST);
	MDB_val missing = t_val("zz");
	CHECK_RC(mdb_del(txn, 1, &missing, NULL), MDB_NOTFOUND);
	CHECK_EQ(mdb_txn_changed(txn), 0);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(last_committed(env), before);

	/* A put: committed under the txn's own id. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	mdb_size_t id = mdb_txn_id(txn);
	k = t_val("b");
	OK(mdb_put(txn, 1, &k, &v, 0));
	CHECK_EQ(mdb_txn_changed(txn), 1);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(last_committed(env), id);
	before = id;

	/* A named database created and nothing else. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_dbi dbi;
	OK(mdb_dbi_open(txn, "named", MDB_CREATE, &dbi));
	CHECK_EQ(mdb_txn_changed(txn), 1);
	mdb_txn_abort(txn);

	/* Nested: a live child's change counts (committing the parent commits
	 * it), an aborted child's does not. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	k = t_val("c");
	OK(mdb_put(child, 1, &k, &v, 0));
	CHECK_EQ(mdb_txn_changed(child), 1);
	CHECK_EQ(mdb_txn_changed(txn), 1);
	mdb_txn_abort(child);
	CHECK_EQ(mdb_txn_changed(txn), 0);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(last_committed(env), before);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	OK(mdb_put(child, 1, &k, &v, 0));
	OK(mdb_txn_commit(child));
	CHECK_EQ(mdb_txn_changed(txn), 1);
	id = mdb_txn_id(txn);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(last_committed(env), id);
	before = id;

	/* A failed txn writes nothing, whatever it changed first. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	char big[1500];
	memset(big, 'v', sizeof big);
	int rc = 0;
	for (int i = 0; i < 1000 && rc == 0; i++) {
		char key[16];
		snprintf(key, sizeof key, "k%06d", i);
		MDB_val kk = t_val(key), data = t_mem(big, sizeof big);
		rc = mdb_put(txn, 1, &kk, &data, 0);
	}
	CHECK_RC(rc, MDB_MAP_FULL);
	CHECK_EQ(mdb_txn_changed(txn), 0);
	CHECK_RC(mdb_txn_commit(txn), MDB_BAD_TXN);
	CHECK_EQ(last_committed(env), before);
	mdb_env_close(env);
}
#endif

static void test_readonly_txn_rejects_writes(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "a", "1"));
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	MDB_val k = t_val("a"), v = t_val("2");
	CHECK_RC(mdb_put(rd, 1, &k, &v, 0), EACCES);
	CHECK_RC(mdb_del(rd, 1, &k, NULL), EACCES);
	CHECK_RC(mdb_drop(rd, 1, 0), EACCES);
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(rd, 1, &cur));
	OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
	CHECK_RC(mdb_cursor_put(cur, &k, &v, 0), EACCES);
	CHECK_RC(mdb_cursor_del(cur, 0), EACCES);
	mdb_cursor_close(cur);
	/* The failed writes did not spoil the read transaction. */
	k = t_val("a");
	OK(mdb_get(rd, 1, &k, &v));
	CHECK_STR(v, "1");
	OK(mdb_txn_commit(rd));
	mdb_env_close(env);
}

static void test_one_read_txn_per_thread(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *a, *b = NULL;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &a));
	CHECK_RC(mdb_txn_begin(env, NULL, MDB_RDONLY, &b), MDB_BAD_RSLOT);
	mdb_txn_abort(a);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &a));
	mdb_txn_abort(a);
	mdb_env_close(env);

	/* With NOTLS a thread may hold several read transactions. */
	env = t_env_open(t_dir, MDB_NOTLS, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "x", "1"));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &a));
	OK(t_put1(env, 1, "x", "2"));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &b));
	MDB_val k = t_val("x"), v;
	OK(mdb_get(a, 1, &k, &v));
	CHECK_STR(v, "1");
	OK(mdb_get(b, 1, &k, &v));
	CHECK_STR(v, "2");
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	CHECK(info.me_numreaders >= 2);
	mdb_txn_abort(a);
	mdb_txn_abort(b);
	mdb_env_close(env);
}

/* ---- the single writer ---------------------------------------------------- */

struct writer_arg {
	MDB_env *env;
	atomic_int began;   /* 1 once the second writer's mdb_txn_begin returned */
	int rc;
	int saw_first;      /* the second writer saw the first one's commit */
};

static void *second_writer(void *p)
{
	struct writer_arg *a = p;
	MDB_txn *txn;
	int rc = mdb_txn_begin(a->env, NULL, 0, &txn);
	atomic_store(&a->began, 1);
	a->rc = rc;
	if (rc == 0) {
		MDB_val k = t_val("first"), v;
		a->saw_first = mdb_get(txn, 1, &k, &v) == 0;
		k = t_val("second");
		v = t_val("2");
		a->rc = mdb_put(txn, 1, &k, &v, 0);
		if (a->rc == 0)
			a->rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	return NULL;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void test_single_writer_blocks(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	struct writer_arg arg = { .env = env };
	atomic_init(&arg.began, 0);
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, second_writer, &arg) == 0);
	sleep_ms(300);
	CHECK(atomic_load(&arg.began) == 0); /* still waiting for the writer lock */
	MDB_val k = t_val("first"), v = t_val("1");
	OK(mdb_put(txn, 1, &k, &v, 0));
	OK(mdb_txn_commit(txn));
	pthread_join(th, NULL);
	CHECK(atomic_load(&arg.began) == 1);
	OK(arg.rc);
	CHECK(arg.saw_first);
	CHECK(t_get_is(env, 1, "second", "2"));

	/* Same with abort releasing the lock. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	struct writer_arg arg2 = { .env = env };
	atomic_init(&arg2.began, 0);
	REQUIRE(pthread_create(&th, NULL, second_writer, &arg2) == 0);
	sleep_ms(200);
	CHECK(atomic_load(&arg2.began) == 0);
	mdb_txn_abort(txn);
	pthread_join(th, NULL);
	OK(arg2.rc);
	mdb_env_close(env);
}

/* Readers in other threads keep consistent snapshots while a writer moves
 * value between two keys: the sum never changes. */
struct reader_arg {
	MDB_env *env;
	atomic_int *stop;
	int bad;
	int reads;
};

static void *sum_reader(void *p)
{
	struct reader_arg *a = p;
	while (!atomic_load(a->stop)) {
		MDB_txn *txn;
		if (mdb_txn_begin(a->env, NULL, MDB_RDONLY, &txn) != 0) {
			a->bad++;
			break;
		}
		long sum = 0;
		MDB_cursor *cur;
		MDB_val k, v;
		if (mdb_cursor_open(txn, 1, &cur) == 0) {
			while (mdb_cursor_get(cur, &k, &v, MDB_NEXT) == 0) {
				long x;
				if (v.mv_size != sizeof x) {
					a->bad++;
					break;
				}
				memcpy(&x, v.mv_data, sizeof x);
				sum += x;
			}
			mdb_cursor_close(cur);
		}
		if (sum != 100 * 1000)
			a->bad++;
		a->reads++;
		mdb_txn_abort(txn);
	}
	return NULL;
}

static void test_concurrent_readers(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 100; i++) {
		char k[16];
		long x = 1000;
		snprintf(k, sizeof k, "acct%04d", i);
		MDB_val key = t_val(k), v = t_mem(&x, sizeof x);
		OK(mdb_put(txn, 1, &key, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));

	atomic_int stop;
	atomic_init(&stop, 0);
	struct reader_arg ra[2] = { { env, &stop, 0, 0 }, { env, &stop, 0, 0 } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&th[i], NULL, sum_reader, &ra[i]) == 0);
	uint64_t seed = 12345;
	for (int round = 0; round < 300; round++) {
		int a = (int)(t_rand(&seed) % 100), b = (int)(t_rand(&seed) % 100);
		char ka[16], kb[16];
		snprintf(ka, sizeof ka, "acct%04d", a);
		snprintf(kb, sizeof kb, "acct%04d", b);
		if (mdb_txn_begin(env, NULL, 0, &txn) != 0)
			break;
		MDB_val k1 = t_val(ka), k2 = t_val(kb), v;
		long x, y;
		OK(mdb_get(txn, 1, &k1, &v));
		memcpy(&x, v.mv_data, sizeof x);
		OK(mdb_get(txn, 1, &k2, &v));
		memcpy(&y, v.mv_data, sizeof y);
		long amt = (long)(t_rand(&seed) % 50);
		if (a != b) {
			x -= amt;
			y += amt;
		}
		v = t_mem(&x, sizeof x);
		OK(mdb_put(txn, 1, &k1, &v, 0));
		v = t_mem(&y, sizeof y);
		OK(mdb_put(txn, 1, &k2, &v, 0));
		OK(mdb_txn_commit(txn));
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(ra[0].bad + ra[1].bad, 0);
	CHECK(ra[0].reads > 0 && ra[1].reads > 0);
	mdb_env_close(env);
}

/* ---- error states -------------------------------------------------------- */

static void test_nonfatal_errors_keep_txn(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_val k = t_val("a"), v = t_val("1"), d;
	OK(mdb_put(txn, 1, &k, &v, 0));
	MDB_val missing = t_val("zz");
	CHECK_RC(mdb_get(txn, 1, &missing, &d), MDB_NOTFOUND);
	CHECK_RC(mdb_del(txn, 1, &missing, NULL), MDB_NOTFOUND);
	CHECK_RC(mdb_put(txn, 1, &k, &v, MDB_NOOVERWRITE), MDB_KEYEXIST);
	MDB_val empty = t_mem("", 0);
	CHECK_RC(mdb_put(txn, 1, &empty, &v, 0), MDB_BAD_VALSIZE);
	CHECK_RC(mdb_put(txn, 1, &k, &v, MDB_CURRENT), EINVAL);
	MDB_val k2 = t_val("b");
	OK(mdb_put(txn, 1, &k2, &v, 0));
	OK(mdb_txn_commit(txn));
	CHECK(t_get_is(env, 1, "a", "1"));
	CHECK(t_get_is(env, 1, "b", "1"));
	mdb_env_close(env);
}

static void test_map_full_poisons_txn(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64 * 4096, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "before", "ok"));
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	char val[1500];
	memset(val, 'v', sizeof val);
	int rc = 0, i;
	for (i = 0; i < 10000 && rc == 0; i++) {
		char k[16];
		snprintf(k, sizeof k, "k%06d", i);
		MDB_val key = t_val(k), data = t_mem(val, sizeof val);
		rc = mdb_put(txn, 1, &key, &data, 0);
	}
	CHECK_RC(rc, MDB_MAP_FULL);
	MDB_val key = t_val("another"), data = t_val("x");
	CHECK_RC(mdb_put(txn, 1, &key, &data, 0), MDB_BAD_TXN);
	CHECK_RC(mdb_get(txn, 1, &key, &data), MDB_BAD_TXN);
	MDB_cursor *cur;
	CHECK_RC(mdb_cursor_open(txn, 1, &cur), MDB_BAD_TXN);
	CHECK_RC(mdb_txn_commit(txn), MDB_BAD_TXN); /* also frees the handle */

	/* The environment is unharmed. */
	CHECK(t_get_is(env, 1, "before", "ok"));
	OK(t_put1(env, 1, "after", "fine"));
	CHECK(t_get_is(env, 1, "after", "fine"));
	CHECK(t_get_is(env, 1, "k000000", NULL));
	mdb_env_close(env);
}

static void test_commit_of_failed_abort_path(void)
{
	/* Same as above but the failed transaction is aborted, the usual way. */
	MDB_env *env = t_env_open(t_dir, 0, 32 * 4096, 0);
	REQUIRE(env);
	MDB_txn *txn;
	for (int round = 0; round < 3; round++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		char val[3000];
		memset(val, 'a' + round, sizeof val);
		int rc = 0;
		for (int i = 0; i < 1000 && rc == 0; i++) {
			char k[32];
			snprintf(k, sizeof k, "r%d-%04d", round, i);
			MDB_val key = t_val(k), data = t_mem(val, sizeof val);
			rc = mdb_put(txn, 1, &key, &data, 0);
		}
		CHECK_RC(rc, MDB_MAP_FULL);
		mdb_txn_abort(txn);
	}
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_last_txnid, 0);
	OK(t_put1(env, 1, "k", "v"));
	CHECK(t_get_is(env, 1, "k", "v"));
	mdb_env_close(env);
}

/* ---- reader slots ----------------------------------------------------------- */

static void test_readers_full(void)
{
	MDB_env *env;
	REQUIRE_OK(mdb_env_create(&env));
	OK(mdb_env_set_maxreaders(env, 2));
	REQUIRE_OK(mdb_env_open(env, t_dir, MDB_NOTLS, 0644));
	MDB_txn *a, *b, *c = NULL;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &a));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &b));
	CHECK_RC(mdb_txn_begin(env, NULL, MDB_RDONLY, &c), MDB_READERS_FULL);
	/* With NOTLS, abort gives the slot back. */
	mdb_txn_abort(a);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &c));
	/* reset keeps the slot: still full */
	mdb_txn_reset(b);
	CHECK_RC(mdb_txn_begin(env, NULL, MDB_RDONLY, &a), MDB_READERS_FULL);
	OK(mdb_txn_renew(b));
	mdb_txn_abort(b);
	mdb_txn_abort(c);
	/* Writers do not need reader slots. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &a));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &b));
	MDB_txn *w;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	MDB_dbi dbi;
	OK(mdb_dbi_open(w, NULL, 0, &dbi));
	MDB_val k = t_val("k"), v = t_val("v");
	OK(mdb_put(w, dbi, &k, &v, 0));
	OK(mdb_txn_commit(w));
	mdb_txn_abort(a);
	mdb_txn_abort(b);
	mdb_env_close(env);
}

struct slot_arg {
	MDB_env *env;
	int rc;
};

static void *one_read(void *p)
{
	struct slot_arg *a = p;
	MDB_txn *txn;
	a->rc = mdb_txn_begin(a->env, NULL, MDB_RDONLY, &txn);
	if (a->rc == 0)
		mdb_txn_abort(txn);
	return NULL;
}

/* Without NOTLS a slot belongs to its thread and is freed when the thread
 * exits, so many short-lived threads never exhaust a small table. */
static void test_reader_slots_freed_at_thread_exit(void)
{
	MDB_env *env;
	REQUIRE_OK(mdb_env_create(&env));
	OK(mdb_env_set_maxreaders(env, 3));
	REQUIRE_OK(mdb_env_open(env, t_dir, 0, 0644));
	int bad = 0;
	for (int i = 0; i < 20; i++) {
		struct slot_arg a = { env, -1 };
		pthread_t th;
		REQUIRE(pthread_create(&th, NULL, one_read, &a) == 0);
		pthread_join(th, NULL);
		if (a.rc != 0) {
			if (bad++ == 0)
				T_FAIL("thread %d: read txn begin gave %d (%s)", i, a.rc,
				       mdb_strerror(a.rc));
		}
	}
	CHECK_EQ(bad, 0);
	mdb_env_close(env);
}

struct cross_arg {
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc;
	char val[16];
};

static void *use_foreign_txn(void *p)
{
	struct cross_arg *a = p;
	MDB_val k = t_val("k"), v;
	a->rc = mdb_get(a->txn, a->dbi, &k, &v);
	if (a->rc == 0)
		snprintf(a->val, sizeof a->val, "%.*s", (int)v.mv_size, (char *)v.mv_data);
	return NULL;
}

/* With NOTLS a read txn may move between threads (one at a time). */
static void test_notls_txn_crosses_threads(void)
{
	MDB_env *env = t_env_open(t_dir, MDB_NOTLS, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "k", "old"));
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	OK(t_put1(env, 1, "k", "new"));
	struct cross_arg a = { rd, 1, -1, "" };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, use_foreign_txn, &a) == 0);
	pthread_join(th, NULL);
	OK(a.rc);
	CHECK(strcmp(a.val, "old") == 0);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

/* ---- renew after named DBs changed ------------------------------------ */

/* What a txn sees of one DB: stat, a full scan and one lookup. */
struct db_sum {
	int statrc, scanrc, getrc;
	unsigned long long entries, depth, n, hash;
};

static struct db_sum t_db_sum(MDB_txn *txn, MDB_dbi dbi)
{
	struct db_sum s;
	MDB_stat st;
	MDB_cursor *cur;
	MDB_val k, v;
	memset(&s, 0, sizeof s);
	s.statrc = mdb_stat(txn, dbi, &st);
	if (s.statrc == 0) {
		s.entries = st.ms_entries;
		s.depth = st.ms_depth;
	}
	s.hash = 1469598103934665603ull;
	s.scanrc = mdb_cursor_open(txn, dbi, &cur);
	if (s.scanrc == 0) {
		while ((s.scanrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
			s.n++;
			for (size_t i = 0; i < k.mv_size; i++)
				s.hash = (s.hash ^ ((unsigned char *)k.mv_data)[i]) * 1099511628211ull;
			for (size_t i = 0; i < v.mv_size; i++)
				s.hash = (s.hash ^ ((unsigned char *)v.mv_data)[i]) * 1099511628211ull;
			s.hash *= 31;
		}
		mdb_cursor_close(cur);
	}
	k = t_val("k00001");
	s.getrc = mdb_get(txn, dbi, &k, &v);
	if (s.getrc == 0)
		s.hash ^= v.mv_size;
	return s;
}

#define CHECK_SUM(a, b) do { \
	CHECK_EQ((a).statrc, (b).statrc); CHECK_EQ((a).scanrc, (b).scanrc); \
	CHECK_EQ((a).getrc, (b).getrc); CHECK_EQ((a).entries, (b).entries); \
	CHECK_EQ((a).depth, (b).depth); CHECK_EQ((a).n, (b).n); \
	CHECK_EQ((a).hash, (b).hash); \
} while (0)

/* Put n keys k00000.. with values "<tag><i>" into DB name (created). */
static int t_fill(MDB_env *env, const char *name, int n, const char *tag, MDB_dbi *dbip)
{
	MDB_txn *txn;
	MDB_dbi dbi;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_dbi_open(txn, name, MDB_CREATE, &dbi)))
		goto fail;
	for (int i = 0; i < n; i++) {
		char kb[16], vb[64];
		snprintf(kb, sizeof kb, "k%05d", i);
		snprintf(vb, sizeof vb, "%s%d-%040d", tag, i, i);
		MDB_val k = t_val(kb), v = t_val(vb);
		if ((rc = mdb_put(txn, dbi, &k, &v, 0)))
			goto fail;
	}
	if (dbip)
		*dbip = dbi;
	return mdb_txn_commit(txn);
fail:
	mdb_txn_abort(txn);
	return rc;
}

/* Renew the reset txn rd and check it sees, through every handle in dbis,
 * exactly what a fresh read txn sees. */
static void t_renew_matches_fresh(MDB_env *env, MDB_txn *rd, const MDB_dbi *dbis, int n,
	const char *what)
{
	struct db_sum want[8], got;
	MDB_txn *f;
	int failed0 = t_failures;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &f));
	for (int i = 0; i < n; i++)
		want[i] = t_db_sum(f, dbis[i]);
	unsigned long long id = mdb_txn_id(f);
	mdb_txn_abort(f);
	REQUIRE_OK(mdb_txn_renew(rd));
	CHECK_EQ(mdb_txn_id(rd), id);
	for (int i = 0; i < n; i++) {
		got = t_db_sum(rd, dbis[i]);
		CHECK_SUM(got, want[i]);
	}
	if (t_failures != failed0)
		fprintf(stderr, "  (step: %s)\n", what);
}

static void t_renew_named_dbs(unsigned envflags, const char *dir)
{
	MDB_env *env = t_env_open(dir, envflags, 64u << 20, 8);
	REQUIRE(env);
	MDB_dbi a, b, c, e, f, c2;
	REQUIRE_OK(t_fill(env, "a", 20, "a", &a));
	REQUIRE_OK(t_fill(env, "b", 5, "b", &b));
	REQUIRE_OK(t_fill(env, "c", 3, "c", &c));
	REQUIRE_OK(t_fill(env, "e", 4, "e", &e));
	REQUIRE_OK(t_fill(env, "f", 6, "f", &f));
	mdb_dbi_close(env, e);	/* on disk, no handle */
	mdb_dbi_close(env, f);

	MDB_txn *rd, *w;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	MDB_dbi all[3] = { a, b, c };
	for (int i = 0; i < 3; i++)
		CHECK_EQ(t_db_sum(rd, all[i]).statrc, 0);

	/* Nothing changed. */
	mdb_txn_reset(rd);
	t_renew_matches_fresh(env, rd, all, 3, "no change");
	for (int i = 0; i < 3; i++)
		CHECK_EQ(t_db_sum(rd, all[i]).statrc, 0);	/* records loaded */

	/* A DB grows (its depth too) while rd is reset. */
	mdb_txn_reset(rd);
	REQUIRE_OK(t_fill(env, "a", 3000, "A", NULL));
	t_renew_matches_fresh(env, rd, all, 3, "a grown");

	/* A DB emptied (handle stays). */
	mdb_txn_reset(rd);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	OK(mdb_drop(w, b, 0));
	REQUIRE_OK(mdb_txn_commit(w));
	t_renew_matches_fresh(env, rd, all, 3, "b emptied");

	/* A DB deleted, then created again under the same name. */
	mdb_txn_reset(rd);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	OK(mdb_drop(w, c, 1));
	REQUIRE_OK(mdb_txn_commit(w));
	REQUIRE_OK(t_fill(env, "c", 7, "C", &c2));
	MDB_dbi set4[4] = { a, b, c2, c };
	t_renew_matches_fresh(env, rd, set4, c2 == c ? 3 : 4, "c dropped and recreated");
	all[2] = c2;

	/* Same snapshot, but a handle opened meanwhile (empty commit). */
	mdb_txn_reset(rd);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
	REQUIRE_OK(mdb_dbi_open(w, "e", 0, &e));
	REQUIRE_OK(mdb_txn_commit(w));
	MDB_dbi set5[4] = { a, b, c2, e };
	t_renew_matches_fresh(env, rd, set5, 4, "handle e opened, same snapshot");

	/* A handle opened by rd itself goes away with the reset. */
	REQUIRE_OK(mdb_dbi_open(rd, "f", 0, &f));
	CHECK_EQ(t_db_sum(rd, f).n, 6);
	mdb_txn_reset(rd);
	MDB_dbi set6[4] = { a, b, c2, f };
	t_renew_matches_fresh(env, rd, set6, 4, "handle f opened by the reset txn");

	/* Another process deletes, grows and creates DBs. */
	mdb_txn_reset(rd);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		MDB_env *e2 = t_env_open_rc(dir, envflags, 64u << 20, 8, NULL);
		MDB_txn *t;
		MDB_dbi d;
		int rc = e2 ? 0 : 1;
		if (!rc)
			rc = t_fill(e2, "b", 50, "B", NULL);
		if (!rc)
			rc = t_fill(e2, "g", 2, "g", NULL);
		if (!rc)
			rc = mdb_txn_begin(e2, NULL, 0, &t);
		if (!rc) {
			rc = mdb_dbi_open(t, "c", 0, &d);
			if (!rc)
				rc = mdb_drop(t, d, 1);
			if (!rc)
				rc = mdb_txn_commit(t);
			else
				mdb_txn_abort(t);
		}
		if (e2)
			mdb_env_close(e2);
		_exit(rc ? 1 : 0);
	}
	REQUIRE(pid > 0);
	int status = -1;
	waitpid(pid, &status, 0);
	REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#ifdef STOCK_LMDB
	/* Stock LMDB keeps serving the record of a DB deleted by another
	 * process through a handle opened before (a fresh txn reports it
	 * empty): leave c out there. */
	int nall = 2;
#else
	int nall = 3;
#endif
	t_renew_matches_fresh(env, rd, all, nall, "changed by another process");
	MDB_dbi g;
	OK(mdb_dbi_open(rd, "g", 0, &g));
	CHECK_EQ(t_db_sum(rd, g).n, 2);

	/* And after a plain commit to the main DB only. */
	mdb_txn_reset(rd);
	REQUIRE_OK(t_fill(env, NULL, 1, "m", NULL));
	t_renew_matches_fresh(env, rd, all, nall, "main DB changed");
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

/* Reset leaves a read txn's DB table alone and renew rebuilds only what
 * changed: every open handle must still see exactly the new snapshot. */
static void test_renew_sees_named_db_changes(void)
{
	char d1[512], d2[512];
	snprintf(d1, sizeof d1, "%s", t_path("tls"));
	snprintf(d2, sizeof d2, "%s", t_path("notls"));
	REQUIRE(mkdir(d1, 0755) == 0 && mkdir(d2, 0755) == 0);
	t_renew_named_dbs(0, d1);
	t_renew_named_dbs(MDB_NOTLS, d2);
}

/* ---- a writer thread that dies inside its txn ------------------------- */

struct dying_writer {
	MDB_env *env;
	int nested;
	int rc;
};

static void *t_begin_write_and_die(void *p)
{
	struct dying_writer *d = p;
	MDB_txn *t, *c;
	MDB_val k = t_val("lost"), v = t_val("1");
	d->rc = mdb_txn_begin(d->env, NULL, 0, &t);
	if (d->rc == 0 && d->nested)
		d->rc = mdb_txn_begin(d->env, t, 0, &c);
	if (d->rc == 0)
		d->rc = mdb_put(d->nested ? c : t, 1, &k, &v, 0);
	pthread_exit(NULL);
}

/* As in LMDB: when the thread holding an env's write txn exits without
 * ending it, the next write txn of that env fails with MDB_PANIC and the
 * env is dead from then on; other processes go on writing. */
static void t_dead_writer_thread(int nested, const char *dir)
{
	MDB_env *env = t_env_open(dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "k", "v"));
	struct dying_writer d = { env, nested, -1 };
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, t_begin_write_and_die, &d) == 0);
	pthread_join(th, NULL);
	REQUIRE_OK(d.rc);

	MDB_txn *t;
	CHECK_RC(mdb_txn_begin(env, NULL, 0, &t), MDB_PANIC);
	CHECK_RC(mdb_txn_begin(env, NULL, 0, &t), MDB_PANIC);
	CHECK_RC(mdb_txn_begin(env, NULL, MDB_RDONLY, &t), MDB_PANIC);

	/* Another process may write. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		MDB_env *e2 = t_env_open_rc(dir, 0, 0, 0, NULL);
		int rc = e2 ? t_put1(e2, 1, "other", "2") : 1;
		if (e2)
			mdb_env_close(e2);
		_exit(rc ? 1 : 0);
	}
	REQUIRE(pid > 0);
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	mdb_env_close(env);

	/* A new env handle works, without the dead thread's change. */
	env = t_env_open(dir, 0, 0, 0);
	REQUIRE(env);
	CHECK(t_get_is(env, 1, "k", "v"));
	CHECK(t_get_is(env, 1, "other", "2"));
	CHECK(t_get_is(env, 1, "lost", NULL));
	OK(t_put1(env, 1, "k", "v2"));
	CHECK(t_get_is(env, 1, "k", "v2"));
	mdb_env_close(env);
}

static void test_dead_writer_thread_panics(void)
{
	char d1[512], d2[512];
	snprintf(d1, sizeof d1, "%s", t_path("flat"));
	snprintf(d2, sizeof d2, "%s", t_path("nested"));
	REQUIRE(mkdir(d1, 0755) == 0 && mkdir(d2, 0755) == 0);
	t_dead_writer_thread(0, d1);
	t_dead_writer_thread(1, d2);
}

int main(void)
{
	RUN(test_snapshot_stable_during_commit);
	RUN(test_reset_renew);
	RUN(test_abort_discards);
	RUN(test_txn_id_and_env);
#ifndef STOCK_LMDB
	RUN(test_changed_says_whether_commit_writes);
#endif
	RUN(test_readonly_txn_rejects_writes);
	RUN(test_one_read_txn_per_thread);
	RUN(test_single_writer_blocks);
	RUN(test_concurrent_readers);
	RUN(test_nonfatal_errors_keep_txn);
	RUN(test_map_full_poisons_txn);
	RUN(test_commit_of_failed_abort_path);
	RUN(test_readers_full);
	RUN(test_reader_slots_freed_at_thread_exit);
	RUN(test_notls_txn_crosses_threads);
	RUN(test_renew_sees_named_db_changes);
	RUN(test_dead_writer_thread_panics);
	T_DONE();
}
