/*
 * test_prefix.c - prefix-compressed leaves as this engine writes them
 * (dlmdb-extensions §3.7-3.14).
 *
 * Every leaf of stores built by inserts and deletes at any index (new
 * smallest keys, deleted trunks, splits, merges) is read straight from the
 * map and decoded by the slow reference decoder below (one byte at a time,
 * §3.11 as written), then compared with what cursors return; every page
 * must hold the canonical encoding (§3.8) and the exact mp_pad (§3.10).
 * Sorted loads must fill leaves; list_dup on a PREFIX|DUPSORT|DUPFIXED DB
 * must hand out pointers into the LEAF2 pages.
 */
#include "t.h"

#ifndef STOCK_LMDB

/* ---- reference reader: no shared code with the engine ------------------- */

typedef struct ref_key {
	unsigned char b[600];
	size_t n;
} ref_key;

static unsigned rd16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

/* Decode stored bytes e[0..l) of node i >= 1 against trunk t[0..tl) exactly
 * as §3.11 and the raw-fallback rules say.  -1: corrupt. */
static int ref_decode(const unsigned char *t, size_t tl, const unsigned char *e, size_t l,
	ref_key *out, int *canonical)
{
	uint64_t s = 0;
	size_t h = 0;
	int done = 0;
	if (l == 0)
		return -1;
	while (h < l && h < 9) {
		unsigned char b = e[h];
		h++;
		s = s * 128 + (b & 0x7f);
		if ((b & 0x80) == 0) {
			done = 1;
			break;
		}
	}
	if (!done)
		return -1;
	size_t minimal = 1;
	for (uint64_t v = s; v >= 128; v /= 128)
		minimal++;
	int raw = s > tl || h != minimal || (h < l && s < tl && e[h] == t[s]);
	if (raw) {
		memcpy(out->b, e, l);
		out->n = l;
		*canonical = 0;
		return 0;
	}
	memcpy(out->b, t, (size_t)s);
	memcpy(out->b + s, e + h, l - h);
	out->n = (size_t)s + l - h;
	/* canonical: s is the whole common prefix (the raw rule already
	 * rejects a suffix starting with t[s]) */
	*canonical = 1;
	return 0;
}

typedef struct walk_ctx {
	const unsigned char *map;
	size_t psize;
	unsigned pad;		/* 1: DLMDB even key padding */
	ref_key *keys;		/* decoded keys of the main tree, in walk order */
	size_t nkeys, cap;
	size_t leaves, leaf_used, problems;
	unsigned subtree;	/* which pi_subtree to collect */
} walk_ctx;

static int ref_leaf(walk_ctx *w, const unsigned char *pg, size_t pgsize)
{
	unsigned lower = rd16(pg + 12), n = (lower - 16) / 2, pad = rd16(pg + 8);
	size_t longest = 0;
	const unsigned char *t = NULL;
	size_t tl = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned off = rd16(pg + 16 + 2 * i);
		if (off + 8 > pgsize)
			return -1;
		unsigned ks = rd16(pg + off + 6);
		const unsigned char *e = pg + off + 8;
		if (off + 8 + ks > pgsize)
			return -1;
		ref_key k;
		if (i == 0) {
			memcpy(k.b, e, ks);
			k.n = ks;
			t = e;
			tl = ks;
		} else {
			int canon;
			if (ref_decode(t, tl, e, ks, &k, &canon))
				return -1;
			if (!canon)
				w->problems++;
		}
		if (k.n > longest)
			longest = k.n;
		if (w->nkeys == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 1024;
			w->keys = realloc(w->keys, w->cap * sizeof(ref_key));
		}
		w->keys[w->nkeys++] = k;
	}
	if (pad != longest)
		w->problems++;
	return 0;
}

static int ref_visit(void *ctx, const MDB_pageinfo *pi)
{
	walk_ctx *w = ctx;
	if (!(pi->pi_type & MDB_PAGE_LEAF) || (pi->pi_type & (MDB_PAGE_LEAF2 | MDB_PAGE_SUBPAGE)) ||
	    pi->pi_subtree != w->subtree)
		return 0;
	const unsigned char *pg = w->map + pi->pi_pgno * w->psize;
	w->leaves++;
	w->leaf_used += pi->pi_used;
	return ref_leaf(w, pg, w->psize) ? MDB_CORRUPTED : 0;
}

/* Walk dbi's leaves with the reference reader and compare every key with a
 * cursor scan of the same snapshot. */
static void ref_compare(MDB_env *env, MDB_dbi dbi, walk_ctx *w)
{
	MDB_txn *txn;
	MDB_stat st;
	void *map;
	size_t msz;
	REQUIRE_OK(mdb_env_get_map(env, &map, &msz));
	REQUIRE_OK(mdb_env_stat(env, &st));
	w->map = map;
	w->psize = st.ms_psize;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_page_walk(txn, dbi, ref_visit, w));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k, v;
	size_t i = 0, mism = 0;
	int rc;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_NODUP), i++) {
		if (i >= w->nkeys || k.mv_size != w->keys[i].n ||
		    memcmp(k.mv_data, w->keys[i].b, k.mv_size))
			mism++;
	}
	CHECK_RC(rc, MDB_NOTFOUND);
	CHECK_EQ(i, w->nkeys);
	CHECK_EQ(mism, 0);
	CHECK_EQ(w->problems, 0);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
}

/* ---- workloads -------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Keys with long, varying shared prefixes and lengths:
 * "entity/<a>/attribute-<b>/<1..24 digits>". */
static size_t churn_key(char *b, uint64_t r)
{
	char tail[32];
	int tl = (int)((r >> 20) % 24) + 1;
	snprintf(tail, sizeof tail, "%024llu", (unsigned long long)(r >> 24));
	return (size_t)sprintf(b, "entity/%04u/attribute-%02u/%.*s", (unsigned)(r % 700),
		(unsigned)((r >> 10) % 37), tl, tail + 24 - tl);
}

/* Random puts and deletes, many at the front of pages: trunks change, pages
 * split, merge and borrow.  Checked after each of several commits. */
static void churn(unsigned flags)
{
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	char kb[128], vb[300];
	for (int round = 0; round < 6; round++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, "p", MDB_CREATE | flags, &dbi));
		for (int i = 0; i < 6000; i++) {
			uint64_t r = next_rand();
			MDB_val k = { churn_key(kb, r), kb };
			MDB_val v = { (size_t)(r % 7 == 0 ? 250 : 5 + r % 40), vb };
			memset(vb, 'a' + (int)(r % 26), v.mv_size);
			if (round >= 3 && r % 3 == 0) {
				/* delete the first key of the tree or a random one */
				MDB_cursor *c;
				REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
				MDB_val fk, fv;
				int rc = (r % 2) ? mdb_cursor_get(c, &fk, &fv, MDB_FIRST) :
					mdb_cursor_get(c, &k, &fv, MDB_SET_RANGE);
				if (rc == 0)
					OK(mdb_cursor_del(c, 0));
				mdb_cursor_close(c);
			} else {
				OK(mdb_put(txn, dbi, &k, &v, 0));
			}
		}
		OK(mdb_txn_commit(txn));
		walk_ctx w = { 0 };
		ref_compare(env, dbi, &w);
		CHECK(w.leaves > 20);
		free(w.keys);
	}
	mdb_env_close(env);
}

static void test_prefix_reference_decode(void) { churn(MDB_PREFIX_COMPRESSION); }
static void test_prefix_reference_decode_counted(void)
{
	churn(MDB_PREFIX_COMPRESSION | MDB_COUNTED);
}

static int key_desc(const void *a, const void *b)
{
	return -strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every put a new smallest key and every delete the first key: each one
 * changes a trunk, with shared lengths that vary from key to key. */
static void test_prefix_front_puts_and_deletes(void)
{
	enum { N = 12000 };
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	char **keys = malloc(N * sizeof(char *)), kb[128], vb[64];
	REQUIRE(keys);
	for (int i = 0; i < N; i++) {
		size_t n = churn_key(kb, next_rand());
		keys[i] = malloc(n + 1);
		REQUIRE(keys[i]);
		memcpy(keys[i], kb, n + 1);
	}
	qsort(keys, N, sizeof(char *), key_desc);
	int m = 0;	/* distinct keys */
	for (int i = 0; i < N; i++) {
		if (m && !strcmp(keys[m - 1], keys[i]))
			free(keys[i]);
		else
			keys[m++] = keys[i];
	}
	for (int round = 0; round < 3; round++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, "p", MDB_CREATE | MDB_PREFIX_COMPRESSION, &dbi));
		if (round < 2) {
			for (int i = round; i < m; i += 2) {
				MDB_val k = { strlen(keys[i]), keys[i] };
				MDB_val v = { (size_t)(i % 5 == 0 ? 60 : 3 + i % 11), vb };
				memset(vb, 'a' + i % 26, v.mv_size);
				OK(mdb_put(txn, dbi, &k, &v, 0));
			}
		} else {
			MDB_cursor *c;
			MDB_val k, v;
			REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
			for (int i = 0; i < m / 2; i++) {
				REQUIRE_OK(mdb_cursor_get(c, &k, &v, MDB_FIRST));
				OK(mdb_cursor_del(c, 0));
			}
			mdb_cursor_close(c);
		}
		OK(mdb_txn_commit(txn));
		walk_ctx w = { 0 };
		ref_compare(env, dbi, &w);
		CHECK_EQ(w.nkeys, (size_t)(round == 0 ? (m + 1) / 2 : round == 1 ? m : m - m / 2));
		free(w.keys);
	}
	for (int i = 0; i < m; i++)
		free(keys[i]);
	free(keys);
	mdb_env_close(env);
}

/* Sorted input, by MDB_APPEND and by plain in-order puts: leaves at least
 * 90% full (the last leaf of the tree excepted). */
static void sorted_fill(unsigned putflags)
{
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	char kb[128];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "p", MDB_CREATE | MDB_PREFIX_COMPRESSION, &dbi));
	for (int i = 0; i < 100000; i++) {
		/* Datalevin-like: entity id, attribute, value */
		MDB_val k = { (size_t)sprintf(kb, "e%010d/:person/name/%08d", i / 4, i), kb };
		MDB_val v = { 8, "12345678" };
		int rc = mdb_put(txn, dbi, &k, &v, putflags);
		if (rc) {
			T_FAIL("put %d: %s", i, mdb_strerror(rc));
			break;
		}
	}
	OK(mdb_txn_commit(txn));
	walk_ctx w = { 0 };
	ref_compare(env, dbi, &w);
	CHECK_EQ(w.nkeys, 100000);
	/* used bytes over all leaves but one (the partial last) */
	double fill = (double)w.leaf_used / ((double)(w.leaves - 1) * (double)w.psize);
	if (fill < 0.90)
		T_FAIL("leaf fill %.3f after a sorted load (%zu leaves)", fill, w.leaves);
	free(w.keys);
	mdb_env_close(env);
}

static void test_prefix_sorted_append_fills_leaves(void) { sorted_fill(MDB_APPEND); }
static void test_prefix_sorted_puts_fill_leaves(void) { sorted_fill(0); }

/* list_dup on PREFIX|DUPSORT|DUPFIXED: the values are LEAF2 items (never
 * compressed), so the list points into the map, across several pages. */
static void test_prefix_dupfixed_list_dup_points_into_map(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "f", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED |
		MDB_PREFIX_COMPRESSION, &dbi));
	const unsigned N = 3000;
	for (unsigned i = 0; i < N; i++) {
		uint64_t be = __builtin_bswap64((uint64_t)i * 7);
		MDB_val k = t_val("key"), v = { 8, &be };
		OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	void *map;
	size_t msz;
	REQUIRE_OK(mdb_env_get_map(env, &map, &msz));
	MDB_stat st;
	REQUIRE_OK(mdb_env_stat(env, &st));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k = t_val("key"), v;
	REQUIRE_OK(mdb_cursor_get(c, &k, &v, MDB_SET));
	const MDB_val *vals;
	mdb_size_t n;
	REQUIRE_OK(mdb_cursor_list_dup(c, &vals, &n));
	CHECK_EQ(n, N);
	const char *lo = map, *hi = lo + msz;
	size_t outside = 0, wrong = 0, pages = 0;
	size_t lastpg = (size_t)-1;
	for (mdb_size_t i = 0; i < n; i++) {
		const char *p = vals[i].mv_data;
		uint64_t be = __builtin_bswap64((uint64_t)i * 7);
		if (p < lo || p + 8 > hi)
			outside++;
		if (vals[i].mv_size != 8 || memcmp(p, &be, 8))
			wrong++;
		size_t pg = (size_t)(p - lo) / st.ms_psize;
		if (pg != lastpg) {
			pages++;
			lastpg = pg;
		}
	}
	CHECK_EQ(outside, 0);
	CHECK_EQ(wrong, 0);
	if (pages < 3)
		T_FAIL("list spans %zu pages, expected several LEAF2 pages", pages);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Prefix DUPSORT: values in sub-pages and dup sub-DB leaves, inserted in
 * random order and deleted from the front, read back intact. */
static void test_prefix_dupsort_values(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 128u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	char kb[64], vb[64];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "d", MDB_CREATE | MDB_DUPSORT | MDB_PREFIX_COMPRESSION |
		MDB_COUNTED, &dbi));
	for (int i = 0; i < 40000; i++) {
		uint64_t r = next_rand();
		unsigned key = (unsigned)(r % 50), nv = key < 5 ? 5000 : 30;
		MDB_val k = { (size_t)sprintf(kb, "key-%03u", key), kb };
		MDB_val v = { (size_t)sprintf(vb, "value/common/prefix/%06u", (unsigned)((r >> 8) % nv)), vb };
		OK(mdb_put(txn, dbi, &k, &v, 0));
		if (r % 5 == 0) {
			MDB_cursor *c;
			REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
			MDB_val fv;
			if (mdb_cursor_get(c, &k, &fv, MDB_SET) == 0)
				OK(mdb_cursor_del(c, 0));	/* the smallest value */
			mdb_cursor_close(c);
		}
	}
	OK(mdb_txn_commit(txn));
	/* every value strictly ascending and well-formed */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	MDB_val k, v;
	char prevk[64] = "", prevv[64] = "";
	size_t bad = 0, total = 0;
	int rc;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		char ks[64], vs[64];
		snprintf(ks, sizeof ks, "%.*s", (int)k.mv_size, (char *)k.mv_data);
		snprintf(vs, sizeof vs, "%.*s", (int)v.mv_size, (char *)v.mv_data);
		if (strncmp(vs, "value/common/prefix/", 20) || v.mv_size != 26)
			bad++;
		if (!strcmp(ks, prevk) && strcmp(prevv, vs) >= 0)
			bad++;
		strcpy(prevk, ks);
		strcpy(prevv, vs);
		total++;
	}
	CHECK_RC(rc, MDB_NOTFOUND);
	CHECK_EQ(bad, 0);
	MDB_stat st;
	OK(mdb_stat(txn, dbi, &st));
	CHECK_EQ(st.ms_entries, total);
	uint64_t cnt = 0;
	OK(mdb_count_all(txn, dbi, 0, &cnt));
	CHECK_EQ(cnt, total);
	/* sub-DB leaves decode with the reference reader too */
	walk_ctx w = { 0 };
	w.subtree = 1;
	void *map;
	size_t msz;
	OK(mdb_env_get_map(env, &map, &msz));
	w.map = map;
	w.psize = st.ms_psize;
	OK(mdb_page_walk(txn, dbi, ref_visit, &w));
	CHECK(w.leaves > 0);
	CHECK_EQ(w.problems, 0);
	free(w.keys);
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* ---- read-txn steps: incremental decoding ------------------------------- */

typedef struct step_item {
	unsigned char k[64];
	size_t kl;
	unsigned char v[48];
	size_t vl;
} step_item;

static int step_item_cmp(const void *a, const void *b)
{
	const step_item *x = a, *y = b;
	size_t m = x->kl < y->kl ? x->kl : y->kl;
	int c = memcmp(x->k, y->k, m);
	if (c)
		return c;
	if (x->kl != y->kl)
		return x->kl < y->kl ? -1 : 1;
	m = x->vl < y->vl ? x->vl : y->vl;
	c = memcmp(x->v, y->v, m);
	if (c)
		return c;
	return x->vl < y->vl ? -1 : x->vl > y->vl;
}

/* Bytes of varied shapes: one of a few common heads, then a tail of 0 to 40
 * bytes from a 3-letter alphabet, so neighbours share 0 to 50 bytes with a
 * page's first key and shared lengths go up and down along a page. */
static size_t step_bytes(unsigned char *b, uint64_t r, size_t maxtail)
{
	static const char *heads[] = { "", "ab", "abab/", "datalevin/attr/name/" };
	const char *h = heads[r % 4];
	size_t n = strlen(h), tail = (size_t)((r >> 2) % (maxtail + 1));
	memcpy(b, h, n);
	uint64_t x = r >> 9;
	for (size_t i = 0; i < tail; i++) {
		if (!x)
			x = next_rand();
		b[n + i] = (unsigned char)('a' + x % 3);
		x /= 3;
	}
	if (!n && !tail)
		b[n + tail++] = 'z';
	return n + tail;
}

/* Compare one cursor answer with the expected item. */
static int step_same(const MDB_val *k, const MDB_val *v, const step_item *e, int dups)
{
	if (k->mv_size != e->kl || memcmp(k->mv_data, e->k, e->kl))
		return 0;
	if (dups && (v->mv_size != e->vl || memcmp(v->mv_data, e->v, e->vl)))
		return 0;
	return 1;
}

/* Every key (and duplicate) returned by NEXT and PREV scans, SET_RANGE and
 * random back-and-forth steps in read txns equals the one written: the
 * decoded-key cache of a read-txn cursor never hands out a stale or mixed
 * key, also across pages, across reset/renew of the txn onto a newer
 * snapshot, and for duplicates in sub-pages and sub-DBs. */
static void step_check(int dups)
{
	MDB_env *env = t_env_open(t_dir, 0, 256u << 20, 4);
	REQUIRE(env);
	enum { N = 30000 };
	step_item *items = calloc(N, sizeof(*items));
	REQUIRE(items);
	size_t n = 0;
	MDB_txn *txn;
	MDB_dbi dbi;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "s", MDB_CREATE | MDB_PREFIX_COMPRESSION |
		(dups ? MDB_DUPSORT : 0), &dbi));
	for (size_t i = 0; i < N; i++) {
		step_item *e = &items[n];
		e->kl = step_bytes(e->k, next_rand(), dups ? 6 : 40);
		e->vl = dups ? step_bytes(e->v, next_rand(), 20) : 8;
		if (!dups)
			memcpy(e->v, &i, 8);
		MDB_val k = { e->kl, e->k }, v = { e->vl, e->v };
		int rc = mdb_put(txn, dbi, &k, &v, dups ? MDB_NODUPDATA : MDB_NOOVERWRITE);
		if (rc == MDB_KEYEXIST)
			continue;
		REQUIRE_OK(rc);
		n++;
	}
	OK(mdb_txn_commit(txn));
	qsort(items, n, sizeof(*items), step_item_cmp);

	MDB_cursor *c;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	for (int round = 0; round < 2; round++) {
		MDB_val k, v;
		size_t i = 0, bad = 0;
		int rc;
		for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && i < n;
		     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), i++)
			bad += !step_same(&k, &v, &items[i], dups);
		CHECK_EQ(i, n);
		CHECK_RC(rc, MDB_NOTFOUND);
		i = n;
		for (rc = mdb_cursor_get(c, &k, &v, MDB_LAST); rc == 0 && i > 0;
		     rc = mdb_cursor_get(c, &k, &v, MDB_PREV))
			bad += !step_same(&k, &v, &items[--i], dups);
		CHECK_EQ(i, 0);
		CHECK_RC(rc, MDB_NOTFOUND);
		/* random positions, then short walks both ways */
		for (int j = 0; j < 300; j++) {
			size_t at = (size_t)(next_rand() % n);
			while (at > 0 && items[at - 1].kl == items[at].kl &&
			       !memcmp(items[at - 1].k, items[at].k, items[at].kl))
				at--;	/* SET_RANGE lands on a key's first duplicate */
			k.mv_size = items[at].kl;
			k.mv_data = items[at].k;
			REQUIRE_OK(mdb_cursor_get(c, &k, &v, MDB_SET_RANGE));
			bad += !step_same(&k, &v, &items[at], dups);
			for (int w = 0; w < 40; w++) {
				int back = (next_rand() & 3) == 0;
				if (back ? at == 0 : at + 1 >= n)
					break;
				at = back ? at - 1 : at + 1;
				REQUIRE_OK(mdb_cursor_get(c, &k, &v, back ? MDB_PREV : MDB_NEXT));
				bad += !step_same(&k, &v, &items[at], dups);
				if (w % 7 == 0) {
					REQUIRE_OK(mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT));
					bad += !step_same(&k, &v, &items[at], dups);
				}
			}
		}
		CHECK_EQ(bad, 0);
		if (round == 0) {
			/* a newer snapshot where every page changed: the same
			 * cursor, renewed, must not reuse what it decoded */
			mdb_txn_reset(txn);
			MDB_txn *w;
			REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &w));
			MDB_cursor *wc;
			REQUIRE_OK(mdb_cursor_open(w, dbi, &wc));
			size_t kept = 0;
			for (size_t x = 0; x < n; x++) {
				MDB_val dk = { items[x].kl, items[x].k }, dv = { items[x].vl, items[x].v };
				if (x % 3 == 1) {
					OK(mdb_del(w, dbi, &dk, dups ? &dv : NULL));
					continue;
				}
				items[kept++] = items[x];
			}
			mdb_cursor_close(wc);
			OK(mdb_txn_commit(w));
			n = kept;
			REQUIRE_OK(mdb_txn_renew(txn));
			REQUIRE_OK(mdb_cursor_renew(txn, c));
		}
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	free(items);
	mdb_env_close(env);
}

static void test_prefix_read_steps_decode_every_key(void) { step_check(0); }
static void test_prefix_read_steps_decode_every_duplicate(void) { step_check(1); }

/* Collects the page numbers of the DB's own leaves. */
typedef struct leaf_list {
	size_t pg[4096];
	size_t n;
} leaf_list;

static int leaf_collect(void *ctx, const MDB_pageinfo *pi)
{
	leaf_list *l = ctx;
	if ((pi->pi_type & MDB_PAGE_LEAF) && !(pi->pi_type & (MDB_PAGE_LEAF2 | MDB_PAGE_SUBPAGE)) &&
	    pi->pi_subtree == 0 && l->n < sizeof(l->pg) / sizeof(l->pg[0]))
		l->pg[l->n++] = (size_t)pi->pi_pgno;
	return 0;
}

/* Nodes this engine never writes but must read as their stored bytes (a
 * suffix that starts with the trunk's byte at s, a shared length past the
 * trunk) and shared lengths of two varint bytes, among keys of 1 to 200
 * bytes: NEXT and PREV scans of read txns, each twice on the same cursor,
 * return exactly what the reference decoder reads from the pages. */
static void test_prefix_read_steps_raw_and_long_nodes(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi dbi;
	unsigned char kb[256], vb[8] = { 0 };
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_dbi_open(txn, "r", MDB_CREATE | MDB_PREFIX_COMPRESSION, &dbi));
	for (int i = 0; i < 4000; i++) {
		uint64_t r = next_rand();
		/* a 150-byte head on every third key: shared lengths >= 128 */
		size_t head = r % 3 == 0 ? 150 : 0, n = head + 1 + (size_t)((r >> 8) % 40);
		memset(kb, 'h', head);
		for (size_t j = head; j < n; j++)
			kb[j] = (unsigned char)('a' + (r >> (12 + j % 40)) % 3);
		MDB_val k = { n, kb }, v = { (size_t)(r >> 60) % 9, vb };
		OK(mdb_put(txn, dbi, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));

	/* rewrite stored key bytes in place (sizes unchanged) through the file */
	leaf_list *ll = calloc(1, sizeof(*ll));
	REQUIRE(ll);
	MDB_stat st;
	void *map;
	size_t msz;
	int fd;
	REQUIRE_OK(mdb_env_stat(env, &st));
	REQUIRE_OK(mdb_env_get_map(env, &map, &msz));
	REQUIRE_OK(mdb_env_get_fd(env, &fd));
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_page_walk(txn, dbi, leaf_collect, ll));
	mdb_txn_abort(txn);
	CHECK(ll->n > 10);
	size_t psize = st.ms_psize, changed = 0;
	for (size_t p = 0; p < ll->n; p++) {
		const unsigned char *pg = (const unsigned char *)map + ll->pg[p] * psize;
		unsigned nk = (rd16(pg + 12) - 16) / 2, off0 = rd16(pg + 16);
		unsigned tl = rd16(pg + off0 + 6);
		const unsigned char *t = pg + off0 + 8;
		for (unsigned i = 1; i < nk; i++) {
			unsigned off = rd16(pg + 16 + 2 * i), l = rd16(pg + off + 6);
			const unsigned char *e = pg + off + 8;
			unsigned char b;
			off_t at = (off_t)(ll->pg[p] * psize + off + 8);
			if (i % 5 == 1 && l >= 2 && e[0] < 0x80 && e[0] < tl) {
				b = t[e[0]];	/* suffix starts with T[s] */
				at += 1;
			} else if (i % 5 == 3 && e[0] < 0x80 && tl + 1 < 0x80) {
				b = (unsigned char)(tl + 1);	/* s past the trunk */
			} else {
				continue;
			}
			REQUIRE(pwrite(fd, &b, 1, at) == 1);
			changed++;
		}
	}
	CHECK(changed > 100);

	walk_ctx w = { 0 };
	w.map = map;
	w.psize = psize;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	OK(mdb_page_walk(txn, dbi, ref_visit, &w));
	CHECK(w.problems > 100);	/* the raw nodes written above */
	MDB_cursor *c;
	REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
	for (int round = 0; round < 2; round++) {
		MDB_val k, v;
		size_t i = 0, mism = 0;
		int rc;
		for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
		     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), i++)
			if (i >= w.nkeys || k.mv_size != w.keys[i].n ||
			    memcmp(k.mv_data, w.keys[i].b, k.mv_size))
				mism++;
		CHECK_RC(rc, MDB_NOTFOUND);
		CHECK_EQ(i, w.nkeys);
		for (rc = mdb_cursor_get(c, &k, &v, MDB_LAST); rc == 0;
		     rc = mdb_cursor_get(c, &k, &v, MDB_PREV)) {
			if (i == 0 || k.mv_size != w.keys[i - 1].n ||
			    memcmp(k.mv_data, w.keys[i - 1].b, k.mv_size))
				mism++;
			i -= i > 0;
		}
		CHECK_RC(rc, MDB_NOTFOUND);
		CHECK_EQ(i, 0);
		CHECK_EQ(mism, 0);
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	free(w.keys);
	free(ll);
	mdb_env_close(env);
}

/* A cursor delete in a key's sub-page, plain, prefix-compressed and
 * fixed-size: of the first value (a compressed sub-page is re-encoded), of
 * one in the middle (a fixed-size one is rebuilt) and of the last; the cursor
 * then steps to the value that followed. */
static void test_dup_cursor_del_lands_on_next(void)
{
	static const unsigned dbflags[3] = { MDB_DUPSORT, MDB_DUPSORT | MDB_PREFIX_COMPRESSION,
		MDB_DUPSORT | MDB_DUPFIXED };
	static const char *names[3] = { "d", "p", "f" };
	for (int f = 0; f < 3; f++) {
		MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 4);
		REQUIRE(env);
		MDB_txn *txn;
		MDB_dbi dbi;
		MDB_cursor *c;
		char vb[64];
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, names[f], MDB_CREATE | dbflags[f], &dbi));
		MDB_val k = t_val("key"), k2 = t_val("later"), v;
		for (int i = 0; i < 10; i++) {
			v.mv_size = (size_t)sprintf(vb, "a-long-shared-value-prefix/%02d", i);
			v.mv_data = vb;
			OK(mdb_put(txn, dbi, &k, &v, 0));
		}
		v = t_val("a-long-shared-value-prefix/99");
		OK(mdb_put(txn, dbi, &k2, &v, 0));
		OK(mdb_txn_commit(txn));
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
		MDB_val kk = k;
		OK(mdb_cursor_get(c, &kk, &v, MDB_SET));
		OK(mdb_cursor_del(c, 0));
		OK(mdb_cursor_get(c, &kk, &v, MDB_NEXT));
		CHECK_STR(v, "a-long-shared-value-prefix/01");
		v = t_val("a-long-shared-value-prefix/05");
		OK(mdb_cursor_get(c, &kk, &v, MDB_GET_BOTH));
		OK(mdb_cursor_del(c, 0));
		OK(mdb_cursor_get(c, &kk, &v, MDB_NEXT));
		CHECK_STR(v, "a-long-shared-value-prefix/06");
		OK(mdb_cursor_get(c, &kk, &v, MDB_LAST_DUP));
		OK(mdb_cursor_del(c, 0));
		OK(mdb_cursor_get(c, &kk, &v, MDB_NEXT));
		CHECK_STR(kk, "later");
		size_t n = 0;
		OK(mdb_cursor_get(c, &kk, &v, MDB_FIRST));
		OK(mdb_cursor_count(c, &n));
		if (n != 7)
			T_FAIL("%zu values left, expected 7", n);
		mdb_cursor_close(c);
		mdb_txn_abort(txn);
		mdb_env_close(env);
	}
}

/* Orders values by their last byte first: the smallest value need not share
 * the most with the others, so re-encoding against a new first value can
 * take more room than the old first value gave back. */
static int last_byte_cmp(const MDB_val *a, const MDB_val *b)
{
	unsigned char x = a->mv_size ? ((unsigned char *)a->mv_data)[a->mv_size - 1] : 0;
	unsigned char y = b->mv_size ? ((unsigned char *)b->mv_data)[b->mv_size - 1] : 0;
	if (x != y)
		return x < y ? -1 : 1;
	size_t m = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	int c = memcmp(a->mv_data, b->mv_data, m);
	return c ? c : (a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size);
}

/* Deleting a compressed sub-page's first value, in place when the others
 * fit against the new first value and by a larger node when they do not
 * (a custom order): the values, their order and the counts stay right. */
static void test_prefix_dup_first_value_deletes(void)
{
	for (int order = 0; order < 2; order++) {
		MDB_env *env = t_env_open(t_dir, 0, 16u << 20, 4);
		REQUIRE(env);
		MDB_txn *txn;
		MDB_dbi dbi;
		char vb[8][64];
		MDB_val vals[8];
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_dbi_open(txn, order ? "c" : "l", MDB_CREATE | MDB_DUPSORT |
			MDB_PREFIX_COMPRESSION | MDB_COUNTED, &dbi));
		if (order)
			REQUIRE_OK(mdb_set_dupsort(txn, dbi, last_byte_cmp));
		/* Under the custom order "x...1" comes first, then "b2", then
		 * the "x...N" that shared 30 bytes with the first. */
		for (int i = 0; i < 8; i++) {
			if (i == 1)
				strcpy(vb[i], "b2");
			else
				sprintf(vb[i], "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx%c", '1' + i);
			vals[i] = (MDB_val){ strlen(vb[i]), vb[i] };
		}
		MDB_val k = t_val("key"), k2 = t_val("zz"), v1 = t_val("one");
		for (int i = 7; i >= 0; i--)
			OK(mdb_put(txn, dbi, &k, &vals[i], 0));
		OK(mdb_put(txn, dbi, &k2, &v1, 0));
		OK(mdb_txn_commit(txn));
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		MDB_cursor *c;
		REQUIRE_OK(mdb_cursor_open(txn, dbi, &c));
		/* the first value before each delete; the last one stays */
		static const int firsts[2][8] = { { 1, 0, 2, 3, 4, 5, 6, -1 },
			{ 0, 1, 2, 3, 4, 5, 6, -1 } };
		const int *first = firsts[order];
		int nf = 8;
		for (int d = 0; first[d] >= 0; d++) {
			MDB_val kk = k, v;
			OK(mdb_cursor_get(c, &kk, &v, MDB_SET));
			if (v.mv_size != vals[first[d]].mv_size ||
			    memcmp(v.mv_data, vals[first[d]].mv_data, v.mv_size))
				T_FAIL("order %d step %d: first value %.*s", order, d, (int)v.mv_size,
					(char *)v.mv_data);
			OK(mdb_cursor_del(c, 0));
			MDB_val nv;
			OK(mdb_cursor_get(c, &kk, &nv, MDB_GET_CURRENT));
			size_t n = 0;
			OK(mdb_cursor_count(c, &n));
			if (n != (size_t)(7 - d))
				T_FAIL("order %d step %d: %zu values", order, d, n);
			/* every later value still there, in order */
			char pb[64];
			MDB_val pv = { 0, pb };
			int seen = 0, rc;
			for (rc = mdb_cursor_get(c, &kk, &v, MDB_FIRST_DUP); rc == 0;
			     rc = mdb_cursor_get(c, &kk, &v, MDB_NEXT_DUP)) {
				if (seen && (order ? last_byte_cmp(&pv, &v) : mdb_dcmp(txn, dbi, &pv, &v)) >= 0)
					T_FAIL("order %d step %d: values out of order", order, d);
				memcpy(pb, v.mv_data, v.mv_size);	/* v may be a decode buffer */
				pv.mv_size = v.mv_size;
				seen++;
			}
			CHECK_RC(rc, MDB_NOTFOUND);
			CHECK_EQ(seen, 7 - d);
		}
		MDB_stat st;
		OK(mdb_stat(txn, dbi, &st));
		CHECK_EQ(st.ms_entries, (size_t)(8 - (nf - 1) + 1));
		uint64_t cnt = 0;
		OK(mdb_count_all(txn, dbi, 0, &cnt));
		CHECK_EQ(cnt, st.ms_entries);
		OK(mdb_txn_commit(txn));
		mdb_env_close(env);
	}
}

#endif

int main(void)
{
#ifndef STOCK_LMDB
	RUN(test_prefix_reference_decode);
	RUN(test_prefix_reference_decode_counted);
	RUN(test_prefix_front_puts_and_deletes);
	RUN(test_prefix_sorted_append_fills_leaves);
	RUN(test_prefix_sorted_puts_fill_leaves);
	RUN(test_prefix_dupfixed_list_dup_points_into_map);
	RUN(test_prefix_dupsort_values);
	RUN(test_dup_cursor_del_lands_on_next);
	RUN(test_prefix_dup_first_value_deletes);
	RUN(test_prefix_read_steps_decode_every_key);
	RUN(test_prefix_read_steps_decode_every_duplicate);
	RUN(test_prefix_read_steps_raw_and_long_nodes);
#endif
	T_DONE();
}
