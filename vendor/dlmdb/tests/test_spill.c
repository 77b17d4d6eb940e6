/* Bounded dirty set of write transactions (spill.c): with a tiny limit set
 * through DLMDB_DIRTY_LIMIT, transactions write pages to the data file
 * before commit, reload them when touched again, and nested transactions
 * keep their parent's view on abort and merge on commit.  Everything is
 * checked against an in-memory model.
 *
 * That spilling happened is seen from outside: the data file grows while
 * the transaction is still open (nothing else writes before commit).
 *
 * DLMDB_SEED=<n> picks the model test's seed (default fixed). */
#include "t.h"

#define NK 4000		/* key space */
#define MAXV 24000	/* longest value (overflow runs) */
#define MAIN 1		/* the main DB handle */

static void set_limit(const char *pages)
{
	setenv("DLMDB_DIRTY_LIMIT", pages, 1);
}

/* Key number of a key written by key_of (keys are not NUL-terminated). */
static unsigned id_of(const MDB_val *k)
{
	unsigned id = 0;
	const char *p = k->mv_data;
	for (size_t i = 1; i < k->mv_size; i++)
		id = id * 10 + (unsigned)(p[i] - '0');
	return k->mv_size == 8 ? id : ~0u;
}

static void key_of(unsigned id, char buf[16], MDB_val *k)
{
	snprintf(buf, 16, "k%07u", id);
	k->mv_size = 8;
	k->mv_data = buf;
}

/* Value of key id at version ver: length and bytes follow from both. */
static size_t val_len(unsigned id, unsigned ver)
{
	unsigned h = (id * 2654435761u) ^ (ver * 40503u);
	if (h % 97 == 0)
		return 5000 + h % (MAXV - 5000);	/* an overflow run */
	return 1 + h % 300;
}

static void val_fill(unsigned id, unsigned ver, unsigned char *buf, size_t len)
{
	uint64_t s = ((uint64_t)id << 32) ^ ver ^ 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(t_rand(&s) >> 56);
}

static int val_is(unsigned id, unsigned ver, const MDB_val *v)
{
	static unsigned char buf[MAXV];
	size_t len = val_len(id, ver);
	if (v->mv_size != len)
		return 0;
	val_fill(id, ver, buf, len);
	return memcmp(buf, v->mv_data, len) == 0;
}

static int put_ver(MDB_txn *txn, MDB_dbi dbi, unsigned id, unsigned ver)
{
	static unsigned char buf[MAXV];
	char kb[16];
	MDB_val k, v;
	key_of(id, kb, &k);
	v.mv_size = val_len(id, ver);
	val_fill(id, ver, buf, v.mv_size);
	v.mv_data = buf;
	return mdb_put(txn, dbi, &k, &v, 0);
}

static long long data_size(void)
{
	return t_file_size(t_path("data.mdb"));
}

/* Model: version of each key, 0 = absent. */
typedef struct { unsigned ver[NK]; } model_t;

/* Every key of the model (and nothing else) through gets and one cursor
 * walk.  Returns the number of mismatches. */
static int check_txn(MDB_txn *txn, MDB_dbi dbi, const model_t *m)
{
	int bad = 0;
	char kb[16];
	MDB_val k, v;
	for (unsigned id = 0; id < NK; id++) {
		key_of(id, kb, &k);
		int rc = mdb_get(txn, dbi, &k, &v);
		if (m->ver[id] ? (rc || !val_is(id, m->ver[id], &v)) : rc != MDB_NOTFOUND)
			bad++;
	}
	MDB_cursor *c;
	if (mdb_cursor_open(txn, dbi, &c))
		return bad + 1;
	unsigned next = 0;
	int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		unsigned id = id_of(&k);
		while (next < NK && !m->ver[next])
			next++;
		if (id != next || !val_is(id, m->ver[id], &v))
			bad++;
		next = id + 1;
	}
	while (next < NK && !m->ver[next])
		next++;
	if (rc != MDB_NOTFOUND || next != NK)
		bad++;
	mdb_cursor_close(c);
	return bad;
}

static int check_env(MDB_env *env, MDB_dbi dbi, const model_t *m)
{
	MDB_txn *txn;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))
		return 1;
	int bad = check_txn(txn, dbi, m);
	mdb_txn_abort(txn);
	return bad;
}

/* One big txn under a limit of 16 pages: the file grows before commit,
 * everything reads back inside the txn and after commit; a second txn
 * updates and deletes across the spilled pages, aborts (the store is as
 * committed), then does it again and commits. */
static void spill_basic(unsigned flags)
{
	static model_t m, m2;
	set_limit("16");
	MDB_env *env = t_env_open(t_dir, flags, 256u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	long long before = data_size();
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	memset(&m, 0, sizeof m);
	for (unsigned id = 0; id < NK; id++) {
		OK(put_ver(txn, MAIN, id, 1));
		m.ver[id] = 1;
	}
	if (!(flags & (MDB_WRITEMAP | MDB_INMEMORY)))
		CHECK(data_size() > before + 64 * 4096);	/* spilled, not committed */
	CHECK_EQ(check_txn(txn, MAIN, &m), 0);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(check_env(env, MAIN, &m), 0);

	for (int round = 0; round < 2; round++) {
		m2 = m;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (unsigned id = 0; id < NK; id++) {
			char kb[16];
			MDB_val k;
			if (id % 5 == 0) {
				key_of(id, kb, &k);
				OK(mdb_del(txn, MAIN, &k, NULL));
				m2.ver[id] = 0;
			} else if (id % 3 == 0) {
				OK(put_ver(txn, MAIN, id, 2));
				m2.ver[id] = 2;
			}
		}
		for (unsigned id = NK / 2; id < NK; id += 7) {
			OK(put_ver(txn, MAIN, id, 3));
			m2.ver[id] = 3;
		}
		CHECK_EQ(check_txn(txn, MAIN, &m2), 0);
		if (round == 0) {
			mdb_txn_abort(txn);
			CHECK_EQ(check_env(env, MAIN, &m), 0);
		} else {
			OK(mdb_txn_commit(txn));
			CHECK_EQ(check_env(env, MAIN, &m2), 0);
		}
	}
	mdb_env_close(env);
	if (flags & MDB_INMEMORY)
		return;
	env = t_env_open(t_dir, flags, 256u << 20, 4);
	REQUIRE(env);
	CHECK_EQ(check_env(env, MAIN, &m2), 0);
	mdb_env_close(env);
}

static void test_spill_default(void)
{
	spill_basic(0);
}

static void test_spill_writemap(void)
{
	spill_basic(MDB_WRITEMAP);
}

static void test_spill_nosync(void)
{
	spill_basic(MDB_NOSYNC | MDB_NOMETASYNC);
}

static void test_spill_inmemory(void)
{
	spill_basic(MDB_INMEMORY);
}

/* A limit that is not a positive decimal count is refused at open. */
static void test_spill_bad_limit(void)
{
	const char *bad[] = { "0", "abc", "12k", "-5", " 7" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		set_limit(bad[i]);
		int rc;
		MDB_env *env = t_env_open_rc(t_dir, 0, 0, 0, &rc);
		CHECK_EQ(rc, EINVAL);
		CHECK(env == NULL);
	}
	set_limit("1");
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	CHECK(env != NULL);
	if (env) {
		/* A limit of one page still lets every operation through. */
		MDB_txn *txn;
		static model_t m;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		memset(&m, 0, sizeof m);
		for (unsigned id = 0; id < NK; id += 3) {
			OK(put_ver(txn, MAIN, id, 4));
			m.ver[id] = 4;
		}
		OK(mdb_txn_commit(txn));
		CHECK_EQ(check_env(env, MAIN, &m), 0);
		mdb_env_close(env);
	}
}

/* A value read in the txn (pointing into a dirty page) and passed back to
 * put after many other puts: the page it lives in must not be released by
 * that put's spill. */
static void test_spill_keeps_op_value(void)
{
	set_limit("8");
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned id = 0; id < NK; id++)
		OK(put_ver(txn, MAIN, id, 1));
	unsigned bad = 0;
	for (unsigned id = 0; id + 1 < NK; id += 2) {
		char kb[16], kb2[16];
		MDB_val k, v, k2;
		key_of(id, kb, &k);
		REQUIRE_OK(mdb_get(txn, MAIN, &k, &v));
		/* copy id's value onto id + 1 straight from the page */
		key_of(id + 1, kb2, &k2);
		OK(mdb_put(txn, MAIN, &k2, &v, 0));
		REQUIRE_OK(mdb_get(txn, MAIN, &k2, &v));
		bad += !val_is(id, 1, &v);
	}
	CHECK_EQ(bad, 0);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

/* A spilled leaf read again in the txn comes back into memory by pread, not
 * through the map (which would make the file's pages resident): every value
 * a get returns after the load points outside the map.  Each get is
 * followed by a put, whose spill keeps the dirty set below its limit (at
 * the limit a read falls back to the map). */
static void test_spill_reads_by_pread(void)
{
	set_limit("64");
	MDB_env *env = t_env_open(t_dir, 0, 128u << 20, 4);
	REQUIRE(env);
	/* The map's range, from the process's mappings of the data file. */
	uintptr_t lo = 0, hi = 0;
	char line[4096];
	FILE *maps = fopen("/proc/self/maps", "r");
	REQUIRE(maps);
	while (fgets(line, sizeof line, maps)) {
		unsigned long a, b;
		if (strstr(line, "data.mdb") && sscanf(line, "%lx-%lx", &a, &b) == 2 && !lo) {
			lo = a;
			hi = b;
		}
	}
	fclose(maps);
	REQUIRE(lo != 0);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	long long before = data_size();
	for (unsigned id = 0; id < NK; id++)
		OK(put_ver(txn, MAIN, id, 1));
	CHECK(data_size() > before + 64 * 4096);	/* spilled */
	unsigned in_map = 0, bad = 0, leaf_values = 0;
	for (unsigned id = 0; id < NK; id += 2) {
		char kb[16];
		MDB_val k, v;
		key_of(id, kb, &k);
		REQUIRE_OK(mdb_get(txn, MAIN, &k, &v));
		bad += !val_is(id, 1, &v);
		if (v.mv_size < 1000) {		/* in a leaf, not an overflow run */
			leaf_values++;
			in_map += (uintptr_t)v.mv_data >= lo && (uintptr_t)v.mv_data < hi;
		}
		OK(put_ver(txn, MAIN, id + 1, 2));
	}
	CHECK_EQ(bad, 0);
	CHECK(leaf_values > NK / 4);
	CHECK_EQ(in_map, 0);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);
}

/* Cursors keep working across spills caused by writes to another DB: their
 * pages stay in memory, and their next moves see the same data. */
static void test_spill_cursor_across(void)
{
	set_limit("8");
	MDB_env *env = t_env_open(t_dir, 0, 128u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi a, b;
	static model_t m;
	memset(&m, 0, sizeof m);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "a", MDB_CREATE, &a));
	OK(mdb_dbi_open(txn, "b", MDB_CREATE, &b));
	for (unsigned id = 0; id < NK; id++) {
		OK(put_ver(txn, a, id, 1));
		m.ver[id] = 1;
	}
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, a, &c));
	MDB_val k, v;
	unsigned seen = 0, bad = 0;
	int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	for (unsigned id = 0; rc == 0; id++) {
		unsigned got = id_of(&k);
		bad += got != id || !val_is(id, 1, &v);
		seen++;
		/* writes elsewhere: each one may spill */
		OK(put_ver(txn, b, id, 2));
		OK(put_ver(txn, b, NK - 1 - id, 3));
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	CHECK_EQ(rc, MDB_NOTFOUND);
	CHECK_EQ(seen, NK);
	CHECK_EQ(bad, 0);
	mdb_cursor_close(c);
	CHECK_EQ(check_txn(txn, a, &m), 0);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(check_env(env, a, &m), 0);
	mdb_env_close(env);
}

/* Nested txns over spilled pages: a child that rewrites the parent's
 * (spilled) pages and spills its own, then aborts, leaves the parent's view
 * exactly as it was; the same work committed shows in the parent, and in
 * the store after the parent commits.  Three levels. */
static void test_spill_nested(void)
{
	static model_t pm, cm, gm;
	set_limit("12");
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 4);
	REQUIRE(env);
	MDB_txn *parent, *child, *grand;
	long long before = data_size();
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &parent));
	memset(&pm, 0, sizeof pm);
	for (unsigned id = 0; id < NK; id += 2) {
		OK(put_ver(parent, MAIN, id, 1));
		pm.ver[id] = 1;
	}
	CHECK(data_size() > before);
	for (int round = 0; round < 3; round++) {
		REQUIRE_OK(mdb_txn_begin(env, parent, 0, &child));
		cm = pm;
		long long cbefore = data_size();
		for (unsigned id = round; id < NK; id += 3) {
			if (cm.ver[id] && id % 2 == 0 && id % 4 == 0) {
				char kb[16];
				MDB_val k;
				key_of(id, kb, &k);
				OK(mdb_del(child, MAIN, &k, NULL));
				cm.ver[id] = 0;
			} else {
				OK(put_ver(child, MAIN, id, 10 + round));
				cm.ver[id] = 10 + round;
			}
		}
		if (round == 0)
			CHECK(data_size() > cbefore);	/* the child spilled too */
		CHECK_EQ(check_txn(child, MAIN, &cm), 0);
		/* a grandchild: aborted in round 0, committed otherwise */
		REQUIRE_OK(mdb_txn_begin(env, child, 0, &grand));
		gm = cm;
		for (unsigned id = 1; id < NK; id += 5) {
			OK(put_ver(grand, MAIN, id, 20 + round));
			gm.ver[id] = 20 + round;
		}
		CHECK_EQ(check_txn(grand, MAIN, &gm), 0);
		if (round == 0) {
			mdb_txn_abort(grand);
			CHECK_EQ(check_txn(child, MAIN, &cm), 0);
		} else {
			OK(mdb_txn_commit(grand));
			cm = gm;
			CHECK_EQ(check_txn(child, MAIN, &cm), 0);
		}
		if (round == 1) {
			mdb_txn_abort(child);
		} else {
			OK(mdb_txn_commit(child));
			pm = cm;
		}
		CHECK_EQ(check_txn(parent, MAIN, &pm), 0);
	}
	OK(mdb_txn_commit(parent));
	CHECK_EQ(check_env(env, MAIN, &pm), 0);
	mdb_env_close(env);
	env = t_env_open(t_dir, 0, 256u << 20, 4);
	REQUIRE(env);
	CHECK_EQ(check_env(env, MAIN, &pm), 0);
	mdb_env_close(env);
}

/*
 * Randomized model run: puts, deletes, gets and cursor ranges on a plain
 * and a counted DB plus sorted duplicates, in transactions with nested
 * children committed or aborted, under a small random limit.  The counted
 * DB's range counts are checked against the model (its branch counts must
 * survive spills); everything is compared after each transaction.
 */
#define ND 16
typedef struct {
	model_t plain, counted;
	unsigned short dups[NK / 8];	/* bit d: duplicate d of key id present */
} world_t;

static int check_dups(MDB_txn *txn, MDB_dbi dbi, const world_t *w)
{
	MDB_cursor *c;
	MDB_val k, v;
	int bad = 0;
	if (mdb_cursor_open(txn, dbi, &c))
		return 1;
	for (unsigned id = 0; id < NK / 8; id++) {
		char kb[16];
		key_of(id, kb, &k);
		unsigned got = 0;
		int rc = mdb_cursor_get(c, &k, &v, MDB_SET_KEY);
		for (; rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP)) {
			unsigned d;
			if (v.mv_size != 40 || sscanf((char *)v.mv_data, "d%02u", &d) != 1 || d >= ND)
				bad++;
			else
				got |= 1u << d;
		}
		if (rc != MDB_NOTFOUND || got != w->dups[id])
			bad++;
	}
	mdb_cursor_close(c);
	return bad;
}

static int count_range_ok(MDB_txn *txn, MDB_dbi dbi, const model_t *m, uint64_t *s)
{
	unsigned lo = (unsigned)(t_rand(s) % NK), hi = (unsigned)(t_rand(s) % NK);
	if (lo > hi) {
		unsigned t = lo;
		lo = hi;
		hi = t;
	}
	char lb[16], hb[16];
	MDB_val l, h;
	key_of(lo, lb, &l);
	key_of(hi, hb, &h);
	uint64_t want = 0, got = ~0ull;
	for (unsigned id = lo; id <= hi; id++)
		want += m->ver[id] != 0;
	if (mdb_count_range(txn, dbi, &l, &h, MDB_COUNT_LOWER_INCL | MDB_COUNT_UPPER_INCL, &got))
		return 0;
	return got == want;
}

static void dup_val(unsigned d, char buf[40], MDB_val *v)
{
	memset(buf, 'x', 40);
	snprintf(buf, 40, "d%02u", d);
	v->mv_size = 40;
	v->mv_data = buf;
}

/* Random operations on txn and the model w; nested children by recursion. */
static void random_ops(MDB_env *env, MDB_txn *txn, MDB_dbi dbs[3], world_t *w,
	uint64_t *s, int depth, unsigned nops)
{
	for (unsigned i = 0; i < nops && !t_failures; i++) {
		unsigned r = (unsigned)(t_rand(s) % 100);
		unsigned id = (unsigned)(t_rand(s) % NK);
		char kb[16];
		MDB_val k, v;
		key_of(id, kb, &k);
		if (r < 40) {
			model_t *m = r < 25 ? &w->plain : &w->counted;
			MDB_dbi dbi = r < 25 ? dbs[0] : dbs[1];
			unsigned ver = (unsigned)(t_rand(s) % 1000) + 1;
			OK(put_ver(txn, dbi, id, ver));
			m->ver[id] = ver;
		} else if (r < 60) {
			model_t *m = r < 50 ? &w->plain : &w->counted;
			MDB_dbi dbi = r < 50 ? dbs[0] : dbs[1];
			CHECK_RC(mdb_del(txn, dbi, &k, NULL), m->ver[id] ? 0 : MDB_NOTFOUND);
			m->ver[id] = 0;
		} else if (r < 75) {
			int rc = mdb_get(txn, dbs[0], &k, &v);
			if (w->plain.ver[id]) {
				CHECK_EQ(rc, 0);
				CHECK(rc || val_is(id, w->plain.ver[id], &v));
			} else {
				CHECK_EQ(rc, MDB_NOTFOUND);
			}
		} else if (r < 88) {
			char db[40];
			unsigned kid = id % (NK / 8), d = (unsigned)(t_rand(s) % ND);
			key_of(kid, kb, &k);
			dup_val(d, db, &v);
			if (r < 82) {
				OK(mdb_put(txn, dbs[2], &k, &v, 0));
				w->dups[kid] |= (unsigned short)(1u << d);
			} else {
				CHECK_RC(mdb_del(txn, dbs[2], &k, &v),
				    (w->dups[kid] >> d & 1) ? 0 : MDB_NOTFOUND);
				w->dups[kid] &= (unsigned short)~(1u << d);
			}
		} else if (r < 94) {
			CHECK(count_range_ok(txn, dbs[1], &w->counted, s));
		} else if (r < 95 && depth < 2) {
			static world_t saved[3];
			MDB_txn *child;
			REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
			saved[depth] = *w;
			random_ops(env, child, dbs, w, s, depth + 1, nops / 4);
			if (t_rand(s) % 3 == 0) {
				mdb_txn_abort(child);
				*w = saved[depth];
			} else {
				OK(mdb_txn_commit(child));
			}
			CHECK_EQ(check_txn(txn, dbs[0], &w->plain), 0);
			CHECK(count_range_ok(txn, dbs[1], &w->counted, s));
		} else {
			/* a short cursor range walk from a random key */
			MDB_cursor *c;
			REQUIRE_OK(mdb_cursor_open(txn, dbs[0], &c));
			int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
			unsigned want = id;
			for (int n = 0; n < 20; n++) {
				while (want < NK && !w->plain.ver[want])
					want++;
				if (want >= NK) {
					CHECK_EQ(rc, MDB_NOTFOUND);
					break;
				}
				CHECK_EQ(rc, 0);
				if (rc)
					break;
				CHECK_EQ(id_of(&k), want);
				CHECK(val_is(want, w->plain.ver[want], &v));
				want++;
				rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
			}
			mdb_cursor_close(c);
		}
	}
}

static void test_spill_model(void)
{
	static world_t w, committed;
	const char *seedv = getenv("DLMDB_SEED");
	uint64_t s = seedv && *seedv ? strtoull(seedv, NULL, 10) : 17;
	s = s * 0x9E3779B97F4A7C15ull + 1;
	char lim[16];
	snprintf(lim, sizeof lim, "%u", 4 + (unsigned)(t_rand(&s) % 60));
	set_limit(lim);
	MDB_env *env = t_env_open(t_dir, 0, 512u << 20, 8);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbs[3];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "plain", MDB_CREATE, &dbs[0]));
	OK(mdb_dbi_open(txn, "counted", MDB_CREATE | MDB_COUNTED, &dbs[1]));
	OK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dbs[2]));
	OK(mdb_txn_commit(txn));
	memset(&w, 0, sizeof w);
	committed = w;
	int grew = 0;
	for (int t = 0; t < 8 && !t_failures; t++) {
		long long before = data_size();
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		random_ops(env, txn, dbs, &w, &s, 0, 1500);
		grew += data_size() > before;
		CHECK_EQ(check_txn(txn, dbs[0], &w.plain), 0);
		CHECK_EQ(check_txn(txn, dbs[1], &w.counted), 0);
		CHECK_EQ(check_dups(txn, dbs[2], &w), 0);
		uint64_t all = ~0ull, want = 0;
		for (unsigned id = 0; id < NK; id++)
			want += w.counted.ver[id] != 0;
		OK(mdb_count_all(txn, dbs[1], 0, &all));
		CHECK_EQ(all, want);
		if (t % 4 == 3) {
			mdb_txn_abort(txn);
			w = committed;
		} else {
			OK(mdb_txn_commit(txn));
			committed = w;
		}
		MDB_txn *rt;
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt));
		CHECK_EQ(check_txn(rt, dbs[0], &w.plain), 0);
		CHECK_EQ(check_txn(rt, dbs[1], &w.counted), 0);
		CHECK_EQ(check_dups(rt, dbs[2], &w), 0);
		for (int i = 0; i < 20; i++)
			CHECK(count_range_ok(rt, dbs[1], &w.counted, &s));
		mdb_txn_abort(rt);
	}
	CHECK(grew > 0);	/* the limit made transactions spill */
	mdb_env_close(env);
}

/* Value of key id in the big-txn test, version ver: 400 bytes from both. */
static void big_val(unsigned id, unsigned ver, unsigned char buf[400])
{
	uint64_t st = ((uint64_t)id << 20) ^ ver;
	for (size_t i = 0; i < 400; i++)
		buf[i] = (unsigned char)(t_rand(&st) >> 56);
}

/*
 * Page buffers past the first 8,192 of an env are cut from slabs (page.c),
 * the earlier ones come from malloc, and both kinds go to the env's pool:
 * one txn of 100K random-order puts (well over 8,192 dirty pages, under the
 * default dirty limit), an aborted txn and a committed one drawing from the
 * pool, then the env closed (which frees only the malloc'd buffers) and
 * everything read back.
 */
static void test_big_txn_buffers(void)
{
	enum { N = 100000, P = 100003 };	/* P prime: id * 7919 % P shuffles */
	unsetenv("DLMDB_DIRTY_LIMIT");
	MDB_env *env = t_env_open(t_dir, 0, 512u << 20, 4);
	REQUIRE(env);
	unsigned char vb[400];
	char kb[16];
	MDB_val k, v = { sizeof(vb), vb };
	for (unsigned ver = 1; ver <= 3; ver++) {
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (unsigned j = 0; j < P; j++) {
			unsigned id = (unsigned)((uint64_t)j * 7919 % P);
			if (id >= N || (ver > 1 && id % 3))
				continue;
			key_of(id, kb, &k);
			big_val(id, ver, vb);
			REQUIRE_OK(mdb_put(txn, MAIN, &k, &v, 0));
		}
		if (ver == 2)
			mdb_txn_abort(txn);
		else
			REQUIRE_OK(mdb_txn_commit(txn));
	}
	mdb_env_close(env);
	env = t_env_open(t_dir, 0, 512u << 20, 4);
	REQUIRE(env);
	MDB_txn *rt;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rt));
	MDB_stat st;
	OK(mdb_stat(rt, MAIN, &st));
	CHECK_EQ(st.ms_entries, N);
	CHECK(st.ms_leaf_pages > 8192);
	unsigned bad = 0;
	for (unsigned id = 0; id < N; id++) {
		MDB_val got;
		key_of(id, kb, &k);
		big_val(id, id % 3 ? 1 : 3, vb);
		bad += mdb_get(rt, MAIN, &k, &got) || got.mv_size != sizeof(vb) ||
		    memcmp(got.mv_data, vb, sizeof(vb));
	}
	CHECK_EQ(bad, 0);
	mdb_txn_abort(rt);
	mdb_env_close(env);
}

/* The engine's page-number sort (commit and spill write pages in that
 * order; the free list is stored sorted): agrees with qsort on short and
 * long arrays, narrow and wide values, sorted, reversed and repeated. */
void dl_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void test_page_number_sort(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 31, 32, 33, 100, 257, 5000 };
	static const uint64_t spans[] = { 4, 300, 70000, (uint64_t)1 << 40, 0 /* full */ };
	uint64_t s = 12345;
	size_t cap = 5000;
	uint64_t *a = malloc(cap * 8), *b = malloc(cap * 8), *tmp = malloc(cap * 8);
	REQUIRE(a && b && tmp);
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
		for (size_t sp = 0; sp < sizeof spans / sizeof *spans; sp++)
			for (int shape = 0; shape < 3; shape++) {
				size_t n = sizes[si];
				for (size_t i = 0; i < n; i++) {
					s ^= s << 13;
					s ^= s >> 7;
					s ^= s << 17;
					uint64_t v = spans[sp] ? 1000 + s % spans[sp] : s;
					a[i] = shape == 1 ? 1000 + i : shape == 2 ? 1000 + n - i : v;
				}
				memcpy(b, a, n * 8);
				qsort(b, n, 8, cmp_u64);
				dl_sort_u64(a, tmp, n);
				CHECK(!n || !memcmp(a, b, n * 8));
			}
	free(a);
	free(b);
	free(tmp);
}

int main(void)
{
	RUN(test_spill_default);
	RUN(test_spill_writemap);
	RUN(test_spill_nosync);
	RUN(test_spill_inmemory);
	RUN(test_spill_bad_limit);
	RUN(test_spill_keeps_op_value);
	RUN(test_spill_reads_by_pread);
	RUN(test_spill_cursor_across);
	RUN(test_spill_nested);
	RUN(test_spill_model);
	RUN(test_big_txn_buffers);
	RUN(test_page_number_sort);
	T_DONE();
}
