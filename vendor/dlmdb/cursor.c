/*
 * cursor.c - cursors: movement, the public cursor API, and mdb_get/put/del
 * (which run an internal cursor).
 *
 * Other cursors of a write txn are kept valid across changes by saving
 * their current key before the tree is modified (C_RESEEK) and looking it up
 * again on their next use; a key that vanished leaves them on the following
 * item in the "just deleted" state, as LMDB does.
 */
#include "internal.h"

void dl_cursor_init(MDB_cursor *mc, MDB_txn *txn, MDB_dbi dbi)
{
	dl_cursor_init_lookup(mc, txn, dbi);
	dl_cursor_init_rest(mc);
	dl_cursor_sync_dupsort(mc);
}

/* Free a cursor with its sub-cursor and any nested-txn backups. */
void dl_cursor_free(MDB_cursor *c)
{
	while (c->backup) {
		MDB_cursor *b = c->backup;
		c->backup = b->backup;
		free(b);
	}
	dl_dup_free(c->xcursor);
	free(c);
}

/* Remember where c is (its key, and its duplicate) so it can find its
 * place again after the tree changes. */
void dl_cursor_save_one(MDB_cursor *c)
{
	if (!dl_pos_is_set(c) || (c->flags & C_RESEEK))
		return;
	c->keylen = 0;
	if (c->top >= 0 && !dl_pos_is_past_end(c)) {
		MDB_page *mp = c->pg[c->top];
		unsigned i = c->ki[c->top];
		if (i < NUMKEYS(mp)) {
			MDB_val k;
			unsigned char kb[DL_MAXKEY + 1];
			if (dl_leaf_keyd(c, mp, i, &k, kb)) {
				k.mv_size = 0;
				k.mv_data = kb;
			}
			if (k.mv_size > DL_MAXKEY + 1)
				k.mv_size = DL_MAXKEY + 1;
			memcpy(c->keybuf, k.mv_data, k.mv_size);
			c->keylen = (unsigned)k.mv_size;
			if (!c->keylen)
				c->keylen = ~0u;	/* empty key marker */
			dl_dup_save(c);
		}
	}
	c->flags |= C_RESEEK;
}

/* The DB's tree went away (emptied or dropped): as in LMDB, every other
 * cursor on it becomes unpositioned, so its next relative move starts
 * from the first (or last) item again rather than "past the end".  A
 * cursor whose item was the one deleted keeps that state: LMDB's next NEXT_DUP
 * through it still answers "not found" before starting over. */
void dl_cursors_unposition(MDB_txn *txn, MDB_dbi dbi, const MDB_cursor *except)
{
	for (MDB_cursor *c = txn->cursors[dbi]; c; c = c->next) {
		if (c == except)
			continue;
		c->flags &= ~C_RESEEK;
		dl_pos_tree_gone(c);
		c->top = -1;
		c->keylen = 0;
	}
}

/*
 * LMDB's put first looks the key up from the cursor's position, and that
 * lookup clears its end marker (AFTER_LAST here) only when the cursor already
 * sits on the leaf the key belongs to, strictly between its first and last
 * keys (or when the key exists); a new key found by a search from the root
 * leaves the marker as it was.
 */
int dl_key_inside_leaf(MDB_cursor *mc, const MDB_val *key)
{
	/* Only the marker depends on the answer: without it, skip the two key
	 * reads (this runs on every cursor put). */
	if (!dl_pos_is_set(mc) || !dl_pos_is_after_last(mc) || (mc->flags & C_RESEEK) ||
	    mc->top < 0)
		return 0;
	MDB_page *mp = mc->pg[mc->top];
	unsigned n = NUMKEYS(mp);
	if (n < 2 || IS_LEAF2(mp))
		return 0;
	unsigned char fb[DL_MAXKEY + 1], lb[DL_MAXKEY + 1];
	MDB_val first, last;
	if (dl_leaf_keyd(mc, mp, 0, &first, fb) || dl_leaf_keyd(mc, mp, n - 1, &last, lb))
		return 0;
	return mc->dbx->cmp(key, &first) > 0 && mc->dbx->cmp(key, &last) < 0;
}

/* Before the tree of mc's DB changes: remember where the others are. */
void dl_cursors_save(MDB_cursor *mc)
{
	for (MDB_cursor *c = mc->txn->cursors[mc->dbi]; c; c = c->next)
		if (c != mc)
			dl_cursor_save_one(c);
}

static int dl_cursor_past_end(MDB_cursor *mc)
{
	int rc = dl_search_edge(mc, 1);
	if (rc == MDB_NOTFOUND) {
		mc->top = -1;
		dl_pos_unset(mc);
		return 0;
	}
	if (rc)
		return rc;
	mc->ki[mc->top] = (indx_t)NUMKEYS(mc->pg[mc->top]);
	return 0;
}

/* Find the saved position again (see dl_cursors_save). */
int dl_cursor_reseek(MDB_cursor *mc)
{
	int keep_past = dl_pos_is_past_end(mc) != 0, keep_del = dl_pos_is_deleted(mc) != 0;
	int rc, exact;
	mc->flags &= ~C_RESEEK;
	dl_pos_clear_place(mc);
	if (!mc->keylen) {
		if ((rc = dl_cursor_past_end(mc)))
			return rc;
		if (mc->top >= 0)
			dl_pos_reseated(mc, keep_past, keep_del);
		return 0;
	}
	MDB_val k = { mc->keylen == ~0u ? 0 : mc->keylen, mc->keybuf };
	rc = dl_search(mc, &k, DL_PS_KEY);
	if (rc == MDB_NOTFOUND) {
		mc->top = -1;
		dl_pos_unset(mc);
		return 0;
	}
	if (rc)
		return rc;
	dl_leaf_search(mc, &k, &exact);
	dl_pos_reseated(mc, 0, keep_del || !exact);
	if (exact && mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top]) &&
	    (mc->db->md_flags & MDB_DUPSORT)) {
		rc = dl_dup_restore(mc);
		if (rc != MDB_NOTFOUND)
			return rc;
		/* Its item went and nothing follows it in this key. */
		dl_pos_mark_deleted(mc);
		mc->ki[mc->top]++;
	}
	if (mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top])) {
		rc = dl_cursor_next_leaf(mc);
		if (rc == MDB_NOTFOUND) {
			if ((rc = dl_cursor_past_end(mc)))
				return rc;
			return 0;
		} else if (rc) {
			return rc;
		}
		/* Moved on to another key: its first duplicate. */
		if (mc->db->md_flags & MDB_DUPSORT) {
			mc->duplen = ~0u;
			return dl_dup_restore(mc);
		}
	} else if (!exact && (mc->db->md_flags & MDB_DUPSORT)) {
		mc->duplen = ~0u;
		return dl_dup_restore(mc);
	}
	return 0;
}

/* Descend from level l (already positioned) to the leaf, leftmost or rightmost. */
static int dl_descend(MDB_cursor *mc, int l, int rightmost)
{
	MDB_txn *txn = mc->txn;
	int rc;
	for (int lev = l + 1; lev <= mc->top; lev++) {
		MDB_page *parent = mc->pg[lev - 1], *mp;
		MDB_node *node = NODEPTR(parent, mc->ki[lev - 1]);
		if ((rc = dl_node_check(txn->env, parent, node, 0)))
			return rc;
		if ((rc = dl_page_get_ref(txn, node, NODEPGNO(node), &mp)))
			return rc;
		if ((rc = dl_page_check(txn->env, mp)))
			return rc;
		unsigned n = NUMKEYS(mp);
		if (!n)
			return MDB_CORRUPTED;
		if (lev == mc->top ? !IS_LEAF(mp) : !IS_BRANCH(mp))
			return MDB_CORRUPTED;
		if ((rc = dl_leaf2_check(mc, mp)))
			return rc;
		mc->pg[lev] = mp;
		mc->ki[lev] = (indx_t)(rightmost ? n - 1 : 0);
	}
	DL_ASSERT(dl_stack_ok(mc));
	return 0;
}

/* Move to the first item of the next leaf; MDB_NOTFOUND leaves mc alone. */
int dl_cursor_next_leaf(MDB_cursor *mc)
{
	int l;
	for (l = mc->top - 1; l >= 0; l--)
		if ((unsigned)mc->ki[l] + 1 < NUMKEYS(mc->pg[l]))
			break;
	if (l < 0)
		return MDB_NOTFOUND;
	mc->ki[l]++;
	return dl_descend(mc, l, 0);
}

int dl_cursor_prev_leaf(MDB_cursor *mc)
{
	int l;
	for (l = mc->top - 1; l >= 0; l--)
		if (mc->ki[l] > 0)
			break;
	if (l < 0)
		return MDB_NOTFOUND;
	mc->ki[l]--;
	return dl_descend(mc, l, 1);
}

/* dl_pfx_cursor_key out of line for dl_cursor_current: inlined there, its
 * code would cost the uncompressed paths registers and instructions. */
static __attribute__((noinline)) int dl_step_pfx_key(MDB_cursor *mc, MDB_page *mp, unsigned i,
	MDB_node *n, MDB_val *key)
{
	return dl_pfx_cursor_key(mc, mp, i, n, key);
}

/* Return the item under the cursor. */
int dl_cursor_current(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	if (mc->top < 0)
		return MDB_NOTFOUND;
	MDB_page *mp = mc->pg[mc->top];
	unsigned i = mc->ki[mc->top];
	if (i >= NUMKEYS(mp))
		return MDB_NOTFOUND;
	if (IS_LEAF2(mp)) {
		if (key) {
			key->mv_size = mp->mp_pad;
			key->mv_data = (char *)mp + PAGEHDRSZ + (size_t)i * mp->mp_pad;
		}
		if (data) {
			data->mv_size = 0;
			data->mv_data = NULL;
		}
		return 0;
	}
	MDB_node *n = NODEPTR(mp, i);
	int rc = dl_node_check(mc->txn->env, mp, n, 1);
	if (rc)
		return rc;
	if (key) {
		if ((mc->flags & C_PREFIX) && i > 0) {
			/* Valid until the cursor's next operation. */
			if ((rc = dl_step_pfx_key(mc, mp, i, n, key)))
				return rc;
		} else {
			key->mv_size = n->mn_ksize;
			key->mv_data = NODEKEY(mp, n);
		}
	}
	if (data)
		return dl_node_read(mc, n, data);
	return 0;
}

int dl_cursor_first(MDB_cursor *mc, MDB_val *key, MDB_val *data, int last)
{
	int rc = dl_search_edge(mc, last);
	dl_pos_clear_place(mc);
	if (rc) {
		if (rc == MDB_NOTFOUND)
			dl_pos_unset(mc);
		return rc;
	}
	dl_pos_land(mc);
	return dl_cursor_current(mc, key, data);
}

int dl_cursor_next(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	int rc;
	if (!dl_pos_is_set(mc))
		return dl_cursor_first(mc, key, data, 0);
	if (dl_pos_is_past_end(mc) || mc->top < 0)
		return MDB_NOTFOUND;
	MDB_page *mp = mc->pg[mc->top];
	if (dl_pos_is_deleted(mc)) {
		/* Deleted the last item: nothing follows, and a later PREV
		 * must still give the item before the deleted one. */
		if (mc->ki[mc->top] >= NUMKEYS(mp))
			return MDB_NOTFOUND;
		dl_pos_end_deleted(mc);
		return dl_cursor_current(mc, key, data);
	}
	if ((unsigned)mc->ki[mc->top] + 1 < NUMKEYS(mp)) {
		mc->ki[mc->top]++;
	} else {
		rc = dl_cursor_next_leaf(mc);
		if (rc)
			return rc;
	}
	return dl_cursor_current(mc, key, data);
}

int dl_cursor_prev(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	int rc;
	if (!dl_pos_is_set(mc) || dl_pos_is_past_end(mc)) {
		if (mc->top < 0 && dl_pos_is_set(mc) && mc->db->md_root == P_INVALID)
			return MDB_NOTFOUND;
		return dl_cursor_first(mc, key, data, 1);
	}
	if (mc->top < 0)
		return MDB_NOTFOUND;
	dl_pos_end_deleted(mc);
	if (mc->ki[mc->top] > 0) {
		mc->ki[mc->top]--;
	} else {
		rc = dl_cursor_prev_leaf(mc);
		if (rc)
			return rc;
	}
	return dl_cursor_current(mc, key, data);
}

static inline int dl_txn_usable(MDB_txn *txn)
{
	return !(txn->flags & (TXN_ERROR | TXN_FINISHED)) && !txn->child;
}

static int dl_cursor_get_slow(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op);
static int dl_step_pfx_next(MDB_cursor *mc, MDB_val *key, MDB_val *data);
static int dl_step_pfx_prev(MDB_cursor *mc, MDB_val *key, MDB_val *data);

/*
 * DL_SCAN_PREFETCH 1 (the default): a scan (over plain or compressed
 * leaves) fetches the leaf it will reach next while it walks the current
 * one, two lines per step.  0: only the next leaf's first lines on a leaf
 * change (a build switch, -DDL_SCAN_PREFETCH=0, to compare the two on a
 * clock).
 *
 * DL_SCAN_RUNS_AHEAD N > 0: a step onto an overflow value also fetches
 * the first line of the run N entries on (dl_step_big); 0 (the default):
 * none.  Timed on scans of 8 KiB values (BENCHMARKS.md), with N = 8 a
 * step was about 6% faster in a 3,000-page store but 10-15% slower in
 * stores of 12,000 and 30,000 pages, more than the second-level TLB
 * holds, warm or cold; N = 1 was no better there.  Choosing by the
 * snapshot's page count added 5 instructions a step and kept little of
 * the small store's gain.
 */
#ifndef DL_SCAN_PREFETCH
#define DL_SCAN_PREFETCH 1
#endif
/*
 * The progressive half of that (dl_step_pf) brings the next leaf's lines
 * in before the scan reaches them: the hardware prefetchers do not cross
 * into another page.  It pays most once a tree's leaves no longer fit the
 * core's own caches and each of those lines would come from the shared
 * level or memory; in a tree that fits the second level it gains less
 * (with short nodes nothing, see BENCHMARKS.md) and the prefetches are
 * mostly instructions.  So a plain tree whose leaves take no more bytes than
 * the second-level cache the system reports (env->l2bytes, see
 * mdb_env_create) goes without them; the next leaf's first lines are
 * still fetched on each leaf change.  DL_L2_BYTES N, a build switch for
 * clock comparisons, sets that bound to N bytes instead (0: prefetch in
 * every tree; it moves the lookups' bound too, see dl_search_sk).
 */
#ifndef DL_SCAN_RUNS_AHEAD
#define DL_SCAN_RUNS_AHEAD	0
#endif
/*
 * DL_SCAN_RUNS_REGION R > 0 (with DL_SCAN_RUNS_AHEAD): that fetch only
 * when the run ahead starts in the same aligned 2^R bytes of the map as
 * this one (21: the 2 MiB a page-directory entry covers); 0 (the
 * default): no such bound.  A build switch for the clock comparison in
 * BENCHMARKS.md.
 */
#ifndef DL_SCAN_RUNS_REGION
#define DL_SCAN_RUNS_REGION	0
#endif

/*
 * Where the value of node (in the page ending at end) lies for a fast
 * step: in the page, or in an overflow run of a snapshot page; NULL when
 * the general path must decide.
 */
static __attribute__((noinline)) char *dl_big_value_call(MDB_txn *txn, MDB_env *env,
	MDB_node *node, const char *end)
{
	return dl_big_value(txn, env, node, end);
}

/* big_call: the overflow case out of line (the leaf step, whose registers
 * it would cost a stack of spills). */
static inline __attribute__((always_inline)) char *dl_step_value(MDB_txn *txn, MDB_env *env,
	MDB_node *node, const char *end, int big_call)
{
	unsigned nf = node->mn_flags;
	if (nf & F_DUPDATA)
		return NULL;
	if (nf & F_BIGDATA)
		return big_call ? dl_big_value_call(txn, env, node, end) :
			dl_big_value(txn, env, node, end);
	size_t ks = node->mn_ksize;
	char *dptr = (char *)node->mn_data + ks + (ks & env->pad);
	return dptr + NODEDSZ(node) > end ? NULL : dptr;
}

/* The answer of a fast step: node's key, and its value at dptr. */
static inline __attribute__((always_inline)) int dl_step_out(MDB_val *key, MDB_val *data,
	MDB_node *node, char *dptr)
{
	size_t ks = node->mn_ksize, dsz = NODEDSZ(node);
	if (key) {
		key->mv_size = ks;
		key->mv_data = node->mn_data;
	}
	if (data) {
		data->mv_size = dsz;
		data->mv_data = dptr;
	}
	return 0;
}

/* The end of a fast step: the cursor (its leaf index at kp) moves to
 * entry i, node. */
static inline __attribute__((always_inline)) int dl_step_set(indx_t *kp, MDB_val *key,
	MDB_val *data, MDB_node *node, unsigned i, char *dptr)
{
	dl_step_out(key, data, node, dptr);
	*kp = (indx_t)i;
	return 0;
}

/*
 * The end of an in-leaf step (dl_step_fast) in a write txn onto an
 * overflow value: the cursor already stands on node, whose run's page
 * number lies at pp, inside the leaf.  dl_ov_snapshot's whole test, out
 * of line: its registers would cost the read instance below a stack
 * frame.
 */
static __attribute__((noinline)) int dl_step_ov_write(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_node *node, const char *pp)
{
	MDB_txn *txn = mc->txn;
	char *dptr = dl_ov_snapshot(txn, txn->env, dl_get64(pp), NODEDSZ(node));
	if (!dptr)
		return dl_cursor_get_slow(mc, key, data, MDB_GET_CURRENT);
	return dl_step_out(key, data, node, dptr);
}

/*
 * The end of an in-leaf step (dl_step_fast) onto node, F_BIGDATA or
 * F_DUPDATA, which the cursor already stands on: pp is where the node's
 * value (an overflow run's page number) lies, inside the leaf.  A read
 * txn bounds the run by its mapspan alone; a write txn (mapspan 0) goes on
 * to dl_step_ov_write.  A duplicate set, a run outside the span and a
 * damaged run go to the general path's read of the current entry, which
 * decides them (reports the damage).  One copy per direction, out of
 * line: the plain step keeps its registers.
 */
static inline __attribute__((always_inline)) int dl_step_big(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_node *node, const char *pp, int back)
{
	MDB_txn *txn = mc->txn;
	if (node->mn_flags & F_DUPDATA)
		goto current;
	pgno_t span = txn->mapspan;
	/* rel: the run's page number less 2 (the first page a run can start
	 * on), so that one compare bounds it both ways. */
	pgno_t rel = dl_get64(pp) - 2;
	if (__builtin_expect(rel >= span, 0)) {
		if (span)
			goto current;
		return dl_step_ov_write(mc, key, data, node, pp);
	}
	MDB_env *env = txn->env;
	char *dptr = dl_ov_in_span(env, rel, NODEDSZ(node), span);
	if (!dptr)
		goto current;
#if DL_SCAN_RUNS_AHEAD
	/* Each run starts on a page of its own, where the hardware
	 * prefetchers do not follow; a store loaded in key order keeps the
	 * runs of neighbouring entries next to each other in the file, so
	 * the run DL_SCAN_RUNS_AHEAD entries on (back: before, if the runs
	 * between are as long as this) is a guess at what the scan reads
	 * next.  The address is never read, and a prefetch never faults. */
	uintptr_t omp = (uintptr_t)(dptr - PAGEHDRSZ);
	size_t run = (size_t)((const MDB_page *)omp)->mp_u.pages * env->psize;
	run *= DL_SCAN_RUNS_AHEAD;
	uintptr_t ahead = back ? omp - run : omp + run;
#if DL_SCAN_RUNS_REGION
	/* Only within the aligned 2^DL_SCAN_RUNS_REGION bytes this run
	 * starts in, so that the page walk of the fetch shares its upper
	 * levels with the walk this step already made; outside, the fetch
	 * goes to this run's own first line (a select, not a branch). */
	if ((ahead ^ omp) >> DL_SCAN_RUNS_REGION)
		ahead = omp;
#endif
	__builtin_prefetch((const void *)ahead);
#else
	(void)back;
#endif
	return dl_step_out(key, data, node, dptr);
current:
	return dl_cursor_get_slow(mc, key, data, MDB_GET_CURRENT);
}

static __attribute__((noinline)) int dl_big_next(MDB_cursor *mc, MDB_val *key, MDB_val *data,
	MDB_node *node, const char *pp)
{
	return dl_step_big(mc, key, data, node, pp, 0);
}

static __attribute__((noinline)) int dl_big_prev(MDB_cursor *mc, MDB_val *key, MDB_val *data,
	MDB_node *node, const char *pp)
{
	return dl_step_big(mc, key, data, node, pp, 1);
}

/* The step to an entry i > 0 of a prefix-compressed leaf whose key is
 * decoded (into the cursor's buffer), for the cases the inline part below
 * leaves: the page's first decode in this txn (its trunk is checked),
 * write txns, overflow and duplicate values, long, raw and damaged keys. */
static __attribute__((noinline)) int dl_step_pfx_slow(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_node *node, unsigned i, MDB_cursor_op op)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[mc->top];
	char *dptr = dl_step_value(txn, env, node, (const char *)mp + env->psize, 0);
	if (!dptr || dl_pfx_cursor_key(mc, mp, i, node, key))
		return dl_cursor_get_slow(mc, key, data, op);
	mc->ki[mc->top] = (indx_t)i;
	if (data) {
		data->mv_size = NODEDSZ(node);
		data->mv_data = dptr;
	}
	return 0;
}

/* The same, inline in the prefix instance of the fast step (a call would
 * cost it a second frame), for the usual entry of a scan: a read txn whose
 * cursor decoded a key of this page before (so the page's trunk was
 * checked, and the page cannot have changed since), a value in the page,
 * a short canonical key (dl_pfx_cursor_step_key). */
static inline __attribute__((always_inline)) int dl_step_pfx_entry(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_node *node, unsigned i, MDB_cursor_op op)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[mc->top];
	const char *end = (const char *)mp + env->psize;
	size_t ks = node->mn_ksize;
	char *dptr = (char *)node->mn_data + ks + (ks & env->pad);
	if (mc->kc_pg != mp || mc->kc_txnid != txn->txnid || !(txn->flags & TXN_RDONLY) ||
	    (node->mn_flags & (F_BIGDATA | F_DUPDATA)) || dptr + NODEDSZ(node) > end ||
	    !dl_pfx_cursor_step_key(mc, mp, i, node, end, key))
		return dl_step_pfx_slow(mc, key, data, node, i, op);
	mc->ki[mc->top] = (indx_t)i;
	if (data) {
		data->mv_size = NODEDSZ(node);
		data->mv_data = dptr;
	}
	return 0;
}

/*
 * A scan that reached the leaf under entry pi of parent will want the
 * leaf after it (back: before it) next, returned here (NULL: none under
 * this parent, or a page number past the end).  On a tree larger than the
 * caches that leaf's first lines would each be a miss waiting for the one
 * before (the pointer array, then the node), and the hardware prefetchers
 * do not cross into another page; so its header (lower, upper, the first
 * pointers) is fetched now, a leaf's worth of steps ahead, and so are
 * either the next line of pointers and, through the cursor's pfd, its
 * nodes, two lines per step (DL_SCAN_PREFETCH; a plain tree only when its
 * leaves outgrow env->l2bytes), or the lines the scan enters by.
 * Forward, that is the page's end: a store loaded in key order has its
 * first entries there; backward, the low end of the node area, which the
 * header gives only once loaded, so the header alone.
 * The parent's node is bounded before its page number is read; the
 * address computed from it is only prefetched, which never faults, so a
 * damaged number costs nothing.
 */
static inline __attribute__((always_inline)) const char *dl_step_leaf_prefetch(MDB_env *env,
	MDB_page *parent, unsigned pi, int back, pgno_t span)
{
	if (back ? !pi : pi + 1 >= NUMKEYS(parent))
		return NULL;
	size_t psize = env->psize, off = parent->mp_ptrs[back ? pi - 1 : pi + 1];
	if (off + NODESZ > psize)
		return NULL;
	pgno_t pg = NODEPGNO((MDB_node *)((char *)parent + off));
	if (pg - 2 >= span)
		return NULL;
	const char *np = env->map + (size_t)pg * psize;
	__builtin_prefetch(np);
#if DL_SCAN_PREFETCH
	__builtin_prefetch(np + 64);
#else
	if (!back) {
		__builtin_prefetch(np + psize - 64);
		__builtin_prefetch(np + psize - 128);
	}
#endif
	return np;
}

/*
 * The progressive half of the next leaf's prefetch: a step that reached
 * node fetches the line at the same offset in the leaf the scan goes to
 * next (mc->pfd away, see dl_step_leaf), and the line after it, where the
 * key's end and the value's start lie unless the key is long.  Leaves of a
 * tree fill alike, so the offsets of one leaf's nodes are about those of
 * its neighbour's: by the time the scan gets there the lines it reads are
 * in cache, whatever order the nodes lie in.  Three instructions; a stale
 * or zero distance fetches useless lines (0: this leaf's, already there).
 */
static inline __attribute__((always_inline)) void dl_step_pf_at(const MDB_node *node,
	intptr_t d)
{
#if DL_SCAN_PREFETCH && defined(__x86_64__) && defined(__LP64__)
	/* The addition in the address (GCC would add first). */
	__asm__("prefetcht0 (%0,%1)\n\tprefetcht0 64(%0,%1)" : : "r"(node), "r"(d));
#elif DL_SCAN_PREFETCH
	uintptr_t p = (uintptr_t)node + (uintptr_t)d;
	__builtin_prefetch((const void *)p);
	__builtin_prefetch((const void *)(p + 64));
#else
	(void)node;
	(void)d;
#endif
}

static inline __attribute__((always_inline)) void dl_step_pf(const MDB_cursor *mc,
	const MDB_node *node)
{
	dl_step_pf_at(node, mc->pfd);
}

/* The plain step's: none while the distance is 0, which dl_step_leaf
 * keeps it at in a tree whose leaves fit env->l2bytes (a test and a branch,
 * against a load and two prefetches). */
static inline __attribute__((always_inline)) void dl_step_pf_plain(const MDB_cursor *mc,
	const MDB_node *node)
{
#if DL_SCAN_PREFETCH
	intptr_t d = mc->pfd;
	if (d)
		dl_step_pf_at(node, d);
#else
	(void)mc;
	(void)node;
#endif
}

/*
 * A fast step (below) that ran off its leaf: on to the first (back: last)
 * entry of the neighbouring leaf under the same parent branch page (a
 * prefix-compressed leaf's first entry is its trunk, stored as it is),
 * in a txn that reads every page from the map.  The leaf and the node
 * reached get the checks of dl_descend and dl_node_check before the
 * cursor changes, so whatever this does not decide (a neighbour under
 * another parent, or none, dirty or inherited pages, a damaged or unusual
 * page or node, an overflow value it cannot reach) goes to the general
 * path with the cursor as it was.
 */
static inline __attribute__((always_inline)) int dl_step_leaf(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, int back)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	int top = mc->top;
	/* Back, the general path leaves the leaf only from its first entry. */
	if (top < 1 || txn->dirty.count || txn->parent || txn->spilled.count ||
	    (back && mc->ki[top]) || env->interrupted)
		goto general;
	MDB_page *parent = mc->pg[top - 1];
	unsigned pi = mc->ki[top - 1];
	if (back ? !pi : pi + 1 >= NUMKEYS(parent))
		goto general;
	pi += back ? -1u : 1u;
	MDB_node *node = NODEPTR(parent, pi);
	if (dl_node_check(env, parent, node, 0))
		goto general;
	pgno_t pg = NODEPGNO(node), span = dl_txn_map_span(txn);
	if (pg - 2 >= span)
		goto general;
	size_t psize = env->psize;
	MDB_page *mp = (MDB_page *)(env->map + (size_t)pg * psize);
	/* dl_page_check for a plain leaf, the only page taken here: its
	 * flags, then lower and upper in order inside the page, with room
	 * for at least one entry. */
	unsigned lo = MP_LOWER(mp), up = MP_UPPER(mp);
	if ((mp->mp_flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_LEAF2 | P_COUNTED)) !=
	    P_LEAF || lo <= PAGEHDRSZ || (lo & 1) || lo > up || up > psize)
		goto general;
	unsigned n = NUMKEYS(mp);
	unsigned i = back ? n - 1 : 0;
	/* dl_node_check's bounds: the header here, key and value (or its
	 * page number) by dl_step_value. */
	size_t off = mp->mp_ptrs[i];
	if ((off & 1) | (off < MP_LOWER(mp)) | (off + NODESZ > psize))
		goto general;
	node = (MDB_node *)((char *)mp + off);
	char *dptr = dl_step_value(txn, env, node, (const char *)mp + psize, 1);
	if (!dptr)
		goto general;
	mc->ki[top - 1] = (indx_t)pi;
	mc->pg[top] = mp;
	DL_ASSERT(dl_stack_ok(mc));
	const char *np = dl_step_leaf_prefetch(env, parent, pi, back, span);
#if DL_SCAN_PREFETCH
	/* The compressed step prefetches in every tree: its own work per
	 * step dwarfs the two prefetches. */
	mc->pfd = np && ((mc->flags & C_PREFIX) ||
	    (size_t)mc->db->md_leaf_pages * psize > env->l2bytes) ?
		(intptr_t)((uintptr_t)np - (uintptr_t)mp) : 0;
	dl_step_pf(mc, node);
#else
	(void)np;
#endif
	return dl_step_set(&mc->ki[top], key, data, node, i, dptr);
general:
	return dl_cursor_get_slow(mc, key, data, back ? MDB_PREV : MDB_NEXT);
}

/* One copy per direction, out of line: the in-leaf step stays small. */
static __attribute__((noinline)) int dl_leaf_next(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	return dl_step_leaf(mc, key, data, 0);
}

static __attribute__((noinline)) int dl_leaf_prev(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	return dl_step_leaf(mc, key, data, 1);
}

/*
 * MDB_NEXT / MDB_PREV within the current leaf of a non-DUPSORT DB: the
 * common step of a scan, done here without the general path's calls (back
 * is a constant where this is inlined, so each direction gets its own
 * copy); a leaf's edge is left by dl_step_leaf (the prefix instance only
 * forward).  Whatever this step does not decide about the cursor and the
 * node (a compressed leaf's edge going back, a damaged or undecodable
 * node, unusual cursor or txn state, an interrupt) goes to the general
 * path before anything changed; what it does not decide about the node's
 * value (one that overruns its page, a duplicate set, an overflow run it
 * cannot reach or a damaged one) is found once the cursor moved, and the
 * general path's read of the current entry decides that.  Overflow values
 * and compressed keys are finished by dl_step_big and dl_step_pfx_entry.
 * Every exit is a return or a tail call, so the plain case needs almost
 * no stack frame (no saved register).  pfx: the instance for prefix-compressed trees.
 * The plain instance, one for trees of every size (it prefetches the next
 * leaf only in those whose leaves outgrow env->l2bytes, see dl_step_pf_plain),
 * passes compressed trees on to the pfx instance with one test of the
 * cursor's flags, and with them cursors to be re-found (C_RESEEK) and
 * those of a DUPSORT DB (C_DUPSORT), which the pfx instance sends to the
 * general path.
 */
static inline __attribute__((always_inline)) int dl_step_fast(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, int back, int pfx)
{
	MDB_cursor_op op = back ? MDB_PREV : MDB_NEXT;
	unsigned cf = mc->flags;
	if (!pfx && (cf & (C_PREFIX | C_RESEEK | C_DUPSORT)))
		return back ? dl_step_pfx_prev(mc, key, data) : dl_step_pfx_next(mc, key, data);
	/* A user's cursor always has its txn (only the internal copies kept
	 * for a nested txn have none). */
	MDB_txn *txn = mc->txn;
	DL_ASSERT(!(txn->flags & TXN_HASCHILD) == !txn->child);
	/* The level as unsigned: top < 0 fails the same compare as a level
	 * past the stack, and the index needs no sign extension. */
	unsigned top = (unsigned)mc->top;
	if ((pfx && (cf & (C_RESEEK | C_DUPSORT))) || !dl_pos_steps_plainly(mc) ||
	    (txn->flags & (TXN_ERROR | TXN_FINISHED | TXN_HASCHILD)) ||
	    top >= DL_MAXDEPTH || (txn->dbflags[mc->dbi] & (DB_INCOMPAT | DB_STALE)))
		goto general;
	/* C_DUPSORT, clear here, stands for the record's flag (loaded). */
	DL_ASSERT(!(mc->db->md_flags & MDB_DUPSORT));
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[top];
	indx_t *kp = &mc->ki[top];
	/* Where the pointer of the entry to go to lies: the entry exists
	 * exactly when that is below lower (back from entry 0, the index
	 * wraps and so does not).  Its index is derived from it again once
	 * the entry is known to exist: one register less. */
	size_t lower = MP_LOWER(mp),
	    pofs = PAGEHDRSZ + 2 * (size_t)((unsigned)*kp + (back ? -1u : 1u));
	/* An empty asm hides where pofs came from: otherwise GCC keeps the
	 * old index in one more register. */
	__asm__("" : "+r"(pofs));
	if (__builtin_expect(pofs >= lower, 0)) {
		/* Forward, the next leaf's first entry is its trunk, stored as
		 * it is: the plain leaf step serves prefix leaves too. */
		if (pfx && back)
			goto general;
		return back ? dl_leaf_prev(mc, key, data) : dl_leaf_next(mc, key, data);
	}
	/* No test of the page's flags: every page is checked to be a plain
	 * leaf (dl_page_check, dl_leaf2_check, dl_step_leaf) before it
	 * becomes the top of a non-DUPSORT cursor's stack, and in this txn
	 * only the engine itself changes it. */
	DL_ASSERT((mp->mp_flags & (P_BRANCH | P_LEAF | P_LEAF2 | P_COUNTED)) == P_LEAF);
	unsigned i = (unsigned)(pofs - PAGEHDRSZ) >> 1;
	/* The entry exists: the cursor moves now (not in the prefix
	 * instance, whose key step moves it itself), and neither its level
	 * nor the index needs a register past here.  From here on, what the
	 * step does not decide goes to the general path's read of the
	 * current entry, which is what its MDB_NEXT / MDB_PREV does after
	 * the move (the cursor stands on an item and carries no mark), with
	 * the same answer: the damage reported, or EINTR. */
	if (!pfx)
		*kp = (indx_t)i;
	/* The checks of dl_node_check, against the page's end: separate
	 * branches (all predicted) need fewer registers than one test. */
	size_t off = *(const indx_t *)((const char *)mp + pofs);
	if (__builtin_expect(off < lower, 0))
		goto node_bad;
	/* An empty asm: GCC then forms the node's address only after this
	 * test, in lower's register, and the step saves no register. */
	__asm__("" : "+r"(off));
	/* The limit is 0 while the interrupt flag is up (dl_env_steplim):
	 * then no node passes the bound below and the general path reports
	 * EINTR; the step reads no flag of its own. */
	const char *end = (const char *)mp + env->steplim;
	MDB_node *node = (MDB_node *)((char *)mp + off);
	/* off & 1, read off the node's address (a page is at least
	 * 2-aligned): GCC tests that without a copy, one register less. */
	DL_ASSERT(!((uintptr_t)mp & 1));
	if ((uintptr_t)node & 1)
		goto node_bad;	/* the general path reports it */
	if ((const char *)node + NODESZ > end)
		goto node_bad;
	if (pfx)
		dl_step_pf(mc, node);
	else
		dl_step_pf_plain(mc, node);
	if (pfx) {
		if (i > 0 && key)
			return dl_step_pfx_entry(mc, key, data, node, i, op);
		*kp = (indx_t)i;
	}
	size_t ks = node->mn_ksize;
	char *dptr = (char *)node->mn_data + ks + (ks & env->pad);
	if (__builtin_expect(node->mn_flags & (F_BIGDATA | F_DUPDATA), 0)) {
		/* dptr: where the run's page number lies. */
		if (dptr + sizeof(pgno_t) > end)
			goto current;
		return back ? dl_big_prev(mc, key, data, node, dptr) :
			dl_big_next(mc, key, data, node, dptr);
	}
	/* The value's size read once: the stores to *key could alias the
	 * node (as far as the compiler knows), and a second read would cost
	 * a saved register. */
	size_t dsz = NODEDSZ(node);
	/* A value that overruns its page can only be damage. */
	if (dptr + dsz > end)
		goto current;
	if (key) {
		key->mv_size = ks;
		key->mv_data = node->mn_data;
	}
	if (data) {
		data->mv_size = dsz;
		data->mv_data = dptr;
	}
	return 0;
current:
	return dl_cursor_get_slow(mc, key, data, MDB_GET_CURRENT);
node_bad:
	/* The prefix instance has not moved the cursor yet. */
	return dl_cursor_get_slow(mc, key, data, pfx ? op : MDB_GET_CURRENT);
general:
	return dl_cursor_get_slow(mc, key, data, op);
}

/* Back, out of line: mdb_cursor_get holds the forward step itself (one
 * jump less per step of a forward scan) and only dispatches the rest. */
static __attribute__((noinline)) int dl_step_prev(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	return dl_step_fast(mc, key, data, 1, 0);
}

static __attribute__((noinline)) int dl_step_pfx_next(MDB_cursor *mc, MDB_val *key,
	MDB_val *data)
{
	return dl_step_fast(mc, key, data, 0, 1);
}

static __attribute__((noinline)) int dl_step_pfx_prev(MDB_cursor *mc, MDB_val *key,
	MDB_val *data)
{
	return dl_step_fast(mc, key, data, 1, 1);
}

/* NEXT, NEXT_DUP, NEXT_NODUP on a plain (not DUPSORT) DB, outside the
 * fast step. */
static int dl_plain_next(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	/* LMDB checks its end marker before the "just deleted" state: on the
	 * last item of its page, whatever came there after the marker was
	 * set, the answer is "not found". */
	if (dl_pos_is_set(mc) && dl_pos_is_after_last(mc) && dl_pos_is_deleted(mc) &&
	    mc->top >= 0 && mc->ki[mc->top] + 1u >= NUMKEYS(mc->pg[mc->top])) {
		dl_pos_end_deleted(mc);
		return MDB_NOTFOUND;
	}
	/* Every key has one item: after a delete there is no "next duplicate"
	 * of the deleted key. */
	if (op == MDB_NEXT_DUP && dl_pos_is_set(mc) && dl_pos_is_deleted(mc)) {
		if (mc->top >= 0 && mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top]))
			dl_pos_end_deleted(mc);
		return MDB_NOTFOUND;
	}
	/* Only running off the end sets the marker; an unpositioned cursor's
	 * NEXT is a FIRST. */
	int was_set = dl_pos_is_set(mc) != 0;
	int rc = dl_cursor_next(mc, key, data);
	dl_pos_mark_after_last(mc, rc == MDB_NOTFOUND && was_set);
	return rc;
}

/* Duplicate ops on a plain DB: like LMDB, the argument and position checks
 * come before the database-type check, and (as after every cursor op,
 * refused ones included) the "just deleted" state ends: a following NEXT
 * moves past the current item. */
static int dl_plain_dup_op(MDB_cursor *mc, MDB_val *data, MDB_cursor_op op)
{
	dl_pos_end_deleted(mc);
	switch (op) {
	case MDB_FIRST_DUP:
	case MDB_LAST_DUP:
	case MDB_GET_MULTIPLE:
		if (!data || !dl_pos_is_set(mc))
			return EINVAL;
		return MDB_INCOMPATIBLE;
	case MDB_GET_BOTH:
	case MDB_GET_BOTH_RANGE:
	case MDB_NEXT_MULTIPLE:
	case MDB_PREV_MULTIPLE:
		if (!data)
			return EINVAL;
		return MDB_INCOMPATIBLE;
	default:
		return EINVAL;
	}
}

/* A cursor op on a plain DB whose txn and record have been checked. */
static int dl_plain_get(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	int rc;
	/* AFTER_LAST mirrors LMDB's end marker on a plain DB: set when the cursor
	 * reached the last item by MDB_LAST, an MDB_APPEND put or a NEXT that
	 * ran off the end; a move back or a repositioning ends it (the
	 * duplicate-only ops fail before touching it). */
	switch (op) {
	case MDB_FIRST:
	case MDB_PREV:
	case MDB_PREV_DUP:
	case MDB_PREV_NODUP:
	case MDB_SET:
	case MDB_SET_KEY:
	case MDB_SET_RANGE:
		dl_pos_mark_after_last(mc, 0);
		break;
	default:
		break;
	}
	/* Unpositioned (its tree emptied) while on the deleted item: LMDB
	 * answers one NEXT_DUP with "not found"; any op ends that state. */
	if (!dl_pos_is_set(mc) && dl_pos_is_deleted(mc)) {
		dl_pos_end_deleted(mc);
		if (op == MDB_NEXT_DUP)
			return MDB_NOTFOUND;
	}
	switch (op) {
	case MDB_FIRST:
		rc = dl_cursor_first(mc, key, data, 0);
		break;
	case MDB_LAST:
		rc = dl_cursor_first(mc, key, data, 1);
		if (!rc)
			dl_pos_mark_after_last(mc, 1);
		break;
	case MDB_NEXT:
	case MDB_NEXT_DUP:
	case MDB_NEXT_NODUP:
		rc = dl_plain_next(mc, key, data, op);
		break;
	case MDB_PREV:
	case MDB_PREV_DUP:
	case MDB_PREV_NODUP:
		rc = dl_cursor_prev(mc, key, data);
		break;
	case MDB_GET_CURRENT:
		if (!dl_pos_is_set(mc))
			return EINVAL;
		if (dl_pos_is_past_end(mc))
			return MDB_NOTFOUND;
		rc = dl_cursor_current(mc, key, data);
		/* Reading the item that followed a deleted one makes it current. */
		if (rc == 0)
			dl_pos_end_deleted(mc);
		break;
	case MDB_SET:
	case MDB_SET_KEY:
	case MDB_SET_RANGE:
		rc = dl_cursor_set(mc, key, data, op);
		break;
	default:
		return dl_plain_dup_op(mc, data, op);
	}
	if (rc && rc != MDB_NOTFOUND)
		return dl_txn_err(mc->txn, rc);
	return rc;
}

/* mdb_cursor_get's op once the txn is checked and mc is where it was left. */
static inline __attribute__((always_inline)) int dl_cursor_get_here(MDB_cursor *mc,
	MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	MDB_txn *txn = mc->txn;
	int rc;
	if ((txn->dbflags[mc->dbi] & DB_STALE) && (rc = dl_db_load(txn, mc->dbi)))
		return rc;
	dl_cursor_sync_dupsort(mc);
	if (!(mc->db->md_flags & MDB_DUPSORT))
		return dl_plain_get(mc, key, data, op);
	rc = dl_dup_get(mc, key, data, op);
	if (rc && rc != MDB_NOTFOUND && rc != EINVAL && rc != MDB_INCOMPATIBLE &&
	    rc != MDB_BAD_VALSIZE)
		return dl_txn_err(txn, rc);
	return rc;
}

/* Ops whose result does not depend on where the cursor was. */
static inline int dl_op_positions_by_key(MDB_cursor_op op)
{
	return op == MDB_SET || op == MDB_SET_KEY || op == MDB_SET_RANGE ||
	    op == MDB_GET_BOTH || op == MDB_GET_BOTH_RANGE;
}

/*
 * A lookup by key on a cursor whose tree changed (C_RESEEK).  One that
 * succeeds leaves nothing of the old position behind (page stack,
 * duplicate position, the delete and end states are all set anew), so
 * finding the old position first would only cost a second descent.  A
 * failed lookup may keep part of that position (the sub-cursor), so it is
 * undone and replayed from the re-found position.
 */
static __attribute__((noinline)) int dl_cursor_get_moved(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_cursor_op op)
{
	unsigned before = mc->flags, pos_before = mc->pos;
	int rc;
	mc->flags &= ~C_RESEEK;
	rc = dl_cursor_get_here(mc, key, data, op);
	if (!rc)
		return 0;
	if (rc != MDB_NOTFOUND && rc != EINVAL && rc != MDB_BAD_VALSIZE &&
	    rc != MDB_INCOMPATIBLE)
		return rc;
	mc->flags = before;
	mc->pos = (unsigned char)pos_before;
	if ((rc = dl_cursor_reseek(mc)))
		return dl_txn_err(mc->txn, rc);
	return dl_cursor_get_here(mc, key, data, op);
}

/* Every op in every state: the checks and the dispatch. */
static __attribute__((noinline)) int dl_cursor_get_general(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_cursor_op op)
{
	int rc;
	MDB_txn *txn = mc->txn;
	if (!txn || !dl_txn_usable(txn))
		return MDB_BAD_TXN;
	if ((rc = dl_check_intr(txn)))
		return rc;
	if (txn->dbflags[mc->dbi] & DB_INCOMPAT)
		return MDB_INCOMPATIBLE;
	if (mc->flags & C_RESEEK) {
		if (dl_op_positions_by_key(op))
			return dl_cursor_get_moved(mc, key, data, op);
		if ((rc = dl_cursor_reseek(mc)))
			return dl_txn_err(txn, rc);
	}
	return dl_cursor_get_here(mc, key, data, op);
}

/*
 * MDB_SET, MDB_SET_KEY and MDB_SET_RANGE.  On a plain DB in the usual
 * state (a usable txn, not interrupted, the cursor's tree unchanged under
 * it, its record loaded and compatible) every check of
 * dl_cursor_get_general passes, and dl_plain_get would clear the end mark
 * and call dl_cursor_set: dl_cursor_set_plain does just that.  Anything
 * else goes the general way.
 */
static __attribute__((noinline)) int dl_cursor_get_set(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_cursor_op op)
{
	MDB_txn *txn = mc->txn;
	DL_ASSERT(!txn || !(txn->flags & TXN_HASCHILD) == !txn->child);
	if (txn && !(txn->flags & (TXN_ERROR | TXN_FINISHED | TXN_HASCHILD)) &&
	    !txn->env->interrupted && !(mc->flags & C_RESEEK) &&
	    !(txn->dbflags[mc->dbi] & (DB_INCOMPAT | DB_STALE)) &&
	    !(mc->db->md_flags & MDB_DUPSORT)) {
		return dl_cursor_set_plain(mc, key, data, op);
	}
	return dl_cursor_get_general(mc, key, data, op);
}

/* Everything but the fast step: kept out of line so that mdb_cursor_get's
 * fast path stays small.  Jumps only. */
static __attribute__((noinline)) int dl_cursor_get_slow(MDB_cursor *mc, MDB_val *key,
	MDB_val *data, MDB_cursor_op op)
{
	if (op == MDB_SET_RANGE || op == MDB_SET_KEY || op == MDB_SET)
		return dl_cursor_get_set(mc, key, data, op);
	return dl_cursor_get_general(mc, key, data, op);
}

int mdb_cursor_get(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	if (__builtin_expect(op == MDB_NEXT && mc != NULL, 1))
		return dl_step_fast(mc, key, data, 0, 0);
	if (!mc)
		return EINVAL;
	if (op == MDB_PREV)
		return dl_step_prev(mc, key, data);
	return dl_cursor_get_slow(mc, key, data, op);
}

int mdb_cursor_open(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **ret)
{
	int rc;
	if (!txn || !ret)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 0)))
		return rc;
	if (dbi == DL_FREE_DBI && !(txn->flags & TXN_RDONLY))
		return EINVAL;
	if (!dl_txn_usable(txn))
		return MDB_BAD_TXN;
	MDB_cursor *mc = malloc(sizeof(*mc));
	if (!mc)
		return ENOMEM;
	dl_cursor_init(mc, txn, dbi);
	if (!(txn->flags & TXN_RDONLY)) {
		mc->flags &= ~C_UNTRACKED;
		mc->next = txn->cursors[dbi];
		txn->cursors[dbi] = mc;
	}
	*ret = mc;
	return 0;
}

void mdb_cursor_close(MDB_cursor *mc)
{
	if (!mc)
		return;
	if (!(mc->flags & C_UNTRACKED) && mc->txn) {
		MDB_cursor **pp = &mc->txn->cursors[mc->dbi];
		while (*pp && *pp != mc)
			pp = &(*pp)->next;
		if (*pp)
			*pp = mc->next;
	}
	dl_cursor_free(mc);
}

int mdb_cursor_renew(MDB_txn *txn, MDB_cursor *mc)
{
	int rc;
	if (!txn || !mc)
		return EINVAL;
	if (!(txn->flags & TXN_RDONLY) || (mc->flags & C_WRITE))
		return EINVAL;
	if ((rc = dl_dbi_check(txn, mc->dbi, 0)))
		return rc;
	if (!dl_txn_usable(txn))
		return MDB_BAD_TXN;
	/* A DUPSORT cursor's sub-cursor is set up again when next used. */
	dl_dup_free(mc->xcursor);
	dl_cursor_init(mc, txn, mc->dbi);
	return 0;
}

MDB_txn *mdb_cursor_txn(MDB_cursor *mc)
{
	return mc ? mc->txn : NULL;
}

MDB_dbi mdb_cursor_dbi(MDB_cursor *mc)
{
	return mc->dbi;
}

/* A check of mc's DB flags before anything has loaded its record (a fresh
 * cursor of a txn that has not used the handle yet) needs it loaded. */
static int dl_cursor_db_current(MDB_cursor *mc)
{
	MDB_txn *txn = mc->txn;
	if (!txn || (txn->flags & (TXN_ERROR | TXN_FINISHED)) ||
	    !(txn->dbflags[mc->dbi] & DB_STALE))
		return 0;
	return dl_db_load(txn, mc->dbi);
}

int mdb_cursor_count(MDB_cursor *mc, mdb_size_t *countp)
{
	int rc;
	if (!mc || !countp)
		return EINVAL;
	if ((rc = dl_cursor_db_current(mc)))
		return rc;
	if (!(mc->db->md_flags & MDB_DUPSORT))
		return MDB_INCOMPATIBLE;
	return dl_txn_err(mc->txn, dl_dup_count(mc, countp));
}

/* Checks shared by every write entry point. */
static int dl_write_check(MDB_txn *txn, MDB_dbi dbi)
{
	int rc;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (txn->flags & TXN_RDONLY)
		return EACCES;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	if (txn->dbflags[dbi] & DB_INCOMPAT)
		return MDB_INCOMPATIBLE;
	return 0;
}

int mdb_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	int rc;
	if (!mc || !key || !data)
		return EINVAL;
	/* MDB_MULTIPLE: the stored-item count reads 0 on every early failure,
	 * as in LMDB, so it is cleared before any other check. */
	size_t mcount = 0;
	if (flags & MDB_MULTIPLE) {
		mcount = data[1].mv_size;
		data[1].mv_size = 0;
		if ((rc = dl_cursor_db_current(mc)))
			return rc;
		if (!(mc->db->md_flags & MDB_DUPFIXED))
			return MDB_INCOMPATIBLE;
	}
	MDB_txn *txn = mc->txn;
	if (txn->flags & TXN_ERROR)
		return txn->lasterr ? txn->lasterr : MDB_BAD_TXN;
	if ((txn->flags & TXN_FINISHED) || txn->child)
		return MDB_BAD_TXN;
	if (txn->flags & TXN_RDONLY)
		return EACCES;
	if ((rc = dl_check_intr(txn)))
		return rc;
	if ((rc = dl_write_check(txn, mc->dbi)))
		return rc;
	int dup = (mc->db->md_flags & MDB_DUPSORT) != 0;
	if (key->mv_size == 0 || key->mv_size > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	if (data->mv_size > 0xFFFFFFFFu)
		return MDB_BAD_VALSIZE;
	if ((mc->flags & C_RESEEK) && (rc = dl_cursor_reseek(mc)))
		return dl_txn_err(txn, rc);
	if ((rc = dl_dirty_room(txn, mc, mc->dbi, key, data)))
		return rc;
	if (dup) {
		if (flags & MDB_MULTIPLE)
			data[1].mv_size = mcount;
		return dl_txn_err(txn, dl_dup_cursor_put(mc, key, data, flags));
	}
	int was_empty = mc->db->md_root == P_INVALID;
	int inside = dl_key_inside_leaf(mc, key);
	mdb_size_t before = mc->db->md_entries;
	rc = dl_cursor_put0(mc, key, data,
	    flags & (MDB_NOOVERWRITE | MDB_RESERVE | MDB_APPEND | MDB_CURRENT));
	/* LMDB's end marker (see dl_cursor_get_slow): APPEND into a non-empty
	 * DB goes through its "last item" move, which sets it; an existing key
	 * clears it, a new one as dl_key_inside_leaf says.  MDB_CURRENT and
	 * the first put into an empty DB do not touch it. */
	if (!was_empty && !(flags & MDB_CURRENT)) {
		if (flags & MDB_APPEND)
			dl_pos_mark_after_last(mc, 1);
		else if (mc->db->md_entries == before || inside)
			dl_pos_mark_after_last(mc, 0);
	}
	return dl_txn_err(txn, rc);
}

/* Is the item under mc a named-DB record? */
static int dl_is_subdata(MDB_cursor *mc)
{
	MDB_page *mp = mc->pg[mc->top];
	unsigned i = mc->ki[mc->top];
	if (IS_LEAF2(mp) || i >= NUMKEYS(mp))
		return 0;
	return (NODEPTR(mp, i)->mn_flags & (F_SUBDATA | F_DUPDATA)) == F_SUBDATA;
}

int mdb_cursor_del(MDB_cursor *mc, unsigned flags)
{
	int rc;
	if (!mc)
		return EINVAL;
	MDB_txn *txn = mc->txn;
	if (!dl_txn_usable(txn))
		return MDB_BAD_TXN;
	if (txn->flags & TXN_RDONLY)
		return EACCES;
	if ((rc = dl_write_check(txn, mc->dbi)))
		return rc;
	if (!dl_pos_is_set(mc))
		return EINVAL;
	if ((mc->flags & C_RESEEK) && (rc = dl_cursor_reseek(mc)))
		return dl_txn_err(txn, rc);
	if (dl_pos_is_past_end(mc) || mc->top < 0 ||
	    mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
		return MDB_NOTFOUND;
	if (dl_is_subdata(mc))
		return dl_txn_fail(txn, MDB_INCOMPATIBLE);
	if ((rc = dl_dirty_room(txn, mc, mc->dbi, NULL, NULL)))
		return rc;
	if (mc->db->md_flags & MDB_DUPSORT)
		return dl_txn_err(txn, dl_dup_del(mc, NULL, (flags & MDB_NODUPDATA) != 0));
	return dl_txn_err(txn, dl_cursor_del0(mc));
}

/* mdb_get's argument, handle and txn checks, in their order (the answer
 * when one fails). */
static __attribute__((noinline)) int dl_get_check(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key)
{
	int rc;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (!dl_txn_usable(txn))
		return MDB_BAD_TXN;
	if (txn->dbflags[dbi] & DB_INCOMPAT)
		return MDB_INCOMPATIBLE;
	if (!key->mv_size)
		return MDB_BAD_VALSIZE;
	return 0;
}

int mdb_get(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data)
{
	int rc;
	if (!txn || !key || !data)
		return EINVAL;
	MDB_env *env = txn->env;
	/* The usual state, in which every check of dl_get_check passes: a
	 * user handle (not FREE_DBI) inside this txn's table (a handle
	 * beyond it is adopted by dl_dbi_check), valid in this txn and
	 * still the one opened (named DBs), not incompatible; a usable txn
	 * (TXN_HASCHILD mirrors txn->child); a key. */
	DL_ASSERT(!(txn->flags & TXN_HASCHILD) == !txn->child);
	DL_ASSERT(txn->numdbs >= DL_CORE_DBS && txn->numdbs <= env->numdbs);
	if (__builtin_expect(!(dbi - 1 < txn->numdbs - 1 &&
	    (txn->dbflags[dbi] & (DB_VALID | DB_INCOMPAT)) == DB_VALID &&
	    (dbi < DL_CORE_DBS || txn->dbseq[dbi] == env->dbxs[dbi].seq) &&
	    !(txn->flags & (TXN_ERROR | TXN_FINISHED | TXN_HASCHILD)) && key->mv_size), 0) &&
	    (rc = dl_get_check(txn, dbi, key)))
		return rc;
	return dl_get_value(txn, dbi, key, data);
}

int mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_cursor mc;
	int rc;
	if (!txn || !key || !data)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (flags & ~(MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_RESERVE | MDB_APPEND | MDB_APPENDDUP))
		return EINVAL;
	if (!dl_txn_usable(txn))
		return MDB_BAD_TXN;
	if (txn->flags & TXN_RDONLY)
		return EACCES;
	if ((rc = dl_check_intr(txn)))
		return rc;
	if ((rc = dl_write_check(txn, dbi)))
		return rc;
	if (key->mv_size == 0 || key->mv_size > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	if (data->mv_size > 0xFFFFFFFFu)
		return MDB_BAD_VALSIZE;
	if ((rc = dl_dirty_room(txn, NULL, dbi, key, data)))
		return rc;
	dl_cursor_init(&mc, txn, dbi);
	if (txn->dbs[dbi].md_flags & MDB_DUPSORT) {
		if (flags & MDB_RESERVE)
			return EINVAL;	/* no reserved space among duplicates */
		rc = dl_dup_put_tmp(txn, dbi, key, data, flags & (MDB_NOOVERWRITE |
		    MDB_NODUPDATA | MDB_APPEND | MDB_APPENDDUP));
		return dl_txn_err(txn, rc);
	}
	rc = dl_cursor_put0(&mc, key, data,
	    (flags & (MDB_NOOVERWRITE | MDB_RESERVE | MDB_APPEND)) | DL_PUT_NOPOS);
	return dl_txn_err(txn, rc);
}

int mdb_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data)
{
	MDB_cursor mc;
	int rc, exact;
	if (!txn || !key)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (!dl_txn_usable(txn))
		return MDB_BAD_TXN;
	if (txn->flags & TXN_RDONLY)
		return EACCES;
	if ((rc = dl_write_check(txn, dbi)))
		return rc;
	if (!key->mv_size)
		return MDB_BAD_VALSIZE;
	if ((rc = dl_dirty_room(txn, NULL, dbi, key, data)))
		return rc;
	if (txn->dbs[dbi].md_flags & MDB_DUPSORT) {
		/* A named-DB record can't be in a DUPSORT DB: no check needed. */
		rc = dl_dup_del_key(txn, dbi, key, data);
		return rc == MDB_NOTFOUND ? rc : dl_txn_err(txn, rc);
	}
	dl_cursor_init(&mc, txn, dbi);
	rc = dl_search(&mc, key, DL_PS_KEY);
	if (rc)
		return rc == MDB_NOTFOUND ? rc : dl_txn_err(txn, rc);
	MDB_node *node = dl_leaf_search(&mc, key, &exact);
	if (!node || !exact)
		return MDB_NOTFOUND;
	if (dl_is_subdata(&mc))
		return dl_txn_fail(txn, MDB_INCOMPATIBLE);
	return dl_txn_err(txn, dl_cursor_del0(&mc));
}
