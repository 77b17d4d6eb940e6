/*
 * prefix.h - the DLMDB prefix-compressed leaf format and its codec
 * (dlmdb-extensions §3.7-3.14).  Included by internal.h.
 *
 * Where the code is: prefix.c is the codec (decode keys, encode one node,
 * rewrite a whole page, choose split points, edit dup sub-pages in place);
 * pfxedit.c adds and removes entries of compressed leaves in a tree,
 * splitting, merging and moving entries between neighbours (dl_pfx_add,
 * dl_pfx_del, dl_pfx_rebalance); btree.c searches compressed leaves
 * (dl_pfx_search_lex and its kin) and calls into pfxedit.c.
 *
 * Which pages: every P_LEAF page that is not P_LEAF2 in a tree of a DB with
 * MDB_PREFIX_COMPRESSION (main-tree leaves, inline dup sub-pages, leaves of
 * dup sub-DBs).  Nothing on the page says so; the DB flag does (cursor flag
 * C_PREFIX).  Branch pages, LEAF2 pages and every data part are never
 * compressed.
 *
 * Compressed leaf page (or sub-page of NODEDSZ bytes), little-endian:
 *
 *   off 0   u64  pgno     page number (sub-page: the containing leaf's, informative)
 *   off 8   u16  mp_pad   the longest DECODED key on the page (0 if empty);
 *                         readers never rely on it, writers keep it exact
 *   off 10  u16  flags    P_LEAF (sub-page: P_LEAF|P_DIRTY|P_SUBP)
 *   off 12  u16  lower    16 + 2n
 *   off 14  u16  upper    lowest node offset
 *   off 16  u16  ptrs[n]  node offsets in key order, as on any leaf
 *
 * Leaf node i at ptrs[i] (8-byte header exactly as on any leaf):
 *
 *   off 0  u16 lo, off 2 u16 hi   data size (0 for dup sub-page values)
 *   off 4  u16 flags              F_BIGDATA / F_SUBDATA / F_DUPDATA
 *   off 6  u16 ksize              length of the STORED key bytes E
 *   off 8  E[ksize]               node 0 (the trunk T): the key itself;
 *                                 node i >= 1: varint(s) || K[s..]
 *   then one pad byte if ksize is odd (DLMDB layout), the data part, and a
 *   pad byte to an even node size.
 *
 * s is the length of the longest common prefix of K and T (always relative
 * to node 0, never to the previous key).  varint is big-endian base-128:
 * 7-bit groups, most significant first, 0x80 on every byte but the last
 * (0 -> 00, 127 -> 7F, 128 -> 81 00, 300 -> 82 2C).
 *
 * Reading node i >= 1: a node whose bytes are not exactly the encoding a
 * writer would produce (varint not terminated within min(ksize, 9) bytes:
 * corrupt; s > |T|, a non-minimal varint, or a suffix that starts with
 * T[s]: raw key E) is read as its stored bytes; otherwise the key is
 * T[0..s) || E[h..ksize).  This engine only ever writes that canonical form.
 *
 * Writing: insert or delete at index >= 1 touches only that node (the
 * trunk is unchanged, so every other encoding stays canonical); a new node 0
 * or a deleted node 0 re-encodes, against the new trunk, the nodes whose
 * shared length with the trunk changes (the others keep their bytes), or
 * the whole page when those do not fit in place.  Splits,
 * merges and moves rewrite the pages involved, each against its own first
 * key; an append past a full page's last key starts a new page instead.
 */
#ifndef DLMDB_PREFIX_CODEC_H
#define DLMDB_PREFIX_CODEC_H

/* One decoded entry of a compressed page being rewritten. */
typedef struct dl_pent {
	MDB_val	key;		/* full (decoded) key */
	uint16_t flags;		/* node flags */
	uint32_t dsize;		/* node data size field */
	const void *data;	/* data part (NULL: leave uninitialised, MDB_RESERVE) */
	size_t	dlen;		/* data part length on the page */
	size_t	s0;		/* dl_pfx_size: shared length with the run's first entry */
	size_t	nsz;		/* dl_pfx_size: node size on the page */
	int	raw;		/* dl_pfx_load_meta: a node i >= 1 read as its stored bytes */
} dl_pent;

/*
 * Copy len bytes, inline for the short lengths keys and their suffixes
 * usually have (no library call); overlapping 8-, 4- or 2-byte moves never
 * touch a byte outside [0, len) of either buffer.
 */
static inline __attribute__((always_inline)) void dl_pfx_copy(unsigned char *dst,
	const unsigned char *src, size_t len)
{
	uint64_t a, b;
	uint32_t x, y;
	if (len > 16) {
		memcpy(dst, src, len);
	} else if (len >= 8) {
		memcpy(&a, src, 8);
		memcpy(&b, src + len - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	} else if (len >= 4) {
		memcpy(&x, src, 4);
		memcpy(&y, src + len - 4, 4);
		memcpy(dst, &x, 4);
		memcpy(dst + len - 4, &y, 4);
	} else if (len >= 2) {
		uint16_t u, v;
		memcpy(&u, src, 2);
		memcpy(&v, src + len - 2, 2);
		memcpy(dst, &u, 2);
		memcpy(dst + len - 2, &v, 2);
	} else if (len) {
		dst[0] = src[0];
	}
}

/* Bytes the minimal varint of s takes. */
static inline size_t dl_pfx_varint_len(size_t s)
{
	size_t n = 1;
	while (s >= 128) {
		s >>= 7;
		n++;
	}
	return n;
}

/* Length of the common prefix of a[0..al) and b[0..bl). */
static inline size_t dl_pfx_lcp(const unsigned char *a, size_t al, const unsigned char *b,
	size_t bl)
{
	size_t n = al < bl ? al : bl, i = 0;
	while (i + 8 <= n) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + ((size_t)__builtin_ctzll(x ^ y) >> 3);
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/*
 * Parse the stored bytes e[0..l) of a node i >= 1 against trunk t[0..tl).
 * Returns 0 with *sp = shared length and *hp = varint length when e is the
 * canonical encoding, 1 when e is to be read as a raw key, -1 when corrupt.
 */
static inline __attribute__((always_inline)) int dl_pfx_parse_inl(const unsigned char *e,
	size_t l, const unsigned char *t, size_t tl, size_t *sp, size_t *hp)
{
	size_t s, h;
	if (!l)
		return -1;
	if (e[0] < 0x80) {
		s = e[0];
		h = 1;
	} else {
		size_t lim = l < 9 ? l : 9;
		uint64_t v = 0;
		int done = 0;
		h = 0;
		while (h < lim) {
			unsigned char b = e[h++];
			v = (v << 7) | (b & 0x7f);
			if (!(b & 0x80)) {
				done = 1;
				break;
			}
		}
		if (!done)
			return -1;
		if (v > tl)
			return 1;
		s = (size_t)v;
		if (h != dl_pfx_varint_len(s))
			return 1;
	}
	if (s > tl || (h < l && s < tl && e[h] == t[s]))
		return 1;
	*sp = s;
	*hp = h;
	return 0;
}

/* dl_pfx_parse_inl where the compiler decides whether to inline it (the
 * searches); the cursor step forces it into its one frame. */
static inline int dl_pfx_parse(const unsigned char *e, size_t l, const unsigned char *t,
	size_t tl, size_t *sp, size_t *hp)
{
	return dl_pfx_parse_inl(e, l, t, tl, sp, hp);
}

/*
 * memcmp's sign for a[0..m) and b[0..m), inline: the parts a probe
 * compares are the few bytes past the shared prefix, where a library call
 * would cost more than the comparison.  8 bytes at a time (as big-endian
 * numbers), then byte by byte.
 */
static inline int dl_pfx_bytes_cmp(const unsigned char *a, const unsigned char *b, size_t m)
{
	while (m >= 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
		a += 8;
		b += 8;
		m -= 8;
	}
	for (; m; a++, b++, m--)
		if (*a != *b)
			return *a < *b ? -1 : 1;
	return 0;
}

/*
 * Lexicographic comparison of key with the decoded key of node bytes
 * e[0..l) (node i >= 1) without decoding it; p = lcp(key, trunk).  Bytes
 * below min(p, s) are known equal; a node with s > p differs from key at
 * byte p exactly where the trunk does.  *bad is set on a corrupt node.
 */
static inline int dl_pfx_cmp_lex(const MDB_val *key, size_t p, const unsigned char *t,
	size_t tl, const unsigned char *e, size_t l, int *bad)
{
	const unsigned char *k = key->mv_data;
	size_t kl = key->mv_size, s, h;
	int r = dl_pfx_parse(e, l, t, tl, &s, &h);
	if (r) {
		if (r < 0) {
			*bad = 1;
			return 0;
		}
		MDB_val raw = { l, (void *)e };
		return dl_lex(key, &raw);
	}
	if (p < s)
		return p == kl ? -1 : (k[p] < t[p] ? -1 : 1);
	size_t rest = kl - s, sl = l - h, m = rest < sl ? rest : sl;
	int c = dl_pfx_bytes_cmp(k + s, e + h, m);
	if (c)
		return c;
	return rest < sl ? -1 : rest > sl;
}

/* Lexicographic comparison of key with the trunk, given p = lcp(key, trunk). */
static inline int dl_pfx_cmp_trunk(const MDB_val *key, size_t p, const unsigned char *t,
	size_t tl)
{
	size_t kl = key->mv_size;
	if (p == kl)
		return p == tl ? 0 : -1;
	if (p == tl)
		return 1;
	return ((const unsigned char *)key->mv_data)[p] < t[p] ? -1 : 1;
}

/*
 * A cursor's decoded key of node i of compressed page mp when kdec already
 * holds it (see dl_pfx_cursor_key): 1 with key set, else 0.
 */
static inline int dl_pfx_cursor_cached(MDB_cursor *mc, MDB_page *mp, unsigned i, MDB_val *key)
{
	MDB_txn *txn = mc->txn;
	if (mc->kc_pg != mp || mc->kc_idx != i || !(txn->flags & TXN_RDONLY) ||
	    mc->kc_txnid != txn->txnid)
		return 0;
	key->mv_size = mc->kc_len;
	key->mv_data = mc->kdec;
	return 1;
}

/*
 * The decoded key of node n = index i >= 1 of compressed page mp, for a
 * cursor step: the result is in mc->kdec (raw nodes: in the page), valid
 * until the cursor's next operation.  In a read txn the page cannot change,
 * so what kdec holds is remembered (the kc_ fields): the same node again
 * costs nothing, and a node of the same page copies from the trunk only
 * the bytes kdec does not already hold, then its own suffix.  A scan of a
 * page thus copies the trunk about once per page visit, not once per key.
 * Write txns edit pages in place and always decode in full.  The caller
 * has checked that node n lies inside the page; the trunk (node 0) is
 * checked here, once per page visit: a page kdec remembers had its trunk
 * checked when it was decoded, and cannot have changed since.
 */
static inline __attribute__((always_inline)) int dl_pfx_cursor_key(MDB_cursor *mc, MDB_page *mp, unsigned i, MDB_node *n, MDB_val *key)
{
	MDB_txn *txn = mc->txn;
	int keep = (txn->flags & TXN_RDONLY) != 0;
	size_t tv = 0;
	if (keep && mc->kc_pg == mp && mc->kc_txnid == txn->txnid) {
		if (mc->kc_idx == i) {
			key->mv_size = mc->kc_len;
			key->mv_data = mc->kdec;
			return 0;
		}
		tv = mc->kc_tv;
	} else {
		size_t off0 = mp->mp_ptrs[0], psize = txn->env->psize;
		if ((off0 & 1) || off0 < MP_LOWER(mp) || off0 + NODESZ > psize ||
		    off0 + NODESZ + ((MDB_node *)((char *)mp + off0))->mn_ksize > psize)
			return MDB_CORRUPTED;
	}
	MDB_node *n0 = NODEPTR(mp, 0);
	const unsigned char *t = NODEKEY(mp, n0), *e = NODEKEY(mp, n);
	size_t tl = n0->mn_ksize, l = n->mn_ksize, s, h;
	int r = dl_pfx_parse_inl(e, l, t, tl, &s, &h);
	if (r < 0)
		return MDB_CORRUPTED;
	if (r) {
		/* Raw key: read in place; kdec keeps what it held. */
		key->mv_size = l;
		key->mv_data = (void *)e;
		return 0;
	}
	size_t len = s + (l - h);
	if (len > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	if (s > tv)
		dl_pfx_copy(mc->kdec + tv, t + tv, s - tv);
	dl_pfx_copy(mc->kdec + s, e + h, l - h);
	key->mv_size = len;
	key->mv_data = mc->kdec;
	if (keep) {
		/* A non-empty suffix differs from the trunk at byte s (canonical
		 * form); an empty one leaves kdec's trunk bytes past s intact. */
		mc->kc_pg = mp;
		mc->kc_txnid = txn->txnid;
		mc->kc_idx = i;
		mc->kc_len = (unsigned)len;
		mc->kc_tv = (unsigned)(l == h && tv > s ? tv : s);
	} else {
		mc->kc_pg = NULL;
	}
	return 0;
}

/*
 * The common case of dl_pfx_cursor_key in a scan, inline in the cursor
 * step: kdec already holds a key of page mp, whose trunk was checked when
 * that was decoded (the caller has compared kc_pg and kc_txnid in a read
 * txn), and node n (index i >= 1) lies inside the page that ends at end,
 * key and value.  Taken when the node stores a shared length below 128
 * (one varint byte), is canonical, and has a suffix of at most 16 bytes:
 * the trunk bytes kdec lacks and the suffix are then copied as whole
 * 16-byte blocks (what lands past the key's end is not part of it, so
 * kdec keeps only the trunk's first s bytes), and the result is 1 with
 * key set.  0: nothing changed, dl_pfx_cursor_key decides (raw, corrupt
 * and long cases).
 */
static inline __attribute__((always_inline)) int dl_pfx_cursor_step_key(MDB_cursor *mc,
	MDB_page *mp, unsigned i, MDB_node *n, const char *end, MDB_val *key)
{
	const unsigned char *e = n->mn_data;
	const MDB_node *n0 = (const MDB_node *)((const char *)mp + mp->mp_ptrs[0]);
	const unsigned char *t = n0->mn_data;
	size_t l = n->mn_ksize, tl = n0->mn_ksize, tv = mc->kc_tv, s;
	/* l - 1 wraps for l = 0: one test for an empty and a long node. */
	if (l - 1 > 16 || (const char *)e + 17 > end || (s = e[0]) >= 0x80 || s > tl)
		return 0;
	/* A suffix starting with T[s] is read raw; with an empty suffix e[1]
	 * lies past the key (inside the page), and a match only sends the
	 * node to the full decode. */
	if (s < tl && e[1] == t[s])
		return 0;
	if (s > tv) {
		if (s - tv > 16 || (const char *)t + tv + 16 > end)
			return 0;
		memcpy(mc->kdec + tv, t + tv, 16);
	}
	memcpy(mc->kdec + s, e + 1, 16);
	size_t len = s + l - 1;
	key->mv_size = len;
	key->mv_data = mc->kdec;
	mc->kc_idx = i;
	mc->kc_len = (unsigned)len;
	mc->kc_tv = (unsigned)s;
	return 1;
}

/* prefix.c: reading */
int  dl_prefix_decode(MDB_page *mp, MDB_node *n, unsigned char *buf, MDB_val *out);
int  dl_pfx_declen(MDB_page *mp, MDB_node *n, size_t *len);
unsigned dl_pfx_maxlen(MDB_page *mp);

/* prefix.c: writing single nodes in place */
size_t dl_pfx_varint_put(unsigned char *p, size_t s);
size_t dl_pfx_shared(MDB_page *mp, const MDB_val *key);
void dl_pfx_pad_add(MDB_page *mp, size_t klen);
void dl_pfx_pad_del(MDB_page *mp, size_t klen);

/* Writing single nodes, inline: every put into a compressed leaf writes one. */

/* Stored key length of a key of klen bytes sharing s with the trunk. */
static inline size_t dl_pfx_klen(size_t klen, size_t s, int trunk)
{
	return trunk ? klen : dl_pfx_varint_len(s) + klen - s;
}

/* Bytes a leaf node takes: key klen stored raw (trunk) or as varint(s) ||
 * suffix, then a data part of dlen bytes. */
static inline size_t dl_pfx_node_size(MDB_env *env, size_t klen, size_t s, int trunk,
	size_t dlen)
{
	size_t kl = dl_pfx_klen(klen, s, trunk);
	return EVEN(NODESZ + kl + (kl & env->pad) + dlen);
}

/* Write a leaf node at dst (layout as dl_pfx_node_size); returns its size.
 * dpart NULL leaves the data area to the caller (MDB_RESERVE). */
static inline size_t dl_pfx_node_write(MDB_env *env, unsigned char *dst, const MDB_val *key,
	size_t s, int trunk, size_t dsize, unsigned nflags, const void *dpart, size_t dlen)
{
	MDB_node *nd = (MDB_node *)dst;
	size_t kl = dl_pfx_klen(key->mv_size, s, trunk), k = NODESZ;
	node_set_dsize(nd, dsize);
	nd->mn_flags = (uint16_t)nflags;
	nd->mn_ksize = (uint16_t)kl;
	if (trunk) {
		dl_pfx_copy(dst + k, key->mv_data, key->mv_size);
		k += key->mv_size;
	} else {
		if (s < 128)
			dst[k++] = (unsigned char)s;
		else
			k += dl_pfx_varint_put(dst + k, s);
		dl_pfx_copy(dst + k, (const unsigned char *)key->mv_data + s, key->mv_size - s);
		k += key->mv_size - s;
	}
	if (kl & env->pad)
		dst[k++] = 0;
	if (dpart)
		dl_pfx_copy(dst + k, dpart, dlen);
	k += dlen;
	if (k & 1)
		dst[k++] = 0;
	return k;
}

/* prefix.c: whole-page rewrites */
void  *dl_pfx_scratch(MDB_txn *txn, size_t size);
size_t dl_pfx_size(MDB_env *env, dl_pent *e, unsigned n);
void   dl_pfx_write_sz(MDB_env *env, MDB_page *mp, size_t psz, const dl_pent *e, unsigned n);
int    dl_pfx_load(MDB_env *env, MDB_page *mp, dl_pent *ents, unsigned char *arena,
	size_t arenasz);
int    dl_pfx_load_meta(MDB_env *env, MDB_page *mp, dl_pent *ents, int *raw);
void   dl_pfx_key_copy(MDB_page *mp, unsigned i, dl_pent *ent, unsigned char *dst);
unsigned dl_pfx_split_guess(MDB_env *env, const dl_pent *e, unsigned n, size_t total,
	size_t psz, size_t *left);
unsigned dl_pfx_split_point(MDB_env *env, dl_pent *e, unsigned n, size_t total, size_t psz,
	int *fits);
size_t dl_pfx_items_size(MDB_env *env, const MDB_val *items, unsigned n);
int    dl_pfx_items_write(MDB_env *env, MDB_page *mp, size_t psz, const MDB_val *items,
	unsigned n);

/* prefix.c: dup sub-pages edited in place */
int dl_pfx_sub_insert(MDB_env *env, MDB_page *sp, unsigned idx, const MDB_val *item);
int dl_pfx_sub_remove(MDB_env *env, MDB_page *sp, size_t sz, unsigned idx);

/* pfxedit.c: entries added to and removed from compressed leaves of a tree */
int dl_pfx_add(MDB_cursor *mc, const MDB_val *key, size_t ds, unsigned nflags,
	const void *dpart, size_t dlen, MDB_val *reserve, MDB_page *omp);
int dl_pfx_del(MDB_cursor *mc, MDB_page *mp, unsigned idx);
int dl_pfx_rebalance(MDB_cursor *mc, int plevel, MDB_page *L, MDB_page *R, unsigned ridx,
	MDB_page *mp, int *merged, int *split);

#endif /* DLMDB_PREFIX_CODEC_H */
