/*
 * countfix.c - keeping the subtree counts of MDB_COUNTED databases right
 * (dlmdb-extensions §3.6): after a txn's writes, and before commit or any
 * count or rank query in it, the branch counts over changed pages are
 * recomputed (dl_count_fix).  The queries that read them are in count.c.
 */
#include "internal.h"

/*
 * Writes do not adjust counts as they go.  A counted DB changed in a txn is
 * flagged (DB_CNTSTALE) by every write that can change a count (all but a
 * value replaced in place by one of its size, whose copied pages keep their
 * counts); before commit, and before any count or rank query
 * in that txn, its changed pages are visited bottom-up and every branch node
 * whose child changed gets the child's exact total.  Nodes over unchanged
 * children keep their stored counts, which are still exact: a subtree that
 * was not copied was not modified, and nodes are always moved with their
 * counts.  This touches only pages the txn already dirtied.
 *
 * Nested txns: a child may not write into pages its ancestors own (an abort
 * must leave them as they were), so every txn fixes its counts before a
 * child starts (dl_count_fix_all, called by mdb_txn_begin).  Invariant: the
 * counts in a page dirty in an ancestor but not copied by this txn are
 * exact, because the ancestor fixed them before this txn began and this txn
 * cannot change anything below such a page without copying it first (a
 * write copies its whole root-to-leaf path).  So such pages count as
 * unchanged here, like pages of the map.
 */

/* Whether the counts stored in mp are exact without a fix by txn: mp is a
 * page of the map, or a dirty page an ancestor owns (see the invariant). */
static inline int dl_counts_settled(MDB_txn *txn, MDB_page *mp)
{
	MDB_env *env = txn->env;
	if (dl_in_map(env, mp))
		return 1;
	return !dl_page_owned(txn, mp);
}

static int dl_count_fix_page(MDB_txn *txn, MDB_page *mp, int depth, int dups, uint64_t *total);

/* A duplicate sub-DB whose root changed: fix its branch counts too. */
static int dl_count_fix_subdb(MDB_txn *txn, MDB_node *n, int depth)
{
	MDB_env *env = txn->env;
	MDB_db rec;
	MDB_page *root;
	uint64_t t;
	int rc;
	if (NODEDSZ(n) != sizeof(rec))
		return MDB_CORRUPTED;
	memcpy(&rec, (char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad), sizeof(rec));
	if (rec.md_root == P_INVALID)
		return 0;
	if ((rc = dl_page_get(txn, rec.md_root, &root)))
		return rc;
	if (dl_counts_settled(txn, root))
		return 0;
	return dl_count_fix_page(txn, root, depth + 1, 0, &t);
}

/* The entries under mp (into *total), fixing the stored counts of the
 * changed pages below it; dups: the tree's leaves may hold duplicate nodes
 * (a DUPSORT DB's main tree, not its sub-DBs). */
static int dl_count_fix_page(MDB_txn *txn, MDB_page *mp, int depth, int dups, uint64_t *total)
{
	MDB_env *env = txn->env;
	uint64_t sum = 0, c;
	int rc;
	if (depth > 2 * DL_MAXDEPTH)
		return MDB_CURSOR_FULL;
	if ((rc = dl_page_check(env, mp)))
		return rc;
	unsigned n = NUMKEYS(mp);
	if (IS_LEAF2(mp)) {
		*total = n;
		return 0;
	}
	if (IS_LEAF(mp)) {
		size_t lower = MP_LOWER(mp), last = env->psize - NODESZ;
		/* Without MDB_DUPSORT every node is one entry: the leaf counts
		 * its nodes, and none is read.  (A page this txn copied from
		 * the map had its nodes checked when it was copied,
		 * dl_page_touch; the others the engine wrote.) */
		if (!dups) {
			*total = n;
			return 0;
		}
		/* A node without duplicates is one entry: only its position and
		 * flags are read, so only those are checked here (one pass of a
		 * few instructions per node at every commit). */
		for (unsigned i = 0; i < n; i++) {
			size_t off = mp->mp_ptrs[i];
			if ((off & 1) || off < lower || off > last)
				return MDB_CORRUPTED;
			MDB_node *nd = (MDB_node *)((char *)mp + off);
			if (!(nd->mn_flags & F_DUPDATA)) {
				sum++;
				continue;
			}
			/* A sub-page inside the page: its item count, read
			 * here after the bounds dl_contrib checks.  Any other
			 * node, or a failed check, goes to dl_contrib, which
			 * reports the damage. */
			if (!(nd->mn_flags & (F_SUBDATA | F_BIGDATA))) {
				size_t ks = nd->mn_ksize, ds = NODEDSZ(nd);
				size_t d = off + NODESZ + ks + (ks & env->pad);
				indx_t sl;
				if (ds >= PAGEHDRSZ && d + ds <= env->psize) {
					memcpy(&sl, (char *)mp + d + offsetof(MDB_page, mp_u.b.lower),
					    sizeof(sl));
					if (sl >= PAGEHDRSZ) {
						sum += (sl - PAGEHDRSZ) >> 1;
						continue;
					}
				}
			}
			if ((rc = dl_contrib(env, mp, i, &c)))
				return rc;
			sum += c;
			if ((nd->mn_flags & F_SUBDATA) && (rc = dl_count_fix_subdb(txn, nd, depth)))
				return rc;
		}
		*total = sum;
		return 0;
	}
	if (!IS_COUNTED(mp))
		return MDB_INCOMPATIBLE;
	int own = dl_page_owned(txn, mp);
	for (unsigned i = 0; i < n; i++) {
		MDB_node *nd = NODEPTR(mp, i);
		MDB_page *child;
		if ((rc = dl_node_check(env, mp, nd, 0)))
			return rc;
		if ((rc = dl_page_get(txn, NODEPGNO(nd), &child)))
			return rc;
		if (dl_counts_settled(txn, child)) {
			if ((rc = dl_bcount(env, mp, i, &c)))
				return rc;
		} else {
			if ((rc = dl_count_fix_page(txn, child, depth + 1, dups, &c)))
				return rc;
			if (own) {
				dl_put64((char *)nd + NODESZ, c);
				/* The reader (dl_bcount) sees the count just written. */
#ifdef DLMDB_DEBUG
				uint64_t back;
				DL_ASSERT(dl_bcount(env, mp, i, &back) == 0 && back == c);
#endif
			}
		}
		sum += c;
	}
	*total = sum;
	return 0;
}

/* Bring the counts of dbi up to date in txn (no-op unless it changed). */
int dl_count_fix(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_db *db = &txn->dbs[dbi];
	MDB_page *root;
	uint64_t t;
	int rc;
	if (!(txn->dbflags[dbi] & DB_CNTSTALE))
		return 0;
	if (db->md_root != P_INVALID && (db->md_flags & MDB_COUNTED)) {
		/* The walk descends only into pages the txn owns; a spilled
		 * page's counts were fixed before it was spilled, so it stays in
		 * the map instead of being loaded back (spill.c). */
		unsigned mapread = txn->flags & TXN_MAPREAD;
		txn->flags |= TXN_MAPREAD;
		rc = dl_page_get(txn, db->md_root, &root);
		if (!rc && !dl_counts_settled(txn, root)) {
			rc = dl_count_fix_page(txn, root, 0,
				(db->md_flags & MDB_DUPSORT) != 0, &t);
			if (!rc && t != db->md_entries)
				rc = MDB_CORRUPTED;	/* counts and entries disagree */
		}
		txn->flags = (txn->flags & ~TXN_MAPREAD) | mapread;
		if (rc)
			return rc;
	}
	txn->dbflags[dbi] &= (unsigned char)~DB_CNTSTALE;
	return 0;
}

/* Fix every counted DB txn changed: run before txn gets a child, which must
 * find exact counts in the pages it cannot write (see above). */
int dl_count_fix_all(MDB_txn *txn)
{
	int rc;
	for (unsigned i = DL_MAIN_DBI; i < txn->numdbs && i < txn->env->maxdbs; i++)
		if ((txn->dbflags[i] & DB_CNTSTALE) && (rc = dl_count_fix(txn, i)))
			return rc;
	return 0;
}
