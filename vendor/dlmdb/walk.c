/*
 * walk.c - mdb_page_walk: report every page of one database's tree.
 */
#include "internal.h"

typedef struct dl_walk {
	MDB_txn	*txn;
	MDB_page_func *func;
	void	*ctx;
	int	main;	/* walking MAIN_DBI: named-DB records are leaves, not trees */
	int	stopped;	/* func's own non-zero answer, which ends the walk */
} dl_walk;

/* Report pi to the caller's function, noting an answer that stops the walk. */
static int dl_walk_report(dl_walk *w, const MDB_pageinfo *pi)
{
	int rc = w->func(w->ctx, pi);
	if (rc)
		w->stopped = 1;
	return rc;
}

/* The on-disk flags word: P_DIRTY only exists in memory on real pages. */
static unsigned dl_disk_flags(const MDB_page *mp)
{
	return mp->mp_flags & ~(unsigned)(P_DIRTY | P_LOOSE | P_KEEP);
}

static int dl_walk_page(dl_walk *w, const void *from, pgno_t pg, pgno_t parent, unsigned level,
	unsigned sub);

/* Report an inline duplicate sub-page held by a leaf node. */
static int dl_walk_subpage(dl_walk *w, MDB_page *leaf, MDB_node *n, unsigned level)
{
	MDB_env *env = w->txn->env;
	/* In the stock layout a sub-page after an odd-length key is only
	 * byte-aligned: copy its header out. */
	MDB_page hdr, *sp = &hdr;
	size_t sz = NODEDSZ(n);
	MDB_pageinfo pi;
	memset(&pi, 0, sizeof(pi));
	if (sz < PAGEHDRSZ)
		return MDB_CORRUPTED;
	memcpy(&hdr, (char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad), PAGEHDRSZ);
	if (!dl_subpage_flags_ok(sp->mp_flags) ||
	    !dl_bounds_ok(sp, sz, IS_LEAF2(sp) ? sp->mp_pad : 0))
		return MDB_CORRUPTED;
	pi.pi_pgno = leaf->mp_pgno;
	pi.pi_parent = leaf->mp_pgno;
	pi.pi_type = MDB_PAGE_LEAF | MDB_PAGE_SUBPAGE | (IS_LEAF2(sp) ? MDB_PAGE_LEAF2 : 0);
	pi.pi_flags = sp->mp_flags;
	pi.pi_level = level + 1;
	pi.pi_entries = NUMKEYS(sp);
	pi.pi_pages = 0;
	pi.pi_used = (unsigned)(sz - SIZELEFT(sp));
	pi.pi_free = SIZELEFT(sp);
	pi.pi_subtree = 1;
	return dl_walk_report(w, &pi);
}

static int dl_walk_leaf_nodes(dl_walk *w, MDB_page *mp, unsigned level, unsigned sub)
{
	MDB_txn *txn = w->txn;
	MDB_env *env = txn->env;
	int rc;
	if (IS_LEAF2(mp))
		return 0;
	for (unsigned i = 0; i < NUMKEYS(mp); i++) {
		MDB_node *n = NODEPTR(mp, i);
		if ((rc = dl_node_check(env, mp, n, 1)))
			return rc;
		void *d = (char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad);
		if (n->mn_flags & F_BIGDATA) {
			pgno_t op = dl_get64(d);
			MDB_page *omp;
			if ((rc = dl_page_get_ref(txn, n, op, &omp)))
				return rc;
			if (!IS_OVERFLOW(omp) || op + omp->mp_u.pages > txn->next_pgno ||
			    dl_run_past_snapshot(txn, n, op, omp->mp_u.pages))
				return MDB_CORRUPTED;
			if (dl_in_map(env, omp) &&
			    op + omp->mp_u.pages > txn->fpages)
				return MDB_PAGE_NOTFOUND;
			MDB_pageinfo pi;
			memset(&pi, 0, sizeof(pi));
			pi.pi_pgno = op;
			pi.pi_parent = mp->mp_pgno;
			pi.pi_type = MDB_PAGE_OVERFLOW;
			pi.pi_flags = dl_disk_flags(omp);
			pi.pi_level = level + 1;
			pi.pi_pages = omp->mp_u.pages;
			size_t used = PAGEHDRSZ + (size_t)NODEDSZ(n);
			size_t total = (size_t)omp->mp_u.pages * env->psize;
			pi.pi_used = (unsigned)used;
			pi.pi_free = (unsigned)(total > used ? total - used : 0);
			pi.pi_subtree = sub;
			if ((rc = dl_walk_report(w, &pi)))
				return rc;
		} else if ((n->mn_flags & (F_DUPDATA | F_SUBDATA)) == (F_DUPDATA | F_SUBDATA)) {
			MDB_db rec;
			if (NODEDSZ(n) != sizeof(rec))
				return MDB_CORRUPTED;
			memcpy(&rec, d, sizeof(rec));
			if (rec.md_root != P_INVALID &&
			    (rc = dl_walk_page(w, n, rec.md_root, mp->mp_pgno, level + 1, 1)))
				return rc;
		} else if (n->mn_flags & F_DUPDATA) {
			if ((rc = dl_walk_subpage(w, mp, n, level)))
				return rc;
		}
	}
	return 0;
}

/* Report page pg, named at from (NULL: the tree's record), and the pages
 * under it. */
static int dl_walk_page(dl_walk *w, const void *from, pgno_t pg, pgno_t parent, unsigned level,
	unsigned sub)
{
	MDB_txn *txn = w->txn;
	MDB_env *env = txn->env;
	MDB_page *mp;
	int rc;
	if (level >= 2 * DL_MAXDEPTH)
		return MDB_CURSOR_FULL;
	if ((rc = dl_page_get_ref(txn, from, pg, &mp)))
		return rc;
	if ((rc = dl_page_check(env, mp)))
		return rc;
	if (!IS_BRANCH(mp) && !IS_LEAF(mp))
		return MDB_CORRUPTED;
	MDB_pageinfo pi;
	memset(&pi, 0, sizeof(pi));
	pi.pi_pgno = pg;
	pi.pi_parent = parent;
	pi.pi_type = IS_BRANCH(mp) ? MDB_PAGE_BRANCH :
		(MDB_PAGE_LEAF | (IS_LEAF2(mp) ? MDB_PAGE_LEAF2 : 0));
	pi.pi_flags = dl_disk_flags(mp);
	pi.pi_level = level;
	pi.pi_entries = NUMKEYS(mp);
	pi.pi_pages = 1;
	pi.pi_used = env->psize - SIZELEFT(mp);
	pi.pi_free = SIZELEFT(mp);
	pi.pi_subtree = sub;
	if (IS_BRANCH(mp)) {
		/* Every node lies inside the page before its count (or child)
		 * is read. */
		for (unsigned i = 0; i < NUMKEYS(mp); i++)
			if ((rc = dl_node_check(env, mp, NODEPTR(mp, i), 0)))
				return rc;
	}
	if (IS_BRANCH(mp) && IS_COUNTED(mp)) {
		uint64_t sum = 0;
		for (unsigned i = 0; i < NUMKEYS(mp); i++)
			sum += dl_get64((char *)NODEPTR(mp, i) + NODESZ);
		pi.pi_count = sum;
	}
	if ((rc = dl_walk_report(w, &pi)))
		return rc;
	if (IS_BRANCH(mp)) {
		for (unsigned i = 0; i < NUMKEYS(mp); i++) {
			MDB_node *n = NODEPTR(mp, i);
			if ((rc = dl_walk_page(w, n, NODEPGNO(n), pg, level + 1, sub)))
				return rc;
		}
		return 0;
	}
	return dl_walk_leaf_nodes(w, mp, level, sub);
}

int mdb_page_walk(MDB_txn *txn, MDB_dbi dbi, MDB_page_func *func, void *ctx)
{
	int rc;
	if (!txn || !func)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 0)))
		return rc;
	if (txn->flags & (TXN_ERROR | TXN_FINISHED))
		return MDB_BAD_TXN;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	MDB_db *db = &txn->dbs[dbi];
	if (db->md_root == P_INVALID)
		return 0;
	dl_walk w = { txn, func, ctx, dbi == DL_MAIN_DBI, 0 };
	rc = dl_walk_page(&w, NULL, db->md_root, (pgno_t)(mdb_size_t)-1, 0, 0);
	/* Damage the walk found ends a write txn, as any read's does; the
	 * caller's own answer does not. */
	return w.stopped ? rc : dl_txn_err(txn, rc);
}
