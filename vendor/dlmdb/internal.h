/*
 * internal.h - the in-memory structures shared by the engine's source files
 * (environment, transaction, cursor, lock file, page lists) and the
 * prototypes of each file.  The data file's on-disk format is in layout.h,
 * which this header includes.
 */
#ifndef DLMDB_INTERNAL_H
#define DLMDB_INTERNAL_H

#include "lmdb.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

/*
 * DL_ASSERT(cond): a debug-build check of an invariant the engine itself
 * establishes (on with -DDLMDB_DEBUG, which the Makefile's test and asan
 * variants set; the library, perf and Rust builds leave it off).  Off, the
 * condition is not evaluated; sizeof keeps its variables "used".
 *
 * Never assert on a fact read from the file: a damaged store must give
 * MDB_CORRUPTED, in every build.  Assert only on state this engine wrote
 * or computed (a page after it edited it, a cursor stack it built).
 */
#ifdef DLMDB_DEBUG
#include <stdio.h>
__attribute__((noreturn, cold)) static inline void dl_assert_fail(const char *cond,
	const char *file, int line, const char *func)
{
	fprintf(stderr, "dlmdb: %s:%d: %s: invariant failed: %s\n", file, line, func, cond);
	abort();
}
#define DL_ASSERT(cond)	((cond) ? (void)0 : dl_assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
#define DL_ASSERT(cond)	((void)sizeof(!(cond)))
#endif

/* A page (or sub-page) header the engine just edited: 16 <= lower <= upper. */
#define DL_ASSERT_PAGE_SPACE(mp) \
	DL_ASSERT(MP_LOWER(mp) >= PAGEHDRSZ && MP_LOWER(mp) <= MP_UPPER(mp))

/*
 * Every node pointer of a page with a pointer array points into the node
 * area (at or above upper).  Pages a write txn copies from the file are
 * validated first (dl_page_wcheck), so after the engine edits one this is
 * the engine's own invariant.  Key order is not asserted: it is a property
 * of the file's contents, which a damaged store breaks.
 */
static inline int dl_ptrs_in_node_area(const MDB_page *mp)
{
	unsigned n = NUMKEYS(mp);
	for (unsigned i = 0; i < n; i++)
		if (mp->mp_ptrs[i] < MP_UPPER(mp))
			return 0;
	return 1;
}

/* A cursor level the caller is about to use lies on the cursor's stack. */
#define DL_ASSERT_LEVEL(mc, level) \
	DL_ASSERT((level) >= 0 && (level) <= (mc)->top && (mc)->top < DL_MAXDEPTH)

#define TXNID_NONE	((txnid_t)~(txnid_t)0)	/* reader slot: idle */
#define DL_MAXDEPTH	32		/* cursor stack depth */

/* In-memory page flags (never written to the file). */
#define P_LOOSE		0x4000
#define P_KEEP		0x8000

/* ------------------------------------------------------------------------- */
/* Lock file                                                                 */
/* ------------------------------------------------------------------------- */
/*
 * Two header layouts are shared with stock processes (format doc §16.3,
 * x86-64 glibc); the mutexes are glibc robust process-shared mutexes used in
 * place, so a stock LMDB process and this engine serialise on the same
 * objects.
 *
 *   lock version 2 (LMDB 1.0 line, DLMDB), format word 0x2C2F6002:
 *     off 0 magic, off 4 format, off 8 u64 txnid, off 16 u32 numreaders,
 *     off 24 reader-table mutex, off 64 writer mutex
 *   lock version 1 (LMDB 0.9), format word 0x00010001:
 *     off 0 magic, off 4 format, off 8 reader-table mutex, off 48 u64
 *     txnid, off 56 u32 numreaders, off 64 writer mutex
 *   both: off 128 reader slots, 64 bytes each:
 *     off 0 u64 txnid (TXNID_NONE = idle), off 8 u32 pid (0 = free),
 *     off 16 u64 thread id
 *
 * The environment binds pointers to the fields of the layout in use
 * (env->lk_*) once at open and never looks at the layout again.
 */
#define DL_LOCK_FORMAT_V1	0x00010001u	/* LMDB 0.9: version 1 + pid-lock bit */
#define DL_LOCK_FORMAT_V2	0x2C2F6002u	/* LMDB 1.0 / DLMDB: version 2 + x86-64 glibc descriptor */
#define DL_LOCK_FORMAT_DL0	0x444C0002u	/* earlier builds of this engine: version 2 geometry */
#define DL_LOCK_HDR	128u
#define DL_LOCK_SLOT	64u
#define DL_MUTEX_SIZE	40u

typedef struct dl_reader {
	volatile txnid_t r_txnid;
	volatile uint32_t r_pid;
	uint32_t r_pad;
	volatile uint64_t r_tid;
	char	r_fill[DL_LOCK_SLOT - 24];
} dl_reader;

/* The fields both layouts keep at the same offsets. */
typedef struct dl_lockhdr {
	uint32_t mt_magic;
	uint32_t mt_format;
	char	mt_vary[56];	/* txnid, numreaders, reader mutex: per layout */
	union { pthread_mutex_t m; char fill[DL_MUTEX_SIZE]; } mt_wmutex;
	char	mt_fill[DL_LOCK_HDR - 104];
	dl_reader mt_readers[];
} dl_lockhdr;

/* ------------------------------------------------------------------------- */
/* Sorted page-number lists (ID lists)                                       */
/* ------------------------------------------------------------------------- */

typedef struct dl_idl {
	pgno_t	*ids;
	size_t	n, cap;
} dl_idl;

int  dl_idl_push(dl_idl *l, pgno_t id);
int  dl_idl_reserve(dl_idl *l, size_t extra);
void dl_idl_sort_desc(dl_idl *l);
void dl_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);
void dl_idl_free(dl_idl *l);

/* ------------------------------------------------------------------------- */
/* Dirty page table of a write transaction: open addressing on pgno          */
/* ------------------------------------------------------------------------- */

typedef struct dl_dent {
	pgno_t	pgno;		/* P_INVALID = empty slot */
	MDB_page *page;
	unsigned npages;
	uint64_t stamp;		/* dl_dirty.clock when last added or looked up:
				   the spiller writes out the smallest first */
} dl_dent;

/* Entries live in a dense array (cheap to walk at commit); the hash table
 * maps pgno -> index + 1 (0 = empty slot). */
typedef struct dl_dirty {
	uint32_t *tab;
	size_t	mask;		/* table capacity - 1 (power of two) */
	dl_dent	*ents;
	size_t	count, cap;
	uint64_t clock;		/* bumped on every add and own-table hit */
} dl_dirty;

/*
 * Pages a write transaction wrote to the data file before commit to bound
 * its memory (spill.c): a bitmap over page numbers.  Every such page is an
 * allocation of this transaction (never referenced by the last committed
 * meta), is not in the transaction's dirty table, and is read through the
 * map until touched again.  count = bits set; all words are zero when it is
 * 0.  An overflow run is recorded by its first page only.
 */
typedef struct dl_spillset {
	uint64_t *bits;
	size_t	nwords;
	size_t	count;
} dl_spillset;

/* Dirty pages a write transaction keeps in memory by default before it
 * spills (the size of stock LMDB's dirty list).  DLMDB_DIRTY_LIMIT, read by
 * mdb_env_open, overrides it (lmdb.h). */
#define DL_DIRTY_LIMIT_DEFAULT	131072u

/* ------------------------------------------------------------------------- */
/* Per-handle database info kept in the environment                          */
/* ------------------------------------------------------------------------- */

typedef struct dl_dbx {
	char	*name;		/* NULL for slots 0/1 and free slots */
	size_t	namelen;
	MDB_cmp_func *cmp;	/* key order */
	MDB_cmp_func *dcmp;	/* duplicate order */
	MDB_rel_func *rel;
	void	*relctx;
	unsigned flags;		/* persistent flags of the DB */
	unsigned seq;		/* bumped whenever the slot is reused */
	int	valid;		/* slot holds an open handle */
} dl_dbx;

/* txn->dbflags bits */
#define DB_DIRTY	0x01	/* record changed in this txn */
#define DB_STALE	0x02	/* record must be (re)loaded from the main DB */
#define DB_NEW		0x04	/* handle opened in this txn */
#define DB_VALID	0x08	/* usable in this txn */
#define DB_USRVALID	0x10	/* not FREE_DBI */
#define DB_DELETED	0x20	/* dropped with del=1 in this txn */
#define DB_INCOMPAT	0x40	/* record flags we cannot handle */
#define DB_CNTSTALE	0x80	/* counted DB: counts may have changed, branch counts need fixing */

/* ------------------------------------------------------------------------- */
/* Environment                                                               */
/* ------------------------------------------------------------------------- */

struct MDB_env {
	int	fd;		/* data file */
	int	mfd;		/* data file opened O_DSYNC for meta writes */
	int	lfd;		/* lock file, -1 without */
	unsigned flags;		/* user-visible env flags */
	unsigned psize;
	unsigned pad;		/* 1 = DLMDB padded node layout, 0 = stock */
	/* The page size as the in-leaf scan step (cursor.c, dl_step_fast)
	 * bounds its nodes with, 0 while the interrupt flag is raised: a
	 * bound of 0 sends every step to the general path, which reports
	 * EINTR, so one load there serves both.  Kept by dl_env_steplim,
	 * whose stores are volatile; the step reads it once per call. */
	unsigned steplim;
	/* The second-level cache's size, set by mdb_env_create (0 where the
	 * system reports none).  A tree whose leaf pages take more bytes
	 * than this has its leaves come from farther away: its plain scans
	 * prefetch the next leaf progressively (cursor.c, dl_step_leaf);
	 * past twice this, its key lookups prefetch whole pages (btree.c,
	 * DL_PAGE_PF). */
	size_t	l2bytes;
	unsigned layoutwhy;	/* MDB_LAYOUT_*: how pad was decided */
	unsigned version;	/* data version of the file */
	unsigned nodemax;	/* largest node kept on a page */
	unsigned maxfree1pg;	/* free-list ids per overflow page */
	uint16_t freeflags;	/* FREE_DBI flags word to carry forward */
	char	*path;
	char	*map;
	void	*fixaddr;	/* MDB_FIXEDMAP: the address the map must have, or NULL */
	size_t	mapsize;	/* bytes mapped */
	size_t	usermapsize;	/* set by mdb_env_set_mapsize, 0 = none */
	pgno_t	maxpg;		/* mapsize / psize */
	pgno_t	filepages;	/* data file length in pages, as last seen (atomic: dl_fpages_*) */
	unsigned maxreaders;
	MDB_dbi	maxdbs;		/* handles incl. the two core DBs */
	MDB_dbi	numdbs;		/* handle slots in use (high-water mark) */
	unsigned dbgen;		/* bumped whenever a handle slot opens or closes */
	dl_dbx	*dbxs;
	dl_lockhdr *lock;	/* mapped lock file, NULL without */
	unsigned lockver;	/* lock layout in use: 1 or 2 (0 = no lock file) */
	int	lockjoined;	/* the lock file was held by others at open */
	volatile txnid_t *lk_txnid;	/* last committed txnid in the header */
	volatile uint32_t *lk_numreaders;	/* slots ever used */
	pthread_mutex_t *lk_rmutex;	/* reader-table mutex */
	pthread_mutex_t *lk_wmutex;	/* writer mutex */
	size_t	locksize;
	int	pidlocked;	/* fcntl byte lock at offset pid held (atomic: threads race to set it) */
	pthread_key_t tlskey;
	int	tlskey_ok;
	pthread_mutex_t wlocal;	/* serialises writers when there is no lock file */
	MDB_txn	*txn;		/* current write txn of this process */
	MDB_txn	*wtxn_cache;	/* reusable write txn handle */
	void	*userctx;
	MDB_assert_func *assertfn;
	volatile int interrupted;
	int	failed;		/* fatal error seen: MDB_PANIC */
	int	opened;
	pid_t	pid;
	/* Map pages this process's writers validated (dl_page_wcheck), so a
	 * later write txn need not check them again; see page.c. */
	uint64_t *wchecked;
	txnid_t	wchecked_txnid;	/* snapshot the cache is valid for */
	unsigned wchecked_tag;	/* marks the slots of the current cache */
	unsigned wchecked_bits;	/* log2 of its slots */
	/* Recycled single-page buffers (singly linked through their first word). */
	MDB_page *pagepool;
	size_t	npool;
	/* Single-page buffers are cut from large anonymous maps (page.c): each
	 * slab is kept until the env closes; slabnext/slableft is the unused
	 * tail of the newest. */
	void	**slabs;
	size_t	nslabs, slabcap;
	size_t	nbufs;		/* single-page buffers made by malloc */
	char	*slabnext;
	size_t	slableft;
	/* Overflow-run buffers of big write txns are cut from one reserved
	 * anonymous region (page.c): ovbase/ovlen is the region, ovused its
	 * bump point, ovtouched how much of it is faulted in, ovpeak the most
	 * of it the current top txn has used, ovkeep how much the last trim
	 * kept faulted in (page.c, dl_ov_trim); ovfree holds
	 * released runs by page count; ovheap counts the bytes of runs a txn
	 * holds from malloc; ovnomap is set once the region could not be
	 * reserved, so later txns do not retry.  When the env closes, its
	 * region waits (process-wide, at most one) for the next env. */
	char	*ovbase;
	size_t	ovlen, ovused, ovtouched, ovheap, ovpeak, ovkeep;
	MDB_page **ovfree;
	int	ovnomap;
	pthread_mutex_t poolmx;
	size_t	dirtylimit;	/* dirty pages a write txn keeps before spilling */
};

/* ------------------------------------------------------------------------- */
/* Transaction                                                               */
/* ------------------------------------------------------------------------- */

#define TXN_RDONLY	0x01
#define TXN_ERROR	0x02
#define TXN_FINISHED	0x04
#define TXN_DIRTY	0x08	/* something changed: commit writes */
#define TXN_NOSYNC	0x10
#define TXN_NOMETASYNC	0x20
#define TXN_SAVING	0x40	/* free list being saved */
#define TXN_HASSLOT	0x80	/* owns a NOTLS reader slot */
#define TXN_NEWDBI	0x100	/* opened a handle (read txns: close it at reset/abort) */
#define TXN_SNAPOK	0x200	/* read txn: DB table is a validated copy of snapshot txnid */
#define TXN_MAPREAD	0x400	/* dl_page_get leaves spilled pages in the map (spill.c) */
#define TXN_HASCHILD	0x800	/* child != NULL, as a flag: one test covers every state that blocks use */

struct MDB_txn {
	MDB_env	*env;
	MDB_txn	*parent;
	MDB_txn	*child;		/* active nested txn */
	dl_idl	ploose;		/* nested: freed pages an ancestor had dirty */
	unsigned flags;
	txnid_t	txnid;
	pgno_t	next_pgno;	/* first page not in use */
	/* next_pgno as the snapshot this txn (or its top ancestor) began
	 * from has it.  Every page number stored in the snapshot (a named
	 * DB's record, a branch's child, an overflow run) lies below it in an
	 * undamaged store; next_pgno grows as a write txn allocates, and a
	 * damaged number at or above snap_pages would otherwise reach a page
	 * this txn allocated for something else. */
	pgno_t	snap_pages;
	pgno_t	fpages;		/* pages of the file readable through the map */
	/* Read txns: dl_txn_map_span, so that a page number pg is a
	 * snapshot page the map holds exactly when pg - 2 < mapspan (one
	 * compare); 0 in write
	 * txns, whose dirty pages and parents need dl_ov_snapshot's full
	 * test.  Set with the snapshot (txn.c, dl_txn_setup_core; a nested
	 * txn keeps the 0 of its zeroed allocation); nothing else changes a
	 * read txn's fpages or next_pgno. */
	pgno_t	mapspan;
	dl_reader *slot;
	/*
	 * The per-handle tables hold env->maxdbs entries each, but a txn
	 * begins in time proportional to the handles in use, not to maxdbs:
	 * entries at and above numdbs are never read.  Begin (and a renew
	 * that rebuilds the table) sets every entry below numdbs; after that
	 * numdbs only grows, through dl_txn_dbs_grow, which initialises what
	 * it adds.  Above numdbs the tables hold whatever the allocation held
	 * (debug builds fill them with a poison byte so that a read there
	 * shows).  dbs[i]
	 * holds the DB's record only while dbflags[i] has DB_VALID without
	 * DB_STALE; before that it is zero or an older record, which the
	 * lookup's prefetch choice (dl_skey_tree) may read.
	 * numdbs <= env->numdbs <= maxdbs.
	 */
	unsigned numdbs;
	unsigned dbgen;		/* env->dbgen when the handles were set up */
	MDB_db	*dbs;
	unsigned char *dbflags;
	unsigned *dbseq;
	MDB_cursor **cursors;	/* per-dbi list of open cursors */
	int	lasterr;
	/* write transactions */
	dl_dirty dirty;
	dl_spillset spilled;	/* pages written early (spill.c) */
	dl_idl	freed;		/* snapshot pages released by this txn */
	dl_idl	pool;		/* reusable pages taken from FREE_DBI, sorted desc */
	dl_idl	loose;		/* pages allocated and freed again in this txn */
	int	freed_run;	/* freed a snapshot overflow run (dl_fl_save
				   checks its pages are none of this txn's) */
	txnid_t	oldest;		/* oldest snapshot still in use */
	txnid_t	fl_last;	/* largest FREE_DBI key consumed, 0 = none */
	int	fl_done;	/* no more reusable records */
	unsigned char *scratch;	/* reusable work memory (duplicate rewrites) */
	size_t	scratchsz;
	size_t	scratch_img;	/* offset of the sub-page image region (dl_subpage_items) */
	unsigned char *pfxbuf;	/* reusable memory for compressed-page rewrites (prefix.c) */
	size_t	pfxbufsz;
	/* mdb_get_rank: decoded key/item outliving its temporary cursor;
	 * 2 * (DL_MAXKEY + 1) bytes allocated on first use (a pointer, not an
	 * array, keeps the txn small enough for malloc's fast path) */
	unsigned char *rankbuf;
};

/* ------------------------------------------------------------------------- */
/* Cursor                                                                    */
/* ------------------------------------------------------------------------- */

#define C_RESEEK	0x08	/* tree changed: reposition from keybuf */
#define C_UNTRACKED	0x10	/* internal cursor, not on the txn list */
#define C_WRITE		0x20	/* belongs to a write txn */
#define C_DUPSORT	0x40	/* DUPSORT DB, or its record not loaded (dl_cursor_sync_dupsort) */
#define C_PREFIX	0x80	/* leaves of this tree are prefix-compressed */
#define C_APPENDING	0x800	/* sub-DB cursor: this insert is an MDB_APPENDDUP (split policy) */

/*
 * Where a cursor is: one value of enum dl_pos in mc->pos, read and changed
 * only through the dl_pos_* helpers below.  LMDB's answers depend on more
 * than the place (it remembers whether MDB_LAST put the cursor there and
 * what the last delete removed), so a state is a place plus the marks it
 * carries.  The values are built from the DL_PB_* parts so that each
 * question an op asks ("positioned?", "deleted?") is one test; nothing
 * outside the helpers uses the parts.
 *
 * Places (exactly one):
 *
 *   UNSET          never positioned, or its tree emptied (top = -1 then)
 *   UNSET_DELETED  unpositioned by the emptying of its tree while it sat on
 *                  the deleted item (dl_cursors_unposition)
 *   ON_ITEM        on an item, or on a leaf index the op checks itself
 *   PAST_END       a SET-family lookup found no key at or after its own
 *   DELETED        on what followed a deleted item (past the last item of
 *                  the last leaf when that item was the last)
 *
 * Marks a place may carry:
 *
 *   AFTER_LAST (A) LMDB's end marker: set by MDB_LAST, an MDB_APPEND put,
 *                  a NEXT that ran off the end, and on a sub-cursor by a
 *                  "last" move or an APPENDDUP; it survives deletes and
 *                  failed lookups (even those that leave the cursor UNSET);
 *                  moves back, repositionings and dl_cursors_unposition end
 *                  it.
 *   delete kind    DUPSORT main cursor: what the last delete removed (KEY,
 *                  DUP, DUPEND; see the named states).  DUP and DUPEND left
 *                  on a cursor that is not DELETED go with its next DUPSORT
 *                  op; KEY stays until the next delete or a FIRST_DUP or
 *                  LAST_DUP that keeps the deleted state.
 *   GONE (G)       DUPSORT: a GET_CURRENT in DELETED_DUPEND ended the
 *                  duplicate position's deleted state; it stays until the
 *                  next delete.
 *
 * Named states: ON_ITEM+A is AT_END_LAST; for DUPSORT main cursors, a
 * place plus a kind:
 *
 *   DELETED_KEY    the key's only item (or the whole key) went; on the
 *                  following key
 *   DELETED_DUP    a duplicate went and its key keeps one after it; on that
 *   DELETED_DUPEND the key's last duplicate went and others stay; on the key
 *                  past its end, the sub-cursor on the new last one
 *   DELETED_DUPEND_GONE  DELETED_DUPEND after a GET_CURRENT
 *
 * Transitions: state x op -> answer, next state.  Marks not named stay; a
 * move that fails with MDB_NOTFOUND on an empty DB leaves UNSET.
 *
 *   UNSET          FIRST, NEXT*, PREV*   first/last item     ON_ITEM
 *                  LAST                  last item           ON_ITEM+A
 *                  SET*                  as from ON_ITEM
 *                  GET_CURRENT, FIRST_DUP, LAST_DUP, GET_MULTIPLE
 *                                        EINVAL              UNSET
 *   UNSET_DELETED  NEXT_DUP              MDB_NOTFOUND        UNSET
 *                  any other op          as from UNSET
 *   ON_ITEM        NEXT*, PREV*          the next/previous item, ON_ITEM (A
 *                                        ends); NEXT off the end:
 *                                        MDB_NOTFOUND, ON_ITEM+A
 *                  FIRST, LAST           the item; A ends / is set
 *                  SET* hit              the item            ON_ITEM, A ends
 *                  SET* miss             MDB_NOTFOUND        ON_ITEM inside
 *                                        the keys, PAST_END after them (a
 *                                        plain DB ends A first)
 *                  GET_CURRENT           the item            ON_ITEM
 *                  mdb_cursor_del        0                   DELETED (DUPSORT:
 *                                        DELETED_KEY/DUP/DUPEND), or UNSET
 *                                        when the tree empties (DUPSORT:
 *                                        with kind KEY)
 *                  mdb_cursor_put        0 or the error      ON_ITEM (APPEND
 *                                        sets A; see mdb_cursor_put)
 *   ON_ITEM+A      DUPSORT NEXT* on the last key of its leaf
 *                                        MDB_NOTFOUND        ON_ITEM+A
 *   PAST_END       NEXT*, GET_CURRENT    MDB_NOTFOUND        PAST_END
 *                  DUPSORT PREV_DUP      MDB_NOTFOUND        PAST_END
 *                  PREV*                 the last item       ON_ITEM
 *                  mdb_cursor_del        MDB_NOTFOUND        PAST_END
 *   DELETED        NEXT, NEXT_NODUP      the item under it   ON_ITEM; past
 *                                        the last item: MDB_NOTFOUND,
 *                                        DELETED+A
 *                  NEXT_DUP (plain)      MDB_NOTFOUND        ON_ITEM
 *                                        (DELETED past the last item)
 *                  GET_CURRENT           the item under it   ON_ITEM; past
 *                                        the last item: MDB_NOTFOUND, DELETED
 *                  PREV*                 the item before (or MDB_NOTFOUND)
 *                                                            ON_ITEM
 *   DELETED+A      plain NEXT* on its leaf's last index
 *                                        MDB_NOTFOUND        ON_ITEM+A
 *   DELETED_KEY    NEXT                  that key's first item, ON_ITEM
 *                  NEXT_DUP              MDB_NOTFOUND        DELETED_DUP when
 *                                        the key has duplicates, else ON_ITEM
 *                                        (past the last key: DELETED_KEY)
 *                  FIRST_DUP, LAST_DUP   the item            DELETED_DUP (or
 *                                        ON_ITEM without duplicates), A ends
 *   DELETED_DUP    NEXT, NEXT_DUP        the item under it   ON_ITEM
 *                  NEXT_NODUP            the next key, ON_ITEM; none:
 *                                        MDB_NOTFOUND, DELETED_DUP+A
 *                  FIRST_DUP, LAST_DUP   the item            DELETED_DUP, A
 *                                        ends
 *                  PREV_NODUP, no earlier key
 *                                        MDB_NOTFOUND        DELETED_DUP
 *   DELETED_DUPEND GET_CURRENT           MDB_NOTFOUND        DELETED_DUPEND_GONE
 *                  NEXT_DUP              MDB_NOTFOUND        DELETED_DUPEND
 *                  PREV, PREV_DUP        the new last duplicate, ON_ITEM
 *                  NEXT, NEXT_NODUP, PREV_NODUP
 *                                        the next/previous key, ON_ITEM;
 *                                        none: MDB_NOTFOUND, DELETED_DUPEND
 *                  FIRST_DUP, LAST_DUP   the item            DELETED_DUP
 *   DELETED_DUPEND_GONE  as DELETED_DUPEND, but FIRST_DUP and LAST_DUP
 *                  end the deleted state (ON_ITEM+G)
 *
 * Other cursors of a write txn keep their state with C_RESEEK set while
 * the tree changes; dl_cursor_reseek then turns a vanished item into
 * DELETED (kind unchanged) and an emptied tree into UNSET or
 * UNSET_DELETED.  dl_pos_valid lists the combinations that never occur.
 */
enum {
	DL_PB_SET = 0x01, DL_PB_PAST = 0x02, DL_PB_DEL = 0x04, DL_PB_LAST = 0x08,
	DL_PB_KIND = 0x30, DL_PB_GONE = 0x40,
};

/* The delete kind of a DUPSORT main cursor (one value, never a mix). */
enum dl_delkind {
	DL_DK_NONE = 0x00,
	DL_DK_KEY = 0x10,
	DL_DK_DUPEND = 0x20,
	DL_DK_DUP = 0x30,
};

enum dl_pos {
	DL_POS_UNSET = 0,
	DL_POS_UNSET_DELETED = DL_PB_DEL,
	DL_POS_ON_ITEM = DL_PB_SET,
	DL_POS_PAST_END = DL_PB_SET | DL_PB_PAST,
	DL_POS_AT_END_LAST = DL_PB_SET | DL_PB_LAST,
	DL_POS_DELETED = DL_PB_SET | DL_PB_DEL,
	DL_POS_DELETED_KEY = DL_PB_SET | DL_PB_DEL | DL_DK_KEY,
	DL_POS_DELETED_DUP = DL_PB_SET | DL_PB_DEL | DL_DK_DUP,
	DL_POS_DELETED_DUPEND = DL_PB_SET | DL_PB_DEL | DL_DK_DUPEND,
	DL_POS_DELETED_DUPEND_GONE = DL_PB_SET | DL_PB_DEL | DL_DK_DUPEND | DL_PB_GONE,
};

struct MDB_cursor {
	MDB_cursor *next;
	MDB_txn	*txn;
	MDB_dbi	dbi;
	MDB_db	*db;
	dl_dbx	*dbx;
	unsigned flags;
	unsigned char pos;	/* enum dl_pos, through the dl_pos_* helpers */
	int	top;		/* index of the leaf level in pg[]/ki[]; -1 = none */
	MDB_page *pg[DL_MAXDEPTH];
	indx_t	ki[DL_MAXDEPTH];
	void	*xcursor;	/* DUPSORT sub-cursor (later) */
	MDB_cursor *backup;	/* nested txn: state to restore if the child aborts */
	/* Where the scan step (cursor.c, dl_step_fast) prefetches: the leaf
	 * it will reach next minus the current leaf, set on each leaf change,
	 * 0 when unknown or not wanted (a plain tree within the env's scan
	 * bound).  Only ever added to an address that is prefetched, never
	 * read: a stale value costs a useless prefetch. */
	intptr_t pfd;
	unsigned keylen;	/* saved key for C_RESEEK */
	unsigned char keybuf[DL_MAXKEY + 1];
	unsigned duplen;	/* DUPSORT: saved item, ~0u = none */
	unsigned char dupbuf[DL_MAXKEY + 1];
	unsigned char kdec[DL_MAXKEY + 1];	/* decoded key returned to the caller */
	/* What kdec holds (prefix.h, dl_pfx_cursor_key), kept only in read
	 * txns, whose pages never change: the decoded key of node kc_idx of
	 * compressed page kc_pg of snapshot kc_txnid, whose first kc_tv bytes
	 * are also that page's trunk.  kc_pg NULL: nothing known. */
	MDB_page *kc_pg;
	txnid_t	kc_txnid;
	unsigned kc_idx, kc_len, kc_tv;
};

/*
 * A cursor's page stack as the engine builds it: its depth within bounds,
 * branch pages above a leaf (an inline sub-page is a leaf).  Every page was
 * checked (dl_page_check, or a level test) before it was pushed, so a
 * damaged file fails there with MDB_CORRUPTED before this can be asked.
 */
static inline int dl_stack_ok(const MDB_cursor *mc)
{
	if (mc->top < 0 || mc->top >= DL_MAXDEPTH)
		return 0;
	for (int l = 0; l < mc->top; l++)
		if (!IS_BRANCH(mc->pg[l]))
			return 0;
	return IS_LEAF(mc->pg[mc->top]);
}

/*
 * A state the engine can reach: "past the end" only when set and never with
 * "deleted"; a delete kind only on a DUPSORT main cursor (no sub-cursor
 * state); GONE only while DELETED_DUPEND was or is the state.
 */
static inline int dl_pos_valid(unsigned p)
{
	if ((p & DL_PB_PAST) && (p & (DL_PB_DEL | DL_PB_SET)) != DL_PB_SET)
		return 0;
	return p < 0x80;
}

static inline void dl_pos_put(MDB_cursor *mc, unsigned p)
{
	DL_ASSERT(dl_pos_valid(p));
	/* Delete kinds and GONE belong to DUPSORT main cursors alone. */
	DL_ASSERT(!(p & (DL_PB_KIND | DL_PB_GONE)) || (mc->db->md_flags & MDB_DUPSORT));
	mc->pos = (unsigned char)p;
}

/* Questions the ops ask. */
static inline int dl_pos_is_set(const MDB_cursor *mc)
{
	return mc->pos & DL_PB_SET;
}

static inline int dl_pos_is_past_end(const MDB_cursor *mc)
{
	return mc->pos & DL_PB_PAST;
}

/* Set and on its item: not past the end, not deleted (marks ignored). */
static inline int dl_pos_on_item(const MDB_cursor *mc)
{
	return (mc->pos & (DL_PB_SET | DL_PB_PAST | DL_PB_DEL)) == DL_PB_SET;
}

/* ON_ITEM with no mark: a plain step is the whole answer.  (A DUPSORT
 * cursor may carry a delete kind here; it takes the general path anyway.) */
static inline int dl_pos_steps_plainly(const MDB_cursor *mc)
{
	return mc->pos == DL_POS_ON_ITEM;
}

static inline int dl_pos_is_deleted(const MDB_cursor *mc)
{
	return mc->pos & DL_PB_DEL;
}

/* Deleted, set, not past the end (the kind and marks not asked). */
static inline int dl_pos_is_set_deleted(const MDB_cursor *mc)
{
	return (mc->pos & (DL_PB_SET | DL_PB_PAST | DL_PB_DEL)) == (DL_PB_SET | DL_PB_DEL);
}

static inline int dl_pos_is_after_last(const MDB_cursor *mc)
{
	return mc->pos & DL_PB_LAST;
}

static inline unsigned dl_pos_delkind(const MDB_cursor *mc)
{
	return mc->pos & DL_PB_KIND;
}

static inline int dl_pos_is_gone(const MDB_cursor *mc)
{
	return mc->pos & DL_PB_GONE;
}

/* Moves.  Each keeps what it does not name. */

/* Landed on an item (a put, a lookup): not past the end, not deleted. */
static inline void dl_pos_land(MDB_cursor *mc)
{
	dl_pos_put(mc, (mc->pos & ~(DL_PB_PAST | DL_PB_DEL)) | DL_PB_SET);
}

/* Landed on an item and the AFTER_LAST mark ends (repositioned). */
static inline void dl_pos_land_fresh(MDB_cursor *mc)
{
	dl_pos_put(mc, (mc->pos & ~(DL_PB_PAST | DL_PB_DEL | DL_PB_LAST)) | DL_PB_SET);
}

/* Not positioned any more (the marks stay). */
static inline void dl_pos_unset(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos & ~(DL_PB_SET | DL_PB_PAST | DL_PB_DEL));
}

/* Its tree went away: unpositioned; "deleted" and GONE stay, the end mark
 * and delete kind go (see dl_cursors_unposition). */
static inline void dl_pos_tree_gone(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos & (DL_PB_DEL | DL_PB_GONE));
}

/* Before a lookup: neither past the end nor deleted (set as it was). */
static inline void dl_pos_clear_place(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos & ~(DL_PB_PAST | DL_PB_DEL));
}

/* A lookup found where the key would go, past the last key. */
static inline void dl_pos_to_past_end(MDB_cursor *mc)
{
	DL_ASSERT(!dl_pos_is_deleted(mc));
	dl_pos_put(mc, mc->pos | DL_PB_SET | DL_PB_PAST);
}

/* The item under the cursor went: on what follows it. */
static inline void dl_pos_to_deleted(MDB_cursor *mc)
{
	dl_pos_put(mc, (mc->pos & ~DL_PB_PAST) | DL_PB_SET | DL_PB_DEL);
}

/* Another cursor deleted the item this one had saved (C_RESEEK): it will
 * find the following one, "deleted". */
static inline void dl_pos_item_vanished(MDB_cursor *mc)
{
	dl_pos_put(mc, (mc->pos & ~DL_PB_PAST) | DL_PB_DEL);
}

/* A delete inside a key's duplicates begins: past-the-end, the end mark,
 * the delete kind and GONE go (set and deleted stay). */
static inline void dl_pos_drop_marks(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos & ~(DL_PB_PAST | DL_PB_LAST | DL_PB_KIND | DL_PB_GONE));
}

/* Positioned by its caller (nothing else changes). */
static inline void dl_pos_now_set(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos | DL_PB_SET);
}

/* The item the cursor was on turned out to be gone (its place stays). */
static inline void dl_pos_mark_deleted(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos | DL_PB_DEL);
}

/* Put on an index by its caller: set, the end mark ended (a past-the-end or
 * deleted state is the caller's to settle). */
static inline void dl_pos_placed(MDB_cursor *mc)
{
	dl_pos_put(mc, (mc->pos & ~DL_PB_LAST) | DL_PB_SET);
}

/* The deleted state ends (the item now under the cursor is current). */
static inline void dl_pos_end_deleted(MDB_cursor *mc)
{
	dl_pos_put(mc, mc->pos & ~DL_PB_DEL);
}

/* Set again after a lookup, adding "past the end" and "deleted" as asked
 * (a saved place put back, or the saved item found gone). */
static inline void dl_pos_reseated(MDB_cursor *mc, int past, int del)
{
	dl_pos_put(mc, mc->pos | DL_PB_SET | (past ? DL_PB_PAST : 0) | (del ? DL_PB_DEL : 0));
}

static inline void dl_pos_mark_after_last(MDB_cursor *mc, int on)
{
	dl_pos_put(mc, on ? mc->pos | DL_PB_LAST : mc->pos & ~DL_PB_LAST);
}

static inline void dl_pos_set_delkind(MDB_cursor *mc, unsigned kind)
{
	DL_ASSERT(!(kind & ~DL_PB_KIND));
	dl_pos_put(mc, (mc->pos & ~DL_PB_KIND) | kind);
}

/* A DUPSORT delete result: deleted and set, with kind, GONE cleared. */
static inline void dl_pos_to_deleted_kind(MDB_cursor *mc, unsigned kind)
{
	dl_pos_put(mc, (mc->pos & ~(DL_PB_KIND | DL_PB_GONE)) | DL_PB_SET | DL_PB_DEL | kind);
}

/* Deleted again with this kind (its place and GONE stay): a delete state
 * an op keeps although it moved or refused. */
static inline void dl_pos_mark_deleted_kind(MDB_cursor *mc, unsigned kind)
{
	dl_pos_put(mc, (mc->pos & ~DL_PB_KIND) | DL_PB_DEL | kind);
}

static inline void dl_pos_mark_gone(MDB_cursor *mc, int on)
{
	dl_pos_put(mc, on ? mc->pos | DL_PB_GONE : mc->pos & ~DL_PB_GONE);
}

/* ------------------------------------------------------------------------- */
/* Internal functions (dl_ prefix: never clash with LMDB's mdb_ names)       */
/* ------------------------------------------------------------------------- */

/* misc.c: comparators */
int  dl_cmp_lex(const MDB_val *a, const MDB_val *b);
int  dl_cmp_rev(const MDB_val *a, const MDB_val *b);
int  dl_cmp_int(const MDB_val *a, const MDB_val *b);
int  dl_cmp_u64(const MDB_val *a, const MDB_val *b);
MDB_cmp_func *dl_default_cmp(unsigned flags);
MDB_cmp_func *dl_default_dcmp(unsigned flags);

/*
 * The zeros after an overflow value in its run's last page.  While a run is
 * dirty, its header's mp_pad (0 in every page written: dl_write_pages
 * clears it) holds how many bytes at the run's end are still to become
 * zeros: the write takes them from a zero buffer, so the engine never
 * zeroes them in memory (about 4 KiB per 8 KiB value).  0 means the run's
 * memory is written as it is (a one-page run, MDB_NOMEMINIT, a value
 * filling its run).
 */
static inline size_t dl_ov_zerotail(const MDB_page *mp, size_t len)
{
	return IS_OVERFLOW(mp) && mp->mp_pad < len - PAGEHDRSZ ? mp->mp_pad : 0;
}

/* Bytes up to end of dirty run mp (len bytes) are about to hold value
 * bytes: the zeros still owed past them move up to end, those before end
 * written now (the caller may not write them all: MDB_RESERVE). */
static inline void dl_ov_zerotail_cut(MDB_page *mp, size_t len, size_t end)
{
	size_t tail = dl_ov_zerotail(mp, len);
	if (tail && end > len - tail) {
		memset((char *)mp + (len - tail), 0, end - (len - tail));
		mp->mp_pad = (uint16_t)(len - end);
	}
}

/* os.c */
int  dl_pread_all(int fd, void *buf, size_t len, off_t off);
int  dl_pwrite_all(int fd, const void *buf, size_t len, off_t off);
int  dl_write_pages(MDB_env *env, dl_dent *ents, size_t n);
int  dl_map(MDB_env *env, size_t size);
pgno_t dl_file_pages(MDB_env *env);
void dl_unmap(MDB_env *env);

/* lock.c */
int  dl_lock_open(MDB_env *env, const char *lpath, mode_t mode, unsigned want, int *excl);
int  dl_lock_setup(MDB_env *env, unsigned ver, txnid_t last);
int  dl_lock_heap(MDB_env *env);
int  dl_snapshot_pin(MDB_env *env, dl_reader **slot, txnid_t *t);
void dl_snapshot_unpin(dl_reader *slot);
int  dl_lock_downgrade(MDB_env *env);
void dl_tls_release(void *p);
void dl_lock_close(MDB_env *env);
int  dl_reader_slot(MDB_txn *txn);
void dl_writer_dead_check(MDB_env *env);
void dl_reader_release_txn(MDB_txn *txn);
txnid_t dl_oldest_reader(MDB_env *env, txnid_t limit);
int  dl_wlock(MDB_env *env);
void dl_wunlock(MDB_env *env);

/* meta.c */
int  dl_meta_read_file(MDB_env *env, MDB_meta *m0, MDB_meta *m1, int *isnew);
int  dl_meta_create(MDB_env *env);
MDB_meta *dl_meta_current(MDB_env *env);
int  dl_meta_in_its_page(const MDB_env *env, const MDB_meta *m);
int  dl_meta_write(MDB_txn *txn);

/* page.c: dirty table, buffers, allocation */
int  dl_page_get(MDB_txn *txn, pgno_t pgno, MDB_page **ret);
int  dl_page_get_mapped_ref(MDB_txn *txn, const void *from, pgno_t pgno, MDB_page **ret);
int  dl_txn_holds(MDB_txn *txn, pgno_t pgno);	/* spill.c */
int  dl_mapped_not_spilled(const MDB_txn *txn, const void *p);
MDB_page *dl_dirty_find(dl_dirty *d, pgno_t pgno, unsigned *npages);
int  dl_dirty_add(dl_dirty *d, pgno_t pgno, MDB_page *mp, unsigned npages);
int  dl_dirty_del(dl_dirty *d, pgno_t pgno);
void dl_dirty_free(MDB_env *env, dl_dirty *d);
void dl_dents_by_pgno(const dl_dent *src, size_t n, dl_dent *dst);
MDB_page *dl_buf_get(MDB_env *env, unsigned npages);
void dl_buf_put(MDB_env *env, MDB_page *mp, unsigned npages);
void dl_buf_release(MDB_env *env);
void dl_ov_rewind(MDB_env *env);
void dl_ov_spare_drop(void);
int  dl_page_alloc(MDB_cursor *mc, unsigned num, MDB_page **ret);
int  dl_page_free(MDB_txn *txn, pgno_t pgno, unsigned num);
int  dl_page_touch(MDB_cursor *mc, int level);
void dl_wchecked_begin(MDB_env *env, txnid_t snapshot, pgno_t pages);
void dl_wchecked_committed(MDB_txn *txn);
int  dl_txn_err(MDB_txn *txn, int rc);
int  dl_txn_fail(MDB_txn *txn, int rc);
int  dl_page_owned(MDB_txn *txn, MDB_page *mp);
MDB_page *dl_dirty_swap(dl_dirty *d, pgno_t pgno, MDB_page *mp, unsigned npages, unsigned *oldn);
void dl_cursor_save_one(MDB_cursor *c);
void dl_cursor_free(MDB_cursor *c);

/* Whether p lies in the map (one unsigned compare bounds both sides). */
static inline int dl_in_map(const MDB_env *env, const void *p)
{
	return (uintptr_t)p - (uintptr_t)env->map < env->mapsize;
}

/*
 * Whether p lies in a page of the txn's snapshot.  A write txn builds every
 * page it changes in a buffer outside the map (its dirty table, even under
 * MDB_WRITEMAP), so a page in the map is a snapshot page unless this txn or
 * an ancestor spilled it there (spill.c), and a spilled page is one of
 * theirs.  The common answer, a buffer outside the map, costs a compare.
 */
static inline int dl_in_snapshot_page(const MDB_txn *txn, const void *p)
{
	return dl_in_map(txn->env, p) &&
		(!txn->spilled.count && !txn->parent ? 1 : dl_mapped_not_spilled(txn, p));
}

/*
 * dl_page_get for a page number read at from (a node or record inside a
 * page; NULL, which lies outside any map: a DB's record).  A snapshot page
 * refers only to pages in use in its snapshot, so two kinds of number
 * there are damage that dl_page_get alone would resolve, in a write txn,
 * to a page this txn holds for something else:
 *  - one at or above snap_pages: a page this txn allocated.  The answer is
 *    the one a read txn on the same snapshot gets (its snap_pages is its
 *    next_pgno, which dl_page_get bounds): MDB_PAGE_NOTFOUND;
 *  - one this txn holds (dirty, spilled, or an ancestor's): a page that
 *    was free in the snapshot and this txn reused.  MDB_CORRUPTED.
 * Only the buffer test is inline: a write txn's descents mostly leave
 * pages it changed, whose links need no bound.
 */
static inline int dl_page_get_ref(MDB_txn *txn, const void *from, pgno_t pgno, MDB_page **ret)
{
	if (dl_in_map(txn->env, from))
		return dl_page_get_mapped_ref(txn, from, pgno, ret);
	return dl_page_get(txn, pgno, ret);
}

/* Whether pgno, read at from, is a link dl_page_get_ref refuses; for a
 * link followed later from a copy of its record (a duplicate
 * sub-database's root).  A txn that holds no page skips the lookup. */
static inline int dl_snapshot_link_bad(MDB_txn *txn, const void *from, pgno_t pgno)
{
	if (pgno >= txn->snap_pages)
		return dl_in_snapshot_page(txn, from);
	return (txn->dirty.count || txn->spilled.count || txn->parent) &&
		dl_in_snapshot_page(txn, from) && dl_txn_holds(txn, pgno);
}

/* Whether the np-page run at pg, named at from, runs past the snapshot
 * while from lies in a snapshot page (damage: see dl_page_get_ref). */
static inline int dl_run_past_snapshot(const MDB_txn *txn, const void *from, pgno_t pg,
	uint64_t np)
{
	return pg + np > txn->snap_pages && dl_in_snapshot_page(txn, from);
}

/* spill.c: bounded dirty set */
int  dl_spill(MDB_txn *txn, MDB_cursor *mc, const MDB_val *key, const MDB_val *data,
	size_t need);
int  dl_spilled_has(const dl_spillset *s, pgno_t pgno);
int  dl_spilled_add(dl_spillset *s, pgno_t pgno);
void dl_spilled_del(dl_spillset *s, pgno_t pgno);
int  dl_spilled_merge(dl_spillset *dst, const dl_spillset *src);
void dl_spilled_clear(dl_spillset *s);
void dl_spilled_free(dl_spillset *s);
int  dl_ancestor_holds(MDB_txn *txn, pgno_t pgno);
unsigned dl_spilled_run(MDB_txn *txn, pgno_t pgno);
int  dl_spilled_load(MDB_txn *txn, pgno_t pgno, MDB_page **ret);
int  dl_dirty_limit_parse(const char *v, size_t *limit);

/*
 * Before a write operation of mc's database (mc may be unpositioned, or
 * NULL with db given through dbi): make room in the dirty set for what the
 * operation may dirty (two copies of both trees' paths, plus the value's
 * overflow pages), spilling the least recently used pages when the set
 * would pass the environment's limit.  The limit is soft: one operation may
 * go past it, the next one brings the set back below.  key and data may
 * point into dirty pages (a value read earlier in the txn): those pages stay.
 */
static inline int dl_dirty_room(MDB_txn *txn, MDB_cursor *mc, MDB_dbi dbi,
	const MDB_val *key, const MDB_val *data)
{
	size_t need = 2 * ((size_t)txn->dbs[dbi].md_depth +
		txn->dbs[DL_MAIN_DBI].md_depth + 2) + 8;
	if (data)
		need += (PAGEHDRSZ + data->mv_size + txn->env->psize - 1) / txn->env->psize;
	if (__builtin_expect(txn->dirty.count + need <= txn->env->dirtylimit, 1))
		return 0;
	return dl_spill(txn, mc, key, data, need);
}

/* layout.c: version-1 layout misread guard at open */
int  dl_layout_decide(MDB_env *env, int told, unsigned *why);

/* freelist.c */
int  dl_fl_load_more(MDB_txn *txn, int *got);
int  dl_fl_save(MDB_txn *txn);

/* btree.c */
int  dl_node_read(MDB_cursor *mc, MDB_node *node, MDB_val *data);

/*
 * How many pages from page 2 on the txn's snapshot holds that the map can
 * be read at: min(fpages, snap_pages) - 2, 0 when that is not positive.  A
 * page number pg lies among them exactly when pg - 2 < the result (one
 * unsigned compare bounds it on both sides).  Pages past snap_pages are
 * ones a write txn allocated: the paths that read the map directly leave
 * them to dl_page_get, even when the txn spilled every page it holds.
 */
static inline pgno_t dl_txn_map_span(const MDB_txn *txn)
{
	pgno_t lim = txn->fpages < txn->snap_pages ? txn->fpages : txn->snap_pages;
	return lim > 2 ? lim - 2 : 0;
}

/*
 * The overflow run of a dsz-byte value at page rel + 2, where rel < span
 * and every page below span + 2 is read from the map: the value's address
 * when that page is an overflow page whose run holds dsz bytes and ends at
 * or below span + 2; NULL otherwise.  No division.
 */
static inline __attribute__((always_inline)) char *dl_ov_in_span(const MDB_env *env,
	pgno_t rel, size_t dsz, pgno_t span)
{
	/* The pages the run may take, worked out before its header is
	 * read: fewer registers while the header is tested. */
	size_t room = span - rel, psize = env->psize;
	__asm__("" : "+r"(room));
	MDB_page *omp = (MDB_page *)(env->map + (size_t)(rel + 2) * psize);
	uint64_t np = omp->mp_u.pages;
	if (!IS_OVERFLOW(omp) || np > room)
		return NULL;
	/* The run holds the value: np * psize >= dsz + PAGEHDRSZ (both
	 * far below 2^64; np = 0 fails it). */
	if (np * psize < dsz + PAGEHDRSZ)
		return NULL;
	return (char *)omp + PAGEHDRSZ;
}

/*
 * The common case of an overflow value, for dl_node_read and the cursor
 * read paths: in a txn that reads every page from the map (no dirty
 * pages, no parent), the address of the dsz-byte value whose run starts at
 * page pg, when that page lies below both the snapshot's and the file's
 * page counts, is an overflow page whose run holds dsz bytes, and the run
 * ends below both counts too.  NULL leaves the case to the rest of
 * dl_node_read, which decides it (dirty pages, runs longer than the value
 * needs that end past the file) or reports the damage.  A read txn's
 * bound is its mapspan; a write txn (mapspan 0) works it out each time.
 * No calls: the callers' registers stay free.
 */
static inline __attribute__((always_inline)) char *dl_ov_snapshot(const MDB_txn *txn,
	const MDB_env *env, pgno_t pg, size_t dsz)
{
	pgno_t span = txn->mapspan;
	if (__builtin_expect(!span, 0)) {
		if (txn->dirty.count || txn->parent)
			return NULL;
		span = dl_txn_map_span(txn);
	}
	pgno_t rel = pg - 2;
	return rel < span ? dl_ov_in_span(env, rel, dsz, span) : NULL;
}

/*
 * Where the page number of node's overflow run (F_BIGDATA; in the page
 * ending at end) lies; NULL when it does not fit before end.
 */
static inline __attribute__((always_inline)) const char *dl_big_pgno_at(const MDB_env *env,
	const MDB_node *node, const char *end)
{
	size_t ks = node->mn_ksize;
	const char *dptr = (const char *)node->mn_data + ks + (ks & env->pad);
	return dptr + sizeof(pgno_t) > end ? NULL : dptr;
}

/*
 * Where the overflow value of node (F_BIGDATA, not F_DUPDATA; in the page
 * ending at end) lies, when its page number is inside the page and
 * dl_ov_snapshot decides the run; NULL when dl_node_read must decide.
 */
static inline __attribute__((always_inline)) char *dl_big_value(MDB_txn *txn, MDB_env *env,
	MDB_node *node, const char *end)
{
	const char *dptr = dl_big_pgno_at(env, node, end);
	return dptr ? dl_ov_snapshot(txn, env, dl_get64(dptr), NODEDSZ(node)) : NULL;
}

/*
 * One step of the halving searches for the first node not below a key,
 * over the nodes lo..hi: c is the key compared with node mid.  Returns 1
 * when they are equal (the answer is mid, in *at); otherwise narrows
 * lo..hi to the half the answer lies in and sets *at to the answer so
 * far, and returns 0.
 */
static inline __attribute__((always_inline)) int dl_halve(int c, int mid, int *lo, int *hi,
	unsigned *at)
{
	if (c == 0) {
		*at = (unsigned)mid;
		return 1;
	}
	if (c < 0) {
		*hi = mid - 1;
		*at = (unsigned)mid;
	} else {
		*lo = mid + 1;
		*at = (unsigned)mid + 1;
	}
	return 0;
}

int  dl_search(MDB_cursor *mc, const MDB_val *key, int mode);
int  dl_get_value(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key, MDB_val *data);
int  dl_cursor_set_plain(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op);
int  dl_search_lowest(MDB_cursor *mc);
int  dl_search_edge(MDB_cursor *mc, int last);
MDB_node *dl_leaf_search(MDB_cursor *mc, const MDB_val *key, int *exact);
int  dl_cursor_put0(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags);
int  dl_cursor_del0(MDB_cursor *mc);
int  dl_drop_tree(MDB_cursor *mc);
int  dl_cursor_touch_counts(MDB_cursor *mc, int recount);
/* Make the cursor's path writable for a write that may change counts. */
static inline int dl_cursor_touch(MDB_cursor *mc)
{
	return dl_cursor_touch_counts(mc, 1);
}
int  dl_cursor_insert(MDB_cursor *mc, MDB_val *key, MDB_val *data);
int  dl_node_replace(MDB_cursor *mc, const MDB_val *key, MDB_val *data, unsigned flags);
/* btree.c: page and tree edits pfxedit.c shares */
unsigned char *dl_page_open(MDB_page *mp, unsigned idx, size_t len);
void dl_page_del_raw(MDB_page *mp, unsigned idx, size_t sz);
void dl_page_init(MDB_env *env, MDB_page *mp, unsigned flags);
int  dl_parent_add(MDB_cursor *mc, int level, pgno_t left, const MDB_val *sep, pgno_t right);
int  dl_reseek_key(MDB_cursor *mc, const MDB_val *key);
int  dl_update_key(MDB_cursor *mc, int level, unsigned idx, const MDB_val *key, int *split);

/*
 * env->filepages is read by readers starting a txn without any lock while a
 * committing writer raises it: relaxed atomics are enough, since a stale
 * value only makes the reader re-check the file size (dl_file_pages).
 */
static inline pgno_t dl_fpages_get(MDB_env *env)
{
	return __atomic_load_n(&env->filepages, __ATOMIC_RELAXED);
}

static inline void dl_fpages_set(MDB_env *env, pgno_t n)
{
	__atomic_store_n(&env->filepages, n, __ATOMIC_RELAXED);
}

/*
 * Give a read txn its reader slot and publish the snapshot it will use in
 * it; sets txn->txnid (the caller then reads meta page txnid & 1).  Inline:
 * it is most of the cost of mdb_txn_renew.
 *
 * Publishing retries if a commit raced with us.  This is a store-then-load
 * handshake with the writer (which stores the header txnid, then scans the slots in
 * dl_oldest_reader), so both sides need a full barrier.  Why the writer
 * cannot miss us: all accesses involved are seq_cst (the writer's are a
 * seq_cst store and a seq_cst fence before its scan), so they sit in one
 * total order S.  If our re-load still reads t, it precedes in S the store
 * of t + 1, which happens before any writer that could free t's pages
 * scans; our exchange precedes the re-load, so that scan must see it (or a
 * later value of the slot).  If the re-load reads something newer we retry.
 * An atomic exchange gives the barrier at less cost than a store plus a
 * separate fence on common CPUs (one locked instruction on x86).
 */
static inline int dl_reader_acquire(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	if (!env->lock) {
		/* No reader table: use whichever meta is newer. */
		txn->txnid = dl_meta_current(env)->mm_txnid;
		return 0;
	}
	if (!txn->slot) {
		int rc = dl_reader_slot(txn);
		if (rc)
			return rc;
	}
	dl_reader *r = txn->slot;
	txnid_t t;
	do {
		t = __atomic_load_n(env->lk_txnid, __ATOMIC_ACQUIRE);
		/* A commit newer than t can only be on the other meta page (the
		 * next writer starts after t + 1 is published): one load tells
		 * whether a writer may have died before publishing it. */
		MDB_meta *o = (MDB_meta *)(env->map + (~t & 1) * env->psize + PAGEHDRSZ);
		if (__builtin_expect(__atomic_load_n(&o->mm_txnid, __ATOMIC_ACQUIRE) > t, 0)) {
			dl_writer_dead_check(env);
			t = __atomic_load_n(env->lk_txnid, __ATOMIC_ACQUIRE);
		}
		(void)__atomic_exchange_n(&r->r_txnid, t, __ATOMIC_SEQ_CST);
	} while (t != __atomic_load_n(env->lk_txnid, __ATOMIC_SEQ_CST));
	txn->txnid = t;
	return 0;
}

/*
 * Are lower/upper sane for a page (or inline sub-page) of sz bytes?
 * A LEAF2 page keeps LMDB's accounting: each packed item moves lower up by 2
 * and upper down by (item size - 2), so only upper - lower is meaningful
 * (the free bytes) and with 1-byte items upper legitimately ends past sz
 * (lmdb-format.md §7).  So for LEAF2 check the items plus the free space fit.
 */
static inline int dl_bounds_ok(const MDB_page *mp, size_t sz, size_t ksize)
{
	unsigned lo = MP_LOWER(mp), up = MP_UPPER(mp);
	if (lo < PAGEHDRSZ || lo > up || (lo & 1))
		return 0;
	if (mp->mp_flags & P_LEAF2)
		return PAGEHDRSZ + (size_t)NUMKEYS(mp) * ksize + (up - lo) <= sz;
	return up <= sz;
}

/*
 * Whether a tree page's flags fit its role: exactly one of branch or leaf,
 * never an overflow or meta page; a branch never P_LEAF2 (its nodes are not
 * packed items) and a leaf never P_COUNTED (NODEKEY would skip 8 bytes that
 * are key bytes, and returned items would point past the node).
 */
static inline int dl_page_flags_ok(unsigned f)
{
	switch (f & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META)) {
	case P_BRANCH:
		return !(f & P_LEAF2);
	case P_LEAF:
		return !(f & P_COUNTED);
	default:
		return 0;
	}
}

/* An inline duplicate sub-page is a leaf (packed items or nodes), never
 * counted. */
static inline int dl_subpage_flags_ok(unsigned f)
{
	return (f & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_COUNTED)) == P_LEAF;
}

/* Page header sanity before trusting a tree page: its flags fit a branch or
 * a leaf, and lower/upper are sane.  A LEAF2 page's items are read with the
 * size in its own mp_pad, so that is the size its bounds are checked with. */
static inline int dl_page_check(MDB_env *env, MDB_page *mp)
{
	return dl_page_flags_ok(mp->mp_flags) &&
		dl_bounds_ok(mp, env->psize, IS_LEAF2(mp) ? mp->mp_pad : 0) ?
		0 : MDB_CORRUPTED;
}

/* Whether mc walks a duplicate sub-tree: its record is then the
 * sub-cursor's own copy, not the txn's record of the handle. */
static inline int dl_cursor_subtree(const MDB_cursor *mc)
{
	return mc->db != &mc->txn->dbs[mc->dbi];
}

int dl_leaf2_page_check(const MDB_cursor *mc, MDB_page *mp);

/*
 * A leaf reached by cursor mc's descent, as far as its LEAF2 flag goes: a
 * page of packed fixed-size duplicates is checked out of line (lookups
 * reach plain leaves only; the test costs them one flag test).
 */
static inline int dl_leaf2_check(const MDB_cursor *mc, MDB_page *mp)
{
	return (mp->mp_flags & P_LEAF2) ? dl_leaf2_page_check(mc, mp) : 0;
}

/* Lexicographic order, inlined into the search loops for the default case. */
static inline int dl_lex(const MDB_val *a, const MDB_val *b)
{
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	int r = memcmp(a->mv_data, b->mv_data, n);
	if (r)
		return r;
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

static inline uint64_t dl_be64(const void *p)
{
	return __builtin_bswap64(dl_get64(p));
}

/* Default order of a[0..al) and b[0..bl), inline (no library call): 8
 * bytes at a time, then 4 (twice, overlapping) or byte by byte. */
static inline int dl_lex_inline(const unsigned char *a, size_t al, const unsigned char *b,
	size_t bl)
{
	size_t n = al < bl ? al : bl, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x = dl_be64(a + i), y = dl_be64(b + i);
		if (x != y)
			return x < y ? -1 : 1;
	}
	if (n - i >= 4) {
		uint32_t x, y;
		memcpy(&x, a + i, 4);
		memcpy(&y, b + i, 4);
		if (x == y) {
			memcpy(&x, a + n - 4, 4);
			memcpy(&y, b + n - 4, 4);
		}
		if (x != y)
			return __builtin_bswap32(x) < __builtin_bswap32(y) ? -1 : 1;
	} else {
		for (; i < n; i++)
			if (a[i] != b[i])
				return a[i] < b[i] ? -1 : 1;
	}
	return al < bl ? -1 : al > bl;
}

/* cmp(a, b), the default order inline (no call). */
static inline int dl_cmp_fast(MDB_cmp_func *cmp, const MDB_val *a, const MDB_val *b)
{
	if (cmp == dl_cmp_lex)
		return dl_lex_inline(a->mv_data, a->mv_size, b->mv_data, b->mv_size);
	return cmp(a, b);
}

/* Node sizes and data address (btree.c, pfxedit.c, copy.c). */
static inline size_t dl_leaf_dpart(const MDB_node *n)
{
	return (n->mn_flags & F_BIGDATA) ? sizeof(pgno_t) : NODEDSZ(n);
}

static inline void *dl_leaf_data(MDB_env *env, MDB_node *n)
{
	return (char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad);
}

/* Bytes a node occupies on page mp (without its pointer). */
static inline size_t dl_node_size(MDB_env *env, MDB_page *mp, MDB_node *n)
{
	if (IS_LEAF2(mp))
		return mp->mp_pad;
	if (IS_BRANCH(mp))
		return EVEN(NODEKOFF(mp) + n->mn_ksize);
	return EVEN(NODESZ + n->mn_ksize + (n->mn_ksize & env->pad) + dl_leaf_dpart(n));
}

/*
 * Check that node n of page mp lies inside the page (even offset, header,
 * key and, for leaves, the data part), so a damaged file gives MDB_CORRUPTED
 * instead of a wild read.  Inline: it runs on every search probe.
 */
static inline int dl_node_check(MDB_env *env, MDB_page *mp, MDB_node *n, int leaf)
{
	size_t off = (size_t)((char *)n - (char *)mp);
	size_t end;
	if ((off & 1) || off < MP_LOWER(mp) || off + NODESZ > env->psize)
		return MDB_CORRUPTED;
	if (leaf)
		end = off + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad) +
			((n->mn_flags & F_BIGDATA) ? sizeof(pgno_t) : NODEDSZ(n));
	else
		end = off + NODEKOFF(mp) + n->mn_ksize;
	return end > env->psize ? MDB_CORRUPTED : 0;
}

/* prefix.c: DLMDB prefix-compressed leaves (format and codec in prefix.h) */
#include "prefix.h"

/*
 * Full key of leaf entry i.  On a prefix-compressed leaf (cursor flag
 * C_PREFIX, not LEAF2) entries after node 0 are decoded into buf.
 */
static inline int dl_leaf_keyd(MDB_cursor *mc, MDB_page *mp, unsigned i, MDB_val *k,
	unsigned char *buf)
{
	if (IS_LEAF2(mp)) {
		k->mv_size = mp->mp_pad;
		k->mv_data = (char *)mp + PAGEHDRSZ + (size_t)i * mp->mp_pad;
		return 0;
	}
	MDB_node *n = NODEPTR(mp, i);
	if (!(mc->flags & C_PREFIX) || i == 0) {
		k->mv_size = n->mn_ksize;
		k->mv_data = NODEKEY(mp, n);
		return 0;
	}
	return dl_prefix_decode(mp, n, buf, k);
}

/* Internal put flag: the node is a named-DB record (F_SUBDATA). */
#define DL_PUT_SUBDATA	0x80000000u
/* Internal put flag: the node holds duplicates (F_DUPDATA). */
#define DL_PUT_DUPDATA	0x40000000u
/* Internal put flag: the caller drops the cursor after the put (mdb_put),
 * so a leaf split need not find the new node again. */
#define DL_PUT_NOPOS	0x20000000u

/* search modes */
#define DL_PS_KEY	0
#define DL_PS_FIRST	1
#define DL_PS_LAST	2
#define DL_PS_MODIFY	4	/* touch the path for writing */

/*
 * dl_cursor_init in two parts.  The lookup part sets what a lookup by key
 * reads (its txn, DB, comparator and flags; the search sets the stack);
 * mdb_get's lookup (dl_get_value) needs no more unless the value is not in
 * the leaf, when it adds the rest (unpositioned, no sub-cursor, nothing
 * saved) before the cursor goes anywhere else.
 */
static inline __attribute__((always_inline)) void dl_cursor_init_lookup(MDB_cursor *mc,
	MDB_txn *txn, MDB_dbi dbi)
{
	mc->txn = txn;
	mc->dbi = dbi;
	mc->db = &txn->dbs[dbi];
	mc->dbx = &txn->env->dbxs[dbi];
	mc->flags = C_UNTRACKED | ((txn->flags & TXN_RDONLY) ? 0 : C_WRITE) |
		((txn->env->dbxs[dbi].flags & MDB_PREFIX_COMPRESSION) ? C_PREFIX : 0);
	mc->top = -1;
}

static inline __attribute__((always_inline)) void dl_cursor_init_rest(MDB_cursor *mc)
{
	mc->duplen = ~0u;
	mc->next = NULL;
	mc->pos = DL_POS_UNSET;
	mc->xcursor = NULL;
	mc->backup = NULL;
	mc->keylen = 0;
	mc->kc_pg = NULL;
	mc->pfd = 0;
}

/*
 * C_DUPSORT from the cursor's DB record, for the plain scan step
 * (cursor.c, dl_step_fast), which tests it with the cursor's other flags
 * instead of reading the record: set for a DUPSORT DB, and while the
 * record is not loaded (its flags unknown yet).  A set flag on a plain DB
 * only sends the step to the general path, which syncs it again
 * (dl_cursor_get_here); a clear flag on a DUPSORT DB must never happen:
 * whatever makes a DB DUPSORT under open cursors sets it on them
 * (dl_dbi_open_main).
 */
static inline void dl_cursor_sync_dupsort(MDB_cursor *mc)
{
	if ((mc->txn->dbflags[mc->dbi] & DB_STALE) || (mc->db->md_flags & MDB_DUPSORT))
		mc->flags |= C_DUPSORT;
	else
		mc->flags &= ~C_DUPSORT;
}

/* cursor.c */
void dl_cursor_init(MDB_cursor *mc, MDB_txn *txn, MDB_dbi dbi);
void dl_cursors_save(MDB_cursor *mc);
int  dl_key_inside_leaf(MDB_cursor *mc, const MDB_val *key);
void dl_cursors_unposition(MDB_txn *txn, MDB_dbi dbi, const MDB_cursor *except);
int  dl_cursor_reseek(MDB_cursor *mc);
int  dl_cursor_next_leaf(MDB_cursor *mc);
int  dl_cursor_prev_leaf(MDB_cursor *mc);

int  dl_cursor_current(MDB_cursor *mc, MDB_val *key, MDB_val *data);
int  dl_cursor_first(MDB_cursor *mc, MDB_val *key, MDB_val *data, int last);
int  dl_cursor_next(MDB_cursor *mc, MDB_val *key, MDB_val *data);
int  dl_cursor_prev(MDB_cursor *mc, MDB_val *key, MDB_val *data);
int  dl_cursor_set(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op);

/* dupread.c (reading sorted duplicates; the sub-cursor is in dupcursor.h) */
int  dl_dup_get(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op);
int  dl_dup_count(MDB_cursor *mc, mdb_size_t *countp);
int  dl_dup_first_item(MDB_cursor *mc, MDB_node *node, MDB_val *data);
void dl_dup_save(MDB_cursor *mc);
int  dl_dup_restore(MDB_cursor *mc);
void dl_dup_free(void *xcursor);
int  dl_dup_owns(MDB_cursor *mc, const void *p);
MDB_cursor *dl_dup_subcursor(MDB_cursor *mc);
int  dl_dup_rank(MDB_cursor *mc, uint64_t idx);
int  dl_dup_index(MDB_cursor *mc, uint64_t *idx);

/* dupwrite.c (putting and deleting sorted duplicates) */
int  dl_dup_put(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags);
int  dl_dup_del(MDB_cursor *mc, const MDB_val *data, int all);
int  dl_dup_put_tmp(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags);
int  dl_dup_del_key(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data);
int  dl_dup_cursor_put(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags);

/* count.c (count and rank queries on counted DBs) */
int  dl_bcount(MDB_env *env, MDB_page *mp, unsigned i, uint64_t *out);
int  dl_contrib(MDB_env *env, MDB_page *mp, unsigned i, uint64_t *out);
int  dl_rank_descend(MDB_cursor *mc, uint64_t r, uint64_t *left);

/* countfix.c (recomputing counted-branch counts after writes) */
int  dl_count_fix(MDB_txn *txn, MDB_dbi dbi);
int  dl_count_fix_all(MDB_txn *txn);

/* dbi.c */
int  dl_dbi_check(MDB_txn *txn, MDB_dbi dbi, int user);

/* Extend txn's per-handle tables to n entries: the new ones start as a
 * handle this txn has not seen (no flags, no cursors). */
static inline void dl_txn_dbs_grow(MDB_txn *txn, unsigned n)
{
	DL_ASSERT(n <= txn->env->numdbs && n <= txn->env->maxdbs);
	for (unsigned i = txn->numdbs; i < n; i++) {
		memset(&txn->dbs[i], 0, sizeof(MDB_db));
		txn->dbflags[i] = 0;
		txn->dbseq[i] = 0;
		txn->cursors[i] = NULL;
	}
	if (n > txn->numdbs)
		txn->numdbs = n;
}

int  dl_db_load(MDB_txn *txn, MDB_dbi dbi);
int  dl_dbs_flush(MDB_txn *txn);
void dl_dbi_txn_end(MDB_txn *txn, int committed);

/* txn.c */
int  dl_txn_bad(MDB_txn *txn);
void *dl_txn_scratch(MDB_txn *txn, size_t size);
void dl_wtxn_orphan_abort(MDB_env *env);
void dl_txn_release(MDB_txn *txn);

/* Set env->steplim from the page size and the interrupt flag.  The flag
 * is tested after the page size is stored, with a full fence between the
 * two (a store may otherwise wait in the store buffer past the load): a
 * signal handler or another thread that raises the flag meanwhile, and
 * zeroes the limit itself, is then seen by that test or stores its zero
 * after this store, so the limit is never left at the page size while the
 * flag is up. */
static inline void dl_env_steplim(MDB_env *env)
{
	volatile unsigned *lim = &env->steplim;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*lim = env->psize;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (env->interrupted)
		*lim = 0;
}

/* Whether the txn has been interrupted: sets the error state. */
static inline int dl_check_intr(MDB_txn *txn)
{
	if (txn->env->interrupted) {
		txn->flags |= TXN_ERROR;
		txn->lasterr = EINTR;
		return EINTR;
	}
	return 0;
}

#endif /* DLMDB_INTERNAL_H */
