/* Randomized model test: a seeded stream of put/del/get/cursor operations
 * in transactions that commit or abort, checked step by step against a simple
 * in-memory model, with periodic full scans, reopens and snapshot checks.
 *
 * DLMDB_SEED=<n> picks the seed (default fixed), DLMDB_MODEL_OPS=<n> the
 * number of operations per run (default 50000), DLMDB_MODEL_PARANOID=<txn>
 * checks everything after each op from that transaction on.  On a mismatch the seed, the
 * transaction number and the operation are printed so it can be replayed. */
#include "t.h"

#define NKEYS 3000
#define MAPSIZE (128u << 20)

struct blob {
	size_t len;
	unsigned char *p;
};

struct model {
	struct blob val[NKEYS]; /* p == NULL: absent (len 0 values have p != NULL) */
	size_t count;
};

/* Undo log for the open write transaction. */
struct undo {
	int id;
	struct blob old;
};

/* Key flavour of the run: which keys and which comparator. */
enum { KEYS_TEXT, KEYS_REVERSE, KEYS_INT64, KEYS_LONG, KEYS_PREFIX, KEYS_PREFIX_COUNTED };
static int mode;
static MDB_dbi mdbi;        /* the database under test */

static char keys[NKEYS][512];
static size_t keylen[NKEYS];
static int order[NKEYS];   /* ids sorted by key under the default comparator */
static int rank_of[NKEYS]; /* position of an id in order[] */

static struct model cur;   /* what the open write txn should see */
static struct undo *ulog;
static size_t ulen, ucap;
static uint64_t seed, seed0;
static int txn_no;
static const char *op_name = "";
static int mismatches;
static int last_id = -1;    /* key of the last single-key op, for messages */

#define MISMATCH(...) do { \
	if (mismatches++ < 10) { \
		fprintf(stderr, "  seed %llu txn %d op %s: ", (unsigned long long)seed0, txn_no, op_name); \
		T_FAIL(__VA_ARGS__); \
	} else \
		t_failures++; \
} while (0)

static int keycmp(const void *a, size_t al, const void *b, size_t bl)
{
	const unsigned char *pa = a, *pb = b;
	size_t n = al < bl ? al : bl;
	if (mode == KEYS_INT64) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x < y ? -1 : x > y;
	}
	if (mode == KEYS_REVERSE) {
		/* from the last byte backwards; a shorter common suffix sorts first */
		for (size_t i = 1; i <= n; i++)
			if (pa[al - i] != pb[bl - i])
				return pa[al - i] < pb[bl - i] ? -1 : 1;
	} else {
		int c = memcmp(a, b, n);
		if (c)
			return c;
	}
	return al < bl ? -1 : al > bl;
}

/* Printable name of a key for messages. */
static const char *kname(int id)
{
	static char ring[4][80];
	static int next;
	char *b = ring[next++ & 3];
	if (id < 0)
		return "(none)";
	if (mode == KEYS_INT64) {
		uint64_t x;
		memcpy(&x, keys[id], 8);
		snprintf(b, 80, "#%llu", (unsigned long long)x);
	} else {
		snprintf(b, 80, "%.60s%s", keys[id], keylen[id] > 60 ? "..." : "");
	}
	return b;
}

static int order_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return keycmp(keys[x], keylen[x], keys[y], keylen[y]);
}

/* Keys of many lengths (odd and even, 2..47 bytes), unique: a decimal
 * prefix followed by non-digit filler. */
static void make_keys(void)
{
	for (int i = 0; i < NKEYS; i++) {
		if (mode == KEYS_INT64) {
			uint64_t x = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull; /* distinct */
			if (i % 10 == 0)
				x = (uint64_t)i; /* some small numbers too */
			memcpy(keys[i], &x, 8);
			keylen[i] = 8;
			order[i] = i;
			continue;
		}
		int n = 0;
		if (mode == KEYS_PREFIX || mode == KEYS_PREFIX_COUNTED) {
			/* triple-store style: attribute, a zero byte, then the value */
			static const char *const attrs[] = {
				":com.example.person/email", ":com.example.person/name",
				":com.example.person/age", ":com.example.order/status",
				":com.example.order/id", ":a/b", ":com.example.warehouse/shelf",
			};
			n = snprintf(keys[i], sizeof keys[i], "%s", attrs[i % 7]);
			keys[i][n++] = 0;
		}
		n += snprintf(keys[i] + n, sizeof keys[i] - (size_t)n, "%u",
			      (unsigned)(i * 2654435761u % 100000));
		int fill = mode == KEYS_LONG ? 90 + (i * 37) % 420 : (i * 7) % 44;
		int max = mode == KEYS_LONG ? 510 : 47;
		if (n + fill > max)
			fill = max - n;
		for (int j = 0; j < fill; j++)
			keys[i][n + j] = (char)('a' + (i + j) % 26);
		keylen[i] = (size_t)(n + fill);
		keys[i][keylen[i]] = 0;
		order[i] = i;
	}
	qsort(order, NKEYS, sizeof order[0], order_cmp);
	for (int i = 0; i < NKEYS; i++)
		rank_of[order[i]] = i;
	/* decimal prefixes can collide: make sure keys are distinct */
	for (int i = 1; i < NKEYS; i++)
		if (keycmp(keys[order[i - 1]], keylen[order[i - 1]], keys[order[i]],
			   keylen[order[i]]) == 0) {
			keys[order[i]][keylen[order[i]]++] = '!';
			keys[order[i]][keylen[order[i]]] = 0;
		}
	qsort(order, NKEYS, sizeof order[0], order_cmp);
	for (int i = 0; i < NKEYS; i++)
		rank_of[order[i]] = i;
}

static struct blob random_blob(void)
{
	struct blob b;
	uint64_t r = t_rand(&seed) % 100;
	if (r < 5)
		b.len = 0;
	else if (r < 70)
		b.len = (size_t)(t_rand(&seed) % 60);
	else if (r < 95)
		b.len = 60 + (size_t)(t_rand(&seed) % 500);
	else
		b.len = 1500 + (size_t)(t_rand(&seed) % 9000);
	b.p = malloc(b.len + 1);
	uint64_t x = t_rand(&seed);
	for (size_t i = 0; i < b.len; i++) {
		if ((i & 7) == 0)
			x = t_rand(&seed);
		b.p[i] = (unsigned char)(x >> ((i & 7) * 8));
	}
	return b;
}

static void model_set(int id, struct blob b)
{
	if (ulen == ucap) {
		ucap = ucap ? ucap * 2 : 256;
		ulog = realloc(ulog, ucap * sizeof *ulog);
	}
	ulog[ulen].id = id;
	ulog[ulen].old = cur.val[id];
	ulen++;
	if (cur.val[id].p && !b.p)
		cur.count--;
	else if (!cur.val[id].p && b.p)
		cur.count++;
	cur.val[id] = b;
}

static void model_commit(void)
{
	for (size_t i = 0; i < ulen; i++)
		free(ulog[i].old.p);
	ulen = 0;
}

static void model_abort(void)
{
	while (ulen > 0) {
		struct undo *u = &ulog[--ulen];
		if (cur.val[u->id].p && !u->old.p)
			cur.count--;
		else if (!cur.val[u->id].p && u->old.p)
			cur.count++;
		free(cur.val[u->id].p);
		cur.val[u->id] = u->old;
	}
}

static struct model *model_copy(void)
{
	struct model *m = malloc(sizeof *m);
	m->count = cur.count;
	for (int i = 0; i < NKEYS; i++) {
		m->val[i].len = cur.val[i].len;
		m->val[i].p = NULL;
		if (cur.val[i].p) {
			m->val[i].p = malloc(cur.val[i].len + 1);
			memcpy(m->val[i].p, cur.val[i].p, cur.val[i].len);
		}
	}
	return m;
}

static void model_free(struct model *m)
{
	for (int i = 0; i < NKEYS; i++)
		free(m->val[i].p);
	free(m);
}

/* First present id at sorted position >= pos (or <= pos going down). */
static int present_from(const struct model *m, int pos, int dir)
{
	for (; pos >= 0 && pos < NKEYS; pos += dir)
		if (m->val[order[pos]].p)
			return order[pos];
	return -1;
}

/* Sorted position of the first key >= an arbitrary probe. */
static int lower_bound(const void *k, size_t kl)
{
	int lo = 0, hi = NKEYS;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (keycmp(keys[order[mid]], keylen[order[mid]], k, kl) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int is_key(const MDB_val *k, int id)
{
	return id >= 0 && k->mv_size == keylen[id] && memcmp(k->mv_data, keys[id], keylen[id]) == 0;
}

static int is_val(const MDB_val *v, const struct blob *b)
{
	return b->p && v->mv_size == b->len && (b->len == 0 || memcmp(v->mv_data, b->p, b->len) == 0);
}

/* Compare a whole database (as seen by txn) with a model. */
static void full_scan(MDB_txn *txn, const struct model *m, const char *what)
{
	MDB_cursor *c;
	MDB_val k, v;
	const char *saved = op_name;
	op_name = what;
	if (mdb_cursor_open(txn, mdbi, &c) != 0) {
		MISMATCH("cursor_open failed");
		op_name = saved;
		return;
	}
	int pos = present_from(m, 0, 1);
	size_t n = 0;
	int rc;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		if (pos < 0) {
			MISMATCH("extra key %.*s", (int)k.mv_size, (char *)k.mv_data);
			break;
		}
		if (!is_key(&k, pos) || !is_val(&v, &m->val[pos])) {
			MISMATCH("forward scan item %zu: got key %.*s (%zu bytes value), want %s",
				 n, (int)k.mv_size, (char *)k.mv_data, v.mv_size, kname(pos));
			break;
		}
		n++;
		pos = present_from(m, rank_of[pos] + 1, 1);
	}
	if (rc != 0 && rc != MDB_NOTFOUND)
		MISMATCH("scan error %d (%s)", rc, mdb_strerror(rc));
	if (rc == MDB_NOTFOUND && n != m->count)
		MISMATCH("scan saw %zu items, model has %zu", n, m->count);
	/* and backwards */
	pos = present_from(m, NKEYS - 1, -1);
	n = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_LAST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_PREV)) {
		if (pos < 0 || !is_key(&k, pos)) {
			MISMATCH("backward scan item %zu: got key %.*s", n, (int)k.mv_size,
				 (char *)k.mv_data);
			break;
		}
		n++;
		pos = present_from(m, rank_of[pos] - 1, -1);
	}
	if (rc == MDB_NOTFOUND && n != m->count)
		MISMATCH("backward scan saw %zu items, model has %zu", n, m->count);
	mdb_cursor_close(c);
	MDB_stat st;
	if (mdb_stat(txn, mdbi, &st) != 0 || st.ms_entries != m->count)
		MISMATCH("ms_entries %zu, model %zu", (size_t)st.ms_entries, m->count);
	op_name = saved;
}

/* ---- single operations --------------------------------------------------- */

static void op_put(MDB_txn *txn)
{
	int id = (int)(t_rand(&seed) % NKEYS);
	struct blob b = random_blob();
	MDB_val k = t_mem(keys[id], keylen[id]), v = t_mem(b.p, b.len);
	unsigned flags = t_rand(&seed) % 4 == 0 ? MDB_NOOVERWRITE : 0;
	int rc;
	op_name = flags ? "put-nooverwrite" : "put";
	if (flags == 0 && t_rand(&seed) % 10 == 0) {
		/* MDB_RESERVE then fill */
		op_name = "put-reserve";
		v.mv_data = NULL;
		rc = mdb_put(txn, mdbi, &k, &v, MDB_RESERVE);
		if (rc == 0 && b.len)
			memcpy(v.mv_data, b.p, b.len);
	} else {
		rc = mdb_put(txn, mdbi, &k, &v, flags);
	}
	if (flags && cur.val[id].p) {
		if (rc != MDB_KEYEXIST)
			MISMATCH("NOOVERWRITE on existing key gave %d (%s)", rc, mdb_strerror(rc));
		else if (!is_val(&v, &cur.val[id]))
			MISMATCH("NOOVERWRITE did not return the existing value");
		free(b.p);
		return;
	}
	if (rc != 0) {
		MISMATCH("put gave %d (%s)", rc, mdb_strerror(rc));
		free(b.p);
		return;
	}
	model_set(id, b);
}

static void op_append(MDB_txn *txn)
{
	op_name = "append";
	int last = present_from(&cur, NKEYS - 1, -1);
	int pos = last < 0 ? 0 : rank_of[last] + 1 + (int)(t_rand(&seed) % 3);
	int id;
	int expect_ok = pos < NKEYS;
	if (!expect_ok) {
		if (last < 0)
			return;
		id = order[(int)(t_rand(&seed) % (unsigned)(rank_of[last] + 1))];
	} else {
		id = order[pos];
	}
	struct blob b = random_blob();
	MDB_val k = t_mem(keys[id], keylen[id]), v = t_mem(b.p, b.len);
	int rc = mdb_put(txn, mdbi, &k, &v, MDB_APPEND);
	if (expect_ok) {
		if (rc != 0) {
			MISMATCH("APPEND in order gave %d (%s)", rc, mdb_strerror(rc));
			free(b.p);
		} else {
			model_set(id, b);
		}
	} else {
		if (rc != MDB_KEYEXIST)
			MISMATCH("APPEND out of order gave %d (%s)", rc, mdb_strerror(rc));
		free(b.p);
	}
}

static void op_del(MDB_txn *txn)
{
	op_name = "del";
	int id = (int)(t_rand(&seed) % NKEYS);
	last_id = id;
	MDB_val k = t_mem(keys[id], keylen[id]);
	int rc = mdb_del(txn, mdbi, &k, NULL);
	if (cur.val[id].p) {
		if (rc != 0)
			MISMATCH("del of present key %s gave %d (%s)", kname(id), rc, mdb_strerror(rc));
		else
			model_set(id, (struct blob){ 0, NULL });
	} else if (rc != MDB_NOTFOUND) {
		MISMATCH("del of absent key %s gave %d (%s)", kname(id), rc, mdb_strerror(rc));
	}
}

static void op_get(MDB_txn *txn)
{
	op_name = "get";
	int id = (int)(t_rand(&seed) % NKEYS);
	MDB_val k = t_mem(keys[id], keylen[id]), v;
	int rc = mdb_get(txn, mdbi, &k, &v);
	if (cur.val[id].p) {
		if (rc != 0 || !is_val(&v, &cur.val[id]))
			MISMATCH("get %s gave %d, value %s", kname(id), rc,
				 rc == 0 ? "differs" : mdb_strerror(rc));
	} else if (rc != MDB_NOTFOUND) {
		MISMATCH("get of absent %s gave %d", kname(id), rc);
	}
}

/* SET_RANGE on a probe, then a few NEXT/PREV steps. */
static void op_cursor_walk(MDB_txn *txn)
{
	op_name = "cursor-walk";
	MDB_cursor *c;
	if (mdb_cursor_open(txn, mdbi, &c) != 0) {
		MISMATCH("cursor_open");
		return;
	}
	char probe[512];
	size_t pl;
	int id = (int)(t_rand(&seed) % NKEYS);
	memcpy(probe, keys[id], keylen[id]);
	pl = keylen[id];
	if (mode == KEYS_INT64) {
		/* a nearby number: usually absent */
		uint64_t x;
		memcpy(&x, probe, 8);
		x += (t_rand(&seed) % 5) - 2;
		memcpy(probe, &x, 8);
	} else if (t_rand(&seed) % 2 && pl > 1) {
		pl--; /* a prefix: usually absent */
	}
	MDB_val k = t_mem(probe, pl), v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	int want = present_from(&cur, lower_bound(probe, pl), 1);
	if (want < 0) {
		if (rc != MDB_NOTFOUND)
			MISMATCH("SET_RANGE past the end gave %d", rc);
		mdb_cursor_close(c);
		return;
	}
	if (rc != 0 || !is_key(&k, want) || !is_val(&v, &cur.val[want])) {
		MISMATCH("SET_RANGE (probe from %s) gave %d, want %s", kname(id), rc, kname(want));
		mdb_cursor_close(c);
		return;
	}
	int steps = (int)(t_rand(&seed) % 12);
	for (int s = 0; s < steps; s++) {
		int dir = t_rand(&seed) % 3 == 0 ? -1 : 1;
		int next = present_from(&cur, rank_of[want] + dir, dir);
		rc = mdb_cursor_get(c, &k, &v, dir > 0 ? MDB_NEXT : MDB_PREV);
		if (next < 0) {
			if (rc != MDB_NOTFOUND)
				MISMATCH("%s at the edge gave %d", dir > 0 ? "NEXT" : "PREV", rc);
			break; /* the cursor stays on the edge item; keep it simple */
		}
		if (rc != 0 || !is_key(&k, next) || !is_val(&v, &cur.val[next])) {
			MISMATCH("%s from %s gave %d, want %s", dir > 0 ? "NEXT" : "PREV",
				 kname(want), rc, kname(next));
			break;
		}
		want = next;
	}
	mdb_cursor_close(c);
}

static void op_cursor_del(MDB_txn *txn)
{
	op_name = "cursor-del";
	int id = present_from(&cur, (int)(t_rand(&seed) % NKEYS), 1);
	if (id < 0)
		return;
	MDB_cursor *c;
	if (mdb_cursor_open(txn, mdbi, &c) != 0) {
		MISMATCH("cursor_open");
		return;
	}
	MDB_val k = t_mem(keys[id], keylen[id]), v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET);
	if (rc == 0)
		rc = mdb_cursor_del(c, 0);
	if (rc != 0) {
		MISMATCH("SET+cursor_del %s gave %d (%s)", kname(id), rc, mdb_strerror(rc));
		mdb_cursor_close(c);
		return;
	}
	model_set(id, (struct blob){ 0, NULL });
	int next = present_from(&cur, rank_of[id] + 1, 1);
	if (next >= 0) {
		/* Either GET_CURRENT or NEXT returns the follower (not both in a
		 * row: the first one ends the "just deleted" state). */
		int use_next = (int)(t_rand(&seed) & 1);
		rc = mdb_cursor_get(c, &k, &v, use_next ? MDB_NEXT : MDB_GET_CURRENT);
		if (rc != 0 || !is_key(&k, next))
			MISMATCH("%s after cursor_del gave %d, want %s",
				 use_next ? "NEXT" : "GET_CURRENT", rc, kname(next));
		else {
			int prev = present_from(&cur, rank_of[id] - 1, -1);
			rc = mdb_cursor_get(c, &k, &v, MDB_PREV);
			if (prev >= 0 ? (rc != 0 || !is_key(&k, prev)) : rc != MDB_NOTFOUND)
				MISMATCH("PREV after cursor_del+%s gave %d",
					 use_next ? "NEXT" : "GET_CURRENT", rc);
		}
	} else {
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
		if (rc != MDB_NOTFOUND)
			MISMATCH("NEXT after deleting the last item gave %d", rc);
	}
	mdb_cursor_close(c);
}

static void op_cursor_put_current(MDB_txn *txn)
{
	op_name = "cursor-put-current";
	int id = present_from(&cur, (int)(t_rand(&seed) % NKEYS), 1);
	if (id < 0)
		return;
	MDB_cursor *c;
	if (mdb_cursor_open(txn, mdbi, &c) != 0) {
		MISMATCH("cursor_open");
		return;
	}
	MDB_val k = t_mem(keys[id], keylen[id]), v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET);
	struct blob b = random_blob();
	if (rc == 0) {
		k = t_mem(keys[id], keylen[id]);
		v = t_mem(b.p, b.len);
		rc = mdb_cursor_put(c, &k, &v, MDB_CURRENT);
	}
	if (rc != 0) {
		MISMATCH("MDB_CURRENT on %s gave %d (%s)", kname(id), rc, mdb_strerror(rc));
		free(b.p);
	} else {
		model_set(id, b);
		rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
		if (rc != 0 || !is_key(&k, id) || !is_val(&v, &cur.val[id]))
			MISMATCH("GET_CURRENT after MDB_CURRENT gave %d", rc);
	}
	mdb_cursor_close(c);
}

/* ---- driver -------------------------------------------------------------- */

/* Open the env and the database under test (named, with the key flavour's
 * flags, except for plain text keys which use the main DB). */
static MDB_env *open_env(unsigned flags)
{
	MDB_env *env = t_env_open(t_dir, flags, MAPSIZE, 2);
	if (!env)
		return NULL;
	if (mode == KEYS_TEXT) {
		mdbi = 1;
		return env;
	}
	unsigned dbflags = mode == KEYS_REVERSE ? MDB_REVERSEKEY :
			   mode == KEYS_INT64 ? MDB_INTEGERKEY : 0;
#ifndef STOCK_LMDB
	if (mode == KEYS_PREFIX)
		dbflags = MDB_PREFIX_COMPRESSION;
	if (mode == KEYS_PREFIX_COUNTED)
		dbflags = MDB_PREFIX_COMPRESSION | MDB_COUNTED;
#endif
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, flags & MDB_RDONLY, &txn);
	if (rc == 0) {
		rc = mdb_dbi_open(txn, "model", (flags & MDB_RDONLY ? 0 : MDB_CREATE) | dbflags,
				  &mdbi);
		if (rc == 0)
			rc = mdb_txn_commit(txn);
		else
			mdb_txn_abort(txn);
	}
	if (rc) {
		T_FAIL("open model db: %d (%s)", rc, mdb_strerror(rc));
		mdb_env_close(env);
		return NULL;
	}
	return env;
}

/* Set by regression tests that replay one known seed. */
static uint64_t fixed_seed;
static long fixed_ops;

static void run_model(unsigned create_flags, int key_mode, const char *label)
{
	mode = key_mode;
	const char *s = getenv("DLMDB_SEED");
	const char *o = getenv("DLMDB_MODEL_OPS");
	long ops_total = o ? atol(o) : 50000;
	if (fixed_ops)
		ops_total = fixed_ops;
	const char *pz = getenv("DLMDB_MODEL_PARANOID");
	int paranoid = pz ? atoi(pz) : 0;
	seed = s ? strtoull(s, NULL, 0) : 0x5eed5eedULL;
	if (fixed_seed)
		seed = fixed_seed;
	if (seed == 0)
		seed = 1;
	seed0 = seed;
	fprintf(stderr, "  model %s: seed %llu, %ld ops\n", label, (unsigned long long)seed0,
		ops_total);
	make_keys();
	memset(&cur, 0, sizeof cur);
	ulen = 0;
	mismatches = 0;

	/* Which flags to reopen with, rotating; the format flags matter only
	 * at creation (and for V1 files also on every open). */
	unsigned fmt = create_flags;
	static const unsigned reopen_flags[] = { 0, MDB_NOSYNC, MDB_WRITEMAP | MDB_NOSYNC,
						 MDB_NOTLS, MDB_NOMETASYNC };
	MDB_env *env = open_env(fmt);
	REQUIRE(env);

	MDB_txn *snap = NULL;
	struct model *snap_model = NULL;
	int snap_age = 0;
	long ops = 0;
	for (txn_no = 1; ops < ops_total && mismatches == 0; txn_no++) {
		MDB_txn *txn;
		int rc = mdb_txn_begin(env, NULL, 0, &txn);
		if (rc) {
			MISMATCH("txn_begin gave %d (%s)", rc, mdb_strerror(rc));
			break;
		}
		int n = 1 + (int)(t_rand(&seed) % 120);
		for (int i = 0; i < n && mismatches == 0; i++, ops++) {
			uint64_t r = t_rand(&seed) % 100;
			last_id = -1;
			if (r < 38)
				op_put(txn);
			else if (r < 41)
				op_append(txn);
			else if (r < 60)
				op_del(txn);
			else if (r < 80)
				op_get(txn);
			else if (r < 90)
				op_cursor_walk(txn);
			else if (r < 95)
				op_cursor_del(txn);
			else
				op_cursor_put_current(txn);
			/* DLMDB_MODEL_PARANOID=<txn>: full check after every op from
			 * that txn on, to find the op that breaks things. */
			if (paranoid && txn_no >= paranoid && mismatches == 0) {
				const char *what = op_name;
				full_scan(txn, &cur, "paranoid-scan");
				if (mismatches)
					fprintf(stderr, "  (first bad after op %d of txn %d: %s, key %s)\n",
						i, txn_no, what, kname(last_id));
			}
		}
		if (t_rand(&seed) % 10 == 0) {
			mdb_txn_abort(txn);
			model_abort();
		} else {
			rc = mdb_txn_commit(txn);
			op_name = "commit";
			if (rc) {
				MISMATCH("commit gave %d (%s)", rc, mdb_strerror(rc));
				model_abort();
				break;
			}
			model_commit();
		}

		/* A long-lived reader must keep seeing its snapshot. */
		if (snap && ++snap_age >= 25) {
			full_scan(snap, snap_model, "snapshot-check");
			mdb_txn_abort(snap);
			model_free(snap_model);
			snap = NULL;
		} else if (!snap && txn_no % 60 == 7) {
			if (mdb_txn_begin(env, NULL, MDB_RDONLY, &snap) == 0) {
				snap_model = model_copy();
				snap_age = 0;
			} else {
				MISMATCH("read txn begin failed");
				snap = NULL;
			}
		}
		if (txn_no % 40 == 0) {
			MDB_txn *rd;
			if (mdb_txn_begin(env, NULL, MDB_RDONLY, &rd) == 0) {
				full_scan(rd, &cur, "full-scan");
				mdb_txn_abort(rd);
			} else if (snap) {
				/* this thread already has the snapshot reader */
				MDB_txn *wr;
				if (mdb_txn_begin(env, NULL, 0, &wr) == 0) {
					full_scan(wr, &cur, "full-scan(write)");
					mdb_txn_abort(wr);
				}
			}
		}
		if (txn_no % 150 == 0 && !snap) {
			mdb_env_close(env);
			unsigned f = fmt | reopen_flags[(txn_no / 150) % 5];
			env = open_env(f);
			REQUIRE(env);
		}
	}
	if (snap) {
		full_scan(snap, snap_model, "snapshot-check");
		mdb_txn_abort(snap);
		model_free(snap_model);
	}
	/* Final check after a clean reopen read-only. */
	mdb_env_close(env);
	env = open_env(fmt | MDB_RDONLY);
	if (env) {
		MDB_txn *rd;
		if (mdb_txn_begin(env, NULL, MDB_RDONLY, &rd) == 0) {
			full_scan(rd, &cur, "final-scan");
			mdb_txn_abort(rd);
		}
		mdb_env_close(env);
	}
	fprintf(stderr, "  model %s: %d txns, %zu keys at the end\n", label, txn_no - 1, cur.count);
	for (int i = 0; i < NKEYS; i++)
		free(cur.val[i].p);
	free(ulog);
	ulog = NULL;
	ucap = 0;
}

static void test_model_default(void) { run_model(0, KEYS_TEXT, "v2 text keys"); }
static void test_model_reverse(void) { run_model(0, KEYS_REVERSE, "v2 REVERSEKEY"); }
static void test_model_int64(void) { run_model(0, KEYS_INT64, "v2 INTEGERKEY"); }
static void test_model_long_keys(void) { run_model(0, KEYS_LONG, "v2 long keys"); }

/* Regression: seed 15 once broke a v2 REVERSEKEY tree on a delete (txn 804). */
static void test_model_reverse_seed15(void)
{
	fixed_seed = 15;
	fixed_ops = 60000;
	run_model(0, KEYS_REVERSE, "v2 REVERSEKEY seed 15");
	fixed_seed = 0;
	fixed_ops = 0;
}

#ifndef STOCK_LMDB
static void test_model_lmdb_format(void)
{
	run_model(MDB_FORMAT_LMDB, KEYS_TEXT, "MDB_FORMAT_LMDB text keys");
}
static void test_model_lmdb_reverse(void)
{
	run_model(MDB_FORMAT_LMDB, KEYS_REVERSE, "MDB_FORMAT_LMDB REVERSEKEY");
}
static void test_model_lmdb_long_keys(void)
{
	run_model(MDB_FORMAT_LMDB, KEYS_LONG, "MDB_FORMAT_LMDB long keys");
}
static void test_model_dlmdb_v1(void)
{
	run_model(MDB_FORMAT_DLMDB_V1, KEYS_TEXT, "MDB_FORMAT_DLMDB_V1 text keys");
}
/* Prefix compression (dlmdb-extensions.md §3.7-3.13). */
static void test_model_prefix(void) { run_model(0, KEYS_PREFIX, "v2 PREFIX_COMPRESSION"); }
static void test_model_prefix_counted(void)
{
	run_model(0, KEYS_PREFIX_COUNTED, "v2 PREFIX_COMPRESSION|COUNTED");
}
static void test_model_prefix_v1(void)
{
	run_model(MDB_FORMAT_DLMDB_V1, KEYS_PREFIX, "MDB_FORMAT_DLMDB_V1 PREFIX_COMPRESSION");
}
static void test_model_dlmdb_v1_reverse(void)
{
	run_model(MDB_FORMAT_DLMDB_V1, KEYS_REVERSE, "MDB_FORMAT_DLMDB_V1 REVERSEKEY");
}
static void test_model_dlmdb_v1_long_keys(void)
{
	run_model(MDB_FORMAT_DLMDB_V1, KEYS_LONG, "MDB_FORMAT_DLMDB_V1 long keys");
}
#endif

int main(void)
{
	RUN(test_model_default);
	RUN(test_model_reverse);
	RUN(test_model_int64);
	RUN(test_model_long_keys);
	RUN(test_model_reverse_seed15);
#ifndef STOCK_LMDB
	RUN(test_model_lmdb_format);
	RUN(test_model_lmdb_reverse);
	RUN(test_model_lmdb_long_keys);
	RUN(test_model_dlmdb_v1);
	RUN(test_model_dlmdb_v1_reverse);
	RUN(test_model_dlmdb_v1_long_keys);
	RUN(test_model_prefix);
	RUN(test_model_prefix_counted);
	RUN(test_model_prefix_v1);
#endif
	T_DONE();
}
