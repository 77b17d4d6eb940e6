/*
 * Lookups by key through a cursor whose tree another handle changed.
 *
 * Such a cursor has to find its old place again before a relative op, but a
 * lookup by key (SET, SET_KEY, SET_RANGE, GET_BOTH, GET_BOTH_RANGE) goes
 * straight to the new place.  When that lookup fails, the cursor may keep
 * part of its old state (its duplicate position, its "just deleted" and
 * "past the end" marks), so the engine undoes the attempt, finds the old
 * place and tries again.  These tests check the result of that undo: a
 * cursor that was moved by another handle must answer every following op
 * exactly like a cursor on the same data that never was.
 *
 * Each case builds two DBs with the same final content.  In DB "moved" an
 * unrelated key is written by mdb_put after the cursor took its place; in
 * DB "still" the same key was written before.  Then the cursor runs the same
 * failing lookup and the same follow-up ops on both, and the traces of
 * return codes, keys and values must match.
 *
 * The position after a failed lookup is not specified by the API, and stock
 * LMDB does not even give the same answer twice, so the comparison is
 * between two runs of this engine only.
 */
#include "t.h"

#define TRACE_MAX 4096

enum start { START_ON_ITEM, START_DELETED, START_PAST_END, START_DUP_DELETED, N_STARTS };

struct lookup {
	MDB_cursor_op op;
	const char *key;
	const char *data;	/* NULL: no data argument needed */
};

/* Lookups that fail on the content built by fill(). */
static const struct lookup lookups[] = {
	{ MDB_SET, "k05x", NULL },		/* between two keys */
	{ MDB_SET_KEY, "zzzz", NULL },		/* above every key */
	{ MDB_SET_RANGE, "zzzz", NULL },	/* nothing at or above */
	{ MDB_GET_BOTH, "k05", "v999" },	/* key there, value not */
	{ MDB_GET_BOTH, "k07", "v000x" },	/* single value, other value */
	{ MDB_GET_BOTH_RANGE, "k05", "w" },	/* above the key's last value */
	{ MDB_GET_BOTH_RANGE, "k11", "w" },	/* in a key with a sub-DB */
	{ MDB_GET_BOTH, "k03x", "v000" },	/* no such key */
};

static const MDB_cursor_op follow_ups[] = {
	MDB_GET_CURRENT, MDB_NEXT, MDB_NEXT_DUP, MDB_NEXT_NODUP, MDB_PREV, MDB_PREV_DUP,
	MDB_PREV_NODUP, MDB_NEXT, MDB_NEXT,
};

/* Key i holds (i * 7) % 12 values, at least one (k05: 11, k07: 1, k09: 3);
 * key 11 holds enough to need its own sub-DB. */
static unsigned values_of(unsigned i)
{
	if (i == 11)
		return 700;
	unsigned n = (i * 7) % 12;
	return n ? n : 1;
}

static int fill(MDB_txn *txn, MDB_dbi dbi)
{
	char kb[16], vb[16];
	for (unsigned i = 0; i < 20; i++) {
		for (unsigned j = 0; j < values_of(i); j++) {
			snprintf(kb, sizeof kb, "k%02u", i);
			snprintf(vb, sizeof vb, "v%03u", j);
			MDB_val k = t_val(kb), v = t_val(vb);
			int rc = mdb_put(txn, dbi, &k, &v, 0);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* The write that moves a cursor: keys below every start place, enough of
 * them to split the leaves the start places are on, so that the nodes
 * (and the duplicate sub-pages inside them) move to other addresses. */
static int put_unrelated(MDB_txn *txn, MDB_dbi dbi)
{
	char kb[16], vb[128];
	memset(vb, 'x', sizeof vb);
	for (unsigned i = 0; i < 150; i++) {
		snprintf(kb, sizeof kb, "a%03u", i);
		MDB_val k = t_val(kb), v = t_mem(vb, sizeof vb);
		int rc = mdb_put(txn, dbi, &k, &v, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static void trace_add(char *trace, size_t *len, const char *what, int rc, const MDB_val *k,
	const MDB_val *v)
{
	int n = snprintf(trace + *len, TRACE_MAX - *len, "%s:%d", what, rc);
	if (n > 0 && (size_t)n < TRACE_MAX - *len)
		*len += (size_t)n;
	if (!rc && k && v) {
		n = snprintf(trace + *len, TRACE_MAX - *len, "=%.*s/%.*s", (int)k->mv_size,
		    (const char *)k->mv_data, (int)v->mv_size, (const char *)v->mv_data);
		if (n > 0 && (size_t)n < TRACE_MAX - *len)
			*len += (size_t)n;
	}
	if (*len + 1 < TRACE_MAX)
		trace[(*len)++] = ' ';
	trace[*len] = 0;
}

/* Take the start place on cursor c; -1 if the content does not allow it. */
static int take_start(MDB_cursor *c, enum start start)
{
	MDB_val k = t_val("k05"), v = t_val("v003");
	switch (start) {
	case START_ON_ITEM:
		return mdb_cursor_get(c, &k, &v, MDB_GET_BOTH);
	case START_DELETED:
		k = t_val("k09");
		if (mdb_cursor_get(c, &k, &v, MDB_SET_KEY))
			return -1;
		return mdb_cursor_del(c, MDB_NODUPDATA);
	case START_DUP_DELETED:
		if (mdb_cursor_get(c, &k, &v, MDB_GET_BOTH))
			return -1;
		return mdb_cursor_del(c, 0);
	case START_PAST_END:
		if (mdb_cursor_get(c, &k, &v, MDB_LAST))
			return -1;
		return mdb_cursor_get(c, &k, &v, MDB_NEXT) == MDB_NOTFOUND ? 0 : -1;
	default:
		return -1;
	}
}

/* Run one case on DB `dbi` and write its trace.  `moved`: the unrelated key
 * is written after the cursor took its place (else it is already there). */
static int run_case(MDB_env *env, const char *name, int moved, enum start start,
	const struct lookup *lk, char *trace)
{
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *c;
	size_t len = 0;
	int rc;
	trace[0] = 0;
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn)))
		return rc;
	if ((rc = mdb_dbi_open(txn, name, MDB_CREATE | MDB_DUPSORT, &dbi)) ||
	    (rc = fill(txn, dbi)) || (!moved && (rc = put_unrelated(txn, dbi))) ||
	    (rc = mdb_cursor_open(txn, dbi, &c))) {
		mdb_txn_abort(txn);
		return rc;
	}
	if (take_start(c, start)) {
		mdb_txn_abort(txn);
		return -1;
	}
	if (moved && (rc = put_unrelated(txn, dbi))) {
		mdb_txn_abort(txn);
		return rc;
	}
	MDB_val k = t_val(lk->key), v = t_val(lk->data ? lk->data : "");
	rc = mdb_cursor_get(c, &k, &v, lk->op);
	trace_add(trace, &len, "lookup", rc, NULL, NULL);
	for (size_t i = 0; i < sizeof follow_ups / sizeof follow_ups[0]; i++) {
		MDB_val fk = { 0, NULL }, fv = { 0, NULL };
		char what[16];
		snprintf(what, sizeof what, "op%d", (int)follow_ups[i]);
		rc = mdb_cursor_get(c, &fk, &fv, follow_ups[i]);
		trace_add(trace, &len, what, rc, &fk, &fv);
	}
	mdb_txn_abort(txn);
	return 0;
}

static void test_failed_lookup_on_moved_cursor(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	REQUIRE(env);
	static char moved_trace[TRACE_MAX], still_trace[TRACE_MAX];
	unsigned cases = 0;
	for (int s = 0; s < N_STARTS; s++) {
		for (size_t l = 0; l < sizeof lookups / sizeof lookups[0]; l++) {
			int rc_moved = run_case(env, "moved", 1, (enum start)s, &lookups[l], moved_trace);
			int rc_still = run_case(env, "still", 0, (enum start)s, &lookups[l], still_trace);
			REQUIRE_RC(rc_moved, 0);
			REQUIRE_RC(rc_still, 0);
			/* Every lookup of the table fails, whatever the start. */
			CHECK(strncmp(moved_trace, "lookup:0 ", 9) != 0);
			if (strcmp(moved_trace, still_trace) != 0)
				T_FAIL("start %d, lookup %zu:\n    moved: %s\n    still: %s", s, l,
				    moved_trace, still_trace);
			cases++;
		}
	}
	CHECK_EQ(cases, (unsigned)N_STARTS * (sizeof lookups / sizeof lookups[0]));
	mdb_env_close(env);
}

/* The same with a successful lookup: the moved cursor lands where a fresh
 * lookup lands, whatever state it was in. */
static void test_found_lookup_on_moved_cursor(void)
{
	static const struct lookup found[] = {
		{ MDB_SET, "k05", NULL },
		{ MDB_SET_RANGE, "k05x", NULL },
		{ MDB_GET_BOTH, "k11", "v350" },
		{ MDB_GET_BOTH_RANGE, "k05", "v002x" },
	};
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 4);
	REQUIRE(env);
	static char moved_trace[TRACE_MAX], still_trace[TRACE_MAX];
	for (int s = 0; s < N_STARTS; s++) {
		for (size_t l = 0; l < sizeof found / sizeof found[0]; l++) {
			REQUIRE_RC(run_case(env, "moved", 1, (enum start)s, &found[l], moved_trace), 0);
			REQUIRE_RC(run_case(env, "still", 0, (enum start)s, &found[l], still_trace), 0);
			CHECK(strncmp(moved_trace, "lookup:0 ", 9) == 0);
			if (strcmp(moved_trace, still_trace) != 0)
				T_FAIL("start %d, lookup %zu:\n    moved: %s\n    still: %s", s, l,
				    moved_trace, still_trace);
		}
	}
	mdb_env_close(env);
}

int main(void)
{
	RUN(test_failed_lookup_on_moved_cursor);
	RUN(test_found_lookup_on_moved_cursor);
	T_DONE();
}
