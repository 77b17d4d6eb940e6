/*
 * dupread.c - reading sorted-duplicate (MDB_DUPSORT) databases: cursor ops
 * on duplicates (dl_dup_get), duplicate counts, the first item for mdb_get,
 * keeping a cursor's duplicate position across tree changes,
 * mdb_cursor_list_dup, and rank support inside a key's duplicates.
 * Puts and deletes of duplicates are in dupwrite.c; the sub-cursor itself
 * is in dupcursor.h.
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
#include "dupcursor.h"

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
		dl_pos_mark_after_last(mx, 0);
		if (mx->ki[mx->top] > 0) {
			mx->ki[mx->top]--;
			return 0;
		}
		return xc->subpage ? MDB_NOTFOUND : dl_cursor_prev_leaf(mx);
	}
	if (dl_pos_is_after_last(mx))
		return MDB_NOTFOUND;
	if ((unsigned)mx->ki[mx->top] + 1 < NUMKEYS(mp)) {
		mx->ki[mx->top]++;
		return 0;
	}
	rc = xc->subpage ? MDB_NOTFOUND : dl_cursor_next_leaf(mx);
	if (rc == MDB_NOTFOUND)
		dl_pos_mark_after_last(mx, 1);
	return rc;
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
 * (DL_POS_DELETED_DUPEND): it sits on the key past the end of its duplicates, with the
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
		dl_pos_set_delkind(mc, DL_DK_DUPEND);
		dl_pos_mark_gone(mc, 1);
		return MDB_NOTFOUND;
	case MDB_NEXT_DUP:
		/* Nothing here and no next duplicate; the state stays. */
		dl_pos_set_delkind(mc, DL_DK_DUPEND);
		return MDB_NOTFOUND;
	case MDB_NEXT:
	case MDB_NEXT_NODUP:
		dl_pos_end_deleted(mc);
		if ((rc = dl_cursor_next(mc, key, NULL))) {
			/* No next key: still past the end of this one. */
			if (rc == MDB_NOTFOUND)
				dl_pos_mark_deleted_kind(mc, DL_DK_DUPEND);
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 0);
	case MDB_PREV_NODUP:
		/* No earlier key: LMDB leaves the duplicate position (past the
		 * key's last duplicate) exactly as it was. */
		dl_pos_end_deleted(mc);
		if ((rc = dl_cursor_prev(mc, key, NULL))) {
			if (rc == MDB_NOTFOUND)
				dl_pos_mark_deleted_kind(mc, DL_DK_DUPEND);
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 1);
	case MDB_PREV:
	case MDB_PREV_DUP:
		/* The previous item is the key's (new) last duplicate; moving
		 * back onto it clears the duplicate position's end marker. */
		dl_pos_end_deleted(mc);
		if (!xc->active)
			return -1;
		dl_pos_mark_after_last(&xc->mx, 0);
		if (key && (rc = dl_cursor_current(mc, key, NULL)))
			return rc;
		return data ? dl_xcurrent(xc, data) : 0;
	default:
		dl_pos_end_deleted(mc);
		return -1;
	}
}

/*
 * Like LMDB: after MDB_LAST the cursor answers "no next item" until it is
 * moved some other way (FIRST_DUP/LAST_DUP count as such a move) or keys
 * land after it.  Whether that refuses op now; the marker only counts while
 * the cursor is on the last key of its leaf (LMDB compares the index), and
 * anywhere else it drops.
 */
static inline int dl_dup_atend_refuses(MDB_cursor *mc, MDB_cursor_op op)
{
	if (op != MDB_NEXT && op != MDB_NEXT_DUP && op != MDB_NEXT_NODUP)
		return 0;
	if (!dl_pos_is_set(mc) || !dl_pos_is_after_last(mc))
		return 0;
	if (mc->top >= 0 && mc->ki[mc->top] + 1u < NUMKEYS(mc->pg[mc->top])) {
		dl_pos_mark_after_last(mc, 0);
		return 0;
	}
	return 1;
}

/* The end marker after op returned rc: MDB_LAST sets it, moves back and
 * repositionings end it. */
static inline void dl_dup_atend_after(MDB_cursor *mc, MDB_cursor_op op, int rc)
{
	switch (op) {
	case MDB_PREV:
	case MDB_PREV_NODUP:
		/* LMDB drops its end marker as soon as PREV reaches the key
		 * level, so even when there is no previous key. */
		dl_pos_mark_after_last(mc, 0);
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
			dl_pos_mark_after_last(mc, 0);
		break;
	case MDB_LAST:
		if (!rc)
			dl_pos_mark_after_last(mc, 1);
		break;
	default:
		break;
	}
}

/*
 * FIRST_DUP or LAST_DUP while the cursor's item was just deleted: LMDB keeps
 * the "just deleted" state of the duplicate position across them (a
 * following NEXT returns that item again; NEXT_NODUP moves on), unless the
 * cursor sits past the last key.
 */
static int dl_dup_first_last_deleted(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key,
	MDB_val *data, MDB_cursor_op op, int fixed)
{
	if (mc->top >= 0 && mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
		return data ? MDB_NOTFOUND : EINVAL;
	if (dl_pos_delkind(mc) != DL_DK_KEY)
		dl_pos_set_delkind(mc, DL_DK_NONE);
	int rc = dl_dup_get0(mc, xc, key, data, op, fixed);
	if (!rc) {
		dl_pos_mark_after_last(mc, 0);
		dl_pos_set_delkind(mc, DL_DK_NONE);
		if (xc->active)
			dl_pos_mark_deleted_kind(mc, DL_DK_DUP);
	}
	return rc;
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
	if (!dl_pos_is_set(mc) && dl_pos_is_deleted(mc)) {
		dl_pos_end_deleted(mc);
		if (op == MDB_NEXT_DUP)
			return MDB_NOTFOUND;
	}

	/* FIRST_DUP/LAST_DUP keep the "just deleted" state. */
	int set_deleted = dl_pos_is_set_deleted(mc) && !(mc->flags & C_RESEEK);
	if ((op == MDB_FIRST_DUP || op == MDB_LAST_DUP) && set_deleted && !dl_pos_is_gone(mc))
		return dl_dup_first_last_deleted(mc, xc, key, data, op, fixed);
	/* NEXT_NODUP leaves the duplicate position alone: if there is no next
	 * key, its "just deleted" state is still there afterwards (LMDB). */
	int keep_dupdel = 0;
	if (dl_pos_delkind(mc) == DL_DK_DUP) {
		if (op == MDB_NEXT_NODUP && set_deleted) {
			dl_pos_end_deleted(mc);
			keep_dupdel = 1;
		}
		dl_pos_set_delkind(mc, DL_DK_NONE);
	}
	if (dl_pos_delkind(mc) == DL_DK_DUPEND) {
		dl_pos_set_delkind(mc, DL_DK_NONE);
		if (set_deleted && (rc = dl_dup_get_dupend(mc, xc, key, data, op)) != -1)
			return rc;
	}

	if (dl_dup_atend_refuses(mc, op)) {
		if (keep_dupdel)
			dl_pos_mark_deleted_kind(mc, DL_DK_DUP);
		return MDB_NOTFOUND;
	}
	rc = dl_dup_get0(mc, xc, key, data, op, fixed);
	if (rc == MDB_NOTFOUND && keep_dupdel)
		dl_pos_mark_deleted_kind(mc, DL_DK_DUP);
	dl_dup_atend_after(mc, op, rc);
	return rc;
}

/* Data of the main cursor's current item: the duplicate position's item,
 * or the node's own value for a key without duplicates. */
static inline int dl_dup_current_data(MDB_cursor *mc, dl_xcursor *xc, MDB_val *data)
{
	if (!data)
		return 0;
	if (xc->active)
		return dl_xcurrent(xc, data);
	MDB_val k;
	return dl_cursor_current(mc, &k, data);
}

/*
 * NEXT, NEXT_DUP or NEXT_NODUP right after a delete (DELETED*): the following
 * item is already current, with the exceptions LMDB makes below.
 */
static int dl_dup_next_deleted(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op)
{
	int rc;
	/* LMDB answers NEXT_DUP right after a whole key went with "not
	 * found", whatever follows. */
	if (mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
		return MDB_NOTFOUND;
	if (op == MDB_NEXT_DUP && dl_pos_delkind(mc) == DL_DK_KEY) {
		/* LMDB: a following NEXT still returns that key's first
		 * duplicate, but NEXT_NODUP moves on. */
		if (xc->active)
			dl_pos_set_delkind(mc, DL_DK_DUP);
		else
			dl_pos_end_deleted(mc);
		return MDB_NOTFOUND;
	}
	/* LMDB tests the duplicate position's end marker (left by LAST_DUP)
	 * before its "just deleted" state. */
	if (xc->active && dl_pos_is_after_last(&xc->mx) && dl_pos_delkind(mc) != DL_DK_KEY) {
		if (op == MDB_NEXT_DUP) {
			dl_pos_set_delkind(mc, DL_DK_DUP);
			return MDB_NOTFOUND;
		}
		dl_pos_end_deleted(mc);
		if ((rc = dl_cursor_next(mc, key, NULL))) {
			if (rc == MDB_NOTFOUND)
				dl_pos_mark_after_last(mc, 1);
			return rc;
		}
		return dl_dup_enter(mc, xc, data, 0);
	}
	dl_pos_end_deleted(mc);
	if (op == MDB_NEXT_DUP && !xc->active)
		return MDB_NOTFOUND;
	if ((rc = dl_cursor_current(mc, key, NULL)))
		return rc;
	return dl_dup_current_data(mc, xc, data);
}

/* NEXT, NEXT_DUP, NEXT_NODUP (the hot path of a forward scan). */
static inline int dl_dup_next(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op)
{
	int rc;
	if (!dl_pos_is_set(mc)) {
		if ((rc = dl_cursor_first(mc, key, NULL, 0)))
			return rc;
		return dl_dup_enter(mc, xc, data, 0);
	}
	if (dl_pos_is_past_end(mc) || mc->top < 0)
		return MDB_NOTFOUND;
	if (dl_pos_is_deleted(mc))
		return dl_dup_next_deleted(mc, xc, key, data, op);
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
			dl_pos_mark_after_last(mc, 1);
		return rc;
	}
	return dl_dup_enter(mc, xc, data, 0);
}

/* PREV, PREV_DUP, PREV_NODUP. */
static int dl_dup_prev(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op)
{
	int rc, wasdel;
	if (!dl_pos_is_set(mc) || dl_pos_is_past_end(mc)) {
		/* LMDB: a never-positioned cursor treats PREV_DUP like PREV (it
		 * lands on the last item); past the end there is no current key
		 * and so no previous duplicate. */
		if (op == MDB_PREV_DUP && dl_pos_is_set(mc))
			return MDB_NOTFOUND;
		if ((rc = dl_cursor_first(mc, key, NULL, 1)))
			return rc;
		return dl_dup_enter(mc, xc, data, 1);
	}
	if (mc->top < 0)
		return MDB_NOTFOUND;
	wasdel = dl_pos_is_deleted(mc) != 0;
	if (wasdel) {
		dl_pos_end_deleted(mc);
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
		/* LMDB: a refused PREV_NODUP ends the key-level "just deleted"
		 * state but not the duplicate position's one. */
		if (rc == MDB_NOTFOUND && op == MDB_PREV_NODUP && wasdel) {
			dl_pos_set_delkind(mc, DL_DK_NONE);
			if (xc->active)
				dl_pos_mark_deleted_kind(mc, DL_DK_DUP);
		}
		return rc;
	}
	return dl_dup_enter(mc, xc, data, 1);
}

/* GET_CURRENT. */
static int dl_dup_get_current(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data)
{
	int rc;
	if (!dl_pos_is_set(mc))
		return EINVAL;
	if (dl_pos_is_past_end(mc))
		return MDB_NOTFOUND;
	if ((rc = dl_cursor_current(mc, key, NULL)))
		return rc;
	dl_pos_end_deleted(mc);
	return dl_dup_current_data(mc, xc, data);
}

/* FIRST_DUP, LAST_DUP: the current key's first or last item. */
static int dl_dup_first_last_dup(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op)
{
	int rc;
	if (!dl_pos_is_set(mc) || !data)
		return EINVAL;
	/* Past the last key (its deletion moved the cursor there) LMDB
	 * refuses before touching any state; otherwise these end the "just
	 * deleted" state (see dl_dup_get). */
	if (mc->top >= 0 && mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
		return MDB_NOTFOUND;
	dl_pos_end_deleted(mc);
	if (dl_pos_is_past_end(mc) || mc->top < 0)
		return MDB_NOTFOUND;
	if (xc->active) {
		if ((rc = dl_xfirst(xc, op == MDB_LAST_DUP)))
			return rc;
		return dl_xcurrent(xc, data);
	}
	return dl_cursor_current(mc, key, data);
}

/* GET_BOTH, GET_BOTH_RANGE: key, then the item (exact, or the first >=). */
static int dl_dup_get_both(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op)
{
	int rc;
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

/* GET_MULTIPLE: the rest of the duplicate position's LEAF2 page. */
static int dl_dup_get_multiple(MDB_cursor *mc, dl_xcursor *xc, MDB_val *data, int fixed)
{
	if (!data || !dl_pos_is_set(mc))
		return EINVAL;
	/* LMDB forgets the "just deleted" state even when refusing: a
	 * following NEXT moves past the current item. */
	dl_pos_end_deleted(mc);
	if (!fixed)
		return MDB_INCOMPATIBLE;
	/* LMDB quirk: nothing is returned when the duplicate position sits at
	 * its end (placed there by a "last" move or by running off the end);
	 * the main cursor's own state does not matter. */
	if (dl_pos_is_past_end(mc) || !xc->active || dl_pos_is_after_last(&xc->mx))
		return 0;
	return dl_dup_page(xc, data);
}

/* PREV_MULTIPLE: the previous LEAF2 page of the key's sub-database. */
static int dl_dup_prev_multiple(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	int fixed)
{
	int rc;
	if (!data)
		return EINVAL;
	if (!fixed)
		return MDB_INCOMPATIBLE;
	if (!dl_pos_is_set(mc)) {
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
}

/* One cursor op on a DUPSORT DB, once dl_dup_get has settled the states
 * left by deletes and by MDB_LAST. */
static int dl_dup_get0(MDB_cursor *mc, dl_xcursor *xc, MDB_val *key, MDB_val *data,
	MDB_cursor_op op, int fixed)
{
	int rc;
	switch (op) {
	case MDB_FIRST:
	case MDB_LAST:
		if ((rc = dl_cursor_first(mc, key, NULL, op == MDB_LAST)))
			return rc;
		return dl_dup_enter(mc, xc, data, op == MDB_LAST);
	case MDB_NEXT:
	case MDB_NEXT_DUP:
	case MDB_NEXT_NODUP:
		return dl_dup_next(mc, xc, key, data, op);
	case MDB_PREV:
	case MDB_PREV_DUP:
	case MDB_PREV_NODUP:
		return dl_dup_prev(mc, xc, key, data, op);
	case MDB_GET_CURRENT:
		return dl_dup_get_current(mc, xc, key, data);
	case MDB_SET:
	case MDB_SET_KEY:
	case MDB_SET_RANGE:
		if ((rc = dl_cursor_set(mc, key, NULL, op)))
			return rc;
		return dl_dup_enter(mc, xc, data, 0);
	case MDB_FIRST_DUP:
	case MDB_LAST_DUP:
		return dl_dup_first_last_dup(mc, xc, key, data, op);
	case MDB_GET_BOTH:
	case MDB_GET_BOTH_RANGE:
		return dl_dup_get_both(mc, xc, key, data, op);
	case MDB_GET_MULTIPLE:
		return dl_dup_get_multiple(mc, xc, data, fixed);
	case MDB_PREV_MULTIPLE:
		return dl_dup_prev_multiple(mc, xc, key, data, fixed);
	default:
		return EINVAL;
	}
}

int dl_dup_count(MDB_cursor *mc, mdb_size_t *countp)
{
	dl_xcursor *xc = mc->xcursor;
	if (!dl_pos_is_set(mc))
		return EINVAL;
	if (dl_pos_is_past_end(mc) || mc->top < 0)
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
	dl_pos_mark_after_last(mc, 0);
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
			dl_pos_mark_deleted(mc);
	}
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

/* Room for want bytes of decoded values in the cursor-owned lbuf. */
static int dl_list_lbuf(dl_xcursor *xc, size_t want)
{
	if (want <= xc->lbufcap)
		return 0;
	unsigned char *b = realloc(xc->lbuf, want);
	if (!b)
		return ENOMEM;
	xc->lbuf = b;
	xc->lbufcap = want;
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
	int rc = dl_list_lbuf(xc, need);
	if (rc)
		return rc;
	l[0].mv_size = tl;
	l[0].mv_data = NODEKEY(sp, t);
	unsigned char *out = xc->lbuf;
	for (i = 1; i < n; i++) {
		if ((rc = dl_prefix_decode(sp, NODEPTR(sp, i), out, &l[i])))
			return rc;
		if (l[i].mv_data == out)
			out += l[i].mv_size;
	}
	return 0;
}

/* Collect the n items of a sub-database into xc->list by walking tmp, a
 * scratch copy of the sub-cursor.  The list grows as items are found, so a
 * record claiming more items than the walk meets never sizes it. */
static int dl_list_subdb_walk(dl_xcursor *xc, dl_xcursor *tmp, size_t n)
{
	int rc;
	size_t i = 0;
	if ((rc = dl_xfirst(tmp, 0)))
		return rc;
	for (;;) {
		if (i >= n)
			return MDB_CORRUPTED;
		if (i >= xc->listcap) {
			size_t want = i < 512 ? 1024 : 2 * i;
			if ((rc = dl_list_reserve(xc, want < n ? want : n)))
				return rc;
		}
		if ((rc = dl_xcurrent(tmp, &xc->list[i])))
			return rc;
		i++;
		rc = dl_xstep(tmp, 0);
		if (rc == MDB_NOTFOUND)
			break;
		if (rc)
			return rc;
	}
	return i == n ? 0 : MDB_CORRUPTED;
}

/* Values of a prefix-compressed sub-database are decoded into per-call
 * scratch: walk tmp again and keep copies in lbuf, so the list outlives
 * the next decode. */
static int dl_list_subdb_keep(dl_xcursor *xc, dl_xcursor *tmp, size_t n)
{
	size_t tot = 0, off = 0, i;
	int rc;
	for (i = 0; i < n; i++)
		tot += xc->list[i].mv_size;
	if ((rc = dl_list_lbuf(xc, tot)))
		return rc;
	if ((rc = dl_xfirst(tmp, 0)))
		return rc;
	for (i = 0; i < n; i++) {
		MDB_val v;
		if ((rc = dl_xcurrent(tmp, &v)))
			return rc;
		if (off + v.mv_size > tot)
			return MDB_CORRUPTED;
		memcpy(xc->lbuf + off, v.mv_data, v.mv_size);
		xc->list[i].mv_data = xc->lbuf + off;
		xc->list[i].mv_size = v.mv_size;
		off += v.mv_size;
		if (i + 1 < n && (rc = dl_xstep(tmp, 0)))
			return rc;
	}
	return 0;
}

/* mdb_cursor_list_dup for a key whose n items are in a sub-database.  A
 * scratch copy of the sub-cursor walks it, so the position stays. */
static int dl_list_subdb(MDB_cursor *mc, dl_xcursor *xc, size_t n)
{
	dl_xcursor tmp = *xc;
	tmp.mx.db = &tmp.db;
	tmp.mx.dbx = &tmp.dbx;
	int rc = dl_list_subdb_walk(xc, &tmp, n);
	if (rc)
		return rc;
	/* A DUPFIXED sub-DB's LEAF2 pages are never compressed, so its list
	 * points into those pages, as on any other DB. */
	if ((mc->flags & C_PREFIX) && !(mc->db->md_flags & MDB_DUPFIXED))
		return dl_list_subdb_keep(xc, &tmp, n);
	return 0;
}

/*
 * DLMDB: every value of the cursor's current key, in order, as an array the
 * cursor owns (valid until the cursor is used again, closed or renewed, or
 * the txn ends).  Values point into the pages; the cursor does not move.
 */
static int dl_list_dup(MDB_cursor *mc, const MDB_val **values, mdb_size_t *countp)
{
	int rc;
	/* A fresh cursor on a named DB: its record is read on first use. */
	if ((mc->txn->dbflags[mc->dbi] & DB_STALE) && (rc = dl_db_load(mc->txn, mc->dbi)))
		return rc;
	if (!(mc->db->md_flags & MDB_DUPSORT))
		return MDB_INCOMPATIBLE;
	if ((mc->flags & C_RESEEK) && (rc = dl_cursor_reseek(mc)))
		return rc;
	if (!dl_pos_is_set(mc) || dl_pos_is_past_end(mc) || mc->top < 0 ||
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
		if ((rc = dl_list_reserve(xc, n)) || (rc = dl_list_subpage(mc, xc)))
			return rc;
	} else if ((rc = dl_list_subdb(mc, xc, n))) {
		return rc;
	}
	*values = xc->list;
	*countp = n;
	return 0;
}

int mdb_cursor_list_dup(MDB_cursor *mc, const MDB_val **values, mdb_size_t *countp)
{
	if (!mc || !values || !countp)
		return EINVAL;
	if (mc->txn->flags & (TXN_ERROR | TXN_FINISHED))
		return MDB_BAD_TXN;
	/* Damage found here ends a write txn, as any read's does. */
	return dl_txn_err(mc->txn, dl_list_dup(mc, values, countp));
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
		dl_pos_placed(&xc->mx);
		return 0;
	}
	uint64_t left;
	if ((rc = dl_rank_descend(&xc->mx, idx, &left)))
		return rc == MDB_NOTFOUND ? MDB_CORRUPTED : rc;
	if (left)
		return MDB_CORRUPTED;	/* items in a sub-DB leaf count 1 each */
	dl_pos_placed(&xc->mx);
	return 0;
}

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
