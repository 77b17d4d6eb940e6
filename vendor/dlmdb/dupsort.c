/*
 * dupsort.c - sorted-duplicate (MDB_DUPSORT) databases: the sub-cursor,
 * reads, puts and deletes of duplicates, and mdb_cursor_list_dup.
 *
 * A key's items live in one of three forms (format doc §8): the node's own
 * value (single item), an inline sub-page (F_DUPDATA), or a sub-database
 * (F_DUPDATA|F_SUBDATA).  A cursor on a DUPSORT DB carries a sub-cursor over
 * the current key's sub-page or sub-database; the items are that tree's keys.
 *
 * In the stock layout a sub-page after an odd-length key is only byte
 * aligned; page and node structs are packed, so it is read in place and
 * returned items point into the map like any other value.
 */
#include "internal.h"

typedef struct dl_xcursor {
	MDB_cursor mx;		/* walks the duplicates of the current key */
	MDB_db	db;		/* sub-DB record, or a synthetic one for a sub-page */
	dl_dbx	dbx;		/* cmp = the parent's duplicate order */
	int	active;		/* current key has F_DUPDATA */
	int	subpage;	/* duplicates are in an inline sub-page */
	int	xmoved;		/* last dl_xset stepped into the next leaf */
	MDB_val	*list;		/* mdb_cursor_list_dup result */
	size_t	listcap;
	unsigned char *lbuf;	/* decoded values of a prefix DB's list */
	size_t	lbufcap;
} dl_xcursor;

void dl_dup_free(void *p)
{
	dl_xcursor *xc = p;
	if (xc) {
		free(xc->list);
		free(xc->lbuf);
		free(xc);
	}
}

/* Does p point into mc's sub-cursor (e.g. its decoded-item buffer)? */
int dl_dup_owns(MDB_cursor *mc, const void *p)
{
	const char *b = mc->xcursor, *q = p;
	return b && q >= b && q < b + sizeof(dl_xcursor);
}

/* The cursor walking mc's duplicates, or NULL when mc has none set up;
 * its page stack may point into dirty pages (spill.c keeps those). */
MDB_cursor *dl_dup_subcursor(MDB_cursor *mc)
{
	dl_xcursor *xc = mc->xcursor;
	return xc && xc->active ? &xc->mx : NULL;
}

static dl_xcursor *dl_xc_get(MDB_cursor *mc)
{
	if (!mc->xcursor) {
		dl_xcursor *xc = calloc(1, sizeof(*xc));
		if (!xc)
			return NULL;
		mc->xcursor = xc;
	}
	return mc->xcursor;
}

static inline void *dl_node_dataptr(MDB_env *env, MDB_node *n)
{
	return (char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad);
}

/* Check a sub-page of size sz: header and every node inside it. */
static int dl_subpage_check(MDB_page *sp, size_t sz)
{
	if (sz < PAGEHDRSZ || !dl_subpage_flags_ok(sp->mp_flags) ||
	    !dl_bounds_ok(sp, sz, IS_LEAF2(sp) ? sp->mp_pad : 0))
		return MDB_CORRUPTED;
	unsigned n = NUMKEYS(sp);
	if (IS_LEAF2(sp))
		return 0;	/* items packed, checked by dl_bounds_ok */
	for (unsigned i = 0; i < n; i++) {
		size_t off = sp->mp_ptrs[i];
		if ((off & 1) || off < MP_LOWER(sp) || off + NODESZ > sz)
			return MDB_CORRUPTED;
		MDB_node *nd = (MDB_node *)((char *)sp + off);
		if (off + NODESZ + nd->mn_ksize > sz)
			return MDB_CORRUPTED;
	}
	return 0;
}

/* Load the duplicates of the main cursor's current node into its sub-cursor. */
/*
 * Set the sub-cursor up for the key under mc.  check: validate the node and
 * an inline sub-page first (always, for anything read from the file);
 * callers pass 0 only right after this txn wrote the node itself, or copied
 * a node this same call sequence had just validated (a page touch).
 */
static int dl_xinit_core(MDB_cursor *mc, dl_xcursor *xc, int check)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[mc->top];
	MDB_node *n = NODEPTR(mp, mc->ki[mc->top]);
	int rc;

	xc->active = 0;
	if (check && (rc = dl_node_check(env, mp, n, 1)))
		return rc;
	if (!(n->mn_flags & F_DUPDATA))
		return 0;
	MDB_cursor *mx = &xc->mx;
	mx->next = NULL;
	mx->txn = txn;
	mx->dbi = mc->dbi;
	mx->db = &xc->db;
	mx->dbx = &xc->dbx;
	mx->flags = C_UNTRACKED | (mc->flags & C_PREFIX);
	mx->top = -1;
	mx->xcursor = NULL;
	mx->keylen = 0;
	mx->kc_pg = NULL;
	xc->dbx.cmp = mc->dbx->dcmp ? mc->dbx->dcmp : dl_cmp_lex;
	xc->dbx.dcmp = NULL;
	xc->dbx.flags = 0;
	void *d = dl_node_dataptr(env, n);
	size_t sz = NODEDSZ(n);
	if (n->mn_flags & F_SUBDATA) {
		if (sz != sizeof(MDB_db))
			return MDB_CORRUPTED;
		memcpy(&xc->db, d, sizeof(MDB_db));
		if (xc->db.md_root == P_INVALID || xc->db.md_root < 2 ||
		    xc->db.md_root >= txn->next_pgno || !xc->db.md_depth)
			return MDB_CORRUPTED;
		xc->subpage = 0;
	} else {
		MDB_page *sp = d;
		if (check && (rc = dl_subpage_check(sp, sz)))
			return rc;
		memset(&xc->db, 0, sizeof(xc->db));
		xc->db.md_depth = 1;
		xc->db.md_leaf_pages = 1;
		xc->db.md_entries = NUMKEYS(sp);
		xc->db.md_root = P_INVALID;
		xc->db.md_pad = IS_LEAF2(sp) ? sp->mp_pad : 0;
		mx->pg[0] = sp;
		mx->top = 0;
		mx->ki[0] = 0;
		xc->subpage = 1;
		if (!NUMKEYS(sp))
			return MDB_CORRUPTED;
	}
	xc->active = 1;
	return 0;
}

static int dl_xinit(MDB_cursor *mc, dl_xcursor *xc)
{
	/* A leaf outside the map is a page this write txn owns: built here,
	 * or copied from the map after dl_page_wcheck checked all of it
	 * (sub-pages included), and changed only by this txn since.  Map
	 * pages (read txns, WRITEMAP) are always checked. */
	MDB_env *env = mc->txn->env;
	const char *p = (const char *)mc->pg[mc->top];
	int own = p < (const char *)env->map || p >= (const char *)env->map + env->mapsize;
	return dl_xinit_core(mc, xc, !own);
}

/* dl_xinit for a node this txn just wrote or copied after validating it. */
static int dl_xinit_trusted(MDB_cursor *mc, dl_xcursor *xc)
{
	return dl_xinit_core(mc, xc, 0);
}

static int dl_xfirst(dl_xcursor *xc, int last)
{
	MDB_cursor *mx = &xc->mx;
	mx->flags = last ? (mx->flags | C_ATEND) : (mx->flags & ~C_ATEND);
	if (xc->subpage) {
		unsigned n = NUMKEYS(mx->pg[0]);
		mx->top = 0;
		mx->ki[0] = (indx_t)(last ? n - 1 : 0);
		mx->flags |= C_INIT;
		return 0;
	}
	int rc = dl_search_edge(mx, last);
	if (rc == MDB_NOTFOUND)
		return MDB_CORRUPTED;	/* a sub-DB is never empty */
	if (!rc)
		mx->flags |= C_INIT;
	return rc;
}

/*
 * Step the duplicate position.  As in LMDB, a duplicate cursor that was
 * placed on the last item by a "last" move, or that ran off the end, has
 * no next item until it moves backwards or is repositioned.
 */
static int dl_xstep(dl_xcursor *xc, int back)
{
	MDB_cursor *mx = &xc->mx;
	MDB_page *mp = mx->pg[mx->top];
	int rc;
	if (back) {
		mx->flags &= ~C_ATEND;
		if (mx->ki[mx->top] > 0) {
			mx->ki[mx->top]--;
			return 0;
		}
		return xc->subpage ? MDB_NOTFOUND : dl_cursor_prev_leaf(mx);
	}
	if (mx->flags & C_ATEND)
		return MDB_NOTFOUND;
	if ((unsigned)mx->ki[mx->top] + 1 < NUMKEYS(mp)) {
		mx->ki[mx->top]++;
		return 0;
	}
	rc = xc->subpage ? MDB_NOTFOUND : dl_cursor_next_leaf(mx);
	if (rc == MDB_NOTFOUND)
		mx->flags |= C_ATEND;
	return rc;
}

static int dl_xcurrent(dl_xcursor *xc, MDB_val *data)
{
	MDB_val tmp;
	return dl_cursor_current(&xc->mx, data ? data : &tmp, NULL);
}

/* Position the sub-cursor on item val (exact) or the first item >= val. */
static int dl_xset(dl_xcursor *xc, const MDB_val *val, int range)
{
	MDB_cursor *mx = &xc->mx;
	int rc, exact;
	mx->flags &= ~C_ATEND;
	xc->xmoved = 0;
	if (!xc->subpage) {
		if ((rc = dl_search(mx, val, DL_PS_KEY)))
			return rc == MDB_NOTFOUND ? MDB_CORRUPTED : rc;
	} else {
		mx->top = 0;
	}
	mx->flags |= C_INIT;
	MDB_node *n = dl_leaf_search(mx, val, &exact);
	if (!n) {
		if (mx->ki[mx->top] < NUMKEYS(mx->pg[mx->top]))
			return MDB_CORRUPTED;
		if (!range || xc->subpage)
			return MDB_NOTFOUND;
		if ((rc = dl_cursor_next_leaf(mx)))
			return rc;
		xc->xmoved = 1;
		return 0;
	}
	if (!exact && !range)
		return MDB_NOTFOUND;
	return 0;
}

/* Fill data for the main cursor's current position (first/last item). */
static int dl_dup_enter(MDB_cursor *mc, dl_xcursor *xc, MDB_val *data, int last)
{
	int rc = dl_xinit(mc, xc);
	if (rc)
		return rc;
	if (xc->active) {
		if ((rc = dl_xfirst(xc, last)))
			return rc;
		return data ? dl_xcurrent(xc, data) : 0;
	}
	if (!data)
		return 0;
	MDB_val k;
	return dl_cursor_current(mc, &k, data);
}

/* Return a whole LEAF2 page of the sub-cursor and move to its last item. */
static int dl_dup_page(dl_xcursor *xc, MDB_val *data)
{
	MDB_cursor *mx = &xc->mx;
	MDB_page *mp = mx->pg[mx->top];
	if (!IS_LEAF2(mp))
		return MDB_INCOMPATIBLE;
	unsigned n = NUMKEYS(mp);
	data->mv_data = (char *)mp + PAGEHDRSZ;
	data->mv_size = (size_t)n * mp->mp_pad;
	mx->ki[mx->top] = (indx_t)(n ? n - 1 : 0);
	return 0;
}

static int dl_dup_get0(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op, int fixed);

/*
 * Key and item after the duplicate position moved within the same key (the
 * hot path of a NEXT scan).  The key's node was checked when the cursor
 * reached it and its page has not changed since (else C_RESEEK), so it is
 * read directly; fixed-size items are read straight off their LEAF2 page.
 */
static int dl_dup_here(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data)
{
	int rc;
	if (key) {
		MDB_page *mp = mc->pg[mc->top];
		unsigned i = mc->ki[mc->top];
		if (!IS_LEAF2(mp) && i < NUMKEYS(mp) && (!(mc->flags & C_PREFIX) || i == 0)) {
			/* Stored in full (a compressed page's trunk too). */
			MDB_node *n = NODEPTR(mp, i);
			key->mv_size = n->mn_ksize;
			key->mv_data = NODEKEY(mp, n);
		} else if ((mc->flags & C_PREFIX) && dl_pfx_cursor_cached(mc, mp, i, key)) {
			/* Decoded when the cursor reached this key. */
		} else if ((rc = dl_cursor_current(mc, key, NULL))) {
			return rc;
		}
	}
	if (!data)
		return 0;
	MDB_cursor *mx = &xc->mx;
	MDB_page *xp = mx->pg[mx->top];
	if (IS_LEAF2(xp) && mx->ki[mx->top] < NUMKEYS(xp)) {
		data->mv_size = xp->mp_pad;
		data->mv_data = (char *)xp + PAGEHDRSZ + (size_t)mx->ki[mx->top] * xp->mp_pad;
		return 0;
	}
	return dl_xcurrent(xc, data);
}

/*
 * An op on a cursor whose delete removed its key's last duplicate
 * (C_DUPEND): it sits on the key past the end of its duplicates, with the
 * sub-cursor on the new last one.  Returns -1 for ops that behave as usual
 * once the state is dropped.
 */
static int dl_dup_get_dupend(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op)
{
	int rc;
	switch (op) {
	case MDB_GET_CURRENT:
		/* Nothing here; in LMDB this read also ends the duplicate
		 * position's "just deleted" state (seen by FIRST/LAST_DUP). */
		mc->flags |= C_DUPEND | C_DELGONE;
		return MDB_NOTFOUND;
	case MDB_NEXT_DUP:
		/* Nothing here and no next duplicate; the state stays. */
		mc->flags |= C_DUPEND;
		return MDB_NOTFOUND;
	case MDB_NEXT:
	case MDB_NEXT_NODUP:
		mc->flags &= ~C_DEL;
		if ((rc = dl_cursor_next(mc, key, NULL))) {
			/* No next key: still past the end of this one. */
			if (rc == MDB_NOTFOUND)
				mc->flags |= C_DEL | C_DUPEND;
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 0);
	case MDB_PREV_NODUP:
		/* No earlier key: LMDB leaves the duplicate position (past the
		 * key's last duplicate) exactly as it was. */
		mc->flags &= ~C_DEL;
		if ((rc = dl_cursor_prev(mc, key, NULL))) {
			if (rc == MDB_NOTFOUND)
				mc->flags |= C_DEL | C_DUPEND;
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 1);
	case MDB_PREV:
	case MDB_PREV_DUP:
		/* The previous item is the key's (new) last duplicate; moving
		 * back onto it clears the duplicate position's end marker. */
		mc->flags &= ~C_DEL;
		if (!xc->active)
			return -1;
		xc->mx.flags &= ~C_ATEND;
		if (key && (rc = dl_cursor_current(mc, key, NULL)))
			return rc;
		return data ? dl_xcurrent(xc, data) : 0;
	default:
		mc->flags &= ~C_DEL;
		return -1;
	}
}

int dl_dup_get(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	dl_xcursor *xc = dl_xc_get(mc);
	int rc;
	if (!xc)
		return ENOMEM;
	int fixed = (mc->db->md_flags & MDB_DUPFIXED) != 0;

	/* LMDB defines NEXT_MULTIPLE as a NEXT_DUP step followed by handing
	 * back the whole page the duplicate position landed on, so it shares
	 * every NEXT_DUP rule (after deletes, after MDB_LAST, unpositioned). */
	if (op == MDB_NEXT_MULTIPLE) {
		MDB_val item;
		if (!data)
			return EINVAL;
		if (!fixed)
			return MDB_INCOMPATIBLE;
		if ((rc = dl_dup_get(mc, key, &item, MDB_NEXT_DUP)))
			return rc;
		return xc->active ? dl_dup_page(xc, data) : MDB_NOTFOUND;
	}

	/* Unpositioned (its tree emptied) while on the deleted item: LMDB
	 * answers one NEXT_DUP with "not found"; any op ends that state. */
	if ((mc->flags & (C_INIT | C_DEL)) == C_DEL) {
		mc->flags &= ~C_DEL;
		if (op == MDB_NEXT_DUP)
			return MDB_NOTFOUND;
	}

	/* Only a duplicate was deleted and the key stays: LMDB's NEXT_NODUP
	 * then moves on to the next key rather than to the following item. */
	/* LMDB keeps the "just deleted" state of the duplicate position across
	 * FIRST_DUP and LAST_DUP (a following NEXT returns that item again;
	 * NEXT_NODUP moves on), unless the cursor sits past the last key. */
	if ((op == MDB_FIRST_DUP || op == MDB_LAST_DUP) &&
	    (mc->flags & (C_INIT | C_EOF | C_DEL | C_RESEEK | C_DELGONE)) == (C_INIT | C_DEL)) {
		if (mc->top >= 0 && mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
			return data ? MDB_NOTFOUND : EINVAL;
		mc->flags &= ~(C_DUPDEL | C_DUPEND);
		rc = dl_dup_get0(mc, xc, key, data, op, fixed);
		if (!rc)
			mc->flags = (mc->flags & ~(C_ATEND | C_KEYDEL)) | (xc->active ? C_DEL | C_DUPDEL : 0);
		return rc;
	}
	/* NEXT_NODUP leaves the duplicate position alone: if there is no next
	 * key, its "just deleted" state is still there afterwards (LMDB). */
	unsigned keep_dupdel = 0;
	if (mc->flags & C_DUPDEL) {
		if (op == MDB_NEXT_NODUP && (mc->flags & (C_INIT | C_EOF | C_DEL | C_RESEEK)) == (C_INIT | C_DEL)) {
			mc->flags &= ~C_DEL;
			keep_dupdel = C_DEL | C_DUPDEL;
		}
		mc->flags &= ~C_DUPDEL;
	}
	if (mc->flags & C_DUPEND) {
		int dupend = (mc->flags & (C_INIT | C_EOF | C_DEL | C_RESEEK)) == (C_INIT | C_DEL);
		mc->flags &= ~C_DUPEND;
		if (dupend && (rc = dl_dup_get_dupend(mc, xc, key, data, op)) != -1)
			return rc;
	}

	/* Like LMDB: after MDB_LAST the cursor answers "no next item" until it
	 * is moved some other way (FIRST_DUP/LAST_DUP count as such a move) or
	 * keys land after it. */
	switch (op) {
	case MDB_NEXT:
	case MDB_NEXT_DUP:
	case MDB_NEXT_NODUP:
		/* The marker only counts while the cursor is on the last key of
		 * its leaf (LMDB compares the index); anywhere else it drops. */
		if ((mc->flags & (C_INIT | C_ATEND)) == (C_INIT | C_ATEND)) {
			if (mc->top >= 0 && mc->ki[mc->top] + 1u < NUMKEYS(mc->pg[mc->top])) {
				mc->flags &= ~C_ATEND;
			} else {
				mc->flags |= keep_dupdel;
				return MDB_NOTFOUND;
			}
		}
		break;
	default:
		break;
	}
	rc = dl_dup_get0(mc, xc, key, data, op, fixed);
	if (rc == MDB_NOTFOUND)
		mc->flags |= keep_dupdel;
	switch (op) {
	case MDB_PREV:
	case MDB_PREV_NODUP:
		/* LMDB drops its end marker as soon as PREV reaches the key
		 * level, so even when there is no previous key. */
		mc->flags &= ~C_ATEND;
		break;
	case MDB_FIRST:
	case MDB_PREV_DUP:
	case MDB_SET:
	case MDB_SET_KEY:
	case MDB_SET_RANGE:
	case MDB_GET_BOTH:
	case MDB_GET_BOTH_RANGE:
	case MDB_FIRST_DUP:
	case MDB_LAST_DUP:
		if (!rc)
			mc->flags &= ~C_ATEND;
		break;
	case MDB_LAST:
		if (!rc)
			mc->flags |= C_ATEND;
		break;
	default:
		break;
	}
	return rc;
}

static int dl_dup_get0(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op, int fixed)
{
	int rc, wasdel;
	switch (op) {
	case MDB_FIRST:
	case MDB_LAST:
		if ((rc = dl_cursor_first(mc, key, NULL, op == MDB_LAST)))
			return rc;
		return dl_dup_enter(mc, xc, data, op == MDB_LAST);
	case MDB_NEXT:
	case MDB_NEXT_DUP:
	case MDB_NEXT_NODUP:
		if (!(mc->flags & C_INIT)) {
			if ((rc = dl_cursor_first(mc, key, NULL, 0)))
				return rc;
			return dl_dup_enter(mc, xc, data, 0);
		}
		if ((mc->flags & C_EOF) || mc->top < 0)
			return MDB_NOTFOUND;
		if (mc->flags & C_DEL) {
			/* Just deleted: the following item is already current.
			 * LMDB answers NEXT_DUP right after a whole key went
			 * with "not found", whatever follows. */
			if (mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
				return MDB_NOTFOUND;
			if (op == MDB_NEXT_DUP && (mc->flags & C_KEYDEL)) {
				/* LMDB: a following NEXT still returns that key's
				 * first duplicate, but NEXT_NODUP moves on. */
				if (xc->active)
					mc->flags = (mc->flags & ~C_KEYDEL) | C_DUPDEL;
				else
					mc->flags &= ~C_DEL;
				return MDB_NOTFOUND;
			}
			/* LMDB tests the duplicate position's end marker (left
			 * by LAST_DUP) before its "just deleted" state. */
			if (xc->active && (xc->mx.flags & C_ATEND) && !(mc->flags & C_KEYDEL)) {
				if (op == MDB_NEXT_DUP) {
					mc->flags |= C_DUPDEL;
					return MDB_NOTFOUND;
				}
				mc->flags &= ~C_DEL;
				if ((rc = dl_cursor_next(mc, key, NULL))) {
					if (rc == MDB_NOTFOUND)
						mc->flags |= C_ATEND;
					return rc;
				}
				return dl_dup_enter(mc, xc, data, 0);
			}
			mc->flags &= ~C_DEL;
			if (op == MDB_NEXT_DUP && !xc->active)
				return MDB_NOTFOUND;
			if ((rc = dl_cursor_current(mc, key, NULL)))
				return rc;
			if (!data)
				return 0;
			if (xc->active)
				return dl_xcurrent(xc, data);
			MDB_val k2;
			return dl_cursor_current(mc, &k2, data);
		}
		if (op != MDB_NEXT_NODUP && xc->active) {
			rc = dl_xstep(xc, 0);
			if (rc == 0)
				return dl_dup_here(mc, xc, key, data);
			if (rc != MDB_NOTFOUND)
				return rc;
		}
		if (op == MDB_NEXT_DUP)
			return MDB_NOTFOUND;
		if ((rc = dl_cursor_next(mc, key, NULL))) {
			/* Ran off the end: LMDB then refuses NEXT until moved. */
			if (rc == MDB_NOTFOUND)
				mc->flags |= C_ATEND;
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 0);
	case MDB_PREV:
	case MDB_PREV_DUP:
	case MDB_PREV_NODUP:
		if (!(mc->flags & C_INIT) || (mc->flags & C_EOF)) {
			/* LMDB: a never-positioned cursor treats PREV_DUP like
			 * PREV (it lands on the last item); past the end there
			 * is no current key and so no previous duplicate. */
			if (op == MDB_PREV_DUP && (mc->flags & C_INIT)) {
				/* No current key, so no previous duplicate. */
				mc->flags |= C_INIT | C_EOF;
				return MDB_NOTFOUND;
			}
			if ((rc = dl_cursor_first(mc, key, NULL, 1)))
				return rc;
			return dl_dup_enter(mc, xc, data, 1);
		}
		if (mc->top < 0)
			return MDB_NOTFOUND;
		wasdel = (mc->flags & C_DEL) != 0;
		if (mc->flags & C_DEL) {
			mc->flags &= ~C_DEL;
			if (mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top])) {
				/* Deleted the DB's last key: there is no current key, so
				 * (as in LMDB) even PREV_DUP steps onto the new last key
				 * and its last duplicate. */
				if ((rc = dl_cursor_prev(mc, key, NULL)))
					return rc;
				return dl_dup_enter(mc, xc, data, 1);
			}
		}
		if (op != MDB_PREV_NODUP && xc->active) {
			rc = dl_xstep(xc, 1);
			if (rc == 0) {
				if (key && (rc = dl_cursor_current(mc, key, NULL)))
					return rc;
				return data ? dl_xcurrent(xc, data) : 0;
			}
			if (rc != MDB_NOTFOUND)
				return rc;
		}
		if (op == MDB_PREV_DUP)
			return MDB_NOTFOUND;
		if ((rc = dl_cursor_prev(mc, key, NULL))) {
			/* LMDB: a refused PREV_NODUP ends the key-level "just
			 * deleted" state but not the duplicate position's one. */
			if (rc == MDB_NOTFOUND && op == MDB_PREV_NODUP && wasdel) {
				mc->flags &= ~C_KEYDEL;
				if (xc->active)
					mc->flags |= C_DEL | C_DUPDEL;
			}
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 1);
	case MDB_GET_CURRENT:
		if (!(mc->flags & C_INIT))
			return EINVAL;
		if (mc->flags & C_EOF)
			return MDB_NOTFOUND;
		if ((rc = dl_cursor_current(mc, key, NULL)))
			return rc;
		mc->flags &= ~C_DEL;
		if (!data)
			return 0;
		if (xc->active)
			return dl_xcurrent(xc, data);
		{
			MDB_val k;
			return dl_cursor_current(mc, &k, data);
		}
	case MDB_SET:
	case MDB_SET_KEY:
	case MDB_SET_RANGE:
		if ((rc = dl_cursor_set(mc, key, NULL, op)))
			return rc;
		return dl_dup_enter(mc, xc, data, 0);
	case MDB_FIRST_DUP:
	case MDB_LAST_DUP:
		if (!(mc->flags & C_INIT) || !data)
			return EINVAL;
		/* Past the last key (its deletion moved the cursor there)
		 * LMDB refuses before touching any state; otherwise these end
		 * the "just deleted" state (see below). */
		if (mc->top >= 0 && mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
			return MDB_NOTFOUND;
		mc->flags &= ~C_DEL;
		if ((mc->flags & C_EOF) || mc->top < 0)
			return MDB_NOTFOUND;
		if (xc->active) {
			if ((rc = dl_xfirst(xc, op == MDB_LAST_DUP)))
				return rc;
			return dl_xcurrent(xc, data);
		}
		return dl_cursor_current(mc, key, data);
	case MDB_GET_BOTH:
	case MDB_GET_BOTH_RANGE: {
		if (!key || !data)
			return EINVAL;
		MDB_val want = *data, k2 = *key;
		if ((rc = dl_cursor_set(mc, &k2, NULL, MDB_SET)))
			return rc;
		if ((rc = dl_xinit(mc, xc)))
			return rc;
		if (xc->active) {
			if ((rc = dl_xset(xc, &want, op == MDB_GET_BOTH_RANGE)))
				return rc;
			return dl_xcurrent(xc, data);
		}
		MDB_val v, kk;
		if ((rc = dl_cursor_current(mc, &kk, &v)))
			return rc;
		int c = mc->dbx->dcmp(&want, &v);
		if (c == 0 || (c < 0 && op == MDB_GET_BOTH_RANGE)) {
			*data = v;
			return 0;
		}
		return MDB_NOTFOUND;
	}
	case MDB_GET_MULTIPLE:
		if (!data || !(mc->flags & C_INIT))
			return EINVAL;
		/* LMDB forgets the "just deleted" state even when refusing: a
		 * following NEXT moves past the current item. */
		mc->flags &= ~C_DEL;
		if (!fixed)
			return MDB_INCOMPATIBLE;
		/* LMDB quirk: nothing is returned when the duplicate position
		 * sits at its end (placed there by a "last" move or by running
		 * off the end); the main cursor's own state does not matter. */
		if ((mc->flags & C_EOF) || !xc->active || (xc->mx.flags & C_ATEND))
			return 0;
		return dl_dup_page(xc, data);
	case MDB_PREV_MULTIPLE:
		if (!data)
			return EINVAL;
		if (!fixed)
			return MDB_INCOMPATIBLE;
		if (!(mc->flags & C_INIT)) {
			if ((rc = dl_cursor_first(mc, key, NULL, 1)))
				return rc;
			if ((rc = dl_dup_enter(mc, xc, NULL, 1)))
				return rc;
		}
		if (!xc->active || xc->subpage)
			return MDB_NOTFOUND;
		if ((rc = dl_cursor_prev_leaf(&xc->mx)))
			return rc;
		return dl_dup_page(xc, data);	/* key is not set */
	default:
		return EINVAL;
	}
}

int dl_dup_count(MDB_cursor *mc, mdb_size_t *countp)
{
	dl_xcursor *xc = mc->xcursor;
	if (!(mc->flags & C_INIT))
		return EINVAL;
	if ((mc->flags & C_EOF) || mc->top < 0)
		return MDB_NOTFOUND;
	if (mc->flags & C_RESEEK) {
		int rc = dl_cursor_reseek(mc);
		if (rc)
			return rc;
	}
	/* Past the last key (e.g. the last key was just deleted). */
	if (mc->top < 0 || mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
		return MDB_NOTFOUND;
	/* Counting also ends LMDB's "after LAST" state. */
	mc->flags &= ~C_ATEND;
	if (!xc || !xc->active) {
		*countp = 1;
		return 0;
	}
	*countp = xc->db.md_entries;
	return 0;
}

/*
 * First item of a F_DUPDATA node, for mdb_get.  Reads the sub-page with
 * byte copies (it may be misaligned) so the result points into the map.
 */
int dl_dup_first_item(MDB_cursor *mc, MDB_node *node, MDB_val *data)
{
	MDB_env *env = mc->txn->env;
	unsigned char *d = dl_node_dataptr(env, node);
	size_t sz = NODEDSZ(node);
	if (node->mn_flags & F_SUBDATA) {
		dl_xcursor xc;
		int rc;
		memset(&xc, 0, sizeof(xc));
		if ((rc = dl_xinit(mc, &xc)))
			return rc;
		if ((rc = dl_xfirst(&xc, 0)))
			return rc;
		return dl_xcurrent(&xc, data);
	}
	MDB_page hdr;
	if (sz < PAGEHDRSZ + 2)
		return MDB_CORRUPTED;
	memcpy(&hdr, d, PAGEHDRSZ);
	if (MP_LOWER(&hdr) <= PAGEHDRSZ || !dl_subpage_flags_ok(hdr.mp_flags) ||
	    !dl_bounds_ok(&hdr, sz, (hdr.mp_flags & P_LEAF2) ? hdr.mp_pad : 0))
		return MDB_CORRUPTED;
	if (hdr.mp_flags & P_LEAF2) {
		if (PAGEHDRSZ + (size_t)hdr.mp_pad > sz)
			return MDB_CORRUPTED;
		data->mv_size = hdr.mp_pad;
		data->mv_data = d + PAGEHDRSZ;
		return 0;
	}
	uint16_t off, ks;
	memcpy(&off, d + PAGEHDRSZ, 2);
	if (off < MP_LOWER(&hdr) || (size_t)off + NODESZ > sz)
		return MDB_CORRUPTED;
	memcpy(&ks, d + off + 6, 2);
	if ((size_t)off + NODESZ + ks > sz)
		return MDB_CORRUPTED;
	data->mv_size = ks;
	data->mv_data = d + off + NODESZ;
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Writing duplicates                                                        */
/* ------------------------------------------------------------------------- */

/* Pages a sub-DB record accounts for. */
static inline pgno_t dl_db_pages(const MDB_db *db)
{
	return db->md_branch_pages + db->md_leaf_pages + db->md_overflow_pages;
}

/*
 * Data version 2 counts a DUPSORT DB's sub-database pages in its own record
 * (dlmdb-extensions N.7); version 1 counts only the outer tree.
 */
static void dl_dup_pages_delta(MDB_cursor *mc, const MDB_db *before, const MDB_db *after)
{
	if (mc->txn->env->version < DL_VERSION_DLMDB)
		return;
	mc->db->md_branch_pages += after->md_branch_pages - before->md_branch_pages;
	mc->db->md_leaf_pages += after->md_leaf_pages - before->md_leaf_pages;
	mc->db->md_overflow_pages += after->md_overflow_pages - before->md_overflow_pages;
}

/* Size of an ordinary duplicate node (no data part). */
static inline size_t dl_dnode_size(MDB_env *env, size_t len)
{
	return EVEN(NODESZ + len + (len & env->pad));
}

static void dl_dnode_write(MDB_env *env, unsigned char *dst, const MDB_val *item)
{
	MDB_node *n = (MDB_node *)dst;
	size_t off = NODESZ + item->mv_size;
	n->mn_lo = n->mn_hi = 0;
	n->mn_flags = 0;
	n->mn_ksize = (uint16_t)item->mv_size;
	if (item->mv_size)
		memcpy(dst + NODESZ, item->mv_data, item->mv_size);
	if (item->mv_size & env->pad)
		dst[off++] = 0;
	if (off & 1)
		dst[off] = 0;
}

/* Bytes a sub-page holding items needs (kept even, as LMDB does). */
static size_t dl_subpage_size(MDB_env *env, const MDB_val *items, unsigned n, unsigned fixed,
	int pfx)
{
	if (fixed)
		return PAGEHDRSZ + EVEN((size_t)n * fixed);
	if (pfx)
		return dl_pfx_items_size(env, items, n);
	size_t s = PAGEHDRSZ;
	for (unsigned i = 0; i < n; i++)
		s += sizeof(indx_t) + dl_dnode_size(env, items[i].mv_size);
	return s;
}

/* Lay out a sub-page (format doc §8.2; P_DIRTY must be set) in buf. */
static void dl_subpage_build(MDB_env *env, unsigned char *buf, size_t sz,
	const MDB_val *items, unsigned n, unsigned fixed, pgno_t pgno, int pfx)
{
	MDB_page *sp = (MDB_page *)buf;
	memset(buf, 0, sz);
	sp->mp_pgno = pgno;
	sp->mp_flags = P_LEAF | P_DIRTY | P_SUBP | (fixed ? P_LEAF2 : 0);
	sp->mp_pad = (uint16_t)fixed;
	if (pfx && !fixed) {
		/* Compressed values; mp_pad = longest decoded value. */
		dl_pfx_items_write(env, sp, sz, items, n);
		return;
	}
	MP_LOWER(sp) = (indx_t)(PAGEHDRSZ + 2 * n);
	if (fixed) {
		MP_UPPER(sp) = (indx_t)(sz - (size_t)n * (fixed - 2));
		for (unsigned i = 0; i < n; i++)
			memcpy(buf + PAGEHDRSZ + (size_t)i * fixed, items[i].mv_data, fixed);
		return;
	}
	size_t off = sz;
	for (unsigned i = 0; i < n; i++) {
		off -= dl_dnode_size(env, items[i].mv_size);
		sp->mp_ptrs[i] = (indx_t)off;
		dl_dnode_write(env, buf + off, &items[i]);
	}
	MP_UPPER(sp) = (indx_t)off;
}

/* Gather the items of the current sub-page, with val inserted at ins
 * (ins = ~0u: none) and the item at skip left out (skip = ~0u: none). */
static int dl_subpage_items(dl_xcursor *xc, MDB_val **ret, unsigned *nret,
	const MDB_val *val, unsigned ins, unsigned skip)
{
	MDB_page *sp = xc->mx.pg[0];
	unsigned n = NUMKEYS(sp), k = 0;
	/*
	 * Scratch layout: the item array (n + 1 entries), room for copies of
	 * the items (dl_items_detach), the new sub-page image, and the decoded
	 * values of a prefix-compressed sub-page.  Decoded values can total far
	 * more than the sub-page (each up to DL_MAXKEY), hence the bound.
	 */
	MDB_txn *txn = xc->mx.txn;
	size_t psz = txn->env->psize;
	size_t dbound = psz + ((size_t)n + 2) * (DL_MAXKEY + 1);
	size_t need = (n + 2) * sizeof(MDB_val) + 2 * dbound + psz;
	MDB_val *items = dl_txn_scratch(txn, need);
	if (!items)
		return ENOMEM;
	txn->scratch_img = (size_t)((unsigned char *)(items + n + 2) - txn->scratch) + dbound;
	unsigned char *dec = txn->scratch + txn->scratch_img + psz;
	size_t doff = 0;
	for (unsigned i = 0; i <= n; i++) {
		if (i == ins)
			items[k++] = *val;
		if (i == n)
			break;
		if (i == skip)
			continue;
		if (IS_LEAF2(sp)) {
			items[k].mv_size = sp->mp_pad;
			items[k].mv_data = (char *)sp + PAGEHDRSZ + (size_t)i * sp->mp_pad;
		} else if ((xc->mx.flags & C_PREFIX) && i > 0) {
			MDB_val v;
			int rc = dl_prefix_decode(sp, NODEPTR(sp, i), dec + doff, &v);
			if (rc)
				return rc;
			items[k] = v;
			if (v.mv_data == dec + doff)
				doff += v.mv_size;
		} else {
			MDB_node *nd = NODEPTR(sp, i);
			items[k].mv_size = nd->mn_ksize;
			items[k].mv_data = NODEKEY(sp, nd);
		}
		k++;
	}
	*ret = items;
	*nret = k;
	return 0;
}

/*
 * Copy the items' bytes into the txn scratch area (after the item array),
 * since the node they live in is about to be rewritten.
 */
static int dl_items_detach(MDB_txn *txn, MDB_val *items, unsigned n)
{
	unsigned char *cp = (unsigned char *)(items + n);
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		if (items[i].mv_size)
			memmove(cp + off, items[i].mv_data, items[i].mv_size);
		items[i].mv_data = cp + off;
		off += items[i].mv_size;
	}
	(void)txn;
	return 0;
}

/* The sub-DB record a key gets when its set outgrows a sub-page. */
static void dl_subdb_record(MDB_cursor *mc, MDB_db *rec, unsigned fixed)
{
	unsigned f = mc->db->md_flags;
	memset(rec, 0, sizeof(*rec));
	rec->md_pad = fixed;
	if (fixed)
		rec->md_flags = MDB_DUPFIXED | ((f & MDB_INTEGERDUP) ? MDB_INTEGERKEY : 0);
	rec->md_flags |= (uint16_t)(f & (MDB_COUNTED | MDB_PREFIX_COMPRESSION));
	rec->md_root = P_INVALID;
}

/*
 * Store items (sorted) as key's duplicate set: an inline sub-page when the
 * node fits, else a new sub-database.  mc is on key's node, path touched.
 */
static int dl_dup_store(MDB_cursor *mc, const MDB_val *key, MDB_val *items, unsigned n)
{
	MDB_env *env = mc->txn->env;
	unsigned fixed = (mc->db->md_flags & MDB_DUPFIXED) ? (unsigned)items[0].mv_size : 0;
	size_t kpart = NODESZ + key->mv_size + (key->mv_size & env->pad);
	int pfx = (mc->flags & C_PREFIX) != 0;
	size_t sz = dl_subpage_size(env, items, n, fixed, pfx);
	int rc;

	/* Fixed-size sets get room for a few more items (as LMDB does), so
	 * most later puts insert in place instead of rewriting the node. */
	if (fixed && kpart + sz + EVEN(4 * fixed) <= env->nodemax)
		sz += EVEN(4 * fixed);
	if (kpart + sz <= env->nodemax) {
		/* Build the image after the items in the scratch area when they
		 * live there, else in a buffer of its own. */
		unsigned char *buf, *own = NULL;
		MDB_txn *txn = mc->txn;
		if (txn->scratch && (unsigned char *)items >= txn->scratch &&
		    (unsigned char *)items < txn->scratch + txn->scratchsz) {
			size_t off = txn->scratch_img;	/* set by dl_subpage_items */
			if (off + sz > txn->scratchsz || sz > env->psize)
				return MDB_PROBLEM;
			buf = txn->scratch + off;
		} else {
			if (!(own = malloc(sz)))
				return ENOMEM;
			buf = own;
		}
		dl_subpage_build(env, buf, sz, items, n, fixed, mc->pg[mc->top]->mp_pgno, pfx);
		MDB_val d = { sz, buf };
		rc = dl_node_replace(mc, key, &d, DL_PUT_DUPDATA);
		free(own);
		return rc;
	}
	/* A sub-database whose root leaf holds every item (they always fit:
	 * the set was at most half a page before this item). */
	MDB_page *lp;
	MDB_db rec, zero;
	if ((rc = dl_page_alloc(mc, 1, &lp)))
		return rc;
	lp->mp_flags = P_LEAF | P_DIRTY | (fixed ? P_LEAF2 : 0);
	lp->mp_pad = (uint16_t)fixed;
	MP_LOWER(lp) = PAGEHDRSZ;
	MP_UPPER(lp) = (indx_t)env->psize;
	size_t used = 0;
	unsigned raw = n;	/* items still to lay out uncompressed */
	if (pfx && !fixed) {
		if (dl_pfx_items_size(env, items, n) > env->psize)
			return MDB_PAGE_FULL;
		if ((rc = dl_pfx_items_write(env, lp, env->psize, items, n)))
			return rc;
		raw = 0;
	}
	for (unsigned i = 0; i < raw; i++) {
		if (fixed) {
			if (used + fixed > env->psize - PAGEHDRSZ)
				return MDB_PAGE_FULL;
			memcpy((char *)lp + PAGEHDRSZ + (size_t)i * fixed, items[i].mv_data, fixed);
			MP_LOWER(lp) = (indx_t)(MP_LOWER(lp) + 2);
			MP_UPPER(lp) = (indx_t)(MP_UPPER(lp) - (fixed - 2));
			used += fixed;
		} else {
			size_t ns = dl_dnode_size(env, items[i].mv_size);
			if (used + ns + 2 > env->psize - PAGEHDRSZ)
				return MDB_PAGE_FULL;
			MP_UPPER(lp) = (indx_t)(MP_UPPER(lp) - ns);
			lp->mp_ptrs[i] = MP_UPPER(lp);
			MP_LOWER(lp) = (indx_t)(MP_LOWER(lp) + 2);
			dl_dnode_write(env, (unsigned char *)lp + MP_UPPER(lp), &items[i]);
			used += ns + 2;
		}
	}
	dl_subdb_record(mc, &rec, fixed);
	rec.md_depth = 1;
	rec.md_leaf_pages = 1;
	rec.md_entries = n;
	rec.md_root = lp->mp_pgno;
	memset(&zero, 0, sizeof(zero));
	dl_dup_pages_delta(mc, &zero, &rec);
	MDB_val d = { sizeof(rec), &rec };
	return dl_node_replace(mc, key, &d, DL_PUT_DUPDATA | DL_PUT_SUBDATA);
}

/*
 * Add item at index ins of the key's inline sub-page without rebuilding it:
 * the key's node grows in place on its (touched) leaf page by the item's
 * node and pointer.  Only for compact (no free space), variable-size
 * sub-pages; on a prefix-compressed sub-page only at ins >= 1, where the
 * trunk stays and only the new value is encoded (mp_pad kept exact); a new
 * smallest value re-encodes the sub-page (the rebuild path).  The new node
 * goes right below the node of item ins - 1 (or at the sub-page end),
 * items at lower addresses move down, so a sub-page laid out by
 * dl_subpage_build comes out exactly as a rebuild would lay it out; any other compact layout stays a valid one.  Returns 1
 * (nothing changed) when the leaf page has no room or the node would pass
 * nodemax: the caller then takes the rebuild path.
 *
 * Leaf page, before -> after (addresses grow to the right; B = sub-page):
 *   [upper .. node hdr, key, B hdr, B ptrs[0..ins)] moves down by nsz + 2
 *   [B ptrs[ins..n), B nodes below address x]       moves down by nsz
 *   new pointer fills the 2-byte gap, new node goes at x - nsz.
 */
static int dl_subpage_grow(MDB_cursor *mc, dl_xcursor *xc, const MDB_val *item,
	unsigned ins)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top];
	MDB_node *node = NODEPTR(mp, idx);
	MDB_page *sp = xc->mx.pg[0];
	int pfx = (mc->flags & C_PREFIX) != 0;
	size_t sh = 0, nsz;
	if (pfx) {
		if (ins == 0 || NUMKEYS(sp) == 0)
			return 1;
		sh = dl_pfx_shared(sp, item);
		nsz = dl_pfx_node_size(env, item->mv_size, sh, 0, 0);
	} else {
		nsz = dl_dnode_size(env, item->mv_size);
	}
	size_t delta = nsz + sizeof(indx_t);
	size_t kpart = NODESZ + node->mn_ksize + (node->mn_ksize & env->pad);
	size_t ssz = NODEDSZ(node);
	unsigned n = NUMKEYS(sp), nkeys = NUMKEYS(mp);
	if (SIZELEFT(mp) < delta || kpart + ssz + delta > env->nodemax)
		return 1;
	unsigned char *base = (unsigned char *)mp;
	size_t off = mp->mp_ptrs[idx];
	size_t spo = off + kpart;		/* sub-page offset in the leaf */
	size_t x = ins ? sp->mp_ptrs[ins - 1] : ssz;	/* new node ends here */
	size_t split = spo + PAGEHDRSZ + 2 * (size_t)ins;
	size_t up = MP_UPPER(mp);
	if ((unsigned char *)sp != base + spo || x > ssz || x < MP_UPPER(sp))
		return MDB_PROBLEM;
	memmove(base + up - delta, base + up, split - up);
	memmove(base + split - nsz, base + split, spo + x - split);
	MDB_page *np = (MDB_page *)(base + spo - delta);
	for (unsigned j = 0; j <= n; j++) {
		if (j == ins)
			continue;
		size_t v = np->mp_ptrs[j];
		np->mp_ptrs[j] = (indx_t)(v + (v < x ? 2 : delta));
	}
	np->mp_ptrs[ins] = (indx_t)(x + 2);
	if (pfx)
		dl_pfx_node_write(env, base + spo + x - nsz, item, sh, 0, 0, 0, NULL, 0);
	else
		dl_dnode_write(env, base + spo + x - nsz, item);
	np->mp_pgno = mp->mp_pgno;
	np->mp_flags = P_LEAF | P_DIRTY | P_SUBP;
	MP_LOWER(np) = (indx_t)(MP_LOWER(np) + 2);
	MP_UPPER(np) = (indx_t)(MP_UPPER(np) + 2);
	if (pfx)
		dl_pfx_pad_add(np, item->mv_size);	/* the trunk's page: still exact */
	else
		np->mp_pad = 0;
	/* The leaf: nodes at or below the key's node moved down by delta. */
	for (unsigned j = 0; j < nkeys; j++)
		if (mp->mp_ptrs[j] <= off)
			mp->mp_ptrs[j] = (indx_t)(mp->mp_ptrs[j] - delta);
	MP_UPPER(mp) = (indx_t)(up - delta);
	node_set_dsize(NODEPTR(mp, idx), ssz + delta);
	return 0;
}

/*
 * Drop the free space of the key's inline sub-page (between its pointer
 * array and its nodes) in place: the sub-page's header and pointers move
 * up to meet its nodes, the key's node shrinks by as much, and the leaf's
 * nodes at lower addresses move up with it, so the leaf stays compact.
 * The sub-page's nodes do not move.  Non-LEAF2 sub-pages on a touched leaf
 * only; the sub-page moved, so xc must be set up again afterwards.  An odd
 * free size keeps one byte (nodes stay at even offsets).
 *
 * Leaf page, before -> after (addresses grow to the right; B = sub-page):
 *   [upper .. node hdr, key, B hdr, B ptrs]  moves up by the free size
 *   [B free space]                            is gone
 *   [B nodes]                                 stay
 */
static int dl_subpage_compact(MDB_cursor *mc, dl_xcursor *xc)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top], nkeys = NUMKEYS(mp);
	MDB_node *node = NODEPTR(mp, idx);
	MDB_page *sp = xc->mx.pg[0];
	size_t kpart = NODESZ + node->mn_ksize + (node->mn_ksize & env->pad);
	size_t ssz = NODEDSZ(node), off = mp->mp_ptrs[idx], spo = off + kpart;
	size_t lo = MP_LOWER(sp), hi = MP_UPPER(sp), up = MP_UPPER(mp);
	unsigned char *base = (unsigned char *)mp;
	unsigned n = NUMKEYS(sp);
	if ((unsigned char *)sp != base + spo || IS_LEAF2(sp) || lo > hi || hi > ssz)
		return MDB_PROBLEM;
	size_t gap = (hi - lo) & ~(size_t)1;
	if (!gap)
		return 0;
	for (unsigned j = 0; j < n; j++)
		if (sp->mp_ptrs[j] < hi)
			return MDB_PROBLEM;
	memmove(base + up + gap, base + up, spo + lo - up);
	MDB_page *np = (MDB_page *)(base + spo + gap);
	for (unsigned j = 0; j < n; j++)
		np->mp_ptrs[j] = (indx_t)(np->mp_ptrs[j] - gap);
	MP_UPPER(np) = (indx_t)(hi - gap);
	for (unsigned j = 0; j < nkeys; j++)
		if (mp->mp_ptrs[j] <= off)
			mp->mp_ptrs[j] = (indx_t)(mp->mp_ptrs[j] + gap);
	MP_UPPER(mp) = (indx_t)(up + gap);
	node_set_dsize(NODEPTR(mp, idx), ssz - gap);
	return 0;
}

/*
 * Remove item idx of an uncompressed, variable-size sub-page of sz bytes:
 * its node goes, the nodes below it move up, the other items keep their
 * order, and the space becomes free space (dl_subpage_compact gives it
 * back to the leaf).  A sub-page laid out by dl_subpage_build comes out as
 * a rebuild without the item would lay it out.
 */
static int dl_subpage_remove(MDB_env *env, MDB_page *sp, size_t sz, unsigned idx)
{
	unsigned n = NUMKEYS(sp);
	if (idx >= n || n < 2)
		return MDB_PROBLEM;
	MDB_node *nd = NODEPTR(sp, idx);
	size_t off = sp->mp_ptrs[idx], up = MP_UPPER(sp);
	size_t nsz = dl_dnode_size(env, nd->mn_ksize);
	if (off < up || off + nsz > sz)
		return MDB_CORRUPTED;
	for (unsigned i = 0, j = 0; i < n; i++) {
		if (i == idx)
			continue;
		size_t p = sp->mp_ptrs[i];
		sp->mp_ptrs[j++] = (indx_t)(p < off ? p + nsz : p);
	}
	memmove((char *)sp + up + nsz, (char *)sp + up, off - up);
	MP_LOWER(sp) = (indx_t)(MP_LOWER(sp) - sizeof(indx_t));
	MP_UPPER(sp) = (indx_t)(up + nsz);
	return 0;
}

/* Write the sub-cursor's record back into the key's node (page is dirty). */
static void dl_subdb_writeback(MDB_cursor *mc, dl_xcursor *xc)
{
	MDB_page *mp = mc->pg[mc->top];
	MDB_node *n = NODEPTR(mp, mc->ki[mc->top]);
	memcpy(dl_node_dataptr(mc->txn->env, n), &xc->db, sizeof(MDB_db));
}

/* Put mc back on key/item after a change (item NULL: first item). */
static int dl_dup_reposition(MDB_cursor *mc, dl_xcursor *xc, const MDB_val *key,
	const MDB_val *item)
{
	int rc, exact;
	mc->flags &= ~(C_EOF | C_DEL | C_RESEEK | C_ATEND);
	if ((rc = dl_search(mc, key, DL_PS_KEY)))
		return rc;
	if (!dl_leaf_search(mc, key, &exact) || !exact)
		return MDB_PROBLEM;
	mc->flags |= C_INIT;
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (!xc->active)
		return 0;
	if (!item)
		return dl_xfirst(xc, 0);
	return dl_xset(xc, item, 1);
}

static int dl_key_copy(const MDB_val *key, unsigned char *buf, MDB_val *out)
{
	if (key->mv_size > DL_MAXKEY + 1)
		return MDB_BAD_VALSIZE;
	memcpy(buf, key->mv_data, key->mv_size);
	out->mv_size = key->mv_size;
	out->mv_data = buf;
	return 0;
}

/*
 * Put into a DUPSORT DB.  flags: MDB_NOOVERWRITE, MDB_NODUPDATA, MDB_APPEND,
 * MDB_APPENDDUP.  Adding an existing pair is a successful no-op unless
 * NODUPDATA/APPENDDUP ask for MDB_KEYEXIST.
 */
int dl_dup_put(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_txn *txn = mc->txn;
	dl_xcursor *xc = dl_xc_get(mc);
	unsigned fixed = (mc->db->md_flags & MDB_DUPFIXED) != 0;
	unsigned char kb[DL_MAXKEY + 2], ib[DL_MAXKEY + 2];
	MDB_val k, item;
	int rc, exact;

	if (!xc)
		return ENOMEM;
	if (data->mv_size > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	if ((rc = dl_key_copy(key, kb, &k)) || (rc = dl_key_copy(data, ib, &item)))
		return rc;
	if ((txn->dbflags[mc->dbi] & DB_STALE) && (rc = dl_db_load(txn, mc->dbi)))
		return rc;
	int inside = dl_key_inside_leaf(mc, &k);

	/* New key: a plain node holds its single item. */
	exact = 0;
	if (mc->db->md_root != P_INVALID) {
		if (flags & MDB_APPEND) {
			if ((rc = dl_search_edge(mc, 1)))
				return rc;
			MDB_val last;
			if ((rc = dl_cursor_current(mc, &last, NULL)))
				return rc;
			int c = mc->dbx->cmp(&k, &last);
			/* APPEND wants a strictly greater key even on DUPSORT,
			 * with or without APPENDDUP (lmdb-api.md §6.3, as LMDB). */
			mc->flags |= C_ATEND;
			if (c <= 0)
				return MDB_KEYEXIST;
		} else {
			if ((rc = dl_search(mc, &k, DL_PS_KEY)))
				return rc;
			MDB_node *nd = dl_leaf_search(mc, &k, &exact);
			if (!nd && mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top]))
				return MDB_CORRUPTED;
		}
	}
	if (!exact) {
		if ((rc = dl_cursor_put0(mc, &k, &item, flags & MDB_APPEND)))
			return rc;
		xc->active = 0;
		/* A new key: LMDB's lookup left its end marker as it was
		 * unless the cursor sat inside the key's leaf already; an
		 * APPEND goes through its "last item" move, which sets it. */
		if (inside)
			mc->flags &= ~C_ATEND;
		if (flags & MDB_APPEND)
			mc->flags |= C_ATEND;
		return 0;
	}
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (flags & MDB_NOOVERWRITE) {
		mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_ATEND)) | C_INIT;
		if (xc->active) {
			if ((rc = dl_xfirst(xc, 0)))
				return rc;
			if ((rc = dl_xcurrent(xc, data)))
				return rc;
		} else {
			MDB_val kk;
			if ((rc = dl_cursor_current(mc, &kk, data)))
				return rc;
		}
		return MDB_KEYEXIST;
	}
	MDB_val *items = NULL;
	unsigned n = 0;
	if (!xc->active) {
		/* Second item: the plain value becomes a sub-page. */
		MDB_val old, kk;
		if ((rc = dl_cursor_current(mc, &kk, &old)))
			return rc;
		if (fixed && old.mv_size != item.mv_size)
			return MDB_BAD_VALSIZE;
		int c = mc->dbx->dcmp(&item, &old);
		if (c == 0) {
			mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_ATEND)) | C_INIT;
			return (flags & (MDB_NODUPDATA | MDB_APPENDDUP)) ? MDB_KEYEXIST : 0;
		}
		if (c < 0 && (flags & MDB_APPENDDUP))
			return MDB_KEYEXIST;
		unsigned char *ob = malloc(old.mv_size + 1);
		if (!ob)
			return ENOMEM;
		memcpy(ob, old.mv_data, old.mv_size);
		MDB_val pair[2];
		pair[c < 0 ? 1 : 0].mv_size = old.mv_size;
		pair[c < 0 ? 1 : 0].mv_data = ob;
		pair[c < 0 ? 0 : 1] = item;
		dl_cursors_save(mc);
		if (!(rc = dl_cursor_touch(mc)))
			rc = dl_dup_store(mc, &k, pair, 2);
		free(ob);
		if (rc)
			return rc;
	} else {
		if (fixed && item.mv_size != xc->db.md_pad && !(xc->subpage &&
		    !IS_LEAF2(xc->mx.pg[0])))
			return MDB_BAD_VALSIZE;
		rc = dl_xset(xc, &item, 1);
		if (rc && rc != MDB_NOTFOUND)
			return rc;
		if (rc == 0) {
			MDB_val cur;
			if ((rc = dl_xcurrent(xc, &cur)))
				return rc;
			int c = mc->dbx->dcmp(&item, &cur);
			if (c == 0) {
				mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_ATEND)) | C_INIT;
				return (flags & (MDB_NODUPDATA | MDB_APPENDDUP)) ? MDB_KEYEXIST : 0;
			}
			if (flags & MDB_APPENDDUP)
				return MDB_KEYEXIST;	/* not after the last item */
		}
		int atend = (rc == MDB_NOTFOUND);
		dl_cursors_save(mc);
		if ((rc = dl_cursor_touch(mc)))
			return rc;
		if (xc->subpage) {
			/* Rebuild the sub-page with the item in place. */
			if ((rc = dl_xinit_trusted(mc, xc)))	/* the page moved when touched */
				return rc;
			unsigned ins = atend ? NUMKEYS(xc->mx.pg[0]) : 0;
			if (!atend) {
				if ((rc = dl_xset(xc, &item, 1)))
					return rc;
				ins = xc->mx.ki[0];
			}
			MDB_page *sp = xc->mx.pg[0];
			if (!fixed && !IS_LEAF2(sp) && (mc->flags & C_PREFIX) && ins > 0 &&
			    dl_pfx_sub_insert(txn->env, sp, ins, &item) == 0) {
				/* Free space a removed value left: used in place. */
				xc->mx.ki[0] = (indx_t)ins;
				xc->mx.flags = (xc->mx.flags & ~C_ATEND) | C_INIT;
				xc->db.md_entries++;
				xc->xmoved = 0;
				mc->db->md_entries++;
				txn->dbflags[mc->dbi] |= DB_DIRTY;
				mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_RESEEK | C_ATEND)) | C_INIT;
				return 0;
			}
			if (!fixed && !IS_LEAF2(sp) && (mc->flags & C_PREFIX) && ins > 0 &&
			    SIZELEFT(sp) > 1) {
				/* Free space, but too little: give it back to the
				 * leaf, then grow by what the value needs. */
				if ((rc = dl_subpage_compact(mc, xc)) ||
				    (rc = dl_xinit_trusted(mc, xc)))
					return rc;
				sp = xc->mx.pg[0];
			}
			if (!fixed && !IS_LEAF2(sp) && !SIZELEFT(sp)) {
				/* Room on the leaf page: grow the node in place. */
				rc = dl_subpage_grow(mc, xc, &item, ins);
				if (rc == 0) {
					if ((rc = dl_xinit_trusted(mc, xc)))
						return rc;
					xc->mx.ki[0] = (indx_t)ins;
					xc->mx.flags = (xc->mx.flags & ~C_ATEND) | C_INIT;
					xc->xmoved = 0;
					mc->db->md_entries++;
					txn->dbflags[mc->dbi] |= DB_DIRTY;
					mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_RESEEK | C_ATEND)) | C_INIT;
					return 0;
				}
				if (rc != 1)
					return rc;
			}
			if (IS_LEAF2(sp) && SIZELEFT(sp) >= sp->mp_pad &&
			    item.mv_size == sp->mp_pad) {
				/* Room left in a fixed-size sub-page: insert in place. */
				unsigned kk = sp->mp_pad, cnt = NUMKEYS(sp);
				unsigned char *base = (unsigned char *)sp + PAGEHDRSZ;
				memmove(base + (size_t)(ins + 1) * kk, base + (size_t)ins * kk,
				    (size_t)(cnt - ins) * kk);
				memcpy(base + (size_t)ins * kk, item.mv_data, kk);
				MP_LOWER(sp) = (indx_t)(MP_LOWER(sp) + 2);
				MP_UPPER(sp) = (indx_t)(MP_UPPER(sp) - (kk - 2));
				xc->db.md_entries++;
				xc->mx.ki[0] = (indx_t)ins;
				xc->mx.flags = (xc->mx.flags & ~C_ATEND) | C_INIT;
				mc->db->md_entries++;
				txn->dbflags[mc->dbi] |= DB_DIRTY;
				mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_RESEEK | C_ATEND)) | C_INIT;
				return 0;
			}
			if ((rc = dl_subpage_items(xc, &items, &n, &item, ins, ~0u)))
				return rc;
			if ((rc = dl_items_detach(mc->txn, items, n)))
				return rc;
			if ((rc = dl_dup_store(mc, &k, items, n)))
				return rc;
		} else {
			MDB_db before = xc->db;
			MDB_val empty = { 0, NULL };
			int ex;
			/* The insertion point is in the leaf the search picks (not
			 * the next leaf an "item >=" lookup may have moved to). */
			xc->mx.flags &= ~(C_EOF | C_DEL | C_ATEND);
			if (xc->xmoved) {
				if ((rc = dl_search(&xc->mx, &item, DL_PS_KEY)))
					return rc;
				dl_leaf_search(&xc->mx, &item, &ex);
			}
			if (flags & MDB_APPENDDUP)
				xc->mx.flags |= C_APPENDING;
			rc = dl_cursor_insert(&xc->mx, &item, &empty);
			xc->mx.flags &= ~C_APPENDING;
			if (rc)
				return rc;
			xc->mx.flags |= C_INIT;
			dl_dup_pages_delta(mc, &before, &xc->db);
			dl_subdb_writeback(mc, xc);
			mc->db->md_entries++;
			txn->dbflags[mc->dbi] |= DB_DIRTY;
			mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_RESEEK | C_ATEND)) | C_INIT;
			return 0;	/* both cursors already sit on the new item */
		}
	}
	mc->db->md_entries++;
	txn->dbflags[mc->dbi] |= DB_DIRTY;
	/* The node was rewritten; mc is on it (dl_node_replace).  Find the item. */
	mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_RESEEK | C_ATEND)) | C_INIT;
	if ((rc = dl_xinit_trusted(mc, xc)))
		return rc;
	return xc->active ? dl_xset(xc, &item, 0) : 0;
}

/* mdb_put / mdb_del on a DUPSORT DB: a throwaway cursor on the stack. */
int dl_dup_put_tmp(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_cursor mc;
	dl_xcursor xc;
	xc.active = 0;
	xc.list = NULL;
	xc.listcap = 0;
	xc.lbuf = NULL;
	xc.lbufcap = 0;
	dl_cursor_init(&mc, txn, dbi);
	mc.xcursor = &xc;
	return dl_dup_put(&mc, key, data, flags);
}

/*
 * Fast path of a cursor delete inside a sub-database that keeps other
 * items: the sub-cursor is already on the item, and changing the
 * sub-database's pages leaves the main path alone, so no lookup is redone.
 */
static int dl_subdb_del_here(MDB_cursor *mc, dl_xcursor *xc)
{
	MDB_txn *txn = mc->txn;
	MDB_val kk;
	int rc;
	if (!mc->db->md_entries)
		return MDB_CORRUPTED;	/* the record does not count this item */
	dl_cursors_save(mc);
	if ((rc = dl_cursor_touch(mc)))
		return rc;
	MDB_db before = xc->db;
	if ((rc = dl_cursor_del0(&xc->mx)))
		return rc;
	dl_dup_pages_delta(mc, &before, &xc->db);
	dl_subdb_writeback(mc, xc);
	mc->db->md_entries--;
	txn->dbflags[mc->dbi] |= DB_DIRTY;
	mc->flags &= ~(C_RESEEK | C_EOF | C_ATEND | C_KEYDEL | C_DUPEND | C_DUPDEL | C_DELGONE);
	MDB_cursor *mx = &xc->mx;
	mx->flags &= ~C_DEL;
	if (mx->top >= 0 && mx->ki[mx->top] < NUMKEYS(mx->pg[mx->top])) {
		mc->flags |= C_DEL | C_DUPDEL | C_INIT;	/* on the following duplicate */
		return 0;
	}
	/* That was the key's last duplicate: like LMDB, stay on the key with
	 * the duplicate position past its end (C_DUPEND; see dl_dup_get). */
	(void)kk;
	if ((rc = dl_xfirst(xc, 1)))
		return rc;
	mc->flags = (mc->flags & ~C_DELGONE) | C_DEL | C_DUPEND | C_INIT;
	return 0;
}

/*
 * Delete from a DUPSORT DB at mc's key: one item (data), or the whole key
 * (all).  Afterwards mc is on the following item, "just deleted".
 */
int dl_dup_del(MDB_cursor *mc, const MDB_val *data, int all)
{
	MDB_txn *txn = mc->txn;
	dl_xcursor *xc = dl_xc_get(mc);
	unsigned char kb[DL_MAXKEY + 2], ib[DL_MAXKEY + 2];
	MDB_val k, item, kk;
	int rc;

	if (!xc)
		return ENOMEM;
	mc->flags &= ~(C_DUPEND | C_DUPDEL | C_DELGONE);
	if ((rc = dl_cursor_current(mc, &kk, NULL)))
		return rc;
	if ((rc = dl_key_copy(&kk, kb, &k)))
		return rc;
	if (!all && !data && xc->active) {
		/* The cursor's own item: read it before the sub-cursor is reset. */
		if ((rc = dl_xcurrent(xc, &item)) || (rc = dl_key_copy(&item, ib, &item)))
			return rc;
		if (!xc->subpage && xc->db.md_entries > 1 && !(mc->flags & C_DEL) &&
		    (xc->mx.flags & C_INIT))
			return dl_subdb_del_here(mc, xc);
	}
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (!all && data) {
		if ((rc = dl_key_copy(data, ib, &item)))
			return rc;
		if (xc->active) {
			if ((rc = dl_xset(xc, &item, 0)))
				return rc;
		} else {
			MDB_val v;
			if ((rc = dl_cursor_current(mc, &kk, &v)))
				return rc;
			if (mc->dbx->dcmp(&item, &v))
				return MDB_NOTFOUND;
		}
	}
	uint64_t count = !xc->active ? 1 : xc->db.md_entries;
	/* The DB's record counts every duplicate of the key; fewer, or a
	 * sub-database counting none, is a damaged record. */
	if (!count || mc->db->md_entries < count)
		return MDB_CORRUPTED;
	if (all || count == 1) {
		/* The whole key goes, with any sub-database. */
		if (xc->active && !xc->subpage) {
			MDB_db before = xc->db;
			xc->mx.flags &= ~(C_INIT | C_EOF | C_DEL);
			if ((rc = dl_drop_tree(&xc->mx)))
				return rc;
			dl_dup_pages_delta(mc, &before, &xc->db);
			/* The main path must still be reached afresh. */
			if ((rc = dl_search(mc, &k, DL_PS_KEY)))
				return rc;
			int exact;
			if (!dl_leaf_search(mc, &k, &exact) || !exact)
				return MDB_PROBLEM;
		}
		xc->active = 0;
		if ((rc = dl_cursor_del0(mc)))
			return rc;
		mc->flags |= C_KEYDEL;
		mc->db->md_entries -= count - 1;
		if (mc->db->md_root == P_INVALID && mc->db->md_entries)
			return MDB_CORRUPTED;	/* empty tree, entries counted */
		/* Now on the following key (if any): on its first item. */
		if ((mc->flags & C_INIT) && mc->top >= 0 &&
		    mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top])) {
			if ((rc = dl_xinit(mc, xc)))
				return rc;
			if (xc->active && (rc = dl_xfirst(xc, 0)))
				return rc;
		}
		return 0;
	}
	dl_cursors_save(mc);
	if ((rc = dl_cursor_touch(mc)))
		return rc;
	/* The node was checked above (dl_xinit); the touch only copied it. */
	if ((rc = dl_xinit_trusted(mc, xc)) || (rc = dl_xset(xc, &item, 0)))
		return rc;
	int here = 0;	/* edited in place: mc still sits on the key's node */
	if (xc->subpage && (mc->flags & C_PREFIX) && !IS_LEAF2(xc->mx.pg[0]) &&
	    xc->mx.ki[0] > 0) {
		/* Not the trunk: only this value's node goes. */
		MDB_node *on = NODEPTR(mc->pg[mc->top], mc->ki[mc->top]);
		if ((rc = dl_pfx_sub_remove(txn->env, xc->mx.pg[0], NODEDSZ(on), xc->mx.ki[0])))
			return rc;
		here = 1;
	} else if (xc->subpage && !(mc->flags & C_PREFIX) && !IS_LEAF2(xc->mx.pg[0])) {
		/* Uncompressed: the node goes and the sub-page shrinks to fit,
		 * leaving no free space (as LMDB leaves it). */
		MDB_node *on = NODEPTR(mc->pg[mc->top], mc->ki[mc->top]);
		if ((rc = dl_subpage_remove(txn->env, xc->mx.pg[0], NODEDSZ(on), xc->mx.ki[0])) ||
		    (rc = dl_subpage_compact(mc, xc)))
			return rc;
		here = 1;
	} else if (xc->subpage) {
		MDB_val *items;
		unsigned n;
		if ((rc = dl_subpage_items(xc, &items, &n, NULL, ~0u, xc->mx.ki[0])))
			return rc;
		if ((rc = dl_items_detach(txn, items, n)))
			return rc;
		/* A smaller set always fits inline again; never turn a sub-page
		 * back into a plain value (format doc §8). */
		if ((rc = dl_dup_store(mc, &k, items, n)))
			return rc;
	} else {
		MDB_db before = xc->db;
		if ((rc = dl_cursor_del0(&xc->mx)))
			return rc;
		dl_dup_pages_delta(mc, &before, &xc->db);
		dl_subdb_writeback(mc, xc);
	}
	mc->db->md_entries--;
	txn->dbflags[mc->dbi] |= DB_DIRTY;
	mc->flags &= ~C_KEYDEL;
	/* Land on the following item of the key; when none is left after it,
	 * stay on the key past its last duplicate (C_DUPEND), as LMDB does. */
	if (here) {
		/* Same leaf, same node index: no lookup from the root. */
		mc->flags = (mc->flags & ~(C_EOF | C_DEL | C_RESEEK | C_ATEND)) | C_INIT;
		if (!(rc = dl_xinit_trusted(mc, xc)))
			rc = xc->active ? dl_xset(xc, &item, 1) : MDB_PROBLEM;
	} else {
		rc = dl_dup_reposition(mc, xc, &k, &item);
	}
	if (rc == MDB_NOTFOUND) {
		if (!xc->active)
			return MDB_PROBLEM;
		if ((rc = dl_xfirst(xc, 1)))
			return rc;
		mc->flags = (mc->flags & ~C_DELGONE) | C_DEL | C_DUPEND | C_INIT;
		return 0;
	} else if (rc) {
		return rc;
	}
	mc->flags |= C_DEL | C_DUPDEL;
	return 0;
}

/* Remember the duplicate position of a cursor whose tree is about to change. */
void dl_dup_save(MDB_cursor *mc)
{
	dl_xcursor *xc = mc->xcursor;
	MDB_val v;
	mc->duplen = ~0u;
	if (!(mc->db->md_flags & MDB_DUPSORT) || !xc || !xc->active)
		return;
	if (dl_xcurrent(xc, &v) || v.mv_size > DL_MAXKEY + 1)
		return;
	memcpy(mc->dupbuf, v.mv_data, v.mv_size);
	mc->duplen = (unsigned)v.mv_size;
}

/* After the main key was found again: find the saved item (or the next). */
int dl_dup_restore(MDB_cursor *mc)
{
	dl_xcursor *xc = dl_xc_get(mc);
	int rc;
	if (!xc)
		return ENOMEM;
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (!xc->active)
		return 0;
	if (mc->duplen == ~0u)
		return dl_xfirst(xc, 0);
	MDB_val v = { mc->duplen, mc->dupbuf };
	rc = dl_xset(xc, &v, 1);
	if (rc == 0) {
		MDB_val cur;
		if (!dl_xcurrent(xc, &cur) && mc->dbx->dcmp(&v, &cur) != 0)
			mc->flags |= C_DEL;
	}
	return rc;
}

static int dl_multi_cmp(const void *a, const void *b, void *cmp)
{
	return ((MDB_cmp_func *)cmp)((const MDB_val *)a, (const MDB_val *)b);
}

/*
 * MDB_MULTIPLE with MDB_NODUPDATA or MDB_APPENDDUP: find, before anything
 * is written, every item the put would refuse with MDB_KEYEXIST, so the run
 * is stored whole or not at all (stock LMDB stops midway and keeps the items
 * before the refused one; the newest DLMDB checks first, as here).
 * APPENDDUP: items strictly ascending and above the key's last duplicate.
 * NODUPDATA: no item twice in the run, none already stored under the key.
 */
static int dl_multi_check(MDB_cursor *mc, MDB_val *key, const char *items, size_t sz,
	size_t cnt, unsigned f)
{
	MDB_cmp_func *dcmp = mc->dbx->dcmp;
	MDB_cursor *c;
	MDB_val k = *key, d;
	int rc;
	if (!(f & (MDB_NODUPDATA | MDB_APPENDDUP)) || !cnt)
		return 0;
	MDB_val *v = malloc(cnt * sizeof(MDB_val));
	if (!v)
		return ENOMEM;
	for (size_t i = 0; i < cnt; i++) {
		v[i].mv_size = sz;
		v[i].mv_data = (char *)items + i * sz;
	}
	if ((rc = mdb_cursor_open(mc->txn, mc->dbi, &c))) {
		free(v);
		return rc;
	}
	rc = mdb_cursor_get(c, &k, &d, MDB_SET);
	int exists = rc == 0;
	if (rc == MDB_NOTFOUND)
		rc = 0;
	if (!rc && (f & MDB_APPENDDUP)) {
		for (size_t i = 1; i < cnt && !rc; i++)
			if (dcmp(&v[i - 1], &v[i]) >= 0)
				rc = MDB_KEYEXIST;
		if (!rc && exists && !(rc = mdb_cursor_get(c, &k, &d, MDB_LAST_DUP)) &&
		    dcmp(&d, &v[0]) >= 0)
			rc = MDB_KEYEXIST;
	}
	if (!rc && (f & MDB_NODUPDATA)) {
		for (size_t i = 0; i < cnt && exists && !rc; i++) {
			MDB_val kk = *key, dd = v[i];
			rc = mdb_cursor_get(c, &kk, &dd, MDB_GET_BOTH);
			rc = rc == 0 ? MDB_KEYEXIST : rc == MDB_NOTFOUND ? 0 : rc;
		}
		if (!rc) {
			qsort_r(v, cnt, sizeof(MDB_val), dl_multi_cmp, (void *)dcmp);
			for (size_t i = 1; i < cnt && !rc; i++)
				if (dcmp(&v[i - 1], &v[i]) == 0)
					rc = MDB_KEYEXIST;
		}
	}
	mdb_cursor_close(c);
	free(v);
	return rc;
}

/* mdb_cursor_put on a DUPSORT DB: adds MDB_CURRENT and MDB_MULTIPLE. */
int dl_dup_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	int rc;
	if (flags & MDB_RESERVE)
		return EINVAL;
	if (flags & MDB_MULTIPLE) {
		/*
		 * data[0]: item size and first item; data[1].mv_size: count.
		 * All or nothing: refusals (MDB_KEYEXIST) are found before the
		 * first write; any later failure (MDB_MAP_FULL, ...) fails the
		 * txn, so none of the run can be committed.
		 */
		size_t sz = data[0].mv_size, cnt = data[1].mv_size, done = 0;
		unsigned f = flags & (MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND | MDB_APPENDDUP);
		if ((rc = dl_multi_check(mc, key, data[0].mv_data, sz, cnt, f))) {
			data[1].mv_size = 0;
			return rc;
		}
		unsigned atend = 0;
		for (; done < cnt; done++) {
			MDB_val v = { sz, (char *)data[0].mv_data + done * sz };
			mdb_size_t before = mc->db->md_entries;
			rc = dl_dup_put(mc, key, &v, f);
			/* LMDB looks the key up for the first item only: the end
			 * marker that lookup left stays for the whole batch, and
			 * the key-level conditions (NOOVERWRITE: key absent,
			 * APPEND: key above the last) apply to that lookup alone. */
			if (done == 0) {
				atend = mc->flags & C_ATEND;
				if (rc == MDB_KEYEXIST && (f & (MDB_NOOVERWRITE | MDB_APPEND)))
					break;
				f &= ~(unsigned)(MDB_NOOVERWRITE | MDB_APPEND);
			} else {
				mc->flags = (mc->flags & ~C_ATEND) | atend;
			}
			/* An item already stored is skipped, as in LMDB. */
			if (rc == MDB_KEYEXIST && !(f & (MDB_NODUPDATA | MDB_APPENDDUP)))
				rc = 0;
			if (rc)
				break;
			/* LMDB quirk: an item equal to the key's single plain value
			 * (no duplicate set yet) ends the batch, successfully and
			 * without being counted; the rest is not stored. */
			if (mc->db->md_entries == before && !((dl_xcursor *)mc->xcursor)->active)
				break;
		}
		data[1].mv_size = done;
		return rc;
	}
	if (flags & MDB_CURRENT) {
		/* Replace the current item: remove it, then add the new one. */
		if (!(mc->flags & C_INIT) || (mc->flags & C_EOF) || mc->top < 0)
			return EINVAL;
		dl_xcursor *xc = dl_xc_get(mc);
		if (!xc)
			return ENOMEM;
		MDB_val cur, kk;
		if ((rc = dl_cursor_current(mc, &kk, NULL)))
			return rc;
		if (xc->active) {
			if ((rc = dl_xcurrent(xc, &cur)))
				return rc;
			if (mc->dbx->dcmp(&cur, data) == 0)
				return 0;	/* same item: nothing changes */
		} else {
			if ((rc = dl_cursor_current(mc, &kk, &cur)))
				return rc;
		}
		if (!xc->active) {
			if ((rc = dl_dup_del(mc, &cur, 0)))
				return rc;
			mc->flags &= ~C_DEL;
			return dl_dup_put(mc, key, data, 0);
		}
		/* A duplicate set stays one even when it holds a single item
		 * (as in LMDB): add the new item first, then remove the old. */
		unsigned char ob[DL_MAXKEY + 1], kb[DL_MAXKEY + 1];
		MDB_val old = { cur.mv_size, ob }, k2 = { kk.mv_size, kb };
		if (cur.mv_size > DL_MAXKEY || kk.mv_size > DL_MAXKEY)
			return MDB_BAD_VALSIZE;
		memcpy(ob, cur.mv_data, cur.mv_size);
		memcpy(kb, kk.mv_data, kk.mv_size);
		if ((rc = dl_dup_put(mc, &k2, data, 0)))
			return rc;
		if ((rc = dl_cursor_set(mc, &k2, NULL, MDB_SET)))
			return rc;
		if ((rc = dl_dup_del(mc, &old, 0)))
			return rc;
		if ((rc = dl_cursor_set(mc, &k2, NULL, MDB_SET)) || (rc = dl_xinit(mc, xc)))
			return rc;
		mc->flags &= ~(C_DEL | C_ATEND);
		return xc->active ? dl_xset(xc, data, 0) : 0;
	}
	rc = dl_dup_put(mc, key, data,
	    flags & (MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND | MDB_APPENDDUP));
	/* LMDB leaves an appended duplicate "at the end" (GET_MULTIPLE then
	 * returns nothing; NEXT_DUP finds nothing either way). */
	dl_xcursor *axc = mc->xcursor;
	if (!rc && (flags & MDB_APPENDDUP) && axc && axc->active)
		axc->mx.flags |= C_ATEND;
	return rc;
}

/* Room for at least want items in the cursor's list (kept across calls). */
static int dl_list_reserve(dl_xcursor *xc, size_t want)
{
	if (want <= xc->listcap)
		return 0;
	MDB_val *l = realloc(xc->list, want * sizeof(MDB_val));
	if (!l)
		return ENOMEM;
	xc->list = l;
	xc->listcap = want;
	return 0;
}

/*
 * mdb_cursor_list_dup for an inline sub-page, in one linear pass over its
 * nodes (dl_xinit already checked every node lies inside the sub-page).
 * Uncompressed items point straight into the page; items of a
 * prefix-compressed sub-page are decoded into the cursor-owned lbuf, sized
 * once per call by a bound (each decoded item is at most the trunk plus its
 * stored bytes) so nothing is reallocated after warm-up.
 */
static int dl_list_subpage(MDB_cursor *mc, dl_xcursor *xc)
{
	MDB_page *sp = xc->mx.pg[0];
	unsigned n = NUMKEYS(sp), i;
	MDB_val *l = xc->list;
	if (n != xc->db.md_entries)
		return MDB_CORRUPTED;
	if (IS_LEAF2(sp)) {
		size_t w = sp->mp_pad;
		char *p = (char *)sp + PAGEHDRSZ;
		for (i = 0; i < n; i++, p += w) {
			l[i].mv_size = w;
			l[i].mv_data = p;
		}
		return 0;
	}
	if (!(mc->flags & C_PREFIX)) {
		for (i = 0; i < n; i++) {
			MDB_node *nd = NODEPTR(sp, i);
			l[i].mv_size = nd->mn_ksize;
			l[i].mv_data = NODEKEY(sp, nd);
		}
		return 0;
	}
	MDB_node *t = NODEPTR(sp, 0);
	size_t tl = t->mn_ksize, need = 0;
	for (i = 1; i < n; i++)
		need += NODEPTR(sp, i)->mn_ksize;
	need += (size_t)(n - 1) * tl;
	if (need > xc->lbufcap) {
		unsigned char *b = realloc(xc->lbuf, need);
		if (!b)
			return ENOMEM;
		xc->lbuf = b;
		xc->lbufcap = need;
	}
	l[0].mv_size = tl;
	l[0].mv_data = NODEKEY(sp, t);
	unsigned char *out = xc->lbuf;
	for (i = 1; i < n; i++) {
		int rc = dl_prefix_decode(sp, NODEPTR(sp, i), out, &l[i]);
		if (rc)
			return rc;
		if (l[i].mv_data == out)
			out += l[i].mv_size;
	}
	return 0;
}

/*
 * DLMDB: every value of the cursor's current key, in order, as an array the
 * cursor owns (valid until the cursor is used again, closed or renewed, or
 * the txn ends).  Values point into the pages; the cursor does not move.
 */
int mdb_cursor_list_dup(MDB_cursor *mc, const MDB_val **values, mdb_size_t *countp)
{
	int rc;
	if (!mc || !values || !countp)
		return EINVAL;
	if (mc->txn->flags & (TXN_ERROR | TXN_FINISHED))
		return MDB_BAD_TXN;
	/* A fresh cursor on a named DB: its record is read on first use. */
	if ((mc->txn->dbflags[mc->dbi] & DB_STALE) && (rc = dl_db_load(mc->txn, mc->dbi)))
		return rc;
	if (!(mc->db->md_flags & MDB_DUPSORT))
		return MDB_INCOMPATIBLE;
	if ((mc->flags & C_RESEEK) && (rc = dl_cursor_reseek(mc)))
		return rc;
	if (!(mc->flags & C_INIT) || (mc->flags & C_EOF) || mc->top < 0 ||
	    mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
		return MDB_NOTFOUND;
	dl_xcursor *xc = dl_xc_get(mc);
	if (!xc)
		return ENOMEM;
	if (!xc->active)
		return MDB_NOTFOUND;	/* a single value is not listed */
	/* The count comes from the file: for a sub-database it is trusted only
	 * as far as the walk confirms it (the list grows as items are found,
	 * never sized up front from the record); a sub-page holds at most a
	 * page's worth of items. */
	size_t n = xc->db.md_entries;
	if (xc->subpage) {
		if (n > mc->txn->env->psize)
			return MDB_CORRUPTED;
		if ((rc = dl_list_reserve(xc, n)))
			return rc;
		if ((rc = dl_list_subpage(mc, xc)))
			return rc;
		*values = xc->list;
		*countp = n;
		return 0;
	}
	/* Walk a scratch copy of the sub-cursor so the position stays. */
	dl_xcursor tmp = *xc;
	tmp.mx.db = &tmp.db;
	tmp.mx.dbx = &tmp.dbx;
	if ((rc = dl_xfirst(&tmp, 0)))
		return rc;
	size_t i = 0;
	for (;;) {
		if (i >= n)
			return MDB_CORRUPTED;
		if (i >= xc->listcap) {
			size_t want = i < 512 ? 1024 : 2 * i;
			if ((rc = dl_list_reserve(xc, want < n ? want : n)))
				return rc;
		}
		if ((rc = dl_xcurrent(&tmp, &xc->list[i])))
			return rc;
		i++;
		rc = dl_xstep(&tmp, 0);
		if (rc == MDB_NOTFOUND)
			break;
		if (rc)
			return rc;
	}
	if (i != n)
		return MDB_CORRUPTED;
	if ((mc->flags & C_PREFIX) && !(mc->db->md_flags & MDB_DUPFIXED)) {
		/* Decoded values live in per-call scratch: keep copies.  A
		 * DUPFIXED sub-DB's LEAF2 pages are never compressed, so its
		 * list points into those pages, as on any other DB. */
		size_t tot = 0, off = 0;
		for (i = 0; i < n; i++)
			tot += xc->list[i].mv_size;
		if (tot > xc->lbufcap) {
			unsigned char *b = realloc(xc->lbuf, tot);
			if (!b)
				return ENOMEM;
			xc->lbuf = b;
			xc->lbufcap = tot;
		}
		/* Recollect, copying each value as it is decoded. */
		if ((rc = dl_xfirst(&tmp, 0)))
			return rc;
		for (i = 0; i < n; i++) {
			MDB_val v;
			if ((rc = dl_xcurrent(&tmp, &v)))
				return rc;
			if (off + v.mv_size > tot)
				return MDB_CORRUPTED;
			memcpy(xc->lbuf + off, v.mv_data, v.mv_size);
			xc->list[i].mv_data = xc->lbuf + off;
			xc->list[i].mv_size = v.mv_size;
			off += v.mv_size;
			if (i + 1 < n && (rc = dl_xstep(&tmp, 0)))
				return rc;
		}
	}
	*values = xc->list;
	*countp = n;
	return 0;
}

/* Rank support: put the duplicate cursor on the idx-th value of the key. */
int dl_dup_rank(MDB_cursor *mc, uint64_t idx)
{
	dl_xcursor *xc = dl_xc_get(mc);
	int rc;
	if (!xc)
		return ENOMEM;
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (!xc->active)
		return idx ? MDB_CORRUPTED : 0;
	if (xc->subpage) {
		if (idx >= NUMKEYS(xc->mx.pg[0]))
			return MDB_CORRUPTED;
		xc->mx.top = 0;
		xc->mx.ki[0] = (indx_t)idx;
		xc->mx.flags = (xc->mx.flags & ~C_ATEND) | C_INIT;
		return 0;
	}
	uint64_t left;
	if ((rc = dl_rank_descend(&xc->mx, idx, &left)))
		return rc == MDB_NOTFOUND ? MDB_CORRUPTED : rc;
	if (left)
		return MDB_CORRUPTED;	/* items in a sub-DB leaf count 1 each */
	xc->mx.flags = (xc->mx.flags & ~C_ATEND) | C_INIT;
	return 0;
}

int dl_bcount(MDB_env *env, MDB_page *mp, unsigned i, uint64_t *out);

/* Rank support: index of the duplicate cursor's value within its key. */
int dl_dup_index(MDB_cursor *mc, uint64_t *idx)
{
	dl_xcursor *xc = mc->xcursor;
	*idx = 0;
	if (!xc || !xc->active)
		return 0;
	MDB_cursor *mx = &xc->mx;
	uint64_t sum = 0;
	for (int l = 0; l < mx->top; l++) {
		if (!IS_COUNTED(mx->pg[l]))
			return MDB_INCOMPATIBLE;
		for (unsigned i = 0; i < mx->ki[l]; i++) {
			uint64_t c;
			int rc = dl_bcount(mc->txn->env, mx->pg[l], i, &c);
			if (rc)
				return rc;
			sum += c;
		}
	}
	*idx = sum + mx->ki[mx->top];
	return 0;
}

/* mdb_del on a DUPSORT DB: one pair (data) or the whole key (data NULL). */
int dl_dup_del_key(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data)
{
	MDB_cursor mc;
	dl_xcursor xc;
	int rc, exact;
	xc.active = 0;
	xc.list = NULL;
	xc.listcap = 0;
	xc.lbuf = NULL;
	xc.lbufcap = 0;
	dl_cursor_init(&mc, txn, dbi);
	mc.xcursor = &xc;
	if ((rc = dl_search(&mc, key, DL_PS_KEY)))
		return rc;
	if (!dl_leaf_search(&mc, key, &exact) || !exact)
		return MDB_NOTFOUND;
	mc.flags |= C_INIT;
	return dl_dup_del(&mc, data, data == NULL);
}
