/*
 * copy.c - backups: plain copy (pages verbatim) and compacting copy
 * (format doc §17: live pages renumbered from 2 in post-order, no free list).
 *
 * Speed: mdb_env_copy2() opens its output with O_DIRECT where the file
 * system allows it, so pages go from the map to the disk without filling
 * the page cache, and syncs once at the end. Every write is then a whole
 * number of pages from a page-aligned address (the map, or buffers from
 * dl_page_mem). The plain copy writes the pages after the metas in large
 * chunks straight from the map; to a descriptor without O_DIRECT that is a
 * regular file it uses copy_file_range() (the kernel copies page cache to
 * page cache, or shares extents). The compacting copy fills two 1 MiB
 * buffers in turn, and a writer thread writes each full one while the walk
 * fills the other. A write that O_DIRECT refuses (EINVAL: a device block
 * larger than the page) is retried without it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* copy_file_range */
#endif
#include "internal.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes per write() or copy_file_range() call, and the compacting copy's
 * output buffer: large enough to amortize the system call and keep the
 * disk streaming, small enough to keep the buffer modest. */
#define DL_COPY_CHUNK	((size_t)16 << 20)

/*
 * The output may be a pipe or a terminal (mdb_copy to stdout), so a copy
 * never seeks: everything goes out with write() strictly in file order.
 */
static int dl_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t r = write(fd, p, len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EINVAL) {
				/* O_DIRECT alignment refused: go on buffered. */
				int fl = fcntl(fd, F_GETFL);
				if (fl >= 0 && (fl & O_DIRECT) &&
				    fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0)
					continue;
			}
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				/* A non-blocking descriptor: wait until it drains. */
				struct pollfd pf = { fd, POLLOUT, 0 };
				if (poll(&pf, 1, -1) < 0 && errno != EINTR)
					return errno;
				continue;
			}
			return errno;
		}
		if (r == 0)
			return EIO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* n pages at a page-aligned address (O_DIRECT writes need one). */
static void *dl_page_mem(size_t ps, size_t n)
{
	void *p = NULL;
	return posix_memalign(&p, ps, ps * n) ? NULL : p;
}

/* n zeroed pages at a page-aligned address. */
static void *dl_page_buf(size_t ps, size_t n)
{
	void *p = dl_page_mem(ps, n);
	if (p)
		memset(p, 0, ps * n);
	return p;
}

/* n pages of zeros, for the part of a snapshot beyond the file's end. */
static int dl_write_zeros(int fd, size_t ps, size_t n)
{
	void *z = dl_page_buf(ps, 1);
	int rc = 0;
	if (!z)
		return ENOMEM;
	while (n-- && !rc)
		rc = dl_write_all(fd, z, ps);
	free(z);
	return rc;
}

static int dl_free_total(MDB_txn *txn, pgno_t *total);

/* Write len bytes from the map in chunks. Like the plain copy as a whole,
 * this does not stop for mdb_env_set_interrupt (only the compacting walk
 * does, page by page). */
static int dl_write_chunked(int fd, const char *p, size_t len)
{
	while (len) {
		size_t n = len < DL_COPY_CHUNK ? len : DL_COPY_CHUNK;
		int rc;
		if ((rc = dl_write_all(fd, p, n)))
			return rc;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Copy len bytes of the data file from offset off to fd's current
 * position with copy_file_range(). Returns 0, an error, or ENOSYS when the
 * kernel or file systems cannot do it before anything was copied (the
 * caller then writes from the map). Reading the file rather than the map
 * sees the same bytes: committed pages reach both through the page cache,
 * and pages of the snapshot are not rewritten while it is held.
 */
static int dl_copy_range(MDB_env *env, int fd, off_t off, size_t len)
{
#if defined(__linux__) && defined(__GLIBC__)
	struct stat st;
	size_t done = 0;
	int fl = fcntl(fd, F_GETFL);
	if (env->flags & MDB_INMEMORY || fl < 0 || (fl & O_DIRECT) ||
	    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return ENOSYS;
	while (done < len) {
		size_t n = len - done < DL_COPY_CHUNK ? len - done : DL_COPY_CHUNK;
		ssize_t r = copy_file_range(env->fd, &off, fd, NULL, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (!done && (errno == ENOSYS || errno == EXDEV || errno == EINVAL ||
			    errno == EOPNOTSUPP || errno == EBADF || errno == EPERM))
				return ENOSYS;
			return errno;
		}
		if (r == 0)
			return done ? EIO : ENOSYS;	/* source shorter than expected */
		done += (size_t)r;
	}
	return 0;
#else
	(void)env; (void)fd; (void)off; (void)len;
	return ENOSYS;
#endif
}

static int dl_copy_plain(MDB_env *env, int fd)
{
	MDB_txn *txn;
	int rc;
	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)))
		return rc;
	/* Both metas, as the snapshot sees them, then every page up to
	 * last_pg straight from the map (pages past the end of the file were
	 * never written and are free: write zeros). */
	size_t ps = env->psize;
	pgno_t last = txn->next_pgno - 1;
	struct stat st;
	if (env->flags & MDB_INMEMORY)
		st.st_size = (off_t)(env->mapsize);
	else if (fstat(env->fd, &st) < 0) {
		rc = errno;
		goto done;
	}
	/* Pages past the end of the file were allocated and freed without
	 * being written, so the free list holds them all: a last_pg further
	 * out is damage (it would make the copy gigabytes of zeros). */
	if ((size_t)last + 1 > (size_t)st.st_size / ps) {
		pgno_t nfree = 0;
		if ((rc = dl_free_total(txn, &nfree)))
			goto done;
		if ((size_t)last + 1 - (size_t)st.st_size / ps > nfree) {
			rc = MDB_CORRUPTED;
			goto done;
		}
	}
	unsigned char *meta = dl_page_buf(ps, 2);
	if (!meta) {
		rc = ENOMEM;
		goto done;
	}
	memcpy(meta, env->map, 2 * ps);
	/* Make the copy's newest meta the snapshot we are copying. */
	MDB_meta *a = METADATA((MDB_page *)meta), *b = METADATA((MDB_page *)(meta + ps));
	MDB_meta *mine = (txn->txnid & 1) ? b : a;
	MDB_meta *other = (txn->txnid & 1) ? a : b;
	if (other->mm_txnid > mine->mm_txnid) {
		*other = *mine;
		other->mm_txnid = mine->mm_txnid ? mine->mm_txnid - 1 : 0;
	}
	rc = dl_write_all(fd, meta, 2 * ps);
	free(meta);
	if (rc)
		goto done;
	size_t fpages = (size_t)st.st_size / ps;
	size_t endp = last + 1 < fpages ? last + 1 : fpages;
	if (endp > 2) {
		rc = dl_copy_range(env, fd, (off_t)(2 * ps), (endp - 2) * ps);
		if (rc == ENOSYS)
			rc = dl_write_chunked(fd, env->map + 2 * ps, (endp - 2) * ps);
	}
	if (!rc && endp < last + 1)
		rc = dl_write_zeros(fd, ps, last + 1 - (endp > 2 ? endp : 2));
done:
	mdb_txn_abort(txn);
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Compacting copy                                                           */
/* ------------------------------------------------------------------------- */

/*
 * The compacting copy's output buffers (two: one fills while a writer
 * thread writes the other).  Pages are copied into them once, straight
 * from the map, and every byte is set before it goes out, so they are
 * never zeroed.  Small enough to stay in the cache while one fills and
 * while write() reads it back: measured as fast as 512 KiB or 2 MiB, and
 * faster than 4 MiB or 16 MiB.
 */
#define DL_COMPACT_BUF	((size_t)1 << 20)

/*
 * The writer thread of a compacting copy: it writes one piece at a time
 * (a full buffer, or a long overflow run straight from the map) while the
 * walk goes on, so the walk waits for the kernel's copy or the disk only
 * when it has filled the other buffer first.  Pieces go out strictly in
 * the order they are handed over.
 */
typedef struct dl_cwriter {
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	pthread_t	th;
	int		fd;
	const char	*p;	/* the piece being written; NULL when idle */
	size_t		len;
	int		rc;	/* the first write error; later pieces are dropped */
	int		quit;
} dl_cwriter;

static void *dl_cwriter_main(void *arg)
{
	dl_cwriter *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->p && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->p)
			break;
		const char *p = w->p;
		size_t len = w->len;
		int failed = w->rc;
		pthread_mutex_unlock(&w->mu);
		int rc = failed ? 0 : dl_write_chunked(w->fd, p, len);
		pthread_mutex_lock(&w->mu);
		if (rc)
			w->rc = rc;
		w->p = NULL;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Once the writer is idle, hand it p[0..len) (nothing when len is 0);
 * returns the first error of the pieces written before. */
static int dl_cwriter_put(dl_cwriter *w, const char *p, size_t len)
{
	pthread_mutex_lock(&w->mu);
	while (w->p)
		pthread_cond_wait(&w->cv, &w->mu);
	int rc = w->rc;
	if (!rc && len) {
		w->p = p;
		w->len = len;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

static int dl_cwriter_start(dl_cwriter *w, int fd)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	if (pthread_mutex_init(&w->mu, NULL))
		return ENOMEM;
	if (pthread_cond_init(&w->cv, NULL)) {
		pthread_mutex_destroy(&w->mu);
		return ENOMEM;
	}
	int rc = pthread_create(&w->th, NULL, dl_cwriter_main, w);
	if (rc) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
	}
	return rc;
}

/* Let the writer finish what it holds and end; its first error. */
static int dl_cwriter_stop(dl_cwriter *w)
{
	int rc = dl_cwriter_put(w, NULL, 0);
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	return rc;
}

typedef struct dl_cctx {
	MDB_txn	*txn;
	int	fd;
	pgno_t	next;		/* next page number in the copy */
	dl_cwriter *w;		/* the writer thread; NULL: write in place */
	char	*mem;		/* both buffers */
	char	*buf;		/* the one filling: pages not yet handed over,
				 * in file order */
	size_t	used;		/* bytes in buf */
	char	*stack;		/* one page per tree depth: the new page numbers
				 * of the children of the page at that depth,
				 * by node index, until the page goes out */
} dl_cctx;

/* Page slots of cx->stack: dl_copy_tree refuses a depth above
 * 2 * DL_MAXDEPTH, so depths 0 .. 2 * DL_MAXDEPTH need one slot each.  A
 * slot holds 8 bytes per node, and dl_copy_page_ok refuses pages with more
 * nodes than fit with a pointer and a header (10 bytes) each, so a
 * page-sized slot suffices. */
#define DL_COPY_DEPTHS	(2 * DL_MAXDEPTH + 1)

/*
 * What the compact walk found in one tree, to hold against its record: a
 * copy must not carry damage on, and the walk reads every page anyway.
 * dup_branch/dup_leaf: pages of its duplicate sub-databases, which data
 * version 2 counts in the owner's record and version 1 does not (the same
 * rule `dlmdb check` applies).
 */
typedef struct dl_ctally {
	uint64_t branch, leaf, overflow, entries;
	uint64_t dup_branch, dup_leaf;
	/* What the tree is, which decides the pages and nodes it may hold. */
	unsigned dbflags;	/* its database's flags */
	int	main;		/* the main DB: named-DB records allowed */
	int	dup;		/* a duplicate sub-DB: bare items only */
	unsigned itemsz;	/* DUPFIXED duplicate sub-DB: the item size */
	/* Key order: the walk meets a tree's keys in order, so each leaf key
	 * and separator is held against the one met before it. */
	MDB_cmp_func *cmp;	/* the tree's order: keys, or a sub-DB's items */
	MDB_cmp_func *dcmp;	/* order of the duplicates of a key (DUPSORT) */
	int	pfx;		/* leaves are prefix-compressed */
	int	last;		/* what prev holds: 0 nothing, 1 a leaf key, 2 a separator */
	size_t	prevlen;
	unsigned char prev[DL_MAXKEY + 1];
} dl_ctally;

/*
 * The next key of the in-order walk of a tree: a leaf key (sep 0) or the
 * separator of branch node i >= 1 (sep 1), met before the child it leads
 * to.  A leaf key is above the previous leaf key and at or above the
 * previous separator; a separator is above every key met before it.  This
 * is the whole B-tree order: keys sorted across leaves, and every key
 * below a child inside the range its parent's separators give.
 */
static int dl_copy_order(dl_ctally *t, const MDB_val *k, int sep)
{
	if (k->mv_size > DL_MAXKEY)
		return MDB_CORRUPTED;
	if (t->last) {
		MDB_val p = { t->prevlen, t->prev };
		int c = dl_cmp_fast(t->cmp, k, &p);
		if (c < 0 || (c == 0 && (sep || t->last == 1)))
			return MDB_CORRUPTED;
	}
	memcpy(t->prev, k->mv_data, k->mv_size);
	t->prevlen = k->mv_size;
	t->last = sep ? 2 : 1;
	return 0;
}

/* The items of an inline duplicate sub-page (checked sound) ascend
 * strictly in the duplicate order. */
static int dl_copy_subpage_order(const dl_ctally *t, MDB_page *sp, size_t sz)
{
	unsigned n = NUMKEYS(sp);
	unsigned char kb[DL_MAXKEY + 1], pb[DL_MAXKEY + 1];
	MDB_val k, p = { 0, pb };
	for (unsigned i = 0; i < n; i++) {
		if (IS_LEAF2(sp)) {
			k.mv_size = sp->mp_pad;
			k.mv_data = (char *)sp + PAGEHDRSZ + (size_t)i * sp->mp_pad;
		} else {
			size_t off = sp->mp_ptrs[i];
			if ((off & 1) || off < MP_LOWER(sp) || off + NODESZ > sz)
				return MDB_CORRUPTED;
			MDB_node *nd = (MDB_node *)((char *)sp + off);
			if (off + NODESZ + nd->mn_ksize > sz)
				return MDB_CORRUPTED;
			k.mv_size = nd->mn_ksize;
			k.mv_data = NODEKEY(sp, nd);
			if (t->pfx && i > 0 && dl_prefix_decode(sp, nd, kb, &k))
				return MDB_CORRUPTED;
		}
		if (k.mv_size > DL_MAXKEY || (i && dl_cmp_fast(t->dcmp, &k, &p) <= 0))
			return MDB_CORRUPTED;
		memcpy(pb, k.mv_data, k.mv_size);
		p.mv_size = k.mv_size;
	}
	return 0;
}

/* The order of named DB name in env: an open handle's comparators (custom
 * ones included), else the stock orders its flags give. */
static void dl_copy_orders(MDB_env *env, const MDB_val *name, unsigned flags,
	MDB_cmp_func **cmp, MDB_cmp_func **dcmp)
{
	*cmp = dl_default_cmp(flags);
	*dcmp = dl_default_dcmp(flags);
	for (unsigned i = DL_MAIN_DBI; i < env->numdbs && env->dbxs; i++) {
		dl_dbx *x = &env->dbxs[i];
		if (!x->valid)
			continue;
		if (name ? (!x->name || x->namelen != name->mv_size ||
		    memcmp(x->name, name->mv_data, name->mv_size)) : i != DL_MAIN_DBI)
			continue;
		if (x->cmp)
			*cmp = x->cmp;
		if (x->dcmp && (flags & MDB_DUPSORT))
			*dcmp = x->dcmp;
		return;
	}
}

/* A leaf node's flags and data size fit the tree it is in (the rules
 * `dlmdb check` applies).  dsz: the node's data size. */
static int dl_copy_node_ok(const dl_ctally *t, unsigned nflags, size_t dsz)
{
	int dupsort = (t->dbflags & MDB_DUPSORT) != 0;
	if (t->dup)
		return nflags == 0 && dsz == 0;
	switch (nflags) {
	case 0:
		return !dupsort || dsz <= DL_MAXKEY;
	case F_BIGDATA:
		return !dupsort;
	case F_SUBDATA:
		return t->main;
	case F_DUPDATA:
	case F_DUPDATA | F_SUBDATA:
		return dupsort;
	default:
		return 0;
	}
}

static int dl_copy_tree(dl_cctx *cx, pgno_t pg, int depth, unsigned left, dl_ctally *t,
	pgno_t *newpg);

/* Send the gathered pages out, through the writer when there is one:
 * then the other buffer, which it has finished with, fills next. */
static int dl_copy_flush(dl_cctx *cx)
{
	int rc;
	if (!cx->w) {
		rc = dl_write_all(cx->fd, cx->buf, cx->used);
	} else {
		if (!cx->used)
			return 0;
		rc = dl_cwriter_put(cx->w, cx->buf, cx->used);
		cx->buf = cx->buf == cx->mem ? cx->mem + DL_COMPACT_BUF : cx->mem;
	}
	cx->used = 0;
	return rc;
}

/* Append len bytes to the output, through the buffer; a piece larger
 * than the buffer goes out directly once the buffer is flushed. */
static int dl_copy_bytes(dl_cctx *cx, const void *p, size_t len)
{
	int rc;
	if (cx->used + len > DL_COMPACT_BUF && (rc = dl_copy_flush(cx)))
		return rc;
	if (len > DL_COMPACT_BUF)	/* from the map, held until the writer stops */
		return cx->w ? dl_cwriter_put(cx->w, p, len) : dl_write_chunked(cx->fd, p, len);
	memcpy(cx->buf + cx->used, p, len);
	cx->used += len;
	return 0;
}

/* Copy an overflow run holding dsize bytes; returns its new first page. */
static int dl_copy_overflow(dl_cctx *cx, pgno_t pg, size_t dsize, dl_ctally *t, pgno_t *newpg)
{
	MDB_txn *txn = cx->txn;
	MDB_env *env = txn->env;
	MDB_page *omp;
	int rc = dl_page_get(txn, pg, &omp);
	if (rc)
		return rc;
	unsigned np = omp->mp_u.pages;
	if (!IS_OVERFLOW(omp) || !np || pg + np > txn->fpages ||
	    PAGEHDRSZ + dsize > (size_t)np * env->psize)
		return MDB_CORRUPTED;
	t->overflow += np;
	/* The first page goes through the buffer with its page number
	 * patched; the rest streams from the map, whole pages at page-aligned
	 * addresses. */
	size_t ps = env->psize;
	if (env->interrupted)
		return EINTR;
	if (cx->used + ps > DL_COMPACT_BUF && (rc = dl_copy_flush(cx)))
		return rc;
	MDB_page *first = (MDB_page *)(cx->buf + cx->used);
	memcpy(first, omp, ps);
	first->mp_pgno = cx->next;
	cx->used += ps;
	if (np > 1)
		rc = dl_copy_bytes(cx, (char *)omp + ps, (size_t)(np - 1) * ps);
	*newpg = cx->next;
	cx->next += np;
	return rc;
}

/* Mark units [a, b) in the bitmap; 1 if any was marked already. */
static int dl_extent_mark(uint64_t *bits, size_t a, size_t b)
{
	while (a < b) {
		size_t w = a >> 6, sh = a & 63;
		size_t n = b - a < 64 - sh ? b - a : 64 - sh;
		uint64_t m = (n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1)) << sh;
		if (bits[w] & m)
			return 1;
		bits[w] |= m;
		a += n;
	}
	return 0;
}

/* Where node i of page mp ends. */
static inline size_t dl_copy_node_end(MDB_env *env, MDB_page *mp, unsigned i)
{
	MDB_node *nd = NODEPTR(mp, i);
	size_t off = mp->mp_ptrs[i];
	if (IS_LEAF(mp))
		return (size_t)((char *)dl_leaf_data(env, nd) - (char *)mp) + dl_leaf_dpart(nd);
	return off + NODEKOFF(mp) + nd->mn_ksize;
}

/*
 * The nodes of page mp (already checked one by one with dl_node_check) lie
 * in its node area, at or above upper, and do not overlap.  The copy zeroes
 * [lower, upper), so a node below upper would be lost.  A page filled in
 * key order (a split, a bulk load, appends) holds each node below the one
 * before it, and one pass proves that.  Other pages take a bitmap of 2-byte
 * units (nodes start at even offsets; at most 16384 units for 32 KiB pages)
 * that finds overlaps in any order.
 */
static int dl_copy_nodes_disjoint(MDB_env *env, MDB_page *mp)
{
	uint64_t bits[32768 / 2 / 64];
	unsigned n = NUMKEYS(mp), up = MP_UPPER(mp), i;
	size_t lim = env->psize;
	for (i = 0; i < n; i++) {
		size_t off = mp->mp_ptrs[i];
		if (off < up || dl_copy_node_end(env, mp, i) > lim)
			break;
		lim = off;
	}
	if (i == n)
		return 0;
	size_t units = env->psize / 2;
	memset(bits, 0, (units + 63) / 64 * sizeof(uint64_t));
	for (i = 0; i < n; i++) {
		size_t off = mp->mp_ptrs[i], end = dl_copy_node_end(env, mp, i);
		if (off < up || end > env->psize ||
		    dl_extent_mark(bits, off / 2, (end + 1) / 2))
			return MDB_CORRUPTED;
	}
	return 0;
}

/* Whether a tree's tally matches its record's counters. */
static int dl_tally_check(MDB_env *env, const MDB_db *rec, const dl_ctally *t)
{
	int with_dups = env->version == DL_VERSION_DLMDB && (t->dup_branch | t->dup_leaf) &&
		rec->md_branch_pages == t->branch + t->dup_branch &&
		rec->md_leaf_pages == t->leaf + t->dup_leaf;
	if (!with_dups && (rec->md_branch_pages != t->branch || rec->md_leaf_pages != t->leaf))
		return MDB_CORRUPTED;
	if (rec->md_overflow_pages != t->overflow || rec->md_entries != t->entries)
		return MDB_CORRUPTED;
	return 0;
}

/* Copy the tree of record rec (a named DB or a duplicate sub-DB) and check
 * it against the record; rec->md_root becomes its root in the copy, and a
 * duplicate sub-DB's pages are added to the owner's tally. */
static int dl_copy_subtree(dl_cctx *cx, MDB_db *rec, int depth, dl_ctally *owner,
	const MDB_val *name)
{
	MDB_env *env = cx->txn->env;
	dl_ctally st;
	pgno_t np;
	int rc;
	memset(&st, 0, sizeof(st));
	if (owner) {
		st.dbflags = owner->dbflags;
		st.dup = 1;
		st.cmp = owner->dcmp;
		st.pfx = owner->pfx;
		if (st.dbflags & MDB_DUPFIXED)
			st.itemsz = rec->md_pad;
		if (!rec->md_entries)
			return MDB_CORRUPTED;	/* an empty duplicate sub-DB */
	} else {
		/* A named DB: flags this engine can read in this layout. */
		st.dbflags = rec->md_flags;
		if ((st.dbflags & ~DL_PERSISTENT_FLAGS) ||
		    (!env->pad && (st.dbflags & (MDB_COUNTED | MDB_PREFIX_COMPRESSION))))
			return MDB_CORRUPTED;
		dl_copy_orders(env, name, st.dbflags, &st.cmp, &st.dcmp);
		st.pfx = (st.dbflags & MDB_PREFIX_COMPRESSION) != 0;
	}
	if (rec->md_root == P_INVALID)
		return rec->md_depth || rec->md_entries ? MDB_CORRUPTED : 0;
	if (!rec->md_depth || rec->md_depth > DL_MAXDEPTH)
		return MDB_CORRUPTED;
	if ((rc = dl_copy_tree(cx, rec->md_root, depth + 1, rec->md_depth, &st, &np)))
		return rc;
	if ((rc = dl_tally_check(cx->txn->env, rec, &st)))
		return rc;
	if (owner) {
		owner->dup_branch += st.branch;
		owner->dup_leaf += st.leaf;
	}
	rec->md_root = np;
	return 0;
}

/* The header of page mp (n entries) fits the tree t describes. */
static int dl_copy_page_ok(MDB_env *env, const dl_ctally *t, const MDB_page *mp, unsigned n)
{
	if (!n)
		return MDB_CORRUPTED;
	/* Disjoint nodes of at least a header each, which also bounds the
	 * new page numbers the page's stack slot holds. */
	if (!IS_LEAF2(mp) && n > (env->psize - PAGEHDRSZ) / (sizeof(indx_t) + NODESZ))
		return MDB_CORRUPTED;
	if (mp->mp_flags & P_SUBP)
		return MDB_CORRUPTED;	/* a sub-page header on a page of its own */
	if (IS_BRANCH(mp) && !IS_COUNTED(mp) != !(t->dbflags & MDB_COUNTED))
		return MDB_CORRUPTED;	/* counted pages exactly in counted trees */
	if (IS_LEAF(mp) &&
	    (IS_LEAF2(mp) ? !t->itemsz || mp->mp_pad != t->itemsz : t->itemsz != 0))
		return MDB_CORRUPTED;	/* packed items exactly in DUPFIXED sub-DBs */
	return 0;
}

/*
 * Start loading the child of node i of branch page mp while its left
 * sibling is copied: the walk reads each page of a large store from
 * memory, not from the cache.  The first line is read, not only hinted:
 * hints alone gained nothing (measured), as if dropped when the page's
 * address translation is not cached, while the read also fetches the
 * translation.  Page numbers out of bounds are skipped here and refused
 * when the child itself is copied.
 */
static inline void dl_copy_prefetch(MDB_txn *txn, MDB_page *mp, unsigned i)
{
	size_t ps = txn->env->psize, off = mp->mp_ptrs[i];
	if (off + NODESZ > ps)
		return;
	pgno_t pg = NODEPGNO((MDB_node *)((char *)mp + off));
	if (pg < 2 || pg >= txn->fpages)
		return;
	const char *p = txn->env->map + (size_t)pg * ps;
	(void)*(volatile const char *)p;
	for (size_t o = 64; o < ps; o += 64)
		__builtin_prefetch(p + o);
}

/* Copy the children of branch page mp, children first; kids[i] becomes the
 * new page number of node i's child. */
static int dl_copy_branch(dl_cctx *cx, MDB_page *mp, unsigned n, int depth, unsigned left,
	dl_ctally *t, pgno_t *kids)
{
	MDB_env *env = cx->txn->env;
	int rc = 0;
	t->branch++;
	for (unsigned i = 0; i < n && !rc; i++) {
		MDB_node *nd = NODEPTR(mp, i);
		if ((rc = dl_node_check(env, mp, nd, 0)))
			break;
		if (i > 0) {
			MDB_val sep = { nd->mn_ksize, NODEKEY(mp, nd) };
			if ((rc = dl_copy_order(t, &sep, 1)))
				break;
		}
		if (i + 1 < n)
			dl_copy_prefetch(cx->txn, mp, i + 1);
		uint64_t before = t->entries;
		if ((rc = dl_copy_tree(cx, NODEPGNO(nd), depth + 1, left - 1, t, &kids[i])))
			break;
		if (IS_COUNTED(mp) && dl_get64((char *)nd + NODESZ) != t->entries - before)
			rc = MDB_CORRUPTED;
	}
	return rc;
}

/* Inline duplicates at d: a sound sub-page of sz bytes, items in order. */
static int dl_copy_inline_dups(dl_ctally *t, char *d, size_t sz)
{
	MDB_page sp;
	if (sz < PAGEHDRSZ)
		return MDB_CORRUPTED;
	memcpy(&sp, d, PAGEHDRSZ);
	if (!dl_subpage_flags_ok(sp.mp_flags) || NUMKEYS(&sp) == 0 ||
	    !dl_bounds_ok(&sp, sz, IS_LEAF2(&sp) ? sp.mp_pad : 0) ||
	    !t->dcmp || dl_copy_subpage_order(t, (MDB_page *)d, sz))
		return MDB_CORRUPTED;
	t->entries += NUMKEYS(&sp);
	return 0;
}

/* The data of leaf node nd (key: its full key), checked and counted, and
 * what it points to (an overflow run, a named DB or duplicate sub-DB)
 * copied too: then *kid becomes the run's first page or the tree's root in
 * the copy, and *nkids counts it. */
static int dl_copy_leaf_data(dl_cctx *cx, MDB_node *nd, const MDB_val *key, int depth,
	dl_ctally *t, pgno_t *kid, unsigned *nkids)
{
	MDB_env *env = cx->txn->env;
	int rc;
	if (!dl_copy_node_ok(t, nd->mn_flags, NODEDSZ(nd)))
		return MDB_CORRUPTED;
	char *d = dl_leaf_data(env, nd);
	if (nd->mn_flags & F_BIGDATA) {
		t->entries++;
		if ((rc = dl_copy_overflow(cx, dl_get64(d), NODEDSZ(nd), t, kid)))
			return rc;
		++*nkids;
		return 0;
	}
	if (nd->mn_flags & F_SUBDATA) {
		/* Named DB or duplicate sub-DB: copy its tree too. */
		MDB_db rec;
		if (NODEDSZ(nd) != sizeof(rec))
			return MDB_CORRUPTED;
		memcpy(&rec, d, sizeof(rec));
		int dup = (nd->mn_flags & F_DUPDATA) != 0;
		t->entries += dup ? rec.md_entries : 1;
		if ((rc = dl_copy_subtree(cx, &rec, depth, dup ? t : NULL, key)))
			return rc;
		*kid = rec.md_root;
		++*nkids;
		return 0;
	}
	if (nd->mn_flags & F_DUPDATA)
		return dl_copy_inline_dups(t, d, NODEDSZ(nd));
	t->entries++;
	return 0;
}

/*
 * Check and count the items of leaf page mp (n entries), copying what its
 * nodes point to; kids[i] becomes node i's new overflow page or sub-DB
 * root, and *nkids how many nodes have one.  Keys on one page are held
 * against their neighbour where they lie; only the page's first key is
 * held against the key the walk met before the page, and its last is kept
 * for the next page.  The nodes' extents are checked as for a branch
 * (dl_copy_nodes_disjoint), in the same pass where it can be.
 */
static int dl_copy_leaf(dl_cctx *cx, MDB_page *mp, unsigned n, int depth, dl_ctally *t,
	pgno_t *kids, unsigned *nkids)
{
	MDB_env *env = cx->txn->env;
	unsigned char kb[2][DL_MAXKEY + 1];
	MDB_val key, prev;
	int rc, leaf2 = IS_LEAF2(mp);
	/* A node with no flags in a tree without duplicates is one entry and
	 * needs nothing more (dl_copy_node_ok accepts it whatever its size). */
	int plain = !t->dup && !(t->dbflags & MDB_DUPSORT);
	/* Nodes met so far lie at descending offsets, each ending at or before
	 * the one before it: then they are disjoint with no further pass. */
	int ordered = 1;
	size_t ps = env->psize, lo = MP_LOWER(mp), up = MP_UPPER(mp), lim = ps;
	t->leaf++;
	for (unsigned i = 0; i < n; i++) {
		MDB_node *nd = NULL;
		if (leaf2) {
			key.mv_size = mp->mp_pad;
			key.mv_data = (char *)mp + PAGEHDRSZ + (size_t)i * mp->mp_pad;
		} else {
			/* dl_node_check's bounds, keeping the node's end */
			size_t off = mp->mp_ptrs[i];
			if ((off & 1) || off < lo || off + NODESZ > ps)
				return MDB_CORRUPTED;
			nd = (MDB_node *)((char *)mp + off);
			size_t end = dl_copy_node_end(env, mp, i);
			if (end > ps)
				return MDB_CORRUPTED;
			if (ordered && (off < up || end > lim))
				ordered = 0;
			lim = off;
			key.mv_size = nd->mn_ksize;
			key.mv_data = NODEKEY(mp, nd);
			if (t->pfx && i > 0 && (rc = dl_prefix_decode(mp, nd, kb[i & 1], &key)))
				return rc;
		}
		if (i == 0)
			rc = dl_copy_order(t, &key, 0);
		else
			rc = key.mv_size > DL_MAXKEY || dl_cmp_fast(t->cmp, &key, &prev) <= 0 ?
				MDB_CORRUPTED : 0;
		if (rc)
			return rc;
		if (leaf2 || (plain && !nd->mn_flags))
			t->entries++;
		else if ((rc = dl_copy_leaf_data(cx, nd, &key, depth, t, &kids[i], nkids)))
			return rc;
		prev = key;
	}
	if (!leaf2 && !ordered && (rc = dl_copy_nodes_disjoint(env, mp)))
		return rc;
	memcpy(t->prev, prev.mv_data, prev.mv_size);
	t->prevlen = prev.mv_size;
	t->last = 1;
	return 0;
}

/*
 * Append page mp to the output as page cx->next, with its unused bytes as
 * zeros; each node i of a branch points at kids[i], and so does each leaf
 * node with an overflow run or a sub-DB when nkids says there are some.
 */
static int dl_copy_emit(dl_cctx *cx, MDB_page *mp, const pgno_t *kids, unsigned nkids,
	pgno_t *newpg)
{
	MDB_env *env = cx->txn->env;
	size_t ps = env->psize;
	int rc;
	if (env->interrupted)
		return EINTR;
	if (cx->used + ps > DL_COMPACT_BUF && (rc = dl_copy_flush(cx)))
		return rc;
	MDB_page *out = (MDB_page *)(cx->buf + cx->used);
	unsigned n = NUMKEYS(mp);
	if (IS_LEAF2(mp)) {
		memcpy(out, mp, ps);
	} else {
		size_t lo = MP_LOWER(mp), up = MP_UPPER(mp);
		memcpy(out, mp, lo);
		memset((char *)out + lo, 0, up - lo);
		memcpy((char *)out + up, (char *)mp + up, ps - up);
	}
	if (IS_BRANCH(out)) {
		for (unsigned i = 0; i < n; i++)
			node_set_pgno(NODEPTR(out, i), kids[i]);
	} else if (nkids) {
		for (unsigned i = 0; i < n; i++) {
			MDB_node *nd = NODEPTR(out, i);
			char *d = dl_leaf_data(env, nd);
			if (nd->mn_flags & F_BIGDATA)
				dl_put64(d, kids[i]);
			else if (nd->mn_flags & F_SUBDATA)
				dl_put64(d + offsetof(MDB_db, md_root), kids[i]);
		}
	}
	out->mp_pgno = cx->next;
	out->mp_flags &= (uint16_t)~(P_DIRTY | P_LOOSE | P_KEEP);
	cx->used += ps;
	*newpg = cx->next++;
	return 0;
}

/*
 * Copy the subtree at pg, children first; left = levels from pg down to the
 * leaves, inclusive (every leaf of a tree sits at the record's depth).  Adds
 * what it finds to t; counted branch nodes must hold their child's exact
 * entry count.  The page is read in place (the snapshot does not change
 * under a read txn) and copied to the output once, when its children have
 * their new numbers.
 */
static int dl_copy_tree(dl_cctx *cx, pgno_t pg, int depth, unsigned left, dl_ctally *t,
	pgno_t *newpg)
{
	MDB_txn *txn = cx->txn;
	MDB_env *env = txn->env;
	MDB_page *mp;
	int rc;
	if (depth > 2 * DL_MAXDEPTH)
		return MDB_CURSOR_FULL;
	if ((rc = dl_page_get(txn, pg, &mp)))
		return rc;
	if ((rc = dl_page_check(env, mp)))
		return rc;
	if (IS_BRANCH(mp) ? left < 2 : left != 1)
		return MDB_CORRUPTED;	/* the tree's height disagrees with its record */
	pgno_t *kids = (pgno_t *)(cx->stack + (size_t)depth * env->psize);
	unsigned n = NUMKEYS(mp), nkids = 0;
	if ((rc = dl_copy_page_ok(env, t, mp, n)))
		return rc;
	if (IS_BRANCH(mp)) {
		if ((rc = dl_copy_branch(cx, mp, n, depth, left, t, kids)) ||
		    (rc = dl_copy_nodes_disjoint(env, mp)))
			return rc;
	} else if ((rc = dl_copy_leaf(cx, mp, n, depth, t, kids, &nkids))) {
		return rc;	/* its nodes' extents checked too */
	}
	return dl_copy_emit(cx, mp, kids, nkids, newpg);
}

/* Pages the free list holds in this snapshot (records' counts + its tree). */
static int dl_free_total(MDB_txn *txn, pgno_t *total)
{
	MDB_cursor *mc;
	MDB_val k, d;
	int rc = mdb_cursor_open(txn, DL_FREE_DBI, &mc);
	if (rc)
		return rc;
	pgno_t sum = txn->dbs[DL_FREE_DBI].md_branch_pages +
		txn->dbs[DL_FREE_DBI].md_leaf_pages + txn->dbs[DL_FREE_DBI].md_overflow_pages;
	while ((rc = mdb_cursor_get(mc, &k, &d, MDB_NEXT)) == 0) {
		if (d.mv_size < 8) {
			rc = MDB_CORRUPTED;
			break;
		}
		sum += dl_get64(d.mv_data);
	}
	mdb_cursor_close(mc);
	if (rc != MDB_NOTFOUND)
		return rc;
	*total = sum;
	return 0;
}

/* The two metas of a compacted copy: page 0 empty (txnid 0), page 1 the
 * copied state, main being the main DB's record and expect the last page. */
static int dl_compact_metas(MDB_env *env, int fd, const MDB_db *main, pgno_t expect)
{
	size_t ps = env->psize;
	unsigned char *buf = dl_page_buf(ps, 2);
	if (!buf)
		return ENOMEM;
	MDB_meta *src = dl_meta_current(env);
	for (int i = 0; i < 2; i++) {
		MDB_page *p = (MDB_page *)(buf + i * ps);
		MDB_meta *m = METADATA(p);
		p->mp_pgno = (pgno_t)i;
		p->mp_flags = P_META;
		m->mm_magic = DL_MAGIC;
		m->mm_version = env->version;
		m->mm_address = src->mm_address;
		m->mm_mapsize = env->mapsize;
		m->mm_dbs[DL_FREE_DBI].md_pad = (uint32_t)ps;
		m->mm_dbs[DL_FREE_DBI].md_flags = src->mm_dbs[DL_FREE_DBI].md_flags;
		m->mm_dbs[DL_FREE_DBI].md_root = P_INVALID;
		m->mm_dbs[DL_MAIN_DBI].md_root = P_INVALID;
		m->mm_last_pg = 1;
	}
	MDB_meta *m1 = METADATA((MDB_page *)(buf + ps));
	m1->mm_dbs[DL_MAIN_DBI] = *main;
	m1->mm_last_pg = expect;
	m1->mm_txnid = (main->md_root == P_INVALID && !main->md_flags) ? 0 : 1;
	int rc = dl_write_all(fd, buf, 2 * ps);
	free(buf);
	return rc;
}

/* Copy the main DB's tree, and all it holds, after the metas: its pages
 * must end exactly at expect, the main root last.  cx->mem and cx->stack
 * are the caller's to free. */
static int dl_compact_walk(dl_cctx *cx, pgno_t expect)
{
	MDB_txn *txn = cx->txn;
	MDB_env *env = txn->env;
	pgno_t root;
	int rc;
	dl_ctally t;
	memset(&t, 0, sizeof(t));
	MDB_db *mrec = &txn->dbs[DL_MAIN_DBI];
	t.main = 1;
	t.dbflags = mrec->md_flags;
	dl_copy_orders(env, NULL, t.dbflags, &t.cmp, &t.dcmp);
	t.pfx = (t.dbflags & MDB_PREFIX_COMPRESSION) != 0;
	if (txn->dbflags[DL_MAIN_DBI] & DB_INCOMPAT)
		return MDB_INCOMPATIBLE;	/* flags this engine cannot read here */
	if (!mrec->md_depth || mrec->md_depth > DL_MAXDEPTH)
		return MDB_CORRUPTED;
	if ((rc = dl_copy_tree(cx, mrec->md_root, 0, mrec->md_depth, &t, &root)) ||
	    (rc = dl_tally_check(env, mrec, &t)) || (rc = dl_copy_flush(cx)))
		return rc;
	if (cx->next - 1 != expect || root != expect)
		return MDB_INCOMPATIBLE;	/* the source leaks pages */
	return 0;
}

/* dl_compact_walk with the writer thread, or without it when it cannot be
 * started; every write has ended when this returns. */
static int dl_compact_main(dl_cctx *cx, pgno_t expect)
{
	size_t ps = cx->txn->env->psize;
	dl_cwriter w;
	if (!(cx->mem = dl_page_mem(ps, 2 * DL_COMPACT_BUF / ps)) ||
	    !(cx->stack = dl_page_mem(ps, DL_COPY_DEPTHS)))
		return ENOMEM;
	cx->buf = cx->mem;
	if (!dl_cwriter_start(&w, cx->fd))
		cx->w = &w;
	int rc = dl_compact_walk(cx, expect);
	if (cx->w) {
		int wrc = dl_cwriter_stop(cx->w);
		cx->w = NULL;
		if (!rc)
			rc = wrc;
	}
	return rc;
}

/*
 * The output is written strictly in order, so the metas go first and must
 * already name the last page.  It is predicted from the snapshot's
 * accounting (format doc §17.2): every page that is not free is live, and
 * the walk renumbers live pages from 2 with the main root last.  A walk
 * that ends elsewhere means the source leaks pages: MDB_INCOMPATIBLE.
 */
static int dl_copy_compact(MDB_env *env, int fd)
{
	MDB_txn *txn;
	int rc;
	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)))
		return rc;
	dl_cctx cx = { txn, fd, 2, NULL, NULL, NULL, 0, NULL };
	MDB_db main = txn->dbs[DL_MAIN_DBI];
	pgno_t expect = 1;
	if (main.md_root != P_INVALID) {
		pgno_t fr;
		if ((rc = dl_free_total(txn, &fr)))
			goto done;
		if (fr > txn->next_pgno - 3) {
			rc = MDB_CORRUPTED;	/* more free pages than pages */
			goto done;
		}
		expect = txn->next_pgno - 1 - fr;
		main.md_root = expect;
	}
	rc = dl_compact_metas(env, fd, &main, expect);
	if (!rc && txn->dbs[DL_MAIN_DBI].md_root != P_INVALID)
		rc = dl_compact_main(&cx, expect);
done:
	free(cx.mem);
	free(cx.stack);
	mdb_txn_abort(txn);
	return rc;
}

int mdb_env_copyfd2(MDB_env *env, mdb_filehandle_t fd, unsigned flags)
{
	if (!env || !env->opened || (flags & ~MDB_CP_COMPACT))
		return EINVAL;
	if (flags & MDB_CP_COMPACT)
		return dl_copy_compact(env, fd);
	return dl_copy_plain(env, fd);
}

int mdb_env_copyfd(MDB_env *env, mdb_filehandle_t fd)
{
	return mdb_env_copyfd2(env, fd, 0);
}

int mdb_env_copy2(MDB_env *env, const char *path, unsigned flags)
{
	if (!env || !path || !env->opened)
		return EINVAL;
	char *p = malloc(strlen(path) + 16);
	if (!p)
		return ENOMEM;
	if (env->flags & MDB_NOSUBDIR)
		strcpy(p, path);
	else
		sprintf(p, "%s/data.mdb", path);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0666);
	if (fd < 0 && errno == EINVAL)	/* no O_DIRECT on this file system */
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	free(p);
	if (fd < 0)
		return errno;
	int rc = mdb_env_copyfd2(env, fd, flags);
	if (!rc && fsync(fd) < 0)
		rc = errno;
	close(fd);
	return rc;
}

int mdb_env_copy(MDB_env *env, const char *path)
{
	return mdb_env_copy2(env, path, 0);
}
