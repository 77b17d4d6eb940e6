/*
 * dupcursor.h - the sub-cursor over one key's sorted duplicates, shared by
 * dupread.c and dupwrite.c: its state (dl_xcursor), setting it up for the
 * key under the main cursor (an inline sub-page or a sub-database), and
 * placing it on the first/last item, on the current item or on a given one.
 *
 * The functions are static inline so each side keeps them inlined into its
 * hot paths (NEXT scans, puts into a sub-page) as one file did before.
 */
#ifndef DLMDB_DUPCURSOR_H
#define DLMDB_DUPCURSOR_H

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

static inline dl_xcursor *dl_xc_get(MDB_cursor *mc)
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
static inline int dl_subpage_check(MDB_page *sp, size_t sz)
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
static inline int dl_xinit_core(MDB_cursor *mc, dl_xcursor *xc, int check)
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
	mx->pos = DL_POS_UNSET;
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
		    xc->db.md_root >= txn->next_pgno || !xc->db.md_depth ||
		    dl_snapshot_link_bad(txn, n, xc->db.md_root))
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

static inline int dl_xinit(MDB_cursor *mc, dl_xcursor *xc)
{
	/* A leaf outside the map is a page this write txn owns: built here,
	 * or copied from the map after dl_page_wcheck checked all of it
	 * (sub-pages included), and changed only by this txn since.  Map
	 * pages (the snapshot's, or ones this txn spilled) are always
	 * checked. */
	MDB_env *env = mc->txn->env;
	return dl_xinit_core(mc, xc, dl_in_map(env, mc->pg[mc->top]));
}

/* dl_xinit for a node this txn just wrote or copied after validating it. */
static inline int dl_xinit_trusted(MDB_cursor *mc, dl_xcursor *xc)
{
	return dl_xinit_core(mc, xc, 0);
}

/*
 * dl_xinit_trusted for a sub-cursor already set up on the key's inline
 * sub-page, after a touch copied the leaf or an in-place edit moved the
 * sub-page or changed its items: only where the sub-page is and how many
 * items it holds change; the sub-cursor is left unpositioned.
 */
static inline void dl_xsubpage_moved(MDB_cursor *mc, dl_xcursor *xc)
{
	MDB_page *mp = mc->pg[mc->top];
	MDB_page *sp = dl_node_dataptr(mc->txn->env, NODEPTR(mp, mc->ki[mc->top]));
	MDB_cursor *mx = &xc->mx;
	mx->pos = DL_POS_UNSET;
	mx->pg[0] = sp;
	mx->top = 0;
	mx->ki[0] = 0;
	xc->db.md_entries = NUMKEYS(sp);
}

static inline int dl_xfirst(dl_xcursor *xc, int last)
{
	MDB_cursor *mx = &xc->mx;
	dl_pos_mark_after_last(mx, last);
	if (xc->subpage) {
		unsigned n = NUMKEYS(mx->pg[0]);
		mx->top = 0;
		mx->ki[0] = (indx_t)(last ? n - 1 : 0);
		dl_pos_now_set(mx);
		return 0;
	}
	int rc = dl_search_edge(mx, last);
	if (rc == MDB_NOTFOUND)
		return MDB_CORRUPTED;	/* a sub-DB is never empty */
	if (!rc)
		dl_pos_now_set(mx);
	return rc;
}

static inline int dl_xcurrent(dl_xcursor *xc, MDB_val *data)
{
	MDB_val tmp;
	return dl_cursor_current(&xc->mx, data ? data : &tmp, NULL);
}

/*
 * Whether dl_subpage_search prefetches, before its first compare, the
 * nodes its first three probes may read (7 nodes, two lines each: the
 * node's header and its last 8 key bytes), so their cache misses overlap
 * the reads of the first and last items instead of following one another.
 * 1 or 0 (a build option, for timing).
 */
#ifndef DL_SUBPAGE_PF
#define DL_SUBPAGE_PF 0
#endif

/*
 * Whether a delete by value (dl_dup_del with data) prefetches every line of
 * the key's inline sub-page once the sub-cursor is set up on it.  The
 * delete then reads a few items whose addresses depend on one another (the
 * search's probes) and moves the items on one side of the removed one;
 * issued together, those misses overlap instead of following one another.
 * 1 or 0 (a build option, for timing).
 */
#ifndef DL_DUPDEL_PF
#define DL_DUPDEL_PF 1
#endif

/* Prefetch the lines of xc's inline sub-page past its first (the header,
 * read when the sub-cursor was set up); mc is on the key's node, whose
 * data is that sub-page.  The lines stop at the leaf's end too, so a size
 * the checks have not bounded yet can only shorten the loop. */
static inline void dl_subpage_prefetch(const MDB_cursor *mc, const dl_xcursor *xc)
{
	const MDB_page *mp = mc->pg[mc->top];
	const MDB_node *n = NODEPTR(mp, mc->ki[mc->top]);
	uintptr_t a = (uintptr_t)xc->mx.pg[0], end = a + NODEDSZ(n),
	    pend = (uintptr_t)mp + mc->txn->env->psize;
	if (end > pend)
		end = pend;
	for (a = (a | 63) + 1; a < end; a += 64)
		__builtin_prefetch((const void *)a);
}

/*
 * The word-compare search of dl_subpage_search, without a branch on the
 * compares: every probe's item is taken to have val's length kl, and then
 * its last 8 bytes as a big-endian word (the bytes before them match val's)
 * order it against kw, val's last 8 bytes.  A probe halves the range with a
 * conditional move, so the probes' directions, which go either way at
 * random, cost no mispredicted branch; it runs all ceil(log2 n) halvings
 * and reads the item it ends on instead of stopping at a match (6 item
 * reads at 20 items, against about 4.3, the last one mostly cached).
 * *pi: the first item >= val, *pc: 0 when that is val itself.  Returns 1
 * when a probe meets an item of another length (the caller then searches
 * the general way; the word past such an item's key is never read).
 */
static inline int dl_subpage_wsearch(const MDB_page *sp, unsigned n, size_t kl, uint64_t kw,
	unsigned *pi, int *pc)
{
	const unsigned char *b = (const unsigned char *)sp;
	size_t wo = NODEKOFF(sp) + kl - 8;	/* the word's offset in an item's node */
	unsigned base = 0, len = n;
	uint64_t y;
	for (;;) {
		const MDB_node *nd = (const MDB_node *)(b + sp->mp_ptrs[base + (len >> 1)]);
		if (__builtin_expect(nd->mn_ksize != kl, 0))
			return 1;
		y = __builtin_bswap64(dl_get64((const unsigned char *)nd + wo));
		if (len == 1)
			break;
		/* Items at and below the probe are <= val: keep the upper half. */
		unsigned half = len >> 1;
		base = y <= kw ? base + half : base;
		len -= half;
	}
	/* base is the last item <= val, or 0 when every item is above it. */
	*pi = base + (y < kw);
	*pc = y != kw;
	return 0;
}

/* Whether a, b and c all hold the same first s >= 8 bytes: a fixed number
 * of word compares, with no exit that depends on the bytes. */
static inline int dl_same_prefix3(const unsigned char *a, const unsigned char *b,
	const unsigned char *c, size_t s)
{
	uint64_t d = 0;
	size_t i = 0;
	for (; i + 8 <= s; i += 8) {
		uint64_t x = dl_get64(b + i);
		d |= (dl_get64(a + i) ^ x) | (dl_get64(c + i) ^ x);
	}
	if (i < s) {	/* the last 8 bytes, overlapping the words before */
		uint64_t x = dl_get64(b + s - 8);
		d |= (dl_get64(a + s - 8) ^ x) | (dl_get64(c + s - 8) ^ x);
	}
	return !d;
}

/*
 * dl_subpage_search's general way.  Sorted items all begin with the bytes
 * their first and last items share (L of them), so val is compared with
 * those L bytes once: when it differs there it goes before or after every
 * item; otherwise each probe compares only the bytes past L (one
 * big-endian word for an item of val's length when the items differ only
 * in their last 8 bytes).  Out of line: the words decide the usual case.
 */
static __attribute__((noinline)) unsigned dl_subpage_search_lcp(const MDB_page *sp, unsigned n,
	const MDB_val *val, int *pc)
{
	const unsigned char *k = val->mv_data;
	size_t kl = val->mv_size;
	unsigned i = 0;
	int c = 1;
	const MDB_node *f = NODEPTR(sp, 0), *l = NODEPTR(sp, n - 1);
	const unsigned char *fk = NODEKEY(sp, f);
	size_t L = dl_pfx_lcp(fk, f->mn_ksize, NODEKEY(sp, l), l->mn_ksize);
	size_t p = dl_pfx_lcp(k, kl, fk, L);
	if (p < L) {
		i = p < kl && k[p] > fk[p] ? n : 0;
	} else {
		int word = kl >= 8 && kl - 8 <= L;
		uint64_t kw = word ? __builtin_bswap64(dl_get64(k + kl - 8)) : 0;
		int lo = 0, hi = (int)n - 1;
		while (lo <= hi) {
			int mid = (lo + hi) >> 1;
			const MDB_node *nd = NODEPTR(sp, mid);
			const unsigned char *nk = NODEKEY(sp, nd);
			if (word && nd->mn_ksize == kl) {
				uint64_t y = __builtin_bswap64(dl_get64(nk + kl - 8));
				c = kw < y ? -1 : kw > y;
			} else {
				MDB_val a = { kl - L, (void *)(k + L) },
					b = { nd->mn_ksize - L, (void *)(nk + L) };
				c = dl_lex(&a, &b);
			}
			if (dl_halve(c, mid, &lo, &hi, &i))
				break;
		}
	}
	*pc = c;
	return i;
}

/*
 * dl_leaf_search on an uncompressed sub-page of variable-size items under
 * the default order.  Duplicates of one key often share most of their
 * bytes, which the generic search compares again at every probe.  When
 * val and the first and last items share all but val's last 8 bytes (so
 * every item does), dl_subpage_wsearch decides by those 8 bytes; otherwise
 * (or when a probe meets an item of another length) the search takes the
 * general way, dl_subpage_search_lcp.  The sub-page was checked when the
 * sub-cursor was set up (dl_xinit), so every node lies inside it.
 */
static inline MDB_node *dl_subpage_search(MDB_cursor *mx, const MDB_val *val, int *exact)
{
	MDB_page *sp = mx->pg[0];
	unsigned n = NUMKEYS(sp), i = 0;
	const unsigned char *k = val->mv_data;
	size_t kl = val->mv_size;
	int c = 1;
	*exact = 0;
#if DL_SUBPAGE_PF
	if (n >= 8 && kl >= 8) {
		/* The candidates of the first three probes of
		 * dl_subpage_wsearch: each halving keeps a range of a length
		 * that depends on n only. */
		unsigned h0 = n >> 1, l1 = n - h0, h1 = l1 >> 1, h2 = (l1 - h1) >> 1;
		unsigned c7[7] = { h0, h1, h0 + h1, h2, h1 + h2, h0 + h2, h0 + h1 + h2 };
		for (unsigned j = 0; j < 7; j++) {
			const char *nd = (const char *)sp + sp->mp_ptrs[c7[j]];
			__builtin_prefetch(nd);
			__builtin_prefetch(nd + NODEKOFF(sp) + kl - 8);
		}
	}
#endif
	if (n) {
		const MDB_node *f = NODEPTR(sp, 0), *l = NODEPTR(sp, n - 1);
		if (!(kl >= 16 && f->mn_ksize >= kl - 8 && l->mn_ksize >= kl - 8 &&
		    dl_same_prefix3(k, NODEKEY(sp, f), NODEKEY(sp, l), kl - 8) &&
		    !dl_subpage_wsearch(sp, n, kl, __builtin_bswap64(dl_get64(k + kl - 8)),
			&i, &c)))
			i = dl_subpage_search_lcp(sp, n, val, &c);
	}
	mx->ki[0] = (indx_t)i;
	if (i >= n)
		return NULL;
	*exact = c == 0;
	return NODEPTR(sp, i);
}

/* Position the sub-cursor on item val (exact) or the first item >= val;
 * *found: it is val itself. */
static inline int dl_xset_found(dl_xcursor *xc, const MDB_val *val, int range, int *found)
{
	MDB_cursor *mx = &xc->mx;
	int rc, exact;
	*found = 0;
	dl_pos_mark_after_last(mx, 0);
	xc->xmoved = 0;
	if (!xc->subpage) {
		if ((rc = dl_search(mx, val, DL_PS_KEY)))
			return rc == MDB_NOTFOUND ? MDB_CORRUPTED : rc;
	} else {
		mx->top = 0;
	}
	dl_pos_now_set(mx);
	MDB_node *n = xc->subpage && !(mx->flags & C_PREFIX) && !IS_LEAF2(mx->pg[0]) &&
	    xc->dbx.cmp == dl_cmp_lex ? dl_subpage_search(mx, val, &exact) :
	    dl_leaf_search(mx, val, &exact);
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
	*found = exact;
	return 0;
}

static inline int dl_xset(dl_xcursor *xc, const MDB_val *val, int range)
{
	int found;
	return dl_xset_found(xc, val, range, &found);
}

/* Place the sub-cursor of a sub-page on item i, whose index is known (as
 * dl_xset would leave it); MDB_NOTFOUND when i is past the last item. */
static inline int dl_xat(dl_xcursor *xc, unsigned i)
{
	MDB_cursor *mx = &xc->mx;
	dl_pos_placed(mx);
	xc->xmoved = 0;
	mx->top = 0;
	mx->ki[0] = (indx_t)i;
	return i < NUMKEYS(mx->pg[0]) ? 0 : MDB_NOTFOUND;
}

#endif /* DLMDB_DUPCURSOR_H */
