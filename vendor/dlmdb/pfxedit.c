/*
 * pfxedit.c - editing prefix-compressed leaves in the tree
 * (dlmdb-extensions §3.8, §3.12): inserting and deleting entries, splitting
 * a full leaf, and merging or moving entries between neighbouring leaves.
 * The codec (decoding, encoding nodes, whole-page rewrites, split points)
 * is prefix.c; the format is described in prefix.h.  btree.c calls in here
 * (dl_pfx_add, dl_pfx_del, dl_pfx_rebalance) for leaves of a DB with
 * MDB_PREFIX_COMPRESSION, and keeps the search over compressed leaves.
 */
#include "internal.h"

/* ------------------------------------------------------------------------- */
/* Writing prefix-compressed leaves (dlmdb-extensions §3.8, §3.12)           */
/* ------------------------------------------------------------------------- */
/*
 * The codec is prefix.c; this is the tree glue.  An insert at index >= 1
 * encodes only the new node against the page's trunk and a delete at
 * index >= 1 removes only its node, both through the ordinary page
 * primitives.  When the trunk changes (insert at or delete of index 0)
 * only the nodes whose shared length with it changes are re-encoded, in
 * place when they fit (dl_pfx_retrunk, dl_pfx_del_trunk).  A page is
 * decoded and rewritten whole when that does not apply (a raw node, no
 * room), on a split, and on a merge or move between neighbours.  The
 * decoded entries live in txn-owned scratch (dl_pfx_scratch), laid out as
 * [page copies][entries][key bytes].
 */

/* Scratch for rewriting: npages page copies, nent entries, keys of up to
 * nkeys decoded keys plus one spare key. */
static int dl_pfx_work(MDB_txn *txn, unsigned npages, unsigned nent, unsigned nkeys,
	unsigned char **pages, dl_pent **ents, unsigned char **arena, size_t *arenasz)
{
	size_t psz = txn->env->psize;
	size_t esz = ((size_t)nent * sizeof(dl_pent) + 7) & ~(size_t)7;
	size_t asz = ((size_t)nkeys + 1) * (DL_MAXKEY + 1);
	unsigned char *b = dl_pfx_scratch(txn, npages * psz + esz + asz);
	if (!b)
		return ENOMEM;
	*pages = b;
	*ents = (dl_pent *)(b + npages * psz);
	*arena = b + npages * psz + esz;
	*arenasz = asz;
	return 0;
}

/* Copy compressed leaf mp to copy and decode its entries into e / arena;
 * returns the arena bytes used through *used. */
static int dl_pfx_gather(MDB_env *env, MDB_page *mp, unsigned char *copy, dl_pent *e,
	unsigned char *arena, size_t arenasz, size_t *used)
{
	memcpy(copy, mp, env->psize);
	MDB_page *cp = (MDB_page *)copy;
	int rc = dl_pfx_load(env, cp, e, arena, arenasz);
	if (rc)
		return rc;
	size_t u = 0;
	for (unsigned i = 0; i < NUMKEYS(cp); i++)
		u += e[i].key.mv_size;
	*used = u;
	return 0;
}

/* Check node 0 of a non-empty compressed leaf (the trunk every probe reads). */
static inline int dl_pfx_trunk_ok(MDB_env *env, MDB_page *mp)
{
	return dl_node_check(env, mp, NODEPTR(mp, 0), 1);
}

/*
 * Split of compressed leaf mc->pg[top] for an insert of key at index >= 1,
 * which leaves the page's trunk where it is: the nodes that stay left keep
 * their bytes (copied as they are, no decode and re-encode) and only the
 * keys that move right are decoded, to be encoded against the right page's
 * new trunk.  The pages come out byte for byte as the general rewrite
 * (dl_pfx_gather, dl_pfx_split_point, dl_pfx_write_sz) writes them.  On
 * success *sp = the entries left on mc's page, *rpp = the new right page,
 * e[*sp] = its first entry.  Returns -1, having changed no page, when the
 * general path is needed: a raw node on the page (re-encoding changes its
 * bytes), everything fitting on one page, or a first split point whose
 * sides do not both fit.  copy, e, arena: dl_pfx_work's scratch for n + 1
 * entries and keys.
 */
static int dl_pfx_split_keep(MDB_cursor *mc, const MDB_val *key, size_t ds, unsigned nflags,
	const void *dpart, size_t dlen, unsigned char *copy, dl_pent *e, unsigned char *arena,
	size_t asz, unsigned *sp, MDB_page **rpp)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top], *cp = (MDB_page *)copy, *rp;
	unsigned idx = mc->ki[mc->top], n = NUMKEYS(mp), j;
	size_t psz = env->psize, off, total, left;
	int raw, rc;

	memcpy(copy, mp, psz);
	if ((rc = dl_pfx_load_meta(env, cp, e, &raw)))
		return rc;
	if (raw || key->mv_size > DL_MAXKEY)
		return -1;
	memmove(e + idx + 1, e + idx, (n - idx) * sizeof(dl_pent));
	dl_pent *ne = &e[idx];
	memcpy(arena, key->mv_data, key->mv_size);
	off = key->mv_size;
	ne->key.mv_data = arena;
	ne->key.mv_size = key->mv_size;
	ne->flags = (uint16_t)nflags;
	ne->dsize = (uint32_t)ds;
	ne->data = dpart;
	ne->dlen = dlen;
	ne->raw = 0;
	ne->s0 = dl_pfx_shared(cp, key);
	ne->nsz = dl_pfx_node_size(env, key->mv_size, ne->s0, 0, dlen);
	n++;
	total = PAGEHDRSZ;
	for (j = 0; j < n; j++)
		total += sizeof(indx_t) + e[j].nsz;
	if (total <= psz)
		return -1;
	unsigned s = dl_pfx_split_guess(env, e, n, total, psz, &left);
	if (left > psz)
		return -1;
	for (j = s; j < n; j++) {
		if (j == idx)
			continue;
		if (asz - off < DL_MAXKEY + 1)
			return MDB_PROBLEM;
		dl_pfx_key_copy(cp, j - (j > idx), &e[j], arena + off);
		off += e[j].key.mv_size;
	}
	if (dl_pfx_size(env, e + s, n - s) > psz)
		return -1;
	if ((rc = dl_page_alloc(mc, 1, &rp)))
		return rc;
	dl_page_init(env, rp, P_LEAF);
	/* The left page: its first s entries, laid out as dl_pfx_write_sz
	 * lays them out (node 0 at the top, then downward in index order). */
	size_t pos = psz, maxk = 0;
	for (j = 0; j < s; j++) {
		pos -= e[j].nsz;
		if (j == idx)
			dl_pfx_node_write(env, (unsigned char *)mp + pos, &e[j].key, e[j].s0, 0,
				e[j].dsize, e[j].flags, e[j].data, e[j].dlen);
		else
			memcpy((char *)mp + pos, (char *)cp + cp->mp_ptrs[j - (j > idx)], e[j].nsz);
		mp->mp_ptrs[j] = (indx_t)pos;
		if (e[j].key.mv_size > maxk)
			maxk = e[j].key.mv_size;
	}
	MP_LOWER(mp) = (indx_t)(PAGEHDRSZ + 2 * s);
	MP_UPPER(mp) = (indx_t)pos;
	mp->mp_pad = (uint16_t)(maxk > 65535 ? 65535 : maxk);
	dl_pfx_write_sz(env, rp, psz, e + s, n - s);
	*sp = s;
	*rpp = rp;
	return 0;
}

/*
 * Insert of a new smallest key (index 0) into compressed leaf mc->pg[top]
 * of a DB in lexicographic key order (what the shared lengths below rely
 * on) without rewriting the page.  With T the old trunk and L = lcp(key, T):
 * a node sharing s <= L bytes with T shares exactly s with key as well
 * (key < T <= its key), so its bytes stay canonical; only T and the nodes
 * sharing more than L with it (a run right after the trunk: along a sorted
 * page the shared length with the first key never grows) are re-encoded,
 * against key.  Returns -1, having changed no page, when the whole-page
 * rewrite is needed: a raw node on the page, or the re-encoded nodes not
 * fitting.  copy, e, arena: dl_pfx_work's scratch for n + 1 entries and keys.
 */
static int dl_pfx_retrunk(MDB_cursor *mc, const MDB_val *key, size_t ds, unsigned nflags,
	const void *dpart, size_t dlen, unsigned char *copy, dl_pent *e, unsigned char *arena)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top], *cp = (MDB_page *)copy;
	unsigned n = NUMKEYS(mp), m, j;
	const unsigned char *k = key->mv_data;
	int raw, rc;

	if (!n || key->mv_size > DL_MAXKEY)
		return -1;
	memcpy(copy, mp, env->psize);
	if ((rc = dl_pfx_load_meta(env, cp, e, &raw)))
		return rc;
	if (raw)
		return -1;
	MDB_node *n0 = NODEPTR(cp, 0);
	const unsigned char *t = NODEKEY(cp, n0);
	size_t tl = n0->mn_ksize, L = dl_pfx_lcp(k, key->mv_size, t, tl);
	if (L == tl || (L < key->mv_size && k[L] > t[L]))
		return -1;	/* not below the trunk */
	for (m = 1; m < n && e[m].s0 > L; m++)
		;
	for (j = m; j < n; j++)
		if (e[j].s0 > L)
			return -1;	/* out of order */
	size_t nsz0 = dl_pfx_node_size(env, key->mv_size, 0, 1, dlen), oldsz = 0, newsz = nsz0;
	for (j = 0; j < m; j++) {
		oldsz += e[j].nsz;
		newsz += dl_pfx_node_size(env, e[j].key.mv_size, L, 0, e[j].dlen);
	}
	if (newsz + sizeof(indx_t) > oldsz + SIZELEFT(mp))
		return -1;
	size_t off = 0;
	for (j = 0; j < m; j++) {
		dl_pfx_key_copy(cp, j, &e[j], arena + off);
		off += e[j].key.mv_size;
	}
	/* Data parts are read from the copy from here on. */
	for (j = m; j-- > 0;)
		dl_page_del_raw(mp, j, e[j].nsz);
	dl_pfx_node_write(env, dl_page_open(mp, 0, nsz0), key, 0, 1, ds, nflags, dpart, dlen);
	for (j = 0; j < m; j++) {
		size_t sz = dl_pfx_node_size(env, e[j].key.mv_size, L, 0, e[j].dlen);
		dl_pfx_node_write(env, dl_page_open(mp, j + 1, sz), &e[j].key, L, 0, e[j].dsize,
			e[j].flags, e[j].data, e[j].dlen);
	}
	dl_pfx_pad_add(mp, key->mv_size);
	return 0;
}

/*
 * The new node fits on compressed leaf mc->pg[top] as it is: the trunk
 * stays (index > 0) or the page is empty.  Returns -1, having changed
 * nothing, when there is no room.
 */
static int dl_pfx_add_fits(MDB_cursor *mc, const MDB_val *key, size_t ds, unsigned nflags,
	const void *dpart, size_t dlen, MDB_val *reserve, MDB_page *omp)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top], n = NUMKEYS(mp);
	size_t sh = 0;
	int rc;
	if (n) {
		if ((rc = dl_pfx_trunk_ok(env, mp)))
			return rc;
		MDB_node *n0 = NODEPTR(mp, 0);
		sh = dl_pfx_lcp(key->mv_data, key->mv_size, NODEKEY(mp, n0), n0->mn_ksize);
	}
	size_t nsz = dl_pfx_node_size(env, key->mv_size, sh, n == 0, dlen);
	if (SIZELEFT(mp) < nsz + sizeof(indx_t))
		return -1;
	unsigned char *dst = dl_page_open(mp, idx, nsz);
	dl_pfx_node_write(env, dst, key, sh, n == 0, ds, nflags, dpart, dlen);
	dl_pfx_pad_add(mp, key->mv_size);
	if (reserve)
		reserve->mv_data = omp ? (void *)((char *)omp + PAGEHDRSZ) :
			dl_leaf_data(env, (MDB_node *)dst);
	dl_pos_land(mc);
	return 0;
}

/* A new right page for an append that does not fit: the new key alone
 * starts it, stored raw as its trunk, and the left page stays full. */
static int dl_pfx_add_append_page(MDB_cursor *mc, const MDB_val *key, size_t ds,
	unsigned nflags, const void *dpart, size_t dlen)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top], *rp;
	int rc;
	if ((rc = dl_page_alloc(mc, 1, &rp)))
		return rc;
	dl_page_init(env, rp, P_LEAF);
	size_t nsz = dl_pfx_node_size(env, key->mv_size, 0, 1, dlen);
	unsigned char *dst = dl_page_open(rp, 0, nsz);
	dl_pfx_node_write(env, dst, key, 0, 1, ds, nflags, dpart, dlen);
	rp->mp_pad = (uint16_t)key->mv_size;
	mc->db->md_leaf_pages++;
	unsigned char sepbuf[DL_MAXKEY + 1];
	MDB_val sep = { key->mv_size, sepbuf };
	memcpy(sepbuf, key->mv_data, key->mv_size);
	if ((rc = dl_parent_add(mc, mc->top, mp->mp_pgno, &sep, rp->mp_pgno)))
		return rc;
	return dl_reseek_key(mc, &sep);
}

/* After a split of leaf mp into mp and rp at separator sep_key: count the
 * page, link rp in the parent and put mc back on key. */
static int dl_pfx_split_link(MDB_cursor *mc, MDB_page *mp, MDB_page *rp,
	const MDB_val *sep_key, const MDB_val *key)
{
	int rc;
	mc->db->md_leaf_pages++;
	/* Both may point into scratch or the page the parent update changes. */
	unsigned char sepbuf[DL_MAXKEY + 1], kb[DL_MAXKEY + 1];
	MDB_val sep = { sep_key->mv_size, sepbuf }, k2 = { key->mv_size, kb };
	memcpy(sepbuf, sep_key->mv_data, sep.mv_size);
	memcpy(kb, key->mv_data, key->mv_size);
	if ((rc = dl_parent_add(mc, mc->top, mp->mp_pgno, &sep, rp->mp_pgno)))
		return rc;
	return dl_reseek_key(mc, &k2);
}

/* The page's entries with the new one at index idx, in scratch: e[0..n]
 * from e[0..n), the key copied to the arena's spare slot.  Returns the
 * encoded page size. */
static size_t dl_pfx_entry_insert(MDB_env *env, dl_pent *e, unsigned n, unsigned idx,
	unsigned char *kcopy, const MDB_val *key, size_t ds, unsigned nflags, const void *dpart,
	size_t dlen)
{
	memcpy(kcopy, key->mv_data, key->mv_size);
	memmove(e + idx + 1, e + idx, (n - idx) * sizeof(dl_pent));
	e[idx].key.mv_data = kcopy;
	e[idx].key.mv_size = key->mv_size;
	e[idx].flags = (uint16_t)nflags;
	e[idx].dsize = (uint32_t)ds;
	e[idx].data = dpart;
	e[idx].dlen = dlen;
	n++;
	if (!idx)
		return dl_pfx_size(env, e, n);
	/* Same trunk: the loaded entries are measured already; only the new
	 * one is. */
	e[idx].s0 = dl_pfx_lcp(key->mv_data, key->mv_size, e[0].key.mv_data, e[0].key.mv_size);
	e[idx].nsz = dl_pfx_node_size(env, key->mv_size, e[idx].s0, 0, dlen);
	size_t total = PAGEHDRSZ;
	for (unsigned j = 0; j < n; j++)
		total += sizeof(indx_t) + e[j].nsz;
	return total;
}

/* Insert that changes more than one node: a split that keeps the left
 * page's nodes, a new trunk in place, or the page re-encoded whole (split
 * in two when it does not fit). */
static int dl_pfx_add_rebuild(MDB_cursor *mc, const MDB_val *key, size_t ds, unsigned nflags,
	const void *dpart, size_t dlen)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[mc->top], *rp;
	unsigned idx = mc->ki[mc->top], n = NUMKEYS(mp), s;
	unsigned char *copy, *arena;
	dl_pent *e;
	size_t asz, used;
	int rc;

	if ((rc = dl_pfx_work(txn, 1, n + 1, n, &copy, &e, &arena, &asz)))
		return rc;
	if (idx > 0) {
		rc = dl_pfx_split_keep(mc, key, ds, nflags, dpart, dlen, copy, e, arena, asz, &s,
			&rp);
		if (rc == 0)
			return dl_pfx_split_link(mc, mp, rp, &e[s].key, key);
		if (rc > 0)
			return rc;
	} else if (n && mc->dbx->cmp == dl_cmp_lex) {
		rc = dl_pfx_retrunk(mc, key, ds, nflags, dpart, dlen, copy, e, arena);
		if (rc == 0) {
			dl_pos_land(mc);
			return 0;
		}
		if (rc != -1)
			return rc;
	}
	if ((rc = dl_pfx_gather(env, mp, copy, e, arena, asz, &used)))
		return rc;
	size_t total = dl_pfx_entry_insert(env, e, n, idx, arena + used, key, ds, nflags, dpart,
		dlen);
	n++;
	if (total <= env->psize) {
		dl_pfx_write_sz(env, mp, env->psize, e, n);
		dl_pos_land(mc);
		return 0;
	}
	int fits;
	s = dl_pfx_split_point(env, e, n, total, env->psize, &fits);
	if (!fits)
		return MDB_PAGE_FULL;
	if ((rc = dl_page_alloc(mc, 1, &rp)))
		return rc;
	dl_page_init(env, rp, P_LEAF);
	dl_pfx_write_sz(env, mp, env->psize, e, s);
	dl_pfx_write_sz(env, rp, env->psize, e + s, n - s);
	return dl_pfx_split_link(mc, mp, rp, &e[s].key, key);
}

/*
 * Insert (key, node tail) at mc's index of a compressed leaf.  In place
 * when the trunk stays and the node fits; an append that does not fit
 * starts a new right page holding only the new node (the left page stays
 * as it is, full, as on plain DBs); anything else rewrites or splits.
 * reserve: return the data address.
 */
int dl_pfx_add(MDB_cursor *mc, const MDB_val *key, size_t ds, unsigned nflags,
	const void *dpart, size_t dlen, MDB_val *reserve, MDB_page *omp)
{
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top], n = NUMKEYS(mp);
	int rc;

	if (idx > 0 || n == 0) {
		rc = dl_pfx_add_fits(mc, key, ds, nflags, dpart, dlen, reserve, omp);
		if (rc != -1)
			return rc;
	}
	if (idx == n && n)
		rc = dl_pfx_add_append_page(mc, key, ds, nflags, dpart, dlen);
	else
		rc = dl_pfx_add_rebuild(mc, key, ds, nflags, dpart, dlen);
	if (rc)
		return rc;
	if (reserve) {
		MDB_page *lp = mc->pg[mc->top];
		MDB_node *nd = NODEPTR(lp, mc->ki[mc->top]);
		reserve->mv_data = omp ? (void *)((char *)omp + PAGEHDRSZ) :
			dl_leaf_data(mc->txn->env, nd);
	}
	return 0;
}

/* Most nodes dl_pfx_del_trunk re-encodes in one pass (a longer run takes
 * the whole-page rewrite). */
#define DL_PFX_RUN_MAX 64

/*
 * Remove nodes 0..m-1 of leaf mp, of sizes sz[0..m), in one pass: the node
 * area closes over every gap and the remaining pointers move down to index
 * 0, leaving the page as m single removals from the back would.  off
 * (room for m) and sz are reordered by offset here.
 */
static void dl_pfx_del_head(MDB_page *mp, unsigned m, indx_t *off, indx_t *sz)
{
	unsigned n = NUMKEYS(mp), j, k;
	/* The removed nodes by offset, highest first (insertion sort: m is small). */
	for (j = 0; j < m; j++) {
		indx_t o = mp->mp_ptrs[j], z = sz[j];
		for (k = j; k > 0 && off[k - 1] < o; k--) {
			off[k] = off[k - 1];
			sz[k] = sz[k - 1];
		}
		off[k] = o;
		sz[k] = z;
	}
	/* The bytes between removed node k + 1 (or upper) and removed node k
	 * move up by the sizes of removed nodes 0..k. */
	size_t up = MP_UPPER(mp), cum = 0;
	for (k = 0; k < m; k++) {
		cum += sz[k];
		size_t lo = k + 1 < m ? (size_t)off[k + 1] + sz[k + 1] : up;
		memmove((char *)mp + lo + cum, (char *)mp + lo, off[k] - lo);
	}
	for (j = m; j < n; j++) {
		size_t p = mp->mp_ptrs[j], shift = 0;
		for (k = 0; k < m && off[k] > p; k++)
			shift += sz[k];
		mp->mp_ptrs[j - m] = (indx_t)(p + shift);
	}
	MP_LOWER(mp) = (indx_t)(MP_LOWER(mp) - m * sizeof(indx_t));
	MP_UPPER(mp) = (indx_t)(up + cum);
	DL_ASSERT_PAGE_SPACE(mp);
	DL_ASSERT(dl_ptrs_in_node_area(mp));
}

/*
 * Delete of node 0 of compressed leaf mp (n >= 2) of a DB in lexicographic
 * key order without rewriting the page.  Node 1 (key K1, sharing s1 bytes
 * with the old trunk) becomes the trunk; a node sharing fewer than s1 bytes
 * with the old trunk shares the same with K1, so its bytes stay canonical,
 * and only the run right after node 1 that shares exactly s1 is re-encoded,
 * against K1 (each node only shrinks).  The new nodes are encoded into img
 * (a page of scratch) while the page is intact; then the old run goes in
 * one pass and the new nodes take its place.  Returns -1, having changed
 * nothing, when the whole-page rewrite is needed (a raw node on the page,
 * a run longer than DL_PFX_RUN_MAX).  img, e, arena: dl_pfx_work's scratch.
 */
static int dl_pfx_del_trunk(MDB_env *env, MDB_page *mp, unsigned char *img, dl_pent *e,
	unsigned char *arena)
{
	unsigned n = NUMKEYS(mp), m, j;
	indx_t off[DL_PFX_RUN_MAX], osz[DL_PFX_RUN_MAX];
	int raw, rc;

	if ((rc = dl_pfx_load_meta(env, mp, e, &raw)))
		return rc;
	if (raw)
		return -1;
	size_t s1 = e[1].s0, maxk = 0, koff = 0, ipos = 0;
	for (m = 2; m < n && e[m].s0 == s1; m++)
		;
	if (m > DL_PFX_RUN_MAX)
		return -1;
	for (j = m; j < n; j++)
		if (e[j].s0 >= s1)
			return -1;	/* out of order */
	for (j = 1; j < n; j++)
		if (e[j].key.mv_size > maxk)
			maxk = e[j].key.mv_size;
	size_t oldsz = 0, newsz = 0;
	for (j = 0; j < m; j++) {
		osz[j] = (indx_t)dl_node_size(env, mp, NODEPTR(mp, j));
		oldsz += osz[j];
		if (!j)
			continue;
		dl_pfx_key_copy(mp, j, &e[j], arena + koff);
		koff += e[j].key.mv_size;
		e[j].s0 = j == 1 ? 0 : dl_pfx_lcp(e[j].key.mv_data, e[j].key.mv_size,
			e[1].key.mv_data, e[1].key.mv_size);
		e[j].nsz = dl_pfx_node_size(env, e[j].key.mv_size, e[j].s0, j == 1, e[j].dlen);
		newsz += e[j].nsz;
	}
	if (newsz > oldsz + SIZELEFT(mp) + sizeof(indx_t))
		return -1;
	/* Encoded while the data parts are still on the page. */
	for (j = 1; j < m; j++) {
		dl_pfx_node_write(env, img + ipos, &e[j].key, e[j].s0, j == 1, e[j].dsize,
			e[j].flags, e[j].data, e[j].dlen);
		ipos += e[j].nsz;
	}
	dl_pfx_del_head(mp, m, off, osz);
	for (j = 1, ipos = 0; j < m; j++) {
		memcpy(dl_page_open(mp, j - 1, e[j].nsz), img + ipos, e[j].nsz);
		ipos += e[j].nsz;
	}
	mp->mp_pad = (uint16_t)(maxk > 65535 ? 65535 : maxk);
	return 0;
}

/* Remove entry idx of a compressed leaf: in place for idx >= 1; for idx 0
 * the old node 1 becomes the trunk (dl_pfx_del_trunk, else a rewrite). */
int dl_pfx_del(MDB_cursor *mc, MDB_page *mp, unsigned idx)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	unsigned n = NUMKEYS(mp);
	int rc;
	if (idx > 0) {
		MDB_node *nd = NODEPTR(mp, idx);
		size_t klen;
		if ((rc = dl_pfx_trunk_ok(env, mp)) || (rc = dl_pfx_declen(mp, nd, &klen)))
			return rc;
		dl_page_del_raw(mp, idx, dl_node_size(env, mp, nd));
		dl_pfx_pad_del(mp, klen);
		return 0;
	}
	unsigned char *copy, *arena;
	dl_pent *e;
	size_t asz, used;
	if ((rc = dl_pfx_work(txn, 1, n, n, &copy, &e, &arena, &asz)))
		return rc;
	if (n >= 2 && mc->dbx->cmp == dl_cmp_lex &&
	    (rc = dl_pfx_del_trunk(env, mp, copy, e, arena)) != -1)
		return rc;
	if ((rc = dl_pfx_gather(env, mp, copy, e, arena, asz, &used)))
		return rc;
	if (dl_pfx_size(env, e + 1, n - 1) > env->psize)
		return MDB_PAGE_FULL;	/* only possible with non-lexicographic orders */
	dl_pfx_write_sz(env, mp, env->psize, e + 1, n - 1);
	return 0;
}

/*
 * Rebalance two neighbouring compressed leaves L (child ridx-1) and R
 * (child ridx) of the page at plevel: merge R into L when the re-encoded
 * result fits, else move one entry towards mp.  *merged tells which.
 */
int dl_pfx_rebalance(MDB_cursor *mc, int plevel, MDB_page *L, MDB_page *R,
	unsigned ridx, MDB_page *mp, int *merged, int *split)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *parent = mc->pg[plevel];
	unsigned nl = NUMKEYS(L), nr = NUMKEYS(R);
	unsigned char *copies, *arena;
	dl_pent *e;
	size_t asz, ul, ur;
	int rc;
	*merged = 0;
	if ((rc = dl_pfx_work(txn, 2, nl + nr, nl + nr, &copies, &e, &arena, &asz)))
		return rc;
	if ((rc = dl_pfx_gather(env, L, copies, e, arena, asz, &ul)) ||
	    (rc = dl_pfx_gather(env, R, copies + env->psize, e + nl, arena + ul, asz - ul, &ur)))
		return rc;
	unsigned n = nl + nr;
	if (dl_pfx_size(env, e, n) <= env->psize) {
		dl_pfx_write_sz(env, L, env->psize, e, n);
		mc->db->md_leaf_pages--;
		if ((rc = dl_page_free(txn, R->mp_pgno, 1)))
			return rc;
		dl_page_del_raw(parent, ridx, dl_node_size(env, parent, NODEPTR(parent, ridx)));
		*merged = 1;
		return 0;
	}
	/* Move one entry across the boundary towards the underfull page. */
	unsigned s = (mp == L) ? nl + 1 : nl - 1;
	if (s < 1 || s >= n)
		return 0;
	if (dl_pfx_size(env, e, s) > env->psize || dl_pfx_size(env, e + s, n - s) > env->psize)
		return 0;	/* no room: leave it, the tree stays valid */
	dl_pfx_write_sz(env, L, env->psize, e, s);
	dl_pfx_write_sz(env, R, env->psize, e + s, n - s);
	unsigned char kb[DL_MAXKEY + 1];
	MDB_val nk = { e[s].key.mv_size, kb };
	memcpy(kb, e[s].key.mv_data, nk.mv_size);
	return dl_update_key(mc, plevel, ridx, &nk, split);
}
