/*
 * layout.h - the on-disk format of a data file, structure by structure,
 * with the offset of every field (read it beside the specs lmdb-format.md
 * and dlmdb-extensions.md).  In-memory structures live in internal.h.
 *
 *   STRUCTURE                    WHERE                         SIZE
 *   page header                  start of every page           16
 *   node (branch, leaf)          at a page's pointer           8 + key + data
 *   counted branch node          P_COUNTED branch pages        16 + key
 *   meta page body               pages 0 and 1, offset 16      136
 *   DB record (MDB_db)           meta, named DBs, dup sub-DBs  48
 *   free-list record             leaves of the FREE_DBI tree   8 + 8(n+1)
 *   duplicate sub-page           data of an F_DUPDATA node     NODEDSZ
 *   prefix-compressed leaf       leaves of compressed DBs      page
 *
 * All on-disk integers are little-endian host integers (x86-64 / aarch64).
 * Fields inside nodes are only 2-byte aligned, so every multi-byte read or
 * write of such a field goes through memcpy (the compiler turns it into a
 * plain load on targets that allow unaligned access).
 */
#ifndef DLMDB_LAYOUT_H
#define DLMDB_LAYOUT_H

#include "lmdb.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t pgno_t;
typedef uint64_t txnid_t;
typedef uint16_t indx_t;

#define P_INVALID	((pgno_t)~(pgno_t)0)

#define DL_MAGIC	0xBEEFC0DEu
#define DL_MAXKEY	511		/* key / DUPSORT item limit we write */
#define DL_FREE_DBI	0
#define DL_MAIN_DBI	1
#define DL_CORE_DBS	2

/* Data format versions we understand. */
#define DL_VERSION_LMDB	1	/* stock LMDB, or DLMDB before v2 (padded) */
#define DL_VERSION_DLMDB	2	/* newest DLMDB: always padded */

/* ------------------------------------------------------------------------- */
/* Page header (16 bytes at the start of every page but overflow tails)      */
/* ------------------------------------------------------------------------- */
/*
 *   OFFSET  SIZE  FIELD   DESCRIPTION
 *      0      8   pgno    own page number (sub-pages: meaningless)
 *      8      2   pad     LEAF2: item size; prefix-compressed leaf or
 *                         sub-page: longest decoded key; otherwise unused
 *     10      2   flags   P_* bits below
 *     12      2   lower   end of the node pointer array (16 + 2*n)
 *     14      2   upper   start of the node area
 *     12      4   pages   overflow head only: run length (overlays lower/upper)
 *     16     2*n  ptrs    u16 node offsets from page start, in key order;
 *                         LEAF2 pages have none: item i is at 16 + i*pad
 *
 * Invariants of a page the engine writes: 16 <= lower <= upper <= page
 * size; every pointer is even, >= upper, and its node lies inside the
 * page; the nodes are in key order of their pointers.
 *
 * Overflow pages: a head page (flags P_OVERFLOW, pages = run length) whose
 * value starts at offset 16, followed by pages-1 tail pages without header.
 */
/*
 * Packed (alignment 1): duplicate sub-pages stored after an odd-length key
 * in the stock layout are only byte-aligned, and they are read in place so
 * returned items keep pointing into the map.  On x86-64 and aarch64 the
 * compiler still emits plain loads.
 */
typedef struct __attribute__((packed)) MDB_page {
	pgno_t	mp_pgno;
	uint16_t mp_pad;
	uint16_t mp_flags;
	union __attribute__((packed)) {
		struct __attribute__((packed)) { indx_t lower, upper; } b;
		uint32_t pages;
	} mp_u;
	indx_t	mp_ptrs[];
} MDB_page;

#define PAGEHDRSZ	16u

#define P_BRANCH	0x01
#define P_LEAF		0x02
#define P_OVERFLOW	0x04
#define P_META		0x08
#define P_DIRTY		0x10	/* in memory; kept only inside sub-pages on disk */
#define P_LEAF2		0x20
#define P_SUBP		0x40
#define P_COUNTED	0x80	/* DLMDB: branch nodes carry an 8-byte count */

#define MP_LOWER(p)	((p)->mp_u.b.lower)
#define MP_UPPER(p)	((p)->mp_u.b.upper)
#define NUMKEYS(p)	((unsigned)(MP_LOWER(p) - PAGEHDRSZ) >> 1)
#define SIZELEFT(p)	((unsigned)(MP_UPPER(p) - MP_LOWER(p)))
#define IS_BRANCH(p)	(((p)->mp_flags & P_BRANCH) != 0)
#define IS_LEAF(p)	(((p)->mp_flags & P_LEAF) != 0)
#define IS_LEAF2(p)	(((p)->mp_flags & P_LEAF2) != 0)
#define IS_OVERFLOW(p)	(((p)->mp_flags & P_OVERFLOW) != 0)
#define IS_COUNTED(p)	(((p)->mp_flags & P_COUNTED) != 0)

#define EVEN(n)		(((n) + 1u) & ~(size_t)1)

/* ------------------------------------------------------------------------- */
/* Nodes (branch and leaf entries)                                           */
/* ------------------------------------------------------------------------- */
/*
 *   OFFSET  SIZE   FIELD  LEAF NODE               BRANCH NODE
 *      0      2    lo     data size bits 0-15     child pgno bits 0-15
 *      2      2    hi     data size bits 16-31    child pgno bits 16-31
 *      4      2    flags  F_* bits                child pgno bits 32-47
 *      6      2    ksize  key length              key length
 *      8    ksize  key    key bytes               key bytes (plain branch)
 *   8+K      dsize data   value, or 8-byte overflow pgno (F_BIGDATA), or
 *                         48-byte DB record (F_SUBDATA), or sub-page
 *                         (F_DUPDATA alone)
 *
 * K is ksize in the stock layout and EVEN(ksize) in the padded (DLMDB)
 * layouts: one pad byte follows an odd-length key.  Every node is rounded
 * to an even size.
 *
 * Counted branch node (pages with P_COUNTED, DLMDB):
 *
 *   OFFSET  SIZE   FIELD  DESCRIPTION
 *      0      6    lo/hi/flags  child pgno, as on any branch node
 *      6      2    ksize  key length
 *      8      8    count  u64 entries in the child's subtree (queries in count.c, repair in countfix.c)
 *     16    ksize  key    key bytes, padded to an even length
 *
 * The padding is a property of the environment (env->pad = 1 for DLMDB
 * layouts, 0 for stock LMDB) and only moves leaf data; branch nodes end at
 * the key and are rounded to even size in both layouts.
 */
typedef struct __attribute__((packed)) MDB_node {
	uint16_t mn_lo, mn_hi, mn_flags, mn_ksize;
	uint8_t  mn_data[];
} MDB_node;

#define NODESZ		8u
#define F_BIGDATA	0x01
#define F_SUBDATA	0x02
#define F_DUPDATA	0x04

#define NODEPTR(p, i)	((MDB_node *)((char *)(p) + (p)->mp_ptrs[i]))
/* Offset of the key from the node start: counted branch pages hold a count first. */
#define NODEKOFF(p)	(NODESZ + (((p)->mp_flags & P_COUNTED) >> 4))
#define NODEKEY(p, n)	((void *)((char *)(n) + NODEKOFF(p)))
#define NODEKSZ(n)	((n)->mn_ksize)
#define NODEDSZ(n)	((uint32_t)(n)->mn_lo | ((uint32_t)(n)->mn_hi << 16))
#define NODEPGNO(n)	((pgno_t)(n)->mn_lo | ((pgno_t)(n)->mn_hi << 16) | \
			 ((pgno_t)(n)->mn_flags << 32))

static inline void node_set_pgno(MDB_node *n, pgno_t pg)
{
	n->mn_lo = (uint16_t)pg;
	n->mn_hi = (uint16_t)(pg >> 16);
	n->mn_flags = (uint16_t)(pg >> 32);
}

static inline void node_set_dsize(MDB_node *n, size_t sz)
{
	n->mn_lo = (uint16_t)sz;
	n->mn_hi = (uint16_t)(sz >> 16);
}

static inline uint64_t dl_get64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void dl_put64(void *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* ------------------------------------------------------------------------- */
/* Database record (48 bytes): meta page, named DBs, dup sub-databases       */
/* ------------------------------------------------------------------------- */
/*
 *   OFFSET  SIZE  FIELD              DESCRIPTION
 *      0      4   md_pad             FREE_DBI in meta: page size;
 *                                    DUPFIXED sub-DB: item size
 *      4      2   md_flags           persistent DB flags (FREE_DBI in meta:
 *                                    never interpreted)
 *      6      2   md_depth           tree height, 0 = empty
 *      8      8   md_branch_pages
 *     16      8   md_leaf_pages
 *     24      8   md_overflow_pages
 *     32      8   md_entries
 *     40      8   md_root            P_INVALID when empty
 */
typedef struct MDB_db {
	uint32_t md_pad;
	uint16_t md_flags;
	uint16_t md_depth;
	pgno_t	md_branch_pages;
	pgno_t	md_leaf_pages;
	pgno_t	md_overflow_pages;
	uint64_t md_entries;
	pgno_t	md_root;
} MDB_db;

/* DB flag bits a record may carry. */
#define DL_PERSISTENT_FLAGS	(MDB_REVERSEKEY|MDB_DUPSORT|MDB_INTEGERKEY| \
	MDB_DUPFIXED|MDB_INTEGERDUP|MDB_REVERSEDUP|MDB_COUNTED|MDB_PREFIX_COMPRESSION)
#define DL_STOCK_FLAGS	(MDB_REVERSEKEY|MDB_DUPSORT|MDB_INTEGERKEY| \
	MDB_DUPFIXED|MDB_INTEGERDUP|MDB_REVERSEDUP)

/* ------------------------------------------------------------------------- */
/* Meta page body (starts at page offset 16; 136 bytes)                      */
/* ------------------------------------------------------------------------- */
/*
 *   OFFSET  SIZE  FIELD       DESCRIPTION (offsets from the page start)
 *      0     16   header      page header, flags P_META, pgno 0 or 1
 *     16      4   mm_magic    0xBEEFC0DE
 *     20      4   mm_version  1 (LMDB / old DLMDB) or 2 (newest DLMDB)
 *     24      8   mm_address  fixed map address or 0
 *     32      8   mm_mapsize  largest map size committed so far
 *     40     48   mm_dbs[0]   FREE_DBI record (md_pad = page size)
 *     88     48   mm_dbs[1]   MAIN_DBI record
 *    136      8   mm_last_pg  highest page in use
 *    144      8   mm_txnid    transaction that wrote this meta
 * A commit rewrites only page bytes 32..151.  The current meta is the valid
 * one of pages 0 and 1 with the larger txnid.
 */
typedef struct MDB_meta {
	uint32_t mm_magic;
	uint32_t mm_version;
	uint64_t mm_address;
	uint64_t mm_mapsize;
	MDB_db	mm_dbs[DL_CORE_DBS];
	pgno_t	mm_last_pg;
	txnid_t	mm_txnid;
} MDB_meta;

#define METAOFF		PAGEHDRSZ
#define METADATA(p)	((MDB_meta *)((char *)(p) + PAGEHDRSZ))
#define META_WRITE_OFF	32u	/* first byte a commit rewrites */
#define META_WRITE_LEN	120u	/* bytes 32..151 */

/* ------------------------------------------------------------------------- */
/* Free-list record (a leaf entry of the FREE_DBI tree)                      */
/* ------------------------------------------------------------------------- */
/*
 *   KEY     OFFSET  SIZE  DESCRIPTION
 *              0      8   txnid of the transaction that freed the pages
 *   DATA    OFFSET  SIZE  DESCRIPTION
 *              0      8   n, the number of page numbers that follow
 *              8     8*n  page numbers, strictly descending
 * Bytes past (n + 1) * 8 are reserved space and are ignored (see freelist.c).
 */

/* ------------------------------------------------------------------------- */
/* Duplicate sub-page (the data of a leaf node with F_DUPDATA, no F_SUBDATA) */
/* ------------------------------------------------------------------------- */
/*
 * A small page of NODEDSZ bytes stored inside the leaf node, holding the
 * key's duplicates as its keys (with empty data):
 *
 *   OFFSET  SIZE  FIELD   DESCRIPTION
 *      0      8   pgno    meaningless (writers store the containing leaf's)
 *      8      2   pad     DUPFIXED: item size; compressed: longest item
 *     10      2   flags   P_LEAF|P_DIRTY|P_SUBP, plus P_LEAF2 for DUPFIXED
 *     12      2   lower   16 + 2*n
 *     14      2   upper   start of the node area
 *     16     2*n  ptrs    node offsets from the SUB-PAGE start, in order
 * The sub-page may sit at an odd address in the stock layout, which is why
 * MDB_page is packed.  When it outgrows its limit the duplicates move to a
 * sub-database and the node's data becomes a 48-byte DB record
 * (F_DUPDATA|F_SUBDATA).
 */

/* ------------------------------------------------------------------------- */
/* Prefix-compressed leaf (DBs with MDB_PREFIX_COMPRESSION, DLMDB)           */
/* ------------------------------------------------------------------------- */
/*
 * Leaf pages (not LEAF2) and non-LEAF2 sub-pages of such a DB.  No page
 * flag marks them; the DB flag does.  Page header and node headers are as
 * above, with mp_pad the longest decoded key on the page.  Key areas:
 *
 *   NODE   OFFSET  SIZE   DESCRIPTION
 *   0        8     ksize  the trunk T: the whole key
 *   i >= 1   8     v      varint(s): s = common prefix length of K_i and T,
 *                         big-endian base-128, 0x80 on all but the last byte
 *            8+v   ksize-v  K_i[s..]
 * The codec and its canonical-form rules are described in prefix.h.
 */

#endif /* DLMDB_LAYOUT_H */
