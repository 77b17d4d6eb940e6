/*
 * spill.c - a write transaction's bounded dirty set.
 *
 * A write transaction copies every page it changes into a heap buffer (its
 * dirty table, page.c).  To keep a transaction larger than memory possible,
 * the table is bounded (env->dirtylimit pages): before a write operation
 * that could pass the bound, the least recently used dirty pages are
 * written to their places in the data file and their buffers released.
 *
 * Why this keeps crash safety: every dirty page carries a number this
 * transaction allocated (fresh, from its free-page pool, or reused after
 * its own free), so no meta page on disk reaches it; the pages become
 * reachable only when commit writes the new meta, after syncing every
 * page, spilled or not.  A crash or an abort before that leaves them as
 * unreferenced free space, as if never written.
 *
 * A spilled page is recorded in the transaction's spill set.  The next
 * dl_page_get of it reads it back with pread into a dirty buffer under the
 * same number (dl_spilled_load), so its file pages are never mapped into
 * the process; where that does not apply (nested txns, the dirty table at
 * its limit, multi-page overflow runs) it is read through the map, and
 * touching it for a change copies it back into a dirty buffer
 * (dl_page_touch).  Freeing it makes it reusable at once (dl_page_free).
 *
 * Pages that are never spilled:
 *  - pages on the stack of a cursor of the txn, or of the cursor the
 *    operation runs on, or of their duplicate sub-cursors (their pointers
 *    are used without a new lookup);
 *  - the pages holding the operation's key or data (a value read earlier in
 *    the txn may be passed back in);
 *  - in a nested txn, pages an ancestor holds (dirty or spilled): the child
 *    writes its version only to its own copy, so an abort leaves the
 *    ancestor's page as it was.  A child therefore spills only pages it
 *    allocated itself, and the lookup order of dl_page_get (own table,
 *    ancestors' tables, map) stays right.  On commit the child's spill set
 *    joins the parent's.
 *
 * Counted databases keep their branch counts lazily, fixed before commit by
 * walking the pages the txn owns (countfix.c); a spilled page would look
 * unchanged to that walk, so counts are brought up to date before any
 * spill.
 *
 * MDB_WRITEMAP changes nothing here: this engine also builds pages in heap
 * buffers under WRITEMAP and writes them with pwrite, so the bound applies.
 */
#include "internal.h"

/* ------------------------------------------------------------------------- */
/* Spill set: a bitmap over page numbers                                     */
/* ------------------------------------------------------------------------- */

int dl_spilled_has(const dl_spillset *s, pgno_t pgno)
{
	size_t w = (size_t)(pgno >> 6);
	return w < s->nwords && (s->bits[w] >> (pgno & 63) & 1);
}

/* Make the bitmap cover pgno. */
static int dl_spilled_reserve(dl_spillset *s, pgno_t pgno)
{
	size_t w = (size_t)(pgno >> 6);
	if (w < s->nwords)
		return 0;
	size_t n = s->nwords ? s->nwords : 64;
	while (n <= w)
		n *= 2;
	uint64_t *nb = realloc(s->bits, n * sizeof(uint64_t));
	if (!nb)
		return ENOMEM;
	memset(nb + s->nwords, 0, (n - s->nwords) * sizeof(uint64_t));
	s->bits = nb;
	s->nwords = n;
	return 0;
}

int dl_spilled_add(dl_spillset *s, pgno_t pgno)
{
	int rc = dl_spilled_reserve(s, pgno);
	if (rc)
		return rc;
	uint64_t bit = (uint64_t)1 << (pgno & 63);
	uint64_t *w = &s->bits[pgno >> 6];
	if (!(*w & bit)) {
		*w |= bit;
		s->count++;
	}
	return 0;
}

void dl_spilled_del(dl_spillset *s, pgno_t pgno)
{
	size_t w = (size_t)(pgno >> 6);
	uint64_t bit = (uint64_t)1 << (pgno & 63);
	if (w < s->nwords && (s->bits[w] & bit)) {
		s->bits[w] &= ~bit;
		s->count--;
	}
}

/* dst gets every page of src (nested commit: the child's set joins). */
int dl_spilled_merge(dl_spillset *dst, const dl_spillset *src)
{
	if (!src->count)
		return 0;
	size_t last = src->nwords;
	while (last && !src->bits[last - 1])
		last--;
	int rc = dl_spilled_reserve(dst, (pgno_t)last * 64 - 1);
	if (rc)
		return rc;
	size_t n = 0;
	for (size_t i = 0; i < dst->nwords; i++) {
		if (i < last)
			dst->bits[i] |= src->bits[i];
		n += (size_t)__builtin_popcountll(dst->bits[i]);
	}
	dst->count = n;
	return 0;
}

/* Empty the set; a big bitmap is released so idle memory stays small. */
void dl_spilled_clear(dl_spillset *s)
{
	if (s->count)
		memset(s->bits, 0, s->nwords * sizeof(uint64_t));
	s->count = 0;
	if (s->nwords > 4096)
		dl_spilled_free(s);
}

void dl_spilled_free(dl_spillset *s)
{
	free(s->bits);
	s->bits = NULL;
	s->nwords = 0;
	s->count = 0;
}

/* Whether an ancestor of txn (not txn itself) has pgno dirty or spilled. */
int dl_ancestor_holds(MDB_txn *txn, pgno_t pgno)
{
	for (MDB_txn *p = txn->parent; p; p = p->parent)
		if (dl_dirty_find(&p->dirty, pgno, NULL) ||
		    (p->spilled.count && dl_spilled_has(&p->spilled, pgno)))
			return 1;
	return 0;
}

/* Whether txn or an ancestor has pgno dirty or spilled. */
int dl_txn_holds(MDB_txn *txn, pgno_t pgno)
{
	return dl_dirty_find(&txn->dirty, pgno, NULL) ||
		(txn->spilled.count && dl_spilled_has(&txn->spilled, pgno)) ||
		dl_ancestor_holds(txn, pgno);
}

/* Length of the run starting at spilled page pgno: the engine wrote its
 * header, so an overflow head tells its page count. */
unsigned dl_spilled_run(MDB_txn *txn, pgno_t pgno)
{
	MDB_env *env = txn->env;
	if (pgno >= txn->fpages)
		return 1;
	MDB_page *mp = (MDB_page *)(env->map + (size_t)pgno * env->psize);
	return IS_OVERFLOW(mp) && mp->mp_u.pages ? mp->mp_u.pages : 1;
}

/*
 * Read page pgno back into txn's dirty table if txn spilled it: with pread
 * into a fresh buffer, under the same number, as the newest page of the
 * spill order.  Reading it through the map instead would map the file's
 * pages in, and the kernel maps a whole cached folio around each fault, so
 * the process's resident file pages would grow towards the data file's
 * size (the bound on the dirty set would not bound memory).  *ret stays
 * NULL when the page is to be read through the map: not spilled by txn;
 * a nested txn (its dl_page_touch copies the page when it changes it, so
 * an abort leaves the parent's spill set as it was); a walk that only
 * reads (TXN_MAPREAD); an in-memory store; the dirty table at its limit
 * (a long read-only scan inside a write txn must not grow it); an overflow
 * run longer than a page.  The content was written by the engine in this
 * txn, so it is not checked again.
 */
int dl_spilled_load(MDB_txn *txn, pgno_t pgno, MDB_page **ret)
{
	MDB_env *env = txn->env;
	size_t psize = env->psize;
	*ret = NULL;
	if (txn->parent || (txn->flags & TXN_MAPREAD) || (env->flags & MDB_INMEMORY) ||
	    txn->dirty.count >= env->dirtylimit || !dl_spilled_has(&txn->spilled, pgno))
		return 0;
	MDB_page *np = dl_buf_get(env, 1);
	if (!np)
		return ENOMEM;
	int rc = dl_pread_all(env->fd, np, psize, (off_t)((size_t)pgno * psize));
	if (rc) {
		dl_buf_put(env, np, 1);
		return rc == ENODATA ? MDB_CORRUPTED : rc;	/* short file */
	}
	/* A damaged number, or a run: the map path checks and handles both. */
	if (np->mp_pgno != pgno || (IS_OVERFLOW(np) && np->mp_u.pages > 1)) {
		dl_buf_put(env, np, 1);
		return 0;
	}
	np->mp_flags |= P_DIRTY;
	rc = dl_dirty_add(&txn->dirty, pgno, np, 1);
	if (rc) {
		dl_buf_put(env, np, 1);
		return rc;
	}
	dl_spilled_del(&txn->spilled, pgno);
	*ret = np;
	return 0;
}

/*
 * DLMDB_DIRTY_LIMIT: a decimal page count of at least 1 (lmdb.h).  Anything
 * else is EINVAL, so a misspelt setting is not silently ignored.
 */
int dl_dirty_limit_parse(const char *v, size_t *limit)
{
	size_t n = 0;
	if (!*v)
		return EINVAL;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || n > ((size_t)1 << 40))
			return EINVAL;
		n = n * 10 + (size_t)(*p - '0');
	}
	if (!n)
		return EINVAL;
	*limit = n;
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Choosing and writing the pages to spill                                   */
/* ------------------------------------------------------------------------- */

typedef struct dl_cand {
	uint64_t stamp;
	size_t	idx;	/* index in the dirty table's entry array */
} dl_cand;

/* Page pointers that must stay in memory, sorted for lookup. */
typedef struct dl_keep {
	const void **p;
	size_t	n, cap;
} dl_keep;

static int dl_keep_push(dl_keep *k, const void *p)
{
	if (k->n == k->cap) {
		size_t nc = k->cap ? k->cap * 2 : 64;
		const void **np = realloc(k->p, nc * sizeof(*np));
		if (!np)
			return ENOMEM;
		k->p = np;
		k->cap = nc;
	}
	k->p[k->n++] = p;
	return 0;
}

/* The pages on c's stack and on its duplicate sub-cursor's. */
static int dl_keep_cursor(dl_keep *k, MDB_cursor *c)
{
	int rc;
	for (int pass = 0; pass < 2 && c; pass++) {
		if (c->top >= 0 && c->top < DL_MAXDEPTH)
			for (int i = 0; i <= c->top; i++)
				if ((rc = dl_keep_push(k, c->pg[i])))
					return rc;
		c = pass == 0 && c->xcursor ? dl_dup_subcursor(c) : NULL;
	}
	return 0;
}

static int dl_cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;
	return x < y ? -1 : x > y;
}

static int dl_keep_has(const dl_keep *k, const void *p)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((uintptr_t)k->p[mid] < (uintptr_t)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->n && k->p[lo] == p;
}

/* Whether val's bytes start inside the buffer of entry e. */
static int dl_val_inside(const MDB_val *val, const dl_dent *e, size_t psize)
{
	if (!val || !val->mv_data)
		return 0;
	const char *q = val->mv_data, *b = (const char *)e->page;
	return q >= b && q < b + (size_t)e->npages * psize;
}

/* Reorder c[0..n) so that its k smallest stamps come first (k < n). */
static void dl_select_oldest(dl_cand *c, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		/* Median of three as pivot keeps sorted stamps linear. */
		size_t mid = lo + (hi - lo) / 2;
		uint64_t a = c[lo].stamp, b = c[mid].stamp, d = c[hi].stamp;
		uint64_t piv = a < b ? (b < d ? b : (a < d ? d : a)) : (a < d ? a : (b < d ? d : b));
		size_t i = lo, j = hi;
		while (i <= j) {
			while (c[i].stamp < piv)
				i++;
			while (c[j].stamp > piv)
				j--;
			if (i <= j) {
				dl_cand t = c[i];
				c[i] = c[j];
				c[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		/* Now c[lo..j] <= piv <= c[i..hi]. */
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* Gather the pages the spill must leave in memory: those on the stacks of
 * mc and of every cursor of the txn, sorted for dl_keep_has. */
static int dl_spill_keep(MDB_txn *txn, MDB_cursor *mc, dl_keep *keep)
{
	MDB_env *env = txn->env;
	int rc;
	if (mc && (rc = dl_keep_cursor(keep, mc)))
		return rc;
	for (unsigned i = 0; i < txn->numdbs && i < env->maxdbs; i++)
		for (MDB_cursor *c = txn->cursors[i]; c; c = c->next)
			if ((rc = dl_keep_cursor(keep, c)))
				return rc;
	if (keep->n)
		qsort(keep->p, keep->n, sizeof(*keep->p), dl_cmp_ptr);
	return 0;
}

/* Put the dirty entries that may be spilled into cand and return their
 * number: not kept, not holding the operation's key or data, not an
 * ancestor's page. */
static size_t dl_spill_cands(MDB_txn *txn, const dl_keep *keep, const MDB_val *key,
	const MDB_val *data, dl_cand *cand)
{
	dl_dirty *d = &txn->dirty;
	size_t psize = txn->env->psize, nc = 0;
	for (size_t k = 0; k < d->count; k++) {
		dl_dent *e = &d->ents[k];
		if (dl_keep_has(keep, e->page) || dl_val_inside(key, e, psize) ||
		    dl_val_inside(data, e, psize))
			continue;
		if (txn->parent && dl_ancestor_holds(txn, e->pgno))
			continue;
		cand[nc].stamp = e->stamp;
		cand[nc].idx = k;
		nc++;
	}
	return nc;
}

/*
 * Write the dirty entries cand[0..want) to the data file in page order,
 * then drop them from the dirty table and record them as spilled.
 */
static int dl_spill_write(MDB_txn *txn, const dl_cand *cand, size_t want)
{
	MDB_env *env = txn->env;
	dl_dirty *d = &txn->dirty;
	/* vic[want..2*want) in the order chosen, vic[0..want) by page. */
	dl_dent *vic = malloc(2 * want * sizeof(*vic));
	int rc;
	if (!vic)
		return ENOMEM;
	pgno_t end = 0;
	for (size_t k = 0; k < want; k++) {
		const dl_dent *e = &d->ents[cand[k].idx];
		vic[want + k] = *e;
		if (e->pgno + e->npages > end)
			end = e->pgno + e->npages;
	}
	/* The set must be able to record every page before any is dropped. */
	if ((rc = dl_spilled_reserve(&txn->spilled, end)))
		goto done;
	dl_dents_by_pgno(vic + want, want, vic);
	if ((rc = dl_write_pages(env, vic, want))) {
		/* Some buffers may have lost P_DIRTY: the txn cannot go on. */
		rc = dl_txn_fail(txn, rc);
		goto done;
	}
	if (end > txn->fpages)
		txn->fpages = end;
	if (end > dl_fpages_get(env))
		dl_fpages_set(env, end);
	for (size_t k = 0; k < want; k++) {
		dl_dirty_del(d, vic[k].pgno);
		dl_buf_put(env, vic[k].page, vic[k].npages);
		dl_spilled_add(&txn->spilled, vic[k].pgno);
	}
done:
	free(vic);
	return rc;
}

/*
 * Spill so that the dirty set has room for need more pages under the
 * limit, and at least an eighth of the limit (fewer, larger writes).  When
 * fewer pages may be spilled, spill all that may.
 */
int dl_spill(MDB_txn *txn, MDB_cursor *mc, const MDB_val *key, const MDB_val *data,
	size_t need)
{
	dl_dirty *d = &txn->dirty;
	size_t limit = txn->env->dirtylimit;
	size_t room = need > limit / 8 ? need : limit / 8;
	size_t target = limit > room ? limit - room : 0;
	dl_keep keep = { NULL, 0, 0 };
	dl_cand *cand = NULL;
	int rc;

	if (d->count <= target)
		return 0;
	if ((rc = dl_count_fix_all(txn)))
		return dl_txn_err(txn, rc);
	if ((rc = dl_spill_keep(txn, mc, &keep)))
		goto done;
	if (!(cand = malloc(d->count * sizeof(*cand)))) {
		rc = ENOMEM;
		goto done;
	}
	size_t nc = dl_spill_cands(txn, &keep, key, data, cand);
	size_t want = d->count - target;
	if (want > nc)
		want = nc;
	if (!want)
		goto done;
	if (want < nc)
		dl_select_oldest(cand, nc, want);
	rc = dl_spill_write(txn, cand, want);
done:
	free(cand);
	free(keep.p);
	return rc ? dl_txn_err(txn, rc) : 0;
}
