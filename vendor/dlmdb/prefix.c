/*
 * prefix.c - decoding keys of DLMDB prefix-compressed leaf pages.
 *
 * On a compressed leaf, node 0 (the trunk) holds its key raw; node i >= 1
 * holds varint(s) followed by the key bytes after the s bytes it shares
 * with the trunk.  The varint is big-endian base-128 (not LEB128).  A node
 * whose bytes are not a canonical encoding is a raw key (the newest DLMDB
 * reader rule, dlmdb-extensions N.3.3).  The encoder lives in btree.c
 * (dl_pfx_*).
 */
#include "internal.h"

/* Bytes the minimal big-endian base-128 encoding of s takes. */
static unsigned dl_varint_len(uint64_t s)
{
	unsigned n = 1;
	while (s >= 128) {
		s >>= 7;
		n++;
	}
	return n;
}

int dl_prefix_decode(MDB_page *mp, MDB_node *n, unsigned char *buf, MDB_val *out)
{
	MDB_node *t = NODEPTR(mp, 0);
	const unsigned char *trunk = NODEKEY(mp, t);
	size_t tl = t->mn_ksize;
	const unsigned char *e = NODEKEY(mp, n);
	size_t l = n->mn_ksize, h = 0, lim = l < 9 ? l : 9;
	uint64_t s = 0;
	int done = 0;

	if (!l)
		return MDB_CORRUPTED;
	while (h < lim) {
		unsigned char b = e[h++];
		s = (s << 7) | (b & 0x7f);
		if (!(b & 0x80)) {
			done = 1;
			break;
		}
	}
	if (!done)
		return MDB_CORRUPTED;
	/* Raw key unless this is exactly how DLMDB would have encoded it:
	 * shared length within the trunk, minimal varint, maximal prefix. */
	if (s > tl || h != dl_varint_len(s) ||
	    (h < l && s < tl && e[h] == trunk[s])) {
		out->mv_size = l;
		out->mv_data = (void *)e;
		return 0;
	}
	size_t len = (size_t)s + (l - h);
	if (len > DL_MAXKEY)
		return MDB_BAD_VALSIZE;
	memcpy(buf, trunk, (size_t)s);
	memcpy(buf + s, e + h, l - h);
	out->mv_size = len;
	out->mv_data = buf;
	return 0;
}
