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
#define DB_CNTSTALE	0x80	/* counted DB changed: branch counts need fixing */

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
	/* Recycled single-page buffers (singly linked through their first word). */
	MDB_page *pagepool;
	size_t	npool;
	/* Single-page buffers are cut from large anonymous maps (page.c): each
	 * slab is kept until the env closes; slabnext/slableft is the unused
	 * tail of the newest. */
	void	**slabs;
	size_t	nslabs, slabcap;
	char	*slabnext;
	size_t	slableft;
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

struct MDB_txn {
	MDB_env	*env;
	MDB_txn	*parent;
	MDB_txn	*child;		/* active nested txn */
	dl_idl	ploose;		/* nested: freed pages an ancestor had dirty */
	unsigned flags;
	txnid_t	txnid;
	pgno_t	next_pgno;	/* first page not in use */
	pgno_t	fpages;		/* pages of the file readable through the map */
	dl_reader *slot;
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

#define C_INIT		0x01	/* positioned */
#define C_EOF		0x02	/* past the last item */
#define C_DEL		0x04	/* item under the cursor was deleted */
#define C_RESEEK	0x08	/* tree changed: reposition from keybuf */
#define C_UNTRACKED	0x10	/* internal cursor, not on the txn list */
#define C_WRITE		0x20	/* belongs to a write txn */
#define C_ATEND		0x40	/* DUPSORT: placed by LAST; NEXT answers NOTFOUND (LMDB quirk) */
#define C_PREFIX	0x80	/* leaves of this tree are prefix-compressed */
#define C_DELKIND	0x300	/* DUPSORT: what the last delete removed, C_DK_* below */
#define C_DELGONE	0x1000	/* DUPSORT, with C_DEL and C_DK_DUPEND: a GET_CURRENT ended
				   the duplicate position's deleted state (LMDB keeps the rest) */
#define C_APPENDING	0x800	/* sub-DB cursor: this insert is an MDB_APPENDDUP (split policy) */

/*
 * The delete kind of a DUPSORT cursor (the C_DELKIND field of its flags):
 * one value, never a combination.  It refines C_DEL ("the item under the
 * cursor was deleted") with what went, which decides how LMDB answers the
 * next op.  Written by dl_dup_del (dupwrite.c); read, changed and ended by
 * dl_dup_get and its helpers (dupread.c).  Only read while C_DEL is set.
 *
 *   C_DK_NONE    no delete, or its state ended (most ops end it; an
 *                unpositioned cursor has none)
 *   C_DK_KEY     the key's only item (or the whole key) went; mc is on the
 *                following key.  NEXT: that key's first item; NEXT_DUP:
 *                MDB_NOTFOUND, and the kind becomes C_DK_DUP when that key
 *                has duplicates (dl_dup_next_deleted).
 *   C_DK_DUP     a duplicate went and the key keeps one after it; mc is on
 *                that one.  NEXT, NEXT_DUP: that item; a NEXT_NODUP that
 *                finds no next key leaves the state as it was.  FIRST_DUP,
 *                LAST_DUP and a refused PREV_NODUP also leave this kind
 *                when they keep the deleted state.
 *   C_DK_DUPEND  the key's last duplicate went and others stay; mc sits on
 *                the key past its end.  GET_CURRENT, NEXT_DUP: MDB_NOTFOUND,
 *                state kept (GET_CURRENT adds C_DELGONE); PREV, PREV_DUP:
 *                the new last duplicate; NEXT, NEXT_NODUP, PREV_NODUP: the
 *                next or previous key (dl_dup_get_dupend).
 */
#define C_DK_NONE	0x000
#define C_DK_KEY	0x100
#define C_DK_DUPEND	0x200
#define C_DK_DUP	0x300

struct MDB_cursor {
	MDB_cursor *next;
	MDB_txn	*txn;
	MDB_dbi	dbi;
	MDB_db	*db;
	dl_dbx	*dbx;
	unsigned flags;
	int	top;		/* index of the leaf level in pg[]/ki[]; -1 = none */
	MDB_page *pg[DL_MAXDEPTH];
	indx_t	ki[DL_MAXDEPTH];
	void	*xcursor;	/* DUPSORT sub-cursor (later) */
	MDB_cursor *backup;	/* nested txn: state to restore if the child aborts */
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

/* The cursor's delete kind (C_DK_*), and setting it. */
static inline unsigned dl_delkind(const MDB_cursor *mc)
{
	return mc->flags & C_DELKIND;
}

static inline void dl_set_delkind(MDB_cursor *mc, unsigned kind)
{
	mc->flags = (mc->flags & ~C_DELKIND) | kind;
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
int  dl_meta_write(MDB_txn *txn);

/* page.c: dirty table, buffers, allocation */
int  dl_page_get(MDB_txn *txn, pgno_t pgno, MDB_page **ret);
MDB_page *dl_dirty_find(dl_dirty *d, pgno_t pgno, unsigned *npages);
int  dl_dirty_add(dl_dirty *d, pgno_t pgno, MDB_page *mp, unsigned npages);
int  dl_dirty_del(dl_dirty *d, pgno_t pgno);
void dl_dirty_free(MDB_env *env, dl_dirty *d);
MDB_page *dl_buf_get(MDB_env *env, unsigned npages);
void dl_buf_put(MDB_env *env, MDB_page *mp, unsigned npages);
void dl_buf_release(MDB_env *env);
int  dl_page_alloc(MDB_cursor *mc, unsigned num, MDB_page **ret);
int  dl_page_free(MDB_txn *txn, pgno_t pgno, unsigned num);
int  dl_page_touch(MDB_cursor *mc, int level);
int  dl_page_wcheck(MDB_env *env, const MDB_db *db, int subdb, MDB_page *mp);
void dl_wchecked_begin(MDB_env *env, txnid_t snapshot);
void dl_wchecked_committed(MDB_txn *txn);
int  dl_txn_err(MDB_txn *txn, int rc);
int  dl_txn_fail(MDB_txn *txn, int rc);
int  dl_page_owned(MDB_txn *txn, MDB_page *mp);
MDB_page *dl_dirty_swap(dl_dirty *d, pgno_t pgno, MDB_page *mp, unsigned npages, unsigned *oldn);
void dl_cursor_save_one(MDB_cursor *c);
void dl_cursor_free(MDB_cursor *c);

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
int  dl_search(MDB_cursor *mc, const MDB_val *key, int mode);
int  dl_search_key(MDB_cursor *mc, const MDB_val *key, MDB_node **node, int *exact);
int  dl_search_lowest(MDB_cursor *mc);
int  dl_search_edge(MDB_cursor *mc, int last);
MDB_node *dl_leaf_search(MDB_cursor *mc, const MDB_val *key, int *exact);
int  dl_cursor_put0(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags);
int  dl_cursor_del0(MDB_cursor *mc);
int  dl_drop_tree(MDB_cursor *mc);
int  dl_cursor_touch(MDB_cursor *mc);
int  dl_cursor_insert(MDB_cursor *mc, MDB_val *key, MDB_val *data);
int  dl_node_replace(MDB_cursor *mc, const MDB_val *key, MDB_val *data, unsigned flags);

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

/*
 * A LEAF2 page (packed fixed-size duplicates) reached by a descent: its
 * item size mp_pad must be non-zero, agree with the sub-database record's
 * item size when that is known, and its items must fit in the page, or the
 * items handed out would run past the page.
 */
static inline int dl_leaf2_check(MDB_env *env, const MDB_db *db, MDB_page *mp)
{
	size_t k = mp->mp_pad;
	if (!(mp->mp_flags & P_LEAF2))
		return 0;
	if (!k || (db->md_pad && k != db->md_pad) || !dl_bounds_ok(mp, env->psize, k))
		return MDB_CORRUPTED;
	return 0;
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

/* search modes */
#define DL_PS_KEY	0
#define DL_PS_FIRST	1
#define DL_PS_LAST	2
#define DL_PS_MODIFY	4	/* touch the path for writing */

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
int  dl_db_load(MDB_txn *txn, MDB_dbi dbi);
int  dl_dbs_flush(MDB_txn *txn);
void dl_dbi_txn_end(MDB_txn *txn, int committed);

/* txn.c */
int  dl_txn_bad(MDB_txn *txn);
void *dl_txn_scratch(MDB_txn *txn, size_t size);
void dl_wtxn_orphan_abort(MDB_env *env);

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
