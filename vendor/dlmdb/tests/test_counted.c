/* MDB_COUNTED databases (dlmdb-extensions.md §2.4): count/rank functions
 * checked against an in-memory model while the tree is churned (splits,
 * merges, aborts, reopens).  dlmdb-only (not built for stock-check). */
#include "t.h"

#define NK 1500   /* key ids; key text "c%05d" sorts like the id */
#define DV 40     /* dup values per key (DUPSORT run) */

static int dupsort;                  /* which flavour runs */
static unsigned char has[NK][DV];    /* dupsort: pair present; plain: has[k][0] */
static int ver[NK];                  /* plain: value version of key k */

static void kname(char *b, int k) { snprintf(b, 16, "c%05d", k); }
static void dname(char *b, int d) { snprintf(b, 16, "d%04d", d); }
static void pvalue(char *b, int k, int v) { snprintf(b, 32, "val-%d-%d", k, v); }

static int count_of(int k)
{
	int n = 0;
	for (int d = 0; d < (dupsort ? DV : 1); d++)
		n += has[k][d];
	return n;
}

static uint64_t total(void)
{
	uint64_t n = 0;
	for (int k = 0; k < NK; k++)
		n += (uint64_t)count_of(k);
	return n;
}

/* A bound: key id and whether it is the key itself (exact) or a probe just
 * after it ("c000125" sorts between c00012 and c00013). */
struct bound {
	int k, between, null;
};

/* Entries (or keys) with key < b, plus those of key == b when incl. */
static uint64_t before(struct bound b, int incl, int keys_only)
{
	uint64_t n = 0;
	for (int k = 0; k < NK; k++) {
		int c = count_of(k);
		if (!c)
			continue;
		int less = k < b.k || (b.between && k == b.k);
		int equal = !b.between && k == b.k;
		if (less || (equal && incl))
			n += keys_only ? 1 : (uint64_t)c;
	}
	return n;
}

static uint64_t model_range(struct bound lo, struct bound hi, unsigned flags, int keys_only)
{
	if (!lo.null && !hi.null) {
		/* compare bounds as strings: (k, between) lexicographic */
		if (lo.k > hi.k || (lo.k == hi.k && lo.between > hi.between))
			return 0;
		if (lo.k == hi.k && lo.between == hi.between &&
		    (flags & (MDB_COUNT_LOWER_INCL | MDB_COUNT_UPPER_INCL)) !=
			    (MDB_COUNT_LOWER_INCL | MDB_COUNT_UPPER_INCL))
			return 0;
	}
	uint64_t all = keys_only ? before((struct bound){ NK, 0, 0 }, 0, 1) : total();
	uint64_t U = hi.null ? all : before(hi, (flags & MDB_COUNT_UPPER_INCL) != 0, keys_only);
	uint64_t L = lo.null ? 0 : before(lo, !(flags & MDB_COUNT_LOWER_INCL), keys_only);
	return U > L ? U - L : 0;
}

static struct bound random_bound(uint64_t *s, char *buf, MDB_val *v)
{
	struct bound b = { (int)(t_rand(s) % NK), (int)(t_rand(s) % 3 == 0), 0 };
	if (t_rand(s) % 8 == 0) {
		b.null = 1;
		return b;
	}
	kname(buf, b.k);
	if (b.between)
		strcat(buf, "5");
	*v = t_val(buf);
	return b;
}

/* The entry at rank r of the model: key id and dup index (or version). */
static int model_at(uint64_t r, int *k_out, int *d_out)
{
	for (int k = 0; k < NK; k++) {
		int c = count_of(k);
		if (r < (uint64_t)c) {
			*k_out = k;
			if (!dupsort) {
				*d_out = ver[k];
				return 1;
			}
			for (int d = 0; d < DV; d++)
				if (has[k][d] && r-- == 0) {
					*d_out = d;
					return 1;
				}
		}
		r -= (uint64_t)c;
	}
	return 0;
}

static int is_entry(const MDB_val *key, const MDB_val *data, int k, int d)
{
	char kb[16], db[32];
	kname(kb, k);
	if (dupsort)
		dname(db, d);
	else
		pvalue(db, k, d);
	return key->mv_size == strlen(kb) && !memcmp(key->mv_data, kb, key->mv_size) &&
	       data->mv_size == strlen(db) && !memcmp(data->mv_data, db, data->mv_size);
}

static void check_counts(MDB_txn *txn, MDB_dbi dbi, uint64_t *s, const char *when)
{
	uint64_t n = 0, want = total();
	int rc = mdb_count_all(txn, dbi, 0, &n);
	if (rc || n != want) {
		T_FAIL("%s: count_all rc %d n %llu, want %llu", when, rc, (unsigned long long)n,
		       (unsigned long long)want);
		return;
	}
	/* ranks: random, edges, out of range */
	MDB_val k, v;
	for (int i = 0; i < 40 && want; i++) {
		uint64_t r = i == 0 ? 0 : i == 1 ? want - 1 : t_rand(s) % want;
		int mk, md;
		model_at(r, &mk, &md);
		rc = mdb_get_rank(txn, dbi, r, &k, &v);
		if (rc || !is_entry(&k, &v, mk, md)) {
			T_FAIL("%s: get_rank(%llu) rc %d, want key %d", when, (unsigned long long)r, rc,
			       mk);
			return;
		}
		/* and back: key rank of that entry */
		uint64_t kr = ~0ull;
		char kb[16], db[32];
		kname(kb, mk);
		MDB_val kk = t_val(kb), dd;
		if (dupsort) {
			dname(db, md);
			dd = t_val(db);
			rc = mdb_get_key_rank(txn, dbi, &kk, &dd, &kr);
		} else {
			rc = mdb_get_key_rank(txn, dbi, &kk, NULL, &kr);
		}
		if (rc || kr != r) {
			T_FAIL("%s: key_rank of rank %llu gave rc %d rank %llu", when,
			       (unsigned long long)r, rc, (unsigned long long)kr);
			return;
		}
	}
	rc = mdb_get_rank(txn, dbi, want, &k, &v);
	if (rc != MDB_NOTFOUND)
		T_FAIL("%s: get_rank(total) gave %d", when, rc);
	/* a cursor walking ranks forward, then MDB_NEXT continues from there */
	MDB_cursor *c;
	if (want && mdb_cursor_open(txn, dbi, &c) == 0) {
		for (uint64_t r = t_rand(s) % 7; r + 1 < want; r += 1 + t_rand(s) % (want / 10 + 1)) {
			int mk, md;
			model_at(r, &mk, &md);
			rc = mdb_cursor_get_rank(c, r, &k, &v, 0);
			if (rc || !is_entry(&k, &v, mk, md)) {
				T_FAIL("%s: cursor_get_rank(%llu) rc %d", when, (unsigned long long)r, rc);
				break;
			}
			model_at(r + 1, &mk, &md);
			rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
			if (rc || !is_entry(&k, &v, mk, md)) {
				T_FAIL("%s: NEXT after cursor_get_rank(%llu) rc %d", when,
				       (unsigned long long)r, rc);
				break;
			}
		}
		mdb_cursor_close(c);
	}
	/* ranges with every flag combination */
	for (int i = 0; i < 25; i++) {
		char lb[16], hb[16];
		MDB_val lv, hv;
		struct bound lo = random_bound(s, lb, &lv), hi = random_bound(s, hb, &hv);
		for (unsigned fl = 0; fl <= 6; fl += 2) {
			uint64_t got = ~0ull, exp;
			const MDB_val *lp = lo.null ? NULL : &lv, *hp = hi.null ? NULL : &hv;
			if (dupsort) {
				exp = model_range(lo, hi, fl, 0);
				rc = mdb_range_count_values(txn, dbi, lp, hp, fl, &got);
				if (rc || got != exp)
					T_FAIL("%s: range_count_values(%s%s, %s%s, %u) rc %d got %llu want %llu",
					       when, lo.null ? "NULL" : lb, "", hi.null ? "NULL" : hb, "",
					       fl, rc, (unsigned long long)got, (unsigned long long)exp);
				exp = model_range(lo, hi, fl, 1);
				rc = mdb_range_count_keys(txn, dbi, lp, hp, fl, &got);
			} else {
				exp = model_range(lo, hi, fl, 0);
				rc = mdb_count_range(txn, dbi, lp, hp, fl, &got);
				if (rc || got != exp)
					T_FAIL("%s: count_range(%s, %s, %u) rc %d got %llu want %llu", when,
					       lo.null ? "NULL" : lb, hi.null ? "NULL" : hb, fl, rc,
					       (unsigned long long)got, (unsigned long long)exp);
				rc = mdb_range_count_keys(txn, dbi, lp, hp, fl, &got);
			}
			if (rc || got != exp)
				T_FAIL("%s: range_count_keys(%s, %s, %u) rc %d got %llu want %llu", when,
				       lo.null ? "NULL" : lb, hi.null ? "NULL" : hb, fl, rc,
				       (unsigned long long)got, (unsigned long long)exp);
			if (t_failures)
				return;
		}
	}
}

/*
 * n random puts and deletes in txn, mirrored in the model (tag: the value
 * version written by puts).  burst: delete a run of n keys from a random
 * start instead (forces merges).
 */
static void mutate(MDB_txn *txn, MDB_dbi dbi, uint64_t *s, int tag, int n, int burst)
{
	int base = (int)(t_rand(s) % NK);
	for (int i = 0; i < n; i++) {
		int k = burst ? (base + i) % NK : (int)(t_rand(s) % NK);
		int d = dupsort ? (k % 10 == 0 ? (int)(t_rand(s) % DV) : (int)(t_rand(s) % 3)) : 0;
		char kb[16], db[32];
		kname(kb, k);
		if (dupsort)
			dname(db, d);
		else
			pvalue(db, k, tag);
		MDB_val key = t_val(kb), data = t_val(db);
		int del = burst || t_rand(s) % 3 == 0;
		int rc;
		if (del) {
			rc = mdb_del(txn, dbi, &key, dupsort ? &data : NULL);
			if (rc != (has[k][d] ? 0 : MDB_NOTFOUND))
				T_FAIL("txn %d: del %s rc %d", tag, kb, rc);
			has[k][d] = 0;
		} else {
			rc = mdb_put(txn, dbi, &key, &data, 0);
			if (rc)
				T_FAIL("txn %d: put %s rc %d", tag, kb, rc);
			has[k][d] = 1;
			if (!dupsort)
				ver[k] = tag;
		}
		if (t_failures)
			break;
	}
}

static void churn_flags(unsigned env_flags, int dup, unsigned extra_dbflags)
{
	dupsort = dup;
	memset(has, 0, sizeof has);
	memset(ver, 0, sizeof ver);
	unsigned dbflags = MDB_COUNTED | (dup ? MDB_DUPSORT : 0) | extra_dbflags;
	MDB_env *env = t_env_open(t_dir, env_flags, 64u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", MDB_CREATE | dbflags, &dbi));
	REQUIRE_OK(mdb_txn_commit(txn));
	const char *se = getenv("DLMDB_SEED"); /* for soak runs */
	uint64_t s = se && strtoull(se, NULL, 0) ? strtoull(se, NULL, 0) : 31;
	static unsigned char shas[NK][DV];
	static int sver[NK];
	for (int t = 1; t <= 40 && t_failures == 0; t++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		memcpy(shas, has, sizeof has);
		memcpy(sver, ver, sizeof ver);
		/* sometimes a burst of deletes over a key range (forces merges) */
		int burst = t % 7 == 3;
		mutate(txn, dbi, &s, t, burst ? 600 : 250, burst);
		char when[32];
		snprintf(when, sizeof when, "in txn %d", t);
		if (t % 4 == 0)
			check_counts(txn, dbi, &s, when); /* on dirty pages */
		if (t % 6 == 5) {
			mdb_txn_abort(txn);
			memcpy(has, shas, sizeof has);
			memcpy(ver, sver, sizeof ver);
		} else {
			OK(mdb_txn_commit(txn));
		}
		if (t % 3 == 0) {
			REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
			snprintf(when, sizeof when, "after txn %d", t);
			check_counts(txn, dbi, &s, when);
			mdb_txn_abort(txn);
		}
		if (t % 10 == 0) {
			mdb_env_close(env);
			env = t_env_open(t_dir, env_flags, 0, 2);
			REQUIRE(env);
			REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
			REQUIRE_OK(mdb_dbi_open(txn, "cnt", 0, &dbi));
			REQUIRE_OK(mdb_txn_commit(txn));
		}
	}
	mdb_env_close(env);
}

static void churn(unsigned env_flags, int dup) { churn_flags(env_flags, dup, 0); }

static void test_counted_plain(void) { churn(0, 0); }
/* with prefix compression (keys "c0xxxx" share prefixes) */
static void test_counted_prefix(void) { churn_flags(0, 0, MDB_PREFIX_COMPRESSION); }
static void test_counted_dupsort_prefix(void) { churn_flags(0, 1, MDB_PREFIX_COMPRESSION); }
static void test_counted_dupsort(void) { churn(0, 1); }
static void test_counted_plain_v1(void) { churn(MDB_FORMAT_DLMDB_V1, 0); }
static void test_counted_dupsort_v1(void) { churn(MDB_FORMAT_DLMDB_V1, 1); }

/*
 * Nested txns: counts and ranks must be exact at every depth, over pages the
 * child cannot write (changed by an ancestor and not copied since).  Each
 * round changes the parent, then runs a chain of children, each of which
 * changes nothing, changes a little or a lot, and commits or aborts; every
 * level is checked against the model before and after its children end.
 */
static void nested_level(MDB_txn *parent, MDB_dbi dbi, uint64_t *s, int depth, int *tag)
{
	static unsigned char lhas[8][NK][DV];
	static int lver[8][NK];
	char when[64];
	/* two children at the top, one per deeper level (a chain of 4) */
	for (int round = 0; round < (depth ? 1 : 2) && !t_failures; round++) {
		MDB_txn *child;
		memcpy(lhas[depth], has, sizeof has);
		memcpy(lver[depth], ver, sizeof ver);
		int rc = mdb_txn_begin(mdb_txn_env(parent), parent, 0, &child);
		if (rc) {
			T_FAIL("depth %d: child begin rc %d", depth, rc);
			return;
		}
		snprintf(when, sizeof when, "depth %d round %d, untouched", depth, round);
		check_counts(child, dbi, s, when);
		int kind = (int)(t_rand(s) % 4);	/* 0 nothing, 1 few, 2 many, 3 burst */
		++*tag;
		if (kind)
			mutate(child, dbi, s, *tag, kind == 1 ? 5 : kind == 2 ? 200 : 300, kind == 3);
		snprintf(when, sizeof when, "depth %d round %d, changed (%d)", depth, round, kind);
		check_counts(child, dbi, s, when);
		if (depth < 3)
			nested_level(child, dbi, s, depth + 1, tag);
		if (t_rand(s) % 3 == 0) {
			mdb_txn_abort(child);
			memcpy(has, lhas[depth], sizeof has);
			memcpy(ver, lver[depth], sizeof ver);
			snprintf(when, sizeof when, "depth %d round %d, after child abort", depth, round);
		} else {
			if ((rc = mdb_txn_commit(child)))
				T_FAIL("depth %d: child commit rc %d", depth, rc);
			snprintf(when, sizeof when, "depth %d round %d, after child commit", depth, round);
		}
		check_counts(parent, dbi, s, when);
	}
}

static void nested_churn(int dup)
{
	dupsort = dup;
	memset(has, 0, sizeof has);
	memset(ver, 0, sizeof ver);
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED | (dup ? MDB_DUPSORT : 0),
				&dbi));
	REQUIRE_OK(mdb_txn_commit(txn));
	const char *se = getenv("DLMDB_SEED");
	uint64_t s = se && strtoull(se, NULL, 0) ? strtoull(se, NULL, 0) : 57;
	int tag = 0;
	for (int t = 1; t <= (dup ? 2 : 6) && !t_failures; t++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		++tag;
		mutate(txn, dbi, &s, tag, t == 1 ? 1200 : 150, t % 3 == 0);
		nested_level(txn, dbi, &s, 0, &tag);
		OK(mdb_txn_commit(txn));
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		check_counts(txn, dbi, &s, "after top-level commit");
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

static void test_counted_nested(void) { nested_churn(0); }
static void test_counted_nested_dupsort(void) { nested_churn(1); }

/* The smallest stale-count case: deletes in the parent, an idle child. */
static void test_counted_nested_idle_child(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn, *child;
	MDB_dbi dbi;
	char kb[16];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED, &dbi));
	for (int i = 0; i < 3000; i++) {
		snprintf(kb, sizeof kb, "key%05d", i);
		MDB_val k = t_val(kb), v = t_val("v");
		REQUIRE_OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 0; i < 100; i++) {
		snprintf(kb, sizeof kb, "key%05d", i);
		MDB_val k = t_val(kb);
		REQUIRE_OK(mdb_del(txn, dbi, &k, NULL));
	}
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	MDB_val hi = t_val("key01500"), k, v;
	uint64_t n = 0;
	OK(mdb_count_range(child, dbi, NULL, &hi, 0, &n));
	CHECK_EQ(n, 1400);
	OK(mdb_get_rank(child, dbi, 1400, &k, &v));
	CHECK_STR(k, "key01500");
	OK(mdb_count_all(child, dbi, 0, &n));
	CHECK_EQ(n, 2900);
	mdb_txn_abort(child);
	OK(mdb_count_range(txn, dbi, NULL, &hi, 0, &n));
	CHECK_EQ(n, 1400);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/*
 * Value rewrites in a counted DB.  A rewrite with a value of the stored
 * size moves no entry, so it leaves the counts alone, while a rewrite that
 * changes the size, an insert or a delete in the same txn (before or after
 * it, in the txn or in a child) still gets its counts fixed.  Flavours:
 * plain, prefix-compressed, prefix-compressed under a user comparator
 * (descending order), and prefix DUPSORT, where a put with a new value adds
 * a duplicate instead of replacing the stored one.
 */
#define RW_NK 3000
static int rw_present[RW_NK], rw_ver[RW_NK], rw_long[RW_NK], rw_desc, rw_dup;

static int rw_cmp_desc(const MDB_val *a, const MDB_val *b)
{
	size_t m = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	int c = memcmp(b->mv_data, a->mv_data, m);
	return c ? c : (b->mv_size > a->mv_size) - (b->mv_size < a->mv_size);
}

static void rw_key(char *b, int k) { snprintf(b, 16, "key%05d", k); }

/* Value version v of key k: 10 bytes, or 40 for a long one. */
static void rw_value(char *b, int k, int v, int lng)
{
	snprintf(b, 48, lng ? "V%05d-%03d-a-longer-value-than-before" : "v%05d-%03d", k, v);
}

static void rw_put(MDB_txn *txn, MDB_dbi dbi, int k, int v, int lng)
{
	char kb[16], vb[48];
	rw_key(kb, k);
	rw_value(vb, k, v, lng);
	MDB_val key = t_val(kb), val = t_val(vb);
	OK(mdb_put(txn, dbi, &key, &val, 0));
	if (!rw_present[k] || !rw_dup) {
		rw_present[k] = 1;
		rw_ver[k] = v;
		rw_long[k] = lng;
	} else {
		rw_present[k]++;	/* DUPSORT: one more value, the first stays */
	}
}

static void rw_del(MDB_txn *txn, MDB_dbi dbi, int k)
{
	char kb[16];
	rw_key(kb, k);
	MDB_val key = t_val(kb);
	OK(mdb_del(txn, dbi, &key, NULL));
	rw_present[k] = 0;
}

/* Every rank against the model, and the total. */
static void rw_check(MDB_txn *txn, MDB_dbi dbi, const char *when)
{
	uint64_t r = 0, n = 9;
	int bad = 0;
	for (int i = 0; i < RW_NK && !bad; i++) {
		int k = rw_desc ? RW_NK - 1 - i : i;
		if (!rw_present[k])
			continue;
		char kb[16], vb[48];
		rw_key(kb, k);
		MDB_val key, val, want = t_val(kb);
		uint64_t got = ~(uint64_t)0;
		if (mdb_get_rank(txn, dbi, r, &key, &val) ||
		    key.mv_size != want.mv_size || memcmp(key.mv_data, kb, key.mv_size))
			bad = 1;
		rw_value(vb, k, rw_ver[k], rw_long[k]);
		if (!bad && !rw_dup && (val.mv_size != strlen(vb) || memcmp(val.mv_data, vb, val.mv_size)))
			bad = 1;
		if (!bad && (mdb_get_key_rank(txn, dbi, &want, NULL, &got) || got != r))
			bad = 1;
		if (bad)
			T_FAIL("%s: rank %llu (key %d) wrong", when, (unsigned long long)r, k);
		r += (uint64_t)rw_present[k];
	}
	OK(mdb_count_all(txn, dbi, 0, &n));
	if (n != r)
		T_FAIL("%s: count_all %llu, want %llu", when, (unsigned long long)n, (unsigned long long)r);
}

/* Commit txn, then check the counts again in a fresh read txn; nonzero
 * when the commit or the read txn failed. */
static int rw_commit_check(MDB_env *env, MDB_txn *txn, MDB_dbi dbi, const char *when)
{
	int rc = mdb_txn_commit(txn);
	if (!rc)
		rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc) {
		T_FAIL("%s: %s", when, mdb_strerror(rc));
		return rc;
	}
	rw_check(txn, dbi, when);
	mdb_txn_abort(txn);
	return 0;
}

static void value_rewrites(unsigned flags, int desc)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 2);
	REQUIRE(env);
	MDB_txn *txn, *child;
	MDB_dbi dbi;
	memset(rw_present, 0, sizeof rw_present);
	rw_desc = desc;
	rw_dup = (flags & MDB_DUPSORT) != 0;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED | flags, &dbi));
	if (desc)
		REQUIRE_OK(mdb_set_compare(txn, dbi, rw_cmp_desc));
	for (int k = 0; k < RW_NK; k += 2)
		rw_put(txn, dbi, k, 0, 0);
	REQUIRE_OK(mdb_txn_commit(txn));

	/* Same-size rewrites only. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int k = 0; k < RW_NK; k += 6)
		rw_put(txn, dbi, k, 1, 0);
	rw_check(txn, dbi, "rewrites");
	if (rw_commit_check(env, txn, dbi, "rewrites, committed"))
		return;

	/* Deletes and inserts, then rewrites; then rewrites, then inserts. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int k = 10; k < 1200; k += 4)
		rw_del(txn, dbi, k);
	for (int k = 1; k < 900; k += 2)
		rw_put(txn, dbi, k, 2, 0);
	for (int k = 1200; k < RW_NK; k += 2)
		rw_put(txn, dbi, k, 3, 0);
	rw_check(txn, dbi, "deletes, inserts, then rewrites");
	for (int k = 0; k < 600; k += 2)
		if (rw_present[k])
			rw_put(txn, dbi, k, 4, 0);
	for (int k = 1201; k < 2400; k += 2)
		rw_put(txn, dbi, k, 5, 0);
	rw_check(txn, dbi, "rewrites, then inserts");
	if (rw_commit_check(env, txn, dbi, "mixed, committed"))
		return;

	/* Rewrites that change the size (and split leaves) only. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int k = 0; k < RW_NK; k += 3)
		if (rw_present[k])
			rw_put(txn, dbi, k, 6, 1);
	rw_check(txn, dbi, "longer values");
	REQUIRE_OK(mdb_txn_commit(txn));

	/* Nested: the parent rewrites, a child inserts and rewrites. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int k = 0; k < RW_NK; k += 5)
		if (rw_present[k])
			rw_put(txn, dbi, k, 7, rw_long[k]);
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	for (int k = 2401; k < RW_NK; k += 2)
		rw_put(child, dbi, k, 8, 0);
	for (int k = 1; k < 600; k += 2)
		if (rw_present[k])
			rw_put(child, dbi, k, 9, rw_long[k]);
	rw_check(child, dbi, "child");
	REQUIRE_OK(mdb_txn_commit(child));
	for (int k = 3; k < RW_NK; k += 7)
		if (rw_present[k])
			rw_put(txn, dbi, k, 10, rw_long[k]);
	rw_check(txn, dbi, "parent after child");
	REQUIRE_OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	env = t_env_open(t_dir, 0, 64u << 20, 2);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", 0, &dbi));
	if (desc)
		REQUIRE_OK(mdb_set_compare(txn, dbi, rw_cmp_desc));
	rw_check(txn, dbi, "reopened");
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_counted_value_rewrites(void) { value_rewrites(0, 0); }
static void test_counted_value_rewrites_prefix(void) { value_rewrites(MDB_PREFIX_COMPRESSION, 0); }
static void test_counted_value_rewrites_prefix_user_order(void)
{
	value_rewrites(MDB_PREFIX_COMPRESSION, 1);
}
static void test_counted_value_rewrites_prefix_dupsort(void)
{
	value_rewrites(MDB_PREFIX_COMPRESSION | MDB_DUPSORT, 0);
}

/*
 * The leaf totals of the commit's count refresh: a DB without duplicates
 * counts each changed leaf by its number of nodes, a DUPSORT DB by its
 * nodes' values (sub-pages and sub-DBs), both in one txn.  The plain DB
 * grows to three levels of counted branches (ascending keys, as a bulk
 * load), then loses and gains entries in a second txn; every rank is
 * checked against the model after each commit and before the second.
 */
#define LT_A 40000	/* "a%06d" keys of the first txn */
#define LT_B 3000	/* "b%06d" keys of the second */
static unsigned char lt_has[LT_A + LT_B];

static void lt_key(char *b, int i)
{
	if (i < LT_A)
		snprintf(b, 16, "a%06d", i);
	else
		snprintf(b, 16, "b%06d", i - LT_A);
}

static void lt_check(MDB_txn *txn, MDB_dbi plain, MDB_dbi dups, uint64_t want_dups,
	const char *when)
{
	uint64_t n = 0, want = 0;
	for (int i = 0; i < LT_A + LT_B; i++)
		want += lt_has[i];
	OK(mdb_count_all(txn, plain, 0, &n));
	if (n != want)
		T_FAIL("%s: plain count_all %llu, want %llu", when, (unsigned long long)n,
		       (unsigned long long)want);
	OK(mdb_count_all(txn, dups, 0, &n));
	if (n != want_dups)
		T_FAIL("%s: dupsort count_all %llu, want %llu", when, (unsigned long long)n,
		       (unsigned long long)want_dups);
	uint64_t r = 0;
	for (int i = 0; i < LT_A + LT_B && !t_failures; i++) {
		if (!lt_has[i])
			continue;
		if (r % 97 == 0 || r + 1 == want) {
			char kb[16];
			MDB_val k, v;
			lt_key(kb, i);
			int rc = mdb_get_rank(txn, plain, r, &k, &v);
			if (rc || k.mv_size != strlen(kb) || memcmp(k.mv_data, kb, k.mv_size))
				T_FAIL("%s: get_rank(%llu) rc %d, want %s", when,
				       (unsigned long long)r, rc, kb);
			uint64_t kr = ~0ull;
			k = t_val(kb);
			rc = mdb_get_key_rank(txn, plain, &k, NULL, &kr);
			if (rc || kr != r)
				T_FAIL("%s: key_rank(%s) rc %d rank %llu, want %llu", when, kb, rc,
				       (unsigned long long)kr, (unsigned long long)r);
		}
		r++;
	}
}

static void test_counted_commit_leaf_totals(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi plain, dups;
	uint64_t ndups = 0;
	char kb[16], vb[16];
	memset(lt_has, 0, sizeof lt_has);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "plain", MDB_CREATE | MDB_COUNTED, &plain));
	REQUIRE_OK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_COUNTED | MDB_DUPSORT, &dups));
	for (int i = 0; i < LT_A; i++) {
		lt_key(kb, i);
		snprintf(vb, sizeof vb, "v%06d", i);
		MDB_val k = t_val(kb), v = t_val(vb);
		REQUIRE_OK(mdb_put(txn, plain, &k, &v, 0));
		lt_has[i] = 1;
	}
	/* One value, three (a sub-page), or 600 (a sub-DB) per key. */
	for (int i = 0; i < 2000; i++) {
		int nv = i == 1000 ? 600 : i % 7 == 0 ? 3 : 1;
		snprintf(kb, sizeof kb, "d%05d", i);
		for (int d = 0; d < nv; d++) {
			snprintf(vb, sizeof vb, "w%05d", d);
			MDB_val k = t_val(kb), v = t_val(vb);
			REQUIRE_OK(mdb_put(txn, dups, &k, &v, 0));
			ndups++;
		}
	}
	MDB_stat st;
	OK(mdb_stat(txn, plain, &st));
	CHECK_EQ(st.ms_depth, 3);
	REQUIRE_OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	lt_check(txn, plain, dups, ndups, "after the load");
	mdb_txn_abort(txn);

	/* Deletes over a range (some leaves merge), new keys past the end, and
	 * values leaving the sub-DB and a sub-page. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (int i = 10000; i < 20000; i++) {
		if (i % 3 == 0)
			continue;
		lt_key(kb, i);
		MDB_val k = t_val(kb);
		OK(mdb_del(txn, plain, &k, NULL));
		lt_has[i] = 0;
	}
	for (int i = LT_A; i < LT_A + LT_B; i++) {
		lt_key(kb, i);
		MDB_val k = t_val(kb), v = t_val("x");
		OK(mdb_put(txn, plain, &k, &v, 0));
		lt_has[i] = 1;
	}
	for (int d = 0; d < 550; d++) {
		snprintf(vb, sizeof vb, "w%05d", d);
		MDB_val k = t_val("d01000"), v = t_val(vb);
		OK(mdb_del(txn, dups, &k, &v));
		ndups--;
	}
	MDB_val k7 = t_val("d00007"), v7 = t_val("w00001");
	OK(mdb_del(txn, dups, &k7, &v7));
	ndups--;
	lt_check(txn, plain, dups, ndups, "in the second txn");
	REQUIRE_OK(mdb_txn_commit(txn));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	lt_check(txn, plain, dups, ndups, "after the second txn");
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void test_counted_errors(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi plain, cnt;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "plain", MDB_CREATE, &plain));
	REQUIRE_OK(mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED, &cnt));
	unsigned fl = 0;
	OK(mdb_dbi_flags(txn, cnt, &fl));
	CHECK_EQ(fl, MDB_COUNTED);
	uint64_t n = 7;
	OK(mdb_count_all(txn, cnt, 0, &n));
	CHECK_EQ(n, 0);
	MDB_val k, v;
	CHECK_RC(mdb_get_rank(txn, cnt, 0, &k, &v), MDB_NOTFOUND);
	CHECK_RC(mdb_count_all(txn, plain, 0, &n), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_get_rank(txn, plain, 0, &k, &v), MDB_INCOMPATIBLE);
	CHECK_RC(mdb_count_all(txn, cnt, 0x100, &n), EINVAL);
	CHECK_RC(mdb_count_all(txn, cnt, 0, NULL), EINVAL);
	CHECK_RC(mdb_range_count_values(txn, cnt, NULL, NULL, 0, &n), MDB_INCOMPATIBLE);
	k = t_val("a");
	v = t_val("1");
	OK(mdb_put(txn, cnt, &k, &v, 0));
	uint64_t r = 9;
	OK(mdb_get_key_rank(txn, cnt, &k, NULL, &r));
	CHECK_EQ(r, 0);
	MDB_val other = t_val("2");
	CHECK_RC(mdb_get_key_rank(txn, cnt, &k, &other, &r), MDB_NOTFOUND);
	MDB_val absent = t_val("b");
	CHECK_RC(mdb_get_key_rank(txn, cnt, &absent, NULL, &r), MDB_NOTFOUND);
	OK(mdb_txn_commit(txn));
	mdb_env_close(env);

	/* Stock LMDB cannot read counted branch pages: a stock-format store
	 * must not get a COUNTED database. */
	env = t_env_open(t_path("lmdb.db"), MDB_NOSUBDIR | MDB_FORMAT_LMDB, 0, 4);
	REQUIRE(env);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	CHECK_ERR(mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED, &cnt));
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

int main(void)
{
#ifdef STOCK_LMDB
	T_DONE(); /* dlmdb-only */
#else
	RUN(test_counted_errors);
	RUN(test_counted_plain);
	RUN(test_counted_dupsort);
	RUN(test_counted_plain_v1);
	RUN(test_counted_dupsort_v1);
	RUN(test_counted_prefix);
	RUN(test_counted_dupsort_prefix);
	RUN(test_counted_nested_idle_child);
	RUN(test_counted_nested);
	RUN(test_counted_nested_dupsort);
	RUN(test_counted_value_rewrites);
	RUN(test_counted_value_rewrites_prefix);
	RUN(test_counted_value_rewrites_prefix_user_order);
	RUN(test_counted_value_rewrites_prefix_dupsort);
	RUN(test_counted_commit_leaf_totals);
	T_DONE();
#endif
}
