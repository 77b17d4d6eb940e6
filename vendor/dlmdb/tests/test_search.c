/*
 * test_search.c - the key searches give the positions a sorted model gives,
 * for every way the engine compares keys: the default order with 8-byte
 * keys, with longer keys (first 8 bytes alike or not) and with mixed
 * lengths, MDB_INTEGERKEY with 8- and 4-byte keys, MDB_REVERSEKEY, user
 * comparators, prefix-compressed leaves, and duplicate items searched with
 * MDB_GET_BOTH_RANGE under MDB_INTEGERDUP and the default duplicate order.
 *
 * Each case builds many random stores (random sizes, so trees of one to
 * three levels; keys inserted in random order), then checks thousands of
 * random probes (present keys, absent ones between and around them, keys
 * one byte shorter or longer than present ones) with MDB_SET_RANGE,
 * MDB_SET_KEY and mdb_get against a sorted array of the keys, and the item
 * after each MDB_SET_RANGE position with MDB_NEXT.  The paths cases check
 * the specialised searches against the generic one on the same pages.
 *
 * DLMDB_SEED=<n> changes the seed (soak runs).
 */
#include "t.h"

#define MAXK	80	/* longest key a case makes */
#define STORES	8	/* random stores per case */
#define PROBES	1500	/* probes per store */

typedef int (*order_fn)(const MDB_val *a, const MDB_val *b);

/* ---- the orders, written independently of the engine's ------------------ */

static int ord_lex(const MDB_val *a, const MDB_val *b)
{
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	for (size_t i = 0; i < n; i++) {
		unsigned x = ((const unsigned char *)a->mv_data)[i];
		unsigned y = ((const unsigned char *)b->mv_data)[i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

/* MDB_REVERSEKEY: bytes compared from the last one backwards. */
static int ord_rev(const MDB_val *a, const MDB_val *b)
{
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	for (size_t i = 1; i <= n; i++) {
		unsigned x = ((const unsigned char *)a->mv_data)[a->mv_size - i];
		unsigned y = ((const unsigned char *)b->mv_data)[b->mv_size - i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

static int ord_u64(const MDB_val *a, const MDB_val *b)
{
	uint64_t x, y;
	memcpy(&x, a->mv_data, 8);
	memcpy(&y, b->mv_data, 8);
	return x < y ? -1 : x > y;
}

static int ord_u32(const MDB_val *a, const MDB_val *b)
{
	uint32_t x, y;
	memcpy(&x, a->mv_data, 4);
	memcpy(&y, b->mv_data, 4);
	return x < y ? -1 : x > y;
}

/* User comparators: descending bytes, and shorter keys first. */
static int ord_desc(const MDB_val *a, const MDB_val *b)
{
	return ord_lex(b, a);
}

static int ord_shortlex(const MDB_val *a, const MDB_val *b)
{
	if (a->mv_size != b->mv_size)
		return a->mv_size < b->mv_size ? -1 : 1;
	return ord_lex(a, b);
}

/* ---- cases ---------------------------------------------------------------- */

enum shape {
	FIX8,		/* 8 random bytes */
	FIX64,		/* 64 bytes, the first 8 shared by runs of keys */
	MIXED,		/* 1..MAXK bytes over a small alphabet: long common prefixes */
	PREFIXED,	/* a few long shared stems, then a short tail */
	INT8,		/* native u64 */
	INT4,		/* native u32 */
};

struct scase {
	const char *name;
	enum shape shape;
	unsigned flags;		/* DB flags */
	order_fn order;		/* the order the DB must keep */
	MDB_cmp_func *user;	/* installed with mdb_set_compare, or NULL */
	int dups;		/* search duplicate items instead of keys */
};

static uint64_t g_rng;

static size_t make_key(enum shape sh, unsigned char *k)
{
	static const char *stems[] = { "user/profile/settings/", "user/profile/",
		"order/2026/11/", "o", "user/profile/settings/theme/dark/" };
	uint64_t r = t_rand(&g_rng);
	size_t n;
	switch (sh) {
	case FIX8:
		/* Small values often, so neighbours differ only in the low bytes. */
		if (r & 1)
			r = t_rand(&g_rng) % 5000;
		for (int i = 0; i < 8; i++)
			k[i] = (unsigned char)(r >> (8 * (7 - i)));
		return 8;
	case FIX64:
		for (int i = 0; i < 8; i++)
			k[i] = (unsigned char)((r % 7) >> (8 * (7 - i)));
		for (int i = 8; i < 64; i++)
			k[i] = (unsigned char)(t_rand(&g_rng) % 3);
		return 64;
	case MIXED:
		n = 1 + r % MAXK;
		for (size_t i = 0; i < n; i++)
			k[i] = (unsigned char)('a' + t_rand(&g_rng) % 3);
		return n;
	case PREFIXED: {
		const char *s = stems[r % 5];
		size_t sl = strlen(s), tl = 1 + (r >> 8) % 12;
		memcpy(k, s, sl);
		for (size_t i = 0; i < tl; i++)
			k[sl + i] = (unsigned char)('0' + t_rand(&g_rng) % 10);
		return sl + tl;
	}
	case INT8: {
		uint64_t v = (r & 1) ? t_rand(&g_rng) : t_rand(&g_rng) % 100000;
		memcpy(k, &v, 8);
		return 8;
	}
	case INT4: {
		uint32_t v = (uint32_t)((r & 1) ? t_rand(&g_rng) : t_rand(&g_rng) % 100000);
		memcpy(k, &v, 4);
		return 4;
	}
	}
	return 0;
}

struct mkey {
	size_t len;
	unsigned char b[MAXK];
};

static order_fn g_order;

static int mkey_cmp(const void *pa, const void *pb)
{
	const struct mkey *a = pa, *b = pb;
	MDB_val va = { a->len, (void *)a->b }, vb = { b->len, (void *)b->b };
	return g_order(&va, &vb);
}

/* Index of the first model key >= probe, n when none. */
static size_t model_lower(const struct mkey *m, size_t n, const MDB_val *probe)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		MDB_val v = { m[mid].len, (void *)m[mid].b };
		if (g_order(&v, probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A probe key: a present key, a neighbour of one (last byte moved, a byte
 * added or dropped) or a fresh random key of the shape. */
static size_t make_probe(const struct scase *c, const struct mkey *m, size_t n,
	unsigned char *p)
{
	uint64_t r = t_rand(&g_rng);
	size_t len;
	if (!n || r % 5 == 0)
		return make_key(c->shape, p);
	const struct mkey *k = &m[(r >> 8) % n];
	memcpy(p, k->b, k->len);
	len = k->len;
	int fixed = c->shape == FIX8 || c->shape == FIX64 || c->shape == INT8 ||
		c->shape == INT4;
	switch ((r >> 4) % 5) {
	case 0:
	case 1:
		break;
	case 2:
		p[len - 1]++;
		break;
	case 3:
		p[len - 1]--;
		break;
	default:
		if (fixed)
			p[0] ^= 1;
		else if (len < MAXK && (r & (1u << 20)))
			p[len++] = (unsigned char)(r >> 24);
		else if (len > 1)
			len--;
	}
	return len;
}

static MDB_dbi open_db(MDB_txn *txn, const struct scase *c)
{
	MDB_dbi dbi = 0;
	unsigned fl = MDB_CREATE | c->flags | (c->dups ? MDB_DUPSORT : 0);
	int rc = mdb_dbi_open(txn, "s", fl, &dbi);
	if (rc)
		T_FAIL("mdb_dbi_open: %s", mdb_strerror(rc));
	if (!rc && c->user) {
		if (c->dups)
			rc = mdb_set_dupsort(txn, dbi, c->user);
		else
			rc = mdb_set_compare(txn, dbi, c->user);
		if (rc)
			T_FAIL("set comparator: %s", mdb_strerror(rc));
	}
	return dbi;
}

/* The duplicate cases keep every item under one key. */
static const MDB_val dupkey = { 3, (void *)"dup" };

static void check_store(const struct scase *c, unsigned store)
{
	static struct mkey m[4000];
	char dir[300];
	snprintf(dir, sizeof dir, "%s/s%u", t_dir, store);
	mkdir(dir, 0755);
	MDB_env *env = t_env_open(dir, MDB_NOSYNC, 64u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	size_t want = 1 + t_rand(&g_rng) % (store & 1 ? 3500 : 300), n = 0;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_dbi dbi = open_db(txn, c);
	for (size_t i = 0; i < want; i++) {
		struct mkey *e = &m[n];
		e->len = make_key(c->shape, e->b);
		MDB_val item = { e->len, e->b };
		int rc;
		if (c->dups) {
			k = dupkey;
			v = item;
			rc = mdb_put(txn, dbi, &k, &v, MDB_NODUPDATA);
		} else {
			k = item;
			v.mv_size = e->len;	/* the value repeats the key */
			v.mv_data = e->b;
			rc = mdb_put(txn, dbi, &k, &v, MDB_NOOVERWRITE);
		}
		if (rc == 0)
			n++;
		else if (rc != MDB_KEYEXIST)
			REQUIRE_OK(rc);
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	g_order = c->order;
	qsort(m, n, sizeof m[0], mkey_cmp);

	/* Probe in a read txn (map pages) and in a write txn after an unrelated
	 * change (pages from the dirty table on the changed path). */
	for (int pass = 0; pass < 2; pass++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, pass ? 0 : MDB_RDONLY, &txn));
		dbi = open_db(txn, c);
		if (pass && !c->dups) {
			/* Rewrite the first key's value in place: its path is
			 * now dirty, the rest still comes from the map. */
			MDB_val fk = { m[0].len, m[0].b }, fv = { m[0].len, m[0].b };
			REQUIRE_OK(mdb_put(txn, dbi, &fk, &fv, 0));
		}
		REQUIRE_OK(mdb_cursor_open(txn, dbi, &cur));
		unsigned bad = 0;
		for (unsigned t = 0; t < PROBES && bad < 5; t++) {
			unsigned char pb[MAXK + 1];
			size_t pl = make_probe(c, m, n, pb);
			MDB_val probe = { pl, pb };
			size_t at = model_lower(m, n, &probe);
			MDB_val pk = probe, pv;
			int rc;
			if (c->dups) {
				pk = dupkey;
				pv = probe;
				rc = mdb_cursor_get(cur, &pk, &pv, MDB_GET_BOTH_RANGE);
			} else {
				rc = mdb_cursor_get(cur, &pk, &pv, MDB_SET_RANGE);
			}
			if (at == n) {
				if (rc != MDB_NOTFOUND) {
					T_FAIL("%s store %u probe %u: set-range got %d, want NOTFOUND",
					    c->name, store, t, rc);
					bad++;
				}
			} else {
				MDB_val mk = { m[at].len, m[at].b };
				const MDB_val *got = c->dups ? &pv : &pk;
				if (rc || g_order(got, &mk) != 0 || got->mv_size != mk.mv_size ||
				    memcmp(got->mv_data, mk.mv_data, mk.mv_size) ||
				    (!c->dups && (pv.mv_size != mk.mv_size ||
				     memcmp(pv.mv_data, mk.mv_data, mk.mv_size)))) {
					T_FAIL("%s store %u probe %u: set-range rc %d, not model "
					    "index %zu of %zu", c->name, store, t, rc, at, n);
					bad++;
					continue;
				}
				/* The next item is the model's next. */
				rc = mdb_cursor_get(cur, &pk, &pv, c->dups ? MDB_NEXT_DUP : MDB_NEXT);
				got = c->dups ? &pv : &pk;
				if (at + 1 == n ? rc != MDB_NOTFOUND :
				    (rc || got->mv_size != m[at + 1].len ||
				     memcmp(got->mv_data, m[at + 1].b, m[at + 1].len))) {
					T_FAIL("%s store %u probe %u: next after index %zu: rc %d",
					    c->name, store, t, at, rc);
					bad++;
				}
			}
			/* Exact lookups. */
			int present = at < n && m[at].len == pl && !memcmp(m[at].b, pb, pl);
			if (c->dups) {
				pk = dupkey;
				pv = probe;
				rc = mdb_cursor_get(cur, &pk, &pv, MDB_GET_BOTH);
			} else {
				pk = probe;
				rc = mdb_cursor_get(cur, &pk, &pv, MDB_SET_KEY);
			}
			if (present ? rc != 0 : rc != MDB_NOTFOUND) {
				T_FAIL("%s store %u probe %u: exact lookup rc %d, present %d",
				    c->name, store, t, rc, present);
				bad++;
			}
			if (!c->dups) {
				pk = probe;
				rc = mdb_get(txn, dbi, &pk, &pv);
				if (present ? (rc || pv.mv_size != pl || memcmp(pv.mv_data, pb, pl)) :
				    rc != MDB_NOTFOUND) {
					T_FAIL("%s store %u probe %u: mdb_get rc %d, present %d",
					    c->name, store, t, rc, present);
					bad++;
				}
			}
		}
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

static void run_case(const struct scase *c)
{
	const char *se = getenv("DLMDB_SEED");
	g_rng = 0x9E3779B97F4A7C15ull ^ (se ? strtoull(se, NULL, 10) * 0x100000001B3ull : 0) ^
		(uint64_t)c->shape * 0x51ED27ull ^ c->flags ^ (uint64_t)c->dups << 40;
	if (!g_rng)
		g_rng = 1;
	for (unsigned s = 0; s < STORES; s++)
		check_store(c, s);
}

#define CASE(fn, ...) static void fn(void) { \
	static const struct scase c = { __VA_ARGS__ }; \
	run_case(&c); \
}

CASE(test_search_lex_8byte_keys, "lex8", FIX8, 0, ord_lex, NULL, 0)
CASE(test_search_lex_64byte_keys, "lex64", FIX64, 0, ord_lex, NULL, 0)
CASE(test_search_lex_mixed_lengths, "mixed", MIXED, 0, ord_lex, NULL, 0)
CASE(test_search_lex_shared_stems, "stems", PREFIXED, 0, ord_lex, NULL, 0)
CASE(test_search_integerkey_8byte, "int8", INT8, MDB_INTEGERKEY, ord_u64, NULL, 0)
CASE(test_search_integerkey_4byte, "int4", INT4, MDB_INTEGERKEY, ord_u32, NULL, 0)
CASE(test_search_reversekey, "rev", MIXED, MDB_REVERSEKEY, ord_rev, NULL, 0)
CASE(test_search_reversekey_8byte, "rev8", FIX8, MDB_REVERSEKEY, ord_rev, NULL, 0)
CASE(test_search_user_comparator_desc, "desc", FIX8, 0, ord_desc, ord_desc, 0)
CASE(test_search_user_comparator_shortlex, "shortlex", MIXED, 0, ord_shortlex, ord_shortlex, 0)
CASE(test_search_dups_integerdup, "intdup", INT8, MDB_INTEGERDUP | MDB_DUPFIXED, ord_u64,
	NULL, 1)
CASE(test_search_dups_lex, "lexdup", MIXED, 0, ord_lex, NULL, 1)
CASE(test_search_dups_lex_8byte, "lex8dup", FIX8, 0, ord_lex, NULL, 1)
#ifndef STOCK_LMDB
CASE(test_search_prefix_compressed_stems, "pfx-stems", PREFIXED, MDB_PREFIX_COMPRESSION,
	ord_lex, NULL, 0)
CASE(test_search_prefix_compressed_mixed, "pfx-mixed", MIXED, MDB_PREFIX_COMPRESSION,
	ord_lex, NULL, 0)
CASE(test_search_prefix_compressed_64byte, "pfx-lex64", FIX64, MDB_PREFIX_COMPRESSION,
	ord_lex, NULL, 0)
CASE(test_search_prefix_compressed_dups, "pfx-dup", PREFIXED, MDB_PREFIX_COMPRESSION,
	ord_lex, NULL, 1)
#endif

/* ---- the specialised searches against the generic one ------------------- */

/*
 * The engine picks a specialised key search from a DB's comparator: 8-byte
 * and longer default-order keys, 8-byte MDB_INTEGERKEY keys and
 * prefix-compressed leaves have their own loops, while a comparator the
 * application installs always takes the generic search.  Each case below
 * keeps the same random keys, put in the same order with the same values,
 * in two DBs of one environment: "fast" with the engine's comparator and
 * "gen" with an application comparator of the same order.  The two trees
 * then have the same pages, and every probe must land both cursors on the
 * same entry (and on the model's).  The values make the trees large
 * enough (more than 64 pages) for the searches to prefetch.
 */
#define PATH_KEYS	6000
#define PATH_VAL	100

static int user_lex(const MDB_val *a, const MDB_val *b)
{
	return ord_lex(a, b);
}

static int user_u64(const MDB_val *a, const MDB_val *b)
{
	return ord_u64(a, b);
}

static int user_rev(const MDB_val *a, const MDB_val *b)
{
	return ord_rev(a, b);
}

static void path_val(const struct mkey *k, unsigned char *v)
{
	for (unsigned i = 0; i < PATH_VAL; i++)
		v[i] = (unsigned char)(k->b[i % k->len] + i);
}

static MDB_dbi open_path_db(MDB_txn *txn, const char *name, unsigned flags,
	MDB_cmp_func *user)
{
	MDB_dbi dbi = 0;
	int rc = mdb_dbi_open(txn, name, MDB_CREATE | flags, &dbi);
	if (rc)
		T_FAIL("mdb_dbi_open %s: %s", name, mdb_strerror(rc));
	else if (user && (rc = mdb_set_compare(txn, dbi, user)))
		T_FAIL("mdb_set_compare: %s", mdb_strerror(rc));
	return dbi;
}

/* One SET_RANGE, SET_KEY and mdb_get of probe on cursor c of DB dbi. */
struct pans {
	int range_rc, key_rc, get_rc;
	MDB_val rk, rv, gv;
};

static void path_probe(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *c, const MDB_val *probe,
	struct pans *a)
{
	MDB_val k = *probe, v;
	a->range_rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	a->rk = k;
	a->rv = v;
	k = *probe;
	a->key_rc = mdb_cursor_get(c, &k, &v, MDB_SET_KEY);
	k = *probe;
	a->get_rc = mdb_get(txn, dbi, &k, &a->gv);
}

static int val_eq(const MDB_val *a, const MDB_val *b)
{
	return a->mv_size == b->mv_size && !memcmp(a->mv_data, b->mv_data, a->mv_size);
}

static void check_paths(const struct scase *c, unsigned store)
{
	static struct mkey m[PATH_KEYS];
	char dir[300];
	snprintf(dir, sizeof dir, "%s/p%u", t_dir, store);
	mkdir(dir, 0755);
	MDB_env *env = t_env_open(dir, MDB_NOSYNC, 256u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_cursor *cf, *cg;
	unsigned char vb[PATH_VAL];
	size_t want = PATH_KEYS / 2 + t_rand(&g_rng) % (PATH_KEYS / 2), n = 0;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	MDB_dbi fast = open_path_db(txn, "fast", c->flags, NULL);
	MDB_dbi gen = open_path_db(txn, "gen", c->flags, c->user);
	for (size_t i = 0; i < want; i++) {
		struct mkey *e = &m[n];
		e->len = make_key(c->shape, e->b);
		path_val(e, vb);
		MDB_val k = { e->len, e->b }, v = { PATH_VAL, vb };
		int rc = mdb_put(txn, fast, &k, &v, MDB_NOOVERWRITE);
		int rg = mdb_put(txn, gen, &k, &v, MDB_NOOVERWRITE);
		if (rc != rg)
			T_FAIL("%s: put %zu gave %d and %d", c->name, i, rc, rg);
		if (rc == 0)
			n++;
		else if (rc != MDB_KEYEXIST)
			REQUIRE_OK(rc);
	}
	MDB_stat sf, sg;
	REQUIRE_OK(mdb_stat(txn, fast, &sf));
	REQUIRE_OK(mdb_stat(txn, gen, &sg));
	REQUIRE_OK(mdb_txn_commit(txn));
	if (sf.ms_depth != sg.ms_depth || sf.ms_branch_pages != sg.ms_branch_pages ||
	    sf.ms_leaf_pages != sg.ms_leaf_pages || sf.ms_entries != n)
		T_FAIL("%s: the two trees differ: depth %u/%u, pages %zu+%zu/%zu+%zu",
		    c->name, sf.ms_depth, sg.ms_depth, sf.ms_branch_pages, sf.ms_leaf_pages,
		    sg.ms_branch_pages, sg.ms_leaf_pages);
	if (sf.ms_branch_pages + sf.ms_leaf_pages <= 64)
		T_FAIL("%s: %zu pages, too few to prefetch", c->name,
		    sf.ms_branch_pages + sf.ms_leaf_pages);
	g_order = c->order;
	qsort(m, n, sizeof m[0], mkey_cmp);

	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	fast = open_path_db(txn, "fast", c->flags, NULL);
	gen = open_path_db(txn, "gen", c->flags, c->user);
	REQUIRE_OK(mdb_cursor_open(txn, fast, &cf));
	REQUIRE_OK(mdb_cursor_open(txn, gen, &cg));
	unsigned bad = 0;
	for (unsigned t = 0; t < 4 * PROBES && bad < 5; t++) {
		unsigned char pb[MAXK + 1];
		size_t pl = make_probe(c, m, n, pb);
		MDB_val probe = { pl, pb };
		size_t at = model_lower(m, n, &probe);
		int present = at < n && m[at].len == pl && !memcmp(m[at].b, pb, pl);
		struct pans a, b;
		path_probe(txn, fast, cf, &probe, &a);
		path_probe(txn, gen, cg, &probe, &b);
		int same = a.range_rc == b.range_rc && a.key_rc == b.key_rc &&
			a.get_rc == b.get_rc &&
			(a.range_rc || (val_eq(&a.rk, &b.rk) && val_eq(&a.rv, &b.rv))) &&
			(a.get_rc || val_eq(&a.gv, &b.gv));
		int model = at == n ? a.range_rc == MDB_NOTFOUND :
			a.range_rc == 0 && a.rk.mv_size == m[at].len &&
			!memcmp(a.rk.mv_data, m[at].b, m[at].len);
		model = model && (present ? a.key_rc == 0 && a.get_rc == 0 :
			a.key_rc == MDB_NOTFOUND && a.get_rc == MDB_NOTFOUND);
		if (!same || !model) {
			T_FAIL("%s store %u probe %u: fast rc %d/%d/%d, generic rc %d/%d/%d, "
			    "same entry %d, model index %zu of %zu agrees %d", c->name, store, t,
			    a.range_rc, a.key_rc, a.get_rc, b.range_rc, b.key_rc, b.get_rc, same,
			    at, n, model);
			bad++;
		}
	}
	mdb_cursor_close(cf);
	mdb_cursor_close(cg);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

static void run_paths(const struct scase *c)
{
	const char *se = getenv("DLMDB_SEED");
	g_rng = 0xD1B54A32D192ED03ull ^ (se ? strtoull(se, NULL, 10) * 0x100000001B3ull : 0) ^
		(uint64_t)c->shape * 0x51ED27ull ^ c->flags;
	for (unsigned s = 0; s < 2; s++)
		check_paths(c, s);
}

#define PATHS(fn, ...) static void fn(void) { \
	static const struct scase c = { __VA_ARGS__ }; \
	run_paths(&c); \
}

PATHS(test_search_paths_lex_8byte, "paths-lex8", FIX8, 0, ord_lex, user_lex, 0)
PATHS(test_search_paths_lex_stems, "paths-stems", PREFIXED, 0, ord_lex, user_lex, 0)
PATHS(test_search_paths_lex_64byte, "paths-lex64", FIX64, 0, ord_lex, user_lex, 0)
/* Keys of 1 to 80 bytes: searches with keys of more than 40 bytes meet leaf
 * nodes of other sizes (the value prefetch assumes the search key's). */
PATHS(test_search_paths_lex_mixed, "paths-mixed", MIXED, 0, ord_lex, user_lex, 0)
PATHS(test_search_paths_integerkey, "paths-int8", INT8, MDB_INTEGERKEY, ord_u64, user_u64, 0)
PATHS(test_search_paths_reversekey, "paths-rev", MIXED, MDB_REVERSEKEY, ord_rev, user_rev, 0)
#ifndef STOCK_LMDB
PATHS(test_search_paths_prefix_stems, "paths-pfx-stems", PREFIXED, MDB_PREFIX_COMPRESSION,
	ord_lex, user_lex, 0)
PATHS(test_search_paths_prefix_8byte, "paths-pfx-lex8", FIX8, MDB_PREFIX_COMPRESSION,
	ord_lex, user_lex, 0)
PATHS(test_search_paths_prefix_64byte, "paths-pfx-lex64", FIX64, MDB_PREFIX_COMPRESSION,
	ord_lex, user_lex, 0)
PATHS(test_search_paths_prefix_mixed, "paths-pfx-mixed", MIXED, MDB_PREFIX_COMPRESSION,
	ord_lex, user_lex, 0)
#endif

int main(void)
{
	RUN(test_search_lex_8byte_keys);
	RUN(test_search_lex_64byte_keys);
	RUN(test_search_lex_mixed_lengths);
	RUN(test_search_lex_shared_stems);
	RUN(test_search_integerkey_8byte);
	RUN(test_search_integerkey_4byte);
	RUN(test_search_reversekey);
	RUN(test_search_reversekey_8byte);
	RUN(test_search_user_comparator_desc);
	RUN(test_search_user_comparator_shortlex);
	RUN(test_search_dups_integerdup);
	RUN(test_search_dups_lex);
	RUN(test_search_dups_lex_8byte);
	RUN(test_search_paths_lex_8byte);
	RUN(test_search_paths_lex_stems);
	RUN(test_search_paths_lex_64byte);
	RUN(test_search_paths_lex_mixed);
	RUN(test_search_paths_integerkey);
	RUN(test_search_paths_reversekey);
#ifndef STOCK_LMDB
	RUN(test_search_prefix_compressed_stems);
	RUN(test_search_prefix_compressed_mixed);
	RUN(test_search_prefix_compressed_64byte);
	RUN(test_search_prefix_compressed_dups);
	RUN(test_search_paths_prefix_stems);
	RUN(test_search_paths_prefix_8byte);
	RUN(test_search_paths_prefix_64byte);
	RUN(test_search_paths_prefix_mixed);
#endif
	T_DONE();
}
