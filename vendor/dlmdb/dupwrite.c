/*
 * dupwrite.c - writing sorted-duplicate (MDB_DUPSORT) databases: puts
 * (dl_dup_put, MDB_CURRENT and MDB_MULTIPLE in dl_dup_cursor_put) and
 * deletes of duplicates, edits of inline sub-pages (build, grow, compact,
 * remove an item), and the conversion of a key's set between a sub-page and
 * a sub-database.  Reads are in dupread.c; the sub-cursor is in dupcursor.h.
 */
#include "dupcursor.h"

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
 * Key's node becomes key + an inline sub-page of sz bytes holding items.
 * The image is built after the items in the scratch area when they live
 * there, else in a buffer of its own.
 */
static int dl_dup_store_inline(MDB_cursor *mc, const MDB_val *key, MDB_val *items, unsigned n,
	unsigned fixed, size_t sz)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	unsigned char *buf, *own = NULL;
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
	dl_subpage_build(env, buf, sz, items, n, fixed, mc->pg[mc->top]->mp_pgno,
	    (mc->flags & C_PREFIX) != 0);
	MDB_val d = { sz, buf };
	int rc = dl_node_replace(mc, key, &d, DL_PUT_DUPDATA);
	free(own);
	return rc;
}

/* Lay items out uncompressed on the empty leaf lp (packed when fixed);
 * MDB_PAGE_FULL when they do not fit. */
static int dl_leaf_fill_raw(MDB_env *env, MDB_page *lp, const MDB_val *items, unsigned n,
	unsigned fixed)
{
	size_t used = 0;
	for (unsigned i = 0; i < n; i++) {
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
	return 0;
}

/*
 * Key's node becomes key + the record of a new sub-database whose root
 * leaf holds every item (they always fit: the set was at most half a page
 * before the item that outgrew the sub-page).
 */
static int dl_dup_store_subdb(MDB_cursor *mc, const MDB_val *key, MDB_val *items, unsigned n,
	unsigned fixed)
{
	MDB_env *env = mc->txn->env;
	MDB_page *lp;
	MDB_db rec, zero;
	int rc;
	if ((rc = dl_page_alloc(mc, 1, &lp)))
		return rc;
	lp->mp_flags = P_LEAF | P_DIRTY | (fixed ? P_LEAF2 : 0);
	lp->mp_pad = (uint16_t)fixed;
	MP_LOWER(lp) = PAGEHDRSZ;
	MP_UPPER(lp) = (indx_t)env->psize;
	if ((mc->flags & C_PREFIX) && !fixed) {
		if (dl_pfx_items_size(env, items, n) > env->psize)
			return MDB_PAGE_FULL;
		rc = dl_pfx_items_write(env, lp, env->psize, items, n);
	} else {
		rc = dl_leaf_fill_raw(env, lp, items, n, fixed);
	}
	if (rc)
		return rc;
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
 * Store items (sorted) as key's duplicate set: an inline sub-page when the
 * node fits, else a new sub-database.  mc is on key's node, path touched.
 */
static int dl_dup_store(MDB_cursor *mc, const MDB_val *key, MDB_val *items, unsigned n)
{
	MDB_env *env = mc->txn->env;
	unsigned fixed = (mc->db->md_flags & MDB_DUPFIXED) ? (unsigned)items[0].mv_size : 0;
	size_t kpart = NODESZ + key->mv_size + (key->mv_size & env->pad);
	size_t sz = dl_subpage_size(env, items, n, fixed, (mc->flags & C_PREFIX) != 0);

	/* Fixed-size sets get room for a few more items (as LMDB does), so
	 * most later puts insert in place instead of rewriting the node. */
	if (fixed && kpart + sz + EVEN(4 * fixed) <= env->nodemax)
		sz += EVEN(4 * fixed);
	if (kpart + sz <= env->nodemax)
		return dl_dup_store_inline(mc, key, items, n, fixed, sz);
	return dl_dup_store_subdb(mc, key, items, n, fixed);
}

/*
 * Pointers [from, to) of an inline sub-page sp of at most lim bytes: each p
 * becomes p + (p < t ? add_below : add_above) - sub, every p and result
 * inside the sub-page.  A sub-page is smaller than nodemax, so below 0x8000
 * bytes (lim checks it): then four 16-bit pointers are adjusted at a time
 * in a 64-bit word, with no carry or borrow between lanes (each lane's
 * final value is in range, so the word holds exactly the four results).
 */
static inline void dl_subptrs_adjust(MDB_page *sp, unsigned from, unsigned to, size_t lim,
	size_t t, size_t add_below, size_t add_above, size_t sub)
{
	const uint64_t ones = 0x0001000100010001ull, high = ones << 15;
	unsigned char *q = (unsigned char *)sp + PAGEHDRSZ;
	unsigned j = from;
	if (lim <= 0x8000 && t <= lim && to - from >= 4) {
		/* The last four pointers are read before the loop rewrites
		 * any of them and stored last: lanes the loop also did get
		 * the same results again, so no tail loop is needed. */
		uint64_t x, ge, z;
		memcpy(&z, q + 2 * (size_t)(to - 4), sizeof(z));
		for (; j + 4 <= to; j += 4) {
			memcpy(&x, q + 2 * (size_t)j, sizeof(x));
			ge = (((x | high) - t * ones) & high) >> 15;	/* 1: p >= t */
			x += (ge ^ ones) * add_below + ge * add_above - sub * ones;
			memcpy(q + 2 * (size_t)j, &x, sizeof(x));
		}
		ge = (((z | high) - t * ones) & high) >> 15;
		z += (ge ^ ones) * add_below + ge * add_above - sub * ones;
		memcpy(q + 2 * (size_t)(to - 4), &z, sizeof(z));
		return;
	}
	for (; j < to; j++) {
		size_t p = sp->mp_ptrs[j];
		sp->mp_ptrs[j] = (indx_t)(p + (p < t ? add_below : add_above) - sub);
	}
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
 * dl_subpage_build comes out exactly as a rebuild would lay it out; any
 * other compact layout stays a valid one.  Returns 1 (nothing changed)
 * when the leaf page has no room or the node would pass nodemax: the
 * caller then takes the rebuild path.
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
	dl_subptrs_adjust(np, 0, ins, ssz + delta, x, 2, delta, 0);
	dl_subptrs_adjust(np, ins + 1, n + 1, ssz + delta, x, 2, delta, 0);
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
	dl_subptrs_adjust(np, 0, n, ssz, 0, 0, 0, gap);
	MP_UPPER(np) = (indx_t)(hi - gap);
	for (unsigned j = 0; j < nkeys; j++)
		if (mp->mp_ptrs[j] <= off)
			mp->mp_ptrs[j] = (indx_t)(mp->mp_ptrs[j] + gap);
	MP_UPPER(mp) = (indx_t)(up + gap);
	node_set_dsize(NODEPTR(mp, idx), ssz - gap);
	return 0;
}

/*
 * Remove item xi of the key's uncompressed, variable-size inline sub-page
 * (on a touched leaf) and give the space back to the leaf in the same
 * pass: the key's node shrinks by the item's node and pointer plus any
 * free space the sub-page had, leaving it compact (as LMDB leaves it).  The
 * other items keep their order; a sub-page laid out by dl_subpage_build
 * comes out as a rebuild without the item would lay it out.  The sub-page
 * moved, so xc must be set up again afterwards.
 *
 * Leaf page, before -> after (addresses grow to the right; B = sub-page,
 * gap = the item's node + its pointer + B's free space, kept even):
 *   [upper .. node hdr, key, B hdr, B ptrs[0..xi)]  moves up by gap
 *   [B ptr xi]                                       is gone
 *   [B ptrs(xi..n)]                                  moves up by gap - 2
 *   [B free space]                                   is gone
 *   [B nodes below item xi's node]                   move up by its size
 *   [item xi's node]                                 is gone
 *   [B nodes above it]                               stay
 */
static int dl_subpage_remove(MDB_cursor *mc, dl_xcursor *xc, unsigned xi)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top], nkeys = NUMKEYS(mp);
	MDB_node *node = NODEPTR(mp, idx);
	MDB_page *sp = xc->mx.pg[0];
	size_t kpart = NODESZ + node->mn_ksize + (node->mn_ksize & env->pad);
	size_t ssz = NODEDSZ(node), noff = mp->mp_ptrs[idx], spo = noff + kpart;
	size_t lo = MP_LOWER(sp), hi = MP_UPPER(sp), up = MP_UPPER(mp);
	unsigned char *base = (unsigned char *)mp;
	unsigned n = NUMKEYS(sp);
	if ((unsigned char *)sp != base + spo || IS_LEAF2(sp) || lo > hi || hi > ssz ||
	    xi >= n || n < 2)
		return MDB_PROBLEM;
	size_t off = sp->mp_ptrs[xi];
	size_t nsz = dl_dnode_size(env, NODEPTR(sp, xi)->mn_ksize);
	if (off < hi || off + nsz > ssz)
		return MDB_CORRUPTED;
	size_t gap = ((hi - lo) & ~(size_t)1) + nsz + sizeof(indx_t);
	/* Every pointer is at or above lower (the sub-page was checked when
	 * read); one into the free space, when there is free space, means a
	 * damaged sub-page: the txn fails (MDB_PROBLEM) before anything moves. */
	if (hi > lo)
		for (unsigned j = 0; j < n; j++)
			if (sp->mp_ptrs[j] < hi)
				return MDB_PROBLEM;
	/* Pointers first, in place: offsets from the sub-page's new start.
	 * Item xi's pointer is dropped below; until then it holds an offset
	 * whose result stays in range, as dl_subptrs_adjust needs of every
	 * pointer it adjusts. */
	sp->mp_ptrs[xi] = (indx_t)(off + nsz);
	dl_subptrs_adjust(sp, 0, n, ssz, off, nsz, 0, gap);
	/* Highest region first: every move goes up. */
	memmove(base + spo + hi + nsz, base + spo + hi, off - hi);
	size_t pa = spo + PAGEHDRSZ + sizeof(indx_t) * ((size_t)xi + 1);
	memmove(base + pa + gap - sizeof(indx_t), base + pa, spo + lo - pa);
	memmove(base + up + gap, base + up, pa - sizeof(indx_t) - up);
	MDB_page *np = (MDB_page *)(base + spo + gap);
	MP_LOWER(np) = (indx_t)(lo - sizeof(indx_t));
	MP_UPPER(np) = (indx_t)(hi + nsz - gap);
	for (unsigned j = 0; j < nkeys; j++)
		if (mp->mp_ptrs[j] <= noff)
			mp->mp_ptrs[j] = (indx_t)(mp->mp_ptrs[j] + gap);
	MP_UPPER(mp) = (indx_t)(up + gap);
	node_set_dsize(NODEPTR(mp, idx), ssz - gap);
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
	mc->flags &= ~C_RESEEK;
	dl_pos_clear_place(mc);
	dl_pos_mark_after_last(mc, 0);
	if ((rc = dl_search(mc, key, DL_PS_KEY)))
		return rc;
	if (!dl_leaf_search(mc, key, &exact) || !exact)
		return MDB_PROBLEM;
	dl_pos_now_set(mc);
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

/* Account for one item added under mc's key: the DB's entry count, its
 * dirty flag, and mc positioned on the key (not deleted, not at the end). */
static inline void dl_dup_added(MDB_cursor *mc)
{
	mc->db->md_entries++;
	mc->txn->dbflags[mc->dbi] |= DB_DIRTY;
	mc->flags &= ~C_RESEEK;
	dl_pos_land_fresh(mc);
}

/* Put the sub-cursor of a sub-page on item ins. */
static inline void dl_xplace(dl_xcursor *xc, unsigned ins)
{
	xc->mx.ki[0] = (indx_t)ins;
	dl_pos_placed(&xc->mx);
}

/* The pair is already there: mc moves onto the key; NODUPDATA and
 * APPENDDUP refuse it, otherwise it is a successful no-op. */
static inline int dl_dup_put_same(MDB_cursor *mc, unsigned flags)
{
	dl_pos_land_fresh(mc);
	return (flags & (MDB_NODUPDATA | MDB_APPENDDUP)) ? MDB_KEYEXIST : 0;
}

/*
 * Find where key k goes: on return exact tells whether it is stored, and
 * mc is on it or on its insertion point.  An MDB_APPEND put checks k
 * against the last key instead of searching.
 */
static int dl_dup_put_locate(MDB_cursor *mc, const MDB_val *k, unsigned flags, int *exact)
{
	int rc;
	*exact = 0;
	if (mc->db->md_root == P_INVALID)
		return 0;
	if (flags & MDB_APPEND) {
		if ((rc = dl_search_edge(mc, 1)))
			return rc;
		MDB_val last;
		if ((rc = dl_cursor_current(mc, &last, NULL)))
			return rc;
		int c = mc->dbx->cmp(k, &last);
		/* APPEND wants a strictly greater key even on DUPSORT, with or
		 * without APPENDDUP (lmdb-api.md §6.3, as LMDB). */
		dl_pos_mark_after_last(mc, 1);
		return c <= 0 ? MDB_KEYEXIST : 0;
	}
	if ((rc = dl_search(mc, k, DL_PS_KEY)))
		return rc;
	MDB_node *nd = dl_leaf_search(mc, k, exact);
	if (!nd && mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top]))
		return MDB_CORRUPTED;
	return 0;
}

/* Put with MDB_NOOVERWRITE on a key that exists: refused, with data set to
 * the key's first item and mc on it. */
static int dl_dup_put_exists(MDB_cursor *mc, dl_xcursor *xc, MDB_val *data)
{
	int rc;
	dl_pos_land_fresh(mc);
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

/* After mc's node was rewritten with item among its duplicates: count it
 * and put the sub-cursor on it (mc is on the node, dl_node_replace). */
static int dl_dup_put_stored(MDB_cursor *mc, dl_xcursor *xc, MDB_val *item)
{
	int rc;
	dl_dup_added(mc);
	if ((rc = dl_xinit_trusted(mc, xc)))
		return rc;
	return xc->active ? dl_xset(xc, item, 0) : 0;
}

/* Second item of a key: its plain value and item become a sub-page. */
static int dl_dup_put_second(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, MDB_val *item,
	unsigned flags, unsigned fixed)
{
	MDB_val old, kk;
	int rc;
	if ((rc = dl_cursor_current(mc, &kk, &old)))
		return rc;
	if (fixed && old.mv_size != item->mv_size)
		return MDB_BAD_VALSIZE;
	int c = mc->dbx->dcmp(item, &old);
	if (c == 0)
		return dl_dup_put_same(mc, flags);
	if (c < 0 && (flags & MDB_APPENDDUP))
		return MDB_KEYEXIST;
	unsigned char *ob = malloc(old.mv_size + 1);
	if (!ob)
		return ENOMEM;
	memcpy(ob, old.mv_data, old.mv_size);
	MDB_val pair[2];
	pair[c < 0 ? 1 : 0].mv_size = old.mv_size;
	pair[c < 0 ? 1 : 0].mv_data = ob;
	pair[c < 0 ? 0 : 1] = *item;
	dl_cursors_save(mc);
	if (!(rc = dl_cursor_touch(mc)))
		rc = dl_dup_store(mc, k, pair, 2);
	free(ob);
	if (rc)
		return rc;
	return dl_dup_put_stored(mc, xc, item);
}

/*
 * Insert item at position ins of the key's sub-page without rebuilding the
 * node, where there is room: free space a removed prefix-compressed value
 * left, the leaf's free space (the node grows), or the spare slots of a
 * fixed-size sub-page.  0: done; 1: no room, rebuild; else an error.
 */
static int dl_subpage_insert_here(MDB_cursor *mc, dl_xcursor *xc, MDB_val *item, unsigned ins,
	unsigned fixed)
{
	MDB_txn *txn = mc->txn;
	MDB_page *sp = xc->mx.pg[0];
	int rc;
	if (!fixed && !IS_LEAF2(sp) && (mc->flags & C_PREFIX) && ins > 0 &&
	    dl_pfx_sub_insert(txn->env, sp, ins, item) == 0) {
		/* Free space a removed value left: used in place. */
		dl_xplace(xc, ins);
		xc->db.md_entries++;
		xc->xmoved = 0;
		dl_dup_added(mc);
		return 0;
	}
	if (!fixed && !IS_LEAF2(sp) && (mc->flags & C_PREFIX) && ins > 0 &&
	    SIZELEFT(sp) > 1) {
		/* Free space, but too little: give it back to the leaf, then
		 * grow by what the value needs. */
		if ((rc = dl_subpage_compact(mc, xc)) || (rc = dl_xinit_trusted(mc, xc)))
			return rc;
		sp = xc->mx.pg[0];
	}
	if (!fixed && !IS_LEAF2(sp) && !SIZELEFT(sp)) {
		/* Room on the leaf page: grow the node in place. */
		rc = dl_subpage_grow(mc, xc, item, ins);
		if (rc)
			return rc;
		dl_xsubpage_moved(mc, xc);
		dl_xplace(xc, ins);
		xc->xmoved = 0;
		dl_dup_added(mc);
		return 0;
	}
	if (IS_LEAF2(sp) && SIZELEFT(sp) >= sp->mp_pad && item->mv_size == sp->mp_pad) {
		/* Room left in a fixed-size sub-page: insert in place. */
		unsigned kk = sp->mp_pad, cnt = NUMKEYS(sp);
		unsigned char *base = (unsigned char *)sp + PAGEHDRSZ;
		memmove(base + (size_t)(ins + 1) * kk, base + (size_t)ins * kk,
		    (size_t)(cnt - ins) * kk);
		memcpy(base + (size_t)ins * kk, item->mv_data, kk);
		MP_LOWER(sp) = (indx_t)(MP_LOWER(sp) + 2);
		MP_UPPER(sp) = (indx_t)(MP_UPPER(sp) - (kk - 2));
		xc->db.md_entries++;
		dl_xplace(xc, ins);
		dl_dup_added(mc);
		return 0;
	}
	return 1;
}

/* A new item for a key whose duplicates are in a sub-page (path touched):
 * inserted in place where it fits, else the node is rebuilt. */
static int dl_dup_put_subpage(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, MDB_val *item,
	unsigned ins, unsigned fixed)
{
	MDB_val *items = NULL;
	unsigned n = 0;
	int rc;
	/* The page moved when touched; its bytes (so ins) did not change. */
	dl_xsubpage_moved(mc, xc);
	rc = dl_subpage_insert_here(mc, xc, item, ins, fixed);
	if (rc != 1)
		return rc;
	if ((rc = dl_subpage_items(xc, &items, &n, item, ins, ~0u)))
		return rc;
	if ((rc = dl_items_detach(mc->txn, items, n)))
		return rc;
	if ((rc = dl_dup_store(mc, k, items, n)))
		return rc;
	return dl_dup_put_stored(mc, xc, item);
}

/* A new item for a key whose duplicates are in a sub-database. */
static int dl_dup_put_subdb(MDB_cursor *mc, dl_xcursor *xc, MDB_val *item, unsigned flags)
{
	MDB_db before = xc->db;
	MDB_val empty = { 0, NULL };
	int rc, ex;
	/* The insertion point is in the leaf the search picks (not the next
	 * leaf an "item >=" lookup may have moved to). */
	dl_pos_clear_place(&xc->mx);
	dl_pos_mark_after_last(&xc->mx, 0);
	if (xc->xmoved) {
		if ((rc = dl_search(&xc->mx, item, DL_PS_KEY)))
			return rc;
		dl_leaf_search(&xc->mx, item, &ex);
	}
	if (flags & MDB_APPENDDUP)
		xc->mx.flags |= C_APPENDING;
	rc = dl_cursor_insert(&xc->mx, item, &empty);
	xc->mx.flags &= ~C_APPENDING;
	if (rc)
		return rc;
	dl_pos_now_set(&xc->mx);
	dl_dup_pages_delta(mc, &before, &xc->db);
	dl_subdb_writeback(mc, xc);
	dl_dup_added(mc);
	return 0;	/* both cursors already sit on the new item */
}

/* Another item for a key that has duplicates already. */
static int dl_dup_put_more(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, MDB_val *item,
	unsigned flags, unsigned fixed)
{
	int rc;
	if (fixed && item->mv_size != xc->db.md_pad && !(xc->subpage &&
	    !IS_LEAF2(xc->mx.pg[0])))
		return MDB_BAD_VALSIZE;
	int found;
	rc = dl_xset_found(xc, item, 1, &found);
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	if (rc == 0) {
		/* The search compared with the duplicate order (dcmp). */
		if (found)
			return dl_dup_put_same(mc, flags);
		if (flags & MDB_APPENDDUP)
			return MDB_KEYEXIST;	/* not after the last item */
	}
	/* Where the item goes in a sub-page: before the first item >= it,
	 * or after the last. */
	unsigned ins = !xc->subpage ? 0 : rc == MDB_NOTFOUND ? NUMKEYS(xc->mx.pg[0]) :
	    xc->mx.ki[0];
	dl_cursors_save(mc);
	if ((rc = dl_cursor_touch(mc)))
		return rc;
	DL_ASSERT(dl_stack_ok(mc));
	if (xc->subpage)
		return dl_dup_put_subpage(mc, xc, k, item, ins, fixed);
	return dl_dup_put_subdb(mc, xc, item, flags);
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
	if ((rc = dl_dup_put_locate(mc, &k, flags, &exact)))
		return rc;
	if (!exact) {
		/* New key: a plain node holds its single item. */
		if ((rc = dl_cursor_put0(mc, &k, &item, flags & MDB_APPEND)))
			return rc;
		xc->active = 0;
		/* A new key: LMDB's lookup left its end marker as it was
		 * unless the cursor sat inside the key's leaf already; an
		 * APPEND goes through its "last item" move, which sets it. */
		if (inside)
			dl_pos_mark_after_last(mc, 0);
		if (flags & MDB_APPEND)
			dl_pos_mark_after_last(mc, 1);
		return 0;
	}
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (flags & MDB_NOOVERWRITE)
		return dl_dup_put_exists(mc, xc, data);
	if (!xc->active)
		return dl_dup_put_second(mc, xc, &k, &item, flags, fixed);
	return dl_dup_put_more(mc, xc, &k, &item, flags, fixed);
}

/*
 * mdb_put / mdb_del on a DUPSORT DB use a throwaway cursor on the stack.
 * Its sub-cursor is set up only as far as the first write or delete reads
 * it before dl_xinit fills it in (clearing the whole of it would cost more
 * than the put).
 */
static void dl_tmp_cursor(MDB_cursor *mc, dl_xcursor *xc, MDB_txn *txn, MDB_dbi dbi)
{
	xc->active = 0;
	xc->subpage = 0;
	xc->list = NULL;
	xc->listcap = 0;
	xc->lbuf = NULL;
	xc->lbufcap = 0;
	dl_cursor_init(mc, txn, dbi);
	mc->xcursor = xc;
}

int dl_dup_put_tmp(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_cursor mc;
	dl_xcursor xc;
	dl_tmp_cursor(&mc, &xc, txn, dbi);
	return dl_dup_put(&mc, key, data, flags);
}

/*
 * The key under cursor c (mc's key, or the sub-cursor's item) as a copy in
 * v->mv_data's buffer (DL_MAXKEY + 2 bytes), read on first use: v->mv_size
 * is SIZE_MAX until then.  c must still be on it, before anything rewrites
 * the node or sub-page.
 */
static int dl_dup_del_read(MDB_cursor *c, MDB_val *v)
{
	MDB_val t;
	int rc;
	if (v->mv_size != SIZE_MAX)
		return 0;
	if ((rc = dl_cursor_current(c, &t, NULL)))
		return rc;
	return dl_key_copy(&t, v->mv_data, v);
}

/* mc's node (checked) is a sub-page node holding the sub-page xc is on. */
static inline int dl_dup_del_same_subpage(MDB_cursor *mc, dl_xcursor *xc)
{
	MDB_page *mp = mc->pg[mc->top];
	MDB_node *n = NODEPTR(mp, mc->ki[mc->top]);
	return xc->subpage && (n->mn_flags & (F_DUPDATA | F_SUBDATA)) == F_DUPDATA &&
	    dl_node_dataptr(mc->txn->env, n) == (void *)xc->mx.pg[0] &&
	    xc->mx.top == 0 && xc->mx.ki[0] < NUMKEYS(xc->mx.pg[0]);
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
	mc->flags &= ~C_RESEEK;
	dl_pos_drop_marks(mc);
	MDB_cursor *mx = &xc->mx;
	dl_pos_end_deleted(mx);
	if (mx->top >= 0 && mx->ki[mx->top] < NUMKEYS(mx->pg[mx->top])) {
		dl_pos_to_deleted_kind(mc, DL_DK_DUP);	/* on the following duplicate */
		return 0;
	}
	/* That was the key's last duplicate: like LMDB, stay on the key with
	 * the duplicate position past its end (DELETED_DUPEND; see dl_dup_get). */
	(void)kk;
	if ((rc = dl_xfirst(xc, 1)))
		return rc;
	dl_pos_to_deleted_kind(mc, DL_DK_DUPEND);
	return 0;
}

/* Delete mc's whole key, count items, with any sub-database; mc lands on
 * the following key's first item. */
static int dl_dup_del_whole_key(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, uint64_t count)
{
	int rc;
	if (xc->active && !xc->subpage) {
		MDB_db before = xc->db;
		if ((rc = dl_dup_del_read(mc, k)))
			return rc;
		dl_pos_unset(&xc->mx);
		if ((rc = dl_drop_tree(&xc->mx)))
			return rc;
		dl_dup_pages_delta(mc, &before, &xc->db);
		/* The main path must still be reached afresh. */
		if ((rc = dl_search(mc, k, DL_PS_KEY)))
			return rc;
		int exact;
		if (!dl_leaf_search(mc, k, &exact) || !exact)
			return MDB_PROBLEM;
	}
	xc->active = 0;
	if ((rc = dl_cursor_del0(mc)))
		return rc;
	dl_pos_set_delkind(mc, DL_DK_KEY);
	mc->db->md_entries -= count - 1;
	if (mc->db->md_root == P_INVALID && mc->db->md_entries)
		return MDB_CORRUPTED;	/* empty tree, entries counted */
	/* Now on the following key (if any): on its first item. */
	if (dl_pos_is_set(mc) && mc->top >= 0 &&
	    mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top])) {
		if ((rc = dl_xinit(mc, xc)))
			return rc;
		if (xc->active && (rc = dl_xfirst(xc, 0)))
			return rc;
	}
	return 0;
}

/*
 * Remove the sub-cursor's item (path touched) from the key's sub-page or
 * sub-database.  *here: the node was edited in place (a sub-page changed
 * inside it, or a sub-database's record rewritten), so mc still sits on
 * it; otherwise the node was rewritten and must be found again.
 */
static int dl_dup_del_item(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, MDB_val *item,
	int *here)
{
	MDB_env *env = mc->txn->env;
	MDB_page *sp = xc->mx.pg[0];
	int rc;
	*here = 0;
	if (xc->subpage && (mc->flags & C_PREFIX) && !IS_LEAF2(sp) && xc->mx.ki[0] > 0) {
		/* Not the trunk: only this value's node goes. */
		MDB_node *on = NODEPTR(mc->pg[mc->top], mc->ki[mc->top]);
		if ((rc = dl_pfx_sub_remove(env, sp, NODEDSZ(on), xc->mx.ki[0])))
			return rc;
		*here = 1;
	} else if (xc->subpage && !(mc->flags & C_PREFIX) && !IS_LEAF2(sp)) {
		/* Uncompressed: the node goes and the sub-page shrinks to fit,
		 * leaving no free space (as LMDB leaves it). */
		if ((rc = dl_subpage_remove(mc, xc, xc->mx.ki[0])))
			return rc;
		*here = 1;
	} else if (xc->subpage) {
		MDB_val *items;
		unsigned n;
		if ((mc->flags & C_PREFIX) && !IS_LEAF2(sp)) {
			/* The trunk goes: the next value becomes the trunk and
			 * the rest are encoded against it inside the sub-page's
			 * present size (format §3.13), so the main leaf is not
			 * edited.  Under the default order they always fit;
			 * only a custom order can force the rebuild below. */
			size_t sz = NODEDSZ(NODEPTR(mc->pg[mc->top], mc->ki[mc->top]));
			if ((rc = dl_subpage_items(xc, &items, &n, NULL, ~0u, 0)) ||
			    (rc = dl_items_detach(mc->txn, items, n)))
				return rc;
			if (dl_pfx_items_size(env, items, n) <= sz) {
				dl_pfx_items_write(env, sp, sz, items, n);
				*here = 1;
				return 0;
			}
		}
		/* Both are needed to find the following item afterwards. */
		if ((rc = dl_dup_del_read(mc, k)) || (rc = dl_dup_del_read(&xc->mx, item)) ||
		    (rc = dl_subpage_items(xc, &items, &n, NULL, ~0u, xc->mx.ki[0])))
			return rc;
		if ((rc = dl_items_detach(mc->txn, items, n)))
			return rc;
		/* A smaller set always fits inline again; never turn a sub-page
		 * back into a plain value (format doc §8). */
		if ((rc = dl_dup_store(mc, k, items, n)))
			return rc;
	} else {
		MDB_db before = xc->db;
		if ((rc = dl_cursor_del0(&xc->mx)))
			return rc;
		dl_dup_pages_delta(mc, &before, &xc->db);
		dl_subdb_writeback(mc, xc);
		*here = 1;
	}
	return 0;
}

/*
 * After item was removed from key k: land on the key's following item; when
 * none is left after it, stay on the key past its last duplicate
 * (DELETED_DUPEND), as LMDB does.
 */
static int dl_dup_del_land(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, MDB_val *item, int here)
{
	int rc;
	if (here) {
		/* Same leaf, same node index: no lookup from the root.  In a
		 * sub-page the items after the removed one moved down by one,
		 * so the first item >= it now has its index; a sub-database is
		 * searched for it from its own root. */
		unsigned xi = xc->mx.ki[0];
		mc->flags &= ~C_RESEEK;
		dl_pos_land_fresh(mc);
		if (xc->subpage) {
			dl_xsubpage_moved(mc, xc);
			rc = dl_xat(xc, xi);
		} else if (!(rc = dl_xinit_trusted(mc, xc))) {
			rc = !xc->active ? MDB_PROBLEM : dl_xset(xc, item, 1);
		}
	} else {
		rc = dl_dup_reposition(mc, xc, k, item);
	}
	if (rc == MDB_NOTFOUND) {
		if (!xc->active)
			return MDB_PROBLEM;
		if ((rc = dl_xfirst(xc, 1)))
			return rc;
		dl_pos_to_deleted_kind(mc, DL_DK_DUPEND);
		return 0;
	} else if (rc) {
		return rc;
	}
	dl_pos_mark_deleted_kind(mc, DL_DK_DUP);
	return 0;
}

/*
 * Remove one item of key k (more than one left): touch the path, put the
 * sub-cursor back on the item (at index xi of a sub-page when known, else
 * by value; xon: a sub-database's sub-cursor is on it already), remove it
 * and land on the following item.
 */
static int dl_dup_del_one(MDB_cursor *mc, dl_xcursor *xc, MDB_val *k, MDB_val *item,
	unsigned xi, int xon)
{
	int rc, here;
	dl_cursors_save(mc);
	if ((rc = dl_cursor_touch(mc)))
		return rc;
	/* The node was checked before (dl_xinit); the touch only copied it,
	 * and left a sub-database's pages (so a sub-cursor on one) alone. */
	/* Without a known index the item is found by value, so it was read
	 * (dl_dup_del reads it whenever it cannot keep the index). */
	DL_ASSERT(xi != ~0u || xon || item->mv_size != SIZE_MAX);
	if (xc->subpage) {
		dl_xsubpage_moved(mc, xc);
		rc = xi != ~0u ? dl_xat(xc, xi) : dl_xset(xc, item, 0);
	} else if (!xon && !(rc = dl_xinit_trusted(mc, xc))) {
		rc = dl_xset(xc, item, 0);
	}
	if (rc)
		return rc;
	if ((rc = dl_dup_del_item(mc, xc, k, item, &here)))
		return rc;
	mc->db->md_entries--;
	mc->txn->dbflags[mc->dbi] |= DB_DIRTY;
	dl_pos_set_delkind(mc, DL_DK_NONE);
	return dl_dup_del_land(mc, xc, k, item, here);
}

/*
 * Delete from a DUPSORT DB at mc's key: one item (data), or the whole key
 * (all).  Afterwards mc is on the following item, "just deleted".
 */
int dl_dup_del(MDB_cursor *mc, const MDB_val *data, int all)
{
	dl_xcursor *xc = dl_xc_get(mc);
	unsigned char kb[DL_MAXKEY + 2], ib[DL_MAXKEY + 2];
	MDB_val k, item, kk;
	int rc;

	if (!xc)
		return ENOMEM;
	/* A new delete: only "the whole key went" may still be there. */
	dl_pos_mark_gone(mc, 0);
	if (dl_pos_delkind(mc) != DL_DK_KEY)
		dl_pos_set_delkind(mc, DL_DK_NONE);
	/* mc must be on a node; its key is read only where it is needed
	 * (dl_dup_del_read), which a removal inside the node is not.  The
	 * node itself is checked by dl_xinit below (or was, when this txn
	 * copied its page); only the cursor's own item is read before that. */
	if (!all && !data && xc->active) {
		if ((rc = dl_cursor_current(mc, NULL, NULL)))
			return rc;
	} else if (mc->top < 0 || mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top])) {
		return MDB_NOTFOUND;
	}
	k.mv_size = SIZE_MAX;
	k.mv_data = kb;
	/* Index of the item in its sub-page, while that stays known: a touch
	 * copies the sub-page byte for byte, so the index outlives it. */
	unsigned xi = ~0u;
	int xon = 0;	/* the sub-cursor is on the item (dl_xset below) */
	item.mv_size = SIZE_MAX;
	item.mv_data = ib;
	if (!all && !data && xc->active) {
		if (!xc->subpage && xc->db.md_entries > 1 && !dl_pos_is_deleted(mc) &&
		    dl_pos_is_set(&xc->mx))
			return dl_subdb_del_here(mc, xc);
		/* The cursor's own item.  When the key's node still holds the
		 * sub-page the sub-cursor is on, its index finds the item
		 * again (dl_xat) and its bytes are read only if a rebuild
		 * needs them; otherwise read them before the sub-cursor is
		 * reset. */
		if (dl_dup_del_same_subpage(mc, xc))
			xi = xc->mx.ki[0];
		else if ((rc = dl_dup_del_read(&xc->mx, &item)))
			return rc;
	}
	MDB_page *osp = xc->subpage ? xc->mx.pg[0] : NULL;
	if ((rc = dl_xinit(mc, xc)))
		return rc;
	if (!xc->active || !xc->subpage || xc->mx.pg[0] != osp)
		xi = ~0u;	/* not the sub-page the item was read from */
	if (!all && data) {
		if ((rc = dl_key_copy(data, ib, &item)))
			return rc;
		if (xc->active) {
#if DL_DUPDEL_PF
			if (xc->subpage)
				dl_subpage_prefetch(mc, xc);
#endif
			if ((rc = dl_xset(xc, &item, 0)))
				return rc;
			xon = 1;
			if (xc->subpage)
				xi = xc->mx.ki[0];
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
	if (all || count == 1)
		return dl_dup_del_whole_key(mc, xc, &k, count);
	return dl_dup_del_one(mc, xc, &k, &item, xi, xon);
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

/*
 * MDB_MULTIPLE: data[0] holds the item size and the first item,
 * data[1].mv_size the count; on return data[1].mv_size = items stored.
 * All or nothing: refusals (MDB_KEYEXIST) are found before the first write;
 * any later failure (MDB_MAP_FULL, ...) fails the txn, so none of the run
 * can be committed.
 */
static int dl_dup_put_multiple(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	size_t sz = data[0].mv_size, cnt = data[1].mv_size, done = 0;
	unsigned f = flags & (MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND | MDB_APPENDDUP);
	int rc;
	if ((rc = dl_multi_check(mc, key, data[0].mv_data, sz, cnt, f))) {
		data[1].mv_size = 0;
		return rc;
	}
	int atend = 0;
	for (; done < cnt; done++) {
		MDB_val v = { sz, (char *)data[0].mv_data + done * sz };
		mdb_size_t before = mc->db->md_entries;
		rc = dl_dup_put(mc, key, &v, f);
		/* LMDB looks the key up for the first item only: the end
		 * marker that lookup left stays for the whole batch, and the
		 * key-level conditions (NOOVERWRITE: key absent, APPEND: key
		 * above the last) apply to that lookup alone. */
		if (done == 0) {
			atend = dl_pos_is_after_last(mc) != 0;
			if (rc == MDB_KEYEXIST && (f & (MDB_NOOVERWRITE | MDB_APPEND)))
				break;
			f &= ~(unsigned)(MDB_NOOVERWRITE | MDB_APPEND);
		} else {
			dl_pos_mark_after_last(mc, atend);
		}
		/* An item already stored is skipped, as in LMDB. */
		if (rc == MDB_KEYEXIST && !(f & (MDB_NODUPDATA | MDB_APPENDDUP)))
			rc = 0;
		if (rc)
			break;
		/* LMDB quirk: an item equal to the key's single plain value (no
		 * duplicate set yet) ends the batch, successfully and without
		 * being counted; the rest is not stored. */
		if (mc->db->md_entries == before && !((dl_xcursor *)mc->xcursor)->active)
			break;
	}
	data[1].mv_size = done;
	return rc;
}

/*
 * MDB_CURRENT on a key with a duplicate set, cur the current item: add the
 * new item first, then remove the old one, so the set stays one even when
 * it holds a single item (as in LMDB); mc ends on the new item.
 */
static int dl_dup_replace_in_set(MDB_cursor *mc, dl_xcursor *xc, const MDB_val *kk,
	const MDB_val *cur, MDB_val *data)
{
	unsigned char ob[DL_MAXKEY + 1], kb[DL_MAXKEY + 1];
	MDB_val old = { cur->mv_size, ob }, k2 = { kk->mv_size, kb };
	int rc;
	if (cur->mv_size > DL_MAXKEY || kk->mv_size > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	memcpy(ob, cur->mv_data, cur->mv_size);
	memcpy(kb, kk->mv_data, kk->mv_size);
	if ((rc = dl_dup_put(mc, &k2, data, 0)))
		return rc;
	if ((rc = dl_cursor_set(mc, &k2, NULL, MDB_SET)))
		return rc;
	if ((rc = dl_dup_del(mc, &old, 0)))
		return rc;
	if ((rc = dl_cursor_set(mc, &k2, NULL, MDB_SET)) || (rc = dl_xinit(mc, xc)))
		return rc;
	dl_pos_end_deleted(mc);
	dl_pos_mark_after_last(mc, 0);
	return xc->active ? dl_xset(xc, data, 0) : 0;
}

/* MDB_CURRENT: replace the current item, removing it and adding data. */
static int dl_dup_put_current(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	int rc;
	if (!dl_pos_is_set(mc) || dl_pos_is_past_end(mc) || mc->top < 0)
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
		return dl_dup_replace_in_set(mc, xc, &kk, &cur, data);
	}
	if ((rc = dl_cursor_current(mc, &kk, &cur)))
		return rc;
	if ((rc = dl_dup_del(mc, &cur, 0)))
		return rc;
	dl_pos_end_deleted(mc);
	return dl_dup_put(mc, key, data, 0);
}

/* mdb_cursor_put on a DUPSORT DB: adds MDB_CURRENT and MDB_MULTIPLE. */
int dl_dup_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	if (flags & MDB_RESERVE)
		return EINVAL;
	if (flags & MDB_MULTIPLE)
		return dl_dup_put_multiple(mc, key, data, flags);
	if (flags & MDB_CURRENT)
		return dl_dup_put_current(mc, key, data);
	int rc = dl_dup_put(mc, key, data,
	    flags & (MDB_NOOVERWRITE | MDB_NODUPDATA | MDB_APPEND | MDB_APPENDDUP));
	/* LMDB leaves an appended duplicate "at the end" (GET_MULTIPLE then
	 * returns nothing; NEXT_DUP finds nothing either way). */
	dl_xcursor *axc = mc->xcursor;
	if (!rc && (flags & MDB_APPENDDUP) && axc && axc->active)
		dl_pos_mark_after_last(&axc->mx, 1);
	return rc;
}

/* mdb_del on a DUPSORT DB: one pair (data) or the whole key (data NULL). */
int dl_dup_del_key(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data)
{
	MDB_cursor mc;
	dl_xcursor xc;
	int rc, exact;
	dl_tmp_cursor(&mc, &xc, txn, dbi);
	if ((rc = dl_search(&mc, key, DL_PS_KEY)))
		return rc;
	if (!dl_leaf_search(&mc, key, &exact) || !exact)
		return MDB_NOTFOUND;
	dl_pos_now_set(&mc);
	return dl_dup_del(&mc, data, data == NULL);
}
