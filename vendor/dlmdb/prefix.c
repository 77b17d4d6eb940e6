/*
 * prefix.c - the codec of DLMDB prefix-compressed leaves and dup sub-pages:
 * decoding keys, encoding single nodes for in-place edits, rewriting whole
 * pages, and choosing split points.  The page format, with every field's
 * offset, is described in prefix.h.  The tree-level glue is elsewhere:
 * pfxedit.c edits compressed leaves of a tree (insert, delete, split,
 * merge), dupwrite.c edits dup sub-pages, and btree.c searches compressed
 * leaves.
 */
#include "internal.h"

/* ------------------------------------------------------------------------- */
/* Reading                                                                   */
/* ------------------------------------------------------------------------- */

/* Trunk (node 0's raw key) of a page with at least one node. */
static inline void dl_pfx_trunk(MDB_page *mp, const unsigned char **t, size_t *tl)
{
	MDB_node *n0 = NODEPTR(mp, 0);
	*t = NODEKEY(mp, n0);
	*tl = n0->mn_ksize;
}

int dl_prefix_decode(MDB_page *mp, MDB_node *n, unsigned char *buf, MDB_val *out)
{
	const unsigned char *t, *e = NODEKEY(mp, n);
	size_t tl, l = n->mn_ksize, s, h;
	dl_pfx_trunk(mp, &t, &tl);
	int r = dl_pfx_parse(e, l, t, tl, &s, &h);
	if (r < 0)
		return MDB_CORRUPTED;
	if (r) {
		out->mv_size = l;
		out->mv_data = (void *)e;
		return 0;
	}
	size_t len = s + (l - h);
	if (len > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	dl_pfx_copy(buf, t, s);
	dl_pfx_copy(buf + s, e + h, l - h);
	out->mv_size = len;
	out->mv_data = buf;
	return 0;
}

/* Decoded length of node n (i >= 1) of compressed page mp. */
int dl_pfx_declen(MDB_page *mp, MDB_node *n, size_t *len)
{
	const unsigned char *t;
	size_t tl, s, h, l = n->mn_ksize;
	dl_pfx_trunk(mp, &t, &tl);
	int r = dl_pfx_parse(NODEKEY(mp, n), l, t, tl, &s, &h);
	if (r < 0)
		return MDB_CORRUPTED;
	*len = r ? l : s + (l - h);
	return 0;
}

/* The longest decoded key of compressed page mp, clamped to 65535 (its
 * mp_pad).  Undecodable nodes count with their stored length. */
unsigned dl_pfx_maxlen(MDB_page *mp)
{
	unsigned n = NUMKEYS(mp);
	size_t m = 0, len;
	if (!n)
		return 0;
	m = NODEPTR(mp, 0)->mn_ksize;
	for (unsigned i = 1; i < n; i++) {
		MDB_node *nd = NODEPTR(mp, i);
		if (dl_pfx_declen(mp, nd, &len))
			len = nd->mn_ksize;
		if (len > m)
			m = len;
	}
	return m > 65535 ? 65535 : (unsigned)m;
}

/* ------------------------------------------------------------------------- */
/* Single nodes (in-place edits at index >= 1)                               */
/* ------------------------------------------------------------------------- */

size_t dl_pfx_varint_put(unsigned char *p, size_t s)
{
	size_t n = dl_pfx_varint_len(s);
	for (size_t i = n; i-- > 0; s >>= 7)
		p[i] = (unsigned char)((s & 0x7f) | (i + 1 < n ? 0x80 : 0));
	return n;
}

/* Shared length of key with the trunk of a non-empty compressed page. */
size_t dl_pfx_shared(MDB_page *mp, const MDB_val *key)
{
	const unsigned char *t;
	size_t tl;
	dl_pfx_trunk(mp, &t, &tl);
	return dl_pfx_lcp(key->mv_data, key->mv_size, t, tl);
}

/* mp_pad after a key of klen bytes was added (stays the exact maximum). */
void dl_pfx_pad_add(MDB_page *mp, size_t klen)
{
	if (!mp->mp_pad && NUMKEYS(mp) > 1)
		mp->mp_pad = (uint16_t)dl_pfx_maxlen(mp);	/* unknown before */
	else if (klen > mp->mp_pad)
		mp->mp_pad = (uint16_t)(klen > 65535 ? 65535 : klen);
}

/* mp_pad after a key of klen bytes was removed: only a key as long as the
 * maximum can lower it.  Then another key of that length (the trunk is
 * tried first; pages of equal-length keys stop there) keeps it; otherwise
 * the page is measured again. */
void dl_pfx_pad_del(MDB_page *mp, size_t klen)
{
	unsigned n = NUMKEYS(mp), pad = mp->mp_pad;
	size_t len;
	if (klen < pad)
		return;
	if (klen == pad && pad) {
		for (unsigned i = 0; i < n; i++) {
			MDB_node *nd = NODEPTR(mp, i);
			if (!i)
				len = nd->mn_ksize;
			else if (dl_pfx_declen(mp, nd, &len))
				len = nd->mn_ksize;
			if (len == pad)
				return;
		}
	}
	mp->mp_pad = (uint16_t)dl_pfx_maxlen(mp);
}

/* ------------------------------------------------------------------------- */
/* Whole pages                                                               */
/* ------------------------------------------------------------------------- */

/*
 * Work memory for page rewrites, owned by the write txn and kept across
 * txns (one writer), separate from dl_txn_scratch: a page rewrite can run
 * while a duplicate rewrite holds its items there.
 */
void *dl_pfx_scratch(MDB_txn *txn, size_t size)
{
	if (size > txn->pfxbufsz) {
		size_t n = txn->pfxbufsz ? txn->pfxbufsz : 65536;
		while (n < size)
			n *= 2;
		unsigned char *p = realloc(txn->pfxbuf, n);
		if (!p)
			return NULL;
		txn->pfxbuf = p;
		txn->pfxbufsz = n;
	}
	return txn->pfxbuf;
}

/*
 * Measure e[0..n) as one page: e[i].s0 = shared length with e[0] (the
 * page's trunk), e[i].nsz = node size.  Returns the bytes (header
 * included) the page needs.  dl_pfx_write_sz lays out what was measured.
 */
size_t dl_pfx_size(MDB_env *env, dl_pent *e, unsigned n)
{
	size_t sz = PAGEHDRSZ;
	for (unsigned i = 0; i < n; i++) {
		e[i].s0 = i ? dl_pfx_lcp(e[i].key.mv_data, e[i].key.mv_size, e[0].key.mv_data,
			e[0].key.mv_size) : 0;
		e[i].nsz = dl_pfx_node_size(env, e[i].key.mv_size, e[i].s0, !i, e[i].dlen);
		sz += sizeof(indx_t) + e[i].nsz;
	}
	return sz;
}

/*
 * Lay e[0..n), as last measured by dl_pfx_size(env, e, n), out on mp
 * (flags and pgno kept, psz bytes): node 0 at the top, the others packed
 * downward in index order, mp_pad = the longest decoded key.  The sources
 * must not live in mp.
 */
void dl_pfx_write_sz(MDB_env *env, MDB_page *mp, size_t psz, const dl_pent *e, unsigned n)
{
	size_t off = psz, maxk = 0;
	MP_LOWER(mp) = (indx_t)(PAGEHDRSZ + 2 * n);
	for (unsigned i = 0; i < n; i++) {
		off -= e[i].nsz;
		dl_pfx_node_write(env, (unsigned char *)mp + off, &e[i].key, e[i].s0, !i,
			e[i].dsize, e[i].flags, e[i].data, e[i].dlen);
		mp->mp_ptrs[i] = (indx_t)off;
		if (e[i].key.mv_size > maxk)
			maxk = e[i].key.mv_size;
	}
	MP_UPPER(mp) = (indx_t)off;
	mp->mp_pad = (uint16_t)(maxk > 65535 ? 65535 : maxk);
}

/*
 * Check and measure every entry of compressed leaf mp into ents without
 * copying key bytes: key.mv_size is the decoded length (key.mv_data NULL),
 * flags, sizes and data parts (pointing into mp) are set, and s0 / nsz are
 * what dl_pfx_size(env, ents, n) would measure: a canonical node's varint is
 * exactly its shared length with the trunk, so only raw nodes need an lcp.
 * *raw = 1 when some node is raw (its re-encoding differs from its bytes).
 */
int dl_pfx_load_meta(MDB_env *env, MDB_page *mp, dl_pent *ents, int *raw)
{
	unsigned n = NUMKEYS(mp);
	size_t tl = 0;
	const unsigned char *t = NULL;
	int rc;
	*raw = 0;
	for (unsigned i = 0; i < n; i++) {
		MDB_node *nd = NODEPTR(mp, i);
		const unsigned char *e = NODEKEY(mp, nd);
		size_t l = nd->mn_ksize, s0 = 0;
		int r = 0;
		if ((rc = dl_node_check(env, mp, nd, 1)))
			return rc;
		if (i == 0) {
			if (l > DL_MAXKEY + 1)
				return MDB_BAD_VALSIZE;
			t = e;
			tl = l;
		} else {
			size_t s, h;
			r = dl_pfx_parse(e, l, t, tl, &s, &h);
			if (r < 0)
				return MDB_CORRUPTED;
			if (r) {
				s0 = dl_pfx_lcp(e, l, t, tl);
				*raw = 1;
			} else {
				l = s + (l - h);
				s0 = s;
			}
			if (l > DL_MAXKEY)
				return MDB_BAD_VALSIZE;
		}
		dl_pent *en = &ents[i];
		en->key.mv_data = NULL;
		en->key.mv_size = l;
		en->flags = nd->mn_flags;
		en->dsize = NODEDSZ(nd);
		en->dlen = (nd->mn_flags & F_BIGDATA) ? sizeof(pgno_t) : NODEDSZ(nd);
		en->data = (char *)nd + NODESZ + nd->mn_ksize + (nd->mn_ksize & env->pad);
		en->s0 = s0;
		en->nsz = dl_pfx_node_size(env, l, s0, i == 0, en->dlen);
		en->raw = r;
	}
	return 0;
}

/* Decode the key of node i of mp, measured by dl_pfx_load_meta into ent,
 * to dst (room for ent->key.mv_size bytes) and point ent->key at it. */
void dl_pfx_key_copy(MDB_page *mp, unsigned i, dl_pent *ent, unsigned char *dst)
{
	MDB_node *nd = NODEPTR(mp, i);
	const unsigned char *e = NODEKEY(mp, nd);
	size_t l = ent->key.mv_size;
	if (i == 0 || ent->raw) {
		dl_pfx_copy(dst, e, l);
	} else {
		/* Canonical: e = varint(s0) || suffix, l = s0 + suffix length. */
		size_t sl = l - ent->s0, h = nd->mn_ksize - sl;
		dl_pfx_copy(dst, NODEKEY(mp, NODEPTR(mp, 0)), ent->s0);
		dl_pfx_copy(dst + ent->s0, e + h, sl);
	}
	ent->key.mv_data = dst;
}

/*
 * Decode every entry of compressed leaf mp (a full page) into ents: keys
 * copied to arena (arenasz bytes), data parts pointing into mp, measured
 * as dl_pfx_load_meta measures them.
 */
int dl_pfx_load(MDB_env *env, MDB_page *mp, dl_pent *ents, unsigned char *arena,
	size_t arenasz)
{
	unsigned n = NUMKEYS(mp);
	size_t off = 0;
	int raw, rc;
	if ((rc = dl_pfx_load_meta(env, mp, ents, &raw)))
		return rc;
	for (unsigned i = 0; i < n; i++) {
		if (arenasz - off < DL_MAXKEY + 1)
			return MDB_PROBLEM;
		dl_pfx_key_copy(mp, i, &ents[i], arena + off);
		off += ents[i].key.mv_size;
	}
	return 0;
}

/*
 * Where to split entries e[0..n) over two pages of psz bytes: the number
 * that stay left.  total is dl_pfx_size(env, e, n), which the caller has
 * just measured (e[] holds that measure against e[0]).  The first split
 * past half the bytes is taken, then moved until both sides fit.
 * Under lexicographic order a key shares at least as much with any earlier
 * key of the right page as with e[0], so "sizes against e[0], plus the
 * right trunk stored raw" bounds the right page and each candidate costs
 * O(1); the chosen right side is then measured exactly once.  Other orders
 * fall back to measuring candidates.  On return both sides are measured
 * for dl_pfx_write_sz; *fits = 0 if no split fits.
 */
unsigned dl_pfx_split_point(MDB_env *env, dl_pent *e, unsigned n, size_t total, size_t psz,
	int *fits)
{
	size_t acc;
	*fits = 0;
	if (n < 2)
		return 1;
	unsigned s = dl_pfx_split_guess(env, e, n, total, psz, &acc);
	if (acc <= psz && dl_pfx_size(env, e + s, n - s) <= psz) {
		*fits = 1;
		return s;
	}
	for (unsigned t = 1; t < n; t++) {
		if (dl_pfx_size(env, e, t) <= psz && dl_pfx_size(env, e + t, n - t) <= psz) {
			*fits = 1;
			return t;
		}
	}
	return s;
}

/*
 * The first step of dl_pfx_split_point (n >= 2): the split it tries first,
 * chosen from the node sizes e[].nsz and key lengths alone (no key bytes
 * are read), with *left = the bytes the left page needs.
 */
unsigned dl_pfx_split_guess(MDB_env *env, const dl_pent *e, unsigned n, size_t total,
	size_t psz, size_t *left)
{
	size_t half = total / 2;
	unsigned s = 1;
	size_t acc = PAGEHDRSZ + sizeof(indx_t) + e[0].nsz;
	while (s < n - 1 && acc < half) {
		acc += sizeof(indx_t) + e[s].nsz;
		s++;
	}
	/* acc = left bytes with s entries */
	for (;;) {
		size_t es = sizeof(indx_t) + e[s].nsz;
		size_t rawd = sizeof(indx_t) +
			dl_pfx_node_size(env, e[s].key.mv_size, 0, 1, e[s].dlen);
		size_t rbound = total - acc + PAGEHDRSZ - es + rawd;
		if (acc > psz && s > 1) {
			s--;
			acc -= sizeof(indx_t) + e[s].nsz;
			continue;
		}
		if (rbound > psz && s < n - 1 && acc + es <= psz) {
			acc += es;
			s++;
			continue;
		}
		break;
	}
	*left = acc;
	return s;
}

/* Bytes (header included) a compressed page of the values items[0..n) needs
 * (dup values: no data part). */
size_t dl_pfx_items_size(MDB_env *env, const MDB_val *items, unsigned n)
{
	size_t sz = PAGEHDRSZ;
	for (unsigned i = 0; i < n; i++) {
		size_t s = i ? dl_pfx_lcp(items[i].mv_data, items[i].mv_size,
			items[0].mv_data, items[0].mv_size) : 0;
		sz += sizeof(indx_t) + dl_pfx_node_size(env, items[i].mv_size, s, !i, 0);
	}
	return sz;
}

/* Lay the values items[0..n) out compressed on a page or sub-page of psz
 * bytes, as dl_pfx_write_sz does. */
int dl_pfx_items_write(MDB_env *env, MDB_page *mp, size_t psz, const MDB_val *items, unsigned n)
{
	size_t off = psz, maxk = 0;
	MP_LOWER(mp) = (indx_t)(PAGEHDRSZ + 2 * n);
	for (unsigned i = 0; i < n; i++) {
		size_t s = i ? dl_pfx_lcp(items[i].mv_data, items[i].mv_size,
			items[0].mv_data, items[0].mv_size) : 0;
		off -= dl_pfx_node_size(env, items[i].mv_size, s, !i, 0);
		dl_pfx_node_write(env, (unsigned char *)mp + off, &items[i], s, !i, 0, 0, NULL, 0);
		mp->mp_ptrs[i] = (indx_t)off;
		if (items[i].mv_size > maxk)
			maxk = items[i].mv_size;
	}
	MP_UPPER(mp) = (indx_t)off;
	mp->mp_pad = (uint16_t)(maxk > 65535 ? 65535 : maxk);
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Dup sub-pages edited in place                                             */
/* ------------------------------------------------------------------------- */

/*
 * Insert value item at index idx >= 1 of a compressed sub-page with enough
 * free space: only the new value is encoded (against the trunk, which
 * stays), mp_pad stays exact.  Returns 1, changing nothing, when the free
 * space is too small.
 */
int dl_pfx_sub_insert(MDB_env *env, MDB_page *sp, unsigned idx, const MDB_val *item)
{
	unsigned n = NUMKEYS(sp);
	if (idx == 0 || idx > n || n == 0)
		return 1;
	size_t sh = dl_pfx_shared(sp, item);
	size_t nsz = dl_pfx_node_size(env, item->mv_size, sh, 0, 0);
	if (SIZELEFT(sp) < nsz + sizeof(indx_t))
		return 1;
	memmove(&sp->mp_ptrs[idx + 1], &sp->mp_ptrs[idx], (n - idx) * sizeof(indx_t));
	MP_UPPER(sp) = (indx_t)(MP_UPPER(sp) - nsz);
	sp->mp_ptrs[idx] = MP_UPPER(sp);
	MP_LOWER(sp) = (indx_t)(MP_LOWER(sp) + sizeof(indx_t));
	dl_pfx_node_write(env, (unsigned char *)sp + MP_UPPER(sp), item, sh, 0, 0, 0, NULL, 0);
	dl_pfx_pad_add(sp, item->mv_size);
	return 0;
}

/*
 * Remove value idx >= 1 of a compressed sub-page of sz bytes: no other
 * value changes (the trunk stays); the sub-page keeps its size and the
 * space becomes free space inside it, which readers accept (§3.14, as
 * DLMDB leaves it).  mp_pad stays exact.
 */
int dl_pfx_sub_remove(MDB_env *env, MDB_page *sp, size_t sz, unsigned idx)
{
	unsigned n = NUMKEYS(sp);
	if (idx == 0 || idx >= n)
		return MDB_PROBLEM;
	MDB_node *nd = NODEPTR(sp, idx);
	size_t klen, off = sp->mp_ptrs[idx], up = MP_UPPER(sp);
	size_t nsz = EVEN(NODESZ + nd->mn_ksize + (nd->mn_ksize & env->pad));
	int rc = dl_pfx_declen(sp, nd, &klen);
	if (rc)
		return rc;
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
	dl_pfx_pad_del(sp, klen);
	return 0;
}
