/*
 * txn.c - transactions: begin, commit (format doc §10.7 order), abort,
 * reset/renew.
 */
#include "internal.h"

#include <unistd.h>

/*
 * One allocation holds the per-DB arrays after the txn struct.  Only the
 * struct is cleared: the arrays are set up entry by entry as numdbs grows
 * (internal.h), so a large maxdbs costs address space, not time.
 */
static MDB_txn *dl_txn_alloc(MDB_env *env)
{
	unsigned n = env->maxdbs;
	size_t sz = sizeof(MDB_txn) + n * (sizeof(MDB_db) + sizeof(unsigned) +
		sizeof(MDB_cursor *) + 1);
	MDB_txn *txn = malloc(sz);
	if (!txn)
		return NULL;
	/* Not calloc, which skips malloc's per-thread cache: beginning a read
	 * txn is a hot path.  The empty asm stops gcc fusing malloc + memset
	 * back into calloc. */
	__asm__("" : "+r"(txn));
	/* An opaque size keeps this a call to libc's memset: gcc would inline
	 * the constant size as rep stos, whose startup costs more than the
	 * vector stores memset uses for a few hundred bytes. */
	size_t hs = sizeof(MDB_txn);
	__asm__("" : "+r"(hs));
	memset(txn, 0, hs);
#ifdef DLMDB_DEBUG
	/* A read of an entry never set up then sees garbage, not the zeroes
	 * a fresh heap happens to hold. */
	memset(txn + 1, 0xA5, sz - sizeof(MDB_txn));
#endif
	char *p = (char *)(txn + 1);
	txn->dbs = (MDB_db *)p;
	p += n * sizeof(MDB_db);
	txn->cursors = (MDB_cursor **)p;
	p += n * sizeof(MDB_cursor *);
	txn->dbseq = (unsigned *)p;
	p += n * sizeof(unsigned);
	txn->dbflags = (unsigned char *)p;
	txn->env = env;
	return txn;
}

/* Free a txn handle and everything it owns. */
void dl_txn_release(MDB_txn *txn)
{
	dl_idl_free(&txn->freed);
	dl_idl_free(&txn->pool);
	dl_idl_free(&txn->loose);
	dl_idl_free(&txn->ploose);
	free(txn->scratch);
	free(txn->pfxbuf);
	free(txn->dirty.tab);
	free(txn->dirty.ents);
	dl_spilled_free(&txn->spilled);
	free(txn->rankbuf);
	free(txn);
}

/* Whether persisted flags of a DB are something this engine may touch. */
static int dl_flags_ok(MDB_env *env, unsigned f)
{
	if (f & ~DL_PERSISTENT_FLAGS)
		return 0;
	if (!env->pad && (f & (MDB_COUNTED | MDB_PREFIX_COMPRESSION)))
		return 0;	/* stock layout cannot hold DLMDB structures */
	return 1;
}

/*
 * The main DB's flags come from the snapshot (another process may have set
 * DUPSORT/INTEGERKEY/... on an empty main DB): keep its comparators in step.
 */
static void dl_main_cmp_sync(MDB_env *env, unsigned mf)
{
	dl_dbx *mx = &env->dbxs[DL_MAIN_DBI];
	if (mx->flags == mf)
		return;
	if (mx->cmp == dl_default_cmp(mx->flags))
		mx->cmp = dl_default_cmp(mf);
	if (mx->dcmp == dl_default_dcmp(mx->flags))
		mx->dcmp = dl_default_dcmp(mf);
	mx->flags = mf;
}

/* Point the txn at snapshot meta m: allocation point and the core DBs. */
static void dl_txn_setup_core(MDB_txn *txn, MDB_meta *m)
{
	MDB_env *env = txn->env;
	txn->next_pgno = m->mm_last_pg + 1;
	txn->snap_pages = txn->next_pgno;
	txn->fpages = dl_fpages_get(env);
	if (txn->fpages < txn->next_pgno)
		txn->fpages = dl_file_pages(env);	/* the file may have grown */
	/* Read txns only (their flags are set before this runs): internal.h. */
	txn->mapspan = (txn->flags & TXN_RDONLY) ? dl_txn_map_span(txn) : 0;
	txn->dbs[DL_FREE_DBI] = m->mm_dbs[DL_FREE_DBI];
	txn->dbs[DL_MAIN_DBI] = m->mm_dbs[DL_MAIN_DBI];
	txn->dbflags[DL_FREE_DBI] = DB_VALID;
	txn->dbflags[DL_MAIN_DBI] = DB_VALID | DB_USRVALID;
	unsigned mf = m->mm_dbs[DL_MAIN_DBI].md_flags;
	if (!dl_flags_ok(env, mf))
		txn->dbflags[DL_MAIN_DBI] |= DB_INCOMPAT;
	dl_main_cmp_sync(env, mf);
}

/*
 * Every handle open in the env becomes usable, its record loaded lazily.
 * The table is built anew up to env->numdbs (the handles in use), whatever
 * it held before: entries beyond stay unread (internal.h).
 */
static void dl_txn_setup_handles(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	unsigned nd = env->numdbs;
	DL_ASSERT(nd >= DL_CORE_DBS && nd <= env->maxdbs);
	txn->numdbs = nd;
	txn->dbgen = env->dbgen;
	/* Locals: the byte stores to dbflags could alias the array pointers,
	 * which the loop would then reload on every entry. */
	const dl_dbx *x = env->dbxs;
	unsigned char *flags = txn->dbflags;
	unsigned *seq = txn->dbseq;
	MDB_db *dbs = txn->dbs;
	MDB_cursor **cursors = txn->cursors;
	for (unsigned i = 0; i < DL_CORE_DBS; i++) {
		seq[i] = 0;
		cursors[i] = NULL;
	}
	for (unsigned i = DL_CORE_DBS; i < nd; i++) {
		int valid = x[i].valid;
		flags[i] = valid ? DB_VALID | DB_USRVALID | DB_STALE : 0;
		seq[i] = valid ? x[i].seq : 0;
		memset(&dbs[i], 0, sizeof(MDB_db));
		cursors[i] = NULL;
	}
}

/* Point the txn at snapshot meta m and set up its whole DB table. */
static void dl_txn_setup(MDB_txn *txn, MDB_meta *m)
{
	dl_txn_setup_core(txn, m);
	dl_txn_setup_handles(txn);
}

/*
 * Renew of a read txn whose snapshot moved, handles unchanged: the open
 * handles stay as they are, only their records must be reloaded.
 */
static void dl_txn_restale(MDB_txn *txn)
{
	for (unsigned i = DL_CORE_DBS; i < txn->numdbs; i++)
		if (txn->dbflags[i])
			txn->dbflags[i] = DB_VALID | DB_USRVALID | DB_STALE;
}

/*
 * Start (or renew) a read txn.  keep: the DB table still holds a validated
 * copy of snapshot txn->txnid, taken under the env's current handle
 * generation (a reset txn, see mdb_txn_renew): if the snapshot did not move
 * nothing needs copying, and if it did the handles need not be rebuilt.
 */
static inline __attribute__((always_inline)) int dl_txn_begin_read(MDB_txn *txn, int keep)
{
	MDB_env *env = txn->env;
	txnid_t prev = txn->txnid;
	MDB_meta *m;
	for (;;) {
		int rc = dl_reader_acquire(txn);
		if (rc)
			return rc;
		if (env->lock) {
			m = METADATA((MDB_page *)(env->map + (txn->txnid & 1) * env->psize));
			if (m->mm_txnid != txn->txnid)
				m = dl_meta_current(env);
		} else {
			m = dl_meta_current(env);
		}
		txn->txnid = __atomic_load_n(&m->mm_txnid, __ATOMIC_ACQUIRE);
		if (keep && txn->txnid == prev) {
			/* Same snapshot: what the table holds is still exact, and
			 * nothing copied here can be torn. */
			dl_main_cmp_sync(env, txn->dbs[DL_MAIN_DBI].md_flags);
			break;
		}
		dl_txn_setup_core(txn, m);
		if (keep)
			dl_txn_restale(txn);
		else
			dl_txn_setup_handles(txn);
		/* Two commits may land between reading the txnid and copying the
		 * DB records, rewriting this meta page with txnid + 2: the copy
		 * would then mix two snapshots.  Seeing the same txnid after the
		 * copy proves it was not torn; otherwise start over. */
#if defined(__SANITIZE_THREAD__)
		/* TSan cannot model fences; it only needs to see an atomic here. */
		if (__atomic_load_n(&m->mm_txnid, __ATOMIC_SEQ_CST) == txn->txnid)
			break;
#else
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&m->mm_txnid, __ATOMIC_RELAXED) == txn->txnid)
			break;
#endif
		/* The core records are now garbage: never take the shortcut
		 * on them (the handles part stays sound). */
		prev = TXNID_NONE;
	}
	if (txn->next_pgno > env->maxpg) {
		dl_reader_release_txn(txn);
		return MDB_MAP_RESIZED;
	}
	txn->flags = (txn->flags & TXN_HASSLOT) | TXN_RDONLY | TXN_SNAPOK;
	return 0;
}

static int dl_idl_copy(dl_idl *dst, const dl_idl *src)
{
	dst->n = 0;
	if (!src->n)
		return 0;
	int rc = dl_idl_reserve(dst, src->n);
	if (rc)
		return rc;
	memcpy(dst->ids, src->ids, src->n * sizeof(pgno_t));
	dst->n = src->n;
	return 0;
}

/*
 * A nested write txn works on a copy of its parent's state: DB records,
 * free-page lists and allocation point.  Pages it changes are copied into
 * its own dirty table (an ancestor's dirty page keeps its number); commit
 * merges everything into the parent, abort just drops it.
 */
static int dl_txn_begin_child(MDB_txn *parent, MDB_txn **ret)
{
	MDB_env *env = parent->env;
	MDB_txn *txn = dl_txn_alloc(env);
	int rc;
	if (!txn)
		return ENOMEM;
	txn->parent = parent;
	txn->flags = parent->flags & (TXN_NOSYNC | TXN_NOMETASYNC);
	txn->txnid = parent->txnid;
	txn->next_pgno = parent->next_pgno;
	txn->snap_pages = parent->snap_pages;
	txn->fpages = parent->fpages;
	unsigned nd = parent->numdbs;
	DL_ASSERT(nd >= DL_CORE_DBS && nd <= env->maxdbs);
	txn->numdbs = nd;
	memcpy(txn->dbs, parent->dbs, nd * sizeof(MDB_db));
	memcpy(txn->dbseq, parent->dbseq, nd * sizeof(unsigned));
	for (unsigned i = 0; i < nd; i++) {
		txn->dbflags[i] = parent->dbflags[i] & (unsigned char)~DB_NEW;
		txn->cursors[i] = NULL;
	}
	txn->oldest = parent->oldest;
	txn->fl_last = parent->fl_last;
	txn->fl_done = parent->fl_done;
	txn->freed_run = parent->freed_run;
	if ((rc = dl_idl_copy(&txn->freed, &parent->freed)) ||
	    (rc = dl_idl_copy(&txn->pool, &parent->pool)) ||
	    (rc = dl_idl_copy(&txn->loose, &parent->loose))) {
		dl_txn_release(txn);
		return rc;
	}
	/*
	 * As in LMDB, the parent's cursors move into the child while it runs
	 * (mdb_cursor_txn reports the child; using them works on the child's
	 * view).  Each keeps a copy of its position: an abort puts it back, a
	 * commit keeps where the child left it.  Positions are saved as keys
	 * (C_RESEEK) so they survive the page copies either way.
	 */
	for (unsigned i = 0; i < nd; i++)
		for (MDB_cursor *c = parent->cursors[i]; c; c = c->next) {
			MDB_cursor *b = malloc(sizeof(*b));
			if (!b) {
				/* Drop the copies made so far (marked by txn == NULL). */
				for (unsigned j = 0; j < nd; j++)
					for (MDB_cursor *d = parent->cursors[j]; d; d = d->next)
						if (d->backup && !d->backup->txn) {
							MDB_cursor *o = d->backup;
							d->backup = o->backup;
							free(o);
						}
				dl_txn_release(txn);
				return ENOMEM;
			}
			b->txn = NULL;
			b->backup = c->backup;
			c->backup = b;
		}
	for (unsigned i = 0; i < nd; i++) {
		for (MDB_cursor *c = parent->cursors[i]; c; c = c->next) {
			MDB_cursor *b = c->backup;
			dl_cursor_save_one(c);
			c->backup = b->backup;
			memcpy(b, c, sizeof(*b));
			c->backup = b;
			c->txn = txn;
			c->db = &txn->dbs[i];
		}
		txn->cursors[i] = parent->cursors[i];
		parent->cursors[i] = NULL;
	}
	parent->child = txn;
	parent->flags |= TXN_HASCHILD;
	env->txn = txn;
	*ret = txn;
	return 0;
}

/* A nested txn ends: cursors opened in it die with it; the parent's go
 * back to the parent, as they were before the child began (abort) or to
 * look their place up again in the merged tree (commit). */
static void dl_child_cursors_end(MDB_txn *txn, int commit)
{
	MDB_env *env = txn->env;
	MDB_txn *parent = txn->parent;
	for (unsigned i = 0; i < txn->numdbs && i < env->maxdbs; i++) {
		MDB_cursor *c = txn->cursors[i], *next;
		for (; c; c = next) {
			next = c->next;
			if (!c->backup || c->backup->txn != parent) {
				dl_cursor_free(c);
				continue;
			}
			MDB_cursor *b = c->backup;
			if (commit) {
				dl_cursor_save_one(c);
				c->backup = b->backup;
			} else {
				void *xc = c->xcursor;
				memcpy(c, b, sizeof(*c));	/* includes the older backups */
				c->xcursor = xc;
			}
			free(b);
			c->txn = parent;
			c->db = &parent->dbs[c->dbi];
			c->next = parent->cursors[c->dbi];
			parent->cursors[c->dbi] = c;
		}
		txn->cursors[i] = NULL;
	}
}

/* Commit: the child's dirty pages move up, replacing the parent's older
 * copies (and the parent's spilled version of a page the child reloaded). */
static int dl_child_dirty_up(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	MDB_txn *parent = txn->parent;
	int rc = 0;
	for (size_t i = 0; i < txn->dirty.count; i++) {
		dl_dent *e = &txn->dirty.ents[i];
		unsigned oldn = 0;
		if (parent->spilled.count)
			dl_spilled_del(&parent->spilled, e->pgno);
		MDB_page *old = dl_dirty_swap(&parent->dirty, e->pgno, e->page, e->npages, &oldn);
		if (old == (MDB_page *)-1) {
			rc = ENOMEM;
			dl_buf_put(env, e->page, e->npages);
			continue;
		}
		if (old)
			dl_buf_put(env, old, oldn);
	}
	txn->dirty.count = 0;
	if (txn->dirty.tab)
		memset(txn->dirty.tab, 0, (txn->dirty.mask + 1) * sizeof(uint32_t));
	return rc;
}

/*
 * Commit: pages an ancestor had dirty and the child freed.  The parent's
 * copy goes.  The pages become reusable (loose) only where no older
 * ancestor still holds them dirty: such a page is the parent's shadow of
 * an ancestor's page, and reusing it now would leave the ancestor's stale
 * copy in its dirty table beside the new one.  It passes up instead, as
 * the child's own free of an ancestor's page does (dl_page_free).
 */
static int dl_child_ploose_up(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	MDB_txn *parent = txn->parent;
	int rc = 0;
	for (size_t i = 0; i < txn->ploose.n && !rc; i++) {
		pgno_t pg = txn->ploose.ids[i];
		unsigned n;
		MDB_page *mp = dl_dirty_find(&parent->dirty, pg, &n);
		int held = mp != NULL;
		if (mp) {
			dl_dirty_del(&parent->dirty, pg);
			dl_buf_put(env, mp, n);
		} else if (parent->spilled.count && dl_spilled_has(&parent->spilled, pg)) {
			n = dl_spilled_run(parent, pg);
			dl_spilled_del(&parent->spilled, pg);
			held = 1;
		}
		if (!held || dl_ancestor_holds(parent, pg)) {
			rc = dl_idl_push(&parent->ploose, pg);
			continue;
		}
		for (unsigned j = 0; j < n && !rc; j++)
			rc = dl_idl_push(&txn->loose, pg + j);
	}
	return rc;
}

/* Commit, every page merged: the parent takes the child's page lists,
 * allocation state and DB records. */
static void dl_child_state_up(MDB_txn *txn)
{
	MDB_txn *parent = txn->parent;
	dl_idl t;
	t = parent->freed; parent->freed = txn->freed; txn->freed = t;
	t = parent->pool; parent->pool = txn->pool; txn->pool = t;
	t = parent->loose; parent->loose = txn->loose; txn->loose = t;
	parent->freed_run = txn->freed_run;
	parent->next_pgno = txn->next_pgno;
	parent->oldest = txn->oldest;
	parent->fl_last = txn->fl_last;
	parent->fl_done = txn->fl_done;
	/* The child may have opened or adopted handles beyond the parent's
	 * table, and the parent may have adopted some while the child ran
	 * (dl_dbi_check does not refuse a txn with a child): the parent's
	 * table reaches the larger of the two, and takes the child's entries. */
	unsigned nd = txn->numdbs;
	dl_txn_dbs_grow(parent, nd);
	memcpy(parent->dbs, txn->dbs, nd * sizeof(MDB_db));
	memcpy(parent->dbseq, txn->dbseq, nd * sizeof(unsigned));
	for (unsigned i = 0; i < nd; i++)
		parent->dbflags[i] = txn->dbflags[i] | (parent->dbflags[i] & DB_NEW);
	if (txn->flags & TXN_DIRTY)
		parent->flags |= TXN_DIRTY;
}

/* End a nested txn; commit merges its work into the parent. */
static int dl_txn_end_child(MDB_txn *txn, int commit)
{
	MDB_env *env = txn->env;
	MDB_txn *parent = txn->parent;
	int rc = 0;

	if (commit && (txn->flags & TXN_ERROR)) {
		commit = 0;
		rc = MDB_BAD_TXN;
	}
	dl_child_cursors_end(txn, commit);
	if (commit) {
		rc = dl_child_dirty_up(txn);
		if (!rc)
			rc = dl_child_ploose_up(txn);
		/* Pages the child spilled are its own allocations: the parent
		 * now reads them through the map. */
		if (!rc)
			rc = dl_spilled_merge(&parent->spilled, &txn->spilled);
		if (txn->fpages > parent->fpages)
			parent->fpages = txn->fpages;
		if (!rc) {
			dl_child_state_up(txn);
		} else {
			parent->flags |= TXN_ERROR;
			parent->lasterr = rc;
		}
	} else {
		dl_dirty_free(env, &txn->dirty);
		dl_dbi_txn_end(txn, 0);	/* handles the child opened close */
	}
	parent->child = NULL;
	parent->flags &= ~TXN_HASCHILD;
	env->txn = parent;
	dl_txn_release(txn);
	return rc;
}

int mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned flags, MDB_txn **ret)
{
	MDB_txn *txn;
	int rc;

	if (!env || !ret || !env->opened)
		return EINVAL;
	if (env->failed)
		return MDB_PANIC;
	if (parent) {
		/* Children are write txns of a write parent.  A read-only child
		 * is refused with EINVAL, never turned into a write txn (stock
		 * LMDB differs here: Debian's 0.9.24 answers MDB_BAD_TXN, and
		 * mdb.master runs read-only children; see lmdb.h). */
		if ((parent->flags & TXN_RDONLY) || (flags & MDB_RDONLY))
			return EINVAL;
		if ((parent->flags & (TXN_ERROR | TXN_FINISHED)) || parent->child ||
		    (env->flags & MDB_WRITEMAP))
			return MDB_BAD_TXN;
		/* The child cannot write the parent's pages: their counts must
		 * be exact before it starts (countfix.c). */
		if ((rc = dl_count_fix_all(parent)))
			return dl_txn_err(parent, rc);
		return dl_txn_begin_child(parent, ret);
	}
	if ((flags & MDB_RDONLY) || (env->flags & MDB_RDONLY)) {
		if (!(flags & MDB_RDONLY))
			return EACCES;
		if (!(txn = dl_txn_alloc(env)))
			return ENOMEM;
		txn->flags = TXN_RDONLY;	/* before setup: dl_txn_setup_core reads it */
		if ((rc = dl_txn_begin_read(txn, 0))) {
			dl_reader_release_txn(txn);
			free(txn);
			return rc;
		}
		*ret = txn;
		return 0;
	}
	if ((rc = dl_wlock(env)))
		return rc;
	txn = env->wtxn_cache;
	env->wtxn_cache = NULL;
	if (!txn && !(txn = dl_txn_alloc(env))) {
		dl_wunlock(env);
		return ENOMEM;
	}
	MDB_meta *m = dl_meta_current(env);
	if (m->mm_txnid == (txnid_t)-1 || !dl_meta_in_its_page(env, m)) {
		/* Damaged metas: no next txn id (its commit would wrap to 0
		 * and lose to the other meta), or the newest snapshot in the
		 * page this txn's commit would overwrite. */
		env->wtxn_cache = txn;
		dl_wunlock(env);
		return MDB_CORRUPTED;
	}
	txn->flags = 0;
	if (flags & MDB_NOSYNC)
		txn->flags |= TXN_NOSYNC;
	if (flags & MDB_NOMETASYNC)
		txn->flags |= TXN_NOMETASYNC;
	txn->txnid = m->mm_txnid + 1;
	dl_wchecked_begin(env, m->mm_txnid, m->mm_last_pg + 1);
	txn->lasterr = 0;
	txn->oldest = 0;
	txn->fl_last = 0;
	txn->fl_done = 0;
	txn->freed.n = txn->pool.n = txn->loose.n = 0;
	txn->freed_run = 0;
	txn->slot = NULL;
	dl_txn_setup(txn, m);
	if (txn->next_pgno > env->maxpg) {
		env->wtxn_cache = txn;
		dl_wunlock(env);
		return MDB_MAP_RESIZED;
	}
	env->txn = txn;
	*ret = txn;
	return 0;
}

MDB_env *mdb_txn_env(MDB_txn *txn)
{
	return txn ? txn->env : NULL;
}

mdb_size_t mdb_txn_id(MDB_txn *txn)
{
	return txn ? (mdb_size_t)txn->txnid : 0;
}

/* The test mdb_txn_commit makes before it writes anything.  Committing
 * txn commits its live children first, and a failed one fails it all. */
int mdb_txn_changed(MDB_txn *txn)
{
	if (!txn || (txn->flags & (TXN_RDONLY | TXN_FINISHED)))
		return 0;
	unsigned any = 0;
	for (MDB_txn *t = txn; t; t = t->child) {
		if (t->flags & TXN_ERROR)
			return 0;
		any |= t->flags;
	}
	return (any & TXN_DIRTY) != 0;
}

/* Work memory owned by the write txn, kept across txns (one writer). */
void *dl_txn_scratch(MDB_txn *txn, size_t size)
{
	if (size > txn->scratchsz) {
		size_t n = txn->scratchsz ? txn->scratchsz : 16384;
		while (n < size)
			n *= 2;
		unsigned char *p = realloc(txn->scratch, n);
		if (!p)
			return NULL;
		txn->scratch = p;
		txn->scratchsz = n;
	}
	return txn->scratch;
}

int dl_txn_bad(MDB_txn *txn)
{
	return !txn || (txn->flags & (TXN_ERROR | TXN_FINISHED));
}

/* Free the cursors of a write txn (they die with it). */
static void dl_txn_close_cursors(MDB_txn *txn)
{
	for (unsigned i = 0; i < txn->numdbs && i < txn->env->maxdbs; i++) {
		MDB_cursor *c = txn->cursors[i], *next;
		for (; c; c = next) {
			next = c->next;
			dl_cursor_free(c);
		}
		txn->cursors[i] = NULL;
	}
}

/* End a write txn: drop its pages and locks; keep the handle for reuse. */
static void dl_wtxn_end(MDB_txn *txn, int committed)
{
	MDB_env *env = txn->env;
	dl_txn_close_cursors(txn);
	dl_dbi_txn_end(txn, committed);
	dl_dirty_free(env, &txn->dirty);
	dl_ov_rewind(env);
	dl_spilled_clear(&txn->spilled);
	txn->freed.n = txn->pool.n = txn->loose.n = 0;
	txn->freed_run = 0;
	txn->flags = TXN_FINISHED;
	env->txn = NULL;
	if (!env->wtxn_cache)
		env->wtxn_cache = txn;
	else
		dl_txn_release(txn);
	dl_wunlock(env);
}

static void dl_rtxn_end(MDB_txn *txn, int committed)
{
	/* A read txn changes no handle but those it opened (TXN_NEWDBI),
	 * which go away unless it commits. */
	if (!committed && (txn->flags & TXN_NEWDBI))
		dl_dbi_txn_end(txn, 0);
	dl_reader_release_txn(txn);
}

/*
 * The thread running env's write txn died without ending it (dl_wlock found
 * the writer lock free while env->txn is set).  Drop that txn, children
 * first, as an abort would: this frees its pages and releases the writer
 * lock, which the caller holds.
 */
void dl_wtxn_orphan_abort(MDB_env *env)
{
	MDB_txn *top = env->txn;
	while (top->parent)
		top = top->parent;
	mdb_txn_abort(top);
}

void mdb_txn_abort(MDB_txn *txn)
{
	if (!txn)
		return;
	if (txn->flags & TXN_RDONLY) {
		if (!(txn->flags & TXN_FINISHED))
			dl_rtxn_end(txn, 0);
		else if (txn->slot && (txn->flags & TXN_HASSLOT))
			dl_reader_release_txn(txn);
		free(txn->rankbuf);
		free(txn);
		return;
	}
	if (txn->flags & TXN_FINISHED)
		return;	/* already ended: the handle belongs to the env cache */
	if (txn->child)
		mdb_txn_abort(txn->child);
	if (txn->parent) {
		dl_txn_end_child(txn, 0);
		return;
	}
	dl_wtxn_end(txn, 0);
}

/*
 * Reset leaves the DB table as it is: renew usually finds the same snapshot
 * and handles, and then has nothing to rebuild (dl_txn_begin_read).  Only
 * handles opened by this txn are closed, as for an abort.
 */
void mdb_txn_reset(MDB_txn *txn)
{
	if (!txn || !(txn->flags & TXN_RDONLY) || (txn->flags & TXN_FINISHED))
		return;
	if (txn->flags & TXN_NEWDBI) {
		dl_dbi_txn_end(txn, 0);
		txn->flags &= ~(TXN_NEWDBI | TXN_SNAPOK);
	}
	/* A NOTLS slot stays with the handle, idle.  A thread slot stays with
	 * the thread; the handle keeps a pointer to it only as a hint for
	 * renew (abort/commit of a reset txn never touch it). */
	if (txn->slot)
		__atomic_store_n(&txn->slot->r_txnid, TXNID_NONE, __ATOMIC_RELEASE);
	txn->flags |= TXN_FINISHED;
}

int mdb_txn_renew(MDB_txn *txn)
{
	if (!txn || !(txn->flags & TXN_RDONLY) || !(txn->flags & TXN_FINISHED))
		return EINVAL;
	MDB_env *env = txn->env;
	if (env->failed)
		return MDB_PANIC;
	/* The thread slot kept by reset is still ours to use when it is idle
	 * and was claimed by this thread in this process: exactly what the
	 * thread-local lookup would return, minus its cost.  Otherwise (another
	 * txn of this thread holds it, or the handle moved threads) take the
	 * normal path, which reports the misuse. */
	dl_reader *r = txn->slot;
	if (r && !(txn->flags & TXN_HASSLOT) &&
	    (__atomic_load_n(&r->r_txnid, __ATOMIC_RELAXED) != TXNID_NONE ||
	     __atomic_load_n(&r->r_pid, __ATOMIC_RELAXED) != (uint32_t)env->pid ||
	     __atomic_load_n(&r->r_tid, __ATOMIC_RELAXED) != (uint64_t)pthread_self()))
		txn->slot = NULL;
	/* Handles opened or closed since (a new generation) need a rebuild. */
	int keep = (txn->flags & TXN_SNAPOK) && txn->dbgen == env->dbgen;
	txn->flags &= ~(TXN_FINISHED | TXN_SNAPOK);
	int rc = dl_txn_begin_read(txn, keep);
	if (rc)
		txn->flags |= TXN_FINISHED;
	return rc;
}

/* Write every dirty page, in pgno order. */
static int dl_flush_dirty(MDB_txn *txn)
{
	dl_dirty *d = &txn->dirty;
	if (!d->count)
		return 0;
	dl_dent *ents = malloc(d->count * sizeof(dl_dent));
	if (!ents)
		return ENOMEM;
	size_t n = d->count;
	dl_dents_by_pgno(d->ents, n, ents);
	int rc = dl_write_pages(txn->env, ents, n);
	if (!rc && n) {
		pgno_t end = ents[n - 1].pgno + ents[n - 1].npages;
		if (end > dl_fpages_get(txn->env))
			dl_fpages_set(txn->env, end);
	}
	free(ents);
	return rc;
}

int mdb_txn_commit(MDB_txn *txn)
{
	int rc;
	if (!txn)
		return EINVAL;
	MDB_env *env = txn->env;
	if (txn->flags & TXN_RDONLY) {
		if (!(txn->flags & TXN_FINISHED))
			dl_rtxn_end(txn, 1);
		else if (txn->slot && (txn->flags & TXN_HASSLOT))
			dl_reader_release_txn(txn);
		free(txn->rankbuf);
		free(txn);
		return 0;
	}
	if (txn->flags & TXN_FINISHED)
		return EINVAL;
	if (txn->child && (rc = mdb_txn_commit(txn->child))) {
		mdb_txn_abort(txn);
		return rc;
	}
	if (txn->parent)
		return dl_txn_end_child(txn, 1);
	if (txn != env->txn) {
		return EINVAL;
	}
	if (txn->flags & TXN_ERROR) {
		dl_wtxn_end(txn, 0);
		return MDB_BAD_TXN;
	}
	if (!(txn->flags & TXN_DIRTY)) {
		dl_wtxn_end(txn, 1);
		return 0;
	}
	if ((rc = dl_dbs_flush(txn)))
		goto fail;
	/* Counts last: storing DB records may itself change a counted main DB. */
	for (unsigned i = DL_MAIN_DBI; i < txn->numdbs && i < env->maxdbs; i++)
		if ((txn->dbflags[i] & DB_CNTSTALE) && (rc = dl_count_fix(txn, i)))
			goto fail;
	if ((rc = dl_fl_save(txn)))
		goto fail;
	if ((rc = dl_flush_dirty(txn)))
		goto fail;
	int nosync = (env->flags & MDB_NOSYNC) || (txn->flags & TXN_NOSYNC);
	if (!nosync && fdatasync(env->fd) < 0) {
		rc = errno;
		goto fail;
	}
	if ((rc = dl_meta_write(txn))) {
		env->failed = 1;
		goto fail;
	}
	if (env->lock)
		/* seq_cst: one half of the reader handshake (see
		 * dl_reader_acquire); runs once per commit. */
		__atomic_store_n(env->lk_txnid, txn->txnid, __ATOMIC_SEQ_CST);
	dl_wchecked_committed(txn);
	dl_wtxn_end(txn, 1);
	return 0;
fail:
	dl_wtxn_end(txn, 0);
	return rc;
}
