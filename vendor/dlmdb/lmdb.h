/*
 * lmdb.h - public interface of dlmdb, a clean-room embedded key/value store.
 *
 * dlmdb speaks the C API of LMDB (0.9 and the 1.0 development line) together
 * with the additions made by DLMDB (Datalevin's fork): order statistics on
 * counted databases, prefix-compressed databases, in-memory environments and
 * an interrupt flag.  Files are interchangeable with LMDB (data version 1) and
 * DLMDB (data versions 1 and 2).
 *
 * Everything in this header was written for dlmdb; names, numeric values and
 * prototypes follow the LMDB/DLMDB ABI so existing programs recompile as-is.
 *
 * Build note: when compiled with -DDLMDB_PREFIX_SYMBOLS every exported
 * function is renamed mdb_X -> dlmdb_X (see dlmdb_prefix.h) so this engine can
 * be linked into the same program as stock LMDB.
 */
#ifndef DLMDB_LMDB_H
#define DLMDB_LMDB_H

#ifdef DLMDB_PREFIX_SYMBOLS
#include "dlmdb_prefix.h"
#endif

#include <sys/types.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Basic types                                                               */
/* ------------------------------------------------------------------------- */

/** Permission bits for files the library creates. */
typedef mode_t mdb_mode_t;

/** An open file: a POSIX file descriptor. */
typedef int mdb_filehandle_t;

/** Page numbers, transaction ids and sizes (the 1.0 API name). */
typedef size_t mdb_size_t;

#define MDB_SIZE_MAX	SIZE_MAX	/**< largest mdb_size_t */
#define MDB_FMT_Z	"z"		/**< printf length modifier for mdb_size_t */
/** printf conversion for mdb_size_t, e.g. MDB_PRIy(u) gives "zu". */
#define MDB_PRIy(t)	MDB_FMT_Z #t
/** scanf conversion for mdb_size_t. */
#define MDB_SCNy(t)	MDB_FMT_Z #t

/* ------------------------------------------------------------------------- */
/* Version                                                                   */
/* ------------------------------------------------------------------------- */

#define MDB_VERSION_MAJOR	1
#define MDB_VERSION_MINOR	1
#define MDB_VERSION_PATCH	0

/** Pack a version triple into one integer that compares in version order. */
#define MDB_VERINT(a,b,c)	(((a) << 24) | ((b) << 16) | (c))
#define MDB_VERSION_FULL	\
	MDB_VERINT(MDB_VERSION_MAJOR,MDB_VERSION_MINOR,MDB_VERSION_PATCH)
#define MDB_VERSION_DATE	"November 22, 2026"
/* Two-level expansion so the numeric macros are stringified by value. */
#define MDB_VERSTR(a,b,c,d)	"dlmdb " #a "." #b "." #c ": (" d ")"
#define MDB_VERFOO(a,b,c,d)	MDB_VERSTR(a,b,c,d)
#define MDB_VERSION_STRING	\
	MDB_VERFOO(MDB_VERSION_MAJOR,MDB_VERSION_MINOR,MDB_VERSION_PATCH,MDB_VERSION_DATE)

/* ------------------------------------------------------------------------- */
/* Opaque handles and callback types                                         */
/* ------------------------------------------------------------------------- */

/** An environment: one data file (plus its lock file) mapped into memory. */
typedef struct MDB_env MDB_env;

/** A transaction: a consistent snapshot (read-only) or the single writer. */
typedef struct MDB_txn MDB_txn;

/** A database handle inside an environment (0 = free pages, 1 = main DB). */
typedef unsigned int MDB_dbi;

/** A position inside one database of one transaction. */
typedef struct MDB_cursor MDB_cursor;

/**
 * A byte string passed in or out of the library.  For results, mv_data points
 * into the memory map (read-only) and stays valid until the transaction ends
 * or the next write in it.  Field order (size, then pointer) is part of the ABI.
 */
typedef struct MDB_val {
	size_t	 mv_size;	/**< length in bytes */
	void	*mv_data;	/**< address of the bytes */
} MDB_val;

/** Ordering function for keys or duplicate values: <0, 0 or >0. */
typedef int (MDB_cmp_func)(const MDB_val *a, const MDB_val *b);

/** Relocation callback.  Accepted and stored for compatibility; never called. */
typedef void (MDB_rel_func)(MDB_val *item, void *oldptr, void *newptr, void *relctx);

/* ------------------------------------------------------------------------- */
/* Environment flags (mdb_env_open / mdb_env_set_flags / mdb_env_get_flags)  */
/* ------------------------------------------------------------------------- */

/**
 * Map at a fixed address, as stock LMDB does: a store created with this flag
 * records its map address in both meta pages (mdb_env_info's me_mapaddr);
 * opening it with the flag maps there, and fails with EBUSY when that
 * address range is taken (mmap is only given the address as a hint, so
 * nothing already mapped is replaced).  A store that recorded no address
 * maps anywhere; opening without the flag ignores the address.  Growing the
 * map (mdb_env_set_mapsize) keeps the address or fails with EBUSY.
 */
#define MDB_FIXEDMAP	0x01
/** The path names the data file itself; the lock file is path + "-lock". */
#define MDB_NOSUBDIR	0x4000
/** Skip flushing at commit: fast, but the last commits may be lost on a crash. */
#define MDB_NOSYNC	0x10000
/** Read-only environment; write transactions fail with EACCES. */
#define MDB_RDONLY	0x20000
/** Flush data pages at commit but not the meta page. */
#define MDB_NOMETASYNC	0x40000
/** Use a writable shared map.  This engine still builds changed pages in
 * memory and writes them with pwrite (see DLMDB_DIRTY_LIMIT). */
#define MDB_WRITEMAP	0x80000
/** With MDB_WRITEMAP: flush asynchronously. */
#define MDB_MAPASYNC	0x100000
/** Reader slots belong to transaction handles rather than to threads. */
#define MDB_NOTLS	0x200000
/** No lock file and no locking; the caller serialises all access. */
#define MDB_NOLOCK	0x400000
/** Ask the OS not to read ahead in the map. */
#define MDB_NORDAHEAD	0x800000
/** Do not zero fresh page buffers before they are written out. */
#define MDB_NOMEMINIT	0x1000000
/** Open the previous (older) snapshot instead of the newest one. */
#define MDB_PREVSNAPSHOT	0x2000000
/** DLMDB: anonymous in-memory environment; path is ignored, data vanishes at close. */
#define MDB_INMEMORY	0x4000000

/**
 * dlmdb addition: create new stores in stock LMDB format (data version 1,
 * keys not padded) so stock LMDB can read them; an existing version 1 store
 * is read in stock layout (MDB_INCOMPATIBLE when the file proves DLMDB
 * padding).  Opening an existing data version 2 store with this flag fails
 * with MDB_INCOMPATIBLE.  Never stored in the file.
 *
 * Without either MDB_FORMAT_* flag, an existing version 1 store's layout is
 * decided from evidence in the file: DLMDB-only database flags
 * (MDB_COUNTED, MDB_PREFIX_COMPRESSION), counted branch pages, or leaves
 * only one layout parses (a bounded sample); without any evidence (no
 * odd-length key sampled) the store is stock, and odd-length keys written
 * to it are written in stock layout.  mdb_env_get_layout tells the result.
 */
#define MDB_FORMAT_LMDB	0x40000000
/**
 * dlmdb addition: treat a data version 1 store as using DLMDB's even key
 * padding (files written by late-2025 DLMDB builds; MDB_INCOMPATIBLE when the
 * file proves stock layout).  Needed only for files without evidence either
 * way (see MDB_FORMAT_LMDB).  A store created with it is a padded version 1
 * store.  Combining it with MDB_FORMAT_LMDB is EINVAL.  Never stored in the
 * file.
 */
#define MDB_FORMAT_DLMDB_V1	0x00000800
/**
 * dlmdb addition: lock file layouts (x86-64 Linux, glibc).  The lock file is
 * shared in place with every process using the environment, so its layout
 * must be the one the other processes use:
 *  - lock version 1 (format word 0x00010001): LMDB 0.9 (Debian's liblmdb,
 *    py-lmdb and most language bindings);
 *  - lock version 2 (format word 0x2C2F6002): LMDB 1.0 (mdb.master) and DLMDB.
 * When others hold the lock file, its format word decides and these flags
 * are ignored; a word this engine does not know gives MDB_VERSION_MISMATCH.
 * When this process is the first, the layout is, in order: MDB_LOCK_V1 or
 * MDB_LOCK_V2 if given (both is EINVAL); else the environment variable
 * DLMDB_LOCK_FORMAT ("v1", "v2", or "auto"/empty for no choice; any other
 * value is EINVAL); else the data file's family: version 1 for a
 * stock-layout version 1 store (new stores created with MDB_FORMAT_LMDB
 * included), version 2 for DLMDB stores (data version 2, padded version 1).
 * Never stored in the data file.
 */
#define MDB_LOCK_V1	0x10000000
/** dlmdb addition: first opener lays out the lock file as version 2 (see MDB_LOCK_V1). */
#define MDB_LOCK_V2	0x20000000
/*
 * Format of new stores without a flag (programs written for stock LMDB).
 * A store created by mdb_env_open with neither MDB_FORMAT_LMDB nor
 * MDB_FORMAT_DLMDB_V1 is a DLMDB data version 2 store, which stock LMDB and
 * its bindings refuse.  Two switches make such programs create stock stores
 * (data version 1, keys not padded) without changing them:
 *
 *  - build time: compile the library with -DDLMDB_DEFAULT_FORMAT_LMDB
 *    (`make DEFAULT_FORMAT=lmdb`; the dlmdb-sys cargo feature
 *    "stock-format");
 *  - run time: the environment variable DLMDB_CREATE_FORMAT, read at every
 *    mdb_env_open that creates a data file: "lmdb" creates stock stores,
 *    "dlmdb" version 2 stores; it overrides the build-time default.  Any
 *    other non-empty value makes creating a store fail with EINVAL.
 *
 * The flags above still decide when given.  Existing stores open in their own
 * format whatever these say, and MDB_INMEMORY environments are unaffected.
 */
/*
 * Memory of write transactions (dlmdb addition).  A write transaction keeps
 * the pages it changes in memory up to a limit, by default 131072 pages
 * (512 MiB with 4 KiB pages: the size of stock LMDB's dirty list).  Before
 * a put or delete that could pass it, the least recently used changed pages
 * not under a cursor are written to their places in the data file
 * ("spilled") and their memory is reused; a spilled page the transaction
 * reads again is read back into memory with pread (not through the map, so
 * the file's pages do not become resident in the process), as long as the
 * changed pages are below the limit.  Spilled pages are
 * only reachable from the meta page the commit writes, so crash safety is
 * unchanged, and an abort leaves them as unused free space.  A nested
 * transaction spills only pages it allocated itself, so its parent's pages
 * are as they were when it aborts.  Unlike stock LMDB this also applies with
 * MDB_WRITEMAP (this engine does not change pages in the map) and never fails
 * with MDB_TXN_FULL: the limit is soft, a single operation may pass it.
 *
 * The environment variable DLMDB_DIRTY_LIMIT, read at every mdb_env_open,
 * sets the limit in pages: a decimal count of at least 1 (any other
 * non-empty value makes mdb_env_open fail with EINVAL).  Tests use a few
 * pages to make small transactions spill.
 */

/* ------------------------------------------------------------------------- */
/* Database flags (mdb_dbi_open)                                             */
/* ------------------------------------------------------------------------- */

/** Compare keys byte-wise starting from the last byte. */
#define MDB_REVERSEKEY	0x02
/** A key may carry several values, kept sorted. */
#define MDB_DUPSORT	0x04
/** Keys are native unsigned int or size_t, compared numerically. */
#define MDB_INTEGERKEY	0x08
/** With MDB_DUPSORT: every value has the same length. */
#define MDB_DUPFIXED	0x10
/** With MDB_DUPSORT: values are native integers. */
#define MDB_INTEGERDUP	0x20
/** With MDB_DUPSORT: compare values starting from the last byte. */
#define MDB_REVERSEDUP	0x40
/** DLMDB: keep per-subtree entry counts in branch pages (order statistics). */
#define MDB_COUNTED	0x80
/** DLMDB: store leaf keys prefix-compressed against each page's first key. */
#define MDB_PREFIX_COMPRESSION	0x100
/** Create the named database if it does not exist. */
#define MDB_CREATE	0x40000

/* ------------------------------------------------------------------------- */
/* Write flags (mdb_put / mdb_cursor_put / mdb_cursor_del)                   */
/* ------------------------------------------------------------------------- */

/** Fail with MDB_KEYEXIST if the key is present (data receives the old value). */
#define MDB_NOOVERWRITE	0x10
/** DUPSORT: fail if the exact pair exists; cursor_del: remove all values of the key. */
#define MDB_NODUPDATA	0x20
/** cursor_put: replace the item under the cursor. */
#define MDB_CURRENT	0x40
/** Reserve space for the value and return its address for the caller to fill. */
#define MDB_RESERVE	0x10000
/** The key sorts after every existing key (bulk loading). */
#define MDB_APPEND	0x20000
/** DUPSORT: the value sorts after every existing value of the key. */
#define MDB_APPENDDUP	0x40000
/** DUPFIXED cursor_put: store an array of fixed-size values at once. */
#define MDB_MULTIPLE	0x80000

/* Copy flags */
/** Compacting copy: leave out free pages and renumber the rest. */
#define MDB_CP_COMPACT	0x01

/* Flags of the DLMDB counting functions */
/** The lower bound belongs to the range. */
#define MDB_COUNT_LOWER_INCL	0x02
/** The upper bound belongs to the range. */
#define MDB_COUNT_UPPER_INCL	0x04

/* ------------------------------------------------------------------------- */
/* Cursor operations                                                         */
/* ------------------------------------------------------------------------- */

typedef enum MDB_cursor_op {
	MDB_FIRST,		/**< first item of the database */
	MDB_FIRST_DUP,		/**< DUPSORT: first value of the current key */
	MDB_GET_BOTH,		/**< DUPSORT: exact key and exact value */
	MDB_GET_BOTH_RANGE,	/**< DUPSORT: exact key, first value >= given */
	MDB_GET_CURRENT,	/**< the item under the cursor */
	MDB_GET_MULTIPLE,	/**< DUPFIXED: a page of values of the current key */
	MDB_LAST,		/**< last item of the database */
	MDB_LAST_DUP,		/**< DUPSORT: last value of the current key */
	MDB_NEXT,		/**< next item */
	MDB_NEXT_DUP,		/**< DUPSORT: next value of the current key */
	MDB_NEXT_MULTIPLE,	/**< DUPFIXED: next page of values of the current key */
	MDB_NEXT_NODUP,		/**< first value of the next key */
	MDB_PREV,		/**< previous item */
	MDB_PREV_DUP,		/**< DUPSORT: previous value of the current key */
	MDB_PREV_NODUP,		/**< last value of the previous key */
	MDB_SET,		/**< exact key; the key is not returned */
	MDB_SET_KEY,		/**< exact key; the stored key is returned */
	MDB_SET_RANGE,		/**< first key >= the given key */
	MDB_PREV_MULTIPLE	/**< DUPFIXED: previous page of values of the current key */
} MDB_cursor_op;

/* ------------------------------------------------------------------------- */
/* Return codes                                                              */
/* ------------------------------------------------------------------------- */

#define MDB_SUCCESS	 0
/** The key (or key/value pair) already exists. */
#define MDB_KEYEXIST	(-30799)
/** Nothing matched, or the cursor ran off the end. */
#define MDB_NOTFOUND	(-30798)
/** A page number points outside the file. */
#define MDB_PAGE_NOTFOUND	(-30797)
/** A page has an unexpected type or impossible contents. */
#define MDB_CORRUPTED	(-30796)
/** A fatal error happened earlier; close the environment. */
#define MDB_PANIC	(-30795)
/** The data or lock file format belongs to another library version. */
#define MDB_VERSION_MISMATCH	(-30794)
/** The file is not a database file. */
#define MDB_INVALID	(-30793)
/** The map size limit was reached. */
#define MDB_MAP_FULL	(-30792)
/** All named-database slots (maxdbs) are in use. */
#define MDB_DBS_FULL	(-30791)
/** All reader slots (maxreaders) are in use. */
#define MDB_READERS_FULL	(-30790)
/** Out of thread-local storage keys (not used on POSIX). */
#define MDB_TLS_FULL	(-30789)
/** The transaction has too many dirty pages. */
#define MDB_TXN_FULL	(-30788)
/** Cursor stack too deep (internal). */
#define MDB_CURSOR_FULL	(-30787)
/** A page ran out of room (internal). */
#define MDB_PAGE_FULL	(-30786)
/** Another process grew the data beyond this process's map size. */
#define MDB_MAP_RESIZED	(-30785)
/** The operation does not fit the database's type or flags. */
#define MDB_INCOMPATIBLE	(-30784)
/** A reader slot was reused incorrectly. */
#define MDB_BAD_RSLOT	(-30783)
/** The transaction has failed, has a child, or is not valid here. */
#define MDB_BAD_TXN	(-30782)
/** Key, value or database name has an unsupported size. */
#define MDB_BAD_VALSIZE	(-30781)
/** The database handle is closed or changed. */
#define MDB_BAD_DBI	(-30780)
/** An internal inconsistency; abort the transaction. */
#define MDB_PROBLEM	(-30779)
/** DLMDB: the main DB cannot be dropped while other handles are open. */
#define MDB_DBIS_BUSY	(-30778)
/** The last (highest-numbered in magnitude) library error code. */
#define MDB_LAST_ERRCODE	MDB_DBIS_BUSY

/* ------------------------------------------------------------------------- */
/* Statistics                                                                */
/* ------------------------------------------------------------------------- */

/** Figures of one database (its own B-tree). */
typedef struct MDB_stat {
	unsigned int	ms_psize;		/**< page size */
	unsigned int	ms_depth;		/**< tree height, 0 when empty */
	mdb_size_t	ms_branch_pages;	/**< interior pages */
	mdb_size_t	ms_leaf_pages;		/**< leaf pages */
	mdb_size_t	ms_overflow_pages;	/**< pages holding large values */
	mdb_size_t	ms_entries;		/**< stored items */
} MDB_stat;

/** Figures of the environment. */
typedef struct MDB_envinfo {
	void		*me_mapaddr;	/**< fixed map address, or NULL */
	mdb_size_t	me_mapsize;	/**< this process's map size */
	mdb_size_t	me_last_pgno;	/**< last used page of the newest snapshot */
	mdb_size_t	me_last_txnid;	/**< newest committed transaction id */
	unsigned int	me_maxreaders;	/**< reader slots in the lock table */
	unsigned int	me_numreaders;	/**< reader slots ever used (high-water mark) */
} MDB_envinfo;

/* ------------------------------------------------------------------------- */
/* Library                                                                   */
/* ------------------------------------------------------------------------- */

/** Library version: fills the non-NULL numbers, returns MDB_VERSION_STRING. */
char *mdb_version(int *major, int *minor, int *patch);

/** A static description of any return code (positive codes: strerror). */
char *mdb_strerror(int err);

/* ------------------------------------------------------------------------- */
/* Environment                                                               */
/* ------------------------------------------------------------------------- */

/** Allocate an unopened environment handle. */
int  mdb_env_create(MDB_env **env);
/** Open (or create) the environment at path; on failure still mdb_env_close it. */
int  mdb_env_open(MDB_env *env, const char *path, unsigned int flags, mdb_mode_t mode);
/** Write a consistent copy of the data file into directory (or file) path. */
int  mdb_env_copy(MDB_env *env, const char *path);
/** Like mdb_env_copy, into an open descriptor. */
int  mdb_env_copyfd(MDB_env *env, mdb_filehandle_t fd);
/** Copy with flags (0 or MDB_CP_COMPACT).  dlmdb: a compacting copy checks
 * every page it walks, key order included (each DB's keys and duplicates in
 * the order of the handle open in env, custom comparators included, else
 * the stock order its flags give), and fails with MDB_CORRUPTED instead of
 * writing a copy of a damaged store.  A DB with a custom comparator must be
 * open in env with that comparator set for its copy to pass. */
int  mdb_env_copy2(MDB_env *env, const char *path, unsigned int flags);
/** Copy with flags into an open descriptor. */
int  mdb_env_copyfd2(MDB_env *env, mdb_filehandle_t fd, unsigned int flags);
/** Statistics of the main database in the newest snapshot. */
int  mdb_env_stat(MDB_env *env, MDB_stat *stat);
/** Environment information. */
int  mdb_env_info(MDB_env *env, MDB_envinfo *stat);
/** Flush committed data to disk; force overrides MDB_NOSYNC/MDB_MAPASYNC. */
int  mdb_env_sync(MDB_env *env, int force);
/** Unmap and close; all transactions and cursors must already be finished. */
void mdb_env_close(MDB_env *env);
/** Turn changeable flags on (onoff != 0) or off. */
int  mdb_env_set_flags(MDB_env *env, unsigned int flags, int onoff);
/** The environment's flags. */
int  mdb_env_get_flags(MDB_env *env, unsigned int *flags);
/** The path given to mdb_env_open. */
int  mdb_env_get_path(MDB_env *env, const char **path);
/** The data file descriptor. */
int  mdb_env_get_fd(MDB_env *env, mdb_filehandle_t *fd);
/** Set the map size (the largest the data file may grow to). */
int  mdb_env_set_mapsize(MDB_env *env, mdb_size_t size);
/** Number of reader slots; before mdb_env_open only. */
int  mdb_env_set_maxreaders(MDB_env *env, unsigned int readers);
/** Number of reader slots in use by the lock table. */
int  mdb_env_get_maxreaders(MDB_env *env, unsigned int *readers);
/** Number of named databases; before mdb_env_open only. */
int  mdb_env_set_maxdbs(MDB_env *env, MDB_dbi dbs);
/** Longest key accepted (511). */
int  mdb_env_get_maxkeysize(MDB_env *env);
/** Attach an application pointer to the environment. */
int  mdb_env_set_userctx(MDB_env *env, void *ctx);
/** The application pointer set with mdb_env_set_userctx. */
void *mdb_env_get_userctx(MDB_env *env);

/** Callback run before the library aborts on an internal assertion. */
typedef void MDB_assert_func(MDB_env *env, const char *msg);
/** Install an assertion callback. */
int  mdb_env_set_assert(MDB_env *env, MDB_assert_func *func);

/**
 * DLMDB: raise (onoff != 0) or clear the interrupt flag.  Safe from signal
 * handlers.  While raised, cursor reads, puts and tree searches fail with
 * EINTR and mark their transaction failed.
 */
int  mdb_env_set_interrupt(MDB_env *env, int onoff);

/* ------------------------------------------------------------------------- */
/* Transactions                                                              */
/* ------------------------------------------------------------------------- */

/**
 * Begin a transaction (flags: MDB_RDONLY, MDB_NOSYNC, MDB_NOMETASYNC).
 * With a parent: a nested write txn of a write parent.  EINVAL for a
 * read-only parent and for MDB_RDONLY with a parent (a read-only child is
 * refused, never turned into a write txn; stock LMDB differs: Debian's
 * liblmdb 0.9.24 answers MDB_BAD_TXN, mdb.master runs read-only children);
 * MDB_BAD_TXN in a MDB_WRITEMAP env or when the parent failed, ended or has a
 * child.  Count and rank functions are exact at every nesting depth.
 */
int  mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned int flags, MDB_txn **txn);
/** The environment of a transaction. */
MDB_env *mdb_txn_env(MDB_txn *txn);
/** Transaction id: snapshot id for readers, next id for the writer. */
mdb_size_t mdb_txn_id(MDB_txn *txn);
/** Commit and free the transaction (freed even on error). */
int  mdb_txn_commit(MDB_txn *txn);
/** Discard and free the transaction. */
void mdb_txn_abort(MDB_txn *txn);
/** End a read-only snapshot but keep the handle for mdb_txn_renew. */
void mdb_txn_reset(MDB_txn *txn);
/** Start a fresh snapshot on a reset read-only handle. */
int  mdb_txn_renew(MDB_txn *txn);

/* ------------------------------------------------------------------------- */
/* Databases                                                                 */
/* ------------------------------------------------------------------------- */

/** Open a database by name (NULL = main database). */
int  mdb_dbi_open(MDB_txn *txn, const char *name, unsigned int flags, MDB_dbi *dbi);
#define mdb_open(txn,name,flags,dbi)	mdb_dbi_open(txn,name,flags,dbi)
/** Statistics of one database as seen by txn. */
int  mdb_stat(MDB_txn *txn, MDB_dbi dbi, MDB_stat *stat);
/** The stored flags of a database. */
int  mdb_dbi_flags(MDB_txn *txn, MDB_dbi dbi, unsigned int *flags);
/** Release a database handle. */
void mdb_dbi_close(MDB_env *env, MDB_dbi dbi);
#define mdb_close(env,dbi)	mdb_dbi_close(env,dbi)
/** Empty a database (del = 0) or delete it and close its handle (del = 1). */
int  mdb_drop(MDB_txn *txn, MDB_dbi dbi, int del);
/** Replace the key ordering of a handle. */
int  mdb_set_compare(MDB_txn *txn, MDB_dbi dbi, MDB_cmp_func *cmp);
/** Replace the duplicate-value ordering of a handle. */
int  mdb_set_dupsort(MDB_txn *txn, MDB_dbi dbi, MDB_cmp_func *cmp);
/** Stored for compatibility; never used. */
int  mdb_set_relfunc(MDB_txn *txn, MDB_dbi dbi, MDB_rel_func *rel);
/** Stored for compatibility; never used. */
int  mdb_set_relctx(MDB_txn *txn, MDB_dbi dbi, void *ctx);

/* ------------------------------------------------------------------------- */
/* Data access                                                               */
/* ------------------------------------------------------------------------- */

/** Look up a key; data points into the map on success. */
int  mdb_get(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data);
/** Store a key/value pair. */
int  mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned int flags);
/** Delete a key (or, for DUPSORT with data, one value). */
int  mdb_del(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data);

/* ------------------------------------------------------------------------- */
/* Cursors                                                                   */
/* ------------------------------------------------------------------------- */

/** Open an unpositioned cursor. */
int  mdb_cursor_open(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cursor);
/** Free a cursor. */
void mdb_cursor_close(MDB_cursor *cursor);
/** Rebind a read-only cursor to another read-only transaction. */
int  mdb_cursor_renew(MDB_txn *txn, MDB_cursor *cursor);
/** The transaction of a cursor. */
MDB_txn *mdb_cursor_txn(MDB_cursor *cursor);
/** The database handle of a cursor. */
MDB_dbi mdb_cursor_dbi(MDB_cursor *cursor);
/** Move the cursor and/or read the item under it. */
int  mdb_cursor_get(MDB_cursor *cursor, MDB_val *key, MDB_val *data, MDB_cursor_op op);
/** Store through the cursor. */
int  mdb_cursor_put(MDB_cursor *cursor, MDB_val *key, MDB_val *data, unsigned int flags);
/** Delete the item under the cursor. */
int  mdb_cursor_del(MDB_cursor *cursor, unsigned int flags);
/** DUPSORT: number of values of the current key. */
int  mdb_cursor_count(MDB_cursor *cursor, mdb_size_t *countp);
/** Compare two keys using the database's key ordering. */
int  mdb_cmp(MDB_txn *txn, MDB_dbi dbi, const MDB_val *a, const MDB_val *b);
/** Compare two values using the database's duplicate ordering. */
int  mdb_dcmp(MDB_txn *txn, MDB_dbi dbi, const MDB_val *a, const MDB_val *b);

/* ------------------------------------------------------------------------- */
/* Reader table                                                              */
/* ------------------------------------------------------------------------- */

/** Line sink for mdb_reader_list; return < 0 to stop. */
typedef int (MDB_msg_func)(const char *msg, void *ctx);
/** Describe the reader table, one line per call of func. */
int  mdb_reader_list(MDB_env *env, MDB_msg_func *func, void *ctx);
/** Free reader slots of dead processes; *dead receives how many. */
int  mdb_reader_check(MDB_env *env, int *dead);

/* ------------------------------------------------------------------------- */
/* DLMDB order statistics (MDB_COUNTED databases)                            */
/* ------------------------------------------------------------------------- */

/** Number of items in the database. */
int mdb_count_all(MDB_txn *txn, MDB_dbi dbi, unsigned flags, uint64_t *out);
/** Number of keys between low and high (plain databases). */
int mdb_count_range(MDB_txn *txn, MDB_dbi dbi,
	const MDB_val *low, const MDB_val *high, unsigned flags, uint64_t *out);
/** Number of distinct keys between key_low and key_high. */
int mdb_range_count_keys(MDB_txn *txn, MDB_dbi dbi,
	const MDB_val *key_low, const MDB_val *key_high,
	unsigned flags, uint64_t *out);
/** DUPSORT: number of values whose key lies between key_low and key_high. */
int mdb_range_count_values(MDB_txn *txn, MDB_dbi dbi,
	const MDB_val *key_low, const MDB_val *key_high, unsigned key_flags,
	uint64_t *out);
/** Position the cursor on the item with the given 0-based rank. */
int mdb_cursor_get_rank(MDB_cursor *cursor, uint64_t rank,
	MDB_val *key, MDB_val *data, unsigned flags);
/** Fetch the item with the given 0-based rank. */
int mdb_get_rank(MDB_txn *txn, MDB_dbi dbi, uint64_t rank,
	MDB_val *key, MDB_val *data);
/** 0-based rank of a key (or key/value pair) found through the cursor. */
int mdb_cursor_key_rank(MDB_cursor *cursor, const MDB_val *key,
	const MDB_val *data, unsigned flags, uint64_t *rank);
/** 0-based rank of a key (or key/value pair). */
int mdb_get_key_rank(MDB_txn *txn, MDB_dbi dbi,
	const MDB_val *key, const MDB_val *data, uint64_t *rank);
/** DUPSORT: all values of the current key as an array owned by the cursor. */
int mdb_cursor_list_dup(MDB_cursor *cursor,
	const MDB_val **values, mdb_size_t *countp);

#ifdef MDB_PROFILE_RANGE
/** Range-read profiling counters (dlmdb reports zeros). */
typedef struct MDB_profile_stats {
	uint64_t leaf_decode_ns;         uint64_t leaf_decode_calls;
	uint64_t leaf_cache_prepare_ns;  uint64_t leaf_cache_prepare_calls;
	uint64_t cursor_next_ns;         uint64_t cursor_next_calls;
	uint64_t prefix_contrib_ns;      uint64_t prefix_contrib_calls;
	uint64_t read_key_total_ns;      uint64_t read_key_total_calls;
	uint64_t read_key_cache_ns;      uint64_t read_key_cache_calls;
	uint64_t read_key_seq_ns;        uint64_t read_key_seq_calls;
	uint64_t read_key_decode_ns;     uint64_t read_key_decode_calls;
} MDB_profile_stats;
/** Zero the profiling counters. */
void mdb_profile_reset(void);
/** Copy the profiling counters. */
void mdb_profile_snapshot(MDB_profile_stats *out);
#endif

/* ------------------------------------------------------------------------- */
/* dlmdb addition: page-walk introspection                                   */
/* ------------------------------------------------------------------------- */

#define MDB_PAGE_BRANCH   0x01	/**< interior page */
#define MDB_PAGE_LEAF     0x02	/**< leaf page */
#define MDB_PAGE_OVERFLOW 0x04	/**< run of pages holding one large value */
#define MDB_PAGE_LEAF2    0x20	/**< fixed-size dup leaf; combined with MDB_PAGE_LEAF */
#define MDB_PAGE_SUBPAGE  0x40	/**< inline dup sub-page stored inside a leaf node */

/** What mdb_page_walk reports about one page. */
typedef struct MDB_pageinfo {
	mdb_size_t pi_pgno;     /**< page number (sub-page: pgno of the leaf holding it) */
	mdb_size_t pi_parent;   /**< parent page number, or (mdb_size_t)-1 for a root */
	unsigned   pi_type;     /**< MDB_PAGE_* bits */
	unsigned   pi_flags;    /**< raw on-disk page flags word */
	unsigned   pi_level;    /**< 0 = root of the tree being walked, +1 per level down */
	unsigned   pi_entries;  /**< nodes/items on the page, 0 for overflow */
	unsigned   pi_pages;    /**< pages spanned: overflow run length, else 1 (0 for sub-pages) */
	unsigned   pi_used;     /**< bytes used: header + pointer array + nodes (overflow: 16 + value bytes) */
	unsigned   pi_free;     /**< bytes unused (overflow: slack at the end of the run) */
	unsigned   pi_subtree;  /**< 0 = the DB's own tree, 1 = a dup sub-database / sub-page */
	uint64_t   pi_count;    /**< counted branch page: sum of its node counts; else 0 */
} MDB_pageinfo;

/** Visitor for mdb_page_walk; a non-zero return stops the walk. */
typedef int (MDB_page_func)(void *ctx, const MDB_pageinfo *info);

/**
 * Visit every page of one database (FREE_DBI = 0 and MAIN_DBI = 1 allowed),
 * depth-first, each parent before its children; an overflow run is reported
 * when the leaf node owning it is visited.  For MAIN_DBI only the main tree is
 * walked, not the trees of named databases.  A non-zero return from func
 * stops the walk and becomes the result.
 */
int mdb_page_walk(MDB_txn *txn, MDB_dbi dbi, MDB_page_func *func, void *ctx);

/** dlmdb addition: where this process maps the data file (or the anonymous
 * memory of an MDB_INMEMORY env).  Pointers a read txn hands out lie in
 * [*addr, *addr + *size) unless the engine decoded them into a cursor's
 * buffer (prefix-compressed keys).  The range stays put while any txn of
 * this process is alive; only mdb_env_set_mapsize moves it.  EINVAL when the
 * env is not open.  (mdb_env_info's me_mapaddr is the address stored in the
 * meta page, NULL unless MDB_FIXEDMAP, as in LMDB.) */
int mdb_env_get_map(MDB_env *env, void **addr, size_t *size);

/**
 * dlmdb addition: what mdb_env_open decided about the environment's layouts,
 * and why.  Valid after a successful mdb_env_open.
 */
typedef struct MDB_envlayout {
	unsigned ml_version;	/**< data version of the file: 1 or 2 */
	unsigned ml_padded;	/**< 1 = DLMDB node layout (even key padding), 0 = stock */
	unsigned ml_reason;	/**< MDB_LAYOUT_*: why that node layout */
	unsigned ml_lockver;	/**< lock file layout: 1, 2, or 0 without a lock file */
	unsigned ml_lockjoined;	/**< 1 = the lock file was held by other processes at open */
} MDB_envlayout;
/** The file is data version 2 (always padded). */
#define MDB_LAYOUT_VERSION2	1
/** Created by this open (MDB_FORMAT_LMDB: stock, else data version 2). */
#define MDB_LAYOUT_NEW		2
/** MDB_FORMAT_LMDB or MDB_FORMAT_DLMDB_V1 named it, and nothing sampled contradicts it. */
#define MDB_LAYOUT_TOLD		3
/** A database record carries MDB_COUNTED or MDB_PREFIX_COMPRESSION (padded only). */
#define MDB_LAYOUT_DBFLAGS	4
/** A branch page is counted (P_COUNTED, padded only). */
#define MDB_LAYOUT_COUNTED	5
/** Sampled leaves with odd-length keys parse in this layout only. */
#define MDB_LAYOUT_LEAVES	6
/** Nothing sampled tells the layouts apart (no odd-length key): stock, the
 * rule for version 1 files when nothing is known; an odd-length key written
 * then is written in stock layout. */
#define MDB_LAYOUT_NO_EVIDENCE	7
int mdb_env_get_layout(MDB_env *env, MDB_envlayout *out);

/**
 * dlmdb addition: 1 when committing txn now would write, that is when txn (or
 * a nested txn it committed or still has open) changed something; 0 for a txn
 * that changed nothing, a read-only, ended or failed one (whose commit writes
 * nothing), or one with a failed nested txn open.  A
 * top-level write txn that changed something commits as mdb_txn_id(txn);
 * one that did not leaves the store at the id it began from, mdb_txn_id(txn)
 * - 1, and another writer may then commit mdb_txn_id(txn) itself.
 */
int mdb_txn_changed(MDB_txn *txn);

#ifdef __cplusplus
}
#endif

#endif /* DLMDB_LMDB_H */
