/*
 * freelist.c - the free-page database (FREE_DBI, format doc §12).
 *
 * Records: key = id of the txn that freed the pages (8-byte integer),
 * data = [n, p1 > p2 > ... > pn] (8-byte integers).  A writer with id W may
 * reuse the pages of record K only when K < oldest, the smallest snapshot a
 * reader (or the previous meta, W-1) can still see.  Records are consumed in
 * ascending key order; consumed records are deleted at commit and any pages
 * left over are written back under keys <= the largest consumed key.
 */
#include "internal.h"

#define DL_SAVE_ROUNDS	64
#define DL_LOAD_ROUNDS	4096

/* Oldest snapshot still needed; snapshots only move forward, so caching it
 * for the life of the write txn is safe. */
static txnid_t dl_oldest(MDB_txn *txn)
{
	if (!txn->oldest)
		txn->oldest = dl_oldest_reader(txn->env, txn->txnid - 1);
	return txn->oldest;
}

/* Merge ids (any order) into the pool, keeping it sorted descending. */
static int dl_pool_merge(MDB_txn *txn, const unsigned char *ids, size_t n)
{
	int rc = dl_idl_reserve(&txn->pool, n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		pgno_t pg = dl_get64(ids + 8 * i);
		/* The records read here are the snapshot's (this txn's own goes
		 * in at commit, under a txnid no reader is older than), so their
		 * pages lie below its page count; next_pgno has grown by what
		 * this txn allocated already. */
		if (pg < 2 || pg >= txn->snap_pages)
			return MDB_CORRUPTED;
		txn->pool.ids[txn->pool.n++] = pg;
	}
	dl_idl_sort_desc(&txn->pool);
	for (size_t i = 1; i < txn->pool.n; i++)
		if (txn->pool.ids[i] == txn->pool.ids[i - 1])
			return MDB_CORRUPTED;	/* a page listed twice */
	return 0;
}

/* Take the next reusable record into the pool.  *got = 0 when none is left. */
int dl_fl_load_more(MDB_txn *txn, int *got)
{
	MDB_cursor mc;
	MDB_val key, data;
	txnid_t want = txn->fl_last + 1;
	int rc, exact;

	*got = 0;
	if (txn->fl_done)
		return 0;
	dl_cursor_init(&mc, txn, DL_FREE_DBI);
	key.mv_size = sizeof(want);
	key.mv_data = &want;
	rc = dl_search(&mc, &key, DL_PS_KEY);
	if (rc == MDB_NOTFOUND) {
		txn->fl_done = 1;
		return 0;
	}
	if (rc)
		return rc;
	MDB_node *node = dl_leaf_search(&mc, &key, &exact);
	if (!node) {
		rc = dl_cursor_next_leaf(&mc);
		if (rc == MDB_NOTFOUND) {
			txn->fl_done = 1;
			return 0;
		}
		if (rc)
			return rc;
	}
	node = NODEPTR(mc.pg[mc.top], mc.ki[mc.top]);
	if ((rc = dl_node_check(txn->env, mc.pg[mc.top], node, 1)))
		return rc;
	if (node->mn_ksize != sizeof(txnid_t))
		return MDB_CORRUPTED;
	txnid_t k = dl_get64(NODEKEY(mc.pg[mc.top], node));
	if (k >= dl_oldest(txn)) {
		txn->fl_done = 1;
		return 0;
	}
	if ((rc = dl_node_read(&mc, node, &data)))
		return rc;
	if (data.mv_size < 8)
		return MDB_CORRUPTED;
	uint64_t n = dl_get64(data.mv_data);
	if (n > data.mv_size / 8 - 1)
		return MDB_CORRUPTED;
	if ((rc = dl_pool_merge(txn, (unsigned char *)data.mv_data + 8, n)))
		return rc;
	txn->fl_last = k;
	*got = 1;
	return 0;
}

/* Reserve a record of room ids under key k. */
static int dl_fl_reserve(MDB_cursor *mc, txnid_t k, size_t room)
{
	MDB_val key = { sizeof(k), &k }, data = { (room + 1) * 8, NULL };
	dl_pos_unset(mc);
	return dl_cursor_put0(mc, &key, &data, MDB_RESERVE);
}

static int dl_fl_delete(MDB_cursor *mc, txnid_t k)
{
	MDB_val key = { sizeof(k), &k };
	int rc, exact;
	if ((rc = dl_search(mc, &key, DL_PS_KEY)))
		return rc == MDB_NOTFOUND ? 0 : rc;
	if (!dl_leaf_search(mc, &key, &exact) || !exact)
		return 0;
	return dl_cursor_del0(mc);
}

/* Fill the reserved record k with ids[0..n) (descending). */
static int dl_fl_fill(MDB_cursor *mc, txnid_t k, const pgno_t *ids, size_t n)
{
	MDB_val key = { sizeof(k), &k }, data;
	int rc, exact;
	if ((rc = dl_search(mc, &key, DL_PS_KEY)))
		return rc;
	MDB_node *node = dl_leaf_search(mc, &key, &exact);
	if (!node || !exact)
		return MDB_PROBLEM;
	if ((rc = dl_node_read(mc, node, &data)))
		return rc;
	if ((n + 1) * 8 > data.mv_size)
		return MDB_PROBLEM;
	unsigned char *p = data.mv_data;
	dl_put64(p, n);
	if (n)
		memcpy(p + 8, ids, n * 8);
	memset(p + 8 + n * 8, 0, data.mv_size - 8 - n * 8);
	return 0;
}

/*
 * The pages this txn freed (freed) and the reusable ones it holds (pool),
 * both sorted descending, name every page at most once.  A page twice in
 * freed was reached through two links of the tree and copied once per
 * link; a page in both was still linked from the tree while listed free.
 * Either way the store was damaged, and the free list about to be written
 * would hand the page out twice.
 */
static int dl_fl_disjoint(const dl_idl *freed, const dl_idl *pool)
{
	size_t i = 0, j = 0;
	for (size_t k = 1; k < freed->n; k++)
		if (freed->ids[k] == freed->ids[k - 1])
			return 0;
	for (size_t k = 1; k < pool->n; k++)
		if (pool->ids[k] == pool->ids[k - 1])
			return 0;
	while (i < freed->n && j < pool->n) {
		if (freed->ids[i] == pool->ids[j])
			return 0;
		if (freed->ids[i] > pool->ids[j])
			i++;
		else
			j++;
	}
	return 1;
}

/*
 * Whether a page of freed (sorted descending) is one this txn holds,
 * dirty or spilled.  The first page of a snapshot overflow run was
 * reached through a checked link (dl_page_get_ref); the run's other
 * pages only through its length, which damage can stretch over pages
 * that were free in the snapshot and that this txn has reused.  Freeing
 * the run then lists them free while in use.  Asked only after such a
 * run was freed (txn->freed_run), so other commits pay nothing.
 */
static int dl_fl_freed_held(MDB_txn *txn, int *held)
{
	const dl_idl *freed = &txn->freed;
	const dl_dirty *d = &txn->dirty;
	*held = 0;
	for (size_t k = 0; k < freed->n && txn->spilled.count && !*held; k++)
		*held = dl_spilled_has(&txn->spilled, freed->ids[k]);
	if (*held || !d->count)
		return 0;
	/* Dirty runs by page number, against freed in ascending order. */
	dl_dent *by = malloc(d->count * sizeof(*by));
	if (!by)
		return ENOMEM;
	dl_dents_by_pgno(d->ents, d->count, by);
	size_t j = 0;
	for (size_t k = freed->n; k-- > 0 && !*held; ) {
		pgno_t pg = freed->ids[k];
		while (j < d->count && by[j].pgno + by[j].npages <= pg)
			j++;
		*held = j < d->count && by[j].pgno <= pg;
	}
	free(by);
	return 0;
}

/* Move pages freed again inside this txn to where they will be recorded. */
static int dl_drain_loose(MDB_txn *txn)
{
	int rc;
	if (!txn->loose.n)
		return 0;
	dl_idl *dst = txn->fl_last ? &txn->pool : &txn->freed;
	if ((rc = dl_idl_reserve(dst, txn->loose.n)))
		return rc;
	memcpy(dst->ids + dst->n, txn->loose.ids, txn->loose.n * sizeof(pgno_t));
	dst->n += txn->loose.n;
	txn->loose.n = 0;
	dl_idl_sort_desc(dst);
	return 0;
}

/* Delete every record with key <= fl_last: the consumed ones, plus any
 * room this save already reserved for the pool under those keys. */
static int dl_fl_drop_consumed(MDB_cursor *mc)
{
	MDB_txn *txn = mc->txn;
	int rc;
	while (txn->fl_last) {
		rc = dl_search_edge(mc, 0);
		if (rc == MDB_NOTFOUND)
			return 0;
		if (rc)
			return rc;
		MDB_page *mp = mc->pg[mc->top];
		if (IS_LEAF2(mp))
			return MDB_CORRUPTED;
		MDB_node *node = NODEPTR(mp, 0);
		if ((rc = dl_node_check(txn->env, mp, node, 1)))
			return rc;
		if (node->mn_ksize != 8)
			return MDB_CORRUPTED;
		if (dl_get64(NODEKEY(mc->pg[mc->top], node)) > txn->fl_last)
			return 0;
		if ((rc = dl_cursor_del0(mc)))
			return rc;
	}
	return 0;
}

/*
 * Pages one save round may take: a copied FREE_DBI path per record it
 * touches (the consumed front, the txn's own record, the pool's), plus a
 * split or two.
 */
static size_t dl_fl_round_need(MDB_txn *txn)
{
	return 3 * ((size_t)txn->dbs[DL_FREE_DBI].md_depth + 1) + 2;
}

/*
 * Top the pool up from reusable records before a round starts.  Pages the
 * save needs otherwise come from the end of the file, and a long free list
 * left behind by an old reader would then never shrink (each commit would
 * consume one record and add one).  Loading happens only here, between
 * tree operations, never from an allocation made in the middle of changing
 * FREE_DBI: a search then could see a half-split tree and skip a record.
 * Returns 1 in *more when new records were consumed.
 */
static int dl_fl_topup(MDB_txn *txn, int *more)
{
	int rc = 0, got = 1;
	*more = 0;
	size_t need = dl_fl_round_need(txn);
	while (!txn->fl_done && txn->pool.n + txn->loose.n < need && got) {
		if ((rc = dl_fl_load_more(txn, &got)))
			break;
		if (got)
			*more = 1;
	}
	return rc;
}

/*
 * Reserve room for the pool over keys fl_last, fl_last-1, ...: a record
 * per maxfree1pg ids, the one at key 1 taking all that is left.  Records
 * an earlier, longer layout reserved beyond the new one go.
 */
static int dl_fl_reserve_pool(MDB_cursor *mc, size_t want, unsigned *pool_recs,
	size_t *pool_room)
{
	MDB_txn *txn = mc->txn;
	const size_t chunk = txn->env->maxfree1pg;
	size_t left = want, room = 0;
	unsigned recs = 0;
	txnid_t k = txn->fl_last;
	int rc;
	while (left && k) {
		size_t take = (k == 1 || left <= chunk) ? left : chunk;
		if ((rc = dl_fl_reserve(mc, k, take)))
			return rc;
		room += take;
		left -= take;
		recs++;
		k--;
	}
	for (unsigned j = recs; j < *pool_recs; j++)
		if ((rc = dl_fl_delete(mc, txn->fl_last - j)))
			return rc;
	*pool_recs = recs;
	*pool_room = room;
	return 0;
}

/*
 * Reserve records until they cover every page to save: *t_room ids under
 * the txn's own key, the pool in *pool_recs records (dl_fl_reserve_pool).
 * Each reservation may allocate or free pages, so the loop repeats until a
 * round changes nothing.
 */
static int dl_fl_reserve_all(MDB_cursor *mc, size_t *t_room, unsigned *pool_recs)
{
	MDB_txn *txn = mc->txn;
	size_t pool_room = 0;
	int rc, more;
	for (int round = 0, loads = 0; ; round++) {
		if (round >= DL_SAVE_ROUNDS)
			return MDB_PROBLEM;
		/* Past the load budget, further pages come from the file end. */
		more = 0;
		if (loads < DL_LOAD_ROUNDS && (rc = dl_fl_topup(txn, &more)))
			return rc;
		if (more) {
			/* More records consumed: delete them (and with them the
			 * pool room reserved so far, which sat under keys now
			 * <= fl_last), then start over. */
			loads++;
			if ((rc = dl_fl_drop_consumed(mc)))
				return rc;
			pool_room = 0;
			*pool_recs = 0;
			round = -1;
			continue;
		}
		if ((rc = dl_drain_loose(txn)))
			return rc;
		if (txn->freed.n > *t_room) {
			/* A little slack so the next round rarely has to grow it. */
			size_t want = txn->freed.n + (round ? 8 : 0);
			if ((rc = dl_fl_reserve(mc, txn->txnid, want)))
				return rc;
			*t_room = want;
			continue;
		}
		if (txn->pool.n > pool_room) {
			rc = dl_fl_reserve_pool(mc, txn->pool.n + (round ? 8 : 0), pool_recs,
			    &pool_room);
			if (rc)
				return rc;
			continue;
		}
		if (!txn->loose.n)
			return 0;
	}
}

/* Write the page numbers into the reserved records, which needs no
 * allocation: the txn's freed pages under its own key, the pool over the
 * pool_recs records dl_fl_reserve_pool laid out. */
static int dl_fl_write_ids(MDB_cursor *mc, size_t t_room, unsigned pool_recs)
{
	MDB_txn *txn = mc->txn;
	const size_t chunk = txn->env->maxfree1pg;
	int rc;
	int held = 0;
	dl_idl_sort_desc(&txn->freed);
	dl_idl_sort_desc(&txn->pool);
	if (!dl_fl_disjoint(&txn->freed, &txn->pool))
		return MDB_CORRUPTED;
	if (txn->freed_run && (rc = dl_fl_freed_held(txn, &held)))
		return rc;
	if (held)
		return MDB_CORRUPTED;
	if (t_room && (rc = dl_fl_fill(mc, txn->txnid, txn->freed.ids, txn->freed.n)))
		return rc;
	dl_idl_sort_desc(&txn->pool);
	size_t off = 0, left = txn->pool.n;
	txnid_t k = txn->fl_last;
	for (unsigned j = 0; j < pool_recs; j++, k--) {
		size_t take = (k == 1 || left <= chunk) ? left : chunk;
		if (j + 1 == pool_recs)
			take = left;
		if ((rc = dl_fl_fill(mc, k, txn->pool.ids + off, take)))
			return rc;
		off += take;
		left -= take;
	}
	return left ? MDB_PROBLEM : 0;
}

/*
 * Write the free list at commit.  Saving changes FREE_DBI, which itself
 * allocates and frees pages, so records are reserved first and the loop
 * repeats until the reservations cover every free page; then the page
 * numbers are written into the reserved space, which needs no allocation.
 */
int dl_fl_save(MDB_txn *txn)
{
	MDB_cursor mc;
	int rc, more;
	size_t t_room = 0;
	unsigned pool_recs = 0;

	dl_cursor_init(&mc, txn, DL_FREE_DBI);
	txn->flags |= TXN_SAVING;
	/* Drop the records whose pages this txn took over, reserve, write. */
	if (!(rc = dl_fl_topup(txn, &more)) && !(rc = dl_fl_drop_consumed(&mc)) &&
	    !(rc = dl_fl_reserve_all(&mc, &t_room, &pool_recs)))
		rc = dl_fl_write_ids(&mc, t_room, pool_recs);
	txn->flags &= ~TXN_SAVING;
	return rc;
}
